//! The caller's environment and processes: scrubbed variables, init's
//! `environ`, and no host process in `/proc`.

use std::os::unix::ffi::OsStrExt;

use super::{Context, ENV_SECRET_NAMES, ENV_SECRET_VALUE, Outcome, contains, errno_text};

pub(super) fn env_secret_variables(_: &Context) -> Outcome {
    let found: Vec<String> = std::env::vars_os()
        .filter(|(k, v)| {
            ENV_SECRET_NAMES.iter().any(|n| k == n)
                || contains(v.as_bytes(), ENV_SECRET_VALUE.as_bytes())
        })
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    if found.is_empty() {
        Outcome::Held("neither is set; no variable holds their value".to_string())
    } else {
        Outcome::Leak(format!("visible: {}", found.join(", ")))
    }
}

/// A descriptor aq verify left open: closed at the sandbox's door.
pub(super) fn env_inherited_descriptor(c: &Context) -> Outcome {
    let Some(fd) = c.inherited_fd else {
        return Outcome::Error("aq verify could not open the descriptor".to_string());
    };
    let mut b = [0u8; 64];
    // SAFETY: pread into b from a descriptor number; a closed one fails.
    let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), b.len(), 0) };
    if n < 0 {
        return Outcome::Held(errno_text(&std::io::Error::last_os_error()));
    }
    if contains(&b[..n as usize], super::SSH_KEY_MARKER.as_bytes()) {
        Outcome::Leak(format!("read the fake key through descriptor {fd}"))
    } else {
        Outcome::Held(format!("descriptor {fd} is another file now"))
    }
}

/// The environment the sandbox was made from: init's inside (a copy of aq
/// verify) and aq verify's own, which is visible only where the process is
/// (its pid and start time must match: inside, the pid may be another's).
pub(super) fn env_proc_1_environ(c: &Context) -> Outcome {
    let mut paths = vec!["/proc/1/environ".to_string()];
    let caller = format!("/proc/{}", c.caller_pid);
    let same_start = std::fs::read_to_string(format!("{caller}/stat"))
        .ok()
        .and_then(|s| start_ticks(&s));
    if same_start.is_some() && same_start == c.host_start_ticks {
        paths.push(format!("{caller}/environ"));
    }
    let mut notes = Vec::new();
    for path in &paths {
        match std::fs::read(path) {
            Err(e) => notes.push(format!("{path}: {}", errno_text(&e))),
            Ok(data) if data.is_empty() => notes.push(format!("{path}: read 0 bytes")),
            Ok(data) => {
                return Outcome::Leak(format!(
                    "{path}: read {} bytes of the caller's unscrubbed environment",
                    data.len()
                ));
            }
        }
    }
    if paths.len() == 1 {
        notes.push("aq verify's own process is not visible".to_string());
    }
    Outcome::Held(notes.join("; "))
}

/// The process that started this one: the agent, for a command it runs.
/// Inside, every program sits in a Landlock domain nested in its parent's.
pub(super) fn env_parent_environ(_: &Context) -> Outcome {
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    let environ = std::fs::read(format!("/proc/{parent}/environ"));
    let cwd = std::fs::read_link(format!("/proc/{parent}/cwd"));
    match (environ, cwd) {
        (Ok(data), _) if !data.is_empty() => Outcome::Leak(format!(
            "read {} bytes of its parent's environment",
            data.len()
        )),
        (_, Ok(dir)) => Outcome::Leak(format!("read its parent's cwd: {}", dir.display())),
        (Ok(_), Err(e)) => Outcome::Held(format!("environ: 0 bytes; cwd: {}", errno_text(&e))),
        (Err(e), Err(f)) => Outcome::Held(format!(
            "environ: {}; cwd: {}",
            errno_text(&e),
            errno_text(&f)
        )),
    }
}

/// The start time (clock ticks after boot) in a `/proc/<pid>/stat` line.
pub fn start_ticks(stat: &str) -> Option<u64> {
    // Field 22; the command name (field 2) is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(") ")?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

pub(super) fn env_host_processes(c: &Context) -> Outcome {
    let Some(host_start) = c.host_start_ticks else {
        return Outcome::Error("aq verify could not read its own start time".to_string());
    };
    let entries = match std::fs::read_dir("/proc") {
        Ok(e) => e,
        Err(e) => return Outcome::Error(format!("/proc: {}", errno_text(&e))),
    };
    let mut seen = 0;
    let mut host = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        seen += 1;
        if start_ticks(&stat).is_some_and(|t| t < host_start) {
            host.push(pid.to_string());
        }
    }
    if seen == 0 {
        Outcome::Error("/proc lists no process, not even this one".to_string())
    } else if host.is_empty() {
        Outcome::Held(format!(
            "{seen} processes visible, all started after aq verify"
        ))
    } else {
        Outcome::Leak(format!(
            "{} of {seen} visible processes are older than aq verify (pids {})",
            host.len(),
            host.join(", ")
        ))
    }
}
