//! seccomp: the system calls no sandboxed command needs and an escape would.
//!
//! Decide, then do, in three steps:
//!
//! 1. [`plan_seccomp`] (pure, any OS) says *what* is denied: a [`SeccompPolicy`]
//!    of [`SeccompDenial`]s, each a syscall, an argument condition and an errno.
//! 2. `build_filters` (pure, Linux) turns the policy into BPF programs with
//!    `seccompiler`, before `fork`, so a policy that does not compile is a setup
//!    error in the caller and the child only copies a prepared program.
//! 3. `apply_filters` (the command process, last step before `execve`) installs
//!    them.
//!
//! # Why `seccompiler`
//!
//! The Firecracker project's filter compiler (rust-vmm, Apache-2.0/BSD-3,
//! depends only on `libc`) builds BPF from rules with argument conditions,
//! including the 32-bit ("dword") comparisons that make `ioctl` and `clone`
//! flag checks immune to garbage in the upper half, and prepends the
//! architecture check. Hand-written BPF jump offsets are where filters go wrong.
//! Its one limit is one action per filter, so we install one filter per errno
//! (the kernel runs every filter and keeps the strictest answer; no two of
//! ours match the same call), plus a seven-instruction hand-written guard for
//! the x32 table that `seccompiler` does not cover (see [`x32_guard`]).
//!
//! # Foreign architectures
//!
//! Every `seccompiler` filter starts by killing the process
//! (`SECCOMP_RET_KILL_PROCESS`) when `seccomp_data.arch` is not the native one:
//! an i386 `int 0x80` on x86_64 (or an AArch32 call on aarch64) would otherwise
//! reach a syscall table whose numbers the rules do not describe. On x86_64 the
//! x32 ABI shares `AUDIT_ARCH_X86_64` but sets bit 30 of the syscall number; the
//! x32 guard kills those too.
//!
//! # For the exec guard
//!
//! `clone` with `CLONE_UNTRACED` (a child the guard's tracer would not
//! follow) and with `CLONE_FS` but not `CLONE_THREAD` (another process
//! sharing the working directory, which could `chdir` after the guard's
//! commit check) get EPERM. No ordinary program asks for either: threads
//! pass `CLONE_FS | CLONE_THREAD`, `fork` and `posix_spawn` neither.
//!
//! # Errnos
//!
//! EPERM for denied calls (what a caller expects from a policy refusal);
//! EAFNOSUPPORT for socket families other than unix, inet and inet6 (what
//! libraries already handle when a kernel lacks a family, so they fall back
//! quietly); ENOSYS for `clone3`, whose flags live in memory a filter cannot
//! read, so libc falls back to `clone`, whose flags the filter checks.

/// System calls the policy can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[allow(missing_docs)] // each variant is the syscall of the same name
pub enum Syscall {
    Ptrace,
    ProcessVmReadv,
    ProcessVmWritev,
    PidfdGetfd,
    Bpf,
    Userfaultfd,
    PerfEventOpen,
    KexecLoad,
    KexecFileLoad,
    InitModule,
    FinitModule,
    DeleteModule,
    Mount,
    Umount2,
    PivotRoot,
    MoveMount,
    OpenTree,
    Fsopen,
    Fsconfig,
    Fsmount,
    Fspick,
    MountSetattr,
    IoUringSetup,
    IoUringEnter,
    IoUringRegister,
    Keyctl,
    AddKey,
    RequestKey,
    Unshare,
    Setns,
    Clone,
    Clone3,
    Ioctl,
    Socket,
}

