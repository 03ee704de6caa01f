//! Run the command: refused when blocked, else in the kernel sandbox,
//! under Seatbelt, or with the shims only; with the broker, the key proxy
//! and the bridges serving it, and asks answered on this terminal when the
//! command does not use it.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::agent::Agent;
use super::judge::Judged;
use super::profile::Settled;
use super::sandbox::{Boundary, Planned, PlannedSandbox};
use super::session::Session;
use super::supervise::Supervised;
use super::{EXIT_SANDBOX, Exit, Setup, host_path};
use crate::network::{NetPlan, SessionBroker};
use crate::refusal::{EXIT_BLOCKED, EXIT_NOT_FOUND, print_refusal};
use crate::supervisor::Supervisor;
use crate::{ENV_SESSION_DIR, ENV_SESSION_ID, SessionFile};

/// Runs the command the user typed, unless it is blocked, and waits for it.
pub(super) fn run_command(
    setup: &Setup<'_>,
    judged: &Judged,
    supervised: &Supervised,
    boundary: &mut Boundary,
) -> Exit {
    let Setup {
        args,
        agent,
        settled,
        session,
        ..
    } = *setup;
    let supervisor = &supervised.supervisor;
    if judged.blocked() {
        print_refusal("blocked", &args.command, &judged.verdict);
        return Exit::Code(i32::from(EXIT_BLOCKED));
    }
    let headless = settled.profile.summary == aq_policy::SummaryFormat::Json;
    let prompter = (!headless && !settled.learning() && !std::io::stdin().is_terminal())
        .then(|| crate::answerer::spawn_tty_prompter(session.dir.to_path_buf()))
        .flatten();
    if prompter.is_some() {
        supervisor
            .prompting
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let intercept = boundary.intercept.as_ref().map(|i| i.intercept.clone());
    let exit = match &mut boundary.sandbox {
        Some(Planned::Kernel(s)) => {
            let (broker, broker_sink) = match start_broker(&settled.net, supervisor, intercept) {
                Some((b, sink)) => (Some(b), Some(sink)),
                None => (None, None),
            };
            // The listeners come out in the order of their ports in the
            // spec: the broker's first, then the key proxy's, then the
            // bridges'.
            let served: Arc<Mutex<Vec<aq_net::KeyProxy>>> = Default::default();
            let key_proxy = served.clone();
            let sink = listener_sink(agent, settled, session, supervisor, served, broker_sink);
            // What only the agent may hold: the profile's secret-looking
            // `env` and the keys passed to it.
            let scrub: Vec<String> = settled
                .profile
                .env
                .iter()
                .filter(|n| aq_knowledge::secret_names::is_secret_env_name(n))
                .chain(&session.grants.keys_passed)
                .cloned()
                .collect();
            let exit = run_sandboxed(
                s,
                supervisor,
                sink,
                agent.chosen.as_ref().map(|c| &c.preset),
                &scrub,
            );
            // Close what is still open, so its connection is logged
            // before the session ends.
            if let Some(b) = broker {
                b.stop();
            }
            drop(key_proxy);
            exit
        }
        Some(Planned::Seatbelt(s)) => {
            // The broker serves the listener bound on the host's
            // loopback when the launch was planned, as it serves the
            // one the Linux sandbox hands out.
            let broker = match s.broker_listener.take() {
                Some(listener) => {
                    start_broker(&settled.net, supervisor, intercept).map(|(b, sink)| {
                        sink(vec![std::os::fd::OwnedFd::from(listener)]);
                        b
                    })
                }
                None => None,
            };
            let exit = run_seatbelt(&s.launch);
            if let Some(b) = broker {
                b.stop();
            }
            exit
        }
        None => run_child(
            &session.command,
            &session.dir,
            &session.file,
            &session.shim_dir,
        ),
    };
    drop(prompter);
    exit
}

/// The broker, when the network goes through it, and the sink that hands
/// it its listener.
fn start_broker(
    net: &NetPlan,
    supervisor: &Arc<Supervisor>,
    intercept: Option<Arc<aq_net::Intercept>>,
) -> Option<(SessionBroker, aq_sandbox::ListenerSink)> {
    match net {
        NetPlan::Broker {
            allowlist,
            unlisted,
            ..
        } => Some(SessionBroker::start(
            allowlist.clone(),
            supervisor.clone(),
            *unlisted,
            intercept,
        )),
        _ => None,
    }
}

/// What serves the listeners the Linux sandbox hands out: the bridges'
/// (last), the key proxy's (before them), then the broker's (first); the
/// key proxies started go into `served`.
fn listener_sink(
    agent: &Agent,
    settled: &Settled,
    session: &Session,
    supervisor: &Arc<Supervisor>,
    served: Arc<Mutex<Vec<aq_net::KeyProxy>>>,
    broker_sink: Option<aq_sandbox::ListenerSink>,
) -> Option<aq_sandbox::ListenerSink> {
    if session.grants.key_proxy.is_none() && settled.bridges.is_empty() {
        return broker_sink;
    }
    let slot = served;
    let sup = supervisor.clone();
    let plan = session.grants.key_proxy.clone();
    let bridges = settled.bridges.clone();
    let pins = settled.pins.clone();
    let agent = agent
        .chosen
        .as_ref()
        .map(|c| c.preset.name.clone())
        .unwrap_or_default();
    Some(Box::new(move |mut fds: Vec<std::os::fd::OwnedFd>| {
        let at = fds.len().saturating_sub(bridges.len());
        let bridge_fds = fds.split_off(at);
        let mut started = Vec::new();
        for (fd, bridge) in bridge_fds.into_iter().zip(&bridges) {
            started.extend(crate::agent::serve_bridge(
                fd,
                bridge,
                plan.as_ref().filter(|_| bridge.api),
                &pins,
                sup.clone(),
            ));
        }
        if let Some(plan) = &plan
            && let Some(fd) = fds.pop()
        {
            started.extend(crate::agent::serve_key_proxy(
                fd,
                plan,
                &agent,
                &pins,
                sup.clone(),
            ));
        }
        if let Ok(mut slot) = slot.lock() {
            slot.extend(started);
        }
        if let Some(b) = broker_sink {
            b(fds);
        }
    }))
}

fn run_child(command: &[String], dir: &Path, file: &SessionFile, shim_dir: &Path) -> Exit {
    let orig_path = host_path();
    let mut path = shim_dir.as_os_str().to_owned();
    path.push(":");
    path.push(&orig_path);
    // The command itself was judged above; run the real program (not its
    // shim, which would ask again about what the user typed). Everything it
    // starts through PATH meets the shims.
    let program = &command[0];
    let resolved: PathBuf = if program.contains('/') {
        PathBuf::from(program)
    } else {
        match aq_shim::find_command(program.as_ref(), &orig_path, shim_dir) {
            Some(p) => p,
            None => {
                eprintln!("aq: {program}: command not found");
                return Exit::Code(i32::from(EXIT_NOT_FOUND));
            }
        }
    };
    let mut cmd = std::process::Command::new(&resolved);
    {
        use std::os::unix::process::CommandExt;
        cmd.arg0(program);
    }
    cmd.args(&command[1..]);
    cmd.env("PATH", &path);
    cmd.env(ENV_SESSION_DIR, dir);
    cmd.env(ENV_SESSION_ID, &file.id);
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("aq: cannot start {program}: {e}");
            return Exit::Code(i32::from(if e.kind() == std::io::ErrorKind::NotFound {
                EXIT_NOT_FOUND
            } else {
                EXIT_BLOCKED
            }));
        }
    };
    exit_of(status)
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(s)) => Exit::Signal(s),
        _ => Exit::Code(1),
    }
}

