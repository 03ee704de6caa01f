//! Reading another process from outside the sandbox: its memory
//! (`process_vm_readv`), and `/proc/<pid>/{exe,cmdline,cwd,status,fd}`.
//!
//! The caller owns the sandbox's user namespace and has the same uid, so it
//! passes every `ptrace` access check these need, as root and unprivileged.
//! Paths are resolved through `/proc/<tid>/root` and `/proc/<tid>/cwd`, so
//! the sandbox's mounts (secret masks) are what is seen.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use crate::exec_guard::{
    ExecCheck, ExecEvent, FileStamp, Judged, SHEBANG_BUF, SHEBANG_DEPTH, parse_shebang,
    script_argv, split_cmdline,
};

/// The kernel's `MAX_ARG_STRLEN`: longer argument strings fail with E2BIG.
const MAX_ARG_STRLEN: usize = 32 * 4096;
/// Past this much argv, the first check gives up and leaves it to the second.
const MAX_ARGV_BYTES: usize = 8 << 20;
const PATH_MAX: usize = 4096;

/// What the kernel will be asked to exec, as read from the stopped caller of
/// `execve`/`execveat` (a seccomp user notification).
pub(crate) struct ExecCall {
    /// `AT_FDCWD` for `execve`.
    pub(crate) dirfd: i32,
    pub(crate) path: u64,
    pub(crate) argv: u64,
    /// `execveat` flags (`AT_EMPTY_PATH`, `AT_SYMLINK_NOFOLLOW`).
    pub(crate) flags: i32,
}

impl ExecCall {
    /// From a notification's syscall number and arguments; `None` for any
    /// other call.
    pub(crate) fn from_syscall(nr: i32, args: &[u64; 6]) -> Option<ExecCall> {
        match nr as libc::c_long {
            libc::SYS_execve => Some(ExecCall {
                dirfd: libc::AT_FDCWD,
                path: args[0],
                argv: args[1],
                flags: 0,
            }),
            libc::SYS_execveat => Some(ExecCall {
                dirfd: args[0] as i32,
                path: args[1],
                argv: args[2],
                flags: args[4] as i32,
            }),
            _ => None,
        }
    }
}

/// The event for the first check: the path and argv in thread `tid`'s
/// memory, resolved as the kernel will. `None` when something cannot be read
/// or resolved (a missing file, a bad pointer, a device): the exec is then
/// left to the kernel, which fails it the same way, or to the commit check.
pub(crate) fn event_before_exec(tid: i32, call: &ExecCall, initial: bool) -> Option<ExecEvent> {
    let path = read_cstring(tid, call.path, PATH_MAX).ok()?;
    let mut argv = read_argv(tid, call.argv).ok()?;
    if argv.is_empty() {
        // Linux 5.18+ gives a program started with no argv an empty argv[0].
        argv.push(OsString::new());
    }
    let start = start_path(tid, call.dirfd, &path, call.flags);
    let nofollow = call.flags & libc::AT_SYMLINK_NOFOLLOW != 0;
    let mut file = open_executable(&start, nofollow)?;
    // Scripts: the kernel runs the interpreter with the script's name.
    let mut filename = kernel_filename(call.dirfd, &path);
    for _ in 0..SHEBANG_DEPTH {
        let Some(sb) = read_head(&file).as_deref().and_then(parse_shebang) else {
            break;
        };
        argv = script_argv(&sb, &filename, &argv);
        let interp = start_path(tid, libc::AT_FDCWD, &sb.interpreter, 0);
        file = open_executable(&interp, false)?;
        filename = sb.interpreter;
    }
    let meta = file.metadata().ok()?;
    let executable = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    let cwd = std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?;
    let (pid, ppid) = ids_of_thread(tid).ok()?;
    Some(ExecEvent {
        pid,
        ppid,
        executable,
        dev_ino: (meta.dev(), meta.ino()),
        stamp: FileStamp::of(&meta),
        argv,
        cwd,
        loader: Vec::new(),
        initial,
        check: ExecCheck::BeforeExec,
    })
}

