//! Landlock: read everywhere, write only beneath the granted paths.
//!
//! The ruleset is built in the caller before `fork` (it allocates and opens
//! paths); the command process only calls `landlock_restrict_self`, then checks
//! that every right was enforced (fail closed). Paths are opened one by one so a
//! path that cannot be opened is an error, not a silently dropped rule.

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

/// Build the ruleset (in the caller). Every handled right must be supported
/// (`HardRequirement`): the plan already chose an ABI the kernel has.
pub(crate) fn prepare_ruleset(
    abi_version: u32,
    writable: &[PathBuf],
) -> Result<RulesetCreated, SandboxError> {
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
    let grants = std::iter::once((Path::new("/"), AccessFs::from_read(abi))).chain(
        writable
            .iter()
            .map(|w| (w.as_path(), AccessFs::from_all(abi))),
    );
    for (path, access) in grants {
        let fd = PathFd::new(path).map_err(|e| setup_error("open", Some(path), e))?;
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
    Ok(created)
}

/// Restrict the calling process; anything short of full enforcement fails.
pub(crate) fn apply_ruleset(ruleset: RulesetCreated, step: u32) -> Result<(), Fail> {
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
