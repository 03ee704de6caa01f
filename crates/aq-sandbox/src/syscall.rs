//! Child-side plumbing: a failure record that crosses the fork boundary through a
//! pipe, and thin checked wrappers. Code here runs between `fork` and `exec`, so
//! it does not allocate.

use std::ffi::CStr;

/// The calls a child step can fail in; the index crosses the pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Call {
    Prctl,
    Getppid,
    Unshare,
    Open,
    Write,
    Socket,
    Ioctl,
    Fork,
    Mount,
    Mkdir,
    Umount,
    Statvfs,
    Setrlimit,
    LandlockRestrictSelf,
    LandlockNotEnforced,
    Execve,
    Capset,
    Capget,
    CapabilitiesLeft,
    Seccomp,
    Chdir,
    Sendmsg,
    Recv,
    PtraceSeize,
    ExecGuardRefused,
    LandlockAddRule,
    PidfdGetfd,
    SocketGuard,
    CloseRange,
}

const CALLS: [Call; 29] = [
    Call::Prctl,
    Call::Getppid,
    Call::Unshare,
    Call::Open,
    Call::Write,
    Call::Socket,
    Call::Ioctl,
    Call::Fork,
    Call::Mount,
    Call::Mkdir,
    Call::Umount,
    Call::Statvfs,
    Call::Setrlimit,
    Call::LandlockRestrictSelf,
    Call::LandlockNotEnforced,
    Call::Execve,
    Call::Capset,
    Call::Capget,
    Call::CapabilitiesLeft,
    Call::Seccomp,
    Call::Chdir,
    Call::Sendmsg,
    Call::Recv,
    Call::PtraceSeize,
    Call::ExecGuardRefused,
    Call::LandlockAddRule,
    Call::PidfdGetfd,
    Call::SocketGuard,
    Call::CloseRange,
];

impl Call {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Call::Prctl => "prctl",
            Call::Getppid => "getppid",
            Call::Unshare => "unshare",
            Call::Open => "open",
            Call::Write => "write",
            Call::Socket => "socket",
            Call::Ioctl => "ioctl",
            Call::Fork => "fork",
            Call::Mount => "mount",
            Call::Mkdir => "mkdir",
            Call::Umount => "umount2",
            Call::Statvfs => "statvfs",
            Call::Setrlimit => "setrlimit",
            Call::LandlockRestrictSelf => "landlock_restrict_self",
            Call::LandlockNotEnforced => "landlock_restrict_self (not fully enforced)",
            Call::Execve => "execve",
            Call::Capset => "capset",
            Call::Capget => "capget",
            Call::CapabilitiesLeft => "capget (capabilities left after dropping)",
            Call::Seccomp => "seccomp",
            Call::Chdir => "chdir",
            Call::Sendmsg => "sendmsg",
            Call::Recv => "recv",
            Call::PtraceSeize => "ptrace(PTRACE_SEIZE)",
            Call::ExecGuardRefused => "start the tracer",
            Call::LandlockAddRule => "landlock_add_rule (/proc)",
            Call::PidfdGetfd => "pidfd_getfd",
            Call::SocketGuard => "socket guard handshake (sock_diag socket)",
            Call::CloseRange => "close_range",
        }
    }

    pub(crate) fn from_u32(v: u32) -> Option<Call> {
        CALLS.get(v as usize).copied()
    }
}

/// A failed step: which one (index into the plan, or `plan.len()` for exec),
/// which call, which errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    pub(crate) step: u32,
    pub(crate) call: Call,
    pub(crate) errno: i32,
}

impl Fail {
    pub(crate) const LEN: usize = 12;

    pub(crate) fn to_bytes(self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..4].copy_from_slice(&self.step.to_ne_bytes());
        b[4..8].copy_from_slice(&(self.call as u32).to_ne_bytes());
        b[8..].copy_from_slice(&self.errno.to_ne_bytes());
        b
    }

    pub(crate) fn from_bytes(b: [u8; Self::LEN]) -> Option<Fail> {
        let word = |i: usize| [b[i], b[i + 1], b[i + 2], b[i + 3]];
        Some(Fail {
            step: u32::from_ne_bytes(word(0)),
            call: Call::from_u32(u32::from_ne_bytes(word(4)))?,
            errno: i32::from_ne_bytes(word(8)),
        })
    }
}

pub(crate) fn errno() -> i32 {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// `Err(Fail)` with the current errno when `ret == -1`.
pub(crate) fn check(ret: libc::c_long, step: u32, call: Call) -> Result<libc::c_long, Fail> {
    if ret == -1 {
        Err(Fail {
            step,
            call,
            errno: errno(),
        })
    } else {
        Ok(ret)
    }
}

/// Open `path` for writing and write `data` in one call (for `/proc/self/*_map`).
pub(crate) fn write_file(path: &CStr, data: &[u8], step: u32) -> Result<(), Fail> {
    // SAFETY: path is a valid NUL-terminated string.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd.into(), step, Call::Open)?;
    // SAFETY: data is a valid buffer of data.len() bytes; fd is open.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let res = check(n as libc::c_long, step, Call::Write);
    // SAFETY: fd is ours to close.
    unsafe { libc::close(fd) };
    res.map(|_| ())
}

/// A ptrace request that takes integers (or a pointer passed as one); the
/// tracer and the domain nesting share it.
pub(crate) fn ptrace(
    req: libc::c_uint,
    pid: libc::pid_t,
    addr: usize,
    data: usize,
) -> std::io::Result<()> {
    // SAFETY: every request used takes integers, or a pointer to a live
    // register struct of the right type passed as `data`.
    let r = unsafe {
        libc::ptrace(
            req,
            pid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    };
    if r == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_round_trips_through_bytes() {
        for call in CALLS {
            let f = Fail {
                step: 7,
                call,
                errno: 13,
            };
            assert_eq!(Fail::from_bytes(f.to_bytes()), Some(f));
        }
    }
}
