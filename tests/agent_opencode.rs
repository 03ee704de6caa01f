//! OpenCode (`opencode-ai` 1.18.33, pinned in `tests/agents/package.json`)
//! under `aq run` with no policy file, driven by the fake model server as
//! a custom OpenAI-compatible provider in the user's own
//! `~/.config/opencode/opencode.json`, in both forms a user writes it: on
//! the host's loopback (bridged inside by aq) and as a name pinned with
//! `--resolve` (through the broker).
//!
//! `opencode run --auto "…"` is its headless mode (`--auto` approves its
//! own permission asks, so `cat ~/.ssh/...` reaches aq); its shell tool is
//! `bash`, run as `bash -c COMMAND`, and the tool result is the output
//! alone (no exit status), so the model reads aq's text as it is.

use std::time::Duration;

use crate::real_agents::{Check, Launch, REAL_KEY, launch};

/// The user's config: one provider, the model's base URL at `HOST`.
fn config(host: &str) -> String {
    format!(
        r#"{{
  "$schema": "https://opencode.ai/config.json",
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

/// Its snapshots (git per turn, each exec judged) make a run some 20 s of
/// CPU: on a loaded machine more than the harness's usual minute.
const DEADLINE: Duration = Duration::from_secs(180);

/// `xdg_elsewhere`: the user's `XDG_CONFIG_HOME` and `XDG_STATE_HOME` are
/// not in the home (the harness points them at its own `config/` and
/// `state/`), and OpenCode follows them: so does its preset.
fn opencode(host: &str, aq_args: &[&str], xdg_elsewhere: bool) {
    let config = config(host);
    let Some(run) = launch(&Launch {
        dialect: "chat",
        key_var: "OPENAI_API_KEY",
        base_url: None,
        home_files: &[(
            if xdg_elsewhere {
                "../config/opencode/opencode.json"
            } else {
                ".config/opencode/opencode.json"
            },
            &config,
        )],
        extra_env: &[],
        aq_args,
        command: &["opencode", "run", "--auto", "do the task"],
        deadline: Some(DEADLINE),
        xdg_in_home: !xdg_elsewhere,
        ..Launch::default()
    }) else {
        return;
    };
    // The key is the agent's own (its provider's apiKey names it), blanked
    // in all it runs: there is no key proxy for an endpoint in a config
    // file.
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
    assert_eq!(start["grants"]["agent"], "opencode", "{start}");
    assert_eq!(
        start["grants"]["keys_passed"],
        serde_json::json!(["OPENAI_API_KEY"]),
        "{start}"
    );
    // Its first start writes this .gitignore and stops when it cannot:
    // seeded, as it would write it.
    let config_dir = if xdg_elsewhere {
        run.env.root().join("config/opencode")
    } else {
        run.env.root().join("home/.config/opencode")
    };
    assert!(
        std::fs::read_to_string(config_dir.join(".gitignore"))
            .unwrap()
            .contains("node_modules")
    );
    // Its config could not be changed from inside.
    assert_eq!(
        std::fs::read_to_string(config_dir.join("opencode.json"))
            .unwrap()
            .replace(&run.model.port.to_string(), "PORT"),
        config
    );
    // Its own git (snapshots in its state, the workspace's status) is
    // housekeeping, not the model's.
    let decisions = session.events_of("command_decision");
    assert!(
        decisions
            .iter()
            .any(|d| d["rules"] == serde_json::json!(["agent-housekeeping"])),
        "{}",
        session.log_text()
    );
    // Its model catalogue is refused (it uses the copy it ships with).
    assert!(
        session
            .events_of("network_connection")
            .iter()
            .any(|n| n["decision"] == "denied" && n["host"] == "models.opencode.ai"),
        "{}",
        session.log_text()
    );
    assert!(!session.log_text().contains(REAL_KEY));
}

/// (a) `baseURL` on the host's loopback, as for a local gateway: aq
/// bridges that one port inside.
#[test]
fn opencode_with_a_custom_provider_on_the_hosts_loopback_is_guarded() {
    opencode("127.0.0.1", &[], false);
}

/// (b) `baseURL` naming a host pinned with `--resolve`, through the broker.
#[test]
fn opencode_with_a_custom_provider_at_a_pinned_name_is_guarded() {
    opencode(
        "model.test",
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
        true,
    );
}
