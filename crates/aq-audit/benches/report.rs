//! How long reading a session back takes, for a busy session.
//!
//! Run with `cargo bench -p aq-audit --bench report`. A synthetic log of
//! 20,000 decided execs (one in 50 asked or blocked, each exec the child
//! of the one before, so the process tree is as deep as it gets) is folded
//! into a `Summary` (the floor every rendering pays), then rendered as
//! Markdown and as the HTML page. The ratios to the fold are what each
//! rendering adds.

use std::fmt::Write as _;
use std::hint::black_box;

use aq_audit::Summary;
use criterion::{Criterion, Throughput};

const EXECS: u64 = 20_000;

fn log() -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        r#"{{"seq":1,"ts":"2026-11-30T12:00:00.000Z","session":"bench","prev":"{}","event":"session_start","aq_version":"0.1.0","workspace":"/w","profile":"strict","policy_digest":"x","command":["bash"],"pid":1,"layers":["kernel sandbox: namespaces user,mount; Landlock ABI 7","network off"]}}"#,
        "0".repeat(64)
    );
    for i in 2..EXECS + 2 {
        let (decision, rules) = match i % 100 {
            0 => ("block", r#"["fs-rm-recursive-root"]"#),
            50 => ("ask", r#"["net-fetch"]"#),
            _ => ("allow", "[]"),
        };
        let ms = i * 7;
        let _ = writeln!(
            text,
            r#"{{"seq":{i},"ts":"2026-11-30T12:{:02}:{:02}.{:03}Z","session":"bench","prev":"{}","event":"command_decision","argv":["cmd{i}","--flag","<b>x</b>"],"cwd":"/w","pid":{},"ppid":{},"decision":"{decision}","rules":{rules},"why":null,"safer":null,"source":"exec-guard"}}"#,
            ms / 60_000,
            ms / 1000 % 60,
            ms % 1000,
            "0".repeat(64),
            1000 + i,
            999 + i,
        );
    }
    text
}

fn main() {
    let text = log();
    let summary = Summary::from_reader(text.as_bytes()).unwrap();
    let html = summary.to_html();
    eprintln!(
        "log: {} events, {} KiB; HTML page {} KiB; Markdown {} KiB",
        EXECS + 1,
        text.len() / 1024,
        html.len() / 1024,
        summary.to_markdown().len() / 1024
    );
    let mut c = Criterion::default().configure_from_args().sample_size(20);
    let mut g = c.benchmark_group("report of 20,000 execs");
    g.throughput(Throughput::Elements(EXECS));
    g.bench_function("fold the log", |b| {
        b.iter(|| Summary::from_reader(black_box(text.as_bytes())).unwrap())
    });
    g.bench_function("markdown", |b| b.iter(|| black_box(&summary).to_markdown()));
    g.bench_function("html", |b| b.iter(|| black_box(&summary).to_html()));
    g.finish();
    c.final_summary();
}
