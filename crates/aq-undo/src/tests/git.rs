//! Refs, the stash and the index, in a real repository.

use std::fs;

use super::{Ws, assert_same, tree_of};
use crate::Options;

fn repo() -> Ws {
    let ws = Ws::new();
    ws.sh(
        "git init -q -b main . && echo one > a.txt && git add a.txt && git commit -qm one \
           && echo two > a.txt && git commit -qam two \
           && git branch feature HEAD~1 && git tag v1 HEAD~1 \
           && echo stashed > a.txt && git stash -q \
           && echo staged > b.txt && git add b.txt && echo untracked > u.txt",
    );
    ws
}

fn refs(ws: &Ws) -> String {
    ws.out("git for-each-ref --format='%(refname) %(objectname)'; git rev-parse HEAD; \
            git symbolic-ref HEAD; git stash list --format='%gd %H'; git diff --cached --name-status")
}

#[test]
fn reset_hard_branch_delete_and_stash_are_undone() {
    let ws = repo();
    let before_refs = refs(&ws);
    let before = tree_of(&ws.root());
    let taken = ws.take();
    let id = taken.id().clone();
    if let crate::Taken::New(c) = &taken {
        assert!(c.git_kept);
    }
    ws.sh(
        "git reset -q --hard HEAD~1 && git branch -D -q feature && git tag -d v1 >/dev/null \
           && git stash drop -q && echo more > u2.txt && git stash -q -u && git branch extra",
    );
    assert_ne!(refs(&ws), before_refs);
    let plan = ws.store.plan_undo(&id, &[], &Options::default()).unwrap();
    assert!(plan.index);
    let names: Vec<_> = plan.refs.iter().map(|r| r.name.as_str()).collect();
    for want in [
        "refs/heads/main",
        "refs/heads/feature",
        "refs/heads/extra",
        "refs/tags/v1",
        "stash@{0}",
    ] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    let report = ws.store.undo(&plan, &Options::default()).unwrap();
    assert!(report.refs > 0);
    assert_eq!(refs(&ws), before_refs);
    assert_same(&before, &tree_of(&ws.root()));
    // git itself agrees.
    ws.sh("git fsck --no-dangling && git stash show -p stash@{0} >/dev/null");
    assert_eq!(ws.out("git status --porcelain"), "A  b.txt\n?? u.txt\n");
}

#[test]
fn packed_refs_are_restored() {
    let ws = repo();
    ws.sh("git pack-refs --all");
    let before_refs = refs(&ws);
    let id = ws.id();
    ws.sh("git branch -D -q feature && git tag -d v1 >/dev/null");
    ws.undo(&id);
    assert_eq!(refs(&ws), before_refs);
}

#[test]
fn a_ref_to_a_commit_gc_deleted_is_reported_not_written() {
    let ws = repo();
    ws.sh("git checkout -q -b doomed && echo x > x.txt && git add x.txt && git commit -qm doomed && git checkout -q main");
    let id = ws.id();
    ws.sh(
        "git branch -D -q doomed && git reflog expire --expire=now --all && git gc -q --prune=now",
    );
    let plan = ws.store.plan_undo(&id, &[], &Options::default()).unwrap();
    assert!(
        plan.not_restorable
            .iter()
            .any(|n| n.path.to_string_lossy().contains("doomed")),
        "{:?}",
        plan.not_restorable
    );
    let report = ws.store.undo(&plan, &Options::default()).unwrap();
    assert!(
        report
            .not_restorable
            .iter()
            .any(|n| n.why.contains("no longer has"))
    );
    assert!(!ws.root().join(".git/refs/heads/doomed").exists());
    ws.sh("git fsck --no-dangling");
}

#[test]
fn a_git_file_pointing_elsewhere_is_used() {
    // A worktree: `.git` is a file naming the real git directory.
    let ws = repo();
    let wt = tempfile::tempdir().unwrap();
    let wt_path = wt.path().join("wt");
    ws.sh(&format!("git worktree add -q {} -b wtb", wt_path.display()));
    let state = tempfile::tempdir().unwrap();
    let store = crate::Store::open(state.path(), &wt_path).unwrap();
    let t = store
        .take(
            crate::Reason::SessionStart,
            &crate::Meta::default(),
            &Options::default(),
            None,
        )
        .unwrap();
    let crate::Taken::New(c) = t else { panic!() };
    assert!(c.git_kept, "{c:?}");
    fs::remove_file(wt_path.join("a.txt")).unwrap();
    let plan = store.plan_undo(&c.id, &[], &Options::default()).unwrap();
    store.undo(&plan, &Options::default()).unwrap();
    assert!(wt_path.join("a.txt").exists());
}
