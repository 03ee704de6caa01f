//! Packs: a big take writes one, git reads it, undo and prune use it, and a
//! damaged one tears only the checkpoints that need it.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use super::{Ws, assert_same, tree_of};
use crate::objects::{Kind, PACK_THRESHOLD, hash};
use crate::{Meta, Options, Reason, Retention, Store};

const MANY: usize = 300;

fn content(i: usize) -> String {
    format!("file {i}\n{}\n", "data ".repeat(i % 50))
}

fn write_many(ws: &Ws, prefix: &str) {
    for i in 0..MANY {
        ws.write(&format!("{prefix}/d{}/f{i}.txt", i % 17), &content(i));
    }
}

fn packs(ws: &Ws) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(ws.store.dir().join("objects/pack"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "pack"));
    v.sort();
    v
}

fn loose(ws: &Ws) -> usize {
    let mut n = 0;
    for d in fs::read_dir(ws.store.dir().join("objects")).unwrap() {
        let d = d.unwrap();
        if d.file_name().len() == 2 {
            n += fs::read_dir(d.path()).unwrap().count();
        }
    }
    n
}

fn git(ws: &Ws, args: &[&str]) -> (bool, String) {
    let out = Command::new("git")
        .arg(format!("--git-dir={}", ws.store.dir().display()))
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn take_in(ws: &Ws, session: &str) -> crate::CheckpointId {
    ws.store
        .take(
            Reason::BeforeCommand,
            &Meta {
                session: Some(session.into()),
                command: None,
            },
            &Options::default(),
            None,
        )
        .unwrap()
        .id()
        .clone()
}

#[test]
fn a_big_take_writes_one_pack_that_git_reads() {
    let ws = Ws::new();
    write_many(&ws, "src");
    ws.take();
    let p = packs(&ws);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(loose(&ws) <= PACK_THRESHOLD + 4, "{} loose", loose(&ws));
    assert!(ws.store.objects.packs()[0].is_stored());
    let blob = hash(Kind::Blob, content(123).as_bytes()).hex();
    let (ok, out) = git(&ws, &["cat-file", "-p", &blob]);
    assert!(ok, "{out}");
    assert_eq!(out, content(123));
    let idx = p[0].with_extension("idx");
    let (ok, out) = git(&ws, &["verify-pack", "-v", idx.to_str().unwrap()]);
    assert!(ok, "{out}");
    assert!(out.contains(&blob), "{out}");
    let (ok, out) = git(&ws, &["fsck", "--no-dangling"]);
    assert!(ok, "{out}");
}

#[test]
fn undo_restores_from_packed_objects_in_a_new_process() {
    let ws = Ws::new();
    write_many(&ws, "src");
    ws.write("small", "s\n");
    let before = tree_of(&ws.root());
    let id = ws.id();
    assert_eq!(packs(&ws).len(), 1);
    fs::remove_dir_all(ws.p("src/d3")).unwrap();
    ws.write("src/d4/f4.txt", "changed\n");
    ws.write("junk", "j\n");
    // A store opened afresh reads the pack from disk.
    let store = Store::open(ws.state.path(), &ws.root()).unwrap();
    assert!(store.list().unwrap().torn.is_empty());
    let plan = store.plan_undo(&id, &[], &Options::default()).unwrap();
    store.undo(&plan, &Options::default()).unwrap();
    assert_same(&before, &tree_of(&ws.root()));
    let changes = store.diff(&id, None, &Options::default()).unwrap();
    assert!(changes.is_empty(), "{changes:?}");
}

#[test]
fn prune_rewrites_a_partly_unreachable_pack() {
    let ws = Ws::new();
    write_many(&ws, "old");
    write_many(&ws, "keep");
    // The two halves share content: make the old half its own.
    for i in 0..MANY {
        ws.write(&format!("old/d{}/f{i}.txt", i % 17), &format!("old {i}\n"));
    }
    take_in(&ws, "a");
    let old_pack = packs(&ws);
    assert_eq!(old_pack.len(), 1);
    fs::remove_dir_all(ws.p("old")).unwrap();
    let b = take_in(&ws, "b");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let r = ws
        .store
        .prune(&Retention {
            keep_days: 0,
            ..Retention::default()
        })
        .unwrap();
    assert_eq!(r.checkpoints_removed, 1);
    assert!(r.bytes_freed > 0);
    assert!(!old_pack[0].exists(), "the old pack is gone");
    assert!(ws.store.objects.packs().iter().all(|p| !p.is_stored()));
    let gone = hash(Kind::Blob, b"old 7\n").hex();
    assert!(!git(&ws, &["cat-file", "-e", &gone]).0);
    let kept = hash(Kind::Blob, content(7).as_bytes()).hex();
    assert!(git(&ws, &["cat-file", "-e", &kept]).0);
    let (ok, out) = git(&ws, &["fsck", "--no-dangling"]);
    assert!(ok, "{out}");
    let store = Store::open(ws.state.path(), &ws.root()).unwrap();
    let listing = store.list().unwrap();
    assert!(listing.torn.is_empty(), "{:?}", listing.torn);
    assert_eq!(listing.checkpoints.len(), 1);
    let before = tree_of(&ws.root());
    fs::remove_dir_all(ws.p("keep")).unwrap();
    let plan = store.plan_undo(&b, &[], &Options::default()).unwrap();
    store.undo(&plan, &Options::default()).unwrap();
    assert_same(&before, &tree_of(&ws.root()));
    // A pack no kept checkpoint reaches goes entirely.
    write_many(&ws, "more");
    for i in 0..MANY {
        ws.write(
            &format!("more/d{}/f{i}.txt", i % 17),
            &format!("more {i}\n"),
        );
    }
    take_in(&ws, "c");
    fs::remove_dir_all(ws.p("more")).unwrap();
    take_in(&ws, "d");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let n = packs(&ws).len();
    store
        .prune(&Retention {
            keep_days: 0,
            ..Retention::default()
        })
        .unwrap();
    assert_eq!(packs(&ws).len(), n - 1);
    assert!(store.list().unwrap().torn.is_empty());
}

fn damaged(which: &str) {
    let ws = Ws::new();
    ws.write("a", "1\n");
    let small = ws.id();
    write_many(&ws, "src");
    let big = ws.id();
    let p = packs(&ws);
    assert_eq!(p.len(), 1);
    let victim = if which == "pack" {
        p[0].clone()
    } else {
        p[0].with_extension("idx")
    };
    let len = fs::metadata(&victim).unwrap().len();
    let f = fs::OpenOptions::new()
        .write(true)
        .open(&victim)
        .or_else(|_| {
            let mut perm = fs::metadata(&victim)?.permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o644);
            fs::set_permissions(&victim, perm)?;
            fs::OpenOptions::new().write(true).open(&victim)
        })
        .unwrap();
    f.set_len(len - 100).unwrap();
    drop(f);
    let store = Store::open(ws.state.path(), &ws.root()).unwrap();
    let listing = store.list().unwrap();
    let ids: Vec<_> = listing.checkpoints.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids, vec![small.clone()], "{:?}", listing.torn);
    assert_eq!(listing.torn.len(), 1, "{:?}", listing.torn);
    assert!(listing.torn[0].contains(&big.0[..12]), "{:?}", listing.torn);
    // The other checkpoint still undoes, and new ones can be taken.
    let plan = store.plan_undo(&small, &[], &Options::default()).unwrap();
    store.undo(&plan, &Options::default()).unwrap();
    assert!(!ws.p("src").exists());
    assert_eq!(fs::read_to_string(ws.p("a")).unwrap(), "1\n");
    write_many(&ws, "src");
    let again = store
        .take(
            Reason::BeforeCommand,
            &Meta::default(),
            &Options::default(),
            None,
        )
        .unwrap();
    assert!(store.find(again.id()).is_ok());
    // The damaged pack is set aside: a later take trusts its stat cache.
    assert_eq!(packs(&ws).len(), 2, "{:?}", packs(&ws));
    let store = Store::open(ws.state.path(), &ws.root()).unwrap();
    assert!(!store.objects.damaged_pack());
    let listing = store.list().unwrap();
    let ids: Vec<_> = listing.checkpoints.iter().map(|c| &c.id).collect();
    assert!(
        ids.contains(&&small) && ids.contains(&again.id()),
        "{ids:?}"
    );
    // The same files stored again heal the damaged checkpoint, too.
    assert!(ids.contains(&&big), "{:?}", listing.torn);
}

