//! Errors that say which operation of a session's runtime failed, on what:
//! reading a policy file, settling the profile and network in force,
//! checking the workspace. Each `Display` is the sentence users read (the
//! text these operations always printed); the variants keep the pieces and
//! the cause.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::policy_files::{FileKind, PROJECT_FILE};

/// Why a policy file, the managed file or the trust store could not be
/// used.
#[derive(Debug)]
pub enum PolicyFilesError {
    /// The current directory (where the workspace is looked for) is gone.
    CurrentDir {
        /// The error.
        source: io::Error,
    },
    /// A policy file is not UTF-8.
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// A policy file (or the trust store) cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file that must exist does not.
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The `--policy` file does not exist.
    MissingFlagFile {
        /// The file.
        path: PathBuf,
    },
    /// A policy file does not parse or check.
    Parse(Box<aq_policy::ConfigError>),
    /// The repository's own policy file cannot be read or parsed.
    Project(Box<PolicyFilesError>),
    /// The managed file is refused: anyone but root could have written it,
    /// or it cannot be read.
    Managed {
        /// The managed file.
        path: PathBuf,
        /// Why.
        why: ManagedRefusal,
    },
    /// A `[managed]` table outside the managed file.
    ManagedOutOfPlace {
        /// Where the table is.
        at: String,
        /// The managed file's place.
        managed: PathBuf,
        /// The file holding it.
        kind: FileKind,
    },
    /// The managed file and the layers below it do not combine.
    Combine(Box<aq_policy::ConfigError>),
    /// `--policy` is not allowed under the managed policy.
    PolicyFlag(aq_policy::ManagedError),
    /// The trust store does not parse.
    BrokenTrustStore {
        /// The store.
        path: PathBuf,
        /// The parser's answer.
        source: toml::de::Error,
    },
    /// A path to trust or untrust cannot be made absolute.
    Resolve {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Neither `XDG_CONFIG_HOME` nor `HOME` says where the config is.
    NoConfigDir,
    /// The config directory cannot be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The trust store cannot be encoded.
    EncodeTrustStore {
        /// The encoder's answer.
        source: toml::ser::Error,
    },
    /// The trust store (or its temporary file) cannot be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// Why the managed file is refused.
#[derive(Debug)]
pub enum ManagedRefusal {
    /// It is a symbolic link to nothing.
    DanglingLink,
    /// Its metadata cannot be read.
    Unreadable(io::Error),
    /// Its real path cannot be found.
    Unresolvable(io::Error),
    /// Someone other than root could write it.
    Writable(Writable),
    /// A directory on the way to it cannot be looked at.
    DirUnreadable {
        /// The directory.
        dir: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Someone other than root could write a directory on the way to it.
    DirWritable {
        /// The directory.
        dir: PathBuf,
        /// How.
        why: Writable,
    },
    /// Its text cannot be read or does not parse.
    Content(Box<PolicyFilesError>),
}

/// How someone other than root could write a file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writable {
    /// Its owner is not root.
    Owner {
        /// The owner.
        uid: u32,
    },
    /// Its mode lets group or others write.
    Mode {
        /// The permission bits.
        mode: u32,
    },
}

impl fmt::Display for Writable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Writable::Owner { uid } => write!(f, "owned by uid {uid}, not root"),
            Writable::Mode { mode } => {
                write!(f, "writable by users other than root (mode {mode:o})")
            }
        }
    }
}

impl fmt::Display for ManagedRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManagedRefusal::DanglingLink => f.write_str("it is a link to nothing"),
            ManagedRefusal::Unreadable(e) => write!(f, "it cannot be read: {e}"),
            ManagedRefusal::Unresolvable(e) => write!(f, "it cannot be resolved: {e}"),
            ManagedRefusal::Writable(why) => write!(f, "it is {why}"),
            ManagedRefusal::DirUnreadable { dir, source } => {
                write!(f, "{} cannot be read: {source}", dir.display())
            }
            ManagedRefusal::DirWritable { dir, why } => {
                write!(f, "its directory {} is {why}", dir.display())
            }
            ManagedRefusal::Content(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Display for PolicyFilesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyFilesError::CurrentDir { source } => {
                write!(f, "cannot read the current directory: {source}")
            }
            PolicyFilesError::NotUtf8 { path } => write!(
                f,
                "{}: not UTF-8 text; a policy file is TOML",
                path.display()
            ),
            PolicyFilesError::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            PolicyFilesError::Missing { path } => write!(f, "{}: no such file", path.display()),
            PolicyFilesError::MissingFlagFile { path } => {
                write!(f, "{}: no such file (given with --policy)", path.display())
            }
            PolicyFilesError::Parse(e) | PolicyFilesError::Combine(e) => write!(f, "{e}"),
            PolicyFilesError::Project(e) => write!(
                f,
                "{e}\n  this is the repository's own policy file ({PROJECT_FILE}): aq does not start with a policy it cannot read, and nothing was started; fix or remove the file (`aq preflight` reports it with the rest of the repository)"
            ),
            PolicyFilesError::Managed { path, why } => write!(
                f,
                "the managed policy {} is refused: {why}; no session starts until root fixes it (`chown root:root` it and its directory, `chmod 644` it, `aq check` to see what does not parse)",
                path.display()
            ),
            PolicyFilesError::ManagedOutOfPlace { at, managed, kind } => write!(
                f,
                "{at}: [managed] belongs in the managed file ({}) only, which root writes; take it out of this {} file",
                managed.display(),
                kind.as_str()
            ),
            PolicyFilesError::PolicyFlag(e) => write!(f, "{e}"),
            PolicyFilesError::BrokenTrustStore { path, source } => write!(
                f,
                "{}: broken trust store: {source}\n  help: fix or delete it, then trust the project files again with `aq policy trust`",
                path.display()
            ),
            PolicyFilesError::Resolve { path, source } => {
                write!(f, "cannot resolve {}: {source}", path.display())
            }
            PolicyFilesError::NoConfigDir => f.write_str(
                "cannot tell where your config directory is: set XDG_CONFIG_HOME or HOME",
            ),
            PolicyFilesError::CreateDir { path, source } => {
                write!(f, "cannot create {}: {source}", path.display())
            }
            PolicyFilesError::EncodeTrustStore { source } => {
                write!(f, "cannot write the trust store: {source}")
            }
            PolicyFilesError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for PolicyFilesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PolicyFilesError::CurrentDir { source }
            | PolicyFilesError::Read { source, .. }
            | PolicyFilesError::Resolve { source, .. }
            | PolicyFilesError::CreateDir { source, .. }
            | PolicyFilesError::Write { source, .. } => Some(source),
            PolicyFilesError::Parse(e) | PolicyFilesError::Combine(e) => Some(e.as_ref()),
            PolicyFilesError::Project(e) => Some(e.as_ref()),
            PolicyFilesError::Managed { why, .. } => match why {
                ManagedRefusal::Unreadable(e)
                | ManagedRefusal::Unresolvable(e)
                | ManagedRefusal::DirUnreadable { source: e, .. } => Some(e),
                ManagedRefusal::Content(e) => Some(e.as_ref()),
                ManagedRefusal::DanglingLink
                | ManagedRefusal::Writable(_)
                | ManagedRefusal::DirWritable { .. } => None,
            },
            PolicyFilesError::PolicyFlag(e) => Some(e),
            PolicyFilesError::BrokenTrustStore { source, .. } => Some(source),
            PolicyFilesError::EncodeTrustStore { source } => Some(source),
            PolicyFilesError::NotUtf8 { .. }
            | PolicyFilesError::Missing { .. }
            | PolicyFilesError::MissingFlagFile { .. }
            | PolicyFilesError::ManagedOutOfPlace { .. }
            | PolicyFilesError::NoConfigDir => None,
        }
    }
}

