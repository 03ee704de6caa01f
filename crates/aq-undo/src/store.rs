//! The store on disk: where it is, its lock, its list of checkpoints.
//!
//! A checkpoint's root object is a tree of `w` (the workspace), `g` (the
//! repository's state, when there is one) and `m` (its record, JSON); its id
//! is that tree's id. Its line goes into `checkpoints.jsonl` only after all
//! its objects are written, so a crash leaves objects nobody names (prune
//! sweeps them) or a line cut short: a line that does not parse, or whose
//! root, `w`, `g` or `m` is missing or fails its hash, is skipped and
//! reported, and the others stand. Deeper damage (a blob gone from a
//! subtree) is found when that checkpoint is read for a diff or an undo,
//! and before the undo has touched anything.
//!
//! Loose objects are not fsynced: a checkpoint is taken before every
//! command and must cost milliseconds. After a power cut the newest
//! checkpoints may be torn; they are then skipped as above. A pack (a take
//! of many new objects, rare) is fsynced before it is renamed into place,
//! and both come before the line: it is the base of every later checkpoint.

use std::fs;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::cache::StatCache;
use crate::diff;
use crate::gitstate;
use crate::objects::{Kind, Objects, Oid};
use crate::rules::Rules;
use crate::tree::{self, MODE_FILE, MODE_TREE, TreeEntry, TreeReader};
use crate::walk::{Base, Walk};
use crate::{
    Checkpoint, CheckpointId, Dirty, Error, Listing, Meta, NotKept, Options, Reason, Result,
    io_error,
};

pub(crate) const LIST: &str = "checkpoints.jsonl";
pub(crate) const JOURNAL: &str = "journal.json";
pub(crate) const STAT_CACHE: &str = "stat-cache";

pub(crate) fn create_private_dir(path: &Path) -> Result<()> {
    match fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
    {
        Ok(()) => Ok(()),
        Err(e) => Err(io_error("create directory", path, e)),
    }
}

/// Writes `data` to `path` through a temporary name and a rename.
pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let r = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(data));
    if let Err(e) = r {
        let _ = fs::remove_file(&tmp);
        return Err(io_error("write", &tmp, e));
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_error("rename into place", path, e)
    })
}

pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// The store's directory name: readable, and unique per canonical path.
pub(crate) fn dir_name(workspace: &Path) -> String {
    use sha1::Digest;
    let base: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let base = base.trim_start_matches('.');
    let h = sha1::Sha1::digest(workspace.as_os_str().as_bytes());
    let hex: String = h[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}", if base.is_empty() { "ws" } else { base })
}

/// The writer's lock (`flock` on `lock`): sessions, hooks, undo and prune
/// take it, so that two writers never interleave a checkpoint.
pub(crate) struct Lock(#[allow(dead_code)] fs::File);

/// What a checkpoint's root tree names.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Root {
    pub w: Oid,
    pub g: Option<Oid>,
}

/// The workspace as a walk just saw it.
pub(crate) struct Now {
    pub w: Oid,
    pub g: Option<Oid>,
    pub not_kept: Vec<NotKept>,
}

impl crate::Store {
    pub(crate) fn open_impl(state_root: &Path, workspace: &Path) -> Result<crate::Store> {
        let ws = fs::canonicalize(workspace)
            .map_err(|e| io_error("find the workspace", workspace, e))?;
        if !ws.is_dir() {
            return Err(Error(format!("{} is not a directory", ws.display())));
        }
        let dir = crate::Store::root(state_root).join(dir_name(&ws));
        create_private_dir(&dir)?;
        let marker = dir.join("workspace");
        match fs::read(&marker) {
            Ok(named) if named == ws.as_os_str().as_bytes() => {}
            Ok(named) => {
                return Err(Error(format!(
                    "the checkpoint store {} belongs to {}, not {}",
                    dir.display(),
                    String::from_utf8_lossy(&named),
                    ws.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                write_atomic(&marker, ws.as_os_str().as_bytes())?;
            }
            Err(e) => return Err(io_error("read", &marker, e)),
        }
        // Enough of a git directory for `git --git-dir=<store> cat-file`.
        create_private_dir(&dir.join("objects"))?;
        create_private_dir(&dir.join("refs"))?;
        if fs::symlink_metadata(dir.join("HEAD")).is_err() {
            write_atomic(&dir.join("HEAD"), b"ref: refs/heads/main\n")?;
        }
        let objects = Objects::new(dir.join("objects"));
        // Empty directories name the empty tree; git tools want it stored.
        objects.write_as(Oid::EMPTY_TREE, Kind::Tree, b"")?;
        Ok(crate::Store {
            objects,
            dir,
            workspace: ws,
        })
    }

    pub(crate) fn lock(&self) -> Result<Lock> {
        let path = self.dir.join("lock");
        let f = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| io_error("open", &path, e))?;
        loop {
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Lock(f));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(io_error("lock", &path, e));
            }
        }
    }

