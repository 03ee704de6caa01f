//! From a command line to a [`Verdict`]: analyze, run every rule over every
//! command, apply the policy's actions, keep the strictest.

use serde::Serialize;

use aq_shell::{Analysis, Problem};

use crate::catalog::RuleId;
use crate::decision::{Decision, Risk};
use crate::policy::Policy;
use crate::rules::{self, Hit, HitRule};

/// The decision on one command line, with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The strictest action over every rule that fired; `allow` when none did.
    pub decision: Decision,
    /// Every rule that fired, strictest first.
    pub rules: Vec<RuleMatch>,
    /// Every simple command found, after unwrapping.
    pub commands: Vec<CommandReport>,
    /// Parts of the line that could not be read statically.
    pub problems: Vec<Problem>,
}

impl Verdict {
    /// The rule that decided, if any.
    pub fn deciding_rule(&self) -> Option<&RuleMatch> {
        self.rules.first()
    }

    /// This verdict with more rules that fired (findings of the exec guard
    /// about the file that runs, see [`Engine::finding`]): the strictest
    /// still decides and comes first.
    pub fn with_findings(mut self, findings: impl IntoIterator<Item = RuleMatch>) -> Verdict {
        self.rules.extend(findings);
        self.rules
            .sort_by(|a, b| b.action.cmp(&a.action).then(b.risk.cmp(&a.risk)));
        self.redecide();
        self
    }

    /// This verdict without the matches of rule `id` (the session's own
    /// command is not judged by `guard-agent-bypass`): the rest decide.
    pub fn without_rule(mut self, id: &str) -> Verdict {
        self.rules.retain(|r| r.id != id);
        self.redecide();
        self
    }

    fn redecide(&mut self) {
        self.decision = self
            .rules
            .iter()
            .map(|m| m.action)
            .max()
            .unwrap_or(Decision::Allow);
    }
}

/// One rule that fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleMatch {
    /// The rule's id.
    pub id: String,
    /// Its action under the effective policy.
    pub action: Decision,
    /// Its risk.
    pub risk: Risk,
    /// Why it matters.
    pub why: String,
    /// What to do instead.
    pub safer: Option<String>,
    /// The command (index into [`Verdict::commands`]) it fired on.
    pub command: Option<usize>,
    /// What exactly matched.
    pub evidence: String,
}

/// One simple command of the line, as the rules saw it.
#[derive(Debug, Clone, Serialize)]
pub struct CommandReport {
    /// The command as a person reads it.
    pub text: String,
    /// The program name, when known statically.
    pub program: Option<String>,
    /// Wrappers and nested shells it was found in.
    pub via: Vec<String>,
    /// The strictest action of the rules that fired on it.
    pub decision: Decision,
    /// Ids of the rules that fired on it.
    pub rules: Vec<String>,
}

/// Decides command lines under one policy.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    policy: Policy,
}

