//! `aq watch`: the live console under tmux (send-keys answers an ask,
//! capture-pane reads the screen), its refusals, and `--json`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::approve::{twice_inside_a_session, wait_for_pending};
use crate::util::{Env, Running, Session, Tmux, aq_line};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A workspace with `f` (mode 0644) and `s.sh` holding `script`.
fn workspace_with(env: &Env, script: &str) {
    let f = env.work().join("f");
    env.write(&f, "");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.write(&env.work().join("s.sh"), script);
}

/// A session waiting on an ask for `command`, and its `aq run`.
fn session_asking(env: &Env, script: &str, command: &str) -> (Running, Session) {
    workspace_with(env, script);
    let mut run = env.spawn(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    let session = wait_for_pending(env, &mut run, command);
    (run, session)
}

/// `aq watch ARGS` in a tmux pane with the scratch environment; when it
/// exits the pane says so and runs a shell (prompt `shell> `).
fn watch_in_tmux(env: &Env, test: &str, args: &[&str]) -> Tmux {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        panic!("no tmux: `aq watch` is tested in a tmux pane (CI installs tmux)");
    }
    let mut words = vec!["watch"];
    words.extend_from_slice(args);
    let line = format!(
        "env -u AQ_SESSION_DIR -u AQ_SESSION_ID HOME='{}' XDG_CONFIG_HOME='{}' XDG_STATE_HOME='{}' {}; echo \"watch exited $?\"; PS1='shell> ' exec sh",
        env.root().join("home").display(),
        env.root().join("config").display(),
        env.state_home().display(),
        aq_line(&words),
    );
    let name = format!("aq-watch-{test}-{}", std::process::id());
    Tmux::start(&name, &env.work(), &line).expect("tmux did not start")
}

/// The one approval answered for a shim in `session`'s log.
#[track_caller]
fn only_approval(session: &Session) -> Value {
    let approvals = session.shim_approvals();
    assert_eq!(approvals.len(), 1, "{}", session.log_text());
    approvals[0].clone()
}

#[test]
fn watch_answers_an_ask_with_o_and_shows_it() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    let (run, session) =
        session_asking(&env, "chmod +x f\necho \"chmod exited $?\"\n", "chmod +x f");
    let tmux = watch_in_tmux(&env, "once", &[]);
    // The pending ask, with its rule, in the asks panel.
    tmux.wait_for("chmod +x f   fs-permissions");
    tmux.wait_for("blocked 0 · approved 0 · denied 0");
    tmux.keys(&["o"]);

    let out = run.finish();
    out.code(0).stdout_has("chmod exited 0");
    assert!(
        out.elapsed < Duration::from_secs(25),
        "answered, not timed out{}",
        out.dump()
    );
    assert_eq!(mode(&env.work().join("f")), 0o755);
    let approval = only_approval(&session);
    assert_eq!(approval["answer"], "once");
    assert_eq!(approval["argv"], serde_json::json!(["chmod", "+x", "f"]));
    assert!(
        approval["by"]
            .as_str()
            .is_some_and(|b| b.starts_with("aq watch on /dev/pts/")),
        "{approval}"
    );

    // The screen: what was answered, the new counts, the decision in the
    // history, the session's end.
    tmux.wait_for("answered allow once: chmod +x f");
    tmux.wait_for("approved 1 · denied 0");
    tmux.wait_for("approval once        aq watch on");
    tmux.wait_for("session  end, exit 0");
    tmux.wait_for("Pending asks (0)");

    // `q` leaves the console and gives the terminal back.
    tmux.keys(&["q"]);
    tmux.wait_for("watch exited 0");
    tmux.wait_for("shell>");
    let screen = tmux.screen();
    assert!(
        !screen.contains("Pending asks") && !screen.contains("aq watch ·"),
        "the console's screen is gone: {screen}"
    );
    tmux.keys(&["echo typed-$((40+2))", "Enter"]);
    tmux.wait_for("typed-42");
}

