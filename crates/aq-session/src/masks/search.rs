//! The secret search's walk of the workspace, from the record the last
//! session's search left ([`aq_preflight::DirRecord`]): a directory whose
//! stamp is unchanged is not listed again, what its listing gave (files
//! masked by name or glob, files to read, subdirectories) is taken from the
//! record, and the files to read are read again (their content may have
//! changed without their directory changing).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use aq_knowledge::credentials::{self, Look};
use aq_preflight::{DirRecord, RACY_NS, Recorder};
use serde::{Deserialize, Serialize};

use super::{Found, SKIP_DIRS, WALK_MAX_ENTRIES, read_head, read_start};
use crate::walk_records::{self, Walk};

/// What the search takes from one directory's listing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SecretListing {
    /// Entries listed (they count toward the walk's cap).
    entries: usize,
    /// Masked whatever they hold: named by a glob or by the catalog.
    masked: Vec<PathBuf>,
    /// Read for what they hold, and whether each was listed as a regular
    /// file (a link is followed only for a name the catalog reads).
    read: Vec<(PathBuf, bool)>,
    /// Subdirectories searched, in the order the walk pushed them, and
    /// whether each is in a fixtures directory.
    children: Vec<(PathBuf, bool)>,
}

/// Files in the workspace the catalog names ([`credentials::look_at`]:
/// by name, or by their first bytes, reading at most `max_reads` files),
/// and entries matching one of `globs` (a glob with a `/` is matched
/// against the path relative to the workspace). The walk starts from the
/// record the last search here left, and leaves its own.
pub(crate) fn find_in_workspace(workspace: &Path, globs: &[String], max_reads: usize) -> Found {
    let earlier = walk_records::load(Walk::Secrets, workspace);
    let (found, record) = search(workspace, globs, max_reads, earlier.as_ref(), RACY_NS);
    // A walk that listed nothing leaves the record it was made from.
    if record.listed() > 0 {
        walk_records::save(Walk::Secrets, workspace, &record);
    }
    found
}

/// What the record is of: this build of aq (its catalog) and these globs.
fn record_key(globs: &[String]) -> String {
    use std::os::unix::fs::MetadataExt;
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            format!(
                "{}:{}:{}.{}:{}",
                m.dev(),
                m.ino(),
                m.mtime(),
                m.mtime_nsec(),
                m.size()
            )
        })
        // Not knowing which build this is, no earlier record is used.
        .unwrap_or_else(|_| format!("unknown:{}", std::process::id()));
    let globs = serde_json::to_string(globs).unwrap_or_default();
    format!("secrets/1 exe={exe} globs={globs}")
}

/// [`find_in_workspace`] from `earlier`, with the record of this walk.
pub(crate) fn search(
    workspace: &Path,
    globs: &[String],
    max_reads: usize,
    earlier: Option<&DirRecord<SecretListing>>,
    racy_ns: i128,
) -> (Found, DirRecord<SecretListing>) {
    let patterns: Vec<(glob::Pattern, bool)> = globs
        .iter()
        .filter_map(|g| glob::Pattern::new(g).ok().map(|p| (p, g.contains('/'))))
        .collect();
    let mut record = Recorder::new(workspace, &record_key(globs), earlier, racy_ns);
    let mut out = Found {
        files: Vec::new(),
        truncated: false,
        reads: 0,
        reads_capped: false,
    };
    let mut start = [0u8; credentials::SNIFF_BYTES];
    let mut stack = vec![(workspace.to_path_buf(), false)];
    let mut seen = 0usize;
    while let Some((dir, in_fixtures)) = stack.pop() {
        let stamp = record.stamp(&dir);
        let listing = match record.unchanged(&dir, stamp) {
            Some(listing) => listing,
            None => {
                let budget = WALK_MAX_ENTRIES + 1 - seen;
                let Some(listing) = list(workspace, &dir, in_fixtures, &patterns, budget) else {
                    continue;
                };
                record.listed(&dir, stamp, &listing);
                listing
            }
        };
        for name in &listing.masked {
            out.files.push((dir.join(name), None));
        }
        for (name, is_file) in &listing.read {
            read(
                &dir,
                name,
                *is_file,
                in_fixtures,
                max_reads,
                &mut start,
                &mut out,
            );
        }
        seen += listing.entries;
        if seen > WALK_MAX_ENTRIES {
            out.truncated = true;
            record.truncated();
            return (out, record.finish());
        }
        for (name, fixtures) in listing.children {
            stack.push((dir.join(name), fixtures));
        }
    }
    (out, record.finish())
}

