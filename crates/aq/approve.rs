//! `aq approve`: a human answers the asks of running sessions.
//!
//! It must be a human: `aq approve` refuses to run inside a session's
//! process tree (an agent could otherwise approve itself) and needs a real
//! terminal on stdin and stdout. When the session's own terminal is free
//! (the wrapped command does not read it), `aq run` prompts there instead.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aq_shim::approvals::{Answer, AnswerRecord, Queue, Request};

use crate::cli::ApproveArgs;
use crate::exit::ExitCode;
use aq_session::answerer;

pub fn run(args: &ApproveArgs) -> Result<ExitCode, String> {
    answerer::refuse_inside_session("aq approve")?;
    answerer::require_terminal("aq approve")?;
    let by = answerer::answered_by("aq approve");
    // While this runs, sessions know someone can answer and let asks wait.
    let _presence = answerer::announce_presence();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut answered = 0usize;
    let mut announced = false;
    loop {
        let queues = answerer::live_queues(args.session.as_deref())?;
        let mut any = false;
        for (session_id, queue) in &queues {
            for request in queue.pending().map_err(|e| e.to_string())? {
                any = true;
                show(&mut out, session_id, &request);
                let answer = loop {
                    let _ = write!(
                        out,
                        "allow [o]nce, allow for the [s]ession, [d]eny, or s[k]ip? "
                    );
                    let _ = out.flush();
                    let mut line = String::new();
                    if stdin
                        .lock()
                        .read_line(&mut line)
                        .map_err(|e| e.to_string())?
                        == 0
                    {
                        return Ok(ExitCode::Ok);
                    }
                    match line.trim() {
                        "o" | "once" => break Some(Answer::Once),
                        "s" | "session" => break Some(Answer::Session),
                        "d" | "deny" | "n" | "no" => break Some(Answer::Deny),
                        "k" | "skip" | "" => break None,
                        _ => {}
                    }
                };
                if let Some(answer) = answer {
                    match queue.answer(
                        &request.id,
                        &AnswerRecord {
                            answer,
                            by: by.clone(),
                        },
                    ) {
                        Ok(()) => {
                            answered += 1;
                            let _ = writeln!(out, "-> {}", answer.as_str());
                        }
                        Err(e) => {
                            let _ = writeln!(out, "-> too late: {e}");
                        }
                    }
                }
            }
        }
        if args.once && !any {
            if answered == 0 {
                let _ = writeln!(out, "no pending requests");
            }
            return Ok(ExitCode::Ok);
        }
        if !any && !announced {
            let _ = writeln!(
                out,
                "waiting for requests from {} live session(s); Ctrl-C to stop",
                queues.len()
            );
            announced = true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn show(out: &mut impl Write, session_id: &str, r: &Request) {
    let _ = writeln!(out, "\nsession {session_id} · pid {} · in {}", r.pid, r.cwd);
    let _ = writeln!(out, "  command: {}", r.argv.join(" "));
    if !r.rules.is_empty() {
        let _ = writeln!(out, "  rule:    {}", r.rules.join(", "));
    }
    if let Some(why) = &r.why {
        let _ = writeln!(out, "  why:     {why}");
    }
    if let Some(safer) = &r.safer {
        let _ = writeln!(out, "  safer:   {safer}");
    }
}

/// Prompts on the session's terminal (`/dev/tty`) while the wrapped command
/// does not use it. Stops when dropped.
pub struct TtyPrompter {
    stop: Arc<AtomicBool>,
}

impl Drop for TtyPrompter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts prompting on `/dev/tty` for this session's requests, if there is a
/// terminal to prompt on.
pub fn spawn_tty_prompter(session_dir: PathBuf) -> Option<TtyPrompter> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || prompt_loop(&session_dir, tty, &flag));
    Some(TtyPrompter { stop })
}

fn prompt_loop(dir: &Path, tty: std::fs::File, stop: &AtomicBool) {
    let queue = Queue::new(dir);
    let mut reader = std::io::BufReader::new(tty.try_clone().expect("dup /dev/tty"));
    let mut out = tty;
    let by = format!("aq run's terminal, uid {}", answerer::current_uid());
    while !stop.load(Ordering::Relaxed) {
        for request in queue.pending().unwrap_or_default() {
            show(&mut out, "(this session)", &request);
            let _ = write!(out, "allow [o]nce, allow for the [s]ession, [d]eny? ");
            let _ = out.flush();
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let answer = match line.trim() {
                "o" | "once" | "y" | "yes" => Answer::Once,
                "s" | "session" => Answer::Session,
                _ => Answer::Deny,
            };
            let _ = queue.answer(
                &request.id,
                &AnswerRecord {
                    answer,
                    by: by.clone(),
                },
            );
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}
