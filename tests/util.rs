//! The harness: a scratch directory with its own home, config and state
//! directories and a git workspace, the real `aq` run inside it, and on
//! failure a dump of the command, directory, listing, stdout and stderr.
//!
//! Every `aq` runs detached from the terminal running the tests (in a new
//! session, stdin from `/dev/null`), so `aq run` cannot prompt there, and is
//! killed, with its whole process group, if it outlives [`DEADLINE`].
//! [`Env::on_terminal`] gives a command a terminal of its own instead, through
//! util-linux `script`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any process started by a test may run before it is killed.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A scratch home and workspace; removed when dropped.
pub struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// `home/`, `config/` (XDG_CONFIG_HOME), `state/` (XDG_STATE_HOME) and a
    /// workspace `work/` holding `.git`, so discovery stops there.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("aq-test-")
            .tempdir()
            .expect("create a scratch directory");
        let env = Env { dir };
        for d in ["home", "config", "state", "work/.git"] {
            std::fs::create_dir_all(env.root().join(d)).expect("create scratch dirs");
        }
        env
    }

    /// A scratch directory whose user policy has `session` under
    /// `[session]` and `rules` under `[rules]`. An ask waits 2 s unless
    /// `session` sets `approval_timeout_secs`: no test waits the default 120 s.
    pub fn with_policy(session: &str, rules: &str) -> Self {
        let env = Env::new();
        let timeout = if session.contains("approval_timeout_secs") {
            ""
        } else {
            "approval_timeout_secs = 2\n"
        };
        // These tests answer asks after they are filed: let them wait
        // although no `aq approve` is attached yet.
        let wait = if session.contains("wait_for_approver") {
            ""
        } else {
            "wait_for_approver = true\n"
        };
        env.write(
            &env.user_policy(),
            &format!("version = 1\n\n[session]\n{timeout}{wait}{session}\n\n[rules]\n{rules}\n"),
        );
        env
    }

    /// The scratch directory.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The workspace root, where `aq` runs.
    pub fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// `$XDG_CONFIG_HOME/agent-quarantine`.
    pub fn config_dir(&self) -> PathBuf {
        self.root().join("config/agent-quarantine")
    }

    /// `$XDG_STATE_HOME`.
    pub fn state_home(&self) -> PathBuf {
        self.root().join("state")
    }

    /// Where sessions live: `$XDG_STATE_HOME/agent-quarantine/sessions`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.state_home().join("agent-quarantine/sessions")
    }

    /// The user policy file.
    pub fn user_policy(&self) -> PathBuf {
        self.config_dir().join("policy.toml")
    }

    /// The project policy file.
    pub fn project_policy(&self) -> PathBuf {
        self.work().join("agent-quarantine.toml")
    }

    /// Writes a file, creating its directory.
    pub fn write(&self, path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create parent directory");
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    /// The scratch environment: home, config and state, and no session of
    /// an `aq run` that might be running the tests.
    pub fn configure(&self, cmd: &mut Command) {
        cmd.env("HOME", self.root().join("home"))
            .env("XDG_CONFIG_HOME", self.root().join("config"))
            .env("XDG_STATE_HOME", self.state_home())
            .env_remove("AQ_SESSION_DIR")
            .env_remove("AQ_SESSION_ID")
            .env_remove("RUST_BACKTRACE");
    }

    /// `aq ARGS` in `cwd` with the scratch environment, not yet started.
    pub fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(aq_exe());
        cmd.args(args).current_dir(cwd);
        self.configure(&mut cmd);
        cmd
    }

    /// Runs `aq ARGS` in the workspace root.
    pub fn aq(&self, args: &[&str]) -> Output {
        self.aq_in(&self.work(), args)
    }

    /// Runs `aq ARGS` in `cwd`.
    pub fn aq_in(&self, cwd: &Path, args: &[&str]) -> Output {
        let cmd = self.command(cwd, args);
        self.start(cmd, format!("aq {}", shell_words(args)), cwd, None)
            .finish()
    }

    /// Runs `aq ARGS` in the workspace root with more environment variables.
    pub fn aq_with(&self, vars: &[(&str, &str)], args: &[&str]) -> Output {
        self.aq_with_input(vars, args, None)
    }

    /// [`Env::aq_with`], with `input` on its stdin when given (answers to
    /// an agent that reads them there).
    pub fn aq_with_input(
        &self,
        vars: &[(&str, &str)],
        args: &[&str],
        input: Option<&str>,
    ) -> Output {
        self.aq_with_input_within(vars, args, input, DEADLINE)
    }

    /// [`Env::aq_with_input`], killed past `deadline` (a real agent on a
    /// loaded machine).
    pub fn aq_with_input_within(
        &self,
        vars: &[(&str, &str)],
        args: &[&str],
        input: Option<&str>,
        deadline: Duration,
    ) -> Output {
        let mut cmd = self.command(&self.work(), args);
        cmd.envs(vars.iter().copied());
        let label = vars
            .iter()
            .map(|(k, v)| format!("{k}={} ", shell_words(&[v])))
            .collect::<String>()
            + &format!("aq {}", shell_words(args));
        self.start(cmd, label, &self.work(), input)
            .finish_within(deadline)
    }

    /// Runs `aq ARGS` in the workspace root with `input` on its stdin (an
    /// agent's hook event).
    pub fn aq_input(&self, args: &[&str], input: &str) -> Output {
        let cmd = self.command(&self.work(), args);
        self.start(
            cmd,
            format!("aq {}", shell_words(args)),
            &self.work(),
            Some(input),
        )
        .finish()
    }

    /// Runs a command built with [`Env::command`] (and changed by the
    /// caller) to the end.
    pub fn run_command(&self, cmd: Command, label: &str) -> Output {
        self.start(cmd, label.to_string(), &self.work(), None)
            .finish()
    }

    /// [`Env::run_command`] with a deadline of its own (a real agent on a
    /// loaded machine).
    pub fn run_command_within(&self, cmd: Command, label: &str, deadline: Duration) -> Output {
        self.start(cmd, label.to_string(), &self.work(), None)
            .finish_within(deadline)
    }

    /// Starts `aq ARGS` in the workspace root and returns while it runs.
    pub fn spawn(&self, args: &[&str]) -> Running {
        let cmd = self.command(&self.work(), args);
        self.start(cmd, format!("aq {}", shell_words(args)), &self.work(), None)
    }

    /// Runs the shell command `line` in the workspace root on a terminal of
    /// its own (a pseudo-terminal from util-linux `script`), typing `input`.
    /// Everything it prints, stderr too, is in `stdout`. `None` when there is
    /// no util-linux `script` (the caller skips, saying so).
    pub fn on_terminal(&self, line: &str, input: &str) -> Option<Output> {
        let version = Command::new("script").arg("--version").output().ok()?;
        if !String::from_utf8_lossy(&version.stdout).contains("util-linux") {
            return None;
        }
        let mut cmd = Command::new("script");
        cmd.args(["-q", "-e", "-c", line, "/dev/null"])
            .current_dir(self.work())
            .env("SHELL", "/bin/sh");
        self.configure(&mut cmd);
        let label = format!("script -qec {} /dev/null", shell_words(&[line]));
        Some(self.start(cmd, label, &self.work(), Some(input)).finish())
    }

    /// Every session directory, oldest id first.
    pub fn sessions(&self) -> Vec<Session> {
        let Ok(entries) = std::fs::read_dir(self.sessions_dir()) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        dirs.into_iter().map(|dir| Session { dir }).collect()
    }

    /// The one session this scratch directory holds.
    #[track_caller]
    pub fn only_session(&self) -> Session {
        let mut all = self.sessions();
        assert_eq!(
            all.len(),
            1,
            "expected one session under {}:\n{}",
            self.sessions_dir().display(),
            listing(self.root())
        );
        all.remove(0)
    }

    fn start(&self, mut cmd: Command, label: String, cwd: &Path, input: Option<&str>) -> Running {
        detach_from_terminal(&mut cmd);
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {label}: {e}"));
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            // Small input: the pipe buffer holds it, so this cannot block.
            // A program that ended without reading it closed the pipe: fine.
            match stdin.write_all(text.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    panic!("cannot type into {label}: {e}")
                }
                _ => {}
            }
        }
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        Running {
            child: Some(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
            started: Instant::now(),
            command: label,
            cwd: cwd.to_path_buf(),
            root: self.root().to_path_buf(),
        }
    }
}

