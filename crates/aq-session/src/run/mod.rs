//! `aq run`: a supervised session around an agent or any command.
//!
//! [`run`] reads as a list, one stage a line, each stage a function in a
//! module of its own (named below) with its inputs and outputs as types:
//!
//! 1. `policy`: the workspace and the policy files that govern it.
//! 2. `agent`: the agent the command starts, and its model endpoints.
//! 3. `profile`: the profile and the network in force.
//! 4. `session`: the session's directory outside the workspace, the
//!    preset's grants, the shims, the session file; then its audit log.
//! 5. `checkpoint`: the workspace's first checkpoint, started on a thread.
//! 6. `supervise`: the supervisor, which judges what the shims and the
//!    exec guard ask about; the sandbox is planned once it runs.
//! 7. The git guard: git files that would run a program, read-only inside.
//! 8. `network`: the broker's interception of HTTPS requests.
//! 9. `sandbox`: the sandbox, planned before anything runs (fail closed:
//!    exit 125; Linux's kernel sandbox, or on macOS a Seatbelt launch from
//!    `crate::seatbelt_launch`).
//! 10. `announce`: the session's start in the log, then the banner.
//! 11. `ready`: `aq preflight` when asked; the first checkpoint, waited for.
//! 12. `judge`: the command itself (only a block stops what the user typed).
//! 13. `command`: the real program, in the sandbox unless the profile is
//!     `shims-only`, with the shims first on `PATH` for what it starts;
//!     asks answered on the terminal when the command does not use it.
//! 14. `finish`: how it ended, in the log; the recap; the exit code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use aq_policy::Profile;

pub use crate::error::{ResolveWorkspaceError, RunError};
use crate::git_guard::GitGuard;
use crate::supervisor::Supervisor;
use crate::{ENV_SESSION_DIR, ENV_SESSION_ID};

mod agent;
mod announce;
mod checkpoint;
mod command;
mod finish;
mod judge;
mod network;
mod policy;
mod profile;
mod ready;
mod sandbox;
mod session;
mod supervise;

use agent::recognise_agent;
use announce::announce;
use checkpoint::start_checkpoints;
use command::run_command;
use finish::finish;
use judge::judge_command;
use network::prepare_network;
use policy::resolve_policy;
use profile::settle_profile;
use ready::ready_workspace;
use sandbox::plan_sandbox;
pub(crate) use session::SHIM_PROGRAM_DIR;
use session::{create_session, open_log};
use supervise::start_supervisor;

use crate::denials::DenialWatch;

/// Exit code when a boundary the profile asks for cannot be set up.
pub(crate) const EXIT_SANDBOX: u8 = crate::exit::ExitCode::SandboxFailed.code();

/// What `aq run` was asked (its command line, or `aq mcp serve`'s).
#[derive(Default)]
pub struct RunOptions {
    /// The profile (default: the policy's).
    pub profile: Option<String>,
    /// The workspace (default: the git root of the current directory).
    pub workspace: Option<PathBuf>,
    /// No banner and no recap.
    pub quiet: bool,
    /// The full layer detail in the banner.
    pub verbose: bool,
    /// `--net`: the network mode.
    pub net: Option<String>,
    /// `--home`: `private` or `read-only`.
    pub home: Option<String>,
    /// Scan the workspace with `aq preflight` first.
    pub preflight: bool,
    /// `--resolve NAME:ADDR` pins for the broker.
    pub resolve: Vec<String>,
    /// `--agent`: a preset by name, or `none`.
    pub agent: Option<String>,
    /// The command to run.
    pub command: Vec<String>,
    /// `--pass-fd`: descriptors above 2 the command inherits (every other
    /// one is closed at its exec).
    pub pass_fds: Vec<i32>,
    /// Told the session's supervisor once it runs (`aq mcp serve` judges
    /// tool calls with it).
    pub on_ready: Option<Box<dyn Fn(Arc<Supervisor>)>>,
    /// Started by an `aq enable --wrap` launcher.
    pub wrapped: bool,
    /// `--learn`: asks run without waiting and are logged for
    /// `aq policy suggest` (as a profile's `mode = "learn"`).
    pub learn: bool,
}

