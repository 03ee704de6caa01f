//! Who may answer an ask: a human, in a terminal of their own.
//!
//! `aq approve` and `aq watch` both answer asks. Neither may run inside a
//! session's process tree (an agent could otherwise approve itself), and
//! both need a real terminal. While one runs it holds a shared lock on a
//! presence file, so that sessions know a human can answer and let an ask
//! wait for its timeout instead of deciding at once.

use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aq_shim::approvals::{Answer, AnswerRecord, Queue, Request};

pub use crate::error::AnswererRefusal;
use crate::files::{self, ENV_SESSION_DIR};

/// Refuses when this process descends from a live session's supervisor,
/// carries a session's environment, or cannot write a session's approval
/// queue (inside the kernel sandbox, where the parent chain ends at the
/// sandbox's own PID 1). `verb` names the command in the message.
pub fn refuse_inside_session(verb: &str) -> Result<(), AnswererRefusal> {
    refuse_inside_session_because(
        verb,
        "approvals must come from the user, in a terminal of their own",
    )
}

/// [`refuse_inside_session`] with the reason the refusal gives.
pub fn refuse_inside_session_because(verb: &str, because: &str) -> Result<(), AnswererRefusal> {
    let refuse = || {
        Err(AnswererRefusal::InsideSession {
            verb: verb.to_string(),
            because: because.to_string(),
        })
    };
    if std::env::var_os(ENV_SESSION_DIR).is_some() {
        return refuse();
    }
    let ancestors = ancestors();
    // An aq program among the ancestors: whatever the caller's variables
    // say about where the state is (`XDG_STATE_HOME=/nonexistent` hid the
    // session list below), it is inside an aq process's tree.
    if ancestors.iter().any(|&pid| is_aq_program(pid)) {
        return refuse();
    }
    let sessions = files::list().unwrap_or_default();
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
        if let Ok(file) = files::read_file(&dir)
            && ancestors.contains(&file.supervisor_pid)
            && files::pid_alive(file.supervisor_pid)
        {
            return refuse();
        }
    }
    Ok(())
}

/// Refuses unless stdin and stdout are terminals: a human, not a program,
/// answers.
pub fn require_terminal(verb: &str) -> Result<(), AnswererRefusal> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        Ok(())
    } else {
        Err(AnswererRefusal::NotATerminal {
            verb: verb.to_string(),
        })
    }
}

/// Who answers, as the log records it: `"<verb> on /dev/pts/3, uid 1000"`.
pub fn answered_by(verb: &str) -> String {
    format!("{verb} on {}, uid {}", tty_name(), current_uid())
}

/// Whether process `pid` runs aq: the same file as this process, or a
/// program named `aq` or `agent-quarantine`.
fn is_aq_program(pid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
        return false;
    };
    let named_aq = exe
        .file_name()
        .is_some_and(|n| n == "aq" || n == "agent-quarantine");
    let same_file = || {
        let (Ok(theirs), Ok(ours)) = (
            std::fs::metadata(format!("/proc/{pid}/exe")),
            std::fs::metadata("/proc/self/exe"),
        ) else {
            return false;
        };
        theirs.dev() == ours.dev() && theirs.ino() == ours.ino()
    };
    named_aq || same_file()
}

/// The pids above this process, nearest first.
fn ancestors() -> Vec<u32> {
    let mut out = Vec::new();
    let mut pid = std::process::id();
    for _ in 0..256 {
        let ppid = parent_of(pid);
        if ppid == 0 {
            break;
        }
        out.push(ppid);
        pid = ppid;
    }
    out
}

/// A process's parent from `/proc/<pid>/stat` (0 when unknown).
pub fn parent_of(pid: u32) -> u32 {
    let Ok(stat) = std::fs::read_to_string(PathBuf::from(format!("/proc/{pid}/stat"))) else {
        return 0;
    };
    // The command name is in parentheses and may hold spaces: parse after it.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0)
}

/// The terminal on stdin, for the log.
pub(crate) fn tty_name() -> String {
    std::fs::read_link("/proc/self/fd/0")
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "a terminal".into())
}

/// This process's uid.
pub fn current_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

/// Queues of sessions whose supervisor is still running, with their ids;
/// `only` keeps the sessions whose id starts with it.
pub fn live_queues(only: Option<&str>) -> Result<Vec<(String, Queue)>, String> {
    let mut out = Vec::new();
    for dir in files::list().map_err(|e| format!("cannot list sessions: {e}"))? {
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if only.is_some_and(|o| !id.starts_with(o)) {
            continue;
        }
        let Ok(file) = files::read_file(&dir) else {
            continue;
        };
        if files::pid_alive(file.supervisor_pid) {
            out.push((id, Queue::new(&dir)));
        }
    }
    Ok(out)
}