/// Why a workspace was not found where it was asked for.
#[derive(Debug)]
pub enum ResolveWorkspaceError {
    /// The current directory is gone.
    CurrentDir {
        /// The error.
        source: io::Error,
    },
    /// The directory cannot be resolved (it does not exist, say).
    Canonicalize {
        /// The directory.
        dir: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for ResolveWorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveWorkspaceError::CurrentDir { source } => {
                write!(f, "cannot read the current directory: {source}")
            }
            ResolveWorkspaceError::Canonicalize { dir, source } => {
                write!(f, "workspace {}: {source}", dir.display())
            }
        }
    }
}

impl std::error::Error for ResolveWorkspaceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ResolveWorkspaceError::CurrentDir { source }
            | ResolveWorkspaceError::Canonicalize { source, .. } => Some(source),
        }
    }
}

/// Why a session may not run in a workspace (see [`crate::workspace::check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceError {
    /// The workspace is the home directory.
    IsHome {
        /// The workspace.
        workspace: PathBuf,
    },
    /// The workspace holds the home directory.
    HoldsHome {
        /// The workspace.
        workspace: PathBuf,
        /// The home directory.
        home: PathBuf,
    },
    /// The workspace holds one of aq's own places.
    HoldsProtected {
        /// The workspace.
        workspace: PathBuf,
        /// What the place is.
        what: &'static str,
        /// Where.
        path: PathBuf,
    },
    /// The workspace is inside one of aq's own places.
    InsideProtected {
        /// The workspace.
        workspace: PathBuf,
        /// What the place is.
        what: &'static str,
        /// Where.
        path: PathBuf,
    },
}

impl fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = "Run `aq run` in a project directory (a git repository, or any directory of its own), or name one: `aq run --workspace DIR -- COMMAND`";
        match self {
            WorkspaceError::IsHome { workspace } => write!(
                f,
                "the workspace would be {}, your home directory (no git repository holds the current directory). A session may write anywhere in its workspace: your shell's startup files, your other projects, aq's own policy and session state. {how}.",
                workspace.display()
            ),
            WorkspaceError::HoldsHome { workspace, home } => write!(
                f,
                "the workspace {} holds your home directory {}: a session could write anywhere in it. {how}.",
                workspace.display(),
                home.display()
            ),
            WorkspaceError::HoldsProtected {
                workspace,
                what,
                path,
            } => write!(
                f,
                "the workspace {} holds {what} ({}): a session could rewrite its own log or approve its own commands. {how}.",
                workspace.display(),
                path.display()
            ),
            WorkspaceError::InsideProtected {
                workspace,
                what,
                path,
            } => write!(
                f,
                "the workspace {} is inside {what} ({}): a session could rewrite its own log or approve its own commands. {how}.",
                workspace.display(),
                path.display()
            ),
        }
    }
}

impl std::error::Error for WorkspaceError {}

/// Why the session's network cannot be what was asked (see
/// [`crate::network::decide`] and [`crate::network::pins`]).
#[derive(Debug)]
pub enum NetworkError {
    /// `--net allow:` with no domain.
    EmptyAllow,
    /// A `--net` value that is neither `off` nor `allow:...`.
    UnknownValue {
        /// The value.
        value: String,
    },
    /// `--net allow:` for a profile without the kernel sandbox.
    AllowWithoutSandbox {
        /// The profile.
        profile: String,
    },
    /// `--net off` asked of a profile without the kernel sandbox.
    OffWithoutSandbox {
        /// The profile.
        profile: String,
    },
    /// An allowlist entry is invalid.
    Allowlist(aq_net::EntryError),
    /// A `--resolve` (or `[network] resolve`) pin is invalid.
    Resolve(aq_net::EntryError),
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkError::EmptyAllow => f.write_str(
                "`--net allow:` needs at least one domain, e.g. --net allow:registry.npmjs.org",
            ),
            NetworkError::UnknownValue { value } => write!(
                f,
                "unknown --net value `{value}`: write `--net off` or `--net allow:DOMAIN[,DOMAIN...]`"
            ),
            NetworkError::AllowWithoutSandbox { profile } => write!(
                f,
                "`--net allow:` needs the kernel sandbox, and profile `{profile}` has none"
            ),
            NetworkError::OffWithoutSandbox { profile } => write!(
                f,
                "`--net off` needs the kernel sandbox, and profile `{profile}` has none: its commands would have the host's network"
            ),
            NetworkError::Allowlist(e) => write!(f, "network allowlist: {e}"),
            NetworkError::Resolve(e) => write!(f, "--resolve: {e}"),
        }
    }
}

