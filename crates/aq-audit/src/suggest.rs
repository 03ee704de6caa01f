//! `aq policy suggest`, the pure part: one or more sessions' asks (answered
//! or not, learn mode's included) and refusals turned into the fewest
//! `aq allow` lines that would have let them run, each with how often it
//! was needed and in which sessions; blocks and what no grant changes are
//! listed apart, as not suggested.
//!
//! Each refusal gets the remedy the recap already names
//! ([`crate::remedy`]): this module only gathers them over sessions, counts
//! them, and merges lines one of which covers another
//! ([`Allowance::covers`]: `aq allow --command 'chmod'` covers
//! `aq allow --command 'chmod 755'`), so several asks covered by one line
//! count for that line once each, and the line is proposed once.
//!
//! Pure: summaries in, values out. Which sessions, the policy-file entry
//! of each line, and writing them are `aq_session::suggest`'s.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::remedy::{self, Allowance, Remedy};
use crate::report::Summary;

/// How many examples of what a line allows are kept.
const EXAMPLES: usize = 3;

/// One suggested line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// The grant.
    pub allowance: Allowance,
    /// `aq allow ...`, as the user would type it.
    pub line: String,
    /// How many times it was needed: asks, refused connections, refused
    /// file accesses it covers.
    pub needed: u64,
    /// The sessions that needed it, in the order given.
    pub sessions: Vec<String>,
    /// The rules that asked or refused.
    pub rules: Vec<String>,
    /// How the asks it covers were answered, by answer.
    pub answers: BTreeMap<String, u64>,
    /// Some of what it allows, as the recap words them.
    pub examples: Vec<String>,
    /// Narrower lines it stands for (merged into it).
    pub covers: Vec<String>,
    /// Why allowing it may be a bad idea, when it may.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Something refused that no `aq allow` line is proposed for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotSuggested {
    /// `blocked`, `exec` (an unrecognised program) or `syscall`.
    pub kind: &'static str,
    /// What was refused (the command, the program, the system call).
    pub what: String,
    /// The rule that decided, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// What would change it, if the user really wants to (never written
    /// by `--write`).
    pub line: String,
    /// Why changing it is rarely wise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// How many times.
    pub count: u64,
    /// The sessions where it happened.
    pub sessions: Vec<String>,
}

/// What `aq policy suggest` proposes for a set of sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Suggestions {
    /// The sessions read, in the order given.
    pub sessions: Vec<String>,
    /// The lines, most needed first.
    pub lines: Vec<Suggestion>,
    /// Blocks and refusals no grant is proposed for.
    pub not_suggested: Vec<NotSuggested>,
}

/// What was gathered for one allowance before merging.
#[derive(Default)]
struct Gathered {
    needed: u64,
    sessions: Vec<String>,
    rules: BTreeSet<String>,
    answers: BTreeMap<String, u64>,
    examples: Vec<String>,
    warning: Option<String>,
    covers: BTreeSet<String>,
}

impl Gathered {
    fn add_session(&mut self, id: &str) {
        if !self.sessions.iter().any(|s| s == id) {
            self.sessions.push(id.to_string());
        }
    }

    fn merge(&mut self, other: Gathered) {
        self.needed += other.needed;
        for s in other.sessions {
            self.add_session(&s);
        }
        self.rules.extend(other.rules);
        for (a, n) in other.answers {
            *self.answers.entry(a).or_default() += n;
        }
        for e in other.examples {
            if self.examples.len() < EXAMPLES && !self.examples.contains(&e) {
                self.examples.push(e);
            }
        }
        if self.warning.is_none() {
            self.warning = other.warning;
        }
        self.covers.extend(other.covers);
    }
}

