//! `aq enable <agent> --hook [--scope user|project]`, `aq enable --status`
//! and `aq disable <agent>`: install `aq hook <agent>` in the agent's own
//! configuration (see `aq_agents::install`), and take it out again.
//!
//! What `enable` found and wrote is kept outside the configuration, under
//! `$XDG_STATE_HOME/agent-quarantine/enabled/`: `disable` puts the file back
//! byte for byte when nothing changed it since, and otherwise removes only
//! aq's entry.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aq_agents::hooks::HookAgent;
use aq_agents::install::{self, Scope};
use serde::{Deserialize, Serialize};

use crate::cli::{DisableArgs, EnableArgs, HookScope};
use crate::exit::ExitCode;

/// What `enable` changed: one or two files (Codex: its hooks and the
/// trust of aq's hook in its config).
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    files: Vec<FileRecord>,
}

/// What `enable` changed in one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileRecord {
    path: PathBuf,
    /// The file before, when there was one.
    original: Option<String>,
    /// What aq wrote.
    written: String,
}

fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn records_dir() -> Result<PathBuf, String> {
    Ok(aq_session::state_root()
        .map_err(|e| e.to_string())?
        .join("enabled"))
}

fn record_path(agent: HookAgent, scope: Scope) -> Result<PathBuf, String> {
    Ok(records_dir()?.join(format!("{}-{}.json", agent.name(), scope.as_str())))
}

fn scope_of(s: HookScope) -> Scope {
    match s {
        HookScope::User => Scope::User,
        HookScope::Project => Scope::Project,
    }
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set".to_string())
}

fn parse_agent(name: &str) -> Result<HookAgent, String> {
    HookAgent::parse(name).ok_or_else(|| {
        format!(
            "unknown agent `{name}`; hooks exist for: {}",
            HookAgent::ALL.map(HookAgent::name).join(", ")
        )
    })
}

/// The hook's command: this `aq`, by its absolute path (the agent may not
/// have aq's directory on its PATH).
fn hook_command(agent: HookAgent) -> Result<String, String> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot find the aq binary: {e}"))?;
    let exe = exe.display().to_string();
    if exe.contains(char::is_whitespace) {
        return Err(format!(
            "aq is installed at `{exe}`, a path with a space, which agents' hook commands split; install aq elsewhere (cargo install puts it in ~/.cargo/bin)"
        ));
    }
    Ok(format!("{exe} hook {}", agent.name()))
}

/// Writes `text` to `path` through a new file renamed over it.
fn write_atomic(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mode = std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(mode);
    let tmp = path.with_extension(format!("aq-{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(|e| e.to_string())?;
    drop(f);
    let _ = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode));
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })
}

pub fn run_enable(args: &EnableArgs) -> Result<ExitCode, String> {
    if args.status {
        return status();
    }
    aq_session::answerer::refuse_inside_session_because(
        "aq enable",
        "where aq sits in the agents is the user's to change, from a terminal of their own",
    )?;
    let Some(name) = &args.agent else {
        return Err(
            "name an agent (`aq enable claude --hook`), or ask `aq enable --status`".into(),
        );
    };
    if !args.hook && !args.wrap {
        return Err(
            "say what to enable: `--hook` installs aq as the agent's own hook, `--wrap` starts it under `aq run` when you type its name (`aq run -- AGENT` needs nothing installed)"
                .into(),
        );
    }
    if args.wrap {
        wrap(name)?;
        if !args.hook {
            return Ok(ExitCode::Ok);
        }
    }
    let agent = parse_agent(name)?;
    let scope = scope_of(args.scope);
    let workspace = aq_session::run::resolve_workspace(None)?;
    let home = home()?;
    let path = install::hook_path(agent, scope, &home, &workspace);
    let current = read_optional(&path)?;
    let command = hook_command(agent)?;
    let text = install::with_hook(agent, current.as_deref(), &command)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut changes: Vec<FileRecord> = Vec::new();
    if let Some(text) = &text {
        changes.push(FileRecord {
            path: path.clone(),
            original: current.clone(),
            written: text.clone(),
        });
    }
    // Codex skips a hook its user's config.toml does not trust.
    if agent == HookAgent::Codex {
        let hooks_text = text.clone().or(current.clone()).unwrap_or_default();
        let trust = install::codex_trust(&path, &hooks_text);
        let config = home.join(".codex/config.toml");
        let before = read_optional(&config)?;
        if let Some(after) = install::with_codex_trust(before.as_deref(), &path, &trust)
            .map_err(|e| format!("{}: {e}", config.display()))?
        {
            changes.push(FileRecord {
                path: config,
                original: before,
                written: after,
            });
        }
    }
    if changes.is_empty() {
        println!(
            "aq: the {} hook is already installed in {}",
            agent.name(),
            path.display()
        );
        return Ok(ExitCode::Ok);
    }
    // What was there first, kept outside the agent's configuration.
    let rec = record_path(agent, scope)?;
    if !rec.exists() {
        let body = serde_json::to_string_pretty(&Record {
            files: changes.clone(),
        })
        .map_err(|e| e.to_string())?;
        write_atomic(&rec, &body, 0o600)?;
    }
    let mode = if agent == HookAgent::Cline {
        0o755
    } else {
        0o644
    };
    for c in &changes {
        write_atomic(
            &c.path,
            &c.written,
            if c.path == path { mode } else { 0o600 },
        )?;
    }
    if agent == HookAgent::Cline {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
    }
    println!(
        "aq: the {} hook is installed in {}: `{command}` decides every shell command it runs",
        agent.name(),
        path.display()
    );
    for note in notes(agent, scope) {
        println!("aq: note: {note}");
    }
    Ok(ExitCode::Ok)
}

