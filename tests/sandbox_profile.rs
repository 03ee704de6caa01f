//! `aq sandbox-profile`: the Seatbelt profile of each built-in profile and
//! of two agent presets, compared with the files in `tests/golden/seatbelt/`
//! (`UPDATE_GOLDEN=1` writes them again; review the diff before committing).
//!
//! The fake home, config, state and workspace live under Cargo's target
//! temporary directory, not `/tmp`: a home under a system directory the
//! sandbox reads (`/tmp`) would have that directory listed entry by entry.
//! Their root prints as `/FAKE` and aq's own directory as `/AQ_BIN`. The
//! masks found by looking at the host (its `/tmp/ssh-*` agent directories,
//! the resolver's sockets) are left out of the comparison, and the masks are
//! compared in the order of their printed paths (the profile orders them by
//! the real ones, which depends on where the checkout is).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::aq_exe;

/// Masks that depend on the host running the test, not on aq.
const HOST_MASKS: &[&str] = &[
    "/tmp/",
    "/run/nscd",
    "/var/run/nscd",
    "/run/systemd/resolve",
];

/// System directories whose entries the spec lists one by one when the
/// home lies inside one (see the module's comment).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/etc", "/opt", "/dev", "/proc", "/sys", "/run", "/var",
    "/tmp", "/srv", "/nix", "/snap", "/gnu",
];

struct Fake {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fake {
    fn new() -> Fake {
        let dir = tempfile::Builder::new()
            .prefix("aq-seatbelt-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("create a scratch directory");
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["home", "config", "state", "work/.git"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Fake { _dir: dir, root }
    }

    /// `aq sandbox-profile ARGS` with nothing of the caller's environment.
    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = Command::new(aq_exe())
            .arg("sandbox-profile")
            .args(args)
            .current_dir(self.root.join("work"))
            .env_clear()
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("run aq");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The profile with the machine's paths replaced and the host's own
    /// masks left out.
    fn normalize(&self, text: &str) -> String {
        let bin = Path::new(aq_exe())
            .parent()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let root = self.root.to_string_lossy();
        let text = text
            .replace(&*root, "/FAKE")
            .replace(&bin, "/AQ_BIN")
            .replace(&folded(&root), "/FAKE")
            .replace(&folded(&bin), "/AQ_BIN");
        // Split into blocks, each starting at a comment line; drop the
        // host's masks; put the mask blocks in order of their normalized
        // path. The profile sorts its masks by the real paths, so where the
        // scratch directory sorts among `/etc`, `/run` and `/var` depends on
        // the checkout's path; the masks are all denies after every allow,
        // so their order among themselves carries no meaning.
        let mut blocks: Vec<String> = Vec::new();
        for line in text.lines() {
            if line.starts_with(';') || line.is_empty() || blocks.is_empty() {
                blocks.push(String::new());
            }
            let block = blocks.last_mut().expect("a block was pushed");
            block.push_str(line);
            block.push('\n');
        }
        blocks.retain(|b| {
            !b.strip_prefix("; masked: ")
                .is_some_and(|p| HOST_MASKS.iter().any(|h| p.starts_with(h)))
        });
        let is_mask = |b: &String| b.starts_with("; masked: ");
        let mut out = String::new();
        let mut i = 0;
        while i < blocks.len() {
            if is_mask(&blocks[i]) {
                let start = i;
                while i < blocks.len() && is_mask(&blocks[i]) {
                    i += 1;
                }
                let mut run = blocks[start..i].to_vec();
                run.sort();
                out.extend(run);
            } else {
                out.push_str(&blocks[i]);
                i += 1;
            }
        }
        out
    }
}

/// `path` as the profile writes it inside a `(regex "...")`: each ASCII
/// letter in both cases, metacharacters escaped, the escapes doubled.
fn folded(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if c.is_ascii_alphabetic() {
            out.extend(['[', c.to_ascii_lowercase(), c.to_ascii_uppercase(), ']']);
        } else if "\\.^$|?*+()[]{}".contains(c) {
            out.push_str("\\\\");
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}

fn check_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/seatbelt")
        .join(format!("{name}.sb"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output, first at line {}:\n  golden: {:?}\n  output: {:?}\n(UPDATE_GOLDEN=1 writes it again; review the diff)",
            path.display(),
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

#[test]
fn sandbox_profile_matches_the_golden_files() {
    let fake = Fake::new();
    if let Some(dir) = SYSTEM_DIRS.iter().find(|d| fake.root.starts_with(d)) {
        aq_testkit::skip(&format!(
            "the target directory is under {dir}: the profile would list that directory's entries"
        ));
        return;
    }
    let cases: &[(&str, &[&str])] = &[
        ("strict", &["--profile", "strict"]),
        ("dev", &["--profile", "dev"]),
        ("network-isolated", &["--profile", "network-isolated"]),
        ("ci", &["--profile", "ci"]),
        (
            "strict-claude",
            &["--profile", "strict", "--agent", "claude"],
        ),
        ("strict-codex", &["--profile", "strict", "--agent", "codex"]),
    ];
    for (name, args) in cases {
        let args: Vec<&str> = ["--os", "macos"]
            .iter()
            .chain(args.iter())
            .copied()
            .collect();
        let (code, stdout, stderr) = fake.run(&args);
        assert_eq!(code, Some(0), "{name}: {stderr}");
        check_golden(name, &fake.normalize(&stdout));
    }
}

#[test]
fn sandbox_profile_refuses_what_has_no_profile() {
    let fake = Fake::new();
    let (code, stdout, stderr) = fake.run(&["--os", "macos", "--profile", "shims-only"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("profile `shims-only` has no sandbox"),
        "{stderr}"
    );
    let (code, _, stderr) = fake.run(&["--os", "linux"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("the Linux sandbox is not a profile file"),
        "{stderr}"
    );
    let (code, _, stderr) = fake.run(&["--os", "macos", "--agent", "nosuchagent"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown agent `nosuchagent`"), "{stderr}");
}
