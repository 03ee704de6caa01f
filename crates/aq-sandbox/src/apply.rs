//! The flat setup sequence: fork the supervisor, run the plan's steps in order
//! across three processes, exec the command, relay its status.
//!
//! Who runs what (see [`crate::plan`] for why in this order):
//!
//! ```text
//! caller: [mkdir cgroup aq-<pid>-<n>, limits]  (removed after the sandbox ends)
//! caller ── fork ──> supervisor: pdeathsig, [join cgroup], unshare(user,mnt,pid,ipc[,net]), id maps, lo up
//!                      └─ fork ──> init (PID 1): private mounts, /proc, PID cap, masks, read-only binds
//!                                    └─ fork ──> command: rlimits, no_new_privs, Landlock,
//!                                                drop capabilities, seccomp filter,
//!                                                [exec guard: notify filter, handshake], execve
//! caller: [exec guard: handshake thread checks it can trace the command,
//!          notifier threads judge each exec and trace it across its commit]
//! ```
//!
//! Failures before `execve` are written as a [`Fail`] record to a close-on-exec
//! pipe; the caller reads it and returns a [`SandboxError::Setup`] naming the
//! boundary, the call and the path. Seeing EOF with no record means `execve`
//! succeeded. The supervisor and init exit with the command's code (128 + the
//! signal number when it was killed by a signal, as shells report it).

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;

use landlock::RulesetCreated;

use crate::cgroup::{self, ChildCgroup};
use crate::error::SandboxError;
use crate::exec_guard::ExecJudge;
use crate::facts::{HostFacts, PathKind};
use crate::guard::ExecGuard;
use crate::mounts::{self, MaskKind};
use crate::namespaces::{self, IdMaps, PidCap};
use crate::plan::{SandboxPlan, Step, plan};
use crate::spec::SandboxSpec;
use crate::syscall::{Call, Fail, check};
use crate::{capabilities, exec_notify, landlock as ll, net, rlimits, seccomp};

/// Plan with the host's facts, then run `argv` in the sandbox and wait for it.
pub fn run_sandboxed(spec: &SandboxSpec, argv: &[OsString]) -> Result<ExitStatus, SandboxError> {
    let facts = HostFacts::probe(spec);
    let plan = plan(spec, &facts)?;
    apply(&plan, &spec.env, argv)
}

/// [`run_sandboxed`] with every exec judged by `judge` (the spec must ask
/// for [`crate::ExecGuardMode::Required`]).
pub fn run_sandboxed_guarded(
    spec: &SandboxSpec,
    argv: &[OsString],
    judge: Arc<dyn ExecJudge>,
) -> Result<ExitStatus, SandboxError> {
    let facts = HostFacts::probe(spec);
    let plan = plan(spec, &facts)?;
    apply_guarded(&plan, &spec.env, argv, judge)
}

/// Run `argv` with environment `env` in a sandbox built by `plan`, and wait for it.
/// A plan with the exec guard needs [`apply_guarded`].
pub fn apply(
    plan: &SandboxPlan,
    env: &[(OsString, OsString)],
    argv: &[OsString],
) -> Result<ExitStatus, SandboxError> {
    run(plan, env, argv, None)
}

/// [`apply`] for a plan with [`Step::AttachExecGuard`]: every exec in the
/// sandbox, the command's own included, is put to `judge` before it runs
/// (see [`crate::ExecJudge`] and `docs/exec-guard.md`). A denied command
/// is [`SandboxError::ExecBlocked`].
pub fn apply_guarded(
    plan: &SandboxPlan,
    env: &[(OsString, OsString)],
    argv: &[OsString],
    judge: Arc<dyn ExecJudge>,
) -> Result<ExitStatus, SandboxError> {
    run(plan, env, argv, Some(judge))
}

/// Receives the sandbox's loopback listeners ([`crate::SandboxSpec::loopback_listeners`],
/// in the spec's order) on a thread of its own, once they listen.
pub type ListenerSink = Box<dyn FnOnce(Vec<std::os::fd::OwnedFd>) + Send>;