/// The `aq` binary under test.
pub fn aq_exe() -> &'static str {
    env!("CARGO_BIN_EXE_aq")
}

/// `aq ARGS` as a shell command line.
pub fn aq_line(args: &[&str]) -> String {
    let mut words = vec![aq_exe()];
    words.extend_from_slice(args);
    shell_words(&words)
}

/// A process started by [`Env::spawn`]; killed with its process group if
/// dropped before [`Running::finish`].
pub struct Running {
    child: Option<Child>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    started: Instant,
    command: String,
    cwd: PathBuf,
    root: PathBuf,
}

impl Running {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// Waits for it to end (killing it after [`DEADLINE`]) and returns what it did.
    pub fn finish(self) -> Output {
        self.finish_within(DEADLINE)
    }

    /// [`Running::finish`] with a deadline of its own, counted from the start
    /// (a soak test on a loaded machine runs for minutes).
    pub fn finish_within(mut self, deadline: Duration) -> Output {
        let mut child = self.child.take().expect("finish once");
        let mut killed = false;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the child") {
                break status;
            }
            if self.started.elapsed() > deadline {
                kill_group(&child);
                killed = true;
                break child.wait().expect("wait for the killed child");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let elapsed = self.started.elapsed();
        let text = |h: Option<JoinHandle<Vec<u8>>>| {
            String::from_utf8_lossy(&h.map(|h| h.join().unwrap_or_default()).unwrap_or_default())
                .into_owned()
        };
        let stdout = text(self.stdout.take());
        let mut stderr = text(self.stderr.take());
        if killed {
            stderr.push_str(&format!(
                "\n[harness: killed after {} s]",
                deadline.as_secs()
            ));
        }
        Output {
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            listing: listing(&self.root),
            code: status.code(),
            elapsed,
            stdout,
            stderr,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            if matches!(child.try_wait(), Ok(None)) {
                kill_group(child);
            }
            let _ = child.wait();
        }
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

mod sys {
    // The C library std already links; no crate needed for two calls.
    unsafe extern "C" {
        pub safe fn setsid() -> i32;
        pub safe fn kill(pid: i32, sig: i32) -> i32;
    }
}

/// Starts the command in a session of its own: no controlling terminal, so
/// `aq run` finds no `/dev/tty` to prompt on, and one process group to kill.
fn detach_from_terminal(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and only calls
    // setsid(2), which is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            if sys::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// SIGKILL to the process group the child leads (see [`detach_from_terminal`]).
fn kill_group(child: &Child) {
    const SIGKILL: i32 = 9;
    if let Ok(pid) = i32::try_from(child.id()) {
        sys::kill(-pid, SIGKILL);
    }
}

/// What one run of `aq` did.
pub struct Output {
    command: String,
    cwd: PathBuf,
    listing: String,
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// How long it ran.
    pub elapsed: Duration,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// Everything about the run, for a failure message.
    pub fn dump(&self) -> String {
        format!(
            "\n--- command: {}\n--- cwd: {}\n--- exit code: {:?} after {:?}\n--- files:\n{}--- stdout:\n{}\n--- stderr:\n{}\n---",
            self.command,
            self.cwd.display(),
            self.code,
            self.elapsed,
            self.listing,
            self.stdout,
            self.stderr
        )
    }

    /// Asserts the exit code.
    #[track_caller]
    pub fn code(&self, want: i32) -> &Self {
        assert_eq!(self.code, Some(want), "unexpected exit code{}", self.dump());
        self
    }

    /// Asserts that stdout contains `want`.
    #[track_caller]
    pub fn stdout_has(&self, want: &str) -> &Self {
        assert!(
            self.stdout.contains(want),
            "stdout lacks {want:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stdout does not contain `unwanted`.
    #[track_caller]
    pub fn stdout_lacks(&self, unwanted: &str) -> &Self {
        assert!(
            !self.stdout.contains(unwanted),
            "stdout has {unwanted:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stderr contains `want`.
    #[track_caller]
    pub fn stderr_has(&self, want: &str) -> &Self {
        assert!(
            self.stderr.contains(want),
            "stderr lacks {want:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stderr does not contain `unwanted`.
    #[track_caller]
    pub fn stderr_lacks(&self, unwanted: &str) -> &Self {
        assert!(
            !self.stderr.contains(unwanted),
            "stderr has {unwanted:?}{}",
            self.dump()
        );
        self
    }

    /// Stdout parsed as one JSON value.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}{}", self.dump()))
    }
}

/// One session's state directory.
pub struct Session {
    /// `$XDG_STATE_HOME/agent-quarantine/sessions/<id>`.
    pub dir: PathBuf,
}

impl Session {
    /// The session id (the directory name).
    pub fn id(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Where its shims are (`shim_dir` in its `session.json`): a directory
    /// shared by the sessions that shim the same programs.
    pub fn shim_dir(&self) -> PathBuf {
        let file = std::fs::read(self.dir.join("session.json")).unwrap();
        let file: Value = serde_json::from_slice(&file).unwrap();
        PathBuf::from(file["shim_dir"].as_str().unwrap())
    }

    /// `log.jsonl`.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("log.jsonl")
    }

    /// The log as text.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log_path())
            .unwrap_or_else(|e| panic!("read {}: {e}", self.log_path().display()))
    }

    /// Every event of the log, in order.
    #[track_caller]
    pub fn events(&self) -> Vec<Value> {
        self.log_text()
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("log line is not JSON: {e}\n{l}"))
            })
            .collect()
    }

    /// The events of one kind (`command_decision`, `approval`, ...).
    pub fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }

    /// The `approval` events answered for shims (not the top-level command,
    /// which `aq run` records as approved by the user who typed it).
    pub fn shim_approvals(&self) -> Vec<Value> {
        self.events_of("approval")
            .into_iter()
            .filter(|e| e["request"] != "command")
            .collect()
    }

    /// The `command_decision` events whose program is `program`.
    pub fn decisions_for(&self, program: &str) -> Vec<Value> {
        self.events_of("command_decision")
            .into_iter()
            .filter(|e| e["argv"][0] == program)
            .collect()
    }

    /// The approval requests waiting now.
    pub fn pending(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("approvals/pending")) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect()
    }
}

fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every file and directory under `root`, one per line, relative.
pub fn listing(root: &Path) -> String {
    fn walk(root: &Path, dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            if p.is_dir() && p.file_name().is_some_and(|n| n == "shims") {
                let n = std::fs::read_dir(&p).map(|e| e.count()).unwrap_or(0);
                out.push_str(&format!("  {rel}/ ({n} links)\n"));
            } else if p.is_dir() && !p.is_symlink() {
                out.push_str(&format!("  {rel}/\n"));
                walk(root, &p, out);
            } else {
                out.push_str(&format!("  {rel}\n"));
            }
        }
    }
    let mut out = String::new();
    walk(root, root, &mut out);
    out
}

/// The unprivileged user `.ci/setup` creates (`aqtest`): uid and gid.
pub fn aqtest_ids() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let line = passwd.lines().find(|l| l.starts_with("aqtest:"))?;
    let f: Vec<&str> = line.split(':').collect();
    Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
}

