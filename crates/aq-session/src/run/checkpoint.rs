//! Start the workspace's checkpoints: the first is taken on a thread while
//! the sandbox is set up, and waited for before the command starts.

use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use aq_audit::{AuditLog, EventBody};

use super::policy::Policy;
use super::session::Session;
use crate as session;
use crate::checkpoints::Checkpoints;

/// The session's checkpoints, and the first one on its way.
pub(super) struct Checkpointing {
    /// Off, or not to be kept: `None`.
    pub checkpoints: Option<Arc<Checkpoints>>,
    /// The first checkpoint's event (or why there is none), to wait for.
    pub first: Option<Receiver<Option<EventBody>>>,
}

/// Opens the checkpoints and starts the first; refuses the session when
/// the managed policy requires checkpoints that cannot be kept.
pub(super) fn start_checkpoints(
    policy: &Policy,
    session: &Session,
) -> Result<Checkpointing, crate::error::RunError> {
    let effective = &policy.loaded.effective;
    match Checkpoints::open(&effective.undo, &policy.workspace, &session.id) {
        Ok(c) => {
            let c = Arc::new(c);
            let first = c.clone();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(first.first());
            });
            Ok(Checkpointing {
                checkpoints: Some(c),
                first: Some(rx),
            })
        }
        Err(None) => Ok(Checkpointing {
            checkpoints: None,
            first: None,
        }),
        // Checkpoints the managed policy requires, that cannot be kept:
        // nothing runs that could not be undone.
        Err(Some(why))
            if effective
                .managed
                .as_ref()
                .is_some_and(|m| m.settings.require_checkpoints) =>
        {
            Err(crate::error::RunError::CheckpointsRequired {
                why,
                managed: effective
                    .managed
                    .as_ref()
                    .map(|m| m.file.to_string())
                    .unwrap_or_default(),
            })
        }
        Err(Some(why)) => {
            let (tx, rx) = std::sync::mpsc::channel();
            let _ = tx.send(crate::checkpoints::event(
                aq_undo::Reason::SessionStart,
                None,
                &Err(aq_undo::Error(why)),
            ));
            Ok(Checkpointing {
                checkpoints: None,
                first: Some(rx),
            })
        }
    }
}

/// Waits for the session's first checkpoint (taken while the sandbox was
/// set up) and logs it; past a second, says why the start takes a moment.
pub(super) fn wait_for_first_checkpoint(
    rx: &std::sync::mpsc::Receiver<Option<EventBody>>,
    started: Instant,
    quiet: bool,
    log: &AuditLog,
    id: &str,
) {
    let patience = Duration::from_secs(1).saturating_sub(started.elapsed());
    let got = match rx.recv_timeout(patience) {
        Ok(e) => Some(e),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            if !quiet {
                eprintln!(
                    "aq: taking the workspace's first checkpoint (for `aq undo`); later sessions only look at what changed…"
                );
            }
            rx.recv().ok()
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
    };
    if let Some(Some(event)) = got {
        if let EventBody::Checkpoint { error: Some(e), .. } = &event {
            eprintln!(
                "aq: warning: no checkpoint of the workspace at the start of this session: {e}"
            );
        }
        session::log_event(log, id, event);
    }
}
