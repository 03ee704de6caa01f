//! Shipping audit logs to where a team reads them: OpenTelemetry logs over
//! OTLP/HTTP ([`otlp`]) or RFC 5424 syslog ([`syslog`]), once for a whole
//! log ([`export_log`], `aq audit export`) or live while a session runs
//! ([`ship::Shipper`], `[audit] export`).
//!
//! The two modes differ on one point, on purpose. `aq audit export` is a
//! person asking for the log to be sent: it fails loudly, saying how many
//! events got there. The live export serves a session that must not wait
//! for anything: it drops and counts, and the session's report says so.
//!
//! The log file stays the record: what is exported is read from it, after
//! redaction, so a collector never sees more than `aq report` shows.

#![deny(missing_docs)]

pub mod describe;
mod error;
pub mod otel_env;
pub mod otlp;
pub mod ship;
pub mod sink;
pub mod syslog;

use std::path::Path;
use std::time::{Duration, Instant};

use aq_audit::follow::Follower;

pub use error::{HeadersError, SyslogError};
pub use ship::{ShipReport, Shipper};
pub use sink::{SendError, Sink};

/// How often `--follow` reads the log for new events.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// Whether to keep sending as the log grows.
pub enum Follow<'a> {
    /// Send what the log holds now, then stop.
    No,
    /// Keep going until a `session_end` event went out or `over` says the
    /// session is gone (its supervisor exited); then send the rest. A
    /// collector that fails for a while is retried with a backoff (see
    /// [`export_log`]); `retrying` hears of the first failure of each run.
    UntilEnd {
        /// Whether the session is over although no `session_end` came.
        over: &'a dyn Fn() -> bool,
        /// Told when a send failed and will be tried again.
        retrying: &'a dyn Fn(&SendError),
    },
}

/// After the followed session is over, how long a failing collector is
/// still retried before `--follow` gives up.
pub const FOLLOW_GRACE: Duration = Duration::from_secs(10);

/// Whether a failure says the collector will never take this batch (a 4xx
/// other than 408 and 429): retrying it is pointless.
fn permanent(error: &SendError) -> bool {
    matches!(error.status, Some(s) if (400..500).contains(&s) && s != 408 && s != 429)
}

/// A finished `aq audit export`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// Events the collector accepted.
    pub sent: u64,
    /// Lines of the log that were not events (damaged, torn): not sent.
    pub unreadable: u64,
}

/// A failed `aq audit export`: how far it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFailure {
    /// Events the collector accepted before the failure.
    pub sent: u64,
    /// Events read from the log so far.
    pub read: u64,
    /// What went wrong.
    pub error: SendError,
}

/// Sends the log at `log` to `sink`, batch by batch; on success, how many
/// events the collector accepted, and how many lines of the log could not be
/// read as events (they are skipped, not sent). Without following, stops at the first
/// failed send. Following, a failed send is tried again with a backoff
/// (0.25 s doubling to 5 s) for as long as the session runs and
/// [`FOLLOW_GRACE`] after, unless the collector refused the batch for good.
pub fn export_log(
    sink: &mut Sink,
    log: &Path,
    follow: Follow<'_>,
) -> Result<Exported, ExportFailure> {
    let mut follower = Follower::new(log);
    let mut sent = 0u64;
    let mut read = 0u64;
    let mut last_round = false;
    loop {
        let records = follower.poll().map_err(|e| ExportFailure {
            sent,
            read,
            error: SendError {
                message: format!("cannot read {}: {e}", log.display()),
                status: None,
                delivered: 0,
            },
        })?;
        read += records.len() as u64;
        let ended = records.iter().any(|r| r.kind() == "session_end");
        let retry = match &follow {
            Follow::No => None,
            Follow::UntilEnd { over, retrying } => Some(Retry {
                // Tried again while the session runs, and FOLLOW_GRACE after.
                give_up: &|since: Option<Instant>| {
                    since.is_some_and(|t| t.elapsed() >= FOLLOW_GRACE)
                },
                over: *over,
                retrying: *retrying,
            }),
        };
        send_all(sink, &records, &mut sent, read, retry.as_ref())?;
        let over = match &follow {
            Follow::No => true,
            Follow::UntilEnd { .. } => ended || last_round,
        };
        if over {
            return Ok(Exported {
                sent,
                unreadable: follower.unreadable,
            });
        }
        if let Follow::UntilEnd { over, .. } = &follow {
            // One more read after the supervisor is gone: its last lines
            // were written before it exited.
            last_round = over();
            if !last_round {
                std::thread::sleep(FOLLOW_POLL);
            }
        }
    }
}

/// How a failed send is tried again (following a session).
struct Retry<'a> {
    /// Given when the session was first seen over (if it was): whether to
    /// stop trying.
    give_up: &'a dyn Fn(Option<Instant>) -> bool,
    /// Whether the session is over.
    over: &'a dyn Fn() -> bool,
    /// Told at the first failure of a run of them.
    retrying: &'a dyn Fn(&SendError),
}

/// Sends `records` batch by batch, adding what the collector accepted to
/// `sent`. Without `retry` the first failure ends it; with it, a failed
/// batch is tried again with a backoff (0.25 s doubling to 5 s) until it
/// goes through, the collector refuses it for good, or `give_up` says so.
fn send_all(
    sink: &mut Sink,
    records: &[aq_audit::Record],
    sent: &mut u64,
    read: u64,
    retry: Option<&Retry<'_>>,
) -> Result<(), ExportFailure> {
    for batch in records.chunks(sink.batch_size()) {
        let mut rest = batch;
        let mut backoff = ship::FIRST_BACKOFF;
        let mut failing = false;
        let mut over_since: Option<Instant> = None;
        loop {
            match sink.send(rest) {
                Ok(accepted) => {
                    *sent += accepted as u64;
                    break;
                }
                Err(error) => {
                    *sent += error.delivered as u64;
                    rest = &rest[error.delivered.min(rest.len())..];
                    let fail = || ExportFailure {
                        sent: *sent,
                        read,
                        error: error.clone(),
                    };
                    let Some(retry) = retry else {
                        return Err(fail());
                    };
                    if over_since.is_none() && (retry.over)() {
                        over_since = Some(Instant::now());
                    }
                    if permanent(&error) || (retry.give_up)(over_since) {
                        return Err(fail());
                    }
                    if !failing {
                        (retry.retrying)(&error);
                        failing = true;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(ship::MAX_BACKOFF);
                }
            }
        }
    }
    Ok(())
}

/// Sends what `poll` gives, as it comes, until the process is stopped
/// (`aq audit export --all --follow`: every session, those that start
/// later too). A failing collector is tried again for as long as it takes,
/// unless it refuses the data for good, which ends it with the failure.
pub fn export_stream(
    sink: &mut Sink,
    poll: &mut dyn FnMut() -> Vec<aq_audit::Record>,
    retrying: &dyn Fn(&SendError),
) -> ExportFailure {
    let mut sent = 0u64;
    let mut read = 0u64;
    let never = |_: Option<Instant>| false;
    let not_over = || false;
    let retry = Retry {
        give_up: &never,
        over: &not_over,
        retrying,
    };
    loop {
        let records = poll();
        read += records.len() as u64;
        if let Err(failure) = send_all(sink, &records, &mut sent, read, Some(&retry)) {
            return failure;
        }
        std::thread::sleep(FOLLOW_POLL);
    }
}
