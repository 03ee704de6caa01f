//! Packfiles: many objects in one file, in git's pack v2 format (no deltas).
//!
//! A take that writes many new objects (the first checkpoint of a big
//! workspace) writes them into one pack instead of one file each: creating
//! 20,000 files costs seconds of system time, appending to one costs
//! nothing. The pack is `PACK`, version 2, the object count, each object as
//! its type-and-size header and zlib of its content, and the SHA-1 of all
//! that; its `.idx` (v2) holds the sorted ids, each entry's CRC-32 and
//! offset, the pack's checksum and its own. `git cat-file`, `verify-pack`
//! and `fsck` read both.
//!
//! Crash safety: the pack and its index are written under temporary names,
//! fsynced (one pack is the base of every later checkpoint: losing it to a
//! power cut would tear them all, and two fsyncs per big take are cheap
//! next to the take), renamed into place (pack first: a pack without its
//! index is invisible, and prune sweeps it), and only then is the
//! checkpoint's line appended. A pack or index that is cut short or
//! damaged fails its checksums when it is opened, its objects are missing,
//! and the checkpoints that need them are reported torn.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha1::{Digest, Sha1};

use crate::objects::{Kind, Oid};
use crate::{Error, Result, io_error};

/// Whether a finished pack and its index are fsynced (see the module doc).
const SYNC: bool = true;

const IDX_MAGIC: [u8; 4] = [0xff, b't', b'O', b'c'];
const FANOUT_END: usize = 8 + 256 * 4;

fn type_code(kind: Kind) -> u8 {
    match kind {
        Kind::Tree => 2,
        Kind::Blob => 3,
    }
}

/// Appends a packed object's type-and-size header to `out`.
pub(crate) fn entry_header(kind: Kind, len: u64, out: &mut Vec<u8>) {
    let mut b = (type_code(kind) << 4) | (len & 15) as u8;
    let mut rest = len >> 4;
    while rest != 0 {
        out.push(b | 0x80);
        b = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(b);
}

/// A pack being written: objects are appended as they come.
pub(crate) struct PackWriter {
    dir: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    offset: u64,
    /// Offset and CRC-32 of each object written.
    entries: HashMap<Oid, (u64, u32)>,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn tmp_name(dir: &Path, what: &str) -> PathBuf {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".tmp-{what}-{}-{n}", std::process::id()))
}