impl Engine {
    /// An engine with this policy.
    pub fn new(policy: Policy) -> Self {
        Engine { policy }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Decides a command line as passed to `bash -c`.
    pub fn evaluate(&self, line: &str) -> Verdict {
        self.decide(aq_shell::analyze(line))
    }

    /// Decides an argument vector as passed to `execve`.
    pub fn evaluate_argv(&self, argv: &[String]) -> Verdict {
        self.decide(aq_shell::analyze_argv(argv))
    }

    /// Decides an `execve` seen while it happens (by a shim or the exec
    /// guard), where each program a script or shell string starts is seen
    /// again as it starts. A shell running a `-c` string and a script file
    /// are then not opaque: the string is parsed in full here, and what a
    /// script runs is judged exec by exec. So `exec-shell-string` (for a
    /// `-c` string or `eval`) and `exec-script-file` do not apply, and
    /// `sh -c 'node test.js'` from `npm test` is decided as `node test.js`.
    /// Nor does `exec-unknown-program`: a compiler's `cc1`, a build script or
    /// a test binary is judged by what it starts in turn, and what it does
    /// to files is the sandbox's to bound.
    /// A shell reading its script from a pipe or its input still asks: that
    /// text is never seen.
    pub fn evaluate_exec(&self, argv: &[String]) -> Verdict {
        let mut verdict = self.evaluate_argv(argv);
        let transparent = |m: &RuleMatch| {
            m.id == RuleId::ExecScriptFile.as_str()
                || m.id == RuleId::ExecUnknownProgram.as_str()
                || (m.id == RuleId::ExecShellString.as_str()
                    && m.evidence.ends_with("runs a shell string"))
        };
        if !verdict.rules.iter().any(transparent) {
            return verdict;
        }
        verdict.rules.retain(|m| !transparent(m));
        verdict.decision = verdict
            .rules
            .iter()
            .map(|m| m.action)
            .max()
            .unwrap_or(Decision::Allow);
        for report in &mut verdict.commands {
            report
                .rules
                .retain(|id| verdict.rules.iter().any(|m| &m.id == id));
        }
        verdict
    }

    /// A built-in rule that fired on a fact the command line does not
    /// show (what the file that runs is: [`RuleId::FIRED_BY_EXEC_GUARD`]),
    /// with its action under this policy; add it with
    /// [`Verdict::with_findings`].
    pub fn finding(&self, id: RuleId, evidence: String) -> RuleMatch {
        self.to_match(&Hit {
            rule: HitRule::Builtin(id),
            command: Some(0),
            evidence,
        })
    }

    fn decide(&self, analysis: Analysis) -> Verdict {
        let hits = rules::run(&analysis, &self.policy);
        let mut matches: Vec<RuleMatch> = hits.iter().map(|h| self.to_match(h)).collect();
        matches.sort_by(|a, b| b.action.cmp(&a.action).then(b.risk.cmp(&a.risk)));
        matches.dedup_by(|a, b| a.id == b.id && a.command == b.command && a.evidence == b.evidence);
        let decision = matches
            .iter()
            .map(|m| m.action)
            .max()
            .unwrap_or(Decision::Allow);
        let commands = analysis
            .commands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let fired: Vec<&RuleMatch> =
                    matches.iter().filter(|m| m.command == Some(i)).collect();
                CommandReport {
                    text: c.display(),
                    program: c.program().map(str::to_string),
                    via: c.via.clone(),
                    decision: fired
                        .iter()
                        .map(|m| m.action)
                        .max()
                        .unwrap_or(Decision::Allow),
                    rules: fired.iter().map(|m| m.id.clone()).collect(),
                }
            })
            .collect();
        Verdict {
            decision,
            rules: matches,
            commands,
            problems: analysis.problems,
        }
    }

    fn to_match(&self, hit: &Hit) -> RuleMatch {
        match &hit.rule {
            HitRule::Builtin(id) => {
                let info = id.info();
                RuleMatch {
                    id: id.as_str().to_string(),
                    action: self.policy.action(*id),
                    risk: info.risk,
                    why: info.why.to_string(),
                    safer: info.safer.map(str::to_string),
                    command: hit.command,
                    evidence: hit.evidence.clone(),
                }
            }
            HitRule::Custom(i) => {
                let rule = &self.policy.custom_rules[*i];
                RuleMatch {
                    id: rule.id.clone(),
                    action: rule.action,
                    risk: rule.risk,
                    why: rule.why.clone(),
                    safer: rule.safer.clone(),
                    command: hit.command,
                    evidence: hit.evidence.clone(),
                }
            }
        }
    }
}

/// Convenience: decide one line under the built-in policy.
pub fn evaluate(line: &str) -> Verdict {
    Engine::default().evaluate(line)
}

/// Whether a rule id names a built-in rule.
pub fn is_builtin_rule(id: &str) -> bool {
    id.parse::<RuleId>().is_ok()
}
