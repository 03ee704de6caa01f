//! `aq audit export`: send a session's log to a collector (see aq-export).

use std::path::Path;
use std::time::{Duration, Instant};

use aq_export::{Follow, Sink};
use aq_policy::ExportTarget;
use aq_session as session;
use aq_session::sources::{Sources, Target};

use crate::cli::{ExportArgs, ExportFormatArg};
use crate::exit::ExitCode;

pub fn run(args: &ExportArgs) -> Result<ExitCode, String> {
    let format = match args.format {
        ExportFormatArg::Otlp => "otlp",
        ExportFormatArg::Syslog => "syslog",
    };
    let (endpoint, from) = match (&args.endpoint, args.format) {
        (Some(e), _) => (e.clone(), "--endpoint"),
        (None, ExportFormatArg::Otlp) => (
            aq_export::otel_env::endpoint_from_env().ok_or(
                "--endpoint is needed (or OTEL_EXPORTER_OTLP_ENDPOINT in the environment)",
            )?,
            "the OTEL_EXPORTER_OTLP_ endpoint variable",
        ),
        (None, ExportFormatArg::Syslog) => {
            return Err("--endpoint is needed for syslog: unix:///dev/log, udp://HOST:PORT or tcp://HOST:PORT".into());
        }
    };
    let target = ExportTarget::parse(format, &endpoint).map_err(|e| format!("{from}: {e}"))?;
    if args.format == ExportFormatArg::Otlp {
        // Fail before sending anything rather than send without the key.
        aq_export::otel_env::headers_from_env()?;
    }
    if args.all {
        return export_all(&target, args.follow);
    }
    let log = match &args.session {
        Some(s) => session::resolve_log(s)?,
        None => session::latest_log()?,
    };
    let mut sink = Sink::new(&target);
    let over = || supervisor_gone(&log);
    let retrying = |e: &aq_export::SendError| {
        eprintln!("aq: {e}; trying again while the session runs (--follow)");
    };
    let follow = if args.follow {
        Follow::UntilEnd {
            over: &over,
            retrying: &retrying,
        }
    } else {
        Follow::No
    };
    match aq_export::export_log(&mut sink, &log, follow) {
        Ok(done) => {
            eprintln!(
                "aq: exported {} events of {} to {target}",
                done.sent,
                log.display()
            );
            if done.unreadable > 0 {
                eprintln!(
                    "aq: {} lines of the log are not events (damaged or torn) and were not sent; `aq audit verify` names them",
                    done.unreadable
                );
            }
            Ok(ExitCode::Ok)
        }
        Err(f) => {
            eprintln!(
                "aq: export to {target} failed after {} of {} events read: {}",
                f.sent, f.read, f.error
            );
            Ok(ExitCode::ExportFailed)
        }
    }
}

/// Whether the `aq run` that writes `log` has exited (or was never known).
fn supervisor_gone(log: &Path) -> bool {
    match log.parent().map(session::read_file) {
        Some(Ok(file)) => !session::pid_alive(file.supervisor_pid),
        _ => true,
    }
}

/// `--all`: every session's log once, or (`--follow`) every live session
/// and those that start, for as long as it runs.
fn export_all(target: &ExportTarget, follow: bool) -> Result<ExitCode, String> {
    let mut sink = Sink::new(target);
    if follow {
        let mut sources = Sources::open(Target::AllLive)?;
        let mut scanned = Instant::now();
        let mut poll = || {
            if scanned.elapsed() >= Duration::from_millis(500) {
                sources.scan();
                scanned = Instant::now();
            }
            sources
                .poll()
                .into_iter()
                .filter_map(|line| line.record)
                .collect()
        };
        eprintln!(
            "aq: exporting every live session, and those that start, to {target}; Ctrl-C to stop"
        );
        let retrying = |e: &aq_export::SendError| {
            eprintln!("aq: {e}; trying again (--follow)");
        };
        let failure = aq_export::export_stream(&mut sink, &mut poll, &retrying);
        eprintln!(
            "aq: export to {target} failed after {} events: {}",
            failure.sent, failure.error
        );
        return Ok(ExitCode::ExportFailed);
    }
    let sessions = session::list().map_err(|e| format!("cannot list sessions: {e}"))?;
    let mut total = 0u64;
    for dir in &sessions {
        let log = session::log_path(dir);
        match aq_export::export_log(&mut sink, &log, Follow::No) {
            Ok(done) => total += done.sent,
            Err(f) => {
                eprintln!(
                    "aq: export to {target} failed at {} after {} events in all: {}",
                    log.display(),
                    total + f.sent,
                    f.error
                );
                return Ok(ExitCode::ExportFailed);
            }
        }
    }
    eprintln!(
        "aq: exported {total} events of {} sessions to {target}",
        sessions.len()
    );
    Ok(ExitCode::Ok)
}
