//! Kilo CLI (`@kilocode/cli` 7.7.7, pinned in `tests/agents/package.json`;
//! 7.8.1's Linux packages are not on the registry) under `aq run` with no
//! policy file. It is an OpenCode fork: the same custom OpenAI-compatible
//! provider, in the user's own `~/.config/kilo/kilo.json`, in both forms
//! (the host's loopback, bridged; a name pinned with `--resolve`).
//!
//! `kilo run --auto "…"` is its headless mode; `bin/kilo` (node) starts the
//! native binary it keeps as `bin/.kilo`; its shell tool is `bash`, run as
//! `bash -c COMMAND`, the result the output alone.

use std::time::Duration;

use crate::real_agents::{Check, Launch, REAL_KEY, launch};

fn config(host: &str) -> String {
    format!(
        r#"{{
  "$schema": "https://kilo.ai/config.json",
  "provider": {{
    "gateway": {{
      "npm": "@ai-sdk/openai-compatible",
      "name": "My gateway",
      "options": {{ "baseURL": "http://{host}:PORT/v1", "apiKey": "{{env:OPENAI_API_KEY}}" }},
      "models": {{ "fake-model": {{ "name": "Fake model" }} }}
    }}
  }},
  "model": "gateway/fake-model"
}}
"#
    )
}

/// Some 35 s of CPU a run (its snapshots: git per turn, each exec judged;
/// its indexing): on a loaded machine, minutes.
const DEADLINE: Duration = Duration::from_secs(240);

fn kilo(host: &str, aq_args: &[&str]) {
    let config = config(host);
    let Some(run) = launch(&Launch {
        dialect: "chat",
        key_var: "OPENAI_API_KEY",
        base_url: None,
        home_files: &[(".config/kilo/kilo.json", &config)],
        extra_env: &[],
        aq_args,
        command: &["kilo", "run", "--auto", "do the task"],
        deadline: Some(DEADLINE),
        xdg_in_home: true,
        ..Launch::default()
    }) else {
        return;
    };
    // The key is the agent's own (named by its provider's apiKey), blanked
    // in all it runs: no key proxy for an endpoint in a config file.
    run.check_with(
        "aq: blocked: bash -c",
        &Check {
            key_proxy: false,
            ..Check::default()
        },
    );
    run.out.stdout_has("All done.");
    let session = run.env.only_session();
    let start = &session.events_of("session_start")[0];
    assert_eq!(start["grants"]["agent"], "kilo", "{start}");
    assert_eq!(
        start["grants"]["keys_passed"],
        serde_json::json!(["OPENAI_API_KEY"]),
        "{start}"
    );
    let home = run.env.root().join("home");
    // Seeded: the .gitignore it stops without, and the marker of its
    // one-time rewrite of kilo.json, which stays as the user wrote it.
    assert!(home.join(".config/kilo/.gitignore").exists());
    assert!(home.join(".config/kilo/.bash-permission-migrated").exists());
    assert_eq!(
        std::fs::read_to_string(home.join(".config/kilo/kilo.json"))
            .unwrap()
            .replace(&run.model.port.to_string(), "PORT"),
        config
    );
    // The native binary its node launcher starts is the agent too, and its
    // git is housekeeping.
    let decisions = session.events_of("command_decision");
    assert!(
        decisions
            .iter()
            .any(|d| d["rules"] == serde_json::json!(["agent-self"])
                && d["argv"][0]
                    .as_str()
                    .is_some_and(|a| a.ends_with("/bin/.kilo"))),
        "{}",
        session.log_text()
    );
    assert!(
        decisions
            .iter()
            .any(|d| d["rules"] == serde_json::json!(["agent-housekeeping"])),
        "{}",
        session.log_text()
    );
    // Its telemetry is off (KILO_TELEMETRY_LEVEL), its catalogue refused.
    let net = session.events_of("network_connection");
    assert!(
        !net.iter()
            .any(|n| n["host"].as_str().is_some_and(|h| h.contains("posthog"))),
        "{}",
        session.log_text()
    );
    assert!(
        net.iter()
            .any(|n| n["decision"] == "denied" && n["host"] == "models.dev"),
        "{}",
        session.log_text()
    );
    assert!(!session.log_text().contains(REAL_KEY));
}

/// (a) `baseURL` on the host's loopback: aq bridges that one port inside.
#[test]
fn kilo_with_a_custom_provider_on_the_hosts_loopback_is_guarded() {
    kilo("127.0.0.1", &[]);
}

/// (b) `baseURL` naming a host pinned with `--resolve`, through the broker.
#[test]
fn kilo_with_a_custom_provider_at_a_pinned_name_is_guarded() {
    kilo(
        "model.test",
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
    );
}
