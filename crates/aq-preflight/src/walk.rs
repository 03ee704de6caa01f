//! The walker: list every entry once without following symlinks, then read
//! each file once (bounded) on every core and hand it to the detectors.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::git_surface::{BareSigns, Discovery, GitFileKind, GitSurface};
use crate::{Finding, MAX_READ, Options};

/// Directories whose contents are not read: dependencies and build output.
pub(crate) const SKIPPED_DIRS: &[&str] = &["node_modules", "target", ".venv", "vendor"];

/// What an entry is, from the directory listing (never from following it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Symlink,
}

/// One entry to examine.
#[derive(Debug)]
pub(crate) struct Entry {
    pub abs: PathBuf,
    /// Relative to the root, `/`-separated.
    pub rel: String,
    pub kind: Kind,
    /// What the file is to git, if it is one of a git directory's (see
    /// [`crate::git_surface`]), with that directory.
    pub git: Option<(GitFileKind, PathBuf)>,
}

/// The listing.
pub(crate) struct Tree {
    pub entries: Vec<Entry>,
    pub skipped: Vec<String>,
    pub errors: Vec<String>,
    /// The git directories found and their files.
    pub git: GitSurface,
}

/// What the detectors see besides the file.
pub(crate) struct ScanContext<'a> {
    pub root: &'a Path,
    pub options: &'a Options,
    /// The host of `remote.origin.url`, if any: submodules there are expected.
    pub origin_host: Option<String>,
    /// Diff, filter and merge drivers that a config defines with a program.
    pub git_drivers: BTreeMap<(String, String), (String, PathBuf)>,
}

/// One file, read.
pub(crate) struct FileView<'a> {
    pub rel: &'a str,
    /// The path on disk.
    pub abs: &'a Path,
    /// The last path component.
    pub name: &'a str,
    /// Up to [`MAX_READ`] bytes.
    pub bytes: &'a [u8],
    /// The bytes as text, unless they look binary (a NUL in the first 8 KiB)
    /// or are not UTF-8.
    pub text: Option<&'a str>,
    pub executable: bool,
    pub size: u64,
    /// What the file is to git, with its git directory.
    pub git: Option<(GitFileKind, &'a Path)>,
}

/// Lists the tree under `root` (already canonical). Of a git directory,
/// only what [`crate::git_surface`] finds is listed.
pub(crate) fn list(root: &Path, home: Option<&Path>) -> Tree {
    let mut tree = Tree {
        entries: Vec::new(),
        skipped: Vec::new(),
        errors: Vec::new(),
        git: GitSurface::default(),
    };
    let mut git = Discovery::new(root, home);
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                tree.errors.push(format!("{}: {e}", display_rel(&rel)));
                continue;
            }
        };
        let mut bare = BareSigns::default();
        for entry in rd.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            bare.see(&entry.file_name(), ft);
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if name == ".git" {
                git.dot_git(&entry.path());
                if ft.is_dir() {
                    tree.skipped
                        .push(format!("{child_rel} (all but what git runs)"));
                    continue;
                }
            }
            if ft.is_symlink() {
                tree.entries.push(Entry {
                    abs: entry.path(),
                    rel: child_rel,
                    kind: Kind::Symlink,
                    git: None,
                });
            } else if ft.is_dir() {
                if SKIPPED_DIRS.contains(&name.as_str()) {
                    tree.skipped.push(child_rel);
                } else {
                    stack.push((entry.path(), child_rel));
                }
            } else if ft.is_file() {
                tree.entries.push(Entry {
                    abs: entry.path(),
                    rel: child_rel,
                    kind: Kind::File,
                    git: None,
                });
            }
        }
        if !rel.is_empty() && bare.all() {
            git.bare(&dir);
        }
    }
    tree.git = git.finish();
    add_git_files(root, &mut tree);
    tree.skipped.sort();
    tree
}

