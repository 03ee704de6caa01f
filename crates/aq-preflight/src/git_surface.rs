//! Where git, run later by the user, reads configuration or finds programs
//! to run, in a tree: every git directory and, in each, the files that say
//! what git runs.
//!
//! The git directories are the repository's own (`.git`, or where its
//! gitfile points), its submodules' (`.git/modules/<name>`, nested to any
//! depth), its linked worktrees' (`.git/worktrees/<name>`), nested
//! repositories and bare ones anywhere in the tree, those a gitfile, a
//! `.git` symlink or a `commondir` file points at (wherever that is), and
//! those the index's gitlinks reach inside directories the walk skips
//! (`git status` goes into each submodule). In each: `config`,
//! `config.worktree`, `commondir`, `info/attributes`, the hooks, and what
//! the config files name: `include.path` files and the `core.hooksPath`
//! directory.
//!
//! `aq preflight` reports what these files would run; `aq run`'s git guard
//! makes them read-only in the sandbox or checks them when the session ends.
//! Nothing here runs git (which would read the very files being judged).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dir_record::{DirRecord, Listing, Recorder, Stamp};
use crate::git_index::GitlinkPath;

use aq_knowledge::git::{
    GitRuns, git_driver_attributes, git_hook_is_lfs, git_hook_is_sample, git_key_runs,
    parse_git_config,
};

/// Directories whose contents the walk does not list: dependencies and
/// build output. Nested repositories there are still found when the index
/// has a gitlink to them.
pub(crate) const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
];

/// How many directory entries the walk lists before it stops (and says so).
pub const MAX_ENTRIES: usize = 200_000;

/// How much of one file is read.
const MAX_FILE: u64 = 1024 * 1024;

/// How deep a submodule's name nests (`modules/libs/x`) and includes
/// chain before discovery stops.
const MAX_DEPTH: usize = 16;

/// How long a chain of git directories (submodules in submodules, gitlinks,
/// pointers) is followed; past it a note says so. Deep enough for any real
/// tree, short enough for the stack.
const MAX_CHAIN: usize = 200;

/// What a file is to git.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GitFileKind {
    /// A config file: `config`, `config.worktree`, an included file.
    Config,
    /// `commondir`: where a git directory takes its config and hooks from.
    Commondir,
    /// A `.git` file (`gitdir: PATH`): where a worktree's git directory is.
    Gitfile,
    /// A file in a hooks directory.
    Hook,
    /// `info/attributes`: which files go through which driver.
    Attributes,
}

impl GitFileKind {
    /// The lowercase name, for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            GitFileKind::Config => "config",
            GitFileKind::Commondir => "commondir",
            GitFileKind::Gitfile => "gitfile",
            GitFileKind::Hook => "hook",
            GitFileKind::Attributes => "attributes",
        }
    }
}

/// Where a git directory sits, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitPlace {
    /// The tree's own repository (`ROOT/.git`).
    Top,
    /// A submodule's, under some `modules/`.
    Module,
    /// A linked worktree's, under some `worktrees/`.
    Worktree,
    /// A nested or bare repository in the tree.
    Nested,
    /// Reached through a gitfile, a `.git` symlink or a `commondir`.
    Pointed,
}

/// A git directory found.
#[derive(Debug, Clone)]
pub struct GitDir {
    /// The directory, canonical (links followed).
    pub path: PathBuf,
    /// Where it sits.
    pub place: GitPlace,
    /// The top of its worktree, when known (`core.hooksPath` and gitlinks
    /// are relative to it).
    pub worktree: Option<PathBuf>,
    /// The pointer in the tree (a gitfile, `.git` symlink or `commondir`)
    /// through which a directory outside the tree was reached.
    pub via: Option<PathBuf>,
}

/// A file git reads as configuration or runs.
#[derive(Debug, Clone)]
pub struct GitFile {
    /// The path: its git directory's canonical path and the file's name
    /// (a hook or include may itself be a link, or sit in a linked
    /// directory).
    pub path: PathBuf,
    /// What it is to git.
    pub kind: GitFileKind,
    /// Index into [`GitSurface::git_dirs`] of the directory it belongs to
    /// (for a gitfile: the one it points at, if that exists).
    pub git_dir: Option<usize>,
}

