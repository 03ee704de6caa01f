//! `aq`: the agent-quarantine command line.
//!
//! One module per subcommand; this file parses flags and maps every outcome
//! to an exit code (see [`exit::ExitCode`]).

mod cli;
mod exit;
mod explain;
mod policy_cmd;
mod policy_files;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let policy = cli.policy.as_deref();
    let result = match cli.command {
        cli::Command::Explain(args) => explain::run(&args, policy),
        cli::Command::Check(args) => policy_cmd::run_check(&args, policy),
        cli::Command::Policy(cmd) => match cmd {
            cli::PolicyCommand::Init(args) => policy_cmd::run_init(&args),
            cli::PolicyCommand::Show(args) => policy_cmd::run_show(&args, policy),
            cli::PolicyCommand::Trust(args) => policy_cmd::run_trust(&args),
            cli::PolicyCommand::Untrust(args) => policy_cmd::run_untrust(&args),
        },
    };
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("aq: {err:#}");
            exit::ExitCode::Usage.into()
        }
    }
}
