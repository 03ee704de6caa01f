//! A session's checkpoints of its workspace (docs/undo.md): one
//! when it starts, one before each command that may change the workspace,
//! one when it ends, so that `aq undo` can put back whatever the agent did.
//!
//! A checkpoint before a command is taken only when the workspace changed
//! since the last one (the [`aq_undo::Watcher`] says so; without a watcher,
//! always), and for ordinary commands at most one per `[undo] coalesce_ms`,
//! so that a build running thousands of compilers takes a handful. An ask,
//! an approved command or one a rule of some risk matched always gets one.
//! A checkpoint that fails is logged and the session goes on: the command
//! firewall and the sandbox do not depend on it.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use aq_audit::EventBody;
use aq_undo::{Dirty, Meta, Options, Reason, Store, Taken, Watcher};

pub use crate::error::CheckpointChoiceError;

/// The checkpoints of one session.
pub struct Checkpoints {
    store: Store,
    opts: Options,
    /// Started with the first checkpoint, off the session's start path;
    /// the error says why there is none (every checkpoint then walks
    /// everything).
    watcher: std::sync::OnceLock<std::result::Result<Watcher, aq_undo::Error>>,
    session: String,
    coalesce: Duration,
    /// When the last checkpoint was taken; held while one is being taken,
    /// so that concurrent execs wait for it rather than take their own.
    last: Mutex<Option<Instant>>,
    /// The session ended ([`Checkpoints::end`]): no more checkpoints.
    ended: std::sync::atomic::AtomicBool,
}

/// What a checkpoint did, for the log.
pub fn event(
    reason: Reason,
    command: Option<&str>,
    taken: &aq_undo::Result<Taken>,
) -> Option<EventBody> {
    let reason_name = reason_name(reason);
    match taken {
        Ok(Taken::Unchanged(_)) => None,
        Ok(Taken::New(c)) => Some(EventBody::Checkpoint {
            id: c.id.0.clone(),
            reason: reason_name.to_string(),
            command: command.map(str::to_string),
            added: c.changed.added,
            modified: c.changed.modified,
            deleted: c.changed.deleted,
            not_kept: c
                .not_kept
                .iter()
                .map(|n| format!("{} ({})", n.path.display(), n.why))
                .collect(),
            error: None,
        }),
        Err(e) => Some(EventBody::Checkpoint {
            id: String::new(),
            reason: reason_name.to_string(),
            command: command.map(str::to_string),
            added: 0,
            modified: 0,
            deleted: 0,
            not_kept: Vec::new(),
            error: Some(e.to_string()),
        }),
    }
}

fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::SessionStart => "session-start",
        Reason::BeforeCommand => "before-command",
        Reason::BeforeUndo => "before-undo",
        Reason::SessionEnd => "session-end",
    }
}

/// The store's options from the policy's `[undo]`.
pub fn options(settings: &aq_policy::UndoSettings) -> Options {
    Options {
        max_file_bytes: settings.max_file_mb.saturating_mul(1 << 20),
        include: settings.include.iter().map(Into::into).collect(),
    }
}

/// The retention from the policy's `[undo]`.
pub fn retention(settings: &aq_policy::UndoSettings) -> aq_undo::Retention {
    aq_undo::Retention {
        keep_days: settings.keep_days,
        max_store_bytes: settings.max_store_mb.saturating_mul(1 << 20),
    }
}

/// Opens the store of `workspace` in aq's state directory.
pub fn open_store(workspace: &Path) -> aq_undo::Result<Store> {
    let root = crate::files::state_root()
        .map_err(|e| aq_undo::Error(format!("no state directory for checkpoints: {e}")))?;
    Store::open(&root, workspace)
}

