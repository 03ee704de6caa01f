//! The exec guard, for real: a judge that records every exec and denies any
//! whose argv holds "FORBIDDEN" (not the command's own exec), and commands
//! that try to run such an argv every way we know: from a shell, through a
//! renamed copy, from a non-leader thread, and racing (a thread or a vfork
//! sibling rewrites the argv buffer while the exec is checked). What ran is
//! told by files the executed program writes, never by exit codes alone.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aq_sandbox::{
    ExecCheck, ExecEvent, ExecGuardMode, ExecJudge, ExecVerdict, HostFacts, SandboxError,
    SandboxSpec, Step, apply, apply_guarded, plan, run_sandboxed_guarded,
};

use super::probe::DONE;
use super::teardown::kill_the_caller_and_check;
use super::util::{Outcome, Scratch, missing_feature, run_probe_guarded, run_probe_without, skip};

const WORD: &str = "FORBIDDEN";

/// One judged exec and when the judge ran.
#[derive(Clone, Debug)]
struct Seen {
    event: ExecEvent,
    denied: bool,
    started: Instant,
    ended: Instant,
}

/// Records every event; denies argv containing [`WORD`] (the command's own
/// exec too when `deny_initial`); sleeps `slow` for an argv element "SLOW".
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Seen>>,
    deny_initial: bool,
    slow: Duration,
    /// Denied calls the guard reported: name and errno.
    refused: Mutex<Vec<(String, i32)>>,
}

impl ExecJudge for Recorder {
    fn judge(&self, event: &ExecEvent) -> ExecVerdict {
        let started = Instant::now();
        let has = |w: &str| event.argv.iter().any(|a| a.to_string_lossy().contains(w));
        if event.argv.iter().any(|a| a == "SLOW") {
            std::thread::sleep(self.slow);
        }
        let denied = has(WORD) && (self.deny_initial || !event.initial);
        self.seen.lock().unwrap().push(Seen {
            event: event.clone(),
            denied,
            started,
            ended: Instant::now(),
        });
        if denied {
            ExecVerdict::Deny {
                message: format!("aq: blocked by the test judge: {WORD} in argv"),
            }
        } else {
            ExecVerdict::Allow
        }
    }

    fn syscall_refused(&self, _pid: u32, syscall: &'static str, errno: i32) {
        self.refused
            .lock()
            .unwrap()
            .push((syscall.to_string(), errno));
    }
}

impl Recorder {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Events whose argv has an element equal to `arg`.
    fn with_arg(&self, arg: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.event.argv.iter().any(|a| a == arg))
            .collect()
    }
}

fn guarded_spec(s: &Scratch) -> SandboxSpec {
    let mut spec = s.spec();
    spec.exec_guard = ExecGuardMode::Required;
    spec.writable = vec!["/dev/null".into()];
    spec
}

/// Run `sh -c 'cd <workspace> && <script>'` guarded. `None`: skipped.
fn sh(s: &Scratch, judge: Arc<Recorder>, script: &str) -> Option<ExitStatus> {
    let script = format!("cd '{}' || exit 99; {script}", s.ws.display());
    let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), script.clone().into()];
    let spec = guarded_spec(s);
    match run_sandboxed_guarded(&spec, &argv, judge) {
        Ok(status) => Some(status),
        Err(e) if missing_feature(&e) => {
            skip(&e.to_string());
            None
        }
        Err(e) => panic!("sh -c {script:?} could not run: {e}"),
    }
}

/// [`sh`] in the same sandbox without the exec guard: the controls.
fn unguarded_sh(s: &Scratch, script: &str) -> ExitStatus {
    let script = format!("cd '{}' || exit 99; {script}", s.ws.display());
    let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), script.into()];
    let mut spec = s.spec();
    spec.writable = vec!["/dev/null".into()];
    aq_sandbox::run_sandboxed(&spec, &argv).expect("the control sandbox runs")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{}: {e}>", path.display()))
}

#[test]
fn shell_exec_of_a_denied_argv_fails_and_the_shell_goes_on() {
    let s = Scratch::new();
    let judge = Arc::new(Recorder::default());
    let script =
        format!("exec 2>err; /bin/echo {WORD} > out; echo $? > status; /bin/echo fine > ok");
    let Some(status) = sh(&s, judge.clone(), &script) else {
        return;
    };
    assert!(status.success(), "{status}");
    assert_eq!(read(&s.ws.join("out")), "", "the denied echo printed");
    // The shell saw the exec fail (126: found but could not be executed).
    assert_eq!(read(&s.ws.join("status")).trim(), "126");
    assert_eq!(read(&s.ws.join("ok")), "fine\n");
    let err = read(&s.ws.join("err"));
    assert!(
        err.contains("aq: blocked by the test judge"),
        "stderr: {err}"
    );
    assert!(err.contains("Permission denied"), "stderr: {err}");
    let denied = judge.with_arg(WORD);
    assert_eq!(denied.len(), 1, "{denied:#?}");
    let e = &denied[0].event;
    assert!(denied[0].denied);
    assert_eq!(e.check, ExecCheck::BeforeExec);
    assert_eq!(e.argv, ["/bin/echo", WORD]);
    assert_eq!(e.executable, Path::new("/bin/echo").canonicalize().unwrap());
    assert_eq!(e.cwd, s.ws);
    assert!(!e.initial);
    // The shell itself was the command's own exec.
    let first = &judge.seen()[0].event;
    assert!(first.initial && first.argv[0] == "/bin/sh", "{first:?}");
    assert_eq!(e.ppid, first.pid, "echo's parent is the shell");
}

