//! End-to-end tests of the audit log file: many writer processes at once,
//! writers killed mid-session, tampered files, and secrets that must never
//! reach the disk.
//!
//! The concurrency and kill tests run real processes: this test binary runs
//! itself again with `AQ_AUDIT_TEST_ROLE` set, and the `child_*` tests below
//! do the child's work only when that variable is set (otherwise they return
//! at once).

use std::fs::{self, File};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use aq_audit::{AuditLog, ChainProblem, EventBody, Record, Summary, verify};

const WRITERS: usize = 32;
const EVENTS_PER_WRITER: usize = 200;
const SESSION: &str = "session-test";

const ROLE: &str = "AQ_AUDIT_TEST_ROLE";
const LOG: &str = "AQ_AUDIT_TEST_LOG";
const GO: &str = "AQ_AUDIT_TEST_GO";
const WRITER_ID: &str = "AQ_AUDIT_TEST_WRITER";

fn exit_event(argv: Vec<String>) -> EventBody {
    EventBody::CommandExit {
        argv,
        exit_code: Some(0),
        signal: None,
        duration_ms: 1,
    }
}

fn ts() -> String {
    "2025-01-01T00:00:00Z".to_string()
}

/// Runs one `child_*` test of this binary in a new process.
fn spawn_child(test: &str, role: &str, envs: &[(&str, &Path)], writer: usize) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(WRITER_ID, writer.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (key, value) in envs {
        command.env(key, value);
    }
    command.spawn().unwrap()
}

fn env_path(key: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(key).unwrap())
}

fn assert_verifies(path: &Path) -> u64 {
    let report = verify(BufReader::new(File::open(path).unwrap())).unwrap();
    assert!(report.ok, "{report}");
    assert!(!report.torn_tail, "{report}");
    report.lines
}

/// Child side of `concurrent_writers_keep_every_line_and_the_chain`: waits
/// for the go file so that all writers start together, then appends.
#[test]
fn child_writer() {
    if std::env::var(ROLE).as_deref() != Ok("writer") {
        return;
    }
    let id = std::env::var(WRITER_ID).unwrap();
    let go = env_path(GO);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !go.exists() {
        assert!(Instant::now() < deadline, "writer {id}: no go signal");
        std::thread::sleep(Duration::from_millis(1));
    }
    let log = AuditLog::open(env_path(LOG)).unwrap();
    for i in 0..EVENTS_PER_WRITER {
        let argv = vec!["writer".to_string(), id.clone(), i.to_string()];
        log.append(exit_event(argv), ts(), SESSION).unwrap();
    }
}

#[test]
fn concurrent_writers_keep_every_line_and_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let go = dir.path().join("go");
    let children: Vec<Child> = (0..WRITERS)
        .map(|id| spawn_child("child_writer", "writer", &[(LOG, &log), (GO, &go)], id))
        .collect();
    File::create(&go).unwrap();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer process failed");
    }

    let text = fs::read_to_string(&log).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), WRITERS * EVENTS_PER_WRITER);
    // Every line is a whole event; each writer's events are all there, in
    // the order it wrote them.
    let mut next = vec![0usize; WRITERS];
    for (n, line) in text.lines().enumerate() {
        let Record::Event(event) = Record::parse(line).unwrap() else {
            panic!("line {}: unexpected kind: {line}", n + 1);
        };
        assert_eq!(event.seq, n as u64 + 1);
        let argv = event.body.argv().unwrap();
        let id: usize = argv[1].parse().unwrap();
        let i: usize = argv[2].parse().unwrap();
        assert_eq!(i, next[id], "writer {id} out of order at line {}", n + 1);
        next[id] += 1;
    }
    assert_eq!(next, vec![EVENTS_PER_WRITER; WRITERS]);
    assert_eq!(assert_verifies(&log), 6_400);
}

/// Child side of `killed_writer_leaves_a_usable_log`: appends until killed.
#[test]
fn child_endless_writer() {
    if std::env::var(ROLE).as_deref() != Ok("endless") {
        return;
    }
    let log = AuditLog::open(env_path(LOG)).unwrap();
    // Bounded so that a lost child cannot run forever.
    let deadline = Instant::now() + Duration::from_secs(60);
    let padding = "p".repeat(2000);
    let mut i = 0u64;
    while Instant::now() < deadline {
        let argv = vec!["endless".to_string(), i.to_string(), padding.clone()];
        log.append(exit_event(argv), ts(), SESSION).unwrap();
        i += 1;
    }
}

