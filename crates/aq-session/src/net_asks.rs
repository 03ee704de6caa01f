//! Asks for network destinations the session's allowlist does not name,
//! and the refusals the process itself is told about.
//!
//! The broker puts a connection to an unlisted host name to
//! [`NetAsker::ask`]. When someone can answer (`aq run`'s own terminal,
//! `aq approve`, `aq watch`, `wait_for_approver`), the ask goes into the
//! session's approval queue with the host, the port, the process and its
//! command line, and the connection waits (up to the ask timeout). Answers:
//! once, for the session (the broker remembers `host:port`), always (the
//! grant `aq allow --net` makes, in the user's file, never a repository's),
//! deny. With nobody to answer, or `[network] unlisted = "refuse"`, it is
//! refused at once, as an unlisted host always was.
//!
//! Many clients show only "CONNECT tunnel failed, response 403" (curl,
//! git), so the refusal and how to allow it are also written to the
//! process's own standard error ([`tell_process`]), where the agent that
//! ran it reads its output.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aq_audit::EventBody;
use aq_net::{UnlistedAnswer, UnlistedRequest};
use aq_policy::UnlistedHosts;
use aq_shim::approvals::{Answer, Request};

use crate::network::PROXY_PORT;
use crate::supervisor::Supervisor;

/// The rule id network asks carry.
pub(crate) const NET_ASK_RULE: &str = "net-unlisted-host";

/// Decides the broker's unlisted hosts for one session.
pub(crate) struct NetAsker {
    supervisor: Arc<Supervisor>,
    unlisted: UnlistedHosts,
    /// One ask at a time per `host:port`: a client that retries, or opens
    /// ten connections at once, waits for the first answer instead of
    /// filing ten asks.
    asking: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Destinations answered for the rest of the session (allowed for the
    /// session or always, or denied): not asked again.
    settled: Mutex<HashMap<String, UnlistedAnswer>>,
    /// Makes request ids unique within the session.
    serial: AtomicU64,
    /// Connections waiting on an ask now (filed or queued behind one for
    /// the same destination).
    waiting: AtomicUsize,
}

/// At most this many connections wait on asks at once; more are refused
/// at once, so that asks cannot take every client slot of the broker (an
/// allowed connection still gets through) or flood whoever answers.
pub(crate) const MAX_WAITING: usize = 8;

impl NetAsker {
    /// An asker for `supervisor`'s session, with the policy's choice.
    pub fn new(supervisor: Arc<Supervisor>, unlisted: UnlistedHosts) -> NetAsker {
        NetAsker {
            supervisor,
            unlisted,
            asking: Mutex::new(HashMap::new()),
            settled: Mutex::new(HashMap::new()),
            serial: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
        }
    }

    /// The broker's callback.
    pub(crate) fn into_asker(self) -> aq_net::UnlistedAsker {
        let me = Arc::new(self);
        Arc::new(move |r: &UnlistedRequest| me.ask(r))
    }

    /// Asks whoever can answer about `r`, or refuses at once.
    pub fn ask(&self, r: &UnlistedRequest) -> UnlistedAnswer {
        let dest = format!("{}:{}", r.host, r.port);
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _waiting = Waiting(&self.waiting);
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= MAX_WAITING {
            if let Some(earlier) = self.settled.lock().ok().and_then(|d| d.get(&dest).cloned()) {
                return earlier;
            }
            return UnlistedAnswer::Refuse(format!(
                "{MAX_WAITING} connections are waiting on asks already"
            ));
        }
        let turn = {
            let mut asking = self.asking.lock().unwrap_or_else(|e| e.into_inner());
            asking.entry(dest.clone()).or_default().clone()
        };
        let _turn = turn.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(earlier) = self.settled.lock().ok().and_then(|d| d.get(&dest).cloned()) {
            return earlier;
        }
        let answer = self.ask_now(r, &dest);
        let remembered = match &answer {
            UnlistedAnswer::Session(_) => Some(answer.clone()),
            UnlistedAnswer::Refuse(why) if why.starts_with("denied by ") => Some(
                UnlistedAnswer::Refuse(format!("{why}, earlier in this session")),
            ),
            _ => None,
        };
        if let (Some(a), Ok(mut settled)) = (remembered, self.settled.lock()) {
            settled.insert(dest, a);
        }
        answer
    }

