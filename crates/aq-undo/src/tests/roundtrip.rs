//! Files, modes, links and empty directories come back byte for byte.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::PathBuf;

use super::{Ws, assert_same, tree_of};
use crate::{Options, Taken};

fn populate(ws: &Ws) {
    ws.write("README.md", "hello\n");
    ws.write("src/main.rs", "fn main() {}\n");
    ws.write("src/lib/a.rs", "pub fn a() {}\n");
    ws.write("src/lib/b.rs", "pub fn b() {}\n");
    ws.write("src/lib/deep/c.rs", "// c\n");
    ws.write("run.sh", "#!/bin/sh\necho hi\n");
    fs::set_permissions(ws.p("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    ws.write("tool.sh", "#!/bin/sh\n");
    symlink("src/main.rs", ws.p("link")).unwrap();
    symlink("README.md", ws.p("src/up")).unwrap();
    fs::create_dir_all(ws.p("empty/inner")).unwrap();
    ws.write(".hidden", "dot\n");
    fs::write(ws.p("bin.dat"), [0u8, 1, 2, 255, 0]).unwrap();
}

#[test]
fn every_kind_of_destruction_is_undone() {
    let ws = Ws::new();
    populate(&ws);
    let before = tree_of(&ws.root());
    let id = ws.id();
    // Deletes, truncation, rename over, chmod, link retarget, nested dir
    // delete, new files and directories.
    fs::remove_file(ws.p("README.md")).unwrap();
    fs::write(ws.p("src/main.rs"), "").unwrap();
    fs::rename(ws.p("src/lib/a.rs"), ws.p("src/lib/b.rs")).unwrap();
    fs::set_permissions(ws.p("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(ws.p("tool.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(ws.p("link")).unwrap();
    symlink("/etc/passwd", ws.p("link")).unwrap();
    fs::remove_dir_all(ws.p("src/lib/deep")).unwrap();
    fs::remove_dir_all(ws.p("empty")).unwrap();
    ws.write("new/dir/file.txt", "new\n");
    ws.write("src/new.rs", "new\n");
    fs::remove_file(ws.p(".hidden")).unwrap();
    fs::write(ws.p("bin.dat"), [9u8; 10]).unwrap();
    let report = ws.undo(&id);
    assert_same(&before, &tree_of(&ws.root()));
    assert!(report.restored >= 8, "{report:?}");
    assert!(report.removed >= 3, "{report:?}");
}

#[test]
fn type_changes_are_undone() {
    let ws = Ws::new();
    ws.write("a", "file a\n");
    ws.write("d/x", "x\n");
    symlink("a", ws.p("l")).unwrap();
    let before = tree_of(&ws.root());
    let id = ws.id();
    // file -> dir, dir -> file, link -> file
    fs::remove_file(ws.p("a")).unwrap();
    ws.write("a/inside", "i\n");
    fs::remove_dir_all(ws.p("d")).unwrap();
    ws.write("d", "now a file\n");
    fs::remove_file(ws.p("l")).unwrap();
    ws.write("l", "not a link\n");
    ws.undo(&id);
    assert_same(&before, &tree_of(&ws.root()));
}

#[test]
fn undo_of_an_undo_goes_back() {
    let ws = Ws::new();
    populate(&ws);
    let first = ws.id();
    fs::remove_dir_all(ws.p("src")).unwrap();
    ws.write("other.txt", "other\n");
    let after = tree_of(&ws.root());
    let report = ws.undo(&first);
    assert!(ws.p("src/main.rs").exists());
    ws.undo(&report.before);
    assert_same(&after, &tree_of(&ws.root()));
}

#[test]
fn a_path_restores_that_file_only() {
    let ws = Ws::new();
    populate(&ws);
    let id = ws.id();
    fs::write(ws.p("README.md"), "changed\n").unwrap();
    fs::write(ws.p("src/main.rs"), "changed\n").unwrap();
    ws.write("fresh.txt", "fresh\n");
    let plan = ws
        .store
        .plan_undo(&id, &[PathBuf::from("src/main.rs")], &Options::default())
        .unwrap();
    assert_eq!(plan.changes.len(), 1, "{:?}", plan.changes);
    assert!(plan.refs.is_empty());
    ws.store.undo(&plan, &Options::default()).unwrap();
    assert_eq!(
        fs::read_to_string(ws.p("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert_eq!(fs::read_to_string(ws.p("README.md")).unwrap(), "changed\n");
    assert!(ws.p("fresh.txt").exists());
    // A directory prefix restores what is below it.
    fs::remove_dir_all(ws.p("src/lib")).unwrap();
    let plan = ws
        .store
        .plan_undo(&id, &[PathBuf::from("src/lib")], &Options::default())
        .unwrap();
    ws.store.undo(&plan, &Options::default()).unwrap();
    assert!(ws.p("src/lib/deep/c.rs").exists());
    assert!(ws.p("fresh.txt").exists());
}

#[test]
fn nothing_changed_is_unchanged() {
    let ws = Ws::new();
    populate(&ws);
    let Taken::New(first) = ws.take() else {
        panic!("first is new")
    };
    assert_eq!(first.changed.added, 12, "{first:?}");
    match ws.take() {
        Taken::Unchanged(id) => assert_eq!(id, first.id),
        Taken::New(c) => panic!("nothing changed, yet {c:?}"),
    }
    assert_eq!(ws.store.list().unwrap().checkpoints.len(), 1);
    ws.write("README.md", "edited\n");
    let Taken::New(second) = ws.take() else {
        panic!("an edit is new")
    };
    assert_eq!(second.parent.as_ref(), Some(&first.id));
    assert_eq!(
        (
            second.changed.added,
            second.changed.modified,
            second.changed.deleted
        ),
        (0, 1, 0)
    );
}

#[test]
fn a_workspace_with_a_gitignore_but_no_repository_leaves_ignored_files_alone() {
    let ws = Ws::new();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/a.rs", "a\n");
    ws.write("target/debug/big", "build output\n");
    ws.write("x.log", "log\n");
    let id = ws.id();
    let listing = ws.store.diff(&id, None, &Options::default()).unwrap();
    assert!(listing.is_empty(), "{listing:?}");
    ws.write("target/debug/big", "rebuilt\n");
    ws.write("target/new", "new\n");
    fs::remove_file(ws.p("x.log")).unwrap();
    ws.write("y.log", "new log\n");
    fs::remove_dir_all(ws.p("src")).unwrap();
    let plan = ws.store.plan_undo(&id, &[], &Options::default()).unwrap();
    let paths: Vec<_> = plan.changes.iter().map(|c| c.path.clone()).collect();
    assert_eq!(paths, vec![PathBuf::from("src/a.rs")]);
    ws.store.undo(&plan, &Options::default()).unwrap();
    assert_eq!(
        fs::read_to_string(ws.p("target/debug/big")).unwrap(),
        "rebuilt\n"
    );
    assert!(ws.p("target/new").exists());
    assert!(ws.p("y.log").exists());
    assert!(!ws.p("x.log").exists());
    assert!(ws.p("src/a.rs").exists());
}

#[test]
fn included_paths_are_kept_although_ignored() {
    let ws = Ws::new();
    ws.write(".gitignore", "build/\n");
    ws.write("build/keep/me.txt", "keep\n");
    ws.write("build/other.txt", "other\n");
    let opts = Options {
        include: vec![PathBuf::from("build/keep")],
        ..Options::default()
    };
    let id = ws.take_with(&opts, None).id().clone();
    fs::remove_dir_all(ws.p("build")).unwrap();
    let plan = ws.store.plan_undo(&id, &[], &opts).unwrap();
    ws.store.undo(&plan, &opts).unwrap();
    assert!(ws.p("build/keep/me.txt").exists());
    assert!(!ws.p("build/other.txt").exists());
}

#[test]
fn nested_repositories_keep_files_but_not_their_git_dir() {
    let ws = Ws::new();
    ws.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    ws.write("vendor/lib/code.c", "int x;\n");
    let id = ws.id();
    fs::remove_dir_all(ws.p("vendor/lib")).unwrap();
    ws.undo(&id);
    assert!(ws.p("vendor/lib/code.c").exists());
    assert!(!ws.p("vendor/lib/.git").exists());
}

/// A session's first checkpoint of an unchanged large workspace does not
/// rewrite (hash, write, rename) its megabytes of stat cache: on a large
/// workspace that rewrite was most of a session's start-up.
#[test]
fn an_unchanged_workspace_leaves_the_stat_cache_as_it_was() {
    use std::os::unix::fs::MetadataExt;
    let ws = Ws::new();
    populate(&ws);
    ws.sh("git init -q . && git add -A && git commit -qm one");
    // Older than the racy margin, so that the first walk's records stand.
    std::thread::sleep(std::time::Duration::from_millis(120));
    let first = ws.id();
    let cache = ws.store.dir().join("stat-cache");
    let ino = || fs::metadata(&cache).unwrap().ino();
    let before = ino();
    assert!(matches!(ws.take(), Taken::Unchanged(ref id) if *id == first));
    assert_eq!(ino(), before, "an unchanged walk rewrote the stat cache");
    // A change of the same size in the same second is still seen, and
    // rewrites the cache; undo puts it back.
    ws.write("src/lib/a.rs", "pub fn A() {}\n");
    let Taken::New(c) = ws.take() else {
        panic!("the change was not seen")
    };
    assert_eq!(c.changed.modified, 1);
    assert_ne!(
        ino(),
        before,
        "a changed walk did not rewrite the stat cache"
    );
    ws.undo(&first);
    assert_eq!(
        fs::read_to_string(ws.p("src/lib/a.rs")).unwrap(),
        "pub fn a() {}\n"
    );
    // A ref that moves is a change too.
    std::thread::sleep(std::time::Duration::from_millis(120));
    let again = ws.id();
    let before = ino();
    ws.sh("git branch side");
    assert!(matches!(ws.take(), Taken::New(ref c) if c.id != again));
    assert_ne!(ino(), before);
}
