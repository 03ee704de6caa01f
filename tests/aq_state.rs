//! aq's own places stay out of a session's reach: `aq run` in a home that
//! is not a git repository would make the whole home the
//! workspace, so the session could edit `~/.bashrc` and aq's policy,
//! approve its own asks by appending to its approvals file, and stop its own
//! log with one junk line (after a warning, commands ran on unlogged).

use std::time::{Duration, Instant};

use crate::util::Env;

#[test]
fn a_workspace_that_is_the_home_or_holds_aqs_state_is_refused() {
    let env = Env::new();
    let home = env.root().join("home");
    env.write(&home.join(".bashrc"), "# the user's\n");
    // Inside every workspace tried, so it would be written if one ran.
    let marker = home.join("ran");
    let touch = format!("touch {}", marker.display());
    // Started in the home, which is no git repository: refused, nothing runs.
    let out = env.aq_in(&home, &["run", "--quiet", "--", "sh", "-c", &touch]);
    out.code(2)
        .stderr_has("your home directory")
        .stderr_has("--workspace DIR");
    // Named outright, or a directory that holds the home or aq's state.
    for ws in [
        home.clone(),
        env.root().to_path_buf(),
        env.state_home(),
        env.sessions_dir(),
        env.config_dir(),
    ] {
        std::fs::create_dir_all(&ws).unwrap();
        let w = ws.display().to_string();
        env.aq(&[
            "run",
            "--quiet",
            "--workspace",
            &w,
            "--",
            "sh",
            "-c",
            &touch,
        ])
        .code(2)
        .stderr_has("refused: the workspace");
    }
    assert!(!marker.exists(), "a refused session ran its command");
    // Control: a project directory in the home runs.
    let project = home.join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    env.aq_in(&project, &["run", "--quiet", "--", "sh", "-c", "touch ran"])
        .code(0);
    assert!(project.join("ran").exists());
}

#[test]
fn aqs_state_and_policy_stay_read_only_where_a_profile_makes_their_parent_writable() {
    // `dev` makes /tmp writable, and this scratch home (with aq's state and
    // configuration) is under /tmp: the session must still not write them.
    let env = Env::with_policy("", "");
    env.write(
        &env.work().join("attack.sh"),
        "d=\"$AQ_SESSION_DIR\"\n\
         (echo once > \"$d/approvals/answers/forged\") 2>/dev/null && echo 'answer:written'\n\
         (echo junk >> \"$d/log.jsonl\") 2>/dev/null && echo 'log:appended'\n\
         (echo '[rules]' >> \"$XDG_CONFIG_HOME/agent-quarantine/policy.toml\") 2>/dev/null && echo 'policy:written'\n\
         (mkdir \"$d/../forged-session\") 2>/dev/null && echo 'sessions:written'\n\
         (echo '{}' > \"$XDG_STATE_HOME/agent-quarantine/tool-dirs.json\") 2>/dev/null && echo 'record:written'\n\
         echo ok > \"$TMPDIR/scratch\" && echo 'tmpdir:written'\n\
         echo ok > \"$(dirname \"$XDG_STATE_HOME\")/beside-state\" && echo 'tmp:written'\n\
         exit 0\n",
    );
    let out = env.aq(&[
        "run",
        "--quiet",
        "--profile",
        "dev",
        "--",
        "sh",
        "attack.sh",
    ]);
    out.code(0)
        .stdout_has("tmpdir:written")
        .stdout_has("tmp:written")
        .stdout_lacks("answer:written")
        .stdout_lacks("log:appended")
        .stdout_lacks("policy:written")
        .stdout_lacks("sessions:written")
        .stdout_lacks("record:written");
    let session = env.only_session();
    assert!(!session.dir.join("approvals/answers/forged").exists());
    env.aq(&["audit", "verify", &session.id()])
        .code(0)
        .stdout_has("chain intact");
    // The reason is the read-only bind, not a missing path.
    env.write(
        &env.work().join("why.sh"),
        "echo junk >> \"$AQ_SESSION_DIR/log.jsonl\"\n",
    );
    env.aq(&["run", "--quiet", "--profile", "dev", "--", "sh", "why.sh"])
        .stderr_has("Read-only file system");
}

