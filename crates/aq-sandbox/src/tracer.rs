//! The exec guard's second check: one dedicated thread of the caller traces
//! every process of the sandbox and stops each exec at `PTRACE_EVENT_EXEC`.
//!
//! # Why one thread, and what it does
//!
//! Tracing belongs to the thread that attached, so this thread does every
//! `ptrace` call and every `waitpid` (with `__WNOTHREAD`, so it never reaps
//! a child of another thread of the caller, such as the supervisor). It
//! never judges: a judge may wait for a human, and meanwhile every other
//! process of the tree would freeze at its next fork, signal or exit. It
//! only reads what was loaded, resumes at once when that is what the first
//! check allowed, and otherwise hands the decision to a new thread.
//!
//! # The doorbell
//!
//! A thread that decided must wake this one, which sleeps in `waitpid`; no
//! file descriptor reports ptrace stops, so `poll` cannot wait on both. The
//! doorbell is a child process this thread forks and traces, which only
//! sleeps: [`crate::guard::Shared::post`] queues the verdict and sends the
//! doorbell `SIGURG`, whose signal-delivery stop wakes `waitpid` here; the
//! signal is suppressed. The doorbell dies with this thread
//! (`PR_SET_PDEATHSIG`, and `PTRACE_O_EXITKILL`).
//!
//! # Stops and how each is resumed
//!
//! | stop | status | resumed with |
//! |------|--------|--------------|
//! | fork, vfork, clone event | `SIGTRAP \| event << 8` | `PTRACE_CONT` |
//! | new child's first stop, or after `PTRACE_LISTEN` | `PTRACE_EVENT_STOP`, `SIGTRAP` | `PTRACE_CONT` |
//! | group-stop | `PTRACE_EVENT_STOP`, stop signal | `PTRACE_LISTEN` (stays stopped, as without a tracer) |
//! | signal delivery | the signal, no event | `PTRACE_CONT` with the signal |
//! | exec | `PTRACE_EVENT_EXEC` | compare; `PTRACE_CONT`, or judge then `PTRACE_CONT` / `SIGKILL` |
//!
//! After an exec by a thread other than the leader, `waitpid` reports the
//! process id (the thread took the leader's id) and `PTRACE_GETEVENTMSG`
//! the thread's former id, which is what the first check saw.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use crate::exec_guard::ExecVerdict;
use crate::exec_notify::{Notifier, READY, REFUSED, REPLY_LEN};
use crate::guard::{Shared, Wake};
use crate::procfs;
use crate::syscall::Call;

/// `PTRACE_EVENT_STOP` (not in every libc).
const PTRACE_EVENT_STOP: i32 = 128;

const OPTIONS: libc::c_int = libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_EXITKILL;

/// The tracer thread: handshake, then the stop loop until [`Wake::Stop`].
pub(crate) fn run(shared: Arc<Shared>, socket: OwnedFd, stop: OwnedFd) {
    let Some((pid, listener)) = receive_hello(&socket) else {
        return;
    };
    let doorbell = match start_doorbell() {
        Ok(d) => d,
        Err(e) => return refuse(&socket, Call::Fork, e),
    };
    if let Err(e) = ptrace(libc::PTRACE_SEIZE, pid, 0, OPTIONS as usize) {
        stop_doorbell(doorbell);
        return refuse(&socket, Call::PtraceSeize, e);
    }
    shared.queue().doorbell = Some(doorbell);
    shared.set_command(pid);
    Notifier::start(listener, stop, shared.clone());
    reply(&socket, &[READY]);
    drop(socket);
    Tracer {
        shared,
        doorbell,
        waiting: HashMap::new(),
        tickets: 0,
    }
    .run();
    stop_doorbell(doorbell);
}

struct Tracer {
    shared: Arc<Shared>,
    doorbell: libc::pid_t,
    /// Processes stopped at an exec whose verdict a judge thread owes, and
    /// the ticket it will bring (a pid can be reused; a ticket cannot).
    waiting: HashMap<libc::pid_t, u64>,
    tickets: u64,
}

