//! Every outcome of `aq` has an exit code, defined here once. A wrapped
//! command's own exit code passes through `aq run` unchanged.

/// Exit codes of `aq` itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Success.
    Ok,
    /// A check found problems (`aq audit verify` on a broken chain).
    Findings,
    /// `aq audit export`: the collector refused or could not be reached.
    ExportFailed,
    /// A usage or policy error.
    Usage,
    /// A requested sandbox boundary could not be set up; nothing ran.
    SandboxFailed,
    /// The firewall refused the command (blocked, denied or unanswered).
    Blocked,
    /// The program to run does not exist.
    NotFound,
    /// `aq preflight` found something at or above `--fail-on`.
    PreflightFindings,
    /// A usage error of `aq preflight` (sysexits EX_USAGE: 2 already
    /// means "findings" there, which CI scripts test for).
    PreflightUsage,
}

impl ExitCode {
    /// The numeric code.
    pub const fn code(self) -> u8 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::Findings => 1,
            ExitCode::ExportFailed => 1,
            ExitCode::Usage => 2,
            ExitCode::SandboxFailed => 125,
            ExitCode::Blocked => 126,
            ExitCode::NotFound => 127,
            ExitCode::PreflightFindings => 2,
            ExitCode::PreflightUsage => 64,
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.code())
    }
}