    /// Reads a checkpoint's root, checking what a listed record must have.
    pub(crate) fn check(&self, c: &Checkpoint) -> Result<Root> {
        let oid =
            Oid::from_hex(&c.id.0).ok_or_else(|| Error(format!("bad checkpoint id {}", c.id.0)))?;
        let data = self.objects.read_kind(&oid, Kind::Tree)?;
        let entries = tree::decode(&oid, &data)?;
        let get = |n: &[u8]| entries.iter().find(|e| e.name == n).map(|e| e.oid);
        let w = get(b"w").ok_or_else(|| Error("its root has no workspace tree".into()))?;
        let m = get(b"m").ok_or_else(|| Error("its root has no record".into()))?;
        let g = get(b"g");
        if c.git_kept && g.is_none() {
            return Err(Error("its root has no repository state".into()));
        }
        self.objects.read_kind(&m, Kind::Blob)?;
        if w != Oid::EMPTY_TREE {
            self.objects.read_kind(&w, Kind::Tree)?;
        }
        if let Some(g) = g {
            self.objects.read_kind(&g, Kind::Tree)?;
        }
        Ok(Root { w, g })
    }

    fn read_lines(&self) -> Result<Vec<String>> {
        let path = self.dir.join(LIST);
        match fs::read(&path) {
            Ok(d) => Ok(String::from_utf8_lossy(&d)
                .lines()
                .map(str::to_string)
                .collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_error("read", &path, e)),
        }
    }