/// A TCP server on 127.0.0.1 that echoes what each connection sends; its port.
pub fn echo_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut reader = conn.try_clone().unwrap();
                let _ = std::io::copy(&mut reader, &mut conn);
            });
        }
    });
    port
}

/// `aq ARGS` as the unprivileged user of [`user_scratch`] `root`, in
/// `root/CWD`, with only `PATH`, and `HOME`, `XDG_STATE_HOME` and
/// `XDG_CONFIG_HOME` in `root` (`home`, `state`, `config`).
pub fn aq_as_user(
    root: &Path,
    aq: &Path,
    ids: (u32, u32),
    cwd: &str,
    args: &[&str],
) -> std::process::Output {
    aq_as_user_with(root, aq, ids, cwd, args, &[])
}

/// `aq run -q --profile PROFILE -- sh SCRIPT` in `root/work` as the user
/// `ids`: its stdout and stderr, as text.
pub fn script_as_user(
    root: &Path,
    aq: &Path,
    ids: (u32, u32),
    profile: &str,
    script: &str,
) -> (String, String) {
    let out = aq_as_user(
        root,
        aq,
        ids,
        "work",
        &["run", "-q", "--profile", profile, "--", "sh", script],
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`aq_as_user`] with more environment variables.
pub fn aq_as_user_with(
    root: &Path,
    aq: &Path,
    (uid, gid): (u32, u32),
    cwd: &str,
    args: &[&str],
    vars: &[(&str, &std::ffi::OsStr)],
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let run = || {
        Command::new(aq)
            .args(args)
            .current_dir(root.join(cwd))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", root.join("home"))
            .env("XDG_STATE_HOME", root.join("state"))
            .env("XDG_CONFIG_HOME", root.join("config"))
            .envs(vars.iter().copied())
            .uid(uid)
            .gid(gid)
            .output()
    };
    // The copy of aq was just written: a process another test forks
    // meanwhile may still hold it open for writing (ETXTBSY) for a moment.
    for _ in 0..20 {
        match run() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            other => return other.unwrap(),
        }
    }
    run().unwrap()
}

