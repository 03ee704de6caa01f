//! Records kept between sessions in aq's state directory (never where the
//! workspace is, which the sandbox may write): JSON, written aside and
//! renamed in, so a reader never sees half of one. A record is a hint its
//! reader checks; one that cannot be read is no record.

use std::io::Read;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A record larger than this is not read (a 200,000-entry tree's walk
/// record is a few MiB).
const MAX_BYTES: u64 = 64 << 20;

/// The record at `path`, if there is one that can be read.
pub(crate) fn load<R: DeserializeOwned>(path: &Path) -> Option<R> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_BYTES {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// Keeps `record` at `path` (its directory made if need be); a failure
/// keeps nothing.
pub(crate) fn save<R: Serialize>(path: &Path, record: &R) {
    let (Some(dir), Ok(json)) = (path.parent(), serde_json::to_vec(record)) else {
        return;
    };
    let aside = dir.join(format!(".{}.{}", std::process::id(), unique_suffix()));
    if std::fs::create_dir_all(dir).is_ok()
        && std::fs::write(&aside, json).is_ok()
        && std::fs::rename(&aside, path).is_err()
    {
        let _ = std::fs::remove_file(&aside);
    }
}

/// A suffix that differs between two writers of one process.
fn unique_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
