//! Every way a user points an agent at its model, under `aq run` with no
//! policy file, with the real agents: a name pinned with `--resolve`
//! (served by the key proxy, which honours the pin as the broker does), a
//! model server on the host's loopback named in the agent's own
//! configuration or command line (a bridge to that one port), and a model
//! that cannot be reached (the agent stops at once, with aq's reason).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::real_agents::{FakeModel, agents_bin};
use crate::util::Env;

const KEY: &str = "sk-test-ENDPOINT-KEY-0123456789";

fn steps() -> Value {
    json!([
        { "command": "echo hello > out.txt" },
        { "command": "python3 -c 'import os; e = getattr(os, \"envi\" + \"ron\"); print(\"\\n\".join(k + \"=\" + v for k, v in e.items()))' > env.txt" },
        { "command": "cat ~/.ssh/id_rsa > stolen.txt" },
        { "text": "All done." }
    ])
}

/// `aq run -v ARGS -- COMMAND` with the agents on `PATH` and `vars`.
fn run(
    env: &Env,
    vars: &[(&str, &str)],
    aq_args: &[&str],
    command: &[&str],
) -> crate::util::Output {
    let bin = agents_bin().expect("checked by the caller");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut all: Vec<(&str, &str)> =
        vec![("PATH", &path), ("SHELL", "/bin/bash"), ("TERM", "dumb")];
    all.extend_from_slice(vars);
    let mut args = vec!["run", "-v"];
    args.extend_from_slice(aq_args);
    args.push("--");
    args.extend_from_slice(command);
    env.aq_with(&all, &args)
}

/// The scripted work happened, the refusal reached the model, the key
/// reached the model server and nothing the agent ran.
fn check_worked(env: &Env, model: &FakeModel, out: &crate::util::Output) {
    let dump = out.dump();
    out.code(0);
    out.stdout_has("All done.");
    let work = env.work();
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt"))
            .ok()
            .as_deref(),
        Some("hello\n"),
        "{dump}"
    );
    let env_txt = std::fs::read_to_string(work.join("env.txt")).unwrap_or_default();
    assert!(env_txt.contains("HOME="), "{env_txt}{dump}");
    assert!(
        !env_txt.contains(KEY),
        "the key is visible to a command{dump}"
    );
    assert!(!work.join("stolen.txt").exists(), "{dump}");
    let bodies = model.bodies();
    assert!(
        bodies.contains("secret-read"),
        "no refusal in {bodies}{dump}"
    );
    assert!(
        model
            .requests()
            .iter()
            .any(|r| r["headers"].as_object().is_some_and(|h| h
                .values()
                .any(|v| v.as_str().is_some_and(|v| v.contains(KEY))))),
        "the model server never got the key{dump}"
    );
}

fn model_dir(env: &Env) -> PathBuf {
    env.root().join("model")
}

#[test]
fn claude_code_reaches_a_name_pinned_with_resolve_through_the_key_proxy() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "anthropic", &steps());
    let url = format!("http://model.test:{}", model.port);
    let out = run(
        &env,
        &[("ANTHROPIC_API_KEY", KEY), ("ANTHROPIC_BASE_URL", &url)],
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
        &[
            "claude",
            "-p",
            "do the task",
            "--dangerously-skip-permissions",
        ],
    );
    check_worked(&env, &model, &out);
    let session = env.only_session();
    let proxied = session.events_of("network_connection");
    assert!(
        proxied.iter().any(|n| n["front_end"] == "key-proxy"
            && n["host"] == "model.test"
            && n["decision"] == "allowed"),
        "{}",
        session.log_text()
    );
}

#[test]
fn gemini_cli_reaches_a_name_pinned_with_resolve_through_the_key_proxy() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "gemini", &steps());
    let url = format!("http://model.test:{}", model.port);
    let out = run(
        &env,
        &[
            ("GEMINI_API_KEY", KEY),
            ("GOOGLE_GEMINI_BASE_URL", &url),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ],
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
        &["gemini", "-p", "do the task", "--yolo"],
    );
    check_worked(&env, &model, &out);
}

/// `~/.codex/config.toml` with a custom provider, as for a LiteLLM
/// gateway or Ollama: `base_url` on the host's loopback, `env_key`.
fn codex_config(env: &Env, base_url: &str) {
    env.write(
        &env.root().join("home/.codex/config.toml"),
        &codex_toml(base_url),
    );
}