/// A directory for a run as the unprivileged user (`aqtest` when CI made
/// it, else `nobody`): a copy of aq it can run (the build tree may be under
/// /root) and `dirs` made and owned by the user. Returns the directory, the
/// copy of aq, and the user's uid and gid.
pub fn user_scratch(prefix: &str, dirs: &[&str]) -> (tempfile::TempDir, PathBuf, u32, u32) {
    use std::os::unix::fs::PermissionsExt;
    let (uid, gid) = aqtest_ids().unwrap_or((65534, 65534));
    let root = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    let r = root.path();
    std::fs::set_permissions(r, std::fs::Permissions::from_mode(0o755)).unwrap();
    let aq = r.join("aq");
    std::fs::copy(aq_exe(), &aq).unwrap();
    std::fs::set_permissions(&aq, std::fs::Permissions::from_mode(0o755)).unwrap();
    for d in dirs {
        std::fs::create_dir_all(r.join(d)).unwrap();
        // The directory and each one made on the way to it.
        for part in Path::new(d)
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
        {
            std::os::unix::fs::chown(r.join(part), Some(uid), Some(gid)).unwrap();
        }
    }
    (root, aq, uid, gid)
}

/// A tmux session running a command, killed when dropped.
pub struct Tmux {
    name: String,
}

