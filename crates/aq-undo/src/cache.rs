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

const MAGIC: &[u8] = b"aq-undo stat cache 1\n";

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
    pub fn from_meta(name: &[u8], m: &std::fs::Metadata, oid: Oid) -> FileStat {
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

/// Keys are directory paths relative to the workspace (`""` is the root;
/// `"\0git"` holds the repository's files).
#[derive(Clone, Debug, Default)]
pub(crate) struct StatCache {
    pub dirs: HashMap<Vec<u8>, DirCache>,
}

pub(crate) const GIT_KEY: &[u8] = b"\0git";

impl StatCache {
    pub fn load(path: &Path) -> StatCache {
        std::fs::read(path)
            .ok()
            .and_then(|d| parse(&d))
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> crate::Result<()> {
        let mut out = Vec::with_capacity(1 << 20);
        out.extend_from_slice(MAGIC);
        for (dir, dc) in &self.dirs {
            put_u32(&mut out, dir.len() as u32);
            out.extend_from_slice(dir);
            out.extend_from_slice(&dc.tree.0);
            out.extend_from_slice(&dc.recorded_ns.to_le_bytes());
            put_u32(&mut out, dc.files.len() as u32);
            for f in &dc.files {
                put_u32(&mut out, f.name.len() as u32);
                out.extend_from_slice(&f.name);
                for v in [f.dev, f.ino, f.size, f.mtime_ns as u64, f.ctime_ns as u64] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                put_u32(&mut out, f.mode);
                out.extend_from_slice(&f.oid.0);
            }
        }
        let sum: [u8; 20] = Sha1::digest(&out).into();
        out.extend_from_slice(&sum);
        crate::store::write_atomic(path, &out)
    }
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

fn parse(data: &[u8]) -> Option<StatCache> {
    if data.len() < MAGIC.len() + 20 || !data.starts_with(MAGIC) {
        return None;
    }
    let (body, sum) = data.split_at(data.len() - 20);
    let want: [u8; 20] = Sha1::digest(body).into();
    if want[..] != sum[..] {
        return None;
    }
    let mut r = Reader(&body[MAGIC.len()..]);
    let mut dirs = HashMap::new();
    while !r.0.is_empty() {
        let n = r.u32()? as usize;
        let dir = r.take(n)?.to_vec();
        let tree = r.oid()?;
        let recorded_ns = r.u64()? as i64;
        let count = r.u32()? as usize;
        let mut files = Vec::with_capacity(count);
        for _ in 0..count {
            let n = r.u32()? as usize;
            let name: Box<[u8]> = r.take(n)?.into();
            files.push(FileStat {
                name,
                dev: r.u64()?,
                ino: r.u64()?,
                size: r.u64()?,
                mtime_ns: r.u64()? as i64,
                ctime_ns: r.u64()? as i64,
                mode: r.u32()?,
                oid: r.oid()?,
            });
        }
        dirs.insert(
            dir,
            DirCache {
                tree,
                recorded_ns,
                files,
            },
        );
    }
    Some(StatCache { dirs })
}
