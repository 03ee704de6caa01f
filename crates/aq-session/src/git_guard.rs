//! The git guard of `aq run`: nothing the session writes may make the
//! user's next `git status`, outside aq, run a program: a planted `core.fsmonitor`,
//! hook or `commondir` would run with the user's rights, outside the sandbox.
//!
//! git runs programs named in many files besides `.git/config` and
//! `.git/hooks`: a submodule's config and hooks (`.git/modules/*`, which the
//! superproject's `git status` reads), `config.worktree`, a `commondir` that
//! sends git to another directory's config, a nested repository's config
//! and hooks, what a gitfile points at, `info/attributes` that hand files to
//! a filter. [`aq_preflight::git_surface`] finds them all; this module holds
//! them two ways:
//!
//! 1. **Read-only.** What exists under the workspace's own `.git` when the
//!    session starts (the submodules' config and hooks, `config.worktree`,
//!    `commondir`, `info/attributes`, a gitfile at the workspace's root) is
//!    added to the profile's read-only paths: a write fails at once with
//!    EROFS. A submodule's missing hooks directory is made first, as
//!    `.git/hooks` is. Nested repositories elsewhere are not pinned: their
//!    directories would become mount points nobody can delete or rename
//!    (`terraform init -upgrade`, `swift package update` and `rm -rf` of a
//!    vendored checkout would fail with EBUSY).
//! 2. **Checked at the end.** Every file of the surface is hashed when the
//!    session starts (the snapshot is kept in the session directory) and
//!    looked at again when the command has exited, failed or not: a file
//!    that is new or changed and makes git run something it did not run
//!    before (a key of [`aq_knowledge::git::GIT_KEYS`], an executable hook
//!    that is neither a sample nor git-lfs's nor a template's, a
//!    `commondir` other than a linked worktree's, an attributes line that
//!    picks a driver) is put aside: its content is copied into the session
//!    directory (`git-quarantine/`), then the original is put back or, for
//!    a new file, the file removed. A file outside the workspace reached
//!    through a pointer the session wrote (a gitfile to `$TMPDIR`) is
//!    disarmed by putting the pointer back. Each is logged
//!    (`git_change_refused`) and told on stderr.
//!
//! What is ordinary is left alone: `git init` and `git clone` inside the
//! session make configs without such keys and sample hooks; `git config
//! user.name` or `git remote add` in a nested repository change a config
//! without adding one.
//!
//! A supervisor that was killed never checks: the next session in the same
//! workspace does, with the snapshot the killed one left, before its own.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use aq_audit::{AuditLog, EventBody};
use aq_preflight::git_surface::{
    GitDir, GitFileKind, GitJudgeContext, GitPlace, GitSurface, GitWalkRecord, git_dangers,
    read_bounded, rediscover,
};
use serde::{Deserialize, Serialize};

use crate::walk_records::{self, Walk};

/// How much of one file is judged (git reads more, so a larger file that
/// changed is refused).
const MAX_FILE: u64 = 1024 * 1024;

/// How many git directories under `.git` are made read-only (each costs a
/// few mounts); past them, the end check alone holds.
const MAX_PINNED_GIT_DIRS: usize = 64;

/// How much original content the snapshot keeps, in all.
const MAX_ORIGINALS: u64 = 64 * 1024 * 1024;

/// The guard's directory inside the session directory.
const GUARD_DIR: &str = "git-guard";
/// Where refused files are kept, inside the session directory.
const QUARANTINE_DIR: &str = "git-quarantine";

/// One file as the session found it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Seen {
    kind: Kind,
    /// SHA-256 of the content (`link:TARGET` for a symlink that leads
    /// nowhere readable).
    hash: String,
    /// Permission bits.
    mode: u32,
    /// What it made git run: one key per danger.
    dangers: BTreeSet<String>,
    /// Where its original content is kept (under `git-guard/originals`).
    original: Option<String>,
    /// A symlink's target, to put back.
    link: Option<PathBuf>,
}

/// [`GitFileKind`], as the snapshot file spells it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Config,
    Commondir,
    Gitfile,
    Hook,
    Attributes,
}

impl From<GitFileKind> for Kind {
    fn from(k: GitFileKind) -> Kind {
        match k {
            GitFileKind::Config => Kind::Config,
            GitFileKind::Commondir => Kind::Commondir,
            GitFileKind::Gitfile => Kind::Gitfile,
            GitFileKind::Hook => Kind::Hook,
            GitFileKind::Attributes => Kind::Attributes,
        }
    }
}

impl From<Kind> for GitFileKind {
    fn from(k: Kind) -> GitFileKind {
        match k {
            Kind::Config => GitFileKind::Config,
            Kind::Commondir => GitFileKind::Commondir,
            Kind::Gitfile => GitFileKind::Gitfile,
            Kind::Hook => GitFileKind::Hook,
            Kind::Attributes => GitFileKind::Attributes,
        }
    }
}

/// What the session started with, kept in `git-guard/snapshot.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Snapshot {
    workspace: PathBuf,
    /// Every file of the surface, by its path (canonical directory, name).
    files: BTreeMap<PathBuf, Seen>,
    /// The paths made read-only, relative to the workspace.
    pinned: Vec<String>,
    /// How long finding and hashing took.
    start_us: u64,
    /// How many directories the start's walk listed (the others were
    /// unchanged since the last session's end check).
    #[serde(default)]
    dirs_listed: usize,
    /// How many directory entries the walk stopped at, if it did.
    truncated: bool,
}

