//! seccomp and capabilities: each denied call really tried, its errno asserted.
//!
//! Every denial is checked against a control: the same probe in the same
//! plan minus the seccomp step must get another answer, so the test shows the
//! filter is the reason, not Landlock, the missing capabilities or a sysctl.
//! Where the real call is refused anyway without the filter (mount and, with
//! the usual sysctl, bpf: the filter is defence in depth there), the real call
//! still asserts the sandbox's errno, and a second probe of the same syscall,
//! with arguments the kernel rejects in its own way before any permission
//! check, shows the filter answers first.

use aq_sandbox::{SandboxSpec, Step};

use super::util::{Outcome, Scratch, run_probe, run_probe_without};

fn sys(name: &str) -> String {
    format!("sys:{name}")
}

fn without_seccomp(step: &Step) -> bool {
    matches!(step, Step::Seccomp(_))
}

/// Assert the sandbox answers `want`; returns false when skipped.
fn assert_denied(spec: &SandboxSpec, name: &str, want: Outcome) -> bool {
    let Some(got) = run_probe(spec, &sys(name)) else {
        return false;
    };
    assert_eq!(got, want, "{name} in the sandbox");
    true
}

/// Assert the sandbox answers `want` and the same plan without the filter does not.
fn assert_denied_by_filter(spec: &SandboxSpec, name: &str, want: Outcome) {
    if !assert_denied(spec, name, want) {
        return;
    }
    let control = run_probe_without(spec, &sys(name), without_seccomp).unwrap();
    assert_ne!(
        control, want,
        "{name} without the filter gives the same answer: the test would pass for the wrong reason"
    );
}

/// Assert the sandbox answers `want` and the same plan without the filter
/// answers `kernel` (the kernel's own rejection of these arguments): the
/// filter refuses the call before the kernel looks at it.
fn assert_filter_answers_first(spec: &SandboxSpec, name: &str, want: Outcome, kernel: Outcome) {
    assert_ne!(want, kernel, "{name}: the control must be able to differ");
    if !assert_denied(spec, name, want) {
        return;
    }
    let control = run_probe_without(spec, &sys(name), without_seccomp).unwrap();
    assert_eq!(control, kernel, "{name} without the filter");
}

#[test]
fn status_shows_no_new_privs_a_filter_and_no_capabilities() {
    let s = Scratch::new();
    let Some(got) = run_probe(&s.spec(), &sys("status")) else {
        return;
    };
    assert_eq!(got, Outcome::Done, "see /proc/self/status on stderr");
}

#[test]
fn ptrace_traceme_is_denied() {
    let s = Scratch::new();
    assert_denied_by_filter(&s.spec(), "ptrace-traceme", Outcome::Errno(libc::EPERM));
}

#[test]
fn process_vm_readv_is_denied() {
    let s = Scratch::new();
    assert_denied_by_filter(&s.spec(), "process-vm-readv", Outcome::Errno(libc::EPERM));
}

#[test]
fn bpf_is_denied() {
    let s = Scratch::new();
    let spec = s.spec();
    // The real call (BPF_PROG_LOAD) gets EPERM without the filter too, where
    // kernel.unprivileged_bpf_disabled is set (the default) and the sandbox
    // holds no CAP_BPF; it must fail all the same.
    if !assert_denied(&spec, "bpf", Outcome::Errno(libc::EPERM)) {
        return;
    }
    // The filter refuses bpf whatever the command: one the kernel does not
    // know is EINVAL without the filter.
    assert_filter_answers_first(
        &spec,
        "bpf-unknown-command",
        Outcome::Errno(libc::EPERM),
        Outcome::Errno(libc::EINVAL),
    );
}

#[test]
fn userfaultfd_is_denied() {
    let s = Scratch::new();
    assert_denied_by_filter(&s.spec(), "userfaultfd", Outcome::Errno(libc::EPERM));
}

#[test]
fn perf_event_open_is_denied() {
    let s = Scratch::new();
    // Without the filter: EACCES (kernel.perf_event_paranoid >= 2 refuses
    // kernel profiling) or an open event.
    assert_denied_by_filter(&s.spec(), "perf-event-open", Outcome::Errno(libc::EPERM));
}