impl std::error::Error for NetworkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NetworkError::Allowlist(e) | NetworkError::Resolve(e) => Some(e),
            NetworkError::EmptyAllow
            | NetworkError::UnknownValue { .. }
            | NetworkError::AllowWithoutSandbox { .. }
            | NetworkError::OffWithoutSandbox { .. } => None,
        }
    }
}

/// Why a session cannot have the profile and network asked for (see
/// [`crate::in_force::session`]).
#[derive(Debug)]
pub enum InForceError {
    /// No profile of that name.
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The profiles there are.
        available: Vec<String>,
    },
    /// The managed policy does not allow it.
    Managed(aq_policy::ManagedError),
    /// The network asked for cannot be.
    Network(NetworkError),
    /// A profile with the host's network, unfiltered, under a managed
    /// policy that locks the network.
    UnfilteredNetwork {
        /// The profile.
        profile: String,
        /// The managed file.
        managed: String,
    },
}

impl fmt::Display for InForceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InForceError::UnknownProfile { name, available } => write!(
                f,
                "unknown profile `{name}`; available: {} (`aq policy show` explains each)",
                available.join(", ")
            ),
            InForceError::Managed(e) => write!(f, "{e}"),
            InForceError::Network(e) => write!(f, "{e}"),
            InForceError::UnfilteredNetwork { profile, managed } => write!(
                f,
                "the profile `{profile}` has the host's network, unfiltered: the managed policy {managed} allows only its own hosts ([managed] lock-network); use one whose network is off or brokered (strict, network-isolated, ci)"
            ),
        }
    }
}

impl std::error::Error for InForceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InForceError::Managed(e) => Some(e),
            InForceError::Network(e) => Some(e),
            InForceError::UnknownProfile { .. } | InForceError::UnfilteredNetwork { .. } => None,
        }
    }
}

impl From<aq_policy::ManagedError> for InForceError {
    fn from(e: aq_policy::ManagedError) -> InForceError {
        InForceError::Managed(e)
    }
}

impl From<NetworkError> for InForceError {
    fn from(e: NetworkError) -> InForceError {
        InForceError::Network(e)
    }
}

/// An agent preset `--agent` names that the policy does not have (see
/// [`crate::agent::choose`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAgent {
    /// The name asked for.
    pub name: String,
    /// The presets there are.
    pub presets: Vec<String>,
}

impl fmt::Display for UnknownAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown agent `{}`; presets: {}, or `none` (`aq policy show --agents` explains each)",
            self.name,
            self.presets.join(", ")
        )
    }
}

impl std::error::Error for UnknownAgent {}

/// Why a macOS session's launch cannot be planned (see
/// [`crate::seatbelt_launch::plan`]).
#[derive(Debug)]
pub enum SeatbeltLaunchError {
    /// The session has no PATH shims, the only firewall on macOS.
    NoShims,
    /// The command's `PATH` does not start with the shims.
    PathWithoutShims {
        /// The shim directory.
        shim_dir: PathBuf,
    },
    /// The agent's key proxy needs a network namespace of the sandbox's own.
    KeyProxy {
        /// The variable naming the proxy's base URL.
        base_url_env: String,
        /// The keys it keeps outside the sandbox.
        keys_outside: Vec<String>,
    },
    /// Bridges to loopback model endpoints need one too.
    Bridges {
        /// Their ports.
        ports: Vec<u16>,
    },
    /// The Seatbelt profile or the `sandbox-exec` command line cannot be
    /// made.
    Seatbelt(aq_sandbox::SeatbeltError),
}

impl fmt::Display for SeatbeltLaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let instead = "a profile with the host's network (`network = \"host\"`, as `--profile dev`) needs neither, and `--agent none` runs without the agent preset";
        match self {
            SeatbeltLaunchError::NoShims => f.write_str(
                "on macOS the PATH shims are the firewall (there is no exec guard), and this session has none: nothing would judge what the command starts",
            ),
            SeatbeltLaunchError::PathWithoutShims { shim_dir } => write!(
                f,
                "on macOS the PATH shims are the firewall, and the command's PATH does not start with them ({}): nothing would judge what it starts",
                shim_dir.display()
            ),
            SeatbeltLaunchError::KeyProxy {
                base_url_env,
                keys_outside,
            } => {
                let keys = Some(keys_outside.join(", "))
                    .filter(|k| !k.is_empty())
                    .map(|k| format!(", which keeps {k} outside the sandbox"))
                    .unwrap_or_default();
                write!(
                    f,
                    "the agent's key proxy (for {base_url_env}{keys}) needs a network namespace of the sandbox's own, which macOS does not have; {instead}"
                )
            }
            SeatbeltLaunchError::Bridges { ports } => {
                let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
                write!(
                    f,
                    "the model endpoints on this machine's loopback (port {}) are reached through bridges in a network namespace of the sandbox's own, which macOS does not have; {instead}",
                    ports.join(", ")
                )
            }
            SeatbeltLaunchError::Seatbelt(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SeatbeltLaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SeatbeltLaunchError::Seatbelt(e) => Some(e),
            SeatbeltLaunchError::NoShims
            | SeatbeltLaunchError::PathWithoutShims { .. }
            | SeatbeltLaunchError::KeyProxy { .. }
            | SeatbeltLaunchError::Bridges { .. } => None,
        }
    }
}

