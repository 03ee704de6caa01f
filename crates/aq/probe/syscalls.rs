//! System calls the seccomp filter denies, made for real with arguments a
//! kernel without the filter would accept; and the privileges left
//! (capabilities, no_new_privs, seccomp mode) as `/proc/self/status` shows them.

use std::io;
use std::process::{Command, Stdio};

use super::{Context, Outcome, close_fd, errno_text, syscall_denied};

pub(super) fn sys_process_vm_readv(_: &Context) -> Outcome {
    let src = [7u8; 8];
    let mut dst = [0u8; 8];
    let local = libc::iovec {
        iov_base: dst.as_mut_ptr().cast(),
        iov_len: dst.len(),
    };
    let remote = libc::iovec {
        iov_base: src.as_ptr() as *mut libc::c_void,
        iov_len: src.len(),
    };
    // SAFETY: both iovecs point at live buffers of the stated length.
    syscall_denied(unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) } as _)
}

pub(super) fn sys_pidfd_getfd(_: &Context) -> Outcome {
    // SAFETY: integer arguments only.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
    if pidfd == -1 {
        return Outcome::Error(format!(
            "pidfd_open: {}",
            errno_text(&io::Error::last_os_error())
        ));
    }
    // SAFETY: integer arguments only.
    let outcome = close_fd(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd, 0, 0) });
    // SAFETY: our fd.
    unsafe { libc::close(pidfd as libc::c_int) };
    outcome
}

pub(super) fn sys_perf_event_open(_: &Context) -> Outcome {
    // struct perf_event_attr: type PERF_TYPE_SOFTWARE, size, config CPU_CLOCK.
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes());
    attr[4..8].copy_from_slice(&128u32.to_ne_bytes());
    // exclude_kernel and exclude_hv: what perf_event_paranoid 2 lets any
    // user measure of its own process, so the control can succeed.
    attr[40..48].copy_from_slice(&((1u64 << 5) | (1u64 << 6)).to_ne_bytes());
    // SAFETY: attr is a zeroed perf_event_attr of the stated size.
    close_fd(unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) })
}

pub(super) fn sys_bpf(_: &Context) -> Outcome {
    // `r0 = 0; exit`: a socket filter that drops everything, loaded and closed.
    let insns: [[u8; 8]; 2] = [[0xb7, 0, 0, 0, 0, 0, 0, 0], [0x95, 0, 0, 0, 0, 0, 0, 0]];
    let license = c"GPL";
    // union bpf_attr for BPF_PROG_LOAD: prog_type, insn_cnt, insns, license.
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // BPF_PROG_TYPE_SOCKET_FILTER
    attr[4..8].copy_from_slice(&2u32.to_ne_bytes());
    attr[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
    attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
    // SAFETY: attr is a bpf_attr of the stated size whose pointers are live.
    close_fd(unsafe {
        libc::syscall(
            libc::SYS_bpf,
            5, // BPF_PROG_LOAD
            attr.as_mut_ptr(),
            attr.len(),
        )
    })
}

/// A fork-like call's return: the child (0) leaves at once, the parent reaps it.
pub(super) fn reap(r: libc::c_long) -> Outcome {
    if r == 0 {
        // SAFETY: the child of a fork-like call leaves without running anything.
        unsafe { libc::_exit(0) };
    }
    if r > 0 {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(r as libc::pid_t, &mut status, 0) };
    }
    syscall_denied(r)
}

pub(super) fn sys_clone_newuser(_: &Context) -> Outcome {
    // SAFETY: a fork-like clone (no new stack); the child calls only _exit.
    reap(unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::CLONE_NEWUSER | libc::SIGCHLD,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    })
}

pub(super) fn sys_clone3_newuser(_: &Context) -> Outcome {
    // struct clone_args (v0, 64 bytes): flags, ..., exit_signal SIGCHLD.
    let mut args = [0u64; 8];
    args[0] = libc::CLONE_NEWUSER as u64;
    args[4] = libc::SIGCHLD as u64;
    // SAFETY: args is a clone_args of the stated size; the child calls only _exit.
    reap(unsafe { libc::syscall(libc::SYS_clone3, args.as_mut_ptr(), 64usize) })
}

pub(super) fn sys_setns(_: &Context) -> Outcome {
    let f = match std::fs::File::open("/proc/self/ns/net") {
        Ok(f) => f,
        Err(e) => {
            return Outcome::Error(format!("open /proc/self/ns/net: {}", errno_text(&e)));
        }
    };
    use std::os::fd::AsRawFd;
    // SAFETY: an fd we own and an integer flag.
    syscall_denied(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }.into())
}

pub(super) fn sys_tiocsti(c: &Context) -> Outcome {
    let Some(fd) = c.pty_fd else {
        return Outcome::Error("aq verify could not open a pseudo-terminal".to_string());
    };
    // SAFETY: setsid and ioctls on an fd this process inherited; the byte
    // would go to aq verify's own pseudo-terminal, which nothing reads.
    unsafe {
        if libc::setsid() == -1 {
            return Outcome::Error(format!(
                "setsid: {}",
                errno_text(&io::Error::last_os_error())
            ));
        }
        if libc::ioctl(fd, libc::TIOCSCTTY, 0) == -1 {
            return Outcome::Error(format!(
                "TIOCSCTTY: {}",
                errno_text(&io::Error::last_os_error())
            ));
        }
        let byte = b'#';
        syscall_denied(libc::ioctl(fd, libc::TIOCSTI, &byte).into())
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) fn sys_foreign_abi(_: &Context) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return Outcome::Error(format!("cannot find aq: {}", errno_text(&e))),
    };
    match Command::new(exe)
        .args(["__probe", "helper-i386-getpid"])
        .stdin(Stdio::null())
        .status()
    {
        Err(e) => Outcome::Error(format!("cannot start the helper: {}", errno_text(&e))),
        Ok(s) if s.signal() == Some(libc::SIGSYS) => {
            Outcome::Held("the process was killed by SIGSYS".to_string())
        }
        Ok(s) if s.success() => Outcome::Leak("the i386 call returned".to_string()),
        Ok(s) => Outcome::Error(format!("the helper ended with {s}")),
    }
}

pub(super) fn status_field_check(fields: &[&str], want: &str) -> Outcome {
    let text = match std::fs::read_to_string("/proc/self/status") {
        Ok(t) => t,
        Err(e) => return Outcome::Error(format!("/proc/self/status: {}", errno_text(&e))),
    };
    let mut shown = Vec::new();
    let mut ok = true;
    for name in fields {
        let value = text
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim);
        match value {
            None => return Outcome::Error(format!("no {name} line in /proc/self/status")),
            Some(v) => {
                ok &= v == want;
                shown.push(format!("{name} {v}"));
            }
        }
    }
    if ok {
        Outcome::Held(shown.join(", "))
    } else {
        Outcome::Leak(shown.join(", "))
    }
}