/// [`apply`] or [`apply_guarded`] (with `judge`), and for a plan with
/// loopback listeners, `listeners` gets the listening sockets.
pub fn apply_with(
    plan: &SandboxPlan,
    env: &[(OsString, OsString)],
    argv: &[OsString],
    judge: Option<Arc<dyn ExecJudge>>,
    listeners: Option<ListenerSink>,
) -> Result<ExitStatus, SandboxError> {
    run_with(plan, env, argv, judge, listeners)
}

fn run(
    plan: &SandboxPlan,
    env: &[(OsString, OsString)],
    argv: &[OsString],
    judge: Option<Arc<dyn ExecJudge>>,
) -> Result<ExitStatus, SandboxError> {
    run_with(plan, env, argv, judge, None)
}

/// The caller's and the supervisor's ends of the socket pair the loopback
/// listeners cross, when the plan has them.
fn listener_channel(
    plan: &SandboxPlan,
    sink: &Option<ListenerSink>,
) -> Result<Option<(std::os::fd::OwnedFd, libc::c_int)>, SandboxError> {
    let wanted = plan
        .steps
        .iter()
        .any(|s| matches!(s, Step::ListenOnLoopback(_)));
    match (wanted, sink.is_some()) {
        (false, false) => Ok(None),
        (true, false) => Err(SandboxError::ListenerMisuse(
            "the plan has loopback listeners: run it with apply_with and a listener sink",
        )),
        (false, true) => Err(SandboxError::ListenerMisuse(
            "a listener sink needs a plan with loopback_listeners",
        )),
        (true, true) => {
            use std::os::fd::IntoRawFd;
            let (caller, child) =
                crate::fdpass::seqpacket_pair().map_err(|e| parent_error("socketpair", e))?;
            Ok(Some((caller, child.into_raw_fd())))
        }
    }
}

fn run_with(
    plan: &SandboxPlan,
    env: &[(OsString, OsString)],
    argv: &[OsString],
    judge: Option<Arc<dyn ExecJudge>>,
    sink: Option<ListenerSink>,
) -> Result<ExitStatus, SandboxError> {
    let channel = listener_channel(plan, &sink)?;
    let planned = plan.steps.contains(&Step::AttachExecGuard);
    let sockets_only = plan.steps.contains(&Step::AttachSocketGuard);
    let refused = refused_by_guard(plan);
    let mut guard = match (planned, sockets_only, judge) {
        (false, false, None) => None,
        (true, _, Some(judge)) => Some(ExecGuard::start(
            judge,
            refused,
            /*trace_execs*/ true,
            socket_guard(plan),
        )?),
        // The socket guard alone: the judge, if any, only hears of refusals.
        (false, true, judge) => Some(ExecGuard::start(
            judge.unwrap_or_else(|| Arc::new(crate::exec_guard::NoExecJudge)),
            Vec::new(),
            /*trace_execs*/ false,
            socket_guard(plan),
        )?),
        (true, _, None) => {
            return Err(SandboxError::ExecGuardMisuse(
                "the plan has the exec guard: run it with apply_guarded",
            ));
        }
        (false, false, Some(_)) => {
            return Err(SandboxError::ExecGuardMisuse(
                "apply_guarded needs a plan made with exec_guard: ExecGuardMode::Required",
            ));
        }
    };
    let mut prepared = Prepared::new(plan, env, argv, guard.as_ref().map(ExecGuard::fds))?;
    prepared.listener_end = channel.as_ref().map(|(_, child)| *child);
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid two-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(parent_error("pipe2", std::io::Error::last_os_error()));
    }
    let [read_end, write_end] = fds;
    let mut status_fds = [0 as libc::c_int; 2];
    // SAFETY: status_fds is a valid two-int array.
    if unsafe { libc::pipe2(status_fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        let e = std::io::Error::last_os_error();
        close(read_end);
        close(write_end);
        return Err(parent_error("pipe2", e));
    }
    let [status_read, status_write] = status_fds;
    prepared.status_end = status_write;
    // SAFETY: getpid cannot fail.
    let caller = unsafe { libc::getpid() };
    // SAFETY: the child only runs the prepared steps (syscalls on data built
    // above) and then execs or _exits; it never returns into the caller's code.
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        let e = std::io::Error::last_os_error();
        close(read_end);
        close(write_end);
        close(status_read);
        close(status_write);
        return Err(parent_error("fork", e));
    }
    if pid == 0 {
        close(read_end);
        close(status_read);
        let fail = run_supervisor(&mut prepared, write_end, caller);
        report(write_end, fail);
    }
    close(write_end);
    close(status_write);
    if let Some(g) = guard.as_mut() {
        g.forked();
    }
    if let (Some((caller_end, child_end)), Some(sink)) = (channel, sink) {
        close(child_end);
        std::thread::spawn(move || {
            // No message means the sandbox failed before listening; its
            // failure record says why.
            if let Ok(fds) = net::receive_listeners(&caller_end)
                && !fds.is_empty()
            {
                sink(fds);
            }
        });
    }
    let record = read_record(read_end);
    close(read_end);
    let status = match (read_status(status_read), prepared._cgroup.is_none()) {
        // The sandbox is over; its supervisor's exit (the namespaces'
        // teardown) is reaped on the side. A cgroup is removed only once
        // it is empty, so with one the exit is waited for here.
        (Some(code), true) => {
            std::thread::spawn(move || wait(pid));
            code << 8
        }
        (Some(_), false) | (None, _) => wait(pid).map_err(|e| parent_error("waitpid", e))?,
    };
    close(status_read);
    let denied = guard.and_then(ExecGuard::finish);
    match (record, denied) {
        (Some(fail), Some(message)) if fail.call == Call::Execve => {
            Err(SandboxError::ExecBlocked {
                program: prepared.program_path.clone(),
                message,
            })
        }
        (Some(fail), _) => Err(prepared.describe(plan, fail)),
        (None, Some(message)) => Err(SandboxError::ExecBlocked {
            program: prepared.program_path.clone(),
            message,
        }),
        (None, None) => Ok(ExitStatus::from_raw(status)),
    }
}

