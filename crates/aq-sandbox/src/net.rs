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
pub(crate) const MAX_LISTENERS: usize = crate::fdpass::MAX_FDS;

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
        check(
            crate::fdpass::send(channel, &fds[..n], b'l'),
            step,
            Call::Sendmsg,
        )
        .map(|_| ())
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

/// Receive the listeners the sandbox sent (caller side).
pub(crate) fn receive_listeners(
    socket: &std::os::fd::OwnedFd,
) -> std::io::Result<Vec<std::os::fd::OwnedFd>> {
    crate::fdpass::receive(socket).map(|r| r.fds)
}
