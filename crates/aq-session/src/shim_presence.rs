//! Which of the built-in shims' programs this machine has
//! ([`aq_shim::programs_present`]), sparing the `stat`s of names a `PATH`
//! directory has no entry for: which of the names each directory holds is
//! kept between sessions in aq's state directory (`shim-dirs.json`), and
//! trusted while the directory is unchanged (same device, inode,
//! modification and change time: adding, removing or renaming an entry
//! changes them). A name the directory holds is `stat`ed each time, as
//! before, since its mode or where a link leads can change without the
//! directory changing: a program made executable since is shimmed.
//!
//! Eighty names in eight directories, most of them absent, were 600
//! `stat`s at every `shims-only` start.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::dir_stamps::DirStamp;

/// What the last session saw of each `PATH` directory.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PathEntriesRecord {
    /// Digest of the names asked about: other names, no record.
    names: String,
    dirs: Vec<DirEntries>,
}

#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct DirEntries {
    path: PathBuf,
    stamp: DirStamp,
    /// The names asked about that it has an entry for, of any type.
    entries: Vec<String>,
}

/// Which of `names` exist as programs on `path` (an executable regular
/// file, through links, in a directory of `path` other than `shim_dir`),
/// in the order of `names`, with `record` sparing the listing of unchanged
/// directories. Returns the record for the next session.
pub(crate) fn present<'a>(
    names: &[&'a str],
    path: &OsStr,
    shim_dir: &Path,
    record: Option<&PathEntriesRecord>,
) -> (Vec<&'a str>, PathEntriesRecord) {
    let digest = crate::dir_stamps::names_digest(names);
    let known = record
        .filter(|r| r.names == digest)
        .map(|r| &r.dirs[..])
        .unwrap_or_default();
    let asked: HashSet<&str> = names.iter().copied().collect();
    let now = SystemTime::now();
    let mut kept = PathEntriesRecord {
        names: digest,
        dirs: Vec::new(),
    };
    // Each directory once, with the names it has an entry for (`None`: it
    // cannot be listed, so each name is looked up in it).
    let mut dirs: Vec<(&Path, Option<HashSet<String>>)> = Vec::new();
    for (d, meta) in aq_shim::program_dirs(path, shim_dir) {
        let stamp = DirStamp::of(&meta);
        if let Some(r) = known.iter().find(|r| r.path == d && r.stamp == stamp) {
            kept.dirs.push(DirEntries {
                path: d.to_path_buf(),
                stamp,
                entries: r.entries.clone(),
            });
            dirs.push((d, Some(r.entries.iter().cloned().collect())));
            continue;
        }
        let listed: Option<HashSet<String>> = std::fs::read_dir(d).ok().map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| asked.contains(n.as_str()))
                .collect()
        });
        if let Some(entries) = &listed
            && stamp.keepable(d, now)
        {
            let mut entries: Vec<String> = entries.iter().cloned().collect();
            entries.sort();
            kept.dirs.push(DirEntries {
                path: d.to_path_buf(),
                stamp,
                entries,
            });
        }
        dirs.push((d, listed));
    }
    let found = names
        .iter()
        .copied()
        .filter(|name| {
            dirs.iter().any(|(d, entries)| {
                entries.as_ref().is_none_or(|e| e.contains(*name))
                    && aq_shim::is_program(&d.join(name))
            })
        })
        .collect();
    (found, kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn exe(p: &Path) {
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `dir`'s modification time an hour back, as a directory nobody
    /// changed lately has.
    fn settle(dir: &Path) {
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }

    struct Host {
        _t: tempfile::TempDir,
        a: PathBuf,
        b: PathBuf,
        path: std::ffi::OsString,
    }

    fn host() -> Host {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        let b = t.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        exe(&a.join("git"));
        std::fs::write(b.join("curl"), "not executable").unwrap();
        exe(&b.join("ls"));
        settle(&a);
        settle(&b);
        let path = std::env::join_paths([&a, &b, &a]).unwrap();
        Host { _t: t, a, b, path }
    }

    const NAMES: &[&str] = &["ls", "git", "curl", "zsh"];

    #[test]
    fn the_same_programs_as_looking_each_up_with_or_without_a_record() {
        let h = host();
        let none = Path::new("/nonexistent-shims");
        let want = aq_shim::programs_present(NAMES, &h.path, none);
        assert_eq!(want, ["ls", "git"]);
        let (first, record) = present(NAMES, &h.path, none, None);
        assert_eq!(first, want);
        assert_eq!(record.dirs.len(), 2);
        let (again, record2) = present(NAMES, &h.path, none, Some(&record));
        assert_eq!(again, want);
        assert_eq!(record2, record);
        // The record is what spares the lookups: one that says `a` has no
        // `git` entry, while `a` is unchanged, leaves git out.
        let mut partial = record;
        partial.dirs[0].entries.retain(|n| n != "git");
        let (spared, _) = present(NAMES, &h.path, none, Some(&partial));
        assert_eq!(spared, ["ls"]);
    }

    #[test]
    fn a_program_made_executable_or_installed_since_is_found() {
        let h = host();
        let none = Path::new("/nonexistent-shims");
        let (_, record) = present(NAMES, &h.path, none, None);
        // chmod changes the file, not its directory: still found, since a
        // name with an entry is looked at each time.
        std::fs::set_permissions(h.b.join("curl"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (got, _) = present(NAMES, &h.path, none, Some(&record));
        assert_eq!(got, ["ls", "git", "curl"]);
        // A new program changes its directory: listed again.
        exe(&h.a.join("zsh"));
        let (got, kept) = present(NAMES, &h.path, none, Some(&record));
        assert_eq!(got, ["ls", "git", "curl", "zsh"]);
        // Changed just now: not kept (a change within the same tick
        // would not show).
        assert!(kept.dirs.iter().all(|d| d.path != h.a), "{kept:?}");
    }

    #[test]
    fn the_shim_directory_and_other_names_are_no_record() {
        let h = host();
        let (_, mut record) = present(NAMES, &h.path, &h.b, None);
        assert!(record.dirs.iter().all(|d| d.path != h.b));
        // Asked about other names (another build): looked up afresh.
        record.dirs[0].entries.clear();
        let (got, _) = present(&["git", "ls"], &h.path, &h.b, Some(&record));
        assert_eq!(got, ["git"]);
    }
}
