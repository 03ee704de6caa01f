//! Teardown: when the command exits, or its caller is killed with SIGKILL,
//! nothing it started survives (a `setsid` double-fork daemon included); a
//! fork bomb meets the process cap, as root too.
//!
//! The host recognises sandboxed processes by a unique `argv[0]` (the first
//! field of `/proc/<pid>/cmdline`): the probe re-executes itself under that
//! name, and forked children keep it.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aq_sandbox::{
    HostFacts, PID_MAX_PER_NAMESPACE_SINCE, ProcessLimit, Rlimit, RlimitResource, SandboxPlan,
    SandboxSpec, Step, plan,
};

use super::probe::{DONE, DONE_WITH_DATA};
use super::util::{
    ONE_TEST, Outcome, PROBE_TEST, Scratch, run_probe, run_probe_guarded, run_probe_with, skip,
};

/// A name no other process on this host has.
pub fn unique_marker(what: &str) -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("aq-{what}-{}-{nanos}-{seq}", std::process::id())
}

/// Processes on this host (or in this sandbox) whose `argv[0]` is `marker`.
pub fn marked_processes(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let argv0 = cmdline.split(|b| *b == 0).next()?;
            (argv0 == marker.as_bytes()).then_some(pid)
        })
        .collect()
}

/// SIGKILL stragglers (a failed test must not leave them running), and list them.
pub fn kill_marked(markers: &[String]) -> Vec<u32> {
    let left: Vec<u32> = markers.iter().flat_map(|m| marked_processes(m)).collect();
    for pid in &left {
        // SAFETY: signalling a process by pid.
        unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
    }
    left
}