/// What a user should know after installing.
fn notes(agent: HookAgent, scope: Scope) -> Vec<&'static str> {
    let mut n = Vec::new();
    match agent {
        HookAgent::Codex => {
            n.push("Codex lets a hook only deny: aq's asks are denials that say how to approve");
            n.push("Codex runs only hooks its config.toml trusts: aq added the trust of its own entry there ([hooks.state]); Codex skips a changed entry without a word, so run `aq enable codex --hook` again after editing hooks.json");
            if scope == Scope::Project {
                n.push("Codex runs a project's hooks only after you trust them");
            }
        }
        HookAgent::Windsurf | HookAgent::Cline | HookAgent::Gemini | HookAgent::OpenCode => {
            n.push("this agent's hooks cannot ask the user: aq's asks are denials that say how to approve");
        }
        _ => {}
    }
    if scope == Scope::Project {
        n.push("the hook is in the project: everyone who works on it gets it, and the agent may ask to trust it");
    }
    n.push("aq's allow defers to the agent's own permission rules; `[hooks] allow = \"approve\"` in your policy approves instead");
    n
}

pub fn run_disable(args: &DisableArgs) -> Result<ExitCode, String> {
    aq_session::answerer::refuse_inside_session_because(
        "aq disable",
        "where aq sits in the agents is the user's to change, from a terminal of their own",
    )?;
    unwrap_launcher(&args.agent)?;
    let Some(agent) = HookAgent::parse(&args.agent) else {
        return Ok(ExitCode::Ok);
    };
    let scope = scope_of(args.scope);
    let workspace = aq_session::run::resolve_workspace(None)?;
    let rec_path = record_path(agent, scope)?;
    let record: Option<Record> = std::fs::read(&rec_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let home = home().unwrap_or_default();
    let hooks_path = install::hook_path(agent, scope, &home, &workspace);
    let mut files: Vec<(PathBuf, Option<FileRecord>)> = match record {
        Some(r) => r
            .files
            .into_iter()
            .map(|f| (f.path.clone(), Some(f)))
            .collect(),
        None => vec![(hooks_path.clone(), None)],
    };
    let config = home.join(".codex/config.toml");
    if agent == HookAgent::Codex && !files.iter().any(|(p, _)| *p == config) {
        files.push((config, None));
    }
    // The trust keys of aq's hook, from the hooks file as it is now.
    let trust_keys: Vec<String> = std::fs::read_to_string(&hooks_path)
        .map(|t| install::codex_trust(&hooks_path, &t))
        .unwrap_or_default()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    for (path, rec) in files {
        let current = std::fs::read_to_string(&path).ok();
        let message = match (&rec, &current) {
            // Nothing changed it since: put back exactly what was there.
            (Some(r), Some(now)) if *now == r.written => {
                match &r.original {
                    Some(original) => write_atomic(&path, original, 0o644)?,
                    None => std::fs::remove_file(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))?,
                }
                format!("restored {} as it was before `aq enable`", path.display())
            }
            (_, Some(now)) => {
                let edited = if path == hooks_path {
                    install::without_hook(agent, now)
                } else {
                    install::without_codex_trust(now, &trust_keys).map(|t| t.map(|t| (t, false)))
                }
                .map_err(|e| format!("{}: {e}", path.display()))?;
                match edited {
                    Some((_, true)) => {
                        std::fs::remove_file(&path)
                            .map_err(|e| format!("{}: {e}", path.display()))?;
                        format!("removed {}", path.display())
                    }
                    Some((text, false)) => {
                        write_atomic(&path, &text, 0o644)?;
                        format!(
                            "removed aq's entry from {} (the file changed since `aq enable`, so the rest stays as it is now)",
                            path.display()
                        )
                    }
                    None => format!("no aq hook in {}", path.display()),
                }
            }
            (_, None) => format!("{} does not exist: nothing to remove", path.display()),
        };
        println!("aq: {}: {message}", agent.name());
    }
    let _ = std::fs::remove_file(&rec_path);
    Ok(ExitCode::Ok)
}