impl From<aq_sandbox::SeatbeltError> for SeatbeltLaunchError {
    fn from(e: aq_sandbox::SeatbeltError) -> SeatbeltLaunchError {
        SeatbeltLaunchError::Seatbelt(e)
    }
}

/// Why `aq sandbox-profile` prints no profile (see
/// [`crate::seatbelt_profile::print`]).
#[derive(Debug)]
pub enum SeatbeltProfileError {
    /// The policy files cannot be read.
    Policy(PolicyFilesError),
    /// `--agent` names no preset.
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The presets there are.
        presets: Vec<String>,
    },
    /// The profile and network asked for cannot be.
    InForce(InForceError),
    /// The profile has no sandbox.
    NoSandbox {
        /// The profile.
        profile: String,
    },
    /// aq's state directory cannot be found.
    StateRoot(io::Error),
    /// The Seatbelt profile cannot be made.
    Seatbelt(aq_sandbox::SeatbeltError),
}

impl fmt::Display for SeatbeltProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeatbeltProfileError::Policy(e) => write!(f, "{e}"),
            SeatbeltProfileError::UnknownAgent { name, presets } => {
                write!(f, "unknown agent `{name}`; presets: {}", presets.join(", "))
            }
            SeatbeltProfileError::InForce(e) => write!(f, "{e}"),
            SeatbeltProfileError::NoSandbox { profile } => write!(
                f,
                "profile `{profile}` has no sandbox (only the PATH shims): there is no Seatbelt profile to print"
            ),
            SeatbeltProfileError::StateRoot(e) => write!(f, "{e}"),
            SeatbeltProfileError::Seatbelt(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SeatbeltProfileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SeatbeltProfileError::Policy(e) => Some(e),
            SeatbeltProfileError::InForce(e) => Some(e),
            SeatbeltProfileError::StateRoot(e) => Some(e),
            SeatbeltProfileError::Seatbelt(e) => Some(e),
            SeatbeltProfileError::UnknownAgent { .. } | SeatbeltProfileError::NoSandbox { .. } => {
                None
            }
        }
    }
}

impl From<PolicyFilesError> for SeatbeltProfileError {
    fn from(e: PolicyFilesError) -> SeatbeltProfileError {
        SeatbeltProfileError::Policy(e)
    }
}

impl From<InForceError> for SeatbeltProfileError {
    fn from(e: InForceError) -> SeatbeltProfileError {
        SeatbeltProfileError::InForce(e)
    }
}

/// Why `aq run` stopped before its command ran, with a message for the
/// caller to print (see [`crate::run::run`]).
#[derive(Debug)]
pub enum RunError {
    /// A launcher inside a sandbox found no real program to run in place.
    NotFound {
        /// The program.
        program: String,
    },
    /// A launcher inside a sandbox could not run the real program in place.
    CannotStart {
        /// The program.
        program: String,
        /// The error.
        source: io::Error,
    },
    /// The workspace cannot be found.
    Workspace(ResolveWorkspaceError),
    /// A session may not run in the workspace.
    Refused(WorkspaceError),
    /// The policy files cannot be read.
    Policy(PolicyFilesError),
    /// `[audit] export` headers in the environment do not parse.
    AuditExport(aq_export::HeadersError),
    /// `--agent` names no preset.
    Agent(UnknownAgent),
    /// The profile and network asked for cannot be.
    InForce(InForceError),
    /// A `--resolve` or `[network] resolve` pin is invalid.
    Pins(NetworkError),
    /// Learn mode, where the managed policy forbids it.
    Learn(aq_policy::ManagedError),
    /// The session's directory cannot be created.
    SessionDir(io::Error),
    /// The running aq binary (what the shims link to) cannot be found.
    AqBinary(io::Error),
    /// The shims cannot be installed.
    Shims(io::Error),
    /// The approval queue cannot be created.
    ApprovalQueue(io::Error),
    /// What the session was allowed cannot be encoded for its digest.
    Digest(serde_json::Error),
    /// The session file cannot be written.
    SessionFile(io::Error),
    /// The session's audit log cannot be opened.
    AuditLog {
        /// The log.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Checkpoints the managed policy requires cannot be kept.
    CheckpointsRequired {
        /// Why they cannot be kept.
        why: String,
        /// The managed file.
        managed: String,
    },
    /// The supervisor's socket cannot be opened.
    SupervisorSocket(io::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NotFound { program } => write!(f, "{program}: command not found"),
            RunError::CannotStart { program, source } => {
                write!(f, "cannot start {program}: {source}")
            }
            RunError::Workspace(e) => write!(f, "{e}"),
            RunError::Refused(e) => write!(f, "refused: {e}"),
            RunError::Policy(e) => write!(f, "{e}"),
            RunError::AuditExport(e) => write!(f, "[audit] export: {e}"),
            RunError::Agent(e) => write!(f, "{e}"),
            RunError::InForce(e) => write!(f, "{e}"),
            RunError::Pins(e) => write!(f, "{e}"),
            RunError::Learn(e) => write!(f, "{e}"),
            RunError::SessionDir(e) => write!(f, "cannot create the session directory: {e}"),
            RunError::AqBinary(e) => write!(f, "cannot find the aq binary: {e}"),
            RunError::Shims(e) => write!(f, "cannot install shims: {e}"),
            RunError::ApprovalQueue(e) => write!(f, "cannot create the approval queue: {e}"),
            RunError::Digest(e) => write!(f, "{e}"),
            RunError::SessionFile(e) => write!(f, "cannot write the session file: {e}"),
            RunError::AuditLog { path, source } => {
                write!(f, "cannot open the audit log {}: {source}", path.display())
            }
            RunError::CheckpointsRequired { why, managed } => write!(
                f,
                "checkpoints cannot be kept ({why}), and the managed policy {managed} requires them ([managed] require-checkpoints); nothing was run"
            ),
            RunError::SupervisorSocket(e) => write!(f, "cannot open the supervisor socket: {e}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::CannotStart { source, .. } | RunError::AuditLog { source, .. } => {
                Some(source)
            }
            RunError::SessionDir(e)
            | RunError::AqBinary(e)
            | RunError::Shims(e)
            | RunError::ApprovalQueue(e)
            | RunError::SessionFile(e)
            | RunError::SupervisorSocket(e) => Some(e),
            RunError::Workspace(e) => Some(e),
            RunError::Refused(e) => Some(e),
            RunError::Policy(e) => Some(e),
            RunError::AuditExport(e) => Some(e),
            RunError::Agent(e) => Some(e),
            RunError::InForce(e) => Some(e),
            RunError::Pins(e) => Some(e),
            RunError::Learn(e) => Some(e),
            RunError::Digest(e) => Some(e),
            RunError::NotFound { .. } | RunError::CheckpointsRequired { .. } => None,
        }
    }
}

