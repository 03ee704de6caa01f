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
}

impl SessionExecJudge {
    /// A judge for the session of `supervisor`; known tools are looked up
    /// on the host's `PATH`.
    pub fn new(supervisor: Arc<Supervisor>, host_path: &std::ffi::OsStr) -> SessionExecJudge {
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
        }
    }
}

impl ExecJudge for SessionExecJudge {
    fn judge(&self, event: &ExecEvent) -> ExecVerdict {
        if event.initial || Some(event.dev_ino) == self.aq_binary {
            return ExecVerdict::Allow;
        }
        let argv: Vec<String> = event
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
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
