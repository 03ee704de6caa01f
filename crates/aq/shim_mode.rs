//! Shim mode: `aq` started through a link named after another program.
//!
//! The order matters and is the whole job: judge the argument vector with
//! the session's policy, log the decision, get an answer for an `ask`, then
//! replace this process with the real program (`execve`, no extra process).
//! Any failure before the decision is known fails closed (exit 126).

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aq_audit::{AuditLog, EventBody};
use aq_policy::{Decision, Engine, Verdict};
use aq_shim::approvals::{Answer, Queue, Request};

use crate::session::{self, ENV_SESSION_DIR, SessionFile};

/// The approved request whose commands a child may run without asking.
const ENV_GRANT: &str = "AQ_GRANT";

/// Exit code of a command the firewall refused.
pub const EXIT_BLOCKED: u8 = crate::exit::ExitCode::Blocked.code();
/// Exit code when the real program does not exist.
pub const EXIT_NOT_FOUND: u8 = crate::exit::ExitCode::NotFound.code();

/// Runs as the shim for `name`. Returns only on refusal or error.
pub fn run(name: &str, args: Vec<OsString>) -> std::process::ExitCode {
    match judge_and_exec(name, args) {
        Ok(code) => std::process::ExitCode::from(code),
        Err(msg) => {
            eprintln!("aq: {name}: {msg}");
            std::process::ExitCode::from(EXIT_BLOCKED)
        }
    }
}

fn judge_and_exec(name: &str, args: Vec<OsString>) -> Result<u8, String> {
    let dir = std::env::var_os(ENV_SESSION_DIR)
        .map(PathBuf::from)
        .ok_or_else(|| format!("this is an agent-quarantine shim, but {ENV_SESSION_DIR} is not set; run commands through `aq run`"))?;
    let file = session::read_file(&dir)
        .map_err(|e| format!("cannot read the session ({e}); refusing to run unchecked"))?;

    let mut argv: Vec<String> = Vec::with_capacity(args.len() + 1);
    argv.push(name.to_string());
    argv.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));

    let engine = Engine::new(file.policy.clone());
    let verdict = engine.evaluate_argv(&argv);
    let queue = Queue::new(&dir);
    let log = AuditLog::open(session::log_path(&dir))
        .map_err(|e| format!("cannot open the audit log ({e}); refusing to run unlogged"))?;
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let pid = std::process::id();
    let ppid = std::os::unix::process::parent_id();

    let mut decision = verdict.decision;
    let mut covered_by = None;
    if decision == Decision::Ask {
        if queue.session_allows(&argv) {
            decision = Decision::Allow;
        } else if let Some(grant) = std::env::var(ENV_GRANT)
            .ok()
            .filter(|g| queue.granted(g, &argv))
        {
            // Part of a command a human already approved.
            decision = Decision::Allow;
            covered_by = Some(grant);
        }
    }
    let top = verdict.deciding_rule();
    session::log_event(
        &log,
        &file.id,
        EventBody::CommandDecision {
            argv: argv.clone(),
            cwd: cwd.clone(),
            pid,
            ppid,
            decision: decision.as_str().to_string(),
            rules: verdict.rules.iter().map(|r| r.id.clone()).collect(),
            why: top.map(|r| r.why.clone()),
            safer: top.and_then(|r| r.safer.clone()),
            source: "shim".to_string(),
        },
    );

    if let Some(grant) = covered_by {
        session::log_event(
            &log,
            &file.id,
            EventBody::Approval {
                request: grant.clone(),
                argv: argv.clone(),
                answer: "granted".to_string(),
                by: format!("the approval of request {grant}, which runs this command"),
            },
        );
    }
    let mut grant = None;
    match decision {
        Decision::Allow => {}
        Decision::Block => {
            print_refusal("blocked", &argv, &verdict);
            return Ok(EXIT_BLOCKED);
        }
        Decision::Ask => match ask_human(&queue, &log, &file, &argv, &cwd, &verdict)? {
            Some(id) => grant = Some(id),
            None => return Ok(EXIT_BLOCKED),
        },
    }
    exec_real(name, &args, &file, grant.as_deref())
}

