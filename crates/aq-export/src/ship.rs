//! The live export of a running session (`[audit] export`): a thread that
//! follows the session's log and sends what is added.
//!
//! It never slows the session down: nothing in the session waits on it;
//! it reads the log file the session writes anyway. Between the file and
//! the collector sits a bounded queue ([`QUEUE_CAPACITY`] events); while
//! the collector is down or slow, the queue fills, then new events are
//! dropped and counted. Failed sends are retried with a backoff from
//! [`FIRST_BACKOFF`] to [`MAX_BACKOFF`]. At the end of the session
//! [`Shipper::finish`] gives it a short deadline to send the rest, then
//! counts what never got there: the log file stays complete either way,
//! and `aq audit export` can send it again.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use aq_audit::follow::Follower;
use aq_policy::ExportTarget;

use crate::sink::Sink;

/// Events held for a collector that is not taking them.
pub const QUEUE_CAPACITY: usize = 10_000;
/// How often the log is read for new events.
const POLL: Duration = Duration::from_millis(100);
/// The first wait after a failed send.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait between tries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long the end of a session waits for the last events to go out.
pub const FLUSH_DEADLINE: Duration = Duration::from_secs(2);

/// How a live export went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShipReport {
    /// The target.
    pub target: ExportTarget,
    /// Events the collector accepted.
    pub sent: u64,
    /// Events of the log it never got (queue full, rejected, or still
    /// unsent at the deadline).
    pub dropped: u64,
    /// The last failure, if any.
    pub error: Option<String>,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// Wakes the thread from its wait between reads when the session ends,
    /// so the end does not wait out a poll interval.
    wake: Condvar,
    wake_lock: Mutex<()>,
    sent: AtomicU64,
    error: Mutex<Option<String>>,
}

/// A running live export; see the module documentation.
pub struct Shipper {
    target: ExportTarget,
    log: PathBuf,
    shared: Arc<Shared>,
    done: mpsc::Receiver<()>,
}

impl Shipper {
    /// Starts following `log` (from its beginning) and sending to `target`.
    pub fn start(target: &ExportTarget, log: &Path) -> Shipper {
        Self::start_with(target, log, QUEUE_CAPACITY)
    }

    /// [`Shipper::start`] with a queue of `capacity` events.
    pub fn start_with(target: &ExportTarget, log: &Path, capacity: usize) -> Shipper {
        let shared = Arc::new(Shared::default());
        let (tx, done) = mpsc::channel();
        let worker = Worker {
            sink: Sink::new(target),
            follower: Follower::new(log),
            queue: VecDeque::new(),
            capacity,
            shared: shared.clone(),
        };
        std::thread::spawn(move || {
            worker.run();
            let _ = tx.send(());
        });
        Shipper {
            target: target.clone(),
            log: log.to_path_buf(),
            shared,
            done,
        }
    }

    /// Asks the thread to send what is left, waits at most `deadline`, and
    /// counts: what was sent, and what of the log was not. A thread still
    /// stuck on a collector that does not answer is left behind.
    pub fn finish(self, deadline: Duration) -> ShipReport {
        finish_all(vec![self], deadline).remove(0)
    }

    fn report(self, until: Instant) -> ShipReport {
        let _ = self
            .done
            .recv_timeout(until.saturating_duration_since(Instant::now()));
        let sent = self.shared.sent.load(Ordering::SeqCst);
        let total = Follower::new(&self.log)
            .poll()
            .map(|r| r.len() as u64)
            .unwrap_or(sent);
        let mut error = self.shared.error.lock().ok().and_then(|e| e.clone());
        let dropped = total.saturating_sub(sent);
        if dropped > 0 && error.is_none() {
            error = Some("the collector did not take them in time".to_string());
        }
        ShipReport {
            target: self.target,
            sent,
            dropped,
            error,
        }
    }
}

/// [`Shipper::finish`] for several at once, within one deadline.
pub fn finish_all(shippers: Vec<Shipper>, deadline: Duration) -> Vec<ShipReport> {
    let until = Instant::now() + deadline;
    for s in &shippers {
        s.shared.stop.store(true, Ordering::SeqCst);
        let _held = s.shared.wake_lock.lock();
        s.shared.wake.notify_all();
    }
    shippers.into_iter().map(|s| s.report(until)).collect()
}

struct Worker {
    sink: Sink,
    follower: Follower,
    queue: VecDeque<aq_audit::Record>,
    capacity: usize,
    shared: Arc<Shared>,
}