/// `aq enable --status`: per agent, whether it is installed (and which
/// version), where its hook is installed, and its preset.
fn status() -> Result<ExitCode, String> {
    let home = home()?;
    let workspace = aq_session::run::resolve_workspace(None)?;
    let presets = aq_agents::PresetSet::builtin();
    println!(
        "{:<9} {:<44} {:<32} {:<8} preset",
        "agent", "found", "hook", "wrapped"
    );
    let launchers = aq_session::launcher_dir();
    for agent in HookAgent::ALL {
        let preset = presets.get(agent.name());
        let found = preset
            .and_then(|p| p.programs.iter().find_map(|prog| on_path(prog)))
            .map(|p| {
                let v = version_of(&p).unwrap_or_default();
                format!("{} {v}", p.display())
            })
            .unwrap_or_else(|| "not found".to_string());
        let hooks: Vec<String> = [Scope::User, Scope::Project]
            .into_iter()
            .filter_map(|scope| {
                let p = install::hook_path(agent, scope, &home, &workspace);
                let text = std::fs::read_to_string(&p).ok()?;
                install::has_hook(agent, &text)
                    .then(|| format!("{} ({})", p.display(), scope.as_str()))
            })
            .collect();
        let wrapped = preset.is_some_and(|p| {
            p.programs.iter().any(|prog| {
                launchers.as_ref().is_some_and(|d| {
                    std::fs::read_to_string(d.join(prog))
                        .is_ok_and(|t| t.contains("agent-quarantine launcher"))
                })
            })
        });
        println!(
            "{:<9} {:<44} {:<32} {:<8} {}",
            agent.name(),
            found,
            if hooks.is_empty() {
                "not installed".to_string()
            } else {
                hooks.join(", ")
            },
            if wrapped { "yes" } else { "no" },
            preset.map_or("-".to_string(), |p| p.name.clone())
        );
    }
    Ok(ExitCode::Ok)
}

fn on_path(program: &str) -> Option<PathBuf> {
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// `PROGRAM --version`, first line, given 3 s.
fn version_of(program: &Path) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        if child.try_wait().ok()?.is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(3) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    out.lines().next().map(|l| l.trim().to_string())
}

// ---- --wrap: a launcher first on PATH ------------------------------------------

const BLOCK_START: &str = "# >>> agent-quarantine launchers (aq enable --wrap) >>>";
const BLOCK_END: &str = "# <<< agent-quarantine launchers <<<";

/// The shell startup files the block goes in: those that exist (bash,
/// zsh, fish), else `~/.bashrc`.
fn rc_files(home: &Path) -> Vec<(PathBuf, bool)> {
    let candidates = [
        (home.join(".bashrc"), false),
        (home.join(".zshrc"), false),
        (home.join(".config/fish/config.fish"), true),
    ];
    let existing: Vec<(PathBuf, bool)> = candidates
        .iter()
        .filter(|(p, _)| p.exists())
        .cloned()
        .collect();
    if existing.is_empty() {
        vec![(home.join(".bashrc"), false)]
    } else {
        existing
    }
}

