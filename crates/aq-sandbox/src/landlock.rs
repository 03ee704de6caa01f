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
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
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
        let fd = match PathFd::new(path) {
            Ok(fd) => fd,
            // A readable path gone since the plan (an entry of /tmp): there
            // is nothing to read. A writable one must be there.
            Err(_) if !required && !path.exists() => continue,
            Err(e) => return Err(setup_error("open", Some(path), e)),
        };
        // Directory-only rights (make, remove, refer) cannot be granted on a file.
        let access = if path.is_dir() {
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
