//! `aq verify`: try every boundary of the sandbox for real, from inside one.
//!
//! The sandbox is the one `aq run` would build (the effective policy and
//! profile, planned by [`aq_session::sandbox_spec::plan`]), around a throwaway
//! workspace and a fake home that this module fills with fake secrets, so
//! the result does not depend on the user's files and nothing real is read.
//!
//! Setup reads as a list: pick the profile (a profile without the kernel
//! sandbox has nothing to verify: exit 1), lay out the fixture, open the
//! listeners the network probes aim at (TCP, UDP and an abstract unix socket
//! on the host, a pseudo-terminal for `TIOCSTI`), plan the sandbox (fail
//! closed: exit 125, as `aq run`), snapshot the files the probes try to
//! change, run `aq __probe all` in the sandbox (see [`crate::probe`]), then
//! judge: each probe's own answer, made worse by what the host sees once the
//! sandbox is gone (a listener that heard something, a changed file, a
//! surviving daemon). A probe that could not run is an ERROR, never a pass.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use aq_policy::Profile;
use aq_session::policy_files::Loaded;
use aq_session::sandbox_spec::PlannedSandbox;
use serde::Serialize;

use crate::cli::VerifyArgs;
use crate::exit::ExitCode;
use crate::probe::{self, Context, Control, ENV_CONTEXT, HostCheck, Outcome, PROBES, Target};

/// One probe's verdict in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    /// Held inside, and the same attempt succeeds without the sandbox.
    Pass,
    /// Crossed the boundary.
    Leak,
    /// Could not run, or its control could not or proves the attempt wrong.
    Error,
    /// Held inside, but the host refuses it too (for this user, on this
    /// kernel): this run cannot show the sandbox's part. Not a pass.
    #[serde(rename = "n/a")]
    NotShown,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Leak => "LEAK",
            Status::Error => "ERROR",
            Status::NotShown => "n/a",
        }
    }
}

#[derive(Debug, Serialize)]
struct Row {
    name: &'static str,
    category: &'static str,
    status: Status,
    tried: &'static str,
    detail: String,
}

#[derive(Debug, Default, PartialEq, Eq, Serialize)]
struct Counts {
    total: usize,
    pass: usize,
    leak: usize,
    error: usize,
    #[serde(rename = "n/a")]
    not_shown: usize,
}