impl Checkpoints {
    /// Opens the store (the watcher starts with [`Checkpoints::first`]). `Err(None)`: checkpoints are
    /// off (`[undo] enabled = false`); `Err(Some(why))`: the store cannot be
    /// opened.
    pub fn open(
        settings: &aq_policy::UndoSettings,
        workspace: &Path,
        session: &str,
    ) -> Result<Checkpoints, Option<String>> {
        if !settings.enabled {
            return Err(None);
        }
        let store = open_store(workspace).map_err(|e| Some(e.to_string()))?;
        let opts = options(settings);
        Ok(Checkpoints {
            store,
            opts,
            watcher: std::sync::OnceLock::new(),
            session: session.to_string(),
            coalesce: Duration::from_millis(settings.coalesce_ms),
            last: Mutex::new(None),
            ended: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Takes the session's first checkpoint (a full walk) and starts the
    /// watcher in the same walk: each directory is watched just before the
    /// walk lists it, so that nothing written while it runs is missed.
    pub fn first(&self) -> Option<EventBody> {
        if self.watcher.get().is_some() {
            return self.take(Reason::SessionStart, None);
        }
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let (taken, watcher) = self.store.take_and_watch(
            Reason::SessionStart,
            &Meta {
                session: Some(self.session.clone()),
                command: None,
            },
            &self.opts,
        );
        let _ = self.watcher.set(watcher);
        *last = Some(Instant::now());
        event(Reason::SessionStart, None, &taken)
    }

    /// Why changes are not watched, for the session's notes.
    pub(crate) fn watch_error(&self) -> Option<&str> {
        match self.watcher.get() {
            Some(Err(e)) => Some(&e.0),
            _ => None,
        }
    }

    /// Takes a checkpoint now, whatever changed (at the session's end,
    /// none when the watcher saw no change since the last one: it would be
    /// the same).
    pub fn take(&self, reason: Reason, command: Option<&str>) -> Option<EventBody> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if self.ended.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        if reason == Reason::SessionEnd
            && let Some(Ok(w)) = self.watcher.get()
            && !w.changed()
        {
            return None;
        }
        let dirty = self.dirty(reason);
        let taken = self.store.take(
            reason,
            &Meta {
                session: Some(self.session.clone()),
                command: command.map(str::to_string),
            },
            &self.opts,
            dirty.as_ref(),
        );
        *last = Some(Instant::now());
        event(reason, command, &taken)
    }

    /// After the session's last checkpoint: no more are taken (a late
    /// request of a shim waits for none), and the watcher stops, its
    /// inotify instance closed in a short-lived child process (closing it
    /// here waited up to 13 ms for the kernel, at every session's end).
    pub fn end(&self) {
        let _last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        self.ended.store(true, std::sync::atomic::Ordering::Release);
        if let Some(Ok(w)) = self.watcher.get() {
            w.stop();
        }
    }

    /// The watcher's changes, except for the first checkpoint (a full walk).
    fn dirty(&self, reason: Reason) -> Option<Dirty> {
        let Some(Ok(w)) = self.watcher.get() else {
            return None;
        };
        let d = w.take();
        (reason != Reason::SessionStart).then_some(d)
    }

    /// Before a command: a checkpoint when the workspace changed since the
    /// last one, unless one was taken less than `coalesce_ms` ago and the
    /// command is not `urgent` (an ask, an approval, a risky rule).
    /// The command's text is made only when a checkpoint is taken: this
    /// runs before every exec the session allows.
    pub fn before(&self, argv: &[String], urgent: bool) -> Option<EventBody> {
        if self.ended.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        if let Some(Ok(w)) = self.watcher.get()
            && !w.changed()
        {
            return None;
        }
        {
            let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if !urgent && last.is_some_and(|t| t.elapsed() < self.coalesce) {
                return None;
            }
        }
        // Checked again by `take` under the lock: another exec may have
        // taken it meanwhile (then the store says unchanged).
        let command = aq_audit::report::display_argv(argv);
        self.take(Reason::BeforeCommand, Some(&command))
    }

    /// Once a day, starts a prune of the store (by `[undo] keep_days` and
    /// `max_store_mb`) in a detached process; see [`prune_now_and_then`].
    pub fn prune_now_and_then(&self) {
        prune_now_and_then(&self.store);
    }
}

/// See [`Checkpoints::prune_now_and_then`]; hook sessions call it too.
/// The first time a store is seen it is only stamped (nothing is old yet);
/// then, once a day, a detached `aq __prune-checkpoints` does the work
/// (recompressing a big store takes seconds no session should wait for).
pub fn prune_now_and_then(store: &Store) {
    let stamp = store.dir().join("pruned");
    let age = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .map(|t| t.elapsed().unwrap_or_default());
    match age {
        Err(_) => {
            let _ = std::fs::write(&stamp, b"");
        }
        Ok(age) if age > Duration::from_secs(24 * 3600) => {
            let _ = std::fs::write(&stamp, b"");
            prune_in_background(store.workspace());
        }
        Ok(_) => {}
    }
}

/// Starts `aq __prune-checkpoints -C WORKSPACE` in a session of its own,
/// with nothing to read or write to, and does not wait for it.
fn prune_in_background(workspace: &Path) {
    use std::os::unix::process::CommandExt;
    let Ok(aq) = std::env::current_exe() else {
        return;
    };
    let mut cmd = std::process::Command::new(aq);
    cmd.arg("__prune-checkpoints")
        .arg("-C")
        .arg(workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: setsid is async-signal-safe; the child leaves our session
    // and process group, so the terminal's signals do not reach it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let _ = cmd.spawn();
}

/// Which checkpoint a verb means.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A checkpoint id or a unique prefix.
    Checkpoint(&'a str),
    /// The first checkpoint of a session (an id or a unique prefix).
    Session(&'a str),
    /// The first checkpoint of the latest session in the workspace.
    LatestSession,
}

/// The session a prefix names, among those that took checkpoints here.
pub fn session_named(
    listing: &aq_undo::Listing,
    prefix: &str,
) -> Result<String, CheckpointChoiceError> {
    let mut found: Vec<&str> = listing
        .checkpoints
        .iter()
        .filter_map(|c| c.session.as_deref())
        .filter(|s| s.starts_with(prefix))
        .collect();
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(CheckpointChoiceError::NoSession {
            prefix: prefix.to_string(),
        }),
        many => Err(CheckpointChoiceError::AmbiguousSession {
            prefix: prefix.to_string(),
            sessions: many.iter().map(|s| s.to_string()).collect(),
        }),
    }
}

/// The latest session that took a checkpoint here (an undo is not one).
pub fn latest_session(listing: &aq_undo::Listing) -> Option<String> {
    listing
        .checkpoints
        .iter()
        .rev()
        .find_map(|c| c.session.clone())
}

/// The checkpoint `target` means.
pub fn choose<'l>(
    store: &Store,
    listing: &'l aq_undo::Listing,
    target: Target<'_>,
) -> Result<&'l aq_undo::Checkpoint, CheckpointChoiceError> {
    let first_of = |session: &str| {
        listing
            .checkpoints
            .iter()
            .find(|c| c.session.as_deref() == Some(session))
    };
    match target {
        Target::Checkpoint(spec) => {
            let id = store.resolve(spec).map_err(CheckpointChoiceError::Store)?;
            listing
                .checkpoints
                .iter()
                .find(|c| c.id == id)
                .ok_or_else(|| CheckpointChoiceError::Unusable {
                    spec: spec.to_string(),
                })
        }
        Target::Session(prefix) => {
            let s = session_named(listing, prefix)?;
            first_of(&s).ok_or(CheckpointChoiceError::NoCheckpointsOf { session: s })
        }
        Target::LatestSession => {
            let s = latest_session(listing).ok_or_else(|| CheckpointChoiceError::NoneYet {
                workspace: store.workspace().to_path_buf(),
            })?;
            first_of(&s).ok_or(CheckpointChoiceError::NoCheckpointsOf { session: s })
        }
    }
}

/// A checkpoint's time, as the user's clock would show it (UTC).
pub fn time_of(c: &aq_undo::Checkpoint) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_millis(c.time_ms);
    humantime::format_rfc3339_seconds(t)
        .to_string()
        .replacen('T', " ", 1)
        .trim_end_matches('Z')
        .to_string()
        + " UTC"
}