/// One file put aside (or only reported).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRefusal {
    /// The file, relative to the workspace (absolute outside it).
    pub path: String,
    /// What it is to git.
    pub kind: &'static str,
    /// What in it runs.
    pub what: String,
    /// What it would run.
    pub runs: String,
    /// `restored`, `removed` or `reported`.
    pub action: &'static str,
    /// Where the session's version is kept.
    pub quarantined: Option<PathBuf>,
}

/// The guard of one session, from its start to its end check.
pub struct GitGuard {
    workspace: PathBuf,
    session_dir: PathBuf,
    home: Option<PathBuf>,
    snapshot: Snapshot,
    /// Said when the session started (a killed session's refusals).
    pub recovered: Vec<GitRefusal>,
    /// The end check ran.
    finished: bool,
    /// The start's walk, so that the end check lists only the directories
    /// changed since (not kept on disk: a killed session's check walks all).
    walked: GitWalkRecord,
}

impl GitGuard {
    /// Finds the git surface of `workspace`, makes missing submodule hooks
    /// directories, takes the snapshot (kept in `session_dir`), and first
    /// checks what sessions killed before their end left in this workspace
    /// (said on stderr, logged in their own logs).
    pub fn start(workspace: &Path, session_dir: &Path) -> GitGuard {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let recovered = recover_killed_sessions(workspace, session_dir, home.as_deref());
        let started = Instant::now();
        let guard_dir = session_dir.join(GUARD_DIR);
        let _ = std::fs::create_dir_all(guard_dir.join("originals"));
        let earlier = walk_records::load(Walk::GitDirs, workspace);
        let (surface, walked) = rediscover(workspace, home.as_deref(), earlier.as_ref());
        make_hook_dirs(workspace, &surface);
        let pinned = plan_pins(workspace, &surface);
        let mut templates = Templates::new(home.as_deref());
        let mut files = BTreeMap::new();
        let mut kept = 0u64;
        for f in surface.files.iter().filter(|f| !inert(f.kind, &f.path)) {
            let path = normal(&f.path);
            let git_dir = git_dir_of(&surface, f.git_dir, &path);
            let Some((mut seen, bytes)) = look(&path, f.kind, &git_dir, &mut templates) else {
                continue;
            };
            if keeps_original(f.kind, &path)
                && let Some(bytes) = bytes
                && kept + bytes.len() as u64 <= MAX_ORIGINALS
            {
                let name = format!("{}", files.len());
                if std::fs::write(guard_dir.join("originals").join(&name), &bytes).is_ok() {
                    kept += bytes.len() as u64;
                    seen.original = Some(name);
                }
            }
            files.insert(path, seen);
        }
        let snapshot = Snapshot {
            workspace: workspace.to_path_buf(),
            files,
            pinned,
            start_us: started.elapsed().as_micros() as u64,
            dirs_listed: walked.listed(),
            truncated: surface.truncated,
        };
        if let Ok(json) = serde_json::to_vec(&snapshot) {
            let _ = std::fs::write(guard_dir.join("snapshot.json"), json);
            pending::add(session_dir);
        }
        GitGuard {
            workspace: workspace.to_path_buf(),
            session_dir: session_dir.to_path_buf(),
            home,
            snapshot,
            recovered,
            finished: false,
            walked,
        }
    }

    /// The paths to make read-only in the sandbox, relative to the
    /// workspace (for the profile's `read_only`).
    pub fn read_only(&self) -> Vec<String> {
        self.snapshot.pinned.clone()
    }

    /// The end check: what the session changed that would run a program is
    /// put aside, logged in `log` and, when `say`, told on stderr (the
    /// recap tells it otherwise).
    pub fn finish(mut self, log: &AuditLog, session_id: &str, say: bool) -> Vec<GitRefusal> {
        self.finished = true;
        let started = Instant::now();
        let (refusals, walked) = check_listing(
            &self.workspace,
            &self.session_dir,
            self.home.as_deref(),
            &self.snapshot,
            Some(&self.walked),
        );
        for r in &refusals {
            log_refusal(log, session_id, r);
            if say {
                eprintln!("aq: {}", describe(r, None));
            }
        }
        let _ = std::fs::write(
            self.session_dir.join(GUARD_DIR).join("checked"),
            format!(
                "{{\"check_us\":{},\"refused\":{},\"dirs_listed\":{},\"indexes_read\":{}}}\n",
                started.elapsed().as_micros(),
                refusals.len(),
                walked.listed(),
                walked.indexes_read()
            ),
        );
        pending::remove(&self.session_dir);
        // Unless both walks took every directory from the record kept.
        if self.walked.listed() > 0 || walked.listed() > 0 {
            walk_records::save(Walk::GitDirs, &self.workspace, &walked);
        }
        refusals
    }
}

