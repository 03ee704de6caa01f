//! The socket guard: no Unix socket of the host is reachable from the
//! sandbox, only those its own processes listen on (and the few aq itself
//! offers it).
//!
//! # Why a guard, not a rule
//!
//! Landlock (up to ABI 8) does not govern `connect()` to a pathname Unix
//! socket, and the network namespace holds only abstract ones: a command in
//! the sandbox could reach the session bus (`systemd-run --user`: a command
//! outside the sandbox), an ssh agent, `docker.sock`, X11, gpg-agent or an
//! editor's IPC socket, wherever they are. A seccomp filter cannot read the
//! address a `connect` points to, and a check that reads it and then lets
//! the kernel go on (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`) can be raced: a
//! second thread rewrites the address, or `dup2`s another socket over the
//! descriptor, between the check and the kernel's own copy.
//!
//! So every `connect` of the sandbox is a seccomp user notification, and
//! the caller makes the connection itself on the socket it checked:
//!
//! 1. it takes a copy of the caller's socket (`pidfd_getfd`: the same open
//!    socket, not a new one) and of the address;
//! 2. a socket that is not a Unix socket is connected to the copied address
//!    and the result returned: nothing a racing thread changes afterwards
//!    can redirect it;
//! 3. a path is resolved as the calling thread sees it (its root and working
//!    directory, the sandbox's mounts and masks: `openat2` with
//!    `RESOLVE_IN_ROOT` from `/proc/<tid>/root`), to one file held open;
//! 4. who listens on that file is asked of the kernel without connecting
//!    (`sock_diag`, [`crate::unix_diag`]): with the network off, the
//!    sandbox's network namespace holds only its own processes' sockets; with
//!    the host's network, the listening socket must be held by a process of
//!    the sandbox's PID namespace. aq's own sockets (the session's
//!    supervisor) are named by the caller;
//! 5. an allowed connection is made through the file held open
//!    (`/proc/self/fd/N`), so it reaches the socket that was checked; a
//!    refused one fails with `EACCES` (what Landlock's own
//!    `LANDLOCK_ACCESS_FS_RESOLVE_UNIX`, ABI 9, answers) and is reported once
//!    per target. A host service never sees a refused connection.
//!
//! Abstract names are looked up in the socket's own network namespace; with
//! the host's network the same rule applies to them (the listener must be the
//! sandbox's). Datagrams sent with an address (`sendto`, `sendmsg`) need no
//! `connect`; the host's datagram sockets that exist when the sandbox starts
//! are masked instead ([`crate::plan`]).
//!
//! # What a server in the sandbox sees
//!
//! A connection the guard made was made by the caller: a server in the
//! sandbox that reads `SO_PEERCRED` sees the same uid and gid, and pid 0 (a
//! process outside its PID namespace). On the sockets aq names, the
//! sandbox's socket gets `SO_PASSCRED`, so each message carries its
//! writer's credentials (`SCM_CREDENTIALS`, which the writer cannot forge).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Mutex, OnceLock};

use crate::exec_notify::Notifier;
use crate::unix_diag::{self, UnixTarget};

/// `SO_DOMAIN` (asm-generic and x86).
const SO_DOMAIN: libc::c_int = 39;
/// `NETLINK_SOCK_DIAG`.
const NETLINK_SOCK_DIAG: libc::c_int = 4;
/// Largest address `connect` accepts (`sizeof(struct sockaddr_storage)`).
const MAX_ADDR: usize = 128;
/// Most refused targets remembered (each is reported once).
const MAX_REPORTED: usize = 1024;

/// What the guard knows of one sandbox.
pub(crate) struct SocketGuard {
    /// The sandbox shares the host's network namespace.
    host_network: bool,
    /// A `sock_diag` socket in the sandbox's own network namespace (network
    /// off), sent by the command at the handshake; one query at a time.
    diag: OnceLock<Mutex<OwnedFd>>,
    /// The inode of the sandbox's PID namespace, set at the handshake.
    pid_ns: OnceLock<u64>,
    /// The command's pid (the caller's PID namespace), set at the handshake:
    /// its `/proc/<pid>/root/proc` lists the sandbox's processes only.
    command: OnceLock<i32>,
    /// aq's own sockets the sandbox may reach: (device, inode).
    allowed: Vec<(u64, u64)>,
    /// Targets already reported.
    reported: Mutex<HashSet<Vec<u8>>>,
    /// Socket files found bound by the sandbox's own processes, by device,
    /// inode and change time: a file is bound once, when it is made (a new
    /// bind needs a new file), so it stays the sandbox's while it exists.
    known_inside: Mutex<HashSet<FileKey>>,
}