/// `PATH` as the caller has it, without aq's own launchers (`aq enable
/// --wrap`): the program a session runs is the real one.
pub(crate) fn host_path() -> OsString {
    let path =
        std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    match crate::files::launcher_dir() {
        Some(dir) => {
            std::env::join_paths(std::env::split_paths(&path).filter(|d| *d != dir)).unwrap_or(path)
        }
        None => path,
    }
}

/// Whether this process is in a sandbox already (`no_new_privs` is set,
/// which no process can clear): a launcher then runs the agent itself,
/// since a sandbox cannot nest. An environment variable cannot fake it.
fn inside_a_sandbox() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("NoNewPrivs:") && l.trim_end().ends_with('1'))
    })
}

/// Runs a session to its end; the command's exit code, or 125, 126, 127.
pub fn run(args: &RunOptions, policy_flag: Option<&Path>) -> Result<ExitCode, RunError> {
    if args.wrapped && inside_a_sandbox() {
        return Err(exec_in_place(&args.command));
    }
    match session(args, policy_flag) {
        Ok(code) => Ok(code),
        Err(Stop::SandboxFailed) => Ok(ExitCode::from(EXIT_SANDBOX)),
        Err(Stop::Error(e)) => Err(e),
    }
}

/// The session, stage by stage. The order matters where one stage needs
/// another's output (the sandbox is planned once the supervisor that
/// judges inside it runs), and where it keeps a promise: the first
/// checkpoint is taken while the sandbox is set up and waited for before
/// the command starts; a stop after the git guard starts still runs its
/// end check (its `Drop`) as the stages' values unwind.
fn session(args: &RunOptions, policy_flag: Option<&Path>) -> Result<ExitCode, Stop> {
    let start = Start::now();
    let policy = resolve_policy(args.workspace.as_deref(), policy_flag)?;
    let agent = recognise_agent(&policy, args)?;
    let mut settled = settle_profile(&policy, &agent, args)?;
    let denials = DenialWatch::begin(
        settled.profile.sandbox && exec_guard_in_force(&settled.profile, start.kind),
    );
    let session = create_session(&start, &policy, &agent, &settled, args)?;
    let log = open_log(&policy, &session)?;
    let checkpoints = start_checkpoints(&policy, &session)?;
    let supervised = start_supervisor(&session, &settled, &log, &checkpoints, args, denials)?;
    let guard = guard_git(&policy.workspace, &session.dir, &mut settled.profile);
    let setup = Setup::new(&start, args, &policy, &agent, &settled, &session);
    let intercept = prepare_network(&setup, &supervised)?;
    let mut boundary = plan_sandbox(&setup, &supervised, intercept)?;
    announce(&setup, &log, &checkpoints, &boundary)?;
    ready_workspace(&setup, &log, &checkpoints);
    let judged = judge_command(&setup, &log);
    let exit = run_command(&setup, &judged, &supervised, &mut boundary);
    Ok(finish(&setup, exit, supervised, guard, log, checkpoints))
}

/// When the session started, and on which system.
struct Start {
    /// For the session's duration and the first checkpoint's patience.
    at: Instant,
    /// For the session's id.
    now: SystemTime,
    /// This system's sandbox.
    kind: SandboxKind,
}

impl Start {
    fn now() -> Start {
        Start {
            at: Instant::now(),
            now: SystemTime::now(),
            kind: SandboxKind::here(),
        }
    }
}

/// What the session was settled to before anything runs: what the stages
/// from the network on read.
#[derive(Clone, Copy)]
struct Setup<'a> {
    /// When it started.
    start: &'a Start,
    /// What `aq run` was asked.
    args: &'a RunOptions,
    /// The workspace and its policy.
    policy: &'a policy::Policy,
    /// The agent, if any.
    agent: &'a agent::Agent,
    /// The profile and network in force, the git guard's files read-only.
    settled: &'a profile::Settled,
    /// The session's directory, file and grants.
    session: &'a session::Session,
}

impl<'a> Setup<'a> {
    fn new(
        start: &'a Start,
        args: &'a RunOptions,
        policy: &'a policy::Policy,
        agent: &'a agent::Agent,
        settled: &'a profile::Settled,
        session: &'a session::Session,
    ) -> Setup<'a> {
        Setup {
            start,
            args,
            policy,
            agent,
            settled,
            session,
        }
    }
}

