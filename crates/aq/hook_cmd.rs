//! `aq hook <agent>`: the agent's native hook before a shell command. Reads
//! its event on stdin, decides the command line with the engine and the
//! user's effective policy for the command's working directory, logs it
//! (one session per agent session), and answers in the agent's contract
//! (`aq_agents::hooks`). An error refuses the command.
//!
//! The decision is made in a forked child with a memory limit, and the
//! parent answers for it: a child that crashes, runs out of memory or
//! takes longer than [`DEADLINE`] refuses the command. An agent treats a
//! hook that dies without answering as a failed hook and runs the command
//! anyway (Claude Code's "non-blocking error"), so a line that made the
//! engine crash would otherwise switch aq off.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aq_agents::hooks::{self, HookAgent, HookAnswer, HookDecision, OnAllow, RunMode};
use aq_audit::{AuditLog, EventBody};
use aq_policy::{Decision, Engine};

use aq_session::{self as session, SessionFile};

/// The largest event read; an agent's command line is far smaller.
const MAX_EVENT: u64 = 4 << 20;

/// How long the child may take to decide (`AQ_HOOK_DEADLINE_MS` sets
/// it, at least 100 ms: setting it can only refuse more).
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

/// The child's address space: the engine needs tens of MiB.
const CHILD_MEMORY: u64 = 2 << 30;

pub fn run(agent: &str, policy_flag: Option<&Path>) -> std::process::ExitCode {
    let Some(agent) = HookAgent::parse(agent) else {
        eprintln!(
            "aq: unknown agent `{agent}` for `aq hook`; one of: {}",
            HookAgent::ALL.map(HookAgent::name).join(", ")
        );
        return crate::exit::ExitCode::Usage.into();
    };
    let (decided, child) = decide_apart(|| decide(agent, policy_flag));
    let answer = match decided {
        Ok(Ok(d)) => {
            // The command runs once the hook answers: the checkpoint first.
            if let Some(c) = &d.checkpoint {
                checkpoint(agent, c);
            }
            d.answer
        }
        Ok(Err(e)) | Err(e) => hooks::answer_error(agent, &e),
    };
    // The child's exit (its memory freed) went on meanwhile.
    drop(child);
    let _ = std::io::stdout().write_all(answer.stdout.as_bytes());
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    std::process::ExitCode::from(answer.exit_code.clamp(0, 255) as u8)
}

/// A child that gave its answer, killed if still there and reaped when
/// dropped: after the checkpoint, which its exit (freeing its memory)
/// overlaps.
struct Reap(libc::pid_t);

impl Drop for Reap {
    fn drop(&mut self) {
        // SAFETY: our own child, killed then reaped into a local.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.0, &mut status, 0);
        }
    }
}

/// Run `f` in a forked child with [`CHILD_MEMORY`] and [`DEADLINE`], and
/// return its answer; `Err` when it did not give one. Where this process
/// already has threads (fork would copy only this one), `f` runs here.
/// The child that answered is returned to be reaped later.
fn decide_apart(
    f: impl FnOnce() -> Result<Decided, String>,
) -> (Result<Result<Decided, String>, String>, Option<Reap>) {
    if !single_threaded() {
        return (Ok(f()), None);
    }
    // Both ends close-on-exec (std's pipe is, on every system).
    let Ok((read_end, write_end)) = std::io::pipe() else {
        return (Ok(f()), None);
    };
    let (read_end, write_end) = (
        std::os::fd::IntoRawFd::into_raw_fd(read_end),
        std::os::fd::IntoRawFd::into_raw_fd(write_end),
    );
    // SAFETY: this process is single-threaded (checked above), so the
    // child may run ordinary code; it leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        // SAFETY: closing our pipe.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return (Ok(f()), None);
    }
    if pid == 0 {
        // SAFETY: closing the child's copy of the read end; setrlimit on
        // plain data.
        unsafe {
            libc::close(read_end);
            let limit = libc::rlimit {
                rlim_cur: CHILD_MEMORY,
                rlim_max: CHILD_MEMORY,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
        }
        let bytes = encode(&f());
        // SAFETY: our pipe; a short write is seen by the parent as no
        // answer. Closed before the exit, which frees this process's
        // memory first and would make the parent wait for it.
        unsafe {
            libc::write(write_end, bytes.as_ptr().cast(), bytes.len());
            libc::close(write_end);
            libc::_exit(0)
        }
    }
    // SAFETY: closing the parent's copy of the write end.
    unsafe { libc::close(write_end) };
    let deadline = std::env::var("AQ_HOOK_DEADLINE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(|ms| std::time::Duration::from_millis(ms.max(100)))
        .filter(|d| *d < DEADLINE)
        .unwrap_or(DEADLINE);
    let got = read_until(read_end, deadline);
    // SAFETY: our pipe.
    unsafe { libc::close(read_end) };
    if let Some(answer) = got.and_then(|b| decode(&b)) {
        return (Ok(answer), Some(Reap(pid)));
    }
    // SAFETY: the child, killed if it is still there, then reaped.
    let status = unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        status
    };
    let why = if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) != libc::SIGKILL {
        format!("the decision ended with signal {}", libc::WTERMSIG(status))
    } else {
        format!(
            "the decision gave no answer within {} ms or ran out of memory",
            deadline.as_millis()
        )
    };
    (Err(why), None)
}

