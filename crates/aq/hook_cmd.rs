//! `aq hook <agent>`: the agent's native hook before a shell command. Reads
//! its event on stdin, decides the command line with the engine and the
//! user's effective policy for the command's working directory, logs it
//! (one session per agent session), and answers in the agent's contract
//! (`aq_agents::hooks`). An error refuses the command.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aq_agents::hooks::{self, HookAgent, HookAnswer, HookDecision, OnAllow};
use aq_audit::{AuditLog, EventBody};
use aq_policy::{Decision, Engine};

use aq_session::{self as session, SessionFile};

/// The largest event read; an agent's command line is far smaller.
const MAX_EVENT: u64 = 4 << 20;

pub fn run(agent: &str, policy_flag: Option<&Path>) -> std::process::ExitCode {
    let Some(agent) = HookAgent::parse(agent) else {
        eprintln!(
            "aq: unknown agent `{agent}` for `aq hook`; one of: {}",
            HookAgent::ALL.map(HookAgent::name).join(", ")
        );
        return crate::exit::ExitCode::Usage.into();
    };
    let answer = match decide(agent, policy_flag) {
        Ok(a) => a,
        Err(e) => hooks::answer_error(agent, &e),
    };
    let _ = std::io::stdout().write_all(answer.stdout.as_bytes());
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    std::process::ExitCode::from(answer.exit_code.clamp(0, 255) as u8)
}

fn decide(agent: HookAgent, policy_flag: Option<&Path>) -> Result<HookAnswer, String> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_EVENT + 1)
        .read_to_end(&mut input)
        .map_err(|e| format!("cannot read the hook event: {e}"))?;
    if input.len() as u64 > MAX_EVENT {
        return Err(format!("the hook event is over {MAX_EVENT} bytes"));
    }
    let event = hooks::parse_event(agent, &input)?;
    if event.commands.is_empty() {
        // Not a shell command: nothing for aq to decide.
        return Ok(hooks::answer(agent, None, "", OnAllow::Defer));
    }
    let cwd = match &event.cwd {
        Some(c) if c.is_absolute() => c.clone(),
        _ => std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?,
    };
    let workspace = std::fs::canonicalize(aq_session::policy_files::workspace_root(&cwd))
        .unwrap_or_else(|_| cwd.clone());
    let loaded = aq_session::policy_files::load_for(&workspace, policy_flag)?;
    let engine = Engine::new(loaded.effective.policy.clone());
    let on_allow = if loaded.effective.hooks_approve {
        OnAllow::Approve
    } else {
        OnAllow::Defer
    };

    let mut strictest = Decision::Allow;
    let mut reasons = Vec::new();
    let log = HookSession::open(agent, event.session.as_deref(), &workspace);
    for line in &event.commands {
        let verdict = engine.evaluate(line);
        let argv = vec![line.clone()];
        if verdict.decision > strictest {
            strictest = verdict.decision;
        }
        if verdict.decision != Decision::Allow {
            reasons.push(crate::shim_mode::refusal_text_line(
                if verdict.decision == Decision::Block {
                    "blocked"
                } else {
                    "needs approval"
                },
                line,
                &verdict,
            ));
        }
        if let Some(log) = &log {
            let top = verdict.deciding_rule();
            let logged = log.event(EventBody::CommandDecision {
                argv,
                cwd: cwd.display().to_string(),
                pid: std::process::id(),
                ppid: aq_session::answerer::parent_of(std::process::id()),
                decision: verdict.decision.as_str().to_string(),
                rules: verdict.rules.iter().map(|r| r.id.clone()).collect(),
                why: top.map(|r| r.why.clone()),
                safer: top.and_then(|r| r.safer.clone()),
                source: format!("hook:{}", agent.name()),
                exe: None,
                found: top.map(|r| r.evidence.clone()).filter(|e| !e.is_empty()),
                identity: None,
            });
            if let Err(e) = logged {
                // A log that takes no more events (damaged by a write that
                // should not have happened): nothing runs unlogged.
                return Ok(hooks::answer(
                    agent,
                    Some(HookDecision::Deny),
                    &format!(
                        "aq: refused: this agent session's audit log cannot be written ({e}), and nothing runs unlogged; `aq audit verify {}` shows where it is damaged, and moving that log aside starts a new one",
                        log.id
                    ),
                    on_allow,
                ));
            }
        }
    }
    let decision = match strictest {
        Decision::Allow => HookDecision::Allow,
        Decision::Ask => HookDecision::Ask,
        Decision::Block => HookDecision::Deny,
    };
    let reason = if reasons.is_empty() {
        "aq: allowed by the policy".to_string()
    } else {
        reasons.join("")
    };
    Ok(hooks::answer(
        agent,
        Some(decision),
        reason.trim_end(),
        on_allow,
    ))
}

/// The audit log of one agent session seen through its hook: the same
/// files as `aq run`'s sessions, so `aq audit` and `aq report` read them.
struct HookSession {
    log: AuditLog,
    id: String,
}

impl HookSession {
    /// Opens (or starts) the session of `agent`'s session `session`. A log
    /// that cannot be written does not stop the decision: it is said on stderr.
    fn open(agent: HookAgent, session: Option<&str>, workspace: &Path) -> Option<HookSession> {
        let tag: String = session
            .unwrap_or("no-session")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .take(64)
            .collect();
        let id = format!("{}{}-{tag}", aq_audit::HOOK_SESSION_PREFIX, agent.name());
        let dir = match session::sessions_dir() {
            Ok(d) => d.join(&id),
            Err(e) => {
                eprintln!("aq: warning: no session log: {e}");
                return None;
            }
        };
        let fresh = !dir.join("session.json").exists();
        if fresh {
            use std::os::unix::fs::DirBuilderExt;
            let made = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .and_then(|()| {
                    session::write_file(
                        &dir,
                        &SessionFile {
                            id: id.clone(),
                            workspace: workspace.to_path_buf(),
                            profile: format!("hook:{}", agent.name()),
                            supervisor_pid: 0,
                            started: session::now_rfc3339(),
                            command: vec![agent.name().to_string()],
                            shim_dir: PathBuf::new(),
                            approval_timeout_secs: 0,
                            unanswered: Decision::Block,
                            env_pass: Vec::new(),
                            policy: aq_policy::Policy::default(),
                            policy_digest: String::new(),
                            wait_for_approver: false,
                            trusted_exec: Vec::new(),
                        },
                    )
                });
            if let Err(e) = made {
                eprintln!("aq: warning: no session log in {}: {e}", dir.display());
                return None;
            }
        }
        let log = match AuditLog::open(session::log_path(&dir)) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("aq: warning: no session log: {e}");
                return None;
            }
        };
        let s = HookSession { log, id };
        if fresh {
            let _ = s.event(EventBody::SessionStart {
                aq_version: env!("CARGO_PKG_VERSION").to_string(),
                workspace: workspace.display().to_string(),
                profile: format!("hook:{}", agent.name()),
                policy_digest: String::new(),
                command: vec![agent.name().to_string()],
                pid: std::process::id(),
                layers: vec![format!("{} hook", agent.name())],
                grants: None,
            });
        }
        Some(s)
    }

    fn event(&self, body: EventBody) -> std::io::Result<()> {
        self.log
            .append(body, session::now_rfc3339(), &self.id)
            .map(|_| ())
    }
}
