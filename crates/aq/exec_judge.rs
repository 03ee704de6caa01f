//! The session's judge for the kernel exec guard (`aq_sandbox::ExecJudge`):
//! every `execve` in the sandbox is decided by the same engine, policy, log
//! and approval path as the shims, with the program identified by what it
//! is (see `exec_identity`), not by its file name.
//!
//! Three execs are let through without a new decision, so nothing is asked
//! twice: the command `aq run` started (the user typed it and it was judged
//! already), a shim (the `aq` binary itself: it asks the supervisor), and
//! the real program a shim then execs with exactly the argv it was allowed.

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use aq_sandbox::{ExecEvent, ExecJudge, ExecVerdict};

use crate::exec_identity::Identifier;
use crate::supervisor::{Asker, Supervisor};

/// Judges execs for one session.
pub struct SessionExecJudge {
    supervisor: Arc<Supervisor>,
    identifier: Identifier,
    /// Device and inode of the `aq` binary: an exec of it is a shim.
    aq_binary: Option<(u64, u64)>,
    /// The agent preset of the session, and the processes that are the agent.
    agent: Option<AgentProcesses>,
    /// Variables only the command `aq run` started may have (a profile's
    /// `env`, keys passed to the agent): blanked in everything else.
    scrub: Vec<Vec<u8>>,
}

/// The processes that are the agent: the command `aq run` started, and
/// what that process starts that is the agent again (the npm entry script
/// starting the native binary, a relaunch with more memory). Their own
/// housekeeping commands (the preset's list) run without a decision; what
/// the model asks for runs through a shell and is judged as always.
pub struct AgentProcesses {
    set: aq_agents::PresetSet,
    pids: std::sync::Mutex<std::collections::HashSet<u32>>,
}

impl AgentProcesses {
    /// Watches for the agent of `preset`.
    pub fn new(preset: aq_agents::Preset) -> AgentProcesses {
        AgentProcesses {
            set: aq_agents::PresetSet(vec![preset]),
            pids: Default::default(),
        }
    }

    fn preset(&self) -> &aq_agents::Preset {
        &self.set.0[0]
    }

    fn is_agent(&self, pid: u32) -> bool {
        self.pids.lock().is_ok_and(|p| p.contains(&pid))
    }

    fn add(&self, pid: u32) {
        if let Ok(mut p) = self.pids.lock() {
            p.insert(pid);
        }
    }
}

impl SessionExecJudge {
    /// A judge for the session of `supervisor`; known tools are looked up
    /// on the host's `PATH`.
    pub fn new(
        supervisor: Arc<Supervisor>,
        host_path: &std::ffi::OsStr,
        agent: Option<AgentProcesses>,
        scrub: &[String],
    ) -> SessionExecJudge {
        let dirs: Vec<std::path::PathBuf> = std::env::split_paths(host_path)
            .filter(|d| d.is_absolute())
            .chain(["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(Into::into))
            .collect();
        let aq_binary = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map(|m| (m.dev(), m.ino()))
            .ok();
        SessionExecJudge {
            supervisor,
            identifier: Identifier::new(dirs.iter().map(|d| d.as_path())),
            aq_binary,
            agent,
            scrub: scrub.iter().map(|k| k.as_bytes().to_vec()).collect(),
        }
    }
}

impl ExecJudge for SessionExecJudge {
    fn refuse_shells_with_status(&self) -> bool {
        true
    }

    fn scrub_env(&self, event: &ExecEvent) -> Vec<Vec<u8>> {
        if self.scrub.is_empty() || self.agent.as_ref().is_some_and(|a| a.is_agent(event.pid)) {
            return Vec::new();
        }
        self.scrub.clone()
    }

    fn judge(&self, event: &ExecEvent) -> ExecVerdict {
        if event.initial {
            if let Some(a) = &self.agent {
                a.add(event.pid);
            }
            return ExecVerdict::Allow;
        }
        if Some(event.dev_ino) == self.aq_binary {
            return ExecVerdict::Allow;
        }
        let argv: Vec<String> = event
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        if let Some(a) = self.agent.as_ref().filter(|a| a.is_agent(event.ppid)) {
            let cwd = event.cwd.display().to_string();
            let asker = || Asker {
                pid: event.pid,
                ppid: event.ppid,
                cwd: &cwd,
                grant: None,
                grant_from_environ: false,
                source: "exec-guard",
                exe: Some(event.executable.display().to_string()),
            };
            let preset = a.preset();
            if aq_agents::recognize(&a.set, &argv, Some(&event.executable)).is_some() {
                a.add(event.pid);
                self.supervisor.record_allowed(
                    &argv,
                    asker(),
                    "agent-self",
                    &format!("the {} agent starting itself", preset.title),
                );
                return ExecVerdict::Allow;
            }
            if preset.is_housekeeping(&argv) {
                self.supervisor.record_allowed(
                    &argv,
                    asker(),
                    "agent-housekeeping",
                    &format!(
                        "the {} agent's own housekeeping (its preset lists it), not a command of the model",
                        preset.title
                    ),
                );
                return ExecVerdict::Allow;
            }
        }
        let identified = self.identifier.identify(&event.executable, &argv);
        // One look: the entry is forgotten by the first, so both spellings
        // (`python` as shimmed, `python3` as identified) are offered at once.
        if self
            .supervisor
            .shim_already_decided(event.pid, &[&identified.argv, &argv])
        {
            return ExecVerdict::Allow;
        }
        let cwd = event.cwd.display().to_string();
        let answer = self.supervisor.decide(
            &identified.argv,
            Asker {
                pid: event.pid,
                ppid: event.ppid,
                cwd: &cwd,
                grant: None,
                grant_from_environ: true,
                source: "exec-guard",
                exe: Some(event.executable.display().to_string()),
            },
        );
        if answer.run {
            ExecVerdict::Allow
        } else {
            ExecVerdict::Deny {
                message: answer.message,
            }
        }
    }
}
