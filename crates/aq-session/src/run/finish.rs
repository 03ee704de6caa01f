//! Finish the session: stop what watched it, take the last checkpoint,
//! run the git guard's end check, write back the agent's shadowed files,
//! log how the command ended, flush the exports, show the recap, and turn
//! the command's end into aq's exit code.

use std::process::ExitCode;

use aq_audit::EventBody;
use aq_policy::SummaryFormat;

use super::checkpoint::Checkpointing;
use super::session::SessionLog;
use super::supervise::Supervised;
use super::{EXIT_SANDBOX, Exit, Setup};
use crate as session;
use crate::git_guard::GitGuard;

/// Ends the session with what is still open (each taken, to be closed
/// here); the command's exit code, or 125 when the audit log
/// could not be written.
pub(super) fn finish(
    setup: &Setup<'_>,
    exit: Exit,
    supervised: Supervised,
    git_guard: GitGuard,
    log: SessionLog,
    checkpoints: Checkpointing,
) -> ExitCode {
    let Setup {
        args,
        settled,
        session,
        ..
    } = *setup;
    let started = setup.start.at;
    let id = &session.id;
    let headless = settled.profile.summary == SummaryFormat::Json;
    if let Some(d) = supervised.denials {
        d.stop();
    }
    if let Some(c) = &checkpoints.checkpoints {
        if let Some(event) = c.take(aq_undo::Reason::SessionEnd, None) {
            session::log_event(&log.log, id, event);
        }
        c.prune_now_and_then();
        c.end();
    }
    supervised.supervisor.flush_log();
    git_guard.finish(&log.log, id, args.quiet || headless);
    for shadow in &session.grants.shadows {
        if let Err(e) = aq_agents::shadow::write_back(shadow) {
            eprintln!("aq: {e}");
        }
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let (exit_code, signal) = exit.parts();
    session::log_event(
        &log.log,
        id,
        EventBody::CommandExit {
            argv: args.command.clone(),
            exit_code,
            signal,
            duration_ms,
        },
    );
    session::log_event(
        &log.log,
        id,
        EventBody::SessionEnd {
            exit_code,
            duration_ms,
        },
    );
    for shipped in aq_export::ship::finish_all(log.shippers, aq_export::ship::FLUSH_DEADLINE) {
        session::log_event(
            &log.log,
            id,
            EventBody::Export {
                target: shipped.target.to_string(),
                sent: shipped.sent,
                dropped: shipped.dropped,
                error: shipped.error,
            },
        );
    }
    // Quiet and not headless: no recap, so the log is not read back.
    if (headless || !args.quiet)
        && let Ok(f) = std::fs::File::open(&log.path)
        && let Ok(summary) = aq_audit::Summary::from_reader(std::io::BufReader::new(f))
    {
        if headless {
            match summary.to_json() {
                Ok(json) => println!("{json}"),
                Err(e) => eprintln!("aq: cannot write the JSON summary: {e}"),
            }
        } else if !args.quiet {
            eprint!("{}", summary.recap());
        }
    }
    if log.health.failed() {
        eprintln!(
            "aq: session {id} ended because its audit log could not be written (exit {EXIT_SANDBOX}); `aq audit verify {id}` shows where"
        );
        return ExitCode::from(EXIT_SANDBOX);
    }
    ExitCode::from(exit.code())
}
