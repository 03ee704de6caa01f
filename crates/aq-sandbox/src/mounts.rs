//! Mount namespace: private propagation, a fresh `/proc`, secret masks,
//! read-only paths inside the workspace, and the working directory looked up
//! again through them. Runs in the init process (PID 1), which
//! holds every capability of the new user namespace.

use std::ffi::CStr;
use std::ptr::null;

use crate::syscall::{Call, Fail, check};

fn mount(
    src: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
    step: u32,
) -> Result<(), Fail> {
    let p = |s: Option<&CStr>| s.map_or(null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that outlives the call.
    let ret = unsafe { libc::mount(p(src), target.as_ptr(), p(fstype), flags, p(data).cast()) };
    check(ret.into(), step, Call::Mount).map(|_| ())
}

/// `mount --make-rprivate /`: nothing done below reaches the host.
pub(crate) fn apply_private_propagation(step: u32) -> Result<(), Fail> {
    mount(
        None,
        c"/",
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
        step,
    )
}

/// A `proc` of the new PID namespace over `/proc`: host processes disappear.
pub(crate) fn apply_proc(step: u32) -> Result<(), Fail> {
    mount(
        Some(c"proc"),
        c"/proc",
        Some(c"proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
        step,
    )
}

const STAGE: &CStr = c"/proc";
const EMPTY_FILE: &CStr = c"/proc/empty-file";
const EMPTY_DIR: &CStr = c"/proc/empty-dir";

/// Mount a tmpfs over `/proc` (which exists: we just mounted it), create an
/// empty file and directory, and make the tmpfs read-only. `/proc` stays hidden
/// until [`apply_unmount_mask_sources`].
pub(crate) fn apply_mask_sources(step: u32) -> Result<(), Fail> {
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount(
        Some(c"tmpfs"),
        STAGE,
        Some(c"tmpfs"),
        flags,
        Some(c"mode=0555,size=4k"),
        step,
    )?;
    // SAFETY: constant NUL-terminated path.
    let fd = unsafe {
        libc::open(
            EMPTY_FILE.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o444,
        )
    };
    check(fd.into(), step, Call::Open)?;
    // SAFETY: fd is ours.
    unsafe { libc::close(fd) };
    // SAFETY: constant path.
    let ret = unsafe { libc::mkdir(EMPTY_DIR.as_ptr(), 0o555) };
    check(ret.into(), step, Call::Mkdir)?;
    mount(
        None,
        STAGE,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | flags,
        None,
        step,
    )
}

/// Detach the staging tmpfs, uncovering `/proc`.
pub(crate) fn apply_unmount_mask_sources(step: u32) -> Result<(), Fail> {
    // SAFETY: STAGE is NUL-terminated.
    let ret = unsafe { libc::umount2(STAGE.as_ptr(), libc::MNT_DETACH) };
    check(ret.into(), step, Call::Umount).map(|_| ())
}

/// Which empty object goes over a mask target.
#[derive(Clone, Copy)]
pub(crate) enum MaskKind {
    File,
    Dir,
}

/// Bind the empty file or directory over `target`, read-only, nosuid, nodev, noexec.
pub(crate) fn apply_mask(kind: MaskKind, target: &CStr, step: u32) -> Result<(), Fail> {
    let src = match kind {
        MaskKind::File => EMPTY_FILE,
        MaskKind::Dir => EMPTY_DIR,
    };
    match mount(Some(src), target, None, libc::MS_BIND, None, step) {
        // The path went away since the plan found it (an SSH agent's
        // directory in /tmp whose agent exited, a file the user deleted):
        // there is nothing left to hide. Only a target that is really gone
        // counts; any other failure stops the setup.
        Err(f) if f.errno == libc::ENOENT && vanished(target) => return Ok(()),
        other => other?,
    }
    mount(
        None,
        target,
        None,
        libc::MS_REMOUNT
            | libc::MS_BIND
            | libc::MS_RDONLY
            | libc::MS_NOSUID
            | libc::MS_NODEV
            | libc::MS_NOEXEC,
        None,
        step,
    )
}

/// Whether `target` no longer exists (not even as a dangling link).
fn vanished(target: &CStr) -> bool {
    // SAFETY: target is a valid C string; st is written by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::lstat(target.as_ptr(), &mut st) };
    r == -1 && crate::syscall::errno() == libc::ENOENT
}

/// [`apply_mask`] of a file for a host's datagram socket: one that went
/// away since the host was probed (a service restarted) has nothing left to
/// hide, so a missing path is not a failure.
pub(crate) fn apply_socket_mask(target: &CStr, step: u32) -> Result<(), Fail> {
    match apply_mask(MaskKind::File, target, step) {
        Err(f) if f.errno == libc::ENOENT => Ok(()),
        other => other,
    }
}

/// Bind `path` over itself (recursively) so it becomes a mount point: the
/// kernel refuses to rename or remove a mount point (EBUSY).
pub(crate) fn apply_pin(path: &CStr, step: u32) -> Result<(), Fail> {
    mount(
        Some(path),
        path,
        None,
        libc::MS_BIND | libc::MS_REC,
        None,
        step,
    )
}

/// Bind the file `source` over the file `target` (a session's copy where
/// the agent reads and writes its file). Renaming over it fails (EBUSY),
/// so what is written goes into the copy.
pub(crate) fn apply_bind_file(source: &CStr, target: &CStr, step: u32) -> Result<(), Fail> {
    mount(Some(source), target, None, libc::MS_BIND, None, step)
}

/// Bind `path` over itself and remount it read-only. The flags the user
/// namespace inherited locked (nosuid, nodev, noexec, atime) are kept, or the
/// remount fails with EPERM.
pub(crate) fn apply_read_only(path: &CStr, step: u32) -> Result<(), Fail> {
    apply_pin(path, step)?;
    let keep = locked_flags(path, step)?;
    mount(
        None,
        path,
        None,
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep,
        None,
        step,
    )
}

/// Bind `path` (beneath a read-only bind) over itself and remount it
/// writable: the one place inside that stays writable (a session's `TMPDIR`
/// inside aq's state). The flags the mount inherited locked are kept.
pub(crate) fn apply_writable_again(path: &CStr, step: u32) -> Result<(), Fail> {
    apply_pin(path, step)?;
    let keep = locked_flags(path, step)?;
    mount(
        None,
        path,
        None,
        libc::MS_REMOUNT | libc::MS_BIND | keep,
        None,
        step,
    )
}

/// The mount flags of `path`'s mount a remount must keep (nosuid, nodev,
/// noexec and the atime ones), as `MS_*` bits.
fn locked_flags(path: &CStr, step: u32) -> Result<libc::c_ulong, Fail> {
    // SAFETY: statvfs is plain data; zeroed is valid; path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let ret = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
    check(ret.into(), step, Call::Statvfs)?;
    let keep = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .iter()
    .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
    .fold(0, |acc, (_, ms)| acc | ms);
    Ok(keep)
}

/// `chdir(path)` once every mount is in place, so the working directory is
/// looked up through them: a mask over it (or over an ancestor) is entered
/// instead of the directory underneath, or the lookup fails (fail closed).
pub(crate) fn apply_working_directory(path: &CStr, step: u32) -> Result<(), Fail> {
    // SAFETY: path is NUL-terminated.
    check(
        unsafe { libc::chdir(path.as_ptr()) }.into(),
        step,
        Call::Chdir,
    )
    .map(|_| ())
}
