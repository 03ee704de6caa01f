//! Workspace checkpoints: what makes every change an agent makes inside the
//! workspace undoable (docs/undo.md).
//!
//! A [`Store`] belongs to one workspace and lives in aq's state directory,
//! outside the workspace and hidden from the sandbox:
//!
//! ```text
//! $XDG_STATE_HOME/agent-quarantine/undo/<name>-<hash of the path>/
//!   workspace        the workspace's canonical path
//!   objects/xx/...   content by hash, in git's loose-object format
//!   objects/pack/    git packs (v2), for takes that write many objects
//!   checkpoints.jsonl one line per checkpoint, appended after its objects
//!   stat-cache       what the last walk saw, so unchanged files are not re-read
//!   journal.json     an undo in progress (absent when none is)
//!   lock             taken by whoever writes
//! ```
//!
//! A checkpoint holds every file git would not ignore (tracked and untracked)
//! with its content, executable bit, symlinks as links and empty directories,
//! plus the repository's refs, stash and index; ignored paths only where the
//! policy adds them; files over a size limit are listed as not kept.

use std::path::{Path, PathBuf};

mod cache;
mod diff;
mod gitstate;
mod objects;
mod pack;
mod plan;
mod prune;
mod restore;
mod rules;
mod store;
mod tree;
mod walk;
// Linux only: inotify. Elsewhere a watcher that never starts, so every
// checkpoint walks the workspace.
#[cfg(target_os = "linux")]
mod watch;
#[cfg(not(target_os = "linux"))]
#[path = "unwatched.rs"]
mod watch;

#[cfg(test)]
mod tests;

/// A checkpoint's id: the hex hash of its root object.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct CheckpointId(pub String);

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0[..self.0.len().min(12)])
    }
}

/// Why a checkpoint was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// When a session (or a hook session) starts.
    SessionStart,
    /// Before a command that may write.
    BeforeCommand,
    /// Before `aq undo` changes anything, so that the undo can be undone.
    BeforeUndo,
    /// When a session ends.
    SessionEnd,
}

/// What the caller knows about the checkpoint it asks for.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// The session's id (hook sessions included).
    pub session: Option<String>,
    /// The command that comes next, as the agent wrote it.
    pub command: Option<String>,
}

/// What is kept; from the policy's `[undo]` table.
#[derive(Clone, Debug)]
pub struct Options {
    /// Files larger than this are recorded as not kept.
    pub max_file_bytes: u64,
    /// Paths (relative to the workspace) kept although git ignores them.
    pub include: Vec<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_file_bytes: 64 << 20,
            include: Vec::new(),
        }
    }
}

/// How long checkpoints are kept.
#[derive(Clone, Debug)]
pub struct Retention {
    /// Checkpoints older than this many days go (the newest session's stay).
    pub keep_days: u32,
    /// Past this many bytes of store, the oldest sessions go first.
    pub max_store_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            keep_days: 14,
            max_store_bytes: 2 << 30,
        }
    }
}

/// One checkpoint as listed.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    pub id: CheckpointId,
    /// Unix time in milliseconds.
    pub time_ms: u64,
    pub reason: Reason,
    pub session: Option<String>,
    pub command: Option<String>,
    /// The checkpoint before this one in the store, if any.
    pub parent: Option<CheckpointId>,
    /// Files added, modified and deleted since `parent`.
    pub changed: Counts,
    /// Files not kept (over the size limit, unreadable), with why.
    pub not_kept: Vec<NotKept>,
    /// Whether the repository's refs, stash and index are in it.
    pub git_kept: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub added: u32,
    pub modified: u32,
    pub deleted: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotKept {
    pub path: PathBuf,
    pub why: String,
}

/// What [`Store::take`] did.
#[derive(Clone, Debug)]
pub enum Taken {
    /// A new checkpoint.
    New(Checkpoint),
    /// Nothing changed since the latest one, which stands for now too.
    Unchanged(CheckpointId),
}

impl Taken {
    pub fn id(&self) -> &CheckpointId {
        match self {
            Taken::New(c) => &c.id,
            Taken::Unchanged(id) => id,
        }
    }
}

