//! Policy files on disk: where they are, reading them, and the trust store.
//!
//! The layers, in order (later wins, see `aq_policy::EffectivePolicy`):
//!
//! 1. the built-in policy;
//! 0. the managed file, `/etc/agent-quarantine/managed.toml`, root's: read
//!    first, and a ceiling nothing below loosens (`aq_policy::managed`);
//! 2. the user file, `$XDG_CONFIG_HOME/agent-quarantine/policy.toml`
//!    (default `~/.config/...`), with full power;
//! 3. the project file, `agent-quarantine.toml` at the workspace root (the
//!    git root of the current directory, else the current directory). It
//!    comes with the repository, so it may only tighten the policy unless the
//!    user trusted it with `aq policy trust`;
//! 4. `--policy FILE`, an explicit user choice with the user file's power.
//!
//! Trust lives outside the workspace, in
//! `$XDG_CONFIG_HOME/agent-quarantine/trusted.toml`: the canonical path and
//! the SHA-256 of the content. A changed file is no longer trusted, so a
//! repository cannot slip a loosening change in after the user said yes.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use aq_policy::{EffectivePolicy, PolicyLayer, Trust};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use crate::error::{ManagedRefusal, PolicyFilesError, Writable};

/// The project file's name, at the workspace root.
pub const PROJECT_FILE: &str = "agent-quarantine.toml";
/// The user file's name, in the config directory.
const USER_FILE: &str = "policy.toml";
/// The trust store's name, in the config directory.
const TRUST_FILE: &str = "trusted.toml";

/// Which layer a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The machine's managed file.
    Managed,
    /// The user's own file.
    User,
    /// The workspace's `agent-quarantine.toml`.
    Project,
    /// `--policy FILE`.
    Flag,
}

impl FileKind {
    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Managed => "managed",
            FileKind::User => "user",
            FileKind::Project => "project",
            FileKind::Flag => "--policy",
        }
    }
}

/// Whether a project file is trusted, as the trust store says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted, and unchanged since.
    Trusted,
    /// Never trusted (or trust withdrawn).
    Untrusted,
    /// Trusted once, but the content changed since: trust lapsed.
    Changed,
}

// ---- where --------------------------------------------------------------------

/// `$XDG_CONFIG_HOME/agent-quarantine`, else `$HOME/.config/agent-quarantine`.
/// A relative `XDG_CONFIG_HOME` is ignored, as the XDG spec says.
pub fn config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".config"))
        })?;
    Some(base.join("agent-quarantine"))
}

/// The user file, when a home or config directory is known.
pub fn user_file() -> Option<PathBuf> {
    config_dir().map(|d| d.join(USER_FILE))
}

/// The workspace root: the nearest directory from `cwd` up holding `.git`
/// (a directory, or a file in worktrees and submodules), else `cwd`.
pub fn workspace_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The project file of the current directory's workspace (it may not exist).
pub fn project_file() -> Result<PathBuf, PolicyFilesError> {
    let cwd = std::env::current_dir().map_err(|source| PolicyFilesError::CurrentDir { source })?;
    Ok(workspace_root(&cwd).join(PROJECT_FILE))
}

// ---- reading ------------------------------------------------------------------

/// A policy file that exists, read and parsed.
#[derive(Debug)]
pub struct LoadedFile {
    /// Its layer.
    pub kind: FileKind,
    /// Its path, as found or given.
    pub path: PathBuf,
    /// How much it may change.
    pub trust: Trust,
    /// For a project file, what the trust store says.
    pub trust_state: Option<TrustState>,
    /// Its content, checked.
    pub layer: PolicyLayer,
}

/// The effective policy and the files it came from.
#[derive(Debug)]
pub struct Loaded {
    /// The files found, in layer order.
    pub files: Vec<LoadedFile>,
    /// Where the user and project files were looked for.
    pub looked_for: Vec<(FileKind, PathBuf)>,
    /// The merged policy.
    pub effective: EffectivePolicy,
    /// `[audit] export` and `[paths] unmasked` entries of the project file,
    /// left out whether or not it is trusted: a repository never chooses
    /// where logs go, nor passes a credential back.
    pub refused_export: Vec<String>,
    /// Entries of the files below the managed file that would have loosened
    /// it, and were refused.
    pub refused_managed: Vec<aq_policy::managed::Refusal>,
}

