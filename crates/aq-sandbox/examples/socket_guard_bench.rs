//! The socket guard's cost: a Python loop of `connect`s in the sandbox to
//! its own listeners (a Unix socket in the workspace and TCP on its own
//! loopback), with the guard and without it, in the same run.
//!
//! ```text
//! cargo run --release -p aq-sandbox --example socket_guard_bench -- [rounds] [connects]
//! ```
//!
//! Each round runs both modes with `connects` iterations and with 0; a
//! mode's loop time is the median of the first minus the median of the
//! second (setup and teardown cancel out). Prints every raw run, then the
//! medians per connect and the ratio.

use std::ffi::OsString;
use std::time::Instant;

use aq_sandbox::{SandboxSpec, SocketGuardMode, run_sandboxed};

const SCRIPT: &str = r#"
import os, socket, sys
n = int(sys.argv[1])
path = os.path.join(sys.argv[2], "bench.sock")
try: os.unlink(path)
except FileNotFoundError: pass
u = socket.socket(socket.AF_UNIX); u.bind(path); u.listen(16)
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(16)
addr = t.getsockname()
# Each connection is accepted at once, in this thread: a backlog that
# fills up (a TCP SYN dropped and sent again a second later) is not timed.
for i in range(n):
    c = socket.socket(socket.AF_UNIX); c.connect(path); a, _ = u.accept(); a.close(); c.close()
    c = socket.socket(); c.connect(addr); a, _ = t.accept(); a.close(); c.close()
"#;

fn run(spec: &SandboxSpec, n: u32) -> f64 {
    let argv: Vec<OsString> = vec![
        "/usr/bin/python3".into(),
        "-c".into(),
        SCRIPT.into(),
        n.to_string().into(),
        spec.workspace.clone().into(),
    ];
    let started = Instant::now();
    let ok = run_sandboxed(spec, &argv).is_ok_and(|s| s.success());
    assert!(ok, "{:?} with {n} connects failed", spec.socket_guard);
    started.elapsed().as_secs_f64() * 1e3
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let connects: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let dir = std::env::temp_dir().join(format!("aq-socket-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let mut guarded = SandboxSpec::strict(&dir);
    guarded.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    guarded.writable = vec!["/dev/null".into()];
    let mut bare = guarded.clone();
    bare.socket_guard = SocketGuardMode::Off;
    let specs = [("unguarded", &bare), ("guarded", &guarded)];
    for (_, s) in specs {
        run(s, 10);
    }
    let mut full = [vec![], vec![]];
    let mut empty = [vec![], vec![]];
    println!("round mode       {connects}x2-connects-ms  0-connects-ms");
    for r in 0..rounds {
        for (i, (name, s)) in specs.iter().enumerate() {
            let a = run(s, connects);
            let b = run(s, 0);
            println!("{r:5} {name:10} {a:18.2} {b:14.2}");
            full[i].push(a);
            empty[i].push(b);
        }
    }
    println!();
    let per: Vec<f64> = (0..2)
        .map(|i| (median(&full[i]) - median(&empty[i])) * 1e3 / f64::from(connects * 2))
        .collect();
    for (i, (name, _)) in specs.iter().enumerate() {
        println!(
            "{name:10} {:7.1} us per connect (setup+teardown {:.2} ms)",
            per[i],
            median(&empty[i])
        );
    }
    println!(
        "guarded vs unguarded: +{:.1} us per connect, ratio {:.2}x",
        per[1] - per[0],
        per[1] / per[0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