    fn ask_now(&self, r: &UnlistedRequest, dest: &str) -> UnlistedAnswer {
        let sup = &self.supervisor;
        let dest = dest.to_string();
        if self.unlisted == UnlistedHosts::Refuse {
            return UnlistedAnswer::Refuse(
                "the policy refuses unlisted hosts: [network] unlisted = \"refuse\"".into(),
            );
        }
        // Learn mode never waits: the refusal is logged, and
        // `aq policy suggest` turns it into the `aq allow --net` line.
        if sup.mode == aq_policy::SessionMode::Learn {
            return UnlistedAnswer::Refuse(
                "learn mode: an unlisted host is refused at once and logged for `aq policy suggest`"
                    .into(),
            );
        }
        if sup.headless || sup.nobody_to_answer() {
            return UnlistedAnswer::Refuse(
                "nobody to ask: no `aq approve` or `aq watch` running and no free terminal".into(),
            );
        }
        let process = r.client.and_then(|c| {
            client_process(
                sup.command_pid.load(std::sync::atomic::Ordering::Relaxed),
                c,
                PROXY_PORT,
            )
        });
        let (pid, argv, cwd) = match process {
            Some(pid) => (pid, cmdline(pid), cwd_of(pid)),
            None => (
                0,
                vec!["(a process of the session)".to_string()],
                String::new(),
            ),
        };
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        let id = format!("{now_ms:x}-net-{pid}-{serial}");
        let request = Request {
            id: id.clone(),
            argv,
            cwd,
            pid,
            rules: vec![NET_ASK_RULE.to_string()],
            why: Some(format!(
                "connect to {dest}, which is not on this session's network allowlist{}",
                exe_of(pid)
                    .map(|e| format!("; the process runs {e}"))
                    .unwrap_or_default()
            )),
            safer: Some(format!(
                "answer [a]lways, or run `aq allow --net {dest}`, to allow it in every session"
            )),
            created_ms: now_ms,
            network: Some(dest.clone()),
        };
        let timeout = sup.file.approval_timeout_secs;
        if let Err(e) = sup.queue.submit(&request) {
            return UnlistedAnswer::Refuse(format!("cannot file the ask: {e}"));
        }
        eprintln!(
            "aq: waiting for approval of a connection to {dest}; answer with `aq approve` in another terminal (timeout {timeout}s)"
        );
        let answer = sup.queue.wait(&id, Duration::from_secs(timeout));
        let (result, answer_name, by) = match answer {
            Ok(Some(a)) => {
                let by = a.by.clone();
                let result = match a.answer {
                    Answer::Once => UnlistedAnswer::Once(format!("asked: allowed once by {by}")),
                    Answer::Session => {
                        UnlistedAnswer::Session(format!("asked: allowed for the session by {by}"))
                    }
                    Answer::Always => match grant_always(&dest, &sup.file.profile) {
                        Ok(file) => UnlistedAnswer::Session(format!(
                            "asked: allowed always by {by} (added to {file})"
                        )),
                        Err(e) => {
                            eprintln!(
                                "aq: the host was allowed for this session, but not always: {e}"
                            );
                            UnlistedAnswer::Session(format!(
                                "asked: allowed for the session by {by}"
                            ))
                        }
                    },
                    Answer::Deny => UnlistedAnswer::Refuse(format!("denied by {by}")),
                };
                (result, a.answer.as_str().to_string(), by)
            }
            Ok(None) => (
                UnlistedAnswer::Refuse(format!("no answer within {timeout}s")),
                "timeout".to_string(),
                "nobody, within the ask timeout".to_string(),
            ),
            Err(e) => (
                UnlistedAnswer::Refuse(format!("waiting for an answer failed: {e}")),
                "timeout".to_string(),
                format!("nobody: {e}"),
            ),
        };
        crate::log_event(
            &sup.log,
            &sup.file.id,
            EventBody::Approval {
                request: id,
                argv: vec!["net".to_string(), dest],
                answer: answer_name,
                by,
            },
        );
        result
    }
}

/// Adds `dest` to the user's `[network] allow`, as `aq allow --net` does.
/// Returns the file written.
fn grant_always(dest: &str, profile: &str) -> Result<String, crate::user_grants::UserGrantError> {
    let grant = aq_policy::grants::Grant {
        allow: true,
        read_only: false,
        target: aq_policy::grants::Target::Net(dest.to_ascii_lowercase()),
        profile: profile.to_string(),
        here: None,
    };
    let applied = crate::user_grants::apply(&grant, false)?;
    Ok(applied.file.display().to_string())
}

/// The process (host pid) holding the client end of a connection to the
/// relay: the socket whose local address is `client` and remote address
/// the relay's port, in the network namespace of the session's command
/// (`command_pid`), then the process with a descriptor on that socket.
pub(crate) fn client_process(command_pid: u32, client: SocketAddr, relay_port: u16) -> Option<u32> {
    if command_pid == 0 {
        return None;
    }
    let inode = socket_inode(command_pid, client, relay_port)?;
    let netns = std::fs::read_link(format!("/proc/{command_pid}/ns/net")).ok()?;
    let want = format!("socket:[{inode}]");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{pid}/ns/net"))
            .ok()
            .as_ref()
            != Some(&netns)
        {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path())
                .ok()
                .is_some_and(|l| l.as_os_str() == want.as_str())
            {
                return Some(pid);
            }
        }
    }
    None
}

