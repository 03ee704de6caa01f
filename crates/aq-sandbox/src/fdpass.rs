//! Passing descriptors over a Unix socket (`SCM_RIGHTS`): the seccomp
//! listener from the command to the exec guard, and the network relay's
//! listening sockets from the supervisor to the caller. Sending runs between
//! `fork` and `exec`, so it does not allocate.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A close-on-exec `SOCK_SEQPACKET` Unix socket pair: one message per send,
/// so a message and its descriptors arrive together or not at all.
pub(crate) fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid two-int array.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: two fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Most descriptors one message carries.
pub(crate) const MAX_FDS: usize = 8;

/// Control-message space for [`MAX_FDS`] descriptors and the sender's
/// credentials, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct Space([u8; 128]);

/// `sendmsg` the byte `tag` with `fds` attached. Returns `sendmsg`'s result
/// (-1 and errno on failure); at most [`MAX_FDS`] descriptors are sent.
pub(crate) fn send(socket: libc::c_int, fds: &[libc::c_int], tag: u8) -> libc::c_long {
    let fds = &fds[..fds.len().min(MAX_FDS)];
    let mut space = Space([0; 128]);
    let mut byte = [tag];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let len = std::mem::size_of_val(fds) as u32;
    // SAFETY: msghdr is plain data; every pointer set below outlives the
    // call, and the control buffer holds MAX_FDS descriptors.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.0.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(len) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(len) as _;
        std::ptr::copy_nonoverlapping(
            fds.as_ptr().cast::<u8>(),
            libc::CMSG_DATA(cmsg),
            len as usize,
        );
        libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) as libc::c_long
    }
}

/// One message received with [`receive`].
pub(crate) struct Received {
    /// Bytes of data (0: the other end closed without sending).
    pub(crate) bytes: usize,
    /// The descriptors it carried, close-on-exec.
    pub(crate) fds: Vec<OwnedFd>,
    /// The sender's pid, when the socket has `SO_PASSCRED`.
    pub(crate) pid: Option<libc::pid_t>,
}

/// Receive one message with its descriptors and credentials.
pub(crate) fn receive(socket: &OwnedFd) -> io::Result<Received> {
    let mut space = Space([0; 128]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut out = Received {
        bytes: 0,
        fds: Vec::new(),
        pid: None,
    };
    // SAFETY: msghdr is plain data pointing to buffers alive for the call;
    // control messages are walked with the libc macros within msg_controllen.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.0.as_mut_ptr().cast();
        msg.msg_controllen = space.0.len() as _;
        let n = loop {
            let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n == -1 && crate::syscall::errno() == libc::EINTR {
                continue;
            }
            break n;
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        out.bytes = n as usize;
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            let data = libc::CMSG_DATA(cmsg);
            match ((*cmsg).cmsg_level, (*cmsg).cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_RIGHTS) => {
                    let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                        / std::mem::size_of::<libc::c_int>();
                    for i in 0..count {
                        let fd = std::ptr::read_unaligned(data.cast::<libc::c_int>().add(i));
                        out.fds.push(OwnedFd::from_raw_fd(fd));
                    }
                }
                (libc::SOL_SOCKET, libc::SCM_CREDENTIALS) => {
                    let cred = std::ptr::read_unaligned(data.cast::<libc::ucred>());
                    out.pid = Some(cred.pid);
                }
                _ => {}
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(out)
}
