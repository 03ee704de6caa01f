//! The exec guard's second check: the thread that answered an exec's
//! seccomp notification traces that one thread, just across its exec, and
//! stops it at `PTRACE_EVENT_EXEC`.
//!
//! # Tracing one exec at a time
//!
//! Nothing but an exec needs a stop: the seccomp filter sends every
//! `execve`/`execveat` of the tree to the caller first, whoever makes it.
//! So a notifier thread that lets an exec go on ([`commit`]):
//!
//! 1. `PTRACE_SEIZE`s the calling thread (options `TRACEEXEC | EXITKILL`)
//!    while it still waits in the notification (so it is that thread: a
//!    pending notification means it is alive and in this call);
//! 2. answers `CONTINUE`, then `PTRACE_INTERRUPT`s it: a successful exec stops
//!    at `PTRACE_EVENT_EXEC` first (the exec never returns to user mode
//!    before that stop), a failed one stops on its way back to user mode;
//! 3. at the exec stop (new image loaded, one thread, nothing run) compares
//!    what was loaded with what was judged and `PTRACE_DETACH`es it, or has it
//!    judged again, or kills it; at any other stop it detaches (delivering a
//!    signal it was stopped for).
//!
//! Forks, clones, signals and exits of the tree never stop: before, every one
//! of them was a round trip to one tracer thread. The trace is per thread and
//! belongs to the thread that seized (ptrace requests are only accepted from
//! it), so each exec is followed by the notifier thread that answered it; no
//! thread has to wake another. It waits with `__WNOTHREAD`, so it never reaps
//! a child of another thread of the caller.
//!
//! The thread that receives the handshake (`run`) only checks that the
//! command can be traced at all (seize, interrupt, detach), so a kernel that
//! forbids it (`ptrace_scope`) fails the sandbox at setup, then starts the
//! notifier pool and ends.
//!
//! After an exec by a thread other than the leader, `waitpid` reports the
//! process id (the thread took the leader's id) and `PTRACE_GETEVENTMSG`
//! the thread's former id, which is what the first check saw.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use crate::exec_guard::{ExecVerdict, Fixup, Judged};
use crate::exec_notify::{Notifier, READY, REFUSED, REPLY_LEN};
use crate::guard::Shared;
use crate::procfs;
use crate::syscall::{Call, ptrace};

const OPTIONS: libc::c_int = libc::PTRACE_O_TRACEEXEC | libc::PTRACE_O_EXITKILL;

/// The handshake thread: receive the listener, check the command can be
/// traced, answer the command, start the notifier pool.
pub(crate) fn run(shared: Arc<Shared>, socket: OwnedFd, stop: OwnedFd) {
    let Some((pid, listener, diag)) = receive_hello(&socket) else {
        return;
    };
    if shared.trace_execs {
        if let Err(e) = ptrace(libc::PTRACE_SEIZE, pid, 0, OPTIONS as usize) {
            return refuse(&socket, Call::PtraceSeize, e);
        }
        // The command waits in `recv` for our answer: stop it and let it go.
        release(pid);
    }
    // The socket guard takes the command's descriptors (`pidfd_getfd`,
    // which needs what ptrace needs): a kernel that forbids it fails here,
    // at setup, not at the first connect.
    if let Err(e) = check_descriptors_can_be_taken(pid) {
        return refuse(&socket, Call::PidfdGetfd, e);
    }
    if let Err(e) = shared.sockets.attach(pid, diag) {
        return refuse(&socket, Call::SocketGuard, e);
    }
    shared.set_command(pid);
    // The command may go on at once: its first exec's notification waits
    // in the kernel until a notifier receives it, so the pool's threads
    // are made while the command makes its way to that exec.
    reply(&socket, &[READY]);
    Notifier::start(listener, stop, shared);
}

/// Interrupt a seized thread that is not stopped, and detach at its stop.
fn release(pid: libc::pid_t) {
    let _ = ptrace(libc::PTRACE_INTERRUPT as _, pid, 0, 0);
    loop {
        let mut status = 0;
        // SAFETY: status is a valid int.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if r == -1 && crate::syscall::errno() == libc::EINTR {
            continue;
        }
        if r == -1 || !libc::WIFSTOPPED(status) {
            return; // gone
        }
        let sig = match status >> 16 {
            0 => libc::WSTOPSIG(status),
            _ => 0,
        };
        if detach(pid, sig) {
            return;
        }
        // Killed since it stopped: reap its exit (next turn).
    }
}