/// The socket guard's state for `plan`: the allowed sockets by device and
/// inode, as they are now (a missing one allows nothing).
fn socket_guard(plan: &SandboxPlan) -> crate::socket_guard::SocketGuard {
    use std::os::unix::fs::MetadataExt;
    let (host_network, allowed) = match &plan.sockets {
        Some(s) => (
            s.host_network,
            s.allowed
                .iter()
                .filter_map(|p| std::fs::metadata(p).ok())
                .map(|m| (m.dev(), m.ino()))
                .collect(),
        ),
        None => (false, Vec::new()),
    };
    crate::socket_guard::SocketGuard::new(host_network, allowed)
}

fn parent_error(call: &'static str, source: std::io::Error) -> SandboxError {
    SandboxError::Setup {
        boundary: "supervisor process",
        syscall: call,
        path: None,
        source,
    }
}

/// Everything the child processes need, allocated before `fork`.
struct Prepared {
    steps: Vec<PreparedStep>,
    program: CString,
    program_path: PathBuf,
    /// Owners of the strings `argv_ptrs` and `envp_ptrs` point into.
    _argv: Vec<CString>,
    _envp: Vec<CString>,
    /// Null-terminated pointer arrays into `argv` and `envp` (whose heap
    /// buffers do not move), so `exec` does not allocate after fork.
    argv_ptrs: Vec<*const libc::c_char>,
    envp_ptrs: Vec<*const libc::c_char>,
    /// The sandbox's cgroup, removed when `Prepared` is dropped (in the
    /// caller, after the sandbox has ended; the children never drop it).
    _cgroup: Option<ChildCgroup>,
    /// The exec guard tracer's end of the handshake socket, closed by the
    /// supervisor at once (only the tracer may hold it).
    tracer_end: Option<libc::c_int>,
    /// The supervisor's end of the socket pair the loopback listeners
    /// cross to the caller.
    listener_end: Option<libc::c_int>,
    /// The socket guard's `sock_diag` socket, opened in the sandbox's
    /// network namespace, until the command hands it over.
    diag_fd: Option<libc::c_int>,
    /// The write end of the pipe on which the sandbox's supervisor process
    /// tells the caller how the sandbox ended, before its own exit (see
    /// [`fork_and_relay`]).
    status_end: libc::c_int,
}