#[test]
fn killed_writer_leaves_a_usable_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut child = spawn_child("child_endless_writer", "endless", &[(LOG, &log)], 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while fs::metadata(&log).map(|m| m.len()).unwrap_or(0) < 200_000 {
        assert!(Instant::now() < deadline, "the writer wrote too little");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL, at whatever point it is
    child.wait().unwrap();

    // Whatever the kill left, what was complete verifies...
    let report = verify(BufReader::new(File::open(&log).unwrap())).unwrap();
    assert!(report.ok, "{report}");
    // ...and the next writer continues the chain.
    let event = AuditLog::open(&log)
        .unwrap()
        .append(exit_event(vec!["after".into()]), ts(), SESSION)
        .unwrap();
    assert_eq!(event.seq, report.lines + 1);
    assert_eq!(assert_verifies(&log), report.lines + 1);
}

#[test]
fn torn_line_is_dropped_by_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let log = AuditLog::open(&path).unwrap();
    for i in 0..3 {
        log.append(exit_event(vec![i.to_string()]), ts(), SESSION)
            .unwrap();
    }
    // What a writer killed in the middle of its write could leave.
    let mut file = File::options().append(true).open(&path).unwrap();
    file.write_all(br#"{"seq":4,"ts":"2025-01-01T00:00:00Z","session":"session-te"#)
        .unwrap();
    let torn = verify(BufReader::new(File::open(&path).unwrap())).unwrap();
    assert!(torn.ok && torn.torn_tail && torn.lines == 3, "{torn}");
    let summary = Summary::from_reader(BufReader::new(File::open(&path).unwrap())).unwrap();
    assert_eq!(summary.counts.skipped_lines, 1);

    let event = log
        .append(exit_event(vec!["next".into()]), ts(), SESSION)
        .unwrap();
    assert_eq!(event.seq, 4);
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.lines().all(|line| Record::parse(line).is_ok()),
        "{text}"
    );
    assert!(!text.contains("session-te\""), "the torn bytes are gone");
    assert_eq!(assert_verifies(&path), 4);
}

fn ten_event_log(dir: &Path) -> PathBuf {
    let path = dir.join("session.jsonl");
    let log = AuditLog::open(&path).unwrap();
    for i in 1..=10 {
        log.append(
            exit_event(vec!["cmd".into(), format!("n{i}")]),
            ts(),
            SESSION,
        )
        .unwrap();
    }
    path
}

fn edit_line(path: &Path, line_no: usize, edit: impl Fn(&str) -> String) {
    let text = fs::read_to_string(path).unwrap();
    let edited: String = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let line = if i + 1 == line_no {
                edit(line)
            } else {
                line.to_string()
            };
            line + "\n"
        })
        .collect();
    assert_ne!(edited, text);
    fs::write(path, edited).unwrap();
}

#[test]
fn edited_value_in_line_5_is_caught_at_line_6() {
    let dir = tempfile::tempdir().unwrap();
    let path = ten_event_log(dir.path());
    // One byte: "n5" becomes "m5"; line 5 is still a valid event.
    edit_line(&path, 5, |line| line.replace("\"n5\"", "\"m5\""));
    let report = verify(BufReader::new(File::open(&path).unwrap())).unwrap();
    assert!(!report.ok);
    let bad = report.first_bad.unwrap();
    assert_eq!(bad.line, 6);
    assert_eq!(bad.problem, ChainProblem::PrevMismatch { previous_line: 5 });
    assert!(bad.to_string().contains("line 5 was changed"), "{bad}");
}

#[test]
fn broken_line_5_is_caught_at_line_5() {
    let dir = tempfile::tempdir().unwrap();
    let path = ten_event_log(dir.path());
    edit_line(&path, 5, |line| line.replacen("\"seq\":5", "\"seq\":5x", 1));
    let report = verify(BufReader::new(File::open(&path).unwrap())).unwrap();
    let bad = report.first_bad.unwrap();
    assert_eq!(bad.line, 5);
    assert!(matches!(bad.problem, ChainProblem::Malformed { .. }));
}

#[test]
fn deleted_line_is_caught_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = ten_event_log(dir.path());
    let text = fs::read_to_string(&path).unwrap();
    let kept: String = text
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 4)
        .map(|(_, line)| format!("{line}\n"))
        .collect();
    fs::write(&path, kept).unwrap();
    let report = verify(BufReader::new(File::open(&path).unwrap())).unwrap();
    assert_eq!(report.first_bad.unwrap().line, 5);
}

