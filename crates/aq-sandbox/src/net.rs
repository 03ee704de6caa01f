//! Network namespace: a fresh namespace has a `lo` that is down; bring it up so
//! the command's own loopback works while the host's stays out of reach.

use crate::syscall::{Call, Fail, check};

/// `ioctl(SIOCSIFFLAGS, IFF_UP)` on `lo`.
pub(crate) fn apply_loopback_up(step: u32) -> Result<(), Fail> {
    // SAFETY: plain socket creation.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(fd.into(), step, Call::Socket)?;
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    let res = (|| {
        // SAFETY: fd is a socket, ifr is a valid ifreq naming `lo`.
        check(
            unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut ifr) }.into(),
            step,
            Call::Ioctl,
        )?;
        // SAFETY: SIOCGIFFLAGS filled ifru_flags.
        unsafe { ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
        // SAFETY: as above.
        check(
            unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &ifr) }.into(),
            step,
            Call::Ioctl,
        )
    })();
    // SAFETY: fd is ours.
    unsafe { libc::close(fd) };
    res.map(|_| ())
}

/// Most loopback listeners one sandbox may have (one message carries them).
pub(crate) const MAX_LISTENERS: usize = 8;

/// Listen on each port at `127.0.0.1` in this (the sandbox's) network
/// namespace and send the sockets to the caller over `channel` in one
/// message, then close them here: only the caller serves them.
pub(crate) fn apply_listen_on_loopback(
    ports: &[u16],
    channel: libc::c_int,
    step: u32,
) -> Result<(), Fail> {
    let mut fds = [-1 as libc::c_int; MAX_LISTENERS];
    let n = ports.len().min(MAX_LISTENERS);
    let result = (|| {
        for (slot, port) in fds.iter_mut().zip(&ports[..n]) {
            *slot = listen_on(*port, step)?;
        }
        check(send_fds(channel, &fds[..n]), step, Call::Sendmsg).map(|_| ())
    })();
    for fd in fds.iter().filter(|fd| **fd >= 0) {
        // SAFETY: our own descriptors.
        unsafe { libc::close(*fd) };
    }
    result
}

fn listen_on(port: u16, step: u32) -> Result<libc::c_int, Fail> {
    // SAFETY: plain socket creation.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    check(fd.into(), step, Call::Socket)?;
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
        },
        sin_zero: [0; 8],
    };
    let res = (|| {
        // SAFETY: addr is a valid sockaddr_in of the given length.
        let r = unsafe {
            libc::bind(
                fd,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        check(r.into(), step, Call::Socket)?;
        // SAFETY: fd is a bound stream socket.
        check(unsafe { libc::listen(fd, 128) }.into(), step, Call::Socket)
    })();
    match res {
        Ok(_) => Ok(fd),
        Err(e) => {
            // SAFETY: our own descriptor.
            unsafe { libc::close(fd) };
            Err(e)
        }
    }
}

/// `sendmsg` one byte with `fds` attached (`SCM_RIGHTS`), without allocating.
fn send_fds(socket: libc::c_int, fds: &[libc::c_int]) -> libc::c_long {
    #[repr(C, align(8))]
    struct Space([u8; 128]);
    let mut space = Space([0; 128]);
    let mut byte = [b'l'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let len = std::mem::size_of_val(fds) as u32;
    // SAFETY: msghdr is plain data; every pointer set below outlives the
    // call, and the control buffer holds MAX_LISTENERS descriptors.
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

/// Receive the listeners the sandbox sent (caller side).
pub(crate) fn receive_listeners(
    socket: &std::os::fd::OwnedFd,
) -> std::io::Result<Vec<std::os::fd::OwnedFd>> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    #[repr(C, align(8))]
    struct Space([u8; 128]);
    let mut space = Space([0; 128]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut out = Vec::new();
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
            return Err(std::io::Error::last_os_error());
        }
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    / std::mem::size_of::<libc::c_int>();
                for i in 0..count {
                    let fd = std::ptr::read_unaligned(data.cast::<libc::c_int>().add(i));
                    out.push(OwnedFd::from_raw_fd(fd));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(out)
}
