//! Who is on the other end of the supervisor's socket: the process that
//! wrote a shim's request, as the kernel tells it (a shim's own word is not
//! taken). Linux says it through `SO_PASSCRED` and `SO_PEERCRED`; macOS
//! through `LOCAL_PEERPID` and `getpeereid`.

#[cfg(target_os = "linux")]
pub(crate) use linux::{peer, sender_pid};
#[cfg(not(target_os = "linux"))]
pub(crate) use other::{peer, sender_pid};

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    /// The pid the kernel attached to the first bytes waiting on `stream`
    /// (`SO_PASSCRED`, peeked: the request is read as usual afterwards), as
    /// seen from here; `None` when there is none.
    pub(crate) fn sender_pid(stream: &UnixStream) -> Option<u32> {
        let fd = stream.as_raw_fd();
        let one: libc::c_int = 1;
        // SAFETY: setsockopt reads one int.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PASSCRED,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        };
        if r != 0 {
            return None;
        }
        #[repr(C, align(8))]
        struct Space([u8; 64]);
        let mut space = Space([0; 64]);
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // SAFETY: msghdr points to buffers alive for the call; the control
        // messages are walked with the libc macros within msg_controllen.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = space.0.as_mut_ptr().cast();
            msg.msg_controllen = space.0.len() as _;
            if libc::recvmsg(fd, &mut msg, libc::MSG_PEEK) <= 0 {
                return None;
            }
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET
                    && (*cmsg).cmsg_type == libc::SCM_CREDENTIALS
                {
                    let cred =
                        std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::ucred>());
                    return u32::try_from(cred.pid).ok().filter(|p| *p > 0);
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        None
    }

    /// The connecting process, from the kernel (`SO_PEERCRED`): pid as seen
    /// from here (the host's, even for a process in the sandbox's PID namespace).
    pub(crate) fn peer(stream: &UnixStream) -> (u32, u32) {
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: cred and len are valid for writes of the sizes given.
        let r = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        if r == 0 {
            (cred.pid.max(0) as u32, cred.uid)
        } else {
            (0, u32::MAX)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    /// No credentials travel with the bytes here; without the Linux
    /// sandbox's socket guard the process that connected is the one that
    /// writes, which [`peer`] names.
    pub(crate) fn sender_pid(_: &UnixStream) -> Option<u32> {
        None
    }

    /// The connecting process: its pid (`LOCAL_PEERPID`) and effective uid
    /// (`getpeereid`); `(0, u32::MAX)` when either is unknown, as on Linux.
    pub(crate) fn peer(stream: &UnixStream) -> (u32, u32) {
        let fd = stream.as_raw_fd();
        let mut pid: libc::pid_t = 0;
        let mut len = std::mem::size_of::<libc::pid_t>() as libc::socklen_t;
        // SAFETY: pid and len are valid for writes of the sizes given.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_LOCAL,
                libc::LOCAL_PEERPID,
                (&mut pid as *mut libc::pid_t).cast(),
                &mut len,
            )
        };
        let (mut uid, mut gid) = (0, 0);
        // SAFETY: uid and gid are valid for writes.
        let q = unsafe { libc::getpeereid(fd, &mut uid, &mut gid) };
        if r == 0 && q == 0 {
            (pid.max(0) as u32, uid)
        } else {
            (0, u32::MAX)
        }
    }
}
