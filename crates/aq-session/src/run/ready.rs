//! Ready the workspace before the command starts: `aq preflight` when
//! asked, and the first checkpoint, waited for.

use std::path::{Path, PathBuf};

use aq_audit::{AuditLog, EventBody};
use aq_policy::Engine;

use super::Setup;
use super::checkpoint::{Checkpointing, wait_for_first_checkpoint};
use super::session::SessionLog;
use crate as session;

/// Scans the workspace when asked, then waits for the first checkpoint
/// (started with the session, a second ago or more).
pub(super) fn ready_workspace(setup: &Setup<'_>, log: &SessionLog, checkpointing: &Checkpointing) {
    let started = setup.start.at;
    let Setup {
        args,
        policy,
        session,
        settled,
        ..
    } = *setup;
    let headless = settled.profile.summary == aq_policy::SummaryFormat::Json;
    if args.preflight || policy.settings.preflight {
        preflight(&policy.workspace, &log.log, &session.id, args.quiet);
    }
    if let Some(rx) = &checkpointing.first {
        wait_for_first_checkpoint(rx, started, args.quiet || headless, &log.log, &session.id);
    }
    if let Some(e) = checkpointing
        .checkpoints
        .as_ref()
        .and_then(|c| c.watch_error())
        && !args.quiet
    {
        eprintln!(
            "aq: note: checkpoints of the workspace are on, but changes cannot be watched ({e}): each checkpoint walks the whole workspace"
        );
    }
}

/// `aq preflight` on the workspace before the agent touches it: each finding
/// goes into the session log, and a summary line to stderr. It informs; it
/// does not stop the session.
fn preflight(workspace: &Path, log: &AuditLog, id: &str, quiet: bool) {
    let options = aq_preflight::Options {
        progress: None,
        home: std::env::var_os("HOME").map(PathBuf::from),
        engine: Engine::default(),
    };
    let report = match aq_preflight::scan(workspace, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("aq: preflight could not scan the workspace: {e}");
            return;
        }
    };
    for f in &report.findings {
        session::log_event(
            log,
            id,
            EventBody::PreflightFinding {
                id: f.id.to_string(),
                severity: f.severity.as_str().to_string(),
                path: f.path.clone(),
                line: f.line,
                title: f.title.clone(),
            },
        );
    }
    let [low, medium, high, critical] = report.counts();
    if !quiet || high + critical > 0 {
        eprintln!(
            "aq: preflight: {} findings in {} files ({critical} critical, {high} high, {medium} medium, {low} low){}",
            report.findings.len(),
            report.files,
            if report.findings.is_empty() {
                String::new()
            } else {
                format!("; `aq preflight {}` shows them", workspace.display())
            }
        );
    }
}
