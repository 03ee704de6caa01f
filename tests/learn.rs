//! Learn, then enforce: `aq run --learn` lets
//! asks run and keeps blocks, `aq policy suggest` turns what asked into
//! exactly the lines that allow it, `--write` writes the user's file only,
//! and `aq audit summary` counts across sessions.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::util::Env;

fn mode_of(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn lines_of(suggest: &Value) -> Vec<(String, u64, bool)> {
    suggest["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["line"].as_str().unwrap().to_string(),
                l["needed"].as_u64().unwrap(),
                l["already_granted"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn learn_mode_runs_asks_keeps_blocks_and_suggest_proposes_exactly_their_lines() {
    // No approver, no waiting: without learn mode each ask would be denied.
    let env = Env::new();
    env.write(
        &env.work().join("r.sh"),
        "touch f g\n\
         chmod +x f && echo chmod-ran\n\
         chmod 755 g\n\
         git push --force origin main; echo \"push $?\"\n",
    );
    let run = env.aq(&["run", "--learn", "--", "sh", "r.sh"]);
    run.code(0)
        .stdout_has("chmod-ran")
        .stdout_has("push 126")
        .stderr_has("learn mode");
    assert_eq!(mode_of(&env.work().join("f")) & 0o100, 0o100);
    assert_eq!(mode_of(&env.work().join("g")), 0o755);
    let session = env.only_session();
    let start = &session.events_of("session_start")[0];
    assert_eq!(start["mode"], "learn", "{start}");
    let answers: Vec<(String, String)> = session
        .shim_approvals()
        .iter()
        .map(|a| {
            (
                a["argv"][0].as_str().unwrap_or_default().to_string(),
                a["answer"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        vec![
            ("chmod".to_string(), "learn".to_string()),
            ("chmod".to_string(), "learn".to_string())
        ],
        "{}",
        session.log_text()
    );
    // The recap says so, and lists no ask of learn mode as refused.
    env.aq(&["audit"])
        .code(0)
        .stdout_has("learn mode: 2 asks ran without waiting")
        .stdout_lacks("aq allow --command 'chmod'");

    // One line covers both asks; the block is listed as not suggested.
    let suggest = env.aq(&["policy", "suggest", "--json"]).json();
    assert_eq!(
        lines_of(&suggest),
        vec![("aq allow --command 'chmod'".to_string(), 2, false)],
        "{suggest}"
    );
    assert_eq!(suggest["lines"][0]["sessions"], json!([session.id()]));
    assert_eq!(
        suggest["lines"][0]["covers"],
        json!(["aq allow --command 'chmod 755'"])
    );
    assert!(
        suggest["lines"][0]["policy_entry"]
            .as_str()
            .unwrap()
            .contains("id = \"grant-allow-chmod\""),
        "{suggest}"
    );
    let not: Vec<(&str, &str)> = suggest["not_suggested"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["kind"].as_str().unwrap(), n["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(not, vec![("blocked", "git-push-force")], "{suggest}");
    // Nothing is written without --write.
    env.aq(&["policy", "suggest"])
        .code(0)
        .stdout_has("aq allow --command 'chmod'")
        .stdout_has("not suggested:")
        .stdout_has("nothing written");
    assert!(!env.user_policy().exists());

    // --write: the user's file, never the repository's.
    env.aq(&["policy", "suggest", "--write"])
        .code(0)
        .stdout_has("aq: added [[rule]] grant-allow-chmod");
    let written = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(written.contains("id = \"grant-allow-chmod\""), "{written}");
    assert!(!env.project_policy().exists());
    env.aq(&["check"]).code(0);
    // A second suggest proposes nothing new.
    let again = env.aq(&["policy", "suggest", "--json"]).json();
    assert_eq!(
        lines_of(&again),
        vec![("aq allow --command 'chmod'".to_string(), 2, true)],
        "{again}"
    );
    env.aq(&["policy", "suggest"])
        .code(0)
        .stdout_has("nothing to suggest")
        .stdout_lacks("nothing written");
}

#[test]
fn a_repository_cannot_put_its_sessions_in_learn_mode() {
    let env = Env::new();
    env.write(
        &env.project_policy(),
        "version = 1\n\n[profile.strict]\nmode = \"learn\"\n",
    );
    env.write(&env.work().join("r.sh"), "touch f\nchmod +x f\n");
    env.aq(&["run", "--", "sh", "r.sh"]).code(126);
    let session = env.only_session();
    assert!(session.events_of("session_start")[0].get("mode").is_none());
    assert!(
        session
            .shim_approvals()
            .iter()
            .all(|a| a["answer"] != "learn"),
        "{}",
        session.log_text()
    );
    assert_eq!(mode_of(&env.work().join("f")) & 0o100, 0);
}

/// A session directory with a hand-written log (no chain: the summary
/// does not verify).
fn fake_session(env: &Env, id: &str, events: &[Value]) {
    let dir = env.sessions_dir().join(id);
    let text: String = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            e["seq"] = json!(i + 1);
            e["session"] = json!(id);
            e["prev"] = json!("x");
            format!("{e}\n")
        })
        .collect();
    env.write(&dir.join("log.jsonl"), &text);
}

fn decision(ts: &str, decision: &str, rules: &[&str]) -> Value {
    json!({"ts": ts, "event": "command_decision", "argv": ["x"], "cwd": "/w", "pid": 1,
           "ppid": 0, "decision": decision, "rules": rules, "why": null, "safer": null,
           "source": "shim"})
}

fn answer(ts: &str, answer: &str) -> Value {
    json!({"ts": ts, "event": "approval", "request": "r", "argv": ["x"],
           "answer": answer, "by": "test"})
}

fn refused(ts: &str, host: &str) -> Value {
    json!({"ts": ts, "event": "network_connection", "host": host, "port": 443,
           "addr": null, "decision": "denied", "rule": "net-not-allowlisted",
           "reason": null, "front_end": "http-connect", "bytes_up": 0,
           "bytes_down": 0, "duration_ms": 0})
}

#[test]
fn audit_summary_all_counts_two_sessions_exactly() {
    let env = Env::new();
    fake_session(
        &env,
        "20250101T100000Z-00000001",
        &[
            decision("2025-01-01T10:00:00.000Z", "allow", &[]),
            decision("2025-01-01T10:00:01.000Z", "ask", &["fs-permissions"]),
            answer("2025-01-01T10:00:01.100Z", "learn"),
            decision("2025-01-01T10:00:02.000Z", "block", &["git-push-force"]),
            refused("2025-01-01T10:00:03.000Z", "a.example"),
        ],
    );
    fake_session(
        &env,
        "20250102T090000Z-00000002",
        &[
            decision("2025-01-02T09:00:00.000Z", "ask", &["fs-permissions"]),
            answer("2025-01-02T09:00:00.500Z", "no-approver"),
            decision("2025-01-02T09:00:01.000Z", "ask", &["pkg-install"]),
            answer("2025-01-02T09:00:01.500Z", "deny"),
            refused("2025-01-02T09:00:02.000Z", "a.example"),
            refused("2025-01-02T09:00:03.000Z", "b.example"),
        ],
    );
    let v = env.aq(&["audit", "summary", "--all", "--json"]).json();
    assert_eq!(
        v,
        json!({
            "sessions": 2,
            "first": "2025-01-01T10:00:00.000Z",
            "last": "2025-01-02T09:00:03.000Z",
            "commands": {"allow": 1, "ask": 3, "block": 1},
            "rules": [
                {"rule": "fs-permissions", "decision": "ask", "count": 2},
                {"rule": "git-push-force", "decision": "block", "count": 1},
                {"rule": "pkg-install", "decision": "ask", "count": 1},
            ],
            "hosts_refused": [
                {"host": "a.example:443", "count": 2, "rule": "net-not-allowlisted"},
                {"host": "b.example:443", "count": 1, "rule": "net-not-allowlisted"},
            ],
            "asks": 3,
            "answers": {"deny": 1, "learn": 1, "no-approver": 1},
            "skipped_lines": 0,
        })
    );
    env.aq(&["audit", "summary", "--all"])
        .code(0)
        .stdout_has("2 sessions, 2025-01-01T10:00:00.000Z to 2025-01-02T09:00:03.000Z: 5 commands: 1 allowed, 3 asked, 1 blocked")
        .stdout_has("asks: 3; answers: 1 deny, 1 learn, 1 no-approver");
    // Both sessions are old: a recent window holds none.
    env.aq(&["audit", "summary", "--all", "--since", "1h"])
        .code(2)
        .stderr_has("no sessions to read");
    // Suggest reads them too: the hosts and the asks.
    let s = env.aq(&["policy", "suggest", "--all", "--json"]).json();
    assert_eq!(
        lines_of(&s),
        vec![
            ("aq allow --command 'x'".to_string(), 3, false),
            ("aq allow --net a.example:443".to_string(), 2, false),
            ("aq allow --net b.example:443".to_string(), 1, false),
        ],
        "{s}"
    );
}
