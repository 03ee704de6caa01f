//! A directory's stamp, for the records that spare listing a directory
//! unchanged since the last session (the tool index's `PATH` directories,
//! the shims' presence check): adding, removing or renaming an entry
//! changes a directory's modification and change time.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// A directory as it is now: what adding, removing or renaming an entry
/// changes (its modification and change time), and which directory it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct DirStamp {
    dev: u64,
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

/// How long after its last change a directory's record is not kept: a
/// change within one timestamp tick of the listing would not show.
const SETTLE: Duration = Duration::from_secs(2);

impl DirStamp {
    pub(crate) fn of(m: &std::fs::Metadata) -> DirStamp {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        DirStamp {
            dev: m.dev(),
            ino: m.ino(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        }
    }

    /// Its entries last changed at least [`SETTLE`] before `now` (a change
    /// of entries sets both times; the change time alone also moves with
    /// its owner or mode).
    fn settled(&self, now: SystemTime) -> bool {
        let now = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        now - self.mtime_ns >= SETTLE.as_nanos() as i128
    }

    /// Whether a listing of `dir` with this stamp, made `now`, may be kept:
    /// its entries settled, on a file system known to keep these times the
    /// kernel's way (not FUSE or NFS, which may change unseen).
    pub(crate) fn keepable(&self, dir: &Path, now: SystemTime) -> bool {
        self.settled(now) && aq_preflight::keeps_ctime(dir)
    }
}

/// A digest of the names a record was made for: another list (another
/// build) makes it no record.
pub(crate) fn names_digest(names: &[&str]) -> String {
    let mut h = Sha256::new();
    for n in names {
        h.update(n.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
