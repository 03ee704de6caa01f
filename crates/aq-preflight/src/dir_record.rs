//! What a walk of the tree saw of each directory it listed, so that a later
//! walk of the same tree lists only the directories whose entries changed.
//!
//! Creating, removing or renaming an entry updates its directory's change
//! time (`ctime`), which no unprivileged process can set back (`utimes`
//! sets it to now). So a directory whose device, inode, `ctime` and `mtime`
//! are what they were has the same entries, and what the first walk found
//! in it (a `.git` entry, the signs of a bare repository, subdirectories)
//! still holds. Two cases are not trusted and are listed again:
//!
//! - a directory changed within [`RACY_NS`] before the first walk began:
//!   the file system's clock is coarse (a tick, or a second), so a change
//!   made just after the walk read the directory could carry the very time
//!   it read (git's "racy" index entries are the same case);
//! - a file system that is not known to keep `ctime` the kernel's way (a
//!   FUSE or network mount may not), or a directory on another device than
//!   the tree's root (a mount inside the tree). On those the record is left
//!   empty, and the next walk lists everything.
//!
//! Only the listing of directories is shortened: what a walk reads inside
//! files (git's files in each git directory, the secret search's first
//! bytes of a file) it reads on every walk. Two walks keep records: git
//! discovery's ([`crate::git_surface::rediscover`]) and `aq run`'s secret
//! search.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How long before a walk began a directory's last change must be for the
/// record to be trusted: longer than any clock tick or timestamp
/// granularity of the file systems [`keeps_ctime`] accepts.
pub const RACY_NS: i128 = 2_000_000_000;

/// Which inode a directory was, and when its entries last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    ctime_ns: i128,
    mtime_ns: i128,
}

impl Stamp {
    /// The directory at `path` (not followed if it is a link: a link has no
    /// stamp).
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        Stamp::of_kind(path, true)
    }

    /// The regular file at `path` (not followed if it is a link): a write
    /// moves its `mtime` and `ctime`, a replacement its inode.
    pub(crate) fn of_file(path: &Path) -> Option<Stamp> {
        Stamp::of_kind(path, false)
    }

    fn of_kind(path: &Path, dir: bool) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok()?;
        if (dir && !m.is_dir()) || (!dir && !m.is_file()) {
            return None;
        }
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        })
    }
}

/// What one listing found that git discovery's walk acts on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Listing {
    /// Entries listed (they count toward the walk's cap).
    pub entries: usize,
    /// A `.git` entry is there.
    pub dot_git: bool,
    /// Entries named `HEAD`, `objects` and `refs` are there (a bare
    /// repository, or something git may take for one).
    pub bare: bool,
    /// The subdirectories the walk goes into, in the order it pushed them.
    pub children: Vec<PathBuf>,
}

/// A directory as listed, with its stamp from just before the listing.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Seen<L> {
    stamp: Stamp,
    listing: L,
}

/// The directories of one walk (see the module's doc), with what the walk
/// took from each listing (`L`: git discovery's [`Listing`], or another
/// walk's). It can be kept between runs (serde): a record read back is
/// only as good as where it was kept, so keep it where the tree's own
/// programs cannot write.
#[derive(Debug, Serialize, Deserialize)]
pub struct DirRecord<L = Listing> {
    /// What the walk was, as its caller says: a record of another walk, or
    /// of the same walk with other rules (what a listing holds, which
    /// directories it skips, which names it looks for), is not used.
    key: String,
    /// The tree walked.
    root: PathBuf,
    dirs: HashMap<PathBuf, Seen<L>>,
    /// False when the walk stopped at its cap, or the tree's file system is
    /// not trusted: the next walk then lists everything.
    usable: bool,
    /// How many directories the walk that made this record listed (the
    /// others were taken from the record before it).
    #[serde(skip)]
    listed: usize,
}

impl<L> Default for DirRecord<L> {
    fn default() -> Self {
        DirRecord {
            key: String::new(),
            root: PathBuf::new(),
            dirs: HashMap::new(),
            usable: false,
            listed: 0,
        }
    }
}

impl<L> DirRecord<L> {
    /// How many directories the walk that made this record listed.
    pub fn listed(&self) -> usize {
        self.listed
    }

    /// It holds no directory.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// It is a usable record of `root` by the rules `key` names.
    pub(crate) fn is_for(&self, root: &Path, key: &str) -> bool {
        self.usable && self.key == key && self.root == root
    }

