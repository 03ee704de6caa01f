//! What a session masks: the credential catalog (`aq_knowledge::credentials`)
//! and the profile's own masks, found on this machine and in the workspace.
//!
//! 1. The profile's paths outside the workspace (`~/`, absolute, `$VAR`),
//!    expanded; the catalog's system globs (`/tmp/ssh-*`) only where they
//!    are the caller's.
//! 2. The catalog's settings files in the home directory, masked only when
//!    they hold a credential value (`~/.npmrc` with a token; a build reads
//!    it for its mirrors otherwise).
//! 3. The workspace, walked once: files named by the catalog, files whose
//!    first bytes hold a private key (only names that make one likely are
//!    read), and the profile's own file-name globs.
//! 4. What the user's policy passed back (`[paths] unmasked`) is left out,
//!    and so is a socket whose variable the user passes on
//!    (`[session] env_pass = ["SSH_AUTH_SOCK"]`, for git over SSH).
//! 5. A path inside a directory masked whole is left to that mask.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use aq_knowledge::credentials::{self, Place};
use aq_policy::Profile;
use aq_policy::profile::{catalog_conditional_masks, catalog_workspace_masks};

/// Directories never searched for secret files: dependencies and build
/// output are large and hold no secrets of the user's.
const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "vendor",
    "__pycache__",
    ".tox",
    "dist",
    "build",
];

/// How many entries the workspace search looks at; beyond it a note says so.
pub(crate) const WALK_MAX_ENTRIES: usize = 200_000;

/// At most this many files read for their content in one workspace: a
/// repository of many extensionless files must not slow every start (each
/// read is an open, a read and a close: 5 to 20 microseconds).
pub(crate) const MAX_READS: usize = 256;

/// What one session masks, and what a person should know about it.
pub(crate) struct Masks {
    /// Paths to mask (files and directories), each once.
    pub paths: BTreeSet<PathBuf>,
    /// Notes for the banner.
    pub notes: Vec<String>,
}

/// Where the masks are looked for.
pub(crate) struct MaskInputs<'a> {
    /// The canonical workspace.
    pub workspace: &'a Path,
    /// The home directory (`~`).
    pub home: Option<&'a Path>,
    /// The caller's environment (for `$SSH_AUTH_SOCK`, `$XDG_RUNTIME_DIR`).
    pub env: &'a [(OsString, OsString)],
    /// The policy's `[paths] sensitive` globs.
    pub sensitive: &'a [String],
    /// The policy's `[paths] unmasked` entries (the user's own file only).
    pub unmasked: &'a [String],
    /// Variables the user passes to commands (`[session] env_pass`, a
    /// profile's `env`): a socket passed by name (`SSH_AUTH_SOCK`) is not
    /// masked, since the user chose to hand it over.
    pub passed: &'a [String],
}