#[test]
fn codex_with_a_custom_provider_on_the_hosts_loopback_works_through_a_bridge() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "openai", &steps());
    codex_config(&env, &format!("http://127.0.0.1:{}/v1", model.port));
    let out = run(
        &env,
        &[("GATEWAY_API_KEY", KEY)],
        &[],
        &["codex", "exec", "--skip-git-repo-check", "do the task"],
    );
    check_worked(&env, &model, &out);
    out.stderr_has(&format!(
        "model endpoint http://127.0.0.1:{}/v1 (~/.codex/config.toml model_providers.gateway.base_url): bridged to the host's 127.0.0.1:{}",
        model.port, model.port
    ));
    let session = env.only_session();
    let start = &session.events_of("session_start")[0];
    assert!(
        start["grants"]["model_endpoints"][0]
            .as_str()
            .is_some_and(|l| l.contains("bridged")),
        "{start}"
    );
    assert_eq!(
        start["grants"]["keys_passed"],
        json!(["GATEWAY_API_KEY"]),
        "{start}"
    );
    assert!(
        session
            .events_of("network_connection")
            .iter()
            .any(|n| n["front_end"] == "bridge" && n["decision"] == "allowed"),
        "{}",
        session.log_text()
    );
}

#[test]
fn codex_with_its_provider_set_on_the_command_line_works_through_a_bridge() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "openai", &steps());
    // The file names an address that answers nothing; the command line
    // wins, as in Codex itself.
    codex_config(&env, "http://203.0.113.9:9/v1");
    let over = format!(
        "model_providers.gateway.base_url=\"http://127.0.0.1:{}/v1\"",
        model.port
    );
    let out = run(
        &env,
        &[("GATEWAY_API_KEY", KEY)],
        &[],
        &[
            "codex",
            "exec",
            "-c",
            &over,
            "--skip-git-repo-check",
            "do the task",
        ],
    );
    check_worked(&env, &model, &out);
    out.stderr_has("(-c model_providers.gateway.base_url): bridged");
}

#[test]
fn claude_code_with_its_base_url_in_settings_json_keeps_the_key_outside() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "anthropic", &steps());
    // Claude Code applies its settings' `env` over its environment: the
    // variable aq sets cannot win, the bridge at that address serves it.
    env.write(
        &env.root().join("home/.claude/settings.json"),
        &json!({ "env": { "ANTHROPIC_BASE_URL": format!("http://127.0.0.1:{}", model.port) } })
            .to_string(),
    );
    let out = run(
        &env,
        &[("ANTHROPIC_API_KEY", KEY)],
        &[],
        &[
            "claude",
            "-p",
            "do the task",
            "--dangerously-skip-permissions",
        ],
    );
    check_worked(&env, &model, &out);
    let session = env.only_session();
    let start = &session.events_of("session_start")[0];
    assert_eq!(
        start["grants"]["keys_outside"],
        json!(["ANTHROPIC_API_KEY"]),
        "{start}"
    );
}

/// The probe a fake `codex` runs inside: the bridged port answers, and
/// `other`, where a server listens on the host's loopback, is refused.
fn bridge_probe(model_port: u16, other: u16) -> String {
    format!(
        "import socket, urllib.request\n\
         print('bridged', urllib.request.urlopen('http://127.0.0.1:{model_port}/v1/models', timeout=5).status)\n\
         try:\n    socket.create_connection(('127.0.0.1', {other}), 3)\n    print('other reached')\n\
         except OSError as e:\n    print('other refused', e.errno)\n"
    )
}

