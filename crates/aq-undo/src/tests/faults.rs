//! Torn records, damaged objects, interrupted undos, planted links, files
//! too big to keep.

use std::fs;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use super::{Ws, assert_same, tree_of};
use crate::{Options, Taken};

#[test]
fn a_torn_line_and_a_missing_object_are_skipped() {
    let ws = Ws::new();
    ws.write("a", "1\n");
    let first = ws.id();
    ws.write("a", "2\n");
    let second = ws.id();
    ws.write("a", "3\n");
    let third = ws.id();
    // A line cut short by a crash, and the second's root object gone.
    let list = ws.store.dir().join("checkpoints.jsonl");
    fs::OpenOptions::new()
        .append(true)
        .open(&list)
        .unwrap()
        .write_all(b"{\"id\":\"abc")
        .unwrap();
    let root = crate::objects::Oid::from_hex(&second.0).unwrap();
    fs::remove_file(ws.store.objects.path(&root)).unwrap();
    let listing = ws.store.list().unwrap();
    let ids: Vec<_> = listing.checkpoints.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, vec![first.clone(), third.clone()]);
    assert_eq!(listing.torn.len(), 2, "{:?}", listing.torn);
    assert!(ws.store.resolve(&second.0[..10]).is_err());
    // The others are usable; a new checkpoint is appended after the torn line.
    ws.undo(&first);
    assert_eq!(fs::read_to_string(ws.p("a")).unwrap(), "1\n");
    ws.write("a", "4\n");
    let fourth = ws.id();
    assert_eq!(ws.store.resolve(&fourth.0[..12]).unwrap(), fourth);
    // first, third, fourth (the undo found the workspace as third had it).
    assert_eq!(ws.store.list().unwrap().checkpoints.len(), 3);
}

#[test]
fn the_latest_checkpoint_is_found_behind_a_long_torn_tail_and_in_a_long_history() {
    // The latest is read from the end of the list, a window at a time: what
    // lies behind more torn lines than one window must still be found.
    let ws = Ws::new();
    let mut ids = Vec::new();
    for i in 0..40 {
        ws.write("a", &format!("{i}\n"));
        ids.push(ws.id());
    }
    let list = ws.store.dir().join("checkpoints.jsonl");
    assert!(
        fs::metadata(&list).unwrap().len() > 8 * 1024,
        "a history longer than one window"
    );
    let (latest, _) = ws.store.latest().unwrap().unwrap();
    assert_eq!(latest.id, *ids.last().unwrap());
    // 40 KiB of torn and foreign lines after it, one longer than a window.
    let mut f = fs::OpenOptions::new().append(true).open(&list).unwrap();
    for _ in 0..300 {
        f.write_all(
            b"{\"id\":\"abc\",\"torn\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n",
        )
        .unwrap();
    }
    f.write_all(&vec![b'x'; 20 * 1024]).unwrap();
    f.write_all(b"\n{\"id\":\"cut").unwrap();
    drop(f);
    let (latest, _) = ws.store.latest().unwrap().unwrap();
    assert_eq!(latest.id, *ids.last().unwrap());
    // And the listing agrees with it.
    let listing = ws.store.list().unwrap();
    assert_eq!(listing.checkpoints.last().unwrap().id, latest.id);
    assert_eq!(listing.checkpoints.len(), 40);
}

#[test]
fn a_checkpoint_missing_a_blob_refuses_before_touching_anything() {
    let ws = Ws::new();
    ws.write("a", "precious\n");
    ws.write("b", "other\n");
    let id = ws.id();
    fs::remove_file(ws.p("a")).unwrap();
    fs::remove_file(ws.p("b")).unwrap();
    ws.write("c", "new\n");
    let blob = crate::objects::hash(crate::objects::Kind::Blob, b"precious\n");
    fs::remove_file(ws.store.objects.path(&blob)).unwrap();
    let err = match ws.store.plan_undo(&id, &[], &Options::default()) {
        Err(e) => e.0,
        Ok(plan) => ws.store.undo(&plan, &Options::default()).unwrap_err().0,
    };
    assert!(err.contains("damaged"), "{err}");
    assert!(ws.p("c").exists() && !ws.p("b").exists());
    assert!(ws.store.interrupted().unwrap().is_none());
}

#[test]
fn an_undo_killed_midway_leaves_a_journal_and_running_it_again_finishes() {
    let ws = Ws::new();
    for i in 0..10 {
        ws.write(&format!("d{i}/f"), &format!("{i}\n"));
    }
    let before = tree_of(&ws.root());
    let id = ws.id();
    for i in 0..10 {
        fs::remove_dir_all(ws.p(&format!("d{i}"))).unwrap();
    }
    ws.write("junk/new", "junk\n");
    let plan = ws.store.plan_undo(&id, &[], &Options::default()).unwrap();
    crate::restore::FAIL_AFTER.with(|f| f.set(4));
    let err = ws.store.undo(&plan, &Options::default()).unwrap_err();
    crate::restore::FAIL_AFTER.with(|f| f.set(usize::MAX));
    assert!(err.0.contains("test hook"), "{err}");
    let journal = ws.store.interrupted().unwrap().expect("a journal");
    assert_eq!(journal.target, id);
    // Half done: some back, some not.
    let back = (0..10)
        .filter(|i| ws.p(&format!("d{i}/f")).exists())
        .count();
    assert!(back < 10, "{back}");
    // Running the same undo again finishes it.
    let plan = ws
        .store
        .plan_undo(&journal.target, &journal.paths, &Options::default())
        .unwrap();
    ws.store.undo(&plan, &Options::default()).unwrap();
    assert_same(&before, &tree_of(&ws.root()));
    assert!(ws.store.interrupted().unwrap().is_none());
    // And undoing to `before` puts the half-way state's start back.
    ws.undo(&journal.before);
    assert!(ws.p("junk/new").exists());
    assert!(!ws.p("d0/f").exists());
}