impl Drop for GitGuard {
    /// A session that returns early (its sandbox could not be set up) or
    /// unwinds still gets its end check, told on stderr: otherwise the next
    /// session would take it for a killed one and refuse what the user
    /// changed meanwhile.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let refusals = check(
            &self.workspace,
            &self.session_dir,
            self.home.as_deref(),
            &self.snapshot,
            Some(&self.walked),
        );
        for r in &refusals {
            eprintln!("aq: {}", describe(r, None));
        }
        let _ = std::fs::write(
            self.session_dir.join(GUARD_DIR).join("checked"),
            format!("{{\"refused\":{}}}\n", refusals.len()),
        );
        pending::remove(&self.session_dir);
    }
}

/// `r` in a sentence: the file, what it would run, what was done.
fn describe(r: &GitRefusal, session: Option<&str>) -> String {
    let entry = aq_audit::report::GitRefusedEntry {
        path: r.path.clone(),
        kind: r.kind.to_string(),
        what: r.what.clone(),
        runs: r.runs.clone(),
        action: r.action.to_string(),
        quarantined: r.quarantined.as_ref().map(|q| q.display().to_string()),
    };
    match session {
        Some(s) => format!(
            "git change of session {s} (its supervisor was killed before its end check) refused: {}",
            entry.line()
        ),
        None => format!("git change refused: {}", entry.line()),
    }
}

fn log_refusal(log: &AuditLog, session_id: &str, r: &GitRefusal) {
    crate::log_event(
        log,
        session_id,
        EventBody::GitChangeRefused {
            path: r.path.clone(),
            kind: r.kind.to_string(),
            what: r.what.clone(),
            runs: r.runs.clone(),
            action: r.action.to_string(),
            quarantined: r.quarantined.as_ref().map(|q| q.display().to_string()),
        },
    );
}

/// `p` with its directory canonical and its last component kept (a link
/// stays a link: it is what is moved or put back).
fn normal(p: &Path) -> PathBuf {
    match (
        p.parent().and_then(|d| std::fs::canonicalize(d).ok()),
        p.file_name(),
    ) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => p.to_path_buf(),
    }
}

fn git_dir_of(surface: &GitSurface, index: Option<usize>, path: &Path) -> PathBuf {
    index
        .and_then(|i| surface.git_dirs.get(i))
        .map(|d| d.path.clone())
        .unwrap_or_else(|| path.parent().unwrap_or(Path::new("/")).to_path_buf())
}

/// Whether the snapshot keeps `path`'s content to put it back: every kind
/// but sample hooks (which never run, so a changed one is never refused).
fn keeps_original(kind: GitFileKind, path: &Path) -> bool {
    !inert(kind, path)
}

/// A sample hook (`pre-commit.sample`): git never runs it, whatever it
/// holds, so it is neither read nor kept; renamed to a hook's name, it is
/// a new file of the surface like any other.
fn inert(kind: GitFileKind, path: &Path) -> bool {
    kind == GitFileKind::Hook
        && path
            .file_name()
            .is_some_and(|n| aq_knowledge::git::git_hook_is_sample(&n.to_string_lossy()))
}

/// A file as it is now: hash, mode, and what it makes git run; and its
/// content, when it is a regular file (through links) small enough to read.
/// A FIFO or device is never read (it could hang the check).
fn look(
    path: &Path,
    kind: GitFileKind,
    git_dir: &Path,
    templates: &mut Templates,
) -> Option<(Seen, Option<Vec<u8>>)> {
    if inert(kind, path) {
        return None;
    }
    let lmeta = std::fs::symlink_metadata(path).ok()?;
    let link = lmeta
        .file_type()
        .is_symlink()
        .then(|| std::fs::read_link(path).ok())
        .flatten();
    let meta = std::fs::metadata(path).ok();
    if meta.as_ref().is_some_and(|m| m.is_dir()) {
        return None;
    }
    let mode = meta
        .as_ref()
        .map_or(lmeta.permissions().mode(), |m| m.permissions().mode())
        & 0o7777;
    let executable = mode & 0o111 != 0;
    let sample = path
        .file_name()
        .is_some_and(|n| aq_knowledge::git::git_hook_is_sample(&n.to_string_lossy()));
    let ctx = GitJudgeContext {
        git_dir,
        // Read only for a hook that could run.
        template_hooks: if kind == GitFileKind::Hook && executable && !sample {
            templates.get()
        } else {
            &[]
        },
    };
    let content = read_bounded(path, MAX_FILE);
    let (hash, dangers) = match &content {
        Ok(bytes) => {
            let hash = crate::policy_files::digest(bytes);
            let dangers = git_dangers(kind, path, bytes, executable, &ctx)
                .into_iter()
                .map(|d| {
                    // A hook is its whole content: a changed hook is a new danger.
                    let content = if kind == GitFileKind::Hook {
                        hash.as_str()
                    } else {
                        ""
                    };
                    format!("{}\u{0}{}\u{0}{content}", d.what, d.runs)
                })
                .collect();
            (hash, dangers)
        }
        Err(e) => {
            let hash = match &link {
                Some(l) => format!("link:{}", l.display()),
                None => format!("unreadable:{}:{}", lmeta.len(), e.kind()),
            };
            // Larger than can be judged, or not a regular file git could
            // still read (a FIFO): fail closed for what git reads as text.
            let dangers = if meta.as_ref().is_some_and(|m| m.is_file())
                && (kind != GitFileKind::Hook || executable)
            {
                BTreeSet::from([format!("unjudged\u{0}{e}\u{0}{hash}")])
            } else {
                BTreeSet::new()
            };
            (hash, dangers)
        }
    };
    let seen = Seen {
        kind: kind.into(),
        hash,
        mode,
        dangers,
        original: None,
        link,
    };
    Some((seen, content.ok()))
}

