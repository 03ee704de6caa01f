//! Decide, then do: [`plan`] turns a spec and host facts into ordered steps.
//!
//! The order matters, and each step says who runs it:
//!
//! 1. **Supervisor** (forked from the caller): set the parent-death signal first,
//!    so nothing outlives the caller; join the sandbox's cgroup when limits
//!    are enforced by one (made by the caller, see [`crate::CgroupLimits`]),
//!    before any fork so that every later process is born inside; unshare every namespace in one call (user
//!    first, implicitly, so the others are owned by it); map the caller's uid/gid
//!    to themselves; bring loopback up in the new network namespace (needs the
//!    capabilities the user namespace just gave us). It then forks the init.
//! 2. **Init** (PID 1 of the new PID namespace): make every mount private before
//!    touching any, so nothing propagates back to the host; mount a fresh `/proc`
//!    so host processes are invisible; cap the PIDs of the namespace when a
//!    process limit is asked (through that fresh `/proc`, before the mask
//!    sources cover it); mask secrets (bound from an empty file and
//!    directory on a read-only tmpfs staged over `/proc`, then detached); pin the ancestors of the
//!    read-only paths as mount points (a mount point cannot be renamed or removed,
//!    so `mv .git .git-old` cannot route around a read-only `.git/hooks`); bind
//!    the read-only paths over themselves read-only. Masks come before the
//!    read-only binds, which are recursive, so a mask under `.git` is carried
//!    along. Then init changes to the caller's working directory again, by
//!    path: the directory it inherited is the one beneath any mask mounted
//!    since, so a caller started inside `~/.ssh` would otherwise hand the
//!    command the real `~/.ssh`. The init then forks the command, reaps
//!    orphans, and exits with the command's status; the kernel kills
//!    everything left in the namespace.
//! 3. **Command**: set rlimits; set `no_new_privs`; restrict itself with Landlock
//!    (after all mounts: a Landlock domain forbids later mount changes, which also
//!    keeps root-in-the-sandbox from unmounting a mask); drop every capability
//!    (dropping from the bounding set needs `CAP_SETPCAP`, so it happens while
//!    the process still has it, and after every step that needs a capability);
//!    install the seccomp filter; `exec`. The filter comes last for two reasons:
//!    it must come after `no_new_privs` (without it, or `CAP_SYS_ADMIN`, the
//!    kernel refuses an unprivileged filter, and `no_new_privs` is what stops a
//!    setuid `exec` from shedding the premise the filter was written for), and
//!    once installed it binds every later call, so anything after it (here only
//!    signal resets and `execve`) must be allowed by it; setup calls such as
//!    `prctl` and `capset` are not, by design, on that list to begin with, but
//!    putting the filter last keeps the filter free of exceptions for setup.
//!    With the exec guard, [`Step::AttachExecGuard`] follows: its own filter
//!    (user notification on `execve`/`execveat`) needs `no_new_privs`, and the
//!    caller starts tracing the command only once setup is over, right
//!    before `execve`, so the command's own exec is the first one judged.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::cgroup::{CgroupLimits, plan_cgroup};
use crate::exec_guard::ExecGuardMode;
use crate::facts::{HostFacts, PathFacts, PathKind};
use crate::seccomp::{SeccompPolicy, plan_seccomp};
use crate::spec::{
    LandlockMode, NetworkMode, Rlimit, RlimitResource, SandboxSpec, SocketGuardMode,
};

/// Lowest Landlock ABI accepted: ABI 3 adds `TRUNCATE`; below it a confined
/// process could still truncate any file it can open outside the workspace.
pub const LANDLOCK_MIN_ABI: u32 = 3;
/// Highest Landlock ABI this crate asks for (tested): ABI 6 adds signal and
/// abstract-socket scoping.
pub const LANDLOCK_MAX_ABI: u32 = 6;

/// First kernel whose `/proc/sys/kernel/pid_max` is per PID namespace and
/// writable from inside it (with `CAP_SYS_ADMIN` in the owning user namespace).
pub const PID_MAX_PER_NAMESPACE_SINCE: (u32, u32) = (6, 14);
/// Once a PID namespace's counter passes this, new PIDs are allocated from it
/// upwards (the kernel's `RESERVED_PIDS`).
pub const RESERVED_PIDS: u64 = 300;
/// The largest `pid_max` (the kernel's `PID_MAX_LIMIT` on 64-bit).
const PID_MAX_LIMIT: u64 = 4 * 1024 * 1024;

/// The ordered steps that build one sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPlan {
    /// Steps in execution order.
    pub steps: Vec<Step>,
    /// How the spec's process limit holds, if it asked for one.
    pub processes: ProcessLimit,
    /// Whether the spec's cgroup limits hold, and if not, why.
    pub cgroup: CgroupLimits,
    /// The socket guard's settings, when the spec asks for it.
    pub sockets: Option<SocketPlan>,
}

/// What the socket guard needs to know ([`crate::SocketGuardMode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketPlan {
    /// The sandbox shares the host's network namespace: a listener's
    /// namespace does not tell whose it is, so the guard looks for the
    /// process that holds it.
    pub host_network: bool,
    /// Sockets of the host the sandbox may reach all the same (aq's own).
    pub allowed: Vec<PathBuf>,
    /// How many of the host's datagram sockets are masked.
    pub datagram_masks: usize,
}

impl SandboxPlan {
    /// What a sandbox built from this plan enforces. [`crate::apply`] fails
    /// closed on any step (and Landlock and the capability drop are checked
    /// after the fact), so once the command has started, this is what holds.
    pub fn enforced(&self) -> Enforced {
        let mut e = Enforced {
            namespaces: Vec::new(),
            landlock_abi: None,
            readable: None,
            secret_masks: 0,
            read_only_paths: 0,
            rlimits: Vec::new(),
            processes: self.processes,
            cgroup: self.cgroup.clone(),
            no_new_privs: false,
            capabilities: CapabilityState::Inherited,
            seccomp: None,
            exec_guard: ExecGuardMode::Off,
            socket_guard: self.sockets.is_some(),
            inherited_fds_closed: false,
        };
        for step in &self.steps {
            match step {
                Step::Unshare(ns) => e.namespaces.extend(ns.iter().copied()),
                Step::Landlock { abi, readable, .. } => {
                    e.landlock_abi = Some(*abi);
                    e.readable = readable.as_ref().map(Vec::len);
                }
                Step::Mask { .. } => e.secret_masks += 1,
                Step::BindReadOnly(_) => e.read_only_paths += 1,
                Step::SetRlimit(r) => e.rlimits.push(*r),
                Step::NoNewPrivs => e.no_new_privs = true,
                Step::DropCapabilities => e.capabilities = CapabilityState::AllDropped,
                Step::Seccomp(policy) => e.seccomp = Some(policy.clone()),
                Step::AttachExecGuard => e.exec_guard = ExecGuardMode::Required,
                Step::CloseInheritedFds(_) => e.inherited_fds_closed = true,
                _ => {}
            }
        }
        e
    }
}

