//! Where this crate's kernel mechanisms do not exist: the entry points of
//! `apply` with the same signatures, each refusing with
//! [`SandboxError::Unsupported`] before anything runs.
//!
//! They exist so that callers build on every system without a `cfg` of their
//! own around each call, and so that a caller that reaches one by mistake
//! fails closed (exit 125) instead of running the command unconfined.

use std::ffi::OsString;
use std::process::ExitStatus;
use std::sync::Arc;

use crate::error::SandboxError;
use crate::exec_guard::ExecJudge;
use crate::plan::SandboxPlan;
use crate::spec::SandboxSpec;

/// Receives the sandbox's loopback listeners, as on Linux; never called here.
pub type ListenerSink = Box<dyn FnOnce(Vec<std::os::fd::OwnedFd>) + Send>;

/// Refuses: there is no kernel sandbox on this system.
pub fn run_sandboxed(_: &SandboxSpec, _: &[OsString]) -> Result<ExitStatus, SandboxError> {
    Err(SandboxError::Unsupported)
}

/// Refuses: there is no kernel sandbox on this system.
pub fn run_sandboxed_guarded(
    _: &SandboxSpec,
    _: &[OsString],
    _: Arc<dyn ExecJudge>,
) -> Result<ExitStatus, SandboxError> {
    Err(SandboxError::Unsupported)
}

/// Refuses: there is no kernel sandbox on this system.
pub fn apply(
    _: &SandboxPlan,
    _: &[(OsString, OsString)],
    _: &[OsString],
) -> Result<ExitStatus, SandboxError> {
    Err(SandboxError::Unsupported)
}

/// Refuses: there is no kernel sandbox on this system.
pub fn apply_guarded(
    _: &SandboxPlan,
    _: &[(OsString, OsString)],
    _: &[OsString],
    _: Arc<dyn ExecJudge>,
) -> Result<ExitStatus, SandboxError> {
    Err(SandboxError::Unsupported)
}

/// Refuses: there is no kernel sandbox on this system.
pub fn apply_with(
    _: &SandboxPlan,
    _: &[(OsString, OsString)],
    _: &[OsString],
    _: Option<Arc<dyn ExecJudge>>,
    _: Option<ListenerSink>,
) -> Result<ExitStatus, SandboxError> {
    Err(SandboxError::Unsupported)
}