macro_rules! into_run_error {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for RunError {
            fn from(e: $t) -> RunError {
                RunError::$v(e)
            }
        }
    )*};
}

into_run_error!(
    ResolveWorkspaceError => Workspace,
    PolicyFilesError => Policy,
    UnknownAgent => Agent,
    InForceError => InForce
);

/// Why a verb only a human may run refuses to run here (see
/// [`crate::answerer::refuse_inside_session`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswererRefusal {
    /// This process is inside an aq session.
    InsideSession {
        /// The command (`aq approve`).
        verb: String,
        /// Why it may not run there.
        because: String,
    },
    /// stdin or stdout is not a terminal.
    NotATerminal {
        /// The command.
        verb: String,
    },
}

impl fmt::Display for AnswererRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswererRefusal::InsideSession { verb, because } => {
                write!(f, "{verb} cannot run inside an aq session: {because}")
            }
            AnswererRefusal::NotATerminal { verb } => write!(
                f,
                "{verb} needs a real terminal on stdin and stdout: it is how a human, not a program, answers"
            ),
        }
    }
}

impl std::error::Error for AnswererRefusal {}

/// Why no session's log was found (see [`crate::files::resolve_log`]).
#[derive(Debug)]
pub enum SessionLookupError {
    /// The sessions cannot be listed.
    List(io::Error),
    /// No session has that id or prefix.
    NoSuch {
        /// What was asked for.
        what: String,
    },
    /// More than one session has that prefix.
    Ambiguous {
        /// What was asked for.
        what: String,
        /// How many match.
        count: usize,
    },
    /// There is no session at all.
    NoSessions,
    /// `--session` with an empty id.
    EmptyId,
    /// The sessions' directory cannot be found.
    SessionsDir(io::Error),
}

impl fmt::Display for SessionLookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionLookupError::List(e) => write!(f, "cannot list sessions: {e}"),
            SessionLookupError::NoSuch { what } => {
                write!(f, "no session `{what}` (see `aq audit list`)")
            }
            SessionLookupError::Ambiguous { what, count } => {
                write!(f, "`{what}` matches {count} sessions; give more of the id")
            }
            SessionLookupError::NoSessions => {
                f.write_str("no sessions yet: start one with `aq run -- COMMAND`")
            }
            SessionLookupError::EmptyId => {
                f.write_str("--session needs a session id (see `aq audit list`)")
            }
            SessionLookupError::SessionsDir(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SessionLookupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionLookupError::List(e) | SessionLookupError::SessionsDir(e) => Some(e),
            SessionLookupError::NoSuch { .. }
            | SessionLookupError::Ambiguous { .. }
            | SessionLookupError::NoSessions
            | SessionLookupError::EmptyId => None,
        }
    }
}

/// Why no checkpoint is the one asked for (see
/// [`crate::checkpoints::choose`]).
#[derive(Debug)]
pub enum CheckpointChoiceError {
    /// No session with that prefix took checkpoints here.
    NoSession {
        /// The prefix.
        prefix: String,
    },
    /// More than one did.
    AmbiguousSession {
        /// The prefix.
        prefix: String,
        /// The sessions it names.
        sessions: Vec<String>,
    },
    /// The checkpoint id does not resolve in the store.
    Store(aq_undo::Error),
    /// The checkpoint is not one that can be used.
    Unusable {
        /// The id, as given.
        spec: String,
    },
    /// The session took no checkpoint.
    NoCheckpointsOf {
        /// The session.
        session: String,
    },
    /// No session took a checkpoint in the workspace yet.
    NoneYet {
        /// The workspace.
        workspace: PathBuf,
    },
}

impl fmt::Display for CheckpointChoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointChoiceError::NoSession { prefix } => write!(
                f,
                "no checkpoints of a session `{prefix}` in this workspace (`aq checkpoints` lists them)"
            ),
            CheckpointChoiceError::AmbiguousSession { prefix, sessions } => write!(
                f,
                "`{prefix}` names {} sessions: {}",
                sessions.len(),
                sessions.join(", ")
            ),
            CheckpointChoiceError::Store(e) => write!(f, "{e}"),
            CheckpointChoiceError::Unusable { spec } => write!(
                f,
                "checkpoint {spec} is not usable (`aq checkpoints` lists those that are)"
            ),
            CheckpointChoiceError::NoCheckpointsOf { session } => {
                write!(f, "no checkpoints of session {session}")
            }
            CheckpointChoiceError::NoneYet { workspace } => write!(
                f,
                "no checkpoints of {} yet: they are taken by `aq run` sessions and agent hooks in it",
                workspace.display()
            ),
        }
    }
}

