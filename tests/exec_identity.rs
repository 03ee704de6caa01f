//! What the exec guard makes of the file that runs (docs/exec-guard.md, "Identity"): a native program it cannot name, where
//! the session can write, asks (`exec-unknown-native`) unless it is a build
//! output the policy names; an altered copy of a tool is judged as the tool;
//! a script is its interpreter; a memfd always asks.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::approve::{approve_once, wait_for_pending};
use crate::util::Env;

/// The decisions the exec guard logged whose file is `exe_suffix`.
fn guard_decisions_of(session: &crate::util::Session, exe_suffix: &str) -> Vec<serde_json::Value> {
    session
        .events_of("command_decision")
        .into_iter()
        .filter(|d| d["source"] == "exec-guard")
        .filter(|d| d["exe"].as_str().is_some_and(|e| e.ends_with(exe_suffix)))
        .collect()
}

/// A native program compiled with `cc` at `path` that prints `hello ran`;
/// `false` (the caller skips, saying so) when there is no `cc`.
fn compile_hello(path: &Path) -> bool {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let mut cc = match std::process::Command::new("cc")
        .args(["-x", "c", "-o"])
        .arg(path)
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => {
            aq_testkit::skip("no `cc` to compile a native program");
            return false;
        }
    };
    use std::io::Write;
    cc.stdin
        .take()
        .unwrap()
        .write_all(b"#include <stdio.h>\nint main(void){puts(\"hello ran\");return 0;}\n")
        .unwrap();
    assert!(cc.wait().unwrap().success(), "cc failed");
    true
}