impl Syscall {
    /// The kernel's name for the call.
    pub fn name(self) -> &'static str {
        match self {
            Syscall::Ptrace => "ptrace",
            Syscall::ProcessVmReadv => "process_vm_readv",
            Syscall::ProcessVmWritev => "process_vm_writev",
            Syscall::PidfdGetfd => "pidfd_getfd",
            Syscall::Bpf => "bpf",
            Syscall::Userfaultfd => "userfaultfd",
            Syscall::PerfEventOpen => "perf_event_open",
            Syscall::KexecLoad => "kexec_load",
            Syscall::KexecFileLoad => "kexec_file_load",
            Syscall::InitModule => "init_module",
            Syscall::FinitModule => "finit_module",
            Syscall::DeleteModule => "delete_module",
            Syscall::Mount => "mount",
            Syscall::Umount2 => "umount2",
            Syscall::PivotRoot => "pivot_root",
            Syscall::MoveMount => "move_mount",
            Syscall::OpenTree => "open_tree",
            Syscall::Fsopen => "fsopen",
            Syscall::Fsconfig => "fsconfig",
            Syscall::Fsmount => "fsmount",
            Syscall::Fspick => "fspick",
            Syscall::MountSetattr => "mount_setattr",
            Syscall::IoUringSetup => "io_uring_setup",
            Syscall::IoUringEnter => "io_uring_enter",
            Syscall::IoUringRegister => "io_uring_register",
            Syscall::Keyctl => "keyctl",
            Syscall::AddKey => "add_key",
            Syscall::RequestKey => "request_key",
            Syscall::Unshare => "unshare",
            Syscall::Setns => "setns",
            Syscall::Clone => "clone",
            Syscall::Clone3 => "clone3",
            Syscall::Ioctl => "ioctl",
            Syscall::Socket => "socket",
        }
    }
}

/// When a denial applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgCondition {
    /// Always.
    Always,
    /// `clone` with any `CLONE_NEW*` namespace flag in its flags.
    NamespaceFlags,
    /// `clone` with `CLONE_UNTRACED`: a child the exec guard's tracer would
    /// not follow, whose execs would go unchecked at commit.
    Untraced,
    /// `clone` with `CLONE_FS` but not `CLONE_THREAD`: another process
    /// sharing the working directory could `chdir` between the exec guard's
    /// commit check and the new program's first instruction.
    SharedFsWithoutThread,
    /// `ioctl` requests that push input into a terminal: `TIOCSTI`, `TIOCLINUX`.
    TerminalInjection,
    /// `socket` with a family other than `AF_UNIX`, `AF_INET`, `AF_INET6`.
    FamilyNotUnixOrInet,
}

/// The answer a denied call gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DenyErrno {
    /// `EPERM`: refused by policy.
    Eperm,
    /// `EAFNOSUPPORT`: address family not supported.
    Eafnosupport,
    /// `ENOSYS`: as if the kernel lacked the call (libc falls back).
    Enosys,
}

impl DenyErrno {
    /// The errno's value, as Linux numbers it (the filter returns it there).
    pub fn raw(self) -> i32 {
        errno_value(self)
    }

    /// The errno's name.
    pub fn name(self) -> &'static str {
        match self {
            DenyErrno::Eperm => "EPERM",
            DenyErrno::Eafnosupport => "EAFNOSUPPORT",
            DenyErrno::Enosys => "ENOSYS",
        }
    }
}

/// One denied call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeccompDenial {
    /// The call.
    pub syscall: Syscall,
    /// When it is denied.
    pub when: ArgCondition,
    /// What it returns then.
    pub errno: DenyErrno,
}

/// The whole filter: these denials, everything else allowed, and foreign
/// architectures' syscall tables (i386, x32, AArch32) killing the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeccompPolicy {
    /// Denied calls, in policy order.
    pub denials: Vec<SeccompDenial>,
    /// The unconditional denials are answered by the exec guard's notifier,
    /// which records each ([`SeccompPolicy::notified`]), not by this filter.
    /// Set by the plan when the exec guard runs; the answers are the same.
    pub notify_refusals: bool,
}

impl SeccompPolicy {
    /// The denials the exec guard answers when [`Self::notify_refusals`]:
    /// `(number, errno, name)` of each unconditional one, except `clone3`
    /// and io_uring, which runtimes probe routinely and expect refused.
    pub fn notified(&self) -> Vec<(i64, i32, &'static str)> {
        if !self.notify_refusals {
            return Vec::new();
        }
        self.denials
            .iter()
            .filter(|d| d.when == ArgCondition::Always && !routine(d.syscall))
            .filter_map(|d| Some((syscall_number(d.syscall)?, d.errno.raw(), d.syscall.name())))
            .collect()
    }
}

