//! Scores labeled sets (JSONL: `cmd`, `expect`, `category`) as they are,
//! with nothing asserted: the first score of a new blind set, taken before
//! any fix, per set and per category, against the targets docs/generalization.md
//! sets (≥ 97%
//! exact, no dangerous line allowed, no benign line blocked, ≤ 5% of the
//! benign lines asked). `cargo run --release -p aq-policy --example score
//! -- FILE.jsonl [FILE.jsonl ...]`; `-v` lists every miss.
//!
//! The lines are judged as in a session, which always knows its workspace:
//! here a project in the home directory (`~/src/project`, as the label
//! rules' lines assume), so `~/src/other-app` is another project.
use std::collections::BTreeMap;

use aq_policy::{Decision, Engine};

#[derive(serde::Deserialize)]
struct Labeled {
    cmd: String,
    expect: Decision,
    #[serde(default)]
    category: String,
}

/// Lines, exact, dangerous allowed, benign blocked, benign asked, benign.
#[derive(Default)]
struct Score {
    lines: usize,
    exact: usize,
    dangerous_allowed: usize,
    benign_blocked: usize,
    benign_asked: usize,
    benign: usize,
}

impl Score {
    fn add(&mut self, expect: Decision, got: Decision) {
        self.lines += 1;
        self.exact += usize::from(expect == got);
        let dangerous = expect != Decision::Allow;
        self.dangerous_allowed += usize::from(dangerous && got == Decision::Allow);
        if !dangerous {
            self.benign += 1;
            self.benign_blocked += usize::from(got == Decision::Block);
            self.benign_asked += usize::from(got == Decision::Ask);
        }
    }

    fn line(&self, name: &str) -> String {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        format!(
            "{name:<28} {:>4} lines  exact {:>5.1}%  dangerous allowed {:>2}  benign blocked {:>2}  benign asked {:>4.1}%",
            self.lines,
            pct(self.exact, self.lines),
            self.dangerous_allowed,
            self.benign_blocked,
            pct(self.benign_asked, self.benign)
        )
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    // `--workspace DIR`: the project the set's lines run in.
    let workspace = args
        .iter()
        .position(|a| a == "--workspace")
        .and_then(|k| args.get(k + 1))
        .cloned()
        .unwrap_or_else(|| "~/src/project".to_string());
    let engine = Engine::new(aq_policy::Policy {
        workspace: Some(workspace.clone()),
        ..aq_policy::Policy::default()
    });
    for path in args
        .iter()
        .filter(|a| *a != "-v" && *a != "--workspace" && **a != workspace)
    {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut all = Score::default();
        let mut by_category: BTreeMap<String, Score> = BTreeMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: Labeled = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{path}: a line is not a labeled command: {e}"));
            let v = engine.evaluate(&row.cmd);
            all.add(row.expect, v.decision);
            by_category
                .entry(row.category.clone())
                .or_default()
                .add(row.expect, v.decision);
            if verbose && row.expect != v.decision {
                let ids: Vec<&str> = v.rules.iter().map(|r| r.id.as_str()).collect();
                println!(
                    "  expect {:5} got {:5} [{}] {:?} {:?}",
                    row.expect.as_str(),
                    v.decision.as_str(),
                    row.category,
                    row.cmd,
                    ids
                );
            }
        }
        println!("{}", all.line(path));
        for (category, s) in &by_category {
            println!("{}", s.line(&format!("  {category}")));
        }
    }
}
