//! `aq completions SHELL` and `aq man [--out DIR]`: made from the same clap
//! definitions that parse the command line, so they never drift from it.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::exit::ExitCode;

pub fn run_completions(args: &CompletionsArgs) -> Result<ExitCode, String> {
    let mut cmd = visible(Cli::command());
    clap_complete::generate(args.shell, &mut cmd, "aq", &mut std::io::stdout());
    Ok(ExitCode::Ok)
}

pub fn run_man(args: &ManArgs) -> Result<ExitCode, String> {
    let cmd = visible(Cli::command());
    match &args.out {
        None => {
            clap_mangen::Man::new(cmd)
                .render(&mut std::io::stdout())
                .map_err(|e| format!("cannot write the manual page: {e}"))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let mut written = vec![page(dir, "aq", cmd.clone())?];
            for sub in cmd.get_subcommands() {
                let name = format!("aq-{}", sub.get_name());
                let sub = sub.clone().name(name.clone());
                written.push(page(dir, &name, sub)?);
            }
            println!("aq: wrote {} pages into {}", written.len(), dir.display());
        }
    }
    Ok(ExitCode::Ok)
}

/// `NAME.1` in `dir`.
fn page(dir: &Path, name: &str, cmd: clap::Command) -> Result<String, String> {
    let path = dir.join(format!("{name}.1"));
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| format!("cannot render {name}.1: {e}"))?;
    std::fs::write(&path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

/// The command without its hidden verbs (`__probe`, `__connect`: aq's own
/// plumbing), which the completion generators would otherwise offer.
fn visible(cmd: clap::Command) -> clap::Command {
    let mut out = clap::Command::new(cmd.get_name().to_string())
        .args(cmd.get_arguments().cloned())
        .subcommand_required(true)
        .subcommands(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(v) = cmd.get_version() {
        out = out.version(v.to_string());
    }
    out
}