/// How long a seize waits for a sibling worker to let go of the thread.
const SEIZE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Seizes `tid` for the commit of notification `id`; `false` (the exec
/// answered or gone) when it cannot. `execvp` walking the `PATH` makes one
/// exec attempt after another from the same thread: the worker that let the
/// last (failed) attempt go may still be tracing the thread when the next
/// notification arrives, and a second tracer gets `EPERM`. That worker lets
/// go at the thread's next stop, so `EPERM` is retried while the exec waits.
fn seize(n: &Notifier, id: u64, tid: i32) -> bool {
    let start = std::time::Instant::now();
    loop {
        let Err(e) = ptrace(libc::PTRACE_SEIZE, tid, 0, OPTIONS as usize) else {
            return true;
        };
        let errno = e.raw_os_error().unwrap_or(libc::EPERM);
        if errno == libc::EPERM && start.elapsed() < SEIZE_WAIT && n.still_pending(id) {
            std::thread::sleep(std::time::Duration::from_micros(200));
            continue;
        }
        // Cannot follow it to its commit: it does not run.
        if errno != libc::ESRCH {
            n.respond(id, libc::EACCES);
        }
        return false;
    }
}

/// The exec of thread `tid` (notification `id`) may go on: trace it across
/// the exec, and let the new program run only if it is what was `judged`
/// (`None`: the first check could not read it, so judge it now).
pub(crate) fn commit(
    n: &Notifier,
    id: u64,
    tid: i32,
    tgid: Option<u32>,
    judged: Option<Judged>,
    fixup: Fixup,
) {
    if !seize(n, id, tid) {
        return;
    }
    if !n.still_pending(id) {
        // Gone meanwhile: `tid` may be someone else now.
        release(tid);
        return;
    }
    if !n.respond(id, 0) {
        release(tid);
        return;
    }
    let _ = ptrace(libc::PTRACE_INTERRUPT as _, tid, 0, 0);
    // A leader keeps its id; a non-leader thread takes its leader's at exec,
    // so it is waited for among this thread's tracees.
    let wait_for = if tgid == Some(tid as u32) { tid } else { -1 };
    loop {
        let mut status = 0;
        // SAFETY: status is a valid int.
        let pid = unsafe { libc::waitpid(wait_for, &mut status, libc::__WALL | libc::__WNOTHREAD) };
        if pid == -1 {
            if crate::syscall::errno() == libc::EINTR {
                continue;
            }
            return; // gone (released by a sibling's exec)
        }
        if !libc::WIFSTOPPED(status) {
            return; // exited or killed
        }
        match status >> 16 {
            libc::PTRACE_EVENT_EXEC => {
                if at_exec(n, pid, tid, judged.as_ref(), &fixup) {
                    return;
                }
                // Killed: reap it.
            }
            0 => {
                // A signal on the way back from a failed exec.
                if detach(pid, libc::WSTOPSIG(status)) {
                    return;
                }
            }
            _ => {
                // The interrupt (the exec failed or is restarted), a group
                // stop (it stays stopped, untraced): done.
                if detach(pid, 0) {
                    return;
                }
            }
        }
    }
}

/// Detach from `pid`, stopped, delivering `sig`. `false` when it was killed
/// since it stopped (a `SIGKILL` ends any ptrace stop): then it must still be
/// reaped here, since the exit of a traced process is reported to its tracer
/// first, and its parent would wait for it forever.
fn detach(pid: libc::pid_t, sig: libc::c_int) -> bool {
    ptrace(libc::PTRACE_DETACH, pid, 0, sig as usize).is_ok()
}

/// `pid` stopped at `PTRACE_EVENT_EXEC`: the new program is loaded and has
/// not run. Detach if it is what was judged, or if the judge allows it now;
/// else kill it. `true` when detached, `false` when killed (by us or
/// meanwhile: to be reaped).
fn at_exec(
    n: &Notifier,
    pid: libc::pid_t,
    tid: i32,
    judged: Option<&Judged>,
    fixup: &Fixup,
) -> bool {
    let former_tid = event_message(pid).map_or(pid, |t| t as libc::pid_t);
    let shared = n.shared();
    let initial = shared.commit_is_initial(pid);
    let loaded = procfs::judged_at_commit(pid);
    if let (Some(judged), Ok(loaded)) = (judged, &loaded)
        && former_tid == tid
        && judged == loaded
    {
        if apply_fixup(pid, &loaded.argv, fixup).is_err() {
            // SAFETY: pid is our stopped tracee: what cannot be fixed does not run.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return false;
        }
        return let_run(pid, initial);
    }
    if fixup.refuse_script.is_some() {
        // A refused exec that is not what was refused: it does not run either.
        // SAFETY: pid is our stopped tracee.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return false;
    }
    let Ok(event) = loaded.and_then(|l| procfs::event_at_commit(pid, l, initial)) else {
        // What runs cannot be read: it does not run.
        // SAFETY: pid is our stopped tracee.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return false;
    };
    // Not what was judged (or never judged): ask again, on another thread,
    // so that a judge waiting for a human does not keep a process that
    // dies meanwhile from being reaped (and the sandbox from ending).
    let stderr = procfs::open_stderr(pid, pid as u32);
    let (tx, rx) = std::sync::mpsc::channel();
    let for_judge = shared.clone();
    let judging = std::thread::Builder::new()
        .name("aq-exec-commit".into())
        .spawn(move || {
            let allow = match for_judge.judge.judge(&event) {
                ExecVerdict::Allow => {
                    let scrub = Fixup {
                        refuse_script: None,
                        scrub_env: if event.initial {
                            Vec::new()
                        } else {
                            for_judge.judge.scrub_env(&event)
                        },
                    };
                    apply_fixup(event.pid as i32, &event.argv, &scrub).is_ok()
                }
                ExecVerdict::Deny { message } => {
                    procfs::write_message(stderr, &message);
                    if event.initial {
                        for_judge.initial_denied(message);
                    }
                    false
                }
            };
            let _ = tx.send(allow);
        });
    if judging.is_err() {
        // SAFETY: pid is our stopped tracee; no judge, no run.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return false;
    }
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(true) => return let_run(pid, initial),
            Ok(false) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                // SAFETY: pid is our stopped tracee.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return false;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                // Killed meanwhile (the sandbox ended)? Reap it and leave
                // the judge's verdict to nobody.
                let mut status = 0;
                // SAFETY: status is a valid int.
                let r = unsafe {
                    libc::waitpid(
                        pid,
                        &mut status,
                        libc::WNOHANG | libc::__WALL | libc::__WNOTHREAD,
                    )
                };
                if r == -1 || (r == pid && !libc::WIFSTOPPED(status)) {
                    return true;
                }
            }
        }
    }
}