/// The store's checkpoints, newest last, and the records that were skipped.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub checkpoints: Vec<Checkpoint>,
    /// Records that could not be used (torn by a crash, objects missing), with why.
    pub torn: Vec<String>,
}

/// What a path is, in a checkpoint or in the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    File {
        oid: String,
        executable: bool,
        /// The permission bits (`0o644`, `0o600`, `0o000`); kept in the
        /// tree's mode, as git would for 644 and 755 and in the same
        /// format for any other.
        mode: u32,
        size: u64,
    },
    Symlink {
        target: PathBuf,
    },
    /// An empty directory (directories with content are implied by their files).
    EmptyDir,
}

/// One difference between two states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    /// `None`: absent in the older state.
    pub old: Option<Entry>,
    /// `None`: absent in the newer state.
    pub new: Option<Entry>,
}

/// A ref (or HEAD, or a stash entry) that an undo puts back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefChange {
    pub name: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What an undo would do, for showing before it does it.
#[derive(Clone, Debug)]
pub struct Plan {
    pub target: CheckpointId,
    /// From the workspace as it is now (old) to the target (new).
    pub changes: Vec<Change>,
    pub refs: Vec<RefChange>,
    /// Whether the repository's index is put back too.
    pub index: bool,
    /// Paths the target could not keep (over the size limit): left as they are.
    pub not_restorable: Vec<NotKept>,
    /// The paths the plan was restricted to (empty: everything, refs too).
    pub paths: Vec<PathBuf>,
}

/// What an undo did.
#[derive(Clone, Debug)]
pub struct UndoReport {
    /// The checkpoint taken just before, which undoes this undo.
    pub before: CheckpointId,
    pub restored: usize,
    pub removed: usize,
    pub refs: usize,
    pub not_restorable: Vec<NotKept>,
}

/// An undo that did not finish (aq was killed): its target and the state before.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Journal {
    pub target: CheckpointId,
    pub before: CheckpointId,
    /// The paths that undo was restricted to (empty: everything).
    #[serde(default)]
    pub paths: Vec<PathBuf>,
}

#[derive(Clone, Debug, Default)]
pub struct PruneReport {
    pub checkpoints_removed: usize,
    pub bytes_freed: u64,
}

/// Directories whose entries changed since the last checkpoint, as a watcher saw them.
#[derive(Clone, Debug, Default)]
pub struct Dirty {
    /// Relative to the workspace; `""` is its root.
    pub dirs: std::collections::BTreeSet<PathBuf>,
    /// The watcher lost events: walk everything.
    pub overflow: bool,
}

/// A checkpoint store failed; the message says what and where.
#[derive(Debug)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// An I/O error with the operation and the path.
pub(crate) fn io_error(op: &str, path: &Path, e: std::io::Error) -> Error {
    Error(format!("{op} {}: {e}", path.display()))
}

/// One workspace's checkpoints.
pub struct Store {
    dir: PathBuf,
    workspace: PathBuf,
    objects: objects::Objects,
}

impl Store {
    /// Opens (creating if needed) the store of `workspace` under
    /// `state_root` (`$XDG_STATE_HOME/agent-quarantine`).
    pub fn open(state_root: &Path, workspace: &Path) -> Result<Store> {
        Store::open_impl(state_root, workspace)
    }

