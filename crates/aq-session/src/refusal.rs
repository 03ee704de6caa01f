//! What a refused command is told: the refusal text the supervisor, the
//! exec guard and the agents' hooks share, and the exit codes a refused or
//! missing program gets (the small shim binary's own).

use aq_policy::{Decision, Verdict};

/// Exit code of a command the firewall refused.
pub const EXIT_BLOCKED: u8 = aq_shim::entry::EXIT_BLOCKED;
/// Exit code when the real program does not exist.
pub const EXIT_NOT_FOUND: u8 = aq_shim::entry::EXIT_NOT_FOUND;

/// Prints [`refusal_text`] on stderr.
pub(crate) fn print_refusal(what: &str, argv: &[String], verdict: &Verdict) {
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
