//! `aq lint`: the policy a session would use here, read for what
//! weakens it, each finding with its rule id; exit 1 on a high one.

use crate::util::Env;

#[test]
fn a_default_setup_has_nothing_to_say() {
    let env = Env::new();
    env.aq(&["lint"])
        .code(0)
        .stdout_has("aq lint: 0 findings (0 high) · profile strict");
}

#[test]
fn risky_settings_are_found_each_with_its_rule() {
    let env = Env::new();
    env.write(
        &env.user_policy(),
        r#"version = 1

[session]
unanswered = "allow"
env_pass = ["GITHUB_TOKEN"]

[rules]
fs-rm-recursive-root = "ask"

[network]
allow = ["*.com", "gist.github.com"]

[profile.strict]
writable = ["~/"]
readable = ["~/.aws"]
exec_guard = false
masked = ["~/no-such-secret-file"]
limits = { processes = 0 }

[[rule]]
id = "let-me-wipe"
action = "allow"
why = "trust me"
program = ["rm"]
args = ["/"]
"#,
    );
    let out = env.aq(&["lint"]);
    out.code(1);
    for rule in [
        "lint-unanswered-allow",
        "lint-env-pass-secret",
        "lint-builtin-block-lowered",
        "lint-network-any",
        "lint-network-upload",
        "lint-writable-home",
        "lint-readable-secrets",
        "lint-exec-guard-off",
        "lint-mask-matches-nothing",
        "lint-limit-removed",
    ] {
        out.stdout_has(rule);
    }
    let report = env.aq(&["lint", "--json"]).json();
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.len() >= 10, "{report}");
    assert_eq!(
        findings[0]["severity"], "high",
        "most severe first: {report}"
    );
    assert!(
        findings
            .iter()
            .all(|f| f["fix"].as_str().is_some_and(|s| !s.is_empty())),
        "{report}"
    );
}

#[test]
fn an_agent_presets_hosts_are_linted_and_strict_fails_on_any_finding() {
    let env = Env::new();
    env.write(
        &env.user_policy(),
        "version = 1\n\n[paths]\nsensitive = [\"~/no-such-vault.kdbx\"]\n",
    );
    // A low finding only: 0 without --strict, 1 with it.
    env.aq(&["lint"])
        .code(0)
        .stdout_has("lint-mask-matches-nothing");
    env.aq(&["lint", "--strict"]).code(1);
    env.aq(&["lint", "--agent", "no-such-agent"])
        .code(2)
        .stderr_has("unknown agent");
}