fn single_threaded() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .is_some_and(|n| n.trim() == "1")
    })
}

/// Everything the child writes until it closes the pipe, or `None` past
/// `deadline`.
fn read_until(fd: libc::c_int, deadline: std::time::Duration) -> Option<Vec<u8>> {
    let end = std::time::Instant::now() + deadline;
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let left = end.checked_duration_since(std::time::Instant::now())?;
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, left.as_millis().max(1) as libc::c_int) };
        if r == 0 {
            return None;
        }
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        // SAFETY: reading into buf.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 => return Some(out),
            n if n < 0 => return None,
            n => out.extend_from_slice(&buf[..n as usize]),
        }
    }
}

/// What the child decided: the answer, and the checkpoint the parent takes
/// before answering (the command may run: it was allowed or will be asked).
#[derive(Debug, PartialEq)]
struct Decided {
    answer: HookAnswer,
    checkpoint: Option<CheckpointAsk>,
}

/// A checkpoint of `workspace` for hook session `session` (the agent's
/// session `tag`), before `command`.
#[derive(Debug, PartialEq)]
struct CheckpointAsk {
    workspace: PathBuf,
    session: String,
    tag: String,
    command: String,
    /// `[undo] max_file_mb` and `include` of the policy the child loaded, so
    /// that the parent does not load it again (half a hook's policy work).
    max_file_mb: u64,
    include: Vec<String>,
}

/// The checkpoint before the agent runs the command (asked only when `[undo]`
/// is enabled); its outcome goes to the hook session's log and never
/// changes the answer.
fn checkpoint(agent: HookAgent, c: &CheckpointAsk) {
    let options = aq_undo::Options {
        max_file_bytes: c.max_file_mb.saturating_mul(1 << 20),
        include: c.include.iter().map(Into::into).collect(),
    };
    let (event, store) = match aq_session::checkpoints::open_store(&c.workspace) {
        Ok(store) => {
            let taken = store.take(
                aq_undo::Reason::BeforeCommand,
                &aq_undo::Meta {
                    session: Some(c.session.clone()),
                    command: Some(c.command.clone()),
                },
                &options,
                None,
            );
            (
                aq_session::checkpoints::event(
                    aq_undo::Reason::BeforeCommand,
                    Some(&c.command),
                    &taken,
                ),
                Some(store),
            )
        }
        Err(e) => (
            aq_session::checkpoints::event(
                aq_undo::Reason::BeforeCommand,
                Some(&c.command),
                &Err(e),
            ),
            None,
        ),
    };
    if let Some(event) = event {
        if let EventBody::Checkpoint { error: Some(e), .. } = &event {
            eprintln!("aq: warning: no checkpoint before this command: {e}");
        }
        let tag = Some(c.tag.as_str()).filter(|t| !t.is_empty());
        if let Some(log) = HookSession::open(agent, tag, &c.workspace) {
            let _ = log.event(event);
        }
    }
    if let Some(store) = store {
        aq_session::checkpoints::prune_now_and_then(&store);
    }
}

/// The child's answer on the pipe: a tag (`A` an answer, `E` an error),
/// then for an answer the exit code and two length-prefixed strings (and,
/// when a checkpoint is due, three more: workspace, session, command), for
/// an error one.
fn encode(r: &Result<Decided, String>) -> Vec<u8> {
    let mut out = Vec::new();
    let put = |s: &str, out: &mut Vec<u8>| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    match r {
        Ok(d) => {
            let a = &d.answer;
            out.push(b'A');
            out.extend_from_slice(&a.exit_code.to_le_bytes());
            put(&a.stdout, &mut out);
            put(&a.stderr, &mut out);
            out.push(if d.checkpoint.is_some() { b'1' } else { b'0' });
            if let Some(c) = &d.checkpoint {
                put(&c.workspace.to_string_lossy(), &mut out);
                put(&c.session, &mut out);
                put(&c.tag, &mut out);
                put(&c.command, &mut out);
                put(&c.max_file_mb.to_string(), &mut out);
                put(&c.include.len().to_string(), &mut out);
                for i in &c.include {
                    put(i, &mut out);
                }
            }
        }
        Err(e) => {
            out.push(b'E');
            put(e, &mut out);
        }
    }
    out
}

