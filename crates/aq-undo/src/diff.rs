//! Differences between two workspace trees, and their text.
//!
//! The diff walks both trees at once and skips every pair of subtrees with
//! the same id, so comparing two checkpoints costs what changed between
//! them, not the size of the workspace. Leaves are files, links and empty
//! directories (a directory with content is implied by its files).
//!
//! The text uses the `similar` crate for unified diffs (Myers, with git's
//! `@@` hunks and "\ No newline at end of file"): writing a diff algorithm
//! is not this crate's business, and `similar` has no dependencies of its
//! own. A file with a NUL in its first 8000 bytes is binary, as for git.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::objects::{Kind, Oid};
use crate::tree::{MODE_LINK, MODE_TREE, TreeEntry, TreeReader};
use crate::{Change, Counts, Entry, Result};

/// A leaf as a tree holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub mode: u32,
    pub oid: Oid,
}

impl Leaf {
    fn of(e: &TreeEntry) -> Leaf {
        Leaf {
            mode: e.mode,
            oid: e.oid,
        }
    }

    pub fn is_dir(&self) -> bool {
        self.mode == MODE_TREE
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawChange {
    pub path: PathBuf,
    pub old: Option<Leaf>,
    pub new: Option<Leaf>,
}

/// What differs from tree `a` to tree `b` (`None`: no tree at all).
pub(crate) fn diff_trees(
    trees: &TreeReader,
    a: Option<&Oid>,
    b: Option<&Oid>,
) -> Result<Vec<RawChange>> {
    let mut out = Vec::new();
    diff_into(trees, a, b, Path::new(""), &mut out)?;
    Ok(out)
}

fn diff_into(
    trees: &TreeReader,
    a: Option<&Oid>,
    b: Option<&Oid>,
    prefix: &Path,
    out: &mut Vec<RawChange>,
) -> Result<()> {
    if a == b {
        return Ok(());
    }
    let load = |o: Option<&Oid>| -> Result<Vec<TreeEntry>> {
        let mut v = match o {
            Some(o) => trees.read(o)?.as_ref().clone(),
            None => Vec::new(),
        };
        v.sort_by(|x, y| x.name.cmp(&y.name));
        Ok(v)
    };
    let (ea, eb) = (load(a)?, load(b)?);
    let (mut i, mut j) = (0, 0);
    while i < ea.len() || j < eb.len() {
        let (x, y) = match (ea.get(i), eb.get(j)) {
            (Some(x), Some(y)) if x.name == y.name => {
                i += 1;
                j += 1;
                (Some(x), Some(y))
            }
            (Some(x), Some(y)) if x.name < y.name => {
                i += 1;
                (Some(x), None)
            }
            (Some(_), Some(y)) => {
                j += 1;
                (None, Some(y))
            }
            (Some(x), None) => {
                i += 1;
                (Some(x), None)
            }
            (None, Some(y)) => {
                j += 1;
                (None, Some(y))
            }
            (None, None) => break,
        };
        let name = x.or(y).map(|e| e.name.clone()).unwrap_or_default();
        let path = prefix.join(std::ffi::OsStr::from_bytes(&name));
        // A non-empty tree is expanded; a file, link or empty tree is a leaf.
        let split = |e: Option<&TreeEntry>| match e {
            Some(e) if e.is_tree() && e.oid != Oid::EMPTY_TREE => (Some(e.oid), None),
            Some(e) => (None, Some(Leaf::of(e))),
            None => (None, None),
        };
        let (ta, la) = split(x);
        let (tb, lb) = split(y);
        if la != lb {
            out.push(RawChange {
                path: path.clone(),
                old: la,
                new: lb,
            });
        }
        if ta.is_some() || tb.is_some() {
            diff_into(trees, ta.as_ref(), tb.as_ref(), &path, out)?;
        }
    }
    Ok(())
}

pub(crate) fn counts(changes: &[RawChange]) -> Counts {
    let mut c = Counts::default();
    for ch in changes {
        match (&ch.old, &ch.new) {
            (None, Some(_)) => c.added += 1,
            (Some(_), None) => c.deleted += 1,
            _ => c.modified += 1,
        }
    }
    c
}

pub(crate) fn to_entry(trees: &TreeReader, l: &Leaf) -> Result<Entry> {
    Ok(match l.mode {
        MODE_TREE => Entry::EmptyDir,
        MODE_LINK => Entry::Symlink {
            target: PathBuf::from(std::ffi::OsStr::from_bytes(
                &trees.objects.read_kind(&l.oid, Kind::Blob)?,
            )),
        },
        mode => Entry::File {
            oid: l.oid.hex(),
            executable: mode & 0o100 != 0,
            mode: mode & 0o7777,
            size: trees.objects.blob_size(&l.oid)?,
        },
    })
}

pub(crate) fn to_change(trees: &TreeReader, c: &RawChange) -> Result<Change> {
    Ok(Change {
        path: c.path.clone(),
        old: c.old.as_ref().map(|l| to_entry(trees, l)).transpose()?,
        new: c.new.as_ref().map(|l| to_entry(trees, l)).transpose()?,
    })
}

fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

fn kind_name(e: &Entry) -> &'static str {
    match e {
        Entry::File { .. } => "file",
        Entry::Symlink { .. } => "symlink",
        Entry::EmptyDir => "empty directory",
    }
}

fn mode_of(e: &Entry) -> String {
    match e {
        Entry::File { mode, .. } => format!("{:06o}", crate::tree::MODE_REGULAR | mode),
        _ => "100644".to_string(),
    }
}

/// The text of `changes`; see [`crate::Store::render`].
pub(crate) fn render(trees: &TreeReader, changes: &[Change], stat: bool) -> Result<String> {
    let read = |e: &Option<Entry>| -> Result<Vec<u8>> {
        match e {
            Some(Entry::File { oid, .. }) => match Oid::from_hex(oid) {
                Some(o) => trees.objects.read_kind(&o, Kind::Blob),
                None => Ok(Vec::new()),
            },
            _ => Ok(Vec::new()),
        }
    };
    let mut out = String::new();
    let (mut files, mut plus, mut minus) = (0usize, 0usize, 0usize);
    let width = changes
        .iter()
        .map(|c| c.path.as_os_str().len())
        .max()
        .unwrap_or(0);
    for c in changes {
        let p = c.path.display().to_string();
        files += 1;
        let both_files = matches!(
            (&c.old, &c.new),
            (
                Some(Entry::File { .. }) | None,
                Some(Entry::File { .. }) | None
            )
        );
        let same_content = matches!((&c.old, &c.new),
            (Some(Entry::File { oid: a, .. }), Some(Entry::File { oid: b, .. })) if a == b);
        if both_files && !same_content {
            let (a, b) = (read(&c.old)?, read(&c.new)?);
            if is_binary(&a) || is_binary(&b) {
                if stat {
                    out.push_str(&format!("{p:width$} | binary\n"));
                } else {
                    out.push_str(&format!("Binary file {p} changed\n"));
                }
                continue;
            }
            let (a, b) = (String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            let td = similar::TextDiff::from_lines(a.as_ref(), b.as_ref());
            if stat {
                let (mut ins, mut del) = (0, 0);
                for op in td.ops() {
                    for ch in td.iter_changes(op) {
                        match ch.tag() {
                            similar::ChangeTag::Insert => ins += 1,
                            similar::ChangeTag::Delete => del += 1,
                            similar::ChangeTag::Equal => {}
                        }
                    }
                }
                plus += ins;
                minus += del;
                out.push_str(&format!("{p:width$} | +{ins} -{del}\n"));
                continue;
            }
            out.push_str(&format!("diff a/{p} b/{p}\n"));
            match (&c.old, &c.new) {
                (None, Some(n)) => out.push_str(&format!("new file mode {}\n", mode_of(n))),
                (Some(o), None) => out.push_str(&format!("deleted file mode {}\n", mode_of(o))),
                (Some(o), Some(n)) if mode_of(o) != mode_of(n) => out.push_str(&format!(
                    "old mode {}\nnew mode {}\n",
                    mode_of(o),
                    mode_of(n)
                )),
                _ => {}
            }
            let ha = if c.old.is_some() {
                format!("a/{p}")
            } else {
                "/dev/null".into()
            };
            let hb = if c.new.is_some() {
                format!("b/{p}")
            } else {
                "/dev/null".into()
            };
            out.push_str(
                &td.unified_diff()
                    .context_radius(3)
                    .header(&ha, &hb)
                    .to_string(),
            );
            continue;
        }
        let line = match (&c.old, &c.new) {
            (Some(o @ Entry::File { .. }), Some(n @ Entry::File { .. })) => {
                format!("mode {p}: {} -> {}", mode_of(o), mode_of(n))
            }
            (Some(Entry::Symlink { target: a }), Some(Entry::Symlink { target: b })) => {
                format!("link {p}: {} -> {}", a.display(), b.display())
            }
            (None, Some(Entry::Symlink { target })) => {
                format!("link {p} added: -> {}", target.display())
            }
            (Some(Entry::Symlink { target }), None) => {
                format!("link {p} removed (was -> {})", target.display())
            }
            (None, Some(Entry::EmptyDir)) => format!("directory {p}/ added (empty)"),
            (Some(Entry::EmptyDir), None) => format!("directory {p}/ removed (was empty)"),
            (Some(o), Some(n)) => format!("type {p}: {} -> {}", kind_name(o), kind_name(n)),
            (None, None) | (None, Some(Entry::File { .. })) | (Some(Entry::File { .. }), None) => {
                continue;
            }
        };
        if stat {
            out.push_str(&format!(
                "{p:width$} | {}\n",
                line.split(": ").nth(1).unwrap_or(&line)
            ));
        } else {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if stat {
        out.push_str(&format!(
            " {files} file{} changed, {plus} insertion{}(+), {minus} deletion{}(-)\n",
            if files == 1 { "" } else { "s" },
            if plus == 1 { "" } else { "s" },
            if minus == 1 { "" } else { "s" },
        ));
    }
    Ok(out)
}
