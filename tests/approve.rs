//! Asks end to end: a shimmed command waits in the approval queue; nobody
//! answers (the `[session] unanswered` policy decides), `aq approve` answers
//! from a terminal of its own, or `aq run` prompts on the session's terminal.
//! `aq approve` refuses to answer from inside a session or without a terminal.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{Env, Output, Running, Session, aq_line};

/// A script that changes a file mode (`fs-permissions`: ask) and reports
/// how `chmod` ended.
const CHMOD_SCRIPT: &str = "chmod +x f\necho \"chmod exited $?\"\n";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A workspace with the file `f` (mode 0644) and `s.sh` holding `script`.
fn workspace_with(env: &Env, script: &str) {
    let f = env.work().join("f");
    env.write(&f, "");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.write(&env.work().join("s.sh"), script);
}

/// Waits until the running session has a pending request for `command`
/// (its argument vector joined with spaces).
#[track_caller]
pub(crate) fn wait_for_pending(env: &Env, run: &mut Running, command: &str) -> Session {
    let start = Instant::now();
    loop {
        if let Some(session) = env.sessions().pop()
            && session.pending().iter().any(|p| {
                std::fs::read(p)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                    .and_then(|r| {
                        r["argv"].as_array().map(|a| {
                            a.iter()
                                .filter_map(|w| w.as_str())
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                    })
                    .is_some_and(|argv| argv == command)
            })
        {
            return session;
        }
        if !run.is_running() || start.elapsed() > Duration::from_secs(15) {
            panic!("no request for `{command}` was filed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `aq approve --once` on a terminal, typing `answer`. `None` when
/// there is no util-linux `script` to give it a terminal.
pub(crate) fn approve_once(env: &Env, answer: &str) -> Option<crate::util::Output> {
    let out = env.on_terminal(&aq_line(&["approve", "--once"]), &format!("{answer}\n"));
    if out.is_none() {
        aq_testkit::skip("no util-linux `script` to give `aq approve` a terminal");
    }
    out
}

#[test]
fn an_unanswered_ask_is_denied_after_the_timeout() {
    let env = Env::with_policy("approval_timeout_secs = 1", "");
    workspace_with(&env, CHMOD_SCRIPT);
    let out = env.aq(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("chmod exited 126")
        .stderr_has("aq: waiting for approval of `chmod +x f` (fs-permissions)")
        .stderr_has("timeout 1s")
        .stderr_has("aq: not approved (no answer within 1s): chmod +x f")
        .stderr_has("rule:  fs-permissions (ask");
    assert_eq!(mode(&env.work().join("f")), 0o644, "{}", out.dump());
    assert!(
        out.elapsed >= Duration::from_secs(1) && out.elapsed < Duration::from_secs(10),
        "took {:?}",
        out.elapsed
    );

    let session = env.only_session();
    let chmod = session.decisions_for("chmod");
    assert_eq!(chmod.len(), 1, "{}", session.log_text());
    assert_eq!(chmod[0]["decision"], "ask");
    assert_eq!(chmod[0]["source"], "shim");
    let approvals = session.shim_approvals();
    assert_eq!(approvals.len(), 1, "{}", session.log_text());
    assert_eq!(approvals[0]["answer"], "timeout");
    assert_eq!(approvals[0]["by"], "policy: unanswered asks are denied");
    assert_eq!(
        approvals[0]["argv"],
        serde_json::json!(["chmod", "+x", "f"])
    );
    assert!(session.pending().is_empty(), "the request was withdrawn");
}

#[test]
fn unanswered_allow_runs_the_command_after_the_timeout() {
    let env = Env::with_policy("approval_timeout_secs = 1\nunanswered = \"allow\"", "");
    workspace_with(&env, CHMOD_SCRIPT);
    env.aq(&[
        "run",
        "--profile",
        "shims-only",
        "--quiet",
        "--",
        "sh",
        "s.sh",
    ])
    .code(0)
    .stdout_has("chmod exited 0");
    assert_eq!(mode(&env.work().join("f")), 0o755);
    let approvals = env.only_session().shim_approvals();
    assert_eq!(approvals[0]["answer"], "timeout");
    assert_eq!(approvals[0]["by"], "policy: unanswered asks run");
}

#[test]
fn approve_once_lets_a_waiting_command_run() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    workspace_with(&env, CHMOD_SCRIPT);
    let mut run = env.spawn(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "chmod +x f");
    let Some(approve) = approve_once(&env, "o") else {
        return;
    };
    approve
        .code(0)
        .stdout_has(&format!("session {}", session.id()))
        .stdout_has("command: chmod +x f")
        .stdout_has("rule:    fs-permissions")
        .stdout_has("-> once");
    let out = run.finish();
    out.code(0).stdout_has("chmod exited 0");
    assert!(
        out.elapsed < Duration::from_secs(20),
        "answered, not timed out{}",
        out.dump()
    );
    assert_eq!(mode(&env.work().join("f")), 0o755);

    let approvals = session.shim_approvals();
    assert_eq!(approvals.len(), 1, "{}", session.log_text());
    assert_eq!(approvals[0]["answer"], "once");
    assert!(
        approvals[0]["by"]
            .as_str()
            .is_some_and(|b| b.starts_with("aq approve on ")),
        "{}",
        approvals[0]
    );
}

/// While one shimmed command waits for a human, others run: one after
/// another (the supervisor's workers are reused) and eight at once (each
/// gets a worker of its own), none held up behind the ask.
#[test]
fn an_ask_waiting_for_a_human_holds_up_no_other_command() {
    let env = Env::with_policy("approval_timeout_secs = 60", "");
    workspace_with(
        &env,
        "chmod +x f &\n\
         i=0; while [ $i -lt 20 ]; do ls >/dev/null || echo \"ls $i refused\"; i=$((i+1)); done\n\
         pids=\"\"; for k in 1 2 3 4 5 6 7 8; do cat s.sh >/dev/null & pids=\"$pids $!\"; done\n\
         for p in $pids; do wait $p || echo \"cat $p failed\"; done\n\
         : > others.done\n\
         wait\n\
         echo \"script done\"\n",
    );
    let mut run = env.spawn(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "chmod +x f");
    let done = env.work().join("others.done");
    let start = Instant::now();
    while !done.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the other commands did not finish while the ask waited (session running: {})",
            run.is_running()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(session.pending().len(), 1, "the ask still waits");
    let Some(approve) = approve_once(&env, "o") else {
        return;
    };
    approve.code(0).stdout_has("-> once");
    let out = run.finish();
    out.code(0)
        .stdout_has("script done")
        .stdout_lacks("refused")
        .stdout_lacks("failed");
    assert_eq!(mode(&env.work().join("f")), 0o755);
    let shimmed = |program: &str| {
        session
            .decisions_for(program)
            .into_iter()
            .filter(|d| d["source"] == "shim" && d["decision"] == "allow")
            .count()
    };
    assert_eq!(shimmed("ls"), 20, "{}", session.log_text());
    assert_eq!(shimmed("cat"), 8, "{}", session.log_text());
}

#[test]
fn approve_for_the_session_allows_the_same_command_again() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    workspace_with(
        &env,
        "chmod +x f\necho \"first $?\"\nchmod -x f\necho \"other $?\"\nchmod +x f\necho \"again $?\"\n",
    );
    let mut run = env.spawn(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "chmod +x f");
    let Some(approve) = approve_once(&env, "s") else {
        return;
    };
    approve.code(0).stdout_has("-> session");
    // `chmod -x f` is another command: it asks again; deny it.
    wait_for_pending(&env, &mut run, "chmod -x f");
    approve_once(&env, "d")
        .expect("script ran before")
        .code(0)
        .stdout_has("command: chmod -x f")
        .stdout_has("-> deny");
    let out = run.finish();
    out.code(0)
        .stdout_has("first 0")
        .stdout_has("other 126")
        .stdout_has("again 0")
        .stderr_has("aq: not approved (denied): chmod -x f");
    assert_eq!(mode(&env.work().join("f")), 0o755);

    let chmod: Vec<(serde_json::Value, serde_json::Value)> = session
        .decisions_for("chmod")
        .into_iter()
        .map(|d| (d["argv"][1].clone(), d["decision"].clone()))
        .collect();
    assert_eq!(
        chmod,
        [
            ("+x".into(), "ask".into()),
            ("-x".into(), "ask".into()),
            ("+x".into(), "allow".into()),
        ],
        "{}",
        session.log_text()
    );
    let answers: Vec<serde_json::Value> = session
        .shim_approvals()
        .iter()
        .map(|a| a["answer"].clone())
        .collect();
    assert_eq!(answers, ["session", "deny"], "{}", session.log_text());
}

#[test]
fn aq_run_prompts_on_its_terminal_when_the_command_does_not_use_it() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    workspace_with(&env, CHMOD_SCRIPT);
    // The wrapped command reads /dev/null, so the terminal is free.
    let line = format!(
        "{} </dev/null",
        aq_line(&[
            "run",
            "--profile",
            "shims-only",
            "--quiet",
            "--",
            "sh",
            "s.sh"
        ])
    );
    let Some(out) = env.on_terminal(&line, "o\n") else {
        aq_testkit::skip("no util-linux `script` to give `aq run` a terminal");
        return;
    };
    out.code(0)
        .stdout_has("command: chmod +x f")
        .stdout_has("allow [o]nce, allow for the [s]ession, [d]eny?")
        .stdout_has("chmod exited 0");
    assert_eq!(mode(&env.work().join("f")), 0o755);
    let approvals = env.only_session().shim_approvals();
    assert_eq!(approvals[0]["answer"], "once");
    assert!(
        approvals[0]["by"]
            .as_str()
            .is_some_and(|b| b.starts_with("aq run's terminal")),
        "{}",
        approvals[0]
    );
}

#[test]
fn approve_needs_a_terminal() {
    let env = Env::new();
    // stdin from /dev/null, stdout a pipe.
    env.aq(&["approve", "--once"])
        .code(2)
        .stderr_has("aq approve needs a real terminal on stdin and stdout");
    // A terminal on stdin but stdout redirected.
    let line = format!("{} >/dev/null", aq_line(&["approve", "--once"]));
    if let Some(out) = env.on_terminal(&line, "") {
        out.code(2)
            .stdout_has("aq approve needs a real terminal on stdin and stdout");
    }
    // A terminal on both: it works, and says there is nothing to answer.
    if let Some(out) = approve_once(&env, "") {
        out.code(0).stdout_has("no pending requests");
    }
}

/// Runs `line` twice on a terminal inside a shims-only session, with and
/// then without the session's variables, typing `input`; the output says
/// `with the session env: CODE` and `without it: CODE`. `None` (after
/// saying why) without util-linux `script`.
pub(crate) fn twice_inside_a_session(env: &Env, line: &str, input: &str) -> Option<Output> {
    env.write(
        &env.work().join("s.sh"),
        &format!(
            "{line}\necho \"with the session env: $?\"\nunset AQ_SESSION_DIR AQ_SESSION_ID\n{line}\necho \"without it: $?\"\n"
        ),
    );
    let run = aq_line(&[
        "run",
        "--profile",
        "shims-only",
        "--quiet",
        "--",
        "sh",
        "s.sh",
    ]);
    let out = env.on_terminal(&run, input);
    if out.is_none() {
        aq_testkit::skip("no util-linux `script` to give the session a terminal");
    }
    out
}

#[test]
fn approve_refuses_inside_a_session() {
    let env = Env::with_policy("", "");
    // `aq` by absolute path: no shim stands in the way, and the terminal
    // is a real one, so only the session check can refuse.
    let Some(out) = twice_inside_a_session(&env, &aq_line(&["approve", "--once"]), "") else {
        return;
    };
    out.code(0)
        .stdout_has("with the session env: 2")
        .stdout_has("without it: 2")
        .stdout_lacks("no pending requests");
    let refusals = out
        .stdout
        .matches("aq approve cannot run inside an aq session")
        .count();
    assert_eq!(refusals, 2, "{}", out.dump());
}

/// What an approved command runs is approved with it: `bash -c 'chmod +x f
/// && chmod +x g'` is asked once, and the inner `chmod`s do not ask again.
#[test]
fn an_approved_shell_string_does_not_ask_again_for_its_commands() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    workspace_with(
        &env,
        "bash -c 'chmod +x f && chmod +x g'\necho \"bash exited $?\"\n",
    );
    std::fs::write(env.work().join("g"), "").unwrap();
    let mut run = env.spawn(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "bash -c chmod +x f && chmod +x g");
    let Some(approve) = approve_once(&env, "o") else {
        return;
    };
    approve.code(0).stdout_has("-> once");
    let out = run.finish();
    out.code(0).stdout_has("bash exited 0");
    assert_eq!(mode(&env.work().join("f")), 0o755);
    assert_eq!(mode(&env.work().join("g")), 0o755);
    let answers: Vec<String> = session
        .shim_approvals()
        .iter()
        .map(|a| a["answer"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        answers,
        ["once", "granted", "granted"],
        "{}",
        session.log_text()
    );
}