/// The table `aq checkpoints` prints.
pub fn table(checkpoints: &[&aq_undo::Checkpoint]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12}  {:<23}  {:<14}  {:<16}  {:<14}  NEXT COMMAND",
        "ID", "TIME", "REASON", "SESSION", "CHANGED"
    );
    for c in checkpoints {
        let session = c.session.as_deref().unwrap_or("-");
        let session: String = if session.chars().count() > 16 {
            session.chars().take(15).collect::<String>() + "…"
        } else {
            session.to_string()
        };
        let changed = format!(
            "+{} ~{} -{}",
            c.changed.added, c.changed.modified, c.changed.deleted
        );
        let mut command = c.command.clone().unwrap_or_default();
        if command.chars().count() > 60 {
            command = command.chars().take(59).collect::<String>() + "…";
        }
        let _ = writeln!(
            out,
            "{:<12}  {:<23}  {:<14}  {:<16}  {:<14}  {}",
            c.id.to_string(),
            time_of(c),
            reason_name(c.reason),
            session,
            changed,
            aq_audit::inert::inert(&command)
        );
        for n in &c.not_kept {
            let _ = writeln!(
                out,
                "{:<12}  not kept: {} ({})",
                "",
                n.path.display(),
                n.why
            );
        }
    }
    out
}