    pub(crate) fn list_impl(&self) -> Result<(Listing, Vec<String>)> {
        let mut listing = Listing::default();
        let mut good_lines = Vec::new();
        for (i, line) in self.read_lines()?.into_iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Checkpoint>(&line) {
                Err(e) => listing
                    .torn
                    .push(format!("line {}: not a checkpoint record ({e})", i + 1)),
                Ok(c) => match self.check(&c) {
                    Ok(_) => {
                        listing.checkpoints.push(c);
                        good_lines.push(line);
                    }
                    Err(e) => {
                        listing
                            .torn
                            .push(format!("checkpoint {} (line {}): {e}", c.id, i + 1))
                    }
                },
            }
        }
        Ok((listing, good_lines))
    }

    /// The newest usable checkpoint, read from the end: a take (every session
    /// start, every hook call) must not cost the length of the history. The
    /// last 8 KiB hold it unless the lines after it are torn or unusable;
    /// then the window doubles, up to the whole file.
    pub(crate) fn latest(&self) -> Result<Option<(Checkpoint, Root)>> {
        use std::os::unix::fs::FileExt;
        let path = self.dir.join(LIST);
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("open", &path, e)),
        };
        let len = file
            .metadata()
            .map_err(|e| io_error("stat", &path, e))?
            .len();
        let mut window: u64 = 8 * 1024;
        // Lines from `done` on were tried already.
        let mut done = len;
        loop {
            let from = len.saturating_sub(window);
            let mut buf = vec![0u8; (done - from) as usize];
            file.read_exact_at(&mut buf, from)
                .map_err(|e| io_error("read", &path, e))?;
            // Before `from` the first line may be cut: it is read whole in
            // the next window (its end is where this one's tries start).
            let whole = match (from, buf.iter().position(|b| *b == b'\n')) {
                (0, _) => &buf[..],
                (_, Some(nl)) => &buf[nl + 1..],
                (_, None) => &buf[buf.len()..],
            };
            // The empty line after the last newline is skipped, not parsed:
            // its error's position was the process's first use of memchr,
            // whose CPU probe (cpuid, a trap in a VM) took a tenth of a
            // small checkpoint.
            for line in whole.split(|b| *b == b'\n').rev().filter(|l| !l.is_empty()) {
                if let Ok(c) = serde_json::from_str::<Checkpoint>(&String::from_utf8_lossy(line))
                    && let Ok(root) = self.check(&c)
                {
                    return Ok(Some((c, root)));
                }
            }
            if from == 0 {
                return Ok(None);
            }
            done = from + (buf.len() - whole.len()) as u64;
            window = window.saturating_mul(2);
        }
    }

    pub(crate) fn find(&self, id: &CheckpointId) -> Result<(Checkpoint, Root)> {
        for line in self.read_lines()?.iter().rev() {
            if let Ok(c) = serde_json::from_str::<Checkpoint>(line)
                && c.id == *id
            {
                let root = self
                    .check(&c)
                    .map_err(|e| Error(format!("checkpoint {} cannot be used: {e}", c.id)))?;
                return Ok((c, root));
            }
        }
        Err(Error(format!(
            "no checkpoint {id} in {}",
            self.dir.display()
        )))
    }

    /// Walks the workspace now (objects written, nothing listed).
    pub(crate) fn walk_now(
        &self,
        opts: &Options,
        dirty: Option<&Dirty>,
        latest: Option<&(Checkpoint, Root)>,
    ) -> Result<Now> {
        self.walk_now_watching(opts, dirty, latest, None)
    }

    /// [`Self::walk_now`]; a full walk given `watch` adds its watches too.
    pub(crate) fn walk_now_watching(
        &self,
        opts: &Options,
        dirty: Option<&Dirty>,
        latest: Option<&(Checkpoint, Root)>,
        watch: Option<&crate::watch::Running>,
    ) -> Result<Now> {
        let started_ns = now_ns();
        let cache_path = self.dir.join(STAT_CACHE);
        // Many new objects go into one pack, in place before the stat
        // cache or a checkpoint line names them.
        let batch = self.objects.begin_batch(0);
        // The cache names objects; a damaged pack lost some of them.
        let mut cache = if self.objects.damaged_pack() {
            StatCache::default()
        } else {
            StatCache::load(&cache_path)
        };
        let rules = Rules::new(&self.workspace, &opts.include);
        let trees = TreeReader::new(&self.objects);
        let walk = Walk {
            rules: &rules,
            objects: &self.objects,
            trees: &trees,
            opts,
            started_ns,
            watch: None,
        };
        let carried: Vec<NotKept>;
        let base = match (dirty, latest) {
            (Some(d), Some((c, root))) if !d.overflow => {
                carried = c
                    .not_kept
                    .iter()
                    .filter(|n| n.path != Path::new(".git"))
                    .cloned()
                    .collect();
                Some(Base {
                    tree: root.w,
                    dirty: d,
                    not_kept: &carried,
                })
            }
            _ => None,
        };
        let walked = match base {
            Some(b) => match walk.run(&mut cache, Some(b)) {
                Ok(w) => w,
                // The previous checkpoint could not be read: walk it all.
                Err(_) => {
                    cache = StatCache::default();
                    walk.run(&mut cache, None)?
                }
            },
            None => {
                let walk = Walk { watch, ..walk };
                walk.run(&mut cache, None)?
            }
        };
        let git = gitstate::capture(&self.workspace, &self.objects, &mut cache, started_ns)?;
        batch.finish()?;
        if self.objects.damaged_pack() {
            self.objects.set_aside_damaged();
        }
        // An unchanged workspace leaves the cache as it was: not rewritten
        // (a large workspace's cache is megabytes, hashed and written).
        if cache.changed() {
            cache.save(&cache_path)?;
        }
        let mut not_kept = walked.not_kept;
        not_kept.extend(git.not_kept);
        Ok(Now {
            w: walked.tree,
            g: git.tree,
            not_kept,
        })
    }

    pub(crate) fn take_locked(
        &self,
        reason: Reason,
        meta: &Meta,
        opts: &Options,
        dirty: Option<&Dirty>,
    ) -> Result<crate::Taken> {
        self.take_locked_watching(reason, meta, opts, dirty, None)
    }

    /// A full checkpoint whose walk adds `watch`'s watches, each directory's
    /// just before it is listed; if the walk fails, the watcher walks the
    /// workspace itself. `Err` for the watcher when it cannot be used: it
    /// could not start, or the watch limit was reached.
    pub(crate) fn take_and_watch_impl(
        &self,
        reason: Reason,
        meta: &Meta,
        opts: &Options,
    ) -> (Result<crate::Taken>, Result<crate::watch::Running>) {
        let running = match crate::watch::start_unwalked(&self.workspace, opts) {
            Ok(r) => r,
            Err(e) => return (self.take(reason, meta, opts, None), Err(e)),
        };
        let taken = if running.root() == self.workspace {
            self.lock().and_then(|_lock| {
                self.take_locked_watching(reason, meta, opts, None, Some(&running))
            })
        } else {
            // Another path to the workspace (it moved in between): watched
            // by the watcher's own walk, as the checkpoint's walk names
            // directories under another root.
            self.take(reason, meta, opts, None)
        };
        // A walk that stopped short, or did not add the watches, left
        // directories unwatched.
        if (taken.is_err() || running.root() != self.workspace)
            && let Err(e) = running.cover()
        {
            return (taken, Err(e));
        }
        match running.error() {
            Some(e) => (taken, Err(Error(e))),
            None => (taken, Ok(running)),
        }
    }

    fn take_locked_watching(
        &self,
        reason: Reason,
        meta: &Meta,
        opts: &Options,
        dirty: Option<&Dirty>,
        watch: Option<&crate::watch::Running>,
    ) -> Result<crate::Taken> {
        let latest = self.latest()?;
        let now = self.walk_now_watching(opts, dirty, latest.as_ref(), watch)?;
        // A session's first checkpoint is recorded even when nothing
        // changed since the last one (another session's): `aq undo
        // --session` and the recap's command start from it.
        if let Some((c, root)) = &latest
            && root.w == now.w
            && root.g == now.g
            && c.session == meta.session
        {
            return Ok(crate::Taken::Unchanged(c.id.clone()));
        }
        let trees = TreeReader::new(&self.objects);
        let changed = match &latest {
            Some((_, root)) => {
                diff::counts(&diff::diff_trees(&trees, Some(&root.w), Some(&now.w))?)
            }
            None => diff::counts(&diff::diff_trees(&trees, None, Some(&now.w))?),
        };
        let time_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let mut c = Checkpoint {
            id: CheckpointId(String::new()),
            time_ms,
            reason,
            session: meta.session.clone(),
            command: meta.command.clone(),
            parent: latest.as_ref().map(|(c, _)| c.id.clone()),
            changed,
            not_kept: now.not_kept,
            git_kept: now.g.is_some(),
        };
        let record = serde_json::to_vec(&c).map_err(|e| Error(format!("record: {e}")))?;
        let m = self.objects.write(Kind::Blob, &record)?;
        let mut entries = vec![
            TreeEntry {
                name: b"m".to_vec(),
                mode: MODE_FILE,
                oid: m,
            },
            TreeEntry {
                name: b"w".to_vec(),
                mode: MODE_TREE,
                oid: now.w,
            },
        ];
        if let Some(g) = now.g {
            entries.push(TreeEntry {
                name: b"g".to_vec(),
                mode: MODE_TREE,
                oid: g,
            });
        }
        let root = self
            .objects
            .write(Kind::Tree, &tree::encode(&mut entries))?;
        c.id = CheckpointId(root.hex());
        let mut line = serde_json::to_vec(&c).map_err(|e| Error(format!("record: {e}")))?;
        line.push(b'\n');
        self.append(&line)?;
        Ok(crate::Taken::New(c))
    }

    /// One line, one `write` on an `O_APPEND` file: a crash leaves at worst a
    /// line cut short, which the next read skips. A torn last line with no
    /// newline is ended first, so the new line is not glued to it.
    fn append(&self, line: &[u8]) -> Result<()> {
        let path = self.dir.join(LIST);
        let mut f = fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| io_error("open", &path, e))?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut buf = Vec::with_capacity(line.len() + 1);
        if len > 0 {
            use std::io::{Read, Seek, SeekFrom};
            let mut last = [0u8; 1];
            if f.seek(SeekFrom::Start(len - 1)).is_ok()
                && f.read_exact(&mut last).is_ok()
                && last[0] != b'\n'
            {
                buf.push(b'\n');
            }
        }
        buf.extend_from_slice(line);
        f.write_all(&buf)
            .map_err(|e| io_error("append to", &path, e))
    }

    pub(crate) fn journal_path(&self) -> PathBuf {
        self.dir.join(JOURNAL)
    }
}

impl crate::Store {
    pub(crate) fn diff_impl(
        &self,
        from: &CheckpointId,
        to: Option<&CheckpointId>,
        opts: &Options,
    ) -> Result<Vec<crate::Change>> {
        let (_, a) = self.find(from)?;
        let b = match to {
            Some(id) => self.find(id)?.1.w,
            None => {
                let _lock = self.lock()?;
                let latest = self.latest()?;
                self.walk_now(opts, None, latest.as_ref())?.w
            }
        };
        let trees = TreeReader::new(&self.objects);
        diff::diff_trees(&trees, Some(&a.w), Some(&b))?
            .iter()
            .map(|c| diff::to_change(&trees, c))
            .collect()
    }
}