/// Everything found.
#[derive(Debug, Clone, Default)]
pub struct GitSurface {
    /// Every git directory, the tree's own first when it has one.
    pub git_dirs: Vec<GitDir>,
    /// Every file that exists (hooks directories that do not are in
    /// [`GitSurface::hook_dirs`]).
    pub files: Vec<GitFile>,
    /// Each git directory's hooks directory and each `core.hooksPath`
    /// directory, whether it exists or not, with its git directory.
    pub hook_dirs: Vec<(PathBuf, usize)>,
    /// The walk stopped after [`MAX_ENTRIES`] entries.
    pub truncated: bool,
    /// What could not be read, and why.
    pub notes: Vec<String>,
}

/// What [`rediscover`]'s record is of: changed with anything that changes
/// what its listings hold or which directories it skips.
const GIT_WALK: &str = "git-dirs/2";

/// Finds the git surface of the tree at `root` (canonical) with a walk of
/// its own, bounded by [`MAX_ENTRIES`].
pub fn discover(root: &Path, home: Option<&Path>) -> GitSurface {
    rediscover(root, home, None).0
}

/// What a search for git directories leaves for the next one: its
/// directories, and the gitlinks of each index it read by the index's
/// stamp (a 20,000-file repository's index is 1.6 MB to read and parse).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GitWalkRecord {
    pub(crate) dirs: DirRecord,
    indexes: HashMap<PathBuf, IndexSeen>,
    /// How many indexes the walk that made this record read.
    #[serde(skip)]
    pub(crate) indexes_read: usize,
}

impl GitWalkRecord {
    /// How many directories the walk that made this record listed.
    pub fn listed(&self) -> usize {
        self.dirs.listed()
    }

    /// It holds nothing a next walk could use.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.indexes.is_empty()
    }

    /// How many indexes the walk that made this record read (the others
    /// were unchanged since the record before it).
    pub fn indexes_read(&self) -> usize {
        self.indexes_read
    }
}

/// An index as read: its stamp then, and its gitlinks (or why not).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IndexSeen {
    stamp: Stamp,
    gitlinks: Result<Vec<GitlinkPath>, String>,
}

/// [`discover`], and a record of the walk; given the record of an earlier
/// walk of the same tree, only the directories changed since are listed
/// (see [`crate::dir_record`]) and only the indexes changed since are read.
pub fn rediscover(
    root: &Path,
    home: Option<&Path>,
    earlier: Option<&GitWalkRecord>,
) -> (GitSurface, GitWalkRecord) {
    rediscover_with(root, home, earlier, crate::dir_record::RACY_NS)
}

pub(crate) fn rediscover_with(
    root: &Path,
    home: Option<&Path>,
    earlier: Option<&GitWalkRecord>,
    racy_ns: i128,
) -> (GitSurface, GitWalkRecord) {
    let mut d = Discovery::new(root, home);
    let mut record = Recorder::new(root, GIT_WALK, earlier.map(|e| &e.dirs), racy_ns);
    if let Some(e) = earlier.filter(|e| e.dirs.is_for(root, GIT_WALK)) {
        d.indexes_before = e.indexes.clone();
    }
    let mut seen = 0usize;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let stamp = record.stamp(&dir);
        let listing = match record.unchanged(&dir, stamp) {
            Some(listing) => {
                if listing.dot_git {
                    d.dot_git(&dir.join(".git"));
                }
                listing
            }
            None => {
                let Some(listing) = list(&mut d, &dir, MAX_ENTRIES + 1 - seen) else {
                    continue;
                };
                record.listed(&dir, stamp, &listing);
                listing
            }
        };
        seen += listing.entries;
        if seen > MAX_ENTRIES {
            d.surface.truncated = true;
            record.truncated();
            break;
        }
        if dir != root && listing.bare {
            d.bare(&dir);
        }
        // A bare repository's directories are walked too: a directory
        // that only looks like one must not hide a repository below it.
        stack.extend(listing.children);
    }
    // The indexes read now, kept when their stamp can be trusted.
    let indexes = std::mem::take(&mut d.indexes_now)
        .into_iter()
        .filter(|(_, seen)| record.trusts(&seen.stamp))
        .collect();
    let dirs = record.finish();
    let indexes = if dirs.is_usable() {
        indexes
    } else {
        HashMap::new()
    };
    let indexes_read = d.indexes_read;
    (
        d.finish(),
        GitWalkRecord {
            dirs,
            indexes,
            indexes_read,
        },
    )
}

