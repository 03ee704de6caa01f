//! Putting files back: the plan's changes carried out on disk.
//!
//! Order matters, and so does how each path is reached:
//! 1. deletions, deepest first (a directory is emptied before it goes);
//! 2. directories that the target does not have and that are now empty;
//! 3. creations and rewrites, shallowest first (a directory before what it
//!    holds). Each file or link is written under a temporary name in its own
//!    directory and renamed over the old one, so a path holds the old
//!    content or the new, never half of either.
//!
//! Every path is reached from the workspace's directory descriptor one
//! component at a time with `O_NOFOLLOW`: an agent that replaced `src/`
//! with a link to `/home/user` cannot make the undo write there. A link met
//! where a directory must be is removed and a real directory made instead;
//! a deletion below a link is skipped (nothing of the workspace is there).

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::objects::{Kind, Objects, Oid};
use crate::tree::TreeReader;
use crate::{Change, Entry, Error, Result};

#[cfg(test)]
thread_local! {
    /// Test hook: fail the undo after this many steps (a kill midway).
    pub(crate) static FAIL_AFTER: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

fn step() -> Result<()> {
    #[cfg(test)]
    {
        let left = FAIL_AFTER.with(|f| f.get());
        if left == 0 {
            return Err(Error("test hook: the undo was stopped here".into()));
        }
        FAIL_AFTER.with(|f| f.set(left.saturating_sub(1)));
    }
    Ok(())
}

#[derive(Default)]
pub(crate) struct Applied {
    pub restored: usize,
    pub removed: usize,
}

fn cstr(name: &OsStr) -> Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| Error(format!("{:?} holds a NUL byte", name)))
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

fn err(op: &str, path: &Path, e: io::Error) -> Error {
    Error(format!("undo could not {op} {}: {e}", path.display()))
}

fn depth(p: &Path) -> usize {
    p.components().count()
}

/// The workspace, opened once; everything is reached from here.
pub(crate) struct Tree {
    root: OwnedFd,
    path: PathBuf,
}