fn display_rel(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// The files of the git surface, each once: one the walk listed already (a
/// gitfile, a file of a bare repository) is marked with what it is to git.
/// Only files inside the tree, not reached through a symlink, are examined.
fn add_git_files(root: &Path, tree: &mut Tree) {
    let mut at: std::collections::HashMap<PathBuf, usize> = tree
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.abs.clone(), i))
        .collect();
    let mut seen = HashSet::new();
    for f in &tree.git.files {
        let Ok(rel) = f.path.strip_prefix(root) else {
            continue;
        };
        let inside = std::fs::canonicalize(f.path.parent().unwrap_or(root)).is_ok_and(|p| {
            p.starts_with(root) && p.join(f.path.file_name().unwrap_or_default()) == f.path
        });
        if !inside || !seen.insert(f.path.clone()) {
            continue;
        }
        let git_dir = f
            .git_dir
            .and_then(|i| tree.git.git_dirs.get(i))
            .map(|d| d.path.clone())
            .unwrap_or_else(|| f.path.parent().unwrap_or(root).to_path_buf());
        let git = Some((f.kind, git_dir));
        if let Some(i) = at.get(&f.path) {
            tree.entries[*i].git = git;
            continue;
        }
        let kind = match std::fs::symlink_metadata(&f.path) {
            Ok(m) if m.file_type().is_symlink() => Kind::Symlink,
            Ok(m) if m.is_file() => Kind::File,
            _ => continue,
        };
        at.insert(f.path.clone(), tree.entries.len());
        tree.entries.push(Entry {
            abs: f.path.clone(),
            rel: rel.to_string_lossy().into_owned(),
            kind,
            git,
        });
    }
}

/// What examining the entries found.
pub(crate) struct Outcome {
    pub findings: Vec<Finding>,
    pub truncated: usize,
    pub errors: Vec<String>,
}

/// Reads every entry and runs the detectors, on every core.
pub(crate) fn examine(entries: &[Entry], ctx: &ScanContext) -> Outcome {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 16);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    const BATCH: usize = 64;
    let results: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Outcome {
                        findings: Vec::new(),
                        truncated: 0,
                        errors: Vec::new(),
                    };
                    let mut buf = Vec::with_capacity(64 * 1024);
                    loop {
                        let start = next.fetch_add(BATCH, Ordering::Relaxed);
                        if start >= entries.len() {
                            break;
                        }
                        let batch = &entries[start..(start + BATCH).min(entries.len())];
                        for e in batch {
                            examine_one(e, ctx, &mut buf, &mut out);
                        }
                        if let Some(progress) = &ctx.options.progress {
                            let n = done.fetch_add(batch.len(), Ordering::Relaxed) + batch.len();
                            (progress.0)(n, entries.len());
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Outcome {
                    findings: Vec::new(),
                    truncated: 0,
                    errors: vec!["a detector panicked".to_string()],
                })
            })
            .collect()
    });
    let mut all = Outcome {
        findings: Vec::new(),
        truncated: 0,
        errors: Vec::new(),
    };
    for r in results {
        all.findings.extend(r.findings);
        all.truncated += r.truncated;
        all.errors.extend(r.errors);
    }
    all.errors.sort();
    all
}

fn examine_one(e: &Entry, ctx: &ScanContext, buf: &mut Vec<u8>, out: &mut Outcome) {
    if e.kind == Kind::Symlink {
        crate::links::check_symlink(e, ctx, &mut out.findings);
        return;
    }
    // O_NOFOLLOW: a file swapped for a symlink after listing is not followed;
    // O_NONBLOCK: a file swapped for a FIFO does not hang the scan.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&e.abs);
    let mut file: File = match file {
        Ok(f) => f,
        Err(err) => {
            out.errors.push(format!("{}: {err}", e.rel));
            return;
        }
    };
    let Ok(meta) = file.metadata() else { return };
    if !meta.is_file() {
        return;
    }
    let size = meta.len();
    if size > MAX_READ {
        out.truncated += 1;
    }
    buf.clear();
    if let Err(err) = (&mut file).take(MAX_READ).read_to_end(buf) {
        out.errors.push(format!("{}: {err}", e.rel));
        return;
    }
    let head = &buf[..buf.len().min(8192)];
    let text = if memchr::memchr(0, head).is_some() {
        None
    } else {
        match std::str::from_utf8(buf) {
            Ok(t) => Some(t),
            // Cut at the read limit in the middle of a character.
            Err(err) if size > MAX_READ && err.error_len().is_none() => {
                std::str::from_utf8(&buf[..err.valid_up_to()]).ok()
            }
            Err(_) => None,
        }
    };
    let view = FileView {
        rel: &e.rel,
        abs: &e.abs,
        name: e.rel.rsplit('/').next().unwrap_or(&e.rel),
        bytes: buf,
        text,
        executable: meta.permissions().mode() & 0o111 != 0,
        size,
        git: e.git.as_ref().map(|(k, d)| (*k, d.as_path())),
    };
    run_detectors(&view, ctx, &mut out.findings);
}

/// Every file detector, in turn.
pub(crate) fn run_detectors(f: &FileView, ctx: &ScanContext, out: &mut Vec<Finding>) {
    crate::git::check(f, ctx, out);
    crate::lifecycle::check(f, ctx, out);
    crate::agent::check(f, ctx, out);
    crate::instructions::check(f, ctx, out);
    crate::secrets::check(f, out);
    crate::links::check_file(f, out);
}