enum PreparedStep {
    ParentDeathSignal,
    JoinCgroup(CString),
    Unshare(libc::c_int),
    MapIds(IdMaps),
    LoopbackUp,
    OpenSocketDiag,
    ListenOnLoopback(Vec<u16>),
    ForkInit,
    MakeMountsPrivate,
    MountProc,
    CapPidNamespace(PidCap),
    MountMaskSources,
    Mask(MaskKind, CString),
    MaskSocket(CString),
    UnmountMaskSources,
    Pin(CString),
    ReadOnly(CString),
    WritableAgain(CString),
    BindFile(CString, CString),
    ChangeDirectory(CString),
    ForkCommand,
    CloseInheritedFds(Vec<i32>),
    Rlimit(crate::spec::Rlimit),
    NoNewPrivs,
    Landlock(Option<(RulesetCreated, Option<ll::LateProcRule>, bool)>),
    DropCapabilities,
    Seccomp(Vec<seccompiler::BpfProgram>),
    /// The notification filter and the command's end of the handshake
    /// socket (the exec guard, or the socket guard alone).
    AttachExecGuard(Vec<libc::sock_filter>, libc::c_int),
}

fn cstring(bytes: &[u8], what: &Path) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|_| SandboxError::Setup {
        boundary: "arguments",
        syscall: "execve",
        path: Some(what.to_path_buf()),
        source: std::io::Error::from_raw_os_error(libc::EINVAL),
    })
}

fn path_cstring(p: &Path) -> Result<CString, SandboxError> {
    cstring(p.as_os_str().as_bytes(), p)
}

