//! PID namespace: host processes are invisible and cannot be signalled.

use super::util::{Outcome, Scratch, run_probe};

#[test]
fn sandbox_cannot_see_host_processes() {
    let s = Scratch::new();
    let me = std::process::id();
    let Some(got) = run_probe(&s.spec(), &format!("read:/proc/{me}/status")) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::ENOENT));
    // Init and the probe, nothing else.
    let Some(got) = run_probe(&s.spec(), "count-pids:2") else {
        return;
    };
    assert_eq!(got, Outcome::Done);
}

#[test]
fn sandbox_cannot_signal_the_test_process() {
    let s = Scratch::new();
    let me = std::process::id();
    let Some(got) = run_probe(&s.spec(), &format!("kill:{me}")) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::ESRCH));
}
