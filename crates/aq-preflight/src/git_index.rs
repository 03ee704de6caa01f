//! The gitlinks of a git index file (`.git/index`): the paths where the
//! repository has a submodule. `git status` goes into each one that has a
//! `.git` and runs git there, with that repository's configuration, so a
//! gitlink reaches a nested repository even inside a directory the walk
//! skips (`node_modules`).
//!
//! Format (gitformat-index(5)): `DIRC`, a version (2, 3 or 4), an entry
//! count, then each entry: stat data, mode, object id, flags, path. Versions
//! 2 and 3 pad each entry with NULs to a multiple of 8 bytes; version 4
//! compresses each path against the one before.

use crate::IndexError;

/// Where a gitlink is, as the index spells it (`/`-separated, relative to
/// the worktree).
pub(crate) type GitlinkPath = Vec<u8>;

const GITLINK: u32 = 0o160000;
const TYPE_MASK: u32 = 0o170000;

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

/// git's `decode_varint` (varint.c): the number and the bytes it took.
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *b.get(i)?;
    i += 1;
    let mut val: usize = usize::from(c & 127);
    while c & 128 != 0 {
        val = val.checked_add(1)?;
        if val.leading_zeros() < 8 {
            return None;
        }
        c = *b.get(i)?;
        i += 1;
        val = (val << 7) + usize::from(c & 127);
    }
    Some((val, i))
}

/// The gitlink paths of an index file; `hash_len` is 20 (SHA-1) or 32
/// (SHA-256). An error says what is wrong with the file.
pub(crate) fn gitlinks(bytes: &[u8], hash_len: usize) -> Result<Vec<GitlinkPath>, IndexError> {
    if bytes.get(..4) != Some(b"DIRC") {
        return Err(IndexError::NoSignature);
    }
    let version = be32(bytes, 4).ok_or(IndexError::TruncatedHeader)?;
    if !(2..=4).contains(&version) {
        return Err(IndexError::Version { version });
    }
    let count = be32(bytes, 8).ok_or(IndexError::TruncatedHeader)?;
    let truncated = || IndexError::TruncatedEntry { version };
    let mut out = Vec::new();
    let mut at = 12usize;
    // Version 4 spells each path against the one before.
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(bytes, at + 24).ok_or_else(truncated)?;
        let flags = be16(bytes, at + 40 + hash_len).ok_or_else(truncated)?;
        at += 40 + hash_len + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let rest = bytes.get(at..).ok_or_else(truncated)?;
        let gitlink = mode & TYPE_MASK == GITLINK;
        if version == 4 {
            let (strip, n) = varint(rest).ok_or_else(truncated)?;
            let tail = &rest[n..];
            let end = memchr::memchr(0, tail).ok_or_else(truncated)?;
            if strip > prev.len() {
                return Err(IndexError::Strip);
            }
            prev.truncate(prev.len() - strip);
            prev.extend_from_slice(&tail[..end]);
            at += n + end + 1;
            if gitlink {
                out.push(prev.clone());
            }
        } else {
            let end = memchr::memchr(0, rest).ok_or_else(truncated)?;
            if gitlink {
                out.push(rest[..end].to_vec());
            }
            let len = (at - start) + end;
            at = start + ((len + 8) & !7);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One version-2 entry by hand.
    fn entry_v2(mode: u32, path: &str) -> Vec<u8> {
        let mut e = vec![0u8; 24];
        e.extend_from_slice(&mode.to_be_bytes());
        e.extend_from_slice(&[0u8; 12]);
        e.extend_from_slice(&[0xab; 20]);
        e.extend_from_slice(&(path.len() as u16).to_be_bytes());
        e.extend_from_slice(path.as_bytes());
        let padded = (e.len() + 8) & !7;
        e.resize(padded, 0);
        e
    }

    #[test]
    fn gitlinks_of_a_hand_made_index() {
        let mut idx = b"DIRC".to_vec();
        idx.extend_from_slice(&2u32.to_be_bytes());
        idx.extend_from_slice(&3u32.to_be_bytes());
        idx.extend(entry_v2(0o100644, "README.md"));
        idx.extend(entry_v2(0o160000, "node_modules/x"));
        idx.extend(entry_v2(0o100755, "run.sh"));
        let got = gitlinks(&idx, 20).unwrap();
        assert_eq!(got, vec![b"node_modules/x".to_vec()]);
        assert!(gitlinks(&idx[..idx.len() - 10], 20).is_err());
        assert!(gitlinks(b"nope", 20).is_err());
    }

    #[test]
    fn gitlinks_of_indexes_git_wrote_in_every_version() {
        if std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: no git on this machine");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        git(&["add", "a.txt"]);
        let oid = "0123456789abcdef0123456789abcdef01234567";
        for p in ["deps/one", "deps/two", "node_modules/@s/x"] {
            git(&[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{oid},{p}"),
            ]);
        }
        for version in ["2", "3", "4"] {
            git(&["update-index", "--index-version", version]);
            if version == "3" {
                // An entry with extended flags (intent to add) makes it v3.
                std::fs::write(dir.path().join("b.txt"), "b").unwrap();
                git(&["add", "-N", "b.txt"]);
            }
            let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
            let got = gitlinks(&bytes, 20).unwrap();
            assert_eq!(
                got,
                vec![
                    b"deps/one".to_vec(),
                    b"deps/two".to_vec(),
                    b"node_modules/@s/x".to_vec()
                ],
                "index version {version}"
            );
        }
    }
}