impl Tree {
    pub fn open(path: &Path) -> Result<Tree> {
        let c = cstr(path.as_os_str())?;
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(err("open", path, last_err()));
        }
        Ok(Tree {
            root: unsafe { OwnedFd::from_raw_fd(fd) },
            path: path.to_path_buf(),
        })
    }

    /// The directory `rel`, reached without following links; with
    /// `create`, missing directories are made and links in the way replaced
    /// by directories. `None`: not there (or only through a link).
    fn dir(&self, rel: &Path, create: bool) -> Result<Option<OwnedFd>> {
        let cur = unsafe { libc::dup(self.root.as_raw_fd()) };
        if cur < 0 {
            return Err(err("open", &self.path, last_err()));
        }
        let mut cur = unsafe { OwnedFd::from_raw_fd(cur) };
        let mut walked = PathBuf::new();
        for comp in rel.components() {
            walked.push(comp);
            let name = cstr(comp.as_os_str())?;
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            let mut tries = 0;
            loop {
                tries += 1;
                let fd = unsafe { libc::openat(cur.as_raw_fd(), name.as_ptr(), flags) };
                if fd >= 0 {
                    cur = unsafe { OwnedFd::from_raw_fd(fd) };
                    break;
                }
                let e = last_err();
                if !create || tries > 3 {
                    return match e.raw_os_error() {
                        Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR) if !create => Ok(None),
                        _ => Err(err("open", &walked, e)),
                    };
                }
                match e.raw_os_error() {
                    Some(libc::ENOENT) => {}
                    Some(libc::ELOOP | libc::ENOTDIR) => {
                        let mut st: libc::stat = unsafe { std::mem::zeroed() };
                        let r = unsafe {
                            libc::fstatat(
                                cur.as_raw_fd(),
                                name.as_ptr(),
                                &mut st,
                                libc::AT_SYMLINK_NOFOLLOW,
                            )
                        };
                        if r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK {
                            // A link where a directory must be: never write
                            // through it; the directory comes back instead.
                            if unsafe { libc::unlinkat(cur.as_raw_fd(), name.as_ptr(), 0) } != 0 {
                                return Err(err("remove the link", &walked, last_err()));
                            }
                        } else {
                            return Err(Error(format!(
                                "undo could not make directory {}: something that is not a directory is there",
                                walked.display()
                            )));
                        }
                    }
                    _ => return Err(err("open", &walked, e)),
                }
                if unsafe { libc::mkdirat(cur.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
                    let e = last_err();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(err("make directory", &walked, e));
                    }
                }
            }
        }
        Ok(Some(cur))
    }

    fn parent_and_name<'p>(&self, rel: &'p Path) -> Result<(&'p Path, CString)> {
        let name = rel
            .file_name()
            .ok_or_else(|| Error(format!("undo was given a bad path {:?}", rel)))?;
        Ok((rel.parent().unwrap_or(Path::new("")), cstr(name)?))
    }

    /// Removes a file or link (or, with `dir`, an empty directory);
    /// `false` when it was not there or (a directory) is not empty.
    fn remove(&self, rel: &Path, dir: bool) -> Result<bool> {
        let (parent, name) = self.parent_and_name(rel)?;
        let Some(pfd) = self.dir(parent, false)? else {
            return Ok(false);
        };
        let flags = if dir { libc::AT_REMOVEDIR } else { 0 };
        if unsafe { libc::unlinkat(pfd.as_raw_fd(), name.as_ptr(), flags) } == 0 {
            return Ok(true);
        }
        let e = last_err();
        match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(false),
            Some(libc::ENOTEMPTY | libc::EEXIST) if dir => Ok(false),
            Some(libc::ENOTDIR) if dir => Ok(false),
            Some(libc::EISDIR) if !dir => Ok(false),
            _ => Err(err("remove", rel, e)),
        }
    }

    fn tmp_name() -> CString {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        CString::new(format!(".aq-undo-{}-{n}", std::process::id())).unwrap_or_default()
    }

    /// Renames `tmp` over `name`; an empty directory in the way goes first.
    fn rename_into(&self, pfd: &OwnedFd, tmp: &CString, name: &CString, rel: &Path) -> Result<()> {
        for _ in 0..2 {
            let r = unsafe {
                libc::renameat(
                    pfd.as_raw_fd(),
                    tmp.as_ptr(),
                    pfd.as_raw_fd(),
                    name.as_ptr(),
                )
            };
            if r == 0 {
                return Ok(());
            }
            let e = last_err();
            if matches!(
                e.raw_os_error(),
                Some(libc::EISDIR | libc::ENOTEMPTY | libc::EEXIST)
            ) && unsafe { libc::unlinkat(pfd.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) }
                == 0
            {
                continue;
            }
            unsafe { libc::unlinkat(pfd.as_raw_fd(), tmp.as_ptr(), 0) };
            if matches!(
                e.raw_os_error(),
                Some(libc::EISDIR | libc::ENOTEMPTY | libc::EEXIST)
            ) {
                return Err(Error(format!(
                    "undo could not put {} back: a directory is there that holds files aq does not keep \
                     (ignored or too big); move it away and run aq undo again",
                    rel.display()
                )));
            }
            return Err(err("rename into", rel, e));
        }
        Err(Error(format!("undo could not put {} back", rel.display())))
    }

    fn write_file(&self, rel: &Path, data: &[u8], perm: u32) -> Result<()> {
        let (parent, name) = self.parent_and_name(rel)?;
        let pfd = self
            .dir(parent, true)?
            .ok_or_else(|| Error(format!("undo could not reach {}", parent.display())))?;
        let tmp = Self::tmp_name();
        // Private while it is written; the checkpoint's permissions after.
        let mode = 0o600;
        let fd = unsafe {
            libc::openat(
                pfd.as_raw_fd(),
                tmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(err("create a file beside", rel, last_err()));
        }
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let written = (|| -> io::Result<()> {
            use std::io::Write;
            let mut f = &file;
            f.write_all(data)?;
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(perm))?;
            Ok(())
        })();
        drop(file);
        if let Err(e) = written {
            unsafe { libc::unlinkat(pfd.as_raw_fd(), tmp.as_ptr(), 0) };
            return Err(err("write", rel, e));
        }
        self.rename_into(&pfd, &tmp, &name, rel)
    }

    fn write_link(&self, rel: &Path, target: &Path) -> Result<()> {
        let (parent, name) = self.parent_and_name(rel)?;
        let pfd = self
            .dir(parent, true)?
            .ok_or_else(|| Error(format!("undo could not reach {}", parent.display())))?;
        let tmp = Self::tmp_name();
        let t = cstr(target.as_os_str())?;
        if unsafe { libc::symlinkat(t.as_ptr(), pfd.as_raw_fd(), tmp.as_ptr()) } != 0 {
            return Err(err("make the link", rel, last_err()));
        }
        self.rename_into(&pfd, &tmp, &name, rel)
    }

    /// Sets the permissions of a file whose content is already right,
    /// through an `O_PATH` descriptor (a file `chmod 000`ed cannot be
    /// opened for reading; a symlink is never followed).
    #[cfg(target_os = "linux")]
    fn set_mode(&self, rel: &Path, perm: u32) -> Result<()> {
        let (parent, name) = self.parent_and_name(rel)?;
        let pfd = self
            .dir(parent, true)?
            .ok_or_else(|| Error(format!("undo could not reach {}", parent.display())))?;
        let fd = unsafe {
            libc::openat(
                pfd.as_raw_fd(),
                name.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(err("open", rel, last_err()));
        }
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let meta = file.metadata().map_err(|e| err("stat", rel, e))?;
        if !meta.is_file() {
            return Err(Error(format!(
                "undo could not set the mode of {}: not a file",
                rel.display()
            )));
        }
        // An O_PATH descriptor takes no fchmod; its /proc link does.
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        std::fs::set_permissions(&link, std::os::unix::fs::PermissionsExt::from_mode(perm))
            .map_err(|e| err("set the mode of", rel, e))
    }

    /// Sets the permissions of a file whose content is already right.
    /// Other systems have no `O_PATH`: `fchmodat` with `AT_SYMLINK_NOFOLLOW`
    /// does the same there (a symlink put in the file's place between the
    /// two calls gets the mode itself; its target is never followed).
    #[cfg(not(target_os = "linux"))]
    fn set_mode(&self, rel: &Path, perm: u32) -> Result<()> {
        let (parent, name) = self.parent_and_name(rel)?;
        let pfd = self
            .dir(parent, true)?
            .ok_or_else(|| Error(format!("undo could not reach {}", parent.display())))?;
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::fstatat(
                pfd.as_raw_fd(),
                name.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            return Err(err("stat", rel, last_err()));
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(Error(format!(
                "undo could not set the mode of {}: not a file",
                rel.display()
            )));
        }
        let r = unsafe {
            libc::fchmodat(
                pfd.as_raw_fd(),
                name.as_ptr(),
                perm as libc::mode_t,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            return Err(err("set the mode of", rel, last_err()));
        }
        Ok(())
    }
}

fn is_dir_entry(e: &Option<Entry>) -> bool {
    matches!(e, Some(Entry::EmptyDir))
}

/// Reads every blob the changes need, so that a damaged checkpoint is found
/// before the first file is touched.
pub(crate) fn verify(objects: &Objects, changes: &[Change]) -> Result<()> {
    for c in changes {
        if let Some(Entry::File { oid, .. }) = &c.new {
            let o = Oid::from_hex(oid).ok_or_else(|| Error(format!("bad object id {oid}")))?;
            objects.read_kind(&o, Kind::Blob).map_err(|e| {
                Error(format!(
                    "the checkpoint is damaged, nothing was changed: {} cannot be restored: {e}",
                    c.path.display()
                ))
            })?;
        }
    }
    Ok(())
}

/// Carries out `changes` in the workspace `tree`; `target` is the
/// checkpoint's workspace tree (to tell which directories it has).
pub(crate) fn apply(
    tree: &Tree,
    trees: &TreeReader,
    target: &Oid,
    changes: &[Change],
) -> Result<Applied> {
    let mut done = Applied::default();
    // 1. Deletions: what the target lacks, or has as another kind (a file
    //    where a directory was, and so on). File <-> link is a rename over.
    let mut dels: Vec<&Change> = changes
        .iter()
        .filter(|c| {
            c.old.is_some() && (c.new.is_none() || is_dir_entry(&c.old) != is_dir_entry(&c.new))
        })
        .collect();
    dels.sort_by(|a, b| {
        depth(&b.path)
            .cmp(&depth(&a.path))
            .then(b.path.cmp(&a.path))
    });
    let mut candidates: Vec<PathBuf> = Vec::new();
    for c in &dels {
        step()?;
        if tree.remove(&c.path, is_dir_entry(&c.old))? {
            done.removed += 1;
        }
        let mut p = c.path.parent();
        while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
            candidates.push(d.to_path_buf());
            p = d.parent();
        }
    }
    // 2. Directories emptied that the target does not have.
    candidates.sort_by(|a, b| depth(b).cmp(&depth(a)).then(b.cmp(a)));
    candidates.dedup();
    for d in candidates {
        let there = trees.lookup(target, &d)?;
        if there.as_ref().is_some_and(|e| e.is_tree()) {
            continue;
        }
        step()?;
        if tree.remove(&d, true)? {
            done.removed += 1;
        }
    }
    // 3. Creations and rewrites, shallowest first.
    let mut adds: Vec<&Change> = changes.iter().filter(|c| c.new.is_some()).collect();
    adds.sort_by(|a, b| {
        depth(&a.path)
            .cmp(&depth(&b.path))
            .then(a.path.cmp(&b.path))
    });
    for c in adds {
        step()?;
        match (&c.old, &c.new) {
            (Some(Entry::File { oid: a, .. }), Some(Entry::File { oid: b, mode, .. }))
                if a == b =>
            {
                tree.set_mode(&c.path, *mode)?
            }
            (_, Some(Entry::File { oid, mode, .. })) => {
                let o = Oid::from_hex(oid).ok_or_else(|| Error(format!("bad object id {oid}")))?;
                let data = trees.objects.read_kind(&o, Kind::Blob)?;
                tree.write_file(&c.path, &data, *mode)?;
            }
            (_, Some(Entry::Symlink { target })) => tree.write_link(&c.path, target)?,
            (_, Some(Entry::EmptyDir)) => {
                tree.dir(&c.path, true)?;
            }
            (_, None) => continue,
        }
        done.restored += 1;
    }
    Ok(done)
}
