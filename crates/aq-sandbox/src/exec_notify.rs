//! The exec guard's first check: a seccomp filter that turns every
//! `execve`/`execveat` into a user notification (`SECCOMP_RET_USER_NOTIF`),
//! and the caller's threads that answer them.
//!
//! - [`notify_filter`] (pure): the BPF program, five instructions.
//! - [`apply_attach`] (the command process, last step before `execve`):
//!   install it with a new listener, send the listener and the process's own
//!   credentials to the caller over the handshake socket, then wait until the
//!   caller says it can trace this process.
//! - [`Notifier`] (the caller): a leader/follower pool. One thread at a time
//!   (the leader) polls, receives, judges and follows the exec to its commit
//!   itself: no other thread is woken on the way, which on a small (virtual)
//!   machine is what an exec costs most. A judge that blocks (an "ask") must
//!   not hold up the other execs, so a watchdog thread, ticking every
//!   [`HANDOFF_AFTER`] while execs come, takes leadership from a leader busy
//!   with one notification for longer than that and gives it to a waiting
//!   thread (starting one if none waits): a blocked judge holds one thread
//!   and one exec, and the others wait at most [`HANDOFF_AFTER`] for it.
//!
//! The filter is installed with `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`
//! where the kernel has it (5.19+): once a notification is received, a
//! signal no longer interrupts the waiting `execve` (which would restart it
//! and ask the judge twice); `SIGKILL` still does.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::exec_guard::{ExecVerdict, Fixup, Judged, shell_script_index};
use crate::guard::Shared;
use crate::procfs::{self, ExecCall};
use crate::syscall::{Call, Fail, check};

/// The notification filter: the `calls` of the native architecture notify
/// (`execve` and `execveat` for the exec guard, `connect` for the socket
/// guard, and the sandbox's unconditional denials, answered and recorded by
/// the notifier: see [`notified_calls`]); everything else is allowed here
/// (the sandbox's other filters kill foreign architectures and deny the
/// rest).
///
/// Every system call of the sandbox runs this filter, so the numbers are
/// searched as a binary tree (`jge` on the middle one) down to runs of at
/// most three `jeq`: about six comparisons for any call, not one per number.
///
/// ```text
/// 0: ld  [arch]
/// 1: jeq AUDIT_ARCH_native, 0, ALLOW
/// 2: ld  [nr]
/// 3..: the tree: jge k, right, left / jeq k, NOTIF / ja ALLOW
/// n: ret ALLOW
/// n+1: ret USER_NOTIF
/// ```
pub(crate) fn notify_filter(calls: &[i64]) -> Vec<libc::sock_filter> {
    const LD_ABS_W: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JGE_K: u16 = 0x35;
    const JA: u16 = 0x05;
    const RET_K: u16 = 0x06;
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
    let mut notified: Vec<u32> = calls.iter().map(|nr| *nr as u32).collect();
    notified.sort_unstable();
    notified.dedup();

    /// Where a jump goes, resolved once the program is laid out.
    #[derive(Clone, Copy)]
    enum To {
        Next,
        Allow,
        Notify,
        At(usize),
    }
    struct Ins {
        code: u16,
        k: u32,
        jt: To,
        jf: To,
    }
    fn tree(nrs: &[u32], out: &mut Vec<Ins>) {
        if nrs.len() <= 3 {
            for &nr in nrs {
                out.push(Ins {
                    code: JEQ_K,
                    k: nr,
                    jt: To::Notify,
                    jf: To::Next,
                });
            }
            out.push(Ins {
                code: JA,
                k: 0,
                jt: To::Allow,
                jf: To::Allow,
            });
            return;
        }
        let mid = nrs.len() / 2;
        let at = out.len();
        out.push(Ins {
            code: JGE_K,
            k: nrs[mid],
            jt: To::Next,
            jf: To::Next,
        });
        tree(&nrs[..mid], out);
        let right = out.len();
        out[at].jt = To::At(right);
        tree(&nrs[mid..], out);
    }
    let mut body = Vec::new();
    tree(&notified, &mut body);
    let start = 3;
    let allow = start + body.len();
    let notify = allow + 1;
    let ins = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let mut f = vec![
        ins(LD_ABS_W, 0, 0, 4),
        ins(JEQ_K, 0, (allow - 2) as u8, AUDIT_ARCH),
        ins(LD_ABS_W, 0, 0, 0),
    ];
    for (i, b) in body.iter().enumerate() {
        let here = start + i;
        let target = |to: To| match to {
            To::Next => here + 1,
            To::Allow => allow,
            To::Notify => notify,
            To::At(j) => start + j,
        };
        if b.code == JA {
            f.push(ins(JA, 0, 0, (target(b.jt) - here - 1) as u32));
        } else {
            f.push(ins(
                b.code,
                (target(b.jt) - here - 1) as u8,
                (target(b.jf) - here - 1) as u8,
                b.k,
            ));
        }
    }
    f.push(ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW));
    f.push(ins(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF));
    f
}

