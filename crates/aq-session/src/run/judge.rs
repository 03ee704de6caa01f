//! Judge the command itself: the user typed it, so only a block stops it.

use aq_audit::EventBody;
use aq_policy::{Decision, Engine, Verdict};

use super::Setup;
use super::session::SessionLog;
use crate as session;
use crate::agent::Chosen;

/// The verdict on what the user typed.
pub(super) struct Judged {
    /// The engine's verdict, without the rule against an agent's own
    /// approvals being off.
    pub verdict: Verdict,
    /// The command starts an agent the preset knows, and only an ask (an
    /// unknown program) stood in its way: what the user asked for.
    pub started_agent: bool,
}

impl Judged {
    /// Whether the command is refused (exit 126).
    pub fn blocked(&self) -> bool {
        self.verdict.decision == Decision::Block
    }
}

/// Judges `command` with the session's policy and logs the decision (and,
/// for an ask, the user's approval by typing it).
pub(super) fn judge_command(setup: &Setup<'_>, log: &SessionLog) -> Judged {
    let command = &setup.args.command;
    let chosen = setup.agent.chosen.as_ref();
    let policy = &setup.session.file.policy;
    let judged = judge(&Engine::new(policy.clone()), command, chosen.is_some());
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    for event in events(&judged, command, chosen, cwd, std::process::id()) {
        session::log_event(&log.log, &setup.session.id, event);
    }
    judged
}

/// An agent the user starts with its own approvals off (`aq run --
/// claude --dangerously-skip-permissions`) is the user's choice: aq's
/// sandbox and exec guard are what it asks for. Inside, the rule stands.
fn judge(engine: &Engine, command: &[String], agent: bool) -> Judged {
    let verdict = engine
        .evaluate_argv(command)
        .without_rule(aq_policy::RuleId::GuardAgentBypass.as_str());
    // Starting an agent the preset knows is what the user asked for: an
    // ask (an unknown program) is not one; a block still is.
    let started_agent = agent && verdict.decision == Decision::Ask;
    Judged {
        verdict,
        started_agent,
    }
}

/// The events that record the judgement: the decision, then for an ask
/// the approval the user gave by typing the command.
fn events(
    judged: &Judged,
    command: &[String],
    chosen: Option<&Chosen>,
    cwd: String,
    pid: u32,
) -> Vec<EventBody> {
    let Judged {
        verdict,
        started_agent,
    } = judged;
    let started_agent = *started_agent;
    let top = verdict.deciding_rule();
    let mut events = vec![EventBody::CommandDecision {
        argv: command.to_vec(),
        cwd,
        pid,
        ppid: 0,
        decision: if started_agent {
            Decision::Allow
        } else {
            verdict.decision
        }
        .as_str()
        .to_string(),
        rules: if started_agent {
            vec!["agent-preset".to_string()]
        } else {
            verdict.rules.iter().map(|r| r.id.clone()).collect()
        },
        why: match chosen {
            Some(c) if started_agent => Some(format!(
                "the user started the {} agent (preset `{}`)",
                c.preset.title, c.preset.name
            )),
            _ => top.map(|r| r.why.clone()),
        },
        safer: top.and_then(|r| r.safer.clone()).filter(|_| !started_agent),
        source: "run".to_string(),
        exe: None,
        found: top
            .map(|r| r.evidence.clone())
            .filter(|e| !e.is_empty() && !started_agent),
        identity: None,
    }];
    if verdict.decision == Decision::Ask && !started_agent {
        // The user typed this command: that is the approval.
        events.push(EventBody::Approval {
            request: "command".to_string(),
            argv: command.to_vec(),
            answer: "once".to_string(),
            by: "the user, who typed it after `aq run --`".to_string(),
        });
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn chosen() -> Chosen {
        Chosen {
            preset: aq_agents::PresetSet::builtin()
                .get("claude")
                .unwrap()
                .clone(),
            by: "recognised from the command".to_string(),
            args_at: 1,
        }
    }

    fn decision(e: &EventBody) -> (&str, &[String], Option<&str>) {
        match e {
            EventBody::CommandDecision {
                decision,
                rules,
                why,
                ..
            } => (decision.as_str(), rules.as_slice(), why.as_deref()),
            other => panic!("not a decision: {other:?}"),
        }
    }

    #[test]
    fn an_unknown_program_is_asked_and_the_user_typing_it_approves() {
        let command = argv(&["some-unknown-tool-xyz", "--flag"]);
        let judged = judge(&Engine::default(), &command, false);
        assert_eq!(judged.verdict.decision, Decision::Ask);
        assert!(!judged.started_agent && !judged.blocked());
        let events = events(&judged, &command, None, "/w".into(), 7);
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(decision(&events[0]).0, "ask");
        assert!(matches!(
            &events[1],
            EventBody::Approval { request, answer, .. } if request == "command" && answer == "once"
        ));
    }

    #[test]
    fn an_agent_the_preset_knows_is_allowed_as_the_users_choice() {
        let command = argv(&["some-unknown-tool-xyz"]);
        let judged = judge(&Engine::default(), &command, true);
        assert!(judged.started_agent);
        let chosen = chosen();
        let events = events(&judged, &command, Some(&chosen), "/w".into(), 7);
        assert_eq!(events.len(), 1, "no approval is logged: {events:?}");
        let (decision, rules, why) = decision(&events[0]);
        assert_eq!(decision, "allow");
        assert_eq!(rules, ["agent-preset"]);
        assert_eq!(
            why,
            Some(
                format!(
                    "the user started the {} agent (preset `claude`)",
                    chosen.preset.title
                )
                .as_str()
            )
        );
    }

    #[test]
    fn a_block_stands_even_for_an_agent() {
        let command = argv(&["rm", "-rf", "/"]);
        let judged = judge(&Engine::default(), &command, true);
        assert!(judged.blocked() && !judged.started_agent);
        let events = events(&judged, &command, Some(&chosen()), "/w".into(), 7);
        assert_eq!(events.len(), 1);
        let (decision, rules, _) = decision(&events[0]);
        assert_eq!(decision, "block");
        assert!(!rules.is_empty() && rules[0] != "agent-preset", "{rules:?}");
    }
}
