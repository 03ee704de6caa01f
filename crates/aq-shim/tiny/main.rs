//! The program `PATH` shim links point to on x86-64 Linux: what
//! `aq_shim::entry` does, without a C library or Rust's standard library.
//!
//! A shim runs once for every command an agent starts through `PATH`, so
//! its start is paid per command. A C runtime's start costs here about as
//! much as the command itself: on a VM each `cpuid` of glibc's CPU probe
//! traps to the hypervisor, and the loader maps and relocates libraries.
//! This program is a static executable with no loader and no runtime: its
//! whole start is the kernel's exec. It asks the session's supervisor
//! (`wire.rs`, shared with the supervisor's side), then replaces itself
//! with the real program or prints the refusal. Any failure before the
//! answer is known refuses the command (exit 126).
//!
//! `crates/aq-shim/build.rs` compiles it (panic = abort, no start files)
//! and `aq` writes it into its state directory for the shim links
//! (`aq_shim::tiny`). It is not a Cargo target: the workspace's profile
//! unwinds panics, which a program without the standard library cannot.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;

#[path = "../src/wire.rs"]
#[allow(dead_code)]
mod wire;

use wire::{Answer, Request};

/// The Linux system calls used, by number (x86-64).
mod sys {
    pub const READ: usize = 0;
    pub const WRITE: usize = 1;
    pub const OPEN: usize = 2;
    pub const CLOSE: usize = 3;
    pub const MMAP: usize = 9;
    pub const SOCKET: usize = 41;
    pub const CONNECT: usize = 42;
    pub const EXECVE: usize = 59;
    pub const GETCWD: usize = 79;
    pub const EXIT_GROUP: usize = 231;
    pub const NEWFSTATAT: usize = 262;

    pub const EINTR: isize = 4;
    pub const ENOENT: isize = 2;

    /// A system call; a negative result is `-errno`.
    ///
    /// # Safety
    /// The arguments must be what the call expects (valid pointers and lengths).
    pub unsafe fn call(n: usize, a: [usize; 6]) -> isize {
        let ret: isize;
        // SAFETY: the caller passes the arguments the call expects; the
        // kernel clobbers only rcx and r11.
        unsafe {
            core::arch::asm!(
                "syscall",
                inlateout("rax") n as isize => ret,
                in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
                in("r10") a[3], in("r8") a[4], in("r9") a[5],
                lateout("rcx") _, lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    /// A call retried while a signal interrupts it.
    ///
    /// # Safety
    /// As [`call`].
    pub unsafe fn retry(n: usize, a: [usize; 6]) -> Result<usize, isize> {
        loop {
            // SAFETY: as the caller's.
            let ret = unsafe { call(n, a) };
            match ret {
                r if r >= 0 => return Ok(r as usize),
                r if r == -EINTR => continue,
                r => return Err(-r),
            }
        }
    }

    /// Leaves with `code`.
    pub fn exit(code: u8) -> ! {
        loop {
            // SAFETY: exit_group takes a number and does not return.
            unsafe { call(EXIT_GROUP, [code as usize, 0, 0, 0, 0, 0]) };
        }
    }
}

/// Memory for `alloc`: one anonymous mapping, handed out in order and
/// never reused (the program lives for one round trip).
mod heap {
    use core::alloc::{GlobalAlloc, Layout};
    use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    /// Address space reserved (not committed): a 4 MiB request, its copies
    /// and the environment fit many times over.
    const ARENA: usize = 256 << 20;

    pub struct Bump {
        next: AtomicUsize,
        end: AtomicUsize,
    }

    #[global_allocator]
    static HEAP: Bump = Bump {
        next: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
    };

    // SAFETY: one thread; every block is fresh memory of the mapping, aligned
    // as asked, and never handed out twice.
    unsafe impl GlobalAlloc for Bump {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if self.end.load(Relaxed) == 0 {
                const PROT_RW: usize = 0x1 | 0x2;
                const PRIVATE_ANON_NORESERVE: usize = 0x02 | 0x20 | 0x4000;
                let at = unsafe {
                    super::sys::call(
                        super::sys::MMAP,
                        [0, ARENA, PROT_RW, PRIVATE_ANON_NORESERVE, usize::MAX, 0],
                    )
                };
                if at < 0 {
                    return core::ptr::null_mut();
                }
                self.next.store(at as usize, Relaxed);
                self.end.store(at as usize + ARENA, Relaxed);
            }
            let start = (self.next.load(Relaxed) + layout.align() - 1) & !(layout.align() - 1);
            match start.checked_add(layout.size()) {
                Some(end) if end <= self.end.load(Relaxed) => {
                    self.next.store(end, Relaxed);
                    start as *mut u8
                }
                _ => core::ptr::null_mut(),
            }
        }

        unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // The last block grows where it is (a frame being built).
            let at = ptr as usize;
            if at + layout.size() == self.next.load(Relaxed)
                && at
                    .checked_add(new_size)
                    .is_some_and(|e| e <= self.end.load(Relaxed))
            {
                self.next.store(at + new_size, Relaxed);
                return ptr;
            }
            // SAFETY: as the trait's default: a new block, the old bytes copied.
            unsafe {
                let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
                if !new.is_null() {
                    core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                }
                new
            }
        }
    }
}

/// What the compiler calls for copies and comparisons, which a C library
/// would provide. Volatile reads and `rep` instructions keep the compiler
/// from turning them back into calls to themselves.
mod mem {
    #[unsafe(no_mangle)]
    unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
        // SAFETY: the caller's regions are valid for n bytes and do not overlap.
        unsafe {
            core::arch::asm!("rep movsb", inout("rcx") n => _, inout("rdi") dst => _,
                inout("rsi") src => _, options(nostack, preserves_flags));
        }
        dst
    }

