//! `aq sandbox-profile`: the sandbox a session here would get, printed as
//! the OS's own profile (see [`aq_session::seatbelt_profile`]).

use crate::cli::{SandboxOs, SandboxProfileArgs};
use crate::exit::ExitCode;

pub fn run(
    args: &SandboxProfileArgs,
    policy_flag: Option<&std::path::Path>,
) -> Result<ExitCode, String> {
    if args.os == SandboxOs::Linux {
        return Err("the Linux sandbox is not a profile file: it is built in the kernel (namespaces, mounts, Landlock, seccomp) when `aq run` starts; `aq policy show` shows what it allows and `aq verify` tries it for real".to_string());
    }
    let workspace = aq_session::run::resolve_workspace(args.workspace.as_deref())?;
    let text = aq_session::seatbelt_profile::print(&aq_session::seatbelt_profile::Request {
        workspace: &workspace,
        policy_flag,
        profile: args.profile.as_deref(),
        agent: args.agent.as_deref(),
    })?;
    print!("{text}");
    Ok(ExitCode::Ok)
}
