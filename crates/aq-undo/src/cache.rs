//! The stat cache: what the last walk saw, so unchanged files are not read.
//!
//! Per directory: the tree id it had and, per file, `(dev, ino, size,
//! mtime_ns, ctime_ns, mode) -> id`. A file whose stat matches is taken to
//! have the same content, as git's index does. Git's racy rule holds too: an
//! entry whose mtime is not older than the walk that recorded it (less a
//! margin for the kernel's coarse clock) could have changed again in the same
//! tick, so it is read again next time. The file ends in a SHA-1 of its
//! content; a cache that fails it (a crash mid-write, a bad disk) is
//! dropped, which costs one slow walk and nothing else.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use sha1::{Digest, Sha1};

use crate::objects::Oid;

/// The kernel stamps files with a clock that may lag the real time by a
/// tick (4 ms at HZ=250); this margin covers it several times over.
const RACY_MARGIN_NS: i64 = 50_000_000;

const MAGIC: &[u8] = b"aq-undo stat cache 2\n";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileStat {
    pub name: Box<[u8]>,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub mode: u32,
    pub oid: Oid,
}

impl FileStat {
    pub(crate) fn from_meta(name: &[u8], m: &std::fs::Metadata, oid: Oid) -> FileStat {
        FileStat {
            name: name.into(),
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
            mode: m.mode(),
            oid,
        }
    }

