//! Start the supervisor: it judges what the shims and the exec guard ask
//! about, so it runs before the sandbox is planned.

use std::sync::Arc;

use aq_audit::AuditLog;
use aq_policy::Engine;

use super::RunOptions;
use super::checkpoint::Checkpointing;
use super::profile::Settled;
use super::session::{Session, SessionLog};
use crate::denials::DenialWatch;
use crate::error::RunError;
use crate::supervisor::Supervisor;

/// The running supervisor, and what reads Landlock's refusals back.
pub(super) struct Supervised {
    /// Landlock's refusals read back from the kernel's audit (as root).
    pub denials: Option<DenialWatch>,
    /// The supervisor, listening on the session's socket.
    pub supervisor: Arc<Supervisor>,
}

/// Binds the supervisor's socket, starts it and tells `on_ready`.
pub(super) fn start_supervisor(
    session: &Session,
    settled: &Settled,
    log: &SessionLog,
    checkpointing: &Checkpointing,
    args: &RunOptions,
    denials: Option<DenialWatch>,
) -> Result<Supervised, RunError> {
    let cannot_open = |source: std::io::Error| RunError::AuditLog {
        path: log.path.clone(),
        source,
    };
    let listener = aq_shim::channel::bind(&session.dir).map_err(RunError::SupervisorSocket)?;
    let supervisor = Arc::new(Supervisor {
        engine: Engine::new(session.file.policy.clone()),
        file: session.file.clone(),
        log: AuditLog::open(&log.path).map_err(cannot_open)?,
        queue: aq_shim::approvals::Queue::new(&session.dir),
        headless: settled.profile.summary == aq_policy::SummaryFormat::Json,
        mode: settled.profile.mode,
        shim_allowed: Default::default(),
        exec_guarded: session.guarded,
        verdicts: Default::default(),
        prompting: Default::default(),
        writer: crate::supervisor::LogWriter::start(
            &log.path,
            session.id.clone(),
            log.health.clone(),
        )
        .map_err(cannot_open)?,
        health: log.health.clone(),
        home: std::env::var("HOME").ok(),
        command_pid: Default::default(),
        checkpoints: checkpointing.checkpoints.clone(),
    });
    // As root, with the kernel's audit on: Landlock's refusals are read back.
    let denials = denials.map(|d| d.attach(supervisor.clone()));
    crate::supervisor::spawn(listener, supervisor.clone());
    if let Some(ready) = &args.on_ready {
        ready(supervisor.clone());
    }
    Ok(Supervised {
        denials,
        supervisor,
    })
}