/// The boundaries a plan enforces, for the audit log, `aq doctor` and `aq verify`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforced {
    /// Namespaces the command runs in.
    pub namespaces: Vec<Namespace>,
    /// Landlock ABI whose rights are enforced, `None` without Landlock.
    pub landlock_abi: Option<u32>,
    /// How many paths reads are confined to, `None` when they are not.
    pub readable: Option<usize>,
    /// Number of masked secrets (after deduplication).
    pub secret_masks: usize,
    /// Number of read-only binds in the workspace.
    pub read_only_paths: usize,
    /// Resource limits.
    pub rlimits: Vec<Rlimit>,
    /// How the process limit holds.
    pub processes: ProcessLimit,
    /// Whether the cgroup limits hold (`aq` prints this line as it is).
    pub cgroup: CgroupLimits,
    /// Whether `no_new_privs` is set.
    pub no_new_privs: bool,
    /// The command's capabilities.
    pub capabilities: CapabilityState,
    /// The seccomp policy installed (foreign architectures are always killed), if any.
    pub seccomp: Option<SeccompPolicy>,
    /// Whether every exec is judged.
    pub exec_guard: ExecGuardMode,
    /// Whether the host's Unix sockets are out of reach (every `connect`
    /// judged by the socket guard).
    pub socket_guard: bool,
    /// Whether descriptors inherited from the caller are closed at the
    /// command's `execve` (all but the ones passed explicitly).
    pub inherited_fds_closed: bool,
}

/// How a [`RlimitResource::Processes`] limit holds. `RLIMIT_NPROC` does not
/// bind uid 0 (`copy_process` exempts the host's root user whatever its
/// capabilities, and the sandbox maps the caller's uid to itself), so the plan
/// caps the PID namespace too where the kernel allows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessLimit {
    /// No process limit asked.
    NotRequested,
    /// At most this many PIDs (processes and threads) for the command and its
    /// descendants, whoever the caller ([`Step::CapPidNamespace`]; `RLIMIT_NPROC`
    /// is set as well).
    PidNamespace(u64),
    /// `RLIMIT_NPROC` only (the kernel predates a per-namespace `pid_max`): it
    /// binds this caller, which is not uid 0.
    Rlimit(u64),
    /// `RLIMIT_NPROC` is set but binds nothing: the caller is uid 0 and the
    /// kernel predates a per-namespace `pid_max`. Reported, not refused, like
    /// missing cgroup limits.
    NotEnforcedForRoot(u64),
}

impl fmt::Display for ProcessLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = PID_MAX_PER_NAMESPACE_SINCE;
        match self {
            ProcessLimit::NotRequested => write!(f, "no process limit"),
            ProcessLimit::PidNamespace(n) => write!(f, "processes: at most {n} (PID namespace)"),
            ProcessLimit::Rlimit(n) => write!(f, "processes: at most {n} (RLIMIT_NPROC)"),
            ProcessLimit::NotEnforcedForRoot(n) => write!(
                f,
                "processes: limit {n} NOT enforced (RLIMIT_NPROC does not bind uid 0 and this \
                 kernel has no per-PID-namespace pid_max, Linux {major}.{minor}+)"
            ),
        }
    }
}

/// The command's capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapabilityState {
    /// Empty bounding, ambient, effective, permitted and inheritable sets (checked).
    AllDropped,
    /// Whatever `execve` gives in the user namespace (everything, for uid 0).
    Inherited,
}

impl fmt::Display for Enforced {
    /// One line: `namespaces user,mount,pid,ipc,net; Landlock ABI 6; 2 secret masks; ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns: Vec<&str> = self
            .namespaces
            .iter()
            .map(|n| match n {
                Namespace::User => "user",
                Namespace::Mount => "mount",
                Namespace::Pid => "pid",
                Namespace::Ipc => "ipc",
                Namespace::Net => "net",
            })
            .collect();
        write!(f, "namespaces {}; ", ns.join(","))?;
        match self.landlock_abi {
            Some(abi) => match self.readable {
                Some(n) => write!(f, "Landlock ABI {abi}, reads confined to {n} paths; ")?,
                None => write!(f, "Landlock ABI {abi}; ")?,
            },
            None => write!(f, "no Landlock; ")?,
        }
        write!(
            f,
            "{} secret masks; {} read-only paths; {} rlimits; ",
            self.secret_masks,
            self.read_only_paths,
            self.rlimits.len(),
        )?;
        if self.processes != ProcessLimit::NotRequested {
            write!(f, "{}; ", self.processes)?;
        }
        write!(
            f,
            "no_new_privs {}; ",
            if self.no_new_privs { "on" } else { "off" }
        )?;
        match self.capabilities {
            CapabilityState::AllDropped => write!(f, "capabilities none; ")?,
            CapabilityState::Inherited => write!(f, "capabilities inherited; ")?,
        }
        match &self.seccomp {
            Some(p) => write!(
                f,
                "seccomp {} calls denied, foreign architectures killed",
                p.denials.len()
            ),
            None => write!(f, "no seccomp"),
        }?;
        if self.cgroup != CgroupLimits::NotRequested {
            write!(f, "; {}", self.cgroup)?;
        }
        if self.exec_guard == ExecGuardMode::Required {
            write!(f, "; every exec judged (seccomp notify, ptrace exec stop)")?;
        }
        if self.socket_guard {
            write!(f, "; host Unix sockets out of reach (every connect judged)")?;
        }
        Ok(())
    }
}

/// A kernel namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Namespace {
    /// `CLONE_NEWUSER`.
    User,
    /// `CLONE_NEWNS`.
    Mount,
    /// `CLONE_NEWPID`.
    Pid,
    /// `CLONE_NEWIPC`.
    Ipc,
    /// `CLONE_NEWNET`.
    Net,
}

