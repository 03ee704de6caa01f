//! User, mount, PID, IPC and network namespaces; the uid/gid maps.

use std::ffi::CStr;

use crate::plan::{Namespace, RESERVED_PIDS};
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

/// What init writes to cap its PID namespace (built before fork).
pub(crate) struct PidCap {
    pid_max: Vec<u8>,
    last_pid: Vec<u8>,
}

impl PidCap {
    pub(crate) fn new(max: u64) -> PidCap {
        PidCap {
            pid_max: (RESERVED_PIDS + max).to_string().into_bytes(),
            last_pid: RESERVED_PIDS.to_string().into_bytes(),
        }
    }
}

/// In init, through the fresh `/proc` of its own PID namespace: `pid_max`
/// first (its floor is 301, above `ns_last_pid`), then `ns_last_pid`, which
/// moves the PID counter past [`RESERVED_PIDS`] so that it wraps to 300, not 1.
/// Both files are per PID namespace (`pid_max` since Linux 6.14, which the
/// plan checks: on older kernels that file is the host's) and writable with
/// `CAP_SYS_ADMIN` in the user namespace that owns it, which init has.
pub(crate) fn apply_pid_cap(cap: &PidCap, step: u32) -> Result<(), Fail> {
    write_file(c"/proc/sys/kernel/pid_max", &cap.pid_max, step)?;
    write_file(c"/proc/sys/kernel/ns_last_pid", &cap.last_pid, step)
}

impl Namespace {
    /// Whether this process may create `namespaces` (in one `unshare` call,
    /// as the sandbox does), tried for real in a forked child that exits
    /// right after; the caller is left untouched. `Err` carries the kernel's
    /// answer (EPERM, ENOSPC, EINVAL...), or says the child was killed (a
    /// seccomp filter that kills instead of failing the call). For `aq doctor`.
    pub fn probe_unshare(namespaces: &[Namespace]) -> std::io::Result<()> {
        let flags = clone_flags(namespaces);
        // SAFETY: the child only calls unshare and _exit (async-signal-safe)
        // and reads errno; it touches no memory shared with the parent.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: see above; `_exit` skips atexit handlers and stdio flushing.
            unsafe {
                let code = if libc::unshare(flags) == 0 {
                    0
                } else {
                    *libc::__errno_location()
                };
                libc::_exit(code.clamp(0, 255));
            }
        }
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child; `status` is a valid out pointer.
            if unsafe { libc::waitpid(pid, &mut status, 0) } >= 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        if libc::WIFEXITED(status) {
            match libc::WEXITSTATUS(status) {
                0 => Ok(()),
                errno => Err(std::io::Error::from_raw_os_error(errno)),
            }
        } else {
            Err(std::io::Error::other(format!(
                "the probe was killed by signal {}",
                libc::WTERMSIG(status)
            )))
        }
    }
}