/// What `pid`, stopped at `PTRACE_EVENT_EXEC`, really loaded: the fields
/// the commit check compares (the least it has to read on the fast path).
pub(crate) fn judged_at_commit(pid: i32) -> io::Result<Judged> {
    let argv = split_cmdline(&std::fs::read(format!("/proc/{pid}/cmdline"))?);
    let meta = std::fs::metadata(format!("/proc/{pid}/exe"))?;
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"))?;
    let loader = split_cmdline(&std::fs::read(format!("/proc/{pid}/environ"))?)
        .into_iter()
        .filter(|v| LOADER_CODE.iter().any(|n| v.as_bytes().starts_with(n)))
        .collect();
    Ok(Judged {
        dev_ino: (meta.dev(), meta.ino()),
        stamp: FileStamp::of(&meta),
        argv,
        cwd,
        loader,
    })
}

/// The dynamic loader's variables that load a library into every program
/// started with them (glibc's and musl's names).
const LOADER_CODE: [&[u8]; 2] = [b"LD_PRELOAD=", b"LD_AUDIT="];

/// The whole event for the commit check of `pid`, from what
/// [`judged_at_commit`] read. Any error fails the exec (closed).
pub(crate) fn event_at_commit(pid: i32, judged: Judged, initial: bool) -> io::Result<ExecEvent> {
    Ok(ExecEvent {
        pid: pid as u32,
        ppid: ids_of_thread(pid)?.1,
        executable: std::fs::read_link(format!("/proc/{pid}/exe"))?,
        dev_ino: judged.dev_ino,
        stamp: judged.stamp,
        argv: judged.argv,
        cwd: judged.cwd,
        loader: judged.loader,
        initial,
        check: ExecCheck::AtCommit,
    })
}

/// The stderr of thread `tid` of process `pid`, where the judge's message
/// goes. A regular file is duplicated from the process (`pidfd_getfd`), so
/// the message and the program's own output share one file offset and do
/// not overwrite each other; anything else (a pipe, a terminal) is opened
/// again through `/proc/<tid>/fd/2`, non-blocking (a full pipe drops the
/// message rather than stall the guard) and never as a controlling terminal.
pub(crate) fn open_stderr(tid: i32, pid: u32) -> Option<File> {
    use std::os::unix::fs::FileTypeExt;
    let proc_path = format!("/proc/{tid}/fd/2");
    let kind = std::fs::metadata(&proc_path).ok()?.file_type();
    // A socket (node's child stdio) cannot be opened again: duplicate it
    // too; `write_message` sends on it without blocking.
    let duplicate = kind.is_file() || kind.is_socket();
    if let Some(f) = duplicate.then(|| duplicate_fd(pid as i32, 2)).flatten() {
        return Some(f);
    }
    let path = std::ffi::CString::new(proc_path).ok()?;
    let flags =
        libc::O_WRONLY | libc::O_APPEND | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: path is NUL-terminated; the fd returned is ours.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    // SAFETY: a fresh fd we own.
    (fd >= 0).then(|| File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// `pidfd_getfd(pidfd_open(pid), fd)` (Linux 5.6+).
fn duplicate_fd(pid: i32, fd: i32) -> Option<File> {
    // SAFETY: integer arguments; the fds returned are ours.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        if pidfd < 0 {
            return None;
        }
        let pidfd = OwnedFd::from_raw_fd(pidfd as i32);
        let got = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0);
        (got >= 0).then(|| File::from(OwnedFd::from_raw_fd(got as i32)))
    }
}

/// Write `message` (and a newline when it has none); a full pipe drops it.
pub(crate) fn write_message(stderr: Option<File>, message: &str) {
    use std::io::Write;
    let Some(mut f) = stderr else { return };
    let mut text = message.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // A socket: never block the guard on a full buffer, never SIGPIPE.
    // SAFETY: sending from a valid buffer on a descriptor we own.
    let sent = unsafe {
        libc::send(
            f.as_raw_fd(),
            text.as_ptr().cast(),
            text.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if sent < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOTSOCK) {
        let _ = f.write_all(text.as_bytes());
    }
}

/// Where the kernel starts resolving `path` for thread `tid`, as a path the
/// caller can open.
fn start_path(tid: i32, dirfd: i32, path: &[u8], flags: i32) -> PathBuf {
    let mut p = if path.first() == Some(&b'/') {
        format!("/proc/{tid}/root").into_bytes()
    } else if dirfd == libc::AT_FDCWD {
        format!("/proc/{tid}/cwd/").into_bytes()
    } else if path.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
        format!("/proc/{tid}/fd/{dirfd}").into_bytes()
    } else {
        format!("/proc/{tid}/fd/{dirfd}/").into_bytes()
    };
    p.extend_from_slice(path);
    PathBuf::from(OsString::from_vec(p))
}