/// The calls a sandbox's notification filter sends to the caller: the
/// execs when they are judged, `connect` (the socket guard, always), and
/// the `refused` denials the exec guard records.
pub(crate) fn notified_calls(execs: bool, refused: &[i64]) -> Vec<i64> {
    let mut calls = vec![libc::SYS_connect];
    if execs {
        calls.extend([libc::SYS_execve, libc::SYS_execveat]);
    }
    calls.extend_from_slice(refused);
    calls
}

/// The guard's answer on the handshake socket: `b'y'`, or `b'n'` followed by
/// the failed call and its errno.
pub(crate) const READY: u8 = b'y';
pub(crate) const REFUSED: u8 = b'n';
pub(crate) const REPLY_LEN: usize = 9;

/// In the command process: install the notification filter, send its
/// listener to the caller (the kernel attaches this process's pid, which the
/// caller reads in its own PID namespace), and wait for the tracer. No
/// allocation: `filter` and the socket were prepared before `fork`.
pub(crate) fn apply_attach(
    filter: &[libc::sock_filter],
    socket: libc::c_int,
    diag: Option<libc::c_int>,
    step: u32,
) -> Result<(), Fail> {
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    let install = |flags: libc::c_ulong| {
        // SAFETY: prog points to `filter`, alive for the call.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &prog as *const libc::sock_fprog,
            )
        }
    };
    let mut listener = install(flags | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
    if listener == -1 && crate::syscall::errno() == libc::EINVAL {
        // Before Linux 5.19: no killable wait (a signal may make the judge
        // see the same exec twice).
        listener = install(flags);
    }
    let listener = check(listener, step, Call::Seccomp)? as libc::c_int;
    // The socket guard's sock_diag socket (the sandbox's own network
    // namespace) goes with the listener; the command keeps neither.
    let sent = match diag {
        Some(d) => crate::fdpass::send(socket, &[listener, d], b'h'),
        None => crate::fdpass::send(socket, &[listener], b'h'),
    };
    // SAFETY: closing our copies; the caller has its own now.
    unsafe {
        libc::close(listener);
        if let Some(d) = diag {
            libc::close(d);
        }
    }
    check(sent, step, Call::Sendmsg)?;
    let mut reply = [0u8; REPLY_LEN];
    let n = loop {
        // SAFETY: reading into reply.
        let n = unsafe { libc::recv(socket, reply.as_mut_ptr().cast(), reply.len(), 0) };
        if n == -1 && crate::syscall::errno() == libc::EINTR {
            continue;
        }
        break check(n as libc::c_long, step, Call::Recv)?;
    };
    // SAFETY: the socket is not needed past this point.
    unsafe { libc::close(socket) };
    match (n, reply[0]) {
        (1, READY) => Ok(()),
        (REPLY_LEN_I, REFUSED) => {
            let word = |i: usize| [reply[i], reply[i + 1], reply[i + 2], reply[i + 3]];
            Err(Fail {
                step,
                call: Call::from_u32(u32::from_ne_bytes(word(1))).unwrap_or(Call::ExecGuardRefused),
                errno: i32::from_ne_bytes(word(5)),
            })
        }
        _ => Err(Fail {
            step,
            call: Call::ExecGuardRefused,
            errno: libc::ECONNRESET,
        }),
    }
}

const REPLY_LEN_I: libc::c_long = REPLY_LEN as libc::c_long;

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (not in every libc).
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: libc::c_ulong = 1;

/// How long the leader may be busy with one notification before the
/// watchdog hands leadership to another thread.
pub(crate) const HANDOFF_AFTER: Duration = Duration::from_millis(5);

/// Without a notification for this long, the watchdog stops ticking until
/// the next one (which kicks it awake: one wake-up). It never sleeps while
/// the leader holds a notification, so this bounds only the idle ticks: an
/// agent that execs now and then (Kilo CLI's git, a few a second for half
/// a minute) had the watchdog ticking 200 times a second all along with a
/// second here; now a few ticks after each exec, and an exec loop ticks as
/// before.
const WATCHDOG_IDLE: Duration = Duration::from_millis(20);

