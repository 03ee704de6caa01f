//! User, mount, PID, IPC and network namespaces; the uid/gid maps.

use std::ffi::CStr;

use crate::plan::Namespace;
use crate::syscall::{Call, Fail, check, write_file};

/// `unshare(2)` flags for `namespaces`.
pub(crate) fn clone_flags(namespaces: &[Namespace]) -> libc::c_int {
    namespaces
        .iter()
        .map(|ns| match ns {
            Namespace::User => libc::CLONE_NEWUSER,
            Namespace::Mount => libc::CLONE_NEWNS,
            Namespace::Pid => libc::CLONE_NEWPID,
            Namespace::Ipc => libc::CLONE_NEWIPC,
            Namespace::Net => libc::CLONE_NEWNET,
        })
        .fold(0, |a, b| a | b)
}

/// Unshare every namespace at once (the new user namespace owns the others).
pub(crate) fn apply_unshare(flags: libc::c_int, step: u32) -> Result<(), Fail> {
    // SAFETY: unshare takes flags only.
    check(unsafe { libc::unshare(flags) }.into(), step, Call::Unshare).map(|_| ())
}

/// The contents written to `/proc/self/uid_map` and `gid_map` (built before fork).
pub(crate) struct IdMaps {
    pub(crate) uid_map: Vec<u8>,
    pub(crate) gid_map: Vec<u8>,
}

impl IdMaps {
    pub(crate) fn new(uid: u32, gid: u32) -> IdMaps {
        IdMaps {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }
}

/// Map the caller's ids to themselves. `setgroups` must be denied before an
/// unprivileged process may write `gid_map`.
pub(crate) fn apply_id_maps(maps: &IdMaps, step: u32) -> Result<(), Fail> {
    const SETGROUPS: &CStr = c"/proc/self/setgroups";
    write_file(SETGROUPS, b"deny", step)?;
    write_file(c"/proc/self/uid_map", &maps.uid_map, step)?;
    write_file(c"/proc/self/gid_map", &maps.gid_map, step)
}