/// One setup step. `apply` runs them in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `prctl(PR_SET_PDEATHSIG, SIGKILL)` in the supervisor.
    ParentDeathSignal,
    /// The supervisor joins a child cgroup of `parent` that the caller made
    /// with these limits just before forking it (and removes once it ends),
    /// so init and the command are born inside.
    JoinCgroup {
        /// The caller's own cgroup directory.
        parent: PathBuf,
        /// `memory.max`.
        memory_max_bytes: Option<u64>,
        /// `pids.max`.
        pids_max: Option<u64>,
    },
    /// `unshare` of these namespaces, in one call.
    Unshare(Vec<Namespace>),
    /// Write `/proc/self/{setgroups,uid_map,gid_map}`: uid and gid map to themselves.
    MapIds {
        /// Caller's uid.
        uid: u32,
        /// Caller's gid.
        gid: u32,
    },
    /// Set `IFF_UP` on `lo` in the new network namespace.
    LoopbackUp,
    /// Open a `sock_diag` socket in the new network namespace for the
    /// socket guard (the command hands it to the caller with the seccomp
    /// listener): how the caller tells the sandbox's own listeners.
    OpenSocketDiag,
    /// Listen on these TCP ports at `127.0.0.1` in the new network namespace
    /// and send the sockets to the caller.
    ListenOnLoopback(Vec<u16>),
    /// Fork PID 1 of the new PID namespace; it reaps and dies with the command.
    ForkInit,
    /// `mount(/, MS_REC|MS_PRIVATE)`.
    MakeMountsPrivate,
    /// Mount a fresh `proc` on `/proc`.
    MountProc,
    /// Let the command and its descendants hold at most this many PIDs
    /// (threads count): init writes `pid_max` = [`RESERVED_PIDS`] + max and
    /// `ns_last_pid` = [`RESERVED_PIDS`] in its own PID namespace, so every
    /// later PID comes from `[300, 300 + max)` and `fork` fails with EAGAIN
    /// once they are all taken. Planned with a `Processes` rlimit, which does
    /// not bind uid 0 (the kernel exempts the host's root user).
    CapPidNamespace(u64),
    /// Make the empty file and directory that masks are bound from: a read-only
    /// tmpfs mounted over `/proc` while the masks are bound (a bind source must
    /// be attached), then detached by [`Step::UnmountMaskSources`].
    MountMaskSources,
    /// Detach the mask sources; the binds keep the tmpfs alive, unreachable by path.
    UnmountMaskSources,
    /// Bind an empty read-only file or directory over `path` (symlinks resolved).
    Mask {
        /// Real path to hide.
        path: PathBuf,
        /// What to put over it.
        kind: PathKind,
    },
    /// Bind an empty read-only file over the host's datagram socket `path`
    /// (a path gone meanwhile is skipped): a datagram sent to it with an
    /// address, which needs no `connect`, fails.
    MaskDatagramSocket(PathBuf),
    /// Bind `path` over itself so it cannot be renamed or removed.
    PinMountPoint(PathBuf),
    /// Bind `path` over itself recursively, then remount it read-only.
    BindReadOnly(PathBuf),
    /// Bind `path`, beneath a read-only bind, over itself and remount it
    /// writable.
    BindWritableAgain(PathBuf),
    /// Bind the file `source` over the file `target` (writable: Landlock
    /// grants the source).
    BindFile {
        /// The file written instead.
        source: PathBuf,
        /// Where it is seen.
        target: PathBuf,
    },
    /// `chdir` to this path (the caller's working directory, else the
    /// workspace), so the working directory is looked up through the masks.
    ChangeDirectory(PathBuf),
    /// Fork the command process.
    ForkCommand,
    /// Mark every descriptor above 2 but these close-on-exec (in the
    /// command, which closes them at its `execve`): whatever the caller's
    /// own caller left open does not cross into the sandbox.
    CloseInheritedFds(Vec<i32>),
    /// `setrlimit`.
    SetRlimit(Rlimit),
    /// `prctl(PR_SET_NO_NEW_PRIVS)`.
    NoNewPrivs,
    /// Landlock: read beneath `readable` (everywhere when `None`), full
    /// access beneath `writable`; must be fully enforced.
    Landlock {
        /// ABI whose access rights are handled.
        abi: u32,
        /// Paths with read and write access (workspace first).
        writable: Vec<PathBuf>,
        /// Paths with read access only; `None`: everywhere.
        readable: Option<Vec<PathBuf>>,
        /// Denials after the command's exec are reported to the kernel's
        /// audit log (`LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON`, ABI 7).
        log_denials: bool,
    },
    /// Drop every capability from the bounding, ambient, effective, permitted
    /// and inheritable sets, then check none is left.
    DropCapabilities,
    /// Install the seccomp filter built from this policy (foreign architectures killed).
    Seccomp(SeccompPolicy),
    /// Hand the command to the exec guard: install a seccomp filter that
    /// sends every `execve`/`execveat` to the caller (user notification),
    /// pass its listener to the caller, and wait until the caller's guard
    /// thread traces this process (`PTRACE_SEIZE`). See `docs/exec-guard.md`.
    /// The same filter sends every `connect` to the socket guard.
    AttachExecGuard,
    /// Without the exec guard: install a seccomp filter that sends every
    /// `connect` to the caller's socket guard, and pass its listener.
    AttachSocketGuard,
}

impl Step {
    /// Short name of the boundary this step builds, for error messages.
    pub fn boundary(&self) -> &'static str {
        match self {
            Step::ParentDeathSignal => "parent-death signal",
            Step::JoinCgroup { .. } => "cgroup limits",
            Step::Unshare(_) => "namespaces",
            Step::MapIds { .. } => "user namespace id maps",
            Step::LoopbackUp => "network namespace loopback",
            Step::OpenSocketDiag => "socket guard (sock_diag socket)",
            Step::ListenOnLoopback(_) => "network relay listener",
            Step::ForkInit => "PID namespace init",
            Step::MakeMountsPrivate => "mount namespace (private propagation)",
            Step::MountProc => "PID namespace /proc",
            Step::CapPidNamespace(_) => "process cap (PID namespace pid_max)",
            Step::MountMaskSources | Step::UnmountMaskSources => "secret mask sources",
            Step::Mask { .. } => "secret mask",
            Step::MaskDatagramSocket(_) => "host datagram socket mask",
            Step::PinMountPoint(_) => "read-only path pin",
            Step::BindReadOnly(_) => "read-only path",
            Step::BindWritableAgain(_) => "writable path beneath a read-only one",
            Step::BindFile { .. } => "file bound over another",
            Step::ChangeDirectory(_) => "working directory",
            Step::ForkCommand => "command process",
            Step::CloseInheritedFds(_) => "inherited descriptors",
            Step::SetRlimit(_) => "rlimit",
            Step::NoNewPrivs => "no_new_privs",
            Step::Landlock { .. } => "Landlock",
            Step::DropCapabilities => "capabilities",
            Step::Seccomp(_) => "seccomp",
            Step::AttachExecGuard => "exec guard",
            Step::AttachSocketGuard => "socket guard",
        }
    }

    /// The path the step acts on, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Step::Mask { path, .. }
            | Step::MaskDatagramSocket(path)
            | Step::PinMountPoint(path)
            | Step::BindReadOnly(path)
            | Step::BindWritableAgain(path)
            | Step::BindFile { target: path, .. }
            | Step::ChangeDirectory(path)
            | Step::JoinCgroup { parent: path, .. } => Some(path),
            _ => None,
        }
    }
}