#[test]
fn renamed_copy_is_judged_by_its_path_and_argv() {
    let s = Scratch::new();
    std::fs::copy("/bin/echo", s.ws.join("e")).unwrap();
    let judge = Arc::new(Recorder::default());
    let script = format!("./e {WORD} > out 2>err; echo $? > status");
    let Some(status) = sh(&s, judge.clone(), &script) else {
        return;
    };
    assert!(status.success(), "{status}");
    assert_eq!(read(&s.ws.join("out")), "");
    assert_eq!(read(&s.ws.join("status")).trim(), "126");
    let denied = judge.with_arg(WORD);
    assert_eq!(denied.len(), 1, "{denied:#?}");
    let e = &denied[0].event;
    assert_eq!(e.executable, s.ws.join("e"));
    let meta = std::fs::metadata(s.ws.join("e")).unwrap();
    assert_eq!(e.dev_ino, (meta.dev(), meta.ino()));
    assert_eq!(e.argv, ["./e", WORD]);
}

#[test]
fn scripts_are_judged_as_their_interpreter_with_the_script_path() {
    let s = Scratch::new();
    let script = s.ws.join("x.sh");
    std::fs::write(&script, "#!/bin/sh -e\necho ran > \"$1\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let judge = Arc::new(Recorder::default());
    let Some(status) = sh(&s, judge.clone(), "./x.sh out") else {
        return;
    };
    assert!(status.success(), "{status}");
    assert_eq!(read(&s.ws.join("out")), "ran\n");
    let seen = judge.with_arg("./x.sh");
    assert_eq!(seen.len(), 1, "judged once (no second check): {seen:#?}");
    let e = &seen[0].event;
    assert_eq!(e.argv, ["/bin/sh", "-e", "./x.sh", "out"]);
    assert_eq!(e.executable, Path::new("/bin/sh").canonicalize().unwrap());
}

#[test]
fn allowed_commands_run_and_each_exec_is_judged_once() {
    let s = Scratch::new();
    let judge = Arc::new(Recorder::default());
    let Some(status) = sh(
        &s,
        judge.clone(),
        "/bin/echo hi > a; /bin/true; env true; exit 3",
    ) else {
        return;
    };
    assert_eq!(status.code(), Some(3));
    assert_eq!(read(&s.ws.join("a")), "hi\n");
    let seen = judge.seen();
    let argvs: Vec<Vec<String>> = seen
        .iter()
        .map(|s| {
            s.event
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into())
                .collect()
        })
        .collect();
    assert_eq!(argvs[0][0], "/bin/sh");
    assert_eq!(
        argvs[1..],
        [
            vec!["/bin/echo", "hi"],
            vec!["/bin/true"],
            vec!["env", "true"],
            vec!["true"],
        ],
        "{seen:#?}"
    );
    assert!(seen.iter().all(|s| s.event.check == ExecCheck::BeforeExec));
}

#[test]
fn the_command_itself_can_be_denied() {
    let s = Scratch::new();
    let judge = Arc::new(Recorder {
        deny_initial: true,
        ..Recorder::default()
    });
    let argv: Vec<OsString> = vec!["/bin/echo".into(), WORD.into()];
    let spec = guarded_spec(&s);
    match run_sandboxed_guarded(&spec, &argv, judge.clone()) {
        Err(e @ SandboxError::ExecBlocked { .. }) => {
            assert_eq!(e.exit_code(), 126);
            assert!(e.to_string().contains("blocked by the test judge"), "{e}");
        }
        Err(e) if missing_feature(&e) => skip(&e.to_string()),
        other => panic!("expected ExecBlocked, got {other:?}"),
    }
}

#[test]
fn a_guarded_plan_needs_a_judge_and_a_judge_needs_a_guarded_plan() {
    let s = Scratch::new();
    let spec = guarded_spec(&s);
    let argv: Vec<OsString> = vec!["/bin/true".into()];
    let Ok(p) = plan(&spec, &HostFacts::probe(&spec)) else {
        skip("no plan on this host");
        return;
    };
    let err = apply(&p, &spec.env, &argv).unwrap_err();
    assert!(matches!(err, SandboxError::ExecGuardMisuse(_)), "{err}");
    // Neither guard: a judge has nothing to judge.
    let mut bare = s.spec();
    bare.socket_guard = aq_sandbox::SocketGuardMode::Off;
    let unguarded = plan(&bare, &HostFacts::probe(&bare)).unwrap();
    let judge = Arc::new(Recorder::default());
    let err = apply_guarded(&unguarded, &spec.env, &argv, judge.clone()).unwrap_err();
    assert!(matches!(err, SandboxError::ExecGuardMisuse(_)), "{err}");
    // The socket guard alone takes a judge (it hears of refused connects)
    // and runs without one.
    let sockets_only = plan(&s.spec(), &HostFacts::probe(&s.spec())).unwrap();
    assert!(apply_guarded(&sockets_only, &spec.env, &argv, judge).is_ok());
    assert!(apply(&sockets_only, &spec.env, &argv).is_ok());
}

