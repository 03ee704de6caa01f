//! The plain input: what the caller wants isolated, with no policy language in it.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::exec_guard::ExecGuardMode;

/// What a sandbox should allow. Built by the caller (later: from an `aq` profile).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The project directory: readable and writable (except `read_only`).
    pub workspace: PathBuf,
    /// Extra paths the command may write (files or directories), e.g. `/dev/null`, `/tmp`.
    pub writable: Vec<PathBuf>,
    /// Paths beneath a [`SandboxSpec::read_only`] path that stay writable
    /// (bound over themselves again after the read-only binds): a session's
    /// `TMPDIR` inside aq's state, which is read-only. Missing ones are
    /// skipped.
    pub writable_again: Vec<PathBuf>,
    /// Paths inside the workspace that stay read-only, e.g. `.git/hooks`, `.git/config`.
    /// Relative paths are taken relative to the workspace. Each must exist (see
    /// [`crate::PlanError::ReadOnlyPathMissing`]).
    pub read_only: Vec<PathBuf>,
    /// Files bound writable over other files: `(source, target)`. The
    /// command writes the source (a session's copy) where it reads the
    /// target; the target on the host is untouched. Both must exist.
    pub file_binds: Vec<(PathBuf, PathBuf)>,
    /// Where the command may read: `None` everywhere (reads are not
    /// confined); `Some(paths)` only beneath these, the workspace and the
    /// writable paths (Landlock: EACCES elsewhere). Missing paths are skipped
    /// (there is nothing to read); symlinks are resolved first.
    pub readable: Option<Vec<PathBuf>>,
    /// Have the kernel report the command's Landlock denials (after its
    /// exec) to its audit log, where the caller reads them (Landlock ABI 7
    /// or newer; ignored below). Set only when someone reads them: on a
    /// machine with auditd each denial is a line in its log.
    pub log_denials: bool,
    /// Files and directories to hide: each is replaced by an empty read-only file or
    /// directory. Symlinks are resolved first so the real object is hidden. Missing
    /// paths are skipped (there is nothing to read).
    pub masked: Vec<PathBuf>,
    /// Whether the command reaches the host's network.
    pub network: NetworkMode,
    /// TCP ports to listen on at `127.0.0.1` inside the sandbox's own
    /// network namespace ([`NetworkMode::Off`] only). The listening sockets
    /// are handed to the caller ([`crate::apply_with`]), which serves them
    /// from outside: a relay that exists only for this session, with no
    /// socket path another process could find.
    pub loopback_listeners: Vec<u16>,
    /// Whether Landlock confines writes. `Required` fails closed when the kernel
    /// cannot fully enforce it.
    pub landlock: LandlockMode,
    /// Resource limits set just before `exec`.
    pub rlimits: Vec<Rlimit>,
    /// cgroup v2 `memory.max` for the whole sandbox, where a delegated cgroup
    /// allows it (see [`crate::CgroupLimits`]; otherwise rlimits only).
    pub memory_max_bytes: Option<u64>,
    /// cgroup v2 `pids.max` for the whole sandbox (supervisor and init
    /// included), where a delegated cgroup allows it.
    pub pids_max: Option<u64>,
    /// The command's complete environment (the caller scrubs it; nothing is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// Whether every exec in the sandbox is judged (run the plan with
    /// [`crate::apply_guarded`] then). Off in [`SandboxSpec::strict`].
    pub exec_guard: ExecGuardMode,
    /// Whether the host's Unix sockets are kept out of reach (see
    /// [`SocketGuardMode`]). Required in [`SandboxSpec::strict`].
    pub socket_guard: SocketGuardMode,
    /// Unix sockets of the host the command may connect to all the same:
    /// the ones aq itself offers it (a session's supervisor). Missing ones
    /// are skipped.
    pub allowed_sockets: Vec<PathBuf>,
    /// Descriptors above 2 the command inherits from the caller. Every
    /// other one is closed at its `execve` (a key the launcher had open
    /// stays outside, whatever its path).
    pub pass_fds: Vec<i32>,
}

/// Whether a sandbox keeps the host's Unix sockets out of reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SocketGuardMode {
    /// Every `connect` of the sandbox is made by the caller, and only to a
    /// socket a process of the sandbox listens on (or one of
    /// [`SandboxSpec::allowed_sockets`]); the host's datagram sockets that
    /// exist at the start are masked. Refused connects fail with `EACCES`.
    #[default]
    Required,
    /// No socket guard: every socket file the command can name is reachable
    /// (for tests' controls).
    Off,
}

impl SandboxSpec {
    /// A strict spec: only `workspace` writable, network off, Landlock required,
    /// no limits, empty env, no exec guard, the socket guard on, no
    /// descriptor passed.
    pub fn strict(workspace: impl Into<PathBuf>) -> SandboxSpec {
        SandboxSpec {
            workspace: workspace.into(),
            writable: Vec::new(),
            read_only: Vec::new(),
            writable_again: Vec::new(),
            file_binds: Vec::new(),
            readable: None,
            log_denials: false,
            masked: Vec::new(),
            network: NetworkMode::Off,
            loopback_listeners: Vec::new(),
            landlock: LandlockMode::Required,
            rlimits: Vec::new(),
            memory_max_bytes: None,
            pids_max: None,
            env: Vec::new(),
            exec_guard: ExecGuardMode::Off,
            socket_guard: SocketGuardMode::Required,
            allowed_sockets: Vec::new(),
            pass_fds: Vec::new(),
        }
    }
}

/// Network access of the sandboxed command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkMode {
    /// A fresh network namespace with only loopback, brought up.
    Off,
    /// The host's network namespace (no network isolation).
    Host,
}

/// Whether Landlock is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LandlockMode {
    /// Read everywhere, write only the workspace and `writable`; refuse to run otherwise.
    Required,
    /// No Landlock ruleset (writes limited only by mounts and file permissions).
    Off,
}

/// One resource limit (soft and hard set to `limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rlimit {
    /// Which resource.
    pub resource: RlimitResource,
    /// The limit, in the resource's unit.
    pub limit: u64,
}

/// Resources that can be limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RlimitResource {
    /// `RLIMIT_CPU`, seconds of CPU time.
    CpuSeconds,
    /// `RLIMIT_AS`, bytes of address space.
    AddressSpace,
    /// `RLIMIT_NPROC`, processes (threads count) of this user, counted per
    /// user namespace. The kernel exempts uid 0 from it, so the plan also caps
    /// the PID namespace at the same number ([`crate::Step::CapPidNamespace`],
    /// Linux 6.14+), which binds every caller; [`crate::ProcessLimit`] says
    /// which holds (on an older kernel, nothing does for uid 0).
    Processes,
    /// `RLIMIT_NOFILE`, open file descriptors.
    OpenFiles,
    /// `RLIMIT_FSIZE`, bytes per written file.
    FileSize,
}

impl RlimitResource {
    /// The kernel's name for the resource.
    pub fn name(self) -> &'static str {
        match self {
            RlimitResource::CpuSeconds => "RLIMIT_CPU",
            RlimitResource::AddressSpace => "RLIMIT_AS",
            RlimitResource::Processes => "RLIMIT_NPROC",
            RlimitResource::OpenFiles => "RLIMIT_NOFILE",
            RlimitResource::FileSize => "RLIMIT_FSIZE",
        }
    }
}