/// Finds what `profile` masks here.
pub(crate) fn plan(profile: &Profile, inputs: &MaskInputs<'_>) -> Masks {
    let mut paths = BTreeSet::new();
    let mut notes = Vec::new();
    let catalog_names: Vec<&str> = catalog_workspace_masks().collect();
    let mut globs: Vec<String> = profile
        .masked_in_workspace
        .iter()
        .filter(|m| !catalog_names.contains(&m.as_str()))
        .cloned()
        .collect();

    // 1. Paths outside the workspace.
    let system_rows: std::collections::HashSet<&str> = credentials::all()
        .iter()
        .filter(|c| c.place() == Place::System)
        .map(|c| c.mask_path())
        .collect();
    for m in profile.masked.iter().chain(inputs.sensitive) {
        if !(m.starts_with('/') || m.starts_with('~') || m.starts_with('$')) {
            globs.push(m.trim_end_matches('/').to_string());
            continue;
        }
        let system_row = system_rows.contains(m.as_str());
        let passed_var = m
            .strip_prefix('$')
            .is_some_and(|v| !v.contains('/') && inputs.passed.iter().any(|p| p == v));
        if passed_var {
            continue;
        }
        for p in expand(m, inputs) {
            if !system_row || owned_by_caller(&p) {
                paths.insert(p);
            }
        }
    }

    // 2. Settings files in the home directory that hold a credential.
    let mut by_value = Vec::new();
    for c in catalog_conditional_masks().filter(|c| c.place() != Place::Workspace) {
        for p in expand(c.mask_path(), inputs) {
            let regular = std::fs::metadata(&p).is_ok_and(|m| m.is_file());
            if regular && read_head(&p, c.read_limit()).is_some_and(|b| c.masks_content(&b)) {
                by_value.push(c.mask_path());
                paths.insert(p);
            }
        }
    }

    // 3. The workspace.
    let found = find_in_workspace(inputs.workspace, &globs, MAX_READS);
    if found.truncated {
        notes.push(format!(
            "secret search stopped after {WALK_MAX_ENTRIES} entries; files beyond were not masked"
        ));
    }
    if found.reads_capped {
        notes.push(format!(
            "secret search read {MAX_READS} files for keys and no more; the rest were masked by name only"
        ));
    }
    let by_content: Vec<String> = found
        .files
        .iter()
        .filter_map(|(p, what)| {
            let rel = p.strip_prefix(inputs.workspace).unwrap_or(p);
            what.map(|w| format!("{} ({w})", rel.display()))
        })
        .collect();
    paths.extend(found.files.into_iter().map(|(p, _)| p));

    // 4. What the user passed back.
    let before = paths.len();
    paths.retain(|p| !inputs.unmasked.iter().any(|u| unmask_covers(u, p, inputs)));
    if paths.len() < before {
        notes.push(format!(
            "{} credential path(s) left unmasked by `[paths] unmasked` in your policy",
            before - paths.len()
        ));
    }
    // A mask over the workspace, the home or a directory holding either
    // (`SSH_AUTH_SOCK=/`, a profile masking `~`) would hide what the session
    // runs in: such an entry is left out, and said.
    let holds =
        |p: &Path| inputs.workspace.starts_with(p) || inputs.home.is_some_and(|h| h.starts_with(p));
    for p in paths.iter().filter(|p| holds(p)) {
        notes.push(format!(
            "mask {} left out: it holds the workspace or the home directory",
            p.display()
        ));
    }
    paths.retain(|p| !holds(p));
    // 5. A path inside a directory masked whole is hidden with it, and its
    // own mask would have nowhere to go (the directory's mask is empty):
    // `$SSH_AUTH_SOCK` is often `$XDG_RUNTIME_DIR/keyring/ssh`.
    let dirs: Vec<PathBuf> = paths.iter().filter(|p| p.is_dir()).cloned().collect();
    paths.retain(|p| !dirs.iter().any(|d| p != d && p.starts_with(d)));
    by_value.retain(|m| expand(m, inputs).iter().any(|p| paths.contains(p)));
    if !by_value.is_empty() {
        notes.push(format!(
            "masked because they hold a credential: {}; if a build needs one, pass it back with `[paths] unmasked = [\"{}\"]` in your policy file",
            by_value.join(", "),
            by_value[0]
        ));
    }
    if !by_content.is_empty() {
        let shown: Vec<&str> = by_content.iter().take(5).map(String::as_str).collect();
        notes.push(format!(
            "masked for what they hold: {}{}",
            shown.join(", "),
            if by_content.len() > 5 {
                format!(" and {} more", by_content.len() - 5)
            } else {
                String::new()
            }
        ));
    }
    Masks { paths, notes }
}