/// A file's identity for [`SocketGuard::known_inside`]: device, inode,
/// change time (seconds, nanoseconds).
type FileKey = (u64, u64, i64, i64);

/// Most socket files remembered as the sandbox's.
const MAX_KNOWN: usize = 4096;

/// How a `connect` is answered.
pub(crate) enum Answer {
    /// Return this result from the call (0 or an errno).
    Result(Result<(), i32>),
    /// The calling thread is gone: nothing to answer.
    Gone,
}

impl SocketGuard {
    /// A guard for a sandbox on the host's network or its own, that lets
    /// the sandbox reach the sockets `allowed` (device, inode).
    pub(crate) fn new(host_network: bool, allowed: Vec<(u64, u64)>) -> SocketGuard {
        SocketGuard {
            host_network,
            diag: OnceLock::new(),
            pid_ns: OnceLock::new(),
            command: OnceLock::new(),
            allowed,
            reported: Mutex::new(HashSet::new()),
            known_inside: Mutex::new(HashSet::new()),
        }
    }

    fn is_known_inside(&self, key: &FileKey) -> bool {
        self.known_inside
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(key)
    }

    fn remember_inside(&self, key: FileKey) {
        let mut known = self.known_inside.lock().unwrap_or_else(|e| e.into_inner());
        if known.len() >= MAX_KNOWN {
            known.clear();
        }
        known.insert(key);
    }

    /// At the handshake: the command's pid (the caller's PID namespace) and
    /// the diag socket it sent, if any. Fails when the sandbox's network is
    /// its own and no diag socket came (nothing could be allowed then).
    pub(crate) fn attach(&self, command: i32, diag: Option<OwnedFd>) -> io::Result<()> {
        let ns = std::fs::metadata(format!("/proc/{command}/ns/pid"))?;
        let _ = self.pid_ns.set(std::os::unix::fs::MetadataExt::ino(&ns));
        let _ = self.command.set(command);
        match (self.host_network, diag) {
            (false, Some(d)) => {
                let _ = self.diag.set(Mutex::new(d));
                Ok(())
            }
            (false, None) => Err(io::Error::from_raw_os_error(libc::EPROTO)),
            (true, _) => Ok(()),
        }
    }

    /// Whether the guard may report `target` (the first time only).
    fn first_report(&self, target: &[u8]) -> bool {
        let mut seen = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= MAX_REPORTED {
            return false;
        }
        seen.insert(target.to_vec())
    }
}

/// Answer one `connect(fd, addr, len)` notification of thread `tid`.
pub(crate) fn handle_connect(n: &Notifier, notif: &libc::seccomp_notif) {
    let tid = notif.pid as i32;
    let args = notif.data.args;
    let answer = connect_for(n, notif.id, tid, args[0] as i32, args[1], args[2] as u32);
    if let Answer::Result(r) = answer {
        n.respond_result(notif.id, r.map(|()| 0));
    }
}