    /// A next walk may use it (the walk did not stop at its cap, and the
    /// file system keeps `ctime`).
    pub(crate) fn is_usable(&self) -> bool {
        self.usable
    }
}

/// Builds a [`DirRecord`] during a walk, reading an older one.
pub struct Recorder<'a, L = Listing> {
    old: Option<&'a DirRecord<L>>,
    new: DirRecord<L>,
    /// Directories changed after this (ns since the epoch) are not trusted.
    trusted_before: i128,
    root_dev: Option<u64>,
}

impl<'a, L: Clone> Recorder<'a, L> {
    /// For a walk of `root` starting now, by the rules `key` names; `old`
    /// is the record of an earlier walk, used if it is of the same tree by
    /// the same rules. `racy_ns` is [`RACY_NS`] but in tests.
    pub fn new(
        root: &Path,
        key: &str,
        old: Option<&'a DirRecord<L>>,
        racy_ns: i128,
    ) -> Recorder<'a, L> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        let root_dev = keeps_ctime(root)
            .then(|| Stamp::of(root).map(|s| s.dev))
            .flatten();
        Recorder {
            old: old.filter(|o| o.is_for(root, key)),
            new: DirRecord {
                key: key.to_string(),
                root: root.to_path_buf(),
                usable: root_dev.is_some(),
                ..DirRecord::default()
            },
            trusted_before: now - racy_ns,
            root_dev,
        }
    }

    /// The stamp to record `dir` under, taken before it is listed (a change
    /// after it then shows as a different stamp next time).
    pub fn stamp(&self, dir: &Path) -> Option<Stamp> {
        self.root_dev?;
        Stamp::of(dir)
    }

    /// What the older record says of `dir`, if `stamp` shows it unchanged
    /// since and it was trusted then.
    pub fn unchanged(&mut self, dir: &Path, stamp: Option<Stamp>) -> Option<L> {
        let stamp = stamp?;
        let seen = self.old?.dirs.get(dir)?;
        if seen.stamp != stamp {
            return None;
        }
        self.new.dirs.insert(dir.to_path_buf(), seen.clone());
        Some(seen.listing.clone())
    }

    /// `dir` was listed; kept for the next walk when it can be trusted.
    pub fn listed(&mut self, dir: &Path, stamp: Option<Stamp>, listing: &L) {
        self.new.listed += 1;
        let Some(stamp) = stamp else { return };
        if Some(stamp.dev) != self.root_dev || stamp.ctime_ns >= self.trusted_before {
            return;
        }
        self.new.dirs.insert(
            dir.to_path_buf(),
            Seen {
                stamp,
                listing: listing.clone(),
            },
        );
    }

    /// Whether what was read of a file with `stamp` may be kept for the
    /// next walk (the same rule as a directory's).
    pub fn trusts(&self, stamp: &Stamp) -> bool {
        Some(stamp.dev) == self.root_dev && stamp.ctime_ns < self.trusted_before
    }

    /// The walk stopped at its cap: the record is not to be used.
    pub fn truncated(&mut self) {
        self.new.usable = false;
    }

    /// The record, for the next walk.
    pub fn finish(self) -> DirRecord<L> {
        let mut new = self.new;
        if !new.usable {
            new.dirs.clear();
        }
        new
    }
}

/// Whether the file system holding `root` keeps directories' `ctime` the
/// kernel's way (local file systems and tmpfs). Elsewhere nothing is
/// recorded.
#[cfg(target_os = "linux")]
pub fn keeps_ctime(root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const KNOWN: &[i64] = &[
        0xEF53,      // ext2, ext3, ext4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0xF2F5_2010, // f2fs
        0x2FC1_2FC1, // zfs
        0xCA45_1A4E, // bcachefs
        0x794C_7630, // overlayfs
    ];
    let Ok(path) = std::ffi::CString::new(root.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills the zeroed struct we own from a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(path.as_ptr(), &mut st) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)]
    KNOWN.contains(&(st.f_type as i64))
}

