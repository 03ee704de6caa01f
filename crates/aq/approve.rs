//! `aq approve`: a human answers the asks of running sessions.
//!
//! It must be a human: `aq approve` refuses to run inside a session's
//! process tree (an agent could otherwise approve itself) and needs a real
//! terminal on stdin and stdout. When the session's own terminal is free
//! (the wrapped command does not read it), `aq run` prompts there instead.

use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aq_shim::approvals::{Answer, AnswerRecord, Queue, Request};

use crate::cli::ApproveArgs;
use crate::exit::ExitCode;
use crate::session::{self, ENV_SESSION_DIR};

pub fn run(args: &ApproveArgs) -> Result<ExitCode, String> {
    refuse_inside_session()?;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err("aq approve needs a real terminal on stdin and stdout: it is how a human, not a program, answers".into());
    }
    let by = format!("aq approve on {}, uid {}", tty_name(), current_uid());
    // While this runs, sessions know someone can answer and let asks wait.
    let _presence = announce_presence();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut answered = 0usize;
    let mut announced = false;
    loop {
        let queues = live_queues(args.session.as_deref())?;
        let mut any = false;
        for (session_id, queue) in &queues {
            for request in queue.pending().map_err(|e| e.to_string())? {
                any = true;
                show(&mut out, session_id, &request);
                let answer = loop {
                    let _ = write!(
                        out,
                        "allow [o]nce, allow for the [s]ession, [d]eny, or s[k]ip? "
                    );
                    let _ = out.flush();
                    let mut line = String::new();
                    if stdin
                        .lock()
                        .read_line(&mut line)
                        .map_err(|e| e.to_string())?
                        == 0
                    {
                        return Ok(ExitCode::Ok);
                    }
                    match line.trim() {
                        "o" | "once" => break Some(Answer::Once),
                        "s" | "session" => break Some(Answer::Session),
                        "d" | "deny" | "n" | "no" => break Some(Answer::Deny),
                        "k" | "skip" | "" => break None,
                        _ => {}
                    }
                };
                if let Some(answer) = answer {
                    match queue.answer(
                        &request.id,
                        &AnswerRecord {
                            answer,
                            by: by.clone(),
                        },
                    ) {
                        Ok(()) => {
                            answered += 1;
                            let _ = writeln!(out, "-> {}", answer.as_str());
                        }
                        Err(e) => {
                            let _ = writeln!(out, "-> too late: {e}");
                        }
                    }
                }
            }
        }
        if args.once && !any {
            if answered == 0 {
                let _ = writeln!(out, "no pending requests");
            }
            return Ok(ExitCode::Ok);
        }
        if !any && !announced {
            let _ = writeln!(
                out,
                "waiting for requests from {} live session(s); Ctrl-C to stop",
                queues.len()
            );
            announced = true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The file `aq approve` holds a shared lock on while it runs.
fn presence_file() -> Option<PathBuf> {
    session::state_root().ok().map(|r| r.join("approvers.lock"))
}

/// Holds a shared lock on the presence file until dropped.
fn announce_presence() -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let path = presence_file()?;
    let _ = std::fs::create_dir_all(path.parent()?);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    // SAFETY: flock on a descriptor we own.
    (unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) } == 0).then_some(f)
}

