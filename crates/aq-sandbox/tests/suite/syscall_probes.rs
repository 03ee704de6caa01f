//! Probes for the seccomp and capability boundary (`sys:<name>`), run inside
//! the sandbox by [`super::probe`]. Each makes the real call with arguments a
//! kernel without the filter would accept (or reject for another reason, with
//! another errno), so the test can tell the filter's answer from any other.

use std::io;

use super::probe::{DONE, DONE_WITH_DATA, KILLED_BY_SIGSYS};

fn ret(r: libc::c_long) -> io::Result<i32> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(DONE)
    }
}

/// Run `attempt` in a forked child and report how the child ended: DONE when
/// it exited, KILLED_BY_SIGSYS when seccomp killed it; another signal means
/// the probe could not run (reported as errno 0, never as "blocked").
fn in_child(attempt: fn()) -> io::Result<i32> {
    // SAFETY: the child only runs `attempt` (one raw syscall) and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        attempt();
        // SAFETY: leave the child without running the test harness's code.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child; status is a valid int.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err(io::Error::last_os_error());
    }
    if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSYS {
        return Ok(KILLED_BY_SIGSYS);
    }
    if libc::WIFEXITED(status) {
        return Ok(DONE);
    }
    eprintln!("probe child ended with wait status {status:#x}");
    Err(io::Error::from_raw_os_error(0))
}

/// Fork-like: `r == 0` is the child, which leaves at once.
fn reap(r: libc::c_long) -> io::Result<i32> {
    if r == 0 {
        // SAFETY: the child of a fork-like call leaves at once.
        unsafe { libc::_exit(0) };
    }
    if r > 0 {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(r as libc::pid_t, &mut status, 0) };
    }
    ret(r)
}

/// `DONE` when `/proc/self/status` shows no_new_privs, a seccomp filter and
/// no capability in any set; else the lines go to stderr and `DONE_WITH_DATA`.
fn status() -> io::Result<i32> {
    let text = std::fs::read_to_string("/proc/self/status")?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
            .unwrap_or("missing")
    };
    let mut ok = field("NoNewPrivs") == "1" && field("Seccomp") == "2";
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        ok &= field(cap) == "0000000000000000";
    }
    if !ok {
        eprintln!("{text}");
    }
    Ok(if ok { DONE } else { DONE_WITH_DATA })
}

