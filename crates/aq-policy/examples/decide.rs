//! Prints the verdict on each argument: `cargo run --example decide -- 'LINE'`.
fn main() {
    for line in std::env::args().skip(1) {
        let v = aq_policy::evaluate(&line);
        println!("{:5} {line}", v.decision.as_str());
        for r in &v.rules {
            println!("      {} [{}] {}", r.id, r.action.as_str(), r.evidence);
        }
    }
}