/// Suggests lines for `sessions` (id, summary), in the order given.
pub fn suggest(sessions: &[(String, Summary)]) -> Suggestions {
    let mut found: BTreeMap<Allowance, Gathered> = BTreeMap::new();
    let mut refused: Vec<NotSuggested> = Vec::new();
    let mut note = |r: Remedy, rule: Option<String>, n: u64, id: &str| match refused
        .iter_mut()
        .find(|o| o.line == r.line && o.kind == r.kind && o.rule == rule)
    {
        Some(o) => {
            o.count += n;
            if !o.sessions.iter().any(|s| s == id) {
                o.sessions.push(id.to_string());
            }
        }
        None => refused.push(NotSuggested {
            kind: r.kind,
            what: r.what,
            rule,
            line: r.line,
            warning: r.warning,
            count: n,
            sessions: vec![id.to_string()],
        }),
    };
    for (id, s) in sessions {
        let mut take = |r: Remedy, n: u64, rules: &[String], answer: Option<&str>| {
            let Some(allowance) = r.allowance.clone() else {
                return;
            };
            let g = found.entry(allowance).or_default();
            g.needed += n;
            g.add_session(id);
            g.rules.extend(rules.iter().cloned());
            if let Some(a) = answer {
                *g.answers.entry(a.to_string()).or_default() += 1;
            }
            if g.examples.len() < EXAMPLES && !g.examples.contains(&r.what) {
                g.examples.push(r.what);
            }
            if g.warning.is_none() {
                g.warning = r.warning;
            }
        };
        for e in &s.asked {
            // The command typed after `aq run --` was the user's own
            // approval: nothing to grant for it.
            if e.source == "run" {
                continue;
            }
            let Some(r) = remedy::ask_remedy(e) else {
                continue;
            };
            if r.allowance.is_none() {
                note(r, e.rules.first().cloned(), 1, id);
                continue;
            }
            let answer = e.answer.as_deref().unwrap_or("unanswered");
            take(r, 1, &e.rules, Some(answer));
        }
        for (dest, d) in &s.destinations {
            if let Some(r) = remedy::network_remedy(dest, d) {
                take(r, d.denied, std::slice::from_ref(&d.rule), None);
            }
        }
        for ((path, access), n) in &s.refused_files {
            take(remedy::file_remedy(path, access, *n), *n, &[], None);
        }
        for e in &s.blocked {
            note(remedy::blocked(e), e.rules.first().cloned(), 1, id);
        }
        for (syscall, (n, errno)) in &s.refused_syscalls {
            note(remedy::syscall_remedy(syscall, *n, errno), None, *n, id);
        }
    }
    Suggestions {
        sessions: sessions.iter().map(|(id, _)| id.clone()).collect(),
        lines: merge(found),
        not_suggested: refused,
    }
}