/// The file name the kernel gives a script's interpreter (`bprm->filename`).
fn kernel_filename(dirfd: i32, path: &[u8]) -> Vec<u8> {
    if dirfd == libc::AT_FDCWD || path.first() == Some(&b'/') {
        path.to_vec()
    } else if path.is_empty() {
        format!("/dev/fd/{dirfd}").into_bytes()
    } else {
        let mut p = format!("/dev/fd/{dirfd}/").into_bytes();
        p.extend_from_slice(path);
        p
    }
}

/// Open a regular file without reading it (`O_PATH`: no device is opened,
/// no FIFO blocks).
fn open_executable(path: &std::path::Path, nofollow: bool) -> Option<File> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    // SAFETY: c is NUL-terminated; the fd returned is ours.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a fresh fd we own.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.metadata().ok()?.is_file().then_some(file)
}

/// The first [`SHEBANG_BUF`] bytes of an `O_PATH` file, `None` if it cannot
/// be read (an execute-only binary is not a script we can see).
fn read_head(file: &File) -> Option<Vec<u8>> {
    let mut f = File::open(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    let mut head = vec![0u8; SHEBANG_BUF];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
    head.truncate(got);
    Some(head)
}

/// The process (thread group) of thread `tid`: itself when it leads its
/// group (`pidfd_open` accepts only leaders), else `Tgid:` in its status.
/// The process (thread group) of thread `tid` and that process's parent.
/// One `ioctl` on a thread pidfd where the kernel has `PIDFD_GET_INFO`
/// (Linux 6.13): reading `/proc/<tid>/stat` makes the kernel format every
/// field of it, a few percent of the guard's time on each exec.
fn ids_of_thread(tid: i32) -> io::Result<(u32, u32)> {
    if let Some(ids) = pidfd_ids(tid) {
        return Ok(ids);
    }
    Ok((process_of_thread(tid)?, parent_of(tid)?))
}

/// `struct pidfd_info` of `<linux/pidfd.h>`, its first version (64 bytes).
#[repr(C)]
#[derive(Default)]
struct PidfdInfo {
    mask: u64,
    cgroupid: u64,
    pid: u32,
    tgid: u32,
    ppid: u32,
    /// The ids and fields after them, unused here.
    rest: [u32; 9],
}

/// `(tgid, ppid)` of thread `tid` by `PIDFD_GET_INFO`; `None` where the
/// kernel lacks it (or thread pidfds, Linux 6.9), and the caller reads `/proc`.
fn pidfd_ids(tid: i32) -> Option<(u32, u32)> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    const PIDFD_INFO_PID: u64 = 1;
    // _IOWR(PIDFS_IOCTL_MAGIC = 0xFF, 11, struct pidfd_info of 64 bytes)
    const PIDFD_GET_INFO: libc::c_ulong = (3 << 30) | (64 << 16) | (0xFF << 8) | 11;
    // SAFETY: integer arguments; the fd returned is ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a fresh fd we own, closed when dropped.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let mut info = PidfdInfo {
        mask: PIDFD_INFO_PID,
        ..PidfdInfo::default()
    };
    // SAFETY: info is a writable struct of the size the request encodes.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO, &mut info as *mut PidfdInfo) };
    (r == 0 && info.mask & PIDFD_INFO_PID != 0 && info.tgid != 0).then_some((info.tgid, info.ppid))
}

/// The process (thread group id) of thread `tid`.
pub(crate) fn process_of(tid: i32) -> io::Result<u32> {
    process_of_thread(tid)
}