/// `thread-exec:<argv1>:<marker>`: a second thread execs
/// `sh -c 'echo "$1" > "$2"; exit 250' sh <argv1> <marker>`; the first only waits.
pub fn thread_exec_probe(arg: &str) -> io::Result<i32> {
    let (word, marker) = arg.split_once(':').unwrap_or((arg, ""));
    let argv: Vec<CString> = [
        "/bin/sh",
        "-c",
        "echo \"$1\" > \"$2\"; exit 250",
        "sh",
        word,
        marker,
    ]
    .iter()
    .map(|a| CString::new(*a).unwrap())
    .collect();
    let t = std::thread::spawn(move || {
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let env = [c"PATH=/usr/bin:/bin".as_ptr(), std::ptr::null()];
        // SAFETY: null-terminated arrays of valid strings.
        unsafe { libc::execve(ptrs[0], ptrs.as_ptr(), env.as_ptr()) };
        io::Error::last_os_error()
    });
    Err(t.join().unwrap())
}

/// `spawn-kill:<n>`: `n` times, start `/bin/sleep 5` as `Command::spawn`
/// does (it returns once the exec is under way) and `SIGKILL` it at once,
/// which lands around the exec guard's stop at the exec. Each child must be
/// reaped within 5 s: ETIMEDOUT if one never is.
pub fn spawn_kill_probe(arg: &str) -> io::Result<i32> {
    let n: u32 = arg.parse().map_err(io::Error::other)?;
    for _ in 0..n {
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("5")
            .stdin(std::process::Stdio::null())
            .spawn()?;
        child.kill()?;
        let started = std::time::Instant::now();
        while child.try_wait()?.is_none() {
            if started.elapsed() > std::time::Duration::from_secs(5) {
                return Err(io::Error::from_raw_os_error(libc::ETIMEDOUT));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    Ok(DONE)
}

#[test]
fn a_child_killed_around_its_exec_is_reaped_for_its_parent() {
    // A SIGKILL between the guard's exec stop and its detach left the child
    // a zombie only the guard's thread could reap: its parent waited forever.
    let s = Scratch::new();
    let judge = Arc::new(Recorder::default());
    let spec = guarded_spec(&s);
    let Some(got) = run_probe_guarded(&spec, "spawn-kill:300", judge.clone()) else {
        return;
    };
    assert_eq!(got, Outcome::Done, "a killed child was never reaped");
    let sleeps = judge.with_arg("5").len();
    assert!(sleeps > 0, "no exec of sleep was judged");
}

#[test]
fn exec_from_a_second_thread_is_judged_with_the_process_id() {
    let s = Scratch::new();
    let judge = Arc::new(Recorder::default());
    let spec = guarded_spec(&s);
    let ok = s.ws.join("thread-ok");
    let Some(got) = run_probe_guarded(
        &spec,
        &format!("thread-exec:fine:{}", ok.display()),
        judge.clone(),
    ) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    assert_eq!(read(&ok), "fine\n");
    // Judged once: the commit check matched the thread's first check by the
    // thread's former id, though the process id is what it reports.
    let seen = judge.with_arg("fine");
    assert_eq!(seen.len(), 1, "{seen:#?}");
    let probe = &judge.seen()[0].event;
    assert!(probe.initial);
    assert_eq!(seen[0].event.pid, probe.pid, "the process, not the thread");

    let bad = s.ws.join("thread-bad");
    let got = run_probe_guarded(
        &spec,
        &format!("thread-exec:{WORD}:{}", bad.display()),
        judge.clone(),
    );
    assert_eq!(got, Some(Outcome::Errno(libc::EACCES)));
    assert!(!bad.exists(), "the denied exec ran");
}

/// The racing buffer: `HARMLESS!` or `FORBIDDEN`, rewritten all the time.
static RACY: [AtomicU8; 16] = [const { AtomicU8::new(0) }; 16];
static STOP_FLIPPING: AtomicBool = AtomicBool::new(false);

fn flip_forever(spin: u32) {
    let words: [&[u8; 9]; 2] = [b"HARMLESS!", b"FORBIDDEN"];
    let mut i = 0usize;
    while !STOP_FLIPPING.load(Ordering::Relaxed) {
        for (slot, b) in RACY.iter().zip(words[i % 2]) {
            slot.store(*b, Ordering::Relaxed);
        }
        i += 1;
        for _ in 0..spin {
            std::hint::spin_loop();
        }
    }
}

extern "C" fn flipper_thread(spin: *mut libc::c_void) -> *mut libc::c_void {
    flip_forever(spin as usize as u32);
    std::ptr::null_mut()
}

/// The shell the racers exec: writes `$2/ran-forbidden` if its `$1` is the
/// word (the pattern does not contain it, so the judge lets the script be).
const RACE_SCRIPT: &str = "case \"$1\" in FORBID[D]EN) : > \"$2/ran-forbidden\";; esac";

/// How each racing attempt ended.
#[derive(Default, Debug)]
struct Tally {
    /// Execs tried.
    attempts: u32,
    /// The first check denied it: `execve` failed with EACCES.
    denied: u32,
    /// The commit check caught a different argv and the judge denied it.
    killed: u32,
    /// It ran (with whatever argv the judge allowed).
    ran: u32,
    other: u32,
}

impl Tally {
    fn add_status(&mut self, status: libc::c_int) {
        if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL {
            self.killed += 1;
        } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            self.ran += 1;
        } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 100 + libc::EACCES {
            self.denied += 1;
        } else {
            self.other += 1;
        }
    }

    fn report(&self) -> String {
        format!(
            "attempts={} denied={} killed={} ran={} other={}",
            self.attempts, self.denied, self.killed, self.ran, self.other
        )
    }

    /// The count `name=` in a [`Tally::report`].
    fn field(report: &str, name: &str) -> u32 {
        report
            .split_whitespace()
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in the race report {report:?}"))
    }
}

/// When a race probe stops: after at least `min` attempts once one was
/// killed at commit (the race window was hit), or after `secs` seconds
/// (then the test fails if none was: the race was never run).
struct RaceBudget {
    min: u32,
    started: Instant,
    secs: u64,
}

impl RaceBudget {
    fn go_on(&self, tally: &Tally) -> bool {
        let enough = tally.attempts >= self.min && tally.killed > 0;
        !enough && self.started.elapsed() < Duration::from_secs(self.secs)
    }
}

fn race_argv(dir: &str) -> (Vec<CString>, Vec<*const libc::c_char>) {
    let strings: Vec<CString> = ["/bin/sh", "-c", RACE_SCRIPT, "sh", dir]
        .iter()
        .map(|a| CString::new(*a).unwrap())
        .collect();
    let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|a| a.as_ptr()).collect();
    // argv[4] is the racing buffer, argv[5] the directory.
    ptrs.insert(4, RACY.as_ptr().cast());
    ptrs.push(std::ptr::null());
    (strings, ptrs)
}

/// `<min>:<secs>:<spin>:<dir>:<report>`.
fn parse_race(arg: &str) -> (RaceBudget, u32, String, String) {
    let mut p = arg.splitn(5, ':');
    let mut number = || p.next().unwrap_or("0").parse().unwrap_or(0);
    let budget = RaceBudget {
        min: number() as u32,
        secs: number(),
        started: Instant::now(),
    };
    let spin = number() as u32;
    let dir = p.next().unwrap_or("").to_string();
    let report = p.next().unwrap_or("").to_string();
    (budget, spin, dir, report)
}

/// `race-spawn:<min>:<secs>:<spin>:<dir>:<report>`: a thread flips the
/// buffer while the main thread `posix_spawn`s (glibc: a `CLONE_VM |
/// CLONE_VFORK` child, sharing this memory) the race script with it as `$1`,
/// until [`RaceBudget`] says stop.
pub fn race_spawn_probe(arg: &str) -> io::Result<i32> {
    let (budget, spin, dir, report) = parse_race(arg);
    let (_strings, argv) = race_argv(&dir);
    let env = [c"PATH=/usr/bin:/bin".as_ptr(), std::ptr::null()];
    let flipper = std::thread::spawn(move || flip_forever(spin));
    let mut tally = Tally::default();
    while budget.go_on(&tally) {
        tally.attempts += 1;
        let mut pid = 0;
        // SAFETY: argv and env are null-terminated arrays of strings alive here.
        let r = unsafe {
            libc::posix_spawn(
                &mut pid,
                argv[0],
                std::ptr::null(),
                std::ptr::null(),
                argv.as_ptr() as *const *mut libc::c_char,
                env.as_ptr() as *const *mut libc::c_char,
            )
        };
        if r == libc::EACCES {
            tally.denied += 1;
            continue;
        }
        if r != 0 {
            tally.other += 1;
            continue;
        }
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        tally.add_status(status);
    }
    STOP_FLIPPING.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    std::fs::write(report, tally.report())?;
    Ok(DONE)
}

/// `race-thread:<min>:<secs>:<spin>:<dir>:<report>`: until [`RaceBudget`]
/// says stop, fork a child in which one thread flips the buffer and, once it
/// has, another execs the race script with it (the exec replaces the whole
/// multithreaded process).
pub fn race_thread_probe(arg: &str) -> io::Result<i32> {
    let (budget, spin, dir, report) = parse_race(arg);
    let (_strings, argv) = race_argv(&dir);
    let env = [c"PATH=/usr/bin:/bin".as_ptr(), std::ptr::null()];
    struct Exec {
        argv: *const *const libc::c_char,
        env: *const *const libc::c_char,
    }
    extern "C" fn exec_thread(arg: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: arg points to an Exec alive in the child until it execs or exits.
        unsafe {
            let e = &*(arg as *const Exec);
            libc::execve(*e.argv, e.argv, e.env);
            libc::_exit(100 + *libc::__errno_location());
        }
    }
    let exec = Exec {
        argv: argv.as_ptr(),
        env: env.as_ptr(),
    };
    let mut tally = Tally::default();
    while budget.go_on(&tally) {
        tally.attempts += 1;
        // SAFETY: the child creates two threads and execs or _exits; it never
        // returns into the test harness.
        let pid = unsafe { libc::fork() };
        if pid == -1 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: see above; `exec` and the buffer are this child's copies.
            unsafe {
                let mut t: libc::pthread_t = 0;
                if libc::pthread_create(
                    &mut t,
                    std::ptr::null(),
                    flipper_thread,
                    spin as usize as *mut libc::c_void,
                ) != 0
                {
                    libc::_exit(98);
                }
                // The buffer is empty (the parent never flips) until the
                // flipper runs: an exec before that would race nothing.
                while RACY[0].load(Ordering::Relaxed) == 0 {
                    std::hint::spin_loop();
                }
                let mut e: libc::pthread_t = 0;
                libc::pthread_create(
                    &mut e,
                    std::ptr::null(),
                    exec_thread,
                    &exec as *const Exec as *mut libc::c_void,
                );
                libc::pthread_join(e, std::ptr::null_mut());
                libc::_exit(99);
            }
        }
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        tally.add_status(status);
    }
    std::fs::write(report, tally.report())?;
    Ok(DONE)
}

