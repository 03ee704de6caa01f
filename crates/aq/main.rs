//! `aq`: the agent-quarantine command line.
//!
//! One module per subcommand; this file parses flags and maps every outcome
//! to an exit code (see [`exit::ExitCode`]).

mod cli;
mod exit;
mod explain;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Explain(args) => explain::run(&args),
    };
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("aq: {err:#}");
            exit::ExitCode::Usage.into()
        }
    }
}
