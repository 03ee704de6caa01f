//! The agent's process, seen from its hook: `aq hook` is a child (or a
//! grandchild, through the agent's shell) of the agent, and what the agent
//! was started with decides whether anyone can answer an ask
//! ([`crate::hooks::classify_run`]). Reads `/proc`: Linux only; anywhere
//! else, or when nothing is readable, the process is not found.

use std::path::{Path, PathBuf};

use crate::hooks::{AgentProcess, HookAgent, MODE_ENV};
use crate::{PresetSet, recognize::recognize};

/// How many ancestors are looked at: the agent's shell, a relaunched
/// child, a wrapper (`npx`, `aq run`) sit between.
const MAX_DEPTH: usize = 12;

/// The nearest ancestor of this process that runs `agent`'s program, read
/// from `/proc`; `None` when there is none (or `agent` has no preset).
pub fn find(agent: HookAgent) -> Option<AgentProcess> {
    let set = PresetSet::builtin();
    set.get(agent.name())?;
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..MAX_DEPTH {
        if pid <= 1 {
            return None;
        }
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        if let Some(argv) = read_argv(&proc_dir) {
            let resolved = resolve_words(&proc_dir, &argv);
            if let Some(r) = recognize(&set, &resolved, None)
                && r.preset.name == agent.name()
            {
                return Some(AgentProcess {
                    args: argv.get(r.args_at..).unwrap_or_default().to_vec(),
                    env: read_env(&proc_dir),
                    stdin_tty: is_terminal(&proc_dir.join("fd/0")),
                    stdout_tty: is_terminal(&proc_dir.join("fd/1")),
                });
            }
        }
        pid = parent_of(&proc_dir)?;
    }
    None
}

fn read_argv(proc_dir: &Path) -> Option<Vec<String>> {
    let raw = std::fs::read(proc_dir.join("cmdline")).ok()?;
    let argv: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    (!argv.is_empty()).then_some(argv)
}

/// The first words (program, interpreter, script) with the links followed,
/// so `node …/node_modules/.bin/gemini` reads as the package's script. A
/// relative path is the process's own: from its working directory.
fn resolve_words(proc_dir: &Path, argv: &[String]) -> Vec<String> {
    let cwd = std::fs::read_link(proc_dir.join("cwd")).ok();
    argv.iter()
        .enumerate()
        .map(|(i, w)| {
            if i > 3 || !w.contains('/') {
                return w.clone();
            }
            let path = match &cwd {
                Some(c) => c.join(w),
                None => PathBuf::from(w),
            };
            std::fs::canonicalize(path)
                .ok()
                .and_then(|p| p.to_str().map(str::to_string))
                .unwrap_or_else(|| w.clone())
        })
        .collect()
}

fn read_env(proc_dir: &Path) -> Vec<(String, String)> {
    let Ok(raw) = std::fs::read(proc_dir.join("environ")) else {
        return Vec::new();
    };
    raw.split(|b| *b == 0)
        .filter_map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            let (k, v) = kv.split_once('=')?;
            MODE_ENV
                .contains(&k)
                .then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// Whether the descriptor is a terminal: a pseudo-terminal, a virtual
/// console, the controlling terminal or the console.
fn is_terminal(fd_link: &Path) -> bool {
    std::fs::read_link(fd_link).is_ok_and(|target| {
        let t = target.to_string_lossy();
        t.starts_with("/dev/pts/") || t.starts_with("/dev/tty") || t == "/dev/console"
    })
}

fn parent_of(proc_dir: &Path) -> Option<u32> {
    let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
    // The command name is in parentheses and may hold spaces: parse after it.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_agent_is_found_above_a_test() {
        // The test runner's ancestors (cargo, a shell) run no agent.
        assert_eq!(find(HookAgent::Gemini), None);
        // Windsurf has no preset: never looked for.
        assert_eq!(find(HookAgent::Windsurf), None);
    }

    #[test]
    fn this_process_reads_as_itself() {
        let me = Path::new("/proc/self");
        let argv = read_argv(me).unwrap();
        assert!(argv[0].contains("aq_agents"), "{argv:?}");
        assert!(parent_of(me).is_some_and(|p| p > 0));
    }
}
