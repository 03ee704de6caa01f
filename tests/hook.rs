//! `aq hook AGENT` in hook mode, where there is no sandbox and the engine
//! is the only wall: code hidden in data bash evaluates, names rebound,
//! environment dumps, writes judged by their target, end to end.
//!
//! Each attack is a real line that bash runs to effect: a control runs it
//! with bash and finds what it did (a marker file, a changed file, a key
//! printed). Given to `aq hook` in the agent's own payload, the answer
//! refuses it (Claude Code's `deny` or `ask`, Gemini CLI's and Codex's
//! `deny`) naming the rule that decided, and the agent, played here by the
//! test doing what the agent does with the answer, never runs it. A benign
//! line of each class is let through and runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::util::Env;

/// The agents driven here, with their payloads and answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Claude,
    Gemini,
    Codex,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
        }
    }

    /// The event the agent sends before its shell tool runs `command`
    /// (shapes from `crates/aq-agents/tests/fixtures/hooks/`).
    fn payload(self, env: &Env, command: &str) -> String {
        let cwd = env.work().display().to_string();
        match self {
            Agent::Claude => json!({
                "session_id": "11111111-2222-4333-8444-262626262626",
                "transcript_path": "/home/user/.claude/projects/p/x.jsonl",
                "cwd": cwd,
                "permission_mode": "default",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command, "description": "step"},
                "tool_use_id": "toolu_fake_0026",
            }),
            Agent::Codex => json!({
                "session_id": "11111111-2222-7333-8444-262626262626",
                "turn_id": "11111111-2222-7333-8444-666666666666",
                "cwd": cwd,
                "hook_event_name": "PreToolUse",
                "model": "fake-model",
                "permission_mode": "default",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "tool_use_id": "call_0026",
            }),
            Agent::Gemini => json!({
                "session_id": "11111111-2222-4333-8444-262626262627",
                "cwd": cwd,
                "hook_event_name": "BeforeTool",
                "timestamp": "2026-11-30T12:19:47.277Z",
                "tool_name": "run_shell_command",
                "tool_input": {"command": command, "description": "step"},
            }),
        }
        .to_string()
    }
}

/// What the agent makes of aq's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// No objection: the agent's own rules decide, and it runs.
    Runs,
    /// The agent asks its user (Claude Code's `ask`): it does not run now.
    Asks(String),
    /// Refused, with the reason the model reads.
    Refuses(String),
}

impl Answer {
    fn reason(&self) -> &str {
        match self {
            Answer::Runs => "",
            Answer::Asks(r) | Answer::Refuses(r) => r,
        }
    }
}

/// Asks `aq hook AGENT` about `command`, as the agent does.
fn ask_hook(env: &Env, agent: Agent, command: &str) -> Answer {
    let out = env.aq_input(&["hook", agent.name()], &agent.payload(env, command));
    out.code(0);
    let text = out.stdout.trim();
    if text.is_empty() {
        return Answer::Runs;
    }
    let v: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the answer is not JSON: {e}{}", out.dump()));
    let (decision, reason) = match agent {
        Agent::Claude | Agent::Codex => (
            &v["hookSpecificOutput"]["permissionDecision"],
            &v["hookSpecificOutput"]["permissionDecisionReason"],
        ),
        Agent::Gemini => (&v["decision"], &v["reason"]),
    };
    let reason = reason.as_str().unwrap_or_default().to_string();
    match decision.as_str() {
        Some("allow") => Answer::Runs,
        Some("ask") => Answer::Asks(reason),
        Some("deny") => Answer::Refuses(reason),
        other => panic!("unexpected decision {other:?}{}", out.dump()),
    }
}

/// Runs `line` with bash as an agent's shell tool does: in the workspace,
/// with the scratch home.
fn bash(env: &Env, line: &str, vars: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new("bash");
    cmd.args(["-c", line])
        .current_dir(env.work())
        .env("HOME", env.root().join("home"))
        .env("XDG_CONFIG_HOME", env.root().join("config"))
        .env("XDG_STATE_HOME", env.state_home())
        .envs(vars.iter().copied());
    cmd.output().expect("bash")
}

