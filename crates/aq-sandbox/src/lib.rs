//! Rootless Linux sandbox for `aq run`: whatever slips past the command firewall
//! still cannot touch what it must not.
//!
//! # Design
//!
//! Decide, then do. [`plan`] is pure: it turns a plain [`SandboxSpec`] and the
//! [`HostFacts`] (Landlock ABI, kernel version, ids, working directory, cgroup,
//! what each named path really is) into an
//! ordered [`SandboxPlan`], unit-tested on any machine with faked facts. [`apply`]
//! runs the plan in forked children and `exec`s the command; [`run_sandboxed`]
//! does both. Two reasons: every decision (what to mask, which ABI, what to refuse)
//! is testable without a kernel, and the code between `fork` and `exec` stays a
//! flat list of syscalls on data prepared beforehand.
//!
//! On macOS there is no such kernel plan: [`plan_seatbelt_profile`] writes
//! the same spec as a Seatbelt profile for `sandbox-exec` (pure, built on
//! every platform), and [`sandbox_exec_command`] runs a command under it.
//!
//! # Boundaries
//!
//! - **Namespaces** ([`Namespace`]): user (the caller's uid and gid map to
//!   themselves, so it works for root and for an unprivileged user), mount, PID
//!   (a fresh `/proc`; the command runs as a child of a PID 1 that reaps and
//!   exits with it, which kills the rest of the namespace), IPC, and network
//!   when [`NetworkMode::Off`] (only `lo`, brought up).
//! - **Secret masks**: an empty read-only file or directory bound over each
//!   masked path, after resolving symlinks. Masks are mounts, so they hold for
//!   root inside the sandbox too, and through every other name of the path
//!   (symlinks, `/proc/self/root`, another process's `/proc/<pid>/cwd`);
//!   Landlock then forbids unmounting them. Init re-enters the caller's working
//!   directory by path once the masks are up, so a caller started inside
//!   `~/.ssh` does not hand the command the real directory beneath the mask.
//!   A file to mask with other hard links is refused (a mount hides one name).
//! - **Read-only paths** inside the workspace (`.git/hooks`, `.git/config`): bound
//!   read-only (writes fail with EROFS); their ancestors are made mount points so
//!   they cannot be renamed away (EBUSY).
//! - **Landlock** ([`LandlockMode::Required`]): read everywhere, write only
//!   beneath the workspace and [`SandboxSpec::writable`] (EACCES elsewhere);
//!   signal and abstract-socket scoping on ABI 6+. Anything short of full
//!   enforcement is an error (fail closed); ABI below 3 is refused by the plan.
//! - **Capabilities** dropped from every set (bounding, ambient, effective,
//!   permitted, inheritable) and checked, so even a root caller's command has
//!   none inside its namespace.
//! - **seccomp** ([`plan_seccomp`]): EPERM for ptrace, cross-process memory,
//!   `pidfd_getfd`, bpf, userfaultfd, perf, kexec, modules, the mount family,
//!   io_uring, keyrings, `unshare`/`setns` and `clone` with namespace flags,
//!   `TIOCSTI`/`TIOCLINUX`; EAFNOSUPPORT for socket families other than unix,
//!   inet and inet6; ENOSYS for `clone3` (libc falls back to `clone`); the
//!   process is killed on another architecture's syscall table (i386, x32).
//!   Installed last, right before `execve`.
//! - **Process cap**: a [`RlimitResource::Processes`] limit is set as
//!   `RLIMIT_NPROC` and, since the kernel exempts uid 0 from that rlimit, also
//!   enforced through the PID namespace's own `pid_max` (Linux 6.14+), so a
//!   fork bomb gets EAGAIN whoever the caller is ([`Step::CapPidNamespace`]);
//!   on older kernels uid 0 is not bound, which [`ProcessLimit`] says.
//! - **Teardown**: the command's PID namespace dies with it (its init exits
//!   with the command and the kernel kills what is left, `setsid` daemons
//!   included), and `PR_SET_PDEATHSIG` kills the supervisor, hence the
//!   namespace, when the caller dies, even by SIGKILL.
//! - **cgroup v2 limits** ([`SandboxSpec::memory_max_bytes`],
//!   [`SandboxSpec::pids_max`]): where the caller's own cgroup is writable and
//!   enables `memory` and `pids` for its children, the sandbox runs in a child
//!   cgroup made for it and removed after it; otherwise rlimits only, which
//!   [`CgroupLimits::Unavailable`] says plainly with the reason (not an error).
//! - `no_new_privs` and rlimits.
//! - **Exec guard** ([`ExecGuardMode::Required`], run with [`apply_guarded`]):
//!   every `execve`/`execveat` in the sandbox, the command's own included,
//!   is put to the caller's [`ExecJudge`] before the new program runs, with
//!   its resolved executable (device and inode too), argv and cwd. Two
//!   checks: a seccomp user notification before the exec (a denial fails
//!   the call with `EACCES` and writes the judge's message to the caller's
//!   stderr), and a ptrace stop at `PTRACE_EVENT_EXEC`, where what was
//!   loaded is compared with what was judged (judged again if it differs,
//!   killed before its first instruction if denied). The second check makes
//!   it race-free; it needs Landlock, which keeps `/proc/<pid>/mem`
//!   read-only, and the seccomp policy denies `CLONE_UNTRACED` and
//!   `CLONE_FS` without `CLONE_THREAD`, so no process escapes the tracer or
//!   moves another's working directory. At that stop every program but the
//!   command's own also enters a Landlock domain nested in its parent's, so
//!   it cannot read the `environ`, memory or files of the processes that
//!   started it (the agent's key). See `docs/exec-guard.md`.
//!
//! [`SandboxPlan::enforced`] reports what a plan enforces; since every step
//! fails closed, that is what holds once the command runs. It also says what
//! was asked for and will not hold, the two tolerated gaps: cgroup limits
//! without a delegated cgroup, and a process limit for uid 0 on a kernel
//! before 6.14.
//!
//! # Errors
//!
//! [`SandboxError`] names the boundary, the failing call and its path
//! ("sandbox setup failed: secret mask: mount(/home/u/.ssh): Permission
//! denied"); `aq` prints it and exits with [`SandboxError::exit_code`] (125).
//!
//! # Other systems
//!
//! The spec, the pure plan and the types they are made of build on every
//! system, so that a profile generator for another system's sandbox reads
//! the same [`SandboxSpec`]. The mechanisms are Linux's: elsewhere [`apply`]
//! and its siblings refuse with [`SandboxError::Unsupported`] (exit 125)
//! before anything runs, and `libc`, `landlock` and `seccompiler` are not
//! dependencies.
//!
//! # Current limitations
//!
//! - seccomp and the capability drop are always on (no profile needs ptrace
//!   or new namespaces yet); debuggers such as `gdb` and `strace` do not work
//!   inside.
//! - The exec guard judges the program, argv and cwd, and of the
//!   environment only the loader's `LD_PRELOAD` and `LD_AUDIT` (read at the
//!   commit check), not the rest (`LD_LIBRARY_PATH`, `BASH_ENV`), nor what an interpreter later reads (a
//!   script's content, `python3 -c`, `ld.so /usr/bin/x`): that is the
//!   judge's business, from the argv it gets. It traces with ptrace, so it
//!   fails closed (exit 125, naming `ptrace(PTRACE_SEIZE)`) where Yama's
//!   `ptrace_scope` is 2 or 3; each exec costs two round trips to the
//!   caller (its notification, its exec stop).
//! - uid 0 inside is the host's root (the caller's ids map to themselves):
//!   without capabilities, but file permissions still let it write whatever
//!   root owns, `/proc/sys` included. Landlock is what confines those writes,
//!   so [`LandlockMode::Off`] with a root caller leaves the host writable.
//! - cgroup limits need the caller's own cgroup to enable `memory` and `pids`
//!   for its children already; a cgroup holding processes cannot do that,
//!   and the sandbox does not move its caller out to make room, so a typical
//!   `systemd-run --scope -p Delegate=yes` scope still gives rlimits only
//!   ([`CgroupLimits::Unavailable`] says why). The path that writes
//!   `memory.max` and `pids.max` is tested only where such a cgroup exists.
//! - The process cap through the PID namespace needs Linux 6.14 (read from the
//!   kernel's release, so a backport is not noticed); before that, uid 0 is
//!   not bound by a process limit at all ([`ProcessLimit::NotEnforcedForRoot`]).
//!   Both it and `RLIMIT_NPROC` count threads, and `RLIMIT_NPROC` also counts
//!   the supervisor and init.
//! - No environment scrubbing (the caller passes the complete environment) or
//!   `/proc/<pid>/environ` hardening between sandboxed processes.
//! - A hard-linked secret file is refused rather than hidden; hard links to
//!   files inside a masked directory are not detected.
//! - Landlock pins `/` read access: every unmasked file is readable.
//! - The working directory is looked up again inside: a caller working beneath
//!   a masked directory (not in it) gets a setup error.
//! - A command killed by a signal is reported as exit code 128 + signal.
//! - The parent-death signal follows the *thread* that called [`apply`]: call it
//!   from a thread that outlives the command. Likewise [`apply_guarded`]
//!   starts its guard threads itself and stops them before returning; they
//!   only wait for their own tracees (`__WNOTHREAD`).
//!
//! # Test strategy
//!
//! `tests/suite/` tries to cross each boundary for real, from a probe that is the
//! test binary itself re-executed inside the sandbox, and asserts the errno it
//! got. A probe that could not run is reported as such, never as "blocked". When
//! the machine lacks a feature the test prints why and passes, unless
//! `AQ_SANDBOX_REQUIRE_FULL=1` (set by CI) turns that into a failure.
//!
//! The tests must pass as root and as an unprivileged user, and CI runs only
//! `cargo test --workspace --locked`, as root. So, run as root, the suite runs
//! itself again unprivileged (`suite_passes_as_an_unprivileged_user`): it copies
//! the test binary to a world-readable temporary directory (the build tree may
//! be under `/root`), runs it as the user `aqtest` if there is one (CI creates
//! it with `useradd -m aqtest`), else as uid/gid 65534, with
//! `AQ_SANDBOX_NESTED=1`, a `HOME` and `TMPDIR` that user owns, and
//! `AQ_SANDBOX_REQUIRE_FULL` passed through, and fails with the nested run's
//! output if any test fails there. Run as anyone else, that test does nothing
//! (the run is already unprivileged).
//!
//! ```text
//! AQ_SANDBOX_REQUIRE_FULL=1 cargo test -p aq-sandbox   # as root: both runs
//! ```
//!
//! cgroup limits need a delegated cgroup v2, which most machines lack; those
//! tests print why and pass unless `AQ_SANDBOX_REQUIRE_CGROUP=1`, and the
//! decision is unit-tested with faked facts.
//!
//! Probes write libtest's "running 1 test" lines to the shared stdout; that
//! noise is expected until the spec grows stdio redirection.
#![deny(missing_docs)]

