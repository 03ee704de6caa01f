//! Red team of the managed policy (docs/teams.md): a non-root user, a
//! repository or an agent's command line trying to get around the ceiling
//! the machine's managed file sets. Each attempt is a test: one the code
//! holds passes (with a positive control where there is one); one that
//! crosses asserts the secure behaviour and is `#[ignore = "crosses: …"]`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::managed::{aq_m, keypair, managed_env};
use crate::util::*;

/// A file `f` and a script `s.sh` that runs `chmod` (as `how`) on it.
fn chmod_script(env: &Env, how: &str) {
    env.write(&env.work().join("f"), "");
    env.write(
        &env.work().join("s.sh"),
        &format!("{how} +x f\necho \"chmod exited $?\"\n"),
    );
}

fn exec_bit(env: &Env) -> u32 {
    std::fs::metadata(env.work().join("f"))
        .unwrap()
        .permissions()
        .mode()
        & 0o111
}

// ---- what a session does with a rule the managed file sets ---------------------

#[test]

fn unanswered_allow_does_not_run_an_ask_the_managed_file_sets() {
    let (env, file) = managed_env("version = 1\n[rules]\n\"fs-permissions\" = \"ask\"\n");
    chmod_script(&env, "chmod");
    // Positive control: under the managed file alone, nobody answers, and
    // the ask is denied.
    aq_m(&env, &file, &["run", "--", "sh", "s.sh"])
        .code(0)
        .stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(&env), 0);
    // The user's own file makes unanswered asks run.
    env.write(
        &env.user_policy(),
        "version = 1\n[session]\nunanswered = \"allow\"\napproval_timeout_secs = 1\n",
    );
    let out = aq_m(&env, &file, &["run", "--", "sh", "s.sh"]);
    out.stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(&env), 0, "a managed ask ran unanswered");
}

#[test]

fn a_profile_without_the_exec_guard_does_not_run_what_the_managed_file_blocks() {
    let (env, file) = managed_env("version = 1\n[rules]\n\"fs-permissions\" = \"block\"\n");
    chmod_script(&env, "/bin/chmod");
    // Positive control: the exec guard blocks the absolute path.
    aq_m(&env, &file, &["run", "--", "sh", "s.sh"])
        .code(0)
        .stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(&env), 0);
    env.write(
        &env.user_policy(),
        "version = 1\n[profile.strict]\nexec_guard = false\n",
    );
    aq_m(&env, &file, &["run", "--", "sh", "s.sh"]).stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(&env), 0, "a managed block ran without the guard");
}

#[test]

fn switching_the_sandbox_off_is_refused_where_shims_only_is_forbidden() {
    let (env, file) = managed_env(
        "version = 1\n[rules]\n\"fs-permissions\" = \"block\"\n[managed]\nforbid-profiles = [\"shims-only\"]\n",
    );
    chmod_script(&env, "/bin/chmod");
    env.write(
        &env.user_policy(),
        "version = 1\n[profile.strict]\nsandbox = false\n",
    );
    // What `forbid-profiles = ["shims-only"]` is for (docs/teams.md: "a
    // floor: always the kernel sandbox").
    aq_m(&env, &file, &["check"]).code(1);
    aq_m(&env, &file, &["run", "--", "sh", "s.sh"])
        .stderr_lacks("no kernel sandbox")
        .stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(&env), 0);
}

#[test]

fn a_profile_extending_a_forbidden_one_is_refused() {
    let (env, file) = managed_env("version = 1\n[managed]\nforbid-profiles = [\"shims-only\"]\n");
    // Positive control: the profile by its own name is refused.
    aq_m(
        &env,
        &file,
        &["run", "--profile", "shims-only", "--", "true"],
    )
    .code(2)
    .stderr_has("[managed] forbid-profiles");
    env.write(
        &env.user_policy(),
        "version = 1\n[profile.mine]\nextends = \"shims-only\"\n",
    );
    aq_m(&env, &file, &["run", "--profile", "mine", "--", "true"])
        .code(2)
        .stderr_lacks("no kernel sandbox");
}

#[test]

