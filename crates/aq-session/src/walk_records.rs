//! Records of a session's walks of its workspace
//! ([`aq_preflight::DirRecord`]: the git guard's search for repositories,
//! the secret search), kept between sessions in aq's state directory: the
//! next walk lists only the directories whose entries changed since.
//!
//! A record is only a hint checked against each directory's stamp, so a
//! stale one (another session's, a killed one's) costs listings, never a
//! missed repository or secret. It is not kept where the workspace is (a
//! state directory inside the workspace is writable from the sandbox).

use std::path::{Path, PathBuf};

use aq_preflight::DirRecord;
use aq_preflight::git_surface::GitWalkRecord;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A walk's record, as kept.
pub(crate) trait Record: Serialize + DeserializeOwned {
    /// It holds nothing a next walk could use.
    fn holds_nothing(&self) -> bool;
}

impl<L: Serialize + DeserializeOwned> Record for DirRecord<L> {
    fn holds_nothing(&self) -> bool {
        self.is_empty()
    }
}

impl Record for GitWalkRecord {
    fn holds_nothing(&self) -> bool {
        self.is_empty()
    }
}

/// Under the state root.
const DIR: &str = "walk-records";

/// Which walk a record is of (a file name part).
#[derive(Clone, Copy)]
pub(crate) enum Walk {
    /// The git guard's search for git directories.
    GitDirs,
    /// The secret search (`masks`).
    Secrets,
}

impl Walk {
    fn name(self) -> &'static str {
        match self {
            Walk::GitDirs => "git-dirs",
            Walk::Secrets => "secrets",
        }
    }
}

/// Where the record of `walk` in `workspace` is kept, if it may be.
fn path(walk: Walk, workspace: &Path) -> Option<PathBuf> {
    let root = crate::files::state_root().ok()?;
    if root.starts_with(workspace) {
        return None;
    }
    let id = crate::policy_files::digest(workspace.as_os_str().as_encoded_bytes());
    Some(
        root.join(DIR)
            .join(format!("{}-{}.json", walk.name(), &id[..32])),
    )
}

/// The record of `walk` the last session in `workspace` left, if any can
/// be read.
pub(crate) fn load<R: Record>(walk: Walk, workspace: &Path) -> Option<R> {
    crate::state_records::load(&path(walk, workspace)?)
}

/// Keeps `record` for the next session. An empty record removes the old one.
pub(crate) fn save<R: Record>(walk: Walk, workspace: &Path, record: &R) {
    let Some(path) = path(walk, workspace) else {
        return;
    };
    if record.holds_nothing() {
        let _ = std::fs::remove_file(&path);
        return;
    }
    crate::state_records::save(&path, record);
}