impl Prepared {
    fn new(
        plan: &SandboxPlan,
        env: &[(OsString, OsString)],
        argv: &[OsString],
        guard_fds: Option<(libc::c_int, libc::c_int)>,
    ) -> Result<Prepared, SandboxError> {
        let first = argv.first().ok_or(SandboxError::EmptyCommand)?;
        let program_path =
            find_program(first, env).ok_or_else(|| SandboxError::CommandNotFound(first.clone()))?;
        let mut steps = Vec::with_capacity(plan.steps.len());
        let mut child_cgroup = None;
        for step in &plan.steps {
            steps.push(match step {
                Step::ParentDeathSignal => PreparedStep::ParentDeathSignal,
                Step::JoinCgroup {
                    parent,
                    memory_max_bytes,
                    pids_max,
                } => {
                    let made = ChildCgroup::create(parent, *memory_max_bytes, *pids_max)?;
                    let procs = made.procs.clone();
                    child_cgroup = Some(made);
                    PreparedStep::JoinCgroup(procs)
                }
                Step::Unshare(ns) => PreparedStep::Unshare(namespaces::clone_flags(ns)),
                Step::MapIds { uid, gid } => PreparedStep::MapIds(IdMaps::new(*uid, *gid)),
                Step::LoopbackUp => PreparedStep::LoopbackUp,
                Step::OpenSocketDiag => PreparedStep::OpenSocketDiag,
                Step::ListenOnLoopback(ports) => {
                    if ports.len() > net::MAX_LISTENERS {
                        return Err(SandboxError::Setup {
                            boundary: "network relay listener",
                            syscall: "listen",
                            path: None,
                            source: std::io::Error::from_raw_os_error(libc::E2BIG),
                        });
                    }
                    PreparedStep::ListenOnLoopback(ports.clone())
                }
                Step::ForkInit => PreparedStep::ForkInit,
                Step::MakeMountsPrivate => PreparedStep::MakeMountsPrivate,
                Step::MountProc => PreparedStep::MountProc,
                Step::CapPidNamespace(max) => PreparedStep::CapPidNamespace(PidCap::new(*max)),
                Step::MountMaskSources => PreparedStep::MountMaskSources,
                Step::UnmountMaskSources => PreparedStep::UnmountMaskSources,
                Step::Mask { path, kind } => PreparedStep::Mask(
                    match kind {
                        PathKind::File => MaskKind::File,
                        PathKind::Dir => MaskKind::Dir,
                    },
                    path_cstring(path)?,
                ),
                Step::MaskDatagramSocket(p) => PreparedStep::MaskSocket(path_cstring(p)?),
                Step::PinMountPoint(p) => PreparedStep::Pin(path_cstring(p)?),
                Step::BindReadOnly(p) => PreparedStep::ReadOnly(path_cstring(p)?),
                Step::BindWritableAgain(p) => PreparedStep::WritableAgain(path_cstring(p)?),
                Step::BindFile { source, target } => {
                    PreparedStep::BindFile(path_cstring(source)?, path_cstring(target)?)
                }
                Step::ChangeDirectory(p) => PreparedStep::ChangeDirectory(path_cstring(p)?),
                Step::ForkCommand => PreparedStep::ForkCommand,
                Step::CloseInheritedFds(keep) => PreparedStep::CloseInheritedFds(keep.clone()),
                Step::SetRlimit(r) => PreparedStep::Rlimit(*r),
                Step::NoNewPrivs => PreparedStep::NoNewPrivs,
                Step::Landlock {
                    abi,
                    writable,
                    readable,
                    log_denials,
                } => {
                    let (ruleset, late) = ll::prepare_ruleset(*abi, writable, readable.as_deref())?;
                    PreparedStep::Landlock(Some((ruleset, late, *log_denials)))
                }
                Step::DropCapabilities => PreparedStep::DropCapabilities,
                Step::Seccomp(policy) => {
                    PreparedStep::Seccomp(seccomp::build_filters(policy).map_err(|e| {
                        SandboxError::Setup {
                            boundary: "seccomp",
                            syscall: "build filter",
                            path: None,
                            source: std::io::Error::other(e.to_string()),
                        }
                    })?)
                }
                Step::AttachExecGuard | Step::AttachSocketGuard => {
                    let (command_end, _) =
                        guard_fds.ok_or(SandboxError::ExecGuardMisuse("no exec guard started"))?;
                    let execs = *step == Step::AttachExecGuard;
                    let refused: Vec<i64> = refused_by_guard(plan)
                        .into_iter()
                        .map(|(nr, _, _)| nr)
                        .filter(|_| execs)
                        .collect();
                    let calls = exec_notify::notified_calls(execs, &refused);
                    PreparedStep::AttachExecGuard(exec_notify::notify_filter(&calls), command_end)
                }
            });
        }
        let argv = argv
            .iter()
            .map(|a| cstring(a.as_bytes(), Path::new(a)))
            .collect::<Result<Vec<_>, _>>()?;
        let envp = env
            .iter()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                cstring(&kv, Path::new(k))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pointers = |v: &[CString]| {
            v.iter()
                .map(|c| c.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        Ok(Prepared {
            steps,
            program: path_cstring(&program_path)?,
            program_path,
            argv_ptrs: pointers(&argv),
            envp_ptrs: pointers(&envp),
            _argv: argv,
            _envp: envp,
            _cgroup: child_cgroup,
            tracer_end: guard_fds.map(|(_, tracer)| tracer),
            listener_end: None,
            diag_fd: None,
            status_end: -1,
        })
    }

    /// Turn a child's failure record into an error naming the boundary.
    fn describe(&self, plan: &SandboxPlan, fail: Fail) -> SandboxError {
        if fail.call == Call::LandlockNotEnforced {
            return SandboxError::LandlockNotEnforced;
        }
        if fail.call == Call::CapabilitiesLeft {
            return SandboxError::Setup {
                boundary: "capabilities",
                syscall: fail.call.name(),
                path: None,
                source: std::io::Error::other("a capability is still set after dropping them all"),
            };
        }
        let (boundary, path) = match plan.steps.get(fail.step as usize) {
            Some(step) => (step.boundary(), step.path().map(Path::to_path_buf)),
            None => ("exec", Some(self.program_path.clone())),
        };
        SandboxError::Setup {
            boundary,
            syscall: fail.call.name(),
            path,
            source: std::io::Error::from_raw_os_error(fail.errno),
        }
    }
}

/// Resolve `program` the way `execvp` would, on the sandbox's own `PATH`.
fn find_program(program: &OsStr, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return is_exe(&p).then_some(p);
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| is_exe(p))
}

/// The supervisor's part, then (through the forks) init's and the command's.
/// Returns only on failure.
fn run_supervisor(prepared: &mut Prepared, report_fd: libc::c_int, caller: libc::pid_t) -> Fail {
    if let Some(fd) = prepared.tracer_end {
        close(fd);
    }
    let steps = std::mem::take(&mut prepared.steps);
    // A failure in execve is reported as the step after the last one.
    let count = steps.len() as u32;
    for (i, step) in steps.into_iter().enumerate() {
        let i = i as u32;
        let result = match step {
            PreparedStep::ParentDeathSignal => set_parent_death_signal(i, Some(caller)),
            PreparedStep::JoinCgroup(procs) => cgroup::apply_join(&procs, i),
            PreparedStep::Unshare(flags) => namespaces::apply_unshare(flags, i),
            PreparedStep::MapIds(maps) => namespaces::apply_id_maps(&maps, i),
            PreparedStep::LoopbackUp => net::apply_loopback_up(i),
            PreparedStep::OpenSocketDiag => {
                check(crate::socket_guard::open_diag_socket(), i, Call::Socket).map(|fd| {
                    prepared.diag_fd = Some(fd as libc::c_int);
                })
            }
            PreparedStep::ListenOnLoopback(ports) => {
                let r =
                    net::apply_listen_on_loopback(&ports, prepared.listener_end.unwrap_or(-1), i);
                if let Some(fd) = prepared.listener_end.take() {
                    close(fd);
                }
                r
            }
            PreparedStep::ForkInit => {
                fork_and_relay(i, report_fd, prepared.status_end, Role::Supervisor)
                    .and_then(|()| set_parent_death_signal(i, None))
            }
            PreparedStep::MakeMountsPrivate => mounts::apply_private_propagation(i),
            PreparedStep::MountProc => mounts::apply_proc(i),
            PreparedStep::CapPidNamespace(cap) => namespaces::apply_pid_cap(&cap, i),
            PreparedStep::MountMaskSources => mounts::apply_mask_sources(i),
            PreparedStep::Mask(kind, path) => mounts::apply_mask(kind, &path, i),
            PreparedStep::MaskSocket(path) => mounts::apply_socket_mask(&path, i),
            PreparedStep::UnmountMaskSources => mounts::apply_unmount_mask_sources(i),
            PreparedStep::Pin(path) => mounts::apply_pin(&path, i),
            PreparedStep::ReadOnly(path) => mounts::apply_read_only(&path, i),
            PreparedStep::WritableAgain(path) => mounts::apply_writable_again(&path, i),
            PreparedStep::BindFile(source, target) => mounts::apply_bind_file(&source, &target, i),
            PreparedStep::ChangeDirectory(path) => mounts::apply_working_directory(&path, i),
            PreparedStep::ForkCommand => {
                fork_and_relay(i, report_fd, prepared.status_end, Role::Init)
            }
            PreparedStep::CloseInheritedFds(keep) => close_inherited(&keep, i),
            PreparedStep::Rlimit(r) => rlimits::apply_rlimit(r, i),
            PreparedStep::NoNewPrivs => set_no_new_privs(i),
            PreparedStep::Landlock(ruleset) => match ruleset {
                Some((r, late, log)) => ll::apply_ruleset(r, late.as_ref(), log, i),
                None => Ok(()),
            },
            PreparedStep::DropCapabilities => capabilities::apply_drop_all(i),
            PreparedStep::Seccomp(programs) => seccomp::apply_filters(&programs, i),
            PreparedStep::AttachExecGuard(filter, socket) => {
                exec_notify::apply_attach(&filter, socket, prepared.diag_fd.take(), i)
            }
        };
        if let Err(fail) = result {
            return fail;
        }
    }
    exec(prepared, count)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Supervisor,
    Init,
}

/// Fork. The child returns `Ok` and goes on with the next step; the parent
/// closes its copy of the report pipe (so the caller sees EOF once the command
/// execs), waits for the child, and exits with its status. As PID 1, init also
/// reaps every orphan re-parented to it while it waits.
///
/// The supervisor also writes that status on `status_fd` before it exits:
/// once init is reaped every process of the sandbox is gone (init's exit
/// kills and waits for the rest of its PID namespace), but the supervisor's
/// own exit drops the last reference to the namespaces, and tearing down the
/// mount namespace waits for an RCU grace period (3-4 ms here). The caller
/// need not wait for that. Init keeps no copy: nothing in the sandbox can
/// write a status.
fn fork_and_relay(
    step: u32,
    report_fd: libc::c_int,
    status_fd: libc::c_int,
    role: Role,
) -> Result<(), Fail> {
    // SAFETY: single-threaded child process; see `apply`.
    let pid = check(unsafe { libc::fork() }.into(), step, Call::Fork)? as libc::pid_t;
    if pid == 0 {
        return Ok(());
    }
    // From here this process only waits. It holds copies of every
    // descriptor the caller had (it never execs, so close-on-exec does not
    // apply): a pipe's write end kept here would keep the command from ever
    // seeing its end (`aq mcp run` passes the client's stdin through one).
    // SAFETY: close_range with plain integers; nothing below uses a
    // descriptor but the supervisor's `status_fd`.
    let closed = unsafe {
        if role == Role::Supervisor && status_fd > 0 {
            let low = libc::syscall(libc::SYS_close_range, 0u32, status_fd as u32 - 1, 0u32);
            let high = libc::syscall(libc::SYS_close_range, status_fd as u32 + 1, u32::MAX, 0u32);
            low | high
        } else {
            libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32)
        }
    };
    if closed != 0 {
        close(report_fd);
        if role == Role::Init {
            close(status_fd);
        }
    }
    let relay = |code: i32| -> ! {
        if role == Role::Supervisor {
            let byte = [code as u8];
            // SAFETY: a one-byte write from a valid buffer.
            unsafe { libc::write(status_fd, byte.as_ptr().cast(), 1) };
        }
        exit(code)
    };
    let target = if role == Role::Init { -1 } else { pid };
    loop {
        let mut status = 0;
        // SAFETY: status is a valid int.
        let r = unsafe { libc::waitpid(target, &mut status, 0) };
        if r == -1 {
            if crate::syscall::errno() == libc::EINTR {
                continue;
            }
            exit(125);
        }
        if r == pid {
            if libc::WIFEXITED(status) {
                relay(libc::WEXITSTATUS(status));
            }
            if libc::WIFSIGNALED(status) {
                relay(128 + libc::WTERMSIG(status));
            }
        }
    }
}

