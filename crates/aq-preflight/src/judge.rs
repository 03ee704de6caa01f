//! What a command line would do, judged by the firewall engine: the same
//! verdict an agent's command gets, turned into a severity.

use aq_policy::{Decision, Engine};

use crate::Severity;

/// The engine's view of one command line.
pub(crate) struct Judgement {
    /// block → critical, ask → medium, allow → low.
    pub severity: Severity,
    /// Rule ids that fired.
    pub rules: Vec<String>,
    /// `aq would block it: net-pipe-to-shell (`sh` runs code from …)`.
    pub note: String,
}

/// Judges `line` as `bash -c` would run it.
pub(crate) fn judge(engine: &Engine, line: &str) -> Judgement {
    let v = engine.evaluate(line);
    let severity = match v.decision {
        Decision::Block => Severity::Critical,
        Decision::Ask => Severity::Medium,
        Decision::Allow => Severity::Low,
    };
    let note = match v.deciding_rule() {
        Some(r) => format!(
            "aq's firewall would {} it: {} ({})",
            v.decision.as_str(),
            r.id,
            r.evidence
        ),
        None => "aq's firewall would allow it".to_string(),
    };
    Judgement {
        severity,
        rules: v.rules.iter().map(|r| r.id.clone()).collect(),
        note,
    }
}

/// Rules meaning "runs code fetched from elsewhere" or "sends secrets out".
pub(crate) const REMOTE_EXEC_RULES: &[&str] = &[
    "net-pipe-to-shell",
    "net-download-exec",
    "exec-decoded-payload",
    "net-reverse-shell",
    "net-bind-shell",
    "net-exfil-secret",
];

impl Judgement {
    /// Whether a remote-execution or exfiltration rule fired.
    pub(crate) fn runs_remote_code(&self) -> bool {
        self.rules
            .iter()
            .any(|r| REMOTE_EXEC_RULES.contains(&r.as_str()))
    }
}