/// The template hooks, read the first time a hook that could run is judged.
struct Templates {
    home: Option<PathBuf>,
    hooks: Option<Vec<Vec<u8>>>,
}

impl Templates {
    fn new(home: Option<&Path>) -> Templates {
        Templates {
            home: home.map(Path::to_path_buf),
            hooks: None,
        }
    }

    fn get(&mut self) -> &[Vec<u8>] {
        let home = self.home.as_deref();
        self.hooks.get_or_insert_with(|| template_hooks(home))
    }
}

/// The hooks `git init` copies from its templates: git's own and the
/// user's (`init.templateDir`, `GIT_TEMPLATE_DIR`). A new repository's
/// hooks that are one of these are ordinary.
fn template_hooks(home: Option<&Path>) -> Vec<Vec<u8>> {
    let mut dirs: Vec<PathBuf> = vec![PathBuf::from("/usr/share/git-core/templates")];
    if let Some(d) = std::env::var_os("GIT_TEMPLATE_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(h) = home {
        for config in [h.join(".gitconfig"), h.join(".config/git/config")] {
            let Ok(text) = read_bounded(&config, MAX_FILE) else {
                continue;
            };
            for e in aq_knowledge::git::parse_git_config(&text) {
                if e.key == "init.templatedir"
                    && let Some(v) = e.value
                {
                    dirs.push(match v.strip_prefix("~/") {
                        Some(rest) => h.join(rest),
                        None => PathBuf::from(v),
                    });
                }
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(d.join("hooks")) else {
            continue;
        };
        for e in rd.flatten() {
            if let Ok(bytes) = read_bounded(&e.path(), MAX_FILE) {
                out.push(bytes);
            }
        }
    }
    out
}

/// The git directories under the workspace's own `.git` (its submodules'
/// and linked worktrees'), at most [`MAX_PINNED_GIT_DIRS`].
fn own_git_dirs<'a>(workspace: &Path, surface: &'a GitSurface) -> Vec<&'a GitDir> {
    let Ok(top) = std::fs::canonicalize(workspace.join(".git")) else {
        return Vec::new();
    };
    if !top.starts_with(workspace) || !top.is_dir() {
        return Vec::new();
    }
    surface
        .git_dirs
        .iter()
        .filter(|d| d.path.starts_with(&top))
        .take(MAX_PINNED_GIT_DIRS)
        .collect()
}

/// Makes a missing `hooks` directory in the workspace's git directory and
/// its submodules', so it can be made read-only (a hook created there would
/// run on the user's next git command).
fn make_hook_dirs(workspace: &Path, surface: &GitSurface) {
    for d in own_git_dirs(workspace, surface) {
        if matches!(d.place, GitPlace::Module | GitPlace::Top) {
            let hooks = d.path.join("hooks");
            if std::fs::symlink_metadata(&hooks).is_err() {
                let _ = std::fs::create_dir(&hooks);
            }
        }
    }
}

/// What the sandbox makes read-only: under the workspace's own `.git`, the
/// files of the surface that exist as plain files (config, config.worktree,
/// commondir, info/attributes, included files) and the hooks directories,
/// of at most [`MAX_PINNED_GIT_DIRS`] git directories; and a gitfile at the
/// workspace's root. A link is never pinned (its target could be outside
/// the workspace, which the sandbox refuses to plan).
fn plan_pins(workspace: &Path, surface: &GitSurface) -> Vec<String> {
    let dirs = own_git_dirs(workspace, surface);
    let Ok(top) = std::fs::canonicalize(workspace.join(".git")) else {
        return Vec::new();
    };
    if !top.starts_with(workspace) {
        return Vec::new();
    }
    let mut out = BTreeSet::new();
    let rel = |p: &Path| -> Option<String> {
        let inner = p.strip_prefix(workspace).ok()?;
        let s = inner.to_str()?;
        (!s.is_empty()).then(|| s.to_string())
    };
    let plain = |p: &Path, dir: bool| {
        std::fs::symlink_metadata(p).is_ok_and(|m| if dir { m.is_dir() } else { m.is_file() })
            && std::fs::canonicalize(p).is_ok_and(|c| c == p)
    };
    if plain(&workspace.join(".git"), false) {
        // `.git` is a gitfile: where git goes, from the workspace.
        out.extend(rel(&workspace.join(".git")));
    }
    for f in &surface.files {
        let in_own = f
            .git_dir
            .and_then(|i| surface.git_dirs.get(i))
            .is_some_and(|d| dirs.iter().any(|o| o.path == d.path));
        if in_own
            && f.path.starts_with(&top)
            && f.kind != GitFileKind::Hook
            && f.kind != GitFileKind::Gitfile
            && plain(&f.path, false)
        {
            out.extend(rel(&f.path));
        }
    }
    for (hooks, i) in &surface.hook_dirs {
        let in_own = surface
            .git_dirs
            .get(*i)
            .is_some_and(|d| dirs.iter().any(|o| o.path == d.path));
        if in_own && hooks.starts_with(&top) && plain(hooks, true) {
            out.extend(rel(hooks));
        }
    }
    out.into_iter().collect()
}

