//! Tests on real files in temporary directories; no mocks. Each module
//! covers one area: `roundtrip` (files, modes, links, paths), `git` (refs,
//! stash, index), `faults` (torn records, interrupted undo, attacks, size
//! limit), `watcher`, `prune`, `diff`.

mod diff;
mod faults;
mod git;
mod pack;
mod prune;
mod roundtrip;
#[cfg(target_os = "linux")]
mod watcher;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{CheckpointId, Meta, Options, Reason, Store, Taken};

/// A workspace and a state directory, both temporary.
pub(crate) struct Ws {
    pub dir: tempfile::TempDir,
    pub state: tempfile::TempDir,
    pub store: Store,
}

impl Ws {
    pub fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let store = Store::open(state.path(), dir.path()).unwrap();
        Ws { dir, state, store }
    }

    pub fn root(&self) -> PathBuf {
        fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn p(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn write(&self, rel: &str, data: &str) {
        let p = self.p(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    }

    pub fn take(&self) -> Taken {
        self.take_with(&Options::default(), None)
    }

    pub(crate) fn take_with(&self, opts: &Options, dirty: Option<&crate::Dirty>) -> Taken {
        self.store
            .take(Reason::BeforeCommand, &Meta::default(), opts, dirty)
            .unwrap()
    }

    pub fn id(&self) -> CheckpointId {
        self.take().id().clone()
    }

    /// Undoes everything back to `to`.
    pub fn undo(&self, to: &CheckpointId) -> crate::UndoReport {
        let plan = self.store.plan_undo(to, &[], &Options::default()).unwrap();
        self.store.undo(&plan, &Options::default()).unwrap()
    }

    pub fn sh(&self, script: &str) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(self.root())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn out(&self, script: &str) -> String {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(self.root())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    }
}

/// One path as `ls -l` and `cat` see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    File { mode: u32, data: Vec<u8> },
    Link(PathBuf),
    Dir,
}

/// Every path under `root` (`.git` left out), with type, mode, content and
/// link target.
pub(crate) fn tree_of(root: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    fn go(root: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        for e in fs::read_dir(root.join(rel)).unwrap() {
            let e = e.unwrap();
            if e.file_name() == ".git" {
                continue;
            }
            let r = rel.join(e.file_name());
            let m = fs::symlink_metadata(root.join(&r)).unwrap();
            if m.file_type().is_symlink() {
                out.insert(r.clone(), Node::Link(fs::read_link(root.join(&r)).unwrap()));
            } else if m.is_dir() {
                out.insert(r.clone(), Node::Dir);
                go(root, &r, out);
            } else {
                out.insert(
                    r.clone(),
                    Node::File {
                        mode: m.permissions().mode() & 0o777,
                        data: fs::read(root.join(&r)).unwrap(),
                    },
                );
            }
        }
    }
    go(root, Path::new(""), &mut out);
    out
}

#[track_caller]
pub(crate) fn assert_same(a: &BTreeMap<PathBuf, Node>, b: &BTreeMap<PathBuf, Node>) {
    if a != b {
        let mut msg = String::new();
        for (k, v) in a {
            match b.get(k) {
                None => msg.push_str(&format!("only before: {}\n", k.display())),
                Some(w) if w != v => {
                    msg.push_str(&format!("differs: {} {v:?} vs {w:?}\n", k.display()))
                }
                _ => {}
            }
        }
        for k in b.keys().filter(|k| !a.contains_key(*k)) {
            msg.push_str(&format!("only after: {}\n", k.display()));
        }
        panic!("trees differ:\n{msg}");
    }
}
