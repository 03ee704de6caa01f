//! File accesses Landlock refused the session's command, read from the
//! kernel's audit log and logged as `file_refused` events, so `aq audit`
//! can say what was refused and the `aq allow` line that would permit it.
//!
//! The kernel reports a denial (Landlock ABI 7) only where audit is on, to
//! readers with `CAP_AUDIT_READ` (root) on the `AUDIT_NLGRP_READLOG`
//! netlink group, and for a domain made with
//! `LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON` (the sandbox asks for it only
//! when this watch runs: [`aq_sandbox::SandboxSpec::log_denials`]). Each
//! `LANDLOCK_ACCESS` record (1423) names the domain that refused; the domain's
//! first record comes with a `LANDLOCK_DOMAIN` record (1424) naming the pid
//! that made it: the session's command, whose pid the exec guard learns at
//! its first exec. Records of other domains are left alone.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::supervisor::Supervisor;

const NETLINK_AUDIT: libc::c_int = 9;
const AUDIT_GET: u16 = 1000;
const AUDIT_NLGRP_READLOG: u32 = 1;
const AUDIT_LANDLOCK_ACCESS: u16 = 1423;
const AUDIT_LANDLOCK_DOMAIN: u16 = 1424;

/// The watch, from the question whether the kernel's audit is on to its
/// end ([`DenialWatch::stop`]).
///
/// The kernel answers `AUDIT_GET` from a thread it creates for each
/// request, and the asker waits for that thread to be made and run: 1 to
/// 4 ms on a 2-vCPU VM, on the session's start path. So the question is
/// asked on the watch's own thread as soon as the profile is known
/// ([`DenialWatch::begin`]), and the answer is waited for only when the
/// sandbox is planned ([`DenialWatch::is_on`]).
pub(crate) struct DenialWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The answer, once the thread gives it: whether the watch runs.
    answer: std::sync::Mutex<Answer>,
    /// Where the supervisor goes to the thread, once it exists.
    supervisor: Option<std::sync::mpsc::Sender<Arc<Supervisor>>>,
}

/// The thread's answer, awaited once.
enum Answer {
    Awaited(std::sync::mpsc::Receiver<bool>),
    Known(bool),
}

impl DenialWatch {
    /// Starts asking, when this process could read the audit log (root)
    /// and `wanted` (a sandboxed, guarded session); `None` otherwise
    /// (nothing is switched on).
    pub fn begin(wanted: bool) -> Option<DenialWatch> {
        // SAFETY: geteuid cannot fail.
        if !wanted || unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (answer_tx, answer_rx) = std::sync::mpsc::channel();
        let (supervisor_tx, supervisor_rx) = std::sync::mpsc::channel::<Arc<Supervisor>>();
        let thread = std::thread::Builder::new()
            .name("aq-denials".into())
            .spawn(move || {
                let socket = audit_enabled()
                    .then(|| netlink(AUDIT_NLGRP_READLOG).ok())
                    .flatten();
                let _ = answer_tx.send(socket.is_some());
                // The supervisor comes once the session has one; without
                // it (the session stopped first) the watch ends here.
                if let (Some(socket), Ok(supervisor)) = (socket, supervisor_rx.recv()) {
                    watch(socket, &supervisor, &flag);
                }
            })
            .ok()?;
        Some(DenialWatch {
            stop,
            thread: Some(thread),
            answer: std::sync::Mutex::new(Answer::Awaited(answer_rx)),
            supervisor: Some(supervisor_tx),
        })
    }

    /// Hands the watch the supervisor whose command's refusals it logs.
    pub fn attach(mut self, supervisor: Arc<Supervisor>) -> DenialWatch {
        if let Some(tx) = self.supervisor.take() {
            let _ = tx.send(supervisor);
        }
        self
    }

    /// Whether the watch runs (audit is on and its socket was bound),
    /// waiting for the answer the first time.
    pub fn is_on(&self) -> bool {
        let mut answer = self.answer.lock().unwrap_or_else(|e| e.into_inner());
        let on = match &*answer {
            Answer::Known(on) => return *on,
            Answer::Awaited(rx) => rx.recv().unwrap_or(false),
        };
        *answer = Answer::Known(on);
        on
    }

    /// Reads what the kernel still has for a moment (when the watch runs),
    /// then ends.
    pub fn stop(mut self) {
        if self.is_on() {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stop.store(true, Ordering::Relaxed);
        // Without a supervisor handed over, the thread ends at once.
        self.supervisor.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A netlink audit socket, joined to `groups`, with a short receive timeout.
fn netlink(groups: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: plain socket calls on an fd we own; sockaddr_nl is zeroed and
    // filled in before bind.
    unsafe {
        let fd = libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_AUDIT,
        );
        if fd == -1 {
            return Err(std::io::Error::last_os_error());
        }
        let fd = OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_nl = std::mem::zeroed();
        addr.nl_family = libc::AF_NETLINK as u16;
        addr.nl_groups = groups;
        if libc::bind(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        ) == -1
        {
            return Err(std::io::Error::last_os_error());
        }
        let tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 200_000,
        };
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        );
        Ok(fd)
    }
}