/// Lists `dir`, `budget` entries at most: its `.git` entry goes to
/// discovery at once; what the walk does with the rest is returned. `None`
/// if it cannot be read.
fn list(d: &mut Discovery, dir: &Path, budget: usize) -> Option<Listing> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut bare = BareSigns::default();
    let mut out = Listing::default();
    for entry in rd.flatten() {
        out.entries += 1;
        if out.entries >= budget {
            break;
        }
        let Ok(ft) = entry.file_type() else { continue };
        let name = entry.file_name();
        if name == ".git" {
            out.dot_git = true;
            d.dot_git(&entry.path());
        } else if ft.is_dir() && !SKIPPED_DIRS.iter().any(|s| name == *s) {
            out.children.push(entry.path());
        }
        bare.see(&name, ft);
    }
    out.bare = bare.all();
    Some(out)
}

/// What may make a directory a bare repository: entries named `HEAD`,
/// `objects` and `refs`, whatever their type. git's own test follows links
/// (`objects` and `refs` need only be searchable: a link to a directory
/// will do) and takes a `HEAD` link into `refs/`; a directory with the
/// three names is a candidate, and discovery reads what it would run.
#[derive(Default)]
pub(crate) struct BareSigns {
    head: bool,
    objects: bool,
    refs: bool,
}

impl BareSigns {
    /// One entry of the directory (its type does not matter, see above).
    pub(crate) fn see(&mut self, name: &std::ffi::OsStr, _ft: std::fs::FileType) {
        if name == "HEAD" {
            self.head = true;
        } else if name == "objects" {
            self.objects = true;
        } else if name == "refs" {
            self.refs = true;
        }
    }

    /// All three seen.
    pub(crate) fn all(&self) -> bool {
        self.head && self.objects && self.refs
    }
}

/// Discovery, fed the `.git` entries and bare repositories of a walk (the
/// preflight walker's, or [`discover`]'s own).
pub(crate) struct Discovery {
    root: PathBuf,
    home: Option<PathBuf>,
    surface: GitSurface,
    /// Canonical git directories already enumerated, and their index.
    visited: HashMap<PathBuf, usize>,
    /// Canonical files already listed.
    listed: HashSet<PathBuf>,
    /// The indexes an earlier walk read, by path.
    indexes_before: HashMap<PathBuf, IndexSeen>,
    /// The indexes this walk read or took from the earlier walk.
    indexes_now: HashMap<PathBuf, IndexSeen>,
    /// How many it read.
    indexes_read: usize,
}

impl Discovery {
    pub(crate) fn new(root: &Path, home: Option<&Path>) -> Discovery {
        Discovery {
            root: root.to_path_buf(),
            home: home.map(Path::to_path_buf),
            surface: GitSurface::default(),
            visited: HashMap::new(),
            listed: HashSet::new(),
            indexes_before: HashMap::new(),
            indexes_now: HashMap::new(),
            indexes_read: 0,
        }
    }

    fn inside(&self, p: &Path) -> bool {
        real(p).is_some_and(|r| r.starts_with(&self.root))
    }

    /// A `.git` entry of the tree: a directory, a gitfile or a symlink.
    pub(crate) fn dot_git(&mut self, path: &Path) {
        self.dot_git_at(path, 0);
    }

    /// [`Discovery::dot_git`], `depth` gitlinks down (bounded: a chain of
    /// repositories each linking the next cannot exhaust the stack).
    fn dot_git_at(&mut self, path: &Path, depth: usize) {
        let worktree = path.parent().map(Path::to_path_buf);
        let top = path.parent() == Some(self.root.as_path());
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.is_dir() {
            let place = if top { GitPlace::Top } else { GitPlace::Nested };
            self.git_dir(path, place, worktree, None, depth);
            return;
        }
        if meta.file_type().is_symlink() {
            let via = (!self.inside(path)).then(|| path.to_path_buf());
            if path.is_dir() {
                self.git_dir(path, GitPlace::Pointed, worktree, via, depth);
                return;
            }
        }
        if path.is_file() {
            let target = read_gitfile(path).and_then(|target| {
                let via = (!self.inside(&target)).then(|| path.to_path_buf());
                self.git_dir(&target, GitPlace::Pointed, worktree, via, depth)
            });
            self.file(path, GitFileKind::Gitfile, target);
        }
    }

    /// A bare repository found in the tree.
    pub(crate) fn bare(&mut self, dir: &Path) {
        self.git_dir(dir, GitPlace::Nested, None, None, 0);
    }

    fn file(&mut self, path: &Path, kind: GitFileKind, git_dir: Option<usize>) {
        let key = real(path).unwrap_or_else(|| path.to_path_buf());
        self.file_at(path, key, kind, git_dir);
    }