impl Loaded {
    /// Prints each ignored loosening entry as a warning on stderr.
    pub fn warn_ignored(&self) {
        for refused in &self.refused_export {
            eprintln!("aq: warning: {refused}");
        }
        for refused in &self.refused_managed {
            eprintln!("aq: warning: {refused}");
        }
        if self.effective.ignored.is_empty() {
            return;
        }
        for f in &self.files {
            if f.trust_state == Some(TrustState::Changed) {
                eprintln!(
                    "aq: warning: {} changed since it was trusted, so it may only tighten the policy until `aq policy trust` is run again",
                    f.path.display()
                );
            }
        }
        for entry in &self.effective.ignored {
            eprintln!("aq: warning: {entry}");
        }
    }
}

/// Reads a file's text; `Ok(None)` when it does not exist.
pub fn read_text(path: &Path) -> Result<Option<String>, PolicyFilesError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| PolicyFilesError::NotUtf8 {
                path: path.to_path_buf(),
            }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PolicyFilesError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Reads and checks one policy file that must exist.
pub fn parse_file(path: &Path) -> Result<(String, PolicyLayer), PolicyFilesError> {
    let text = read_text(path)?.ok_or_else(|| PolicyFilesError::Missing {
        path: path.to_path_buf(),
    })?;
    let layer = parse(path, &text)?;
    Ok((text, layer))
}

/// Finds, reads and merges every layer. Missing user and project files are
/// skipped; a missing `--policy` file, an unreadable or invalid file, and a
/// broken trust store are errors (a policy that cannot be read is not
/// silently replaced by a weaker one).
pub fn load(flag: Option<&Path>) -> Result<Loaded, PolicyFilesError> {
    let cwd = std::env::current_dir().map_err(|source| PolicyFilesError::CurrentDir { source })?;
    load_for(&workspace_root(&cwd), flag)
}

/// [`load`] for the workspace at `workspace` (its project file is
/// `workspace/agent-quarantine.toml`).
pub fn load_for(workspace: &Path, flag: Option<&Path>) -> Result<Loaded, PolicyFilesError> {
    load_layers(workspace, flag, true)
}

/// [`load_for`] without the workspace's own project file: the user's side
/// alone. `aq preflight` judges a repository whose file is broken or hostile
/// with this (and reports the file), so the repository cannot switch the
/// scan off.
pub fn load_for_user(workspace: &Path, flag: Option<&Path>) -> Result<Loaded, PolicyFilesError> {
    load_layers(workspace, flag, false)
}

