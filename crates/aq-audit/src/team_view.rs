//! `aq audit summary`: figures across many sessions' logs, for whoever
//! looks after a team's machines: the rules that fired most (by
//! decision), the hosts the broker refused most, asks and how they were
//! answered, how many sessions over what time.
//!
//! Folded from the events themselves rather than from each log's
//! [`crate::Summary`], which keeps blocks and asks but not the rules of
//! allowed commands. Every figure is one the OTLP export carries too (see
//! `docs/teams.md`, "Team view"): a collector grouping by the same
//! attributes gets the same numbers.
//!
//! Pure: logs in (any [`BufRead`]), values and text out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, BufRead};

use serde::Serialize;

use crate::event::{Event, EventBody, Record};

/// How many rules and hosts the text lists.
const TEXT_LIMIT: usize = 10;

/// The running tally over logs; [`Tally::finish`] gives the [`TeamView`].
#[derive(Debug, Default)]
pub struct Tally {
    sessions: u64,
    first: Option<String>,
    last: Option<String>,
    commands: BTreeMap<String, u64>,
    rules: BTreeMap<(String, String), u64>,
    hosts: BTreeMap<String, (u64, String)>,
    answers: BTreeMap<String, u64>,
    skipped_lines: u64,
}

/// One rule and how often it decided, with one decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    /// The rule id (the deciding rule of each command decision).
    pub rule: String,
    /// `allow`, `ask` or `block`.
    pub decision: String,
    /// How many command decisions it decided so.
    pub count: u64,
}

/// One destination the broker refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCount {
    /// `host:port`.
    pub host: String,
    /// Connections refused.
    pub count: u64,
    /// The refusal's rule (the last one seen).
    pub rule: String,
}

/// The figures, most frequent first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TeamView {
    /// Session logs read.
    pub sessions: u64,
    /// The first event's time.
    pub first: Option<String>,
    /// The last event's time.
    pub last: Option<String>,
    /// Command decisions by decision (`allow`, `ask`, `block`).
    pub commands: BTreeMap<String, u64>,
    /// Rules by how often they decided, with the decision.
    pub rules: Vec<RuleCount>,
    /// Destinations the broker refused, most refused first.
    pub hosts_refused: Vec<HostCount>,
    /// Commands that asked.
    pub asks: u64,
    /// Answers by answer: `once`, `session`, `always` (approved), `deny`,
    /// `timeout`, `no-approver`, `headless`, `learn`, and `granted` (a
    /// command covered by an earlier approval).
    pub answers: BTreeMap<String, u64>,
    /// Lines that could not be read (torn or damaged).
    pub skipped_lines: u64,
}

impl Tally {
    /// Folds one session's log.
    pub fn add_log(&mut self, mut reader: impl BufRead) -> io::Result<()> {
        self.sessions += 1;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            match line.strip_suffix('\n').map(Record::parse) {
                Some(Ok(Record::Event(e))) => self.add(e),
                Some(Ok(Record::Other(_))) => {}
                _ => self.skipped_lines += 1,
            }
        }
    }

    fn add(&mut self, e: Event) {
        if self.first.as_ref().is_none_or(|f| e.ts < *f) {
            self.first = Some(e.ts.clone());
        }
        if self.last.as_ref().is_none_or(|l| e.ts > *l) {
            self.last = Some(e.ts.clone());
        }
        match e.body {
            EventBody::CommandDecision {
                decision, rules, ..
            } => {
                if let Some(rule) = rules.into_iter().next() {
                    *self.rules.entry((rule, decision.clone())).or_default() += 1;
                }
                *self.commands.entry(decision).or_default() += 1;
            }
            EventBody::Approval { answer, .. } => {
                *self.answers.entry(answer).or_default() += 1;
            }
            EventBody::NetworkConnection {
                host,
                port,
                decision,
                rule,
                ..
            } if decision == "denied" => {
                let h = self.hosts.entry(format!("{host}:{port}")).or_default();
                h.0 += 1;
                h.1 = rule;
            }
            _ => {}
        }
    }

    /// The figures, sorted.
    pub fn finish(self) -> TeamView {
        let mut rules: Vec<RuleCount> = self
            .rules
            .into_iter()
            .map(|((rule, decision), count)| RuleCount {
                rule,
                decision,
                count,
            })
            .collect();
        rules.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.rule.cmp(&b.rule)));
        let mut hosts_refused: Vec<HostCount> = self
            .hosts
            .into_iter()
            .map(|(host, (count, rule))| HostCount { host, count, rule })
            .collect();
        hosts_refused.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.host.cmp(&b.host)));
        TeamView {
            sessions: self.sessions,
            first: self.first,
            last: self.last,
            asks: self.commands.get("ask").copied().unwrap_or(0),
            commands: self.commands,
            rules,
            hosts_refused,
            answers: self.answers,
            skipped_lines: self.skipped_lines,
        }
    }
}

