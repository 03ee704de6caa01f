//! The managed policy (docs/teams.md): a root-owned file read first that
//! nothing below loosens, and bundles pulled with a verified signature.
//! The managed file is named by `AQ_MANAGED_FILE` (honoured only where
//! /etc/agent-quarantine/managed.toml does not exist), in each test's own
//! root-owned directory, so tests do not see each other's.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

const MANAGED: &str = r#"version = 1
[rules]
"fs-permissions" = "block"
"pkg-install" = "block"

[managed]
lock-network = true
forbid-profiles = ["shims-only"]
forbid-hooks-approve = true
require-checkpoints = true
"#;

/// An environment whose machine has `managed` as its managed file.
pub(crate) fn managed_env(managed: &str) -> (Env, PathBuf) {
    let env = Env::new();
    let dir = env.root().join("etc-aq");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.join("managed.toml");
    std::fs::write(&file, managed).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    (env, file)
}

pub(crate) fn aq_m(env: &Env, file: &Path, args: &[&str]) -> Output {
    env.aq_with(&[("AQ_MANAGED_FILE", file.to_str().unwrap())], args)
}

#[test]
fn nothing_below_the_managed_file_loosens_it() {
    let (env, file) = managed_env(MANAGED);
    let f = file.display().to_string();
    // The user's own file tries every way: actions, a custom allow rule,
    // a host, hooks approving, checkpoints off.
    env.write(
        &env.user_policy(),
        "version = 1\n[rules]\n\"fs-permissions\" = \"allow\"\n\"pkg-install\" = \"ask\"\n\n[[rule]]\nid = \"my-chmod\"\naction = \"allow\"\nwhy = \"mine\"\nprogram = [\"chmod\"]\n\n[network]\nallow = [\"example.invalid\"]\n\n[hooks]\nallow = \"approve\"\n\n[undo]\nenabled = false\n",
    );
    // The decision holds: the engine blocks what the managed file blocks.
    aq_m(&env, &file, &["explain", "--", "chmod", "+x", "f"])
        .stdout_has("BLOCK")
        .stdout_has("fs-permissions");
    // Positive control: without the managed file the user's allow stands.
    env.aq(&["explain", "--", "chmod", "+x", "f"])
        .stdout_has("ALLOW");
    // `aq check` names each refused entry, its file and line, and the key.
    let out = aq_m(&env, &file, &["check"]);
    out.code(1)
        .stderr_has(&format!(
            "refused `\"fs-permissions\" = \"allow\"`: the managed policy {f} locks [rules] \"fs-permissions\""
        ))
        .stderr_has("policy.toml:3:1")
        .stderr_has("refused `\"pkg-install\" = \"ask\"`")
        .stderr_has(&format!("refused [network] allow `example.invalid`: the managed policy {f} locks [network] allow"))
        .stderr_has("[managed] forbid-hooks-approve")
        .stderr_has("[managed] require-checkpoints");
    // `aq policy show` says what the layer locks.
    aq_m(&env, &file, &["policy", "show"])
        .code(0)
        .stdout_has(&format!("managed policy {f} locks:"))
        .stdout_has("rule fs-permissions: at least block")
        .stdout_has("network: no host (new hosts refused, never asked)")
        .stdout_has("profiles refused: shims-only");
    // In a session the exec guard enforces it, and the log keeps the attempt.
    env.write(&env.work().join("f"), "");
    env.write(
        &env.work().join("s.sh"),
        "chmod +x f\necho \"chmod exited $?\"\n",
    );
    let out = aq_m(&env, &file, &["run", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_lacks("chmod exited 0")
        .stderr_has("refused `\"fs-permissions\" = \"allow\"`");
    let mode = std::fs::metadata(env.work().join("f"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0, "chmod +x ran: {mode:o}");
    let session = env.only_session();
    let start = &session.events_of("session_start")[0];
    let layers = start["layers"].to_string();
    assert!(layers.contains(&format!("managed policy {f}")), "{layers}");
    assert!(layers.contains("refused by the managed policy"), "{layers}");
    let decision = session
        .events_of("command_decision")
        .into_iter()
        .find(|e| e["argv"][0] == "chmod")
        .expect("chmod judged");
    assert_eq!(decision["decision"], "block", "{decision}");
}

#[test]
fn a_repository_a_policy_flag_and_the_command_line_cannot_loosen_it_either() {
    let (env, file) = managed_env(MANAGED);
    let f = file.display().to_string();
    // A project file the user trusted.
    env.write(
        &env.work().join("agent-quarantine.toml"),
        "version = 1\n[rules]\n\"pkg-install\" = \"allow\"\n",
    );
    aq_m(&env, &file, &["policy", "trust"]).code(0);
    aq_m(&env, &file, &["check"])
        .code(1)
        .stderr_has("agent-quarantine.toml:3:1: refused `\"pkg-install\" = \"allow\"`")
        .stderr_has(&format!(
            "the managed policy {f} locks [rules] \"pkg-install\""
        ));
    // --policy FILE.
    let flag = env.root().join("loose.toml");
    env.write(&flag, "version = 1\n[rules]\n\"pkg-install\" = \"allow\"\n");
    aq_m(
        &env,
        &file,
        &[
            "--policy",
            flag.to_str().unwrap(),
            "explain",
            "--",
            "npm",
            "install",
            "left-pad",
        ],
    )
    .stdout_has("BLOCK")
    .stderr_has("loose.toml:3:1: refused");
    // --net and `aq allow --net`: refused, and nothing written.
    aq_m(
        &env,
        &file,
        &["run", "--net", "allow:example.invalid", "--", "true"],
    )
    .code(2)
    .stderr_has(&format!(
        "`example.invalid` is refused: the managed policy {f} lets no host be reached"
    ));
    let before = std::fs::read_to_string(env.user_policy()).ok();
    aq_m(&env, &file, &["allow", "--net", "example.invalid"])
        .code(2)
        .stderr_has("nothing was written");
    assert_eq!(std::fs::read_to_string(env.user_policy()).ok(), before);
    // A profile the managed file forbids.
    aq_m(
        &env,
        &file,
        &["run", "--profile", "shims-only", "--", "true"],
    )
    .code(2)
    .stderr_has("the profile `shims-only` is refused")
    .stderr_has(&format!(
        "the managed policy {f} forbids it ([managed] forbid-profiles)"
    ));
    // `[managed]` in a file below is an error, not a second ceiling.
    env.write(
        &env.user_policy(),
        "version = 1\n[managed]\nstrict = false\n",
    );
    aq_m(&env, &file, &["explain", "--", "true"])
        .code(2)
        .stderr_has("[managed] belongs in the managed file");
}

#[test]
fn strict_makes_every_file_below_tighten_only_and_forbids_the_policy_flag() {
    let (env, file) =
        managed_env("version = 1\n[managed]\nstrict = true\nforbid-policy-flag = true\n");
    env.write(
        &env.user_policy(),
        "version = 1\n[rules]\n\"pkg-install\" = \"allow\"\n\"git-push-force\" = \"block\"\n",
    );
    // Loosening refused, tightening kept.
    aq_m(
        &env,
        &file,
        &["explain", "--", "npm", "install", "left-pad"],
    )
    .stdout_has("ASK");
    aq_m(&env, &file, &["check"])
        .code(1)
        .stderr_has("refused `\"pkg-install\" = \"allow\"`")
        .stderr_has("[managed] strict");
    aq_m(&env, &file, &["explain", "--", "git", "push", "--force"]).stdout_has("BLOCK");
    let flag = env.root().join("p.toml");
    env.write(&flag, "version = 1\n");
    aq_m(
        &env,
        &file,
        &["--policy", flag.to_str().unwrap(), "explain", "--", "true"],
    )
    .code(2)
    .stderr_has("--policy is refused")
    .stderr_has("[managed] forbid-policy-flag");
}

#[test]
fn a_managed_file_anyone_but_root_could_write_stops_every_session() {
    let (env, file) = managed_env(MANAGED);
    let marker = env.work().join("ran");
    let run = |env: &Env| {
        aq_m(
            env,
            &file,
            &["run", "--", "touch", marker.to_str().unwrap()],
        )
    };
    // Positive control: as installed, the session runs.
    run(&env).code(0);
    assert!(marker.exists());
    std::fs::remove_file(&marker).unwrap();
    // World-writable.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    run(&env)
        .code(2)
        .stderr_has("is refused: it is writable by users other than root (mode 666)")
        .stderr_has("no session starts");
    assert!(!marker.exists());
    // Its directory writable by others.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(
        file.parent().unwrap(),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    run(&env).code(2).stderr_has("mode 777");
    std::fs::set_permissions(
        file.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // Owned by an ordinary user.
    let (uid, gid) = aqtest_ids().unwrap_or((65534, 65534));
    std::os::unix::fs::chown(&file, Some(uid), Some(gid)).unwrap();
    run(&env)
        .code(2)
        .stderr_has(&format!("it is owned by uid {uid}, not root"));
    std::os::unix::fs::chown(&file, Some(0), Some(0)).unwrap();
    // Does not parse, or has a key nobody knows.
    std::fs::write(&file, "version = 1\n[managed]\nstrictt = true\n").unwrap();
    run(&env).code(2).stderr_has("unknown field `strictt`");
    std::fs::write(&file, "version = 1\n[rules\n").unwrap();
    run(&env).code(2).stderr_has("is refused");
    assert!(!marker.exists());
    // A dangling link is no "no managed file".
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(env.root().join("nowhere.toml"), &file).unwrap();
    run(&env).code(2).stderr_has("it is a link to nothing");
    assert!(!marker.exists());
}

#[test]
fn an_unprivileged_user_is_held_by_the_managed_file_and_cannot_replace_it() {
    let (root, aq, uid, gid) = user_scratch(
        "aq-managed-",
        &["home", "config/agent-quarantine", "state", "work"],
    );
    let r = root.path();
    let dir = r.join("etc");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("managed.toml");
    std::fs::write(&file, MANAGED).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(
        r.join("config/agent-quarantine/policy.toml"),
        "version = 1\n[rules]\n\"fs-permissions\" = \"allow\"\n",
    )
    .unwrap();
    std::os::unix::fs::chown(
        r.join("config/agent-quarantine/policy.toml"),
        Some(uid),
        Some(gid),
    )
    .unwrap();
    let as_user = |args: &[&str]| {
        aq_as_user_with(
            r,
            &aq,
            (uid, gid),
            "work",
            args,
            &[("AQ_MANAGED_FILE", file.as_os_str())],
        )
    };
    let out = as_user(&["explain", "--", "chmod", "+x", "f"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("BLOCK"), "{stdout}");
    let out = as_user(&["check"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // The user cannot install a bundle over it: the directory is root's.
    // A bundle that verifies (the positive control below installs it as
    // root): only the write is refused, by the kernel.
    let keys = r.join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, secret) = keypair(&keys, "team");
    let b = bundle(&keys, "b.toml", 5, &key, &secret, "pkg-install");
    for f in [&b, &keys.join("b.toml.minisig")] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    let out = as_user(&["policy", "pull", b.to_str().unwrap(), "--key", &key]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot install") && stderr.contains("Permission denied"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let out = Command::new(aq_exe())
        .args(["policy", "pull", b.to_str().unwrap(), "--key", &key])
        .env("HOME", r.join("home"))
        .env("AQ_MANAGED_FILE", &file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(&b).unwrap());
    // A managed file the user owns is refused (the user wrote it).
    let own = r.join("home/managed.toml");
    std::fs::write(&own, "version = 1\n").unwrap();
    std::os::unix::fs::chown(&own, Some(uid), Some(gid)).unwrap();
    let out = Command::new(aq_exe())
        .args(["explain", "--", "true"])
        .current_dir(r.join("work"))
        .env("HOME", r.join("home"))
        .env("XDG_CONFIG_HOME", r.join("config"))
        .env("AQ_MANAGED_FILE", &own)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("owned by uid {uid}")));
}

// ---- pull ---------------------------------------------------------------------

/// A minisign key pair made by the real tool: (public key line, secret key file).
pub(crate) fn keypair(dir: &Path, name: &str) -> (String, PathBuf) {
    let public = dir.join(format!("{name}.pub"));
    let secret = dir.join(format!("{name}.key"));
    let out = Command::new("minisign")
        .args(["-G", "-W", "-f", "-p"])
        .arg(&public)
        .arg("-s")
        .arg(&secret)
        .output()
        .expect("minisign is installed (.ci/setup installs it)");
    assert!(out.status.success(), "{out:?}");
    let line = std::fs::read_to_string(&public)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    (line, secret)
}

/// Writes a bundle with `serial` pinning `key`, signed with `secret`.
fn bundle(dir: &Path, name: &str, serial: u64, key: &str, secret: &Path, rule: &str) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(
        &file,
        format!("version = 1\n[rules]\n\"{rule}\" = \"block\"\n\n[managed]\nserial = {serial}\npublic-key = \"{key}\"\n"),
    )
    .unwrap();
    let out = Command::new("minisign")
        .args(["-S", "-s"])
        .arg(secret)
        .arg("-m")
        .arg(&file)
        .args(["-t", &format!("serial {serial}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    file
}

#[test]
fn a_signed_bundle_installs_and_every_bad_one_leaves_the_policy_as_it_was() {
    let env = Env::new();
    let keys = env.root().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, secret) = keypair(&keys, "team");
    let (_, wrong_secret) = keypair(&keys, "other");
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
    let b2 = bundle(&keys, "b2.toml", 2, &key, &secret, "pkg-install");
    // No key pinned and none given: nothing to verify with.
    pull(&[b2.to_str().unwrap()])
        .code(2)
        .stderr_has("no public key to verify with");
    assert!(!managed.exists());
    // The first install, with the team's key.
    pull(&[b2.to_str().unwrap(), "--key", &key])
        .code(0)
        .stdout_has("installed")
        .stdout_has("serial 2");
    let installed = std::fs::read(&managed).unwrap();
    assert_eq!(installed, std::fs::read(&b2).unwrap());
    env.aq_with(
        &[("AQ_MANAGED_FILE", m)],
        &["explain", "--", "npm", "install", "x"],
    )
    .stdout_has("BLOCK");
    env.aq_with(&[("AQ_MANAGED_FILE", m)], &["policy", "status"])
        .code(0)
        .stdout_has("serial   2")
        .stdout_has(&format!("signer   {key}"))
        .stdout_has(&format!("source   {}", b2.display()))
        .stdout_has("pulled   ");
    // Signed with another key.
    let wrong = bundle(&keys, "wrong.toml", 3, &key, &wrong_secret, "pkg-install");
    pull(&[wrong.to_str().unwrap()])
        .code(2)
        .stderr_has("the signature does not verify with the pinned key")
        .stderr_has("the installed policy is unchanged");
    // One byte changed after signing (`block` → `ask`).
    let good = bundle(&keys, "good.toml", 3, &key, &secret, "pkg-install");
    let tampered = keys.join("tampered.toml");
    std::fs::write(
        &tampered,
        std::fs::read_to_string(&good)
            .unwrap()
            .replace("\"block\"", "\"ask\""),
    )
    .unwrap();
    std::fs::copy(
        keys.join("good.toml.minisig"),
        keys.join("tampered.toml.minisig"),
    )
    .unwrap();
    pull(&[tampered.to_str().unwrap()])
        .code(2)
        .stderr_has("does not verify");
    // An older serial, properly signed: a rollback.
    let old = bundle(&keys, "old.toml", 1, &key, &secret, "fs-permissions");
    pull(&[old.to_str().unwrap()])
        .code(2)
        .stderr_has("serial 1 is older than the installed 2: a rollback is refused");
    // A source that cannot be reached.
    pull(&["http://127.0.0.1:9/managed.toml"])
        .code(2)
        .stderr_has("fetched over https only");
    pull(&["https://127.0.0.1:9/managed.toml"])
        .code(2)
        .stderr_has("cannot fetch")
        .stderr_has("the installed policy is unchanged");
    pull(&["git+file:///nonexistent/policy.git"])
        .code(2)
        .stderr_has("cannot clone");
    assert_eq!(
        std::fs::read(&managed).unwrap(),
        installed,
        "a bad bundle changed the policy"
    );
    // The same serial again: current, nothing to do.
    pull(&[b2.to_str().unwrap()])
        .code(0)
        .stdout_has("is current");
    // A git repository holding a newer bundle: installed.
    let repo = env.root().join("policy-repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::copy(&good, repo.join("managed.toml")).unwrap();
    std::fs::copy(
        keys.join("good.toml.minisig"),
        repo.join("managed.toml.minisig"),
    )
    .unwrap();
    for args in [
        vec!["init", "-q"],
        vec!["add", "."],
        vec![
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            "policy 3",
        ],
    ] {
        assert!(
            Command::new("git")
                .args(&args)
                .current_dir(&repo)
                .status()
                .unwrap()
                .success()
        );
    }
    pull(&[&format!("git+file://{}", repo.display())])
        .code(0)
        .stdout_has("serial 3");
    assert_eq!(
        std::fs::read(&managed).unwrap(),
        std::fs::read(&good).unwrap()
    );
    let status = env.aq_with(&[("AQ_MANAGED_FILE", m)], &["policy", "status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(status.stdout.trim()).unwrap();
    assert_eq!(v["serial"], 3);
    assert_eq!(v["changed_since_pull"], false);
}

#[test]
fn learn_mode_lets_no_ask_of_a_managed_rule_through_and_can_be_forbidden() {
    let (env, file) = managed_env("version = 1\n[rules]\n\"fs-permissions\" = \"ask\"\n");
    env.write(&env.work().join("f"), "");
    env.write(
        &env.work().join("s.sh"),
        "chmod +x f\necho \"chmod exited $?\"\n",
    );
    let exec_bit = || {
        std::fs::metadata(env.work().join("f"))
            .unwrap()
            .permissions()
            .mode()
            & 0o111
    };
    // Under the managed file, learn mode does not let the rule's ask run.
    aq_m(&env, &file, &["run", "--learn", "--", "sh", "s.sh"])
        .code(0)
        .stdout_lacks("chmod exited 0");
    assert_eq!(exec_bit(), 0);
    // Positive control: without it, learn mode runs the same ask.
    env.aq(&["run", "--learn", "--", "sh", "s.sh"])
        .code(0)
        .stdout_has("chmod exited 0");
    assert_ne!(exec_bit(), 0);
    // forbid-learn refuses learn mode outright.
    std::fs::write(&file, "version = 1\n[managed]\nforbid-learn = true\n").unwrap();
    aq_m(&env, &file, &["run", "--learn", "--", "true"])
        .code(2)
        .stderr_has("learn mode is refused")
        .stderr_has("[managed] forbid-learn");
}
