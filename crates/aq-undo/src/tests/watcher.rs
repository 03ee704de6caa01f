//! The watcher sees writes and new directories; a checkpoint of only the
//! dirty directories equals a full walk.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::Ws;
use crate::{Options, Taken, Watcher, watch};

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

/// The inodes an inotify descriptor of this process watches, from the
/// kernel's `fdinfo` (empty when the descriptor is closed or not one).
fn watched_inodes(fd: i32) -> Vec<u64> {
    let text = fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("inotify "))
        .filter_map(|l| l.split("ino:").nth(1)?.split_whitespace().next())
        .filter_map(|h| u64::from_str_radix(h, 16).ok())
        .collect()
}

#[test]
fn a_stopped_watcher_gives_its_instance_away_and_counts_everything_as_changed() {
    use std::os::unix::fs::MetadataExt;
    let ws = Ws::new();
    ws.write("src/a.rs", "a\n");
    let w = Watcher::start(&ws.root(), &Options::default()).unwrap();
    ws.take();
    w.take();
    assert!(!w.changed());
    let fd = w.inotify_fd();
    let root = fs::metadata(ws.root()).unwrap().ino();
    // Positive control: the kernel shows the workspace's root watched here.
    assert!(
        watched_inodes(fd).contains(&root),
        "{:?}",
        watched_inodes(fd)
    );
    w.stop();
    // This process no longer holds the instance (its last close is the
    // child's), whatever the number now names.
    assert!(!watched_inodes(fd).contains(&root));
    // Nothing is watched any more: everything counts as changed, every
    // time.
    for _ in 0..2 {
        assert!(w.changed());
        assert!(w.take().overflow);
    }
    w.stop();
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

fn take_and_watch(ws: &Ws, opts: &Options) -> (crate::Result<Taken>, crate::Result<Watcher>) {
    ws.store
        .take_and_watch(crate::Reason::SessionStart, &crate::Meta::default(), opts)
}

/// A tree with an ignored directory, an ignored one on the way to an
/// included path, a nested `.gitignore` and a nested `.git`.
fn mixed_tree(ws: &Ws) -> Options {
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/a.rs", "a\n");
    ws.write("src/deep/er/b.rs", "b\n");
    ws.write("target/x", "x\n");
    ws.write("target/keep/y", "y\n");
    ws.write("target/other/z", "z\n");
    ws.write("web/.gitignore", "dist\n");
    ws.write("web/dist/app.js", "js\n");
    ws.write("web/src/app.ts", "ts\n");
    ws.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    ws.write("vendor/lib/c.rs", "c\n");
    fs::create_dir_all(ws.p("empty/dir")).unwrap();
    Options {
        include: vec![PathBuf::from("target/keep")],
        ..Options::default()
    }
}

#[test]
fn the_first_checkpoint_watches_what_the_watcher_would() {
    let ws = Ws::new();
    let opts = mixed_tree(&ws);
    let own = Watcher::start(&ws.root(), &opts).unwrap();
    let (taken, walked) = take_and_watch(&ws, &opts);
    let walked = walked.unwrap();
    assert!(matches!(taken.unwrap(), Taken::New(_)));
    let dirs = walked.watched_dirs();
    assert_eq!(dirs, own.watched_dirs());
    for d in ["", "src", "src/deep/er", "target", "target/keep", "web/src"] {
        assert!(dirs.contains(&PathBuf::from(d)), "{d:?} in {dirs:?}");
    }
    for d in ["target/other", "web/dist", "vendor/lib/.git"] {
        assert!(!dirs.contains(&PathBuf::from(d)), "{d:?} in {dirs:?}");
    }

    // Nothing changed since the walk; then a write, a new nested directory,
    // an ignored write, as with a watcher started on its own.
    let d = walked.take();
    assert!(d.dirs.is_empty() && !d.overflow, "{d:?}");
    assert!(!walked.changed());
    fs::write(ws.p("src/deep/er/b.rs"), "changed\n").unwrap();
    fs::write(ws.p("target/other/z"), "ignored\n").unwrap();
    fs::create_dir_all(ws.p("new/deep")).unwrap();
    fs::write(ws.p("new/deep/f"), "f\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    fs::write(ws.p("new/deep/later"), "later\n").unwrap();
    assert!(walked.changed());
    let d = walked.take();
    assert!(!d.overflow, "{d:?}");
    assert!(d.dirs.contains(&PathBuf::from("src/deep/er")), "{d:?}");
    assert!(d.dirs.contains(&PathBuf::from("new/deep")), "{d:?}");
    assert!(!d.dirs.contains(&PathBuf::from("target/other")), "{d:?}");
    let Taken::New(c) = ws.take_with(&opts, Some(&d)) else {
        panic!()
    };
    assert_eq!((c.changed.added, c.changed.modified), (2, 1), "{c:?}");
    let diff = ws.store.diff(&c.id, None, &opts).unwrap();
    assert!(diff.is_empty(), "dirty walk missed: {diff:?}");
    assert!(walked.watched_dirs().contains(&PathBuf::from("new/deep")));
}

/// Files made in a directory just before its watch is added and just
/// after (before it is listed), and in a directory listed already or not:
/// each is in the checkpoint or in what the watcher reports next.
#[test]
fn a_file_made_between_a_watch_and_its_listing_is_not_lost() {
    let ws = Ws::new();
    for i in 0..20 {
        ws.write(&format!("d{i:02}/f"), "f\n");
    }
    let root = ws.root();
    let made: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let seen = made.clone();
    let hook_root = root.clone();
    watch::set_test_hooks(
        &root,
        watch::TestHooks {
            around_watch: Some(Box::new(move |rel: &Path, watched: bool| {
                let Some(name) = rel.to_str().filter(|n| n.len() == 3) else {
                    return; // the root, and the directories made here
                };
                // In this directory (watched, not listed yet), and in the
                // one before it (listed or not, by now).
                let n: usize = name[1..].parse().unwrap();
                let mut made = seen.lock().unwrap();
                for dir in [format!("d{n:02}"), format!("d{:02}", n.saturating_sub(1))] {
                    let file = PathBuf::from(dir).join(format!("late-{name}-{watched}"));
                    fs::write(hook_root.join(&file), "late\n").unwrap();
                    made.push(file);
                }
                let sub = PathBuf::from(name).join(format!("sub-{watched}"));
                fs::create_dir_all(hook_root.join(&sub)).unwrap();
                fs::write(hook_root.join(&sub).join("g"), "g\n").unwrap();
                made.push(sub.join("g"));
            })),
            max_watches: None,
        },
    );
    let (taken, w) = take_and_watch(&ws, &Options::default());
    let Taken::New(first) = taken.unwrap() else {
        panic!()
    };
    let w = w.unwrap();
    let d = w.take();
    let in_first: Vec<PathBuf> = ws
        .store
        .diff(&first.id, None, &Options::default())
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    let made = made.lock().unwrap().clone();
    assert_eq!(made.len(), 120);
    for f in &made {
        let dir = f.parent().unwrap();
        assert!(
            !in_first.contains(f) || d.dirs.contains(dir) || d.overflow,
            "{f:?}: neither in the checkpoint nor reported ({d:?})"
        );
    }
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        panic!()
    };
    same_tree(&ws, &c.id);
}

/// Files and directories made while the first checkpoint walks: what it
/// did not list, the watcher reports.
#[test]
fn writes_during_the_first_walk_are_all_seen() {
    let ws = Ws::new();
    for i in 0..40 {
        for j in 0..25 {
            ws.write(&format!("d{i:02}/e{}/f{j}", i % 3), "f\n");
        }
    }
    let root = ws.root();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let i = n % 40;
                let dir = root.join(format!("d{i:02}/e{}", i % 3));
                fs::write(dir.join(format!("new{n}")), "n\n").unwrap();
                if n % 7 == 0 {
                    let sub = root.join(format!("d{i:02}/s{n}"));
                    fs::create_dir(&sub).unwrap();
                    fs::write(sub.join("g"), "g\n").unwrap();
                }
                n += 1;
            }
            n
        })
    };
    let (taken, w) = take_and_watch(&ws, &Options::default());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(written > 0);
    taken.unwrap();
    let w = w.unwrap();
    let d = w.take();
    let Taken::New(c) = ws.take_with(&Options::default(), Some(&d)) else {
        // Every write landed before its directory was listed.
        assert!(d.dirs.is_empty() || !d.overflow);
        return;
    };
    same_tree(&ws, &c.id);
}

/// At the watch limit, the checkpoint is taken all the same and the
/// watcher is refused with the hint.
#[test]
fn the_watch_limit_in_the_first_walk_refuses_the_watcher_only() {
    let ws = Ws::new();
    for i in 0..10 {
        ws.write(&format!("d{i}/f"), "f\n");
    }
    watch::set_test_hooks(
        &ws.root(),
        watch::TestHooks {
            around_watch: None,
            max_watches: Some(4),
        },
    );
    let (taken, w) = take_and_watch(&ws, &Options::default());
    let Taken::New(c) = taken.unwrap() else {
        panic!()
    };
    assert_eq!(c.changed.added, 10);
    let e = w.err().expect("the watcher is refused").to_string();
    assert!(
        e.starts_with(
            "cannot watch the workspace: the inotify watch limit (fs.inotify.max_user_watches = "
        ),
        "{e}"
    );
    assert!(
        e.contains("sudo sysctl fs.inotify.max_user_watches="),
        "{e}"
    );
    // The same message as a watcher started on its own.
    let own = Watcher::start(&ws.root(), &Options::default())
        .err()
        .expect("refused")
        .to_string();
    assert_eq!(own, e);
}