// Built on every system: the spec, the pure plan and the types they are made
// of, so that a profile generator for another system's sandbox reads the same
// spec. The exec guard's and the socket guard's parsers mostly serve the
// Linux mechanisms below.
mod cgroup;
mod error;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod exec_guard;
mod facts;
mod plan;
mod seatbelt;
mod seccomp;
mod spec;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod unix_diag;

// Linux only: the kernel mechanisms that carry a plan out.
#[cfg(target_os = "linux")]
mod apply;
#[cfg(target_os = "linux")]
mod capabilities;
#[cfg(target_os = "linux")]
mod exec_notify;
#[cfg(target_os = "linux")]
mod fdpass;
#[cfg(target_os = "linux")]
mod guard;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod namespaces;
#[cfg(target_os = "linux")]
mod nest;
#[cfg(target_os = "linux")]
mod net;
#[cfg(target_os = "linux")]
mod procfs;
#[cfg(target_os = "linux")]
mod rlimits;
#[cfg(target_os = "linux")]
mod socket_guard;
#[cfg(target_os = "linux")]
mod syscall;
#[cfg(target_os = "linux")]
mod tracer;
// Elsewhere: `apply`'s entry points, refusing (fail closed).
#[cfg(not(target_os = "linux"))]
mod unsupported;

