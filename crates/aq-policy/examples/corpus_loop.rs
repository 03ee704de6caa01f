//! Decides every line of the development corpus N times (default 20): a
//! steady workload for profilers (`valgrind --tool=callgrind`, `perf`),
//! whose instruction counts do not move with the machine's load the way
//! timings do. `cargo run --release -p aq-policy --example corpus_loop -- [N]`
fn main() {
    let path = std::env::var("AQ_CORPUS").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus/dev.jsonl"
        )
        .to_string()
    });
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let text = std::fs::read_to_string(&path).expect("read the corpus");
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["cmd"].as_str().map(str::to_string)
        })
        .collect();
    let engine = aq_policy::Engine::default();
    let mut blocks = 0;
    for _ in 0..rounds {
        for l in &lines {
            if engine.evaluate(l).decision == aq_policy::Decision::Block {
                blocks += 1;
            }
        }
    }
    println!("{} lines x {rounds}: {blocks} blocks", lines.len());
}