impl PackWriter {
    /// Starts a pack in `dir` (`objects/pack`).
    pub fn create(dir: &Path) -> Result<PackWriter> {
        crate::store::create_private_dir(dir)?;
        let tmp = tmp_name(dir, "pack");
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&tmp)
            .map_err(|e| io_error("create pack", &tmp, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // The count is filled in when the pack is finished.
        out.write_all(b"PACK\0\0\0\x02\0\0\0\0")
            .map_err(|e| io_error("write pack", &tmp, e))?;
        Ok(PackWriter {
            dir: dir.to_path_buf(),
            tmp,
            out,
            offset: 12,
            entries: HashMap::new(),
        })
    }

    pub fn contains(&self, oid: &Oid) -> bool {
        self.entries.contains_key(oid)
    }

    /// Appends one object: `entry` is its header and zlib data.
    pub fn add(&mut self, oid: Oid, entry: &[u8], crc: u32) -> Result<()> {
        if self.entries.contains_key(&oid) {
            return Ok(());
        }
        self.out
            .write_all(entry)
            .map_err(|e| io_error("write pack", &self.tmp, e))?;
        self.entries.insert(oid, (self.offset, crc));
        self.offset += entry.len() as u64;
        Ok(())
    }

    /// Reads back an object written to this unfinished pack.
    pub fn read(&mut self, oid: &Oid) -> Option<Result<(Kind, Vec<u8>)>> {
        let &(off, _) = self.entries.get(oid)?;
        if let Err(e) = self.out.flush() {
            return Some(Err(io_error("write pack", &self.tmp, e)));
        }
        Some(read_entry(self.out.get_ref(), off, self.offset, oid))
    }

    /// Removes the unfinished pack.
    pub(crate) fn abort(self) {
        let _ = fs::remove_file(&self.tmp);
    }

    /// Finishes the pack and its index and puts them in place; returns the
    /// pack's name (`pack-<checksum>`).
    pub fn finish(self) -> Result<String> {
        let PackWriter {
            dir,
            tmp,
            out,
            offset,
            entries,
        } = self;
        let fail = |e: std::io::Error| {
            let _ = fs::remove_file(&tmp);
            io_error("write pack", &tmp, e)
        };
        let file = out.into_inner().map_err(|e| fail(e.into_error()))?;
        let count = u32::try_from(entries.len())
            .map_err(|_| fail(std::io::Error::other("too many objects for one pack")))?;
        file.write_all_at(&count.to_be_bytes(), 8).map_err(fail)?;
        // The checksum covers the header, so the file is read back.
        let mut h = Sha1::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut pos = 0u64;
        while pos < offset {
            let want = buf.len().min((offset - pos) as usize);
            let got = file.read_at(&mut buf[..want], pos).map_err(fail)?;
            if got == 0 {
                return Err(fail(std::io::ErrorKind::UnexpectedEof.into()));
            }
            h.update(&buf[..got]);
            pos += got as u64;
        }
        let sum: [u8; 20] = h.finalize().into();
        file.write_all_at(&sum, offset).map_err(fail)?;
        if SYNC {
            file.sync_all().map_err(fail)?;
        }
        drop(file);
        let idx = build_idx(&entries, &sum);
        let name = format!("pack-{}", Oid(sum).hex());
        let idx_tmp = tmp_name(&dir, "idx");
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&idx_tmp)
            .and_then(|mut f| {
                f.write_all(&idx)?;
                if SYNC {
                    f.sync_all()?;
                }
                Ok(())
            });
        if let Err(e) = written {
            let _ = fs::remove_file(&idx_tmp);
            let _ = fs::remove_file(&tmp);
            return Err(io_error("write pack index", &idx_tmp, e));
        }
        let pack_path = dir.join(format!("{name}.pack"));
        let idx_path = dir.join(format!("{name}.idx"));
        let placed = fs::rename(&tmp, &pack_path)
            .map_err(|e| io_error("rename pack into place", &pack_path, e))
            .and_then(|()| {
                fs::rename(&idx_tmp, &idx_path)
                    .map_err(|e| io_error("rename pack index into place", &idx_path, e))
            });
        if let Err(e) = placed {
            let _ = fs::remove_file(&idx_tmp);
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        if SYNC && let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(name)
    }
}

/// The `.idx` (v2) of a pack with `entries` and checksum `sum`.
fn build_idx(entries: &HashMap<Oid, (u64, u32)>, sum: &[u8; 20]) -> Vec<u8> {
    let mut v: Vec<(&Oid, &(u64, u32))> = entries.iter().collect();
    v.sort_unstable_by_key(|e| e.0);
    let mut out = Vec::with_capacity(FANOUT_END + v.len() * 28 + 40);
    out.extend_from_slice(&IDX_MAGIC);
    out.extend_from_slice(&2u32.to_be_bytes());
    let mut fan = [0u32; 256];
    for (oid, _) in &v {
        fan[usize::from(oid.0[0])] += 1;
    }
    let mut total = 0;
    for n in fan {
        total += n;
        out.extend_from_slice(&total.to_be_bytes());
    }
    for (oid, _) in &v {
        out.extend_from_slice(&oid.0);
    }
    for (_, (_, crc)) in &v {
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for (_, (off, _)) in &v {
        let small = if *off < 0x8000_0000 {
            *off as u32
        } else {
            large.push(*off);
            0x8000_0000 | (large.len() as u32 - 1)
        };
        out.extend_from_slice(&small.to_be_bytes());
    }
    for off in large {
        out.extend_from_slice(&off.to_be_bytes());
    }
    out.extend_from_slice(sum);
    let idx_sum: [u8; 20] = Sha1::digest(&out).into();
    out.extend_from_slice(&idx_sum);
    out
}

/// A finished pack, its index checked and held in memory.
pub(crate) struct Pack {
    pub name: String,
    file: File,
    /// Where the objects end (the trailing checksum starts).
    end: u64,
    idx: Vec<u8>,
    n: usize,
    /// Every object's offset, sorted: an object's stored size runs to the next.
    sorted: Vec<u64>,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Pack {
    pub(crate) fn idx_path(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{name}.idx"))
    }

    pub(crate) fn pack_path(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{name}.pack"))
    }

    /// Opens `<name>.idx` and `<name>.pack` in `dir`, checking both
    /// checksums in the index and that the pack ends with the one it names.
    /// An error says whether the pack is damaged (as opposed to unreadable
    /// just now).
    pub fn open(dir: &Path, name: &str) -> std::result::Result<Pack, (bool, Error)> {
        let idx_path = Pack::idx_path(dir, name);
        let pack_path = Pack::pack_path(dir, name);
        fn io<'a>(
            op: &'static str,
            path: &'a Path,
        ) -> impl FnOnce(std::io::Error) -> (bool, Error) + 'a {
            move |e| {
                let damaged = matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::UnexpectedEof
                );
                (damaged, io_error(op, path, e))
            }
        }
        let idx = fs::read(&idx_path).map_err(io("read pack index", &idx_path))?;
        let bad = |why: &str| (true, Error(format!("pack {name} is damaged: {why}")));
        if idx.len() < FANOUT_END + 40 || idx[..4] != IDX_MAGIC || be32(&idx, 4) != 2 {
            return Err(bad("its index has no v2 header"));
        }
        let body = idx.len() - 20;
        if Sha1::digest(&idx[..body])[..] != idx[body..] {
            return Err(bad("its index fails its checksum"));
        }
        let mut prev = 0;
        for i in 0..256 {
            let n = be32(&idx, 8 + i * 4);
            if n < prev {
                return Err(bad("its index's fan-out is not sorted"));
            }
            prev = n;
        }
        let n = prev as usize;
        let offs = FANOUT_END + n * 24;
        let large_at = offs + n * 4;
        if idx.len() < large_at + 40 || !(idx.len() - large_at - 40).is_multiple_of(8) {
            return Err(bad("its index has the wrong length"));
        }
        let large_n = (idx.len() - large_at - 40) / 8;
        let file = File::open(&pack_path).map_err(io("open pack", &pack_path))?;
        let len = file.metadata().map_err(io("open pack", &pack_path))?.len();
        if len < 32 {
            return Err(bad("the pack is cut short"));
        }
        let mut head = [0u8; 12];
        let mut tail = [0u8; 20];
        file.read_exact_at(&mut head, 0)
            .and_then(|()| file.read_exact_at(&mut tail, len - 20))
            .map_err(io("read pack", &pack_path))?;
        if &head[..8] != b"PACK\0\0\0\x02" || be32(&head, 8) as usize != n {
            return Err(bad("the pack's header does not match its index"));
        }
        if tail[..] != idx[body - 20..body] {
            return Err(bad(
                "the pack's checksum does not match its index (cut short?)",
            ));
        }
        let end = len - 20;
        let mut pack = Pack {
            name: name.to_string(),
            file,
            end,
            idx,
            n,
            sorted: Vec::new(),
        };
        let mut sorted = Vec::with_capacity(n);
        for i in 0..n {
            let raw = be32(&pack.idx, offs + i * 4);
            if raw & 0x8000_0000 != 0 && (raw & 0x7fff_ffff) as usize >= large_n {
                return Err(bad("its index names a large offset it lacks"));
            }
            let off = pack.offset(i);
            if off < 12 || off >= end {
                return Err(bad("its index has an offset outside the pack"));
            }
            sorted.push(off);
        }
        sorted.sort_unstable();
        pack.sorted = sorted;
        Ok(pack)
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn oid(&self, i: usize) -> Oid {
        let at = FANOUT_END + i * 20;
        let mut o = [0u8; 20];
        o.copy_from_slice(&self.idx[at..at + 20]);
        Oid(o)
    }

    /// The index of `oid` in this pack: a binary search within its fan-out.
    pub fn find(&self, oid: &Oid) -> Option<usize> {
        let first = usize::from(oid.0[0]);
        let lo = if first == 0 {
            0
        } else {
            be32(&self.idx, 8 + (first - 1) * 4) as usize
        };
        let hi = be32(&self.idx, 8 + first * 4) as usize;
        let (mut lo, mut hi) = (lo, hi.min(self.n));
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = FANOUT_END + mid * 20;
            match self.idx[at..at + 20].cmp(&oid.0[..]) {
                std::cmp::Ordering::Equal => return Some(mid),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    fn offset(&self, i: usize) -> u64 {
        let offs = FANOUT_END + self.n * 24;
        let raw = be32(&self.idx, offs + i * 4);
        if raw & 0x8000_0000 == 0 {
            return u64::from(raw);
        }
        let at = offs + self.n * 4 + (raw & 0x7fff_ffff) as usize * 8;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.idx[at..at + 8]);
        u64::from_be_bytes(b)
    }

    /// The bytes object `i` takes in the pack.
    pub(crate) fn stored_size(&self, i: usize) -> u64 {
        let off = self.offset(i);
        let next = match self.sorted.binary_search(&off) {
            Ok(k) => self.sorted.get(k + 1).copied().unwrap_or(self.end),
            Err(_) => self.end,
        };
        next.saturating_sub(off)
    }

    pub fn read(&self, i: usize, oid: &Oid) -> Result<(Kind, Vec<u8>)> {
        read_entry(&self.file, self.offset(i), self.end, oid)
    }

    pub(crate) fn kind_and_size(&self, i: usize, oid: &Oid) -> Result<(Kind, u64)> {
        read_header(&self.file, self.offset(i), self.end, oid).map(|(k, n, _)| (k, n))
    }

    /// Whether the pack was written at zlib level 0, as a take writes it
    /// (its first objects' first deflate blocks are stored ones; at level 1
    /// only incompressible content is): prune compresses it.
    pub(crate) fn is_stored(&self) -> bool {
        !self.sorted.is_empty()
            && self.sorted.iter().take(8).all(|&off| {
                let Ok((_, _, at)) = read_header(&self.file, off, self.end, &Oid::default()) else {
                    return false;
                };
                let mut b = [0u8; 3];
                self.file.read_exact_at(&mut b, at).is_ok() && (b[2] >> 1) & 3 == 0
            })
    }

    /// The pack's and index's sizes on disk.
    pub(crate) fn disk_size(&self) -> u64 {
        self.end + 20 + self.idx.len() as u64
    }
}

/// Reads of a file from an offset, up to an end.
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf.len().min(self.end.saturating_sub(self.pos) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// An entry's kind, length, and where its zlib data starts.
fn read_header(file: &File, off: u64, end: u64, oid: &Oid) -> Result<(Kind, u64, u64)> {
    let corrupt = |why: String| Error(format!("object {} is corrupt: {why}", oid.hex()));
    let mut head = [0u8; 16];
    let avail = head.len().min(end.saturating_sub(off) as usize);
    let got = file
        .read_at(&mut head[..avail], off)
        .map_err(|e| corrupt(e.to_string()))?;
    let mut i = 0;
    let mut b = *head
        .get(i)
        .filter(|_| got > 0)
        .ok_or_else(|| corrupt("the pack is cut short".into()))?;
    let kind = match (b >> 4) & 7 {
        2 => Kind::Tree,
        3 => Kind::Blob,
        t => return Err(corrupt(format!("packed as type {t}, not a blob or tree"))),
    };
    let mut len = u64::from(b & 15);
    let mut shift = 4;
    while b & 0x80 != 0 {
        i += 1;
        if i >= got || shift > 60 {
            return Err(corrupt("bad packed header".into()));
        }
        b = head[i];
        len |= u64::from(b & 0x7f) << shift;
        shift += 7;
    }
    Ok((kind, len, off + i as u64 + 1))
}

fn read_entry(file: &File, off: u64, end: u64, oid: &Oid) -> Result<(Kind, Vec<u8>)> {
    let (kind, len, data_at) = read_header(file, off, end, oid)?;
    // A damaged header may claim any length: reserve a bounded amount.
    let mut data = Vec::with_capacity(len.min(1 << 26) as usize);
    flate2::read::ZlibDecoder::new(At {
        file,
        pos: data_at,
        end,
    })
    .take(len + 1)
    .read_to_end(&mut data)
    .map_err(|e| Error(format!("object {} is corrupt: {e}", oid.hex())))?;
    if data.len() as u64 != len {
        return Err(Error(format!("object {} has a wrong length", oid.hex())));
    }
    Ok((kind, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{hash, stored_zlib};

    fn entry(kind: Kind, data: &[u8]) -> (Oid, Vec<u8>, u32) {
        let mut e = Vec::new();
        entry_header(kind, data.len() as u64, &mut e);
        stored_zlib(data, &mut e);
        let mut crc = flate2::Crc::new();
        crc.update(&e);
        (hash(kind, data), e, crc.sum())
    }

    #[test]
    fn large_offsets_go_to_the_eight_byte_table() {
        let a = Oid([1; 20]);
        let b = Oid([2; 20]);
        let mut entries = HashMap::new();
        entries.insert(a, (12u64, 7u32));
        entries.insert(b, (0x1_2345_6789u64, 9u32));
        let idx = build_idx(&entries, &[0; 20]);
        assert_eq!(idx.len(), FANOUT_END + 2 * 28 + 8 + 40);
        let pack = Pack {
            name: "t".into(),
            file: File::open("/dev/null").unwrap(),
            end: u64::MAX,
            n: 2,
            sorted: vec![12, 0x1_2345_6789],
            idx,
        };
        assert_eq!(pack.find(&a), Some(0));
        assert_eq!(pack.find(&b), Some(1));
        assert_eq!(pack.find(&Oid([3; 20])), None);
        assert_eq!(pack.offset(0), 12);
        assert_eq!(pack.offset(1), 0x1_2345_6789);
    }

    #[test]
    fn a_damaged_byte_inside_a_pack_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PackWriter::create(dir.path()).unwrap();
        let data = b"some content that is long enough to damage\n".repeat(20);
        let (oid, e, crc) = entry(Kind::Blob, &data);
        w.add(oid, &e, crc).unwrap();
        let (small, e2, crc2) = entry(Kind::Tree, b"");
        w.add(small, &e2, crc2).unwrap();
        let name = w.finish().unwrap();
        let pack = Pack::open(dir.path(), &name).map_err(|(_, e)| e).unwrap();
        let i = pack.find(&oid).unwrap();
        assert_eq!(pack.read(i, &oid).unwrap().1, data);
        assert_eq!(
            pack.kind_and_size(i, &oid).unwrap(),
            (Kind::Blob, data.len() as u64)
        );
        // Flip a byte in the middle of the blob's data.
        let path = Pack::pack_path(dir.path(), &name);
        let mut bytes = fs::read(&path).unwrap();
        let mid = pack.offset(i) as usize + 300;
        bytes[mid] ^= 0x55;
        fs::remove_file(&path).unwrap();
        fs::write(&path, &bytes).unwrap();
        let pack = Pack::open(dir.path(), &name).map_err(|(_, e)| e).unwrap();
        let got = pack.read(i, &oid);
        assert!(
            got.is_err() || hash(Kind::Blob, &got.unwrap().1) != oid,
            "a damaged object must not read as itself"
        );
        // Its header damaged: an error too.
        bytes[pack.offset(i) as usize] = 0x70; // type 7 (a delta)
        fs::remove_file(&path).unwrap();
        fs::write(&path, &bytes).unwrap();
        let pack = Pack::open(dir.path(), &name).map_err(|(_, e)| e).unwrap();
        assert!(pack.read(i, &oid).is_err());
    }
}