/// Runs every probe in the sandbox `aq run` would build, checks each refusal
/// against a control run without it, and reports. Each line is one step of
/// the sequence the module documentation describes.
pub fn run(args: &VerifyArgs, policy_flag: Option<&Path>) -> Result<ExitCode, String> {
    let started = Instant::now();
    let workspace = aq_session::run::resolve_workspace(args.workspace.as_deref())?;
    let loaded = aq_session::policy_files::load_for(&workspace, policy_flag)?;
    loaded.warn_ignored();
    let profile = aq_session::in_force::profile_named(&loaded.effective, args.profile.as_deref())?;
    if !profile.sandbox {
        print_no_sandbox(&profile.name, args.json);
        return Ok(ExitCode::Findings);
    }

    let fixture = Fixture::create().map_err(|e| format!("cannot lay out the fixture: {e}"))?;
    let listeners = Listeners::open(&fixture)
        .map_err(|e| format!("cannot open the probes' listeners on 127.0.0.1: {e}"))?;
    let ctx = probe_context(&fixture, &listeners);
    let ctx_json = serde_json::to_string(&ctx).map_err(|e| e.to_string())?;
    let env = probe_env(&fixture.home);
    let Some(planned) = plan_sandbox(
        &profile,
        &loaded,
        &fixture,
        &listeners,
        env.clone(),
        &ctx_json,
    ) else {
        return Ok(ExitCode::SandboxFailed);
    };
    let enforced = planned.plan.enforced().to_string();

    let snapshots = take_snapshots(&ctx);
    let Some(status) = run_probes_inside(&planned)? else {
        return Ok(ExitCode::SandboxFailed);
    };
    let results = std::fs::read_to_string(&ctx.results).unwrap_or_default();
    let inside: Vec<Outcome> = PROBES
        .iter()
        .map(|p| {
            let outcome = reported_outcome(&results, p.name, &status.to_string());
            with_host_check(p, outcome, &ctx, &listeners, &snapshots)
        })
        .collect();
    clean_up_leaks(&ctx);

    let controls = run_controls(&inside, &env, &ctx_json, &ctx, &listeners)?;
    let rows = judge(inside, &controls);
    clean_up_leaks(&ctx);

    let counts = Counts::of(&rows);
    let report = Report {
        profile: &profile,
        enforced: &enforced,
        rows: &rows,
        counts: &counts,
        elapsed: started.elapsed(),
    };
    report.print(args.json);
    Ok(if counts.ok() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// The answer for a profile without the kernel sandbox: nothing to verify.
fn print_no_sandbox(profile: &str, json: bool) {
    let why = format!(
        "profile `{profile}` has no kernel sandbox to verify: only the PATH shims stand between a command and your files; `aq verify --profile strict` checks the sandbox"
    );
    if json {
        let out = serde_json::json!({
            "profile": profile,
            "sandbox": false,
            "enforced": null,
            "probes": [],
            "counts": Counts::default(),
            "ok": false,
            "message": why,
        });
        println!("{out}");
    } else {
        println!("aq verify: {why}");
    }
}

/// What the probes inside need to know of the fixture and the listeners,
/// passed to them in [`ENV_CONTEXT`].
fn probe_context(fixture: &Fixture, listeners: &Listeners) -> Context {
    Context {
        workspace: fixture.ws.clone(),
        home: fixture.home.clone(),
        outside: fixture.outside.clone(),
        sessions: fixture.root.join("sessions"),
        results: fixture.tmp.join("results.tsv"),
        token: fixture.token.clone(),
        tcp_port: listeners.tcp.local_addr().map(|a| a.port()).unwrap_or(0),
        udp_port: listeners.udp.local_addr().map(|a| a.port()).unwrap_or(0),
        abstract_name: listeners.abstract_name.clone(),
        unix_socket: listeners.unix_path.clone(),
        unix_datagram: listeners.datagram_path.clone(),
        inherited_fd: listeners.inherited.as_ref().map(|f| {
            use std::os::fd::AsRawFd;
            f.as_raw_fd()
        }),
        pty_fd: listeners.pty.as_ref().map(|p| p.slave),
        host_start_ticks: std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| probe::start_ticks(&s)),
        caller_pid: std::process::id(),
        key_handle: probe::file_handle_hex(&fixture.home.join(".ssh/id_ed25519")).ok(),
    }
}

/// The environment aq run would start from, with the fake home and two
/// fake secret-looking variables the sandbox must leave out. The controls
/// start from the same one.
fn probe_env(home: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k != "HOME" && !probe::ENV_SECRET_NAMES.iter().any(|n| k == n))
        .collect();
    env.push(("HOME".into(), home.to_path_buf().into()));
    for name in probe::ENV_SECRET_NAMES {
        env.push((name.into(), probe::ENV_SECRET_VALUE.into()));
    }
    env
}

/// Plans the sandbox as `aq run` would, around the fixture. `None` when a
/// boundary the profile needs is missing, said on stderr: verify fails
/// closed, as `aq run` does.
fn plan_sandbox(
    profile: &Profile,
    loaded: &Loaded,
    fixture: &Fixture,
    listeners: &Listeners,
    env: Vec<(OsString, OsString)>,
    ctx_json: &str,
) -> Option<PlannedSandbox> {
    let settings = loaded.effective.session_settings();
    let planned = aq_session::sandbox_spec::plan(
        profile,
        aq_session::sandbox_spec::SpecInputs {
            workspace: &fixture.ws,
            home: Some(&fixture.home),
            sensitive: &loaded.effective.policy.sensitive_paths,
            unmasked: &loaded.effective.policy.unmasked_paths,
            env,
            env_pass: &settings.env_pass,
            session_env: vec![(ENV_CONTEXT.into(), ctx_json.to_string().into())],
            path_prefix: None,
            tmpdir: Some(&fixture.tmp),
            loopback_listeners: Vec::new(),
            grants: None,
            program: None,
            named: Vec::new(),
            log_denials: false,
            allowed_sockets: Vec::new(),
            // The pty slave of the TIOCSTI probe, and no other.
            pass_fds: listeners
                .pty
                .as_ref()
                .map(|p| p.slave)
                .into_iter()
                .collect(),
        },
    );
    match planned {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("aq: {e}");
            eprintln!(
                "aq: the `{}` profile needs this boundary, so nothing was verified; `aq doctor --fix` shows how to enable it",
                profile.name
            );
            None
        }
    }
}