    /// Where every workspace's store lives under `state_root` (masked in the sandbox).
    pub fn root(state_root: &Path) -> PathBuf {
        state_root.join("undo")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Takes a checkpoint of the workspace as it is now. With `dirty`, only
    /// those directories are walked again; without, everything is (unchanged
    /// files are still not re-read, thanks to the stat cache).
    pub fn take(
        &self,
        reason: Reason,
        meta: &Meta,
        opts: &Options,
        dirty: Option<&Dirty>,
    ) -> Result<Taken> {
        let _lock = self.lock()?;
        self.take_locked(reason, meta, opts, dirty)
    }

    /// Starts a [`Watcher`] and takes a checkpoint of the whole workspace
    /// (a session's first) whose walk adds the watcher's watches, each
    /// directory's just before it lists it: the workspace is walked once,
    /// not once by the watcher and again by the checkpoint. Nothing written
    /// after a directory's watch is added is missed: what the walk did not
    /// list, the watcher reports. The watcher's error says why there is
    /// none (no inotify, the watch limit), as [`Watcher::start`]'s does;
    /// the checkpoint is taken either way.
    pub fn take_and_watch(
        &self,
        reason: Reason,
        meta: &Meta,
        opts: &Options,
    ) -> (Result<Taken>, Result<Watcher>) {
        let (taken, running) = self.take_and_watch_impl(reason, meta, opts);
        (taken, running.map(|running| Watcher { running }))
    }

    /// Every usable checkpoint, newest last.
    pub fn list(&self) -> Result<Listing> {
        Ok(self.list_impl()?.0)
    }

    /// A checkpoint named by a prefix of its id.
    pub fn resolve(&self, spec: &str) -> Result<CheckpointId> {
        let spec = spec.trim();
        if spec.is_empty() || !spec.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error(format!(
                "{spec:?} is not a checkpoint id (see aq checkpoints)"
            )));
        }
        let spec = spec.to_ascii_lowercase();
        let listing = self.list()?;
        let mut found: Vec<&CheckpointId> = Vec::new();
        for c in &listing.checkpoints {
            if c.id.0.starts_with(&spec) && !found.contains(&&c.id) {
                found.push(&c.id);
            }
        }
        match found.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Error(format!(
                "no checkpoint {spec} for {} (see aq checkpoints)",
                self.workspace.display()
            ))),
            many => Err(Error(format!(
                "{spec} names {} checkpoints ({}): give more of the id",
                many.len(),
                many.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// What changed from `from` to `to` (`None`: the workspace as it is now).
    pub fn diff(
        &self,
        from: &CheckpointId,
        to: Option<&CheckpointId>,
        opts: &Options,
    ) -> Result<Vec<Change>> {
        self.diff_impl(from, to, opts)
    }

    /// The changes as text: a unified diff for text files, one line for a
    /// binary file, mode and link changes; with `stat`, one line per path.
    pub fn render(&self, changes: &[Change], stat: bool) -> Result<String> {
        diff::render(&tree::TreeReader::new(&self.objects), changes, stat)
    }

    /// What putting the workspace back to `to` would change; with `paths`,
    /// only under those (relative) paths.
    pub fn plan_undo(&self, to: &CheckpointId, paths: &[PathBuf], opts: &Options) -> Result<Plan> {
        self.plan_impl(to, paths, opts)
    }

    /// Carries out `plan`: a checkpoint of the current state first, then a
    /// journal, then each change through a temporary name and a rename.
    pub fn undo(&self, plan: &Plan, opts: &Options) -> Result<UndoReport> {
        self.undo_impl(plan, opts)
    }

    /// An undo that was interrupted, if any.
    pub fn interrupted(&self) -> Result<Option<Journal>> {
        self.interrupted_impl()
    }

    /// Drops old checkpoints and the content only they held.
    pub fn prune(&self, retention: &Retention) -> Result<PruneReport> {
        self.prune_impl(retention)
    }
}

/// Watches the workspace (inotify, directories git does not ignore) so that
/// a checkpoint before a command walks only what changed, and none is taken
/// when nothing did.
pub struct Watcher {
    running: watch::Running,
}

impl Watcher {
    /// Starts watching; an error (no inotify, too many directories for the
    /// user's watch limit) says why, and the caller walks everything instead.
    pub fn start(workspace: &Path, opts: &Options) -> Result<Watcher> {
        Ok(Watcher {
            running: watch::start(workspace, opts)?,
        })
    }

    /// Whether anything changed since the last [`Watcher::take`].
    pub fn changed(&self) -> bool {
        self.running.changed()
    }

    /// What changed since the last call, and starts over.
    pub fn take(&self) -> Dirty {
        self.running.take()
    }

    /// Stops watching, before the process ends: the inotify instance's
    /// last close (which waits for the kernel to free its watches) is made
    /// in a short-lived child process. From then on everything counts as
    /// changed.
    pub fn stop(&self) {
        self.running.stop()
    }

    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn watched_dirs(&self) -> Vec<PathBuf> {
        self.running.watched_dirs()
    }

    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn inotify_fd(&self) -> i32 {
        self.running.inotify_fd()
    }
}
