//! What reaches outside: symlinks that point out of the repository, large
//! files and executable binaries.

use std::path::{Component, Path, PathBuf};

use crate::catalog::finding;
use crate::walk::{Entry, FileView, ScanContext};
use crate::{Finding, Severity};

/// Files larger than this are reported.
pub(crate) const LARGE_FILE: u64 = 50 * 1024 * 1024;

/// Lexically resolves `target` of a link at `link` (nothing is followed).
fn resolve(link: &Path, target: &Path) -> PathBuf {
    let base = if target.is_absolute() {
        PathBuf::from("/")
    } else {
        link.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let mut out = base;
    for c in target.components() {
        match c {
            Component::RootDir => out = PathBuf::from("/"),
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

pub(crate) fn check_symlink(e: &Entry, ctx: &ScanContext, out: &mut Vec<Finding>) {
    let Ok(target) = std::fs::read_link(&e.abs) else {
        return;
    };
    let resolved = resolve(&e.abs, &target);
    if resolved.starts_with(ctx.root) {
        return;
    }
    // In `~/…` form, the way aq-policy names credential places.
    let tilde = match ctx.options.home.as_deref() {
        Some(home) if resolved == home => "~".to_string(),
        Some(home) => match resolved.strip_prefix(home) {
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => resolved.display().to_string(),
        },
        None => resolved.display().to_string(),
    };
    let sensitive = resolved == Path::new("/")
        || aq_policy::paths::secret_kind(&tilde).is_some()
        || aq_policy::paths::secret_dir(&tilde).is_some()
        || aq_policy::paths::credential_location(&tilde)
        || [
            "/etc",
            "/root",
            "/proc",
            "/sys",
            "/dev",
            "/var/run/docker.sock",
            "/run/docker.sock",
        ]
        .iter()
        .any(|p| resolved.starts_with(p));
    let severity = if sensitive {
        Severity::Critical
    } else if tilde.starts_with('~') {
        Severity::High
    } else {
        Severity::Medium
    };
    out.push(finding(
        "link-outside-repo",
        severity,
        &e.rel,
        0,
        format!("symlink to `{tilde}`"),
        format!("{} -> {}", e.rel, target.display()),
    ));
}

/// Executable formats by their first bytes.
fn binary_format(b: &[u8]) -> Option<&'static str> {
    match b {
        [0x7f, b'E', b'L', b'F', ..] => Some("ELF executable"),
        [0xfe, 0xed, 0xfa, 0xce | 0xcf, ..] | [0xce | 0xcf, 0xfa, 0xed, 0xfe, ..] => {
            Some("Mach-O executable")
        }
        [0xca, 0xfe, 0xba, 0xbe, 0x00, ..] => Some("Mach-O universal binary"),
        [b'M', b'Z', ..] => Some("Windows executable"),
        _ => None,
    }
}

pub(crate) fn check_file(f: &FileView, out: &mut Vec<Finding>) {
    if f.text.is_none()
        && let Some(format) = binary_format(f.bytes)
    {
        let severity = if f.executable {
            Severity::Medium
        } else {
            Severity::Low
        };
        out.push(finding(
            "file-executable-binary",
            severity,
            f.rel,
            0,
            format!("{format} ({} bytes)", f.size),
            format!(
                "{format}{}",
                if f.executable {
                    ", executable bit set"
                } else {
                    ""
                }
            ),
        ));
    }
    if f.size > LARGE_FILE {
        out.push(finding(
            "file-large",
            Severity::Low,
            f.rel,
            0,
            format!("{} MiB file", f.size / (1024 * 1024)),
            format!("{} bytes", f.size),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{by_id, scan_with};

    #[test]
    fn symlinks_out_of_the_repo() {
        let found = scan_with(&[("docs/a.md", "x")], |root, home| {
            let ln = |t: &Path, l: &str| std::os::unix::fs::symlink(t, root.join(l)).unwrap();
            ln(&home.join(".ssh"), "keys");
            ln(Path::new("/"), "rootfs");
            ln(Path::new("/usr/share/doc"), "doc");
            ln(Path::new("docs/a.md"), "inside");
            ln(Path::new("../../a.md"), "docs/up");
        });
        let got = by_id(&found, "link-outside-repo");
        assert_eq!(got.len(), 4, "{found:#?}");
        assert_eq!(
            found
                .iter()
                .filter(|f| f.severity == Severity::Critical)
                .count(),
            2,
            "{found:#?}"
        );
        assert!(!found.iter().any(|f| f.path == "inside"));
    }

    #[test]
    fn binaries_and_scripts() {
        let found = scan_with(&[("bin/tool.sh", "#!/bin/sh\necho hi\n")], |root, _| {
            use std::os::unix::fs::PermissionsExt;
            let p = root.join("bin/tool");
            std::fs::write(&p, b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(
                root.join("bin/tool.sh"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
            std::fs::write(root.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
        });
        assert_eq!(
            by_id(&found, "file-executable-binary"),
            vec![(Severity::Medium, 0)],
            "{found:#?}"
        );
        assert_eq!(found.len(), 1, "{found:#?}");
    }
}
