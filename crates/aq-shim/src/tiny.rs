//! The shim program without a C library (`tiny/main.rs`), built into this
//! crate on x86-64 Linux, and its copy in aq's state directory that the
//! shim links point to.
//!
//! Why a second shim: a shim starts once per command an agent runs through
//! `PATH`. The `aq-shim` binary starts glibc's runtime first (the loader,
//! its relocations, the CPU probes whose `cpuid`s trap to the hypervisor
//! on a VM), which doubled each shimmed command's cost; this program's
//! start is the kernel's exec alone. It speaks the same frames
//! ([`crate::wire`]), so the supervisor cannot tell them apart.
//!
//! Cargo installs only Cargo's binaries, so `aq` carries the program and
//! writes it out once: `install` checks the copy at each session start
//! (owner, mode and bytes) and writes it again when it is not this build's.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The program's bytes, when this build has it.
#[cfg(aq_tiny_shim)]
pub const PROGRAM: Option<&[u8]> = Some(include_bytes!(concat!(env!("OUT_DIR"), "/aq-shim-tiny")));
/// The program's bytes, when this build has it.
#[cfg(not(aq_tiny_shim))]
pub const PROGRAM: Option<&[u8]> = None;

/// This build's name for it (a hash of the bytes, from `build.rs`).
#[cfg(aq_tiny_shim)]
const ID: &str = env!("AQ_TINY_SHIM_ID");
#[cfg(not(aq_tiny_shim))]
const ID: &str = "";

/// Where the program is (or would be) under `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(format!("aq-shim-{ID}"))
}

/// The program in `dir` (made 0700 if missing), written unless a copy of
/// this build's is there already: a regular file of this user's that no
/// one else may write, in a directory no one else may write, with exactly
/// these bytes. Fails where this build has no such program.
pub fn install(dir: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let Some(program) = PROGRAM else {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no shim without a C library for this platform",
        ));
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // SAFETY: getuid cannot fail and touches no memory of ours.
    let uid = unsafe { libc::getuid() };
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || !crate::install::owned_and_private(&meta, uid) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a directory only this user may write",
                dir.display()
            ),
        ));
    }
    // A state directory on a file system mounted `noexec` could hold the
    // program but not run it: every shimmed command would fail.
    if mounted_noexec(dir)? {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is on a file system mounted noexec", dir.display()),
        ));
    }
    let path = path_in(dir);
    if holds(&path, program, uid)? {
        return Ok(path);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let tmp = dir.join(format!(".new-{}-{nanos}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&tmp)
        .and_then(|mut f| f.write_all(program))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(path)
}

/// Whether programs on the file system of `dir` may not run (`noexec`).
#[cfg(target_os = "linux")]
fn mounted_noexec(dir: &Path) -> io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: an all-zero statvfs is valid; the kernel fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_flag & libc::ST_NOEXEC != 0)
}

/// The program exists for Linux only: nothing to ask elsewhere.
#[cfg(not(target_os = "linux"))]
fn mounted_noexec(_dir: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Whether `path` is this user's copy of `program`, executable and not
/// writable by others (a link is not followed: it is not a copy).
fn holds(path: &Path, program: &[u8], uid: u32) -> io::Result<bool> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ELOOP) => {
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file()
        || !crate::install::owned_and_private(&meta, uid)
        || meta.mode() & 0o100 == 0
        || meta.len() != program.len() as u64
    {
        return Ok(false);
    }
    let mut bytes = Vec::with_capacity(program.len());
    file.read_to_end(&mut bytes)?;
    Ok(bytes == program)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the platform it is for, a build without the program fell back
    /// without saying so loudly enough: that fails here.
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn this_build_has_the_program() {
        let program = PROGRAM.expect("build.rs did not make the shim without a C library");
        assert_eq!(&program[..4], b"\x7fELF");
    }

    #[test]
    #[cfg(aq_tiny_shim)]
    fn the_copy_is_written_once_and_again_when_it_was_changed() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        let path = install(&dir).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), PROGRAM.unwrap());
        let ino = std::fs::metadata(&path).unwrap().ino();
        assert_eq!(install(&dir).unwrap(), path);
        assert_eq!(
            std::fs::metadata(&path).unwrap().ino(),
            ino,
            "written again"
        );
        let tamper: [&dyn Fn(&Path); 4] = [
            &|p| {
                let mut b = std::fs::read(p).unwrap();
                b[100] ^= 1;
                std::fs::write(p, b).unwrap();
            },
            &|p| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap(),
            &|p| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap(),
            &|p| {
                std::fs::rename(p, p.with_extension("moved")).unwrap();
                std::os::unix::fs::symlink(p.with_extension("moved"), p).unwrap();
            },
        ];
        for (i, change) in tamper.iter().enumerate() {
            change(&path);
            assert_eq!(install(&dir).unwrap(), path);
            let meta = std::fs::symlink_metadata(&path).unwrap();
            assert!(meta.is_file(), "change {i}");
            assert_eq!(meta.mode() & 0o777, 0o755, "change {i}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                PROGRAM.unwrap(),
                "change {i}"
            );
        }
        // A directory others may write is refused, not used.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(install(&dir).is_err());
    }
}
