//! Every outcome of `aq` has an exit code, defined here once.

/// Exit codes of `aq` itself (a wrapped command's own code passes through).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Success.
    Ok,
    /// A finding or check failed (`aq check`, `aq preflight --fail-on`).
    Findings,
    /// A usage or policy error.
    Usage,
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(match code {
            ExitCode::Ok => 0,
            ExitCode::Findings => 1,
            ExitCode::Usage => 2,
        })
    }
}