fn load_layers(
    workspace: &Path,
    flag: Option<&Path>,
    with_project: bool,
) -> Result<Loaded, PolicyFilesError> {
    let mut looked_for = Vec::new();
    let mut files = Vec::new();

    let managed = managed_file();
    if let Some(path) = &managed {
        looked_for.push((FileKind::Managed, path.clone()));
        if let Some((text, layer)) = read_managed(path)? {
            let _ = text;
            files.push(LoadedFile {
                kind: FileKind::Managed,
                path: path.clone(),
                trust: Trust::Full,
                trust_state: None,
                layer,
            });
        }
    }

    if let Some(path) = user_file() {
        looked_for.push((FileKind::User, path.clone()));
        if let Some(text) = read_text(&path)? {
            let layer = parse(&path, &text)?;
            files.push(LoadedFile {
                kind: FileKind::User,
                path,
                trust: Trust::Full,
                trust_state: None,
                layer,
            });
        }
    }

    let path = workspace.join(PROJECT_FILE);
    let project_text = if with_project {
        looked_for.push((FileKind::Project, path.clone()));
        read_text(&path).map_err(project_file_refused)?
    } else {
        None
    };
    let mut refused_export = Vec::new();
    if let Some(text) = project_text {
        let mut layer = parse(&path, &text).map_err(project_file_refused)?;
        for p in std::mem::take(&mut layer.unmasked_paths) {
            refused_export.push(format!(
                "{}: ignored [paths] unmasked `{}`: a repository's policy file cannot pass a credential back, trusted or not; set it in your own policy file{}",
                p.at,
                p.pattern,
                user_file()
                    .map(|p| format!(" ({})", p.display()))
                    .unwrap_or_default()
            ));
        }
        for (target, at) in std::mem::take(&mut layer.audit_export) {
            refused_export.push(format!(
                "{at}: ignored [audit] export to {target}: a repository's policy file cannot send your audit logs anywhere, trusted or not; set it in your own policy file{}",
                user_file()
                    .map(|p| format!(" ({})", p.display()))
                    .unwrap_or_default()
            ));
        }
        let state = TrustStore::load()?.state_of(&path, text.as_bytes());
        files.push(LoadedFile {
            kind: FileKind::Project,
            path,
            trust: if state == TrustState::Trusted {
                Trust::Full
            } else {
                Trust::TightenOnly
            },
            trust_state: Some(state),
            layer,
        });
    }

    if let Some(path) = flag {
        if !path.exists() {
            return Err(PolicyFilesError::MissingFlagFile {
                path: path.to_path_buf(),
            });
        }
        let (_, layer) = parse_file(path)?;
        files.push(LoadedFile {
            kind: FileKind::Flag,
            path: path.to_path_buf(),
            trust: Trust::Full,
            trust_state: None,
            layer,
        });
    }

    // `[managed]` is the managed file's alone.
    if let Some(f) = files
        .iter()
        .find(|f| f.kind != FileKind::Managed && f.layer.managed.is_some())
    {
        let at = &f
            .layer
            .managed
            .as_ref()
            .map(|(_, at)| at.to_string())
            .unwrap_or_default();
        return Err(PolicyFilesError::ManagedOutOfPlace {
            at: at.clone(),
            managed: managed.unwrap_or_else(|| PathBuf::from(DEFAULT_MANAGED_FILE)),
            kind: f.kind,
        });
    }
    let managed_layer = files
        .iter()
        .find(|f| f.kind == FileKind::Managed)
        .map(|f| &f.layer);
    let below: Vec<(&PolicyLayer, Trust)> = files
        .iter()
        .filter(|f| f.kind != FileKind::Managed)
        .map(|f| (&f.layer, f.trust))
        .collect();
    let (mut effective, refused_managed) = aq_policy::managed::combine(managed_layer, &below)
        .map_err(|e| PolicyFilesError::Combine(Box::new(e)))?;
    if flag.is_some() {
        aq_policy::managed::check_policy_flag(&effective).map_err(PolicyFilesError::PolicyFlag)?;
    }
    let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    effective.for_workspace(&canonical);
    effective.policy.own_dirs = own_dirs();
    effective.policy.workspace = Some(canonical.to_string_lossy().into_owned());
    effective.policy.home = std::env::var("HOME")
        .ok()
        .filter(|h| h.starts_with('/') && h.len() > 1);
    Ok(Loaded {
        files,
        looked_for,
        effective,
        refused_export,
        refused_managed,
    })
}

/// Where the managed file is on this platform.
#[cfg(target_os = "macos")]
pub const DEFAULT_MANAGED_FILE: &str = "/Library/Application Support/agent-quarantine/managed.toml";
/// Where the managed file is on this platform.
#[cfg(not(target_os = "macos"))]
pub const DEFAULT_MANAGED_FILE: &str = "/etc/agent-quarantine/managed.toml";

/// The managed file: [`DEFAULT_MANAGED_FILE`]; where that does not exist,
/// `AQ_MANAGED_FILE` may name another (a packaging or test location). The
/// variable can never take a managed file away: the default one, when it
/// exists, is always the one read, and any file is read only when root
/// owns it and only root can write it.
pub fn managed_file() -> Option<PathBuf> {
    let default = PathBuf::from(DEFAULT_MANAGED_FILE);
    // Only "not there" lets the variable choose: a default file this user
    // cannot even look at is still the one in force (and then fails closed).
    match default.symlink_metadata() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        _ => return Some(default),
    }
    std::env::var_os("AQ_MANAGED_FILE")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or(Some(default))
}