/// The inode of the TCP socket from `client` to the relay, from the
/// namespace's `/proc/net/tcp` (or `tcp6`).
fn socket_inode(pid: u32, client: SocketAddr, relay_port: u16) -> Option<u64> {
    let (table, local) = match client {
        SocketAddr::V4(a) => (
            "tcp",
            format!(
                "{:08X}:{:04X}",
                u32::from_le_bytes(a.ip().octets()),
                a.port()
            ),
        ),
        SocketAddr::V6(_) => return None,
    };
    let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).ok()?;
    let relay = format!("{relay_port:04X}");
    text.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (l, r, inode) = (f.get(1)?, f.get(2)?, f.get(9)?);
        (*l == local.as_str() && r.ends_with(&format!(":{relay}")))
            .then(|| inode.parse().ok())
            .flatten()
    })
}

fn cmdline(pid: u32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if argv.is_empty() {
        vec![format!("(pid {pid})")]
    } else {
        argv
    }
}

/// The program a process runs, as the kernel has it (not what its command
/// line claims: `exec -a` sets that).
fn exe_of(pid: u32) -> Option<String> {
    (pid != 0)
        .then(|| std::fs::read_link(format!("/proc/{pid}/exe")).ok())
        .flatten()
        .map(|p| p.display().to_string())
}

