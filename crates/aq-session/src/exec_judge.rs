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

use aq_audit::ExecIdentity;
use aq_policy::RuleId;
use aq_sandbox::{ExecCheck, ExecEvent, ExecJudge, ExecVerdict};

use crate::exec_identity::{Identified, Kin, Place, Places, Subject, ToolIndex};
use crate::supervisor::{Asker, ExecFindings, Supervisor};

/// Judges execs for one session.
pub struct SessionExecJudge {
    supervisor: Arc<Supervisor>,
    /// Known tools by identity, indexed when the first exec is judged.
    identifier: ToolIndex,
    /// Where the session can write, and the build outputs it trusts.
    places: Places,
    /// Device and inode of the `aq` binary, of `aq-shim` beside it and of
    /// the shim program in the state directory: an exec of any is a shim,
    /// which asks the supervisor itself.
    aq_binaries: Vec<(u64, u64)>,
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
    /// The command `aq run` started: the agent through whatever launches it
    /// (`#!/usr/bin/env node`, a wrapper script), never removed.
    initial: std::sync::atomic::AtomicU32,
    /// Processes that have exec'd once already. A shell running the model's
    /// command execs its last simple command in place, with the agent still
    /// its parent: only a process's first exec can be the agent's own.
    execd: std::sync::Mutex<std::collections::HashSet<u32>>,
}