#[test]
fn watch_denies_an_ask_with_d() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    let (run, session) =
        session_asking(&env, "chmod +x f\necho \"chmod exited $?\"\n", "chmod +x f");
    let tmux = watch_in_tmux(&env, "deny", &["--session", &session.id()[..12]]);
    tmux.wait_for("chmod +x f   fs-permissions");
    tmux.keys(&["d"]);
    let out = run.finish();
    out.code(0)
        .stdout_has("chmod exited 126")
        .stderr_has("aq: not approved (denied): chmod +x f");
    assert_eq!(mode(&env.work().join("f")), 0o644);
    let approval = only_approval(&session);
    assert_eq!(approval["answer"], "deny");
    assert!(
        approval["by"]
            .as_str()
            .is_some_and(|b| b.starts_with("aq watch on ")),
        "{approval}"
    );
    tmux.wait_for("answered deny: chmod +x f");
    tmux.wait_for("approved 0 · denied 1");
    tmux.wait_for("approval deny        aq watch on");
}

#[test]
fn a_hostile_command_line_is_drawn_as_inert_text() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    let hostile = "g\x1b[2J<script>alert(1)</script>";
    let (run, session) = session_asking(
        &env,
        "chmod +x \"$(printf 'g\\033[2J<script>alert(1)</script>')\"\necho \"chmod exited $?\"\n",
        &format!("chmod +x {hostile}"),
    );
    let tmux = watch_in_tmux(&env, "hostile", &["--latest"]);
    // In the asks panel and in the history, the escape is a visible `␛`.
    tmux.wait_for("chmod +x g␛[2J<script>alert(1)</script>   fs-permissions");
    tmux.wait_for("fs-permissions       chmod +x g␛[2J<script>alert(1)</script>");
    // Had the escape reached the terminal, it would have cleared the lines
    // drawn before it, which the console does not redraw unless they change.
    let screen = tmux.screen();
    assert!(
        screen.starts_with("aq watch · 1 live session · allowed"),
        "{screen}"
    );
    assert!(screen.contains("┌Pending asks (1)"), "{screen}");
    tmux.keys(&["d"]);
    run.finish().code(0).stdout_has("chmod exited 126");
    // The log held the raw escape: it was the console that defused it.
    let approval = only_approval(&session);
    assert_eq!(approval["argv"][2], hostile);
    tmux.wait_for("answered deny: chmod +x g␛[2J<script>alert(1)</script>");
}

#[test]
fn watch_needs_a_terminal_unless_json() {
    let env = Env::new();
    env.aq(&["watch"])
        .code(2)
        .stderr_has("aq watch needs a real terminal on stdin and stdout");
    env.aq(&["watch", "--latest"])
        .code(2)
        .stderr_has("aq watch needs a real terminal on stdin and stdout");
    // --json needs none; without any session, --latest has nothing to follow.
    env.aq(&["watch", "--json", "--latest"])
        .code(2)
        .stderr_has("no sessions yet");
    env.aq(&["watch", "--json", "--session", "nope"])
        .code(2)
        .stderr_has("no session `nope`");
}

#[test]
fn watch_refuses_inside_a_session() {
    let env = Env::with_policy("", "");
    // `aq` by absolute path, on a real terminal: only the session check can
    // refuse. A console that started anyway would quit on the typed `q`.
    let Some(out) = twice_inside_a_session(&env, &aq_line(&["watch"]), "qq") else {
        return;
    };
    out.code(0)
        .stdout_has("with the session env: 2")
        .stdout_has("without it: 2")
        .stdout_lacks("Pending asks");
    let refusals = out
        .stdout
        .matches("aq watch cannot run inside an aq session: approvals must come from the user")
        .count();
    assert_eq!(refusals, 2, "{}", out.dump());
}

#[test]
fn watch_json_streams_a_session_as_logged_and_exits_when_it_ends() {
    // An ask nobody answers: denied after 2 s (the harness's timeout).
    let env = Env::with_policy("", "");
    workspace_with(&env, "ls\nchmod +x f\necho \"chmod exited $?\"\n");
    let mut run = env.spawn(&["run", "--profile", "shims-only", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "chmod +x f");
    // Started while the session runs: it reads what was logged, then
    // follows.
    let watch = env.spawn(&["watch", "--json", "--latest"]);
    let out = run.finish();
    out.code(0).stdout_has("chmod exited 126");
    let ended = Instant::now();
    let json = watch.finish_within(Duration::from_secs(30));
    json.code(0);
    assert!(
        ended.elapsed() < Duration::from_secs(5),
        "exits soon after the session ends{}",
        json.dump()
    );
    // Line for line the log, as logged.
    let log = session.log_text();
    assert_eq!(json.stdout, log, "{}", json.dump());
    let events: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    assert!(events.iter().all(|e| e["session"] == session.id().as_str()));
    let decisions: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["event"] == "command_decision")
        .map(|e| {
            (
                e["argv"][0].as_str().unwrap_or("").to_string(),
                e["decision"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(
        decisions.contains(&("ls".into(), "allow".into())),
        "{decisions:?}"
    );
    assert!(
        decisions.contains(&("chmod".into(), "ask".into())),
        "{decisions:?}"
    );
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"session_start"));
    assert_eq!(kinds.last(), Some(&"session_end"));
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "approval" && e["answer"] == "timeout"),
        "{log}"
    );
}