#[test]
fn a_log_that_cannot_be_written_ends_the_session() {
    // Damage the log from outside while the session runs (nothing inside
    // can any more): the next exec is not logged, so the session ends with
    // 125 instead of going on unlogged.
    let env = Env::with_policy("", "");
    let started = env.work().join("started");
    let go = env.work().join("go");
    let after = env.work().join("after");
    let script = format!(
        "touch {s}\nwhile [ ! -e {g} ]; do sleep 0.05; done\n/bin/true\n/bin/true\nsleep 3\ntouch {a}\n",
        s = started.display(),
        g = go.display(),
        a = after.display()
    );
    env.write(&env.work().join("steps.sh"), &script);
    let running = env.spawn(&["run", "--quiet", "--", "sh", "steps.sh"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the session never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let session = env.only_session();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(session.dir.join("log.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut log, b"not an event\n").unwrap();
    std::fs::write(&go, "").unwrap();
    let out = running.finish();
    out.code(125)
        .stderr_has("audit log cannot be written")
        .stderr_has("ending the session");
    assert!(!after.exists(), "the session went on after its log failed");
}

/// `aq hook claude` for `command` as Claude Code sends it; its stdout.
fn claude_hook(env: &Env, command: &str) -> String {
    use std::io::Write;
    let payload = serde_json::json!({
        "session_id": "sess-log-damage",
        "cwd": env.work(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_fake_0002",
    });
    let mut cmd = env.command(&env.work(), &["hook", "claude"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("aq hook claude");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn in_hook_mode_a_damaged_log_refuses_rather_than_run_unlogged() {
    let env = Env::with_policy("", "");
    let first = claude_hook(&env, "ls");
    assert!(!first.contains("\"deny\""), "{first}");
    let session = env.only_session();
    let log = session.dir.join("log.jsonl");
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut f, b"not an event\n").unwrap();
    let second = claude_hook(&env, "ls");
    assert!(second.contains("\"deny\""), "{second}");
    assert!(second.contains("audit log cannot be written"), "{second}");
}

#[test]
fn a_hook_that_cannot_decide_in_time_refuses() {
    // The decision runs in a child the hook answers for: an event that never
    // ends (the agent's pipe held open) gets a refusal, not a hung or dead
    // hook, which an agent would take as a failed hook and run the command.
    use std::io::Write;
    let env = Env::with_policy("", "");
    let mut cmd = env.command(&env.work(), &["hook", "claude"]);
    cmd.env("AQ_HOOK_DEADLINE_MS", "300")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("aq hook claude");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"tool_name\": \"Bash\", ").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"deny\""), "{text}");
    assert!(text.contains("no answer within 300 ms"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Control: the same hook with the whole event decides (and allows `ls`).
    let allowed = claude_hook(&env, "ls");
    assert!(!allowed.contains("\"deny\""), "{allowed}");
}

/// The records aq keeps between sessions to spare listings (the exec
/// guard's `tool-dirs.json`, the shims' `shim-dirs.json`): a command in
/// `strict`, as an unprivileged user, can neither replace nor create them;
/// the same user outside the sandbox can (the control).
#[test]
fn a_sandboxed_command_cannot_forge_the_records_that_spare_listings() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return; // needs root to run as another user; the root test above runs
    }
    let (root, aq, uid, gid) = crate::util::user_scratch(
        "aq-unpriv-records-",
        &["home", "state", "config", "work/.git"],
    );
    let r = root.path();
    std::fs::write(
        r.join("work/forge.sh"),
        "for f in tool-dirs.json shim-dirs.json; do\n\
         if { echo '{}' > \"$XDG_STATE_HOME/agent-quarantine/$f\"; } 2>/dev/null; \
         then echo \"FORGED-$f\"; else echo \"REFUSED-$f\"; fi\n\
         done\n",
    )
    .unwrap();
    std::os::unix::fs::chown(r.join("work/forge.sh"), Some(uid), Some(gid)).unwrap();
    let run = |profile: &str| crate::util::script_as_user(r, &aq, (uid, gid), profile, "forge.sh");
    // Records as a session leaves them, the user's own files.
    let dir = r.join("state/agent-quarantine");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
    for f in ["tool-dirs.json", "shim-dirs.json"] {
        std::fs::write(dir.join(f), "{\"names\":\"kept\",\"dirs\":[]}").unwrap();
        std::os::unix::fs::chown(dir.join(f), Some(uid), Some(gid)).unwrap();
    }
    let (out, err) = run("strict");
    for f in ["tool-dirs.json", "shim-dirs.json"] {
        assert!(out.contains(&format!("REFUSED-{f}")), "{out}{err}");
        // Not forged: the sandbox never wrote `{}` over it (the session's
        // own index may have replaced it with a real record).
        let now = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(now.starts_with("{\"names\":"), "{f}: {now}");
    }
    // The control: without the sandbox the same user writes them.
    let (out, err) = run("shims-only");
    for f in ["tool-dirs.json", "shim-dirs.json"] {
        assert!(out.contains(&format!("FORGED-{f}")), "{out}{err}");
        assert_eq!(std::fs::read_to_string(dir.join(f)).unwrap(), "{}\n");
    }
}
