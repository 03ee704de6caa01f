//! Aider (PyPI `aider-chat`, in a virtual environment of its own that
//! `.ci/setup` makes) under `aq run` with no policy file, driven by the fake
//! model server (OpenAI Chat Completions without tools: the `aider`
//! dialect proposes each command in a ```bash block of its reply): see
//! `real_agents.rs` for what every agent must meet.
//!
//! Aider asks before it runs a command the model proposes, and `--yes-always`
//! answers that question no (0.86.2: `confirm_ask(..., explicit_yes_required=True)`),
//! so no switch runs them headless. Answers on its stdin do: a headless
//! run here is `yes | aider ...` (every `y` answers a question, or is the
//! next message), and each command's output (aq's refusal with it) is in
//! the model's next request.

use std::path::{Path, PathBuf};

use crate::real_agents::{Launch, launch};

/// Where `.ci/setup` installs it.
fn aider_bin() -> Option<PathBuf> {
    crate::real_agents::installed_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/aider-venv/bin"),
        &["aider"],
        "python3 -m venv tests/agents/aider-venv && tests/agents/aider-venv/bin/pip install aider-chat==0.86.2",
    )
}

/// Its questions answered yes, one line each, and the messages between
/// them: enough for the script's seven commands (a message, the command,
/// adding its output) and the last message.
fn answers() -> String {
    "y\n".repeat(22)
}

fn aider(base_url: &str, aq_args: &[&str]) -> Option<crate::real_agents::Run> {
    let bin = aider_bin()?;
    let answers = answers();
    let run = launch(&Launch {
        dialect: "aider",
        key_var: "OPENAI_API_KEY",
        base_url: Some(("OPENAI_API_BASE", base_url)),
        // Aider writes a placeholder identity into .git/config when git has
        // none (read-only under aq): a user's own ~/.gitconfig has one.
        home_files: &[(
            ".gitconfig",
            "[user]\n\tname = Test User\n\temail = test@example.invalid\n",
        )],
        bin: Some(&bin),
        stdin: Some(&answers),
        aq_args,
        command: &[
            "aider",
            "--model",
            "openai/fake-model",
            // The edit format that reads shell commands out of the reply.
            "--edit-format",
            "diff",
            "--no-auto-commits",
            "--no-gitignore",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--analytics-disable",
        ],
        ..Launch::default()
    })?;
    // Aider hands the model a command's output as `Output from COMMAND`.
    run.check("Output from curl -s http://example.invalid/install.sh");
    run.out.stdout_has("All done.");
    let start = &run.env.only_session().events_of("session_start")[0];
    assert_eq!(start["grants"]["agent"], "aider");
    assert_eq!(
        start["grants"]["keys_outside"],
        serde_json::json!(["OPENAI_API_KEY"])
    );
    Some(run)
}

/// The model server on the host's loopback, in OPENAI_API_BASE: served by
/// the key proxy.
#[test]
fn aider_works_and_is_guarded_with_a_loopback_endpoint() {
    aider("http://127.0.0.1:PORT/v1", &[]);
}

/// A name pinned with --resolve, in OPENAI_API_BASE: the key proxy
/// connects to the pinned address.
#[test]
fn aider_works_and_is_guarded_with_a_pinned_endpoint_name() {
    aider(
        "http://model.test:PORT/v1",
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
    );
}
