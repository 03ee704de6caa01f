//! Asks for network destinations the session's allowlist does not name,
//! and the refusals the process itself is told about.
//!
//! The broker puts a connection to an unlisted host name to
//! [`NetAsker::ask`]. When someone can answer (`aq run`'s own terminal,
//! `aq approve`, `aq watch`, `wait_for_approver`), the ask goes into the
//! session's approval queue with the host, the port, the process and its
//! command line, and the connection waits (up to the ask timeout). Answers:
//! once, for the session (the broker remembers `host:port`), always (the
//! grant `aq allow --net` makes, in the user's file, never a repository's),
//! deny. With nobody to answer, or `[network] unlisted = "refuse"`, it is
//! refused at once, as an unlisted host always was.
//!
//! Many clients show only "CONNECT tunnel failed, response 403" (curl,
//! git), so the refusal and how to allow it are also written to the
//! process's own standard error ([`tell_process`]), where the agent that
//! ran it reads its output.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aq_audit::EventBody;
use aq_net::{UnlistedAnswer, UnlistedRequest};
use aq_policy::UnlistedHosts;
use aq_shim::approvals::{Answer, Request};

use crate::network::PROXY_PORT;
use crate::supervisor::Supervisor;

/// The rule id network asks carry.
pub const NET_ASK_RULE: &str = "net-unlisted-host";

/// Decides the broker's unlisted hosts for one session.
pub struct NetAsker {
    supervisor: Arc<Supervisor>,
    unlisted: UnlistedHosts,
}

impl NetAsker {
    /// An asker for `supervisor`'s session, with the policy's choice.
    pub fn new(supervisor: Arc<Supervisor>, unlisted: UnlistedHosts) -> NetAsker {
        NetAsker {
            supervisor,
            unlisted,
        }
    }

    /// The broker's callback.
    pub fn into_asker(self) -> aq_net::UnlistedAsker {
        let me = Arc::new(self);
        Arc::new(move |r: &UnlistedRequest| me.ask(r))
    }

    /// Asks whoever can answer about `r`, or refuses at once.
    pub fn ask(&self, r: &UnlistedRequest) -> UnlistedAnswer {
        let sup = &self.supervisor;
        let dest = format!("{}:{}", r.host, r.port);
        if self.unlisted == UnlistedHosts::Refuse {
            return UnlistedAnswer::Refuse(
                "the policy refuses unlisted hosts: [network] unlisted = \"refuse\"".into(),
            );
        }
        if sup.headless || sup.nobody_to_answer() {
            return UnlistedAnswer::Refuse(
                "nobody to ask: no `aq approve` or `aq watch` running and no free terminal".into(),
            );
        }
        let process = r.client.and_then(|c| {
            client_process(
                sup.command_pid.load(std::sync::atomic::Ordering::Relaxed),
                c,
                PROXY_PORT,
            )
        });
        let (pid, argv, cwd) = match process {
            Some(pid) => (pid, cmdline(pid), cwd_of(pid)),
            None => (
                0,
                vec!["(a process of the session)".to_string()],
                String::new(),
            ),
        };
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let id = format!("{now_ms:x}-net-{pid}-{}", r.port);
        let request = Request {
            id: id.clone(),
            argv,
            cwd,
            pid,
            rules: vec![NET_ASK_RULE.to_string()],
            why: Some(format!(
                "connect to {dest}, which is not on this session's network allowlist"
            )),
            safer: Some(format!(
                "answer [a]lways, or run `aq allow --net {dest}`, to allow it in every session"
            )),
            created_ms: now_ms,
            network: Some(dest.clone()),
        };
        let timeout = sup.file.approval_timeout_secs;
        if let Err(e) = sup.queue.submit(&request) {
            return UnlistedAnswer::Refuse(format!("cannot file the ask: {e}"));
        }
        eprintln!(
            "aq: waiting for approval of a connection to {dest}; answer with `aq approve` in another terminal (timeout {timeout}s)"
        );
        let answer = sup.queue.wait(&id, Duration::from_secs(timeout));
        let (result, answer_name, by) = match answer {
            Ok(Some(a)) => {
                let by = a.by.clone();
                let result = match a.answer {
                    Answer::Once => UnlistedAnswer::Once(format!("asked: allowed once by {by}")),
                    Answer::Session => {
                        UnlistedAnswer::Session(format!("asked: allowed for the session by {by}"))
                    }
                    Answer::Always => match grant_always(&dest, &sup.file.profile) {
                        Ok(file) => UnlistedAnswer::Session(format!(
                            "asked: allowed always by {by} (added to {file})"
                        )),
                        Err(e) => {
                            eprintln!(
                                "aq: the host was allowed for this session, but not always: {e}"
                            );
                            UnlistedAnswer::Session(format!(
                                "asked: allowed for the session by {by}"
                            ))
                        }
                    },
                    Answer::Deny => UnlistedAnswer::Refuse(format!("denied by {by}")),
                };
                (result, a.answer.as_str().to_string(), by)
            }
            Ok(None) => (
                UnlistedAnswer::Refuse(format!("no answer within {timeout}s")),
                "timeout".to_string(),
                "nobody, within the ask timeout".to_string(),
            ),
            Err(e) => (
                UnlistedAnswer::Refuse(format!("waiting for an answer failed: {e}")),
                "timeout".to_string(),
                format!("nobody: {e}"),
            ),
        };
        crate::log_event(
            &sup.log,
            &sup.file.id,
            EventBody::Approval {
                request: id,
                argv: vec!["net".to_string(), dest],
                answer: answer_name,
                by,
            },
        );
        result
    }
}