#[test]
fn a_truncated_pack_tears_its_checkpoints_only() {
    damaged("pack");
}

#[test]
fn a_truncated_index_tears_its_checkpoints_only() {
    damaged("idx");
}

#[test]
fn packed_and_loose_objects_are_stored_once() {
    let ws = Ws::new();
    // Loose first: a small take.
    ws.write("early", &content(5));
    ws.take();
    let early = hash(Kind::Blob, content(5).as_bytes());
    assert!(ws.store.objects.path(&early).exists());
    // A big take with the same content packs the rest, not that one.
    write_many(&ws, "src");
    ws.take();
    assert_eq!(packs(&ws).len(), 1);
    let pack = ws.store.objects.packs().pop().unwrap();
    assert!(
        pack.find(&early).is_none(),
        "a loose object was packed again"
    );
    // A packed object is not written loose again (the batch's first
    // objects went loose: pick two that were packed).
    let mut in_pack = (0..MANY).filter(|&i| {
        let o = hash(Kind::Blob, content(i).as_bytes());
        pack.find(&o).is_some() && !ws.store.objects.path(&o).exists()
    });
    let (one, two) = (in_pack.next().unwrap(), in_pack.next().unwrap());
    let packed = hash(Kind::Blob, content(one).as_bytes());
    ws.write("late", &content(one));
    ws.take();
    assert!(!ws.store.objects.path(&packed).exists());
    // Nor by a store opened afresh.
    let store = Store::open(ws.state.path(), &ws.root()).unwrap();
    ws.write("later", &content(two));
    store
        .take(
            Reason::BeforeCommand,
            &Meta::default(),
            &Options::default(),
            None,
        )
        .unwrap();
    let packed = hash(Kind::Blob, content(two).as_bytes());
    assert!(!ws.store.objects.path(&packed).exists());
    assert_eq!(packs(&ws).len(), 1);
}

#[test]
fn a_pack_another_process_pruned_away_is_not_trusted() {
    let ws = Ws::new();
    write_many(&ws, "src");
    ws.take();
    // Another store (another process) deletes the pack: say a prune that
    // found it unreachable, after this store had read it.
    assert_eq!(ws.store.objects.packs().len(), 1);
    let other = Store::open(ws.state.path(), &ws.root()).unwrap();
    let name = other.objects.packs()[0].name.clone();
    other.objects.remove_pack(&name).unwrap();
    fs::remove_file(ws.store.dir().join("stat-cache")).unwrap();
    // This store's next take stores the files again.
    let id = ws.id();
    let fresh = Store::open(ws.state.path(), &ws.root()).unwrap();
    assert!(fresh.find(&id).is_ok());
    let blob = hash(Kind::Blob, content(250).as_bytes()).hex();
    assert!(git(&ws, &["cat-file", "-e", &blob]).0);
}