fn connect_for(n: &Notifier, id: u64, tid: i32, fd: i32, addr: u64, len: u32) -> Answer {
    let len = len as usize;
    if len > MAX_ADDR {
        return Answer::Result(Err(libc::EINVAL));
    }
    let mut buf = [0u8; MAX_ADDR];
    if len > 0 {
        if addr == 0 {
            return Answer::Result(Err(libc::EFAULT));
        }
        match crate::procfs::read_remote(tid, addr, &mut buf[..len]) {
            Ok(got) if got == len => {}
            Ok(_) => return Answer::Result(Err(libc::EFAULT)),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Answer::Gone,
            Err(_) => return Answer::Result(Err(libc::EFAULT)),
        }
    }
    let sock = match take_socket(tid, fd) {
        Ok(s) => s,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Answer::Gone,
        Err(e) => return Answer::Result(Err(e.raw_os_error().unwrap_or(libc::EBADF))),
    };
    // What was read belongs to this call only while it is pending.
    if !n.still_pending(id) {
        return Answer::Gone;
    }
    let addr = &buf[..len];
    let domain = match socket_domain(&sock) {
        Ok(d) => d,
        Err(e) => return Answer::Result(Err(e.raw_os_error().unwrap_or(libc::ENOTSOCK))),
    };
    if domain != libc::AF_UNIX {
        return Answer::Result(connect_raw(&sock, addr));
    }
    let guard = &n.shared().sockets;
    match unix_diag::classify(addr) {
        UnixTarget::Invalid => Answer::Result(connect_raw(&sock, addr)),
        UnixTarget::Abstract(name) => {
            if !guard.host_network || abstract_held_inside(guard, &name) {
                Answer::Result(connect_raw(&sock, addr))
            } else {
                let mut shown = b"@".to_vec();
                shown.extend_from_slice(&name);
                refuse(n, tid, &shown, "an abstract socket of the host's network")
            }
        }
        UnixTarget::Path(path) => {
            let file = match resolve_as(tid, &path) {
                Ok(f) => f,
                Err(e) => return Answer::Result(Err(e.raw_os_error().unwrap_or(libc::ENOENT))),
            };
            let Ok(id) = file_id(&file) else {
                return Answer::Result(Err(libc::ECONNREFUSED));
            };
            if !id.is_socket {
                // Not a socket (a mask's empty file, say): nothing can be
                // reached through that inode, so the kernel's own answer
                // (EROFS on a read-only mount, ECONNREFUSED) is given.
                return Answer::Result(connect_through(&sock, &file));
            }
            let file_key = (id.dev, id.ino);
            if guard.allowed.contains(&file_key) {
                // A host socket aq names (its own supervisor): what the
                // sandbox sends on it carries the sender's credentials
                // (`SO_PASSCRED` on the sending socket), so the server can
                // tell who wrote a request although the guard connected.
                pass_credentials(&sock);
                Answer::Result(connect_through(&sock, &file))
            } else if guard.is_known_inside(&id.key()) {
                Answer::Result(connect_through(&sock, &file))
            } else if file_listened_inside(guard, file_key) {
                guard.remember_inside(id.key());
                Answer::Result(connect_through(&sock, &file))
            } else {
                refuse(
                    n,
                    tid,
                    &path,
                    "a socket no process of the sandbox listens on",
                )
            }
        }
    }
}

/// Refuse with `EACCES`, reporting the target the first time.
fn refuse(n: &Notifier, tid: i32, target: &[u8], why: &'static str) -> Answer {
    let shared = n.shared();
    if shared.sockets.first_report(target) {
        let pid = crate::procfs::process_of(tid).unwrap_or(tid as u32);
        let shown = String::from_utf8_lossy(target);
        shared.judge.socket_refused(pid, &shown, why);
    }
    Answer::Result(Err(libc::EACCES))
}

/// A copy of thread `tid`'s descriptor `fd` (the same open file).
fn take_socket(tid: i32, fd: i32) -> io::Result<OwnedFd> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    // SAFETY: integer arguments; the fd returned is ours.
    let mut pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) };
    if pidfd < 0 && crate::syscall::errno() == libc::EINVAL {
        // Before Linux 6.9 (no thread pidfds): the process's, whose
        // descriptor table its threads share.
        let tgid = crate::procfs::process_of(tid)?;
        // SAFETY: as above.
        pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) };
    }
    if pidfd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd we own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as i32) };
    // SAFETY: integer arguments; the fd returned is ours (close-on-exec).
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(got as i32) })
}

fn socket_domain(sock: &OwnedFd) -> io::Result<libc::c_int> {
    let mut domain: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one int into domain.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_DOMAIN,
            (&mut domain as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(domain)
}

/// Set `SO_PASSCRED` on `sock`: the kernel attaches the sending process's
/// pid, uid and gid to each message sent on it.
fn pass_credentials(sock: &OwnedFd) {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt reads one int.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as u32,
        )
    };
}