fn copy_executable(from: &Path, to: &Path) {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::copy(from, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_unknown_native_program_in_the_workspace_asks_and_a_headless_run_refuses_it() {
    let env = Env::new();
    if !compile_hello(&env.work().join("hello")) {
        return;
    }
    env.write(
        &env.work().join("s.sh"),
        "./hello; echo \"hello exited $?\"\n",
    );
    // Headless (`ci`): the ask is decided at once, by `unanswered` (deny).
    let out = env.aq(&["run", "--profile", "ci", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("hello exited 126")
        .stdout_lacks("hello ran")
        .stderr_has("aq: not approved (headless session: nobody to ask): hello")
        .stderr_has("rule:  exec-unknown-native (ask, risk high)")
        .stderr_has("add its path to `[session] trusted_exec`");
    let session = env.only_session();
    let d = guard_decisions_of(&session, "/work/hello");
    assert_eq!(d.len(), 1, "{}", session.log_text());
    assert_eq!(d[0]["decision"], "ask", "{}", d[0]);
    assert_eq!(d[0]["rules"], serde_json::json!(["exec-unknown-native"]));
    assert_eq!(
        d[0]["identity"],
        serde_json::json!({"how": "name", "place": "workspace", "finding": "unknown-native-in-writable-place"}),
        "{}",
        d[0]
    );
    assert!(
        session
            .events_of("approval")
            .iter()
            .any(|a| a["argv"][0] == "hello" && a["answer"] == "headless"),
        "{}",
        session.log_text()
    );
}

#[test]
fn an_unknown_native_program_runs_once_a_person_approves_it() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    if !compile_hello(&env.work().join("hello")) {
        return;
    }
    env.write(
        &env.work().join("s.sh"),
        "./hello; echo \"hello exited $?\"\n",
    );
    let mut run = env.spawn(&["run", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "hello");
    let Some(approve) = approve_once(&env, "o") else {
        return;
    };
    approve.code(0);
    run.finish()
        .code(0)
        .stdout_has("hello ran")
        .stdout_has("hello exited 0");
    let approvals = session.events_of("approval");
    assert!(
        approvals
            .iter()
            .any(|a| a["argv"][0] == "hello" && a["answer"] == "once"),
        "{}",
        session.log_text()
    );
}

#[test]
fn build_outputs_run_without_asking() {
    let env = Env::with_policy("wait_for_approver = false", "");
    let built = env.root().join("hello");
    if !compile_hello(&built) {
        return;
    }
    // cargo's target/, an npm package's binary, and `go test`'s binary in
    // the session's TMPDIR (copied there from inside the sandbox).
    copy_executable(&built, &env.work().join("target/debug/x"));
    copy_executable(&built, &env.work().join("node_modules/.bin/x"));
    copy_executable(&built, &env.work().join("stash/x.test"));
    env.write(
        &env.work().join("s.sh"),
        "./target/debug/x && ./node_modules/.bin/x || exit 1\n\
         mkdir -p \"$TMPDIR/go-build123/b001\" && cp stash/x.test \"$TMPDIR/go-build123/b001/x.test\"\n\
         \"$TMPDIR/go-build123/b001/x.test\"; echo \"go test binary exited $?\"\n",
    );
    let out = env.aq(&["run", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("go test binary exited 0")
        .stderr_lacks("exec-unknown-native");
    assert_eq!(out.stdout.matches("hello ran").count(), 3, "{}", out.dump());
    let session = env.only_session();
    for (exe, by) in [
        ("/work/target/debug/x", "**/target/**"),
        ("/work/node_modules/.bin/x", "**/node_modules/**"),
        ("/go-build123/b001/x.test", "$TMPDIR/go-build*/**"),
    ] {
        let d = guard_decisions_of(&session, exe);
        assert_eq!(d.len(), 1, "{exe}: {}", session.log_text());
        assert_eq!(d[0]["decision"], "allow", "{}", d[0]);
        assert_eq!(
            d[0]["identity"]["finding"], "trusted-build-output",
            "{}",
            d[0]
        );
        assert_eq!(d[0]["identity"]["trusted_by"], by, "{}", d[0]);
    }
    // The control: the same program outside a build directory asks.
    env.write(&env.work().join("t.sh"), "./stash/x.test\n");
    env.aq(&["run", "--", "sh", "t.sh"])
        .code(126)
        .stderr_has("rule:  exec-unknown-native (ask");
}

#[test]
fn cargo_build_then_its_binary_runs_without_asking() {
    let Some(cargo) = which("cargo") else {
        aq_testkit::skip("no cargo on PATH");
        return;
    };
    let env = Env::with_policy("wait_for_approver = false", "");
    env.write(
        &env.work().join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write(
        &env.work().join("build.rs"),
        "fn main() { println!(\"cargo:rerun-if-changed=build.rs\"); }\n",
    );
    env.write(
        &env.work().join("src/main.rs"),
        "fn main() { println!(\"tiny ran\"); }\n",
    );
    // The toolchain as this test finds it (rustup keeps it in a home the
    // scratch home is not).
    let mut vars: Vec<(&str, String)> = Vec::new();
    for k in ["CARGO_HOME", "RUSTUP_HOME"] {
        if let Some(v) = std::env::var_os(k) {
            vars.push((k, v.to_string_lossy().into_owned()));
        }
    }
    let bin = cargo.parent().unwrap();
    if bin.ends_with(".cargo/bin") {
        let home = bin.parent().unwrap().parent().unwrap();
        if !vars.iter().any(|(k, _)| *k == "CARGO_HOME") {
            vars.push(("CARGO_HOME", home.join(".cargo").display().to_string()));
        }
        if !vars.iter().any(|(k, _)| *k == "RUSTUP_HOME") {
            vars.push(("RUSTUP_HOME", home.join(".rustup").display().to_string()));
        }
    }
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = env.aq_with(
        &vars,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "cargo build --offline -q && ./target/debug/tiny",
        ],
    );
    out.code(0)
        .stdout_has("tiny ran")
        .stderr_lacks("exec-unknown-native");
    let session = env.only_session();
    // The build script ran, under target/, and was not asked about either.
    let script = guard_decisions_of(&session, "/build-script-build");
    assert!(
        !script.is_empty() && script.iter().all(|d| d["decision"] == "allow"),
        "{}",
        session.log_text()
    );
}

#[test]
fn a_script_in_the_workspace_runs_as_its_interpreter_without_asking() {
    let env = Env::with_policy("wait_for_approver = false", "");
    let script = env.work().join("x.sh");
    env.write(&script, "#!/bin/sh\necho script ran\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.write(&env.work().join("s.sh"), "./x.sh\n");
    env.aq(&["run", "--", "sh", "s.sh"])
        .code(0)
        .stdout_has("script ran")
        .stderr_lacks("exec-unknown-native");
    let session = env.only_session();
    let sh = session
        .events_of("command_decision")
        .into_iter()
        .find(|d| d["source"] == "exec-guard" && d["argv"][1] == "./x.sh")
        .unwrap_or_else(|| panic!("no decision for ./x.sh:\n{}", session.log_text()));
    assert_eq!(sh["argv"][0], "sh", "{sh}");
    assert_eq!(sh["decision"], "allow", "{sh}");
    assert!(sh.get("identity").is_none(), "{sh}");
}

#[test]
fn an_altered_copy_run_from_a_memfd_is_judged_as_the_tool_and_refused() {
    let env = Env::with_policy("wait_for_approver = false", "");
    std::fs::create_dir_all(env.work().join(".git/objects/ab")).unwrap();
    env.write(&env.work().join(".git/objects/ab/cd"), "object\n");
    // Two ways into a memfd: exec of /proc/self/fd/N (the first check
    // cannot follow /proc/self from outside: judged at the exec stop, a
    // refusal kills), and fexecve (refused before the exec: EACCES).
    env.write(
        &env.work().join("m.py"),
        "import os, sys\n\
         data = open('/bin/rm', 'rb').read() + b'x'\n\
         fd = os.memfd_create('r', 0)\n\
         os.write(fd, data)\n\
         args = ['r', '-rf', '.git/objects']\n\
         if sys.argv[1] == 'fexecve':\n\
         \x20   try:\n\
         \x20       os.execve(fd, args, {})\n\
         \x20   except OSError as e:\n\
         \x20       print('fexecve refused, errno', e.errno)\n\
         else:\n\
         \x20   os.execve('/proc/self/fd/%d' % fd, args, {})\n",
    );
    let out = env.aq(&["run", "--", "python3", "m.py", "fexecve"]);
    out.code(0)
        .stdout_has("fexecve refused, errno 13")
        .stderr_has("aq: not approved")
        .stderr_has("rule:  exec-unknown-native (ask")
        .stderr_has("rule:  fs-rm-recursive (ask");
    assert!(env.work().join(".git/objects/ab/cd").exists());
    let out = env.aq(&["run", "--", "python3", "m.py", "path"]);
    assert_ne!(out.code, Some(0), "{}", out.dump());
    out.stderr_has("rule:  exec-unknown-native (ask");
    assert!(env.work().join(".git/objects/ab/cd").exists());
    for session in env.sessions() {
        let d: Vec<_> = guard_decisions_of(&session, " (deleted)")
            .into_iter()
            .filter(|d| d["argv"][0] == "rm")
            .collect();
        assert_eq!(d.len(), 1, "{}", session.log_text());
        assert!(
            d[0]["exe"].as_str().unwrap().starts_with("/memfd:r"),
            "{}",
            d[0]
        );
        assert_eq!(d[0]["identity"]["place"], "memfd", "{}", d[0]);
        assert_eq!(d[0]["identity"]["how"], "build-id", "{}", d[0]);
    }
    // The control: with the rule allowed, the memfd runs (an exact copy of
    // `echo`, so nothing else refuses it).
    let env = Env::with_policy(
        "wait_for_approver = false",
        "\"exec-unknown-native\" = \"allow\"",
    );
    env.write(
        &env.work().join("m.py"),
        "import os\n\
         fd = os.memfd_create('e', 0)\n\
         os.write(fd, open('/bin/echo', 'rb').read())\n\
         os.execve(fd, ['echo', 'memfd ran'], {})\n",
    );
    env.aq(&["run", "--", "python3", "m.py"])
        .code(0)
        .stdout_has("memfd ran");
}

#[test]
fn a_repository_cannot_trust_build_outputs_but_the_user_can() {
    let env = Env::with_policy("wait_for_approver = false", "");
    if !compile_hello(&env.work().join("hello")) {
        return;
    }
    env.write(
        &env.project_policy(),
        "[session]\ntrusted_exec = [\"**\", \"hello\"]\n",
    );
    env.write(&env.work().join("s.sh"), "./hello\n");
    env.aq(&["run", "--", "sh", "s.sh"])
        .code(126)
        .stderr_has("ignored `trusted_exec` entry `**`")
        .stderr_has("only your own policy file names build outputs")
        .stderr_has("rule:  exec-unknown-native (ask");
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("**/target/**")
        .stdout_has("ignored `trusted_exec` entry `hello`");
    // The user's own file may.
    env.write(
        &env.user_policy(),
        "[session]\nwait_for_approver = false\ntrusted_exec = [\"hello\"]\n",
    );
    env.aq(&["run", "--", "sh", "s.sh"])
        .code(0)
        .stdout_has("hello ran");
    env.aq(&["policy", "show"])
        .code(0)
        .stdout_has("hello                        yours");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
