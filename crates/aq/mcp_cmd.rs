//! `aq mcp run [--profile P] [--name NAME] -- SERVER ARGS...`: a stdio MCP
//! server in the sandbox of an `aq run` session (no network unless
//! allowed, the workspace as given, secrets masked). Its stdin and stdout
//! are the client's, passed through by `aq_mcp`, which logs each
//! `tools/call` (name and arguments, redacted) and refuses the tools the
//! policy's `[mcp] deny` names. aq's own words go to stderr only: stdout is
//! the protocol's.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aq_audit::EventBody;
use aq_mcp::CallVerdict;

use crate::cli::{McpRunArgs, McpWrapArgs};
use aq_session::supervisor::Supervisor;

/// The session `aq run` makes, handed to the relay once it exists.
#[derive(Clone, Default)]
pub struct McpSession(Arc<Mutex<Option<Arc<Supervisor>>>>);

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpSession")
    }
}

impl McpSession {
    /// Called by `aq run` when its session is ready.
    pub fn set(&self, supervisor: Arc<Supervisor>) {
        if let Ok(mut s) = self.0.lock() {
            *s = Some(supervisor);
        }
    }

    fn get(&self) -> Option<Arc<Supervisor>> {
        let start = Instant::now();
        loop {
            if let Some(s) = self.0.lock().ok().and_then(|s| s.clone()) {
                return Some(s);
            }
            if start.elapsed() > Duration::from_secs(10) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A pipe, both ends close-on-exec (std's pipe is, on every system).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = std::io::pipe()?;
    Ok((read.into(), write.into()))
}

fn dup_cloexec(fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor we own.
    let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

fn dup2(from: i32, to: i32) -> std::io::Result<()> {
    // SAFETY: plain descriptors.
    if unsafe { libc::dup2(from, to) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `SERVER.TOOL` against the policy's globs.
fn denied(deny: &[String], server: &str, tool: &str) -> Option<String> {
    let name = format!("{server}.{tool}");
    deny.iter()
        .find(|g| glob::Pattern::new(g).is_ok_and(|p| p.matches(&name)))
        .cloned()
}

pub fn run(args: &McpRunArgs, policy_flag: Option<&Path>) -> Result<ExitCode, String> {
    let server = args.name.clone().unwrap_or_else(|| {
        let program = args.command.first().map(String::as_str).unwrap_or("server");
        program.rsplit('/').next().unwrap_or(program).to_string()
    });
    let workspace = aq_session::run::resolve_workspace(args.workspace.as_deref())?;
    let deny = aq_session::policy_files::load_for(&workspace, policy_flag)?
        .effective
        .mcp_deny;

    // The client's ends, kept; the server gets pipes as its stdin and
    // stdout (inherited through aq's own 0 and 1 into the sandbox).
    let io = |e: std::io::Error| format!("cannot set up the server's stdio: {e}");
    let client_in = File::from(dup_cloexec(0).map_err(io)?);
    let client_out = File::from(dup_cloexec(1).map_err(io)?);
    let (server_in_r, server_in_w) = pipe().map_err(io)?;
    let (server_out_r, server_out_w) = pipe().map_err(io)?;
    dup2(server_in_r.as_raw_fd(), 0).map_err(io)?;
    dup2(server_out_w.as_raw_fd(), 1).map_err(io)?;
    drop(server_in_r);
    drop(server_out_w);

    let session = McpSession::default();
    let to_client = Arc::new(Mutex::new(client_out));
    let to_server = File::from(server_in_w);
    let log_session = session.clone();
    let names = server.clone();
    let out = to_client.clone();
    std::thread::spawn(move || {
        let decide = |call: &aq_mcp::ToolCall| {
            let rule = denied(&deny, &names, &call.name);
            if let Some(sup) = log_session.get() {
                aq_session::log_event(
                    &sup.log,
                    &sup.file.id,
                    EventBody::McpToolCall {
                        server: names.clone(),
                        tool: call.name.clone(),
                        arguments: call.arguments.clone(),
                        decision: if rule.is_some() { "block" } else { "allow" }.to_string(),
                        rule: rule.clone().map(|r| format!("[mcp] deny {r}")),
                    },
                );
            }
            match rule {
                Some(r) => CallVerdict::Refuse(format!(
                    "aq: the tool {names}.{} is refused by the policy ([mcp] deny \"{r}\")",
                    call.name
                )),
                None => CallVerdict::Forward,
            }
        };
        let _ = aq_mcp::relay_client(client_in, to_server, &out, decide);
    });
    let from_server = File::from(server_out_r);
    let relay_out = to_client.clone();
    let server_relay = std::thread::spawn(move || {
        let _ = aq_mcp::relay_server(from_server, &relay_out);
    });

    let options = aq_session::run::RunOptions {
        profile: args.profile.clone(),
        workspace: Some(workspace),
        quiet: true,
        net: args.net.clone(),
        agent: Some("none".to_string()),
        command: args.command.clone(),
        pass_fds: Vec::new(),
        on_ready: Some(Box::new(move |supervisor| session.set(supervisor))),
        ..Default::default()
    };
    let code = aq_session::run::run(&options, policy_flag);
    // aq's own fd 1 is the server's stdout: close it, so the relay reads
    // the server's last bytes and ends.
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = dup2(null.as_raw_fd(), 1);
    }
    let _ = server_relay.join();
    Ok(code?)
}

/// `aq mcp wrap` / `aq mcp unwrap`.
pub fn run_wrap(args: &McpWrapArgs, unwrap: bool) -> Result<crate::exit::ExitCode, String> {
    use aq_agents::mcp_config::{self, McpClient};
    aq_session::answerer::refuse_inside_session_because(
        if unwrap {
            "aq mcp unwrap"
        } else {
            "aq mcp wrap"
        },
        "how the agents start their MCP servers is the user's to change, from a terminal of their own",
    )?;
    let client = McpClient::parse(&args.client).ok_or_else(|| {
        format!(
            "unknown client `{}`; one of: {}",
            args.client,
            McpClient::ALL.map(|(n, _)| n).join(", ")
        )
    })?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from)
        .ok_or("HOME is not set")?;
    let path = client.config_path(&home);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (no MCP servers to wrap)", path.display()))?;
    let aq = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot find the aq binary: {e}"))?
        .display()
        .to_string();
    let only = args.server.as_deref();
    let (changes, mut new_text) = mcp_config::edit_file(client, &text, &aq, only, unwrap)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // The file before `wrap`, and what `wrap` wrote: `unwrap` of a file
    // nothing else changed since puts the first back byte for byte.
    let kept = aq_session::state_root()
        .ok()
        .map(|r| r.join("mcp").join(&args.client));
    if unwrap
        && only.is_none()
        && let Some(k) = &kept
        && std::fs::read_to_string(k.with_extension("written"))
            .ok()
            .as_deref()
            == Some(text.as_str())
        && let Ok(before) = std::fs::read_to_string(k.with_extension("before"))
    {
        new_text = before;
    }
    if changes.is_empty() {
        println!(
            "aq: no MCP servers{} in {}",
            only.map(|o| format!(" named {o}")).unwrap_or_default(),
            path.display()
        );
        return Ok(crate::exit::ExitCode::Ok);
    }
    if new_text != text {
        if let Some(k) = &kept {
            if let Some(dir) = k.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if unwrap {
                let _ = std::fs::remove_file(k.with_extension("written"));
                let _ = std::fs::remove_file(k.with_extension("before"));
            } else {
                if !k.with_extension("before").exists() {
                    let _ = std::fs::write(k.with_extension("before"), &text);
                }
                let _ = std::fs::write(k.with_extension("written"), &new_text);
            }
        }
        let tmp = path.with_extension(format!("aq-{}.tmp", std::process::id()));
        std::fs::write(&tmp, &new_text).map_err(|e| format!("{}: {e}", tmp.display()))?;
        if let Ok(m) = std::fs::metadata(&path) {
            let _ = std::fs::set_permissions(&tmp, m.permissions());
        }
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for c in &changes {
        println!("aq: {}: {}", c.name, c.outcome);
    }
    Ok(crate::exit::ExitCode::Ok)
}

#[cfg(test)]
mod tests {
    use super::denied;

    #[test]
    fn tools_are_refused_by_server_and_tool_globs() {
        let deny = vec!["files.write_*".to_string(), "*.delete".to_string()];
        assert!(denied(&deny, "files", "write_file").is_some());
        assert!(denied(&deny, "git", "delete").is_some());
        assert!(denied(&deny, "files", "read_file").is_none());
    }
}
