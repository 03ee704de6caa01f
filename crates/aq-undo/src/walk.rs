//! The walk: the workspace as it is now, as a tree of objects.
//!
//! Two phases. First, workers (one per core) take directories from a shared
//! queue, list them, decide what is kept ([`crate::rules`]), and turn each
//! file into a blob id: from the stat cache when its stat is unchanged, else
//! by reading and storing it. Subdirectories go back on the queue, so a deep
//! tree and a wide one keep both cores busy. Second, one thread builds the
//! trees bottom up; a directory whose tree id is the one the cache recorded
//! costs no write.
//!
//! A full walk given a watcher adds each directory's watch just before it
//! lists the directory (the first checkpoint of a session watches the
//! workspace so, in the same walk).
//!
//! With a watcher's [`Dirty`] set, only the dirty directories are listed:
//! their ancestors are rebuilt from the previous checkpoint's trees, every
//! other subtree is reused by id, and a directory that is new is walked in
//! full. A dirty directory whose `.gitignore` changed is walked in full too,
//! since what it ignores below may have changed.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::cache::{DirCache, FileStat, StatCache};
use crate::objects::{Kind, Objects, Oid};
use crate::rules::{Rules, Stack, Verdict};
use crate::tree::{self, MODE_LINK, MODE_TREE, TreeEntry, TreeReader};
use crate::{Dirty, Error, NotKept, Options, Result};

/// What the walk needs.
pub(crate) struct Walk<'a> {
    pub rules: &'a Rules,
    pub objects: &'a Objects,
    pub trees: &'a TreeReader<'a>,
    pub opts: &'a Options,
    /// When this walk started (ns since the epoch), for the racy rule.
    pub started_ns: i64,
    /// A watcher to watch each directory just before it is listed (a full
    /// walk's), instead of its own walk.
    pub watch: Option<&'a crate::watch::Running>,
}

/// The previous checkpoint, for a walk of only the dirty directories.
pub(crate) struct Base<'a> {
    pub tree: Oid,
    pub dirty: &'a Dirty,
    pub not_kept: &'a [NotKept],
}

pub(crate) struct Walked {
    pub tree: Oid,
    pub not_kept: Vec<NotKept>,
}

#[derive(Clone, Copy)]
enum Mode {
    /// List this directory and everything below.
    Full,
    /// On the way to (or at) a dirty directory; the previous tree, if any.
    Closure(Option<Oid>),
}

struct Job {
    idx: usize,
    rel: PathBuf,
    /// The rules of the parent's children.
    stack: Stack,
    verdict: Verdict,
    mode: Mode,
}

enum Child {
    Oid(u32, Oid),
    Sub(usize),
}

struct DirOut {
    rel: PathBuf,
    entries: Vec<(Vec<u8>, Child)>,
    /// The new cache of a directory that was listed.
    cache: Option<DirCache>,
    not_kept: Vec<NotKept>,
    /// Unreadable: left out of its parent.
    omit: bool,
}

/// The closure of the dirty set: dirty directories and their ancestors.
struct Closure {
    dirty: HashSet<PathBuf>,
    /// Directory -> names of its children in the closure.
    children: HashMap<PathBuf, Vec<Vec<u8>>>,
}

impl Closure {
    fn contains(&self, rel: &Path) -> bool {
        self.dirty.contains(rel) || self.children.contains_key(rel)
    }
}

struct Queue {
    state: Mutex<QState>,
    cv: Condvar,
}

struct QState {
    jobs: Vec<Job>,
    active: usize,
    error: Option<Error>,
}

/// A workspace whose last walk found at most this many directories is
/// walked on the calling thread alone.
const SMALL_WALK_DIRS: usize = 16;

/// How many threads walk a workspace whose last walk found `dirs_loaded`
/// directories (0: never walked). Starting helpers, and asking how many
/// CPUs there are (three files in /proc and /sys), cost more than a few
/// directories do: a tenth of a millisecond of every hook's checkpoint.
fn workers_for(dirs_loaded: usize) -> usize {
    if (1..=SMALL_WALK_DIRS).contains(&dirs_loaded) {
        return 1;
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4)
}