/// Why no plan could be made. Every variant is a refusal to run (fail closed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// Loopback listeners were asked for with the host's network.
    ListenersNeedNetworkOff,
    /// Landlock is required but the kernel has none (ABI 0).
    LandlockUnavailable,
    /// Landlock is required but the kernel's ABI is too old to confine writes fully.
    LandlockTooOld {
        /// ABI the kernel reports.
        found: u32,
        /// Lowest ABI accepted.
        required: u32,
    },
    /// The workspace does not exist or is not a directory.
    WorkspaceNotADirectory(PathBuf),
    /// A read-only path is not inside the workspace (after resolving symlinks).
    ReadOnlyPathOutsideWorkspace(PathBuf),
    /// A read-only path does not exist; the command could create it and write there.
    ReadOnlyPathMissing(PathBuf),
    /// A writable path does not exist.
    WritablePathMissing(PathBuf),
    /// A file to bind (or the file to bind it over) does not exist or is not a file.
    BoundFileMissing(PathBuf),
    /// A file to mask has other hard links, which a mount cannot hide.
    MaskedFileHasHardLinks {
        /// The file.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// The exec guard needs Landlock: without it a sandboxed process could
    /// write the memory of a process stopped for the commit check through
    /// `/proc/<pid>/mem`.
    ExecGuardNeedsLandlock,
    /// The exec guard needs `/proc` outside every writable path, for the
    /// same reason.
    ExecGuardProcWritable(PathBuf),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::ListenersNeedNetworkOff => write!(
                f,
                "loopback listeners need the sandbox's own network namespace (network off)"
            ),
            PlanError::LandlockUnavailable => write!(
                f,
                "Landlock is required but this kernel has none (ABI 0); boot a kernel with \
                 CONFIG_SECURITY_LANDLOCK=y and `landlock` in the lsm= list"
            ),
            PlanError::LandlockTooOld { found, required } => write!(
                f,
                "Landlock is required but the kernel offers ABI {found}; ABI {required} \
                 (Linux 6.2) or newer is needed to confine writes fully"
            ),
            PlanError::WorkspaceNotADirectory(p) => {
                write!(f, "workspace {} is not a directory", p.display())
            }
            PlanError::ReadOnlyPathOutsideWorkspace(p) => write!(
                f,
                "read-only path {} is not inside the workspace",
                p.display()
            ),
            PlanError::ReadOnlyPathMissing(p) => write!(
                f,
                "read-only path {} does not exist; create it first so it can be protected",
                p.display()
            ),
            PlanError::WritablePathMissing(p) => {
                write!(f, "writable path {} does not exist", p.display())
            }
            PlanError::BoundFileMissing(p) => {
                write!(
                    f,
                    "file to bind {} does not exist or is not a file",
                    p.display()
                )
            }
            PlanError::MaskedFileHasHardLinks { path, links } => write!(
                f,
                "secret {} has {links} hard links; a mask cannot hide the other names",
                path.display()
            ),
            PlanError::ExecGuardNeedsLandlock => write!(
                f,
                "the exec guard needs Landlock (it keeps /proc/<pid>/mem read-only); \
                 use a profile with Landlock"
            ),
            PlanError::ExecGuardProcWritable(p) => write!(
                f,
                "the exec guard needs /proc read-only, but {} is writable; remove it from \
                 the writable paths",
                p.display()
            ),
        }
    }
}

impl std::error::Error for PlanError {}

/// Build the plan for `spec` on a host described by `facts`. Pure.
pub fn plan(spec: &SandboxSpec, facts: &HostFacts) -> Result<SandboxPlan, PlanError> {
    if spec.exec_guard == ExecGuardMode::Required && spec.landlock == LandlockMode::Off {
        return Err(PlanError::ExecGuardNeedsLandlock);
    }
    let landlock_abi = plan_landlock_abi(spec.landlock, facts.landlock_abi)?;
    let workspace = match facts.path(&spec.workspace) {
        PathFacts::Exists {
            real,
            kind: PathKind::Dir,
            ..
        } => real.clone(),
        _ => return Err(PlanError::WorkspaceNotADirectory(spec.workspace.clone())),
    };

    let mut steps = vec![Step::ParentDeathSignal];
    let cgroup = plan_cgroup(spec, &facts.cgroup, facts.uid);
    if let CgroupLimits::Enforced {
        parent,
        memory_max_bytes,
        pids_max,
    } = &cgroup
    {
        steps.push(Step::JoinCgroup {
            parent: parent.clone(),
            memory_max_bytes: *memory_max_bytes,
            pids_max: *pids_max,
        });
    }
    let mut namespaces = vec![
        Namespace::User,
        Namespace::Mount,
        Namespace::Pid,
        Namespace::Ipc,
    ];
    if spec.network == NetworkMode::Off {
        namespaces.push(Namespace::Net);
    }
    steps.push(Step::Unshare(namespaces));
    steps.push(Step::MapIds {
        uid: facts.uid,
        gid: facts.gid,
    });
    let guard_sockets = spec.socket_guard == SocketGuardMode::Required;
    if spec.network == NetworkMode::Off {
        steps.push(Step::LoopbackUp);
        if guard_sockets {
            steps.push(Step::OpenSocketDiag);
        }
        if !spec.loopback_listeners.is_empty() {
            steps.push(Step::ListenOnLoopback(spec.loopback_listeners.clone()));
        }
    } else if !spec.loopback_listeners.is_empty() {
        return Err(PlanError::ListenersNeedNetworkOff);
    }
    steps.push(Step::ForkInit);
    steps.push(Step::MakeMountsPrivate);
    steps.push(Step::MountProc);
    let processes = plan_process_limit(spec, facts);
    if let ProcessLimit::PidNamespace(max) = processes {
        steps.push(Step::CapPidNamespace(max));
    }
    let mut masks = plan_masks(spec, facts)?;
    let datagram_masks = if guard_sockets {
        plan_datagram_masks(spec, facts, &mut masks)
    } else {
        0
    };
    if !masks.is_empty() {
        steps.push(Step::MountMaskSources);
        steps.extend(masks);
        steps.push(Step::UnmountMaskSources);
    }
    for (source, target) in &spec.file_binds {
        let real = |p: &PathBuf| match facts.path(p) {
            PathFacts::Exists {
                real,
                kind: PathKind::File,
                ..
            } => Ok(real.clone()),
            _ => Err(PlanError::BoundFileMissing(p.clone())),
        };
        steps.push(Step::BindFile {
            source: real(source)?,
            target: real(target)?,
        });
    }
    steps.extend(plan_read_only(spec, facts, &workspace)?);
    for w in &spec.writable_again {
        if let PathFacts::Exists { real, .. } = facts.path(w) {
            steps.push(Step::BindWritableAgain(real.clone()));
        }
    }
    steps.push(Step::ChangeDirectory(
        facts.cwd.clone().unwrap_or_else(|| workspace.clone()),
    ));
    steps.push(Step::ForkCommand);
    let mut keep: Vec<i32> = spec.pass_fds.iter().copied().filter(|fd| *fd > 2).collect();
    keep.sort_unstable();
    keep.dedup();
    steps.push(Step::CloseInheritedFds(keep));
    steps.extend(spec.rlimits.iter().copied().map(Step::SetRlimit));
    steps.push(Step::NoNewPrivs);
    if let Some(abi) = landlock_abi {
        let mut writable = vec![workspace];
        // A file bound over another is written through its source's inode.
        writable.extend(steps.iter().filter_map(|s| match s {
            Step::BindFile { source, .. } => Some(source.clone()),
            _ => None,
        }));
        for w in &spec.writable {
            match facts.path(w) {
                PathFacts::Exists { real, .. } => writable.push(real.clone()),
                PathFacts::Missing => return Err(PlanError::WritablePathMissing(w.clone())),
            }
        }
        let proc_writable = writable.iter().find(|w| Path::new("/proc").starts_with(w));
        if let (ExecGuardMode::Required, Some(w)) = (spec.exec_guard, proc_writable) {
            return Err(PlanError::ExecGuardProcWritable(w.clone()));
        }
        // Only what exists can be read; symlinks are granted at their target.
        // Real paths are canonical, so equal paths are equal bytes: one set
        // (a readable /tmp cut into its entries is hundreds of paths, and a
        // search of the list for each was most of a start).
        let readable = spec.readable.as_ref().map(|paths| {
            let mut real: Vec<PathBuf> = Vec::with_capacity(paths.len());
            let mut seen = std::collections::HashSet::new();
            for p in paths {
                if let PathFacts::Exists { real: r, .. } = facts.path(p)
                    && seen.insert(r.as_os_str())
                {
                    real.push(r.clone());
                }
            }
            real
        });
        steps.push(Step::Landlock {
            abi,
            writable,
            readable,
            log_denials: spec.log_denials && facts.landlock_abi >= 7,
        });
    }
    steps.push(Step::DropCapabilities);
    let mut seccomp = plan_seccomp();
    // With the exec guard, its notifier answers the unconditional denials
    // (the same errno), so each is recorded.
    seccomp.notify_refusals = spec.exec_guard == ExecGuardMode::Required;
    steps.push(Step::Seccomp(seccomp));
    if spec.exec_guard == ExecGuardMode::Required {
        steps.push(Step::AttachExecGuard);
    } else if guard_sockets {
        steps.push(Step::AttachSocketGuard);
    }
    let sockets = guard_sockets.then(|| SocketPlan {
        host_network: spec.network == NetworkMode::Host,
        allowed: spec.allowed_sockets.clone(),
        datagram_masks,
    });
    Ok(SandboxPlan {
        steps,
        processes,
        cgroup,
        sockets,
    })
}