/// What an undo will change, for the user to read before saying yes.
pub fn plan_text(plan: &aq_undo::Plan, limit: usize) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (i, ch) in plan.changes.iter().enumerate() {
        if i == limit {
            let _ = writeln!(out, "  … and {} more", plan.changes.len() - limit);
            break;
        }
        let what = match (&ch.old, &ch.new) {
            (None, Some(_)) => "restore (deleted since)",
            (Some(_), None) => "remove  (created since)",
            (Some(a), Some(b)) if std::mem::discriminant(a) != std::mem::discriminant(b) => {
                "replace (type changed)"
            }
            (
                Some(aq_undo::Entry::File { oid: a, .. }),
                Some(aq_undo::Entry::File { oid: b, .. }),
            ) if a == b => "chmod   (mode changed)",
            (Some(aq_undo::Entry::Symlink { .. }), Some(aq_undo::Entry::Symlink { .. })) => {
                "relink  (link changed)"
            }
            _ => "rewrite (changed since)",
        };
        let _ = writeln!(
            out,
            "  {what}  {}",
            aq_audit::inert::inert(&ch.path.display().to_string())
        );
    }
    for r in &plan.refs {
        let short = |o: &Option<String>| {
            o.as_deref()
                .map(|s| s[..s.len().min(12)].to_string())
                .unwrap_or_else(|| "(none)".to_string())
        };
        let _ = writeln!(
            out,
            "  ref     {}: {} -> {}",
            aq_audit::inert::inert(&r.name),
            short(&r.old),
            short(&r.new)
        );
    }
    if plan.index {
        let _ = writeln!(
            out,
            "  index   the repository's staged changes as they were"
        );
    }
    for n in &plan.not_restorable {
        let _ = writeln!(
            out,
            "  cannot  {}: {} (left as it is)",
            aq_audit::inert::inert(&n.path.display().to_string()),
            n.why
        );
    }
    out
}

/// `--path` arguments as paths relative to the workspace (they are given
/// relative to the current directory, or absolute); one outside it is an error.
pub fn workspace_paths(
    workspace: &Path,
    cwd: &Path,
    paths: &[std::path::PathBuf],
) -> Result<Vec<std::path::PathBuf>, String> {
    use std::path::{Component, PathBuf};
    let mut out = Vec::new();
    for p in paths {
        let joined = cwd.join(p);
        let mut norm = PathBuf::new();
        for c in joined.components() {
            match c {
                Component::ParentDir => {
                    norm.pop();
                }
                Component::CurDir => {}
                other => norm.push(other),
            }
        }
        // The workspace is canonical; so is the current directory, usually.
        let rel = norm
            .strip_prefix(workspace)
            .map(Path::to_path_buf)
            .map_err(|_| {
                format!(
                    "--path {}: not inside the workspace {}",
                    p.display(),
                    workspace.display()
                )
            })?;
        out.push(rel);
    }
    Ok(out)
}

/// Files of the plan's `not_restorable` that only their permissions make
/// unreadable (`chmod 000` by the agent), owned by this user: given back
/// their owner's read bit, so that a new plan can keep and restore them
/// (the undo then sets the checkpoint's exact mode). Returns those it changed.
pub fn readable_again(workspace: &Path, plan: &aq_undo::Plan) -> Vec<std::path::PathBuf> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = unsafe { libc::geteuid() };
    let mut out = Vec::new();
    for n in &plan.not_restorable {
        let full = workspace.join(&n.path);
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        // Through no symlink out of the workspace.
        let inside = std::fs::canonicalize(&full).is_ok_and(|c| c.starts_with(workspace));
        if inside && meta.is_file() && meta.uid() == me && meta.mode() & 0o400 == 0 {
            let mode = (meta.mode() & 0o7777) | 0o400;
            if std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode)).is_ok() {
                out.push(n.path.clone());
            }
        }
    }
    out
}
