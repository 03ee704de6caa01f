//! Landlock: read everywhere or only beneath the readable paths, write only
//! beneath the writable ones.
//!
//! The ruleset is built in the caller before `fork` (it allocates and opens
//! paths); the command process only calls `landlock_restrict_self`, then checks
//! that every right was enforced (fail closed). Paths are opened one by one so a
//! path that cannot be opened is an error, not a silently dropped rule.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::error::SandboxError;
use crate::syscall::{Call, Fail};

fn abi(v: u32) -> ABI {
    ABI::from(i32::try_from(v).unwrap_or(0))
}

fn setup_error(call: &'static str, path: Option<&Path>, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup {
        boundary: "Landlock",
        syscall: call,
        path: path.map(Path::to_path_buf),
        source: std::io::Error::other(e.to_string()),
    }
}

/// With reads confined, the rule for `/proc`, which the command adds itself
/// once its mounts are done: the sandbox mounts a `proc` of its own PID
/// namespace there, and a rule on the caller's `/proc` does not cover it.
/// Prepared in the caller (a second fd of the ruleset, the rights), so the
/// child only makes system calls.
pub(crate) struct LateProcRule {
    ruleset: OwnedFd,
    access: u64,
}

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Build the ruleset (in the caller). Every handled right must be supported
/// (`HardRequirement`): the plan already chose an ABI the kernel has.
pub(crate) fn prepare_ruleset(
    abi_version: u32,
    writable: &[PathBuf],
    readable: Option<&[PathBuf]>,
) -> Result<(RulesetCreated, Option<LateProcRule>), SandboxError> {
    let abi = abi(abi_version);
    let mut ruleset = landlock::Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| setup_error("landlock_create_ruleset", None, e))?;
    if abi >= ABI::V6 {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(|e| setup_error("landlock_create_ruleset", None, e))?;
    }
    let mut created = ruleset
        .create()
        .map_err(|e| setup_error("landlock_create_ruleset", None, e))?
        // no_new_privs is its own step, run just before this one.
        .no_new_privs(false);
    let everywhere = [PathBuf::from("/")];
    let grants = readable
        .unwrap_or(&everywhere)
        .iter()
        .filter(|r| readable.is_none() || r.as_path() != Path::new("/proc"))
        .map(|r| (r.as_path(), AccessFs::from_read(abi), false))
        .chain(
            writable
                .iter()
                .map(|w| (w.as_path(), AccessFs::from_all(abi), true)),
        );
    for (path, access, required) in grants {
        // The readable paths of a private home are real paths (resolved when
        // the sandbox was planned): one that holds a link now was changed
        // since, and is refused rather than followed to where it points now.
        let no_links = readable.is_some() && !required;
        let fd = match open_for_rule(path, no_links) {
            Ok(fd) => fd,
            // A readable path gone since the plan (an entry of /tmp): there
            // is nothing to read. A writable one must be there.
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(setup_error("open", Some(path), e)),
        };
        // Directory-only rights (make, remove, refer) cannot be granted on a file.
        let access = if is_dir(&fd) {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| setup_error("landlock_add_rule", Some(path), e))?;
    }
    let late = match readable {
        Some(_) => {
            let clone = created
                .try_clone()
                .map_err(|e| setup_error("dup", None, e))?;
            let fd: Option<OwnedFd> = clone.into();
            let ruleset = fd.ok_or_else(|| setup_error("dup", None, "no ruleset fd"))?;
            Some(LateProcRule {
                ruleset,
                access: AccessFs::from_read(abi).bits(),
            })
        }
        None => None,
    };
    Ok((created, late))
}

/// `O_PATH` of `path` for a rule; with `no_links`, `openat2` refuses a
/// symbolic link anywhere in it (`ELOOP`).
fn open_for_rule(path: &Path, no_links: bool) -> std::io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let how = crate::socket_guard::OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: if no_links {
            libc::RESOLVE_NO_SYMLINKS
        } else {
            0
        },
    };
    // SAFETY: c is NUL-terminated; how is a valid open_how of its size.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const crate::socket_guard::OpenHow,
            std::mem::size_of::<crate::socket_guard::OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether the open `fd` is a directory.
