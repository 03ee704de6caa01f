//! Handing the relay's listening socket out of the sandbox.
//!
//! Inside the sandbox's network namespace, before the command runs, the
//! sandbox's init binds `127.0.0.1:PORT` ([`bind_relay_listener`]) and sends
//! that one descriptor over the session's inherited Unix socket pair
//! ([`send_listener`]), then closes both. Outside, `aq` receives it
//! ([`recv_listener`]) and serves it with [`crate::ProxyServer::serve`].
//! A socket belongs to the namespace it was created in, wherever its
//! descriptor goes: the listener accepts connections from inside the sandbox
//! only, and the broker's upstream sockets, created outside, use the host's
//! network. See the crate docs for why this shape.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

/// The byte sent with the descriptor: a version tag, so that a stray write
/// on the channel is not taken for a handoff.
const TAG: u8 = 0xa9;

/// Binds the relay's listener on `127.0.0.1:port` (0 picks one). Call it
/// inside the sandbox's network namespace, with `lo` up.
pub fn bind_relay_listener(port: u16) -> io::Result<TcpListener> {
    TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
}

/// Sends `listener`'s descriptor over `channel` (`SCM_RIGHTS`). The caller
/// still owns its copy and should close it.
pub fn send_listener(channel: &UnixStream, listener: &TcpListener) -> io::Result<()> {
    let fd: RawFd = listener.as_raw_fd();
    let mut byte = [TAG];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Aligned room for one cmsghdr carrying one int.
    let mut space = [0u64; 8];
    // SAFETY: CMSG_SPACE is a pure size computation.
    let cmsg_space = unsafe { libc::CMSG_SPACE(size_of::<RawFd>() as u32) } as usize;
    debug_assert!(cmsg_space <= size_of::<[u64; 8]>());
    // SAFETY: msghdr is plain data; all-zero is valid.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space.as_mut_ptr().cast();
    msg.msg_controllen = cmsg_space as _;
    // SAFETY: msg_control points at cmsg_space zeroed, aligned bytes, so
    // CMSG_FIRSTHDR returns a valid header pointer into them and CMSG_DATA
    // has room for one descriptor.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
    }
    loop {
        // SAFETY: msg is fully initialised above and outlives the call.
        let r = unsafe { libc::sendmsg(channel.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if r == 1 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if r < 0 && e.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return Err(if r < 0 {
            e
        } else {
            io::Error::new(io::ErrorKind::WriteZero, "handoff: nothing sent")
        });
    }
}

/// Receives a listener sent by [`send_listener`], and checks that it is a
/// listening TCP socket before trusting it.
pub fn recv_listener(channel: &UnixStream) -> io::Result<TcpListener> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut space = [0u64; 8];
    // SAFETY: msghdr is plain data; all-zero is valid.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space.as_mut_ptr().cast();
    msg.msg_controllen = size_of::<[u64; 8]>() as _;
    let r = loop {
        // SAFETY: msg points at buffers that outlive the call;
        // MSG_CMSG_CLOEXEC marks received descriptors close-on-exec.
        let r = unsafe { libc::recvmsg(channel.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        break r;
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // Take ownership of every descriptor that arrived first, so none leaks
    // whatever the checks below decide.
    let mut fds: Vec<OwnedFd> = Vec::new();
    // SAFETY: recvmsg filled msg; the CMSG_* walk stays within
    // msg_controllen, and each SCM_RIGHTS payload holds whole ints that are
    // now our descriptors.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let len = (*cmsg).cmsg_len as usize - (data as usize - cmsg as usize);
                for i in 0..len / size_of::<RawFd>() {
                    let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                    fds.push(OwnedFd::from_raw_fd(fd));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if r == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "handoff: channel closed before a listener arrived",
        ));
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 || fds.len() != 1 || byte[0] != TAG {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "handoff: expected one listener descriptor, got {} (tag {:#x})",
                fds.len(),
                byte[0]
            ),
        ));
    }
    let fd = fds.remove(0);
    check_listening_tcp(&fd)?;
    Ok(TcpListener::from(fd))
}

fn sockopt(fd: &OwnedFd, opt: libc::c_int) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most len bytes into v.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v)
}

fn check_listening_tcp(fd: &OwnedFd) -> io::Result<()> {
    let domain = sockopt(fd, libc::SO_DOMAIN)?;
    let ty = sockopt(fd, libc::SO_TYPE)?;
    let listening = sockopt(fd, libc::SO_ACCEPTCONN)?;
    if (domain == libc::AF_INET || domain == libc::AF_INET6)
        && ty == libc::SOCK_STREAM
        && listening == 1
    {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "handoff: the descriptor is not a listening TCP socket",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;

    #[test]
    fn listener_survives_the_handoff() {
        let (inside, outside) = UnixStream::pair().unwrap();
        let l = bind_relay_listener(0).unwrap();
        let addr = l.local_addr().unwrap();
        send_listener(&inside, &l).unwrap();
        drop(l);
        let got = recv_listener(&outside).unwrap();
        assert_eq!(got.local_addr().unwrap(), addr);
        let _c = TcpStream::connect(addr).unwrap();
        got.accept().unwrap();
    }

    #[test]
    fn a_connected_socket_is_not_taken_for_a_listener() {
        let (inside, outside) = UnixStream::pair().unwrap();
        let l = bind_relay_listener(0).unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        // Send a connected stream's descriptor through the same path.
        // SAFETY: the TcpListener wrapper is forgotten, never closed twice.
        let fake = unsafe { TcpListener::from_raw_fd(c.as_raw_fd()) };
        send_listener(&inside, &fake).unwrap();
        std::mem::forget(fake);
        let e = recv_listener(&outside).unwrap_err();
        assert!(e.to_string().contains("not a listening TCP socket"), "{e}");
        drop(inside);
        let e = recv_listener(&outside).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