#[test]
fn secrets_in_arguments_never_reach_the_file() {
    let secrets = [
        "hunter2-db-password",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "abc123bearertoken",
        "s3cr3t-url-pass",
        "AKIAIOSFODNN7EXAMPLE",
        "sk-ant-api03-abcdefghij0123456789ABCDEFGHIJ",
        "q-token-value-42",
    ];
    let [db, github, bearer, url_pass, aws, anthropic, query] = secrets;
    let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let log = AuditLog::open(&path).unwrap();
    let curl = argv(&[
        "curl",
        "-H",
        &format!("Authorization: Bearer {bearer}"),
        &format!("https://bob:{url_pass}@example.com/x?token={query}"),
    ]);
    let bodies = vec![
        EventBody::SessionStart {
            aq_version: "0.1.0".into(),
            workspace: "/w".into(),
            profile: "default".into(),
            policy_digest: "sha256:0".into(),
            command: argv(&["agent", "--api-key", anthropic]),
            pid: 1,
            layers: vec!["shims".into()],
            grants: None,
            mode: None,
        },
        EventBody::CommandDecision {
            argv: curl.clone(),
            cwd: "/w".into(),
            pid: 2,
            ppid: 1,
            decision: "ask".into(),
            rules: vec!["net-curl".into()],
            why: Some(format!("sends AWS key {aws}")),
            safer: Some(format!("PGPASSWORD={db} psql")),
            source: "shim".into(),
            exe: None,
            found: None,
            identity: None,
        },
        EventBody::Approval {
            request: "r1".into(),
            argv: curl.clone(),
            answer: "once".into(),
            by: "aq approve (tty /dev/pts/3, uid 1000)".into(),
        },
        EventBody::CommandExit {
            argv: argv(&["sh", "-c", &format!("GITHUB_TOKEN={github} gh pr list")]),
            exit_code: Some(0),
            signal: None,
            duration_ms: 5,
        },
        EventBody::CommandExit {
            argv: argv(&["mysql", &format!("--password={db}")]),
            exit_code: Some(1),
            signal: None,
            duration_ms: 5,
        },
        EventBody::SessionEnd {
            exit_code: Some(0),
            duration_ms: 10,
        },
    ];
    for body in bodies {
        let event = log.append(body, ts(), SESSION).unwrap();
        let returned = serde_json::to_string(&event).unwrap();
        for secret in secrets {
            assert!(!returned.contains(secret), "{secret} in {returned}");
        }
    }

    let text = fs::read_to_string(&path).unwrap();
    for secret in secrets {
        assert!(!text.contains(secret), "{secret} reached the file:\n{text}");
    }
    assert!(text.contains("[REDACTED]"));
    // What is left still says what happened.
    assert!(text.contains("gh pr list"), "{text}");
    assert!(
        text.contains("https://bob:[REDACTED]@example.com/x?token=[REDACTED]"),
        "{text}"
    );
    assert_eq!(assert_verifies(&path), 6);

    let summary = Summary::from_reader(BufReader::new(File::open(&path).unwrap())).unwrap();
    let markdown = summary.to_markdown();
    assert!(markdown.contains("## Asked"), "{markdown}");
    assert!(markdown.contains("Answer: once"), "{markdown}");
    for rendered in [markdown, summary.to_json().unwrap(), summary.recap()] {
        for secret in secrets {
            assert!(!rendered.contains(secret), "{secret} in a report");
        }
    }
}

#[test]
fn a_batch_continues_the_chain_and_is_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let log = AuditLog::open(&path).unwrap();
    log.append(exit_event(vec!["one".into()]), ts(), SESSION)
        .unwrap();
    let batch = (0..3)
        .map(|k| {
            let argv = vec![
                "curl".into(),
                "-H".into(),
                format!("Authorization: Bearer batch{k}secrettoken"),
            ];
            (exit_event(argv), ts())
        })
        .collect();
    let events = log.append_all(batch, SESSION).unwrap();
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [2, 3, 4]);
    log.append(exit_event(vec!["five".into()]), ts(), SESSION)
        .unwrap();
    assert_eq!(assert_verifies(&path), 5);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("secrettoken"), "{text}");
}