/// Most threads the first check runs at once (judges blocked on a human
/// each hold one); past this, further execs wait for one to finish.
const MAX_WORKERS: usize = 64;

/// The caller's side of the first check.
pub(crate) struct Notifier {
    listener: OwnedFd,
    /// Readable once the sandbox has ended: every thread leaves.
    stop: OwnedFd,
    shared: Arc<Shared>,
    /// Who leads, and the pool's threads.
    lead: Mutex<Lead>,
    /// Followers wait here for leadership.
    followers: Condvar,
    /// Written to wake the watchdog from its idle sleep.
    kick: OwnedFd,
}

struct Lead {
    /// Some thread is the leader.
    leading: bool,
    /// The current term of leadership; the watchdog ends one by bumping it.
    term: u64,
    /// Since when the leader handles the notification it holds, if it does.
    busy_since: Option<Instant>,
    /// The last notification received.
    last_activity: Instant,
    /// The watchdog sleeps until kicked.
    watchdog_asleep: bool,
    /// Threads waiting to lead, and all of them.
    idle: usize,
    total: usize,
    done: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Notifier {
    /// Start the pool on `listener`; it ends when `stop` becomes readable or
    /// the filter has no process left.
    pub(crate) fn start(listener: OwnedFd, stop: OwnedFd, shared: Arc<Shared>) {
        // Linux 6.6+: the thread that receives a notification is woken on
        // the CPU of the process that made it, and that process on the CPU
        // of the thread that answers: a round trip without waking another
        // (possibly idle) CPU. Older kernels: EINVAL, and the normal wake-up.
        // SAFETY: the request takes its flags by value.
        unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
            )
        };
        // SAFETY: eventfd takes integer arguments.
        let kick = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if kick == -1 {
            // Without a watchdog a blocking judge would hold up every exec:
            // the listener is dropped, and every exec fails (closed).
            shared.notifier_done.store(true, Ordering::Release);
            return;
        }
        let n = Arc::new(Notifier {
            listener,
            stop,
            shared,
            lead: Mutex::new(Lead {
                leading: false,
                term: 0,
                busy_since: None,
                last_activity: Instant::now(),
                watchdog_asleep: false,
                idle: 0,
                total: 1,
                done: false,
            }),
            followers: Condvar::new(),
            // SAFETY: a fresh fd we own.
            kick: unsafe { OwnedFd::from_raw_fd(kick) },
        });
        let for_watchdog = n.clone();
        let _ = std::thread::Builder::new()
            .name("aq-exec-watchdog".into())
            .spawn(move || watchdog(for_watchdog));
        spawn_worker(n);
    }

    /// Wait for the next notification; `None` when the pool should end.
    fn receive(&self) -> Option<libc::seccomp_notif> {
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.listener.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.stop.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: fds is a valid array of two pollfd.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } == -1 {
                if crate::syscall::errno() == libc::EINTR {
                    continue;
                }
                return None;
            }
            if fds[1].revents != 0 {
                return None;
            }
            if fds[0].revents & libc::POLLIN == 0 {
                // POLLHUP: no process uses the filter any more.
                return None;
            }
            // SAFETY: the kernel requires a zeroed struct.
            let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: notif is a valid seccomp_notif for the kernel to fill.
            let r = unsafe {
                libc::ioctl(
                    self.listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV,
                    &mut notif,
                )
            };
            if r == 0 {
                return Some(notif);
            }
            match crate::syscall::errno() {
                // The caller died before we took it, or a signal.
                libc::ENOENT | libc::EINTR => continue,
                _ => return None,
            }
        }
    }

    /// Whether notification `id` is still pending (its thread is still in
    /// the call, so what was read from it belongs to this exec).
    pub(crate) fn still_pending(&self, id: u64) -> bool {
        // SAFETY: id is a valid u64 for the kernel to read.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
                &id,
            ) == 0
        }
    }

    /// Answer `id`: run the call (`errno` 0), or fail it with `errno`.
    pub(crate) fn respond(&self, id: u64, errno: i32) -> bool {
        let resp = libc::seccomp_notif_resp {
            id,
            val: 0,
            error: -errno,
            flags: if errno == 0 {
                libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32
            } else {
                0
            },
        };
        // SAFETY: resp is a valid seccomp_notif_resp.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &resp,
            ) == 0
        }
    }

    /// Answer `id` with the result of a call the caller made in its
    /// stead (the socket guard's `connect`): `Ok(value)` or `Err(errno)`;
    /// the kernel does not run the call.
    pub(crate) fn respond_result(&self, id: u64, result: Result<i64, i32>) -> bool {
        let (val, error) = match result {
            Ok(v) => (v, 0),
            Err(e) => (0, -e),
        };
        let resp = libc::seccomp_notif_resp {
            id,
            val,
            error,
            flags: 0,
        };
        // SAFETY: resp is a valid seccomp_notif_resp.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &resp,
            ) == 0
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Judge one exec and answer it. An allowed exec is followed to its
    /// commit ([`crate::tracer::commit`]). An exec whose path or argv cannot
    /// be read is let through to the kernel and judged at its commit, if the
    /// kernel runs it.
    fn handle(&self, notif: &libc::seccomp_notif) {
        let tid = notif.pid as i32;
        if i64::from(notif.data.nr) == libc::SYS_connect {
            crate::socket_guard::handle_connect(self, notif);
            return;
        }
        if let Some((errno, name)) = self.shared.refused(notif.data.nr) {
            // A call the sandbox denies: the same answer the filter would
            // give, and the judge hears of it.
            if self.respond(notif.id, errno) {
                self.shared.judge.syscall_refused(tid as u32, name, errno);
            }
            return;
        }
        let Some(call) = ExecCall::from_syscall(notif.data.nr, &notif.data.args) else {
            self.respond(notif.id, 0);
            return;
        };
        let initial = self.shared.is_initial(tid);
        let event = procfs::event_before_exec(tid, &call, initial);
        if !self.still_pending(notif.id) {
            return;
        }
        let Some(event) = event else {
            crate::tracer::commit(self, notif.id, tid, None, None, Fixup::default());
            return;
        };
        match self.shared.judge.judge(&event) {
            ExecVerdict::Allow => {
                let judged = Judged::of(&event);
                let fixup = Fixup {
                    refuse_script: None,
                    scrub_env: if initial {
                        Vec::new()
                    } else {
                        self.shared.judge.scrub_env(&event)
                    },
                };
                crate::tracer::commit(self, notif.id, tid, Some(event.pid), Some(judged), fixup);
            }
            ExecVerdict::Deny { message } => {
                let stderr = procfs::open_stderr(tid, event.pid);
                if self.still_pending(notif.id) {
                    procfs::write_message(stderr, &message);
                }
                if initial {
                    self.shared.initial_denied(message);
                } else if let Some(index) = shell_script_index(&event.executable, &event.argv)
                    .filter(|_| self.shared.judge.refuse_shells_with_status())
                {
                    // A shell's `-c` script: let the shell start and exit
                    // 126 instead, so the caller reads the message and a
                    // shell's status rather than a spawn that failed.
                    let judged = Judged::of(&event);
                    let fixup = Fixup {
                        refuse_script: Some(index),
                        scrub_env: Vec::new(),
                    };
                    crate::tracer::commit(
                        self,
                        notif.id,
                        tid,
                        Some(event.pid),
                        Some(judged),
                        fixup,
                    );
                    return;
                }
                self.respond(notif.id, libc::EACCES);
            }
        }
    }
}