/// Starts the planned command under Seatbelt and waits for it, as
/// [`run_sandboxed`] does on Linux: exit 127 for a command not found, 125
/// when `sandbox-exec` is missing or refuses the profile (a probe run
/// first tells that apart from the command's own exit code, which
/// `sandbox-exec` passes on), else the command's exit or 128 + its signal.
fn run_seatbelt(launch: &crate::seatbelt_launch::LaunchPlan) -> Exit {
    let program = &launch.command()[0];
    if !command_found(program) {
        eprintln!("aq: {}: command not found", program.to_string_lossy());
        return Exit::Code(i32::from(EXIT_NOT_FOUND));
    }
    let sandbox_exec = aq_sandbox::SANDBOX_EXEC;
    if !Path::new(sandbox_exec).is_file() {
        eprintln!(
            "aq: {sandbox_exec} not found: the Seatbelt sandbox cannot start, so nothing was run; `aq doctor` says what this Mac offers"
        );
        return Exit::Code(i32::from(EXIT_SANDBOX));
    }
    let (probe, command) = match (launch.probe(), launch.sandbox_exec()) {
        (Ok(p), Ok(c)) => (p, c),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("aq: {e}; nothing was run");
            return Exit::Code(i32::from(EXIT_SANDBOX));
        }
    };
    let refused = match seatbelt_process::probe(probe) {
        Ok((status, stderr)) => probe_refusal(status, &stderr),
        Err(e) => Some(format!("cannot start {sandbox_exec}: {e}")),
    };
    if let Some(why) = refused {
        eprintln!("aq: the Seatbelt sandbox did not start: {why}; nothing was run");
        return Exit::Code(i32::from(EXIT_SANDBOX));
    }
    match seatbelt_process::status(command) {
        Ok(status) => exit_of(status),
        Err(e) => {
            eprintln!("aq: cannot start {sandbox_exec}: {e}; nothing was run");
            Exit::Code(i32::from(EXIT_SANDBOX))
        }
    }
}

/// Whether `program` (as the plan resolved it) names a file: a name
/// without a `/` is one `PATH` did not have.
fn command_found(program: &std::ffi::OsStr) -> bool {
    program.as_encoded_bytes().contains(&b'/') && Path::new(program).is_file()
}