impl std::error::Error for CheckpointChoiceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointChoiceError::Store(e) => Some(e),
            _ => None,
        }
    }
}

/// Why the record of when grants were made cannot be read or written
/// (see [`crate::grant_dates::GrantDates`]).
#[derive(Debug)]
pub enum GrantDatesError {
    /// The record cannot be read.
    Read(PolicyFilesError),
    /// The record does not parse.
    Broken {
        /// The record.
        path: PathBuf,
        /// The parser's answer.
        source: toml::de::Error,
    },
    /// The record cannot be encoded.
    Encode(toml::ser::Error),
    /// Its directory cannot be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The record cannot be written.
    Write {
        /// The record.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for GrantDatesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrantDatesError::Read(e) => write!(f, "{e}"),
            GrantDatesError::Broken { path, source } => write!(
                f,
                "{}: broken record of grant dates: {source}; fix or delete it (the grants themselves are in policy.toml)",
                path.display()
            ),
            GrantDatesError::Encode(e) => write!(f, "cannot write the grant dates: {e}"),
            GrantDatesError::CreateDir { path, source } => {
                write!(f, "cannot create {}: {source}", path.display())
            }
            GrantDatesError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for GrantDatesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GrantDatesError::Read(e) => Some(e),
            GrantDatesError::Broken { source, .. } => Some(source),
            GrantDatesError::Encode(e) => Some(e),
            GrantDatesError::CreateDir { source, .. } | GrantDatesError::Write { source, .. } => {
                Some(source)
            }
        }
    }
}

/// Why a grant was not written to the user's policy file (see
/// [`crate::user_grants::apply`]).
#[derive(Debug)]
pub enum UserGrantError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` says where the file is.
    NoPolicyFile,
    /// The file cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The file cannot be edited.
    Edit(aq_policy::GrantError),
    /// The edited file would not be a valid policy.
    Invalid(Box<aq_policy::ConfigError>),
    /// The managed file cannot be read.
    Managed(PolicyFilesError),
    /// The managed file and the edited file do not combine.
    Combine(Box<aq_policy::ConfigError>),
    /// The managed policy does not allow the host.
    HostRefused(aq_policy::ManagedError),
    /// The managed policy would refuse the entry.
    Refused(Box<aq_policy::managed::Refusal>),
    /// The file has no directory.
    NoDirectory {
        /// The file.
        path: PathBuf,
    },
    /// The file's directory cannot be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The file, or its backup, cannot be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for UserGrantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserGrantError::NoPolicyFile => {
                f.write_str("cannot tell where your policy file is: set XDG_CONFIG_HOME or HOME")
            }
            UserGrantError::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            UserGrantError::Edit(e) => write!(f, "{e}"),
            UserGrantError::Invalid(e) => write!(
                f,
                "the change would make your policy invalid, so it was not made: {e}"
            ),
            UserGrantError::Managed(e) => write!(f, "{e}"),
            UserGrantError::Combine(e) => write!(f, "{e}"),
            UserGrantError::HostRefused(e) => write!(f, "{e}; nothing was written"),
            UserGrantError::Refused(r) => write!(f, "{r}; nothing was written"),
            UserGrantError::NoDirectory { path } => {
                write!(f, "{} has no directory", path.display())
            }
            UserGrantError::CreateDir { path, source } => {
                write!(f, "cannot create {}: {source}", path.display())
            }
            UserGrantError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for UserGrantError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UserGrantError::Read { source, .. }
            | UserGrantError::CreateDir { source, .. }
            | UserGrantError::Write { source, .. } => Some(source),
            UserGrantError::Edit(e) => Some(e),
            UserGrantError::Invalid(e) | UserGrantError::Combine(e) => Some(e.as_ref()),
            UserGrantError::Managed(e) => Some(e),
            UserGrantError::HostRefused(e) => Some(e),
            UserGrantError::NoPolicyFile
            | UserGrantError::Refused(_)
            | UserGrantError::NoDirectory { .. } => None,
        }
    }
}

/// A credential preset (`[network] credential_presets`) that cannot be
/// used (see [`crate::net_intercept::preset`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialPresetError {
    /// None of the variables it reads is set (or one holds a line break).
    Missing {
        /// The preset.
        preset: String,
        /// The variables, in the order they are looked for.
        vars: Vec<&'static str>,
    },
    /// No preset of that name.
    Unknown {
        /// The name.
        name: String,
    },
}

impl fmt::Display for CredentialPresetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialPresetError::Missing { preset, vars } => write!(
                f,
                "credential preset `{preset}` needs {} in the environment aq was started in",
                vars.join(" or ")
            ),
            CredentialPresetError::Unknown { name } => {
                write!(f, "`{name}` is not a credential preset")
            }
        }
    }
}

impl std::error::Error for CredentialPresetError {}

/// A policy source `aq policy pull` cannot fetch from (see
/// [`crate::managed_pull::Source::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    /// A plain `http://` URL.
    PlainHttp {
        /// The source, as given.
        text: String,
    },
    /// Not a URL, a repository or an absolute path.
    NotASource {
        /// The source, as given.
        text: String,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::PlainHttp { text } => write!(
                f,
                "`{text}`: a policy source is fetched over https only (over plain http an old bundle could be served forever)"
            ),
            SourceError::NotASource { text } => write!(
                f,
                "`{text}` is not a policy source: write an https:// URL of a managed.toml, git+URL of a repository holding one, or an absolute path"
            ),
        }
    }
}

impl std::error::Error for SourceError {}