    /// [`Self::file`] for a file whose real path `key` is known.
    fn file_at(&mut self, path: &Path, key: PathBuf, kind: GitFileKind, git_dir: Option<usize>) {
        if self.listed.insert(key) {
            self.surface.files.push(GitFile {
                path: path.to_path_buf(),
                kind,
                git_dir,
            });
        }
    }

    /// Enumerates one git directory and what it leads to; its index in
    /// [`GitSurface::git_dirs`] (found before, or now).
    fn git_dir(
        &mut self,
        path: &Path,
        place: GitPlace,
        worktree: Option<PathBuf>,
        via: Option<PathBuf>,
        depth: usize,
    ) -> Option<usize> {
        let canonical = real(path).filter(|c| c.is_dir())?;
        if let Some(i) = self.visited.get(&canonical) {
            return Some(*i);
        }
        if depth > MAX_CHAIN {
            self.surface.notes.push(format!(
                "{}: more than {MAX_CHAIN} git directories deep, not followed",
                path.display()
            ));
            return None;
        }
        let me = self.surface.git_dirs.len();
        self.visited.insert(canonical.clone(), me);
        // From here on, the directory by its canonical path: `..` in the
        // pointers that led here is resolved, and links are followed.
        let path = canonical.as_path();
        // A module's worktree is in its config (`core.worktree`).
        let configs = [path.join("config"), path.join("config.worktree")];
        let core_worktree = configs
            .iter()
            .filter_map(|c| read_small(c))
            .flat_map(|t| parse_git_config(&t))
            .filter(|e| e.key == "core.worktree")
            .filter_map(|e| e.value)
            .next_back()
            .map(|w| normal(&path.join(w)));
        let worktree = worktree.or(core_worktree);
        self.surface.git_dirs.push(GitDir {
            path: path.to_path_buf(),
            place,
            worktree: worktree.clone(),
            via: via.clone(),
        });
        for c in &configs {
            if exists(c) {
                self.config(c, me, worktree.as_deref(), 0);
            }
        }
        let commondir = path.join("commondir");
        if exists(&commondir) {
            self.file(&commondir, GitFileKind::Commondir, Some(me));
            if let Some(common) = read_small(&commondir).and_then(|t| pointed(path, &t)) {
                // Through a pointer in the tree, or the way this one came.
                let via = if self.inside(&commondir) && !self.inside(&common) {
                    Some(commondir.clone())
                } else {
                    via.clone()
                };
                self.git_dir(&common, GitPlace::Pointed, None, via, depth + 1);
            }
        }
        let attributes = path.join("info/attributes");
        if exists(&attributes) {
            self.file(&attributes, GitFileKind::Attributes, Some(me));
        }
        self.hooks(&path.join("hooks"), me);
        // Submodules' git directories; a name may hold `/` (`libs/x`).
        let mut todo = vec![(path.join("modules"), 0usize)];
        while let Some((dir, level)) = todo.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if exists(&p.join("HEAD")) || exists(&p.join("config")) {
                    self.git_dir(&p, GitPlace::Module, None, via.clone(), depth + 1);
                } else if level < MAX_DEPTH {
                    todo.push((p, level + 1));
                }
            }
        }
        if let Ok(rd) = std::fs::read_dir(path.join("worktrees")) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    self.git_dir(&e.path(), GitPlace::Worktree, None, via.clone(), depth + 1);
                }
            }
        }
        if let Some(w) = &worktree {
            self.gitlinks(path, w, depth + 1);
        }
        Some(me)
    }

    /// A hooks directory: listed whether or not it exists, its files too.
    fn hooks(&mut self, dir: &Path, me: usize) {
        if !self.surface.hook_dirs.iter().any(|(d, _)| d == dir) {
            self.surface.hook_dirs.push((dir.to_path_buf(), me));
        }
        if let Ok(rd) = std::fs::read_dir(dir) {
            // The entry's type from the listing: a plain file is not `stat`ed
            // nor resolved again (a hooks directory holds a dozen samples).
            let mut entries: Vec<(PathBuf, Option<std::fs::FileType>)> = rd
                .flatten()
                .map(|e| (e.path(), e.file_type().ok()))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let dir_real = real(dir);
            for (p, kind) in entries {
                match (kind, &dir_real, p.file_name()) {
                    (Some(k), Some(d), Some(name)) if k.is_file() => {
                        self.file_at(&p, d.join(name), GitFileKind::Hook, Some(me));
                    }
                    _ if !p.is_dir() => self.file(&p, GitFileKind::Hook, Some(me)),
                    _ => {}
                }
            }
        }
    }

    /// A config file, and what it names: included files, a hooks directory.
    fn config(&mut self, path: &Path, me: usize, worktree: Option<&Path>, depth: usize) {
        self.file(path, GitFileKind::Config, Some(me));
        if depth > MAX_DEPTH {
            return;
        }
        let Some(text) = read_small(path) else { return };
        let base = path.parent().unwrap_or(Path::new("/"));
        for e in parse_git_config(&text) {
            let Some(v) = e.value.as_deref().filter(|v| !v.is_empty()) else {
                continue;
            };
            match git_key_runs(&e.key, Some(v)).map(|k| k.runs) {
                Some(GitRuns::Include) => {
                    if let Some(p) = self.expand(base, v)
                        && exists(&p)
                    {
                        self.config(&normal(&p), me, worktree, depth + 1);
                    }
                }
                Some(GitRuns::Hooks) => {
                    let hooks_base = worktree.unwrap_or(base);
                    if let Some(p) = self.expand(hooks_base, v) {
                        self.hooks(&normal(&p), me);
                    }
                }
                _ => {}
            }
        }
    }

    /// `~/x`, an absolute path, or one relative to `base`.
    fn expand(&self, base: &Path, v: &str) -> Option<PathBuf> {
        if let Some(rest) = v.strip_prefix("~/") {
            return self.home.as_ref().map(|h| h.join(rest));
        }
        Some(base.join(v))
    }

    /// The gitlinks of a git directory's index: each one whose path has a
    /// `.git` is a repository `git status` goes into.
    fn gitlinks(&mut self, git_dir: &Path, worktree: &Path, depth: usize) {
        let hash_len = if read_small(&git_dir.join("config")).is_some_and(|t| {
            parse_git_config(&t).iter().any(|e| {
                e.key == "extensions.objectformat"
                    && e.value
                        .as_deref()
                        .is_some_and(|v| v.eq_ignore_ascii_case("sha256"))
            })
        }) {
            32
        } else {
            20
        };
        let mut indexes = vec![git_dir.join("index")];
        if let Ok(rd) = std::fs::read_dir(git_dir) {
            indexes.extend(rd.flatten().map(|e| e.path()).filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("sharedindex."))
            }));
        }
        for index in indexes {
            let Some(found) = self.index_gitlinks(&index, hash_len) else {
                continue;
            };
            match found {
                Ok(links) => {
                    for l in links {
                        let rel = String::from_utf8_lossy(&l).into_owned();
                        if !is_plain_relative(&rel) {
                            continue;
                        }
                        let dot_git = worktree.join(&rel).join(".git");
                        if std::fs::symlink_metadata(&dot_git).is_ok() {
                            self.dot_git_at(&dot_git, depth);
                        }
                    }
                }
                Err(e) => self.surface.notes.push(format!(
                    "{}: {e}; its gitlinks were not followed",
                    index.display()
                )),
            }
        }
    }

    /// The gitlinks of one index: what an earlier walk read when the
    /// index's stamp is the same, else read now. `None` if it cannot be
    /// read.
    fn index_gitlinks(
        &mut self,
        index: &Path,
        hash_len: usize,
    ) -> Option<Result<Vec<GitlinkPath>, String>> {
        let stamp = crate::dir_record::Stamp::of_file(index);
        if let Some(stamp) = stamp
            && let Some(seen) = self.indexes_before.get(index)
            && seen.stamp == stamp
        {
            let seen = seen.clone();
            let links = seen.gitlinks.clone();
            self.indexes_now.insert(index.to_path_buf(), seen);
            return Some(links);
        }
        let bytes = read_bounded(index, 256 * MAX_FILE).ok()?;
        self.indexes_read += 1;
        let links = crate::git_index::gitlinks(&bytes, hash_len).map_err(|e| e.to_string());
        if let Some(stamp) = stamp {
            self.indexes_now.insert(
                index.to_path_buf(),
                IndexSeen {
                    stamp,
                    gitlinks: links.clone(),
                },
            );
        }
        Some(links)
    }

    pub(crate) fn finish(self) -> GitSurface {
        self.surface
    }
}