/// Whether the kernel's audit is on (`AUDIT_GET`).
fn audit_enabled() -> bool {
    let Ok(fd) = netlink(0) else {
        return false;
    };
    let mut req = [0u8; 16];
    req[0..4].copy_from_slice(&16u32.to_ne_bytes());
    req[4..6].copy_from_slice(&AUDIT_GET.to_ne_bytes());
    req[6..8].copy_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    // SAFETY: sending a buffer we own on our socket (to the kernel).
    if unsafe { libc::send(fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) } == -1 {
        return false;
    }
    let mut buf = [0u8; 4096];
    for _ in 0..4 {
        // SAFETY: receiving into a buffer we own.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 24 {
            return false;
        }
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        if kind == AUDIT_GET {
            // struct audit_status: mask, then enabled.
            return u32::from_ne_bytes([buf[20], buf[21], buf[22], buf[23]]) != 0;
        }
    }
    false
}

fn watch(socket: OwnedFd, supervisor: &Supervisor, stop: &AtomicBool) {
    let mut ours: HashSet<String> = HashSet::new();
    let mut others: HashSet<String> = HashSet::new();
    let mut waiting: HashMap<String, Vec<(String, String)>> = HashMap::new();
    let mut buf = vec![0u8; 65536];
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: receiving into a buffer we own.
        let n = unsafe { libc::recv(socket.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 16 {
            continue;
        }
        let n = n as usize;
        let len = (u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize).min(n);
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        let text = String::from_utf8_lossy(&buf[16.min(len)..len]).into_owned();
        let Some(domain) = field(&text, "domain") else {
            continue;
        };
        match kind {
            AUDIT_LANDLOCK_DOMAIN if field(&text, "status").as_deref() == Some("allocated") => {
                let creator = field(&text, "pid").and_then(|p| p.parse::<u32>().ok());
                let command = supervisor.command_pid.load(Ordering::Relaxed);
                if command != 0 && creator == Some(command) {
                    for (path, access) in waiting.remove(&domain).unwrap_or_default() {
                        supervisor.record_file_refused(&path, &access);
                    }
                    ours.insert(domain);
                } else {
                    waiting.remove(&domain);
                    others.insert(domain);
                }
            }
            AUDIT_LANDLOCK_ACCESS => {
                let (Some(path), Some(access)) = (field(&text, "path"), field(&text, "blockers"))
                else {
                    continue;
                };
                if ours.contains(&domain) {
                    supervisor.record_file_refused(&path, &access);
                } else if !others.contains(&domain) {
                    // Its domain record comes right after it.
                    waiting.entry(domain).or_default().push((path, access));
                }
            }
            _ => {}
        }
    }
}

/// `key=value` of an audit record: a quoted value, a hex-encoded one (the
/// kernel writes untrusted strings with spaces or quotes that way), or a word.
fn field(text: &str, key: &str) -> Option<String> {
    let start = text
        .match_indices(&format!("{key}="))
        .find(|(i, _)| *i == 0 || text.as_bytes()[i - 1] == b' ')?
        .0
        + key.len()
        + 1;
    let rest = &text[start..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.split('"').next().map(String::from);
    }
    let word = rest.split_whitespace().next().unwrap_or_default();
    if key == "path" && word.len().is_multiple_of(2) && word.chars().all(|c| c.is_ascii_hexdigit())
    {
        let bytes: Option<Vec<u8>> = (0..word.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&word[i..i + 2], 16).ok())
            .collect();
        return bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
    }
    Some(word.to_string())
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_read_quoted_hex_or_plain() {
        let access = r#"audit(1796067870.794:1053): domain=1538794a9 blockers=fs.make_reg path="/tmp" dev="vda" ino=246951"#;
        assert_eq!(field(access, "domain").as_deref(), Some("1538794a9"));
        assert_eq!(field(access, "blockers").as_deref(), Some("fs.make_reg"));
        assert_eq!(field(access, "path").as_deref(), Some("/tmp"));
        let spaced = "domain=1 blockers=fs.write_file path=2F746D702F612062";
        assert_eq!(field(spaced, "path").as_deref(), Some("/tmp/a b"));
        let domain =
            r#"domain=1538794a9 status=allocated mode=enforcing pid=18697 uid=0 exe="/usr/bin/sh""#;
        assert_eq!(field(domain, "pid").as_deref(), Some("18697"));
        assert_eq!(field(domain, "status").as_deref(), Some("allocated"));
        assert_eq!(field(domain, "missing"), None);
    }
}
