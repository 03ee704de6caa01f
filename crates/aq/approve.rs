//! `aq approve`: a human answers the asks of running sessions.
//!
//! It must be a human: `aq approve` refuses to run inside a session's
//! process tree (an agent could otherwise approve itself) and needs a real
//! terminal on stdin and stdout. When the session's own terminal is free
//! (the wrapped command does not read it), `aq run` prompts there instead.

use std::io::{BufRead, Write};
use std::time::Duration;

use aq_shim::approvals::{Answer, AnswerRecord};

use crate::cli::ApproveArgs;
use crate::exit::ExitCode;
use aq_session::answerer;

pub fn run(args: &ApproveArgs) -> Result<ExitCode, String> {
    answerer::refuse_inside_session("aq approve")?;
    answerer::require_terminal("aq approve")?;
    let by = answerer::answered_by("aq approve");
    // While this runs, sessions know someone can answer and let asks wait.
    let _presence = answerer::announce_presence_for(args.session.as_deref());
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
                answerer::show_request(&mut out, session_id, &request);
                let host = request.network.is_some();
                let answer = loop {
                    let always = if host {
                        "[a]lways (this host, every session), "
                    } else {
                        ""
                    };
                    let _ = write!(
                        out,
                        "allow [o]nce, allow for the [s]ession, {always}[d]eny, or s[k]ip? "
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
                        "a" | "always" if host => break Some(Answer::Always),
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