impl AgentProcesses {
    /// Watches for the agent of `preset`.
    pub fn new(preset: aq_agents::Preset) -> AgentProcesses {
        AgentProcesses {
            set: aq_agents::PresetSet(vec![preset]),
            pids: Default::default(),
            initial: Default::default(),
            execd: Default::default(),
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

    /// Whether this is `pid`'s first exec since it was forked.
    fn first_exec(&self, pid: u32) -> bool {
        self.execd.lock().is_ok_and(|mut e| e.insert(pid))
    }

    /// `pid` execs something else: it is no longer the agent (but the
    /// initial command stays it). Whether it was.
    fn remove(&self, pid: u32) -> bool {
        if pid == self.initial.load(std::sync::atomic::Ordering::Relaxed) {
            return self.is_agent(pid);
        }
        self.pids.lock().is_ok_and(|mut p| p.remove(&pid))
    }

    /// Whether `argv` (run from `executable` in `cwd`) starts this agent:
    /// by its name, the file that runs, or a script whose links lead to
    /// the agent's entry script (`node …/.bin/codex`).
    fn recognizes(
        &self,
        argv: &[String],
        executable: &std::path::Path,
        cwd: &std::path::Path,
    ) -> bool {
        if aq_agents::recognize(&self.set, argv, Some(executable)).is_some() {
            return true;
        }
        let Some(k) = (1..argv.len()).find(|&k| !argv[k].starts_with('-')) else {
            return false;
        };
        let Ok(real) = std::fs::canonicalize(cwd.join(&argv[k])) else {
            return false;
        };
        let mut resolved = argv.to_vec();
        resolved[k] = real.display().to_string();
        aq_agents::recognize(&self.set, &resolved, Some(executable)).is_some()
    }
}

impl SessionExecJudge {
    /// A judge for the session of `supervisor`; known tools are looked up
    /// on the host's `PATH`; `places` says where the session writes.
    pub fn new(
        supervisor: Arc<Supervisor>,
        host_path: &std::ffi::OsStr,
        agent: Option<AgentProcesses>,
        scrub: &[String],
        places: Places,
    ) -> SessionExecJudge {
        let dirs: Vec<std::path::PathBuf> = std::env::split_paths(host_path)
            .filter(|d| d.is_absolute())
            .chain(["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(Into::into))
            .collect();
        let tiny = crate::files::state_root()
            .map(|state| aq_shim::tiny::path_in(&state.join(crate::run::SHIM_PROGRAM_DIR)));
        let aq_binaries = std::env::current_exe()
            .map(|aq| [aq_shim::entry::shim_target(&aq), aq])
            .into_iter()
            .flatten()
            .chain(tiny)
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| (m.dev(), m.ino()))
            .collect();
        SessionExecJudge {
            supervisor,
            identifier: match tool_dirs_record(&places) {
                Some(record) => ToolIndex::remembered(dirs, record),
                None => ToolIndex::new(dirs),
            },
            places,
            aq_binaries,
            agent,
            scrub: scrub.iter().map(|k| k.as_bytes().to_vec()).collect(),
        }
    }
}

/// Where the tool index's record of the `PATH` directories is kept: in the
/// state directory, unless the session can write there (a state directory
/// inside the workspace or a writable temporary directory).
fn tool_dirs_record(places: &Places) -> Option<std::path::PathBuf> {
    let root = crate::files::state_root().ok()?;
    let real = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    (!places.beneath_writable(&real)).then(|| root.join("tool-dirs.json"))
}

/// What the socket guard tells a session without the exec guard: only its
/// refusals, which go into the log.
pub(crate) struct SocketReporter {
    supervisor: Arc<Supervisor>,
}

impl SocketReporter {
    /// Report to `supervisor`'s log.
    pub fn new(supervisor: Arc<Supervisor>) -> SocketReporter {
        SocketReporter { supervisor }
    }
}

impl ExecJudge for SocketReporter {
    fn judge(&self, _event: &ExecEvent) -> ExecVerdict {
        // Never asked: without the exec guard no exec is notified.
        ExecVerdict::Allow
    }

    fn socket_refused(&self, pid: u32, target: &str, why: &'static str) {
        self.supervisor.record_socket_refused(pid, target, why);
    }
}

impl SessionExecJudge {
    /// What runs, and what the guard finds about the file: a native
    /// program it cannot name (or an altered copy of a tool), where the
    /// session can write and no `trusted_exec` entry covers it, asks
    /// (`exec-unknown-native`).
    fn look(&self, event: &ExecEvent, argv: &[String]) -> (Identified, ExecFindings) {
        let id = self.identifier.get();
        let subject = subject_of(event);
        if id.is_installed(event.dev_ino) {
            let (identified, _) = id.identify(&subject, argv, false);
            // A tool's other installed name (`cc` for gcc-12) says nothing;
            // a hard link where the session writes, or an applet, does.
            let notable = identified.how == "applet"
                || (identified.how == "inode" && self.places.beneath_writable(&event.executable));
            let identity = notable.then(|| ExecIdentity {
                how: identified.how.to_string(),
                ..ExecIdentity::default()
            });
            return (
                identified,
                ExecFindings {
                    rules: Vec::new(),
                    identity,
                },
            );
        }
        let meta = subject.metadata();
        let place = self.places.classify(&event.executable, meta.as_ref());
        let (identified, facts) = id.identify(&subject, argv, place.is_some());
        let Some(place) = place else {
            let identity = (identified.how != "name").then(|| ExecIdentity {
                how: identified.how.to_string(),
                ..ExecIdentity::default()
            });
            return (
                identified,
                ExecFindings {
                    rules: Vec::new(),
                    identity,
                },
            );
        };
        let trusted_by = self.places.trusted_by(&event.executable);
        // A file that cannot be read cannot be told from a native program.
        let native = facts.as_ref().is_none_or(|f| f.native);
        let exe = event.executable.display();
        let tool = identified.argv.first().cloned().unwrap_or_default();
        let (finding, evidence) = match (identified.kin, place, trusted_by) {
            (Kin::Same | Kin::Altered, Place::Memfd, _) => (
                Some("unknown-native-in-writable-place"),
                Some(format!(
                    "`{exe}` is a memfd holding {tool} ({}): what a memfd holds can change while it runs, so it is asked about whatever it is",
                    if identified.kin == Kin::Same {
                        "an exact copy"
                    } else {
                        "an altered copy"
                    }
                )),
            ),
            (Kin::Same, _, _) => (None, None),
            (Kin::Altered, _, Some(_)) => (Some("altered-copy"), None),
            (Kin::Altered, _, None) => (
                Some("altered-copy"),
                Some(format!(
                    "`{exe}` ({}) is an altered copy of {tool} ({}, other bytes): judged as {tool}, and asked about, since what else was changed cannot be told",
                    place.as_str(),
                    if identified.how == "build-id" {
                        "the same ELF build id"
                    } else {
                        "the same code"
                    },
                )),
            ),
            (Kin::Unknown, _, Some(_)) if native => (Some("trusted-build-output"), None),
            (Kin::Unknown, _, None) if native => (
                Some("unknown-native-in-writable-place"),
                Some(format!(
                    "`{exe}` is a native program the exec guard does not recognise, in a place this session can write ({}); a build output? add it to `[session] trusted_exec`",
                    place.as_str()
                )),
            ),
            (Kin::Unknown, _, _) => (None, None),
        };
        let rules = evidence
            .map(|e| self.supervisor.engine.finding(RuleId::ExecUnknownNative, e))
            .into_iter()
            .collect();
        let identity = ExecIdentity {
            how: identified.how.to_string(),
            place: Some(place.as_str().to_string()),
            finding: finding.map(str::to_string),
            trusted_by: trusted_by.map(str::to_string),
        };
        (
            identified,
            ExecFindings {
                rules,
                identity: Some(identity),
            },
        )
    }
}

impl SessionExecJudge {
    /// A library the dynamic loader is told to load into the program
    /// (`LD_PRELOAD`, `LD_AUDIT`) from a place the session can write is
    /// unknown native code like a program there (`exec-unknown-native`),
    /// unless a `trusted_exec` entry covers it. A name without a slash is
    /// looked up in the system's library directories, which it cannot write.
    fn loader_findings(&self, event: &ExecEvent) -> Vec<aq_policy::RuleMatch> {
        let mut out = Vec::new();
        for var in &event.loader {
            let var = var.to_string_lossy();
            let Some((name, value)) = var.split_once('=') else {
                continue;
            };
            for lib in value.split([':', ' ']).filter(|l| l.contains('/')) {
                let path = event.cwd.join(lib);
                let path = std::fs::canonicalize(&path).unwrap_or(path);
                let meta = std::fs::metadata(&path).ok();
                let Some(place) = self.places.classify(&path, meta.as_ref()) else {
                    continue;
                };
                if self.places.trusted_by(&path).is_some() {
                    continue;
                }
                out.push(self.supervisor.engine.finding(
                    RuleId::ExecUnknownNative,
                    format!(
                        "`{name}={lib}` loads `{}` into the program, a library in a place this session can write ({}): code the exec guard cannot name",
                        path.display(),
                        place.as_str()
                    ),
                ));
            }
        }
        out
    }
}

/// The places of the session `supervisor` runs in the sandbox `plan`
/// (its Landlock writable paths) with the environment `env` (its `TMPDIR`),
/// from now on.
pub(crate) fn places_of(
    plan: &aq_sandbox::SandboxPlan,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    supervisor: &Supervisor,
) -> Places {
    let writable: Vec<std::path::PathBuf> = plan
        .steps
        .iter()
        .find_map(|s| match s {
            aq_sandbox::Step::Landlock { writable, .. } => Some(writable.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let tmpdir = env
        .iter()
        .find(|(k, _)| k == "TMPDIR")
        .map(|(_, v)| std::path::PathBuf::from(v));
    Places::new(
        &supervisor.file.workspace,
        &writable,
        tmpdir.as_deref(),
        std::time::SystemTime::now(),
        &supervisor.file.trusted_exec,
        supervisor.home.as_deref(),
    )
}

/// The file of `event`, for the identifier.
fn subject_of(event: &ExecEvent) -> Subject<'_> {
    Subject {
        executable: &event.executable,
        dev_ino: event.dev_ino,
        pid: event.pid,
        at_commit: event.check == ExecCheck::AtCommit,
    }
}

impl ExecJudge for SessionExecJudge {
    fn refuse_shells_with_status(&self) -> bool {
        true
    }

    fn syscall_refused(&self, pid: u32, syscall: &'static str, errno: i32) {
        self.supervisor.record_syscall_refused(pid, syscall, errno);
    }

    fn socket_refused(&self, pid: u32, target: &str, why: &'static str) {
        self.supervisor.record_socket_refused(pid, target, why);
    }

    fn scrub_env(&self, event: &ExecEvent) -> Vec<Vec<u8>> {
        if self.scrub.is_empty() || self.agent.as_ref().is_some_and(|a| a.is_agent(event.pid)) {
            return Vec::new();
        }
        self.scrub.clone()
    }

    fn judge(&self, event: &ExecEvent) -> ExecVerdict {
        if event.initial {
            self.supervisor
                .command_pid
                .store(event.pid, std::sync::atomic::Ordering::Relaxed);
            self.supervisor.health.set_command(event.pid);
            if let Some(a) = &self.agent {
                a.initial
                    .store(event.pid, std::sync::atomic::Ordering::Relaxed);
                a.add(event.pid);
            }
            return ExecVerdict::Allow;
        }
        if self.supervisor.health.failed() {
            // Nothing new runs once the log fails (the session is ending).
            return ExecVerdict::Deny {
                message: crate::supervisor::LOG_FAILED_REFUSAL.to_string(),
            };
        }
        if self.aq_binaries.contains(&event.dev_ino) {
            return ExecVerdict::Allow;
        }
        let argv: Vec<String> = event
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        // A process that was the agent and execs something else (Codex's
        // setup helper becoming the model's shell) is the agent no more:
        // what it runs from now on is judged as always.
        let was_agent = self.agent.as_ref().is_some_and(|a| a.remove(event.pid));
        // A fresh child of the agent: forked by it, exec'ing for the first time.
        let fresh_child = self
            .agent
            .as_ref()
            .is_some_and(|a| a.first_exec(event.pid) && a.is_agent(event.ppid));
        if let Some(a) = self.agent.as_ref().filter(|_| was_agent || fresh_child) {
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
            if a.recognizes(&argv, &event.executable, &event.cwd) {
                a.add(event.pid);
                self.supervisor.record_allowed(
                    &argv,
                    asker(),
                    "agent-self",
                    &format!("the {} agent starting itself", preset.title),
                );
                return ExecVerdict::Allow;
            }
            // Only a fresh child of the agent runs its housekeeping; the
            // model's commands come through a shell (whose last command
            // may be exec'd in place: not a first exec), or through a
            // process that was the agent.
            // And only the real program (known by its file's identity,
            // not a `git` planted in the workspace).
            let (identified, _) = self
                .identifier
                .get()
                .identify(&subject_of(event), &argv, false);
            if fresh_child
                && !was_agent
                && self.identifier.get().is_installed(event.dev_ino)
                && preset.is_housekeeping(&identified.argv)
            {
                // `sh -c 'env'`: the shell execs that simple command in
                // place next; it is part of the same housekeeping.
                if let [_, c, script] = identified.argv.as_slice()
                    && c == "-c"
                    && script
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || " -_./".contains(ch))
                    && let Ok(mut map) = self.supervisor.shim_allowed.lock()
                {
                    map.insert(
                        event.pid,
                        script.split_whitespace().map(String::from).collect(),
                    );
                }
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
        let (identified, mut findings) = self.look(event, &argv);
        findings.rules.extend(self.loader_findings(event));
        // A shim allowed exactly this program and arguments: not judged
        // again. Only as identified (by the file, not by the name the
        // caller gave it), and not for a file the guard asks about.
        if findings.rules.is_empty()
            && self
                .supervisor
                .shim_already_decided(event.pid, &identified.argv)
        {
            return ExecVerdict::Allow;
        }
        let cwd = event.cwd.display().to_string();
        let answer = self.supervisor.decide_with(
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
            findings,
        );
        if !answer.run
            && was_agent
            && let Some(a) = &self.agent
        {
            // Refused: it stays what it was.
            a.add(event.pid);
        }
        if answer.run {
            ExecVerdict::Allow
        } else {
            ExecVerdict::Deny {
                message: answer.message,
            }
        }
    }
}
