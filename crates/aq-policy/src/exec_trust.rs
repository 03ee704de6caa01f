//! Build outputs the exec guard runs without asking (`[session] trusted_exec`).
//!
//! Under `aq run` a native program the guard does not recognise, run from a
//! place the session can write (the workspace, a temporary directory, a
//! memfd, a file changed during the session), asks (`exec-unknown-native`):
//! it may be a renamed or altered copy of a tool, or a downloaded binary.
//! What builds produce and then run (cargo's `target/`, `go test`'s
//! binaries, npm packages' native tools) is not that, and must not ask:
//! [`BUILD_OUTPUTS`] lists those places, and a user's policy adds more.
//!
//! Entries are globs (`*` within one path component, `**` any directories,
//! `?`, `[...]`; a leading `.` needs no literal dot), anchored by how they
//! start:
//!
//! - `target/**`: relative to the workspace;
//! - `$TMPDIR/go-build*/**`: beneath the session's own `TMPDIR`;
//! - `/opt/tools/**`, `~/bin/*`: absolute (`~/` is the home directory).
//!
//! `!ENTRY` removes an entry in force (a built-in one, or one of an earlier
//! file). A repository's policy file may remove entries, never add them
//! (see `config.rs`).
//!
//! Pure: paths come in as strings, nothing is read here.

use glob::{MatchOptions, Pattern};

pub use crate::error::EntryError;

/// Where build tools put what they then run, relative to the workspace
/// unless written otherwise. Sorted by ecosystem; keep each entry to a
/// directory a build tool creates and fills itself.
pub const BUILD_OUTPUTS: &[&str] = &[
    // Rust: cargo (build scripts, tests, `cargo run`).
    "**/target/**",
    // Go: `go run` and `go test` build in a temporary directory.
    "$TMPDIR/go-build*/**",
    // JavaScript: native tools shipped in packages (esbuild, swc, turbo, ...).
    "**/node_modules/**",
    // Python: virtual environments and test environments.
    "**/.venv/**",
    "**/venv/**",
    "**/.tox/**",
    "**/.nox/**",
    // C, C++ and friends: CMake, Meson, Make, autotools, libtool.
    "**/build/**",
    "**/_build/**",
    "**/builddir/**",
    "**/out/**",
    "**/cmake-build-*/**",
    "**/CMakeFiles/**",
    "**/meson-private/**",
    "**/.libs/**",
    "**/conftest",
    // Zig, Haskell (cabal, stack), Swift, .NET, Bazel.
    "**/zig-out/**",
    "**/.zig-cache/**",
    "**/zig-cache/**",
    "**/dist-newstyle/**",
    "**/.stack-work/**",
    "**/.build/**",
    "**/bin/Debug/**",
    "**/bin/Release/**",
    "bazel-*/**",
    "~/.cache/bazel/**",
    // Release builds and packagers (goreleaser, PyInstaller, ...).
    "**/dist/**",
];

/// The prefix of an entry anchored at the session's `TMPDIR`.
pub(crate) const TMPDIR_PREFIX: &str = "$TMPDIR/";

/// How to write an entry, for messages.
pub(crate) const ENTRY_HELP: &str = "write a glob relative to the workspace (`tools/bin/*`), beneath the session's TMPDIR (`$TMPDIR/go-build*/**`) or absolute (`/opt/tools/**`, `~/bin/*`); `!ENTRY` removes an entry in force";

/// Checks one `trusted_exec` entry (a `!` removal included).
pub fn check_entry(entry: &str) -> Result<(), EntryError> {
    let body = entry.strip_prefix('!').unwrap_or(entry);
    if body.trim().is_empty() {
        return Err(EntryError::EmptyTrustedExec);
    }
    if body != body.trim() {
        return Err(EntryError::Spaces {
            entry: entry.to_string(),
        });
    }
    let rest = body
        .strip_prefix(TMPDIR_PREFIX)
        .or_else(|| body.strip_prefix("~/"))
        .unwrap_or(body);
    if rest.contains('$') || rest.starts_with('~') {
        return Err(EntryError::Variable {
            entry: entry.to_string(),
        });
    }
    if rest.split('/').any(|c| c == "..") {
        return Err(EntryError::ParentDir {
            entry: entry.to_string(),
        });
    }
    Pattern::new(rest)
        .map(|_| ())
        .map_err(|e| EntryError::TrustedExecGlob {
            entry: entry.to_string(),
            why: e.msg,
        })
}

/// Where an executable is, as the patterns are anchored.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecPath<'a> {
    /// The whole path (symlinks resolved).
    pub absolute: &'a str,
    /// The path relative to the workspace, when beneath it.
    pub in_workspace: Option<&'a str>,
    /// The path relative to the session's `TMPDIR`, when beneath it.
    pub in_tmpdir: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Workspace,
    TmpDir,
    Absolute,
}

/// The entries in force, compiled.
#[derive(Debug, Clone, Default)]
pub struct TrustedExec {
    entries: Vec<(String, Anchor, Pattern)>,
}

