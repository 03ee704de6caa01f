//! Shim mode: `aq` started through a link named after another program.
//!
//! The shim does not judge: it sends the argument vector to the session's
//! supervisor (`aq run`, see `supervisor.rs`), which judges, logs and waits
//! for a human on an `ask`. On "run" the shim replaces itself with the real
//! program (`execve`, no extra process), with a scrubbed environment. Any
//! failure before the answer is known fails closed (exit 126).

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use aq_policy::{Decision, Verdict};
use aq_shim::channel::{self, ExecAnswer, ExecRequest};

use crate::session::ENV_SESSION_DIR;

/// The approved request whose commands a child may run without asking.
const ENV_GRANT: &str = "AQ_GRANT";

/// Exit code of a command the firewall refused.
pub const EXIT_BLOCKED: u8 = crate::exit::ExitCode::Blocked.code();
/// Exit code when the real program does not exist.
pub const EXIT_NOT_FOUND: u8 = crate::exit::ExitCode::NotFound.code();

/// Runs as the shim for `name`. Returns only on refusal or error.
pub fn run(name: &str, args: Vec<OsString>) -> std::process::ExitCode {
    match judge_and_exec(name, args) {
        Ok(code) => std::process::ExitCode::from(code),
        Err(msg) => {
            eprintln!("aq: {name}: {msg}");
            std::process::ExitCode::from(EXIT_BLOCKED)
        }
    }
}

fn judge_and_exec(name: &str, args: Vec<OsString>) -> Result<u8, String> {
    let dir = std::env::var_os(ENV_SESSION_DIR)
        .map(PathBuf::from)
        .ok_or_else(|| format!("this is an agent-quarantine shim, but {ENV_SESSION_DIR} is not set; run commands through `aq run`"))?;
    let mut argv: Vec<String> = Vec::with_capacity(args.len() + 1);
    argv.push(name.to_string());
    argv.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
    let request = ExecRequest {
        argv,
        cwd: std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        grant: std::env::var(ENV_GRANT).ok(),
    };
    let answer = channel::ask(&dir, &request).map_err(|e| {
        format!("cannot reach the session's supervisor ({e}); refusing to run unchecked")
    })?;
    if !answer.run {
        eprint!("{}", answer.message);
        return Ok(answer.exit_code);
    }
    exec_real(name, &args, &answer)
}

fn exec_real(name: &str, args: &[OsString], answer: &ExecAnswer) -> Result<u8, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(real) = aq_shim::find_real_program(OsStr::new(name), &path, &answer.shim_dir) else {
        eprintln!("aq: {name}: command not found");
        return Ok(EXIT_NOT_FOUND);
    };
    let mut cmd = std::process::Command::new(&real);
    cmd.arg0(name).args(args);
    cmd.env_clear();
    let (passed, _removed) = aq_shim::env_scrub::scrub_env(std::env::vars_os(), &answer.env_pass);
    cmd.envs(passed);
    if let Some(g) = &answer.grant {
        cmd.env(ENV_GRANT, g);
    }
    let err = cmd.exec();
    eprintln!("aq: {name}: cannot run {}: {err}", real.display());
    Ok(if err.kind() == std::io::ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_BLOCKED
    })
}

/// Prints [`refusal_text`] on stderr.
pub fn print_refusal(what: &str, argv: &[String], verdict: &Verdict) {
    eprint!("{}", refusal_text(what, argv, verdict));
}

/// The refusal message: what, which rule, why, what to do instead.
pub fn refusal_text(what: &str, argv: &[String], verdict: &Verdict) -> String {
    refusal_for(what, aq_audit::report::display_argv(argv), verdict)
}

/// [`refusal_text`] for a command line as the agent wrote it.
pub fn refusal_text_line(what: &str, line: &str, verdict: &Verdict) -> String {
    refusal_for(what, line.to_string(), verdict)
}

fn refusal_for(what: &str, mut shown: String, verdict: &Verdict) -> String {
    // An agent's shell wraps the command in a long script: the start is
    // enough to tell which, and `found:` names the part that decided.
    if shown.chars().count() > 200 {
        shown = shown.chars().take(160).collect::<String>() + " …";
    }
    let mut msg = format!("aq: {what}: {shown}\n");
    for r in verdict
        .rules
        .iter()
        .filter(|r| r.action == verdict.decision || verdict.decision == Decision::Allow)
    {
        msg.push_str(&format!(
            "  rule:  {} ({}, risk {})\n",
            r.id,
            r.action.as_str(),
            r.risk.as_str()
        ));
        msg.push_str(&format!("  why:   {}\n", r.why));
        if let Some(s) = &r.safer {
            msg.push_str(&format!("  safer: {s}\n"));
        }
        if !r.evidence.is_empty() {
            msg.push_str(&format!("  found: {}\n", r.evidence));
        }
    }
    msg
}

/// Whether `argv0` names a shim (anything but `aq` itself).
pub fn shim_name(argv0: &OsStr) -> Option<String> {
    let name = Path::new(argv0).file_name()?.to_string_lossy().into_owned();
    (name != "aq"
        && !name.starts_with("aq-")
        && !name.starts_with("integration-")
        && name != "agent-quarantine")
        .then_some(name)
}