fn process_of_thread(tid: i32) -> io::Result<u32> {
    // SAFETY: integer arguments; the fd returned is ours and closed at once.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, 0) };
    if pidfd >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(pidfd as i32) };
        return Ok(tid as u32);
    }
    let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .ok_or_else(|| io::Error::other(format!("no Tgid in /proc/{tid}/status")))
}

/// The parent of `pid`, from `/proc/<pid>/stat` (after the command name,
/// which may hold spaces and parentheses).
fn parent_of(pid: i32) -> io::Result<u32> {
    stat_fields(pid)?
        .get(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no parent in /proc/{pid}/stat")))
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 first).
fn stat_fields(pid: i32) -> io::Result<Vec<String>> {
    let stat = std::fs::read(format!("/proc/{pid}/stat"))?;
    let after = stat
        .iter()
        .rposition(|b| *b == b')')
        .map(|i| &stat[i + 1..])
        .unwrap_or_default();
    Ok(String::from_utf8_lossy(after)
        .split_whitespace()
        .map(str::to_string)
        .collect())
}

/// Read `buf.len()` bytes at `addr` in `pid`'s memory (or fewer at a fault).
pub(crate) fn read_remote(pid: i32, addr: u64, buf: &mut [u8]) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: local points to buf, valid for buf.len() bytes; remote memory
    // is only read, by the kernel, with access checks.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Bytes to the end of the page holding `addr` (so a read never spans an
/// unmapped page after the data).
fn to_page_end(addr: u64) -> usize {
    4096 - (addr % 4096) as usize
}

/// A NUL-terminated string at `addr`, at most `max` bytes.
fn read_cstring(pid: i32, mut addr: u64, max: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut page = [0u8; 4096];
    loop {
        let want = to_page_end(addr);
        let n = read_remote(pid, addr, &mut page[..want])?;
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        if let Some(end) = page[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&page[..end]);
            return Ok(out);
        }
        out.extend_from_slice(&page[..n]);
        if out.len() > max {
            return Err(io::Error::from_raw_os_error(libc::E2BIG));
        }
        addr += n as u64;
    }
}

/// The NULL-terminated array of string pointers at `addr`, and the strings.
fn read_argv(pid: i32, mut addr: u64) -> io::Result<Vec<OsString>> {
    let mut pointers = Vec::new();
    if addr != 0 {
        let mut page = [0u8; 4096];
        'outer: loop {
            let want = to_page_end(addr).min(4096) / 8 * 8;
            let want = if want == 0 { 8 } else { want };
            let n = read_remote(pid, addr, &mut page[..want])? / 8 * 8;
            if n == 0 {
                return Err(io::Error::from_raw_os_error(libc::EFAULT));
            }
            for word in page[..n].chunks_exact(8) {
                let p = u64::from_ne_bytes(word.try_into().unwrap_or_default());
                if p == 0 {
                    break 'outer;
                }
                pointers.push(p);
            }
            if pointers.len() * 8 > MAX_ARGV_BYTES {
                return Err(io::Error::from_raw_os_error(libc::E2BIG));
            }
            addr += n as u64;
        }
    }
    let mut total = 0;
    let mut argv = Vec::with_capacity(pointers.len());
    for p in pointers {
        let s = read_cstring(pid, p, MAX_ARG_STRLEN)?;
        total += s.len() + 1;
        if total > MAX_ARGV_BYTES {
            return Err(io::Error::from_raw_os_error(libc::E2BIG));
        }
        argv.push(OsString::from_vec(s));
    }
    Ok(argv)
}

/// The addresses of the argument and environment strings of `pid`'s
/// current image: `/proc/<pid>/stat` fields 48 to 51.
fn string_areas(pid: i32) -> io::Result<[u64; 4]> {
    let fields: Vec<u64> = stat_fields(pid)?
        .iter()
        .skip(45) // field 3 is the first after the name; 48 is arg_start
        .take(4)
        .filter_map(|v| v.parse().ok())
        .collect();
    match fields[..] {
        [a, b, c, d] if a <= b && c <= d => Ok([a, b, c, d]),
        _ => Err(io::Error::other(format!(
            "no argument and environment areas in /proc/{pid}/stat"
        ))),
    }
}

