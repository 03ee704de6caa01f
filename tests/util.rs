//! The harness: a scratch directory with its own home, config and state
//! directories and a git workspace, the real `aq` run inside it, and on
//! failure a dump of the command, directory, listing, stdout and stderr.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch home and workspace; removed when dropped.
pub struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// `home/`, `config/` (XDG_CONFIG_HOME), `state/` (XDG_STATE_HOME) and a
    /// workspace `work/` holding `.git`, so discovery stops there.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("aq-test-")
            .tempdir()
            .expect("create a scratch directory");
        let env = Env { dir };
        for d in ["home", "config", "state", "work/.git"] {
            std::fs::create_dir_all(env.root().join(d)).expect("create scratch dirs");
        }
        env
    }

    /// The scratch directory.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The workspace root, where `aq` runs.
    pub fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// `$XDG_CONFIG_HOME/agent-quarantine`.
    pub fn config_dir(&self) -> PathBuf {
        self.root().join("config/agent-quarantine")
    }

    /// The user policy file.
    pub fn user_policy(&self) -> PathBuf {
        self.config_dir().join("policy.toml")
    }

    /// The project policy file.
    pub fn project_policy(&self) -> PathBuf {
        self.work().join("agent-quarantine.toml")
    }

    /// Writes a file, creating its directory.
    pub fn write(&self, path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create parent directory");
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    /// Runs `aq ARGS` in the workspace root.
    pub fn aq(&self, args: &[&str]) -> Output {
        self.aq_in(&self.work(), args)
    }

    /// Runs `aq ARGS` in `cwd`.
    pub fn aq_in(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_aq"));
        cmd.args(args)
            .current_dir(cwd)
            .env("HOME", self.root().join("home"))
            .env("XDG_CONFIG_HOME", self.root().join("config"))
            .env("XDG_STATE_HOME", self.root().join("state"))
            .env_remove("RUST_BACKTRACE");
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        Output {
            command: format!("aq {}", shell_words(args)),
            cwd: cwd.to_path_buf(),
            listing: listing(self.root()),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// What one run of `aq` did.
pub struct Output {
    command: String,
    cwd: PathBuf,
    listing: String,
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// Everything about the run, for a failure message.
    pub fn dump(&self) -> String {
        format!(
            "\n--- command: {}\n--- cwd: {}\n--- exit code: {:?}\n--- files:\n{}--- stdout:\n{}\n--- stderr:\n{}\n---",
            self.command,
            self.cwd.display(),
            self.code,
            self.listing,
            self.stdout,
            self.stderr
        )
    }

    /// Asserts the exit code.
    #[track_caller]
    pub fn code(&self, want: i32) -> &Self {
        assert_eq!(self.code, Some(want), "unexpected exit code{}", self.dump());
        self
    }

    /// Asserts that stdout contains `want`.
    #[track_caller]
    pub fn stdout_has(&self, want: &str) -> &Self {
        assert!(
            self.stdout.contains(want),
            "stdout lacks {want:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stderr contains `want`.
    #[track_caller]
    pub fn stderr_has(&self, want: &str) -> &Self {
        assert!(
            self.stderr.contains(want),
            "stderr lacks {want:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stderr does not contain `unwanted`.
    #[track_caller]
    pub fn stderr_lacks(&self, unwanted: &str) -> &Self {
        assert!(
            !self.stderr.contains(unwanted),
            "stderr has {unwanted:?}{}",
            self.dump()
        );
        self
    }

    /// Stdout parsed as one JSON value.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}{}", self.dump()))
    }
}

fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every file and directory under `root`, one per line, relative.
fn listing(root: &Path) -> String {
    fn walk(root: &Path, dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            if p.is_dir() {
                out.push_str(&format!("  {rel}/\n"));
                walk(root, &p, out);
            } else {
                out.push_str(&format!("  {rel}\n"));
            }
        }
    }
    let mut out = String::new();
    walk(root, root, &mut out);
    out
}