    fn same_stat(&self, m: &std::fs::Metadata) -> bool {
        self.dev == m.dev()
            && self.ino == m.ino()
            && self.size == m.size()
            && self.mtime_ns == m.mtime() * 1_000_000_000 + m.mtime_nsec()
            && self.ctime_ns == m.ctime() * 1_000_000_000 + m.ctime_nsec()
            && self.mode == m.mode()
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DirCache {
    /// The tree id this directory had (zero when not yet known).
    pub tree: Oid,
    /// When the walk that recorded it started.
    pub recorded_ns: i64,
    /// Sorted by name.
    pub files: Vec<FileStat>,
}

impl DirCache {
    /// The id of `name` if its stat is unchanged and not racy.
    pub fn lookup(&self, name: &[u8], m: &std::fs::Metadata) -> Option<Oid> {
        let i = self.files.binary_search_by(|f| (*f.name).cmp(name)).ok()?;
        let f = &self.files[i];
        (f.same_stat(m) && f.mtime_ns < self.recorded_ns - RACY_MARGIN_NS).then_some(f.oid)
    }
}

/// Where one directory's records sit in the loaded file.
#[derive(Clone, Copy, Debug)]
struct Slot {
    start: usize,
    end: usize,
    count: usize,
    tree: Oid,
    recorded_ns: i64,
}

/// Keys are directory paths relative to the workspace (`""` is the root;
/// `"\0git"` holds the repository's files).
///
/// Loaded lazily: opening indexes the directories, and a directory's files
/// are parsed only when a walk lists it, so a checkpoint of five dirty
/// directories does not pay for twenty thousand records. Saving copies the
/// records of untouched directories as they were read.
#[derive(Debug, Default)]
pub(crate) struct StatCache {
    raw: Vec<u8>,
    index: HashMap<Vec<u8>, Slot>,
    /// Directories listed since loading (they replace their slot).
    dirs: HashMap<Vec<u8>, DirCache>,
    /// New tree ids of directories not listed again.
    trees: HashMap<Vec<u8>, Oid>,
    /// Something differs from the file as loaded: [`StatCache::save`] has
    /// something to write.
    changed: bool,
}

pub(crate) const GIT_KEY: &[u8] = b"\0git";

const FILE_RECORD: usize = 8 * 5 + 4 + 20;

impl StatCache {
    pub fn load(path: &Path) -> StatCache {
        std::fs::read(path).ok().and_then(parse).unwrap_or_default()
    }

    /// The cache of one directory, parsed now if it was only indexed.
    pub fn get(&self, dir: &[u8]) -> Option<std::borrow::Cow<'_, DirCache>> {
        if let Some(d) = self.dirs.get(dir) {
            return Some(std::borrow::Cow::Borrowed(d));
        }
        let slot = self.index.get(dir)?;
        let mut r = Reader(&self.raw[slot.start..slot.end]);
        let mut files = Vec::with_capacity(slot.count);
        for _ in 0..slot.count {
            files.push(read_file(&mut r)?);
        }
        Some(std::borrow::Cow::Owned(DirCache {
            tree: self.tree_of(dir).unwrap_or_default(),
            recorded_ns: slot.recorded_ns,
            files,
        }))
    }

    /// How many directories the cache held when loaded (the size of the
    /// workspace at the last walk; 0 before the first).
    pub fn dirs_loaded(&self) -> usize {
        self.index.len()
    }

    pub fn tree_of(&self, dir: &[u8]) -> Option<Oid> {
        if let Some(d) = self.dirs.get(dir) {
            return Some(d.tree);
        }
        self.trees
            .get(dir)
            .copied()
            .or_else(|| self.index.get(dir).map(|s| s.tree))
    }

    /// Records what a walk saw of `dir`. A directory whose records are
    /// those loaded, byte for byte, with the same tree, and none of them
    /// racy under the loaded time, keeps its loaded slot: every later lookup
    /// answers as it would with the new one, and an unchanged workspace
    /// leaves nothing to save.
    pub fn insert(&mut self, dir: Vec<u8>, dc: DirCache) {
        if self.same_as_loaded(&dir, &dc) {
            return;
        }
        self.changed = true;
        self.trees.remove(&dir);
        self.dirs.insert(dir, dc);
    }

    fn same_as_loaded(&self, dir: &[u8], dc: &DirCache) -> bool {
        if self.dirs.contains_key(dir) || self.trees.contains_key(dir) {
            return false;
        }
        let Some(slot) = self.index.get(dir) else {
            return false;
        };
        if slot.tree != dc.tree
            || slot.count != dc.files.len()
            || dc
                .files
                .iter()
                .any(|f| f.mtime_ns >= slot.recorded_ns - RACY_MARGIN_NS)
        {
            return false;
        }
        let mut records = Vec::with_capacity(slot.end - slot.start);
        put_files(&mut records, &dc.files);
        records[..] == self.raw[slot.start..slot.end]
    }

    /// Records a directory's new tree id (its files unchanged).
    pub(crate) fn set_tree(&mut self, dir: &[u8], tree: Oid) {
        if self.tree_of(dir).is_some_and(|t| t == tree) {
            return;
        }
        if let Some(d) = self.dirs.get_mut(dir) {
            d.tree = tree;
            self.changed = true;
        } else if self.index.contains_key(dir) {
            self.trees.insert(dir.to_vec(), tree);
            self.changed = true;
        }
    }

    pub fn retain(&mut self, keep: impl Fn(&[u8]) -> bool) {
        let before = self.index.len() + self.dirs.len() + self.trees.len();
        self.index.retain(|k, _| keep(k));
        self.dirs.retain(|k, _| keep(k));
        self.trees.retain(|k, _| keep(k));
        self.changed |= before != self.index.len() + self.dirs.len() + self.trees.len();
    }

    /// Whether [`StatCache::save`] would write anything the file does not
    /// hold already.
    pub fn changed(&self) -> bool {
        self.changed
    }

    pub fn save(&self, path: &Path) -> crate::Result<()> {
        let mut out = Vec::with_capacity(self.raw.len() + (1 << 16));
        out.extend_from_slice(MAGIC);
        for (dir, slot) in &self.index {
            if self.dirs.contains_key(dir) {
                continue;
            }
            let tree = self.trees.get(dir).copied().unwrap_or(slot.tree);
            put_header(
                &mut out,
                dir,
                tree,
                slot.recorded_ns,
                slot.count,
                slot.end - slot.start,
            );
            out.extend_from_slice(&self.raw[slot.start..slot.end]);
        }
        for (dir, dc) in &self.dirs {
            let bytes: usize = dc
                .files
                .iter()
                .map(|f| 4 + f.name.len() + FILE_RECORD)
                .sum();
            put_header(
                &mut out,
                dir,
                dc.tree,
                dc.recorded_ns,
                dc.files.len(),
                bytes,
            );
            put_files(&mut out, &dc.files);
        }
        let sum: [u8; 20] = Sha1::digest(&out).into();
        out.extend_from_slice(&sum);
        crate::store::write_atomic(path, &out)
    }
}

/// One directory's file records, as the file holds them.
fn put_files(out: &mut Vec<u8>, files: &[FileStat]) {
    for f in files {
        put_u32(out, f.name.len() as u32);
        out.extend_from_slice(&f.name);
        for v in [f.dev, f.ino, f.size, f.mtime_ns as u64, f.ctime_ns as u64] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        put_u32(out, f.mode);
        out.extend_from_slice(&f.oid.0);
    }
}

fn put_header(
    out: &mut Vec<u8>,
    dir: &[u8],
    tree: Oid,
    recorded_ns: i64,
    count: usize,
    bytes: usize,
) {
    put_u32(out, dir.len() as u32);
    out.extend_from_slice(dir);
    out.extend_from_slice(&tree.0);
    out.extend_from_slice(&recorded_ns.to_le_bytes());
    put_u32(out, count as u32);
    put_u32(out, bytes as u32);
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn oid(&mut self) -> Option<Oid> {
        Some(Oid(self.take(20)?.try_into().ok()?))
    }
}

fn read_file(r: &mut Reader) -> Option<FileStat> {
    let n = r.u32()? as usize;
    let name: Box<[u8]> = r.take(n)?.into();
    Some(FileStat {
        name,
        dev: r.u64()?,
        ino: r.u64()?,
        size: r.u64()?,
        mtime_ns: r.u64()? as i64,
        ctime_ns: r.u64()? as i64,
        mode: r.u32()?,
        oid: r.oid()?,
    })
}

fn parse(data: Vec<u8>) -> Option<StatCache> {
    if data.len() < MAGIC.len() + 20 || !data.starts_with(MAGIC) {
        return None;
    }
    let body_len = data.len() - 20;
    let want: [u8; 20] = Sha1::digest(&data[..body_len]).into();
    if want[..] != data[body_len..] {
        return None;
    }
    let mut index = HashMap::new();
    let mut pos = MAGIC.len();
    while pos < body_len {
        let mut r = Reader(&data[pos..body_len]);
        let n = r.u32()? as usize;
        let dir = r.take(n)?.to_vec();
        let tree = r.oid()?;
        let recorded_ns = r.u64()? as i64;
        let count = r.u32()? as usize;
        let bytes = r.u32()? as usize;
        let start = pos + 4 + n + 20 + 8 + 4 + 4;
        let end = start.checked_add(bytes).filter(|&e| e <= body_len)?;
        index.insert(
            dir,
            Slot {
                start,
                end,
                count,
                tree,
                recorded_ns,
            },
        );
        pos = end;
    }
    Some(StatCache {
        raw: data,
        index,
        dirs: HashMap::new(),
        trees: HashMap::new(),
        changed: false,
    })
}
