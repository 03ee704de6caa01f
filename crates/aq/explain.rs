//! `aq explain`: the decision on a command line as a person or a tool reads it.

use std::fmt::Write as _;
use std::path::Path;

use aq_policy::{Engine, Policy, RuleId, Verdict};

use crate::cli::ExplainArgs;
use crate::exit::ExitCode;
use aq_session::policy_files;

/// Explains under the effective policy (built-in, user, project, `--policy`).
pub fn run(args: &ExplainArgs, policy_flag: Option<&Path>) -> Result<ExitCode, String> {
    let loaded = policy_files::load(policy_flag)?;
    loaded.warn_ignored();
    let engine = Engine::new(loaded.effective.policy);
    if args.rules {
        print!("{}", render_rules(engine.policy(), args.json));
        return Ok(ExitCode::Ok);
    }
    if let Some(name) = &args.program {
        return explain_program(name, args.json);
    }
    let line = args.command.join(" ");
    let verdict = engine.evaluate(&line);
    if args.json {
        let out = serde_json::json!({
            "command": line,
            "decision": verdict.decision,
            "rules": verdict.rules,
            "commands": verdict.commands,
            "problems": verdict.problems,
        });
        println!("{out}");
    } else {
        print!("{}", render_text(&line, &verdict));
    }
    Ok(ExitCode::Ok)
}

/// `aq explain --program NAME`: the capability model's entry.
fn explain_program(name: &str, json: bool) -> Result<ExitCode, String> {
    let Some(p) = aq_knowledge::programs::lookup(name) else {
        return Err(format!(
            "the engine has no capability entry for `{name}` (see `aq explain -- {name} …` for how a line using it is decided)"
        ));
    };
    if json {
        let caps: Vec<_> = p
            .caps
            .iter()
            .map(|c| {
                serde_json::json!({
                    "does": format!("{:?}", c.does).to_lowercase(),
                    "via": c.via.as_str(),
                    "how": c.how(),
                    "flags": c.flags.to_vec(),
                    "args": c.args.to_vec(),
                    "env": c.env.as_str(),
                    "usual": c.usual.to_vec(),
                    "note": c.note.as_str(),
                })
            })
            .collect();
        let out = serde_json::json!({"program": p.name.as_str(), "also": p.also.to_vec(), "what": p.what.as_str(), "caps": caps});
        println!("{out}");
    } else {
        print!("{p}");
    }
    Ok(ExitCode::Ok)
}

/// The human-readable explanation.
pub fn render_text(line: &str, v: &Verdict) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "command:  {line}");
    let _ = writeln!(s, "decision: {}", v.decision.as_str().to_uppercase());
    if !v.commands.is_empty() {
        let _ = writeln!(s, "\ncommands found:");
        for (i, c) in v.commands.iter().enumerate() {
            let via = if c.via.is_empty() {
                String::new()
            } else {
                format!("  (inside {})", c.via.join(" > "))
            };
            let _ = writeln!(s, "  {}. [{}] {}{via}", i + 1, c.decision.as_str(), c.text);
        }
    }
    if v.rules.is_empty() {
        let _ = writeln!(
            s,
            "\nno rule fired: every program is known and nothing risky was found."
        );
    } else {
        let _ = writeln!(s, "\nrules:");
        for r in &v.rules {
            let on = r
                .command
                .map(|c| format!(" (command {})", c + 1))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  {} -> {} [risk: {}]{on}",
                r.id,
                r.action.as_str(),
                r.risk.as_str()
            );
            let _ = writeln!(s, "    why:   {}", r.why);
            if let Some(safer) = &r.safer {
                let _ = writeln!(s, "    safer: {safer}");
            }
            if !r.evidence.is_empty() {
                let _ = writeln!(s, "    found: {}", r.evidence);
            }
        }
    }
    s
}

/// Every built-in rule with its action under `policy` (`aq policy show` says
/// which file changed it).
fn render_rules(policy: &Policy, json: bool) -> String {
    if json {
        let rules: Vec<_> = RuleId::ALL
            .iter()
            .map(|id| {
                let info = id.info();
                serde_json::json!({"id": id.as_str(), "action": policy.action(*id), "risk": info.risk, "why": info.why, "safer": info.safer})
            })
            .collect();
        return format!("{}\n", serde_json::Value::Array(rules));
    }
    let mut s = String::new();
    for id in RuleId::ALL {
        let info = id.info();
        let _ = writeln!(
            s,
            "{:28} {:5} {:8} {}",
            id.as_str(),
            policy.action(*id).as_str(),
            info.risk.as_str(),
            info.why
        );
    }
    s
}