/// Why a bundle's signature was not accepted (see
/// [`crate::managed_pull::verify`]).
#[derive(Debug)]
pub enum VerifyError {
    /// The pinned key is not a minisign public key.
    Key(minisign_verify::Error),
    /// The signature file is not text.
    SignatureNotText,
    /// The signature file does not parse.
    Signature(minisign_verify::Error),
    /// The signature does not verify with the key.
    Mismatch(minisign_verify::Error),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Key(e) => {
                write!(f, "the pinned public key is not a minisign key: {e}")
            }
            VerifyError::SignatureNotText => f.write_str("the signature is not text"),
            VerifyError::Signature(e) => write!(f, "the signature does not parse: {e}"),
            VerifyError::Mismatch(e) => {
                write!(f, "the signature does not verify with the pinned key: {e}")
            }
        }
    }
}

impl std::error::Error for VerifyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VerifyError::Key(e) | VerifyError::Signature(e) | VerifyError::Mismatch(e) => Some(e),
            VerifyError::SignatureNotText => None,
        }
    }
}

/// Why a bundle could not be fetched from its source.
#[derive(Debug)]
pub enum FetchError {
    /// A file of the bundle cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file of the bundle is larger than a bundle can be.
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, in bytes.
        max: u64,
    },
    /// `git` cannot be run.
    Git(io::Error),
    /// `git clone` failed.
    Clone {
        /// The repository.
        repo: String,
        /// What git said.
        stderr: String,
    },
    /// The URL cannot be fetched.
    Get {
        /// The URL.
        url: String,
        /// The error.
        source: Box<ureq::Error>,
    },
    /// The response's body cannot be read.
    ReadBody {
        /// The URL.
        url: String,
        /// The error.
        source: Box<ureq::Error>,
    },
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            FetchError::TooLarge { path, max } => write!(
                f,
                "{} is larger than a bundle can be ({max} bytes)",
                path.display()
            ),
            FetchError::Git(e) => write!(f, "cannot run git: {e}"),
            FetchError::Clone { repo, stderr } => write!(f, "cannot clone {repo}: {stderr}"),
            FetchError::Get { url, source } => write!(f, "cannot fetch {url}: {source}"),
            FetchError::ReadBody { url, source } => write!(f, "cannot read {url}: {source}"),
        }
    }
}

impl std::error::Error for FetchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FetchError::Read { source, .. } => Some(source),
            FetchError::Git(e) => Some(e),
            FetchError::Get { source, .. } | FetchError::ReadBody { source, .. } => {
                Some(source.as_ref())
            }
            FetchError::TooLarge { .. } | FetchError::Clone { .. } => None,
        }
    }
}

/// Why a fetched bundle was refused; the installed policy is unchanged.
#[derive(Debug)]
pub enum BundleRefusal {
    /// It could not be fetched.
    Fetch(FetchError),
    /// Its signature was not accepted.
    Verify(VerifyError),
    /// It is not UTF-8.
    NotUtf8,
    /// It does not parse.
    Parse(Box<aq_policy::ConfigError>),
    /// It has no `[managed]` table.
    NoManagedTable,
    /// It has no `[managed] serial`.
    NoSerial,
    /// It pins no `[managed] public-key`.
    NoPublicKey,
    /// Its serial is older than the installed one.
    Rollback {
        /// The bundle's.
        serial: u64,
        /// The installed one's.
        installed: u64,
    },
}

impl fmt::Display for BundleRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BundleRefusal::Fetch(e) => write!(f, "{e}"),
            BundleRefusal::Verify(e) => write!(f, "{e}"),
            BundleRefusal::NotUtf8 => f.write_str("the bundle is not UTF-8 text"),
            BundleRefusal::Parse(e) => write!(f, "the bundle does not parse: {e}"),
            BundleRefusal::NoManagedTable => f.write_str("the bundle has no [managed] table"),
            BundleRefusal::NoSerial => f.write_str("the bundle has no [managed] serial"),
            BundleRefusal::NoPublicKey => f.write_str(
                "the bundle pins no [managed] public-key, so the next pull could not be verified",
            ),
            BundleRefusal::Rollback { serial, installed } => write!(
                f,
                "the bundle's serial {serial} is older than the installed {installed}: a rollback is refused"
            ),
        }
    }
}