fn cwd_of(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Writes `text` to the standard error of process `pid`, through a copy of
/// that very descriptor (`pidfd_getfd`: the same open file, so the same
/// access the process has, never more), when it is a pipe, a socket (Node
/// and libuv give a child's stdio as socket pairs) or a terminal: what an
/// agent reads a command's output from; never a regular file or another
/// device. On a thread of its own, after `poll` says there is room: a
/// stalled reader costs that thread, not the broker. Best effort: a process
/// gone, or a descriptor that cannot be taken, leaves only the log's record.
///
/// Not when it is the same file as the standard error of `session_command`
/// (the command `aq run` started, usually the agent): that is where the
/// user, not the model, reads, and an agent's own screen (a terminal UI)
/// must not be written over. A command the agent runs has its output
/// captured by the agent: another pipe, socket or pseudo-terminal.
pub fn tell_process(pid: u32, session_command: u32, text: &str) {
    let mut text = text.as_bytes().to_vec();
    // One write of at most PIPE_BUF is atomic: it is not mixed with the
    // process's own output.
    text.truncate(4000);
    // The copy is taken now, while the process waits for the broker's
    // answer (it may exit as soon as it has it).
    let Some((fd, id)) = stderr_copy(pid) else {
        return;
    };
    if pid == session_command
        || stderr_copy(session_command).is_some_and(|(_, theirs)| theirs == id)
    {
        return;
    }
    // A reader that is not reading gets a second chance on a thread, at
    // most a few at once (a process can fill its pipe and make many
    // connections): past that the note is dropped.
    static LATER: AtomicUsize = AtomicUsize::new(0);
    if write_when_ready(&fd, &text, 0) {
        return;
    }
    if LATER.fetch_add(1, Ordering::AcqRel) >= 8 {
        LATER.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("aq-net-tell".into())
        .spawn(move || {
            write_when_ready(&fd, &text, 2000);
            LATER.fetch_sub(1, Ordering::AcqRel);
        });
    if spawned.is_err() {
        LATER.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A copy of `pid`'s standard error when it is a pipe, a socket or a
/// terminal, with the file's identity (device, inode).
#[cfg(target_os = "linux")]
fn stderr_copy(pid: u32) -> Option<(std::os::fd::OwnedFd, (u64, u64))> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: integer arguments; the descriptors returned are ours.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if pidfd < 0 {
        return None;
    }
    // SAFETY: a fresh descriptor we own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as i32) };
    // SAFETY: as above.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), 2, 0) };
    if got < 0 {
        return None;
    }
    // SAFETY: a fresh descriptor we own (close-on-exec).
    let fd = unsafe { OwnedFd::from_raw_fd(got as i32) };
    // SAFETY: fstat fills the struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    let kind = st.st_mode & libc::S_IFMT;
    // SAFETY: isatty on a descriptor we own.
    let tty = kind == libc::S_IFCHR && unsafe { libc::isatty(fd.as_raw_fd()) } == 1;
    (kind == libc::S_IFIFO || kind == libc::S_IFSOCK || tty)
        .then_some((fd, (st.st_dev as u64, st.st_ino as u64)))
}

/// Elsewhere no call takes a copy of another process's descriptor
/// (`pidfd_getfd` is Linux's): the log's record is all there is.
#[cfg(not(target_os = "linux"))]
fn stderr_copy(_: u32) -> Option<(std::os::fd::OwnedFd, (u64, u64))> {
    None
}

/// Writes `text` once `fd` has room, waiting at most `wait_ms`; whether
/// it was written (or failed for good).
fn write_when_ready(fd: &std::os::fd::OwnedFd, text: &[u8], wait_ms: i32) -> bool {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, a bounded wait.
    let ready = unsafe { libc::poll(&mut p, 1, wait_ms) };
    if ready == 1 && p.revents & libc::POLLOUT != 0 {
        // SAFETY: writes from a live buffer to our copy of the descriptor.
        let _ = unsafe { libc::write(fd.as_raw_fd(), text.as_ptr().cast(), text.len()) };
        return true;
    }
    ready != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The note reaches a child's standard error when it is a pipe or a
    /// socket (read back from the other end), and never a regular file
    /// (which stays empty: the positive controls show the write works).
    #[test]
    fn the_note_reaches_a_pipe_or_a_socket_and_never_a_file() {
        use std::io::Read;
        use std::os::unix::net::UnixStream;
        use std::process::{Command, Stdio};
        let read_all = |mut r: Box<dyn Read>| {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        };
        // A pipe.
        let mut child = Command::new("sleep")
            .arg("1")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        tell_process(
            child.id(),
            0,
            "aq: network: a.example.invalid:443 refused\n",
        );
        let err = child.stderr.take().unwrap();
        assert_eq!(
            read_all(Box::new(err)),
            "aq: network: a.example.invalid:443 refused\n"
        );
        child.wait().unwrap();
        // A socket, as Node gives its children.
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut child = Command::new("sleep")
            .arg("1")
            .stderr(std::os::fd::OwnedFd::from(theirs))
            .spawn()
            .unwrap();
        tell_process(child.id(), 0, "via a socket\n");
        ours.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 64];
        let n = (&ours).read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"via a socket\n");
        child.wait().unwrap();
        // The same pipe as the session's command (this process here):
        // where the user reads, left alone.
        let (r, w) = std::io::pipe().unwrap();
        let w2 = w.try_clone().unwrap();
        let mut agent = Command::new("sleep").arg("1").stderr(w).spawn().unwrap();
        let mut child = Command::new("sleep").arg("1").stderr(w2).spawn().unwrap();
        tell_process(child.id(), agent.id(), "never on the agent's own stderr\n");
        std::thread::sleep(Duration::from_millis(300));
        child.wait().unwrap();
        agent.wait().unwrap();
        assert_eq!(read_all(Box::new(r)), "");
        // A regular file: left alone.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("err.txt");
        let file = std::fs::File::create(&path).unwrap();
        let mut child = Command::new("sleep").arg("1").stderr(file).spawn().unwrap();
        tell_process(child.id(), 0, "never\n");
        std::thread::sleep(Duration::from_millis(300));
        child.wait().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    /// A real connection to a listener on this machine's loopback is found
    /// by its client address (this process's namespace is the command's).
    #[test]
    fn a_client_socket_is_found_by_its_address_in_proc() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let relay = listener.local_addr().unwrap().port();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let me = std::process::id();
        let found = client_process(me, client.local_addr().unwrap(), relay);
        assert_eq!(found, Some(me));
        // Another address, or another relay port, has no socket.
        let other: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(client_process(me, other, relay), None);
        assert_eq!(
            client_process(me, client.local_addr().unwrap(), relay ^ 1),
            None
        );
    }
}
