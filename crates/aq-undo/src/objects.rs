//! The loose-object store: content by hash, in git's format.
//!
//! Why git's format and not our own: an object is `zlib("<kind> <len>\0" +
//! content)` named by the SHA-1 of the uncompressed bytes, so
//! `git --git-dir=<store> cat-file -p <id>` and `ls-tree` read a checkpoint
//! when something needs debugging, and identical content is stored once.
//! Why loose objects only (no packs): a checkpoint writes the few files that
//! changed, and a loose object is written with one create and one rename, so
//! a crash leaves either the whole object or a temporary file that prune
//! sweeps. Compression is zlib level 1: the first checkpoint of a big
//! workspace is bound by compression, and level 1 is several times faster
//! than git's default for a few percent more disk.

use std::cell::RefCell;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha1::{Digest, Sha1};

use crate::{Error, Result, io_error};

/// A git object id (SHA-1).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Oid(pub [u8; 20]);

impl Oid {
    /// The id of the empty tree, which stands for an empty directory.
    pub const EMPTY_TREE: Oid = Oid([
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

    pub fn from_hex(s: &str) -> Option<Oid> {
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

/// zlib of `head` followed by `data`.
fn deflate(head: &[u8], data: &[u8]) -> std::io::Result<Vec<u8>> {
    DEFLATE.with(|z| {
        let mut z = z.borrow_mut();
        z.reset();
        let mut out = Vec::with_capacity(data.len() / 2 + 128);
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
    })
}

impl Objects {
    pub fn new(dir: PathBuf) -> Objects {
        Objects {
            dir,
            made: Default::default(),
            counter: AtomicU64::new(0),
        }
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
    pub fn write_as(&self, oid: Oid, kind: Kind, data: &[u8]) -> Result<()> {
        let path = self.path(&oid);
        if fs::symlink_metadata(&path).is_ok() {
            return Ok(());
        }
        let fan = usize::from(oid.0[0]);
        let bit = 1u64 << (fan % 64);
        if self.made[fan / 64].load(Ordering::Relaxed) & bit == 0 {
            let parent = path.parent().unwrap_or(&self.dir);
            crate::store::create_private_dir(parent)?;
            self.made[fan / 64].fetch_or(bit, Ordering::Relaxed);
        }
        let compressed = deflate(header(kind, data.len()).as_bytes(), data)
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

    /// Reads an object and checks that its content still has its id.
    pub fn read(&self, oid: &Oid) -> Result<(Kind, Vec<u8>)> {
        let path = self.path(oid);
        let raw = fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error(format!("object {} is missing from the store", oid.hex()))
            } else {
                io_error("read object", &path, e)
            }
        })?;
        let mut data = Vec::with_capacity(raw.len() * 2);
        flate2::read::ZlibDecoder::new(&raw[..])
            .read_to_end(&mut data)
            .map_err(|e| Error(format!("object {} is corrupt: {e}", oid.hex())))?;
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

    pub fn read_kind(&self, oid: &Oid, want: Kind) -> Result<Vec<u8>> {
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
    pub fn blob_size(&self, oid: &Oid) -> Result<u64> {
        let path = self.path(oid);
        let f = fs::File::open(&path).map_err(|e| io_error("open object", &path, e))?;
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