fn decode(b: &[u8]) -> Option<Result<Decided, String>> {
    fn take_str(b: &[u8], at: &mut usize) -> Option<String> {
        let len = u64::from_le_bytes(b.get(*at..*at + 8)?.try_into().ok()?) as usize;
        *at += 8;
        let s = String::from_utf8(b.get(*at..at.checked_add(len)?)?.to_vec()).ok()?;
        *at += len;
        Some(s)
    }
    let mut at = 1;
    let r = match b.first()? {
        b'A' => {
            let exit_code = i32::from_le_bytes(b.get(1..5)?.try_into().ok()?);
            at = 5;
            let stdout = take_str(b, &mut at)?;
            let stderr = take_str(b, &mut at)?;
            let flag = *b.get(at)?;
            at += 1;
            let checkpoint = if flag == b'1' {
                let workspace = PathBuf::from(take_str(b, &mut at)?);
                let session = take_str(b, &mut at)?;
                let tag = take_str(b, &mut at)?;
                let command = take_str(b, &mut at)?;
                let max_file_mb = take_str(b, &mut at)?.parse().ok()?;
                let count: usize = take_str(b, &mut at)?.parse().ok()?;
                let include = (0..count)
                    .map(|_| take_str(b, &mut at))
                    .collect::<Option<Vec<_>>>()?;
                Some(CheckpointAsk {
                    workspace,
                    session,
                    tag,
                    command,
                    max_file_mb,
                    include,
                })
            } else if flag == b'0' {
                None
            } else {
                return None;
            };
            Ok(Decided {
                answer: HookAnswer {
                    stdout,
                    stderr,
                    exit_code,
                },
                checkpoint,
            })
        }
        b'E' => Err(take_str(b, &mut at)?),
        _ => return None,
    };
    (at == b.len()).then_some(r)
}

fn decide(agent: HookAgent, policy_flag: Option<&Path>) -> Result<Decided, String> {
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
        return Ok(Decided {
            answer: hooks::answer(agent, None, "", OnAllow::Defer, RunMode::Headless),
            checkpoint: None,
        });
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
                return Ok(Decided::only(hooks::answer(
                    agent,
                    Some(HookDecision::Deny),
                    &format!(
                        "aq: refused: this agent session's audit log cannot be written ({e}), and nothing runs unlogged; `aq audit verify {}` shows where it is damaged, and moving that log aside starts a new one",
                        log.id
                    ),
                    on_allow,
                    RunMode::Headless,
                )));
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
    // Only an ask depends on whether someone is there to answer it.
    let mode = if decision == HookDecision::Ask {
        hooks::classify_run(agent, aq_agents::agent_process::find(agent).as_ref())
    } else {
        RunMode::Headless
    };
    // The command may run: allowed, or asked where someone can say yes.
    let may_run = match decision {
        HookDecision::Allow => true,
        HookDecision::Ask => agent.native_ask(mode),
        HookDecision::Deny => false,
    };
    let undo = &loaded.effective.undo;
    let checkpoint = (may_run && undo.enabled)
        .then(|| {
            log.as_ref().map(|l| CheckpointAsk {
                workspace: workspace.clone(),
                session: l.id.clone(),
                tag: event.session.clone().unwrap_or_default(),
                command: event.commands.join("\n"),
                max_file_mb: undo.max_file_mb,
                include: undo.include.clone(),
            })
        })
        .flatten();
    Ok(Decided {
        answer: hooks::answer(agent, Some(decision), reason.trim_end(), on_allow, mode),
        checkpoint,
    })
}

impl Decided {
    fn only(answer: HookAnswer) -> Decided {
        Decided {
            answer,
            checkpoint: None,
        }
    }
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
                            env_scrub: Vec::new(),
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
                mode: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_crosses_the_pipe_whole_or_not_at_all() {
        let answer = HookAnswer {
            stdout: "{\"deny\": \"é\"}".into(),
            stderr: "why\n".into(),
            exit_code: 2,
        };
        let a = Ok(Decided::only(answer.clone()));
        let bytes = encode(&a);
        assert_eq!(decode(&bytes), Some(a));
        let with = Ok(Decided {
            answer,
            checkpoint: Some(CheckpointAsk {
                workspace: "/w".into(),
                session: "hook-claude-x".into(),
                tag: "x".into(),
                command: "rm -rf src".into(),
                max_file_mb: 64,
                include: vec!["build/keep".into(), "a\nb".into()],
            }),
        });
        let long = encode(&with);
        assert_eq!(decode(&long), Some(with));
        let e: Result<Decided, String> = Err("cannot read".into());
        assert_eq!(decode(&encode(&e)), Some(e));
        // A child killed mid-write gives no answer, never half of one (nor
        // an answer without the checkpoint it asked for).
        for bytes in [&bytes, &long] {
            for cut in 0..bytes.len() {
                assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
            }
        }
        assert_eq!(decode(b"Zjunk"), None);
    }
}