/// The paths a mask entry names here: `~/` and absolute paths (globs
/// expanded), `$VAR` and `$VAR/rest` where the variable holds an absolute
/// path. Nothing for what cannot be expanded.
fn expand(entry: &str, inputs: &MaskInputs<'_>) -> Vec<PathBuf> {
    let path = if let Some(var) = entry.strip_prefix('$') {
        let (name, rest) = var.split_once('/').unwrap_or((var, ""));
        let Some(value) = inputs
            .env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
            .filter(|v| v.is_absolute())
        else {
            return Vec::new();
        };
        if rest.is_empty() {
            value
        } else {
            value.join(rest)
        }
    } else if let Some(rest) = entry.strip_prefix("~/") {
        match inputs.home {
            Some(h) => h.join(rest),
            None => return Vec::new(),
        }
    } else if entry == "~" {
        match inputs.home {
            Some(h) => h.to_path_buf(),
            None => return Vec::new(),
        }
    } else {
        PathBuf::from(entry)
    };
    let text = path.to_string_lossy();
    if text.contains(['*', '?', '[']) {
        // Most of the catalog's patterns are under a directory this
        // machine does not have (another browser, another cloud): then
        // nothing matches, and the pattern is not compiled and walked.
        let base: PathBuf = path
            .components()
            .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
            .collect();
        if std::fs::symlink_metadata(&base).is_err() {
            return Vec::new();
        }
        glob::glob(&text)
            .map(|paths| paths.flatten().collect())
            .unwrap_or_default()
    } else {
        vec![path]
    }
}

/// Whether a path is the caller's (or the caller is root, who reaches every
/// user's): another user's agent directory under /tmp is out of reach anyway.
fn owned_by_caller(p: &Path) -> bool {
    // SAFETY: geteuid cannot fail and has no arguments.
    let euid = unsafe { libc::geteuid() };
    euid == 0 || std::fs::symlink_metadata(p).is_ok_and(|m| m.uid() == euid)
}

/// Whether an `unmasked` entry covers a masked path: `~/` and absolute
/// entries (globs allowed) cover what they name and what is below it; a
/// file-name glob covers files of that name in the workspace; a relative
/// path with a `/` covers that path in the workspace.
fn unmask_covers(entry: &str, path: &Path, inputs: &MaskInputs<'_>) -> bool {
    let entry = entry.trim_end_matches('/');
    if entry.starts_with('/') || entry.starts_with('~') || entry.starts_with('$') {
        return expand(entry, inputs)
            .iter()
            .any(|e| path == e || path.starts_with(e));
    }
    let Ok(rel) = path.strip_prefix(inputs.workspace) else {
        return false;
    };
    if entry.contains('/') {
        glob::Pattern::new(entry).is_ok_and(|p| p.matches_path(rel))
    } else {
        path.file_name()
            .is_some_and(|n| credentials::name_matches(entry, &n.to_string_lossy()))
    }
}

/// The first `limit` bytes of a file, opened without blocking (a FIFO put
/// where a file was found must not stall the session's start).
fn read_head(path: &Path, limit: usize) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(limit.min(credentials::VALUE_BYTES));
    open_nonblocking(path)?
        .take(limit as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

/// The first bytes of a regular file into `buf`, with one `read`: what
/// [`credentials::sniff_secret`] looks at.
fn read_start<'b>(path: &Path, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let n = open_nonblocking(path)?.read(buf).ok()?;
    Some(&buf[..n])
}

fn open_nonblocking(path: &Path) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()
}

/// What the workspace search found.
pub(crate) struct Found {
    /// Files (and directories named by a profile glob) to mask; with what
    /// they hold when their content, not their name, gave them away.
    pub files: Vec<(PathBuf, Option<&'static str>)>,
    /// Whether the walk stopped at [`WALK_MAX_ENTRIES`].
    pub truncated: bool,
    /// How many files were read for their content.
    pub reads: usize,
    /// Whether some were not, past the limit.
    pub reads_capped: bool,
}

pub(crate) mod search;
pub(crate) use search::find_in_workspace;

#[cfg(test)]
mod tests;