/// The Landlock ABI to use, `None` when Landlock is off.
fn plan_landlock_abi(mode: LandlockMode, host_abi: u32) -> Result<Option<u32>, PlanError> {
    match mode {
        LandlockMode::Off => Ok(None),
        LandlockMode::Required if host_abi == 0 => Err(PlanError::LandlockUnavailable),
        LandlockMode::Required if host_abi < LANDLOCK_MIN_ABI => Err(PlanError::LandlockTooOld {
            found: host_abi,
            required: LANDLOCK_MIN_ABI,
        }),
        LandlockMode::Required => Ok(Some(host_abi.min(LANDLOCK_MAX_ABI))),
    }
}

/// How the spec's `Processes` rlimit (the lowest, if several) will hold: by
/// the PID namespace where the kernel has a per-namespace `pid_max`, else by
/// `RLIMIT_NPROC` alone, which binds every caller but uid 0.
fn plan_process_limit(spec: &SandboxSpec, facts: &HostFacts) -> ProcessLimit {
    let Some(limit) = spec
        .rlimits
        .iter()
        .filter(|r| r.resource == RlimitResource::Processes)
        .map(|r| r.limit)
        .min()
    else {
        return ProcessLimit::NotRequested;
    };
    let per_namespace = facts
        .kernel_version
        .is_some_and(|v| v >= PID_MAX_PER_NAMESPACE_SINCE);
    // The command itself needs a PID; past the PID space there is nothing to cap.
    let max = limit.max(1);
    match (per_namespace, facts.uid) {
        (true, _) if max <= PID_MAX_LIMIT - RESERVED_PIDS => ProcessLimit::PidNamespace(max),
        (true, _) => ProcessLimit::Rlimit(limit),
        (false, 0) => ProcessLimit::NotEnforcedForRoot(limit),
        (false, _) => ProcessLimit::Rlimit(limit),
    }
}

fn plan_masks(spec: &SandboxSpec, facts: &HostFacts) -> Result<Vec<Step>, PlanError> {
    let mut steps: Vec<Step> = Vec::new();
    // Hundreds of masked paths, several of which resolve to the same place:
    // a set, not a search of the steps so far for each.
    let mut seen: std::collections::HashSet<(&Path, PathKind)> = std::collections::HashSet::new();
    for m in &spec.masked {
        let PathFacts::Exists { real, kind, links } = facts.path(m) else {
            continue;
        };
        if *kind == PathKind::File && *links > 1 {
            return Err(PlanError::MaskedFileHasHardLinks {
                path: m.clone(),
                links: *links,
            });
        }
        if seen.insert((real.as_path(), *kind)) {
            steps.push(Step::Mask {
                path: real.clone(),
                kind: *kind,
            });
        }
    }
    Ok(steps)
}

/// Masks for the host's bound datagram sockets (a datagram sent with an
/// address needs no `connect`, so the socket guard never sees it): an empty
/// file over each, unless it is one the sandbox may reach or masked
/// already. Returns how many were added.
fn plan_datagram_masks(spec: &SandboxSpec, facts: &HostFacts, masks: &mut Vec<Step>) -> usize {
    let allowed: Vec<&PathBuf> = spec
        .allowed_sockets
        .iter()
        .filter_map(|p| match facts.path(p) {
            PathFacts::Exists { real, .. } => Some(real),
            PathFacts::Missing => None,
        })
        .collect();
    let mut added = 0;
    let mut taken: std::collections::HashSet<PathBuf> = masks
        .iter()
        .filter_map(|s| match s {
            Step::Mask {
                path,
                kind: PathKind::File,
            }
            | Step::MaskDatagramSocket(path) => Some(path.clone()),
            _ => None,
        })
        .collect();
    for p in &facts.datagram_sockets {
        let PathFacts::Exists {
            real,
            kind: PathKind::File,
            links: 1,
        } = facts.path(p)
        else {
            continue;
        };
        if allowed.contains(&real) || !taken.insert(real.clone()) {
            continue;
        }
        masks.push(Step::MaskDatagramSocket(real.clone()));
        added += 1;
    }
    added
}