fn write_executable(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn codex_toml(base_url: &str) -> String {
    format!(
        "model_provider = \"gateway\"\nmodel = \"fake-model\"\n\n[model_providers.gateway]\nname = \"Local gateway\"\nbase_url = \"{base_url}\"\nenv_key = \"GATEWAY_API_KEY\"\n"
    )
}

/// A bridge opens its one host port: from inside, the bridged port
/// answers, and another port where a server listens on the host's loopback
/// (reached from outside: the positive control) is refused.
#[test]
fn a_bridge_opens_one_host_port_and_nothing_else_on_the_hosts_loopback() {
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "openai", &steps());
    let other = crate::util::echo_server();
    // The positive control: the other server answers outside.
    assert!(std::net::TcpStream::connect(("127.0.0.1", other)).is_ok());
    codex_config(&env, &format!("http://127.0.0.1:{}/v1", model.port));
    env.write(
        &env.work().join("probe.py"),
        &bridge_probe(model.port, other),
    );
    // Run as the agent (its preset adds its arguments, which this one
    // ignores): a program named `codex` that runs the probe.
    let bin = env.root().join("bin");
    write_executable(
        &bin.join("codex"),
        "#!/bin/sh\nexec python3 \"$PWD/probe.py\"\n",
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = env.aq_with(&[("PATH", &path)], &["run", "-v", "--", "codex", "exec"]);
    out.code(0);
    out.stdout_has("bridged 200");
    out.stdout_has(&format!("other refused {}", libc::ECONNREFUSED));
    out.stdout_lacks("other reached");
}

/// The same as an unprivileged user: the bridge is the supervisor's, and
/// the sandbox's namespace the user's own.
#[test]
fn a_bridge_opens_one_host_port_and_nothing_else_as_an_unprivileged_user() {
    let (root, aq, uid, gid) = crate::util::user_scratch(
        "aq-bridge-",
        &["home/.codex", "work/.git", "state", "config", "bin"],
    );
    let r = root.path();
    let model = FakeModel::start(&r.join("model"), "openai", &steps());
    let other = crate::util::echo_server();
    assert!(std::net::TcpStream::connect(("127.0.0.1", other)).is_ok());
    std::fs::write(
        r.join("home/.codex/config.toml"),
        codex_toml(&format!("http://127.0.0.1:{}/v1", model.port)),
    )
    .unwrap();
    std::fs::write(r.join("work/probe.py"), bridge_probe(model.port, other)).unwrap();
    write_executable(
        &r.join("bin/codex"),
        &format!("#!/bin/sh\nexec python3 {}/work/probe.py\n", r.display()),
    );
    for f in ["home/.codex/config.toml", "work/probe.py", "bin/codex"] {
        std::os::unix::fs::chown(r.join(f), Some(uid), Some(gid)).unwrap();
    }
    let codex = r.join("bin/codex");
    let out = crate::util::aq_as_user(
        r,
        &aq,
        (uid, gid),
        "work",
        &["run", "-v", "--", codex.to_str().unwrap(), "exec"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bridged to the host's"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("bridged 200"), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("other refused {}", libc::ECONNREFUSED)),
        "{stdout}\n{stderr}"
    );
}

#[test]
fn an_unreachable_model_stops_the_agent_at_once_with_aqs_reason() {
    if agents_bin().is_none() {
        return;
    }
    // A port where nothing listens.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("http://127.0.0.1:{port}");
    for (vars, command) in [
        (
            vec![
                ("ANTHROPIC_API_KEY", KEY),
                ("ANTHROPIC_BASE_URL", url.as_str()),
            ],
            vec![
                "claude",
                "-p",
                "do the task",
                "--dangerously-skip-permissions",
            ],
        ),
        (
            vec![
                ("GEMINI_API_KEY", KEY),
                ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
                ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
            ],
            vec!["gemini", "-p", "do the task", "--yolo"],
        ),
    ] {
        let env = Env::new();
        let started = Instant::now();
        let out = run(&env, &vars, &[], &command);
        let took = started.elapsed();
        let dump = out.dump();
        assert_ne!(out.code, Some(0), "{dump}");
        // Without the 421 Gemini CLI retries for minutes.
        assert!(
            took < Duration::from_secs(45),
            "{} took {took:?}{dump}",
            command[0]
        );
        assert!(
            format!("{}{}", out.stdout, out.stderr).contains("aq key proxy: cannot connect"),
            "{dump}"
        );
        out.stderr_has(&format!(
            "model   the model at 127.0.0.1:{port} could not be reached"
        ));
        out.stderr_has("is the model server running there?");
    }
}

#[test]
fn codex_with_its_openai_base_url_in_config_toml_keeps_the_key_outside() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "openai", &steps());
    env.write(
        &env.root().join("home/.codex/config.toml"),
        &format!("openai_base_url = \"http://127.0.0.1:{}/v1\"\n", model.port),
    );
    let out = run(
        &env,
        &[("OPENAI_API_KEY", KEY)],
        &[],
        &["codex", "exec", "--skip-git-repo-check", "do the task"],
    );
    check_worked(&env, &model, &out);
    out.stderr_has(&format!(
        "model API http://127.0.0.1:{}/v1 served inside at http://127.0.0.1:3129/v1",
        model.port
    ));
    let start = &env.only_session().events_of("session_start")[0];
    assert_eq!(
        start["grants"]["keys_outside"],
        json!(["OPENAI_API_KEY"]),
        "{start}"
    );
}

#[test]
fn codex_with_a_custom_provider_at_a_pinned_name_goes_through_the_broker() {
    if agents_bin().is_none() {
        return;
    }
    let env = Env::new();
    let model = FakeModel::start(&model_dir(&env), "openai", &steps());
    codex_config(&env, &format!("http://model.test:{}/v1", model.port));
    // The narrow form: the name and its one port.
    let allow = format!("allow:model.test:{}", model.port);
    let out = run(
        &env,
        &[("GATEWAY_API_KEY", KEY)],
        &["--net", &allow, "--resolve", "model.test:127.0.0.1"],
        &["codex", "exec", "--skip-git-repo-check", "do the task"],
    );
    check_worked(&env, &model, &out);
    out.stderr_has("(~/.codex/config.toml model_providers.gateway.base_url): through the broker");
    let session = env.only_session();
    assert!(
        session
            .events_of("network_connection")
            .iter()
            .any(|n| n["host"] == "model.test"
                && n["decision"] == "allowed"
                && n["front_end"] != "key-proxy"),
        "{}",
        session.log_text()
    );
}
