//! A checkpoint in a generated 20,000-file, ~100 MB workspace (the
//! size docs/undo.md states costs for): the first one, a later one after a handful of edits with a
//! full walk (stat cache) and with a watcher's dirty set, and an undo of ten
//! deleted files.
//!
//! `cargo bench -p aq-undo --bench checkpoint`

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aq_undo::{Dirty, Meta, Options, Reason, Store};
use criterion::{Criterion, criterion_group, criterion_main};

const TOP: usize = 40;
const SUB: usize = 25;
const FILES: usize = 20;
const FILE_BYTES: usize = 5_000;

/// Source-like text: compresses about as well as code does.
fn content(seed: usize) -> Vec<u8> {
    let mut x = seed as u64 * 6364136223846793005 + 1442695040888963407;
    let mut out = Vec::with_capacity(FILE_BYTES + 64);
    while out.len() < FILE_BYTES {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        let word = [
            "fn", "let", "mut", "self", "match", "Some", "None", "Ok", "impl", "pub",
        ][(x >> 33) as usize % 10];
        out.extend_from_slice(word.as_bytes());
        out.extend_from_slice(format!(" v{} ", (x >> 40) % 1000).as_bytes());
        if (x >> 20).is_multiple_of(8) {
            out.push(b'\n');
        }
    }
    out
}

fn generate(root: &Path) {
    let mut n = 0;
    for t in 0..TOP {
        for s in 0..SUB {
            let dir = root.join(format!("mod{t}/sub{s}"));
            fs::create_dir_all(&dir).unwrap();
            for f in 0..FILES {
                fs::write(dir.join(format!("file{f}.rs")), content(n)).unwrap();
                n += 1;
            }
        }
    }
    fs::write(root.join(".gitignore"), "target/\n").unwrap();
}

fn open(state: &Path, ws: &Path) -> Store {
    Store::open(state, ws).unwrap()
}

fn take(store: &Store, dirty: Option<&Dirty>) {
    store
        .take(
            Reason::BeforeCommand,
            &Meta::default(),
            &Options::default(),
            dirty,
        )
        .unwrap();
}

/// Edits five files in five directories; returns those directories.
fn edit(root: &Path, round: usize) -> Dirty {
    let mut dirty = Dirty::default();
    for i in 0..5 {
        let rel = PathBuf::from(format!("mod{}/sub{}", (round + i * 7) % TOP, i));
        fs::write(
            root.join(&rel).join("file3.rs"),
            format!("edit {round} {i}\n"),
        )
        .unwrap();
        dirty.dirs.insert(rel);
    }
    dirty
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    generate(ws.path());
    let mut g = c.benchmark_group("checkpoint-20k");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("first", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let state = tempfile::tempdir().unwrap();
                let store = open(state.path(), ws.path());
                let t = Instant::now();
                take(&store, None);
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();

    let state = tempfile::tempdir().unwrap();
    let store = open(state.path(), ws.path());
    take(&store, None);
    // Past the racy window, so the stat cache is trusted.
    std::thread::sleep(Duration::from_millis(100));
    take(&store, None);
    let mut g = c.benchmark_group("checkpoint-20k-later");
    g.sample_size(30);
    let mut round = 0;
    g.bench_function("full-walk", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                edit(ws.path(), round);
                let t = Instant::now();
                take(&store, None);
                total += t.elapsed();
            }
            total
        })
    });
    g.bench_function("dirty", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                let dirty = edit(ws.path(), round);
                let t = Instant::now();
                take(&store, Some(&dirty));
                total += t.elapsed();
            }
            total
        })
    });
    g.bench_function("undo-10-files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                take(&store, None);
                let id = store.list().unwrap().checkpoints.last().unwrap().id.clone();
                for i in 0..10 {
                    fs::remove_file(ws.path().join(format!("mod{i}/sub{i}/file{i}.rs"))).unwrap();
                }
                let t = Instant::now();
                let plan = store.plan_undo(&id, &[], &Options::default()).unwrap();
                store.undo(&plan, &Options::default()).unwrap();
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
