//! GitHub Copilot CLI (npm `@github/copilot`, a native binary) under `aq
//! run` with no policy file, with its own model provider (BYOK:
//! `COPILOT_PROVIDER_BASE_URL`, an OpenAI-compatible API) served by the
//! key proxy and driven by the fake model server (its `bash` tool): see
//! `real_agents.rs` for what every agent must meet. No GitHub login: with
//! a provider of its own it needs none.

use crate::real_agents::{Check, Launch, launch};

fn copilot(base_url: &str, aq_args: &[&str]) -> Option<crate::real_agents::Run> {
    let run = launch(&Launch {
        dialect: "chat",
        key_var: "COPILOT_PROVIDER_API_KEY",
        base_url: Some(("COPILOT_PROVIDER_BASE_URL", base_url)),
        extra_env: &[("COPILOT_MODEL", "fake-model")],
        aq_args,
        // Headless: a prompt, every tool allowed.
        command: &["copilot", "-p", "do the task", "--allow-all-tools"],
        ..Launch::default()
    })?;
    // Its other destinations (GitHub's API, for its login and telemetry)
    // are on its preset's allowlist: offline they fail, nothing is refused.
    run.check_with(
        "completed with exit code 126",
        &Check {
            refused: false,
            ..Check::default()
        },
    );
    run.out.stdout_has("All done.");
    let start = &run.env.only_session().events_of("session_start")[0];
    assert_eq!(start["grants"]["agent"], "copilot");
    assert_eq!(
        start["grants"]["keys_outside"],
        serde_json::json!(["COPILOT_PROVIDER_API_KEY"])
    );
    Some(run)
}

/// The model server on the host's loopback, in COPILOT_PROVIDER_BASE_URL.
#[test]
fn copilot_works_and_is_guarded_with_a_loopback_endpoint() {
    copilot("http://127.0.0.1:PORT/v1", &[]);
}

/// A name pinned with --resolve: the key proxy connects to the pinned
/// address.
#[test]
fn copilot_works_and_is_guarded_with_a_pinned_endpoint_name() {
    copilot(
        "http://model.test:PORT/v1",
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
    );
}
