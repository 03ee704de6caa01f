//! Prints every verdict on every line of labeled sets (JSONL with `cmd`),
//! whole, as JSON: under the built-in policy and under a policy that knows
//! its workspace. Diff two builds' output to see that no decision moved.
//! `cargo run --release -p aq-policy --example dump_verdicts -- FILE.jsonl ...`
use aq_policy::Engine;

fn main() {
    let plain = Engine::default();
    let in_project = Engine::new(aq_policy::Policy {
        workspace: Some("/home/dev/src/project".into()),
        ..Default::default()
    });
    for file in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&file).expect("read the set");
        for (i, l) in text.lines().enumerate() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else {
                continue;
            };
            let Some(cmd) = v["cmd"].as_str() else {
                continue;
            };
            for (name, engine) in [("plain", &plain), ("project", &in_project)] {
                let verdict = engine.evaluate(cmd);
                println!(
                    "{file}:{} {name} {}",
                    i + 1,
                    serde_json::to_string(&verdict).expect("verdict as JSON")
                );
            }
        }
    }
}
