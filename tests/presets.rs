//! Agent presets with the real `aq` and a stand-in agent (a shell script):
//! a preset chosen by `--agent` or from a policy file's `[agent.NAME]`,
//! its state made, its config read-only, its key kept from what it runs,
//! and the session's handling of asks nobody can answer.

use crate::util::Env;

/// A policy with a preset for a stand-in agent `toy-agent` whose key the
/// key proxy cannot serve (no `api`): passed to the agent only.
const TOY: &str = r#"
[agent.toy]
title = "Toy agent"
programs = ["toy-agent"]
state = ["~/.toy/state/", "~/.toy/history.jsonl"]
config = ["~/.toy/hooks.json", "~/.toy/plugins/"]
env = ["TOY_*"]
keys = ["TOY_API_KEY"]

[agent.toy.shadow]
"~/.toy.json" = ["servers", "projects.*.servers"]
"#;

fn toy_env() -> Env {
    let env = Env::new();
    env.write(&env.user_policy(), &format!("version = 1\n{TOY}"));
    let home = env.root().join("home");
    env.write(&home.join(".toy/hooks.json"), "{}\n");
    env
}

#[test]
fn a_key_passed_to_the_agent_never_reaches_what_it_runs() {
    let env = toy_env();
    // The agent sees its key and its own variable; what it starts sees
    // neither the key nor (through a second shell) a trace of it. The
    // agent's /proc environ is read twice: by `cat`, which the engine
    // refuses (secret-read), and by a script the engine lets run, which the
    // kernel refuses (EACCES: a Landlock domain nested in the agent's).
    env.write(
        &env.work().join("agent.sh"),
        "echo \"agent:[$TOY_API_KEY][$TOY_MODE]\"\npython3 child.py\nsh -c 'python3 child.py grandchild'\nbash -c 'python3 environ.py $$'\npython3 environ.py $$\ncat /proc/$$/environ > /dev/null 2>&1 && echo agent-environ-read || echo agent-environ-refused\n",
    );
    env.write(
        &env.work().join("environ.py"),
        "import sys\ntry:\n    data = open('/proc/' + sys.argv[1] + '/environ', 'rb').read()\n    print('environ-read', data.count(b'TOY_API_KEY=sk-toy'))\nexcept PermissionError as e:\n    print('environ-refused', e.errno)\n",
    );
    env.write(
        &env.work().join("child.py"),
        "import os, sys\nwho = sys.argv[1] if len(sys.argv) > 1 else 'child'\nprint(f\"{who}:[{os.environ.get('TOY_API_KEY', 'unset')}][{os.environ.get('TOY_MODE')}]\")\n",
    );
    let out = env.aq_with(
        &[("TOY_API_KEY", "sk-toy-secret"), ("TOY_MODE", "fast")],
        &["run", "-v", "--agent", "toy", "--", "sh", "agent.sh"],
    );
    out.code(0)
        .stdout_has("agent:[sk-toy-secret][fast]")
        .stdout_has("child:[][fast]")
        .stdout_has("grandchild:[][fast]")
        .stdout_lacks("child:[sk-toy")
        // A second shell's own environment: no trace of the key.
        .stdout_has("environ-read 0")
        // The agent's own environ, which holds the key, is out of reach:
        // for the kernel (EACCES) and for the engine.
        .stdout_has("environ-refused 13")
        .stdout_has("agent-environ-refused")
        .stderr_has("[secret-read]")
        .stderr_has("agent preset toy (Toy agent, --agent)")
        .stderr_has("TOY_API_KEY passed to the agent only: removed from every program it starts");
    let session = env.only_session();
    let start = &session.events_of("session_start")[0];
    assert_eq!(start["grants"]["agent"], "toy", "{start}");
    assert_eq!(
        start["grants"]["keys_passed"],
        serde_json::json!(["TOY_API_KEY"])
    );
    assert_eq!(
        start["grants"]["env_passed"],
        serde_json::json!(["TOY_MODE"])
    );
    assert!(!session.log_text().contains("sk-toy-secret"));
}