impl TeamView {
    /// The figures for a person.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let range = match (&self.first, &self.last) {
            (Some(f), Some(l)) => format!(", {f} to {l}"),
            _ => String::new(),
        };
        let n = |d: &str| self.commands.get(d).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{} session{}{range}: {} commands: {} allowed, {} asked, {} blocked",
            self.sessions,
            if self.sessions == 1 { "" } else { "s" },
            self.commands.values().sum::<u64>(),
            n("allow"),
            n("ask"),
            n("block"),
        );
        if !self.rules.is_empty() {
            out.push_str("rules that fired most:\n");
            for r in self.rules.iter().take(TEXT_LIMIT) {
                let _ = writeln!(out, "  {:>6}  {:<6} {}", r.count, r.decision, r.rule);
            }
        }
        if !self.hosts_refused.is_empty() {
            out.push_str("hosts refused most:\n");
            for h in self.hosts_refused.iter().take(TEXT_LIMIT) {
                let _ = writeln!(out, "  {:>6}  {} [{}]", h.count, h.host, h.rule);
            }
        }
        let answers: Vec<String> = self
            .answers
            .iter()
            .map(|(a, n)| format!("{n} {a}"))
            .collect();
        let _ = writeln!(
            out,
            "asks: {}{}",
            self.asks,
            if answers.is_empty() {
                String::new()
            } else {
                format!("; answers: {}", answers.join(", "))
            }
        );
        if self.skipped_lines > 0 {
            let _ = writeln!(
                out,
                "note: {} lines could not be read (`aq audit verify` tells which)",
                self.skipped_lines
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64, ts: &str, body: EventBody) -> String {
        let mut v = serde_json::to_value(Event {
            seq,
            ts: ts.to_string(),
            session: "s".to_string(),
            prev: String::new(),
            body,
        })
        .unwrap();
        v["prev"] = "x".into();
        format!("{v}\n")
    }

    fn decision(d: &str, rules: &[&str]) -> EventBody {
        EventBody::CommandDecision {
            argv: vec!["x".into()],
            cwd: "/w".into(),
            pid: 1,
            ppid: 0,
            decision: d.into(),
            rules: rules.iter().map(|r| r.to_string()).collect(),
            why: None,
            safer: None,
            source: "shim".into(),
            exe: None,
            found: None,
            identity: None,
        }
    }

    fn denied(host: &str) -> EventBody {
        EventBody::NetworkConnection {
            host: host.into(),
            port: 443,
            addr: None,
            decision: "denied".into(),
            rule: "net-not-allowlisted".into(),
            reason: None,
            front_end: "http-connect".into(),
            bytes_up: 0,
            bytes_down: 0,
            duration_ms: 0,
        }
    }

    #[test]
    fn two_logs_give_the_exact_figures() {
        let one = [
            line(1, "2025-01-01T10:00:00Z", decision("allow", &[])),
            line(
                2,
                "2025-01-01T10:00:01Z",
                decision("ask", &["fs-chmod-exec"]),
            ),
            line(
                3,
                "2025-01-01T10:00:02Z",
                EventBody::Approval {
                    request: "r".into(),
                    argv: vec!["x".into()],
                    answer: "learn".into(),
                    by: "learn mode".into(),
                },
            ),
            line(
                4,
                "2025-01-01T10:00:03Z",
                decision("block", &["fs-rm-recursive-root"]),
            ),
            line(5, "2025-01-01T10:00:04Z", denied("a.example")),
        ]
        .concat();
        let two = [
            line(
                1,
                "2025-01-02T09:00:00Z",
                decision("ask", &["fs-chmod-exec", "x"]),
            ),
            line(2, "2025-01-02T09:00:01Z", denied("a.example")),
            line(3, "2025-01-02T09:00:02Z", denied("b.example")),
            "{torn".to_string(),
        ]
        .concat();
        let mut t = Tally::default();
        t.add_log(one.as_bytes()).unwrap();
        t.add_log(two.as_bytes()).unwrap();
        let v = t.finish();
        assert_eq!(v.sessions, 2);
        assert_eq!(v.first.as_deref(), Some("2025-01-01T10:00:00Z"));
        assert_eq!(v.last.as_deref(), Some("2025-01-02T09:00:02Z"));
        assert_eq!(v.asks, 2);
        assert_eq!(v.commands.values().sum::<u64>(), 4);
        assert_eq!(
            v.rules,
            vec![
                RuleCount {
                    rule: "fs-chmod-exec".into(),
                    decision: "ask".into(),
                    count: 2
                },
                RuleCount {
                    rule: "fs-rm-recursive-root".into(),
                    decision: "block".into(),
                    count: 1
                },
            ]
        );
        assert_eq!(
            v.hosts_refused
                .iter()
                .map(|h| (h.host.as_str(), h.count))
                .collect::<Vec<_>>(),
            vec![("a.example:443", 2), ("b.example:443", 1)]
        );
        assert_eq!(v.answers.get("learn"), Some(&1));
        assert_eq!(v.skipped_lines, 1);
        let text = v.to_text();
        assert!(
            text.starts_with("2 sessions, 2025-01-01T10:00:00Z to 2025-01-02T09:00:02Z: 4 commands: 1 allowed, 2 asked, 1 blocked\n"),
            "{text}"
        );
        assert!(text.contains("       2  ask    fs-chmod-exec\n"), "{text}");
        assert!(text.contains("asks: 2; answers: 1 learn\n"), "{text}");
    }
}