    #[unsafe(no_mangle)]
    unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
        if (dst as usize).wrapping_sub(src as usize) >= n {
            // SAFETY: copying forward never reads a byte already written.
            return unsafe { memcpy(dst, src, n) };
        }
        // SAFETY: the destination starts inside the source: copy backward.
        unsafe {
            core::arch::asm!("std", "rep movsb", "cld", inout("rcx") n => _,
                inout("rdi") dst.add(n).wrapping_sub(1) => _,
                inout("rsi") src.add(n).wrapping_sub(1) => _, options(nostack));
        }
        dst
    }

    #[unsafe(no_mangle)]
    unsafe extern "C" fn memset(dst: *mut u8, byte: i32, n: usize) -> *mut u8 {
        // SAFETY: the caller's region is valid for n bytes.
        unsafe {
            core::arch::asm!("rep stosb", inout("rcx") n => _, inout("rdi") dst => _,
                in("al") byte as u8, options(nostack, preserves_flags));
        }
        dst
    }

    #[unsafe(no_mangle)]
    unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        for i in 0..n {
            // SAFETY: both regions are valid for n bytes.
            let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
            if x != y {
                return x as i32 - y as i32;
            }
        }
        0
    }

    #[unsafe(no_mangle)]
    unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
        // SAFETY: as memcmp's.
        unsafe { memcmp(a, b, n) }
    }

    /// The personality routine `core`'s unwinding code names; with
    /// `panic = abort` nothing unwinds, so it is never called.
    #[unsafe(no_mangle)]
    extern "C" fn rust_eh_personality() {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    write_all(2, b"aq: the shim failed; refusing to run unchecked\n");
    sys::exit(wire::EXIT_BLOCKED)
}

core::arch::global_asm!(
    ".globl _start",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call {start}",
    "ud2",
    start = sym start,
);

/// The process's entry: the kernel left `argc`, `argv` and `envp` on the stack.
unsafe extern "C" fn start(stack: *const usize) -> ! {
    // SAFETY: the stack is as the kernel's exec left it (the ELF ABI).
    let (args, env) = unsafe {
        let argc = *stack;
        let argv = stack.add(1) as *const *const u8;
        let args: Vec<&'static [u8]> = (0..argc).map(|i| c_str(*argv.add(i))).collect();
        let mut env = Vec::new();
        let mut at = argv.add(argc + 1);
        while !(*at).is_null() {
            env.push(c_str(*at));
            at = at.add(1);
        }
        (args, env)
    };
    sys::exit(run(&args, &env))
}

/// The bytes of a NUL-terminated string (without the NUL).
///
/// # Safety
/// `p` points to a NUL-terminated string that lives as long as the process.
unsafe fn c_str(p: *const u8) -> &'static [u8] {
    let mut len = 0;
    // SAFETY: the string ends with a NUL.
    while unsafe { p.add(len).read_volatile() } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes before the NUL.
    unsafe { core::slice::from_raw_parts(p, len) }
}

