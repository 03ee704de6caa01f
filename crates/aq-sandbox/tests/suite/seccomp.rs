//! seccomp and capabilities: each denied call really tried, its errno asserted.
//!
//! Where the same call gives a different answer without the filter (the
//! "control": the same plan minus the seccomp step), the control is run too,
//! so the test shows the filter is the reason, not Landlock, the missing
//! capabilities or a sysctl. Calls that are refused anyway without the filter
//! (mount, bpf, perf) still assert the filter's errno: the filter is defence in
//! depth there.

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
    assert_denied(&s.spec(), "bpf", Outcome::Errno(libc::EPERM));
}

#[test]
fn userfaultfd_is_denied() {
    let s = Scratch::new();
    assert_denied_by_filter(&s.spec(), "userfaultfd", Outcome::Errno(libc::EPERM));
}

#[test]
fn perf_event_open_is_denied() {
    let s = Scratch::new();
    assert_denied(&s.spec(), "perf-event-open", Outcome::Errno(libc::EPERM));
}

#[test]
fn mount_is_denied() {
    let s = Scratch::new();
    assert_denied(&s.spec(), "mount", Outcome::Errno(libc::EPERM));
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
    assert_denied(&spec, "socket-vsock", Outcome::Errno(libc::EAFNOSUPPORT));
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