/// Poll until no process carries any of `markers`; returns those still there
/// at the deadline.
pub fn wait_until_gone(markers: &[String], timeout: Duration) -> Vec<u32> {
    let deadline = Instant::now() + timeout;
    loop {
        let left: Vec<u32> = markers.iter().flat_map(|m| marked_processes(m)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An `execve` of this binary as a probe named `argv0`, prepared before any
/// fork so the child only calls async-signal-safe functions.
struct ProbeExec {
    program: CString,
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

impl ProbeExec {
    fn new(argv0: &str, probe: &str) -> io::Result<ProbeExec> {
        let cstring = |s: Vec<u8>| CString::new(s).map_err(io::Error::other);
        let program = cstring(std::env::current_exe()?.into_os_string().into_vec())?;
        let mut args = vec![cstring(argv0.into())?, cstring(PROBE_TEST.into())?];
        for a in ONE_TEST {
            args.push(cstring(a.into())?);
        }
        let mut env = vec![cstring(format!("AQ_SANDBOX_PROBE={probe}").into_bytes())?];
        for (k, v) in std::env::vars_os().filter(|(k, _)| k != "AQ_SANDBOX_PROBE") {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend(v.into_vec());
            env.push(cstring(kv)?);
        }
        let pointers = |v: &[CString]| {
            v.iter()
                .map(|c| c.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let argv = pointers(&args);
        let envp = pointers(&env);
        args.extend(env);
        Ok(ProbeExec {
            program,
            _strings: args,
            argv,
            envp,
        })
    }

    /// Returns only on failure.
    fn exec(&self) -> io::Error {
        // SAFETY: every pointer array is null-terminated and points into
        // `_strings`, alive as long as self.
        unsafe {
            libc::execve(
                self.program.as_ptr(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        io::Error::last_os_error()
    }
}

/// Start `daemon` the classic way: fork, `setsid`, fork again, stdio on
/// `/dev/null` (which the spec must make writable), the middle process exits. Returns once the grandchild has
/// exec'd (the close-on-exec pipe reads EOF).
fn start_daemon(daemon: &ProbeExec) -> io::Result<()> {
    let err = || Err(io::Error::last_os_error());
    // SAFETY: plain syscalls on fds we own; between fork and execve the
    // children call only async-signal-safe functions on data built before.
    unsafe {
        let devnull = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        let mut fds = [0; 2];
        if devnull == -1 || libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) == -1 {
            return err();
        }
        let pid = libc::fork();
        if pid == -1 {
            return err();
        }
        if pid == 0 {
            libc::close(fds[0]);
            if libc::setsid() == -1 {
                libc::_exit(1);
            }
            match libc::fork() {
                -1 => libc::_exit(1),
                0 => {
                    for fd in 0..3 {
                        libc::dup2(devnull, fd);
                    }
                    daemon.exec();
                    libc::_exit(127);
                }
                _ => libc::_exit(0),
            }
        }
        libc::close(fds[1]);
        libc::close(devnull);
        let mut byte = 0u8;
        while libc::read(fds[0], (&raw mut byte).cast(), 1) == -1
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        libc::close(fds[0]);
        let mut status = 0;
        if libc::waitpid(pid, &mut status, 0) != pid {
            return err();
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            return Err(io::Error::other(format!(
                "daemon launcher status {status:#x}"
            )));
        }
    }
    Ok(())
}

/// `daemon:<marker>:<then>`: start a daemon named `<marker>-daemon` that
/// sleeps; then, for `exit`, exit at once (DONE_WITH_DATA when the daemon was
/// running at that moment, DONE when not); for `stay`, become
/// `<marker>-command` and sleep.
pub fn daemon_probe(arg: &str) -> io::Result<i32> {
    let (marker, then) = arg.split_once(':').unwrap_or((arg, "exit"));
    let name = format!("{marker}-daemon");
    start_daemon(&ProbeExec::new(&name, "sleep:600")?)?;
    if then == "stay" {
        return Err(ProbeExec::new(&format!("{marker}-command"), "sleep:600")?.exec());
    }
    Ok(if marked_processes(&name).is_empty() {
        DONE
    } else {
        DONE_WITH_DATA
    })
}

/// `fork-bomb:<marker>:<stop_at>:<report>`: as `<marker>` (re-exec'd under that
/// name first), fork children that pause until `fork` fails or `stop_at`
/// succeeded; write the number of forks to `<report>`. Errno of the failed
/// fork, or DONE_WITH_DATA when `stop_at` forks all succeeded.
pub fn fork_bomb_probe(arg: &str) -> io::Result<i32> {
    let mut parts = arg.splitn(3, ':');
    let (Some(marker), Some(stop_at), Some(report)) = (parts.next(), parts.next(), parts.next())
    else {
        return Ok(0);
    };
    let stop_at: u32 = stop_at.parse().map_err(io::Error::other)?;
    if std::env::args_os().next() != Some(OsString::from(marker)) {
        return Err(ProbeExec::new(marker, &format!("fork-bomb:{arg}"))?.exec());
    }
    let mut forks = 0;
    let mut result = Ok(DONE_WITH_DATA);
    while forks < stop_at {
        // SAFETY: the child only calls pause, async-signal-safe, until killed.
        match unsafe { libc::fork() } {
            0 => loop {
                // SAFETY: see above.
                unsafe { libc::pause() };
            },
            -1 => {
                result = Err(io::Error::last_os_error());
                break;
            }
            _ => forks += 1,
        }
    }
    std::fs::write(report, forks.to_string())?;
    result
}

#[test]
fn setsid_double_fork_daemon_dies_with_the_command() {
    let s = Scratch::new();
    let marker = unique_marker("daemon");
    let mut spec = s.spec();
    spec.writable = vec!["/dev/null".into()];
    let Some(got) = run_probe(&spec, &format!("daemon:{marker}:exit")) else {
        return;
    };
    // The daemon was running when the command exited: the test can tell.
    assert_eq!(got, Outcome::DoneWithData);
    // No grace period: the PID namespace's init reaps every process in it
    // before it exits, and the sandbox returns only after that.
    let left = kill_marked(&[format!("{marker}-daemon")]);
    assert!(left.is_empty(), "daemon {left:?} outlived the sandbox");
}

/// Runs the sandbox for [`killing_the_caller_kills_everything_inside`] and is
/// killed there; a no-op in a normal test run.
#[test]
fn caller_helper_entry() {
    let Some(arg) = std::env::var_os("AQ_SANDBOX_TEARDOWN_CALLER") else {
        return;
    };
    let arg = arg.into_string().unwrap();
    let (ws, marker) = arg.split_once('\t').unwrap();
    let mut spec = SandboxSpec::strict(ws);
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.writable = vec!["/dev/null".into()];
    let probe = format!("daemon:{marker}:stay");
    let got = if std::env::var_os("AQ_SANDBOX_TEARDOWN_GUARDED").is_some() {
        let allow_all = |_: &aq_sandbox::ExecEvent| aq_sandbox::ExecVerdict::Allow;
        run_probe_guarded(&spec, &probe, std::sync::Arc::new(allow_all))
    } else {
        run_probe(&spec, &probe)
    };
    // Reached only when skipped, or if the command ended on its own.
    eprintln!("helper: the sandbox returned {got:?}");
    std::process::exit(3);
}

#[test]
fn killing_the_caller_kills_everything_inside() {
    kill_the_caller_and_check(/*guarded*/ false);
}

/// Start a caller (this binary) whose sandbox runs a daemon, SIGKILL the
/// caller, and check nothing it started is left. `guarded`: with the exec
/// guard (the caller's tracer thread dies with it).
pub fn kill_the_caller_and_check(guarded: bool) {
    let s = Scratch::new();
    let marker = unique_marker("caller");
    let names = [format!("{marker}-daemon"), format!("{marker}-command")];
    let log = s.root.join("helper.log");
    let mut helper = Command::new(std::env::current_exe().unwrap());
    if guarded {
        helper.env("AQ_SANDBOX_TEARDOWN_GUARDED", "1");
    }
    let mut helper = helper
        .arg("suite::teardown::caller_helper_entry")
        .args(ONE_TEST)
        .env(
            "AQ_SANDBOX_TEARDOWN_CALLER",
            format!("{}\t{marker}", s.ws.display()),
        )
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while names.iter().any(|n| marked_processes(n).is_empty()) {
        if let Some(status) = helper.try_wait().unwrap() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            kill_marked(&names);
            // The helper asked `skip` already, which panics under REQUIRE_FULL.
            if status.code() == Some(3) && log.contains("SKIP: ") {
                eprintln!("{log}");
                return;
            }
            panic!("the helper ended ({status}) before its sandbox ran:\n{log}");
        }
        if Instant::now() > deadline {
            helper.kill().unwrap();
            helper.wait().unwrap();
            let left = kill_marked(&names);
            panic!("the daemon and the command did not both start in 30 s (found {left:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    helper.kill().unwrap();
    helper.wait().unwrap();
    let left = wait_until_gone(&names, Duration::from_secs(10));
    kill_marked(&names);
    assert!(
        left.is_empty(),
        "{left:?} still running 10 s after the caller got SIGKILL"
    );
}

/// The process limit of the fork-bomb tests, and how far the bomb goes when
/// nothing stops it.
const CAP: u64 = 32;
pub const STOP_AT: u64 = 4 * CAP;

fn processes(limit: u64) -> Rlimit {
    Rlimit {
        resource: RlimitResource::Processes,
        limit,
    }
}

/// Run a fork bomb that stops at [`STOP_AT`]; returns its outcome and how many forks succeeded, after
/// checking that none of its processes is left on the host.
pub fn fork_bomb(
    s: &Scratch,
    spec: &SandboxSpec,
    adjust: impl FnOnce(&mut HostFacts),
    edit: impl FnOnce(&mut SandboxPlan),
) -> Option<(Outcome, u64)> {
    let marker = unique_marker("bomb");
    let report = s.ws.join("forks");
    let probe = format!("fork-bomb:{marker}:{STOP_AT}:{}", report.display());
    let started = Instant::now();
    let got = run_probe_with(spec, &probe, adjust, edit)?;
    let elapsed = started.elapsed();
    let left = kill_marked(&[marker]);
    assert!(left.is_empty(), "{left:?} outlived the sandbox");
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
    let forks = std::fs::read_to_string(&report).unwrap().parse().unwrap();
    Some((got, forks))
}

fn per_namespace_pid_max(facts: &HostFacts) -> bool {
    facts
        .kernel_version
        .is_some_and(|v| v >= PID_MAX_PER_NAMESPACE_SINCE)
}

#[test]
fn fork_bomb_meets_the_process_cap_and_leaves_nothing_behind() {
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.rlimits = vec![processes(CAP)];
    let facts = HostFacts::probe(&spec);
    if facts.uid == 0 && !per_namespace_pid_max(&facts) {
        // Nothing caps root here: the plan must say so.
        assert_eq!(
            plan(&spec, &facts).unwrap().processes,
            ProcessLimit::NotEnforcedForRoot(CAP)
        );
        skip(&format!(
            "uid 0 on kernel {:?}: no per-PID-namespace pid_max, the process limit does not bind",
            facts.kernel_version
        ));
        return;
    }
    let Some((got, forks)) = fork_bomb(&s, &spec, |_| {}, |_| {}) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EAGAIN), "after {forks} forks");
    // The command's own two threads (main and libtest's) hold PIDs too.
    assert!(forks <= CAP - 2, "{forks} forks under a cap of {CAP}");
}

/// The control: the same plan minus the PID namespace cap. `RLIMIT_NPROC`
/// alone stops an unprivileged caller's bomb and not root's, which is why the
/// plan adds the cap.
#[test]
fn rlimit_nproc_alone_stops_only_an_unprivileged_bomb() {
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.rlimits = vec![processes(CAP)];
    let uid = HostFacts::probe(&spec).uid;
    // The cap is left out below, so a kernel that could not apply it is fine.
    let newer_kernel = |f: &mut HostFacts| f.kernel_version = Some(PID_MAX_PER_NAMESPACE_SINCE);
    let without_cap =
        |p: &mut SandboxPlan| p.steps.retain(|s| !matches!(s, Step::CapPidNamespace(_)));
    let Some((got, forks)) = fork_bomb(&s, &spec, newer_kernel, without_cap) else {
        return;
    };
    if uid == 0 {
        assert_eq!(got, Outcome::DoneWithData, "root's bomb was stopped");
        assert_eq!(forks, STOP_AT);
    } else {
        assert_eq!(got, Outcome::Errno(libc::EAGAIN), "after {forks} forks");
        assert!(forks < CAP, "{forks} forks under RLIMIT_NPROC {CAP}");
    }
}