fn plan_read_only(
    spec: &SandboxSpec,
    facts: &HostFacts,
    workspace: &Path,
) -> Result<Vec<Step>, PlanError> {
    let mut pins: Vec<PathBuf> = Vec::new();
    let mut binds: Vec<PathBuf> = Vec::new();
    // Where the command may write: only there can an ancestor of a
    // read-only path be renamed to move it out of the way.
    let mut roots: Vec<PathBuf> = vec![workspace.to_path_buf()];
    roots.extend(spec.writable.iter().filter_map(|w| match facts.path(w) {
        PathFacts::Exists { real, .. } => Some(real.clone()),
        PathFacts::Missing => None,
    }));
    for rel in &spec.read_only {
        // An absolute path (an agent's configuration in the home directory)
        // stands for itself; a relative one is in the workspace and must
        // stay there once links are resolved.
        let joined = spec.workspace.join(rel);
        let real = match facts.path(&joined) {
            PathFacts::Exists { real, .. } => real.clone(),
            PathFacts::Missing => return Err(PlanError::ReadOnlyPathMissing(joined)),
        };
        let root = if rel.is_absolute() {
            roots
                .iter()
                .filter(|r| real.starts_with(r) && real != **r)
                .max_by_key(|r| r.components().count())
                .cloned()
        } else {
            match real.strip_prefix(workspace) {
                Ok(inner) if !inner.as_os_str().is_empty() => Some(workspace.to_path_buf()),
                _ => return Err(PlanError::ReadOnlyPathOutsideWorkspace(joined)),
            }
        };
        // Every directory strictly between the writable root and the path.
        if let Some(root) = root
            && let Ok(inner) = real.strip_prefix(&root)
        {
            let mut ancestor = root.clone();
            let components: Vec<_> = inner.components().collect();
            for c in &components[..components.len().saturating_sub(1)] {
                ancestor.push(c);
                if !pins.contains(&ancestor) {
                    pins.push(ancestor.clone());
                }
            }
        }
        if !binds.contains(&real) {
            binds.push(real);
        }
    }
    // Outermost first: a pin mounted later would hide the binds beneath it.
    pins.sort_by_key(|p| p.components().count());
    let mut steps: Vec<Step> = pins.into_iter().map(Step::PinMountPoint).collect();
    steps.extend(binds.into_iter().map(Step::BindReadOnly));
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroup::CgroupFacts;
    use crate::spec::RlimitResource;
    use std::collections::HashMap;

    fn dir(p: &str) -> PathFacts {
        PathFacts::Exists {
            real: PathBuf::from(p),
            kind: PathKind::Dir,
            links: 2,
        }
    }

    fn file(p: &str, links: u64) -> PathFacts {
        PathFacts::Exists {
            real: PathBuf::from(p),
            kind: PathKind::File,
            links,
        }
    }

    fn facts(abi: u32, paths: &[(&str, PathFacts)]) -> HostFacts {
        HostFacts {
            datagram_sockets: Vec::new(),
            landlock_abi: abi,
            uid: 1000,
            gid: 1000,
            kernel_version: Some((6, 18)),
            cwd: Some("/ws/src".into()),
            cgroup: CgroupFacts::default(),
            paths: paths
                .iter()
                .map(|(k, v)| (PathBuf::from(k), v.clone()))
                .collect::<HashMap<_, _>>(),
        }
    }

    #[test]
    fn strict_plan_has_every_boundary_in_order() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.read_only = vec![".git/hooks".into(), ".git/config".into()];
        spec.masked = vec!["/home/u/.ssh".into(), "/home/u/.netrc".into()];
        spec.writable = vec!["/dev/null".into()];
        spec.rlimits = vec![Rlimit {
            resource: RlimitResource::OpenFiles,
            limit: 256,
        }];
        let f = facts(
            7,
            &[
                ("/ws", dir("/ws")),
                ("/ws/.git/hooks", dir("/ws/.git/hooks")),
                ("/ws/.git/config", file("/ws/.git/config", 1)),
                ("/home/u/.ssh", dir("/home/u/.ssh")),
                ("/dev/null", file("/dev/null", 1)),
            ],
        );
        let got = plan(&spec, &f).unwrap();
        let want = vec![
            Step::ParentDeathSignal,
            Step::Unshare(vec![
                Namespace::User,
                Namespace::Mount,
                Namespace::Pid,
                Namespace::Ipc,
                Namespace::Net,
            ]),
            Step::MapIds {
                uid: 1000,
                gid: 1000,
            },
            Step::LoopbackUp,
            Step::OpenSocketDiag,
            Step::ForkInit,
            Step::MakeMountsPrivate,
            Step::MountProc,
            // ~/.netrc is missing: nothing to hide.
            Step::MountMaskSources,
            Step::Mask {
                path: "/home/u/.ssh".into(),
                kind: PathKind::Dir,
            },
            Step::UnmountMaskSources,
            Step::PinMountPoint("/ws/.git".into()),
            Step::BindReadOnly("/ws/.git/hooks".into()),
            Step::BindReadOnly("/ws/.git/config".into()),
            Step::ChangeDirectory("/ws/src".into()),
            Step::ForkCommand,
            Step::CloseInheritedFds(Vec::new()),
            Step::SetRlimit(Rlimit {
                resource: RlimitResource::OpenFiles,
                limit: 256,
            }),
            Step::NoNewPrivs,
            Step::Landlock {
                abi: LANDLOCK_MAX_ABI,
                writable: vec!["/ws".into(), "/dev/null".into()],
                readable: None,
                log_denials: false,
            },
            Step::DropCapabilities,
            Step::Seccomp(plan_seccomp()),
            Step::AttachSocketGuard,
        ];
        assert_eq!(got.steps, want);
    }

    #[test]
    fn confined_reads_keep_what_exists_once_at_its_real_path() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.readable = Some(vec![
            "/usr".into(),
            "/lib64".into(),
            "/missing".into(),
            "/usr".into(),
        ]);
        let f = facts(
            6,
            &[
                ("/ws", dir("/ws")),
                ("/usr", dir("/usr")),
                ("/lib64", dir("/usr/lib64")),
            ],
        );
        let got = plan(&spec, &f).unwrap();
        let readable = got.steps.iter().find_map(|s| match s {
            Step::Landlock { readable, .. } => Some(readable.clone()),
            _ => None,
        });
        assert_eq!(
            readable,
            Some(Some(vec![
                PathBuf::from("/usr"),
                PathBuf::from("/usr/lib64")
            ]))
        );
        assert!(
            got.enforced()
                .to_string()
                .contains("Landlock ABI 6, reads confined to 2 paths;"),
            "{}",
            got.enforced()
        );
    }

    #[test]
    fn strict_plan_reports_every_enforced_boundary() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.masked = vec!["/home/u/.ssh".into()];
        let f = facts(
            6,
            &[("/ws", dir("/ws")), ("/home/u/.ssh", dir("/home/u/.ssh"))],
        );
        let got = plan(&spec, &f).unwrap().enforced();
        assert_eq!(
            got,
            Enforced {
                namespaces: vec![
                    Namespace::User,
                    Namespace::Mount,
                    Namespace::Pid,
                    Namespace::Ipc,
                    Namespace::Net
                ],
                landlock_abi: Some(6),
                readable: None,
                secret_masks: 1,
                read_only_paths: 0,
                rlimits: Vec::new(),
                processes: ProcessLimit::NotRequested,
                cgroup: CgroupLimits::NotRequested,
                no_new_privs: true,
                capabilities: CapabilityState::AllDropped,
                seccomp: Some(plan_seccomp()),
                exec_guard: ExecGuardMode::Off,
                socket_guard: true,
                inherited_fds_closed: true,
            }
        );
        assert_eq!(
            got.to_string(),
            format!(
                "namespaces user,mount,pid,ipc,net; Landlock ABI 6; 1 secret masks; \
                 0 read-only paths; 0 rlimits; no_new_privs on; capabilities none; \
                 seccomp {} calls denied, foreign architectures killed; \
                 host Unix sockets out of reach (every connect judged)",
                plan_seccomp().denials.len()
            )
        );
    }

    #[test]
    fn seccomp_comes_after_no_new_privs_landlock_and_the_capability_drop() {
        let got = plan(
            &SandboxSpec::strict("/ws"),
            &facts(6, &[("/ws", dir("/ws"))]),
        )
        .unwrap();
        let at = |want: fn(&Step) -> bool| got.steps.iter().position(want).unwrap();
        let nnp = at(|s| *s == Step::NoNewPrivs);
        let landlock = at(|s| matches!(s, Step::Landlock { .. }));
        let caps = at(|s| *s == Step::DropCapabilities);
        let seccomp = at(|s| matches!(s, Step::Seccomp(_)));
        assert!(nnp < landlock && landlock < caps && caps < seccomp);
        assert_eq!(
            seccomp,
            got.steps.len() - 2,
            "seccomp is the last step before the socket guard's filter and exec"
        );
        assert_eq!(got.steps.last(), Some(&Step::AttachSocketGuard));
    }

    #[test]
    fn exec_guard_attaches_last_after_the_seccomp_filter() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.exec_guard = ExecGuardMode::Required;
        let got = plan(&spec, &facts(6, &[("/ws", dir("/ws"))])).unwrap();
        let n = got.steps.len();
        // Its notifier answers (and records) the unconditional denials.
        let mut seccomp = plan_seccomp();
        seccomp.notify_refusals = true;
        assert_eq!(got.steps[n - 2], Step::Seccomp(seccomp));
        assert_eq!(got.steps[n - 1], Step::AttachExecGuard);
        let enforced = got.enforced();
        assert_eq!(enforced.exec_guard, ExecGuardMode::Required);
        assert!(
            enforced.to_string().ends_with(
                "; every exec judged (seccomp notify, ptrace exec stop); \
                 host Unix sockets out of reach (every connect judged)"
            ),
            "{enforced}"
        );
    }

    #[test]
    fn exec_guard_fails_closed_without_landlock_or_with_proc_writable() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.exec_guard = ExecGuardMode::Required;
        spec.landlock = LandlockMode::Off;
        let f = facts(6, &[("/ws", dir("/ws")), ("/", dir("/"))]);
        assert_eq!(
            plan(&spec, &f).unwrap_err(),
            PlanError::ExecGuardNeedsLandlock
        );
        spec.landlock = LandlockMode::Required;
        spec.writable = vec!["/".into()];
        let err = plan(&spec, &f).unwrap_err();
        assert_eq!(err, PlanError::ExecGuardProcWritable("/".into()));
        assert!(err.to_string().contains("/proc read-only"), "{err}");
    }

    #[test]
    fn network_host_keeps_the_host_network_namespace() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.network = NetworkMode::Host;
        let got = plan(&spec, &facts(6, &[("/ws", dir("/ws"))])).unwrap();
        assert!(!got.steps.contains(&Step::LoopbackUp));
        assert!(got.steps.contains(&Step::Unshare(vec![
            Namespace::User,
            Namespace::Mount,
            Namespace::Pid,
            Namespace::Ipc
        ])));
    }

    fn processes(limit: u64) -> Rlimit {
        Rlimit {
            resource: RlimitResource::Processes,
            limit,
        }
    }

    #[test]
    fn process_limit_also_caps_the_pid_namespace_right_after_proc() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.rlimits = vec![processes(64), processes(32)];
        spec.masked = vec!["/home/u/.ssh".into()];
        for uid in [0, 1000] {
            let mut f = facts(
                6,
                &[("/ws", dir("/ws")), ("/home/u/.ssh", dir("/home/u/.ssh"))],
            );
            f.uid = uid;
            f.kernel_version = Some(PID_MAX_PER_NAMESPACE_SINCE);
            let got = plan(&spec, &f).unwrap();
            let proc_at = got.steps.iter().position(|s| *s == Step::MountProc);
            let cap_at = got
                .steps
                .iter()
                .position(|s| *s == Step::CapPidNamespace(32));
            // Before the mask sources cover /proc.
            assert_eq!(cap_at, proc_at.map(|p| p + 1), "uid {uid}: {got:?}");
            assert_eq!(got.steps[cap_at.unwrap() + 1], Step::MountMaskSources);
            let enforced = got.enforced();
            assert_eq!(enforced.processes, ProcessLimit::PidNamespace(32));
            assert!(
                enforced
                    .to_string()
                    .contains("2 rlimits; processes: at most 32 (PID namespace); "),
                "{enforced}"
            );
        }
    }

    #[test]
    fn process_limit_without_per_namespace_pid_max_is_the_rlimit_and_says_root_is_not_bound() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.rlimits = vec![processes(32)];
        let mut f = facts(6, &[("/ws", dir("/ws"))]);
        f.kernel_version = Some((6, 13));
        // Unprivileged: RLIMIT_NPROC binds, no cap needed.
        let got = plan(&spec, &f).unwrap();
        assert!(got.steps.contains(&Step::SetRlimit(processes(32))));
        assert!(
            !got.steps
                .iter()
                .any(|s| matches!(s, Step::CapPidNamespace(_)))
        );
        assert_eq!(got.enforced().processes, ProcessLimit::Rlimit(32));
        // uid 0: planned anyway (like missing cgroup limits), said plainly.
        for kernel in [Some((6, 13)), None] {
            f.uid = 0;
            f.kernel_version = kernel;
            let got = plan(&spec, &f).unwrap();
            assert!(got.steps.contains(&Step::SetRlimit(processes(32))));
            let enforced = got.enforced();
            assert_eq!(enforced.processes, ProcessLimit::NotEnforcedForRoot(32));
            assert!(
                enforced
                    .to_string()
                    .contains("processes: limit 32 NOT enforced (RLIMIT_NPROC does not bind uid 0"),
                "{enforced}"
            );
        }
    }

    #[test]
    fn process_cap_keeps_a_pid_for_the_command_and_ignores_limits_past_the_pid_space() {
        let mut spec = SandboxSpec::strict("/ws");
        let f = facts(6, &[("/ws", dir("/ws"))]);
        spec.rlimits = vec![processes(0)];
        let got = plan(&spec, &f).unwrap();
        assert!(got.steps.contains(&Step::CapPidNamespace(1)));
        spec.rlimits = vec![processes(u64::MAX)];
        let got = plan(&spec, &f).unwrap();
        assert!(
            !got.steps
                .iter()
                .any(|s| matches!(s, Step::CapPidNamespace(_)))
        );
        assert_eq!(got.processes, ProcessLimit::Rlimit(u64::MAX));
    }

    #[test]
    fn cgroup_limits_join_first_where_delegated_and_are_reported_either_way() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.memory_max_bytes = Some(1 << 30);
        let mut f = facts(6, &[("/ws", dir("/ws"))]);
        f.cgroup = CgroupFacts {
            mount: Some("/sys/fs/cgroup".into()),
            own: Some("/aq.scope".into()),
            writable: true,
            subtree_control: vec!["memory".into()],
            controllers: vec!["memory".into()],
        };
        let got = plan(&spec, &f).unwrap();
        // Before the supervisor unshares or forks anything.
        assert_eq!(
            got.steps[..2],
            [
                Step::ParentDeathSignal,
                Step::JoinCgroup {
                    parent: "/sys/fs/cgroup/aq.scope".into(),
                    memory_max_bytes: Some(1 << 30),
                    pids_max: None,
                }
            ]
        );
        assert!(
            got.enforced().to_string().contains(
                "; limits: cgroup v2 memory.max 1073741824 (beneath /sys/fs/cgroup/aq.scope)"
            ),
            "{}",
            got.enforced()
        );
        f.cgroup.writable = false;
        let got = plan(&spec, &f).unwrap();
        assert!(
            !got.steps
                .iter()
                .any(|s| matches!(s, Step::JoinCgroup { .. }))
        );
        let enforced = got.enforced();
        assert!(matches!(enforced.cgroup, CgroupLimits::Unavailable { .. }));
        assert!(
            enforced.to_string().contains(
                "; limits: rlimits only (no writable cgroup v2 delegation: \
                 /sys/fs/cgroup/aq.scope is not writable by uid 1000 (not delegated))"
            ),
            "{enforced}"
        );
    }

    #[test]
    fn the_socket_guard_masks_the_hosts_datagram_sockets_but_aqs_own() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.allowed_sockets = vec!["/state/s/supervisor.sock".into()];
        let mut f = facts(
            6,
            &[
                ("/ws", dir("/ws")),
                ("/dev/log", file("/run/systemd/journal/dev-log", 1)),
                ("/run/systemd/notify", file("/run/systemd/notify", 1)),
                (
                    "/state/s/supervisor.sock",
                    file("/state/s/supervisor.sock", 1),
                ),
                ("/run/gone", PathFacts::Missing),
            ],
        );
        f.datagram_sockets = vec![
            "/dev/log".into(),
            "/run/systemd/notify".into(),
            "/state/s/supervisor.sock".into(),
            "/run/gone".into(),
        ];
        let got = plan(&spec, &f).unwrap();
        let masked: Vec<&Step> = got
            .steps
            .iter()
            .filter(|s| matches!(s, Step::MaskDatagramSocket(_)))
            .collect();
        assert_eq!(
            masked,
            [
                &Step::MaskDatagramSocket("/run/systemd/journal/dev-log".into()),
                &Step::MaskDatagramSocket("/run/systemd/notify".into()),
            ]
        );
        // Bound between the mask sources, like the secrets.
        let at = |want: &Step| got.steps.iter().position(|s| s == want).unwrap();
        assert!(at(&Step::MountMaskSources) < at(masked[0]));
        assert!(at(masked[1]) < at(&Step::UnmountMaskSources));
        assert_eq!(
            got.sockets,
            Some(SocketPlan {
                host_network: false,
                allowed: vec!["/state/s/supervisor.sock".into()],
                datagram_masks: 2,
            })
        );
        assert!(got.steps.contains(&Step::OpenSocketDiag));
        // The host's network: no diag socket from inside (the caller's own
        // namespace is the sandbox's).
        spec.network = NetworkMode::Host;
        let host = plan(&spec, &f).unwrap();
        assert!(!host.steps.contains(&Step::OpenSocketDiag));
        assert!(host.sockets.as_ref().is_some_and(|s| s.host_network));
        // Without the guard: no masks, no filter, nothing reported.
        spec.socket_guard = SocketGuardMode::Off;
        let off = plan(&spec, &f).unwrap();
        assert!(!off.steps.iter().any(|s| matches!(
            s,
            Step::MaskDatagramSocket(_) | Step::AttachSocketGuard | Step::OpenSocketDiag
        )));
        assert_eq!(off.sockets, None);
        assert!(!off.enforced().socket_guard);
    }

    #[test]
    fn descriptors_passed_explicitly_are_the_only_ones_kept() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.pass_fds = vec![9, 0, 7, 9, 2];
        let got = plan(&spec, &facts(6, &[("/ws", dir("/ws"))])).unwrap();
        let fork = got
            .steps
            .iter()
            .position(|s| *s == Step::ForkCommand)
            .unwrap();
        // In the command, first: stdio is never touched, each fd kept once.
        assert_eq!(got.steps[fork + 1], Step::CloseInheritedFds(vec![7, 9]));
        assert!(got.enforced().inherited_fds_closed);
    }

    #[test]
    fn landlock_required_without_landlock_fails_closed() {
        let spec = SandboxSpec::strict("/ws");
        let err = plan(&spec, &facts(0, &[("/ws", dir("/ws"))])).unwrap_err();
        assert_eq!(err, PlanError::LandlockUnavailable);
        assert!(err.to_string().contains("Landlock is required"), "{err}");
    }

    #[test]
    fn landlock_abi_below_three_fails_closed() {
        let spec = SandboxSpec::strict("/ws");
        for abi in 1..LANDLOCK_MIN_ABI {
            let err = plan(&spec, &facts(abi, &[("/ws", dir("/ws"))])).unwrap_err();
            assert_eq!(
                err,
                PlanError::LandlockTooOld {
                    found: abi,
                    required: 3
                }
            );
        }
    }

    #[test]
    fn landlock_off_needs_no_landlock() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.landlock = LandlockMode::Off;
        let got = plan(&spec, &facts(0, &[("/ws", dir("/ws"))])).unwrap();
        assert!(!got.steps.iter().any(|s| matches!(s, Step::Landlock { .. })));
        assert!(got.steps.contains(&Step::NoNewPrivs));
    }

    #[test]
    fn mask_targets_the_real_path_behind_a_symlink() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.masked = vec!["/home/u/.ssh/id_rsa".into(), "/home/u/key-alias".into()];
        let f = facts(
            6,
            &[
                ("/ws", dir("/ws")),
                ("/home/u/.ssh/id_rsa", file("/data/ssh/id_rsa", 1)),
                ("/home/u/key-alias", file("/data/ssh/id_rsa", 1)),
            ],
        );
        let got = plan(&spec, &f).unwrap();
        let masks: Vec<_> = got
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Mask { .. }))
            .collect();
        assert_eq!(
            masks,
            vec![&Step::Mask {
                path: "/data/ssh/id_rsa".into(),
                kind: PathKind::File
            }]
        );
    }

    #[test]
    fn hard_linked_secret_fails_closed() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.masked = vec!["/home/u/.netrc".into()];
        let f = facts(
            6,
            &[
                ("/ws", dir("/ws")),
                ("/home/u/.netrc", file("/home/u/.netrc", 2)),
            ],
        );
        assert_eq!(
            plan(&spec, &f).unwrap_err(),
            PlanError::MaskedFileHasHardLinks {
                path: "/home/u/.netrc".into(),
                links: 2
            }
        );
    }

    #[test]
    fn read_only_paths_must_exist_and_stay_inside_the_workspace() {
        let mut spec = SandboxSpec::strict("/ws");
        spec.read_only = vec![".git/hooks".into()];
        let missing = facts(6, &[("/ws", dir("/ws"))]);
        assert_eq!(
            plan(&spec, &missing).unwrap_err(),
            PlanError::ReadOnlyPathMissing("/ws/.git/hooks".into())
        );
        let escaping = facts(
            6,
            &[("/ws", dir("/ws")), ("/ws/.git/hooks", dir("/elsewhere"))],
        );
        assert_eq!(
            plan(&spec, &escaping).unwrap_err(),
            PlanError::ReadOnlyPathOutsideWorkspace("/ws/.git/hooks".into())
        );
    }

    #[test]
    fn missing_workspace_and_writable_paths_are_refused() {
        let mut spec = SandboxSpec::strict("/ws");
        assert_eq!(
            plan(&spec, &facts(6, &[])).unwrap_err(),
            PlanError::WorkspaceNotADirectory("/ws".into())
        );
        spec.writable = vec!["/cache".into()];
        assert_eq!(
            plan(&spec, &facts(6, &[("/ws", dir("/ws"))])).unwrap_err(),
            PlanError::WritablePathMissing("/cache".into())
        );
    }
}