impl Worker {
    fn run(mut self) {
        let mut backoff = FIRST_BACKOFF;
        let mut next_try = Instant::now();
        loop {
            let stopping = self.shared.stop.load(Ordering::SeqCst);
            self.read_log();
            if stopping {
                // One more go at whatever is left, backoff or not.
                next_try = Instant::now();
            }
            let mut failed = false;
            while !self.queue.is_empty() && Instant::now() >= next_try {
                match self.send_batch() {
                    Ok(()) => backoff = FIRST_BACKOFF,
                    Err(()) => {
                        next_try = Instant::now() + backoff;
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        failed = true;
                        break;
                    }
                }
                if !stopping {
                    // Keep the queue current between batches.
                    self.read_log();
                }
            }
            if stopping && (self.queue.is_empty() || failed) {
                return;
            }
            // Until the next read, or the end of the session.
            if let Ok(held) = self.shared.wake_lock.lock() {
                let _ = self
                    .shared
                    .wake
                    .wait_timeout_while(held, POLL, |_| !self.shared.stop.load(Ordering::SeqCst));
            }
        }
    }

    /// Moves new events of the log into the queue, dropping what does not fit.
    fn read_log(&mut self) {
        let Ok(records) = self.follower.poll() else {
            return;
        };
        for r in records {
            if self.queue.len() < self.capacity {
                self.queue.push_back(r);
            }
            // Else dropped: counted at the end as events of the log not sent.
        }
    }

    fn send_batch(&mut self) -> Result<(), ()> {
        let n = self.queue.len().min(self.sink.batch_size());
        let batch: Vec<aq_audit::Record> = self.queue.iter().take(n).cloned().collect();
        let (delivered, error) = match self.sink.send(&batch) {
            Ok(accepted) => {
                if accepted < n
                    && let Ok(mut e) = self.shared.error.lock()
                {
                    *e = Some(format!("the collector rejected {} events", n - accepted));
                }
                self.shared
                    .sent
                    .fetch_add(accepted as u64, Ordering::SeqCst);
                (n, None)
            }
            Err(e) => {
                self.shared
                    .sent
                    .fetch_add(e.delivered as u64, Ordering::SeqCst);
                (e.delivered, Some(e.message))
            }
        };
        self.queue.drain(..delivered);
        match error {
            None => Ok(()),
            Some(message) => {
                if let Ok(mut e) = self.shared.error.lock() {
                    *e = Some(message);
                }
                Err(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    fn log_of(n: u64) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let text: String = (1..=n)
            .map(|seq| {
                format!(
                    "{{\"seq\":{seq},\"ts\":\"2025-01-01T10:00:00Z\",\"session\":\"s\",\"prev\":\"x\",\"event\":\"note\"}}\n"
                )
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn closed_port() -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    #[test]
    fn a_collector_that_is_down_costs_events_not_time() {
        let (_dir, log) = log_of(20);
        let target =
            ExportTarget::parse("syslog", &format!("tcp://127.0.0.1:{}", closed_port())).unwrap();
        let shipper = Shipper::start_with(&target, &log, 5);
        std::thread::sleep(Duration::from_millis(300));
        let started = Instant::now();
        let report = shipper.finish(Duration::from_secs(1));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!((report.sent, report.dropped), (0, 20), "{report:?}");
        assert!(
            report
                .error
                .as_deref()
                .unwrap_or("")
                .contains("cannot connect"),
            "{report:?}"
        );
    }

    #[test]
    fn a_collector_that_never_answers_is_left_behind_at_the_deadline() {
        // Accepts connections (the backlog does) but never reads or answers.
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let (_dir, log) = log_of(3);
        let target = ExportTarget::parse("otlp", &format!("http://127.0.0.1:{port}")).unwrap();
        let shipper = Shipper::start(&target, &log);
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let report = shipper.finish(Duration::from_millis(300));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        assert_eq!((report.sent, report.dropped), (0, 3), "{report:?}");
        assert!(report.error.is_some());
    }

    #[test]
    fn a_collector_that_is_up_gets_every_event_in_order() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut all = String::new();
            let _ = conn.read_to_string(&mut all);
            all
        });
        let (_dir, log) = log_of(12);
        let target = ExportTarget::parse("syslog", &format!("tcp://127.0.0.1:{port}")).unwrap();
        let report = Shipper::start(&target, &log).finish(Duration::from_secs(5));
        assert_eq!((report.sent, report.dropped, report.error), (12, 0, None));
        // The thread is done and its socket closed: the receiver saw EOF.
        let all = got.join().unwrap();
        let mut rest = all.as_str();
        let mut seqs = Vec::new();
        while !rest.is_empty() {
            let (len, tail) = rest.split_once(' ').unwrap();
            let len: usize = len.parse().unwrap();
            let msg = &tail[..len];
            let seq = msg
                .split("seq=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            seqs.push(seq.parse::<u64>().unwrap());
            rest = &tail[len..];
        }
        assert_eq!(seqs, (1..=12).collect::<Vec<_>>());
    }
}
