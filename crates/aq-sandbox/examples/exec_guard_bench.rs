//! The exec guard's cost: a shell loop of `/bin/true` in the sandbox, bare
//! and guarded (a judge that allows everything, so the mechanism is what is
//! measured), plus the same loop outside any sandbox for scale.
//!
//! ```text
//! cargo run --release -p aq-sandbox --example exec_guard_bench -- [rounds] [execs]
//! ```
//!
//! Each round runs every mode with `execs` iterations and with 0, in turn;
//! the loop's time is the median of the first minus the median of the
//! second (sandbox setup and teardown cancel out). Prints the raw
//! milliseconds of every run, then the medians.

use std::ffi::OsString;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use aq_sandbox::{
    ExecEvent, ExecGuardMode, ExecVerdict, SandboxSpec, run_sandboxed, run_sandboxed_guarded,
};

fn script(n: u32) -> String {
    format!("i=0; while [ $i -lt {n} ]; do /bin/true; i=$((i+1)); done")
}

fn argv(n: u32) -> Vec<OsString> {
    vec!["/bin/sh".into(), "-c".into(), script(n).into()]
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Host,
    Sandbox,
    Guarded,
}

fn run(mode: Mode, spec: &SandboxSpec, n: u32) -> f64 {
    let started = Instant::now();
    let ok = match mode {
        Mode::Host => Command::new("/bin/sh")
            .arg("-c")
            .arg(script(n))
            .status()
            .map(|s| s.success())
            .unwrap_or(false),
        Mode::Sandbox => run_sandboxed(spec, &argv(n))
            .map(|s| s.success())
            .unwrap_or(false),
        Mode::Guarded => {
            let mut spec = spec.clone();
            spec.exec_guard = ExecGuardMode::Required;
            let allow = |_: &ExecEvent| ExecVerdict::Allow;
            run_sandboxed_guarded(&spec, &argv(n), Arc::new(allow))
                .map(|s| s.success())
                .unwrap_or(false)
        }
    };
    assert!(ok, "{mode:?} with {n} execs failed");
    started.elapsed().as_secs_f64() * 1e3
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let execs: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(600);
    let dir = tempfile_dir();
    let mut spec = SandboxSpec::strict(&dir);
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.writable = vec!["/dev/null".into()];
    let modes = [Mode::Host, Mode::Sandbox, Mode::Guarded];
    // Warm up caches (and fail early).
    for m in modes {
        run(m, &spec, 10);
    }
    let mut full = [vec![], vec![], vec![]];
    let mut empty = [vec![], vec![], vec![]];
    println!("round mode      {execs}-execs-ms  0-execs-ms");
    for r in 0..rounds {
        for (i, m) in modes.iter().enumerate() {
            let a = run(*m, &spec, execs);
            let b = run(*m, &spec, 0);
            println!("{r:5} {:9} {a:12.2} {b:11.2}", format!("{m:?}"));
            full[i].push(a);
            empty[i].push(b);
        }
    }
    let loop_ms: Vec<f64> = (0..3)
        .map(|i| median(&full[i]) - median(&empty[i]))
        .collect();
    let per_exec_us: Vec<f64> = loop_ms.iter().map(|ms| ms * 1e3 / execs as f64).collect();
    println!();
    for (i, m) in modes.iter().enumerate() {
        println!(
            "{:9} loop {:8.2} ms  {:7.1} us/exec  (setup+teardown {:.2} ms)",
            format!("{m:?}"),
            loop_ms[i],
            per_exec_us[i],
            median(&empty[i])
        );
    }
    println!(
        "guarded vs sandbox: +{:.1} us per exec (median), ratio {:.3}x",
        per_exec_us[2] - per_exec_us[1],
        loop_ms[2] / loop_ms[1]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("aq-exec-guard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.canonicalize().unwrap()
}
