//! Every program a command starts runs in a Landlock domain nested in its
//! parent's, so it cannot read the environment, memory or open files of the
//! processes that started it: the agent's key in `/proc/<agent>/environ`,
//! what it holds in `/proc/<agent>/mem`.
//!
//! # Why a nested domain
//!
//! A process may read another's `environ`, `mem` or `fd/` only when it may
//! ptrace it (`PTRACE_MODE_READ`). Between processes of one user without
//! capabilities that is allowed, unless Landlock says no: a process may trace
//! only processes in its own domain or in domains nested in it. The seccomp
//! filter already refuses `ptrace` and `process_vm_readv`; `/proc` is the path
//! left, and uid, capabilities and the dumpable flag cannot close it for an
//! unprivileged user. A nested domain can.
//!
//! # How: one more Landlock layer at the exec stop
//!
//! A process can only restrict itself, so the exec guard, which stops every
//! exec's new image before it runs ([`crate::tracer`]), makes the tracee do it.
//! At the exec stop it writes [`NEST_CODE`] (below, 140 bytes) at the start of
//! the page the program would start in, points the instruction pointer there
//! and lets it run to the `int3` at its end: `landlock_create_ruleset`
//! handling only `REFER`, `openat("/")`, `landlock_add_rule` granting `REFER`
//! beneath `/` (every layer denies renames across directories unless it
//! grants them: this one grants them everywhere, so the layer restricts no
//! file access at all), `landlock_restrict_self` and the `close`s, each result
//! kept in a register. Then it puts back the page's bytes and the registers
//! (with the exec's return value, 0) and lets the program start at its entry
//! point. One round trip, whatever the number of calls. The command's own
//! execs are not nested: it is the agent, whose children are.
//!
//! Landlock stacks at most 16 layers: a program deeper than that in a chain
//! of execs stays in its parent's domain (`E2BIG` is not an error). No_new_privs
//! is set in the sandbox, which `landlock_restrict_self` requires.

use std::io;

#[cfg(target_arch = "x86_64")]
use crate::syscall::ptrace;

// The code the stopped program runs, assembled by rustc into read-only data
// of aq (never executed here), copied into the program at its exec stop.
// Results: r12 the ruleset fd, r13 the fd of "/", r14 add_rule's, r15
// restrict_self's (negative: -errno).
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .rodata.aq_nest_code,\"a\"",
    ".globl aq_nest_code",
    ".hidden aq_nest_code",
    "aq_nest_code:",
    "    mov eax, 444", // landlock_create_ruleset(&attr, 8, 0)
    "    lea rdi, [rip + 2f]",
    "    mov esi, 8",
    "    xor edx, edx",
    "    syscall",
    "    mov r12, rax",
    "    mov eax, 257", // openat(AT_FDCWD, "/", O_PATH | O_CLOEXEC)
    "    mov rdi, -100",
    "    lea rsi, [rip + 3f]",
    "    mov edx, 0x280000",
    "    syscall",
    "    mov r13, rax",
    "    sub rsp, 64", // struct landlock_path_beneath_attr, on the stack
    "    mov qword ptr [rsp], 0x2000",
    "    mov dword ptr [rsp + 8], r13d",
    "    mov eax, 445", // landlock_add_rule(ruleset, PATH_BENEATH, &rule, 0)
    "    mov rdi, r12",
    "    mov esi, 1",
    "    mov rdx, rsp",
    "    xor r10d, r10d",
    "    syscall",
    "    mov r14, rax",
    "    mov eax, 3", // close(root)
    "    mov rdi, r13",
    "    syscall",
    "    mov eax, 446", // landlock_restrict_self(ruleset, 0)
    "    mov rdi, r12",
    "    xor esi, esi",
    "    syscall",
    "    mov r15, rax",
    "    mov eax, 3", // close(ruleset)
    "    mov rdi, r12",
    "    syscall",
    "    int3",
    "2:  .quad 0x2000",  // struct landlock_ruleset_attr: handled_access_fs = REFER
    "3:  .byte 0x2f, 0", // "/"
    ".globl aq_nest_code_end",
    ".hidden aq_nest_code_end",
    "aq_nest_code_end:",
    ".popsection",
);

#[cfg(target_arch = "x86_64")]
unsafe extern "C" {
    static aq_nest_code: u8;
    static aq_nest_code_end: u8;
}

/// The bytes of the code above.
#[cfg(target_arch = "x86_64")]
pub(crate) fn nest_code() -> &'static [u8] {
    // SAFETY: both symbols delimit one block of read-only data in this binary.
    unsafe {
        let start = &raw const aq_nest_code;
        let end = &raw const aq_nest_code_end;
        std::slice::from_raw_parts(start, end as usize - start as usize)
    }
}

