//! Red team of `--profile shims-only` (no kernel sandbox: only the shims on
//! `PATH` judge what the agent runs), by a helper who knew only the threat
//! model: what the agent could do to loosen aq for itself or for later
//! sessions, and what aq claimed without enforcing it. Each attempt that
//! crossed is kept here with its fix; the agents are stand-ins (shell
//! scripts under the agents' names), every fixture harmless.

use std::path::PathBuf;

use crate::util::Env;

/// An executable stand-in named `name` (a preset's program) running `body`.
fn stand_in(env: &Env, name: &str, body: &str) -> String {
    let path = env.root().join("agent-bin").join(name);
    env.write(&path, &format!("#!/bin/sh\n{body}"));
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn home(env: &Env) -> PathBuf {
    env.root().join("home")
}

/// The agent wrote an approval for its next command into the session's
/// own directory, spelled with the variable aq gives it
/// (`$AQ_SESSION_DIR`), which the file rules did not read as aq's: the
/// ask then ran as allowed. Both routes (the session's allow list, a
/// forged grant record for `AQ_GRANT`) are refused by `guard-aq-files`.
#[test]
fn the_agent_cannot_approve_its_own_asks_through_the_session_directory() {
    let env = Env::new();
    let agent = stand_in(
        &env,
        "claude",
        "sh -c \"$CMD1\"; echo \"rc1=$?\"\nsh -c \"$CMD2\"; echo \"rc2=$?\"\nmkdir -p \"$AQ_SESSION_DIR/approvals\"\nsh -c \"$CMD3\"; echo \"rc3=$?\"\nAQ_GRANT=r1 sh -c 'echo pwned2 >> ~/.profile_notes'; echo \"rc4=$?\"\n",
    );
    let ask = "echo pwned >> ~/.profile_notes";
    let allow_list = format!(
        r#"printf '%s\n' '["sh","-c","{ask}"]' >> "$AQ_SESSION_DIR/approvals/session-allow.jsonl""#
    );
    let grant = r#"mkdir -p "$AQ_SESSION_DIR/approvals/grants" && echo '[["sh","-c","echo pwned2 >> ~/.profile_notes"]]' > "${AQ_SESSION_DIR}/approvals/grants/r1.json""#;
    let out = env.aq_with(
        &[("CMD1", &allow_list), ("CMD2", ask), ("CMD3", grant)],
        &["run", "--profile", "shims-only", "--", &agent],
    );
    out.code(0)
        .stdout_has("rc1=126")
        .stdout_has("rc2=126")
        .stdout_has("rc3=126")
        .stdout_has("rc4=126");
    assert!(
        !home(&env).join(".profile_notes").exists(),
        "an ask ran on an approval the agent wrote"
    );
    let session = env.only_session();
    assert!(!session.dir.join("approvals/session-allow.jsonl").exists());
    assert!(!session.dir.join("approvals/grants/r1.json").exists());
    let blocked: Vec<_> = session
        .events_of("command_decision")
        .into_iter()
        .filter(|d| d["decision"] == "block")
        .filter(|d| d.to_string().contains("guard-aq-files"))
        .collect();
    assert_eq!(blocked.len(), 2, "{}", session.log_text());
}

/// `aq allow` (and the other verbs that loosen aq or move it out of the
/// agents) ran from the agent's shell with the variable unset, unjudged,
/// and the grant outlived the session. Now `aq` is shimmed like the other
/// programs (its loosening verbs are `guard-aq-files`; with the variable
/// unset the shim refuses, having no session), and the verbs themselves
/// refuse when a live session is among their ancestors, for `aq` reached by
/// absolute path. The same `aq allow` run by the user outside any session
/// is the positive control.
#[test]
fn the_agent_cannot_loosen_aq_for_later_sessions() {
    let env = Env::new();
    let bin = env.root().join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::util::aq_exe(), bin.join("aq")).unwrap();
    env.write(
        &env.work().join("agent-quarantine.toml"),
        "version = 1\n[session]\napproval_timeout_secs = 1\n",
    );
    let verbs = [
        "allow --command wget",
        "deny --command wget",
        "policy trust",
        "disable claude",
        "enable claude --hook",
        "mcp wrap --client claude",
    ];
    let list = verbs.map(|v| format!("'{v}'")).join(" ");
    let agent = stand_in(
        &env,
        "claude",
        &format!(
            "aq allow --command wget; echo \"rc[shim]=$?\"\nunset AQ_SESSION_DIR AQ_SESSION_ID\naq allow --command wget; echo \"rc[shim, unset]=$?\"\nfor verb in {list}; do\n  \"$AQ_BIN\" $verb; echo \"rc[$verb]=$?\"\ndone\n"
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = env.aq_with(
        &[("PATH", &path), ("AQ_BIN", crate::util::aq_exe())],
        &["run", "--profile", "shims-only", "--", &agent],
    );
    out.code(0)
        .stdout_has("rc[shim]=126")
        .stdout_has("rc[shim, unset]=126");
    for verb in verbs {
        out.stdout_has(&format!("rc[{verb}]=2"));
        let name = verb.split(" --").next().unwrap().replace(" claude", "");
        out.stderr_has(&format!("aq {name} cannot run inside an aq session"));
    }
    let session = env.only_session();
    let judged = session.events_of("command_decision").into_iter().any(|d| {
        d["argv"][0] == "aq" && d["decision"] == "block" && d.to_string().contains("guard-aq-files")
    });
    assert!(judged, "{}", session.log_text());
    let policy = std::fs::read_to_string(env.user_policy()).unwrap_or_default();
    assert!(!policy.contains("wget"), "{policy}");
    // Positive control: the user, outside any session.
    env.aq(&["allow", "--command", "wget"]).code(0);
    let policy = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(policy.contains("wget"), "{policy}");
}

/// `--net off` without a sandbox was printed as "network off" while the
/// command had the host's network: now refused, as `--net allow:` is.
#[test]
fn network_off_without_the_sandbox_is_refused_not_claimed() {
    let env = Env::new();
    env.aq(&[
        "run",
        "--profile",
        "shims-only",
        "--net",
        "off",
        "--",
        "true",
    ])
    .code(2)
    .stderr_has("`--net off` needs the kernel sandbox, and profile `shims-only` has none");
    assert!(env.sessions().is_empty(), "nothing ran");
    env.aq(&["run", "--profile", "shims-only", "--", "true"])
        .code(0)
        .stderr_has("network host");
}

/// A shims-only session's log is within reach of what the agent runs (a
/// rewrite with fresh hashes still verifies), so `aq audit verify` says so;
/// a strict session's, which the sandbox keeps out of reach, does not.
#[test]
fn verify_says_a_shims_only_log_shows_damage_not_tampering() {
    let env = Env::new();
    env.aq(&["run", "-q", "--profile", "shims-only", "--", "true"])
        .code(0);
    let shims = env.only_session().id();
    env.aq(&["audit", "verify", &shims])
        .code(0)
        .stdout_has("chain intact")
        .stdout_has("this session ran without aq's sandbox");
    env.aq(&["run", "-q", "--", "true"]).code(0);
    let strict = env
        .sessions()
        .into_iter()
        .map(|s| s.id())
        .find(|id| *id != shims)
        .unwrap();
    env.aq(&["audit", "verify", &strict])
        .code(0)
        .stdout_has("chain intact")
        .stdout_lacks("without aq's sandbox");
}

/// Without the sandbox nothing is written into the agent's files (Kilo's
/// migration marker would have changed how it behaves outside aq too), and
/// a key passed to the agent is removed from what it runs through the
/// shims even when its name does not look secret. Strict is the control
/// for the files.
#[test]
fn without_the_sandbox_the_agents_files_are_left_alone_and_its_keys_kept_to_it() {
    let env = Env::new();
    let kilo = stand_in(
        &env,
        "kilo",
        "echo \"agent:[$KILO_AUTH_CONTENT]\"\nsh -c 'echo \"child:[$KILO_AUTH_CONTENT]\"'\n",
    );
    // Kilo follows XDG_CONFIG_HOME, which the tests set.
    let marker = env.root().join("config/kilo/.bash-permission-migrated");
    let out = env.aq_with(
        &[("KILO_AUTH_CONTENT", "{\"token\":\"fake\"}")],
        &["run", "--profile", "shims-only", "--", &kilo],
    );
    out.code(0)
        .stdout_has("agent:[{\"token\":\"fake\"}]")
        .stdout_has("child:[]");
    assert!(!marker.exists(), "a seed written without the sandbox");
    env.aq(&["run", "--", &kilo]).code(0);
    assert!(marker.exists(), "strict writes the preset's seed");
}

/// The engine let a command write the agent's state paths (Qwen's global
/// instructions, `~/.qwen/QWEN.md`) because the sandbox grants them; without
/// the sandbox nothing is granted, so such a write is asked like any other
/// in the home (and refused, with nobody to answer). In strict the sandbox
/// grants it and the engine lets it run: the control.
#[test]
fn without_the_sandbox_the_agents_state_is_not_exempt_from_the_rules() {
    let env = Env::new();
    let qwen = stand_in(
        &env,
        "qwen",
        "sh -c 'mkdir -p ~/.qwen && echo note >> ~/.qwen/QWEN.md'; echo \"rc=$?\"\n",
    );
    env.aq(&["run", "--profile", "shims-only", "--", &qwen])
        .code(0)
        .stdout_has("rc=126");
    let instructions = home(&env).join(".qwen/QWEN.md");
    assert!(!instructions.exists());
    env.aq(&["run", "--", &qwen]).code(0).stdout_has("rc=0");
    assert!(instructions.exists());
}

/// Second round, against the fixes: a relative `cd` after the one that
/// named the session's directory (or through `CDPATH`) was read from the
/// workspace, so the approval was written and the ask ran.
#[test]
fn relative_moves_after_a_cd_do_not_reach_the_approvals_unjudged() {
    let env = Env::new();
    let agent = stand_in(
        &env,
        "claude",
        "sh -c \"$CMD1\"; echo \"rc1=$?\"\nsh -c \"$CMD2\"; echo \"rc2=$?\"\nsh -c \"$ASK\"; echo \"rc3=$?\"\n",
    );
    let ask = "echo pwned >> ~/.profile_notes";
    let line = format!(r#"printf '%s\n' '["sh","-c","{ask}"]' >> session-allow.jsonl"#);
    let two_cds =
        format!("mkdir -p \"$AQ_SESSION_DIR/approvals\"; cd $AQ_SESSION_DIR; cd approvals; {line}");
    let cdpath = format!("CDPATH=$AQ_SESSION_DIR cd approvals && {line}");
    let out = env.aq_with(
        &[("CMD1", &two_cds), ("CMD2", &cdpath), ("ASK", ask)],
        &["run", "--profile", "shims-only", "--", &agent],
    );
    out.code(0)
        .stdout_has("rc1=126")
        .stdout_has("rc2=126")
        .stdout_has("rc3=126");
    assert!(!home(&env).join(".profile_notes").exists());
    let session = env.only_session();
    assert!(!session.dir.join("approvals/session-allow.jsonl").exists());
}

/// Second round: the ancestry check listed sessions where the caller's
/// `XDG_STATE_HOME` said, so `XDG_STATE_HOME=/nonexistent aq allow …`
/// (by absolute path, past the shim) found none and wrote the grant; and a
/// nested `aq run --policy FILE` ran the agent's commands under a policy
/// it wrote. Now an aq program among the ancestors is enough, and `aq run
/// --policy` is refused inside a session (and blocked by the rules).
#[test]
fn the_ancestry_check_and_nested_sessions_do_not_loosen_aq() {
    let env = Env::new();
    env.write(
        &env.work().join("loose.toml"),
        "version = 1\n[rules]\n\"fs-write-home\" = \"allow\"\n",
    );
    let agent = stand_in(
        &env,
        "claude",
        "unset AQ_SESSION_DIR AQ_SESSION_ID\n\
         XDG_STATE_HOME=/nonexistent \"$AQ_BIN\" allow --command curl; echo \"rc[allow]=$?\"\n\
         XDG_STATE_HOME=/nonexistent \"$AQ_BIN\" run -q --profile shims-only --policy loose.toml -- true; echo \"rc[run]=$?\"\n",
    );
    let out = env.aq_with(
        &[("AQ_BIN", crate::util::aq_exe())],
        &["run", "--profile", "shims-only", "--", &agent],
    );
    out.code(0)
        .stdout_has("rc[allow]=2")
        .stdout_has("rc[run]=2")
        .stderr_has("aq allow cannot run inside an aq session")
        .stderr_has("aq run --policy cannot run inside an aq session");
    let policy = std::fs::read_to_string(env.user_policy()).unwrap_or_default();
    assert!(!policy.contains("curl"), "{policy}");
    // Through the shim the rules block it first.
    let agent = stand_in(
        &env,
        "claude",
        "sh -c 'aq run -q --profile shims-only --policy loose.toml -- true'; echo \"rc[shim]=$?\"\n",
    );
    let bin = env.root().join("agent-bin");
    std::os::unix::fs::symlink(crate::util::aq_exe(), bin.join("aq")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    env.aq_with(
        &[("PATH", &path)],
        &["run", "--profile", "shims-only", "--", &agent],
    )
    .code(0)
    .stdout_has("rc[shim]=126")
    .stderr_has("guard-aq-files");
    // Control: the user's own `aq run --policy`, outside any session.
    env.aq(&[
        "run",
        "-q",
        "--profile",
        "shims-only",
        "--policy",
        "loose.toml",
        "--",
        "true",
    ])
    .code(0);
}
