//! Copying one direction of a tunnel: `splice(2)` from socket to pipe to
//! socket, so the bytes stay in the kernel; a plain read/write loop where
//! splice is refused (`EINVAL` for a socket type it does not support) or
//! does not exist (outside Linux).

use std::io::{self, Read, Write};
use std::net::TcpStream;

#[cfg(target_os = "linux")]
pub(crate) use splice::pump;

/// Elsewhere there is no `splice`: the read/write loop.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pump(from: &TcpStream, to: &TcpStream) -> (u64, io::Result<()>) {
    read_write(from, to)
}

/// Buffer of the read/write fallback.
const BUF: usize = 256 * 1024;

#[cfg(target_os = "linux")]
mod splice {
    use std::io;
    use std::net::TcpStream;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

    /// Bytes asked of one `splice` into the pipe.
    const CHUNK: usize = 1 << 20;
    /// Pipe capacity asked for (the default limit for unprivileged users is
    /// 1 MiB, `/proc/sys/fs/pipe-max-size`); a refusal leaves 64 KiB.
    const PIPE_SIZE: libc::c_int = 1 << 20;

    /// Copies until `from` reaches end of file. Returns the bytes copied and
    /// how it ended; a reset by either peer is an error.
    pub(crate) fn pump(from: &TcpStream, to: &TcpStream) -> (u64, io::Result<()>) {
        match Pipe::new() {
            Ok(pipe) => {
                let mut n = 0;
                match splice_all(&pipe, from.as_raw_fd(), to.as_raw_fd(), &mut n) {
                    Err(e) if n == 0 && e.raw_os_error() == Some(libc::EINVAL) => {
                        super::read_write(from, to)
                    }
                    r => (n, r),
                }
            }
            Err(_) => super::read_write(from, to),
        }
    }

    struct Pipe {
        read: OwnedFd,
        write: OwnedFd,
    }

    impl Pipe {
        fn new() -> io::Result<Pipe> {
            let mut fds = [0 as RawFd; 2];
            // SAFETY: fds has room for the two descriptors pipe2 writes.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: pipe2 succeeded: both are open descriptors we now own.
            let pipe = unsafe {
                Pipe {
                    read: OwnedFd::from_raw_fd(fds[0]),
                    write: OwnedFd::from_raw_fd(fds[1]),
                }
            };
            // SAFETY: F_SETPIPE_SZ on our own pipe; failure is harmless.
            unsafe { libc::fcntl(pipe.write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
            Ok(pipe)
        }
    }

    fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
        loop {
            // SAFETY: plain descriptors, null offsets (neither is seekable).
            let r = unsafe {
                libc::splice(
                    from,
                    std::ptr::null_mut(),
                    to,
                    std::ptr::null_mut(),
                    len,
                    libc::SPLICE_F_MOVE,
                )
            };
            if r >= 0 {
                return Ok(r as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn splice_all(pipe: &Pipe, from: RawFd, to: RawFd, copied: &mut u64) -> io::Result<()> {
        loop {
            let mut in_pipe = splice(from, pipe.write.as_raw_fd(), CHUNK)?;
            if in_pipe == 0 {
                return Ok(());
            }
            while in_pipe > 0 {
                let out = splice(pipe.read.as_raw_fd(), to, in_pipe)?;
                if out == 0 {
                    return Err(io::ErrorKind::WriteZero.into());
                }
                in_pipe -= out;
                *copied += out as u64;
            }
        }
    }
}

fn read_write(mut from: &TcpStream, mut to: &TcpStream) -> (u64, io::Result<()>) {
    let mut buf = vec![0u8; BUF];
    let mut n = 0u64;
    loop {
        let got = match from.read(&mut buf) {
            Ok(0) => return (n, Ok(())),
            Ok(g) => g,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return (n, Err(e)),
        };
        if let Err(e) = to.write_all(&buf[..got]) {
            return (n, Err(e));
        }
        n += got as u64;
    }
}