/// The stopped tracee `pid`, at its `PTRACE_EVENT_EXEC` stop, enters a nested
/// Landlock domain and is stopped again, ready to be detached at its entry
/// point. Returns the signals that arrived meanwhile (to deliver at detach).
#[cfg(target_arch = "x86_64")]
pub(crate) fn nest_domain(pid: libc::pid_t) -> io::Result<Vec<i32>> {
    use std::os::unix::fs::FileExt;
    let saved = get_regs(pid)?;
    // The page it starts in is mapped whole: the code fits at its start.
    let page = saved.rip & !0xfff;
    let code = nest_code();
    let mem = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/mem"))?;
    let mut kept = vec![0u8; code.len()];
    mem.read_exact_at(&mut kept, page)?;
    mem.write_all_at(code, page)?;
    let mut signals = Vec::new();
    let ran = run_code(pid, &saved, page, code.len() as u64, &mut signals);
    // Put everything back, whatever happened: the page, and the registers
    // as the exec left them (returning 0, in no system call).
    let mut back = saved;
    back.rax = 0;
    back.orig_rax = u64::MAX;
    let restored = mem
        .write_all_at(&kept, page)
        .and_then(|()| set_regs(pid, &back));
    ran?;
    restored?;
    Ok(signals)
}

/// Not on this architecture: the exec guard leaves programs in their
/// parent's domain (documented).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn nest_domain(_pid: libc::pid_t) -> io::Result<Vec<i32>> {
    Ok(Vec::new())
}

/// Runs the code at `page` to its `int3` and checks what each call returned.
#[cfg(target_arch = "x86_64")]
fn run_code(
    pid: libc::pid_t,
    saved: &libc::user_regs_struct,
    page: u64,
    len: u64,
    signals: &mut Vec<i32>,
) -> io::Result<()> {
    let mut regs = *saved;
    regs.rip = page;
    set_regs(pid, &regs)?;
    loop {
        ptrace(libc::PTRACE_CONT, pid, 0, 0)?;
        let status = wait_stop(pid)?;
        let sig = libc::WSTOPSIG(status);
        if status >> 16 != 0 {
            continue; // an event stop (a group stop): go on
        }
        if sig != libc::SIGTRAP {
            signals.push(sig); // held back, delivered at detach
            continue;
        }
        break;
    }
    let after = get_regs(pid)?;
    // Just past the `int3`, which the 10 bytes of data follow.
    if after.rip != page + len - 10 {
        return Err(io::Error::other("the nesting code did not end at its int3"));
    }
    let failed = |r: u64| (r as i64) < 0;
    for r in [after.r12, after.r13, after.r14] {
        if failed(r) {
            return Err(io::Error::from_raw_os_error(-(r as i64) as i32));
        }
    }
    // Sixteen layers already: nested as deep as Landlock goes.
    match after.r15 as i64 {
        0 => Ok(()),
        e if -e == libc::E2BIG as i64 => Ok(()),
        e => Err(io::Error::from_raw_os_error(-e as i32)),
    }
}

/// Waits for the next stop of `pid`; an exit is `ESRCH`.
#[cfg(target_arch = "x86_64")]
fn wait_stop(pid: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL | libc::__WNOTHREAD) };
        if r == pid {
            break;
        }
        if r == -1 && crate::syscall::errno() != libc::EINTR {
            return Err(io::Error::last_os_error());
        }
    }
    if libc::WIFSTOPPED(status) {
        Ok(status)
    } else {
        Err(io::Error::from_raw_os_error(libc::ESRCH))
    }
}

#[cfg(target_arch = "x86_64")]
fn get_regs(pid: libc::pid_t) -> io::Result<libc::user_regs_struct> {
    // SAFETY: an all-zero user_regs_struct is valid; the kernel fills it.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    ptrace(
        libc::PTRACE_GETREGS,
        pid,
        0,
        &mut regs as *mut libc::user_regs_struct as usize,
    )?;
    Ok(regs)
}

#[cfg(target_arch = "x86_64")]
fn set_regs(pid: libc::pid_t, regs: &libc::user_regs_struct) -> io::Result<()> {
    ptrace(
        libc::PTRACE_SETREGS,
        pid,
        0,
        regs as *const libc::user_regs_struct as usize,
    )
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    #[test]
    fn the_code_ends_with_its_trap_and_data() {
        let code = super::nest_code();
        assert_eq!(code.len(), 140, "{code:02x?}");
        // mov eax, 444 (landlock_create_ruleset) first, int3 before the data.
        assert_eq!(&code[..5], &[0xb8, 0xbc, 0x01, 0x00, 0x00]);
        assert_eq!(code[129], 0xcc);
        assert_eq!(&code[130..], &[0x00, 0x20, 0, 0, 0, 0, 0, 0, b'/', 0]);
    }
}