/// Mark every descriptor above 2 close-on-exec except `keep` (sorted),
/// whose flag is cleared: the command's `execve` closes the rest, so a
/// descriptor the caller inherited (a key its launcher had open) never
/// reaches the program, whatever its path. No allocation.
fn close_inherited(keep: &[i32], step: u32) -> Result<(), Fail> {
    let mut first: u32 = 3;
    for &fd in keep {
        let fd = fd as u32;
        if fd > first {
            mark_cloexec(first, fd - 1, step)?;
        }
        // SAFETY: fcntl on an integer; a closed fd fails harmlessly.
        unsafe { libc::fcntl(fd as libc::c_int, libc::F_SETFD, 0) };
        first = fd + 1;
    }
    mark_cloexec(first, u32::MAX, step)
}

fn mark_cloexec(first: u32, last: u32, step: u32) -> Result<(), Fail> {
    // SAFETY: close_range with plain integers marks, it closes nothing now.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            last,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    check(r, step, Call::CloseRange).map(|_| ())
}

/// `PR_SET_PDEATHSIG(SIGKILL)`; when `caller` is given, also check it did not
/// already die before the signal was armed.
fn set_parent_death_signal(step: u32, caller: Option<libc::pid_t>) -> Result<(), Fail> {
    // SAFETY: prctl with integer arguments.
    let ret = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    check(ret.into(), step, Call::Prctl)?;
    // SAFETY: getppid cannot fail.
    if caller.is_some_and(|c| unsafe { libc::getppid() } != c) {
        return Err(Fail {
            step,
            call: Call::Getppid,
            errno: libc::ESRCH,
        });
    }
    Ok(())
}