impl Walk<'_> {
    /// Walks the workspace; `cache` is read and then updated in place.
    pub fn run(&self, cache: &mut StatCache, base: Option<Base>) -> Result<Walked> {
        let closure = base.as_ref().map(|b| self.closure(b.dirty));
        let root_mode = match &base {
            Some(b) => Mode::Closure(Some(b.tree)),
            None => Mode::Full,
        };
        let alloc = AtomicUsize::new(1);
        let queue = Queue {
            state: Mutex::new(QState {
                jobs: vec![Job {
                    idx: 0,
                    rel: PathBuf::new(),
                    stack: Stack::default(),
                    verdict: Verdict::Keep,
                    mode: root_mode,
                }],
                active: 0,
                error: None,
            }),
            cv: Condvar::new(),
        };
        let results: Mutex<Vec<Option<DirOut>>> = Mutex::new(Vec::new());
        let workers = workers_for(cache.dirs_loaded());
        {
            let cache_ref: &StatCache = cache;
            let work = || self.worker(&queue, &results, &alloc, cache_ref, closure.as_ref());
            std::thread::scope(|s| {
                for _ in 1..workers {
                    s.spawn(work);
                }
                work();
            });
        }
        if let Some(e) = queue
            .state
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .error
        {
            return Err(e);
        }
        let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
        results.resize_with(alloc.load(Ordering::SeqCst), || None);

        // Phase two: trees, bottom up (a child's index is above its parent's).
        let mut oids: Vec<Option<Oid>> = vec![None; results.len()];
        let mut not_kept = Vec::new();
        let mut listed: HashSet<PathBuf> = HashSet::new();
        for idx in (0..results.len()).rev() {
            let Some(out) = results[idx].take() else {
                return Err(Error(format!("internal: directory {idx} was not walked")));
            };
            not_kept.extend(out.not_kept);
            if out.omit {
                continue;
            }
            let mut entries = Vec::with_capacity(out.entries.len());
            for (name, child) in out.entries {
                let (mode, oid) = match child {
                    Child::Oid(mode, oid) => (mode, oid),
                    Child::Sub(j) => match oids[j] {
                        Some(oid) => (MODE_TREE, oid),
                        None => continue,
                    },
                };
                entries.push(TreeEntry { name, mode, oid });
            }
            let data = tree::encode(&mut entries);
            let oid = crate::objects::hash(Kind::Tree, &data);
            let key = out.rel.as_os_str().as_bytes().to_vec();
            let known = cache.tree_of(&key) == Some(oid);
            if !known && oid != Oid::EMPTY_TREE {
                self.objects.write_as(oid, Kind::Tree, &data)?;
            }
            if let Some(mut dc) = out.cache {
                dc.tree = oid;
                listed.insert(out.rel.clone());
                cache.insert(key, dc);
            } else {
                cache.set_tree(&key, oid);
            }
            oids[idx] = Some(oid);
        }
        if let Some(b) = &base {
            // Not-kept records of directories this walk did not list stand.
            for nk in b.not_kept {
                let parent = nk.path.parent().unwrap_or(Path::new(""));
                if !listed.contains(parent) && !listed.contains(&nk.path) {
                    not_kept.push(nk.clone());
                }
            }
        } else {
            // A full walk: directories it did not see are gone.
            cache.retain(|k| {
                k == crate::cache::GIT_KEY || listed.contains(Path::new(OsStr::from_bytes(k)))
            });
        }
        not_kept.sort_by(|a, b| a.path.cmp(&b.path));
        let tree = oids[0].ok_or_else(|| Error("the workspace could not be read".into()))?;
        Ok(Walked { tree, not_kept })
    }

    fn worker(
        &self,
        queue: &Queue,
        results: &Mutex<Vec<Option<DirOut>>>,
        alloc: &AtomicUsize,
        cache: &StatCache,
        closure: Option<&Closure>,
    ) {
        loop {
            let job = {
                let mut s = queue.state.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if s.error.is_some() {
                        return;
                    }
                    if let Some(j) = s.jobs.pop() {
                        s.active += 1;
                        break j;
                    }
                    if s.active == 0 {
                        queue.cv.notify_all();
                        return;
                    }
                    s = queue.cv.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            };
            let idx = job.idx;
            let mut new = Vec::new();
            let out = self.process(job, &mut new, alloc, cache, closure);
            let mut s = queue.state.lock().unwrap_or_else(|e| e.into_inner());
            match out {
                Ok(out) => {
                    let mut r = results.lock().unwrap_or_else(|e| e.into_inner());
                    if r.len() <= idx {
                        r.resize_with(idx + 1, || None);
                    }
                    r[idx] = Some(out);
                }
                Err(e) => {
                    s.error.get_or_insert(e);
                }
            }
            s.jobs.extend(new);
            s.active -= 1;
            queue.cv.notify_all();
        }
    }

    fn closure(&self, dirty: &Dirty) -> Closure {
        let mut set = HashSet::new();
        for d in &dirty.dirs {
            let Some(mut d) = clean_rel(d) else { continue };
            if d.components().any(|c| c.as_os_str() == ".git") {
                continue;
            }
            // A dirty directory that is gone (or is a link now): its parent
            // lists what is there instead.
            while !d.as_os_str().is_empty() && !is_real_dir(self.rules.root(), &d) {
                d.pop();
            }
            set.insert(d);
        }
        let mut children: HashMap<PathBuf, Vec<Vec<u8>>> = HashMap::new();
        for d in &set {
            let mut cur = d.clone();
            while let Some(name) = cur.file_name().map(|n| n.as_bytes().to_vec()) {
                cur.pop();
                let v = children.entry(cur.clone()).or_default();
                if v.contains(&name) {
                    break;
                }
                v.push(name);
            }
        }
        Closure {
            dirty: set,
            children,
        }
    }

    fn process(
        &self,
        job: Job,
        push: &mut Vec<Job>,
        alloc: &AtomicUsize,
        cache: &StatCache,
        closure: Option<&Closure>,
    ) -> Result<DirOut> {
        let abs = self.rules.root().join(&job.rel);
        if let (Mode::Closure(Some(prev)), Some(c)) = (job.mode, closure)
            && !c.dirty.contains(&job.rel)
        {
            let prev_entries = self.trees.read(&prev)?;
            let kids = c.children.get(&job.rel).map(Vec::as_slice).unwrap_or(&[]);
            let all_trees = kids
                .iter()
                .all(|k| prev_entries.iter().any(|e| e.name == *k && e.is_tree()));
            if all_trees {
                return self.rebuild(job, &abs, &prev_entries, kids, push, alloc);
            }
        }
        self.list(job, &abs, push, alloc, cache, closure)
    }

    /// An ancestor of dirty directories: its previous tree, with the dirty
    /// children walked again.
    fn rebuild(
        &self,
        job: Job,
        abs: &Path,
        prev: &[TreeEntry],
        kids: &[Vec<u8>],
        push: &mut Vec<Job>,
        alloc: &AtomicUsize,
    ) -> Result<DirOut> {
        let stack = self
            .rules
            .child_stack(&job.stack, job.verdict, self.rules.load_dir(abs));
        let mut entries = Vec::with_capacity(prev.len());
        for e in prev {
            if e.is_tree() && kids.contains(&e.name) {
                let rel = job.rel.join(OsStr::from_bytes(&e.name));
                let child_abs = abs.join(OsStr::from_bytes(&e.name));
                let verdict = self.rules.verdict(&stack, &child_abs, &rel, true);
                if verdict == Verdict::Skip {
                    continue;
                }
                let idx = alloc.fetch_add(1, Ordering::SeqCst);
                push.push(Job {
                    idx,
                    rel,
                    stack: stack.clone(),
                    verdict,
                    mode: Mode::Closure(Some(e.oid)),
                });
                entries.push((e.name.clone(), Child::Sub(idx)));
            } else {
                entries.push((e.name.clone(), Child::Oid(e.mode, e.oid)));
            }
        }
        Ok(DirOut {
            rel: job.rel,
            entries,
            cache: None,
            not_kept: Vec::new(),
            omit: false,
        })
    }

    /// Lists a directory from disk.
    fn list(
        &self,
        job: Job,
        abs: &Path,
        push: &mut Vec<Job>,
        alloc: &AtomicUsize,
        cache: &StatCache,
        closure: Option<&Closure>,
    ) -> Result<DirOut> {
        let mut out = DirOut {
            rel: job.rel.clone(),
            entries: Vec::new(),
            cache: None,
            not_kept: Vec::new(),
            omit: false,
        };
        // Watched before it is listed: an entry made after the listing is
        // reported by the watcher, one made before it is listed.
        if let Some(w) = self.watch {
            w.add_dir(&job.rel, abs);
        }
        let rd = match fs::read_dir(abs) {
            Ok(rd) => rd,
            Err(e) if job.rel.as_os_str().is_empty() => {
                return Err(crate::io_error("read the workspace", abs, e));
            }
            Err(e) => {
                out.omit = true;
                out.not_kept.push(NotKept {
                    path: job.rel,
                    why: format!("unreadable directory: {e}"),
                });
                return Ok(out);
            }
        };
        let mut names = Vec::new();
        for ent in rd {
            match ent {
                Ok(ent) => names.push(ent),
                Err(e) => {
                    out.not_kept.push(NotKept {
                        path: job.rel.clone(),
                        why: format!("directory could not be listed in full: {e}"),
                    });
                }
            }
        }
        let own = if names.iter().any(|e| e.file_name() == ".gitignore") {
            self.rules.load_dir(abs)
        } else {
            None
        };
        let stack = self.rules.child_stack(&job.stack, job.verdict, own);
        let key = job.rel.as_os_str().as_bytes();
        let old = cache.get(key);
        let mut files = Vec::new();
        let mut subdirs = Vec::new();
        for ent in names {
            let name = ent.file_name();
            if name == ".git" {
                continue;
            }
            let Ok(ft) = ent.file_type() else { continue };
            let rel = job.rel.join(&name);
            let child_abs = abs.join(&name);
            let verdict = self.rules.verdict(&stack, &child_abs, &rel, ft.is_dir());
            if verdict == Verdict::Skip {
                continue;
            }
            if ft.is_dir() {
                subdirs.push((name, rel, verdict));
                continue;
            }
            if !ft.is_file() && !ft.is_symlink() {
                continue; // sockets, fifos, devices
            }
            if verdict == Verdict::EnterIgnored {
                continue;
            }
            let name_b = name.as_bytes();
            let meta = match ent.metadata() {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    out.not_kept.push(NotKept {
                        path: rel,
                        why: format!("could not be read: {e}"),
                    });
                    continue;
                }
            };
            let mode = if ft.is_symlink() {
                MODE_LINK
            } else {
                tree::file_mode(meta.mode())
            };
            if let Some(oid) = old.as_ref().and_then(|dc| dc.lookup(name_b, &meta)) {
                files.push(FileStat::from_meta(name_b, &meta, oid));
                out.entries.push((name_b.to_vec(), Child::Oid(mode, oid)));
                continue;
            }
            let read = if ft.is_symlink() {
                fs::read_link(&child_abs)
                    .map(|t| (t.into_os_string().into_vec(), meta))
                    .map_err(|e| format!("could not be read: {e}"))
            } else {
                self.read_file(&child_abs, meta)
            };
            match read {
                Ok((data, meta)) => {
                    let oid = self.objects.write(Kind::Blob, &data)?;
                    files.push(FileStat::from_meta(name_b, &meta, oid));
                    out.entries.push((name_b.to_vec(), Child::Oid(mode, oid)));
                }
                Err(why) if why.is_empty() => {} // vanished
                Err(why) => out.not_kept.push(NotKept { path: rel, why }),
            }
        }
        // Subdirectories: walked again, or (in a walk of the dirty set
        // only) reused from the previous tree.
        let prev = match job.mode {
            Mode::Closure(Some(prev)) => Some(self.trees.read(&prev)?),
            _ => None,
        };
        let prev_of = |name: &[u8]| {
            prev.as_ref()
                .and_then(|p| p.iter().find(|e| e.name == name).cloned())
        };
        let gitignore_changed = prev.is_some() && {
            let now = out.entries.iter().find(|(n, _)| n == b".gitignore");
            let then = prev_of(b".gitignore");
            match (now, then) {
                (Some((_, Child::Oid(_, a))), Some(b)) => *a != b.oid,
                (None, None) => false,
                _ => true,
            }
        };
        for (name, rel, verdict) in subdirs {
            let name_b = name.as_bytes().to_vec();
            let mode = match (job.mode, closure) {
                (Mode::Full, _) | (_, None) => Mode::Full,
                (Mode::Closure(_), Some(_)) if gitignore_changed => Mode::Full,
                (Mode::Closure(_), Some(c)) => {
                    let then = prev_of(&name_b).filter(TreeEntry::is_tree);
                    if c.contains(&rel) {
                        Mode::Closure(then.map(|e| e.oid))
                    } else if let Some(e) = then {
                        out.entries.push((name_b, Child::Oid(MODE_TREE, e.oid)));
                        continue;
                    } else {
                        Mode::Full
                    }
                }
            };
            let idx = alloc.fetch_add(1, Ordering::SeqCst);
            push.push(Job {
                idx,
                rel,
                stack: stack.clone(),
                verdict,
                mode,
            });
            out.entries.push((name_b, Child::Sub(idx)));
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        out.cache = Some(DirCache {
            tree: Oid([0; 20]),
            recorded_ns: self.started_ns,
            files,
        });
        Ok(out)
    }

    /// Reads a file, again if it changed while being read; `Err("")` when it
    /// is gone.
    fn read_file(
        &self,
        abs: &Path,
        lstat: fs::Metadata,
    ) -> std::result::Result<(Vec<u8>, fs::Metadata), String> {
        let limit = self.opts.max_file_bytes;
        let over = |size: u64| format!("over the size limit ({limit} bytes): {size} bytes");
        if lstat.len() > limit {
            return Err(over(lstat.len()));
        }
        for _ in 0..2 {
            let mut f = match fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(abs)
            {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(String::new()),
                Err(e) => return Err(format!("could not be read: {e}")),
            };
            let before = f
                .metadata()
                .map_err(|e| format!("could not be read: {e}"))?;
            if !before.is_file() {
                return Err(String::new());
            }
            if before.len() > limit {
                return Err(over(before.len()));
            }
            let mut data = Vec::with_capacity(before.len() as usize);
            (&mut f)
                .take(limit + 1)
                .read_to_end(&mut data)
                .map_err(|e| format!("could not be read: {e}"))?;
            let after = f
                .metadata()
                .map_err(|e| format!("could not be read: {e}"))?;
            if data.len() as u64 == before.len()
                && after.len() == before.len()
                && after.mtime() == before.mtime()
                && after.mtime_nsec() == before.mtime_nsec()
            {
                return Ok((data, after));
            }
        }
        Err("changed while being read".into())
    }
}

/// A relative path with no `..`, no root and no `.`; `None` if it has any
/// of the first two.
pub(crate) fn clean_rel(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Whether `rel` is a directory reached through directories only (no link).
fn is_real_dir(root: &Path, rel: &Path) -> bool {
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod workers_tests {
    use super::*;

    #[test]
    fn a_workspace_known_to_be_small_is_walked_on_one_thread() {
        let many = workers_for(0);
        assert!((1..=4).contains(&many));
        assert_eq!(workers_for(1), 1);
        assert_eq!(workers_for(SMALL_WALK_DIRS), 1);
        assert_eq!(workers_for(SMALL_WALK_DIRS + 1), many);
        assert_eq!(workers_for(20_000), many);
    }
}
