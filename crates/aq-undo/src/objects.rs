//! The object store: content by hash, in git's format.
//!
//! Why git's format and not our own: an object is `zlib("<kind> <len>\0" +
//! content)` named by the SHA-1 of the uncompressed bytes, so
//! `git --git-dir=<store> cat-file -p <id>` and `ls-tree` read a checkpoint
//! when something needs debugging, and identical content is stored once.
//! Most takes write the few files that changed as loose objects (one
//! create and one rename each, so a crash leaves either the whole object or
//! a temporary file that prune sweeps), at zlib level 1. A take that writes
//! many (the first checkpoint of a big workspace) runs in batch mode: past
//! [`PACK_THRESHOLD`] new objects the rest go into one pack (see
//! `pack.rs`), since creating 20,000 files costs seconds of system time.
//! Reads look in the packs (their indexes held in memory, rescanned when an
//! object is not found), this take's unfinished pack, then loose files.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use sha1::{Digest, Sha1};

use crate::pack::{Pack, PackWriter};
use crate::{Error, Result, io_error};

/// A git object id (SHA-1).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Oid(pub [u8; 20]);

impl Oid {
    /// The id of the empty tree, which stands for an empty directory.
    pub(crate) const EMPTY_TREE: Oid = Oid([
        0x4b, 0x82, 0x5d, 0xc6, 0x42, 0xcb, 0x6e, 0xb9, 0xa0, 0x60, 0xe5, 0x4b, 0xf8, 0xd6, 0x92,
        0x88, 0xfb, 0xee, 0x49, 0x04,
    ]);

    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(40);
        for b in self.0 {
            s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        }
        s
    }

    pub(crate) fn from_hex(s: &str) -> Option<Oid> {
        let s = s.as_bytes();
        if s.len() != 40 {
            return None;
        }
        let mut out = [0u8; 20];
        for (i, pair) in s.chunks(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16)?;
            let lo = (pair[1] as char).to_digit(16)?;
            out[i] = (hi * 16 + lo) as u8;
        }
        Some(Oid(out))
    }
}

impl std::fmt::Debug for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// The two kinds of object a checkpoint uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Blob,
    Tree,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Blob => "blob",
            Kind::Tree => "tree",
        }
    }
}

/// The `objects/` directory of a store.
pub(crate) struct Objects {
    dir: PathBuf,
    /// Fan-out directories known to exist (256 bits), so that writing an
    /// object costs no `mkdir` after the first in its directory.
    made: [AtomicU64; 4],
    counter: AtomicU64,
    /// The packs in `objects/pack`, read when first needed.
    packs: RwLock<Packs>,
    /// A take in batch mode (see [`Objects::begin_batch`]).
    batch: Mutex<Option<Batch>>,
}

/// How many new objects a batch writes loose before it starts a pack.
pub(crate) const PACK_THRESHOLD: usize = 64;

#[derive(Default)]
struct Packs {
    scanned: bool,
    loaded: Vec<Arc<Pack>>,
    /// Names tried (good or damaged), so a damaged one is not reread.
    tried: HashSet<String>,
    /// Packs being rewritten by prune: their objects do not count as stored.
    excluded: HashSet<String>,
    /// Packs that failed their checks: objects they held are missing.
    damaged: Vec<String>,
}

#[derive(Default)]
struct Batch {
    /// The pack's zlib level (0: stored; see [`Objects::begin_batch`]).
    level: u32,
    new: usize,
    writer: Option<PackWriter>,
    /// Fan-out directories that existed when the batch began (256 bits).
    present: [u64; 4],
}

/// Ends a batch: [`BatchGuard::finish`] puts its pack in place, dropping
/// the guard without finishing removes it.
pub(crate) struct BatchGuard<'a>(&'a Objects);

