//! Trees in git's format: `"<octal mode> <name>\0" + 20-byte id` per entry,
//! sorted as git sorts them (a directory compares as if its name ended in
//! `/`), so that `git ls-tree` reads them and the same directory always has
//! the same id, which is what lets a checkpoint reuse unchanged subtrees.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use crate::objects::{Kind, Objects, Oid};
use crate::{Error, Result};

pub(crate) const MODE_TREE: u32 = 0o040000;
pub(crate) const MODE_FILE: u32 = 0o100644;
pub(crate) const MODE_LINK: u32 = 0o120000;
/// A regular file; its permission bits are the low twelve.
pub(crate) const MODE_REGULAR: u32 = 0o100000;

/// A regular file's tree mode from its `st_mode`: 100644 and 100755 as git
/// writes them, any other permissions (`chmod 600`, `chmod 000`) in the
/// same octal form (`100600`), so that an undo puts them back too.
pub(crate) fn file_mode(st_mode: u32) -> u32 {
    MODE_REGULAR | (st_mode & 0o7777)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    pub name: Vec<u8>,
    pub mode: u32,
    pub oid: Oid,
}

impl TreeEntry {
    pub(crate) fn is_tree(&self) -> bool {
        self.mode == MODE_TREE
    }
}

fn git_order(a: &TreeEntry, b: &TreeEntry) -> Ordering {
    let ka = a.name.iter().copied().chain(a.is_tree().then_some(b'/'));
    let kb = b.name.iter().copied().chain(b.is_tree().then_some(b'/'));
    ka.cmp(kb)
}

/// The tree object for `entries` (sorted here).
pub(crate) fn encode(entries: &mut [TreeEntry]) -> Vec<u8> {
    entries.sort_by(git_order);
    let mut out = Vec::with_capacity(entries.len() * 40);
    for e in entries.iter() {
        out.extend_from_slice(format!("{:o} ", e.mode).as_bytes());
        out.extend_from_slice(&e.name);
        out.push(0);
        out.extend_from_slice(&e.oid.0);
    }
    out
}

pub(crate) fn decode(oid: &Oid, data: &[u8]) -> Result<Vec<TreeEntry>> {
    let bad = || Error(format!("tree {} is malformed", oid.hex()));
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let sp = rest.iter().position(|&b| b == b' ').ok_or_else(bad)?;
        let mode = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|m| u32::from_str_radix(m, 8).ok())
            .ok_or_else(bad)?;
        rest = &rest[sp + 1..];
        let nul = rest.iter().position(|&b| b == 0).ok_or_else(bad)?;
        let name = rest[..nul].to_vec();
        rest = &rest[nul + 1..];
        if rest.len() < 20 || name.is_empty() || name.contains(&b'/') {
            return Err(bad());
        }
        let mut id = [0u8; 20];
        id.copy_from_slice(&rest[..20]);
        rest = &rest[20..];
        out.push(TreeEntry {
            name,
            mode,
            oid: Oid(id),
        });
    }
    Ok(out)
}

/// Reads trees from a store, remembering those it has read (a diff or an
/// undo looks the same directories up more than once).
pub(crate) struct TreeReader<'a> {
    pub objects: &'a Objects,
    cache: Mutex<HashMap<Oid, std::sync::Arc<Vec<TreeEntry>>>>,
}

impl<'a> TreeReader<'a> {
    pub fn new(objects: &'a Objects) -> Self {
        TreeReader {
            objects,
            cache: Mutex::new(HashMap::new()),
        }
    }

    pub fn read(&self, oid: &Oid) -> Result<std::sync::Arc<Vec<TreeEntry>>> {
        if *oid == Oid::EMPTY_TREE {
            return Ok(Default::default());
        }
        if let Some(t) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(oid)
        {
            return Ok(t.clone());
        }
        let data = self.objects.read_kind(oid, Kind::Tree)?;
        let t = std::sync::Arc::new(decode(oid, &data)?);
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(*oid, t.clone());
        Ok(t)
    }

    /// The entry at `path` (relative) under the tree `root`.
    pub fn lookup(&self, root: &Oid, path: &Path) -> Result<Option<TreeEntry>> {
        let mut cur = TreeEntry {
            name: Vec::new(),
            mode: MODE_TREE,
            oid: *root,
        };
        for comp in path.components() {
            use std::os::unix::ffi::OsStrExt;
            let name = comp.as_os_str().as_bytes();
            if !cur.is_tree() {
                return Ok(None);
            }
            let entries = self.read(&cur.oid)?;
            match entries.iter().find(|e| e.name == name) {
                Some(e) => cur = e.clone(),
                None => return Ok(None),
            }
        }
        Ok(Some(cur))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_as_git_sorts() {
        let z = Oid([0; 20]);
        let mut e = vec![
            TreeEntry {
                name: b"a.b".to_vec(),
                mode: MODE_FILE,
                oid: z,
            },
            TreeEntry {
                name: b"a".to_vec(),
                mode: MODE_TREE,
                oid: z,
            },
            TreeEntry {
                name: b"a-".to_vec(),
                mode: MODE_FILE,
                oid: z,
            },
        ];
        let data = encode(&mut e);
        // git: "a-" < "a.b" < "a/" ('-' 0x2d, '.' 0x2e, '/' 0x2f)
        let names: Vec<_> = e.iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, vec![b"a-".to_vec(), b"a.b".to_vec(), b"a".to_vec()]);
        assert_eq!(decode(&z, &data).unwrap(), e);
    }
}
