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