/// Racing attempts at least (each a few milliseconds; a few dozen are
/// caught at commit, on a 2-CPU VM).
const RACE_ATTEMPTS: u32 = 500;
/// Then more, until one is caught at commit, for at most this long in all
/// (a loaded machine is slower, and catches fewer).
const RACE_SECS: u64 = 15;

fn race(kind: &str) {
    let s = Scratch::new();
    let judge = Arc::new(Recorder::default());
    let spec = guarded_spec(&s);
    let report = s.ws.join("race-report");
    let probe = format!(
        "{kind}:{RACE_ATTEMPTS}:{RACE_SECS}:200:{}:{}",
        s.ws.display(),
        report.display()
    );
    let started = Instant::now();
    let Some(got) = run_probe_guarded(&spec, &probe, judge.clone()) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    let tally = read(&report);
    let seen = judge.seen();
    let at_commit = seen
        .iter()
        .filter(|s| s.event.check == ExecCheck::AtCommit)
        .count();
    let caught = seen
        .iter()
        .filter(|s| s.event.check == ExecCheck::AtCommit && s.denied)
        .count() as u32;
    eprintln!(
        "{kind}: {tally} in {:.1?}; commit re-judged {at_commit}, \
         of which {caught} were {WORD} the first check had not seen",
        started.elapsed()
    );
    assert!(
        !s.ws.join("ran-forbidden").exists(),
        "a {WORD} argv ran ({tally})"
    );
    assert!(tally.ends_with("other=0"), "{tally}");
    // The race was run: some argv was rewritten to FORBIDDEN after the
    // first check allowed it, which only the commit check can catch.
    assert!(
        caught > 0,
        "the race window was never hit in {RACE_SECS} s ({tally}): the test proved nothing"
    );
    // Each of them was killed before it ran, and nothing else was.
    assert_eq!(Tally::field(&tally, "killed"), caught, "{tally}");
}