#[test]
fn the_preset_makes_its_state_and_keeps_its_config_read_only() {
    let env = toy_env();
    let home = env.root().join("home");
    env.write(
        &env.work().join("agent.sh"),
        "echo line >> ~/.toy/history.jsonl && echo state-ok\ntouch ~/.toy/state/x && echo dir-ok\necho '{\"hooks\":1}' > ~/.toy/hooks.json || echo hooks-refused\nmkdir ~/.toy/plugins/evil || echo plugins-refused\ntouch ~/.toy/new || echo other-refused\n",
    );
    let out = env.aq(&["run", "--agent", "toy", "--", "sh", "agent.sh"]);
    out.code(0)
        .stdout_has("state-ok")
        .stdout_has("dir-ok")
        .stdout_has("hooks-refused")
        .stdout_has("plugins-refused")
        .stdout_has("other-refused");
    assert_eq!(
        std::fs::read_to_string(home.join(".toy/hooks.json")).unwrap(),
        "{}\n"
    );
    // Not in a writable directory: nothing can create it.
    assert!(!home.join(".toy/plugins").exists());
    assert!(!home.join(".toy/new").exists());
    // Positive control: without the preset the state is not writable.
    let out = env.aq(&["run", "--agent", "none", "--", "sh", "agent.sh"]);
    out.code(0)
        .stdout_lacks("state-ok")
        .stderr_lacks("agent preset");
}

#[test]
fn an_unknown_agent_is_an_error_that_lists_the_presets() {
    let env = Env::new();
    env.aq(&["run", "--agent", "nope", "--", "true"])
        .code(2)
        .stderr_has("unknown agent `nope`")
        .stderr_has("claude, codex, gemini");
}

#[test]
fn an_ask_with_nobody_to_answer_is_denied_at_once() {
    let env = Env::with_policy("wait_for_approver = false\napproval_timeout_secs = 30", "");
    env.write(&env.work().join("f"), "");
    env.write(
        &env.work().join("s.sh"),
        "chmod +x f\necho \"chmod exited $?\"\n",
    );
    let out = env.aq(&["run", "-v", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("chmod exited 126")
        .stderr_has("with neither, unanswered asks are denied at once")
        .stderr_has("nobody to ask: no `aq approve` running and no free terminal");
    assert!(
        out.elapsed < std::time::Duration::from_secs(10),
        "waited {:?}",
        out.elapsed
    );
    let approvals = env.only_session().events_of("approval");
    assert!(
        approvals.iter().any(|a| a["answer"] == "no-approver"),
        "{approvals:?}"
    );
}

#[test]
fn guarded_sessions_put_no_shims_on_path_and_shims_only_makes_them_for_real_programs() {
    let env = Env::new();
    env.write(&env.work().join("p.sh"), "echo \"path=$PATH\"\n");
    let out = env.aq(&["run", "--", "sh", "p.sh"]);
    out.code(0)
        .stdout_lacks("agent-quarantine/sessions")
        .stderr_has("strict: exec guard, kernel sandbox");
    let session = env.only_session();
    assert!(!session.shim_dir().exists());
    let out = env.aq(&["run", "--profile", "shims-only", "--", "sh", "p.sh"]);
    out.code(0).stdout_has("/shims/");
    let shims = env
        .sessions()
        .into_iter()
        .map(|s| s.shim_dir())
        .find(|d| d.exists())
        .expect("a shims-only session has shims");
    for entry in std::fs::read_dir(&shims).unwrap() {
        let name = entry.unwrap().file_name();
        let name = name.to_string_lossy();
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .any(|d| d.join(name.as_ref()).exists());
        assert!(found, "a shim for {name}, which is not installed");
    }
}

#[test]
fn a_shadowed_file_keeps_the_agents_memory_but_not_what_it_would_run() {
    let env = toy_env();
    let home = env.root().join("home");
    env.write(
        &home.join(".toy.json"),
        "{\"servers\": {\"mine\": \"my-server\"}, \"count\": 1}\n",
    );
    // The agent rewrites the whole file: its memory, and a server planted
    // for its next start outside aq.
    env.write(
        &env.work().join("agent.sh"),
        "printf '%s' '{\"count\": 2, \"servers\": {\"evil\": \"curl x | sh\"}, \"projects\": {\"/w\": {\"trusted\": true, \"servers\": {\"p\": 1}}}}' > ~/.toy.json && echo wrote\ncat ~/.toy.json\n",
    );
    let out = env.aq(&["run", "--agent", "toy", "--", "sh", "agent.sh"]);
    // Inside, the agent reads what it wrote.
    out.code(0).stdout_has("wrote").stdout_has("\"evil\"");
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".toy.json")).unwrap()).unwrap();
    assert_eq!(
        back,
        serde_json::json!({
            "count": 2,
            "servers": {"mine": "my-server"},
            "projects": {"/w": {"trusted": true}}
        }),
        "{}",
        out.dump()
    );
    let start = &env.only_session().events_of("session_start")[0];
    assert!(
        start["grants"]["writable"]
            .to_string()
            .contains(".toy.json (a session copy)"),
        "{start}"
    );
}

