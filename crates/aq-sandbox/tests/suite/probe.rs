//! The probe: this test binary, re-executed inside the sandbox with
//! `AQ_SANDBOX_PROBE=<op>:<args>`. It reports through its exit code (the
//! sandbox has the caller's stdio), in a range no other outcome uses:
//! 250 done, 251 done but data was there, 252 (253) a forked child was killed
//! by SIGSYS (SIGKILL), 110 + errno for a failed call.
//! Anything else (0 when libtest matched no test, 101 for a panic) means the
//! probe did not run, which is never counted as "blocked".

use std::io::{Read, Write};

pub const DONE: i32 = 250;
pub const DONE_WITH_DATA: i32 = 251;
pub const ERRNO_BASE: i32 = 110;
/// A child forked for the attempt was killed by `SIGSYS`.
pub const KILLED_BY_SIGSYS: i32 = 252;
/// A child forked for the attempt was killed by `SIGKILL`.
pub const KILLED_BY_SIGKILL: i32 = 253;

/// Entry point; a no-op in a normal test run.
#[test]
fn probe_entry() {
    let Ok(probe) = std::env::var("AQ_SANDBOX_PROBE") else {
        return;
    };
    let code = match run(&probe) {
        Ok(code) => code,
        Err(e) => ERRNO_BASE + e.raw_os_error().unwrap_or(0),
    };
    std::process::exit(code);
}

fn last_error<T>() -> std::io::Result<T> {
    Err(std::io::Error::last_os_error())
}

fn run(probe: &str) -> std::io::Result<i32> {
    let (op, arg) = probe.split_once(':').unwrap_or((probe, ""));
    match op {
        "write" => {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(arg)?;
            f.write_all(b"written by the sandbox")?;
            Ok(DONE)
        }
        "read" => {
            let mut data = Vec::new();
            std::fs::File::open(arg)?.read_to_end(&mut data)?;
            Ok(if data.is_empty() {
                DONE
            } else {
                DONE_WITH_DATA
            })
        }
        "listdir" => {
            let n = std::fs::read_dir(arg)?.count();
            Ok(if n == 0 { DONE } else { DONE_WITH_DATA })
        }
        "rename" => {
            let (from, to) = arg.split_once(':').unwrap_or((arg, ""));
            std::fs::rename(from, to)?;
            Ok(DONE)
        }
        "umount" => {
            let c = std::ffi::CString::new(arg).unwrap_or_default();
            // SAFETY: c is NUL-terminated.
            if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == -1 {
                return last_error();
            }
            Ok(DONE)
        }
        "umount-read" => {
            // umount-read:<path>: try to unmount <path>, then read it.
            // DONE_WITH_DATA when the read finds data, whatever the unmount
            // did; else the unmount's errno, or DONE if it succeeded. A
            // failed read means the probe could not run.
            let unmounted = run(&format!("umount:{arg}"));
            match run(&format!("read:{arg}")) {
                Ok(DONE_WITH_DATA) => Ok(DONE_WITH_DATA),
                Ok(_) => unmounted,
                Err(e) => {
                    eprintln!("umount-read: reading {arg} after the unmount: {e}");
                    Ok(0)
                }
            }
        }
        "connect" => {
            let addr = arg.parse().map_err(std::io::Error::other)?;
            std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3))?;
            Ok(DONE)
        }
        "own-loopback" => {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            std::net::TcpStream::connect(l.local_addr()?)?;
            Ok(DONE)
        }
        "kill" => {
            let pid: i32 = arg.parse().map_err(std::io::Error::other)?;
            // SAFETY: signal 0 only checks that the target exists and may be signalled.
            if unsafe { libc::kill(pid, 0) } == -1 {
                return last_error();
            }
            Ok(DONE)
        }
        "count-pids" => {
            // DONE when /proc lists at most `arg` processes.
            let max: usize = arg.parse().map_err(std::io::Error::other)?;
            let n = std::fs::read_dir("/proc")?
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
                .count();
            Ok(if n <= max { DONE } else { DONE_WITH_DATA })
        }
        "sleep" => {
            let secs = arg.parse().map_err(std::io::Error::other)?;
            std::thread::sleep(std::time::Duration::from_secs(secs));
            Ok(DONE)
        }
        "daemon" => super::teardown::daemon_probe(arg),
        "copy" => {
            let (from, to) = arg.split_once(':').unwrap_or((arg, ""));
            std::fs::write(to, std::fs::read(from)?)?;
            Ok(DONE)
        }
        "alloc" => super::cgroup::alloc_in_child(arg),
        "fork-bomb" => super::teardown::fork_bomb_probe(arg),
        "symlink-read" => {
            // symlink-read:<target>:<link>: make the link, then read through it.
            let (target, link) = arg.split_once(':').unwrap_or((arg, ""));
            std::os::unix::fs::symlink(target, link)?;
            run(&format!("read:{link}"))
        }
        "link" => {
            let (from, to) = arg.split_once(':').unwrap_or((arg, ""));
            std::fs::hard_link(from, to)?;
            Ok(DONE)
        }
        "read-via-child-cwd" => super::masking::read_via_child_cwd(arg),
        "sys" => super::syscall_probes::run(arg),
        "open-write" => {
            std::fs::OpenOptions::new().write(true).open(arg)?;
            Ok(DONE)
        }
        "thread-exec" => super::exec_guard::thread_exec_probe(arg),
        "spawn-kill" => super::exec_guard::spawn_kill_probe(arg),
        "race-spawn" => super::exec_guard::race_spawn_probe(arg),
        "race-thread" => super::exec_guard::race_thread_probe(arg),
        op if op.starts_with("unix-")
            || op == "udp-connect"
            || op == "read-fd"
            || op == "pipes-reachable" =>
        {
            super::sockets::probe(op, arg)
        }
        _ => Ok(0),
    }
}