#[test]
fn racing_argv_rewrite_from_a_vfork_sibling_never_runs_the_denied_argv() {
    race("race-spawn");
}

#[test]
fn racing_argv_rewrite_from_another_thread_never_runs_the_denied_argv() {
    race("race-thread");
}

#[test]
fn a_slow_judge_pauses_only_that_exec() {
    let s = Scratch::new();
    let judge = Arc::new(Recorder {
        slow: Duration::from_millis(300),
        ..Recorder::default()
    });
    let script =
        "/bin/echo SLOW > slow & i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done; wait";
    let Some(status) = sh(&s, judge.clone(), script) else {
        return;
    };
    assert!(status.success(), "{status}");
    assert_eq!(
        read(&s.ws.join("slow")),
        "SLOW\n",
        "the slow exec ran after its judge"
    );
    let slow = judge.with_arg("SLOW");
    assert_eq!(slow.len(), 1, "{slow:#?}");
    let (from, to) = (slow[0].started, slow[0].ended);
    assert!(to - from >= Duration::from_millis(300));
    let meanwhile = judge
        .with_arg("/bin/true")
        .iter()
        .filter(|t| t.started > from && t.ended < to)
        .count();
    assert!(
        meanwhile >= 10,
        "only {meanwhile} of 20 /bin/true were judged while the slow judge ran"
    );
}

