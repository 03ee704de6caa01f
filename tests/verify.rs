//! `aq verify`: the battery passes on this machine, as text and as JSON; a
//! profile weakened on purpose shows its leaks; a profile without the kernel
//! sandbox, or a sandbox that cannot be built, is never reported as verified.

use serde_json::Value;

use crate::util::Env;

/// The `pass` / `LEAK` / `ERROR` lines of a text report.
fn probe_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("pass  ") || l.starts_with("LEAK  ") || l.starts_with("ERROR "))
        .collect()
}

/// The status of probe `name` in a `--json` report.
fn status_of<'a>(report: &'a Value, name: &str) -> &'a str {
    report["probes"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["name"] == name))
        .and_then(|p| p["status"].as_str())
        .unwrap_or_else(|| panic!("no probe {name} in {report}"))
}

#[test]
fn verify_passes_every_probe_of_the_strict_profile() {
    let env = Env::new();
    let out = env.aq(&["verify"]);
    out.code(0)
        .stdout_has("aq verify: profile strict")
        .stdout_lacks("\nLEAK ")
        .stdout_lacks("\nERROR ");
    let lines = probe_lines(&out.stdout);
    assert!(lines.len() >= 30, "{} probes{}", lines.len(), out.dump());
    assert!(
        lines.iter().all(|l| l.starts_with("pass  ")),
        "{}",
        out.dump()
    );
    for name in [
        "secret-ssh-key",
        "secret-via-child-cwd",
        "write-tmp",
        "write-git-hook",
        "control-write-workspace",
        "net-tcp-host-loopback",
        "net-dns",
        "env-secret-variables",
        "env-host-processes",
        "sys-ptrace",
        "sys-tiocsti",
        "priv-capabilities",
        "teardown-daemon",
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().nth(1) == Some(name)),
            "no probe {name}{}",
            out.dump()
        );
    }
    let summary = format!(
        "aq verify: {n} probes: {n} pass, 0 LEAK, 0 ERROR",
        n = lines.len()
    );
    out.stdout_has(&summary);
    // The fixture is gone, and nothing was left in /tmp.
    let verify_dir = env.state_home().join("agent-quarantine/verify");
    let left: Vec<_> = std::fs::read_dir(&verify_dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn verify_json_lists_every_probe_as_pass() {
    let env = Env::new();
    let out = env.aq(&["verify", "--json"]);
    out.code(0);
    let report = out.json();
    let probes = report["probes"].as_array().expect("probes is an array");
    assert!(probes.len() >= 30, "{report}");
    for p in probes {
        assert_eq!(p["status"], "pass", "{p}");
        for field in ["name", "category", "tried", "detail"] {
            assert!(
                !p[field].as_str().unwrap_or_default().is_empty(),
                "{field} of {p}"
            );
        }
    }
    assert_eq!(report["profile"], "strict");
    assert_eq!(report["ok"], true);
    assert_eq!(report["counts"]["total"], probes.len());
    assert_eq!(report["counts"]["pass"], probes.len());
    assert_eq!(report["counts"]["leak"], 0);
    assert!(
        report["enforced"]
            .as_str()
            .is_some_and(|e| e.contains("Landlock")),
        "{report}"
    );
    let categories: Vec<&str> = probes
        .iter()
        .filter_map(|p| p["category"].as_str())
        .collect();
    for c in [
        "secrets",
        "writes",
        "control",
        "network",
        "environment",
        "syscalls",
        "privileges",
        "teardown",
    ] {
        assert!(categories.contains(&c), "no {c} probe in {report}");
    }
}

#[test]
fn a_weakened_profile_shows_its_leaks_and_exits_1() {
    let env = Env::new();
    let policy = env.root().join("leaky.toml");
    env.write(
        &policy,
        "version = 1\n\n[profile.leaky]\nextends = \"strict\"\nwritable = [\"/tmp\"]\nnetwork = \"host\"\n",
    );
    let policy = policy.display().to_string();
    let out = env.aq(&["verify", "--policy", &policy, "--profile", "leaky"]);
    out.code(1)
        .stdout_has("LEAK  write-tmp")
        .stdout_has("LEAK  net-tcp-host-loopback")
        .stdout_has("the host's TCP listener accepted a connection")
        .stdout_has("pass  secret-ssh-key")
        .stdout_has("pass  write-git-hook")
        .stdout_has("a LEAK is a boundary that did not hold");
    let json = env.aq(&[
        "verify",
        "--json",
        "--policy",
        &policy,
        "--profile",
        "leaky",
    ]);
    json.code(1);
    let report = json.json();
    assert_eq!(report["ok"], false);
    assert_eq!(status_of(&report, "write-tmp"), "leak");
    assert_eq!(status_of(&report, "net-udp-host-loopback"), "leak");
    assert_eq!(status_of(&report, "sys-ptrace"), "pass");
    assert!(
        report["counts"]["leak"].as_u64().unwrap_or(0) >= 2,
        "{report}"
    );
}

#[test]
fn shims_only_has_no_kernel_sandbox_to_verify() {
    let env = Env::new();
    env.aq(&["verify", "--profile", "shims-only"])
        .code(1)
        .stdout_has("no kernel sandbox to verify");
    let report = env
        .aq(&["verify", "--json", "--profile", "shims-only"])
        .json();
    assert_eq!(report["sandbox"], false);
    assert_eq!(report["ok"], false);
}

#[test]
fn a_sandbox_that_cannot_be_built_exits_125() {
    // A hard-linked secret cannot be masked (its other name stays readable),
    // so a profile that masks one cannot be built: fail closed.
    let env = Env::new();
    let secret = env.root().join("secret.txt");
    env.write(&secret, "FAKE\n");
    std::fs::hard_link(&secret, env.root().join("secret-alias.txt")).unwrap();
    let policy = env.root().join("linked.toml");
    env.write(
        &policy,
        &format!(
            "version = 1\n\n[profile.linked]\nmasked = [\"{}\"]\n",
            secret.display()
        ),
    );
    env.aq(&[
        "verify",
        "--policy",
        &policy.display().to_string(),
        "--profile",
        "linked",
    ])
    .code(125)
    .stderr_has("hard links")
    .stderr_has("nothing was verified")
    .stdout_lacks("pass ");
}

#[test]
fn verify_usage_errors_exit_2_and_the_probe_is_hidden() {
    let env = Env::new();
    env.aq(&["verify", "--profile", "no-such-profile"])
        .code(2)
        .stderr_has("unknown profile `no-such-profile`");
    env.aq(&["--help"])
        .code(0)
        .stdout_has("verify")
        .stdout_lacks("__probe");
    // Outside `aq verify` a probe has no context: it cannot run, and says so.
    env.aq(&["__probe", "secret-ssh-key"])
        .code(2)
        .stdout_has("runs inside `aq verify`");
}
