//! The interactive console: follows the logs, polls the approval queues,
//! reads keys, redraws at most ten times a second, and answers asks.
//!
//! It answers as `aq approve` does and under the same safeguards: never
//! from inside a session, only from a real terminal, and while it runs it
//! holds the presence lock so that asks wait for a human. The terminal is
//! put back (raw mode off, main screen) on every exit: `q`, Ctrl-C, an
//! error, a panic, and SIGTERM or SIGHUP (a closed terminal, `kill`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use aq_session::answerer;
use aq_shim::approvals::{AnswerRecord, Queue};
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyEventKind};

use crate::WatchError;
use crate::inert::inert;
use crate::render::render;
use crate::state::{Ask, Effect, State};
use aq_session::sources::{Sources, Target};

/// The verb, as the refusals and the log name it.
const VERB: &str = "aq watch";
/// The shortest time between two frames.
const FRAME: Duration = Duration::from_millis(100);
/// How often the logs are read.
const POLL_LOGS: Duration = Duration::from_millis(100);
/// How often the approval queues are read.
const POLL_ASKS: Duration = Duration::from_millis(200);
/// How often new sessions are looked for.
const SCAN: Duration = Duration::from_millis(500);

/// Runs the console until `q`. Refuses inside a session and without a
/// terminal, before touching the terminal.
pub fn run(target: Target) -> Result<(), WatchError> {
    answerer::refuse_inside_session(VERB)?;
    answerer::require_terminal(VERB)?;
    let by = answerer::answered_by(VERB);
    let only = match &target {
        Target::Session(id) => Some(id.clone()),
        _ => None,
    };
    let mut sources = Sources::open(target)?;
    // While this runs, sessions know someone can answer and let asks wait.
    let _presence = answerer::announce_presence_for(only.as_deref());
    catch_stop_signals();
    // Sets a panic hook that restores the terminal too.
    let mut terminal =
        ratatui::try_init().map_err(|source| WatchError::SetUpTerminal { source })?;
    let _restore = Restore;
    console_loop(&mut terminal, &mut sources, &by)
}

/// Set by SIGTERM or SIGHUP: the loop ends within one poll (at most
/// [`POLL_LOGS`]) and the terminal is put back on the way out.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Turns SIGTERM and SIGHUP into a clean exit instead of a death that
/// leaves the terminal in raw mode on the alternate screen.
fn catch_stop_signals() {
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe);
        // SA_RESTART keeps the terminal reads going.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Puts the terminal back when dropped.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

fn console_loop(
    terminal: &mut DefaultTerminal,
    sources: &mut Sources,
    by: &str,
) -> Result<(), WatchError> {
    let mut state = State::new();
    let mut queues: Vec<(String, Queue)> = Vec::new();
    let long_ago = Instant::now()
        .checked_sub(Duration::from_secs(10))
        .unwrap_or_else(Instant::now);
    let (mut logs_read, mut asks_read, mut scanned, mut drawn) =
        (long_ago, long_ago, long_ago, long_ago);
    let mut dirty = true;
    loop {
        if STOP.load(Ordering::Relaxed) {
            return Ok(());
        }
        if logs_read.elapsed() >= POLL_LOGS {
            for line in sources.poll() {
                if let Some(record) = &line.record {
                    state.record(&line.session, record);
                    dirty = true;
                }
            }
            let live = sources.live();
            dirty |= live != state.live;
            state.live = live;
            logs_read = Instant::now();
        }
        if asks_read.elapsed() >= POLL_ASKS {
            queues = answerer::live_queues(sources.only()).unwrap_or_default();
            let asks: Vec<Ask> = queues
                .iter()
                .flat_map(|(id, q)| {
                    q.pending()
                        .unwrap_or_default()
                        .into_iter()
                        .map(move |r| Ask::from_request(id, &r))
                })
                .collect();
            dirty |= state.set_pending(asks);
            asks_read = Instant::now();
        }
        if scanned.elapsed() >= SCAN {
            sources.scan();
            scanned = Instant::now();
        }
        if dirty && drawn.elapsed() >= FRAME {
            terminal
                .draw(|frame| render(&state, frame))
                .map_err(|source| WatchError::Draw { source })?;
            drawn = Instant::now();
            dirty = false;
        }
        // Until the next frame is due, or the next read of the logs.
        let wait = if dirty {
            FRAME.saturating_sub(drawn.elapsed())
        } else {
            POLL_LOGS.saturating_sub(logs_read.elapsed())
        }
        .max(Duration::from_millis(10));
        match wait_for_input(wait) {
            Input::Ready => {}
            Input::None => continue,
            // Nobody left to show anything to: end quietly.
            Input::Gone => return Ok(()),
        }
        // crossterm may have read several events at once: take them all.
        while event::poll(Duration::ZERO).map_err(|source| WatchError::ReadTerminal { source })? {
            if handle(
                event::read().map_err(|source| WatchError::ReadTerminal { source })?,
                &mut state,
                &queues,
                by,
            ) {
                return Ok(());
            }
        }
        dirty = true;
    }
}

/// What the terminal has for us.
enum Input {
    /// Bytes to read.
    Ready,
    /// Nothing yet (time out, or a signal came).
    None,
    /// It hung up (a closed ssh session, a killed tmux pane): reads would
    /// return end-of-file forever.
    Gone,
}

/// Waits up to `wait` for input on the terminal (stdin). Waiting here, not
/// in crossterm, matters: on a hung-up terminal crossterm's poll reads
/// end-of-file in a loop and never returns, spinning a CPU, deaf to the
/// stop signals.
fn wait_for_input(wait: Duration) -> Input {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one pollfd we own, for the duration of the call.
    let r = unsafe { libc::poll(&mut fd, 1, ms) };
    if r < 0 {
        return if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            Input::None
        } else {
            Input::Gone
        };
    }
    if r == 0 {
        return Input::None;
    }
    if fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return Input::Gone;
    }
    Input::Ready
}

/// Acts on one terminal event; true when it asks to quit.
fn handle(event: Event, state: &mut State, queues: &[(String, Queue)], by: &str) -> bool {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => match state.on_key(key) {
            Effect::Quit => return true,
            Effect::Answer {
                session,
                request,
                answer,
            } => {
                let result = match queues.iter().find(|(id, _)| inert(id) == session) {
                    Some((_, queue)) => queue
                        .answer(
                            &request,
                            &AnswerRecord {
                                answer,
                                by: by.to_string(),
                            },
                        )
                        .map_err(|e| e.to_string()),
                    None => Err("its session has ended".to_string()),
                };
                state.answered(&session, &request, answer, result);
            }
            Effect::None => {}
        },
        _ => {}
    }
    false
}
