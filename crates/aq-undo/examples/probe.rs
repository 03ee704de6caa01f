//! Times checkpoints of a directory: `probe WORKSPACE STATE [N]`.
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let store = aq_undo::Store::open(a[2].as_ref(), a[1].as_ref()).unwrap();
    let n: usize = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(1);
    let dirty_mode = std::env::var("DIRTY").is_ok();
    for i in 0..n {
        let mut d = aq_undo::Dirty::default();
        if dirty_mode {
            for k in 0..5 {
                let rel = std::path::PathBuf::from(format!("mod{}/sub{}", (i + k * 7) % 40, k));
                std::fs::write(
                    std::path::Path::new(&a[1]).join(&rel).join("file3.rs"),
                    format!("e {i} {k}"),
                )
                .unwrap();
                d.dirs.insert(rel);
            }
        }
        let t = Instant::now();
        let r = store
            .take(
                aq_undo::Reason::BeforeCommand,
                &Default::default(),
                &Default::default(),
                dirty_mode.then_some(&d),
            )
            .unwrap();
        println!("{:?} {}", t.elapsed(), matches!(r, aq_undo::Taken::New(_)));
    }
    // PRUNE=1: time a prune that keeps everything (it compresses the
    // stored packs that takes wrote).
    if std::env::var("PRUNE").is_ok() {
        let t = Instant::now();
        let r = store.prune(&Default::default()).unwrap();
        println!("prune {:?} freed {} bytes", t.elapsed(), r.bytes_freed);
    }
}