impl TrustedExec {
    /// Compiles `entries` (as [`check_entry`] accepts them; others, and `!`
    /// removals, are skipped); `~/` is `home`, and an entry starting with it
    /// is skipped when there is none.
    pub fn new(entries: &[String], home: Option<&str>) -> TrustedExec {
        let home = home.map(|h| h.trim_end_matches('/'));
        let compiled = entries
            .iter()
            .filter(|e| !e.starts_with('!') && check_entry(e).is_ok())
            .filter_map(|e| {
                let (anchor, glob) = if let Some(rest) = e.strip_prefix(TMPDIR_PREFIX) {
                    (Anchor::TmpDir, rest.to_string())
                } else if let Some(rest) = e.strip_prefix("~/") {
                    (Anchor::Absolute, format!("{}/{rest}", home?))
                } else if e.starts_with('/') {
                    (Anchor::Absolute, e.clone())
                } else {
                    (Anchor::Workspace, e.clone())
                };
                Some((e.clone(), anchor, Pattern::new(&glob).ok()?))
            })
            .collect();
        TrustedExec { entries: compiled }
    }

    /// The entry (as written) that covers `path`, if any.
    pub fn covering(&self, path: &ExecPath<'_>) -> Option<&str> {
        let options = MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        self.entries.iter().find_map(|(entry, anchor, pattern)| {
            let subject = match anchor {
                Anchor::Workspace => path.in_workspace?,
                Anchor::TmpDir => path.in_tmpdir?,
                Anchor::Absolute => path.absolute,
            };
            pattern
                .matches_with(subject, options)
                .then_some(entry.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> TrustedExec {
        let list: Vec<String> = BUILD_OUTPUTS.iter().map(|s| s.to_string()).collect();
        TrustedExec::new(&list, Some("/home/u"))
    }

    fn in_ws(rel: &str) -> String {
        format!("/w/{rel}")
    }

    #[test]
    fn build_outputs_are_covered_and_other_workspace_files_are_not() {
        let t = defaults();
        let covered = [
            ("target/debug/app", "**/target/**"),
            ("target/debug/build/x-1/build-script-build", "**/target/**"),
            ("crates/a/target/release/a", "**/target/**"),
            ("node_modules/.bin/esbuild", "**/node_modules/**"),
            (
                "node_modules/@esbuild/linux-x64/bin/esbuild",
                "**/node_modules/**",
            ),
            (".venv/bin/ruff", "**/.venv/**"),
            ("build/app", "**/build/**"),
            ("cmake-build-debug/app", "**/cmake-build-*/**"),
            ("zig-out/bin/app", "**/zig-out/**"),
            ("conftest", "**/conftest"),
            ("src/.libs/lt-prog", "**/.libs/**"),
            ("bazel-bin/app/app", "bazel-*/**"),
        ];
        for (rel, want) in covered {
            let abs = in_ws(rel);
            let p = ExecPath {
                absolute: &abs,
                in_workspace: Some(rel),
                in_tmpdir: None,
            };
            assert_eq!(t.covering(&p), Some(want), "{rel}");
        }
        for rel in [
            "hello",
            "a.out",
            "tools/r",
            "src/main",
            "targets/x",
            "bin/x",
        ] {
            let abs = in_ws(rel);
            let p = ExecPath {
                absolute: &abs,
                in_workspace: Some(rel),
                in_tmpdir: None,
            };
            assert_eq!(t.covering(&p), None, "{rel}");
        }
    }

    #[test]
    fn entries_are_anchored_by_how_they_start() {
        let t = defaults();
        // `go test` builds beneath TMPDIR; the same name in the workspace
        // is not a go build.
        let go = ExecPath {
            absolute: "/s/tmp/go-build123/b001/x.test",
            in_workspace: None,
            in_tmpdir: Some("go-build123/b001/x.test"),
        };
        assert_eq!(t.covering(&go), Some("$TMPDIR/go-build*/**"));
        let ws = ExecPath {
            absolute: "/w/go-build1/x",
            in_workspace: Some("go-build1/x"),
            in_tmpdir: None,
        };
        assert_eq!(t.covering(&ws), None);
        // A workspace-relative entry never matches outside the workspace.
        let outside = ExecPath {
            absolute: "/tmp/target/x",
            in_workspace: None,
            in_tmpdir: None,
        };
        assert_eq!(t.covering(&outside), None);
        // `~/` is the home directory.
        let bazel = ExecPath {
            absolute: "/home/u/.cache/bazel/_bazel_u/1/execroot/app",
            ..ExecPath::default()
        };
        assert_eq!(t.covering(&bazel), Some("~/.cache/bazel/**"));
        let mine = TrustedExec::new(&["/opt/t/*".to_string(), "tools/*".to_string()], None);
        let opt = ExecPath {
            absolute: "/opt/t/x",
            ..ExecPath::default()
        };
        assert_eq!(mine.covering(&opt), Some("/opt/t/*"));
        let deeper = ExecPath {
            absolute: "/opt/t/a/x",
            ..ExecPath::default()
        };
        assert_eq!(mine.covering(&deeper), None, "`*` stays in one component");
    }

    #[test]
    fn entries_are_checked() {
        for ok in [
            "tools/bin/*",
            "$TMPDIR/go-build*/**",
            "/opt/x/**",
            "~/bin/*",
            "!**/node_modules/**",
        ] {
            assert_eq!(check_entry(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "!",
            " x",
            "$HOME/bin/*",
            "~root/bin/*",
            "../outside/*",
            "a/../../b",
            "[unclosed",
        ] {
            assert!(check_entry(bad).is_err(), "{bad:?}");
        }
        // Removals and bad entries compile to nothing.
        let t = TrustedExec::new(&["!tools/*".to_string(), "../x".to_string()], None);
        assert!(t.entries.is_empty());
    }
}