/// Elsewhere every walk lists everything.
#[cfg(not(target_os = "linux"))]
pub fn keeps_ctime(_root: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::{RACY_NS, keeps_ctime};
    use crate::git_surface::{GitSurface, GitWalkRecord, rediscover_with};

    /// In tests a directory is trusted once it is 50 ms old, not 2 s.
    const TEST_RACY: i128 = 50_000_000;

    fn walk(root: &Path, earlier: Option<&GitWalkRecord>) -> (GitSurface, GitWalkRecord) {
        rediscover_with(root, None, earlier, TEST_RACY)
    }

    fn files(s: &GitSurface, root: &Path) -> Vec<String> {
        crate::git_surface::tests::kinds(s, root)
            .into_iter()
            .map(|(path, _)| path)
            .collect()
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A tree of 30 directories, a nested repository and a bare one, old
    /// enough to be trusted.
    fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert!(
            keeps_ctime(&root),
            "the test's temporary directory is on a file system whose ctime is not trusted"
        );
        write(&root, ".git/config", "[core]\n");
        for i in 0..10 {
            for j in 0..2 {
                write(&root, &format!("src/d{i}/e{j}/f.rs"), "fn f() {}\n");
            }
        }
        write(&root, "vendor/n/.git/config", "[core]\n");
        write(&root, "remote.git/HEAD", "ref: refs/heads/main\n");
        std::fs::create_dir_all(root.join("remote.git/objects")).unwrap();
        std::fs::create_dir_all(root.join("remote.git/refs")).unwrap();
        std::thread::sleep(Duration::from_nanos(2 * TEST_RACY as u64));
        (dir, root)
    }

    #[test]
    fn an_unchanged_tree_is_found_again_without_listing_it() {
        let (_d, root) = tree();
        let (first, record) = walk(&root, None);
        assert!(record.listed() > 30, "{}", record.listed());
        let (again, record2) = walk(&root, Some(&record));
        assert_eq!(record2.listed(), 0, "nothing changed, nothing listed");
        assert_eq!(files(&again, &root), files(&first, &root));
        assert_eq!(
            files(&first, &root),
            [".git/config", "vendor/n/.git/config"]
        );
        assert!(
            first
                .git_dirs
                .iter()
                .any(|g| g.path.ends_with("remote.git"))
        );
        assert!(
            again
                .git_dirs
                .iter()
                .any(|g| g.path.ends_with("remote.git"))
        );
        // The record of a walk that took the older record is as good.
        let (_, record3) = walk(&root, Some(&record2));
        assert_eq!(record3.listed(), 0);
    }

    #[test]
    fn a_repository_made_after_the_walk_is_found() {
        let (_d, root) = tree();
        let (_, record) = walk(&root, None);
        // In an existing directory deep down, and one moved in whole.
        write(&root, "src/d3/e1/new/.git/config", "[core]\n");
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "moved/.git/config", "[core]\n");
        std::fs::rename(outside.path().join("moved"), root.join("src/d7/moved")).unwrap();
        // A hook added to a repository found before: its git directory is
        // read again on every walk.
        write(&root, "vendor/n/.git/hooks/post-checkout", "#!/bin/sh\n");
        let (s, record2) = walk(&root, Some(&record));
        let got = files(&s, &root);
        for want in [
            "src/d3/e1/new/.git/config",
            "src/d7/moved/.git/config",
            "vendor/n/.git/hooks/post-checkout",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} not in {got:?}");
        }
        // Only the changed directories and the new ones were listed.
        assert!((2..=6).contains(&record2.listed()), "{}", record2.listed());
        assert_eq!(files(&s, &root), files(&walk(&root, None).0, &root));
    }

    #[test]
    fn a_bare_repository_made_in_a_listed_directory_is_found() {
        let (_d, root) = tree();
        let (_, record) = walk(&root, None);
        write(&root, "src/d5/HEAD", "ref: refs/heads/main\n");
        write(&root, "src/d5/config", "[core]\n\tbare = true\n");
        std::fs::create_dir_all(root.join("src/d5/objects")).unwrap();
        std::fs::create_dir_all(root.join("src/d5/refs")).unwrap();
        let (s, _) = walk(&root, Some(&record));
        assert!(files(&s, &root).contains(&"src/d5/config".to_string()));
    }

    #[test]
    fn setting_a_directory_times_back_does_not_hide_a_change() {
        let (_d, root) = tree();
        let (_, record) = walk(&root, None);
        let dir = root.join("src/d2");
        let before = std::fs::metadata(&dir).unwrap();
        write(&root, "src/d2/x/.git/config", "[core]\n");
        // mtime (and atime) set back to what they were: ctime moves anyway.
        let f = std::fs::File::open(&dir).unwrap();
        f.set_times(
            std::fs::FileTimes::new()
                .set_modified(before.modified().unwrap())
                .set_accessed(before.accessed().unwrap()),
        )
        .unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().modified().unwrap(),
            before.modified().unwrap()
        );
        let (s, _) = walk(&root, Some(&record));
        assert!(files(&s, &root).contains(&"src/d2/x/.git/config".to_string()));
    }

    #[test]
    fn a_directory_replaced_or_turned_into_a_link_is_listed_again() {
        let (_d, root) = tree();
        let (_, record) = walk(&root, None);
        // Replaced by another directory (another inode) holding a repository.
        std::fs::rename(root.join("src/d4"), root.join("old-d4")).unwrap();
        write(&root, "src/d4/e0/.git/config", "[core]\n");
        // Turned into a link: not followed, as in a full walk.
        let elsewhere = tempfile::tempdir().unwrap();
        write(elsewhere.path(), "r/.git/config", "[core]\n");
        std::fs::remove_dir_all(root.join("src/d6")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.join("src/d6")).unwrap();
        let (s, _) = walk(&root, Some(&record));
        let got = files(&s, &root);
        assert!(
            got.contains(&"src/d4/e0/.git/config".to_string()),
            "{got:?}"
        );
        assert_eq!(got, files(&walk(&root, None).0, &root));
    }

    #[test]
    fn a_directory_changed_just_before_the_walk_is_listed_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root, "a/b/c/f", "x");
        // With the real window: everything here changed a moment ago.
        let (_, record) = rediscover_with(&root, None, None, RACY_NS);
        let (_, again) = rediscover_with(&root, None, Some(&record), RACY_NS);
        assert_eq!(again.listed(), record.listed());
        assert_eq!(again.listed(), 4);
        // Made in the same instant as the walk read its directory: found.
        write(&root, "a/b/n/.git/config", "[core]\n");
        let (s, _) = rediscover_with(&root, None, Some(&record), RACY_NS);
        assert!(files(&s, &root).contains(&"a/b/n/.git/config".to_string()));
    }

    #[test]
    fn a_record_kept_as_json_is_used_for_its_own_tree_only() {
        let (_d, root) = tree();
        let (_, record) = walk(&root, None);
        let json = serde_json::to_vec(&record).unwrap();
        let back: GitWalkRecord = serde_json::from_slice(&json).unwrap();
        assert_eq!(walk(&root, Some(&back)).1.listed(), 0);
        // Another tree (a copy at another path) or other rules: all listed.
        let mut elsewhere: GitWalkRecord = serde_json::from_slice(&json).unwrap();
        elsewhere.dirs.root = root.join("src");
        assert!(walk(&root, Some(&elsewhere)).1.listed() > 30);
        let mut older: GitWalkRecord = serde_json::from_slice(&json).unwrap();
        older.dirs.key = "git-dirs/0".into();
        assert!(walk(&root, Some(&older)).1.listed() > 30);
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// The index is read again only when it changed: a gitlink into a
    /// directory the walk skips (`node_modules`) is followed from the
    /// record, and one added since is followed too.
    #[test]
    fn an_index_is_read_again_only_when_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "."]);
        for name in ["x", "y"] {
            git(&root, &["init", "-q", &format!("node_modules/{name}")]);
        }
        let link = |name: &str| {
            git(
                &root,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{},node_modules/{name}", "1".repeat(40)),
                ],
            )
        };
        link("x");
        std::thread::sleep(Duration::from_nanos(2 * TEST_RACY as u64));
        let has = |s: &GitSurface, name: &str| {
            files(s, &root).contains(&format!("node_modules/{name}/.git/config"))
        };
        let (first, record) = walk(&root, None);
        assert!(
            has(&first, "x") && !has(&first, "y"),
            "{:?}",
            files(&first, &root)
        );
        assert_eq!(record.indexes_read, 1);
        let (again, record2) = walk(&root, Some(&record));
        assert_eq!(record2.indexes_read, 0, "the index did not change");
        assert_eq!(files(&again, &root), files(&first, &root));
        link("y");
        let (after, record3) = walk(&root, Some(&record2));
        assert_eq!(record3.indexes_read, 1);
        assert!(
            has(&after, "x") && has(&after, "y"),
            "{:?}",
            files(&after, &root)
        );
    }

    #[test]
    fn a_walk_stopped_at_its_cap_leaves_nothing_to_reuse() {
        let (_d, root) = tree();
        let mut record = walk(&root, None).1;
        record.dirs.usable = false;
        let (_, again) = walk(&root, Some(&record));
        assert!(again.listed() > 30);
    }
}