/// Folds each allowance another one covers into the broadest that covers
/// it; the rest, most needed first (then by line).
fn merge(found: BTreeMap<Allowance, Gathered>) -> Vec<Suggestion> {
    let keys: Vec<Allowance> = found.keys().cloned().collect();
    // The broadest: covered by no other.
    let top = |a: &Allowance| -> Allowance {
        let mut at = a.clone();
        while let Some(wider) = keys.iter().find(|k| k.covers(&at)) {
            at = wider.clone();
        }
        at
    };
    let mut merged: BTreeMap<Allowance, Gathered> = BTreeMap::new();
    for (a, mut g) in found {
        let into = top(&a);
        if into != a {
            g.covers.insert(a.line());
        }
        merged.entry(into).or_default().merge(g);
    }
    let mut out: Vec<Suggestion> = merged
        .into_iter()
        .map(|(allowance, g)| Suggestion {
            line: allowance.line(),
            allowance,
            needed: g.needed,
            sessions: g.sessions,
            rules: g.rules.into_iter().collect(),
            answers: g.answers,
            examples: g.examples,
            covers: g.covers.into_iter().collect(),
            warning: g.warning,
        })
        .collect();
    out.sort_by(|a, b| b.needed.cmp(&a.needed).then_with(|| a.line.cmp(&b.line)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DecisionEntry, Destination};

    fn ask(argv: &[&str], rules: &[&str], answer: &str) -> DecisionEntry {
        DecisionEntry {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            rules: rules.iter().map(|s| s.to_string()).collect(),
            answer: Some(answer.to_string()),
            source: "exec-guard".to_string(),
            ..DecisionEntry::default()
        }
    }

    fn command(program: &str, sub: Option<&str>) -> Allowance {
        Allowance::Command {
            program: program.to_string(),
            subcommand: sub.map(String::from),
        }
    }

    fn net(host: &str) -> Allowance {
        Allowance::Net {
            host: host.to_string(),
        }
    }

    #[test]
    fn a_program_covers_its_subcommands_and_a_host_its_ports() {
        let cases: [(Allowance, Allowance, bool); 10] = [
            (command("chmod", None), command("chmod", Some("755")), true),
            (command("chmod", Some("755")), command("chmod", None), false),
            (command("chmod", None), command("chmod", None), false),
            (command("chmod", None), command("chown", None), false),
            (net("example.com"), net("example.com:443"), true),
            (net("example.com:443"), net("example.com"), false),
            (net("*.example.com"), net("api.example.com:443"), true),
            (net("*.example.com"), net("example.com"), false),
            (
                Allowance::Write {
                    path: "/srv".into(),
                },
                Allowance::Read {
                    path: "/srv/a".into(),
                },
                true,
            ),
            (
                Allowance::Read {
                    path: "/srv".into(),
                },
                Allowance::Write {
                    path: "/srv/a".into(),
                },
                false,
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(a.covers(&b), want, "{} covers {}?", a.line(), b.line());
        }
    }

    #[test]
    fn asks_over_sessions_become_the_fewest_lines_counted_once_each() {
        let mut one = Summary {
            asked: vec![
                ask(&["chmod", "+x", "f"], &["fs-chmod-exec"], "learn"),
                ask(&["chmod", "755", "g"], &["fs-chmod-exec"], "learn"),
                ask(&["npm", "ci"], &["pkg-install"], "no-approver"),
                // The user typed it: not suggested.
                DecisionEntry {
                    source: "run".to_string(),
                    ..ask(&["make", "deploy"], &["task-deploy"], "once")
                },
            ],
            blocked: vec![DecisionEntry {
                source: "exec-guard".to_string(),
                ..ask(&["rm", "-rf", "/"], &["fs-rm-recursive-root"], "")
            }],
            ..Summary::default()
        };
        one.blocked[0].answer = None;
        one.destinations.insert(
            "registry.example.com:443".to_string(),
            Destination {
                denied: 3,
                rule: "net-not-allowlisted".to_string(),
                ..Destination::default()
            },
        );
        let two = Summary {
            asked: vec![
                ask(&["npm", "ci", "--silent"], &["pkg-install"], "once"),
                ask(&["chmod", "+x", "h"], &["fs-chmod-exec"], "deny"),
            ],
            ..Summary::default()
        };
        let s = suggest(&[("s1".to_string(), one), ("s2".to_string(), two)]);
        let got: Vec<(&str, u64, Vec<&str>)> = s
            .lines
            .iter()
            .map(|l| {
                (
                    l.line.as_str(),
                    l.needed,
                    l.sessions.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("aq allow --command 'chmod'", 3, vec!["s1", "s2"]),
                ("aq allow --net registry.example.com:443", 3, vec!["s1"]),
                ("aq allow --command 'npm ci'", 2, vec!["s1", "s2"]),
            ]
        );
        let chmod = &s.lines[0];
        assert_eq!(chmod.covers, vec!["aq allow --command 'chmod 755'"]);
        assert_eq!(chmod.rules, vec!["fs-chmod-exec"]);
        assert_eq!(
            chmod.answers,
            [("deny".to_string(), 1), ("learn".to_string(), 2)]
                .into_iter()
                .collect()
        );
        assert_eq!(s.not_suggested.len(), 1, "{:?}", s.not_suggested);
        let b = &s.not_suggested[0];
        assert_eq!(b.kind, "blocked");
        assert_eq!(b.rule.as_deref(), Some("fs-rm-recursive-root"));
        assert_eq!(b.sessions, vec!["s1"]);
    }

    #[test]
    fn nothing_refused_suggests_nothing() {
        let s = suggest(&[("s".to_string(), Summary::default())]);
        assert!(s.lines.is_empty() && s.not_suggested.is_empty());
        assert_eq!(s.sessions, vec!["s"]);
    }
}
