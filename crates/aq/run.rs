//! `aq run`: the verb. The session itself is `aq_session::run`.

use std::path::Path;
use std::process::ExitCode;

use aq_session::run::RunOptions;

use crate::cli::RunArgs;

pub fn run(args: &RunArgs, policy_flag: Option<&Path>) -> Result<ExitCode, String> {
    if policy_flag.is_some() {
        // A policy file passed this way may loosen the user's: inside a
        // session that would be the agent's own choice.
        aq_session::answerer::refuse_inside_session_because(
            "aq run --policy",
            "a policy file given on the command line has the power of the user's own",
        )?;
    }
    Ok(aq_session::run::run(&options(args), policy_flag)?)
}

fn options(args: &RunArgs) -> RunOptions {
    RunOptions {
        profile: args.profile.clone(),
        workspace: args.workspace.clone(),
        quiet: args.quiet,
        verbose: args.verbose,
        net: args.net.clone(),
        home: args.home.clone(),
        preflight: args.preflight,
        resolve: args.resolve.clone(),
        agent: args.agent.clone(),
        command: args.command.clone(),
        pass_fds: args.pass_fd.clone(),
        on_ready: None,
        wrapped: args.wrapped,
        learn: args.learn,
    }
}