impl BatchGuard<'_> {
    pub fn finish(self) -> Result<()> {
        let objects = self.0;
        std::mem::forget(self);
        let writer = objects.lock_batch().take().and_then(|b| b.writer);
        if let Some(w) = writer {
            let name = w.finish()?;
            objects.load_pack(&name)?;
        }
        Ok(())
    }
}

impl Drop for BatchGuard<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.0.lock_batch().take().and_then(|b| b.writer) {
            w.abort();
        }
    }
}

/// The id `data` has as an object of `kind`.
pub(crate) fn hash(kind: Kind, data: &[u8]) -> Oid {
    let mut h = Sha1::new();
    h.update(header(kind, data.len()).as_bytes());
    h.update(data);
    Oid(h.finalize().into())
}

fn header(kind: Kind, len: usize) -> String {
    format!("{} {}\0", kind.name(), len)
}

thread_local! {
    /// One compressor per thread, reset for each object: miniz_oxide's
    /// state is some 300 KB to allocate and zero, more than compressing a
    /// small file costs.
    static DEFLATE: RefCell<flate2::Compress> =
        RefCell::new(flate2::Compress::new(flate2::Compression::new(1), true));
}

/// zlib of `head` followed by `data`, at level 1.
fn deflate(head: &[u8], data: &[u8]) -> std::io::Result<Vec<u8>> {
    DEFLATE.with(|z| deflate_with(&mut z.borrow_mut(), head, data, data.len() / 2 + 128))
}

/// Objects up to this size (header included) are stored, not compressed:
/// a loose object takes a 4 KiB block whatever its size, and making the
/// compressor (300 KB to allocate and zero, once per thread) cost more than
/// the rest of a small checkpoint (a tree and a record).
const STORED_UP_TO: usize = 4096;

/// A loose object's bytes: zlib of `head` followed by `data`, stored when
/// small, else at level 1.
fn loose_zlib(head: &[u8], data: &[u8]) -> std::io::Result<Vec<u8>> {
    if head.len() + data.len() > STORED_UP_TO {
        return deflate(head, data);
    }
    let whole = [head, data].concat();
    let mut out = Vec::with_capacity(whole.len() + 16);
    stored_zlib(&whole, &mut out);
    Ok(out)
}

