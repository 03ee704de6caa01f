//! The exec guard's moving parts in the caller, and what they share.
//!
//! ```text
//! apply_guarded (caller's thread) ── spawns ──> handshake thread (tracer.rs: checks the
//!        │                                         command can be traced, then
//!        │ forks the supervisor as `apply` does     starts the notifier pool, exec_notify.rs)
//!        └─ after the supervisor has exited: finish() stops the pool
//! ```
//!
//! The handshake (a `SOCK_SEQPACKET` pair made before `fork`): the command
//! sends one message carrying the seccomp listener (`SCM_RIGHTS`); the
//! kernel adds its pid as the caller sees it (`SO_PASSCRED`). The handshake
//! thread seizes that pid (and lets it go again) and answers `y`, or `n` with the failed call and
//! errno, which the command reports like any failed setup step.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::SandboxError;
use crate::exec_guard::ExecJudge;

/// State shared by the tracer, the notifier pool and the commit judges.
pub(crate) struct Shared {
    pub(crate) judge: Arc<dyn ExecJudge>,
    /// The command's pid (the caller's PID namespace), 0 before the handshake.
    command_pid: AtomicI32,
    /// Whether the command's own exec has reached the commit check.
    initial_done: AtomicBool,
    /// Why the command's own exec was denied, if it was.
    initial_denial: Mutex<Option<String>>,
    pub(crate) notifier_done: AtomicBool,
    /// Calls the sandbox denies that the notifier answers: number, errno, name.
    refused: Vec<(i64, i32, &'static str)>,
    /// Every exec is judged and traced to its commit (the exec guard);
    /// without it the notifier answers `connect` only.
    pub(crate) trace_execs: bool,
    /// What the socket guard knows of this sandbox.
    pub(crate) sockets: crate::socket_guard::SocketGuard,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn new(
        judge: Arc<dyn ExecJudge>,
        refused: Vec<(i64, i32, &'static str)>,
        trace_execs: bool,
        sockets: crate::socket_guard::SocketGuard,
    ) -> Shared {
        Shared {
            refused,
            trace_execs,
            sockets,
            judge,
            command_pid: AtomicI32::new(0),
            initial_done: AtomicBool::new(false),
            initial_denial: Mutex::new(None),
            notifier_done: AtomicBool::new(false),
        }
    }

    /// The errno and name of a denied call the notifier answers.
    pub(crate) fn refused(&self, nr: i32) -> Option<(i32, &'static str)> {
        self.refused
            .iter()
            .find(|(n, _, _)| *n == i64::from(nr))
            .map(|(_, e, name)| (*e, *name))
    }

    pub(crate) fn set_command(&self, pid: i32) {
        self.command_pid.store(pid, Ordering::Release);
    }

    /// Whether an exec by thread `tid` is the command's own (first) exec.
    pub(crate) fn is_initial(&self, tid: i32) -> bool {
        tid == self.command_pid.load(Ordering::Acquire)
            && !self.initial_done.load(Ordering::Acquire)
    }

    /// At the commit check of `pid`: whether it is the command's own exec
    /// (once only).
    pub(crate) fn commit_is_initial(&self, pid: i32) -> bool {
        pid == self.command_pid.load(Ordering::Acquire)
            && !self.initial_done.swap(true, Ordering::AcqRel)
    }

    pub(crate) fn initial_denied(&self, message: String) {
        lock(&self.initial_denial).get_or_insert(message);
    }
}

/// The caller's half of the exec guard for one sandbox run.
pub(crate) struct ExecGuard {
    shared: Arc<Shared>,
    /// The command's end of the handshake socket, until the fork.
    command_end: Option<OwnedFd>,
    /// The tracer's end, by number: the sandbox's processes close it.
    tracer_end: RawFd,
    /// Written once the sandbox has ended: stops the notifier pool.
    stop: OwnedFd,
    tracer: Option<JoinHandle<()>>,
}

fn setup_error(syscall: &'static str, source: std::io::Error) -> SandboxError {
    SandboxError::Setup {
        boundary: "exec guard",
        syscall,
        path: None,
        source,
    }
}

impl ExecGuard {
    /// Make the handshake socket and start the handshake thread, which waits
    /// for the command.
    pub(crate) fn start(
        judge: Arc<dyn ExecJudge>,
        refused: Vec<(i64, i32, &'static str)>,
        trace_execs: bool,
        sockets: crate::socket_guard::SocketGuard,
    ) -> Result<ExecGuard, SandboxError> {
        let (tracer_end, command_end) =
            crate::fdpass::seqpacket_pair().map_err(|e| setup_error("socketpair", e))?;
        let one: libc::c_int = 1;
        // SAFETY: setsockopt reads one int.
        let r = unsafe {
            libc::setsockopt(
                tracer_end.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PASSCRED,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        };
        if r == -1 {
            return Err(setup_error(
                "setsockopt(SO_PASSCRED)",
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: eventfd takes integer arguments.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if efd == -1 {
            return Err(setup_error("eventfd", std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh fd we own.
        let stop = unsafe { OwnedFd::from_raw_fd(efd) };
        let stop_for_pool = stop.try_clone().map_err(|e| setup_error("dup", e))?;
        let shared = Arc::new(Shared::new(judge, refused, trace_execs, sockets));
        let raw_tracer_end = tracer_end.as_raw_fd();
        let for_tracer = shared.clone();
        let tracer = std::thread::Builder::new()
            .name("aq-exec-tracer".into())
            .spawn(move || crate::tracer::run(for_tracer, tracer_end, stop_for_pool))
            .map_err(|e| setup_error("spawn the exec guard's handshake thread", e))?;
        Ok(ExecGuard {
            shared,
            command_end: Some(command_end),
            tracer_end: raw_tracer_end,
            stop,
            tracer: Some(tracer),
        })
    }

    /// `(command end, tracer end)` of the handshake socket, for the
    /// sandbox's processes (which close the tracer's end at once).
    pub(crate) fn fds(&self) -> (RawFd, RawFd) {
        let command = self.command_end.as_ref().map_or(-1, |f| f.as_raw_fd());
        (command, self.tracer_end)
    }

    /// In the caller after `fork`: close its copy of the command's end, so
    /// the tracer reads EOF if the command never gets as far.
    pub(crate) fn forked(&mut self) {
        self.command_end = None;
    }

    /// After the sandbox has ended (every traced process is gone): stop the
    /// tracer and the notifier pool. Returns the denial of the command's own
    /// exec, if any. Judges still deciding an exec of a process that died are
    /// not waited for; their verdict is dropped.
    pub(crate) fn finish(mut self) -> Option<String> {
        self.shutdown();
        lock(&self.shared.initial_denial).take()
    }

    fn shutdown(&mut self) {
        self.command_end = None;
        let one: u64 = 1;
        // SAFETY: writing 8 bytes to our eventfd.
        unsafe { libc::write(self.stop.as_raw_fd(), (&one as *const u64).cast(), 8) };
        if let Some(t) = self.tracer.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ExecGuard {
    fn drop(&mut self) {
        if self.tracer.is_some() {
            self.shutdown();
        }
    }
}
