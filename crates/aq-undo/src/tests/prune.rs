//! Prune keeps the newest session and what it needs.

use std::fs;

use super::Ws;
use crate::{Meta, Options, Reason, Retention};

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

fn objects(ws: &Ws) -> usize {
    let mut n = 0;
    for d in fs::read_dir(ws.store.dir().join("objects")).unwrap() {
        n += fs::read_dir(d.unwrap().path()).unwrap().count();
    }
    n
}

#[test]
fn prune_drops_old_sessions_and_their_objects() {
    let ws = Ws::new();
    ws.write("old1", &"x".repeat(1000));
    take_in(&ws, "a");
    ws.write("old2", &"y".repeat(1000));
    take_in(&ws, "a");
    fs::remove_file(ws.p("old1")).unwrap();
    fs::remove_file(ws.p("old2")).unwrap();
    ws.write("new", "n\n");
    let b1 = take_in(&ws, "b");
    ws.write("new", "n2\n");
    let b2 = take_in(&ws, "b");
    let objects_before = objects(&ws);
    // Nothing is old enough: nothing goes.
    let r = ws.store.prune(&Retention::default()).unwrap();
    assert_eq!(r.checkpoints_removed, 0);
    // Everything is too old, but the newest session stays.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let r = ws
        .store
        .prune(&Retention {
            keep_days: 0,
            ..Retention::default()
        })
        .unwrap();
    assert_eq!(r.checkpoints_removed, 2);
    assert!(r.bytes_freed > 0);
    assert!(objects(&ws) < objects_before);
    let ids: Vec<_> = ws
        .store
        .list()
        .unwrap()
        .checkpoints
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, vec![b1.clone(), b2]);
    assert!(ws.store.list().unwrap().torn.is_empty());
    // What is left still undoes.
    fs::remove_file(ws.p("new")).unwrap();
    ws.undo(&b1);
    assert_eq!(fs::read_to_string(ws.p("new")).unwrap(), "n\n");
}

#[test]
fn prune_over_the_size_limit_drops_the_oldest_sessions_first() {
    let ws = Ws::new();
    ws.write("f", &"1".repeat(5000));
    take_in(&ws, "a");
    ws.write("f", &"2".repeat(5000));
    take_in(&ws, "b");
    ws.write("f", &"3".repeat(5000));
    let c = take_in(&ws, "c");
    let r = ws
        .store
        .prune(&Retention {
            keep_days: 30,
            max_store_bytes: 1,
        })
        .unwrap();
    assert_eq!(r.checkpoints_removed, 2);
    let ids: Vec<_> = ws
        .store
        .list()
        .unwrap()
        .checkpoints
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, vec![c]);
}