/// A path of the index that stays inside the worktree.
fn is_plain_relative(p: &str) -> bool {
    !p.is_empty()
        && Path::new(p)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// The canonical path of `p` (following every link), if it exists.
fn real(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// `p` with its directory canonical (`..` resolved, links followed) and
/// its last component kept; as it is when its directory does not exist.
fn normal(p: &Path) -> PathBuf {
    match (p.parent().and_then(real), p.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => p.to_path_buf(),
    }
}

/// Whether anything is at `p` (a dangling link counts).
fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// A path a pointer file holds (`commondir`, a gitfile's `gitdir:`),
/// relative to `base`.
fn pointed(base: &Path, text: &[u8]) -> Option<PathBuf> {
    let line = String::from_utf8_lossy(text);
    let line = line.lines().next()?.trim_end();
    (!line.is_empty()).then(|| base.join(line))
}

/// Where a gitfile points: `gitdir: PATH`, relative to the file's directory.
pub(crate) fn read_gitfile(path: &Path) -> Option<PathBuf> {
    let text = read_small(path)?;
    let line = String::from_utf8_lossy(&text);
    let target = line.lines().next()?.strip_prefix("gitdir: ")?.trim_end();
    let base = path.parent()?;
    (!target.is_empty()).then(|| base.join(target))
}

/// A small file's bytes, following links, never blocking on a FIFO.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    read_bounded(path, MAX_FILE).ok()
}

/// Up to `max` bytes of the regular file at `path` (following links; a
/// FIFO or device is refused, not waited on). Errors when there is more.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    // Sized once from the file's length (a 20,000-file repository's index
    // is 1.6 MB: grown by doubling, it was copied ten times).
    let mut buf = Vec::with_capacity(meta.len().min(max) as usize + 1);
    (&mut f).take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(std::io::Error::other(format!("larger than {max} bytes")));
    }
    Ok(buf)
}

