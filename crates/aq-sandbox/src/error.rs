//! Errors that say which boundary failed, in which syscall, on which path.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::plan::PlanError;

/// Why a sandboxed command did not run. The caller prints it and exits with
/// [`SandboxError::exit_code`] (125: a boundary could not be set up, fail closed).
#[derive(Debug)]
pub enum SandboxError {
    /// No plan: a requested boundary cannot exist on this host.
    Plan(PlanError),
    /// The command was not found on the sandbox's `PATH`.
    CommandNotFound(OsString),
    /// An empty argument vector.
    EmptyCommand,
    /// A setup step failed; nothing was run.
    Setup {
        /// The boundary being built (see [`crate::Step::boundary`]).
        boundary: &'static str,
        /// The failing call, e.g. `unshare`, `mount`, `landlock_restrict_self`.
        syscall: &'static str,
        /// The object of the call, when it has one.
        path: Option<PathBuf>,
        /// The kernel's answer.
        source: io::Error,
    },
    /// Landlock was applied but the kernel did not enforce every requested right.
    LandlockNotEnforced,
    /// The exec guard's judge denied the command itself; `message` was also
    /// written to the command's stderr.
    ExecBlocked {
        /// The program that was to run.
        program: PathBuf,
        /// The judge's message.
        message: String,
    },
    /// A plan with the exec guard run without a judge, or the reverse.
    ExecGuardMisuse(&'static str),
    /// A plan with loopback listeners run without a listener sink, or the reverse.
    ListenerMisuse(&'static str),
    /// This system has none of the kernel mechanisms the sandbox is made of
    /// (they are Linux's); nothing was run.
    Unsupported,
}

impl SandboxError {
    /// The exit code `aq` uses for this error: 127 for a missing command,
    /// 126 for a command the exec guard's judge blocked, else 125.
    pub fn exit_code(&self) -> i32 {
        use aq_exit::ExitCode;
        i32::from(
            match self {
                SandboxError::CommandNotFound(_) => ExitCode::NotFound,
                SandboxError::ExecBlocked { .. } => ExitCode::Blocked,
                _ => ExitCode::SandboxFailed,
            }
            .code(),
        )
    }

    /// The errno of a failed setup call, if any.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            SandboxError::Setup { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Plan(e) => write!(f, "sandbox refused: {e}"),
            SandboxError::CommandNotFound(p) => {
                write!(
                    f,
                    "command not found in the sandbox: {}",
                    p.to_string_lossy()
                )
            }
            SandboxError::EmptyCommand => write!(f, "no command to run"),
            SandboxError::Setup {
                boundary,
                syscall,
                path,
                source,
            } => {
                write!(f, "sandbox setup failed: {boundary}: {syscall}")?;
                if let Some(p) = path {
                    write!(f, "({})", p.display())?;
                }
                write!(f, ": {source}")?;
                if let Some(hint) = hint(syscall, source) {
                    write!(f, "; {hint}")?;
                }
                Ok(())
            }
            SandboxError::LandlockNotEnforced => write!(
                f,
                "sandbox setup failed: Landlock: the kernel did not fully enforce the ruleset"
            ),
            SandboxError::ExecBlocked { program, message } => {
                write!(f, "blocked: {}: {message}", program.display())
            }
            SandboxError::ExecGuardMisuse(what) => write!(f, "exec guard: {what}"),
            SandboxError::ListenerMisuse(what) => write!(f, "network relay listener: {what}"),
            SandboxError::Unsupported => write!(
                f,
                "sandbox setup failed: the kernel sandbox needs Linux, and this system is {}",
                std::env::consts::OS
            ),
        }
    }
}

// errno values (this module also builds where `libc` is absent).
const EPERM: i32 = 1;
const ENOSPC: i32 = 28;

/// The likely cause of a failed call and what fixes it.
fn hint(syscall: &str, source: &io::Error) -> Option<&'static str> {
    match (syscall, source.raw_os_error()) {
        ("unshare", Some(EPERM)) => Some(
            "unprivileged user namespaces look disabled (kernel.unprivileged_userns_clone=0, \
             kernel.apparmor_restrict_unprivileged_userns=1, or a seccomp filter): see `aq doctor --fix`",
        ),
        ("unshare", Some(ENOSPC)) => {
            Some("user.max_user_namespaces is exhausted or 0: see `aq doctor --fix`")
        }
        ("ptrace(PTRACE_SEIZE)", Some(EPERM)) => Some(
            "the exec guard cannot trace the sandbox: kernel.yama.ptrace_scope is 2 or 3, \
             or a security module forbids ptrace; set it to 0 or 1, or use a profile \
             without the exec guard",
        ),
        _ => None,
    }
}

impl std::error::Error for SandboxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SandboxError::Plan(e) => Some(e),
            SandboxError::Setup { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<PlanError> for SandboxError {
    fn from(e: PlanError) -> SandboxError {
        SandboxError::Plan(e)
    }
}