/// Appends zlib of `data` at level 0 to `out`: stored blocks, written
/// here rather than by zlib, whose per-object reset (zeroing its hash
/// tables) costs more than copying a small file.
pub(crate) fn stored_zlib(data: &[u8], out: &mut Vec<u8>) {
    out.reserve(data.len() + data.len() / 65535 * 5 + 11);
    // CMF (deflate, 32 KB window) and FLG (fastest, check bits), as zlib
    // writes at level 0.
    out.extend_from_slice(&[0x78, 0x01]);
    if data.is_empty() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    let mut blocks = data.chunks(65535).peekable();
    while let Some(block) = blocks.next() {
        out.push(u8::from(blocks.peek().is_none()));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
}

/// The data of a zlib stream made only of stored blocks (as
/// [`stored_zlib`] writes, and zlib at level 0), copied out without an
/// inflater: making one allocates and clears tens of KiB, more than a small
/// object's whole read. `None` for anything else (a compressed block, a
/// preset dictionary, a bad length or check), which the caller inflates.
pub(crate) fn unstored_zlib(z: &[u8]) -> Option<Vec<u8>> {
    let (&[cmf, flg], mut rest) = z.split_first_chunk::<2>()?;
    if cmf & 0x0f != 8 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 || flg & 0x20 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(z.len());
    loop {
        let (&[head, l0, l1, n0, n1], after) = rest.split_first_chunk::<5>()?;
        // BTYPE 00 (stored); the header byte's other bits are padding.
        if head & 0b110 != 0 {
            return None;
        }
        let len = u16::from_le_bytes([l0, l1]);
        if u16::from_le_bytes([n0, n1]) != !len {
            return None;
        }
        let (block, after) = after.split_at_checked(usize::from(len))?;
        out.extend_from_slice(block);
        rest = after;
        if head & 1 == 1 {
            break;
        }
    }
    (rest.len() == 4 && rest == adler32(&out).to_be_bytes()).then_some(out)
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that cannot overflow `b` before the modulo.
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

fn deflate_with(
    z: &mut flate2::Compress,
    head: &[u8],
    data: &[u8],
    cap: usize,
) -> std::io::Result<Vec<u8>> {
    {
        z.reset();
        let mut out = Vec::with_capacity(cap);
        for (mut input, last) in [(head, false), (data, true)] {
            loop {
                if out.capacity() - out.len() < 256 {
                    out.reserve(out.capacity().max(4096));
                }
                let before = z.total_in();
                let flush = if last {
                    flate2::FlushCompress::Finish
                } else {
                    flate2::FlushCompress::None
                };
                let status = z
                    .compress_vec(input, &mut out, flush)
                    .map_err(std::io::Error::other)?;
                input = &input[(z.total_in() - before) as usize..];
                if last && status == flate2::Status::StreamEnd || !last && input.is_empty() {
                    break;
                }
            }
        }
        Ok(out)
    }
}

impl Objects {
    pub fn new(dir: PathBuf) -> Objects {
        Objects {
            dir,
            made: Default::default(),
            counter: AtomicU64::new(0),
            packs: RwLock::default(),
            batch: Mutex::default(),
        }
    }

    pub(crate) fn pack_dir(&self) -> PathBuf {
        self.dir.join("pack")
    }

    fn lock_batch(&self) -> MutexGuard<'_, Option<Batch>> {
        self.batch.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts batch mode for one take: after [`PACK_THRESHOLD`] new loose
    /// objects, the rest go into one pack, in place when the guard is
    /// finished (which must come before anything names them).
    ///
    /// A take's pack is zlib level 0 (stored blocks): compression is most
    /// of a first checkpoint's CPU (level 1: ~1.5 s of CPU for 100 MB,
    /// level 0: ~0.6 s, on this 2-core machine, where other work leaves the
    /// second walk worker little to overlap), so it is left to prune,
    /// which rewrites packs at `level` 1, off the command's path.
    pub fn begin_batch(&self, level: u32) -> BatchGuard<'_> {
        self.refresh();
        let mut present = [0u64; 4];
        match fs::read_dir(&self.dir) {
            Ok(rd) => {
                for e in rd.flatten() {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name.len() == 2
                        && let Ok(fan) = u8::from_str_radix(&name, 16)
                    {
                        present[usize::from(fan) / 64] |= 1 << (fan % 64);
                    }
                }
            }
            // Unknown: every directory may hold objects.
            Err(_) => present = [u64::MAX; 4],
        }
        *self.lock_batch() = Some(Batch {
            level,
            present,
            ..Batch::default()
        });
        BatchGuard(self)
    }

    /// Reads any pack index not read yet; true if one was added.
    pub fn refresh(&self) -> bool {
        let dir = self.pack_dir();
        let mut names = Vec::new();
        if let Ok(rd) = fs::read_dir(&dir) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().to_string();
                if let Some(stem) = n.strip_suffix(".idx")
                    && stem.starts_with("pack-")
                {
                    names.push(stem.to_string());
                }
            }
        }
        let mut added = false;
        let mut p = self.packs.write().unwrap_or_else(|e| e.into_inner());
        p.scanned = true;
        // A pack another process's prune deleted no longer counts as
        // storing its objects (its open file would still read them).
        p.loaded.retain(|q| names.contains(&q.name));
        p.tried.retain(|n| names.contains(n));
        for name in names {
            if p.tried.contains(&name) {
                continue;
            }
            match Pack::open(&dir, &name) {
                Ok(pack) => {
                    p.tried.insert(name);
                    p.loaded.push(Arc::new(pack));
                    added = true;
                }
                // Unreadable just now (out of file handles, say): tried again later.
                Err((false, _)) => {}
                Err((true, _)) => {
                    p.tried.insert(name.clone());
                    p.damaged.push(name);
                }
            }
        }
        added
    }

    /// Whether a pack in the store failed its checks (its objects are
    /// missing, so nothing that names them may be trusted).
    pub(crate) fn damaged_pack(&self) -> bool {
        !self
            .packs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .damaged
            .is_empty()
    }

    /// Sets damaged packs aside (their index renamed `.idx.damaged`), once
    /// a take has stored again what it needed: later takes then trust
    /// their stat cache again. Prune deletes them.
    pub(crate) fn set_aside_damaged(&self) {
        let dir = self.pack_dir();
        let mut p = self.packs.write().unwrap_or_else(|e| e.into_inner());
        for name in std::mem::take(&mut p.damaged) {
            let idx = Pack::idx_path(&dir, &name);
            let _ = fs::rename(&idx, idx.with_extension("idx.damaged"));
        }
    }

    fn load_pack(&self, name: &str) -> Result<()> {
        let pack = Pack::open(&self.pack_dir(), name).map_err(|(_, e)| e)?;
        let mut p = self.packs.write().unwrap_or_else(|e| e.into_inner());
        p.tried.insert(name.to_string());
        p.loaded.retain(|q| q.name != name);
        p.loaded.push(Arc::new(pack));
        Ok(())
    }

    /// The packs read so far.
    pub fn packs(&self) -> Vec<Arc<Pack>> {
        if !self.packs.read().unwrap_or_else(|e| e.into_inner()).scanned {
            self.refresh();
        }
        self.packs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .loaded
            .clone()
    }

    /// Prune rewrites `name`: its objects stop counting as stored.
    pub(crate) fn exclude_pack(&self, name: &str) {
        let mut p = self.packs.write().unwrap_or_else(|e| e.into_inner());
        p.excluded.insert(name.to_string());
    }

    /// Deletes a pack (index first: a pack without one is not read).
    pub(crate) fn remove_pack(&self, name: &str) -> Result<()> {
        let dir = self.pack_dir();
        let idx = Pack::idx_path(&dir, name);
        fs::remove_file(&idx).map_err(|e| io_error("remove", &idx, e))?;
        let _ = fs::remove_file(Pack::pack_path(&dir, name));
        let mut p = self.packs.write().unwrap_or_else(|e| e.into_inner());
        p.loaded.retain(|q| q.name != name);
        p.excluded.remove(name);
        Ok(())
    }

    /// The pack (and index in it) holding `oid`, if one does.
    fn find_packed(&self, oid: &Oid, with_excluded: bool) -> Option<(Arc<Pack>, usize)> {
        {
            let p = self.packs.read().unwrap_or_else(|e| e.into_inner());
            if p.scanned {
                return p
                    .loaded
                    .iter()
                    .filter(|q| with_excluded || !p.excluded.contains(&q.name))
                    .find_map(|q| q.find(oid).map(|i| (q.clone(), i)));
            }
        }
        self.refresh();
        self.find_packed(oid, with_excluded)
    }

    /// Where `oid` is: a pack, this batch's pack, or (after a rescan of the
    /// pack directory) a pack another process wrote.
    fn locate(&self, oid: &Oid) -> Option<(Arc<Pack>, usize)> {
        self.find_packed(oid, true)
    }

    /// The bytes `oid` takes on disk (0 when it is not stored).
    pub(crate) fn stored_size(&self, oid: &Oid) -> u64 {
        if let Some((p, i)) = self.locate(oid) {
            return p.stored_size(i);
        }
        fs::symlink_metadata(self.path(oid))
            .map(|m| m.len())
            .unwrap_or(0)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, oid: &Oid) -> PathBuf {
        let hex = oid.hex();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// Stores `data` (if it is not there yet) and returns its id.
    pub fn write(&self, kind: Kind, data: &[u8]) -> Result<Oid> {
        let oid = hash(kind, data);
        self.write_as(oid, kind, data)?;
        Ok(oid)
    }

    /// Stores `data` whose id the caller has computed.
    pub(crate) fn write_as(&self, oid: Oid, kind: Kind, data: &[u8]) -> Result<()> {
        if self.find_packed(&oid, false).is_some() {
            return Ok(());
        }
        let fan = usize::from(oid.0[0]);
        let bit = 1u64 << (fan % 64);
        let made = self.made[fan / 64].load(Ordering::Relaxed) & bit != 0;
        // In a batch, a fan-out directory that did not exist when it began
        // (and that this store did not make) holds no loose object: no stat.
        let may_be_loose = match self.lock_batch().as_ref() {
            Some(b) if b.writer.as_ref().is_some_and(|w| w.contains(&oid)) => return Ok(()),
            Some(b) => made || b.present[fan / 64] & bit != 0,
            None => true,
        };
        let path = self.path(&oid);
        if may_be_loose && fs::symlink_metadata(&path).is_ok() {
            return Ok(());
        }
        let packed = match self.lock_batch().as_mut() {
            Some(b) => {
                b.new += 1;
                b.new > PACK_THRESHOLD
            }
            None => false,
        };
        if packed {
            return self.write_packed(oid, kind, data);
        }
        if self.made[fan / 64].load(Ordering::Relaxed) & bit == 0 {
            let parent = path.parent().unwrap_or(&self.dir);
            crate::store::create_private_dir(parent)?;
            self.made[fan / 64].fetch_or(bit, Ordering::Relaxed);
        }
        let compressed = loose_zlib(header(kind, data.len()).as_bytes(), data)
            .map_err(|e| io_error("compress object", &path, e))?;
        // A temporary name in the same directory, then a rename: a reader
        // (or a crash) never sees half an object under its real name.
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(
            ".tmp-{}-{}-{:?}",
            std::process::id(),
            n,
            std::thread::current().id()
        ));
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&compressed));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io_error("write object", &tmp, e));
        }
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            io_error("rename object into place", &path, e)
        })
    }

    /// Appends an object to this batch's pack (started if need be); the
    /// compression runs outside the lock, so the walk's workers overlap.
    fn write_packed(&self, oid: Oid, kind: Kind, data: &[u8]) -> Result<()> {
        let mut entry = Vec::with_capacity(16);
        crate::pack::entry_header(kind, data.len() as u64, &mut entry);
        if self.lock_batch().as_ref().is_some_and(|b| b.level == 0) {
            stored_zlib(data, &mut entry);
        } else {
            let z = deflate(&[], data).map_err(|e| io_error("compress object", &self.dir, e))?;
            entry.extend_from_slice(&z);
        }
        let mut crc = flate2::Crc::new();
        crc.update(&entry);
        let mut b = self.lock_batch();
        let Some(b) = b.as_mut() else {
            return Err(Error("internal: a packed write outside a batch".into()));
        };
        if b.writer.is_none() {
            b.writer = Some(PackWriter::create(&self.pack_dir())?);
        }
        match b.writer.as_mut() {
            Some(w) => w.add(oid, &entry, crc.sum()),
            None => Ok(()),
        }
    }

    /// A packed object's (or this batch's) kind and content, unchecked.
    fn read_packed(&self, oid: &Oid) -> Option<Result<(Kind, Vec<u8>)>> {
        if let Some((p, i)) = self.locate(oid) {
            return Some(p.read(i, oid));
        }
        self.lock_batch()
            .as_mut()
            .and_then(|b| b.writer.as_mut())
            .and_then(|w| w.read(oid))
    }

    /// Reads an object and checks that its content still has its id.
    pub fn read(&self, oid: &Oid) -> Result<(Kind, Vec<u8>)> {
        if let Some(r) = self.read_packed(oid) {
            let (kind, data) = r?;
            if hash(kind, &data) != *oid {
                return Err(Error(format!(
                    "object {} is corrupt: its content does not match its id",
                    oid.hex()
                )));
            }
            return Ok((kind, data));
        }
        let path = self.path(oid);
        let raw = match fs::read(&path) {
            Ok(raw) => raw,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.refresh() && self.locate(oid).is_some() {
                    return self.read(oid);
                }
                return Err(Error(format!(
                    "object {} is missing from the store",
                    oid.hex()
                )));
            }
            Err(e) => return Err(io_error("read object", &path, e)),
        };
        let mut data = match unstored_zlib(&raw) {
            Some(data) => data,
            None => {
                let mut data = Vec::with_capacity(raw.len() * 2);
                flate2::read::ZlibDecoder::new(&raw[..])
                    .read_to_end(&mut data)
                    .map_err(|e| Error(format!("object {} is corrupt: {e}", oid.hex())))?;
                data
            }
        };
        let mut h = Sha1::new();
        h.update(&data);
        if Oid(h.finalize().into()) != *oid {
            return Err(Error(format!(
                "object {} is corrupt: its content does not match its id",
                oid.hex()
            )));
        }
        let nul = data
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| Error(format!("object {} has no header", oid.hex())))?;
        let head = std::str::from_utf8(&data[..nul]).unwrap_or("");
        let (kind, len) = head
            .split_once(' ')
            .ok_or_else(|| Error(format!("object {} has a bad header", oid.hex())))?;
        let kind = match kind {
            "blob" => Kind::Blob,
            "tree" => Kind::Tree,
            other => {
                return Err(Error(format!(
                    "object {} is a {other}, not a blob or tree",
                    oid.hex()
                )));
            }
        };
        if len.parse::<usize>().ok() != Some(data.len() - nul - 1) {
            return Err(Error(format!("object {} has a wrong length", oid.hex())));
        }
        data.drain(..=nul);
        Ok((kind, data))
    }

    pub(crate) fn read_kind(&self, oid: &Oid, want: Kind) -> Result<Vec<u8>> {
        let (kind, data) = self.read(oid)?;
        if kind != want {
            return Err(Error(format!(
                "object {} is a {}, not a {}",
                oid.hex(),
                kind.name(),
                want.name()
            )));
        }
        Ok(data)
    }

    /// A blob's length, from its header alone (no full inflate).
    pub(crate) fn blob_size(&self, oid: &Oid) -> Result<u64> {
        if let Some((p, i)) = self.locate(oid) {
            return match p.kind_and_size(i, oid)? {
                (Kind::Blob, n) => Ok(n),
                _ => Err(Error(format!("object {} is not a blob", oid.hex()))),
            };
        }
        if let Some(r) = self.read_packed(oid) {
            return match r? {
                (Kind::Blob, d) => Ok(d.len() as u64),
                _ => Err(Error(format!("object {} is not a blob", oid.hex()))),
            };
        }
        let path = self.path(oid);
        let f = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && self.refresh() => {
                return self.blob_size(oid);
            }
            Err(e) => return Err(io_error("open object", &path, e)),
        };
        let mut head = [0u8; 32];
        let mut z = flate2::read::ZlibDecoder::new(f);
        let mut got = 0;
        while got < head.len() {
            match z.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => return Err(Error(format!("object {} is corrupt: {e}", oid.hex()))),
            }
            if head[..got].contains(&0) {
                break;
            }
        }
        let nul = head[..got]
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| Error(format!("object {} has no header", oid.hex())))?;
        std::str::from_utf8(&head[..nul])
            .ok()
            .and_then(|h| h.strip_prefix("blob "))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| Error(format!("object {} is not a blob", oid.hex())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_gits() {
        // `printf hello | git hash-object --stdin`
        assert_eq!(
            hash(Kind::Blob, b"hello").hex(),
            "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"
        );
        assert_eq!(hash(Kind::Tree, b""), Oid::EMPTY_TREE);
        let o = Oid::EMPTY_TREE;
        assert_eq!(Oid::from_hex(&o.hex()), Some(o));
    }

    #[test]
    fn stored_zlib_inflates() {
        for n in [0usize, 1, 5551, 5553, 65535, 65536, 200_000] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7 + i / 300) as u8).collect();
            let mut z = Vec::new();
            stored_zlib(&data, &mut z);
            let mut back = Vec::new();
            flate2::read::ZlibDecoder::new(&z[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, data, "{n}");
            assert_eq!(unstored_zlib(&z).as_deref(), Some(&data[..]), "{n}");
            let mut c = flate2::Compress::new(flate2::Compression::new(0), true);
            let mut want = Vec::with_capacity(n + 1000);
            c.compress_vec(&data, &mut want, flate2::FlushCompress::Finish)
                .unwrap();
            assert_eq!(z[z.len() - 4..], want[want.len() - 4..], "adler32 of {n}");
            // zlib's own level 0 reads the same way.
            assert_eq!(unstored_zlib(&want).as_deref(), Some(&data[..]), "{n}");
        }
    }

    #[test]
    fn only_whole_stored_streams_are_read_without_an_inflater() {
        let data = b"tree 12\0some entries".to_vec();
        let mut z = Vec::new();
        stored_zlib(&data, &mut z);
        assert_eq!(unstored_zlib(&z), Some(data.clone()));
        // Compressed: the inflater's.
        let mut c = flate2::Compress::new(flate2::Compression::new(6), true);
        let mut deflated = Vec::with_capacity(200);
        c.compress_vec(&data, &mut deflated, flate2::FlushCompress::Finish)
            .unwrap();
        assert_eq!(unstored_zlib(&deflated), None);
        // A wrong check, a wrong length, a cut stream, bytes after it.
        let mut bad = z.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(unstored_zlib(&bad), None);
        let mut bad = z.clone();
        bad[3] ^= 1;
        assert_eq!(unstored_zlib(&bad), None);
        assert_eq!(unstored_zlib(&z[..z.len() - 1]), None);
        assert_eq!(unstored_zlib(&[&z[..], b"x"].concat()), None);
        assert_eq!(unstored_zlib(b""), None);
    }

    #[test]
    fn small_objects_are_stored_and_large_ones_compressed_both_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().join("objects"));
        let small = b"a small tree or record".repeat(10);
        let large = b"a large file, compressible ".repeat(400);
        for (data, stored) in [(&small[..], true), (&large[..], false)] {
            let oid = objects.write(Kind::Blob, data).unwrap();
            assert_eq!(objects.read(&oid).unwrap().1, data);
            let raw = std::fs::read(objects.path(&oid)).unwrap();
            // Stored: the bytes appear as they are, after the header.
            let seen = raw.windows(data.len()).any(|w| w == data);
            assert_eq!(seen, stored, "{} bytes", data.len());
            assert_eq!(raw.len() < data.len(), !stored);
            // git reads it too: zlib of "blob N\0" and the bytes.
            let mut back = Vec::new();
            flate2::read::ZlibDecoder::new(&raw[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(
                back,
                [header(Kind::Blob, data.len()).as_bytes(), data].concat()
            );
        }
    }

    #[test]
    fn corrupt_object_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().join("objects"));
        let a = objects.write(Kind::Blob, b"one").unwrap();
        let b = objects.write(Kind::Blob, b"two").unwrap();
        assert_eq!(objects.read(&a).unwrap().1, b"one");
        assert_eq!(objects.blob_size(&a).unwrap(), 3);
        // Put b's bytes under a's name.
        fs::remove_file(objects.path(&a)).unwrap();
        fs::copy(objects.path(&b), objects.path(&a)).unwrap();
        let err = objects.read(&a).unwrap_err().0;
        assert!(err.contains("corrupt"), "{err}");
    }
}