/// Reads the managed file when it exists. Fails closed: a managed file that
/// cannot be read, does not parse, or that anyone but root could have
/// written (its owner, its mode, its directory's) stops every session.
pub fn read_managed(path: &Path) -> Result<Option<(String, PolicyLayer)>, PolicyFilesError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A dangling link is not "no managed file".
            if path.symlink_metadata().is_ok() {
                return Err(managed_refused(path, ManagedRefusal::DanglingLink));
            }
            return Ok(None);
        }
        Err(e) => return Err(managed_refused(path, ManagedRefusal::Unreadable(e))),
    };
    only_root_writes(path, &meta)?;
    // Every directory on the way to it, and to what a link names: one that
    // another user can write lets that user swap the file.
    let real = std::fs::canonicalize(path)
        .map_err(|e| managed_refused(path, ManagedRefusal::Unresolvable(e)))?;
    for dir in path
        .ancestors()
        .skip(1)
        .chain(real.ancestors().skip(1))
        .filter(|d| !d.as_os_str().is_empty())
    {
        let dmeta = std::fs::metadata(dir).map_err(|source| {
            managed_refused(
                path,
                ManagedRefusal::DirUnreadable {
                    dir: dir.to_path_buf(),
                    source,
                },
            )
        })?;
        if let Some(why) = others_could_write(&dmeta, true) {
            return Err(managed_refused(
                path,
                ManagedRefusal::DirWritable {
                    dir: dir.to_path_buf(),
                    why,
                },
            ));
        }
    }
    let text = read_text(path)
        .map_err(|e| managed_refused(path, ManagedRefusal::Content(Box::new(e))))?
        .unwrap_or_default();
    let layer = parse(path, &text)
        .map_err(|e| managed_refused(path, ManagedRefusal::Content(Box::new(e))))?;
    Ok(Some((text, layer)))
}

/// Why someone other than root could write a file or directory with
/// `meta`, if they could. A root-owned sticky directory (`/tmp`) is fine
/// on the way to the file: nobody else can rename or remove root's entries.
#[cfg(unix)]
fn others_could_write(meta: &std::fs::Metadata, on_the_way: bool) -> Option<Writable> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != 0 {
        return Some(Writable::Owner { uid: meta.uid() });
    }
    if on_the_way && meta.is_dir() && meta.mode() & 0o1000 != 0 {
        return None;
    }
    (meta.mode() & 0o022 != 0).then(|| Writable::Mode {
        mode: meta.mode() & 0o7777,
    })
}

#[cfg(not(unix))]
fn others_could_write(_: &std::fs::Metadata, _: bool) -> Option<Writable> {
    None
}

fn only_root_writes(path: &Path, meta: &std::fs::Metadata) -> Result<(), PolicyFilesError> {
    match others_could_write(meta, false) {
        Some(why) => Err(managed_refused(path, ManagedRefusal::Writable(why))),
        None => Ok(()),
    }
}

fn managed_refused(path: &Path, why: ManagedRefusal) -> PolicyFilesError {
    PolicyFilesError::Managed {
        path: path.to_path_buf(),
        why,
    }
}

/// aq's own directories on this machine: its configuration, its state (the
/// session logs, approvals, what `aq enable` keeps) and its launchers, as
/// the environment places them. The engine judges writes there as it judges
/// writes to their default places ([`aq_policy::Policy::own_dirs`]).
pub fn own_dirs() -> Vec<String> {
    [
        config_dir(),
        crate::files::state_root().ok(),
        crate::files::launcher_dir().and_then(|d| d.parent().map(Path::to_path_buf)),
    ]
    .into_iter()
    .flatten()
    .map(|d| d.display().to_string())
    .collect()
}

/// The error of a repository's own policy file, with what to do: aq does
/// not start with a policy it cannot read, and the file is the repository's,
/// not the user's.
fn project_file_refused(error: PolicyFilesError) -> PolicyFilesError {
    PolicyFilesError::Project(Box::new(error))
}