fn spawn_worker(n: Arc<Notifier>) {
    let spawned = std::thread::Builder::new()
        .name("aq-exec-notify".into())
        .spawn(move || worker(n.clone()));
    if spawned.is_err() {
        // The threads already running carry on; execs wait for them.
    }
}

fn worker(n: Arc<Notifier>) {
    loop {
        // Wait to lead.
        let term = {
            let mut lead = lock(&n.lead);
            lead.idle += 1;
            while lead.leading && !lead.done {
                lead = n.followers.wait(lead).unwrap_or_else(|e| e.into_inner());
            }
            lead.idle -= 1;
            if lead.done || n.shared.notifier_done.load(Ordering::Acquire) {
                return;
            }
            lead.leading = true;
            lead.term += 1;
            lead.term
        };
        // Lead: receive and handle, until the watchdog hands leadership on.
        loop {
            let Some(notif) = n.receive() else {
                n.shared.notifier_done.store(true, Ordering::Release);
                let mut lead = lock(&n.lead);
                lead.done = true;
                n.followers.notify_all();
                drop(lead);
                n.kick();
                return;
            };
            let wake_watchdog = {
                let mut lead = lock(&n.lead);
                let now = Instant::now();
                lead.busy_since = Some(now);
                lead.last_activity = now;
                std::mem::take(&mut lead.watchdog_asleep)
            };
            if wake_watchdog {
                n.kick();
            }
            n.handle(&notif);
            let mut lead = lock(&n.lead);
            if lead.term != term {
                break; // a follower leads now
            }
            lead.busy_since = None;
        }
    }
}