/// Runs `aq __probe all` in the planned sandbox and waits for it. `None`
/// when the sandbox could not be set up, said on stderr.
fn run_probes_inside(planned: &PlannedSandbox) -> Result<Option<ExitStatus>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the aq binary: {e}"))?;
    let argv: Vec<OsString> = vec![exe.into(), "__probe".into(), "all".into()];
    // The exec guard is a layer of its own (tested in aq-sandbox and
    // tests/exec_guard.rs); here every probe must run.
    let result = if planned
        .plan
        .steps
        .contains(&aq_sandbox::Step::AttachExecGuard)
    {
        let allow_all = |_: &aq_sandbox::ExecEvent| aq_sandbox::ExecVerdict::Allow;
        aq_sandbox::apply_guarded(
            &planned.plan,
            &planned.env,
            &argv,
            std::sync::Arc::new(allow_all),
        )
    } else {
        aq_sandbox::apply(&planned.plan, &planned.env, &argv)
    };
    match result {
        Ok(s) => Ok(Some(s)),
        Err(e) => {
            // Whatever the cause (a boundary that failed at setup, the aq
            // binary not runnable inside), there is no sandbox to verify.
            eprintln!("aq: {e}");
            eprintln!(
                "aq: nothing was verified; `aq doctor --fix` shows how to enable what is missing"
            );
            Ok(None)
        }
    }
}

/// What the probe `name` reported in the results file (one
/// `name\tcode\tdetail` line per probe: 0 held, 1 leaked, else an error).
/// A probe with no line is an error that names how the sandboxed run
/// ended (`status`), never a pass.
fn reported_outcome(results: &str, name: &str, status: &str) -> Outcome {
    let reported = results.lines().find_map(|l| {
        let mut f = l.splitn(3, '\t');
        (f.next()? == name).then(|| (f.next().unwrap_or("2"), f.next().unwrap_or("")))
    });
    match reported {
        Some(("0", d)) => Outcome::Held(d.to_string()),
        Some(("1", d)) => Outcome::Leak(d.to_string()),
        Some((_, d)) => Outcome::Error(d.to_string()),
        None => Outcome::Error(format!(
            "no result: the sandboxed `aq __probe all` ended with {status}"
        )),
    }
}

/// The positive controls: every probe that held is tried again without
/// the sandbox, and must get through there. By probe name.
fn run_controls(
    inside: &[Outcome],
    env: &[(OsString, OsString)],
    ctx_json: &str,
    ctx: &Context,
    listeners: &Listeners,
) -> Result<Vec<(&'static str, Outcome)>, String> {
    let needs_control: Vec<&'static probe::Probe> = PROBES
        .iter()
        .zip(inside)
        .filter(|(p, o)| p.control != Control::Itself && matches!(o, Outcome::Held(_)))
        .map(|(p, _)| p)
        .collect();
    let snapshots = take_snapshots(ctx);
    let controls = probe::run_controls(&needs_control, env, ctx_json)
        .map_err(|e| format!("cannot run the controls: {e}"))?;
    Ok(needs_control
        .iter()
        .zip(controls)
        .map(|(p, o)| (p.name, with_host_check(p, o, ctx, listeners, &snapshots)))
        .collect())
}

/// One row per probe, in [`PROBES`] order: its outcome inside, judged
/// against its control when it had one.
fn judge(inside: Vec<Outcome>, controls: &[(&str, Outcome)]) -> Vec<Row> {
    PROBES
        .iter()
        .zip(inside)
        .map(|(p, outcome)| {
            let control = controls
                .iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, o)| o.clone());
            let (status, detail) = verdict(outcome, control);
            Row {
                name: p.name,
                category: p.category.as_str(),
                status,
                tried: p.tried,
                detail,
            }
        })
        .collect()
}

impl Counts {
    /// The rows, counted by status.
    fn of(rows: &[Row]) -> Counts {
        let mut counts = Counts {
            total: rows.len(),
            ..Counts::default()
        };
        for r in rows {
            match r.status {
                Status::Pass => counts.pass += 1,
                Status::Leak => counts.leak += 1,
                Status::Error => counts.error += 1,
                Status::NotShown => counts.not_shown += 1,
            }
        }
        counts
    }