#[test]
fn watch_is_in_the_completions_and_the_manual() {
    let flags = crate::completions::bash_completes("aq watch --");
    for f in ["--session", "--latest", "--json"] {
        assert!(flags.lines().any(|l| l == f), "{f} in {flags:?}");
    }
    let env = Env::new();
    let out = env.root().join("man");
    env.aq(&["man", "--out", out.to_str().unwrap()]).code(0);
    let page = std::fs::read_to_string(out.join("aq-watch.1")).expect("aq-watch.1");
    assert!(page.contains("answer their asks"), "{page}");
    assert!(page.contains("\\-\\-json"), "{page}");
}

#[test]
fn watch_json_picks_up_sessions_that_start_while_it_runs() {
    let env = Env::with_policy("", "");
    workspace_with(&env, "ls\n");
    let spawned = Instant::now();
    let watch = env.spawn(&["watch", "--json"]);
    // Give it time to look for sessions (none yet) before one starts.
    std::thread::sleep(Duration::from_millis(700));
    env.aq(&[
        "run",
        "--profile",
        "shims-only",
        "--quiet",
        "--",
        "sh",
        "s.sh",
    ])
    .code(0);
    env.aq(&[
        "run",
        "--profile",
        "shims-only",
        "--quiet",
        "--",
        "sh",
        "s.sh",
    ])
    .code(0);
    let sessions = env.sessions();
    assert_eq!(sessions.len(), 2);
    // Without --session or --latest it runs until stopped: it is killed
    // 3 s after the sessions ended (it reads every 0.1 s, looks for new
    // sessions every 0.5 s).
    let out = watch.finish_within(spawned.elapsed() + Duration::from_secs(3));
    assert_eq!(out.code, None, "still running when killed{}", out.dump());
    for session in &sessions {
        let lines: Vec<&str> = out
            .stdout
            .lines()
            .filter(|l| l.contains(&format!("\"session\":\"{}\"", session.id())))
            .collect();
        let logged: Vec<String> = session.log_text().lines().map(String::from).collect();
        assert_eq!(lines, logged, "{}", out.dump());
    }
}

