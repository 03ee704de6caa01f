//! `aq doctor`: the checks as JSON and as text, the `--fix` commands, and a
//! host where user namespaces are really denied.

use std::process::Command;

use serde_json::Value;

use crate::util::{Env, aq_exe};

const CHECKS: [&str; 9] = [
    "user-namespace",
    "mount-namespace",
    "pid-namespace",
    "ipc-namespace",
    "network-namespace",
    "landlock",
    "seccomp",
    "exec-guard",
    "cgroup-v2",
];

/// The check named `name` in a `--json` report.
fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name} in {report}"))
}

/// Whether profile `name` works, in a `--json` report.
fn profile_works(report: &Value, name: &str) -> bool {
    report["profiles"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no profile {name} in {report}"))["works"]
        .as_bool()
        .expect("works is a bool")
}

/// Whether util-linux `unshare` can create a user namespace here (an
/// opinion independent of aq's own probe); None when it cannot be run.
fn unshare_user_works() -> Option<bool> {
    let out = Command::new("unshare")
        .args(["--user", "true"])
        .output()
        .ok()?;
    Some(out.status.success())
}

#[test]
fn doctor_json_has_every_check_with_a_valid_status() {
    let env = Env::new();
    let out = env.aq(&["doctor", "--json"]);
    let report = out.json();
    for name in CHECKS {
        let c = check(&report, name);
        let status = c["status"].as_str().unwrap_or_default();
        assert!(
            ["ok", "limited", "missing"].contains(&status),
            "{name}: status {status:?}\n{}",
            out.dump()
        );
        assert!(!c["detail"].as_str().unwrap_or_default().is_empty(), "{c}");
        let fixes = c["fix"].as_array().expect("fix is an array");
        assert_eq!(status == "ok", fixes.is_empty(), "{c}");
    }
    assert!(profile_works(&report, "shims-only"), "{report}");
    // Exit 0 exactly when the default profile (strict) works.
    out.code(if profile_works(&report, "strict") {
        0
    } else {
        1
    });
}

#[test]
fn doctor_agrees_with_unshare_and_finds_landlock() {
    let env = Env::new();
    let out = env.aq(&["doctor", "--json"]);
    let report = out.json();
    let userns = check(&report, "user-namespace");
    match unshare_user_works() {
        Some(works) => assert_eq!(
            userns["status"],
            if works { "ok" } else { "missing" },
            "unshare --user true says {works}\n{}",
            out.dump()
        ),
        None => eprintln!("skip: no util-linux unshare to compare with"),
    }
    let landlock = check(&report, "landlock");
    if landlock["status"] == "missing" && std::env::var_os("AQ_SANDBOX_REQUIRE_FULL").is_none() {
        eprintln!("skip: Landlock missing here: {}", landlock["detail"]);
        return;
    }
    assert_ne!(landlock["status"], "missing", "{}", out.dump());
    assert!(
        landlock["detail"]
            .as_str()
            .unwrap_or_default()
            .starts_with("ABI "),
        "{landlock}"
    );
}

#[test]
fn doctor_text_has_one_line_per_check_then_profiles() {
    let env = Env::new();
    let out = env.aq(&["doctor"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    for (line, name) in lines.iter().zip(CHECKS) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(
            ["ok", "limited", "missing"].contains(&words[0]) && words[1] == name,
            "line {line:?} should be STATUS {name} DETAIL\n{}",
            out.dump()
        );
        assert!(words.len() > 2, "no detail: {line:?}");
    }
    assert!(
        lines[CHECKS.len()].starts_with("profiles: works: "),
        "{}",
        out.dump()
    );
    assert!(lines[CHECKS.len()].contains("shims-only"), "{}", out.dump());
    // How to tell whether a refused read is the private home's doing.
    assert!(
        lines[CHECKS.len() + 1].starts_with("reads: strict keeps a private home")
            && lines[CHECKS.len() + 1].contains("--home read-only"),
        "{}",
        out.dump()
    );
    for line in &lines[CHECKS.len() + 2..] {
        assert!(line.starts_with("to fix: "), "{line:?}\n{}", out.dump());
    }
}

#[test]
fn doctor_fix_lists_the_commands_under_each_problem() {
    let env = Env::new();
    let report = env.aq(&["doctor", "--json"]).json();
    let out = env.aq(&["doctor", "--fix"]);
    for c in report["checks"].as_array().expect("checks") {
        let name = c["name"].as_str().unwrap_or_default();
        let heading = format!("to fix: {name}:\n");
        if c["status"] == "ok" {
            out.stdout_lacks(&heading);
            continue;
        }
        let mut block = heading;
        for line in c["fix"].as_array().expect("fix") {
            block.push_str(&format!("  {}\n", line.as_str().unwrap_or_default()));
        }
        out.stdout_has(&block);
    }
}

/// Fail closed for real: inside a user namespace of our own, its root lowers
/// that namespace's own `user.max_user_namespaces` to 0 (a per-namespace
/// limit; nothing outside changes), so aq cannot create one.
#[test]
fn doctor_names_the_limit_when_user_namespaces_are_denied() {
    if unshare_user_works() != Some(true) {
        eprintln!("skip: cannot create the outer user namespace with util-linux unshare");
        return;
    }
    let script = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && exec {} doctor --json",
        aq_exe()
    );
    let env = Env::new();
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c", &script])
        .current_dir(env.work())
        .env("HOME", env.root().join("home"))
        .output()
        .expect("run unshare");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let dump = format!(
        "$ unshare --user --map-root-user sh -c {script:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{dump}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{dump}"));
    let userns = check(&report, "user-namespace");
    assert_eq!(userns["status"], "missing", "{dump}");
    let detail = userns["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("No space left on device"), "{detail}");
    assert!(detail.contains("user.max_user_namespaces = 0"), "{detail}");
    assert_eq!(
        userns["fix"][0], "sudo sysctl -w user.max_user_namespaces=15000",
        "{dump}"
    );
    assert_eq!(check(&report, "network-namespace")["status"], "missing");
    for p in ["strict", "dev", "network-isolated", "ci"] {
        assert!(!profile_works(&report, p), "{p} should fail closed\n{dump}");
    }
    assert!(profile_works(&report, "shims-only"), "{dump}");
}