/// A pty whose slave is this process's controlling terminal (so `TIOCSTI`
/// would be allowed without the filter); returns the slave fd.
fn controlling_pty() -> io::Result<libc::c_int> {
    // SAFETY: plain libc calls on fds we own; the name buffer is large enough.
    unsafe {
        libc::setsid();
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        if master == -1 || libc::grantpt(master) == -1 || libc::unlockpt(master) == -1 {
            return Err(io::Error::last_os_error());
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(master, name.as_mut_ptr(), name.len()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let slave = libc::open(name.as_ptr(), libc::O_RDWR);
        if slave == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(slave)
    }
}

fn socket(family: libc::c_int, kind: libc::c_int, protocol: libc::c_int) -> io::Result<i32> {
    // SAFETY: socket takes integers; the fd is closed at once.
    let fd = unsafe { libc::socket(family, kind, protocol) };
    if fd >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
    }
    ret(fd.into())
}

#[cfg(target_arch = "x86_64")]
fn i386_getpid() {
    // SAFETY: `int 0x80` with eax = 20 is the i386 getpid; it reads no memory.
    unsafe {
        std::arch::asm!("int 0x80", inout("eax") 20 => _, options(nostack));
    }
}

#[cfg(target_arch = "x86_64")]
fn x32_getpid() {
    // SAFETY: getpid (39) through the x32 table; no arguments.
    unsafe { libc::syscall(0x4000_0000 | libc::SYS_getpid) };
}

pub fn run(name: &str) -> io::Result<i32> {
    // SAFETY (every block below): raw system calls with integer arguments or
    // pointers to local buffers of the size the kernel reads.
    match name {
        "status" => status(),
        "ptrace-traceme" => ret(unsafe {
            libc::ptrace(
                libc::PTRACE_TRACEME,
                0,
                std::ptr::null_mut::<libc::c_void>(),
                std::ptr::null_mut::<libc::c_void>(),
            )
        }),
        "process-vm-readv" => {
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
            ret(unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) } as _)
        }
        // BPF_PROG_LOAD with no attributes: EPERM without the filter too
        // (kernel.unprivileged_bpf_disabled, no CAP_BPF), else EINVAL.
        "bpf" => ret(unsafe { libc::syscall(libc::SYS_bpf, 5, 0usize, 0usize) }),
        // A command no kernel has: EINVAL without the filter, whatever the
        // caller's privileges (since Linux 6.5 the unprivileged check is per
        // command, after the command is known).
        "bpf-unknown-command" => {
            ret(unsafe { libc::syscall(libc::SYS_bpf, 0x7fff, 0usize, 0usize) })
        }
        // UFFD_USER_MODE_ONLY: allowed to unprivileged users without the filter.
        "userfaultfd" => ret(unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | 1) }),
        "perf-event-open" => {
            // struct perf_event_attr: type PERF_TYPE_SOFTWARE, size, config
            // CPU_CLOCK, kernel not excluded. Without the filter: EACCES when
            // kernel.perf_event_paranoid >= 2, else the event opens.
            let mut attr = [0u8; 128];
            attr[0..4].copy_from_slice(&1u32.to_ne_bytes());
            attr[4..8].copy_from_slice(&128u32.to_ne_bytes());
            ret(unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) })
        }
        "mount" => ret(unsafe {
            libc::mount(
                c"none".as_ptr(),
                c"/tmp".as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                std::ptr::null(),
            )
        }
        .into()),
        // The target is looked up before any permission check: ENOENT
        // without the filter, with or without CAP_SYS_ADMIN and Landlock.
        "mount-missing-target" => ret(unsafe {
            libc::mount(
                c"none".as_ptr(),
                c"/aq-probe-no-such-mount-point".as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                std::ptr::null(),
            )
        }
        .into()),
        "unshare-user" => ret(unsafe { libc::unshare(libc::CLONE_NEWUSER) }.into()),
        "clone-newuser" => reap(unsafe {
            libc::syscall(
                libc::SYS_clone,
                libc::CLONE_NEWUSER | libc::SIGCHLD,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        }),
        "clone-untraced" => reap(unsafe {
            libc::syscall(
                libc::SYS_clone,
                libc::CLONE_UNTRACED | libc::SIGCHLD,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        }),
        "clone-shared-fs" => reap(unsafe {
            libc::syscall(
                libc::SYS_clone,
                libc::CLONE_FS | libc::SIGCHLD,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        }),
        "clone3" => {
            // struct clone_args (v0, 64 bytes): flags 0, exit_signal SIGCHLD.
            let mut args = [0u64; 8];
            args[4] = libc::SIGCHLD as u64;
            reap(unsafe { libc::syscall(libc::SYS_clone3, args.as_mut_ptr(), 64usize) })
        }
        "fork" => reap(unsafe { libc::fork() }.into()),
        "io-uring-setup" => {
            let mut params = [0u8; 120];
            ret(unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, params.as_mut_ptr()) })
        }
        // KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING.
        "keyctl" => ret(unsafe { libc::syscall(libc::SYS_keyctl, 0, -3, 0) }),
        "tiocsti" => {
            let slave = controlling_pty()?;
            let c = b'x';
            ret(unsafe { libc::ioctl(slave, libc::TIOCSTI, &c) }.into())
        }
        "tioclinux" => {
            let slave = controlling_pty()?;
            let subcode = 7u8; // TIOCL_GETMOUSEREPORTING
            ret(unsafe { libc::ioctl(slave, libc::TIOCLINUX, &subcode) }.into())
        }
        "socket-netlink" => socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE),
        "socket-packet" => socket(libc::AF_PACKET, libc::SOCK_RAW, 0),
        "socket-vsock" => socket(libc::AF_VSOCK, libc::SOCK_STREAM, 0),
        // The kernel checks the type (15: none) before it looks for the
        // family: EINVAL without the filter, whether or not it has vsock.
        "socket-vsock-bad-type" => socket(libc::AF_VSOCK, 15, 0),
        "socket-inet" => socket(libc::AF_INET, libc::SOCK_STREAM, 0),
        "socket-inet6" => socket(libc::AF_INET6, libc::SOCK_DGRAM, 0),
        "socket-unix" => socket(libc::AF_UNIX, libc::SOCK_STREAM, 0),
        #[cfg(target_arch = "x86_64")]
        "i386-getpid" => in_child(i386_getpid),
        #[cfg(target_arch = "x86_64")]
        "x32-getpid" => in_child(x32_getpid),
        _ => Ok(0),
    }
}