    /// Verified: nothing leaked, every probe ran, and at least one showed
    /// the sandbox's part (all n/a proves nothing).
    fn ok(&self) -> bool {
        self.leak == 0 && self.error == 0 && self.pass > 0
    }
}

/// The whole report, as JSON or text.
struct Report<'a> {
    profile: &'a Profile,
    enforced: &'a str,
    rows: &'a [Row],
    counts: &'a Counts,
    elapsed: Duration,
}

impl Report<'_> {
    fn print(&self, json: bool) {
        if json {
            let out = serde_json::json!({
                "profile": self.profile.name,
                "sandbox": true,
                "enforced": self.enforced,
                "network": self.profile.network.as_str(),
                "probes": self.rows,
                "counts": self.counts,
                "ok": self.counts.ok(),
                "duration_ms": self.elapsed.as_millis() as u64,
            });
            println!("{out}");
        } else {
            print!(
                "{}",
                render_text(
                    &self.profile.name,
                    self.enforced,
                    self.rows,
                    self.counts,
                    self.elapsed
                )
            );
        }
    }
}

fn render_text(
    profile: &str,
    enforced: &str,
    rows: &[Row],
    counts: &Counts,
    elapsed: Duration,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "aq verify: profile {profile} · sandbox: {enforced}");
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in rows {
        let _ = writeln!(
            out,
            "{:<5} {:<width$}  {} → {}",
            r.status.label(),
            r.name,
            r.tried,
            r.detail
        );
    }
    let _ = write!(
        out,
        "aq verify: {} probes: {} pass, {} LEAK, {} ERROR, {} n/a · profile {profile} · {:.1} s",
        counts.total,
        counts.pass,
        counts.leak,
        counts.error,
        counts.not_shown,
        elapsed.as_secs_f64()
    );
    if counts.leak > 0 {
        out.push_str(" · a LEAK is a boundary that did not hold");
    }
    if counts.error > 0 {
        out.push_str(" · an ERROR is a probe that could not run, not a pass");
    }
    if counts.not_shown > 0 {
        out.push_str(" · n/a: this host refuses it without the sandbox too, so the run cannot show the sandbox's part");
    }
    out.push('\n');
    out
}

/// The files the probes try to change, as they are now.
fn take_snapshots(ctx: &Context) -> Vec<(Target, Option<Vec<u8>>)> {
    PROBES
        .iter()
        .filter_map(|p| match p.host {
            HostCheck::Untouched(t) => Some((t, std::fs::read(t.path(ctx)).ok())),
            _ => None,
        })
        .collect()
}

/// A probe's own answer, made worse by what the host saw afterwards.
fn with_host_check(
    p: &probe::Probe,
    outcome: Outcome,
    ctx: &Context,
    listeners: &Listeners,
    snapshots: &[(Target, Option<Vec<u8>>)],
) -> Outcome {
    if let Some(seen) = check_on_host(p.host, ctx, listeners, snapshots) {
        return match outcome {
            Outcome::Leak(d) => Outcome::Leak(format!("{d}; {seen}")),
            Outcome::Held(d) | Outcome::Error(d) => Outcome::Leak(format!("{d}; but {seen}")),
        };
    }
    match (p.host, outcome) {
        (HostCheck::UdpSocket, Outcome::Held(d)) => {
            Outcome::Held(format!("{d}; the host's socket received nothing"))
        }
        (HostCheck::DaemonGone, Outcome::Held(d)) => {
            Outcome::Held(format!("{d}; gone once the sandbox ended"))
        }
        (_, o) => o,
    }
}

/// Errnos that say the attempt itself was wrong (a path that is not there,
/// a bad argument), not that something refused it.
const WRONG_ATTEMPT: [&str; 6] = ["ENOENT", "ENOTDIR", "EINVAL", "EFAULT", "EBADF", "EEXIST"];

