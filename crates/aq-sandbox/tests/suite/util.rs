//! Scratch directories, the probe runner, and skip-or-fail.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use aq_sandbox::{
    ExecGuardMode, ExecJudge, HostFacts, PlanError, SandboxError, SandboxPlan, SandboxSpec, Step,
    apply, apply_guarded, plan,
};

/// The libtest arguments that run exactly one test of this binary, quietly.
pub const ONE_TEST: [&str; 4] = ["--exact", "--nocapture", "--test-threads=1", "-q"];
/// The test that turns this binary into a probe.
pub const PROBE_TEST: &str = "suite::probe::probe_entry";

use super::probe::{DONE, DONE_WITH_DATA, ERRNO_BASE, KILLED_BY_SIGKILL, KILLED_BY_SIGSYS};

/// What a probe reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The operation succeeded (for reads: the data was empty).
    Done,
    /// The operation succeeded and found data.
    DoneWithData,
    /// The operation failed with this errno: the boundary held (or not: check which).
    Errno(i32),
    /// A child the probe forked for the attempt was killed by `SIGSYS` (seccomp).
    KilledBySigsys,
    /// A child the probe forked for the attempt was killed by `SIGKILL` (the OOM killer).
    KilledBySigkill,
}

/// A temporary tree: `ws/` (workspace with `.git/hooks` and `.git/config`),
/// `home/` (a fake home), `outside/`.
pub struct Scratch {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: PathBuf,
    pub home: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("aq-sandbox-test")
            .tempdir()
            .unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let home = root.join("home");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        Scratch {
            _dir: dir,
            root,
            ws,
            home,
        }
    }

    /// The strict spec for this tree: `.git/hooks` and `.git/config` read-only.
    pub fn spec(&self) -> SandboxSpec {
        let mut spec = SandboxSpec::strict(&self.ws);
        spec.read_only = vec![".git/hooks".into(), ".git/config".into()];
        spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
        spec
    }
}

/// Whether CI demands every boundary (no skips).
pub fn require_full() -> bool {
    std::env::var_os("AQ_SANDBOX_REQUIRE_FULL").is_some_and(|v| v == "1")
}

/// A missing kernel feature: print why and skip, or fail under `AQ_SANDBOX_REQUIRE_FULL=1`.
pub fn skip(reason: &str) {
    assert!(
        !require_full(),
        "AQ_SANDBOX_REQUIRE_FULL=1 but the sandbox is unavailable: {reason}"
    );
    aq_testkit::skip(reason);
}

/// Whether `err` means "this machine cannot build the sandbox" rather than a bug.
pub fn missing_feature(err: &SandboxError) -> bool {
    matches!(
        err,
        SandboxError::Plan(PlanError::LandlockUnavailable | PlanError::LandlockTooOld { .. })
            | SandboxError::Setup {
                boundary: "namespaces",
                syscall: "unshare",
                ..
            }
    )
}

/// Run `probe` in a sandbox built from `spec`. `None`: skipped (reason printed).
/// Panics when the probe could not run, so that is never mistaken for "blocked".
pub fn run_probe(spec: &SandboxSpec, probe: &str) -> Option<Outcome> {
    run_probe_without(spec, probe, |_| false)
}

/// [`run_probe`] with the plan's steps for which `leave_out` is true removed:
/// the control run that shows a boundary is the reason a call failed.
pub fn run_probe_without(
    spec: &SandboxSpec,
    probe: &str,
    leave_out: impl Fn(&Step) -> bool,
) -> Option<Outcome> {
    run_probe_with(spec, probe, |_| {}, |p| p.steps.retain(|s| !leave_out(s)))
}

/// [`run_probe`] on host facts changed by `adjust`, with the plan changed by
/// `edit` (a control run, or a plan this host would not get).
pub fn run_probe_with(
    spec: &SandboxSpec,
    probe: &str,
    adjust: impl FnOnce(&mut HostFacts),
    edit: impl FnOnce(&mut SandboxPlan),
) -> Option<Outcome> {
    run_probe_judged(spec, probe, adjust, edit, None)
}

/// [`run_probe`] with the exec guard on and `judge` deciding every exec.
pub fn run_probe_guarded(
    spec: &SandboxSpec,
    probe: &str,
    judge: Arc<dyn ExecJudge>,
) -> Option<Outcome> {
    let mut spec = spec.clone();
    spec.exec_guard = ExecGuardMode::Required;
    run_probe_judged(&spec, probe, |_| {}, |_| {}, Some(judge))
}

/// [`run_probe`] with `judge` given to the sandbox (for a plan without the
/// exec guard, it hears only of the socket guard's refusals).
pub fn run_probe_judged_pub(
    spec: &SandboxSpec,
    probe: &str,
    judge: Option<Arc<dyn ExecJudge>>,
) -> Option<Outcome> {
    run_probe_judged(spec, probe, |_| {}, |_| {}, judge)
}

fn run_probe_judged(
    spec: &SandboxSpec,
    probe: &str,
    adjust: impl FnOnce(&mut HostFacts),
    edit: impl FnOnce(&mut SandboxPlan),
    judge: Option<Arc<dyn ExecJudge>>,
) -> Option<Outcome> {
    let mut spec = spec.clone();
    spec.env.push(("AQ_SANDBOX_PROBE".into(), probe.into()));
    spec.env.push(("RUST_BACKTRACE".into(), "0".into()));
    let exe: OsString = std::env::current_exe().unwrap().into();
    let mut argv: Vec<OsString> = vec![exe, PROBE_TEST.into()];
    argv.extend(ONE_TEST.iter().map(OsString::from));
    let mut facts = HostFacts::probe(&spec);
    adjust(&mut facts);
    let planned = plan(&spec, &facts)
        .map_err(SandboxError::from)
        .map(|mut p| {
            edit(&mut p);
            p
        });
    let status = match planned.and_then(|p| match judge {
        Some(j) => apply_guarded(&p, &spec.env, &argv, j),
        None => apply(&p, &spec.env, &argv),
    }) {
        Ok(status) => status,
        Err(e) if missing_feature(&e) => {
            skip(&e.to_string());
            return None;
        }
        Err(e) => panic!("probe {probe:?} could not run: sandbox error: {e}"),
    };
    let code = status.code().unwrap_or(-1);
    Some(match code {
        DONE => Outcome::Done,
        DONE_WITH_DATA => Outcome::DoneWithData,
        KILLED_BY_SIGSYS => Outcome::KilledBySigsys,
        KILLED_BY_SIGKILL => Outcome::KilledBySigkill,
        c if c > ERRNO_BASE && c < DONE => Outcome::Errno(c - ERRNO_BASE),
        c => panic!("probe {probe:?} could not run: exit status {c} ({status})"),
    })
}

/// `op:path` for a probe.
pub fn on(op: &str, path: &Path) -> String {
    format!("{op}:{}", path.display())
}