/// Lists `dir`, `budget` entries at most (the one that reaches it is left
/// out): what the search does with each. `None` if it cannot be read.
fn list(
    workspace: &Path,
    dir: &Path,
    in_fixtures: bool,
    patterns: &[(glob::Pattern, bool)],
    budget: usize,
) -> Option<SecretListing> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let entries = std::fs::read_dir(dir).ok()?;
    let mut out = SecretListing::default();
    for entry in entries.flatten() {
        out.entries += 1;
        if out.entries >= budget {
            break;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let os_name = entry.file_name();
        let name = os_name.to_string_lossy();
        let by_glob = !patterns.is_empty() && {
            let path = dir.join(&os_name);
            let rel = path.strip_prefix(workspace).unwrap_or(&path);
            patterns.iter().any(|(p, with_slash)| {
                if *with_slash {
                    p.matches_path_with(rel, options)
                } else {
                    p.matches_with(&name, options)
                }
            })
        };
        if by_glob {
            out.masked.push(os_name.into());
            continue;
        }
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&name.as_ref()) {
                let fixtures = in_fixtures || credentials::is_fixture_dir(&name);
                out.children.push((os_name.into(), fixtures));
            }
            continue;
        }
        match credentials::look_at(&name, in_fixtures) {
            Look::Pass => {}
            Look::Mask(_) => out.masked.push(os_name.into()),
            Look::Read(_) => out.read.push((os_name.into(), kind.is_file())),
            // A symbolic link is not followed to be sniffed.
            Look::Sniff if kind.is_file() => out.read.push((os_name.into(), true)),
            Look::Sniff => {}
        }
    }
    Some(out)
}

/// Reads `dir/name` for what it holds, as the catalog says for its name;
/// past `max_reads` files it is not read and the search says so.
fn read(
    dir: &Path,
    name: &Path,
    is_file: bool,
    in_fixtures: bool,
    max_reads: usize,
    start: &mut [u8; credentials::SNIFF_BYTES],
    out: &mut Found,
) {
    let lossy = OsStr::new(name).to_string_lossy();
    let (row, limit) = match credentials::look_at(&lossy, in_fixtures) {
        Look::Read(c) => (Some(c), c.read_limit()),
        Look::Sniff if is_file => (None, credentials::SNIFF_BYTES),
        _ => return,
    };
    if out.reads >= max_reads {
        out.reads_capped = true;
        return;
    }
    let path = dir.join(name);
    // Only regular files are read (a link to one is, for a named row).
    if !is_file && !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
        return;
    }
    out.reads += 1;
    let what = match row {
        // What the bytes show, not what the name allows.
        Some(c) if c.mask == credentials::Mask::IfKey => {
            read_start(&path, start).and_then(credentials::sniff_secret)
        }
        Some(c) if limit > credentials::SNIFF_BYTES => read_head(&path, limit)
            .is_some_and(|head| c.masks_content(&head))
            .then_some(c.what),
        Some(c) => read_start(&path, start)
            .is_some_and(|head| c.masks_content(head))
            .then_some(c.what),
        None => read_start(&path, start).and_then(credentials::sniff_secret),
    };
    if let Some(what) = what {
        out.files.push((path, Some(what)));
    }
}