fn set_no_new_privs(step: u32) -> Result<(), Fail> {
    // SAFETY: prctl with integer arguments.
    let ret = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    check(ret.into(), step, Call::Prctl).map(|_| ())
}

/// Reset signal dispositions and the mask (Rust ignores SIGPIPE; ignored
/// signals survive exec), then `execve`. Returns only on failure.
fn exec(prepared: &Prepared, step: u32) -> Fail {
    for sig in 1..libc::SIGRTMAX() {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            // SAFETY: resetting a disposition to default.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
    // SAFETY: an empty, initialised set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
    // SAFETY: program is NUL-terminated; the pointer arrays are null-terminated
    // and point into `prepared.argv` / `prepared.envp`, alive here.
    unsafe {
        libc::execve(
            prepared.program.as_ptr(),
            prepared.argv_ptrs.as_ptr(),
            prepared.envp_ptrs.as_ptr(),
        )
    };
    Fail {
        step,
        call: Call::Execve,
        errno: crate::syscall::errno(),
    }
}

/// Send the failure to the caller and exit 125.
/// The exit code the sandbox's supervisor wrote before its exit, `None` when
/// it wrote none (it failed before init ran, or was killed): then its exit
/// status says.
fn read_status(fd: libc::c_int) -> Option<libc::c_int> {
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: a one-byte read into a valid buffer.
        let n = unsafe { libc::read(fd, byte.as_mut_ptr().cast(), 1) };
        if n == 1 {
            return Some(libc::c_int::from(byte[0]));
        }
        if n == -1 && crate::syscall::errno() == libc::EINTR {
            continue;
        }
        return None;
    }
}

