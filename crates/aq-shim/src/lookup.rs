//! Finding the real program behind a shim.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Looks `name` up on `path` (a `PATH` value) as `execvp` would, for a
/// shim: skipping `shim_dir` and any directory that resolves to it, and
/// any file that is the running shim itself, so a shim never finds itself;
/// and searching only absolute entries (an empty one, `.`, `./` or `bin`
/// name the current directory or a place under it, which the agent
/// controls). Returns the first executable regular file.
pub fn find_real_program(name: &OsStr, path: &OsStr, shim_dir: &Path) -> Option<PathBuf> {
    lookup(name, path, shim_dir, true)
}

/// The program of a command the user typed (`aq run -- CMD` without a
/// sandbox), found as their shell would: relative `PATH` entries such as
/// `node_modules/.bin` are searched (not an empty entry or `.`), the shim
/// directory is not, and `aq` may run itself.
pub fn find_command(name: &OsStr, path: &OsStr, shim_dir: &Path) -> Option<PathBuf> {
    lookup(name, path, shim_dir, false)
}

fn lookup(name: &OsStr, path: &OsStr, shim_dir: &Path, for_shim: bool) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    if name.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(name));
    }
    // The shim directory by identity, so an alias of it (a symlink, `..`)
    // is skipped too. One `stat` per PATH entry that holds the name.
    let shim_id = std::fs::metadata(shim_dir).ok().map(|m| (m.dev(), m.ino()));
    // A link to the shim in another directory would run it again, and again.
    let own_id = for_shim
        .then(|| std::fs::metadata("/proc/self/exe").ok())
        .flatten()
        .map(|m| (m.dev(), m.ino()));
    for dir in path.as_bytes().split(|&b| b == b':') {
        let skipped = if for_shim {
            !dir.starts_with(b"/")
        } else {
            dir.is_empty() || dir == b"."
        };
        if skipped {
            continue;
        }
        let dir = Path::new(OsStr::from_bytes(dir));
        if dir == shim_dir {
            continue;
        }
        let candidate = dir.join(name);
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        if !(meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            || own_id == Some((meta.dev(), meta.ino()))
        {
            continue;
        }
        let dir_id = std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()));
        if shim_id.is_some() && dir_id == shim_id {
            continue;
        }
        return Some(candidate);
    }
    None
}

/// Which of `names` exist as programs on `path` (as [`find_real_program`]
/// would find them), in the order of `names`. A session start asks this for
/// every built-in shim name: each directory is looked in once however often
/// `PATH` names it (`/bin` is `/usr/bin` on most systems), one `stat` per
/// name and directory until found. (Listing the directories instead costs
/// as much: `/usr/bin` holds thousands of entries.)
pub fn programs_present<'a>(names: &[&'a str], path: &OsStr, shim_dir: &Path) -> Vec<&'a str> {
    let dirs = program_dirs(path, shim_dir);
    names
        .iter()
        .copied()
        .filter(|name| dirs.iter().any(|(d, _)| is_program(&d.join(name))))
        .collect()
}

/// The directories of `path` programs are looked for in, with their
/// metadata: not `.`, not `shim_dir`, each directory once however often
/// `path` names it.
pub fn program_dirs<'a>(path: &'a OsStr, shim_dir: &Path) -> Vec<(&'a Path, std::fs::Metadata)> {
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    path.as_bytes()
        .split(|&b| b == b':')
        .filter(|d| d.starts_with(b"/"))
        .map(|d| Path::new(OsStr::from_bytes(d)))
        .filter(|d| *d != shim_dir)
        .filter_map(|d| std::fs::metadata(d).ok().map(|m| (d, m)))
        .filter(|(_, m)| m.is_dir() && seen.insert((m.dev(), m.ino())))
        .collect()
}

/// Whether `path` is a program: an executable regular file, through links.
pub fn is_program(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `PATH` with the shim directory removed (what the real program sees as
/// "the original PATH" plus, when shims stay active, the shim dir in front).
pub fn path_without(path: &OsStr, shim_dir: &Path) -> std::ffi::OsString {
    let kept: Vec<&[u8]> = path
        .as_bytes()
        .split(|&b| b == b':')
        .filter(|d| !d.is_empty() && Path::new(OsStr::from_bytes(d)) != shim_dir)
        .collect();
    std::ffi::OsString::from(OsStr::from_bytes(&kept.join(&b':')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_dir_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let shims = tmp.path().join("shims");
        let real = tmp.path().join("bin");
        std::fs::create_dir_all(&shims).unwrap();
        std::fs::create_dir_all(&real).unwrap();
        for d in [&shims, &real] {
            let f = d.join("tool");
            std::fs::write(&f, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = format!("{}::.:{}", shims.display(), real.display());
        let found = find_real_program(OsStr::new("tool"), OsStr::new(&path), &shims).unwrap();
        assert_eq!(found, real.join("tool"));
        assert!(find_real_program(OsStr::new("nope"), OsStr::new(&path), &shims).is_none());
        // A relative entry: a shim never searches it; the command the user
        // typed is found there, as their shell would find it.
        let cwd = std::env::current_dir().unwrap();
        let rel = real
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| {
                Path::new(&"../".repeat(cwd.components().count()))
                    .join(real.strip_prefix("/").unwrap())
            });
        let relative = format!("{}:{}", shims.display(), rel.display());
        assert_eq!(
            find_real_program(OsStr::new("tool"), OsStr::new(&relative), &shims),
            None
        );
        assert_eq!(
            find_command(OsStr::new("tool"), OsStr::new(&relative), &shims),
            Some(rel.join("tool"))
        );
        // The listing agrees with the lookup, and a non-executable file is no program.
        let plain = real.join("plain");
        std::fs::write(&plain, "data").unwrap();
        assert_eq!(
            programs_present(&["nope", "tool", "plain"], OsStr::new(&path), &shims),
            ["tool"]
        );
        assert_eq!(
            path_without(OsStr::new(&path), &shims),
            OsStr::new(&format!(".:{}", real.display()))
        );
    }
}