impl Tmux {
    pub fn start(name: &str, cwd: &Path, line: &str) -> Option<Tmux> {
        let ok = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "160",
                "-y",
                "45",
                "-c",
            ])
            .arg(cwd)
            .arg(line)
            .status()
            .ok()?
            .success();
        ok.then(|| Tmux {
            name: name.to_string(),
        })
    }

    pub fn screen(&self) -> String {
        Command::new("tmux")
            .args(["capture-pane", "-p", "-S", "-80", "-t", &self.name])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// Waits until the screen shows `text`; the screen on failure.
    #[track_caller]
    pub fn wait_for(&self, text: &str) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if self.screen().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the screen never showed {text:?}:\n{}", self.screen());
    }

    /// Answers a menu: waits for `question`, moves with `key` until
    /// `selected` shows, and confirms.
    #[track_caller]
    pub fn answer(&self, question: &str, key: &str, selected: &str) {
        self.wait_for(question);
        self.keys(&[key]);
        self.wait_for(selected);
        self.keys(&["Enter"]);
    }

    pub fn keys(&self, keys: &[&str]) {
        // A dialog that just appeared may not read keys yet.
        std::thread::sleep(Duration::from_millis(500));
        for k in keys {
            let _ = Command::new("tmux")
                .args(["send-keys", "-t", &self.name, k])
                .status();
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}
