//! Creating the shim directory.

use std::io;
use std::path::Path;

/// The programs every session shims (the list users were promised).
pub const DEFAULT_SHIMS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "php",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "bun",
    "pip",
    "pip3",
    "uv",
    "cargo",
    "go",
    "make",
    "curl",
    "wget",
    "git",
    "ssh",
    "scp",
    "rsync",
    "nc",
    "ncat",
    "socat",
    "dig",
    "nslookup",
    "env",
    "sudo",
    "doas",
    "xargs",
    "timeout",
    "nohup",
    "setsid",
    "script",
    "chmod",
    "chown",
    "base64",
    "openssl",
    "tar",
    "zip",
    "crontab",
    "launchctl",
    "systemctl",
    "awk",
    "sed",
    "rm",
    "cat",
    "cp",
    "mv",
    "ls",
    "pwd",
    "grep",
    "rg",
    "find",
    "head",
    "tail",
    "less",
    "more",
    "tee",
    "touch",
    "mkdir",
    "ln",
    "dd",
];

/// Creates `dir` (mode 0700) with a symbolic link to `aq_exe` for every name
/// in `names`. Names with a `/`, empty names and `aq` itself are refused.
pub fn install_shims<'a>(
    dir: &Path,
    aq_exe: &Path,
    names: impl IntoIterator<Item = &'a str>,
) -> io::Result<Vec<String>> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let mut installed = Vec::new();
    for name in names {
        if name.is_empty() || name.contains('/') || name == "aq" || name == "." || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{name}` cannot be a shim name"),
            ));
        }
        if installed.iter().any(|n| n == name) {
            continue;
        }
        let link = dir.join(name);
        match std::os::unix::fs::symlink(aq_exe, &link) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&link)?;
                std::os::unix::fs::symlink(aq_exe, &link)?;
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create shim {}: {e}", link.display()),
                ));
            }
        }
        installed.push(name.to_string());
    }
    Ok(installed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shims_link_to_aq() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("shims");
        let names = install_shims(
            &dir,
            Path::new("/usr/bin/aq"),
            DEFAULT_SHIMS.iter().copied(),
        )
        .unwrap();
        assert_eq!(names.len(), DEFAULT_SHIMS.len());
        assert_eq!(
            std::fs::read_link(dir.join("curl")).unwrap(),
            Path::new("/usr/bin/aq")
        );
        assert!(install_shims(&dir, Path::new("/usr/bin/aq"), ["../x"]).is_err());
    }
}