/// Why a session stopped before its command ran.
enum Stop {
    /// For the caller to print (`aq: …`, with the CLI's exit code).
    Error(RunError),
    /// A boundary could not be set up, and stderr says so: exit 125.
    SandboxFailed,
}

impl Stop {
    /// Says `lines` on stderr now, before the stages' values unwind (the
    /// git guard's end check speaks after), and stops with exit 125.
    fn sandbox_failed(lines: &[String]) -> Stop {
        for line in lines {
            eprintln!("aq: {line}");
        }
        Stop::SandboxFailed
    }
}

impl<E: Into<RunError>> From<E> for Stop {
    fn from(e: E) -> Stop {
        Stop::Error(e.into())
    }
}

/// A launcher inside a sandbox already runs the real program in its
/// place (a sandbox cannot nest); what went wrong when it could not.
fn exec_in_place(command: &[String]) -> RunError {
    use std::os::unix::process::CommandExt;
    let program = &command[0];
    let Some(real) =
        aq_shim::find_command(program.as_ref(), &host_path(), Path::new("/nonexistent"))
    else {
        return RunError::NotFound {
            program: program.clone(),
        };
    };
    let err = std::process::Command::new(real)
        .arg0(program)
        .args(&command[1..])
        .exec();
    RunError::CannotStart {
        program: program.clone(),
        source: err,
    }
}

/// Git files the user's next `git status` would run a program from:
/// read-only in the sandbox where they exist, checked at the end. Started
/// here, not on a thread: on two vCPUs a thread beside the session's other
/// stages made a strict start 0.5 ms slower (bench/start/RESULTS.md).
fn guard_git(workspace: &Path, dir: &Path, profile: &mut Profile) -> GitGuard {
    let git_guard = GitGuard::start(workspace, dir);
    profile.read_only.extend(git_guard.read_only());
    git_guard
}

/// How the command ended.
pub(super) enum Exit {
    /// With this exit code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

impl Exit {
    /// Its exit code and signal, as the log has them.
    fn parts(&self) -> (Option<i32>, Option<i32>) {
        match *self {
            Exit::Code(c) => (Some(c), None),
            Exit::Signal(s) => (None, Some(s)),
        }
    }

    /// aq's exit code: the command's, or 128 + its signal, as a shell has
    /// it.
    fn code(&self) -> u8 {
        match *self {
            Exit::Code(c) => c.clamp(0, 255) as u8,
            Exit::Signal(s) => (128 + s).clamp(0, 255) as u8,
        }
    }
}

/// The sandbox `aq run` gives a profile with `sandbox = true` on this
/// system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SandboxKind {
    /// Linux: namespaces, mounts, Landlock, seccomp and the exec guard.
    Kernel,
    /// macOS: a Seatbelt profile through `sandbox-exec`, with the PATH
    /// shims as the firewall (no exec guard).
    Seatbelt,
    /// None: such a profile stops before anything runs (exit 125), and
    /// the command is never run unconfined.
    Unavailable,
}

impl SandboxKind {
    /// The sandbox of the system called `os` (as `std::env::consts::OS`
    /// names it).
    pub fn of(os: &str) -> SandboxKind {
        match os {
            "linux" => SandboxKind::Kernel,
            "macos" => SandboxKind::Seatbelt,
            _ => SandboxKind::Unavailable,
        }
    }

    /// The sandbox of this system.
    pub fn here() -> SandboxKind {
        SandboxKind::of(std::env::consts::OS)
    }
}

/// Whether every exec is judged by the exec guard: only Linux's kernel
/// sandbox has one. Elsewhere the shims are installed even for a profile
/// that asks for the guard, since they are then the only firewall.
fn exec_guard_in_force(profile: &Profile, kind: SandboxKind) -> bool {
    kind == SandboxKind::Kernel && profile.sandbox && profile.exec_guard
}

