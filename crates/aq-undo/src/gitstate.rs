//! The repository's own state: refs, the stash, the index.
//!
//! `git reset --hard`, `git branch -D` and `git stash drop` lose no files
//! of the work tree that a checkpoint would not also hold, but they lose
//! where the work was: the commit a branch named, the stash entry. So a
//! checkpoint keeps, as blobs in its `g` tree, the files that say so:
//! `HEAD`, `packed-refs`, every loose ref under `refs/`, `logs/refs/stash`
//! (the stash list lives in that reflog) and `index`; plus `gitdir`, the
//! path they came from, so that an undo never writes them into some other
//! repository a planted `.git` file names.
//!
//! The commits those refs name stay in the user's repository, not in the
//! store: copying them would cost as much as the repository. A
//! `git gc --prune=now` between the checkpoint and the undo can delete them;
//! the undo then reports such a ref as not restorable instead of writing a
//! ref to nothing. Whether a commit is there is asked of its loose object,
//! then of `git cat-file --batch-check`; when neither can tell (no git
//! installed), the ref is written.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cache::{DirCache, FileStat, GIT_KEY, StatCache};
use crate::objects::{Kind, Objects, Oid};
use crate::tree::{self, MODE_FILE, MODE_TREE, TreeEntry, TreeReader};
use crate::{Error, NotKept, RefChange, Result, io_error};

/// The repository files a checkpoint keeps, by their path in the git
/// directory (`HEAD`, `refs/heads/main`, ...).
pub(crate) type GitFiles = BTreeMap<String, Vec<u8>>;

const GITDIR_KEY: &str = "gitdir";

/// The git directory of the work tree `workdir`: `.git` itself, or the
/// directory a `.git` file names (`gitdir: ...`, as worktrees and
/// submodules have). `None` when there is none, or it has no `HEAD`.
pub(crate) fn find_gitdir(workdir: &Path) -> Option<PathBuf> {
    let dotgit = workdir.join(".git");
    let meta = fs::symlink_metadata(&dotgit).ok()?;
    let dir = if meta.is_dir() {
        dotgit
    } else if meta.is_file() {
        let text = fs::read_to_string(&dotgit).ok()?;
        let rel = text.trim_end().strip_prefix("gitdir:")?.trim();
        workdir.join(rel)
    } else {
        return None;
    };
    fs::symlink_metadata(dir.join("HEAD")).ok()?;
    Some(dir)
}

/// Where refs live: the main repository's directory for a worktree.
pub(crate) fn common_dir(gitdir: &Path) -> PathBuf {
    match fs::read_to_string(gitdir.join("commondir")) {
        Ok(c) => gitdir.join(c.trim_end()),
        Err(_) => gitdir.to_path_buf(),
    }
}

/// Which directory a kept path belongs to.
fn location(gitdir: &Path, common: &Path, name: &str) -> PathBuf {
    match name {
        "HEAD" | "index" => gitdir.join(name),
        _ => common.join(name),
    }
}

pub(crate) struct Captured {
    /// The `g` tree, when the state was kept.
    pub tree: Option<Oid>,
    pub not_kept: Vec<NotKept>,
}

/// Keeps the repository state of `root` (if it is a work tree).
pub(crate) fn capture(
    root: &Path,
    objects: &Objects,
    cache: &mut StatCache,
    started_ns: i64,
) -> Result<Captured> {
    let dotgit = root.join(".git");
    if fs::symlink_metadata(&dotgit).is_err() {
        return Ok(Captured {
            tree: None,
            not_kept: Vec::new(),
        });
    }
    let refused = |why: &str| Captured {
        tree: None,
        not_kept: vec![NotKept {
            path: PathBuf::from(".git"),
            why: why.to_string(),
        }],
    };
    let Some(gitdir) = find_gitdir(root) else {
        return Ok(refused(
            "not a usable repository (no HEAD, or a .git file naming nothing): refs, stash and index not kept",
        ));
    };
    let common = common_dir(&gitdir);
    if common.join("reftable").is_dir() {
        return Ok(refused(
            "the repository keeps its refs in a reftable, which aq cannot read yet: refs, stash and index not kept",
        ));
    }
    let mut names = vec![
        "HEAD".to_string(),
        "index".into(),
        "packed-refs".into(),
        "logs/refs/stash".into(),
    ];
    list_refs(&common.join("refs"), "refs", &mut names);
    let old = cache
        .get(GIT_KEY)
        .map(std::borrow::Cow::into_owned)
        .unwrap_or_default();
    let mut stats = Vec::new();
    let mut entries = Vec::new();
    for name in names {
        let path = location(&gitdir, &common, &name);
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let oid = match old.lookup(name.as_bytes(), &meta) {
            Some(oid) => oid,
            None => match fs::read(&path) {
                Ok(data) => objects.write(Kind::Blob, &data)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error("read", &path, e)),
            },
        };
        stats.push(FileStat::from_meta(name.as_bytes(), &meta, oid));
        entries.push((name, oid));
    }
    let gitdir_abs = fs::canonicalize(&gitdir).unwrap_or(gitdir);
    let oid = objects.write(Kind::Blob, gitdir_abs.as_os_str().as_bytes())?;
    entries.push((GITDIR_KEY.to_string(), oid));
    stats.sort_by(|a, b| a.name.cmp(&b.name));
    cache.insert(
        GIT_KEY.to_vec(),
        DirCache {
            tree: Oid([0; 20]),
            recorded_ns: started_ns,
            files: stats,
        },
    );
    Ok(Captured {
        tree: Some(write_nested(objects, &entries)?),
        not_kept: Vec::new(),
    })
}