/// Why the probe says `sandbox-exec` refused the profile, from its exit
/// status and standard error; `None` when it ran the probe program.
fn probe_refusal(status: std::process::ExitStatus, stderr: &[u8]) -> Option<String> {
    if status.success() {
        return None;
    }
    let said = String::from_utf8_lossy(stderr);
    let said = said.trim();
    Some(if said.is_empty() {
        format!(
            "sandbox-exec ended with {status} running {}",
            crate::seatbelt_launch::PROBE_PROGRAM
        )
    } else {
        format!(
            "sandbox-exec: {}",
            said.lines().take(5).collect::<Vec<_>>().join(" / ")
        )
    })
}

/// Starting `sandbox-exec`: macOS's alone. Elsewhere there is no Seatbelt,
/// and `SandboxKind::here` never plans one; these refuse all the same.
#[cfg(target_os = "macos")]
mod seatbelt_process {
    use std::process::{Command, ExitStatus, Stdio};

    /// Runs the probe without a terminal; its status and stderr.
    pub fn probe(mut cmd: Command) -> std::io::Result<(ExitStatus, Vec<u8>)> {
        let out = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()?;
        Ok((out.status, out.stderr))
    }

    /// Runs the command in the terminal and waits for it.
    pub fn status(mut cmd: Command) -> std::io::Result<ExitStatus> {
        cmd.status()
    }
}

/// Elsewhere: nothing is started.
#[cfg(not(target_os = "macos"))]
mod seatbelt_process {
    use std::process::{Command, ExitStatus};

    fn unsupported() -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "Seatbelt is macOS's, and this system is not",
        )
    }

    pub fn probe(_: Command) -> std::io::Result<(ExitStatus, Vec<u8>)> {
        Err(unsupported())
    }

    pub fn status(_: Command) -> std::io::Result<ExitStatus> {
        Err(unsupported())
    }
}

fn run_sandboxed(
    s: &PlannedSandbox,
    supervisor: &std::sync::Arc<crate::supervisor::Supervisor>,
    listeners: Option<aq_sandbox::ListenerSink>,
    agent: Option<&aq_agents::Preset>,
    scrub: &[String],
) -> Exit {
    let judge: Option<std::sync::Arc<dyn aq_sandbox::ExecJudge>> =
        if s.plan.steps.contains(&aq_sandbox::Step::AttachExecGuard) {
            let host_path = std::env::var_os("PATH").unwrap_or_default();
            Some(std::sync::Arc::new(
                crate::exec_judge::SessionExecJudge::new(
                    supervisor.clone(),
                    &host_path,
                    agent.cloned().map(crate::exec_judge::AgentProcesses::new),
                    scrub,
                    crate::exec_judge::places_of(&s.plan, &s.env, supervisor),
                ),
            ))
        } else {
            // The socket guard alone: its refusals go into the log.
            Some(std::sync::Arc::new(crate::exec_judge::SocketReporter::new(
                supervisor.clone(),
            )))
        };
    let result = aq_sandbox::apply_with(&s.plan, &s.env, &s.argv, judge, listeners);
    match result {
        Ok(status) => exit_of(status),
        Err(aq_sandbox::SandboxError::CommandNotFound(p)) => {
            eprintln!("aq: {}: command not found", p.to_string_lossy());
            Exit::Code(i32::from(EXIT_NOT_FOUND))
        }
        Err(e) => {
            eprintln!("aq: {e}");
            if e.exit_code() == 125 {
                eprintln!(
                    "aq: nothing was run; `aq doctor --fix` shows how to enable what is missing"
                );
            }
            Exit::Code(e.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn a_refused_profile_is_told_apart_from_a_probe_that_ran() {
        assert_eq!(probe_refusal(ExitStatus::from_raw(0), b"noise"), None);
        let refused = probe_refusal(
            ExitStatus::from_raw(65 << 8),
            b"sandbox-exec: unbound variable: foo\n",
        );
        assert_eq!(
            refused.as_deref(),
            Some("sandbox-exec: sandbox-exec: unbound variable: foo")
        );
        let silent = probe_refusal(ExitStatus::from_raw(71 << 8), b"").unwrap();
        assert!(silent.contains("/usr/bin/true"), "{silent}");
    }

    #[test]
    fn a_command_is_found_only_by_a_path_to_a_file() {
        let t = tempfile::tempdir().unwrap();
        let prog = t.path().join("tool");
        std::fs::write(&prog, "").unwrap();
        assert!(command_found(prog.as_os_str()));
        assert!(!command_found(t.path().join("missing").as_os_str()));
        assert!(!command_found(t.path().as_os_str()));
        assert!(!command_found(std::ffi::OsStr::new("tool")));
    }

    #[cfg(not(target_os = "macos"))]
    #[test]
    fn seatbelt_is_never_started_elsewhere() {
        let cmd = std::process::Command::new("/bin/true");
        assert_eq!(
            seatbelt_process::status(cmd).unwrap_err().kind(),
            std::io::ErrorKind::Unsupported
        );
    }
}