fn a_program_override_does_not_lower_a_rule_the_managed_file_sets() {
    let (env, file) = managed_env(
        "version = 1\n[rules]\n\"cloud-destroy\" = \"block\"\n\"cloud-delete\" = \"block\"\n",
    );
    aq_m(
        &env,
        &file,
        &["explain", "--", "kubectl", "delete", "namespace", "prod"],
    )
    .stdout_has("BLOCK");
    env.write(
        &env.user_policy(),
        "version = 1\n[program.kubectl]\nsubs = { \"delete\" = \"read\" }\n[program.gh]\nsubs = { \"repo delete\" = \"read\" }\n",
    );
    aq_m(
        &env,
        &file,
        &["explain", "--", "kubectl", "delete", "namespace", "prod"],
    )
    .stdout_has("BLOCK");
    aq_m(
        &env,
        &file,
        &["explain", "--", "gh", "repo", "delete", "o/r", "--yes"],
    )
    .stdout_has("BLOCK");
    aq_m(&env, &file, &["check"]).code(1);
}

#[test]
fn under_strict_a_program_override_cannot_lower_what_the_rules_decide() {
    let (env, file) = managed_env(
        "version = 1\n[rules]\n\"cloud-destroy\" = \"block\"\n[managed]\nstrict = true\n",
    );
    env.write(
        &env.user_policy(),
        "version = 1\n[program.kubectl]\nsubs = { \"delete\" = \"read\" }\n",
    );
    aq_m(
        &env,
        &file,
        &["explain", "--", "kubectl", "delete", "namespace", "prod"],
    )
    .stdout_has("BLOCK");
    aq_m(&env, &file, &["check"])
        .code(1)
        .stderr_has("refused [program.kubectl] subs \"delete\" = \"read\"")
        .stderr_has("[managed] strict");
    // Positive control: without the managed file the override decides.
    env.aq(&["explain", "--", "kubectl", "delete", "namespace", "prod"])
        .stdout_has("ALLOW");
}

#[test]
fn a_custom_allow_rule_does_not_lift_a_managed_ask() {
    let (env, file) = managed_env("version = 1\n[rules]\n\"fs-permissions\" = \"ask\"\n");
    env.write(
        &env.user_policy(),
        "version = 1\n[[rule]]\nid = \"my-chmod\"\naction = \"allow\"\nwhy = \"mine\"\nprogram = [\"chmod\"]\n",
    );
    aq_m(&env, &file, &["explain", "--", "chmod", "+x", "f"]).stdout_has("ASK");
    // Positive control: without the managed file the rule lifts the ask.
    env.aq(&["explain", "--", "chmod", "+x", "f"])
        .stdout_has("ALLOW");
}

// ---- strict ---------------------------------------------------------------------