/// Adds `dest` to the user's `[network] allow`, as `aq allow --net` does.
/// Returns the file written.
fn grant_always(dest: &str, profile: &str) -> Result<String, String> {
    let grant = aq_policy::grants::Grant {
        allow: true,
        read_only: false,
        target: aq_policy::grants::Target::Net(dest.to_ascii_lowercase()),
        profile: profile.to_string(),
        here: None,
    };
    let applied = crate::user_grants::apply(&grant, false)?;
    Ok(applied.file.display().to_string())
}

/// The process (host pid) holding the client end of a connection to the
/// relay: the socket whose local address is `client` and remote address
/// the relay's port, in the network namespace of the session's command
/// (`command_pid`), then the process with a descriptor on that socket.
pub fn client_process(command_pid: u32, client: SocketAddr, relay_port: u16) -> Option<u32> {
    if command_pid == 0 {
        return None;
    }
    let inode = socket_inode(command_pid, client, relay_port)?;
    let netns = std::fs::read_link(format!("/proc/{command_pid}/ns/net")).ok()?;
    let want = format!("socket:[{inode}]");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{pid}/ns/net"))
            .ok()
            .as_ref()
            != Some(&netns)
        {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path())
                .ok()
                .is_some_and(|l| l.as_os_str() == want.as_str())
            {
                return Some(pid);
            }
        }
    }
    None
}

/// The inode of the TCP socket from `client` to the relay, from the
/// namespace's `/proc/net/tcp` (or `tcp6`).
fn socket_inode(pid: u32, client: SocketAddr, relay_port: u16) -> Option<u64> {
    let (table, local) = match client {
        SocketAddr::V4(a) => (
            "tcp",
            format!(
                "{:08X}:{:04X}",
                u32::from_le_bytes(a.ip().octets()),
                a.port()
            ),
        ),
        SocketAddr::V6(_) => return None,
    };
    let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).ok()?;
    let relay = format!("{relay_port:04X}");
    text.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (l, r, inode) = (f.get(1)?, f.get(2)?, f.get(9)?);
        (*l == local.as_str() && r.ends_with(&format!(":{relay}")))
            .then(|| inode.parse().ok())
            .flatten()
    })
}

fn cmdline(pid: u32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if argv.is_empty() {
        vec![format!("(pid {pid})")]
    } else {
        argv
    }
}

fn cwd_of(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Writes `text` to the standard error of process `pid`, when that is a
/// pipe or a terminal (what an agent reads a command's output from), never
/// a regular file (which would be written at its start) or anything else.
/// Best effort: a process gone, or a descriptor that cannot be opened,
/// leaves only the log's record.
pub fn tell_process(pid: u32, text: &str) {
    use std::io::Write;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let path = format!("/proc/{pid}/fd/2");
    let Ok(meta) = std::fs::metadata(&path) else {
        return;
    };
    let kind = meta.file_type();
    if !(kind.is_fifo() || kind.is_char_device()) {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real connection to a listener on this machine's loopback is found
    /// by its client address (this process's namespace is the command's).
    #[test]
    fn a_client_socket_is_found_by_its_address_in_proc() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let relay = listener.local_addr().unwrap().port();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let me = std::process::id();
        let found = client_process(me, client.local_addr().unwrap(), relay);
        assert_eq!(found, Some(me));
        // Another address, or another relay port, has no socket.
        let other: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(client_process(me, other, relay), None);
        assert_eq!(
            client_process(me, client.local_addr().unwrap(), relay ^ 1),
            None
        );
    }
}