#[test]
fn a_judge_still_deciding_does_not_keep_the_sandbox_alive() {
    let s = Scratch::new();
    let judge = Arc::new(Recorder {
        slow: Duration::from_secs(20),
        ..Recorder::default()
    });
    let started = Instant::now();
    let Some(status) = sh(&s, judge.clone(), "/bin/echo SLOW > slow & exit 4") else {
        return;
    };
    assert_eq!(status.code(), Some(4));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the sandbox waited {:?} for a judge of a process that was gone",
        started.elapsed()
    );
    assert!(!s.ws.join("slow").exists() || read(&s.ws.join("slow")).is_empty());
}

#[test]
fn killing_the_caller_kills_the_guarded_tree() {
    kill_the_caller_and_check(/*guarded*/ true);
}

#[test]
fn another_process_memory_is_not_writable_through_proc() {
    // What keeps the commit check race-free: nothing inside can write a
    // stopped process's new argv through /proc/<pid>/mem (Landlock).
    let s = Scratch::new();
    let got = run_probe_guarded(
        &guarded_spec(&s),
        "open-write:/proc/self/mem",
        Arc::new(Recorder::default()),
    );
    let Some(got) = got else { return };
    assert_eq!(got, Outcome::Errno(libc::EACCES));
    // The control: the same probe without Landlock can.
    let control = run_probe_without(&s.spec(), "open-write:/proc/self/mem", |step| {
        matches!(step, Step::Landlock { .. })
    });
    assert_eq!(control, Some(Outcome::Done), "Landlock is not the reason");
}

#[test]
fn a_program_cannot_read_the_environment_or_files_of_the_process_that_started_it() {
    // The agent's key lives in its environment; a command it runs must not
    // read it through /proc. Every exec but the command's own enters a
    // Landlock domain nested in its parent's, and Landlock refuses a trace
    // (which /proc/<pid>/environ, mem and fd need) of an outer domain.
    let s = Scratch::new();
    let script = "cat /proc/$$/environ > parent-env 2> parent-err; \
                  ls /proc/$$/cwd/ > parent-cwd 2>&1; \
                  cat /proc/self/environ > own-env; \
                  sh -c 'cat /proc/$PPID/environ' > sibling-env 2>&1; \
                  mkdir -p a b && echo x > a/f && mv a/f b/f && echo moved > moved";
    let Some(status) = sh(&s, Arc::new(Recorder::default()), script) else {
        return;
    };
    assert!(status.success(), "{status:?}");
    let ws = |f: &str| read(&s.ws.join(f));
    assert_eq!(ws("parent-env"), "", "the parent's environ was read");
    assert!(
        ws("parent-err").contains("Permission denied"),
        "{}",
        ws("parent-err")
    );
    assert!(
        ws("parent-cwd").contains("Permission denied"),
        "{}",
        ws("parent-cwd")
    );
    // A nested program's own children cannot read it either.
    assert!(
        ws("sibling-env").contains("Permission denied"),
        "{}",
        ws("sibling-env")
    );
    // Its own environment, and renames across directories, still work.
    assert!(ws("own-env").contains("PATH="), "{}", ws("own-env"));
    assert_eq!(ws("moved"), "moved\n");

    // The control: the same script in the same sandbox without the exec
    // guard (so without the nested domains) reads the parent's environ.
    let c = Scratch::new();
    let status = unguarded_sh(&c, script);
    assert!(status.success(), "{status:?}");
    let cws = |f: &str| read(&c.ws.join(f));
    assert!(
        cws("parent-env").contains("PATH="),
        "control: {}",
        cws("parent-err")
    );
    assert!(
        cws("parent-cwd").contains("parent-err"),
        "{}",
        cws("parent-cwd")
    );
}