fn parse(path: &Path, text: &str) -> Result<PolicyLayer, PolicyFilesError> {
    aq_policy::parse_layer(&path.display().to_string(), text)
        .map_err(|e| PolicyFilesError::Parse(Box::new(e)))
}

// ---- trust --------------------------------------------------------------------

/// The SHA-256 of a file's content, in lowercase hex.
pub fn digest(content: &[u8]) -> String {
    let mut hex = String::with_capacity(64);
    for b in Sha256::digest(content).iter() {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

/// The path a file is trusted under: canonical when it exists, else made
/// absolute (so `untrust` still works on a deleted file).
pub fn trust_key(path: &Path) -> Result<PathBuf, PolicyFilesError> {
    match std::fs::canonicalize(path) {
        Ok(p) => Ok(p),
        Err(_) => std::path::absolute(path).map_err(|source| PolicyFilesError::Resolve {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    #[serde(default)]
    file: Vec<TrustEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustEntry {
    path: String,
    sha256: String,
}

const TRUST_HEADER: &str = "\
# Policy files trusted with `aq policy trust`: each may loosen the policy while
# its content has this SHA-256. Written by aq; change it with
# `aq policy trust FILE` and `aq policy untrust FILE`.

";

/// The trusted files, as stored outside every workspace.
#[derive(Debug)]
pub struct TrustStore {
    path: Option<PathBuf>,
    entries: Vec<TrustEntry>,
}

impl TrustStore {
    /// Reads the store; no store yet means nothing is trusted.
    pub fn load() -> Result<Self, PolicyFilesError> {
        let Some(path) = config_dir().map(|d| d.join(TRUST_FILE)) else {
            return Ok(TrustStore {
                path: None,
                entries: Vec::new(),
            });
        };
        let entries = match read_text(&path)? {
            None => Vec::new(),
            Some(text) => {
                let file: TrustFile =
                    toml::from_str(&text).map_err(|source| PolicyFilesError::BrokenTrustStore {
                        path: path.clone(),
                        source,
                    })?;
                file.file
            }
        };
        Ok(TrustStore {
            path: Some(path),
            entries,
        })
    }

    /// Where it is stored.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the file at `path`, holding `content`, is trusted.
    pub(crate) fn state_of(&self, path: &Path, content: &[u8]) -> TrustState {
        let Ok(key) = trust_key(path) else {
            return TrustState::Untrusted;
        };
        let key = key.to_string_lossy();
        match self.entries.iter().find(|e| e.path == key) {
            None => TrustState::Untrusted,
            Some(e) if e.sha256 == digest(content) => TrustState::Trusted,
            Some(_) => TrustState::Changed,
        }
    }

    /// Trusts `key` (see [`trust_key`]) with this content digest, replacing
    /// an earlier entry for it.
    pub fn trust(&mut self, key: &Path, sha256: String) {
        let path = key.to_string_lossy().into_owned();
        self.entries.retain(|e| e.path != path);
        self.entries.push(TrustEntry { path, sha256 });
    }

    /// Withdraws trust from `key`; whether it was trusted.
    pub fn untrust(&mut self, key: &Path) -> bool {
        let path = key.to_string_lossy();
        let before = self.entries.len();
        self.entries.retain(|e| e.path != path);
        self.entries.len() != before
    }

    /// Writes the store (to a temporary file, then renamed over it).
    pub fn save(&self) -> Result<(), PolicyFilesError> {
        let path = self.path.as_ref().ok_or(PolicyFilesError::NoConfigDir)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| PolicyFilesError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let body = toml::to_string(&TrustFile {
            file: self.entries.clone(),
        })
        .map_err(|source| PolicyFilesError::EncodeTrustStore { source })?;
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, format!("{TRUST_HEADER}{body}")).map_err(|source| {
            PolicyFilesError::Write {
                path: tmp.clone(),
                source,
            }
        })?;
        std::fs::rename(&tmp, path).map_err(|source| PolicyFilesError::Write {
            path: path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_sha256_hex() {
        assert_eq!(
            digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn workspace_root_is_the_nearest_git_directory() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(workspace_root(&deep), deep);
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(workspace_root(&deep), repo);
    }
}