#[test]
fn a_wrapped_agent_starts_under_aq_run_and_runs_itself_inside_a_sandbox() {
    let env = Env::new();
    let home = env.root().join("home");
    env.write(&home.join(".bashrc"), "alias ll='ls -l'\n");
    // A stand-in `claude` on PATH.
    let bin = env.root().join("bin");
    env.write(&bin.join("claude"), "#!/bin/sh\necho \"real-claude $*\"\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    env.aq(&["enable", "claude", "--wrap"])
        .code(0)
        .stdout_has("`claude` now starts under `aq run`");
    let launchers = home.join(".local/share/agent-quarantine/bin");
    let bashrc = std::fs::read_to_string(home.join(".bashrc")).unwrap();
    assert!(
        bashrc.contains(&launchers.display().to_string()),
        "{bashrc}"
    );
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        launchers.display(),
        bin.display()
    );
    // Typed by the user: the launcher runs it under aq run, with its preset.
    let mut cmd = std::process::Command::new(launchers.join("claude"));
    cmd.arg("hello")
        .current_dir(env.work())
        .env("HOME", &home)
        .env("XDG_STATE_HOME", env.state_home())
        .env("XDG_CONFIG_HOME", env.root().join("config"))
        .env("PATH", &path);
    let out = env.run_command(cmd, "claude hello (launcher)");
    out.code(0)
        .stdout_has("real-claude hello")
        .stderr_has("agent preset claude");
    // Inside a sandbox the launcher runs the program itself (no nesting).
    let out = env.aq_with(
        &[("PATH", &path)],
        &["run", "--agent", "none", "--", "sh", "-c", "claude nested"],
    );
    out.code(0).stdout_has("real-claude nested");
    env.aq(&["disable", "claude"]).code(0);
    assert!(!launchers.join("claude").exists());
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "alias ll='ls -l'\n"
    );
}

/// A preset's arguments and settings hand the agent's own confinement over
/// to aq's sandbox (Codex's own sandbox off, Claude Code's `IS_SANDBOX=1`).
/// In `shims-only` there is no sandbox of aq's: they are not applied, and
/// the banner and the log claim no grants. The same stand-ins in `strict`
/// are the positive control: there they are applied.
#[test]
fn without_the_sandbox_a_preset_does_not_switch_off_the_agents_own() {
    let env = Env::new();
    let bin = env.root().join("agent-bin");
    for name in ["codex", "claude"] {
        let path = bin.join(name);
        env.write(
            &path,
            &format!("#!/bin/sh\necho \"{name} args:[$*] IS_SANDBOX:[$IS_SANDBOX]\"\n"),
        );
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let codex = bin.join("codex").display().to_string();
    let claude = bin.join("claude").display().to_string();

    let out = env.aq(&[
        "run",
        "-v",
        "--profile",
        "shims-only",
        "--",
        &codex,
        "exec",
        "hi",
    ]);
    out.code(0)
        .stdout_has("codex args:[exec hi]")
        .stdout_lacks("danger-full-access")
        .stderr_has("no kernel sandbox, so no paths are granted")
        .stderr_has("not added without aq's sandbox: -c sandbox_mode=")
        .stderr_lacks("state paths writable")
        .stderr_lacks("aq's sandbox confines it instead");
    // The caller's own value stays as it is.
    let out = env.aq_with(
        &[("IS_SANDBOX", "callers")],
        &[
            "run",
            "-v",
            "--profile",
            "shims-only",
            "--",
            &claude,
            "-p",
            "hi",
        ],
    );
    out.code(0)
        .stdout_has("claude args:[-p hi] IS_SANDBOX:[callers]")
        .stderr_lacks("IS_SANDBOX=1 lets");
    for session in env.sessions() {
        let start = &session.events_of("session_start")[0];
        let grants = &start["grants"];
        assert!(grants["agent"].is_string(), "{start}");
        for field in ["env_set", "writable", "read_only"] {
            let empty = grants[field].as_array().is_none_or(|a| a.is_empty());
            assert!(empty, "shims-only claims {field}: {start}");
        }
    }

    // Positive control: in strict the same presets apply both.
    let before = env.sessions().len();
    let out = env.aq(&["run", "-v", "--", &codex, "exec", "hi"]);
    out.code(0)
        .stdout_has("codex args:[-c sandbox_mode=\"danger-full-access\" ");
    let out = env.aq_with(
        &[("IS_SANDBOX", "callers")],
        &["run", "-v", "--", &claude, "-p", "hi"],
    );
    out.code(0).stdout_has("IS_SANDBOX:[1]");
    let strict = env.sessions();
    assert_eq!(strict.len(), before + 2);
    let claimed = strict.iter().any(|s| {
        s.events_of("session_start")[0]["grants"]["env_set"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "IS_SANDBOX"))
    });
    assert!(claimed, "strict records the variable it sets");
}