/// `connect(sock, addr)` with the copied address bytes.
fn connect_raw(sock: &OwnedFd, addr: &[u8]) -> Result<(), i32> {
    // SAFETY: addr is a readable buffer of addr.len() bytes (at most 128).
    let r = unsafe {
        libc::connect(
            sock.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(crate::syscall::errno())
    }
}

/// Connect `sock` to the socket file held open as `file`.
fn connect_through(sock: &OwnedFd, file: &OwnedFd) -> Result<(), i32> {
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let mut addr = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    addr.extend_from_slice(path.as_bytes());
    addr.push(0);
    connect_raw(sock, &addr)
}

/// Open `path` (`O_PATH`) as thread `tid` would look it up: from its root
/// for an absolute path, from its working directory otherwise; symbolic
/// links are followed within that root, as the kernel's `connect` does.
fn resolve_as(tid: i32, path: &[u8]) -> io::Result<OwnedFd> {
    if let Some((fd, rest)) = unix_diag::own_descriptor_path(path) {
        return resolve_under_descriptor(tid, fd, rest);
    }
    let root = std::fs::File::open(format!("/proc/{tid}/root"))
        .or_else(|_| open_path(&format!("/proc/{tid}/root")))?;
    let full: Vec<u8> = if path.first() == Some(&b'/') {
        path.to_vec()
    } else {
        let cwd = std::fs::read_link(format!("/proc/{tid}/cwd"))?;
        let mut p = cwd.as_os_str().as_bytes().to_vec();
        p.push(b'/');
        p.extend_from_slice(path);
        p
    };
    let c = std::ffi::CString::new(full).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS,
    };
    for _ in 0..8 {
        // SAFETY: c is NUL-terminated; how is a valid open_how of its size.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root.as_raw_fd(),
                c.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh fd we own.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        if crate::syscall::errno() != libc::EAGAIN {
            break;
        }
    }
    Err(io::Error::last_os_error())
}

/// `/proc/self/fd/N/rest` as thread `tid` means it: `rest` beneath the
/// file it holds open as N (how a long socket path is shortened), without
/// leaving it. Its own `/proc/self` is not ours, so it is read through
/// `/proc/<tid>/fd/N`.
fn resolve_under_descriptor(tid: i32, fd: u32, rest: &[u8]) -> io::Result<OwnedFd> {
    let base = open_path(&format!("/proc/{tid}/fd/{fd}"))?;
    if rest.is_empty() {
        return Ok(base.into());
    }
    let c = std::ffi::CString::new(rest).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: c is NUL-terminated; how is a valid open_how of its size.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            base.as_raw_fd(),
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `struct open_how` of `openat2(2)` (libc's is non-exhaustive).
#[repr(C)]
pub(crate) struct OpenHow {
    pub(crate) flags: u64,
    pub(crate) mode: u64,
    pub(crate) resolve: u64,
}

fn open_path(p: &str) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(p)
}

/// What the guard knows of an open file.
struct FileId {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    is_socket: bool,
}

impl FileId {
    fn key(&self) -> FileKey {
        (self.dev, self.ino, self.ctime.0, self.ctime.1)
    }
}

fn file_id(file: &OwnedFd) -> io::Result<FileId> {
    // SAFETY: an all-zero stat is a valid buffer for fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes into st.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(FileId {
        dev: st.st_dev,
        ino: st.st_ino,
        ctime: (st.st_ctime, st.st_ctime_nsec),
        is_socket: st.st_mode & libc::S_IFMT == libc::S_IFSOCK,
    })
}

/// Whether a socket bound to the file `(dev, ino)` belongs to the sandbox.
fn file_listened_inside(guard: &SocketGuard, (dev, ino): (u64, u64)) -> bool {
    let matches = |s: &unix_diag::DiagSocket| s.file == Some((dev, ino as u32));
    if !guard.host_network {
        // The sandbox's own network namespace holds only its sockets.
        let Some(diag) = guard.diag.get() else {
            return false;
        };
        let diag = diag.lock().unwrap_or_else(|e| e.into_inner());
        return dump(&diag).is_ok_and(|all| all.iter().any(matches));
    }
    let Ok(all) = host_dump() else {
        return false;
    };
    let inodes: HashSet<u32> = all.iter().filter(|s| matches(s)).map(|s| s.inode).collect();
    held_by_sandbox(guard, &inodes)
}

/// With the host's network: whether the abstract `name` is bound by a socket
/// a process of the sandbox holds.
fn abstract_held_inside(guard: &SocketGuard, name: &[u8]) -> bool {
    let Ok(all) = host_dump() else {
        return false;
    };
    let inodes: HashSet<u32> = all
        .iter()
        .filter(|s| {
            s.name
                .as_deref()
                .is_some_and(|n| unix_diag::is_abstract_name(n, name))
        })
        .map(|s| s.inode)
        .collect();
    held_by_sandbox(guard, &inodes)
}