/// Lets the judged program of `pid`, stopped at its exec, start: in a Landlock
/// domain nested in its parent's unless it is the command's own exec
/// ([`crate::nest`]). What cannot be nested does not run. `true` when
/// detached, `false` when killed (to be reaped).
fn let_run(pid: libc::pid_t, initial: bool) -> bool {
    if initial {
        return detach(pid, 0);
    }
    match crate::nest::nest_domain(pid) {
        Ok(signals) => {
            let mut signals = signals.into_iter();
            let detached = detach(pid, signals.next().unwrap_or(0));
            for sig in signals {
                // SAFETY: signalling our former tracee with a signal it was sent.
                unsafe { libc::kill(pid, sig) };
            }
            detached
        }
        Err(_) => {
            // SAFETY: pid is our stopped tracee.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            false
        }
    }
}

/// Applies `fixup` to the stopped new image of `pid`.
fn apply_fixup(
    pid: libc::pid_t,
    argv: &[std::ffi::OsString],
    fixup: &Fixup,
) -> std::io::Result<()> {
    if let Some(index) = fixup.refuse_script {
        procfs::replace_arg(pid, argv, index, crate::exec_guard::REFUSAL_SCRIPT)?;
    }
    procfs::scrub_env(pid, &fixup.scrub_env)?;
    Ok(())
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

/// `pidfd_getfd` of the command's standard input: what the socket guard
/// does at each `connect`. A closed descriptor (EBADF) still shows the call
/// is permitted.
fn check_descriptors_can_be_taken(pid: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: integer arguments; the fd returned is ours.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: integer arguments.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd as i32, 0, 0) };
    let err = std::io::Error::last_os_error();
    // SAFETY: closing our fds.
    unsafe {
        libc::close(pidfd as i32);
        if got >= 0 {
            libc::close(got as i32);
        }
    }
    match (got, err.raw_os_error()) {
        (g, _) if g >= 0 => Ok(()),
        (_, Some(libc::EBADF)) => Ok(()),
        _ => Err(err),
    }
}

/// The command's message: its pid (as this process sees it), the seccomp
/// listener and, with the sandbox's own network, the socket guard's diag
/// socket. `None` on EOF (the sandbox ended before) or nonsense.
fn receive_hello(socket: &OwnedFd) -> Option<(libc::pid_t, OwnedFd, Option<OwnedFd>)> {
    let hello = crate::fdpass::receive(socket)
        .ok()
        .filter(|r| r.bytes > 0)?;
    let pid = hello.pid;
    let mut fds = hello.fds.into_iter();
    let listener = fds.next();
    let diag = fds.next();
    match (pid, listener) {
        (Some(pid), Some(l)) if pid > 0 => Some((pid, l, diag)),
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