/// The agent's turn: it asks the hook and runs the line only when let
/// through.
fn agent_turn(env: &Env, agent: Agent, line: &str) -> Answer {
    let answer = ask_hook(env, agent, line);
    if answer == Answer::Runs {
        let out = bash(env, line, &[]);
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    answer
}

/// Asserts that the agent did not run `line`, and that the reason it read
/// names `rule`.
#[track_caller]
fn assert_refused(answer: &Answer, line: &str, rule: &str) {
    assert!(
        answer != &Answer::Runs && answer.reason().contains(rule),
        "{line}: expected a refusal by {rule}, got {answer:?}"
    );
}

/// The marker a payload creates, fresh.
fn marker(env: &Env, name: &str) -> PathBuf {
    let m = env.work().join(format!("pwned-{name}"));
    let _ = std::fs::remove_file(&m);
    m
}

/// Red team, finding 5: commands hidden in data that bash evaluates as code
/// (arithmetic subscripts, names given to builtins, prompt strings) run
/// under bash; through the hook they never do, and the reason names
/// `exec-hidden-code`. Ordinary arithmetic and tracing run.
#[test]
fn code_hidden_in_data_bash_evaluates_never_runs_through_the_hook() {
    let env = Env::new();
    let attacks = [
        "[[ 'a[$(touch MARK)]' -eq 0 ]]",
        "x='a[$(touch MARK)]'; [[ $x -eq 1 ]]",
        "printf -v 'a[$(touch MARK)]' x",
        "test -v 'a[$(touch MARK)]'",
        "let 'a[$(touch MARK)]=1'",
        "declare 'a[$(touch MARK)]=1'",
        "x='a[$(touch MARK)]'; echo $((x))",
        "x='$(touch MARK)'; echo \"${x@P}\"",
        "PS4='$(touch MARK) '; set -x; true",
        "declare -n r='a[$(touch MARK)]'; : \"$r\"",
        "declare -a 'x=($(touch MARK))'",
        "f() { (( $1 )); }; f 'a[$(touch MARK)]'",
    ];
    for (k, template) in attacks.iter().enumerate() {
        let m = marker(&env, &k.to_string());
        let line = template.replace("MARK", &m.display().to_string());
        // Control: bash runs what the line hides.
        bash(&env, &line, &[]);
        assert!(
            m.exists(),
            "control: bash did not run the payload of {line}"
        );
        std::fs::remove_file(&m).unwrap();
        for agent in [Agent::Claude, Agent::Gemini] {
            let answer = agent_turn(&env, agent, &line);
            assert_refused(&answer, &line, "exec-hidden-code");
            assert!(!m.exists(), "{line} ran through {agent:?}'s hook");
        }
    }
    // A destructive payload hidden the same way blocks outright.
    let answer = ask_hook(&env, Agent::Claude, "[[ 'a[$(rm -rf ~)]' -eq 0 ]]");
    assert!(
        matches!(&answer, Answer::Refuses(r) if r.contains("fs-rm-recursive-root")),
        "{answer:?}"
    );
    for benign in [
        "x=$((2+1)); echo $x > arith.txt",
        "n=3; [[ $n -eq 3 ]] && echo three > three.txt",
        "printf -v out '%s' hi; echo \"$out\" > printf.txt",
        "set -x; echo traced > traced.txt",
        "tmp=$(mktemp); trap 'rm -f \"$tmp\"' EXIT; echo x > \"$tmp\"; echo ok > trap.txt",
    ] {
        assert_eq!(
            agent_turn(&env, Agent::Claude, benign),
            Answer::Runs,
            "{benign}"
        );
    }
    for f in [
        "arith.txt",
        "three.txt",
        "printf.txt",
        "traced.txt",
        "trap.txt",
    ] {
        assert!(
            env.work().join(f).exists(),
            "the benign line writing {f} did not run"
        );
    }
}

/// Red team, finding 5: a name bound to another program (`hash -p`) or a
/// variable reached through a reference (`declare -n`) runs what the line
/// hid; through the hook it is judged as what it runs.
#[test]
fn names_rebound_to_other_programs_are_judged_as_what_they_run() {
    let env = Env::new();
    let home = env.root().join("home");
    // hash -p: `cat -a ~/.bashrc` runs `tee -a ~/.bashrc`.
    let line = "hash -p /usr/bin/tee cat; echo 'touch /tmp/x' | cat -a \"$HOME/.bashrc\"";
    bash(&env, line, &[]);
    assert!(
        std::fs::read_to_string(home.join(".bashrc"))
            .unwrap_or_default()
            .contains("touch"),
        "control: hash -p did not make cat run tee"
    );
    std::fs::remove_file(home.join(".bashrc")).unwrap();
    let answer = agent_turn(&env, Agent::Claude, line);
    assert_refused(&answer, line, "persist-shell-rc");
    assert!(
        !home.join(".bashrc").exists(),
        "{line} ran through the hook"
    );

    // declare -n: assigning `p` assigns PATH, and `ls` runs a program of
    // a temporary directory.
    let bin = env.work().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let m = marker(&env, "path");
    let fake = bin.join("ls");
    std::fs::write(&fake, format!("#!/bin/sh\ntouch {}\n", m.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let line = format!("declare -n p=PATH; p={}:$p; ls", bin.display());
    bash(&env, &line, &[]);
    assert!(m.exists(), "control: the reference did not change PATH");
    std::fs::remove_file(&m).unwrap();
    let answer = agent_turn(&env, Agent::Claude, &line);
    assert_refused(&answer, &line, "env-code-inject");
    assert!(!m.exists(), "{line} ran through the hook");

    assert_eq!(
        agent_turn(
            &env,
            Agent::Claude,
            "alias ll='ls -la'; hash -r; ls > listing.txt"
        ),
        Answer::Runs
    );
    assert!(env.work().join("listing.txt").exists());
}

/// Red team, finding 5: the agent's key printed by `declare -p`, or read
/// from its process's environment (`/proc/$PPID/environ`, which is the
/// agent's when the agent starts the shell). Refused; a full dump asks;
/// one harmless variable is printed.
#[test]
fn the_agents_keys_are_not_printed_through_the_hook() {
    let env = Env::new();
    let key = "sk-ant-fake-key-for-aq-tests-0000";
    for (line, rule) in [
        ("declare -p ANTHROPIC_API_KEY", "secret-env-print"),
        ("typeset -p ANTHROPIC_API_KEY", "secret-env-print"),
        ("cat /proc/$PPID/environ", "secret-read"),
        ("xargs -0 -n1 < /proc/$PPID/environ", "secret-read"),
        ("ps eww -p $PPID", "secret-read"),
    ] {
        // Control: a shell started by a process holding the key (as the
        // agent starts its shell tool) prints it.
        let out = bash(
            &env,
            &format!("bash -c {}; :", shell_quote(line)),
            &[("ANTHROPIC_API_KEY", key)],
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(key),
            "control: {line} did not print the key: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for agent in [Agent::Claude, Agent::Codex] {
            let answer = ask_hook(&env, agent, line);
            assert!(
                matches!(&answer, Answer::Refuses(r) if r.contains(rule)),
                "{line} through {agent:?}: expected a refusal by {rule}, got {answer:?}"
            );
        }
    }
    for line in [
        "export -p",
        "declare -x",
        "declare",
        "cat /proc/self/environ",
    ] {
        assert_refused(
            &ask_hook(&env, Agent::Claude, line),
            line,
            "secret-location",
        );
    }
    for line in ["printenv HOME > home.txt", "env | grep PATH > path.txt"] {
        assert_eq!(
            agent_turn(&env, Agent::Claude, line),
            Answer::Runs,
            "{line}"
        );
    }
}

/// Red team, findings 5 and 6: writes judged by where they land, whatever
/// writes them: git's configuration, shell startup files, the agents' hook
/// settings. Each changes its file under bash; through the hook the file
/// is left as it was. Ordinary edits of the project run.
#[test]
fn writes_into_protected_places_are_refused_by_where_they_land() {
    let env = Env::new();
    let home = env.root().join("home");
    let settings = "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"/usr/bin/aq hook claude\"}]}]}}\n";
    let files: &[(&str, PathBuf)] = &[
        ("git", env.work().join(".git/config")),
        ("claude-user", home.join(".claude/settings.json")),
        ("claude-project", env.work().join(".claude/settings.json")),
        ("gemini", env.work().join(".gemini/settings.json")),
        ("codex", home.join(".codex/config.toml")),
    ];
    let reset = || {
        for (_, f) in files {
            env.write(f, settings);
        }
        let _ = std::fs::remove_file(home.join(".bashrc"));
        let _ = std::fs::remove_file(home.join(".gitconfig"));
    };
    let attacks: &[(&str, &str, &Path)] = &[
        (
            "printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> .git/config",
            "persist-git-config",
            &files[0].1,
        ),
        (
            "sed -i 's/hook/x/' .git/config",
            "persist-git-config",
            &files[0].1,
        ),
        (
            "echo 'touch /tmp/x' >> ~/.bashrc",
            "persist-shell-rc",
            &home.join(".bashrc"),
        ),
        (
            "cp /dev/null ~/.gitconfig && echo '[core] pager = x' > ~/.gitconfig",
            "persist-git-config-global",
            &home.join(".gitconfig"),
        ),
        (
            "echo '{}' > ~/.claude/settings.json",
            "guard-agent-hooks",
            &files[1].1,
        ),
        (
            "sed -i 's|/usr/bin/aq hook claude|true|' .claude/settings.json",
            "guard-agent-hooks",
            &files[2].1,
        ),
        (
            "python3 -c \"open('.gemini/settings.json','w').write('{}')\"",
            "guard-agent-hooks",
            &files[3].1,
        ),
        (
            "rm -f ~/.codex/config.toml",
            "guard-agent-hooks",
            &files[4].1,
        ),
        (
            "cd ~/.claude && echo '{}' > settings.json",
            "guard-agent-hooks",
            &files[1].1,
        ),
    ];
    for (line, rule, file) in attacks {
        reset();
        let before = std::fs::read(file).ok();
        bash(&env, line, &[]);
        assert_ne!(
            std::fs::read(file).ok(),
            before,
            "control: {line} did not change {}",
            file.display()
        );
        for agent in [Agent::Claude, Agent::Gemini] {
            reset();
            let before = std::fs::read(file).ok();
            let answer = agent_turn(&env, agent, line);
            assert_refused(&answer, line, rule);
            assert_eq!(
                std::fs::read(file).ok(),
                before,
                "{line} changed {} through {agent:?}'s hook",
                file.display()
            );
        }
    }
    env.write(&env.work().join("src.txt"), "a\n");
    for line in [
        "echo note >> notes.txt",
        "sed -i s/a/b/ src.txt",
        "cp src.txt copy.txt",
        "echo log | tee out.log",
        "cat .git/config > seen.txt",
        "cp ~/.claude/settings.json settings.backup.json",
    ] {
        assert_eq!(
            agent_turn(&env, Agent::Claude, line),
            Answer::Runs,
            "{line}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(env.work().join("src.txt")).unwrap(),
        "b\n"
    );
}

/// Red team, finding 6: a hook session's log is a file the user can write,
/// chained but not keyed. The engine refuses every way the red team had of
/// rewriting it through the agent (`sed -i`, a script, an emptying
/// redirection, after `cd`), wherever `$XDG_STATE_HOME` puts it, and the
/// log stays byte for byte; `aq audit verify` says what its chain proves.
/// Control: the same `sed -i` run by bash changes the log, and verify
/// names the break.
#[test]
fn a_hook_sessions_log_is_not_rewritten_through_the_hook_and_verify_says_what_it_proves() {
    let env = Env::new();
    assert_eq!(
        agent_turn(&env, Agent::Claude, "echo hello > hello.txt"),
        Answer::Runs
    );
    let session = env
        .sessions()
        .into_iter()
        .find(|s| s.id().starts_with("hook-claude-"))
        .unwrap_or_else(|| panic!("no hook session:\n{}", crate::util::listing(env.root())));
    let log = session.log_path();
    let dir = log.parent().unwrap().to_path_buf();
    let before = std::fs::read(&log).unwrap();
    for line in [
        format!("sed -i 1d {}", log.display()),
        format!("python3 -c \"open('{}','w').write('')\"", log.display()),
        format!(": > {}", log.display()),
        format!("cd {} && sed -i 1d log.jsonl", dir.display()),
        format!("rm -rf {}", dir.display()),
        "sed -i 1d \"$XDG_STATE_HOME\"/agent-quarantine/sessions/*/log.jsonl".to_string(),
    ] {
        let answer = agent_turn(&env, Agent::Claude, &line);
        assert!(
            matches!(&answer, Answer::Refuses(r) if r.contains("guard-aq-files")),
            "{line}: {answer:?}"
        );
    }
    // The refusals are logged after the first line: the first bytes stand.
    let after = std::fs::read(&log).unwrap();
    assert!(
        after.starts_with(&before),
        "the log was changed through the hook"
    );
    let id = session.id();
    env.aq(&["audit", "verify", &id])
        .code(0)
        .stdout_has("chain intact")
        .stdout_has("not keyed")
        .stdout_has("docs/export.md");
    // Control: bash itself can change the file, and the chain shows it.
    bash(&env, &format!("sed -i 1d {}", log.display()), &[]);
    env.aq(&["audit", "verify", &id])
        .stdout_has("chain broken at line 1");
}

/// Quotes a word for bash.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