#[test]
fn under_strict_no_key_of_the_users_file_loosens_anything() {
    let (env, file) = managed_env(
        "version = 1\n[rules]\n\"fs-permissions\" = \"ask\"\n[managed]\nstrict = true\n",
    );
    let user = "version = 1\n[session]\nunanswered = \"allow\"\ntrusted_exec = [\"~/bin\"]\nenv_pass = [\"AWS_SECRET_ACCESS_KEY\"]\nhost_sockets = [\"/run/docker.sock\"]\n[paths]\nunmasked = [\"~/.aws/credentials\"]\n[profile.strict]\nexec_guard = false\nsandbox = false\nwritable = [\"/\"]\n[profile.mine]\nextends = \"shims-only\"\n[workspace.\"/\"]\nwritable = [\"/\"]\n[network]\nallow = [\"example.invalid\"]\nunlisted = \"ask\"\n";
    env.write(&env.user_policy(), user);
    chmod_script(&env, "/bin/chmod");
    // Positive control: without the managed file, the user's file switches
    // the guard off and the unanswered ask runs.
    env.aq(&["run", "--", "sh", "s.sh"])
        .stdout_has("chmod exited 0");
    std::fs::set_permissions(env.work().join("f"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = aq_m(&env, &file, &["check"]);
    out.code(1);
    for entry in [
        "`unanswered = \"allow\"`",
        "`trusted_exec` entry `~/bin`",
        "`env_pass` of `AWS_SECRET_ACCESS_KEY`",
        "`host_sockets` entry `/run/docker.sock`",
        "[paths] unmasked `~/.aws/credentials`",
        "`exec_guard = false` in [profile.strict]",
        "`sandbox = false` in [profile.strict]",
        "writable path `/` in [profile.strict]",
        "new profile `mine`",
        "[workspace.\"/\"]",
        "[network] allow `example.invalid`",
    ] {
        assert!(
            out.stderr.contains(&format!("refused {entry}")),
            "not refused: {entry}{}",
            out.dump()
        );
    }
    aq_m(&env, &file, &["run", "--", "sh", "s.sh"])
        .code(0)
        .stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(&env), 0);
    aq_m(&env, &file, &["run", "--profile", "mine", "--", "true"]).code(2);
    // `aq allow` writes nothing the managed file would refuse.
    let before = std::fs::read_to_string(env.user_policy()).unwrap();
    aq_m(&env, &file, &["allow", "--command", "chmod"])
        .code(2)
        .stderr_has("nothing was written");
    assert_eq!(std::fs::read_to_string(env.user_policy()).unwrap(), before);
}

// ---- modes and flags ------------------------------------------------------------

#[test]
fn forbid_learn_holds_against_a_profile_in_learn_mode() {
    let user = "version = 1\n[session]\nprofile = \"learning\"\n[profile.learning]\nextends = \"strict\"\nmode = \"learn\"\n";
    let (env, file) = managed_env("version = 1\n[managed]\nforbid-learn = true\n");
    env.write(&env.user_policy(), user);
    aq_m(&env, &file, &["run", "--", "true"])
        .code(2)
        .stderr_has("learn mode is refused");
    aq_m(&env, &file, &["run", "--profile", "learning", "--", "true"])
        .code(2)
        .stderr_has("[managed] forbid-learn");
    // Positive control: without the key, the profile runs in learn mode.
    std::fs::write(&file, "version = 1\n").unwrap();
    aq_m(&env, &file, &["run", "--", "true"])
        .code(0)
        .stderr_has("learn mode");
}

#[test]
fn forbid_policy_flag_holds_in_the_equals_form() {
    let (env, file) = managed_env("version = 1\n[managed]\nforbid-policy-flag = true\n");
    let flag = env.root().join("p.toml");
    env.write(&flag, "version = 1\n");
    let arg = format!("--policy={}", flag.display());
    aq_m(&env, &file, &[&arg, "explain", "--", "true"])
        .code(2)
        .stderr_has("--policy is refused");
    // Positive control.
    std::fs::write(&file, "version = 1\n").unwrap();
    aq_m(&env, &file, &[&arg, "explain", "--", "true"]).code(0);
}

#[test]

fn require_checkpoints_refuses_a_session_whose_store_cannot_open() {
    let (env, file) = managed_env("version = 1\n[managed]\nrequire-checkpoints = true\n");
    env.write(&env.work().join("data.txt"), "original\n");
    env.write(
        &env.state_home().join("agent-quarantine/undo"),
        "not a directory\n",
    );
    let out = aq_m(
        &env,
        &file,
        &["run", "--", "sh", "-c", "echo changed > data.txt"],
    );
    assert_eq!(
        std::fs::read_to_string(env.work().join("data.txt")).unwrap(),
        "original\n",
        "the session ran without checkpoints{}",
        out.dump()
    );
}

#[test]
fn require_checkpoints_holds_against_a_zero_file_size() {
    let (env, file) = managed_env("version = 1\n[managed]\nrequire-checkpoints = true\n");
    env.write(&env.user_policy(), "version = 1\n[undo]\nmax_file_mb = 0\n");
    // Not a way to keep nothing: the value is refused outright.
    aq_m(&env, &file, &["run", "--", "true"])
        .code(2)
        .stderr_has("max_file_mb");
}

// ---- the network ----------------------------------------------------------------

/// An HTTP server on 127.0.0.1 answering every request with `body`; its port.
fn http_server(body: &'static str) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                let _ = write!(
                    conn,
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

const LOCKED_NET: &str =
    "version = 1\n[network]\nallow = [\"example.com\"]\n[managed]\nlock-network = true\n";

#[test]

fn resolve_pins_do_not_take_a_locked_network_elsewhere() {
    let port = http_server("SECRET-LOCAL");
    let (env, file) = managed_env(LOCKED_NET);
    let url = format!("http://example.com:{port}/");
    let script = format!("curl -s -m 5 {url}; echo \" curl=$?\"");
    // The user allows fetching (a rule the managed file does not set).
    env.write(
        &env.user_policy(),
        "version = 1\n[rules]\n\"net-fetch\" = \"allow\"\n",
    );
    // --resolve on the command line.
    let out = aq_m(
        &env,
        &file,
        &[
            "run",
            "--resolve",
            "example.com:127.0.0.1",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    out.stdout_lacks("SECRET-LOCAL");
    // [network] resolve in the user's file.
    env.write(
        &env.user_policy(),
        "version = 1\n[rules]\n\"net-fetch\" = \"allow\"\n[network]\nresolve = [\"example.com=127.0.0.1\"]\n",
    );
    aq_m(&env, &file, &["check"]).code(1);
    aq_m(&env, &file, &["run", "--", "sh", "-c", &script]).stdout_lacks("SECRET-LOCAL");
}

#[test]
fn a_locked_network_drops_permits_and_never_asks() {
    let (env, file) = managed_env(LOCKED_NET);
    env.write(
        &env.user_policy(),
        "version = 1\n[network]\npermit = [\"10.0.0.0/8\"]\nunlisted = \"ask\"\n",
    );
    let show = aq_m(&env, &file, &["policy", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_str(show.stdout.trim()).unwrap();
    let strict = &v["in_force"][0]["network"];
    assert_eq!(strict["permit"], serde_json::json!([]), "{strict}");
    assert_eq!(strict["unlisted"], "refuse", "{strict}");
    // The host's own network is refused, and --net adds nothing.
    aq_m(&env, &file, &["run", "--profile", "dev", "--", "true"])
        .code(2)
        .stderr_has("[managed] lock-network");
    aq_m(
        &env,
        &file,
        &[
            "run",
            "--net",
            "allow:example.com,evil.example",
            "--",
            "true",
        ],
    )
    .code(2)
    .stderr_has("`evil.example` is refused");
    // Positive control: without the managed file the permit is in force.
    let show = env.aq(&["policy", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_str(show.stdout.trim()).unwrap();
    assert_ne!(v["in_force"][0]["network"]["permit"], serde_json::json!([]));
}

// ---- where the managed file is ----------------------------------------------------

#[test]
fn a_default_managed_file_the_user_cannot_see_is_not_replaced_by_the_variable() {
    // A private mount namespace with an overlay on /etc, so that the
    // default place exists only for this test.
    let ok = |c: &mut Command| c.status().map(|s| s.success()).unwrap_or(false);
    // CI has mount namespaces (AQ_SANDBOX_REQUIRE_FULL): there a missing
    // one fails the test rather than skipping it.
    let required = std::env::var_os("AQ_SANDBOX_REQUIRE_FULL").is_some();
    if !ok(Command::new("unshare").args(["-m", "true"])) {
        assert!(!required, "no mount namespaces, and CI requires them");
        eprintln!("SKIPPED: no mount namespaces here");
        return;
    }
    let (root, aq, uid, gid) = user_scratch("aq-managed-rt-", &["home", "work"]);
    let r = root.path();
    for d in ["upper", "ovwork"] {
        std::fs::create_dir_all(r.join(d)).unwrap();
    }
    let script = format!(
        r#"set -e
mount -t overlay overlay -o lowerdir=/etc,upperdir={r}/upper,workdir={r}/ovwork /etc
mkdir -m 700 /etc/agent-quarantine
printf 'version = 1\n[rules]\n"fs-permissions" = "block"\n' > /etc/agent-quarantine/managed.toml
chmod 644 /etc/agent-quarantine/managed.toml
cd {r}/work
for var in "" AQ_MANAGED_FILE={r}/nowhere/managed.toml; do
  setpriv --reuid {uid} --regid {gid} --clear-groups env -i PATH=/usr/bin:/bin HOME={r}/home $var {aq} explain -- chmod +x f 2>&1 | head -3
  echo "=="
done
"#,
        r = r.display(),
        aq = aq.display()
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        assert!(!required, "cannot set up the overlay: {out:?}");
        eprintln!("SKIPPED: cannot set up the overlay: {out:?}");
        return;
    }
    let parts: Vec<&str> = stdout.split("==").collect();
    // Without the variable: fail closed (the file cannot be read).
    assert!(parts[0].contains("is refused"), "{stdout}");
    // With it: still the default file's decision, or a refusal; never
    // a session without the managed file.
    assert!(
        parts[1].contains("BLOCK") || parts[1].contains("is refused"),
        "ran without the managed file: {stdout}"
    );
}

#[test]

fn a_managed_link_into_a_directory_others_write_is_refused() {
    let (env, file) = managed_env("version = 1\n[rules]\n\"fs-permissions\" = \"block\"\n");
    let (uid, gid) = aqtest_ids().unwrap_or((65534, 65534));
    // The admin keeps the real file (and an older one) in a directory an
    // ordinary user owns, and links to it from the checked directory.
    let theirs = env.root().join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let real = theirs.join("managed.toml");
    std::fs::rename(&file, &real).unwrap();
    std::fs::write(theirs.join("old.toml"), "version = 1\n").unwrap();
    std::fs::set_permissions(
        theirs.join("old.toml"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::os::unix::fs::chown(&theirs, Some(uid), Some(gid)).unwrap();
    std::os::unix::fs::symlink(&real, &file).unwrap();
    // That user swaps the older root-owned file in.
    use std::os::unix::process::CommandExt;
    let mv = Command::new("mv")
        .arg(theirs.join("old.toml"))
        .arg(&real)
        .uid(uid)
        .gid(gid)
        .status()
        .unwrap();
    assert!(mv.success());
    let out = aq_m(&env, &file, &["explain", "--", "chmod", "+x", "f"]);
    assert!(
        out.code == Some(2) || out.stdout.contains("BLOCK"),
        "a swapped managed file was accepted{}",
        out.dump()
    );
}

// ---- pull -----------------------------------------------------------------------

fn signed(dir: &Path, name: &str, text: &str, secret: &Path) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = Command::new("minisign")
        .args(["-S", "-s"])
        .arg(secret)
        .arg("-m")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    file
}

#[test]
fn pull_refuses_a_bundle_that_would_weaken_the_next_pull_or_another_key() {
    let env = Env::new();
    let keys = env.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, secret) = keypair(&keys, "team");
    let (other, other_secret) = keypair(&keys, "other");
    let etc = env.root().join("etc-aq");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::set_permissions(&etc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let managed = etc.join("managed.toml");
    let m = managed.to_str().unwrap();
    let pull = |args: &[&str]| {
        let mut all = vec!["policy", "pull"];
        all.extend_from_slice(args);
        env.aq_with(&[("AQ_MANAGED_FILE", m)], &all)
    };
    // Signed, but pins no key: the next pull could not be verified.
    let nokey = signed(
        &keys,
        "nokey.toml",
        "version = 1\n[managed]\nserial = 2\n",
        &secret,
    );
    pull(&[nokey.to_str().unwrap(), "--key", &key])
        .code(2)
        .stderr_has("pins no [managed] public-key");
    assert!(!managed.exists());
    // Signed, but without a serial: no rollback protection.
    let noserial = signed(
        &keys,
        "noserial.toml",
        &format!("version = 1\n[managed]\npublic-key = \"{key}\"\n"),
        &secret,
    );
    pull(&[noserial.to_str().unwrap(), "--key", &key])
        .code(2)
        .stderr_has("no [managed] serial");
    // Positive control: a good bundle installs.
    let good = signed(
        &keys,
        "good.toml",
        &format!(
            "version = 1\n[rules]\n\"pkg-install\" = \"block\"\n[managed]\nserial = 2\npublic-key = \"{key}\"\n"
        ),
        &secret,
    );
    pull(&[good.to_str().unwrap(), "--key", &key]).code(0);
    // Once a key is pinned, --key cannot bring another in.
    let theirs = signed(
        &keys,
        "theirs.toml",
        &format!("version = 1\n[managed]\nserial = 9\npublic-key = \"{other}\"\n"),
        &other_secret,
    );
    pull(&[theirs.to_str().unwrap(), "--key", &other])
        .code(2)
        .stderr_has("--key differs from the key");
    pull(&[theirs.to_str().unwrap()])
        .code(2)
        .stderr_has("does not verify");
    // The signature of one file over another's name: refused.
    std::fs::copy(
        keys.join("good.toml.minisig"),
        keys.join("theirs.toml.minisig"),
    )
    .unwrap();
    pull(&[theirs.to_str().unwrap()])
        .code(2)
        .stderr_has("does not verify");
    // A relative path is not a source.
    pull(&["good.toml"])
        .code(2)
        .stderr_has("is not a policy source");
    assert_eq!(
        std::fs::read(&managed).unwrap(),
        std::fs::read(&good).unwrap()
    );
}