impl Tracer {
    fn run(mut self) {
        if self.drain() {
            self.close();
            return;
        }
        loop {
            let mut status = 0;
            // SAFETY: status is a valid int.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL | libc::__WNOTHREAD) };
            if pid == -1 {
                if crate::syscall::errno() == libc::EINTR {
                    continue;
                }
                // No child or tracee left (cannot happen while the doorbell
                // lives): leaving lets EXITKILL end anything still traced.
                break;
            }
            if pid == self.doorbell {
                if libc::WIFSTOPPED(status) {
                    let _ = ptrace(libc::PTRACE_CONT, pid, 0, 0);
                }
                if self.drain() {
                    break;
                }
                continue;
            }
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                self.waiting.remove(&pid);
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            let sig = libc::WSTOPSIG(status);
            match status >> 16 {
                0 => resume(pid, sig),
                PTRACE_EVENT_STOP if is_stop_signal(sig) => {
                    let _ = ptrace(libc::PTRACE_LISTEN as _, pid, 0, 0);
                }
                libc::PTRACE_EVENT_EXEC => self.on_exec(pid),
                _ => resume(pid, 0),
            }
        }
        self.close();
    }

    fn close(&mut self) {
        let mut q = self.shared.queue();
        q.closed = true;
        q.doorbell = None;
    }