/// Whether an `aq approve` is running for this user now (it holds the
/// presence lock), so an ask can wait for it.
pub fn approver_attached() -> bool {
    use std::os::fd::AsRawFd;
    let Some(path) = presence_file() else {
        return false;
    };
    let Ok(f) = std::fs::OpenOptions::new().read(true).open(&path) else {
        return false;
    };
    // SAFETY: flock on a descriptor we own; released when `f` closes.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

fn show(out: &mut impl Write, session_id: &str, r: &Request) {
    let _ = writeln!(out, "\nsession {session_id} · pid {} · in {}", r.pid, r.cwd);
    let _ = writeln!(out, "  command: {}", r.argv.join(" "));
    if !r.rules.is_empty() {
        let _ = writeln!(out, "  rule:    {}", r.rules.join(", "));
    }
    if let Some(why) = &r.why {
        let _ = writeln!(out, "  why:     {why}");
    }
    if let Some(safer) = &r.safer {
        let _ = writeln!(out, "  safer:   {safer}");
    }
}

/// Queues of sessions whose supervisor is still running.
fn live_queues(only: Option<&str>) -> Result<Vec<(String, Queue)>, String> {
    let mut out = Vec::new();
    for dir in session::list().map_err(|e| format!("cannot list sessions: {e}"))? {
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if only.is_some_and(|o| !id.starts_with(o)) {
            continue;
        }
        let Ok(file) = session::read_file(&dir) else {
            continue;
        };
        if session::pid_alive(file.supervisor_pid) {
            out.push((id, Queue::new(&dir)));
        }
    }
    Ok(out)
}

/// Refuses when this process descends from a session's supervisor, or
/// carries a session's environment.
fn refuse_inside_session() -> Result<(), String> {
    let refuse = || {
        Err("aq approve cannot run inside an aq session: approvals must come from the user, in a terminal of their own".to_string())
    };
    if std::env::var_os(ENV_SESSION_DIR).is_some() {
        return refuse();
    }
    let ancestors = ancestors();
    let sessions = session::list().unwrap_or_default();
    // Inside the kernel sandbox the parent chain ends at the sandbox's own
    // PID 1 and the environment may be gone, but the queue is not writable.
    if let Some(dir) = sessions.last() {
        let probe = dir
            .join("approvals/answers")
            .join(format!(".writable-{}", std::process::id()));
        match std::fs::File::create(&probe) {
            Ok(_) => {
                let _ = std::fs::remove_file(&probe);
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::PermissionDenied
                    || e.raw_os_error() == Some(libc::EROFS) =>
            {
                return refuse();
            }
            Err(_) => {}
        }
    }
    for dir in sessions {
        if let Ok(file) = session::read_file(&dir)
            && ancestors.contains(&file.supervisor_pid)
            && session::pid_alive(file.supervisor_pid)
        {
            return refuse();
        }
    }
    Ok(())
}

fn ancestors() -> Vec<u32> {
    let mut out = Vec::new();
    let mut pid = std::process::id();
    for _ in 0..256 {
        let ppid = crate::supervisor::parent_of(pid);
        if ppid == 0 {
            break;
        }
        out.push(ppid);
        pid = ppid;
    }
    out
}

fn tty_name() -> String {
    std::fs::read_link("/proc/self/fd/0")
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "a terminal".into())
}

fn current_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

/// Prompts on the session's terminal (`/dev/tty`) while the wrapped command
/// does not use it. Stops when dropped.
pub struct TtyPrompter {
    stop: Arc<AtomicBool>,
}

impl Drop for TtyPrompter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts prompting on `/dev/tty` for this session's requests, if there is a
/// terminal to prompt on.
pub fn spawn_tty_prompter(session_dir: PathBuf) -> Option<TtyPrompter> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || prompt_loop(&session_dir, tty, &flag));
    Some(TtyPrompter { stop })
}

fn prompt_loop(dir: &Path, tty: std::fs::File, stop: &AtomicBool) {
    let queue = Queue::new(dir);
    let mut reader = std::io::BufReader::new(tty.try_clone().expect("dup /dev/tty"));
    let mut out = tty;
    let by = format!("aq run's terminal, uid {}", current_uid());
    while !stop.load(Ordering::Relaxed) {
        for request in queue.pending().unwrap_or_default() {
            show(&mut out, "(this session)", &request);
            let _ = write!(out, "allow [o]nce, allow for the [s]ession, [d]eny? ");
            let _ = out.flush();
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let answer = match line.trim() {
                "o" | "once" | "y" | "yes" => Answer::Once,
                "s" | "session" => Answer::Session,
                _ => Answer::Deny,
            };
            let _ = queue.answer(
                &request.id,
                &AnswerRecord {
                    answer,
                    by: by.clone(),
                },
            );
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}