/// Compares the workspace's git surface now with `snapshot`, and puts
/// aside what makes git run something new.
fn check(
    workspace: &Path,
    session_dir: &Path,
    home: Option<&Path>,
    snapshot: &Snapshot,
    walked: Option<&GitWalkRecord>,
) -> Vec<GitRefusal> {
    check_listing(workspace, session_dir, home, snapshot, walked).0
}

/// [`check`], and the record of its walk (given the start's, it listed
/// only the directories changed since).
fn check_listing(
    workspace: &Path,
    session_dir: &Path,
    home: Option<&Path>,
    snapshot: &Snapshot,
    walked: Option<&GitWalkRecord>,
) -> (Vec<GitRefusal>, GitWalkRecord) {
    let (surface, record) = rediscover(workspace, home, walked);
    let mut templates = Templates::new(home);
    let mut out = Vec::new();
    if surface.truncated {
        eprintln!(
            "aq: warning: the git check stopped after {} entries of the workspace; nested repositories past them were not checked",
            aq_preflight::git_surface::MAX_ENTRIES
        );
    }
    for note in &surface.notes {
        eprintln!("aq: warning: git check: {note}");
    }
    let mut counter = 0usize;
    let mut acted = std::collections::HashSet::new();
    for f in surface.files.iter().filter(|f| !inert(f.kind, &f.path)) {
        let path = normal(&f.path);
        let git_dir = git_dir_of(&surface, f.git_dir, &path);
        let Some((now, _)) = look(&path, f.kind, &git_dir, &mut templates) else {
            continue;
        };
        let before = snapshot.files.get(&path);
        if before.is_some_and(|b| b.hash == now.hash && b.mode == now.mode && b.link == now.link) {
            continue;
        }
        let new: Vec<&String> = now
            .dangers
            .iter()
            .filter(|d| before.is_none_or(|b| !b.dangers.contains(*d)))
            .collect();
        let Some(first) = new.first() else {
            continue;
        };
        let mut parts = first.split('\u{0}');
        let what = parts.next().unwrap_or("").to_string();
        let runs = parts.next().unwrap_or("").to_string();
        let what = if new.len() > 1 {
            format!("{what} (and {} more)", new.len() - 1)
        } else {
            what
        };
        // Act on the file, if the session could have written it; else on
        // the pointer in the workspace that the session wrote to reach it.
        let via = f
            .git_dir
            .and_then(|i| surface.git_dirs.get(i))
            .and_then(|d| d.via.as_ref())
            .map(|v| normal(v));
        let target = if path.starts_with(workspace) {
            Some((path.clone(), before.cloned()))
        } else {
            via.filter(|v| v.starts_with(workspace)).and_then(|v| {
                let was = snapshot.files.get(&v).cloned();
                let now = std::fs::symlink_metadata(&v).ok()?;
                let changed = match &was {
                    None => true,
                    Some(w) => {
                        let link = std::fs::read_link(&v).ok();
                        let hash = read_bounded(&v, MAX_FILE)
                            .map(|b| crate::policy_files::digest(&b))
                            .unwrap_or_default();
                        w.link != link || (now.is_file() && w.hash != hash)
                    }
                };
                changed.then_some((v, was))
            })
        };
        let shown = |p: &Path| match p.strip_prefix(workspace) {
            Ok(r) => r.display().to_string(),
            Err(_) => p.display().to_string(),
        };
        let refusal = match target {
            Some((p, _)) if !acted.insert(p.clone()) => continue,
            Some((p, was)) => {
                counter += 1;
                let (action, quarantined) =
                    put_aside(&p, was.as_ref(), session_dir, counter, &shown(&p));
                if p == path {
                    GitRefusal {
                        path: shown(&path),
                        kind: f.kind.as_str(),
                        what,
                        runs,
                        action,
                        quarantined,
                    }
                } else {
                    // The pointer was put aside: say what it pointed at.
                    let kind = if p.file_name().is_some_and(|n| n == "commondir") {
                        GitFileKind::Commondir
                    } else {
                        GitFileKind::Gitfile
                    };
                    GitRefusal {
                        path: shown(&p),
                        kind: kind.as_str(),
                        what: format!("{what} of {}", path.display()),
                        runs,
                        action,
                        quarantined,
                    }
                }
            }
            None => GitRefusal {
                path: shown(&path),
                kind: f.kind.as_str(),
                what,
                runs,
                action: "reported",
                quarantined: None,
            },
        };
        out.push(refusal);
    }
    (out, record)
}

