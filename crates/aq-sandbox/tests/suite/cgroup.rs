//! cgroup v2 limits, where the caller's cgroup is delegated. Most machines
//! (this crate's CI included) offer no such cgroup: these tests then print why
//! and pass, unless `AQ_SANDBOX_REQUIRE_CGROUP=1`. The decision itself is
//! unit-tested with faked facts in `src/cgroup.rs`.

use std::io;
use std::path::PathBuf;

use aq_sandbox::{CgroupFacts, CgroupLimits, HostFacts, SandboxPlan, Step, plan};

use super::probe::{DONE, KILLED_BY_SIGKILL};
use super::teardown::fork_bomb;
use super::util::{Outcome, Scratch, run_probe, run_probe_with};

/// No delegated cgroup here: print why, or fail under `AQ_SANDBOX_REQUIRE_CGROUP=1`.
fn skip_cgroup(reason: &str) {
    assert!(
        std::env::var_os("AQ_SANDBOX_REQUIRE_CGROUP").is_none_or(|v| v != "1"),
        "AQ_SANDBOX_REQUIRE_CGROUP=1 but {reason}"
    );
    eprintln!("SKIP: {reason}");
}

/// `alloc:<bytes>`: a forked child maps and touches `<bytes>` of memory.
/// DONE when it managed, KILLED_BY_SIGKILL when it was killed (OOM).
pub fn alloc_in_child(arg: &str) -> io::Result<i32> {
    let bytes: usize = arg.parse().map_err(io::Error::other)?;
    // SAFETY: the child only calls mmap, writes into the mapping, and _exit.
    unsafe {
        let pid = libc::fork();
        if pid == -1 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            let p = libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                libc::_exit(1);
            }
            for off in (0..bytes).step_by(4096) {
                p.cast::<u8>().add(off).write_volatile(1);
            }
            libc::_exit(0);
        }
        let mut status = 0;
        if libc::waitpid(pid, &mut status, 0) != pid {
            return Err(io::Error::last_os_error());
        }
        match (libc::WIFSIGNALED(status), libc::WTERMSIG(status)) {
            (true, libc::SIGKILL) => Ok(KILLED_BY_SIGKILL),
            _ if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 => Ok(DONE),
            _ => Err(io::Error::from_raw_os_error(0)),
        }
    }
}

/// The cgroup directory a `/proc/<pid>/cgroup` text names, under `mount`.
fn cgroup_dir(mount: &std::path::Path, text: &str) -> PathBuf {
    let path = text.lines().find_map(|l| l.strip_prefix("0::")).unwrap();
    mount.join(path.trim_start_matches('/'))
}

#[test]
fn cgroup_limits_hold_where_delegated() {
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.memory_max_bytes = Some(64 << 20);
    spec.pids_max = Some(32);
    let facts = HostFacts::probe(&spec);
    let Ok(planned) = plan(&spec, &facts) else {
        // Landlock missing: run_probe says so.
        run_probe(&spec, "read:/dev/null");
        return;
    };
    match &planned.cgroup {
        CgroupLimits::Enforced { .. } => {}
        other => return skip_cgroup(&other.to_string()),
    }
    // Memory: a child touching four times memory.max is killed.
    let Some(got) = run_probe(&spec, &format!("alloc:{}", 256 << 20)) else {
        return;
    };
    assert_eq!(got, Outcome::KilledBySigkill);
    // Control: without the limit the same allocation succeeds.
    let mut unlimited = spec.clone();
    unlimited.memory_max_bytes = None;
    assert_eq!(
        run_probe(&unlimited, &format!("alloc:{}", 256 << 20)),
        Some(Outcome::Done)
    );
    // pids: the bomb stops before pids.max (supervisor and init count too).
    let Some((got, forks)) = fork_bomb(&s, &spec, |_| {}, |_| {}) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EAGAIN), "after {forks} forks");
    assert!(forks < 32, "{forks} forks under pids.max 32");
}

/// The mechanics (make, join, remove) need only a writable cgroup v2
/// directory, not the controllers: root on a hybrid host has one.
#[test]
fn sandbox_cgroup_is_made_joined_and_removed() {
    let s = Scratch::new();
    let spec = s.spec();
    let cgroup = CgroupFacts::probe();
    let (Some(mount), Some(parent)) = (cgroup.mount.clone(), cgroup.dir()) else {
        return skip_cgroup("no cgroup v2 hierarchy");
    };
    if !cgroup.writable {
        return skip_cgroup(&format!("{} is not writable", parent.display()));
    }
    let report = s.ws.join("cgroup");
    let join = |p: &mut SandboxPlan| {
        p.steps.insert(
            1,
            Step::JoinCgroup {
                parent: parent.clone(),
                memory_max_bytes: None,
                pids_max: None,
            },
        )
    };
    let probe = format!("copy:/proc/self/cgroup:{}", report.display());
    let Some(got) = run_probe_with(&spec, &probe, |_| {}, join) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    let inside = cgroup_dir(&mount, &std::fs::read_to_string(&report).unwrap());
    assert_eq!(inside.parent(), Some(parent.as_path()), "{inside:?}");
    let name = inside.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("aq-{}-", std::process::id())),
        "{name}"
    );
    assert!(!inside.exists(), "{} was left behind", inside.display());
    // Control: without the step the command stays in the caller's cgroup.
    let Some(_) = run_probe(&spec, &probe) else {
        return;
    };
    let outside = cgroup_dir(&mount, &std::fs::read_to_string(&report).unwrap());
    assert_eq!(outside, parent);
}