/// The file a human answerer holds a shared lock on while it runs: one
/// for an answerer of every session, one per session prefix for an
/// answerer of some (`aq approve --session ID`).
fn presence_file(only: Option<&str>) -> Option<PathBuf> {
    let name = match only {
        None => "approvers.lock".to_string(),
        Some(p) => format!(
            "approvers-{}.lock",
            p.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
        ),
    };
    files::state_root().ok().map(|r| r.join(name))
}

/// Holds a shared lock on the presence file until dropped: while it is
/// held, sessions know someone can answer and let asks wait.
pub fn announce_presence() -> Option<std::fs::File> {
    announce_presence_for(None)
}

/// [`announce_presence`] for an answerer of the sessions whose id starts
/// with `only` (all when `None`): other sessions do not wait for it.
pub fn announce_presence_for(only: Option<&str>) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let path = presence_file(only)?;
    let _ = std::fs::create_dir_all(path.parent()?);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    // SAFETY: flock on a descriptor we own.
    (unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) } == 0).then_some(f)
}

/// Whether a human answerer (`aq approve`, `aq watch`) of session
/// `session_id` is running for this user now (it holds a presence lock),
/// so an ask can wait for it.
pub(crate) fn approver_attached(session_id: &str) -> bool {
    if locked(presence_file(None)) {
        return true;
    }
    // Answerers of some sessions: `approvers-PREFIX.lock`.
    let Ok(root) = files::state_root() else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(&root) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.strip_prefix("approvers-")
            .and_then(|n| n.strip_suffix(".lock"))
            .is_some_and(|prefix| !prefix.is_empty() && session_id.starts_with(prefix))
            && locked(Some(e.path()))
    })
}

/// Whether someone holds a lock on `path`.
fn locked(path: Option<PathBuf>) -> bool {
    use std::os::fd::AsRawFd;
    let Some(path) = path else {
        return false;
    };
    let Ok(f) = std::fs::OpenOptions::new().read(true).open(&path) else {
        return false;
    };
    // SAFETY: flock on a descriptor we own; released when `f` closes.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// An ask as a human reads it: session, pid, directory, command, rule,
/// why and safer. Every field comes from the session (its command line,
/// its directory, names it chose), so each goes through `inert`: an escape
/// sequence in a command line must not redraw the ask the human answers.
/// The process's command line is what the process says it is (`exec -a`
/// sets it); the destination is the broker's own.
pub fn show_request(out: &mut impl Write, session_id: &str, r: &Request) {
    use aq_audit::inert::inert;
    let argv = r
        .argv
        .iter()
        .map(|w| inert(w))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(
        out,
        "\nsession {} · pid {} · in {}",
        inert(session_id),
        r.pid,
        inert(&r.cwd)
    );
    if let Some(dest) = &r.network {
        let _ = writeln!(
            out,
            "  connect: {} (a host the session's allowlist does not name)",
            inert(dest)
        );
        let _ = writeln!(
            out,
            "  from:    {argv} (the command line the process gives)"
        );
    } else {
        let _ = writeln!(out, "  command: {argv}");
    }
    if !r.rules.is_empty() {
        let _ = writeln!(out, "  rule:    {}", inert(&r.rules.join(", ")));
    }
    if let Some(why) = &r.why {
        let _ = writeln!(out, "  why:     {}", inert(why));
    }
    if let Some(safer) = &r.safer {
        let _ = writeln!(out, "  safer:   {}", inert(safer));
    }
}

/// Prompts on the session's terminal (`/dev/tty`) while the wrapped command
/// does not use it. Stops when dropped.
pub(crate) struct TtyPrompter {
    stop: Arc<AtomicBool>,
}

impl Drop for TtyPrompter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts prompting on `/dev/tty` for this session's requests, if there is a
/// terminal to prompt on.
pub(crate) fn spawn_tty_prompter(session_dir: PathBuf) -> Option<TtyPrompter> {
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
            show_request(&mut out, "(this session)", &request);
            let always = if request.network.is_some() {
                "[a]lways, "
            } else {
                ""
            };
            let _ = write!(
                out,
                "allow [o]nce, allow for the [s]ession, {always}[d]eny? "
            );
            let _ = out.flush();
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let answer = match line.trim() {
                "o" | "once" | "y" | "yes" => Answer::Once,
                "s" | "session" => Answer::Session,
                "a" | "always" if request.network.is_some() => Answer::Always,
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