/// Copies `path` into the quarantine, then puts its original back (`was`,
/// from the snapshot) or, when it had none, removes it. What was done, and
/// where the copy is.
fn put_aside(
    path: &Path,
    was: Option<&Seen>,
    session_dir: &Path,
    n: usize,
    shown: &str,
) -> (&'static str, Option<PathBuf>) {
    let dir = session_dir.join(QUARANTINE_DIR);
    let _ = std::fs::create_dir_all(&dir);
    let flat: String = shown
        .chars()
        .map(|c| if c == '/' { '%' } else { c })
        .collect();
    let copy = dir.join(format!("{n}-{flat}"));
    let meta = std::fs::symlink_metadata(path).ok();
    let kept = match meta {
        Some(m) if m.file_type().is_symlink() => std::fs::read_link(path)
            .and_then(|t| {
                std::fs::write(copy.with_extension("symlink"), format!("{}\n", t.display()))
            })
            .map(|_| copy.with_extension("symlink"))
            .ok(),
        Some(m) if m.is_file() => std::fs::copy(path, &copy).ok().map(|_| copy.clone()),
        _ => None,
    };
    let original = was.and_then(|w| {
        w.original
            .as_ref()
            .map(|name| session_dir.join(GUARD_DIR).join("originals").join(name))
    });
    let restored = match (was, original) {
        (Some(w), _) if w.link.is_some() => {
            let tmp = path.with_file_name(format!(".aq-restore-{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            w.link
                .as_ref()
                .is_some_and(|l| std::os::unix::fs::symlink(l, &tmp).is_ok())
                && std::fs::rename(&tmp, path).is_ok()
        }
        (Some(w), Some(orig)) => restore_file(path, &orig, w.mode).is_ok(),
        _ => false,
    };
    if restored {
        return ("restored", kept);
    }
    match std::fs::remove_file(path) {
        Ok(()) => ("removed", kept),
        // Neither put back nor removed: say so, the copy aside or not.
        Err(_) => ("reported", kept),
    }
}

/// Writes `original`'s content over `path` (through a new file renamed
/// over it: a link there is replaced, not followed), with `mode`.
fn restore_file(path: &Path, original: &Path, mode: u32) -> std::io::Result<()> {
    let bytes = std::fs::read(original)?;
    let tmp = path.with_file_name(format!(".aq-restore-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    f.write_all(&bytes)?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    drop(f);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Sessions in `workspace` whose supervisor died before its end check:
/// checked now, with their own snapshots, into their own session
/// directories and logs. Their refusals, said on stderr.
fn recover_killed_sessions(
    workspace: &Path,
    current: &Path,
    home: Option<&Path>,
) -> Vec<GitRefusal> {
    let mut out = Vec::new();
    for dir in pending_sessions(workspace) {
        if dir == current {
            continue;
        }
        let Ok(bytes) = std::fs::read(dir.join(GUARD_DIR).join("snapshot.json")) else {
            continue;
        };
        let Ok(snapshot) = serde_json::from_slice::<Snapshot>(&bytes) else {
            continue;
        };
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let refusals = check(workspace, &dir, home, &snapshot, None);
        if let Ok(log) = AuditLog::open(crate::log_path(&dir)) {
            for r in &refusals {
                log_refusal(&log, &id, r);
            }
        }
        for r in &refusals {
            eprintln!("aq: {}", describe(r, Some(&id)));
        }
        let _ = std::fs::write(
            dir.join(GUARD_DIR).join("checked"),
            format!(
                "{{\"checked_by_a_later_session\":true,\"refused\":{}}}\n",
                refusals.len()
            ),
        );
        pending::remove(&dir);
        out.extend(refusals);
    }
    out
}

/// Session directories of `workspace` whose git guard took a snapshot and
/// never checked it, their supervisor gone (killed): `aq preflight` says
/// so, the next `aq run` checks them.
pub fn pending_sessions(workspace: &Path) -> Vec<PathBuf> {
    pending::sessions()
        .into_iter()
        .filter(|d| {
            let g = d.join(GUARD_DIR);
            g.join("snapshot.json").is_file() && !g.join("checked").exists()
        })
        .filter(|d| {
            crate::read_file(d)
                .is_ok_and(|f| f.workspace == workspace && !crate::pid_alive(f.supervisor_pid))
        })
        .collect()
}

/// Which sessions took a snapshot and have not been checked yet: one empty
/// file per such session in the state directory, so that a session's start
/// looks at those few instead of every session ever run (each a few `stat`s:
/// thousands of sessions made every start tens of milliseconds slower).
mod pending {
    use std::path::{Path, PathBuf};

    const DIR: &str = "git-guard-pending";

    fn index() -> Option<PathBuf> {
        Some(crate::files::state_root().ok()?.join(DIR))
    }

    /// Marks `session_dir` as snapshotted and not yet checked.
    pub fn add(session_dir: &Path) {
        let (Some(index), Some(id)) = (index(), session_dir.file_name()) else {
            return;
        };
        if std::fs::create_dir_all(&index).is_ok() {
            let _ = std::fs::write(index.join(id), "");
        }
    }

    /// Its end check ran (here or by a later session).
    pub fn remove(session_dir: &Path) {
        if let (Some(index), Some(id)) = (index(), session_dir.file_name()) {
            let _ = std::fs::remove_file(index.join(id));
        }
    }

    /// The session directories marked, oldest first. Before the index
    /// existed (state written by an older `aq`) every session is a
    /// candidate, once: the index is made from what is found.
    pub fn sessions() -> Vec<PathBuf> {
        let (Some(index), Ok(sessions)) = (index(), crate::files::sessions_dir()) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = match std::fs::read_dir(&index) {
            Ok(entries) => entries
                .flatten()
                .map(|e| sessions.join(e.file_name()))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let found: Vec<PathBuf> = crate::list()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|d| {
                        let g = d.join(super::GUARD_DIR);
                        g.join("snapshot.json").is_file() && !g.join("checked").exists()
                    })
                    .collect();
                let _ = std::fs::create_dir_all(&index);
                for d in &found {
                    add(d);
                }
                found
            }
            Err(_) => Vec::new(),
        };
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scratch {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        session: PathBuf,
    }

    fn scratch() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let session = base.join("session");
        std::fs::create_dir_all(&session).unwrap();
        for (p, t) in [
            (".git/HEAD", "ref: refs/heads/main\n"),
            (".git/config", "[core]\n\tbare = false\n"),
            (".git/modules/a/HEAD", "x\n"),
            (".git/modules/a/config", "[core]\n\tworktree = ../../../a\n"),
            ("a/.git", "gitdir: ../.git/modules/a\n"),
            (
                "n/.git/config",
                "[core]\n\tbare = false\n[remote \"o\"]\n\turl = x\n",
            ),
            ("n/.git/hooks/pre-commit.sample", "#!/bin/sh\n"),
        ] {
            let path = ws.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        }
        Scratch {
            _dir: dir,
            ws,
            session,
        }
    }

    fn finish(s: &Scratch, guard: GitGuard) -> Vec<GitRefusal> {
        let log = AuditLog::open(s.session.join("log.jsonl")).unwrap();
        guard.finish(&log, "s1", false)
    }

    #[test]
    fn pins_are_the_submodules_files_and_hooks_under_dot_git() {
        let s = scratch();
        std::fs::write(s.ws.join(".git/config.worktree"), "[core]\n").unwrap();
        // A submodule of the submodule, named with a slash.
        let nested = s.ws.join(".git/modules/a/modules/libs/b");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(nested.join("HEAD"), "x\n").unwrap();
        std::fs::write(nested.join("config"), "[core]\n").unwrap();
        let guard = GitGuard::start(&s.ws, &s.session);
        assert_eq!(
            guard.read_only(),
            vec![
                ".git/config",
                ".git/config.worktree",
                ".git/hooks",
                ".git/modules/a/config",
                ".git/modules/a/hooks",
                ".git/modules/a/modules/libs/b/config",
                ".git/modules/a/modules/libs/b/hooks",
            ]
        );
        // The submodule's hooks directory was made, so it can be pinned.
        assert!(s.ws.join(".git/modules/a/hooks").is_dir());
    }

    #[test]
    fn a_sample_is_never_read_and_one_renamed_to_a_hook_is_put_aside() {
        let s = scratch();
        std::fs::write(s.ws.join("n/.git/hooks/pre-push.sample"), "#!/bin/sh\n").unwrap();
        let guard = GitGuard::start(&s.ws, &s.session);
        // Not read: a sample that cannot be read is no error and no danger.
        let sample = s.ws.join("n/.git/hooks/pre-commit.sample");
        std::fs::write(&sample, "#!/bin/sh\n./evil\n").unwrap();
        std::fs::set_permissions(&sample, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Renamed to a name git runs, and made executable: a new hook.
        let renamed = s.ws.join("n/.git/hooks/pre-push");
        std::fs::rename(s.ws.join("n/.git/hooks/pre-push.sample"), &renamed).unwrap();
        std::fs::write(&renamed, "#!/bin/sh\n./evil\n").unwrap();
        std::fs::set_permissions(&renamed, std::fs::Permissions::from_mode(0o755)).unwrap();
        let got: Vec<(String, &str)> = finish(&s, guard)
            .into_iter()
            .map(|r| (r.path, r.action))
            .collect();
        assert_eq!(got, vec![("n/.git/hooks/pre-push".to_string(), "removed")]);
        assert!(!renamed.exists());
        assert!(sample.exists());
        let snapshot =
            std::fs::read_to_string(s.session.join(GUARD_DIR).join("snapshot.json")).unwrap();
        assert!(snapshot.contains("n/.git/config"), "{snapshot}");
        assert!(!snapshot.contains(".sample"), "{snapshot}");
    }

    #[test]
    fn ordinary_changes_pass_and_planted_programs_are_put_aside() {
        let s = scratch();
        let guard = GitGuard::start(&s.ws, &s.session);
        // Ordinary: a nested repository's remote, a new repository.
        std::fs::write(
            s.ws.join("n/.git/config"),
            "[core]\n\tbare = false\n[remote \"o\"]\n\turl = y\n[user]\n\tname = d\n",
        )
        .unwrap();
        std::fs::create_dir_all(s.ws.join("fresh/.git/hooks")).unwrap();
        std::fs::write(s.ws.join("fresh/.git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(s.ws.join("fresh/.git/hooks/pre-push.sample"), "#!/bin/sh\n").unwrap();
        // Planted: a commondir, a nested repository's fsmonitor and hook.
        std::fs::write(s.ws.join(".git/commondir"), "../evil\n").unwrap();
        let nested =
            "[core]\n\tbare = false\n\tfsmonitor = touch /tmp/x\n[remote \"o\"]\n\turl = y\n";
        std::fs::write(s.ws.join("n/.git/config"), nested).unwrap();
        let hook = s.ws.join("n/.git/hooks/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\n./evil\n").unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut got: Vec<(String, &str, String, &str)> = finish(&s, guard)
            .into_iter()
            .map(|r| (r.path, r.kind, r.what, r.action))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                (
                    ".git/commondir".into(),
                    "commondir",
                    "commondir".into(),
                    "removed"
                ),
                (
                    "n/.git/config".into(),
                    "config",
                    "core.fsmonitor".into(),
                    "restored"
                ),
                (
                    "n/.git/hooks/post-checkout".into(),
                    "hook",
                    "hook post-checkout".into(),
                    "removed"
                ),
            ]
        );
        assert!(!s.ws.join(".git/commondir").exists());
        assert!(!hook.exists());
        assert_eq!(
            std::fs::read_to_string(s.ws.join("n/.git/config")).unwrap(),
            "[core]\n\tbare = false\n[remote \"o\"]\n\turl = x\n"
        );
        let kept: Vec<String> = std::fs::read_dir(s.session.join("git-quarantine"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with("-n%.git%config"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect();
        assert_eq!(kept, vec![nested.to_string()]);
        assert!(s.session.join("git-guard/checked").exists());
        let log = std::fs::read_to_string(s.session.join("log.jsonl")).unwrap();
        assert_eq!(
            log.matches("\"event\":\"git_change_refused\"").count(),
            3,
            "{log}"
        );
    }

    #[test]
    fn a_gitfile_pointing_outside_is_put_back_and_an_old_program_is_no_news() {
        let s = scratch();
        // The user's own nested fsmonitor, there before the session.
        std::fs::write(s.ws.join("n/.git/config"), "[core]\n\tfsmonitor = ./mine\n").unwrap();
        let guard = GitGuard::start(&s.ws, &s.session);
        std::fs::write(
            s.ws.join("n/.git/config"),
            "[core]\n\tfsmonitor = ./mine\n[user]\n\tname = d\n",
        )
        .unwrap();
        // The submodule's gitfile now points at a git directory outside.
        let outside = s.session.join("tmp/evil");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("HEAD"), "x\n").unwrap();
        std::fs::write(outside.join("config"), "[core]\n\tfsmonitor = ./evil\n").unwrap();
        std::fs::write(
            s.ws.join("a/.git"),
            format!("gitdir: {}\n", outside.display()),
        )
        .unwrap();
        let got = finish(&s, guard);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(
            (got[0].path.as_str(), got[0].kind, got[0].action),
            ("a/.git", "gitfile", "restored")
        );
        assert_eq!(
            got[0].what,
            format!("core.fsmonitor of {}", outside.join("config").display())
        );
        assert_eq!(
            std::fs::read_to_string(s.ws.join("a/.git")).unwrap(),
            "gitdir: ../.git/modules/a\n"
        );
        // The outside directory itself is left as it is.
        assert!(outside.join("config").exists());
    }

    #[test]
    fn a_hook_the_users_template_installs_is_ordinary() {
        let s = scratch();
        let home = s.session.parent().unwrap().join("home");
        let template = "#!/bin/sh\nexec lint-staged\n";
        std::fs::create_dir_all(home.join("tpl/hooks")).unwrap();
        std::fs::write(home.join("tpl/hooks/pre-commit"), template).unwrap();
        std::fs::write(home.join(".gitconfig"), "[init]\n\ttemplateDir = ~/tpl\n").unwrap();
        let guard = GitGuard::start(&s.ws, &s.session);
        for (repo, text) in [("same", template), ("other", "#!/bin/sh\n./evil\n")] {
            let hook = s.ws.join(repo).join(".git/hooks/pre-commit");
            std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
            std::fs::write(&hook, text).unwrap();
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let got: Vec<String> = check(&s.ws, &s.session, Some(&home), &guard.snapshot, None)
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(got, vec!["other/.git/hooks/pre-commit"]);
        std::mem::forget(guard);
    }

    #[test]
    fn a_fifo_where_a_config_goes_does_not_hang_the_guard() {
        let s = scratch();
        let fifo = |p: &Path| {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path; mkfifo touches no memory of ours.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        };
        std::fs::create_dir_all(s.ws.join("f/.git")).unwrap();
        fifo(&s.ws.join("f/.git/config"));
        let guard = GitGuard::start(&s.ws, &s.session);
        std::fs::create_dir_all(s.ws.join("g/.git")).unwrap();
        fifo(&s.ws.join("g/.git/config"));
        // A FIFO is not read (git reading it would wait for a writer, and
        // run nothing).
        assert!(finish(&s, guard).is_empty());
    }

    #[test]
    fn a_killed_sessions_snapshot_is_checked_by_the_next_one() {
        let s = scratch();
        let killed = GitGuard::start(&s.ws, &s.session);
        std::fs::write(s.ws.join(".git/commondir"), "../evil\n").unwrap();
        // No finish: the supervisor died. The next check uses its snapshot.
        let got = check(&s.ws, &s.session, None, &killed.snapshot, None);
        assert_eq!(got.len(), 1);
        assert!(!s.ws.join(".git/commondir").exists());
        std::mem::forget(killed);
    }
}