/// The session's variables (`AQ_SESSION_DIR`, `AQ_SESSION_ID`), the
/// proxy variables of the broker on `127.0.0.1:broker_port` when the
/// network goes through it, then the interception's: what the sandbox's
/// environment gets after its scrub.
pub(crate) fn session_env(
    dir: &Path,
    id: &str,
    broker_port: Option<u16>,
    intercept: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    [
        (ENV_SESSION_DIR.into(), dir.as_os_str().to_owned()),
        (ENV_SESSION_ID.into(), OsString::from(id)),
    ]
    .into_iter()
    .chain(
        broker_port
            .map(crate::network::proxy_env)
            .unwrap_or_default(),
    )
    .chain(intercept.iter().cloned())
    .collect()
}

/// The workspace: the flag, else the git root of the current directory, else
/// the current directory.
pub fn resolve_workspace(flag: Option<&Path>) -> Result<PathBuf, ResolveWorkspaceError> {
    let dir = match flag {
        Some(d) => d.to_path_buf(),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|source| ResolveWorkspaceError::CurrentDir { source })?;
            crate::policy_files::workspace_root(&cwd)
        }
    };
    std::fs::canonicalize(&dir)
        .map_err(|source| ResolveWorkspaceError::Canonicalize { dir, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_the_commands_or_128_and_its_signal() {
        assert_eq!(Exit::Code(0).code(), 0);
        assert_eq!(Exit::Code(3).code(), 3);
        assert_eq!(Exit::Code(300).code(), 255);
        assert_eq!(Exit::Code(-1).code(), 0);
        assert_eq!(Exit::Signal(9).code(), 137);
        assert_eq!(Exit::Signal(200).code(), 255);
        assert_eq!(Exit::Code(2).parts(), (Some(2), None));
        assert_eq!(Exit::Signal(15).parts(), (None, Some(15)));
    }

    #[test]
    fn each_system_has_its_sandbox() {
        assert_eq!(SandboxKind::of("linux"), SandboxKind::Kernel);
        assert_eq!(SandboxKind::of("macos"), SandboxKind::Seatbelt);
        for other in ["freebsd", "openbsd", "windows", "ios"] {
            assert_eq!(SandboxKind::of(other), SandboxKind::Unavailable, "{other}");
        }
        assert_eq!(SandboxKind::here(), SandboxKind::of(std::env::consts::OS));
    }

    #[test]
    fn only_the_kernel_sandbox_drops_the_shims_for_the_exec_guard() {
        let strict = Profile::builtin("strict").unwrap();
        assert!(strict.sandbox && strict.exec_guard);
        assert!(exec_guard_in_force(&strict, SandboxKind::Kernel));
        assert!(!exec_guard_in_force(&strict, SandboxKind::Seatbelt));
        assert!(!exec_guard_in_force(&strict, SandboxKind::Unavailable));
        let shims = Profile::builtin("shims-only").unwrap();
        assert!(!exec_guard_in_force(&shims, SandboxKind::Kernel));
    }

    #[test]
    fn the_session_variables_come_first_then_the_brokers_on_its_port() {
        let dir = Path::new("/state/sessions/S");
        let names = |env: &[(OsString, OsString)]| -> Vec<String> {
            env.iter()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect()
        };
        let plain = session_env(dir, "S", None, &[]);
        assert_eq!(names(&plain), ["AQ_SESSION_DIR", "AQ_SESSION_ID"]);
        let extra = [(OsString::from("SSL_CERT_FILE"), OsString::from("/s/ca.pem"))];
        let linux = session_env(dir, "S", Some(crate::network::PROXY_PORT), &extra);
        let mut want = plain.clone();
        want.extend(crate::network::proxy_env(crate::network::PROXY_PORT));
        want.extend(extra.iter().cloned());
        assert_eq!(linux, want);
        let get = |env: &[(OsString, OsString)], n: &str| {
            env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone())
        };
        assert_eq!(
            get(&linux, "HTTPS_PROXY"),
            Some("http://127.0.0.1:3128".into())
        );
        let mac = session_env(dir, "S", Some(50_123), &[]);
        assert_eq!(
            get(&mac, "HTTPS_PROXY"),
            Some("http://127.0.0.1:50123".into())
        );
        assert_eq!(
            get(&mac, "ALL_PROXY"),
            Some("socks5h://127.0.0.1:50123".into())
        );
    }
}