/// Files the request, waits for an answer, logs it. Returns the request id
/// when the command may run (its grant covers what it runs), `None` if not.
fn ask_human(
    queue: &Queue,
    log: &AuditLog,
    file: &SessionFile,
    argv: &[String],
    cwd: &str,
    verdict: &Verdict,
) -> Result<Option<String>, String> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let id = format!("{now_ms:x}-{}", std::process::id());
    let asking: Vec<&aq_policy::RuleMatch> = verdict
        .rules
        .iter()
        .filter(|r| r.action == Decision::Ask)
        .collect();
    let request = Request {
        id: id.clone(),
        argv: argv.to_vec(),
        cwd: cwd.to_string(),
        pid: std::process::id(),
        rules: asking.iter().map(|r| r.id.clone()).collect(),
        why: asking.first().map(|r| r.why.clone()),
        safer: asking.first().and_then(|r| r.safer.clone()),
        created_ms: now_ms,
    };
    queue
        .submit(&request)
        .map_err(|e| format!("cannot file the approval request: {e}"))?;
    eprintln!(
        "aq: waiting for approval of `{}` ({}); answer with `aq approve` in another terminal (timeout {}s)",
        aq_audit::report::display_argv(argv),
        request.rules.join(", "),
        file.approval_timeout_secs
    );
    let answer = queue
        .wait(&id, Duration::from_secs(file.approval_timeout_secs))
        .map_err(|e| format!("waiting for approval failed: {e}"))?;
    let (run, answer_name, by) = match answer {
        Some(a) => {
            if a.answer == Answer::Session {
                let _ = queue.allow_for_session(argv);
            }
            (
                a.answer != Answer::Deny,
                a.answer.as_str().to_string(),
                a.by,
            )
        }
        None => (
            file.unanswered == Decision::Allow,
            "timeout".to_string(),
            format!(
                "policy: unanswered asks {}",
                if file.unanswered == Decision::Allow {
                    "run"
                } else {
                    "are denied"
                }
            ),
        ),
    };
    session::log_event(
        log,
        &file.id,
        EventBody::Approval {
            request: id.clone(),
            argv: argv.to_vec(),
            answer: answer_name.clone(),
            by,
        },
    );
    if run {
        // What the approved command runs is approved with it.
        let analysis = aq_shell::analyze_argv(argv);
        let commands: Vec<Vec<String>> = analysis
            .commands
            .iter()
            .filter(|c| !c.argv.is_empty() && c.argv.iter().all(|w| !w.dynamic))
            .map(|c| c.argv.iter().map(|w| w.text.clone()).collect())
            .collect();
        let _ = queue.grant(&id, &commands);
        return Ok(Some(id));
    }
    let reason = if answer_name == "timeout" {
        format!("no answer within {}s", file.approval_timeout_secs)
    } else {
        "denied".to_string()
    };
    print_refusal(&format!("not approved ({reason})"), argv, verdict);
    Ok(None)
}

fn exec_real(
    name: &str,
    args: &[OsString],
    file: &SessionFile,
    grant: Option<&str>,
) -> Result<u8, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(real) = aq_shim::find_real_program(OsStr::new(name), &path, &file.shim_dir) else {
        eprintln!("aq: {name}: command not found");
        return Ok(EXIT_NOT_FOUND);
    };
    let mut cmd = std::process::Command::new(&real);
    cmd.arg0(name).args(args);
    cmd.env_clear();
    let (passed, _removed) = aq_shim::env_scrub::scrub_env(std::env::vars_os(), &file.env_pass);
    cmd.envs(passed);
    if let Some(g) = grant {
        cmd.env(ENV_GRANT, g);
    }
    let err = cmd.exec();
    eprintln!("aq: {name}: cannot run {}: {err}", real.display());
    Ok(if err.kind() == std::io::ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_BLOCKED
    })
}

/// The refusal message: what, which rule, why, what to do instead.
pub fn print_refusal(what: &str, argv: &[String], verdict: &Verdict) {
    let mut msg = format!("aq: {what}: {}\n", aq_audit::report::display_argv(argv));
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
    eprint!("{msg}");
}

/// Whether `argv0` names a shim (anything but `aq` itself).
pub fn shim_name(argv0: &OsStr) -> Option<String> {
    let name = Path::new(argv0).file_name()?.to_string_lossy().into_owned();
    (name != "aq"
        && !name.starts_with("aq-")
        && !name.starts_with("integration-")
        && name != "agent-quarantine")
        .then_some(name)
}