impl std::error::Error for BundleRefusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BundleRefusal::Fetch(e) => Some(e),
            BundleRefusal::Verify(e) => Some(e),
            BundleRefusal::Parse(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// Why `aq policy pull` or `aq policy status` failed (see
/// [`crate::managed_pull::pull`]).
#[derive(Debug)]
pub enum ManagedPullError {
    /// The source is not one aq fetches from.
    Source(SourceError),
    /// The status record is not JSON of its shape.
    StatusNotJson {
        /// The record.
        path: PathBuf,
        /// The parser's answer.
        source: serde_json::Error,
    },
    /// The status record cannot be read.
    ReadStatus {
        /// The record.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The installed managed file is refused, or the new one once written.
    Managed(PolicyFilesError),
    /// `--key` is not the key the installed file pins.
    KeyDiffers {
        /// The managed file.
        managed: PathBuf,
    },
    /// No key to verify with.
    NoKey {
        /// The managed file.
        managed: PathBuf,
    },
    /// No source to pull from.
    NoSource {
        /// The managed file.
        managed: PathBuf,
    },
    /// The bundle was refused; nothing changed.
    Bundle(BundleRefusal),
    /// The managed file has no directory.
    NoDirectory {
        /// The file.
        path: PathBuf,
    },
    /// Its directory cannot be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The new file cannot be put in place.
    Install {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The status record cannot be encoded.
    EncodeStatus(serde_json::Error),
}

impl fmt::Display for ManagedPullError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManagedPullError::Source(e) => write!(f, "{e}"),
            ManagedPullError::StatusNotJson { path, source } => {
                write!(f, "{}: not a status record: {source}", path.display())
            }
            ManagedPullError::ReadStatus { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            ManagedPullError::Managed(e) => write!(f, "{e}"),
            ManagedPullError::KeyDiffers { managed } => write!(
                f,
                "--key differs from the key {} pins ([managed] public-key); a new key comes in a bundle signed with the old one",
                managed.display()
            ),
            ManagedPullError::NoKey { managed } => write!(
                f,
                "no public key to verify with: {} pins none ([managed] public-key); give the team's key with --key RW…",
                managed.display()
            ),
            ManagedPullError::NoSource { managed } => write!(
                f,
                "no source given, and {} names none ([managed] source)",
                managed.display()
            ),
            ManagedPullError::Bundle(r) => write!(f, "{r}; the installed policy is unchanged"),
            ManagedPullError::NoDirectory { path } => {
                write!(f, "{} has no directory", path.display())
            }
            ManagedPullError::CreateDir { path, source } => {
                write!(f, "cannot create {}: {source}", path.display())
            }
            ManagedPullError::Install { path, source } => {
                write!(f, "cannot install {}: {source}", path.display())
            }
            ManagedPullError::EncodeStatus(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ManagedPullError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ManagedPullError::Source(e) => Some(e),
            ManagedPullError::StatusNotJson { source, .. } => Some(source),
            ManagedPullError::ReadStatus { source, .. }
            | ManagedPullError::CreateDir { source, .. }
            | ManagedPullError::Install { source, .. } => Some(source),
            ManagedPullError::Managed(e) => Some(e),
            ManagedPullError::Bundle(e) => Some(e),
            ManagedPullError::EncodeStatus(e) => Some(e),
            ManagedPullError::KeyDiffers { .. }
            | ManagedPullError::NoKey { .. }
            | ManagedPullError::NoSource { .. }
            | ManagedPullError::NoDirectory { .. } => None,
        }
    }
}

impl From<BundleRefusal> for ManagedPullError {
    fn from(e: BundleRefusal) -> ManagedPullError {
        ManagedPullError::Bundle(e)
    }
}

/// Why `aq policy suggest` or `aq audit summary` could not read the
/// sessions, or write what it suggests (see [`crate::suggest`]).
#[derive(Debug)]
pub enum SuggestError {
    /// `--since` is not an age.
    Since {
        /// The value.
        text: String,
        /// The parser's answer.
        source: humantime::DurationError,
    },
    /// The sessions cannot be listed.
    List(io::Error),
    /// A session named with `--session` is not found.
    Lookup(SessionLookupError),
    /// No session of the workspace (that recent).
    NoSessionsOf {
        /// The workspace.
        workspace: PathBuf,
        /// Whether `--since` was given.
        recent: bool,
    },
    /// No session at all.
    NoSessions,
    /// A session's log cannot be opened.
    Open {
        /// The log.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A session's log, or the user's policy file, cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Neither `XDG_CONFIG_HOME` nor `HOME` says where the policy file is.
    NoPolicyFile,
    /// The policy files cannot be read.
    Policy(PolicyFilesError),
    /// The default profile cannot be found.
    InForce(InForceError),
    /// A suggested grant could not be written.
    Grant(UserGrantError),
}

impl fmt::Display for SuggestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SuggestError::Since { text, source } => write!(
                f,
                "--since {text}: {source}; write an age like `7d`, `12h` or `30m`"
            ),
            SuggestError::List(e) => write!(f, "cannot list sessions: {e}"),
            SuggestError::Lookup(e) => write!(f, "{e}"),
            SuggestError::NoSessionsOf { workspace, recent } => write!(
                f,
                "no sessions of {}{}: name one with --session ID, or read every one with --all (`aq audit list` lists them)",
                workspace.display(),
                if *recent { " that recent" } else { "" }
            ),
            SuggestError::NoSessions => {
                f.write_str("no sessions to read (`aq audit list` lists them)")
            }
            SuggestError::Open { path, source } => {
                write!(f, "cannot open {}: {source}", path.display())
            }
            SuggestError::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            SuggestError::NoPolicyFile => {
                f.write_str("cannot tell where your policy file is: set XDG_CONFIG_HOME or HOME")
            }
            SuggestError::Policy(e) => write!(f, "{e}"),
            SuggestError::InForce(e) => write!(f, "{e}"),
            SuggestError::Grant(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SuggestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SuggestError::Since { source, .. } => Some(source),
            SuggestError::List(e) => Some(e),
            SuggestError::Open { source, .. } | SuggestError::Read { source, .. } => Some(source),
            SuggestError::Lookup(e) => Some(e),
            SuggestError::Policy(e) => Some(e),
            SuggestError::InForce(e) => Some(e),
            SuggestError::Grant(e) => Some(e),
            SuggestError::NoSessionsOf { .. }
            | SuggestError::NoSessions
            | SuggestError::NoPolicyFile => None,
        }
    }
}

/// Callers whose own errors are still sentences (`String`) use
/// `?` on these as before; the text is the `Display` above.
macro_rules! into_string {
    ($($t:ty),*) => {$(
        impl From<$t> for String {
            fn from(e: $t) -> String {
                e.to_string()
            }
        }
    )*};
}

into_string!(
    PolicyFilesError,
    ResolveWorkspaceError,
    WorkspaceError,
    NetworkError,
    InForceError,
    UnknownAgent,
    SeatbeltLaunchError,
    SeatbeltProfileError,
    RunError,
    AnswererRefusal,
    SessionLookupError,
    CheckpointChoiceError,
    GrantDatesError,
    UserGrantError,
    CredentialPresetError,
    SourceError,
    VerifyError,
    ManagedPullError,
    SuggestError
);