/// The verdict on a probe from its outcome inside the sandbox and, for one
/// that held, its control's outcome outside: a refusal counts only when the
/// same attempt gets through where the boundary is absent.
fn verdict(inside: Outcome, control: Option<Outcome>) -> (Status, String) {
    let held = match inside {
        Outcome::Leak(d) => return (Status::Leak, d),
        Outcome::Error(d) => return (Status::Error, d),
        Outcome::Held(d) => d,
    };
    match control {
        None => (Status::Pass, held),
        Some(Outcome::Leak(c)) => (Status::Pass, format!("{held} · without the sandbox: {c}")),
        Some(Outcome::Error(c)) => (
            Status::Error,
            format!("{held} · but its control could not run: {c}"),
        ),
        Some(Outcome::Held(c)) if WRONG_ATTEMPT.iter().any(|e| c.contains(&format!("{e} ("))) => (
            Status::Error,
            format!(
                "{held} · but without the sandbox it fails too ({c}): the attempt itself is wrong, so this proves nothing"
            ),
        ),
        Some(Outcome::Held(c)) => (
            Status::NotShown,
            format!(
                "{held} · without the sandbox it is refused too ({c}): this host refuses it anyway"
            ),
        ),
    }
}

/// What the host saw that a probe should have prevented, if anything.
fn check_on_host(
    check: HostCheck,
    ctx: &Context,
    listeners: &Listeners,
    snapshots: &[(Target, Option<Vec<u8>>)],
) -> Option<String> {
    match check {
        HostCheck::None => None,
        HostCheck::TcpListener => listeners
            .tcp
            .accept()
            .ok()
            .map(|_| "the host's TCP listener accepted a connection".to_string()),
        HostCheck::AbstractSocket => listeners
            .unix
            .accept()
            .ok()
            .map(|_| "the host's abstract socket accepted a connection".to_string()),
        HostCheck::UnixSocket => listeners
            .unix_at_path
            .accept()
            .ok()
            .map(|_| "the host's Unix socket accepted a connection".to_string()),
        HostCheck::UnixDatagram => {
            let mut buf = [0u8; 256];
            let mut got = None;
            while let Ok(n) = listeners.datagram.recv(&mut buf) {
                if buf[..n]
                    .windows(ctx.token.len())
                    .any(|w| w == ctx.token.as_bytes())
                {
                    got = Some("the host's datagram socket received the datagram".to_string());
                }
            }
            got
        }
        HostCheck::UdpSocket => {
            let mut buf = [0u8; 256];
            while let Ok((n, _)) = listeners.udp.recv_from(&mut buf) {
                if buf[..n]
                    .windows(ctx.token.len())
                    .any(|w| w == ctx.token.as_bytes())
                {
                    return Some("the host's UDP socket received the datagram".to_string());
                }
            }
            None
        }
        HostCheck::Untouched(target) => {
            let before = snapshots.iter().find(|(t, _)| *t == target)?.1.as_ref();
            let now = std::fs::read(target.path(ctx)).ok();
            (now.as_ref() != before).then(|| {
                format!(
                    "{} changed on the host",
                    display_path(&target.path(ctx), ctx)
                )
            })
        }
        HostCheck::DaemonGone => {
            let token = format!("aq-verify-daemon-{}", ctx.token);
            let deadline = Instant::now() + Duration::from_secs(1);
            loop {
                let left = probe::processes_with(&token);
                if left.is_empty() {
                    return None;
                }
                if Instant::now() > deadline {
                    for pid in &left {
                        // SAFETY: signalling a process by pid (our leaked daemon).
                        unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
                    }
                    let pids: Vec<String> = left.iter().map(u32::to_string).collect();
                    return Some(format!(
                        "the daemon outlived the sandbox (host pid {}, killed now)",
                        pids.join(", ")
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// A path for the report: `~` for the fake home.
fn display_path(p: &Path, ctx: &Context) -> String {
    match p.strip_prefix(&ctx.home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => p.display().to_string(),
    }
}

/// Files a leaking probe may have left outside the fixture.
fn clean_up_leaks(ctx: &Context) {
    for t in [Target::TmpFile, Target::EtcFile] {
        let _ = std::fs::remove_file(t.path(ctx));
    }
}

/// The throwaway tree, under `$XDG_STATE_HOME/agent-quarantine/verify/`:
/// `ws/` (the workspace, with `.git`, `.env`,
/// `server.pem`), `home/` (`.ssh/id_ed25519`, `.aws/credentials`,
/// `.bashrc`), `outside/`, `tmp/` (the sandbox's `TMPDIR`). Removed on drop.
struct Fixture {
    root: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    tmp: PathBuf,
    token: String,
}

impl Fixture {
    fn create() -> std::io::Result<Fixture> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let token = format!("{:x}-{:x}", std::process::id(), nanos & 0xffff_ffff_ffff);
        // Beside the sessions (where `aq run` keeps its TMPDIR), not in /tmp:
        // a profile that makes /tmp writable must not make the fake home so.
        let parent = aq_session::state_root()
            .map(|r| r.join("verify"))
            .unwrap_or_else(|_| std::env::temp_dir());
        std::fs::create_dir_all(&parent)?;
        let base = parent.join(format!("aq-verify-{token}"));
        std::fs::create_dir(&base)?;
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700))?;
        let root = base.canonicalize()?;
        let fixture = Fixture {
            ws: root.join("ws"),
            home: root.join("home"),
            outside: root.join("outside"),
            tmp: root.join("tmp"),
            root,
            token,
        };
        let private = format!("{}\n", probe::PRIVATE_MARKER);
        let root = &fixture.root;
        let other_session = root.join("sessions/20261130T000000Z-0ther000");
        let files: [(PathBuf, String); 13] = [
            (root.join("home/.bash_history"), private.clone()),
            (
                root.join("home/src/other-project/notes.txt"),
                private.clone(),
            ),
            (
                root.join("home/.config/google-chrome/Default/Cookies"),
                private.clone(),
            ),
            (other_session.join("log.jsonl"), private.clone()),
            (
                other_session.join("approvals/pending/1.json"),
                private.clone(),
            ),
            (
                fixture.home.join(".ssh/id_ed25519"),
                format!(
                    "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
                    probe::SSH_KEY_MARKER
                ),
            ),
            (
                fixture.home.join(".aws/credentials"),
                format!(
                    "[default]\naws_access_key_id = AKIAFAKEAQVERIFY\naws_secret_access_key = {}\n",
                    probe::AWS_MARKER
                ),
            ),
            (
                fixture.home.join(".bashrc"),
                "# a fake rc file laid out by aq verify\n".to_string(),
            ),
            (
                fixture.ws.join(".env"),
                format!("{}\n", probe::DOTENV_MARKER),
            ),
            (
                fixture.ws.join("server.pem"),
                format!(
                    "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                    probe::PEM_MARKER
                ),
            ),
            (
                fixture.ws.join(".git/config"),
                "[core]\n\trepositoryformatversion = 0\n\tbare = false\n".to_string(),
            ),
            (
                fixture.ws.join(".git/HEAD"),
                "ref: refs/heads/main\n".to_string(),
            ),
            (
                fixture.ws.join("README.md"),
                "A throwaway workspace made by aq verify.\n".to_string(),
            ),
        ];
        for (path, text) in files {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text)?;
        }
        // A marker in every always-masked home place of the catalog.
        for path in probe::catalog_files(&fixture.home) {
            if path.exists() {
                continue;
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, format!("{}\n", probe::CATALOG_MARKER))?;
        }
        for dir in [
            fixture.ws.join(".git/hooks"),
            fixture.outside.clone(),
            fixture.tmp.clone(),
        ] {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::set_permissions(
            fixture.home.join(".ssh"),
            std::fs::Permissions::from_mode(0o700),
        )?;
        Ok(fixture)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What the network probes aim at, opened on the host before the sandbox.
/// All close-on-exec (std's default) but `inherited` (the probe must find it
/// closed) and the pty slave (passed explicitly).
struct Listeners {
    tcp: std::net::TcpListener,
    udp: std::net::UdpSocket,
    unix: std::os::unix::net::UnixListener,
    abstract_name: String,
    unix_at_path: std::os::unix::net::UnixListener,
    unix_path: PathBuf,
    datagram: std::os::unix::net::UnixDatagram,
    datagram_path: PathBuf,
    inherited: Option<std::os::fd::OwnedFd>,
    pty: Option<Pty>,
}

impl Listeners {
    fn open(fixture: &Fixture) -> std::io::Result<Listeners> {
        use std::os::linux::net::SocketAddrExt;
        let token = &fixture.token;
        // A socket path is at most 107 bytes: beside the fixture when that
        // is short enough, else in a directory of its own under /tmp.
        let dir = if fixture.outside.as_os_str().len() < 80 {
            fixture.outside.clone()
        } else {
            let d = PathBuf::from(format!("/tmp/aq-verify-{}", &token[..token.len().min(12)]));
            std::fs::create_dir_all(&d)?;
            d
        };
        let unix_path = dir.join("host-service.sock");
        let unix_at_path = std::os::unix::net::UnixListener::bind(&unix_path)?;
        unix_at_path.set_nonblocking(true)?;
        let datagram_path = dir.join("host-log.sock");
        let datagram = std::os::unix::net::UnixDatagram::bind(&datagram_path)?;
        datagram.set_nonblocking(true)?;
        let inherited = open_inheritable(&fixture.home.join(".ssh/id_ed25519"));
        let tcp = std::net::TcpListener::bind("127.0.0.1:0")?;
        tcp.set_nonblocking(true)?;
        let udp = std::net::UdpSocket::bind("127.0.0.1:0")?;
        udp.set_nonblocking(true)?;
        let abstract_name = format!("aq-verify-{token}");
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes())?;
        let unix = std::os::unix::net::UnixListener::bind_addr(&addr)?;
        unix.set_nonblocking(true)?;
        Ok(Listeners {
            tcp,
            udp,
            unix,
            abstract_name,
            unix_at_path,
            unix_path,
            datagram,
            datagram_path,
            inherited,
            pty: Pty::open(),
        })
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.unix_path);
        let _ = std::fs::remove_file(&self.datagram_path);
        if let Some(dir) = self.unix_path.parent()
            && dir.starts_with("/tmp/aq-verify-")
        {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// `path` opened without close-on-exec, as a launcher may leave a file.
fn open_inheritable(path: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: opening a file; the fd is ours.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY) };
    // SAFETY: a fresh fd we own.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// A pseudo-terminal whose slave the `TIOCSTI` probe makes its controlling
/// terminal: a terminal of aq verify's own, so an injected byte reaches nothing.
struct Pty {
    master: libc::c_int,
    slave: libc::c_int,
}

impl Pty {
    fn open() -> Option<Pty> {
        // SAFETY: plain libc calls on fds we own; the name buffer is large enough.
        unsafe {
            let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            if master == -1 {
                return None;
            }
            let mut name = [0 as libc::c_char; 128];
            if libc::grantpt(master) == -1
                || libc::unlockpt(master) == -1
                || libc::ptsname_r(master, name.as_mut_ptr(), name.len()) != 0
            {
                libc::close(master);
                return None;
            }
            // Not close-on-exec: the probe inherits it through the sandbox.
            let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            if slave == -1 {
                libc::close(master);
                return None;
            }
            Some(Pty { master, slave })
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // SAFETY: closing fds we own.
        unsafe {
            libc::close(self.slave);
            libc::close(self.master);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_counts_only_when_its_control_gets_through() {
        let held = || Outcome::Held("EACCES (Permission denied)".to_string());
        let (s, d) = verdict(held(), Some(Outcome::Leak("created it".to_string())));
        assert_eq!(s, Status::Pass);
        assert!(d.ends_with("· without the sandbox: created it"), "{d}");
        // A wrong path fails everywhere: the refusal inside proves nothing.
        let enoent = Outcome::Held("ENOENT (No such file or directory)".to_string());
        let (s, d) = verdict(held(), Some(enoent));
        assert_eq!(s, Status::Error, "{d}");
        assert!(d.contains("the attempt itself is wrong"), "{d}");
        // The host refuses it too: said, neither a pass nor an error.
        let eperm = Outcome::Held("link: EPERM (Operation not permitted)".to_string());
        assert_eq!(verdict(held(), Some(eperm)).0, Status::NotShown);
        // A control that could not run is an error.
        let broken = Outcome::Error("did not finish within 8 s".to_string());
        assert_eq!(verdict(held(), Some(broken)).0, Status::Error);
        // A leak or an error inside stands, whatever the control.
        let leak = Outcome::Leak("read it".to_string());
        assert_eq!(verdict(leak, None).0, Status::Leak);
        let error = Outcome::Error("no result".to_string());
        assert_eq!(verdict(error, None).0, Status::Error);
        // A positive control of its own needs none.
        assert_eq!(verdict(held(), None).0, Status::Pass);
    }

    #[test]
    fn a_probe_result_is_read_from_its_own_line_and_a_missing_one_is_an_error() {
        let results =
            "secret-ssh-key\t0\tENOENT\nwrite-tmp\t1\tcreated it\nsys-bpf\t2\ttimed out\nodd\n";
        let cases = [
            ("secret-ssh-key", Outcome::Held("ENOENT".to_string())),
            ("write-tmp", Outcome::Leak("created it".to_string())),
            ("sys-bpf", Outcome::Error("timed out".to_string())),
            // A line with the name alone is an error with no detail.
            ("odd", Outcome::Error(String::new())),
            (
                "net-dns",
                Outcome::Error(
                    "no result: the sandboxed `aq __probe all` ended with exit status: 3"
                        .to_string(),
                ),
            ),
        ];
        for (name, want) in cases {
            assert_eq!(
                reported_outcome(results, name, "exit status: 3"),
                want,
                "{name}"
            );
        }
    }

    fn row(status: Status) -> Row {
        Row {
            name: "p",
            category: "c",
            status,
            tried: "t",
            detail: String::new(),
        }
    }

    #[test]
    fn verified_means_no_leak_no_error_and_at_least_one_pass() {
        let rows: Vec<Row> = [
            Status::Pass,
            Status::Pass,
            Status::NotShown,
            Status::Leak,
            Status::Error,
        ]
        .into_iter()
        .map(row)
        .collect();
        let counts = Counts::of(&rows);
        assert_eq!(
            counts,
            Counts {
                total: 5,
                pass: 2,
                leak: 1,
                error: 1,
                not_shown: 1,
            }
        );
        assert!(!counts.ok());
        let cases = [
            (vec![Status::Pass, Status::NotShown], true),
            (vec![Status::NotShown, Status::NotShown], false),
            (vec![], false),
            (vec![Status::Pass, Status::Leak], false),
            (vec![Status::Pass, Status::Error], false),
        ];
        for (statuses, ok) in cases {
            let rows: Vec<Row> = statuses.iter().copied().map(row).collect();
            assert_eq!(Counts::of(&rows).ok(), ok, "{statuses:?}");
        }
    }

    #[test]
    fn each_probe_is_judged_against_its_own_control() {
        let inside: Vec<Outcome> = PROBES
            .iter()
            .map(|_| Outcome::Held("EACCES (Permission denied)".to_string()))
            .collect();
        let first = PROBES[0].name;
        let controls = vec![(first, Outcome::Leak("read it".to_string()))];
        let rows = judge(inside, &controls);
        assert_eq!(rows.len(), PROBES.len());
        assert_eq!(rows[0].name, first);
        assert_eq!(rows[0].status, Status::Pass);
        assert!(
            rows[0].detail.ends_with("· without the sandbox: read it"),
            "{}",
            rows[0].detail
        );
        // A probe that is its own positive control keeps what was seen inside.
        assert_eq!(rows[1].detail, "EACCES (Permission denied)");
    }

    #[test]
    fn text_report_has_one_line_per_probe_and_a_summary() {
        let rows = vec![
            Row {
                name: "secret-ssh-key",
                category: "secrets",
                status: Status::Pass,
                tried: "read ~/.ssh/id_ed25519",
                detail: "ENOENT (No such file or directory)".to_string(),
            },
            Row {
                name: "write-tmp",
                category: "writes",
                status: Status::Leak,
                tried: "create /tmp/aq-verify-<token>",
                detail: "created /tmp/aq-verify-1".to_string(),
            },
        ];
        let counts = Counts {
            total: 2,
            pass: 1,
            leak: 1,
            error: 0,
            not_shown: 0,
        };
        let text = render_text("leaky", "x", &rows, &counts, Duration::from_millis(900));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines[1],
            "pass  secret-ssh-key  read ~/.ssh/id_ed25519 → ENOENT (No such file or directory)"
        );
        assert!(
            lines[2].starts_with("LEAK  write-tmp       create /tmp"),
            "{text}"
        );
        assert!(
            lines[3]
                .starts_with("aq verify: 2 probes: 1 pass, 1 LEAK, 0 ERROR, 0 n/a · profile leaky"),
            "{text}"
        );
    }
}