/// A static x86-64 program of one executable segment of `size` bytes at
/// 0x400000 (no loader): it opens `argv[1]` and exits with `errno` when that
/// fails, 100 when it opens.
#[cfg(target_arch = "x86_64")]
fn tiny_static_program(size: u64) -> Vec<u8> {
    let base: u64 = 0x40_0000;
    let entry = base + 64 + 56;
    let mut elf = Vec::new();
    // Elf64_Ehdr: ELF64, little-endian, ET_EXEC, x86-64.
    elf.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    elf.extend_from_slice(&2u16.to_le_bytes()); // e_type
    elf.extend_from_slice(&62u16.to_le_bytes()); // e_machine
    elf.extend_from_slice(&1u32.to_le_bytes()); // e_version
    elf.extend_from_slice(&entry.to_le_bytes());
    elf.extend_from_slice(&64u64.to_le_bytes()); // e_phoff
    elf.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    elf.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    for v in [64u16, 56, 1, 64, 0, 0] {
        elf.extend_from_slice(&v.to_le_bytes()); // sizes, one header, no sections
    }
    // Elf64_Phdr: PT_LOAD, R+X, the whole file at base.
    elf.extend_from_slice(&1u32.to_le_bytes());
    elf.extend_from_slice(&5u32.to_le_bytes());
    for v in [0, base, base, size, size, 0x1000] {
        elf.extend_from_slice(&v.to_le_bytes());
    }
    elf.extend_from_slice(&[
        0x48, 0x8b, 0x7c, 0x24, 0x10, // mov rdi, [rsp + 16]: argv[1]
        0x31, 0xf6, // xor esi, esi: O_RDONLY
        0xb8, 0x02, 0, 0, 0, // mov eax, 2: open
        0x0f, 0x05, // syscall
        0x48, 0x89, 0xc3, // mov rbx, rax
        0x48, 0xf7, 0xdb, // neg rbx: errno
        0x48, 0x85, 0xc0, // test rax, rax
        0x78, 0x05, // js: failed
        0xbb, 100, 0, 0, 0, // mov ebx, 100
        0x48, 0x89, 0xdf, // mov rdi, rbx
        0xb8, 0xe7, 0, 0, 0, // mov eax, 231: exit_group
        0x0f, 0x05, // syscall
    ]);
    elf.resize(size as usize, 0);
    elf
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_static_program_without_a_loader_is_nested_too() {
    // The nesting code runs at the page a program starts in: for a dynamic
    // program the loader's, for a static one its own (here one whose code
    // fills its page to the end). Either way the program cannot read its
    // parent's environment, and it then runs as it would.
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new();
    for (name, size) in [("small", 0x200), ("full", 0x1000)] {
        let path = s.ws.join(name);
        std::fs::write(&path, tiny_static_program(size)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script = "for p in small full; do \
                    ./$p /proc/$$/environ; echo $? > $p-parent; \
                    ./$p /proc/self/environ; echo $? > $p-own; \
                  done";
    let Some(status) = sh(&s, Arc::new(Recorder::default()), script) else {
        return;
    };
    assert!(status.success(), "{status:?}");
    let ws = |f: &str| read(&s.ws.join(f)).trim().to_string();
    for p in ["small", "full"] {
        assert_eq!(
            ws(&format!("{p}-parent")),
            "13",
            "{p}: EACCES from Landlock"
        );
        assert_eq!(ws(&format!("{p}-own")), "100", "{p}");
    }

    // The control: without the guard the same programs read it.
    let c = Scratch::new();
    for p in ["small", "full"] {
        std::fs::copy(s.ws.join(p), c.ws.join(p)).unwrap();
    }
    let status = unguarded_sh(&c, script);
    assert!(status.success(), "{status:?}");
    for p in ["small", "full"] {
        assert_eq!(
            read(&c.ws.join(format!("{p}-parent"))).trim(),
            "100",
            "control {p}"
        );
    }
}

#[test]
fn a_call_the_sandbox_denies_is_answered_by_the_guard_and_recorded() {
    // Under the exec guard its notifier answers the unconditional denials:
    // the same errno as the filter, and the judge hears of each.
    let s = Scratch::new();
    for (probe, name) in [("sys:keyctl", "keyctl"), ("sys:bpf", "bpf")] {
        let judge = Arc::new(Recorder::default());
        let Some(got) = run_probe_guarded(&guarded_spec(&s), probe, judge.clone()) else {
            return;
        };
        assert_eq!(got, Outcome::Errno(libc::EPERM), "{probe}");
        assert_eq!(
            *judge.refused.lock().unwrap(),
            vec![(name.to_string(), libc::EPERM)],
            "{probe}"
        );
    }
    // Calls a runtime probes on its own (clone3, io_uring) are refused by the
    // filter and not reported: threads still start (glibc falls back to clone).
    let judge = Arc::new(Recorder::default());
    let status = sh(&s, judge.clone(), "sleep 0 & wait; echo done > threads.txt");
    if status.is_none() {
        return;
    }
    assert_eq!(read(&s.ws.join("threads.txt")), "done\n");
    assert!(judge.refused.lock().unwrap().is_empty());
}

/// Allows an exec of the file named `name` only when it holds exactly
/// `good` (read as the judge runs: the path before the exec,
/// `/proc/<pid>/exe` at its commit); allows every other exec.
struct ContentJudge {
    good: Vec<u8>,
    /// (check, denied) of each exec of the racing file.
    seen: Mutex<Vec<(ExecCheck, bool)>>,
    name: &'static str,
    /// Created at the first denial at commit, so the loop can stop.
    caught: std::path::PathBuf,
}

impl ExecJudge for ContentJudge {
    fn judge(&self, event: &ExecEvent) -> ExecVerdict {
        if event.executable.file_name() != Some(std::ffi::OsStr::new(self.name)) {
            return ExecVerdict::Allow;
        }
        let content = match event.check {
            ExecCheck::BeforeExec => std::fs::read(&event.executable),
            ExecCheck::AtCommit => std::fs::read(format!("/proc/{}/exe", event.pid)),
        }
        .unwrap_or_default();
        let denied = content != self.good;
        self.seen.lock().unwrap().push((event.check, denied));
        if denied && event.check == ExecCheck::AtCommit {
            let _ = std::fs::write(&self.caught, "");
        }
        if !denied && event.check == ExecCheck::BeforeExec {
            // A judge that logs and asks after it read the file: the
            // window between its read and the kernel's open, widened.
            std::thread::sleep(Duration::from_millis(2));
        }
        if denied {
            ExecVerdict::Deny {
                message: "aq: blocked by the test judge: not the good content".to_string(),
            }
        } else {
            ExecVerdict::Allow
        }
    }
}

/// A judge may decide from what the file holds; a file rewritten in place
/// (same device and inode) after the first check read it, before the kernel
/// opened it, must not run unjudged. `x` flips between a copy of `true`
/// (allowed) and a copy of `touch` (denied) as fast as a Python loop writes
/// while a shell runs `./x ran-evil` (at least 500 times, and until a flip
/// was caught, 15 s at most): `ran-evil` must never exist, and some flip
/// must have been caught at the commit check (the file's change time
/// differs), else the test proved nothing.
#[test]
fn a_file_rewritten_in_place_after_the_first_check_is_judged_again_at_commit() {
    let s = Scratch::new();
    let (Ok(mut good), Ok(mut evil)) = (
        std::fs::read("/usr/bin/true"),
        std::fs::read("/usr/bin/touch"),
    ) else {
        skip("no /usr/bin/true or /usr/bin/touch to copy");
        return;
    };
    if !Path::new("/usr/bin/python3").exists() {
        skip("no python3 to rewrite the file");
        return;
    }
    // The same size: a write of either is one in-place rewrite, and the
    // padding after the ELF image changes nothing it runs.
    let len = good.len().max(evil.len());
    good.resize(len, 0);
    evil.resize(len, 0);
    std::fs::write(s.ws.join("good"), &good).unwrap();
    std::fs::write(s.ws.join("evil"), &evil).unwrap();
    let judge = Arc::new(ContentJudge {
        good,
        seen: Mutex::new(Vec::new()),
        name: "x",
        caught: s.ws.join("caught"),
    });
    // The writer opens, writes and closes each time: a descriptor held open
    // for writing would make every exec of x fail with ETXTBSY.
    let writer = "import os\n\
                  g, e = open('good', 'rb').read(), open('evil', 'rb').read()\n\
                  while not os.path.exists('stop'):\n\
                  \x20   for data in (e, g):\n\
                  \x20       try:\n\
                  \x20           fd = os.open('x', os.O_WRONLY)\n\
                  \x20           os.pwrite(fd, data, 0)\n\
                  \x20           os.close(fd)\n\
                  \x20       except OSError:\n\
                  \x20           pass\n";
    std::fs::write(s.ws.join("w.py"), writer).unwrap();
    let script = format!(
        "cp good x && chmod +x x || exit 98\n\
         /usr/bin/python3 w.py &\n\
         end=$(( $(date +%s) + {RACE_SECS} )); n=0\n\
         while [ $(date +%s) -lt $end ] && {{ [ $n -lt {RACE_ATTEMPTS} ] || [ ! -e caught ]; }}; do\n\
         \x20 ./x \"$PWD/ran-evil\" 2>/dev/null; n=$((n+1))\n\
         done\n\
         touch stop; wait; echo $n > runs\n"
    );
    let argv: Vec<OsString> = vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("cd '{}' || exit 99; {script}", s.ws.display()).into(),
    ];
    let started = Instant::now();
    let status = match run_sandboxed_guarded(&guarded_spec(&s), &argv, judge.clone()) {
        Ok(st) => st,
        Err(e) if missing_feature(&e) => {
            skip(&e.to_string());
            return;
        }
        Err(e) => panic!("the race could not run: {e}"),
    };
    assert!(status.success(), "{status}");
    let seen = judge.seen.lock().unwrap().clone();
    let caught = seen
        .iter()
        .filter(|(c, d)| *c == ExecCheck::AtCommit && *d)
        .count();
    let allowed_first = seen
        .iter()
        .filter(|(c, d)| *c == ExecCheck::BeforeExec && !*d)
        .count();
    eprintln!(
        "rewrite race: {} runs of ./x in {:.1?}; {allowed_first} allowed by the first check, \
         commit re-judged {}, {caught} of them changed after the first check read them",
        read(&s.ws.join("runs")).trim(),
        started.elapsed(),
        seen.iter()
            .filter(|(c, _)| *c == ExecCheck::AtCommit)
            .count(),
    );
    assert!(
        !s.ws.join("ran-evil").exists(),
        "the rewritten file ran unjudged"
    );
    assert!(
        caught > 0,
        "the rewrite was never caught at commit: the test proved nothing"
    );
}