/// Refused calls a runtime makes on its own to see whether it may.
fn routine(s: Syscall) -> bool {
    matches!(
        s,
        Syscall::Clone3 | Syscall::IoUringSetup | Syscall::IoUringEnter | Syscall::IoUringRegister
    )
}

#[cfg(target_os = "linux")]
fn syscall_number(s: Syscall) -> Option<i64> {
    Some(linux::number(s))
}

#[cfg(not(target_os = "linux"))]
fn syscall_number(_: Syscall) -> Option<i64> {
    None
}

#[cfg(target_os = "linux")]
fn errno_value(e: DenyErrno) -> i32 {
    match e {
        DenyErrno::Eperm => libc::EPERM,
        DenyErrno::Eafnosupport => libc::EAFNOSUPPORT,
        DenyErrno::Enosys => libc::ENOSYS,
    }
}

/// Linux's generic numbering (x86, Arm, RISC-V), for a policy planned on
/// another system, where `libc` is not a dependency of this crate and would
/// number `EAFNOSUPPORT` and `ENOSYS` differently anyway.
#[cfg(not(target_os = "linux"))]
fn errno_value(e: DenyErrno) -> i32 {
    match e {
        DenyErrno::Eperm => 1,
        DenyErrno::Eafnosupport => 97,
        DenyErrno::Enosys => 38,
    }
}

/// The policy every sandbox gets. Pure.
pub fn plan_seccomp() -> SeccompPolicy {
    use ArgCondition::*;
    use DenyErrno::*;
    use Syscall::*;
    let always_eperm = [
        // Reading or steering other processes (and their memory, and fds).
        Ptrace,
        ProcessVmReadv,
        ProcessVmWritev,
        PidfdGetfd,
        // Kernel attack surface no build or test needs.
        Bpf,
        Userfaultfd,
        PerfEventOpen,
        KexecLoad,
        KexecFileLoad,
        InitModule,
        FinitModule,
        DeleteModule,
        IoUringSetup,
        IoUringEnter,
        IoUringRegister,
        // The mount family: masks and read-only binds must stay as they are.
        Mount,
        Umount2,
        PivotRoot,
        MoveMount,
        OpenTree,
        Fsopen,
        Fsconfig,
        Fsmount,
        Fspick,
        MountSetattr,
        // Kernel keyrings (shared with the host's user, not namespaced).
        Keyctl,
        AddKey,
        RequestKey,
        // New namespaces: a fresh user namespace would give back every capability.
        Unshare,
        Setns,
    ];
    let mut denials: Vec<SeccompDenial> = always_eperm
        .into_iter()
        .map(|syscall| SeccompDenial {
            syscall,
            when: Always,
            errno: Eperm,
        })
        .collect();
    denials.extend([
        SeccompDenial {
            syscall: Clone,
            when: NamespaceFlags,
            errno: Eperm,
        },
        // Both only matter to the exec guard, and no program needs them.
        SeccompDenial {
            syscall: Clone,
            when: Untraced,
            errno: Eperm,
        },
        SeccompDenial {
            syscall: Clone,
            when: SharedFsWithoutThread,
            errno: Eperm,
        },
        SeccompDenial {
            syscall: Clone3,
            when: Always,
            errno: Enosys,
        },
        SeccompDenial {
            syscall: Ioctl,
            when: TerminalInjection,
            errno: Eperm,
        },
        SeccompDenial {
            syscall: Socket,
            when: FamilyNotUnixOrInet,
            errno: Eafnosupport,
        },
    ]);
    SeccompPolicy {
        denials,
        notify_refusals: false,
    }
}