fn report(fd: libc::c_int, fail: Fail) -> ! {
    let bytes = fail.to_bytes();
    // SAFETY: bytes is a valid buffer. A short write cannot happen below PIPE_BUF.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    exit(125)
}

fn exit(code: i32) -> ! {
    // SAFETY: _exit skips the caller's atexit handlers and buffers, which belong
    // to the caller, not to this forked copy.
    unsafe { libc::_exit(code) }
}

fn close(fd: libc::c_int) {
    // SAFETY: closing a descriptor we own.
    unsafe { libc::close(fd) };
}

fn read_record(fd: libc::c_int) -> Option<Fail> {
    let mut buf = [0u8; Fail::LEN];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: writing into the unread tail of buf.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        match n {
            0 => break,
            n if n < 0 => {
                if crate::syscall::errno() == libc::EINTR {
                    continue;
                }
                break;
            }
            n => got += n as usize,
        }
    }
    if got == buf.len() {
        Fail::from_bytes(buf)
    } else {
        None
    }
}

fn wait(pid: libc::pid_t) -> std::io::Result<libc::c_int> {
    loop {
        let mut status = 0;
        // SAFETY: status is a valid int.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return Ok(status);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The denials of the plan's seccomp step that the exec guard answers.
fn refused_by_guard(plan: &SandboxPlan) -> Vec<(i64, i32, &'static str)> {
    plan.steps
        .iter()
        .find_map(|s| match s {
            Step::Seccomp(policy) => Some(policy.notified()),
            _ => None,
        })
        .unwrap_or_default()
}