fn open_mem(pid: i32) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/mem"))
}

/// At the exec stop of a refused shell (`sh -c SCRIPT`): overwrite its
/// script argument, number `index` of `argv`, with `replacement` (NUL
/// ended; the script must be at least as long), so the shell runs that
/// instead. The process is stopped and its address space is new and its
/// own: nothing else can see or race the write.
pub(crate) fn replace_arg(
    pid: i32,
    argv: &[OsString],
    index: usize,
    replacement: &[u8],
) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let target = argv
        .get(index)
        .filter(|a| a.len() >= replacement.len())
        .ok_or_else(|| io::Error::other("no argument long enough to replace"))?;
    let [arg_start, arg_end, _, _] = string_areas(pid)?;
    let offset: u64 = argv[..index].iter().map(|a| a.len() as u64 + 1).sum();
    let at = arg_start + offset;
    if at + target.len() as u64 + 1 > arg_end {
        return Err(io::Error::other("argument area shorter than argv"));
    }
    let mem = open_mem(pid)?;
    // Check it is the argument we think before writing.
    let mut seen = vec![0u8; target.len()];
    mem.read_exact_at(&mut seen, at)?;
    if seen != target.as_bytes() {
        return Err(io::Error::other("argument moved"));
    }
    let mut bytes = replacement.to_vec();
    bytes.resize(target.len(), 0);
    mem.write_all_at(&bytes, at)
}

/// At an exec stop: blank the value of each variable named in `names` in
/// the new image's environment (`NAME=` stays, its bytes become NUL), so
/// a key passed to the agent does not reach what it starts. Returns how
/// many were blanked.
pub(crate) fn scrub_env(pid: i32, names: &[Vec<u8>]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    if names.is_empty() {
        return Ok(0);
    }
    let [_, _, env_start, env_end] = string_areas(pid)?;
    let len = (env_end - env_start) as usize;
    if len > MAX_ARGV_BYTES {
        return Err(io::Error::other("environment too large"));
    }
    let mem = open_mem(pid)?;
    let mut env = vec![0u8; len];
    mem.read_exact_at(&mut env, env_start)?;
    let mut blanked = 0;
    let mut pos = 0usize;
    while pos < env.len() {
        let end = env[pos..]
            .iter()
            .position(|b| *b == 0)
            .map_or(env.len(), |e| pos + e);
        let entry = &env[pos..end];
        if let Some(eq) = entry.iter().position(|b| *b == b'=')
            && names.iter().any(|n| n.as_slice() == &entry[..eq])
            && eq + 1 < entry.len()
        {
            let value_at = pos + eq + 1;
            let zeros = vec![0u8; end - value_at];
            mem.write_all_at(&zeros, env_start + value_at as u64)?;
            blanked += 1;
        }
        pos = end + 1;
    }
    Ok(blanked)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux release as (major, minor).
    fn kernel() -> (u32, u32) {
        let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut it = r.trim().split(['.', '-']).map(|p| p.parse().unwrap_or(0));
        (it.next().unwrap_or(0), it.next().unwrap_or(0))
    }

    #[test]
    fn a_threads_process_and_parent_agree_with_proc() {
        let (ids, from_proc, by_pidfd) = std::thread::spawn(|| {
            // SAFETY: gettid has no arguments and cannot fail.
            let tid = unsafe { libc::gettid() };
            (
                ids_of_thread(tid).unwrap(),
                (process_of_thread(tid).unwrap(), parent_of(tid).unwrap()),
                pidfd_ids(tid),
            )
        })
        .join()
        .unwrap();
        // SAFETY: getppid cannot fail.
        let ppid = unsafe { libc::getppid() } as u32;
        assert_eq!(ids, (std::process::id(), ppid));
        assert_eq!(ids, from_proc);
        if kernel() >= (6, 13) {
            assert_eq!(by_pidfd, Some(ids), "PIDFD_GET_INFO is in this kernel");
        } else {
            eprintln!("skipped: PIDFD_GET_INFO needs Linux 6.13; /proc answered");
        }
    }
}
