//! `aq`: the agent-quarantine command line.
//!
//! One module per subcommand; this file parses flags and maps every outcome
//! to an exit code (see [`exit::ExitCode`]).

mod approve;
mod audit_cmd;
mod cli;
mod connect;
mod docs_cmd;
mod doctor;
mod enable_cmd;
mod exit;
mod explain;
mod export_cmd;
mod grant_cmd;
mod hook_cmd;
mod lint_cmd;
mod mcp_cmd;
mod policy_cmd;
mod preflight_cmd;
mod run;
mod sandbox_profile_cmd;
mod shim_mode;
mod undo_cmd;
mod watch_cmd;

// Linux only: `aq verify` and the probe it runs inside the sandbox. Elsewhere
// both refuse (exit 125), since the sandbox they test is not there.
#[cfg(target_os = "linux")]
mod probe;
#[cfg(not(target_os = "linux"))]
mod sandbox_only;
#[cfg(target_os = "linux")]
mod verify;
#[cfg(not(target_os = "linux"))]
use sandbox_only::{probe, verify};

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> std::process::ExitCode {
    // Shim mode is decided on argv[0] before anything else: it runs on every
    // command an agent starts, so it skips flag parsing altogether.
    let mut args = std::env::args_os();
    if let Some(argv0) = args.next()
        && let Some(name) = shim_mode::shim_name(&argv0)
    {
        return shim_mode::run(&name, args.collect());
    }
    // The Rust runtime ignores SIGPIPE; a command-line tool should stop
    // quietly when its reader goes away (`aq policy show | head`), not
    // panic on a failed print. (Shim mode never prints to a pipe it does
    // not own, and the programs it execs get the default back from std.)
    // SAFETY: called before any other thread exists; restores a default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // `aq hook AGENT` runs before every tool call an agent makes: in its
    // exact shape (no flag) it skips clap, whose building of every verb's
    // parser was a tenth of the hook's time. Any other shape goes through
    // clap as before.
    if let Some(agent) = hook_agent(std::env::args_os().skip(1)) {
        return hook_cmd::run(&agent, None);
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    let policy = cli.policy.as_deref();
    let result = match cli.command {
        cli::Command::Explain(args) => explain::run(&args, policy),
        cli::Command::Check(args) => policy_cmd::run_check(&args, policy),
        cli::Command::Policy(cmd) => match cmd {
            cli::PolicyCommand::Init(args) => policy_cmd::run_init(&args),
            cli::PolicyCommand::Show(args) => policy_cmd::run_show(&args, policy),
            cli::PolicyCommand::Trust(args) => policy_cmd::run_trust(&args),
            cli::PolicyCommand::Untrust(args) => policy_cmd::run_untrust(&args),
            cli::PolicyCommand::Pull(args) => policy_cmd::run_pull(&args),
            cli::PolicyCommand::Status(args) => policy_cmd::run_status(&args),
            cli::PolicyCommand::Suggest(args) => policy_cmd::run_suggest(&args),
        },
        cli::Command::Run(args) => {
            return run::run(&args, policy).unwrap_or_else(|e| {
                eprintln!("aq: {e}");
                exit::ExitCode::Usage.into()
            });
        }
        cli::Command::Approve(args) => approve::run(&args),
        cli::Command::Watch(args) => watch_cmd::run(&args),
        cli::Command::Allow(args) => grant_cmd::run(&args, true),
        cli::Command::Deny(args) => grant_cmd::run(&args, false),
        cli::Command::Grants => grant_cmd::run_list(),
        cli::Command::Checkpoints(args) => undo_cmd::run_checkpoints(&args, policy),
        cli::Command::Diff(args) => undo_cmd::run_diff(&args, policy),
        cli::Command::Undo(args) => undo_cmd::run_undo(&args, policy),
        cli::Command::PruneCheckpoints(args) => undo_cmd::run_prune(&args, policy),
        cli::Command::Lint(args) => lint_cmd::run(&args, policy),
        cli::Command::Completions(args) => docs_cmd::run_completions(&args),
        cli::Command::Man(args) => docs_cmd::run_man(&args),
        cli::Command::SandboxProfile(args) => sandbox_profile_cmd::run(&args, policy),
        cli::Command::Report(args) => audit_cmd::run_report(&args),
        cli::Command::Audit(args) => audit_cmd::run_audit(&args),
        cli::Command::Doctor(args) => doctor::run(&args),
        cli::Command::Verify(args) => verify::run(&args, policy),
        cli::Command::Probe(args) => return probe::main(&args.args),
        cli::Command::Preflight(args) => return preflight_cmd::run(&args, policy).into(),
        cli::Command::Connect(args) => {
            return connect::run(&args.host, args.port, args.relay_port);
        }
        cli::Command::Hook(args) => return hook_cmd::run(&args.agent, policy),
        cli::Command::Enable(args) => enable_cmd::run_enable(&args),
        cli::Command::Disable(args) => enable_cmd::run_disable(&args),
        cli::Command::Mcp(cli::McpCommand::Wrap(args)) => mcp_cmd::run_wrap(&args, false),
        cli::Command::Mcp(cli::McpCommand::Unwrap(args)) => mcp_cmd::run_wrap(&args, true),
        cli::Command::Mcp(cli::McpCommand::Run(args)) => {
            return mcp_cmd::run(&args, policy).unwrap_or_else(|e| {
                eprintln!("aq: {e}");
                exit::ExitCode::Usage.into()
            });
        }
    };
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("aq: {err:#}");
            exit::ExitCode::Usage.into()
        }
    }
}

/// A flag-parsing error: clap's message and exit code (2), except for
/// `aq preflight`, whose usage errors exit 64 because 2 means "findings".
fn usage_error(err: clap::Error) -> std::process::ExitCode {
    let informational = matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if informational || subcommand_name().as_deref() != Some("preflight") {
        err.exit();
    }
    let _ = err.print();
    exit::ExitCode::PreflightUsage.into()
}

/// The subcommand named on the command line: the first word that is not a
/// global option (`--policy FILE`).
fn subcommand_name() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--policy" {
            args.next();
        } else if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

/// The agent of a command line that is exactly `hook AGENT` (after the
/// program), where AGENT is a plain name: what clap would parse it to.
fn hook_agent(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<String> {
    if args.next()? != "hook" {
        return None;
    }
    let agent = args.next()?.into_string().ok()?;
    let plain = !agent.is_empty()
        && agent
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !agent.starts_with('-');
    (plain && args.next().is_none()).then_some(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(args: &[&str]) -> Option<String> {
        hook_agent(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn only_the_exact_hook_shape_skips_clap_and_parses_as_clap_would() {
        for agent in ["claude", "gemini-cli", "copilot_cli", "x1"] {
            assert_eq!(shape(&["hook", agent]).as_deref(), Some(agent));
            let cli = cli::Cli::try_parse_from(["aq", "hook", agent]).unwrap();
            assert!(cli.policy.is_none());
            match cli.command {
                cli::Command::Hook(a) => assert_eq!(a.agent, agent),
                _ => panic!("not the hook verb"),
            }
        }
        for other in [
            &["hook"][..],
            &["hook", "--help"],
            &["hook", "-h"],
            &["hook", "claude", "extra"],
            &["hook", ""],
            &["hook", "cl aude"],
            &["--policy", "p.toml", "hook", "claude"],
            &["hook", "--policy=p.toml"],
            &["run", "claude"],
            &[],
        ] {
            assert_eq!(shape(other), None, "{other:?}");
        }
    }
}