#[test]
fn mount_is_denied() {
    let s = Scratch::new();
    let spec = s.spec();
    // The real mount gets EPERM without the filter too: no CAP_SYS_ADMIN in
    // the sandbox's user namespace, and Landlock refuses mounts. It must fail
    // all the same.
    if !assert_denied(&spec, "mount", Outcome::Errno(libc::EPERM)) {
        return;
    }
    // The filter answers before the kernel looks up the target, which it
    // does before any permission check: ENOENT without the filter.
    assert_filter_answers_first(
        &spec,
        "mount-missing-target",
        Outcome::Errno(libc::EPERM),
        Outcome::Errno(libc::ENOENT),
    );
}

#[test]
fn new_user_namespace_is_denied_through_unshare_and_clone() {
    let s = Scratch::new();
    let spec = s.spec();
    assert_denied_by_filter(&spec, "unshare-user", Outcome::Errno(libc::EPERM));
    assert_denied_by_filter(&spec, "clone-newuser", Outcome::Errno(libc::EPERM));
}

/// What the exec guard relies on: no child escapes the tracer
/// (`CLONE_UNTRACED`), no other process shares the working directory
/// (`CLONE_FS` without `CLONE_THREAD`).
#[test]
fn untraced_and_shared_fs_clones_are_denied() {
    let s = Scratch::new();
    let spec = s.spec();
    assert_denied_by_filter(&spec, "clone-untraced", Outcome::Errno(libc::EPERM));
    assert_denied_by_filter(&spec, "clone-shared-fs", Outcome::Errno(libc::EPERM));
}

#[test]
fn clone3_is_enosys_while_fork_works() {
    let s = Scratch::new();
    let spec = s.spec();
    assert_denied_by_filter(&spec, "clone3", Outcome::Errno(libc::ENOSYS));
    assert_denied(&spec, "fork", Outcome::Done);
}

#[test]
fn io_uring_setup_is_denied() {
    let s = Scratch::new();
    assert_denied_by_filter(&s.spec(), "io-uring-setup", Outcome::Errno(libc::EPERM));
}

#[test]
fn keyctl_is_denied() {
    let s = Scratch::new();
    assert_denied_by_filter(&s.spec(), "keyctl", Outcome::Errno(libc::EPERM));
}

#[test]
fn terminal_injection_ioctls_are_denied_on_a_controlling_pty() {
    let s = Scratch::new();
    let mut spec = s.spec();
    // Opening the pty needs write access, which strict Landlock does not grant.
    spec.writable = vec!["/dev/ptmx".into(), "/dev/pts".into()];
    assert_denied_by_filter(&spec, "tiocsti", Outcome::Errno(libc::EPERM));
    assert_denied_by_filter(&spec, "tioclinux", Outcome::Errno(libc::EPERM));
}

#[test]
fn socket_families_other_than_unix_and_inet_are_unsupported() {
    let s = Scratch::new();
    let spec = s.spec();
    assert_denied_by_filter(&spec, "socket-netlink", Outcome::Errno(libc::EAFNOSUPPORT));
    assert_denied_by_filter(&spec, "socket-packet", Outcome::Errno(libc::EAFNOSUPPORT));
    // A kernel without vsock answers socket(AF_VSOCK) as the filter does, so
    // the real call alone could not tell; the filter judges by family before
    // the kernel checks the type, which it does before it looks for the
    // family: an invalid type is EINVAL without the filter, vsock or not.
    assert_denied(&spec, "socket-vsock", Outcome::Errno(libc::EAFNOSUPPORT));
    assert_filter_answers_first(
        &spec,
        "socket-vsock-bad-type",
        Outcome::Errno(libc::EAFNOSUPPORT),
        Outcome::Errno(libc::EINVAL),
    );
    for allowed in ["socket-inet", "socket-inet6", "socket-unix"] {
        assert_denied(&spec, allowed, Outcome::Done);
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn foreign_syscall_tables_kill_the_process() {
    let s = Scratch::new();
    let spec = s.spec();
    for name in ["i386-getpid", "x32-getpid"] {
        if !assert_denied(&spec, name, Outcome::KilledBySigsys) {
            return;
        }
    }
    // Control: the i386 call returns normally without the filter (the kernel
    // has IA-32 emulation), so the kill is the filter's doing.
    let control = run_probe_without(&spec, &sys("i386-getpid"), without_seccomp).unwrap();
    assert_eq!(control, Outcome::Done);
}