#[cfg(target_os = "linux")]
pub(crate) use linux::{apply_filters, build_filters};

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;

    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch, sock_filter,
    };

    use super::{ArgCondition, DenyErrno, SeccompPolicy, Syscall};
    use crate::syscall::{Call, Fail};

    pub(super) fn number(s: Syscall) -> libc::c_long {
        match s {
            Syscall::Ptrace => libc::SYS_ptrace,
            Syscall::ProcessVmReadv => libc::SYS_process_vm_readv,
            Syscall::ProcessVmWritev => libc::SYS_process_vm_writev,
            Syscall::PidfdGetfd => libc::SYS_pidfd_getfd,
            Syscall::Bpf => libc::SYS_bpf,
            Syscall::Userfaultfd => libc::SYS_userfaultfd,
            Syscall::PerfEventOpen => libc::SYS_perf_event_open,
            Syscall::KexecLoad => libc::SYS_kexec_load,
            Syscall::KexecFileLoad => libc::SYS_kexec_file_load,
            Syscall::InitModule => libc::SYS_init_module,
            Syscall::FinitModule => libc::SYS_finit_module,
            Syscall::DeleteModule => libc::SYS_delete_module,
            Syscall::Mount => libc::SYS_mount,
            Syscall::Umount2 => libc::SYS_umount2,
            Syscall::PivotRoot => libc::SYS_pivot_root,
            Syscall::MoveMount => libc::SYS_move_mount,
            Syscall::OpenTree => libc::SYS_open_tree,
            Syscall::Fsopen => libc::SYS_fsopen,
            Syscall::Fsconfig => libc::SYS_fsconfig,
            Syscall::Fsmount => libc::SYS_fsmount,
            Syscall::Fspick => libc::SYS_fspick,
            Syscall::MountSetattr => libc::SYS_mount_setattr,
            Syscall::IoUringSetup => libc::SYS_io_uring_setup,
            Syscall::IoUringEnter => libc::SYS_io_uring_enter,
            Syscall::IoUringRegister => libc::SYS_io_uring_register,
            Syscall::Keyctl => libc::SYS_keyctl,
            Syscall::AddKey => libc::SYS_add_key,
            Syscall::RequestKey => libc::SYS_request_key,
            Syscall::Unshare => libc::SYS_unshare,
            Syscall::Setns => libc::SYS_setns,
            Syscall::Clone => libc::SYS_clone,
            Syscall::Clone3 => libc::SYS_clone3,
            Syscall::Ioctl => libc::SYS_ioctl,
            Syscall::Socket => libc::SYS_socket,
        }
    }

    fn errno(e: DenyErrno) -> u32 {
        match e {
            DenyErrno::Eperm => libc::EPERM as u32,
            DenyErrno::Eafnosupport => libc::EAFNOSUPPORT as u32,
            DenyErrno::Enosys => libc::ENOSYS as u32,
        }
    }

    /// Every `CLONE_NEW*` flag `clone` accepts.
    const NAMESPACE_FLAGS: [libc::c_int; 8] = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWCGROUP,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        0x80, // CLONE_NEWTIME (not in every libc)
    ];

    /// The rules (OR of ANDs) for one condition; empty means "always".
    /// Every comparison is on the low 32 bits ("dword"): the kernel reads
    /// `clone` flags, `ioctl` requests and socket families as 32-bit values, so
    /// garbage in the upper half must not turn a match into a miss.
    fn rules(when: ArgCondition) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        let cond =
            |arg, op, value: u64| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value);
        Ok(match when {
            ArgCondition::Always => Vec::new(),
            // Any bit set: one rule per flag, `(flags & bit) == bit`.
            ArgCondition::NamespaceFlags => NAMESPACE_FLAGS
                .iter()
                .map(|&bit| {
                    let bit = bit as u64;
                    SeccompRule::new(vec![cond(0, SeccompCmpOp::MaskedEq(bit), bit)?])
                })
                .collect::<Result<_, _>>()?,
            ArgCondition::Untraced => {
                let bit = libc::CLONE_UNTRACED as u64;
                vec![SeccompRule::new(vec![cond(
                    0,
                    SeccompCmpOp::MaskedEq(bit),
                    bit,
                )?])?]
            }
            ArgCondition::SharedFsWithoutThread => {
                let both = (libc::CLONE_FS | libc::CLONE_THREAD) as u64;
                vec![SeccompRule::new(vec![cond(
                    0,
                    SeccompCmpOp::MaskedEq(both),
                    libc::CLONE_FS as u64,
                )?])?]
            }
            // `as u64`: the request type is `c_ulong` on glibc, `c_int` on musl.
            #[allow(clippy::unnecessary_cast)]
            ArgCondition::TerminalInjection => [libc::TIOCSTI, libc::TIOCLINUX]
                .iter()
                .map(|&req| SeccompRule::new(vec![cond(1, SeccompCmpOp::Eq, req as u64)?]))
                .collect::<Result<_, _>>()?,
            ArgCondition::FamilyNotUnixOrInet => vec![SeccompRule::new(
                [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6]
                    .iter()
                    .map(|&family| cond(0, SeccompCmpOp::Ne, family as u64))
                    .collect::<Result<_, _>>()?,
            )?],
        })
    }

    fn target_arch() -> Result<TargetArch, seccompiler::BackendError> {
        TargetArch::try_from(std::env::consts::ARCH)
    }

    /// Compile `policy` into the BPF programs to install, in order: one per
    /// errno (the kernel keeps the strictest answer of all filters; no two of
    /// ours match the same call), then the x32 guard on x86_64. Pure.
    pub(crate) fn build_filters(
        policy: &SeccompPolicy,
    ) -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
        let arch = target_arch()?;
        let mut by_errno: BTreeMap<DenyErrno, BTreeMap<i64, Vec<SeccompRule>>> = BTreeMap::new();
        let notified = policy.notified();
        for d in &policy.denials {
            if notified.iter().any(|(nr, _, _)| *nr == number(d.syscall)) {
                // The exec guard answers it, and records it.
                continue;
            }
            let chain = by_errno
                .entry(d.errno)
                .or_default()
                .entry(number(d.syscall))
                .or_default();
            let mut more = rules(d.when)?;
            if more.is_empty() {
                // Unconditional: an empty chain matches every call.
                chain.clear();
            } else {
                chain.append(&mut more);
            }
        }
        let mut programs = Vec::new();
        for (e, rules) in by_errno {
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(errno(e)),
                arch,
            )?;
            programs.push(BpfProgram::try_from(filter)?);
        }
        if cfg!(target_arch = "x86_64") {
            programs.push(x32_guard());
        }
        Ok(programs)
    }

    /// Kill the process on an x32 call (syscall number with bit 30 set under
    /// `AUDIT_ARCH_X86_64`); kill on any other architecture too, so the guard
    /// holds on its own.
    ///
    /// ```text
    /// 0: ld  [arch]
    /// 1: jeq AUDIT_ARCH_X86_64, 3, 2
    /// 2: ret KILL_PROCESS
    /// 3: ld  [nr]
    /// 4: jge 0x40000000, 5, 6
    /// 5: ret KILL_PROCESS
    /// 6: ret ALLOW
    /// ```
    pub(crate) fn x32_guard() -> BpfProgram {
        const LD_ABS_W: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
        const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
        const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
        const RET_K: u16 = 0x06; // BPF_RET | BPF_K
        const ARCH_OFFSET: u32 = 4; // offsetof(struct seccomp_data, arch)
        const NR_OFFSET: u32 = 0; // offsetof(struct seccomp_data, nr)
        const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
        vec![
            ins(LD_ABS_W, 0, 0, ARCH_OFFSET),
            ins(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
            ins(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
            ins(LD_ABS_W, 0, 0, NR_OFFSET),
            ins(JGE_K, 0, 1, X32_SYSCALL_BIT),
            ins(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
            ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        ]
    }

    /// Install every program (in the command process, between fork and exec:
    /// no allocation here). `no_new_privs` is already set by its own step.
    pub(crate) fn apply_filters(programs: &[BpfProgram], step: u32) -> Result<(), Fail> {
        for p in programs {
            if let Err(e) = seccompiler::apply_filter(p) {
                let errno = match e {
                    seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => {
                        io.raw_os_error().unwrap_or(libc::EINVAL)
                    }
                    _ => libc::EINVAL,
                };
                return Err(Fail {
                    step,
                    call: Call::Seccomp,
                    errno,
                });
            }
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::super::plan_seccomp;
        use super::*;

        #[test]
        fn default_policy_compiles_to_one_filter_per_errno_plus_the_x32_guard() {
            let programs = build_filters(&plan_seccomp()).unwrap();
            let want = 3 + usize::from(cfg!(target_arch = "x86_64"));
            assert_eq!(programs.len(), want);
            for p in &programs {
                assert!(!p.is_empty() && p.len() < 4096, "{} instructions", p.len());
            }
        }

        #[test]
        fn every_filter_kills_a_foreign_architecture_first() {
            // ld [arch]; jeq native; ret KILL_PROCESS
            for p in build_filters(&plan_seccomp()).unwrap() {
                assert_eq!((p[0].code, p[0].k), (0x20, 4), "{p:?}");
                assert_eq!(p[1].code, 0x15);
                assert_eq!(p[2].k, libc::SECCOMP_RET_KILL_PROCESS);
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[test]
        fn x32_guard_kills_numbers_with_bit_30() {
            let g = x32_guard();
            assert_eq!(g[4].k, 0x4000_0000);
            assert_eq!(g[5].k, libc::SECCOMP_RET_KILL_PROCESS);
            assert_eq!(g[6].k, libc::SECCOMP_RET_ALLOW);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_denies_every_call_the_threat_model_names() {
        let p = plan_seccomp();
        let denied = |s: Syscall| p.denials.iter().find(|d| d.syscall == s).copied();
        for s in [
            Syscall::Ptrace,
            Syscall::ProcessVmReadv,
            Syscall::ProcessVmWritev,
            Syscall::PidfdGetfd,
            Syscall::Bpf,
            Syscall::Userfaultfd,
            Syscall::PerfEventOpen,
            Syscall::KexecLoad,
            Syscall::KexecFileLoad,
            Syscall::InitModule,
            Syscall::FinitModule,
            Syscall::DeleteModule,
            Syscall::Mount,
            Syscall::Umount2,
            Syscall::PivotRoot,
            Syscall::MoveMount,
            Syscall::OpenTree,
            Syscall::Fsopen,
            Syscall::Fsconfig,
            Syscall::Fsmount,
            Syscall::Fspick,
            Syscall::MountSetattr,
            Syscall::IoUringSetup,
            Syscall::IoUringEnter,
            Syscall::IoUringRegister,
            Syscall::Keyctl,
            Syscall::AddKey,
            Syscall::RequestKey,
            Syscall::Unshare,
            Syscall::Setns,
        ] {
            assert_eq!(
                denied(s),
                Some(SeccompDenial {
                    syscall: s,
                    when: ArgCondition::Always,
                    errno: DenyErrno::Eperm
                }),
                "{}",
                s.name()
            );
        }
        assert_eq!(
            denied(Syscall::Clone).unwrap().when,
            ArgCondition::NamespaceFlags
        );
        assert_eq!(denied(Syscall::Clone3).unwrap().errno, DenyErrno::Enosys);
        for when in [ArgCondition::Untraced, ArgCondition::SharedFsWithoutThread] {
            assert!(
                p.denials.contains(&SeccompDenial {
                    syscall: Syscall::Clone,
                    when,
                    errno: DenyErrno::Eperm
                }),
                "{when:?}"
            );
        }
        assert_eq!(
            denied(Syscall::Ioctl).unwrap().when,
            ArgCondition::TerminalInjection
        );
        assert_eq!(
            denied(Syscall::Socket).unwrap(),
            SeccompDenial {
                syscall: Syscall::Socket,
                when: ArgCondition::FamilyNotUnixOrInet,
                errno: DenyErrno::Eafnosupport
            }
        );
    }
}