fn list_refs(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for ent in rd.flatten() {
        let Ok(name) = ent.file_name().into_string() else {
            continue;
        };
        let full = format!("{prefix}/{name}");
        match ent.file_type() {
            Ok(t) if t.is_dir() => list_refs(&ent.path(), &full, out),
            Ok(t) if t.is_file() && !name.ends_with(".lock") => out.push(full),
            _ => {}
        }
    }
}

/// A tree of `path -> blob` with `/` making subtrees.
fn write_nested(objects: &Objects, files: &[(String, Oid)]) -> Result<Oid> {
    let mut here: Vec<TreeEntry> = Vec::new();
    let mut subs: BTreeMap<&str, Vec<(String, Oid)>> = BTreeMap::new();
    for (name, oid) in files {
        match name.split_once('/') {
            Some((dir, rest)) => subs.entry(dir).or_default().push((rest.to_string(), *oid)),
            None => here.push(TreeEntry {
                name: name.as_bytes().to_vec(),
                mode: MODE_FILE,
                oid: *oid,
            }),
        }
    }
    for (dir, files) in subs {
        here.push(TreeEntry {
            name: dir.as_bytes().to_vec(),
            mode: MODE_TREE,
            oid: write_nested(objects, &files)?,
        });
    }
    objects.write(Kind::Tree, &tree::encode(&mut here))
}

/// The files a `g` tree holds.
pub(crate) fn read_files(trees: &TreeReader, g: &Oid) -> Result<GitFiles> {
    let mut out = GitFiles::new();
    read_into(trees, g, "", &mut out)?;
    Ok(out)
}

fn read_into(trees: &TreeReader, oid: &Oid, prefix: &str, out: &mut GitFiles) -> Result<()> {
    for e in trees.read(oid)?.iter() {
        let name = format!("{prefix}{}", String::from_utf8_lossy(&e.name));
        if e.is_tree() {
            read_into(trees, &e.oid, &format!("{name}/"), out)?;
        } else {
            out.insert(name, trees.objects.read_kind(&e.oid, Kind::Blob)?);
        }
    }
    Ok(())
}

/// What the refs say, by a name a person knows: `HEAD`, `refs/heads/x`
/// (loose or packed), `stash@{n}`.
pub(crate) fn ref_values(files: &GitFiles) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(packed) = files.get("packed-refs") {
        for line in String::from_utf8_lossy(packed).lines() {
            if let Some((sha, name)) = line.split_once(' ')
                && !line.starts_with('#')
                && !line.starts_with('^')
            {
                out.insert(name.to_string(), sha.to_string());
            }
        }
    }
    for (name, data) in files {
        let value = String::from_utf8_lossy(data).trim().to_string();
        if name == "HEAD" || name.starts_with("refs/") {
            out.insert(name.clone(), value);
        }
    }
    if let Some(log) = files.get("logs/refs/stash") {
        let lines: Vec<_> = String::from_utf8_lossy(log)
            .lines()
            .filter_map(|l| l.split(' ').nth(1).map(str::to_string))
            .collect();
        for (i, sha) in lines.iter().rev().enumerate() {
            out.insert(format!("stash@{{{i}}}"), sha.clone());
        }
    }
    out
}

pub(crate) fn ref_changes(now: &GitFiles, target: &GitFiles) -> Vec<RefChange> {
    let a = ref_values(now);
    let b = ref_values(target);
    let names: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    names
        .into_iter()
        .filter(|n| a.get(*n) != b.get(*n))
        .map(|n| RefChange {
            name: n.clone(),
            old: a.get(n).cloned(),
            new: b.get(n).cloned(),
        })
        .collect()
}

fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The commits (of `shas`) the repository no longer has.
pub(crate) fn missing_objects(root: &Path, shas: &[String]) -> HashSet<String> {
    let Some(gitdir) = find_gitdir(root) else {
        return HashSet::new();
    };
    let common = common_dir(&gitdir);
    let unknown: Vec<&String> = shas
        .iter()
        .filter(|s| is_sha(s))
        .filter(|s| {
            fs::symlink_metadata(common.join("objects").join(&s[..2]).join(&s[2..])).is_err()
        })
        .collect();
    if unknown.is_empty() {
        return HashSet::new();
    }
    let child = Command::new("git")
        .arg("-c")
        .arg("safe.directory=*")
        .arg(format!("--git-dir={}", common.display()))
        .args(["cat-file", "--batch-check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return HashSet::new(); // no git: cannot tell, so restore
    };
    if let Some(mut stdin) = child.stdin.take() {
        let input: String = unknown.iter().map(|s| format!("{s}\n")).collect();
        let _ = stdin.write_all(input.as_bytes());
    }
    let Ok(out) = child.wait_with_output() else {
        return HashSet::new();
    };
    if !out.status.success() {
        return HashSet::new();
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(" missing").map(str::to_string))
        .collect()
}

/// The commits `files` name, for [`missing_objects`].
pub(crate) fn named_commits(files: &GitFiles) -> Vec<String> {
    let mut out: Vec<String> = ref_values(files)
        .into_values()
        .filter(|v| is_sha(v))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Drops what names a missing commit, so that no ref is written to nothing.
/// A ref dropped that way keeps the value it has now (`now`).
pub(crate) fn drop_missing(
    files: &mut GitFiles,
    now: &GitFiles,
    missing: &HashSet<String>,
    not_restorable: &mut Vec<NotKept>,
) {
    if missing.is_empty() {
        return;
    }
    let gone = |why: &str, sha: &str| NotKept {
        path: PathBuf::from(format!(".git/{why}")),
        why: format!(
            "names commit {sha}, which the repository no longer has (a git gc since?): left as it is"
        ),
    };
    let mut dropped = Vec::new();
    for (name, data) in files.iter() {
        let v = String::from_utf8_lossy(data).trim().to_string();
        if (name == "HEAD" || name.starts_with("refs/")) && missing.contains(&v) {
            not_restorable.push(gone(name, &v));
            dropped.push(name.clone());
        }
    }
    for d in dropped {
        match now.get(&d) {
            Some(v) => files.insert(d, v.clone()),
            None => files.remove(&d),
        };
    }
    for key in ["packed-refs", "logs/refs/stash"] {
        let Some(data) = files.get(key) else { continue };
        let text = String::from_utf8_lossy(data).to_string();
        let mut kept = String::new();
        let mut skip_peel = false;
        for line in text.lines() {
            let sha = if key == "packed-refs" {
                line.split(' ').next().unwrap_or("")
            } else {
                line.split(' ').nth(1).unwrap_or("")
            };
            if line.starts_with('^') {
                if !skip_peel {
                    kept.push_str(line);
                    kept.push('\n');
                }
                continue;
            }
            skip_peel = missing.contains(sha);
            if skip_peel {
                let what = if key == "packed-refs" {
                    line.split(' ').nth(1).unwrap_or(key).to_string()
                } else {
                    "a stash entry".to_string()
                };
                not_restorable.push(gone(&what, sha));
            } else {
                kept.push_str(line);
                kept.push('\n');
            }
        }
        files.insert(key.to_string(), kept.into_bytes());
    }
}

/// The repository's files as they are on disk now.
pub(crate) fn read_disk(root: &Path) -> GitFiles {
    let mut out = GitFiles::new();
    let Some(gitdir) = find_gitdir(root) else {
        return out;
    };
    let common = common_dir(&gitdir);
    let mut names = vec![
        "HEAD".to_string(),
        "index".into(),
        "packed-refs".into(),
        "logs/refs/stash".into(),
    ];
    list_refs(&common.join("refs"), "refs", &mut names);
    for name in names {
        if let Ok(data) = fs::read(location(&gitdir, &common, &name)) {
            out.insert(name, data);
        }
    }
    out
}

/// Puts the repository's files back as `target` has them; returns how many
/// files it wrote or removed.
pub(crate) fn restore(root: &Path, target: &GitFiles) -> Result<usize> {
    let gitdir = find_gitdir(root).ok_or_else(|| {
        Error(format!(
            "{} has no usable .git to restore refs into",
            root.display()
        ))
    })?;
    let here = fs::canonicalize(&gitdir).unwrap_or(gitdir.clone());
    if let Some(want) = target.get(GITDIR_KEY)
        && here.as_os_str().as_bytes() != &want[..]
    {
        return Err(Error(format!(
            "refs not restored: .git now leads to {}, but the checkpoint's refs came from {}",
            here.display(),
            String::from_utf8_lossy(want)
        )));
    }
    let common = common_dir(&gitdir);
    let now = read_disk(root);
    let mut n = 0;
    // Loose refs created since go; the others are written when they differ.
    for name in now.keys() {
        if !target.contains_key(name) {
            let path = location(&gitdir, &common, name);
            match fs::remove_file(&path) {
                Ok(()) => n += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("remove", &path, e)),
            }
        }
    }
    for (name, data) in target {
        if name == GITDIR_KEY || now.get(name) == Some(data) {
            continue;
        }
        let path = location(&gitdir, &common, name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io_error("create", parent, e))?;
        }
        crate::store::write_atomic(&path, data)?;
        n += 1;
    }
    Ok(n)
}