fn is_dir(fd: &OwnedFd) -> bool {
    // SAFETY: an all-zero stat is valid; the kernel fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is a valid stat.
    unsafe {
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR
    }
}

/// Grant reads beneath the `/proc` mounted now (see [`LateProcRule`]).
fn add_proc_rule(rule: &LateProcRule, step: u32) -> Result<(), Fail> {
    let fail = |call| Fail {
        step,
        call,
        errno: crate::syscall::errno(),
    };
    // SAFETY: a NUL-terminated path and integer flags.
    let proc = unsafe { libc::open(c"/proc".as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if proc == -1 {
        return Err(fail(Call::Open));
    }
    let attr = PathBeneathAttr {
        allowed_access: rule.access,
        parent_fd: proc,
    };
    // SAFETY: the ruleset fd is ours; attr is a path_beneath_attr that lives
    // across the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            rule.ruleset.as_raw_fd(),
            1, // LANDLOCK_RULE_PATH_BENEATH
            &attr as *const PathBeneathAttr,
            0,
        )
    };
    let result = if r == 0 {
        Ok(())
    } else {
        Err(fail(Call::LandlockAddRule))
    };
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(proc) };
    result
}

/// Restrict the calling process; anything short of full enforcement fails.
pub(crate) fn apply_ruleset(
    ruleset: RulesetCreated,
    late: Option<&LateProcRule>,
    log_denials: bool,
    step: u32,
) -> Result<(), Fail> {
    if let Some(rule) = late {
        add_proc_rule(rule, step)?;
    }
    if log_denials {
        // The crate has no flags for restrict_self: the call itself, with
        // LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON. Every handled right was
        // supported at creation (HardRequirement), so it is fully enforced.
        let fd: Option<OwnedFd> = ruleset.into();
        let Some(fd) = fd else {
            return Err(Fail {
                step,
                call: Call::LandlockNotEnforced,
                errno: 0,
            });
        };
        // SAFETY: a ruleset fd we own and an integer flag.
        let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 2) };
        return if r == 0 {
            Ok(())
        } else {
            Err(Fail {
                step,
                call: Call::LandlockRestrictSelf,
                errno: crate::syscall::errno(),
            })
        };
    }
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset == RulesetStatus::FullyEnforced => Ok(()),
        Ok(_) => Err(Fail {
            step,
            call: Call::LandlockNotEnforced,
            errno: 0,
        }),
        Err(_) => Err(Fail {
            step,
            call: Call::LandlockRestrictSelf,
            errno: crate::syscall::errno(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::prepare_ruleset;

    #[test]
    fn a_private_home_path_that_became_a_link_is_refused_not_followed() {
        let abi = crate::facts::probe_landlock_abi();
        if abi < 3 {
            aq_testkit::skip("no Landlock ABI 3 here");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("home/src")).unwrap();
        std::fs::create_dir_all(root.join("tools")).unwrap();
        // Planned as a real directory, swapped for a link into the home
        // before the rules are made.
        std::os::unix::fs::symlink(root.join("home/src"), root.join("swapped")).unwrap();
        let readable = [root.join("tools"), root.join("swapped")];
        let err = match prepare_ruleset(abi, &[], Some(&readable)) {
            Ok(_) => panic!("a link in a readable real path was followed"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("swapped"), "{err}");
        // The control: the same paths without the link, and one gone since.
        let readable = [root.join("tools"), root.join("home/src"), root.join("gone")];
        assert!(prepare_ruleset(abi, &[], Some(&readable)).is_ok());
        // Without a private home (reads everywhere) nothing changes.
        assert!(prepare_ruleset(abi, &[root.join("swapped")], None).is_ok());
    }
}
