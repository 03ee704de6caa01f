//! Teardown: a double-forked `setsid` daemon started inside must not outlive
//! the sandbox (the host looks for its token once the sandbox is gone).

use std::io;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use super::{Context, Outcome, contains, errno_text};

/// `helper-daemonize TOKEN`: start `helper-daemon TOKEN` in a session of its
/// own with stdio on /dev/null, and exit without waiting: the second fork of
/// the classic double fork, so the daemon is nobody's child.
pub(super) fn daemonize(token: Option<&str>) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let Some(token) = token else {
        return ExitCode::from(2);
    };
    let Ok(exe) = std::env::current_exe() else {
        return ExitCode::from(2);
    };
    let mut cmd = Command::new(exe);
    cmd.args(["__probe", "helper-daemon", token])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    match cmd.spawn() {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(2),
    }
}

/// Processes whose command line holds `token`.
pub fn processes_with(token: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| contains(&c, token.as_bytes()))
        })
        .collect()
}

pub(super) fn teardown_daemon(c: &Context) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return Outcome::Error(format!("cannot find aq: {}", errno_text(&e))),
    };
    let token = format!("aq-verify-daemon-{}", c.token);
    let status = Command::new(exe)
        .args(["__probe", "helper-daemonize", &token])
        .stdin(Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => return Outcome::Error(format!("the daemon launcher ended with {s}")),
        Err(e) => {
            return Outcome::Error(format!(
                "cannot start the daemon launcher: {}",
                errno_text(&e)
            ));
        }
    }
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        if let Some(pid) = processes_with(&token).first() {
            return Outcome::Held(format!(
                "daemon (pid {pid} inside) running when the probe ended"
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Outcome::Error("the daemon did not start".to_string())
}