fn run(args: &[&'static [u8]], env: &[&'static [u8]]) -> u8 {
    let Some(name) = args.first().and_then(|a| wire::shim_program_name(a)) else {
        write_all(2, &cat(&[wire::OWN_NAME.as_bytes(), b"\n"]));
        return 2;
    };
    let Some(session) = var(env, wire::ENV_SESSION_DIR.as_bytes()) else {
        say(name, &[wire::NO_SESSION.as_bytes()]);
        return wire::EXIT_BLOCKED;
    };
    let cwd = current_dir();
    let request = Request {
        argv: core::iter::once(name)
            .chain(args[1..].iter().copied())
            .collect(),
        cwd: &cwd,
        grant: var(env, wire::ENV_GRANT.as_bytes()),
        env: env.iter().filter_map(|e| wire::env_name(e)).collect(),
    };
    let reply = match ask(session, &request.encode()) {
        Ok(reply) => reply,
        Err(e) => {
            let why = e.text();
            say(
                name,
                &[
                    b"cannot reach the session's supervisor (",
                    &why,
                    b"); refusing to run unchecked",
                ],
            );
            return wire::EXIT_BLOCKED;
        }
    };
    let answer = match Answer::decode(&reply) {
        Ok(answer) => answer,
        Err(e) => {
            say(
                name,
                &[
                    b"cannot reach the session's supervisor (bad answer from the supervisor: ",
                    e.0.as_bytes(),
                    b"); refusing to run unchecked",
                ],
            );
            return wire::EXIT_BLOCKED;
        }
    };
    if !answer.run {
        write_all(2, answer.message);
        return answer.exit_code;
    }
    exec_real(name, &args[1..], env, &answer)
}

