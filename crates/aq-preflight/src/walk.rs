//! The walker: list every entry once without following symlinks, then read
//! each file once (bounded) on every core and hand it to the detectors.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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
}

/// The listing.
pub(crate) struct Tree {
    pub entries: Vec<Entry>,
    pub skipped: Vec<String>,
    pub errors: Vec<String>,
}

/// What the detectors see besides the file.
pub(crate) struct ScanContext<'a> {
    pub root: &'a Path,
    pub options: &'a Options,
    /// The host of `remote.origin.url`, if any: submodules there are expected.
    pub origin_host: Option<String>,
}

/// One file, read.
pub(crate) struct FileView<'a> {
    pub rel: &'a str,
    /// The last path component.
    pub name: &'a str,
    /// Up to [`MAX_READ`] bytes.
    pub bytes: &'a [u8],
    /// The bytes as text, unless they look binary (a NUL in the first 8 KiB)
    /// or are not UTF-8.
    pub text: Option<&'a str>,
    pub executable: bool,
    pub size: u64,
}

/// Lists the tree under `root` (already canonical). Inside `.git`, only
/// `config` and `hooks/*` are listed.
pub(crate) fn list(root: &Path) -> Tree {
    let mut tree = Tree {
        entries: Vec::new(),
        skipped: Vec::new(),
        errors: Vec::new(),
    };
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                tree.errors.push(format!("{}: {e}", display_rel(&rel)));
                continue;
            }
        };
        for entry in rd.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if ft.is_symlink() {
                tree.entries.push(Entry {
                    abs: entry.path(),
                    rel: child_rel,
                    kind: Kind::Symlink,
                });
            } else if ft.is_dir() {
                if name == ".git" {
                    list_git_dir(&entry.path(), &child_rel, &mut tree);
                } else if SKIPPED_DIRS.contains(&name.as_str()) {
                    tree.skipped.push(child_rel);
                } else {
                    stack.push((entry.path(), child_rel));
                }
            } else if ft.is_file() {
                tree.entries.push(Entry {
                    abs: entry.path(),
                    rel: child_rel,
                    kind: Kind::File,
                });
            }
        }
    }
    tree.skipped.sort();
    tree
}

fn display_rel(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// `.git/config` and `.git/hooks/*`: the parts of a git directory that run
/// code. Objects, refs and the index are skipped.
fn list_git_dir(git: &Path, rel: &str, tree: &mut Tree) {
    let config = git.join("config");
    if std::fs::symlink_metadata(&config).is_ok_and(|m| m.is_file()) {
        tree.entries.push(Entry {
            abs: config,
            rel: format!("{rel}/config"),
            kind: Kind::File,
        });
    }
    if let Ok(rd) = std::fs::read_dir(git.join("hooks")) {
        for entry in rd.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = if ft.is_symlink() {
                Kind::Symlink
            } else if ft.is_file() {
                Kind::File
            } else {
                continue;
            };
            tree.entries.push(Entry {
                abs: entry.path(),
                rel: format!("{rel}/hooks/{name}"),
                kind,
            });
        }
    }
    tree.skipped
        .push(format!("{rel} (all but config and hooks)"));
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
        name: e.rel.rsplit('/').next().unwrap_or(&e.rel),
        bytes: buf,
        text,
        executable: meta.permissions().mode() & 0o111 != 0,
        size,
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