/// One thing a git file would make git run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GitDanger {
    /// The line, from 1 (0 for the whole file).
    pub line: usize,
    /// What it is: `core.fsmonitor`, `hook pre-commit`, `commondir`,
    /// `filter=crypt`.
    pub what: String,
    /// What it would run, or where it points.
    pub runs: String,
    /// When git does it.
    pub when: String,
}

/// What else a judgement needs: the file's git directory (a `commondir` is
/// ordinary only in a linked worktree's), and the hooks git's own templates
/// install (copied by `git init` and `git clone`, so ordinary).
pub struct GitJudgeContext<'a> {
    /// The git directory the file belongs to.
    pub git_dir: &'a Path,
    /// Contents of the template hooks (`init.templateDir`, git's own).
    pub template_hooks: &'a [Vec<u8>],
}

/// What `bytes` (the content of a `kind` file; `executable` for a hook)
/// would make git run. A file that cannot be judged (too large, not text
/// where text is needed) is a danger of its own: fail closed.
pub fn git_dangers(
    kind: GitFileKind,
    path: &Path,
    bytes: &[u8],
    executable: bool,
    ctx: &GitJudgeContext<'_>,
) -> Vec<GitDanger> {
    match kind {
        GitFileKind::Config => parse_git_config(bytes)
            .into_iter()
            .filter_map(|e| {
                let row = git_key_runs(&e.key, e.value.as_deref())?;
                Some(GitDanger {
                    line: e.line,
                    what: e.key.clone(),
                    runs: e.value.unwrap_or_default(),
                    when: format!("{}: {}", row.runs.as_str(), row.when),
                })
            })
            .collect(),
        GitFileKind::Hook => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = String::from_utf8_lossy(bytes);
            if !executable
                || git_hook_is_sample(&name)
                || git_hook_is_lfs(&name, &text)
                || ctx.template_hooks.iter().any(|t| t == bytes)
            {
                return Vec::new();
            }
            let first = text
                .lines()
                .find(|l| !l.starts_with("#!") && !l.trim().is_empty())
                .unwrap_or("")
                .trim();
            vec![GitDanger {
                line: 0,
                what: format!("hook {name}"),
                runs: clip(first, 160),
                when: "runs on the git command the hook is named after".to_string(),
            }]
        }
        GitFileKind::Commondir => {
            let Some(target) = pointed(ctx.git_dir, bytes) else {
                return Vec::new();
            };
            // A linked worktree's `commondir` names the repository's git
            // directory, two levels up (`worktrees/<name>/commondir`).
            let ordinary = ctx
                .git_dir
                .parent()
                .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
                .and_then(Path::parent)
                .and_then(real)
                .is_some_and(|common| real(&target).as_ref() == Some(&common));
            if ordinary {
                return Vec::new();
            }
            let written = String::from_utf8_lossy(bytes);
            vec![GitDanger {
                line: 1,
                what: "commondir".to_string(),
                runs: written.lines().next().unwrap_or("").trim_end().to_string(),
                when: "git takes this repository's config and hooks from there, on every command"
                    .to_string(),
            }]
        }
        GitFileKind::Attributes => git_driver_attributes(&String::from_utf8_lossy(bytes))
            .into_iter()
            .map(|a| GitDanger {
                line: a.line,
                what: format!("{}={}", a.attribute, a.driver),
                runs: format!("the `{}` {} driver a config defines", a.driver, a.attribute),
                when: "on status, add, diff or checkout of the files it selects".to_string(),
            })
            .collect(),
        GitFileKind::Gitfile => Vec::new(),
    }
}

