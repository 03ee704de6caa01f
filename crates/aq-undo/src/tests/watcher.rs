//! The watcher sees writes and new directories; a checkpoint of only the
//! dirty directories equals a full walk.

use std::fs;
use std::path::PathBuf;

use super::Ws;
use crate::{Options, Taken, Watcher};

fn same_tree(ws: &Ws, a: &crate::CheckpointId) {
    // A full walk now must see no difference from the dirty walk's result.
    let d = ws.store.diff(a, None, &Options::default()).unwrap();
    assert!(d.is_empty(), "dirty walk missed: {d:?}");
}

#[test]
fn the_watcher_sees_a_write_and_a_new_nested_dir() {
    let ws = Ws::new();
    ws.write(".gitignore", "target/\n");
    ws.write("src/a.rs", "a\n");
    ws.write("target/x", "x\n");
    let w = Watcher::start(&ws.root(), &Options::default()).unwrap();
    ws.take();
    assert!(!w.changed());
    fs::write(ws.p("src/a.rs"), "changed\n").unwrap();
    assert!(w.changed());
    let d = w.take();
    assert!(!d.overflow);
    assert!(d.dirs.contains(&PathBuf::from("src")), "{d:?}");
    assert!(!w.changed());
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        panic!()
    };
    assert_eq!(c.changed.modified, 1);
    same_tree(&ws, &c.id);

    fs::create_dir_all(ws.p("new/deep/er")).unwrap();
    fs::write(ws.p("new/deep/er/f"), "f\n").unwrap();
    fs::write(ws.p("new/deep/g"), "g\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    fs::write(ws.p("new/deep/er/later"), "later\n").unwrap();
    let d = w.take();
    assert!(d.dirs.contains(&PathBuf::from("")), "{d:?}");
    assert!(d.dirs.contains(&PathBuf::from("new/deep/er")), "{d:?}");
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        panic!()
    };
    assert_eq!(c.changed.added, 3, "{c:?}");
    same_tree(&ws, &c.id);

    // Ignored directories are not watched.
    fs::write(ws.p("target/y"), "y\n").unwrap();
    let d = w.take();
    assert!(d.dirs.is_empty() && !d.overflow, "{d:?}");
    assert!(matches!(
        ws.take_with(&Options::default(), Some(&d)),
        Taken::Unchanged(_)
    ));

    // Deleting and renaming directories.
    fs::remove_dir_all(ws.p("new/deep/er")).unwrap();
    fs::rename(ws.p("src"), ws.p("src2")).unwrap();
    let d = w.take();
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        panic!()
    };
    same_tree(&ws, &c.id);
    fs::write(ws.p("src2/a.rs"), "again\n").unwrap();
    let d = w.take();
    assert!(d.dirs.contains(&PathBuf::from("src2")), "{d:?}");
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        panic!()
    };
    same_tree(&ws, &c.id);
}

#[test]
fn a_git_ref_change_counts_as_changed() {
    let ws = Ws::new();
    ws.sh("git init -q -b main . && echo a > a && git add a && git -c user.name=t -c user.email=t@e commit -qm a");
    let w = Watcher::start(&ws.root(), &Options::default()).unwrap();
    ws.take();
    w.take();
    ws.sh("git branch other");
    assert!(w.changed());
    let d = w.take();
    assert!(matches!(
        ws.take_with(&Options::default(), Some(&d)),
        Taken::New(_)
    ));
}

#[test]
fn a_dirty_set_naming_gone_or_odd_paths_is_safe() {
    let ws = Ws::new();
    ws.write("a/b/c", "c\n");
    ws.write("keep", "k\n");
    ws.take();
    fs::remove_dir_all(ws.p("a")).unwrap();
    let d = crate::Dirty {
        dirs: [
            PathBuf::from("a/b"),
            PathBuf::from("../x"),
            PathBuf::from(".git/refs"),
        ]
        .into_iter()
        .collect(),
        overflow: false,
    };
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        panic!()
    };
    assert_eq!(c.changed.deleted, 1, "{c:?}");
    same_tree(&ws, &c.id);
}