    /// Act on everything posted; `true` once asked to stop.
    fn drain(&mut self) -> bool {
        let items = std::mem::take(&mut self.shared.queue().items);
        let mut stop = false;
        for item in items {
            match item {
                Wake::Stop => stop = true,
                Wake::Verdict { pid, ticket, allow } => {
                    if self.waiting.get(&pid) != Some(&ticket) {
                        continue; // died meanwhile
                    }
                    self.waiting.remove(&pid);
                    if allow {
                        resume(pid, 0);
                    } else {
                        // SAFETY: pid is our tracee, stopped, not yet reaped.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                }
            }
        }
        stop
    }

    /// `pid` stopped at `PTRACE_EVENT_EXEC`: the new program is loaded and
    /// has not run. Let it run if it is what the first check allowed.
    fn on_exec(&mut self, pid: libc::pid_t) {
        let former_tid = event_message(pid).map_or(pid, |t| t as libc::pid_t);
        let allowed = self.shared.take_allowed(former_tid);
        let initial = self.shared.commit_is_initial(pid);
        let loaded = procfs::judged_at_commit(pid);
        if let (Some(allowed), Ok(loaded)) = (&allowed, &loaded)
            && allowed == loaded
        {
            resume(pid, 0);
            return;
        }
        let Ok(event) = loaded.and_then(|l| procfs::event_at_commit(pid, l, initial)) else {
            // What runs cannot be read: it does not run.
            // SAFETY: pid is our stopped tracee.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return;
        };
        // Not what was judged (or never judged): ask again, elsewhere.
        self.tickets += 1;
        let ticket = self.tickets;
        self.waiting.insert(pid, ticket);
        let stderr = procfs::open_stderr(pid, pid as u32);
        let shared = self.shared.clone();
        let judged = std::thread::Builder::new()
            .name("aq-exec-commit".into())
            .spawn(move || {
                let allow = match shared.judge.judge(&event) {
                    ExecVerdict::Allow => true,
                    ExecVerdict::Deny { message } => {
                        procfs::write_message(stderr, &message);
                        if event.initial {
                            shared.initial_denied(message);
                        }
                        false
                    }
                };
                shared.post(Wake::Verdict { pid, ticket, allow });
            });
        if judged.is_err() {
            self.waiting.remove(&pid);
            // SAFETY: pid is our stopped tracee; no judge, no run.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

fn ptrace(req: libc::c_uint, pid: libc::pid_t, addr: usize, data: usize) -> std::io::Result<()> {
    // SAFETY: requests used here take integer addr/data or none.
    let r = unsafe {
        libc::ptrace(
            req,
            pid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    };
    if r == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Resume `pid`, delivering `sig` (0: none). ESRCH (killed meanwhile) is fine.
fn resume(pid: libc::pid_t, sig: i32) {
    let _ = ptrace(libc::PTRACE_CONT, pid, 0, sig as usize);
}

fn event_message(pid: libc::pid_t) -> Option<u64> {
    let mut msg: libc::c_ulong = 0;
    // SAFETY: the kernel writes one c_ulong to msg.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut msg as *mut libc::c_ulong,
        )
    };
    (r != -1).then_some(msg as u64)
}

/// Fork the doorbell: it closes every descriptor, sleeps until killed, and
/// dies with this thread.
fn start_doorbell() -> std::io::Result<libc::pid_t> {
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child only calls async-signal-safe functions, then sleeps.
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: async-signal-safe calls on local data only.
        unsafe {
            // Hold no descriptor of the caller's: a pipe end kept open here
            // would keep its reader waiting for EOF (the sandbox's failure
            // report, or anything else of the caller's) as long as we live.
            if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == -1 {
                for fd in 0..4096 {
                    libc::close(fd);
                }
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != parent {
                libc::_exit(0);
            }
            loop {
                libc::pause();
            }
        }
    }
    if let Err(e) = ptrace(libc::PTRACE_SEIZE, pid, 0, libc::PTRACE_O_EXITKILL as usize) {
        stop_doorbell(pid);
        return Err(e);
    }
    Ok(pid)
}

fn stop_doorbell(pid: libc::pid_t) {
    // SAFETY: our own child; reaped right after.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, libc::__WALL) == -1
            && crate::syscall::errno() == libc::EINTR
        {}
    }
}

/// The command's message: its pid (as this process sees it) and the
/// seccomp listener. `None` on EOF (the sandbox ended before) or nonsense.
fn receive_hello(socket: &OwnedFd) -> Option<(libc::pid_t, OwnedFd)> {
    #[repr(C, align(8))]
    struct Space([u8; 128]);
    let mut space = Space([0; 128]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut pid = None;
    let mut listener = None;
    // SAFETY: msghdr is plain data pointing to buffers alive for the call;
    // control messages are walked with the libc macros within msg_controllen.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.0.as_mut_ptr().cast();
        msg.msg_controllen = space.0.len() as _;
        let n = loop {
            let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n == -1 && crate::syscall::errno() == libc::EINTR {
                continue;
            }
            break n;
        };
        if n <= 0 {
            return None;
        }
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            match ((*cmsg).cmsg_level, (*cmsg).cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_RIGHTS) => {
                    let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>());
                    listener = Some(OwnedFd::from_raw_fd(fd));
                }
                (libc::SOL_SOCKET, libc::SCM_CREDENTIALS) => {
                    let cred =
                        std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::ucred>());
                    pid = Some(cred.pid);
                }
                _ => {}
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    match (pid, listener) {
        (Some(pid), Some(l)) if pid > 0 => Some((pid, l)),
        _ => {
            reply_refusal(socket, Call::ExecGuardRefused, libc::EPROTO);
            None
        }
    }
}

fn refuse(socket: &OwnedFd, call: Call, e: std::io::Error) {
    reply_refusal(socket, call, e.raw_os_error().unwrap_or(libc::EIO));
}

fn reply_refusal(socket: &OwnedFd, call: Call, errno: i32) {
    let mut r = [0u8; REPLY_LEN];
    r[0] = REFUSED;
    r[1..5].copy_from_slice(&(call as u32).to_ne_bytes());
    r[5..9].copy_from_slice(&errno.to_ne_bytes());
    reply(socket, &r);
}

fn reply(socket: &OwnedFd, bytes: &[u8]) {
    // SAFETY: sending from a valid buffer; MSG_NOSIGNAL: no SIGPIPE if the
    // command is gone.
    unsafe {
        libc::send(
            socket.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL,
        )
    };
}