/// The drivers configs define with a program: `(attribute, driver)` →
/// (`key = value`, the file). From every config of `surface` and the
/// user's own (`~/.gitconfig`, `~/.config/git/config`, `/etc/gitconfig`).
pub(crate) fn defined_drivers(
    surface: &GitSurface,
    home: Option<&Path>,
) -> BTreeMap<(String, String), (String, PathBuf)> {
    let mut configs: Vec<PathBuf> = surface
        .files
        .iter()
        .filter(|f| f.kind == GitFileKind::Config)
        .map(|f| f.path.clone())
        .collect();
    if let Some(h) = home {
        configs.push(h.join(".gitconfig"));
        configs.push(h.join(".config/git/config"));
    }
    configs.push(PathBuf::from("/etc/gitconfig"));
    let mut out = BTreeMap::new();
    for c in configs {
        let Some(text) = read_small(&c) else { continue };
        for e in parse_git_config(&text) {
            if git_key_runs(&e.key, e.value.as_deref()).is_none() {
                continue;
            }
            let mut parts = e.key.splitn(2, '.');
            let section = parts.next().unwrap_or("");
            let Some((driver, _)) = parts.next().and_then(|r| r.rsplit_once('.')) else {
                continue;
            };
            if matches!(section, "diff" | "filter" | "merge") {
                out.entry((section.to_string(), driver.to_string()))
                    .or_insert((
                        format!("{} = {}", e.key, e.value.unwrap_or_default()),
                        c.clone(),
                    ));
            }
        }
    }
    out
}

