//! `aq verify`: the battery passes on this machine, as text and as JSON, as
//! root and as an unprivileged user, each pass backed by its positive control
//! (the same attempt succeeding without the sandbox); a profile weakened on
//! purpose shows its leaks; a profile without the kernel sandbox, or a
//! sandbox that cannot be built, is never reported as verified.

use serde_json::Value;

use crate::util::Env;

/// Probes this kernel may refuse to anyone, sandbox or not (no module or
/// kexec support, or no privilege for them outside the init namespaces):
/// they may be `n/a`, never a pass without their control.
const NOT_SHOWN_ANYWHERE: [&str; 2] = ["sys-kexec-load", "sys-init-module"];
/// What the host refuses an unprivileged user anyway: file handles and
/// `/etc` (privilege and file modes), BPF (`unprivileged_bpf_disabled`).
const NOT_SHOWN_FOR_A_USER: [&str; 3] = ["secret-open-by-handle", "write-etc", "sys-bpf"];

/// The `pass` / `LEAK` / `ERROR` / `n/a` lines of a text report.
fn probe_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            l.starts_with("pass  ")
                || l.starts_with("LEAK  ")
                || l.starts_with("ERROR ")
                || l.starts_with("n/a   ")
        })
        .collect()
}

/// The probes of a `--json` report that are `n/a`, after checking that every
/// other one passed and that each pass outside the control category says
/// what its control did without the sandbox.
fn not_shown_after_checking_controls(report: &Value) -> Vec<String> {
    let probes = report["probes"].as_array().expect("probes is an array");
    let mut not_shown = Vec::new();
    for p in probes {
        let name = p["name"].as_str().unwrap_or_default();
        let detail = p["detail"].as_str().unwrap_or_default();
        match p["status"].as_str() {
            Some("pass") if p["category"] == "control" => {}
            Some("pass") => assert!(
                detail.contains(" · without the sandbox: "),
                "{name} passed without a control: {p}"
            ),
            Some("n/a") => {
                assert!(
                    detail.contains("without the sandbox it is refused too"),
                    "{p}"
                );
                not_shown.push(name.to_string());
            }
            _ => panic!("{name} neither passed nor is n/a: {p}"),
        }
    }
    not_shown
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
    let not_shown: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("n/a   "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("pass  ") || l.starts_with("n/a   ")),
        "{}",
        out.dump()
    );
    // As root, only what this kernel lacks or refuses to anyone is n/a.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        assert!(
            not_shown.iter().all(|n| NOT_SHOWN_ANYWHERE.contains(n)),
            "{not_shown:?}{}",
            out.dump()
        );
    }
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
        "aq verify: {} probes: {} pass, 0 LEAK, 0 ERROR, {} n/a",
        lines.len(),
        lines.len() - not_shown.len(),
        not_shown.len()
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
fn verify_json_lists_every_probe_with_its_control() {
    let env = Env::new();
    let out = env.aq(&["verify", "--json"]);
    out.code(0);
    let report = out.json();
    let probes = report["probes"].as_array().expect("probes is an array");
    assert!(probes.len() >= 30, "{report}");
    let not_shown = not_shown_after_checking_controls(&report);
    for p in probes {
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
    assert_eq!(report["counts"]["pass"], probes.len() - not_shown.len());
    assert_eq!(report["counts"]["n/a"], not_shown.len());
    assert_eq!(report["counts"]["leak"], 0);
    assert_eq!(report["counts"]["error"], 0);
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
fn an_unprivileged_user_verifies_every_probe_against_its_control() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        aq_testkit::not_applicable("already unprivileged: the other tests here are the run");
        return;
    }
    let (root, aq, uid, gid) =
        crate::util::user_scratch("aq-verify-user-", &["home", "state", "config"]);
    let r = root.path();
    let out = crate::util::aq_as_user(r, &aq, (uid, gid), "home", &["verify", "--json"]);
    let dump = format!(
        "uid {uid}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{dump}");
    let report: Value = serde_json::from_slice(&out.stdout).expect(&dump);
    assert_eq!(report["ok"], true, "{dump}");
    let not_shown = not_shown_after_checking_controls(&report);
    for name in &not_shown {
        assert!(
            NOT_SHOWN_ANYWHERE.contains(&name.as_str())
                || NOT_SHOWN_FOR_A_USER.contains(&name.as_str()),
            "{name} is n/a for uid {uid}: {dump}"
        );
    }
    // What the user cannot do outside either is said, not passed.
    for name in ["write-etc", "secret-open-by-handle"] {
        assert_eq!(status_of(&report, name), "n/a", "{dump}");
    }
    // The namespaced controls showed the seccomp filter's part for a user too.
    for name in [
        "sys-mount",
        "sys-setns",
        "net-raw-icmp",
        "sys-socket-packet",
    ] {
        assert_eq!(status_of(&report, name), "pass", "{dump}");
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
