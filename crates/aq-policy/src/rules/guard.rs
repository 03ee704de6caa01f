//! aq's own command line, run by the agent it guards: the verbs that
//! loosen aq (`aq allow`, `aq policy trust`), answer its asks (`aq approve`,
//! `aq watch`) or change where it sits in the agents (`aq disable`, `aq
//! enable`, `aq mcp unwrap`) are the agent switching its guard off; the
//! others read (`aq explain`, `aq check`, `aq audit verify`, `aq report`).
//! `aq run -- CMD` runs CMD, which `aq-shell` unwraps and the rules judge.

use super::{Ctx, operands};
use crate::catalog::RuleId;

pub(crate) fn check(ctx: &mut Ctx, i: usize) {
    let c = &ctx.commands()[i];
    if c.program() != Some("aq") {
        return;
    }
    let ops: Vec<&str> = operands(c).iter().map(|w| w.text.as_str()).collect();
    let (rule, what) = match ops.as_slice() {
        ["allow", ..] => (RuleId::GuardAqFiles, "grants what the policy refuses"),
        ["approve", ..] => (RuleId::GuardAqFiles, "answers aq's asks"),
        ["watch", ..] if !c.args().iter().any(|a| a.text == "--json") => {
            (RuleId::GuardAqFiles, "answers aq's asks from its console")
        }
        ["policy", "init" | "trust", ..] => (RuleId::GuardAqFiles, "writes or trusts a policy"),
        ["enable" | "disable", ..] => (
            RuleId::GuardAgentHooks,
            "changes where aq is installed in the agents",
        ),
        ["mcp", "wrap" | "unwrap", ..] => (
            RuleId::GuardAgentHooks,
            "changes how the agents start their MCP servers",
        ),
        ["audit", "export", ..] | ["__connect", ..] => (RuleId::NetFetch, "sends to another host"),
        _ => return,
    };
    ctx.hit(rule, i, format!("`{}` {what}", c.display()));
}
