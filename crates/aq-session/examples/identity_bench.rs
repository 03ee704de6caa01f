//! The exec judge's identity check, alone (no kernel, no sandbox): what the
//! judge does per exec before the policy engine, for (a) a system binary,
//! (b) a binary in the workspace, the first time and cached, and the index
//! built at the session's start, listed or from the last session's record.
//! Run by `bench/exec-guard/identity.sh`.
//!
//!   identity_bench [rounds]        (default 2000)

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use aq_session::exec_identity::{Identifier, Places, Subject};

/// What `SessionExecJudge::look` does for one exec: the identity, then the
/// place and the trusted entries when the file is not an indexed tool.
fn look(id: &Identifier, places: &Places, exe: &Path, argv: &[String]) -> String {
    let m = std::fs::metadata(exe).expect("stat");
    let s = Subject {
        executable: exe,
        dev_ino: (m.dev(), m.ino()),
        pid: std::process::id(),
        at_commit: false,
    };
    if id.is_installed(s.dev_ino) {
        return id.identify(&s, argv, false).0.argv[0].clone();
    }
    let meta = s.metadata();
    let place = places.classify(exe, meta.as_ref());
    let (identified, _) = id.identify(&s, argv, place.is_some());
    let _ = places.trusted_by(exe);
    identified.argv[0].clone()
}

fn stats(label: &str, mut v: Vec<Duration>) {
    v.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = v.iter().map(|d| us(*d)).sum::<f64>() / v.len() as f64;
    println!(
        "{label:58} n={:5}  median {:8.1} µs  p90 {:8.1} µs  mean {:8.1} µs",
        v.len(),
        us(v[v.len() / 2]),
        us(v[v.len() * 9 / 10]),
        mean
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .chain(["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(Into::into))
        .collect();
    let mut index = Vec::new();
    let mut id = None;
    for _ in 0..5 {
        let t = Instant::now();
        id = Some(Identifier::new(dirs.iter().map(PathBuf::as_path)));
        index.push(t.elapsed());
    }
    let id = id.unwrap();
    println!(
        "index: {} files over {} PATH directories",
        id.len(),
        dirs.len()
    );
    stats("index build at the first exec, listed", index);
    // The same index from the record of the last session (directories
    // unchanged: no listing, no `stat` but of links).
    let (_, record) = Identifier::remembered(dirs.iter().map(PathBuf::as_path), None);
    let mut remembered = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let (again, _) = Identifier::remembered(dirs.iter().map(PathBuf::as_path), Some(&record));
        remembered.push(t.elapsed());
        assert_eq!(again.len(), id.len());
    }
    stats("index from the last session's record", remembered);

    let ws = tempfile::tempdir().expect("scratch workspace");
    let tmp = ws.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let trusted: Vec<String> = aq_policy::exec_trust::BUILD_OUTPUTS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let places = Places::new(
        ws.path(),
        &[ws.path().to_path_buf()],
        Some(&tmp),
        SystemTime::now(),
        &trusted,
        None,
    );
    let argv = |w: &str| vec![w.to_string(), "--version".to_string()];

    // (a) system binaries: an indexed tool, and one no table names.
    for (label, exe) in [
        (
            "(a) system binary, indexed tool (/usr/bin/curl)",
            "/usr/bin/curl",
        ),
        (
            "(a) system binary, not indexed (/usr/bin/true)",
            "/usr/bin/true",
        ),
    ] {
        let exe = Path::new(exe);
        if !exe.exists() {
            continue;
        }
        let v = (0..rounds)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(look(&id, &places, exe, &argv("x")));
                t.elapsed()
            })
            .collect();
        stats(label, v);
    }

    // (b) binaries in the workspace: `n` distinct files (new inodes), each
    // looked at once (first), then again (cached).
    let n = rounds.min(300);
    let sources = [
        (
            "unknown ELF (/usr/bin/true copied, 1 byte appended)",
            "/usr/bin/true",
            true,
            "",
        ),
        ("altered rm (1 byte appended)", "/bin/rm", true, ""),
        ("exact copy of rm", "/bin/rm", false, ""),
        (
            "unknown ELF under target/ (trusted)",
            "/usr/bin/true",
            true,
            "target/debug/",
        ),
    ];
    for (label, src, append, dir) in sources {
        let bytes = {
            let mut b = std::fs::read(src).expect("read the source binary");
            if append {
                b.push(b'x');
            }
            b
        };
        let files: Vec<PathBuf> = (0..n)
            .map(|i| {
                let p = ws.path().join(format!("{dir}f{i}-{}", label.len()));
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, &bytes).unwrap();
                p
            })
            .collect();
        let mut name = String::new();
        let first = files
            .iter()
            .map(|f| {
                let t = Instant::now();
                name = std::hint::black_box(look(&id, &places, f, &argv("f")));
                t.elapsed()
            })
            .collect();
        stats(&format!("(b) {label}: first  -> {name}"), first);
        let cached = (0..rounds)
            .map(|i| {
                let f = &files[i % files.len()];
                let t = Instant::now();
                std::hint::black_box(look(&id, &places, f, &argv("f")));
                t.elapsed()
            })
            .collect();
        stats(&format!("(b) {label}: cached"), cached);
    }
}
