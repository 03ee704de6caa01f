//! Session directories and `session.json`: where they are, reading and
//! writing them, finding a session's log.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use aq_policy::{Decision, Policy};

/// The environment variable that tells a shim which session it is in.
pub use aq_shim::entry::ENV_SESSION_DIR;
/// The session id, for programs that want to show it.
pub(crate) const ENV_SESSION_ID: &str = "AQ_SESSION_ID";

/// The session's settings and policy, written once when the session starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionFile {
    /// Session id.
    pub id: String,
    /// The workspace directory.
    pub workspace: PathBuf,
    /// The profile name.
    pub profile: String,
    /// The `aq run` process.
    pub supervisor_pid: u32,
    /// When the session started (RFC 3339).
    pub started: String,
    /// The wrapped command.
    pub command: Vec<String>,
    /// The shim directory.
    pub shim_dir: PathBuf,
    /// How long an `ask` waits for a human, in seconds.
    pub approval_timeout_secs: u64,
    /// What happens to an `ask` nobody answered: `allow` or `block`.
    pub unanswered: Decision,
    /// Secret-looking variables the shims still pass on.
    pub env_pass: Vec<String>,
    /// The effective policy.
    pub policy: Policy,
    /// Its digest, as logged in `session_start`.
    pub policy_digest: String,
    /// Whether an ask waits for its timeout with nobody attached to answer.
    #[serde(default)]
    pub wait_for_approver: bool,
    /// Where the exec guard runs unrecognised native programs without
    /// asking (`[session] trusted_exec` in force).
    #[serde(default)]
    pub trusted_exec: Vec<String>,
    /// Variables only the agent may hold (the keys passed to it), which
    /// the shims remove whatever their names look like.
    #[serde(default)]
    pub env_scrub: Vec<String>,
}

/// The state directory root.
pub fn state_root() -> io::Result<PathBuf> {
    if let Some(dir) =
        std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty() && Path::new(d).is_absolute())
    {
        return Ok(PathBuf::from(dir).join("agent-quarantine"));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local/state/agent-quarantine")),
        None => Err(io::Error::new(
            io::ErrorKind::NotFound,
            "cannot tell where to keep session state: set XDG_STATE_HOME or HOME",
        )),
    }
}

/// Where `aq enable --wrap` puts its launchers: outside every workspace,
/// and not writable from a sandbox (which writes only its workspace,
/// TMPDIR and agent state).
pub fn launcher_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("agent-quarantine/bin"))
}

/// The directory holding every session.
pub fn sessions_dir() -> io::Result<PathBuf> {
    Ok(state_root()?.join("sessions"))
}

/// A new session id: UTC time, then random hex (`20261129T230455Z-3f9a1c2b`).
pub(crate) fn new_id(now: std::time::SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(now)
        .to_string()
        .replace([':', '-'], "");
    let mut bytes = [0u8; 4];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = io::Read::read_exact(&mut f, &mut bytes);
    }
    let nanos = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix = u32::from_le_bytes(bytes) ^ nanos ^ std::process::id().rotate_left(16);
    format!("{stamp}-{mix:08x}")
}

/// Creates a session directory (mode 0700) and returns its path.
pub fn create_dir(id: &str) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = sessions_dir()?.join(id);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    Ok(dir)
}

/// Writes `session.json`.
pub fn write_file(dir: &Path, file: &SessionFile) -> io::Result<()> {
    let body = serde_json::to_vec(file).map_err(io::Error::other)?;
    std::fs::write(dir.join("session.json"), body)
}

/// Reads `session.json`.
pub fn read_file(dir: &Path) -> io::Result<SessionFile> {
    let bytes = std::fs::read(dir.join("session.json"))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", dir.join("session.json").display()),
        )
    })
}

/// The audit log of a session.
pub fn log_path(dir: &Path) -> PathBuf {
    dir.join("log.jsonl")
}

/// Every session directory, oldest first (ids sort by time).
pub fn list() -> io::Result<Vec<PathBuf>> {
    let dir = sessions_dir()?;
    let mut out = Vec::new();
    match std::fs::read_dir(&dir) {
        Ok(entries) => {
            for e in entries.flatten() {
                if e.path().join("log.jsonl").exists() || e.path().join("session.json").exists() {
                    out.push(e.path());
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // Newest last, by when each session wrote its session file (ids only
    // have one-second resolution). Each key once: a sort asks for keys
    // many times over, and each is a `stat`.
    out.sort_by_cached_key(|d| {
        let started = std::fs::metadata(d.join("session.json"))
            .and_then(|m| m.modified())
            .ok();
        (started, d.clone())
    });
    Ok(out)
}

/// Finds a session's log from an id, a unique id prefix, a session
/// directory or a log file path.
pub fn resolve_log(what: &str) -> Result<PathBuf, crate::error::SessionLookupError> {
    use crate::error::SessionLookupError;
    let p = Path::new(what);
    if p.is_file() {
        return Ok(p.to_path_buf());
    }
    if p.is_dir() && p.join("log.jsonl").is_file() {
        return Ok(p.join("log.jsonl"));
    }
    let sessions = list().map_err(SessionLookupError::List)?;
    let matches: Vec<&PathBuf> = sessions
        .iter()
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(what))
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(log_path(one)),
        [] => Err(SessionLookupError::NoSuch {
            what: what.to_string(),
        }),
        _ => Err(SessionLookupError::Ambiguous {
            what: what.to_string(),
            count: matches.len(),
        }),
    }
}

/// The newest session's log.
pub fn latest_log() -> Result<PathBuf, crate::error::SessionLookupError> {
    use crate::error::SessionLookupError;
    let sessions = list().map_err(SessionLookupError::List)?;
    sessions
        .last()
        .map(|d| log_path(d))
        .ok_or(SessionLookupError::NoSessions)
}

/// Whether a process is alive.
pub fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The current time as RFC 3339 with milliseconds.
pub fn now_rfc3339() -> String {
    rfc3339(std::time::SystemTime::now())
}

/// `at` as the log writes times (RFC 3339, UTC, milliseconds).
pub(crate) fn rfc3339(at: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// Appends an event to a session's log. A failed write is reported on
/// stderr and does not stop the command: the decision is already made.
pub fn log_event(log: &aq_audit::AuditLog, session_id: &str, body: aq_audit::EventBody) {
    if let Err(e) = log.append(body, now_rfc3339(), session_id) {
        eprintln!("aq: warning: cannot write the audit log: {e}");
    }
}