/// Replaces the shim with the real program; returns only when that failed,
/// with the exit code to leave with (the reason is printed here).
fn exec_real(
    name: &[u8],
    args: &[&'static [u8]],
    env: &[&'static [u8]],
    answer: &Answer<'_>,
) -> u8 {
    let path = var(env, b"PATH").unwrap_or_default();
    let Some(real) = find_real_program(name, path, answer.shim_dir) else {
        say(name, &[b"command not found"]);
        return wire::EXIT_NOT_FOUND;
    };
    let real_c = nul_terminated(&real);
    let name_c = nul_terminated(name);
    // The arguments are the strings on the stack, each ending with its NUL.
    let mut argv: Vec<*const u8> = Vec::with_capacity(args.len() + 2);
    argv.push(name_c.as_ptr());
    argv.extend(args.iter().map(|a| a.as_ptr()));
    argv.push(core::ptr::null());
    // The environment as it came (order and all), less what the supervisor
    // said to remove; entries without `=` go, as the standard library's
    // shim dropped them. The strings on the stack end with their NUL.
    let grant = answer
        .grant
        .map(|g| nul_terminated(&cat(&[wire::ENV_GRANT.as_bytes(), b"=", g])));
    let mut envp: Vec<*const u8> = env
        .iter()
        .filter(|e| {
            let replaced = |n: &[u8]| grant.is_some() && n == wire::ENV_GRANT.as_bytes();
            wire::env_name(e).is_some_and(|n| !answer.drop.contains(&n) && !replaced(n))
        })
        .map(|e| e.as_ptr())
        .collect();
    envp.extend(grant.as_ref().map(|g| g.as_ptr()));
    envp.push(core::ptr::null());
    // SAFETY: NUL-terminated strings and NULL-terminated arrays that live
    // until the call (which replaces the process when it succeeds).
    let err = unsafe {
        sys::call(
            sys::EXECVE,
            [
                real_c.as_ptr() as usize,
                argv.as_ptr() as usize,
                envp.as_ptr() as usize,
                0,
                0,
                0,
            ],
        )
    };
    let why = Error::Os(-err).text();
    say(name, &[b"cannot run ", &real, b": ", &why]);
    if -err == sys::ENOENT {
        wire::EXIT_NOT_FOUND
    } else {
        wire::EXIT_BLOCKED
    }
}

/// Looks `name` up on `path` as `execvp` would, skipping `shim_dir` and any
/// directory that is it (by device and inode) and any file that is this
/// program (a link to it elsewhere on `PATH`), so a shim never finds
/// itself; and skipping entries that are not absolute (empty, `.`, `./`,
/// `bin`: the current directory or under it, which the agent controls).
/// The first executable regular file wins.
fn find_real_program(name: &[u8], path: &[u8], shim_dir: &[u8]) -> Option<Vec<u8>> {
    let shim_id = stat(shim_dir).map(|s| s.id());
    let own_id = stat(b"/proc/self/exe").map(|s| s.id());
    for dir in path.split(|&b| b == b':') {
        if !dir.starts_with(b"/") || wire::same_path(dir, shim_dir) {
            continue;
        }
        let candidate = join(dir, name);
        match stat(&candidate) {
            Some(s) if s.is_file() && s.mode() & 0o111 != 0 && Some(s.id()) != own_id => {}
            _ => continue,
        }
        if shim_id.is_some() && stat(dir).map(|s| s.id()) == shim_id {
            continue;
        }
        return Some(candidate);
    }
    None
}

/// `struct stat` of x86-64 Linux, as words.
struct Stat([u64; 18]);

impl Stat {
    fn id(&self) -> (u64, u64) {
        (self.0[0], self.0[1])
    }
    fn mode(&self) -> u32 {
        self.0[3] as u32
    }
    fn is_file(&self) -> bool {
        self.mode() & 0o170000 == 0o100000
    }
}

/// `stat` through links; `None` when it fails.
fn stat(path: &[u8]) -> Option<Stat> {
    const AT_FDCWD: isize = -100;
    let path = nul_terminated(path);
    let mut st = Stat([0; 18]);
    // SAFETY: a NUL-terminated path and a buffer the size of `struct stat`.
    let r = unsafe {
        sys::call(
            sys::NEWFSTATAT,
            [
                AT_FDCWD as usize,
                path.as_ptr() as usize,
                st.0.as_mut_ptr() as usize,
                0,
                0,
                0,
            ],
        )
    };
    (r == 0).then_some(st)
}

/// Why a round trip to the supervisor failed.
enum Error {
    /// A system call's error number.
    Os(isize),
    /// The supervisor closed the connection before answering.
    Eof,
    /// The socket's path is too long for an address.
    TooLong,
    /// The answer's header is wrong.
    Wire(&'static str),
}

impl Error {
    /// The words `std::io::Error` would print, so both shims say the same.
    fn text(&self) -> Vec<u8> {
        match self {
            Error::Os(n) => {
                let known = match n {
                    1 => "Operation not permitted",
                    2 => "No such file or directory",
                    4 => "Interrupted system call",
                    7 => "Argument list too long",
                    8 => "Exec format error",
                    12 => "Cannot allocate memory",
                    13 => "Permission denied",
                    20 => "Not a directory",
                    21 => "Is a directory",
                    26 => "Text file busy",
                    32 => "Broken pipe",
                    36 => "File name too long",
                    40 => "Too many levels of symbolic links",
                    104 => "Connection reset by peer",
                    110 => "Connection timed out",
                    111 => "Connection refused",
                    _ => "Unknown error",
                };
                cat(&[
                    known.as_bytes(),
                    b" (os error ",
                    &decimal(*n as usize),
                    b")",
                ])
            }
            Error::Eof => b"failed to fill whole buffer".to_vec(),
            Error::TooLong => b"path must be shorter than SUN_LEN".to_vec(),
            Error::Wire(why) => cat(&[b"bad answer from the supervisor: ", why.as_bytes()]),
        }
    }
}

/// Sends `frame` to the supervisor of the session in `dir` and returns
/// the answer's body.
fn ask(dir: &[u8], frame: &[u8]) -> Result<Vec<u8>, Error> {
    const AF_UNIX: usize = 1;
    const SOCK_STREAM_CLOEXEC: usize = 1 | 0o2000000;
    const O_RDONLY_CLOEXEC: usize = 0o2000000;
    // The socket's address; a long session path is reached through
    // `/proc/self/fd/N/` of an open directory, as the supervisor bound it.
    let direct = join(dir, wire::SOCKET_NAME.as_bytes());
    let address = if direct.len() < 100 {
        direct
    } else {
        let dir_c = nul_terminated(dir);
        // SAFETY: a NUL-terminated path.
        let fd = unsafe {
            sys::retry(
                sys::OPEN,
                [dir_c.as_ptr() as usize, O_RDONLY_CLOEXEC, 0, 0, 0, 0],
            )
        }
        .map_err(Error::Os)?;
        cat(&[
            b"/proc/self/fd/",
            &decimal(fd),
            b"/",
            wire::SOCKET_NAME.as_bytes(),
        ])
    };
    // struct sockaddr_un: the family, then up to 108 bytes of path.
    let mut addr = [0u8; 110];
    if address.len() >= 108 {
        return Err(Error::TooLong);
    }
    addr[..2].copy_from_slice(&(AF_UNIX as u16).to_ne_bytes());
    addr[2..2 + address.len()].copy_from_slice(&address);
    // SAFETY: plain numbers.
    let sock = unsafe { sys::call(sys::SOCKET, [AF_UNIX, SOCK_STREAM_CLOEXEC, 0, 0, 0, 0]) };
    if sock < 0 {
        return Err(Error::Os(-sock));
    }
    let sock = sock as usize;
    let addr_len = 2 + address.len() + 1;
    // SAFETY: an address of `addr_len` bytes.
    unsafe {
        sys::retry(
            sys::CONNECT,
            [sock, addr.as_ptr() as usize, addr_len, 0, 0, 0],
        )
    }
    .map_err(Error::Os)?;
    let mut at = 0;
    while at < frame.len() {
        // SAFETY: the rest of `frame`.
        let n = unsafe {
            sys::retry(
                sys::WRITE,
                [
                    sock,
                    frame[at..].as_ptr() as usize,
                    frame.len() - at,
                    0,
                    0,
                    0,
                ],
            )
        }
        .map_err(Error::Os)?;
        at += n;
    }
    let mut header = [0u8; wire::HEADER_LEN];
    read_exact(sock, &mut header)?;
    let len = wire::body_len(&header).map_err(|e| Error::Wire(e.0))?;
    let mut body = alloc::vec![0u8; len];
    read_exact(sock, &mut body)?;
    // SAFETY: our own descriptor.
    unsafe { sys::call(sys::CLOSE, [sock, 0, 0, 0, 0, 0]) };
    Ok(body)
}

fn read_exact(fd: usize, buf: &mut [u8]) -> Result<(), Error> {
    let mut at = 0;
    while at < buf.len() {
        // SAFETY: the rest of `buf`.
        let n = unsafe {
            sys::retry(
                sys::READ,
                [fd, buf[at..].as_mut_ptr() as usize, buf.len() - at, 0, 0, 0],
            )
        }
        .map_err(Error::Os)?;
        if n == 0 {
            return Err(Error::Eof);
        }
        at += n;
    }
    Ok(())
}

/// Writes all of `bytes` to `fd`, giving up quietly on an error (there is
/// no one left to tell).
fn write_all(fd: usize, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: a valid buffer.
        match unsafe {
            sys::retry(
                sys::WRITE,
                [fd, bytes.as_ptr() as usize, bytes.len(), 0, 0, 0],
            )
        } {
            Ok(0) | Err(_) => return,
            Ok(n) => bytes = &bytes[n..],
        }
    }
}

/// Prints `aq: NAME: ` and the parts on stderr, as one line.
fn say(name: &[u8], parts: &[&[u8]]) {
    let mut line = cat(&[b"aq: ", name, b": "]);
    for part in parts {
        line.extend_from_slice(part);
    }
    line.push(b'\n');
    write_all(2, &line);
}

/// The first value of variable `name` in `env`.
fn var(env: &[&'static [u8]], name: &[u8]) -> Option<&'static [u8]> {
    env.iter()
        .find_map(|e| (wire::env_name(e) == Some(name)).then(|| &e[name.len() + 1..]))
}

/// The working directory; empty when the kernel cannot say (removed, or
/// outside this process's root).
fn current_dir() -> Vec<u8> {
    let mut buf = alloc::vec![0u8; 4096];
    // SAFETY: a buffer of its length.
    let r = unsafe {
        sys::call(
            sys::GETCWD,
            [buf.as_mut_ptr() as usize, buf.len(), 0, 0, 0, 0],
        )
    };
    if r <= 0 || buf[0] != b'/' {
        return Vec::new();
    }
    buf.truncate(r as usize - 1);
    buf
}

/// `dir` and `name` with one `/` between them (as `Path::join`).
fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() || dir.ends_with(b"/") {
        cat(&[dir, name])
    } else {
        cat(&[dir, b"/", name])
    }
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for part in parts {
        out.extend_from_slice(part);
    }
    out
}

fn nul_terminated(bytes: &[u8]) -> Vec<u8> {
    cat(&[bytes, b"\0"])
}

fn decimal(mut n: usize) -> Vec<u8> {
    let mut digits = Vec::new();
    loop {
        digits.push(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    digits
}