#[test]
fn a_planted_link_cannot_make_undo_write_outside() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    ws.write("src/a.rs", "a\n");
    ws.write("src/sub/b.rs", "b\n");
    let before = tree_of(&ws.root());
    let id = ws.id();
    fs::remove_dir_all(ws.p("src")).unwrap();
    symlink(outside.path(), ws.p("src")).unwrap();
    // With --path below the link, too.
    let plan = ws
        .store
        .plan_undo(&id, &[PathBuf::from("src/a.rs")], &Options::default())
        .unwrap();
    ws.store.undo(&plan, &Options::default()).unwrap();
    assert!(
        fs::read_dir(outside.path()).unwrap().next().is_none(),
        "wrote outside"
    );
    assert!(fs::symlink_metadata(ws.p("src")).unwrap().is_dir());
    // A link planted again, then a whole undo.
    fs::remove_dir_all(ws.p("src")).unwrap();
    symlink(outside.path(), ws.p("src")).unwrap();
    ws.undo(&id);
    assert!(
        fs::read_dir(outside.path()).unwrap().next().is_none(),
        "wrote outside"
    );
    assert_same(&before, &tree_of(&ws.root()));
    // A link where a file was: replaced, its target untouched.
    fs::write(outside.path().join("victim"), "keep\n").unwrap();
    fs::remove_file(ws.p("src/a.rs")).unwrap();
    symlink(outside.path().join("victim"), ws.p("src/a.rs")).unwrap();
    ws.undo(&id);
    assert_eq!(
        fs::read_to_string(outside.path().join("victim")).unwrap(),
        "keep\n"
    );
    assert_same(&before, &tree_of(&ws.root()));
}

#[test]
fn a_huge_file_is_not_kept_and_undo_says_so() {
    let ws = Ws::new();
    let opts = Options {
        max_file_bytes: 1000,
        ..Options::default()
    };
    ws.write("small", "s\n");
    fs::write(ws.p("huge.bin"), vec![7u8; 5000]).unwrap();
    let Taken::New(c) = ws.take_with(&opts, None) else {
        panic!()
    };
    assert_eq!(c.not_kept.len(), 1, "{:?}", c.not_kept);
    assert_eq!(c.not_kept[0].path, PathBuf::from("huge.bin"));
    assert!(
        c.not_kept[0]
            .why
            .contains("over the size limit (1000 bytes)"),
        "{}",
        c.not_kept[0].why
    );
    fs::write(ws.p("huge.bin"), vec![8u8; 6000]).unwrap();
    fs::remove_file(ws.p("small")).unwrap();
    let plan = ws.store.plan_undo(&c.id, &[], &opts).unwrap();
    assert_eq!(plan.not_restorable.len(), 1, "{:?}", plan.not_restorable);
    assert_eq!(plan.not_restorable[0].path, PathBuf::from("huge.bin"));
    let report = ws.store.undo(&plan, &opts).unwrap();
    assert_eq!(report.not_restorable.len(), 1);
    assert!(ws.p("small").exists());
    assert_eq!(fs::read(ws.p("huge.bin")).unwrap(), vec![8u8; 6000]);
}

#[test]
fn a_store_refuses_another_workspace() {
    let ws = Ws::new();
    let marker = ws.store.dir().join("workspace");
    fs::write(&marker, "/somewhere/else").unwrap();
    let err = crate::Store::open(ws.state.path(), &ws.root())
        .err()
        .unwrap()
        .0;
    assert!(err.contains("belongs to /somewhere/else"), "{err}");
}

#[test]
fn unreadable_files_are_not_kept_and_modes_are() {
    let ws = Ws::new();
    ws.write("secret", "s\n");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(ws.p("secret"), fs::Permissions::from_mode(0o000)).unwrap();
    let Taken::New(c) = ws.take() else { panic!() };
    if unsafe { libc::geteuid() } == 0 {
        // Root reads every file: it is kept, with its mode.
        assert!(c.not_kept.is_empty(), "{:?}", c.not_kept);
        fs::set_permissions(ws.p("secret"), fs::Permissions::from_mode(0o644)).unwrap();
        let plan = ws.store.plan_undo(&c.id, &[], &Default::default()).unwrap();
        ws.store.undo(&plan, &Default::default()).unwrap();
        let mode = fs::metadata(ws.p("secret")).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o000, "the mode the checkpoint has is back");
    } else {
        assert_eq!(c.not_kept[0].path, PathBuf::from("secret"));
    }
}