/// Every Unix socket of the caller's own network namespace.
fn host_dump() -> io::Result<Vec<unix_diag::DiagSocket>> {
    // SAFETY: integer arguments; the fd returned is ours.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    dump(&fd)
}

/// Open a `sock_diag` socket in the current network namespace (the
/// sandbox's, from its supervisor process). Runs between `fork` and `exec`.
pub(crate) fn open_diag_socket() -> libc::c_long {
    // SAFETY: integer arguments.
    unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        ) as libc::c_long
    }
}

/// Dump every Unix socket of `diag`'s network namespace.
fn dump(diag: &OwnedFd) -> io::Result<Vec<unix_diag::DiagSocket>> {
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let req = unix_diag::dump_request(seq);
    // SAFETY: sending from a valid buffer.
    let sent = unsafe { libc::send(diag.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
    if sent != req.len() as isize {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: receiving into buf.
        let n = unsafe { libc::recv(diag.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            if crate::syscall::errno() == libc::EINTR {
                continue;
            }
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::EPROTO));
        }
        let part = unix_diag::parse_dump(&buf[..n as usize]);
        if let Some(errno) = part.error {
            return Err(io::Error::from_raw_os_error(errno));
        }
        out.extend(part.sockets);
        if part.done {
            return Ok(out);
        }
    }
}

/// Whether a process of the sandbox's PID namespace holds one of the
/// sockets `inodes`: looked for in the sandbox's own `/proc` (through the
/// command's root: its processes only), else among every process of the
/// host whose PID namespace is the sandbox's.
fn held_by_sandbox(guard: &SocketGuard, inodes: &HashSet<u32>) -> bool {
    if inodes.is_empty() {
        return false;
    }
    let Some(ns) = guard.pid_ns.get() else {
        return false;
    };
    let want = format!("pid:[{ns}]");
    let in_sandbox = |proc_dir: &str| {
        std::fs::read_link(format!("{proc_dir}/ns/pid"))
            .is_ok_and(|l| l.as_os_str() == OsStr::new(&want))
    };
    // The command is still the sandbox's (its pid not reused by the host).
    if let Some(command) = guard
        .command
        .get()
        .filter(|c| in_sandbox(&format!("/proc/{c}")))
    {
        let own_proc = format!("/proc/{command}/root/proc");
        if let Ok(procs) = std::fs::read_dir(&own_proc) {
            return procs.flatten().any(|entry| {
                let name = entry.file_name();
                name.as_bytes().iter().all(u8::is_ascii_digit)
                    && holds_one_of(&entry.path(), inodes)
            });
        }
    }
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    for entry in procs.flatten() {
        let name = entry.file_name();
        if !name.as_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let dir = entry.path();
        if in_sandbox(&dir.to_string_lossy()) && holds_one_of(&dir, inodes) {
            return true;
        }
    }
    false
}

/// Whether the process whose `/proc` directory is `dir` holds one of the
/// sockets `inodes`.
fn holds_one_of(dir: &std::path::Path, inodes: &HashSet<u32>) -> bool {
    let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|link| {
            socket_inode(link.as_os_str().as_bytes()).is_some_and(|ino| inodes.contains(&ino))
        })
    })
}

/// `socket:[N]` → N (its low 32 bits, as `sock_diag` reports it).
fn socket_inode(link: &[u8]) -> Option<u32> {
    let n = link.strip_prefix(b"socket:[")?.strip_suffix(b"]")?;
    std::str::from_utf8(n)
        .ok()?
        .parse::<u64>()
        .ok()
        .map(|v| v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_links_name_their_inode() {
        assert_eq!(socket_inode(b"socket:[328033]"), Some(328033));
        assert_eq!(socket_inode(b"pipe:[1]"), None);
        assert_eq!(socket_inode(b"socket:[x]"), None);
    }

    #[test]
    fn a_dump_of_this_namespace_finds_a_listener_by_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        use std::os::unix::fs::MetadataExt;
        let all = host_dump().unwrap();
        assert!(
            all.iter()
                .any(|s| s.file == Some((meta.dev(), meta.ino() as u32))),
            "the listener is in the dump"
        );
    }
}