fn rc_block(dir: &Path, fish: bool) -> String {
    let line = if fish {
        format!("set -gx PATH '{}' $PATH", dir.display())
    } else {
        format!("export PATH='{}':\"$PATH\"", dir.display())
    };
    format!("{BLOCK_START}\n{line}\n{BLOCK_END}\n")
}

/// `text` without aq's block.
fn without_block(text: &str) -> Option<String> {
    let start = text.find(BLOCK_START)?;
    let end = text[start..].find(BLOCK_END)? + start + BLOCK_END.len();
    let end = if text[end..].starts_with('\n') {
        end + 1
    } else {
        end
    };
    Some(format!("{}{}", &text[..start], &text[end..]))
}

fn wrap(name: &str) -> Result<(), String> {
    let presets = aq_agents::PresetSet::builtin();
    let preset = presets.get(name).ok_or_else(|| {
        format!(
            "no preset for `{name}`; presets: {}",
            presets.names().join(", ")
        )
    })?;
    let dir = aq_session::launcher_dir().ok_or("no home directory for the launchers")?;
    let aq = hook_command(HookAgent::Claude)?
        .rsplit_once(" hook ")
        .map(|(a, _)| a.to_string())
        .unwrap_or_default();
    for program in &preset.programs {
        let launcher = dir.join(program);
        let text = format!(
            "#!/bin/sh\n# agent-quarantine launcher: `{program}` starts under `aq run` with the {name} preset.\n# Installed by `aq enable {name} --wrap`; `aq disable {name}` removes it.\nexec '{aq}' run --wrapped --agent {name} -- {program} \"$@\"\n"
        );
        write_atomic(&launcher, &text, 0o755)?;
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755));
        println!(
            "aq: `{program}` now starts under `aq run` ({})",
            launcher.display()
        );
    }
    let home = home()?;
    for (rc, fish) in rc_files(&home) {
        let text = std::fs::read_to_string(&rc).unwrap_or_default();
        if text.contains(BLOCK_START) {
            continue;
        }
        let sep = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        write_atomic(&rc, &format!("{text}{sep}{}", rc_block(&dir, fish)), 0o644)?;
        println!(
            "aq: {} puts {} first on PATH (new shells)",
            rc.display(),
            dir.display()
        );
    }
    println!("aq: inside a sandbox, a launcher runs the agent itself (a sandbox cannot nest)");
    Ok(())
}

/// Removes `name`'s launchers, and the shell block when none is left.
fn unwrap_launcher(name: &str) -> Result<(), String> {
    let Some(dir) = aq_session::launcher_dir() else {
        return Ok(());
    };
    let presets = aq_agents::PresetSet::builtin();
    let programs: Vec<String> = presets
        .get(name)
        .map(|p| p.programs.clone())
        .unwrap_or_else(|| vec![name.to_string()]);
    for program in programs {
        let launcher = dir.join(&program);
        if std::fs::read_to_string(&launcher).is_ok_and(|t| t.contains("agent-quarantine launcher"))
        {
            std::fs::remove_file(&launcher).map_err(|e| format!("{}: {e}", launcher.display()))?;
            println!("aq: `{program}` no longer starts under `aq run`");
        }
    }
    let empty = std::fs::read_dir(&dir).map_or(true, |mut d| d.next().is_none());
    if empty && let Ok(home) = home() {
        for (rc, _) in rc_files(&home) {
            if let Some(text) = std::fs::read_to_string(&rc)
                .ok()
                .and_then(|t| without_block(&t))
            {
                write_atomic(&rc, &text, 0o644)?;
                println!("aq: removed the launcher block from {}", rc.display());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod wrap_tests {
    use super::*;

    #[test]
    fn the_shell_block_comes_out_as_it_went_in() {
        let before = "alias ll='ls -l'\n";
        let with = format!(
            "{before}{}",
            rc_block(Path::new("/h/.local/share/agent-quarantine/bin"), false)
        );
        assert!(with.contains("export PATH='/h/.local/share/agent-quarantine/bin':\"$PATH\""));
        assert_eq!(without_block(&with).unwrap(), before);
        assert_eq!(without_block(before), None);
    }
}
