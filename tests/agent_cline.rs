//! Cline CLI (npm `cline`, a Bun binary) under `aq run` with no policy
//! file, driven by the fake model server (OpenAI Chat Completions, its
//! `run_commands` tool): see `real_agents.rs` for what every agent must meet.
//!
//! Its endpoint is in its own provider settings
//! (`~/.cline/data/settings/providers.json`, as `cline auth -p
//! openai-compatible -b URL` writes it), its key in `OPENAI_API_KEY`: no
//! variable aq could point at the key proxy, so the key is passed to the
//! agent and blanked in everything it runs.

use crate::real_agents::{Check, Launch, launch};

/// Its settings as `cline auth -p openai-compatible -m fake-model -b URL`
/// writes them, without the key (read from `OPENAI_API_KEY`).
fn providers(base_url: &str) -> String {
    serde_json::json!({
        "version": 1,
        "lastUsedProvider": "openai-compatible",
        "modes": {},
        "providers": {
            "openai-compatible": {
                "settings": {
                    "provider": "openai-compatible",
                    "model": "fake-model",
                    "baseUrl": base_url,
                },
                "updatedAt": "2026-01-01T00:00:00.000Z",
                "tokenSource": "manual",
            }
        }
    })
    .to_string()
}

const SETTINGS: &str = ".cline/data/settings/providers.json";

fn cline(base_url: &str, aq_args: &[&str]) -> Option<crate::real_agents::Run> {
    let settings = providers(base_url);
    let run = launch(&Launch {
        dialect: "chat",
        key_var: "OPENAI_API_KEY",
        home_files: &[(SETTINGS, &settings)],
        aq_args,
        // A prompt on the command line: headless, in act mode, every tool
        // auto-approved.
        command: &["cline", "do the task"],
        ..Launch::default()
    })?;
    run.check_with(
        "Command exited with code 126",
        &Check {
            key_proxy: false,
            ..Check::default()
        },
    );
    run.out.stdout_has("All done.");
    let start = &run.env.only_session().events_of("session_start")[0];
    assert_eq!(start["grants"]["agent"], "cline");
    // Its provider settings are read-only: the run could not redirect the
    // next one's model traffic (and key).
    let now = std::fs::read_to_string(run.env.root().join("home").join(SETTINGS)).unwrap();
    assert!(now.contains("2026-01-01T00:00:00.000Z"), "{now}");
    Some(run)
}

/// The model server on the host's loopback, named in its settings: reached
/// through aq's loopback bridge for the endpoints an agent's own
/// configuration names.
#[test]
fn cline_works_and_is_guarded_with_a_loopback_endpoint() {
    cline("http://127.0.0.1:PORT/v1", &[]);
}

/// A name pinned with --resolve: reached through the broker.
#[test]
fn cline_works_and_is_guarded_with_a_pinned_endpoint_name() {
    let Some(run) = cline(
        "http://model.test:PORT/v1",
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
    ) else {
        return;
    };
    let net = run.env.only_session().events_of("network_connection");
    assert!(
        net.iter()
            .any(|n| n["decision"] == "allowed" && n.to_string().contains("model.test")),
        "{}",
        run.env.only_session().log_text()
    );
}