/// Whether `meta` is executable by someone.
pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    meta.permissions().mode() & 0o111 != 0
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Each file found, relative to `root`, with its kind, sorted.
    pub(crate) fn kinds(surface: &GitSurface, root: &Path) -> Vec<(String, GitFileKind)> {
        let mut v: Vec<(String, GitFileKind)> = surface
            .files
            .iter()
            .map(|f| {
                (
                    f.path
                        .strip_prefix(root)
                        .unwrap_or(&f.path)
                        .display()
                        .to_string(),
                    f.kind,
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn modules_worktrees_nested_bare_and_pointers_are_found() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let w = |p: &str, s: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        w(".git/HEAD", "ref: refs/heads/main\n");
        w(
            ".git/config",
            "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../shared.gitconfig\n",
        );
        w("shared.gitconfig", "[user]\n\tname = x\n");
        w(".husky/_/pre-commit", "#!/bin/sh\n");
        w(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
        w(".git/info/attributes", "* filter=x\n");
        w(".git/modules/a/HEAD", "x\n");
        w(".git/modules/a/config", "[core]\n\tworktree = ../../../a\n");
        w(".git/modules/a/modules/libs/b/config", "[core]\n");
        w(".git/worktrees/wt/commondir", "../..\n");
        w(".git/worktrees/wt/config.worktree", "[core]\n");
        w("a/.git", "gitdir: ../.git/modules/a\n");
        w("n/.git/config", "[core]\n");
        w("remote.git/HEAD", "ref: refs/heads/main\n");
        w("remote.git/config", "[core]\n\tbare = true\n");
        std::fs::create_dir_all(root.join("remote.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("remote.git/refs")).unwrap();
        w("node_modules/x/.git/config", "[core]\n");
        w("node_modules/y/.git/config", "[core]\n");
        let s = discover(&root, None);
        let got = kinds(&s, &root);
        let want: Vec<(String, GitFileKind)> = [
            (".git/config", GitFileKind::Config),
            (".git/hooks/pre-commit.sample", GitFileKind::Hook),
            (".git/info/attributes", GitFileKind::Attributes),
            (".git/modules/a/config", GitFileKind::Config),
            (".git/modules/a/modules/libs/b/config", GitFileKind::Config),
            (".git/worktrees/wt/commondir", GitFileKind::Commondir),
            (".git/worktrees/wt/config.worktree", GitFileKind::Config),
            (".husky/_/pre-commit", GitFileKind::Hook),
            ("a/.git", GitFileKind::Gitfile),
            ("n/.git/config", GitFileKind::Config),
            ("remote.git/config", GitFileKind::Config),
            ("shared.gitconfig", GitFileKind::Config),
        ]
        .iter()
        .map(|(p, k)| (p.to_string(), *k))
        .collect();
        assert_eq!(got, want, "{s:#?}");
        // node_modules is skipped: without a gitlink, nothing there.
        assert!(!got.iter().any(|(p, _)| p.starts_with("node_modules")));
        let hook_dirs: Vec<String> = s
            .hook_dirs
            .iter()
            .map(|(d, _)| d.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert!(
            hook_dirs.contains(&".git/modules/a/hooks".to_string()),
            "{hook_dirs:?}"
        );
        assert!(hook_dirs.contains(&".husky/_".to_string()), "{hook_dirs:?}");
    }

    #[test]
    fn a_gitfile_pointing_outside_is_followed_and_remembered() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let root = base.join("ws");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere/hooks")).unwrap();
        std::fs::write(base.join("elsewhere/config"), "[core]\n").unwrap();
        std::fs::write(
            root.join("sub/.git"),
            format!("gitdir: {}\n", base.join("elsewhere").display()),
        )
        .unwrap();
        let s = discover(&root, None);
        let dir = s
            .git_dirs
            .iter()
            .find(|d| d.path.ends_with("elsewhere"))
            .unwrap();
        assert_eq!(dir.via.as_deref(), Some(root.join("sub/.git").as_path()));
        assert!(
            s.files
                .iter()
                .any(|f| f.path == base.join("elsewhere/config"))
        );
    }

    fn judge(kind: GitFileKind, git_dir: &Path, name: &str, text: &str, exec: bool) -> Vec<String> {
        git_dangers(
            kind,
            &git_dir.join(name),
            text.as_bytes(),
            exec,
            &GitJudgeContext {
                git_dir,
                template_hooks: &[b"#!/bin/sh\n# template\n".to_vec()],
            },
        )
        .into_iter()
        .map(|d| format!("{}:{} {}", d.line, d.what, d.runs))
        .collect()
    }

    #[test]
    fn what_each_kind_of_file_would_run() {
        let t = tempfile::tempdir().unwrap();
        let g = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(g.join("worktrees/wt")).unwrap();
        assert_eq!(
            judge(
                GitFileKind::Config,
                &g,
                "config",
                "[core]\n\tbare = false\n\tfsmonitor = ./w.sh\n[remote \"o\"]\n\turl = x\n",
                false
            ),
            vec!["3:core.fsmonitor ./w.sh"]
        );
        assert_eq!(
            judge(
                GitFileKind::Hook,
                &g,
                "hooks/pre-commit",
                "#!/bin/sh\n./evil.sh\n",
                true
            ),
            vec!["0:hook pre-commit ./evil.sh"]
        );
        assert!(
            judge(
                GitFileKind::Hook,
                &g,
                "hooks/pre-commit",
                "#!/bin/sh\n./evil.sh\n",
                false
            )
            .is_empty()
        );
        assert!(
            judge(
                GitFileKind::Hook,
                &g,
                "hooks/pre-commit.sample",
                "#!/bin/sh\nx\n",
                true
            )
            .is_empty()
        );
        assert!(
            judge(
                GitFileKind::Hook,
                &g,
                "hooks/pre-commit",
                "#!/bin/sh\n# template\n",
                true
            )
            .is_empty()
        );
        assert_eq!(
            judge(GitFileKind::Commondir, &g, "commondir", "../evil\n", false),
            vec!["1:commondir ../evil"]
        );
        let wt = g.join("worktrees/wt");
        assert!(judge(GitFileKind::Commondir, &wt, "commondir", "../..\n", false).is_empty());
        assert_eq!(
            judge(
                GitFileKind::Attributes,
                &g,
                "info/attributes",
                "*.c diff=cpp\n* filter=crypt\n",
                false
            ),
            vec!["2:filter=crypt the `crypt` filter driver a config defines"]
        );
    }
}
