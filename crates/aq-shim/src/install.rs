//! Creating the shim directory.

use std::io;
use std::path::{Path, PathBuf};

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
    // aq itself: its verbs that loosen it (`aq allow`, `aq policy trust`)
    // are the agent switching its guard off.
    "aq",
];

/// Creates `dir` (mode 0700) with a symbolic link to `aq_exe` for every name
/// in `names`. Names with a `/`, empty names, `.` and `..` are refused.
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
        check_name(name)?;
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

/// The shim directory for `names`, each a link to `aq_exe`, shared by
/// every session that asks for the same: made once under `root`, then
/// checked and reused. Making ~50 links took 2 ms of each session's start
/// (a new inode each); checking them takes a tenth of that.
///
/// Its name is a digest of what it holds. One that does not hold exactly
/// that (a link changed, added or removed, another owner, writable by
/// others) is removed and made again; a concurrent session that made it
/// first wins the rename, and this one's copy is removed. Returns the
/// directory and the names, as [`install_shims`] does.
pub fn shared_shims<'a>(
    root: &Path,
    aq_exe: &Path,
    names: impl IntoIterator<Item = &'a str>,
) -> io::Result<(PathBuf, Vec<String>)> {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::DirBuilderExt;
    let mut wanted: Vec<&str> = Vec::new();
    for name in names {
        check_name(name)?;
        if !wanted.contains(&name) {
            wanted.push(name);
        }
    }
    let mut digest = sha2::Sha256::new();
    digest.update(aq_exe.as_os_str().as_bytes());
    for name in &wanted {
        digest.update([0]);
        digest.update(name.as_bytes());
    }
    let key: String = digest.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)?;
    let dir = root.join(key);
    let owned = || wanted.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    match holds_exactly(&dir, aq_exe, &wanted) {
        Ok(true) => return Ok((dir, owned())),
        Ok(false) => std::fs::remove_dir_all(&dir)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let tmp = root.join(format!(".new-{}-{nanos}", std::process::id()));
    let made = install_shims(&tmp, aq_exe, wanted.iter().copied())
        .and_then(|_| std::fs::rename(&tmp, &dir));
    if made.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another session's copy, made in between, serves as well.
        if !holds_exactly(&dir, aq_exe, &wanted)? {
            made?;
            return Err(io::Error::other(format!(
                "{} does not hold the shims it should",
                dir.display()
            )));
        }
    }
    Ok((dir, owned()))
}

/// Whether `dir` is a directory of this user's that no one else may write,
/// with a link to `aq_exe` for each of `names` and nothing else.
fn holds_exactly(dir: &Path, aq_exe: &Path, names: &[&str]) -> io::Result<bool> {
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: getuid cannot fail and touches no memory of ours.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || !owned_and_private(&meta, uid) {
        return Ok(false);
    }
    let mut seen = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Ok(false);
        };
        if !names.contains(&name) || !std::fs::read_link(entry.path()).is_ok_and(|t| t == aq_exe) {
            return Ok(false);
        }
        seen += 1;
    }
    Ok(seen == names.len())
}

/// Whether `meta` is the user `uid`'s and no one else may write it (no
/// group or other write bit): what aq trusts in its state directory.
pub(crate) fn owned_and_private(meta: &std::fs::Metadata, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == uid && meta.mode() & 0o022 == 0
}

/// A name a shim can have: not empty, no `/`, not `.` or `..`.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` cannot be a shim name"),
        ));
    }
    Ok(())
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

    fn link_inode(dir: &Path, name: &str) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(dir.join(name)).unwrap().ino()
    }

    #[test]
    fn shared_shims_are_made_once_and_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shims");
        let exe = Path::new("/usr/bin/aq-shim");
        let (dir, names) = shared_shims(&root, exe, ["git", "curl", "git"]).unwrap();
        assert_eq!(names, ["git", "curl"]);
        assert_eq!(std::fs::read_link(dir.join("curl")).unwrap(), exe);
        let before = link_inode(&dir, "git");
        let (again, _) = shared_shims(&root, exe, ["git", "curl"]).unwrap();
        assert_eq!(again, dir);
        assert_eq!(link_inode(&again, "git"), before, "made again");
        // Other names, or another binary: another directory.
        let (other, _) = shared_shims(&root, exe, ["git"]).unwrap();
        assert_ne!(other, dir);
        let (moved, _) = shared_shims(&root, Path::new("/opt/aq-shim"), ["git", "curl"]).unwrap();
        assert_ne!(moved, dir);
        // Nothing left over from making them.
        let left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        assert!(shared_shims(&root, exe, ["../x"]).is_err());
    }

    #[test]
    fn a_shared_shim_directory_that_was_changed_is_made_again() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shims");
        let exe = Path::new("/usr/bin/aq-shim");
        let names = ["git", "curl"];
        let (dir, _) = shared_shims(&root, exe, names).unwrap();
        let tamper: [&dyn Fn(&Path); 5] = [
            // A link that points elsewhere: a program that is not judged.
            &|d| {
                std::fs::remove_file(d.join("git")).unwrap();
                std::os::unix::fs::symlink("/tmp/evil", d.join("git")).unwrap();
            },
            // A file that is no link.
            &|d| {
                std::fs::remove_file(d.join("git")).unwrap();
                std::fs::write(d.join("git"), "#!/bin/sh\n").unwrap();
            },
            // One more name, or one fewer.
            &|d| std::os::unix::fs::symlink(exe, d.join("wget")).unwrap(),
            &|d| std::fs::remove_file(d.join("curl")).unwrap(),
            // Writable by others.
            &|d| std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap(),
        ];
        for (i, change) in tamper.iter().enumerate() {
            change(&dir);
            assert!(!holds_exactly(&dir, exe, &names).unwrap(), "change {i}");
            let (again, got) = shared_shims(&root, exe, names).unwrap();
            assert_eq!(again, dir);
            assert_eq!(got, names);
            assert!(holds_exactly(&dir, exe, &names).unwrap(), "change {i}");
            assert_eq!(std::fs::read_link(dir.join("git")).unwrap(), exe);
        }
        // A link where the directory should be is replaced, not followed.
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        let (again, _) = shared_shims(&root, exe, names).unwrap();
        assert!(std::fs::symlink_metadata(&again).unwrap().is_dir());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