#[cfg(target_os = "linux")]
pub use apply::{
    ListenerSink, apply, apply_guarded, apply_with, run_sandboxed, run_sandboxed_guarded,
};
pub use cgroup::{CgroupFacts, CgroupLimits};
pub use error::SandboxError;
pub use exec_guard::{ExecCheck, ExecEvent, ExecGuardMode, ExecJudge, ExecVerdict, FileStamp};
pub use facts::{HostFacts, PathFacts, PathKind};
pub use plan::{
    CapabilityState, Enforced, LANDLOCK_MAX_ABI, LANDLOCK_MIN_ABI, Namespace,
    PID_MAX_PER_NAMESPACE_SINCE, PlanError, ProcessLimit, RESERVED_PIDS, SandboxPlan, SocketPlan,
    Step, plan,
};
pub use seatbelt::{
    SANDBOX_EXEC, SeatbeltError, SeatbeltInputs, plan_seatbelt_profile, sandbox_exec_argv,
    sandbox_exec_command,
};
pub use seccomp::{ArgCondition, DenyErrno, SeccompDenial, SeccompPolicy, Syscall, plan_seccomp};
pub use spec::{LandlockMode, NetworkMode, Rlimit, RlimitResource, SandboxSpec, SocketGuardMode};
#[cfg(not(target_os = "linux"))]
pub use unsupported::{
    ListenerSink, apply, apply_guarded, apply_with, run_sandboxed, run_sandboxed_guarded,
};