/// The pid of the `aq watch` running with this scratch environment.
fn watch_pid(env: &Env) -> u32 {
    let want = format!("XDG_STATE_HOME={}", env.state_home().display());
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            if words.get(1) != Some(&b"watch".as_slice()) {
                continue;
            }
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            if environ.split(|&b| b == 0).any(|v| v == want.as_bytes()) {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("no aq watch process for {want}");
}

#[test]
fn sigterm_and_sighup_end_watch_and_give_the_terminal_back() {
    for (signal, name) in [(libc::SIGTERM, "term"), (libc::SIGHUP, "hup")] {
        let env = Env::with_policy("", "");
        let tmux = watch_in_tmux(&env, name, &[]);
        tmux.wait_for("Pending asks (0)");
        let pid = watch_pid(&env);
        // SAFETY: a signal to a process this test started (through tmux).
        assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
        // Killed by the signal, the shell would say 143 or 129 and leave
        // the terminal raw on the alternate screen.
        tmux.wait_for("watch exited 0");
        tmux.wait_for("shell>");
        assert!(
            !tmux.screen().contains("Pending asks"),
            "the console's screen is gone after {name}: {}",
            tmux.screen()
        );
        tmux.keys(&[
            "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '; echo stty-done",
            "Enter",
        ]);
        tmux.wait_for("stty-done");
        let screen = tmux.screen();
        let line = screen
            .lines()
            .rev()
            .find(|l| l.contains("stty-done") && !l.contains("grep"))
            .unwrap_or_default()
            .to_string();
        assert!(
            line.contains("icanon echo") && !line.contains("-icanon"),
            "cooked mode and echo are back after {name}: {line:?}\n{screen}"
        );
    }
}

/// Calls `aq hook claude` as Claude Code would for `command`, in the
/// agent session `agent_session`.
pub(crate) fn claude_hook(env: &Env, agent_session: &str, command: &str) {
    let payload = serde_json::json!({
        "session_id": agent_session,
        "cwd": env.work(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_fake_0001",
    });
    let mut cmd = env.command(&env.work(), &["hook", "claude"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("aq hook claude");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn watch_follows_an_agents_hook_session_written_to_lately() {
    let env = Env::with_policy("", "");
    let agent_session = "11111111-2222-4333-8444-777777777777";
    // Decided before `aq watch` started: shown, the session is recent.
    claude_hook(&env, agent_session, "ls -la");
    let watch = env.spawn(&["watch", "--json"]);
    std::thread::sleep(Duration::from_millis(1500));
    // Decided while it runs: the hook session has no supervisor and no end,
    // and is still followed.
    claude_hook(&env, agent_session, "git push --force origin main");
    std::thread::sleep(Duration::from_millis(1000));
    let out = watch.finish_within(Duration::from_millis(3500));
    let records: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let decided = |argv0: &str| {
        records
            .iter()
            .find(|r| r["event"] == "command_decision" && r["argv"][0] == argv0)
            .cloned()
    };
    let first = decided("ls -la").unwrap_or_else(|| panic!("{}", out.dump()));
    assert_eq!(first["source"], "hook:claude");
    let later = decided("git push --force origin main")
        .unwrap_or_else(|| panic!("the decision made while watching: {}", out.dump()));
    assert_eq!(later["decision"], "block");
    assert!(
        later["session"]
            .as_str()
            .is_some_and(|s| s.starts_with("hook-claude-")),
        "{later}"
    );
}

#[test]
fn watch_ends_when_its_terminal_goes_away() {
    let env = Env::with_policy("", "");
    let tmux = watch_in_tmux(&env, "hangup", &[]);
    tmux.wait_for("Pending asks (0)");
    let pid = watch_pid(&env);
    // The pane closes (as an ssh session that drops): the terminal hangs
    // up; reading it gives end-of-file forever. A console that keeps
    // polling it spins a CPU for ever, orphaned.
    drop(tmux);
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "aq watch still runs {} s after its terminal went away: {stat}",
        start.elapsed().as_secs()
    );
}

/// A network ask in `aq watch`: the destination and the process are on
/// screen, `a` answers "always", the connection goes through and the
/// user's policy gets the grant.
#[test]
fn watch_answers_a_network_ask_with_always() {
    let port = crate::network::hello_server();
    let env = Env::with_policy("approval_timeout_secs = 30", "\"net-fetch\" = \"allow\"\n");
    env.write(
        &env.work().join("n.sh"),
        &format!("echo \"got:$(curl -s http://other.example.invalid:{port}/)\"\n"),
    );
    let mut run = env.spawn(&[
        "run",
        "--net",
        "allow:allowed.example.invalid",
        "--resolve",
        "other.example.invalid:127.0.0.1",
        "--",
        "sh",
        "n.sh",
    ]);
    let session = wait_for_pending(
        &env,
        &mut run,
        &format!("curl -s http://other.example.invalid:{port}/"),
    );
    let tmux = watch_in_tmux(&env, "net", &[]);
    tmux.wait_for(&format!(
        "connect to other.example.invalid:{port} from curl"
    ));
    tmux.wait_for("a always (a host)");
    tmux.keys(&["a"]);
    let out = run.finish();
    out.code(0).stdout_has("got:hello");
    let approvals: Vec<Value> = session
        .events_of("approval")
        .into_iter()
        .filter(|a| a["argv"][0] == "net")
        .collect();
    assert_eq!(approvals.len(), 1, "{}", session.log_text());
    assert_eq!(approvals[0]["answer"], "always");
    let policy = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(
        policy.contains(&format!("\"other.example.invalid:{port}\"")),
        "{policy}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("watch exited 0");
}