impl Notifier {
    fn kick(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes to our eventfd.
        unsafe { libc::write(self.kick.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

/// Ticks every [`HANDOFF_AFTER`] while execs come; hands leadership on
/// when the leader has been busy with one notification for that long.
fn watchdog(n: Arc<Notifier>) {
    loop {
        let asleep = lock(&n.lead).watchdog_asleep;
        let mut fds = [
            libc::pollfd {
                fd: n.stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: n.kick.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let timeout = if asleep {
            -1
        } else {
            HANDOFF_AFTER.as_millis() as libc::c_int
        };
        // SAFETY: fds is a valid array of two pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
        if r == -1 && crate::syscall::errno() != libc::EINTR {
            return;
        }
        if fds[1].revents != 0 {
            let mut count = 0u64;
            // SAFETY: reading 8 bytes into count.
            unsafe { libc::read(n.kick.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
        }
        let mut lead = lock(&n.lead);
        if fds[0].revents != 0 || lead.done {
            lead.done = true;
            n.followers.notify_all();
            return;
        }
        let now = Instant::now();
        if let Some(since) = lead.busy_since
            && now.duration_since(since) >= HANDOFF_AFTER
        {
            // The leader waits for a judge (or a slow exec): let another
            // thread receive meanwhile.
            lead.term += 1;
            lead.leading = false;
            lead.busy_since = None;
            if lead.idle > 0 {
                n.followers.notify_one();
            } else if lead.total < MAX_WORKERS {
                lead.total += 1;
                spawn_worker(n.clone());
            }
        } else if lead.busy_since.is_none()
            && now.duration_since(lead.last_activity) >= WATCHDOG_IDLE
        {
            lead.watchdog_asleep = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a classic BPF program of the kinds `notify_filter` emits on
    /// (arch, nr): its return value.
    fn run(f: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        for _ in 0..1000 {
            let i = f[pc];
            match i.code {
                0x20 => acc = if i.k == 4 { arch } else { nr },
                0x15 | 0x35 => {
                    let hit = if i.code == 0x15 {
                        acc == i.k
                    } else {
                        acc >= i.k
                    };
                    pc += usize::from(if hit { i.jt } else { i.jf });
                }
                0x05 => pc += i.k as usize,
                0x06 => return i.k,
                other => panic!("unexpected code {other:#x}"),
            }
            pc += 1;
        }
        panic!("no return");
    }

    #[test]
    fn notify_filter_notifies_exactly_its_calls_and_jumps_only_forward() {
        #[cfg(target_arch = "x86_64")]
        let native = 62 | 0x8000_0000 | 0x4000_0000;
        #[cfg(target_arch = "aarch64")]
        let native = 183 | 0x8000_0000 | 0x4000_0000;
        let sets: [&[i64]; 3] = [
            &[],
            &[101, 165, 250],
            &[
                101, 155, 165, 166, 175, 176, 246, 248, 249, 250, 272, 298, 308, 310, 313, 320,
                321, 323, 428, 429, 430, 438, 442,
            ],
        ];
        for refused in sets {
            let calls = notified_calls(true, refused);
            let f = notify_filter(&calls);
            let want: Vec<u32> = calls.iter().map(|n| *n as u32).collect();
            for nr in 0..600u32 {
                let got = run(&f, native, nr);
                let expect = if want.contains(&nr) {
                    libc::SECCOMP_RET_USER_NOTIF
                } else {
                    libc::SECCOMP_RET_ALLOW
                };
                assert_eq!(got, expect, "nr {nr} with {refused:?}");
                // Another architecture is never notified here.
                assert_eq!(run(&f, 3 | 0x4000_0000, nr), libc::SECCOMP_RET_ALLOW);
            }
        }
        // Without the exec guard only connect notifies.
        let f = notify_filter(&notified_calls(false, &[]));
        assert_eq!(
            run(&f, native, libc::SYS_connect as u32),
            libc::SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(
            run(&f, native, libc::SYS_execve as u32),
            libc::SECCOMP_RET_ALLOW
        );
        // The 26 numbers are searched, not scanned: a short program.
        let f = notify_filter(&notified_calls(true, sets[2]));
        assert!(f.len() < 55, "{} instructions", f.len());
    }
}
