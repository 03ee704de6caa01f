//! `aq verify` and its probe where there is no Linux sandbox to verify:
//! both say so and exit 125 (a boundary could not be set up), as `aq run`
//! does for a profile with the kernel sandbox. Nothing is run.

/// `aq verify`: the probes test the Linux sandbox's boundaries.
pub mod verify {
    use std::path::Path;

    use crate::cli::VerifyArgs;
    use crate::exit::ExitCode;

    pub fn run(_: &VerifyArgs, _: Option<&Path>) -> Result<ExitCode, String> {
        eprintln!(
            "aq: verify tests the kernel sandbox, which needs Linux; this system is {}, so nothing was run",
            std::env::consts::OS
        );
        Ok(ExitCode::SandboxFailed)
    }
}

/// `aq __probe`: runs only inside the sandbox `aq verify` starts.
pub mod probe {
    use crate::exit::ExitCode;

    pub fn main(_: &[String]) -> std::process::ExitCode {
        eprintln!(
            "aq: the probes run inside the kernel sandbox, which needs Linux; this system is {}",
            std::env::consts::OS
        );
        ExitCode::SandboxFailed.into()
    }
}
