//! `aq run` in the kernel sandbox, end to end: each boundary is tried for
//! real from inside (read the fake secret, write outside, connect out) and
//! the attempt must fail; ordinary work (a cargo build and test) must not.
//!
//! The probes use shell builtins (`read <`, `>`, bash's `/dev/tcp`) so that
//! no shim stands between the attempt and the kernel: these tests are about
//! the sandbox, not the command firewall (tested in `run.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::Env;

/// Rules the probes would trip; allowed here so only the kernel stands in the way.
const ALLOW_PROBES: &str = "\"secret-read\" = \"allow\"\n\"secret-location\" = \"allow\"\n";

fn fake_secrets(env: &Env) {
    let home = env.root().join("home");
    env.write(&home.join(".ssh/id_ed25519"), "FAKE-KEY-NOT-REAL\n");
    env.write(&home.join(".aws/credentials"), "[default]\nfake = yes\n");
    env.write(&env.work().join(".env"), "API_KEY=fake-env-value\n");
    env.write(&env.work().join(".env.example"), "API_KEY=placeholder\n");
    // A `.pem` file is masked when it holds a private key; a certificate
    // stays readable (builds and tests read them).
    env.write(
        &env.work().join("certs/server.pem"),
        &fake_pem("PRIVATE KEY"),
    );
    env.write(&env.work().join("certs/ca.pem"), &fake_pem("CERTIFICATE"));
}

/// A PEM block with FAKE content.
fn fake_pem(label: &str) -> String {
    format!("-----BEGIN {label}-----\nFAKE-PEM-NOT-REAL\n-----END {label}-----\n")
}

/// Processes on this host whose command line is exactly `argv`.
fn processes_running(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want)
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
        })
        .collect()
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn secrets_read_empty_and_templates_stay_readable() {
    let env = Env::with_policy("", ALLOW_PROBES);
    fake_secrets(&env);
    env.write(
        &env.work().join("s.sh"),
        "read -r k < \"$HOME/.ssh/id_ed25519\"; echo \"ssh:[$k]\"\n\
         read -r a < \"$HOME/.aws/credentials\"; echo \"aws:[$a]\"\n\
         read -r e < .env; echo \"env:[$e]\"\n\
         read -r p < certs/server.pem; echo \"pem:[$p]\"\n\
         read -r c < certs/ca.pem; echo \"cert:[$c]\"\n\
         read -r x < .env.example; echo \"example:[$x]\"\n\
         ln -s \"$HOME/.ssh/id_ed25519\" link; read -r l < link; echo \"link:[$l]\"\n\
         read -r r < \"/proc/self/root$HOME/.ssh/id_ed25519\"; echo \"root:[$r]\"\n",
    );
    let out = env.aq(&["run", "--quiet", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("ssh:[]")
        .stdout_has("aws:[]")
        .stdout_has("env:[]")
        .stdout_has("pem:[]")
        .stdout_has("cert:[-----BEGIN CERTIFICATE-----]")
        .stdout_has("example:[API_KEY=placeholder]")
        .stdout_has("link:[]")
        .stdout_has("root:[]")
        .stdout_lacks("FAKE")
        .stdout_lacks("fake-env-value");
}

#[test]
fn writes_land_only_in_the_workspace() {
    let env = Env::with_policy("", ALLOW_PROBES);
    let outside = env.root().join("outside.txt");
    let home = env.root().join("home");
    std::fs::create_dir_all(env.work().join(".git/hooks")).unwrap();
    env.write(&env.work().join(".git/config"), "[core]\n");
    env.write(
        &env.work().join("s.sh"),
        &format!(
            "echo ok > inside.txt && echo wrote-inside\n\
             echo x > {outside} || echo refused-outside\n\
             echo x >> \"$HOME/.bashrc\" || echo refused-rc\n\
             echo x > .git/hooks/pre-commit || echo refused-hook\n\
             echo x >> .git/config || echo refused-git-config\n\
             echo x > /tmp/aq-strict-probe-$$ || echo refused-tmp\n\
             echo x > \"$TMPDIR/scratch\" && echo wrote-tmpdir\n",
            outside = outside.display()
        ),
    );
    let out = env.aq(&["run", "--quiet", "--", "sh", "s.sh"]);
    out.code(0)
        .stdout_has("wrote-inside")
        .stdout_has("refused-outside")
        .stdout_has("refused-rc")
        .stdout_has("refused-hook")
        .stdout_has("refused-git-config")
        .stdout_has("refused-tmp")
        .stdout_has("wrote-tmpdir");
    assert!(env.work().join("inside.txt").exists());
    assert!(!outside.exists(), "{}", out.dump());
    assert!(!home.join(".bashrc").exists(), "{}", out.dump());
    assert!(!env.work().join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(env.work().join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn the_dev_profile_adds_tmp_and_the_host_network() {
    let env = Env::with_policy("", ALLOW_PROBES);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let marker = format!("/tmp/aq-dev-probe-{}", std::process::id());
    env.write(
        &env.work().join("s.sh"),
        &format!(
            "echo x > {marker} && echo wrote-tmp\n\
             if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo connected; else echo no-network; fi\n"
        ),
    );
    let strict = env.aq(&["run", "--quiet", "--", "bash", "s.sh"]);
    strict
        .code(0)
        .stdout_has("no-network")
        .stdout_lacks("connected");
    assert!(!Path::new(&marker).exists(), "{}", strict.dump());
    let dev = env.aq(&["run", "--quiet", "--profile", "dev", "--", "bash", "s.sh"]);
    dev.code(0).stdout_has("wrote-tmp").stdout_has("connected");
    let _ = std::fs::remove_file(&marker);
}

#[test]
fn the_environment_is_rebuilt_and_the_agent_key_stays_with_the_agent() {
    let env = Env::with_policy(
        "",
        "\"exec-script-file\" = \"allow\"\n\n[profile.strict]\nenv = [\"ANTHROPIC_API_KEY\"]\n",
    );
    env.write(
        &env.work().join("outer.sh"),
        "echo \"outer:[$ANTHROPIC_API_KEY][$GITHUB_TOKEN][$AQ_TEST_RANDOM][$PATH]\"\nsh inner.sh\n",
    );
    env.write(
        &env.work().join("inner.sh"),
        "echo \"inner:[$ANTHROPIC_API_KEY][$GITHUB_TOKEN]\"\n",
    );
    let out = env.aq_with(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-fake-not-real"),
            ("GITHUB_TOKEN", "ghp_fake_not_real"),
            ("AQ_TEST_RANDOM", "x"),
            ("PATH", ".::/usr/local/bin:/usr/bin:/bin"),
        ],
        &["run", "--quiet", "--", "sh", "outer.sh"],
    );
    out.code(0)
        .stdout_has("outer:[sk-ant-fake-not-real][][][")
        .stdout_has("inner:[][]")
        .stdout_lacks("ghp_fake")
        .stdout_lacks(":.:")
        .stdout_lacks("::");
}

#[test]
fn cargo_builds_and_tests_a_crate_offline_in_the_sandbox() {
    let Some(cargo) = which("cargo") else {
        aq_testkit::skip("no cargo on PATH");
        return;
    };
    let env = Env::with_policy("", "");
    let ws = env.work();
    env.write(
        &ws.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write(
        &ws.join("src/lib.rs"),
        "pub fn add(a: u32, b: u32) -> u32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n}\n",
    );
    // The real toolchain, found through the test's own environment (HOME is
    // a scratch directory here).
    let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or(format!("{real_home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or(format!("{real_home}/.rustup"));
    let path = format!(
        "{}:{}",
        cargo.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = env.aq_with(
        &[
            ("CARGO_HOME", &cargo_home),
            ("RUSTUP_HOME", &rustup_home),
            ("PATH", &path),
            ("CARGO_TARGET_DIR", "target"),
        ],
        &["run", "--quiet", "--", "cargo", "test", "--offline"],
    );
    out.code(0);
    assert!(
        out.stdout.contains("test result: ok. 1 passed"),
        "{}",
        out.dump()
    );
    assert!(ws.join("target").is_dir());
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

#[test]
fn nothing_started_in_the_session_outlives_it() {
    let env = Env::with_policy("", "");
    // A daemon: double fork, new session; then the command exits, once the
    // test has seen the daemon run (it creates `go`; the command gives up
    // after about 30 s).
    let marker = ["sleep", "3171"];
    assert!(
        processes_running(&marker).is_empty(),
        "a `sleep 3171` runs already: the test could not tell the daemon"
    );
    let mut run = env.spawn(&[
        "run",
        "--quiet",
        "--",
        "sh",
        "-c",
        "(setsid sleep 3171 </dev/null >/dev/null 2>&1 &)\n\
         i=0; until [ -e go ]; do i=$((i+1)); [ $i -le 300 ] || exit 3; sleep 0.1; done\n\
         exit 0",
    ]);
    let mut seen = false;
    wait_until(
        "the daemon runs in the session",
        Duration::from_secs(10),
        || {
            seen = !processes_running(&marker).is_empty();
            seen || !run.is_running()
        },
    );
    assert!(
        seen,
        "the session ended before its daemon was seen:\n{}",
        run.finish().dump()
    );
    env.write(&env.work().join("go"), "");
    run.finish().code(0);
    wait_until("the daemon is gone", Duration::from_secs(3), || {
        processes_running(&marker).is_empty()
    });
}

#[test]
fn killing_aq_with_sigkill_takes_the_sandbox_down() {
    let env = Env::with_policy("", "");
    let mut running = env.spawn(&[
        "run",
        "--quiet",
        "--",
        "sh",
        "-c",
        "(setsid sleep 3172 </dev/null >/dev/null 2>&1 &); sleep 3173",
    ]);
    wait_until("the session runs", Duration::from_secs(10), || {
        !processes_running(&["sleep", "3173"]).is_empty()
            && !processes_running(&["sleep", "3172"]).is_empty()
    });
    // SAFETY: kill(2) on the aq process this test started.
    unsafe { libc::kill(running.pid() as libc::pid_t, libc::SIGKILL) };
    wait_until("aq is dead", Duration::from_secs(5), || {
        !running.is_running()
    });
    wait_until("the sandbox is gone", Duration::from_secs(5), || {
        processes_running(&["sleep", "3172"]).is_empty()
            && processes_running(&["sleep", "3173"]).is_empty()
    });
}

/// A seccomp filter for `aq` itself that makes one syscall fail with
/// `errno`: the way a locked-down container or sysctl takes a primitive away.
fn deny_syscall(cmd: &mut std::process::Command, nr: libc::c_long, errno: u32) {
    deny_syscall_with(cmd, nr, None, errno);
}

/// [`deny_syscall`], only when argument `arg` has a bit of `mask` set (when
/// given): `unshare` of the network namespace alone, a seccomp filter that
/// asks for a listener.
fn deny_syscall_with(
    cmd: &mut std::process::Command,
    nr: libc::c_long,
    flag: Option<(u32, u32)>,
    errno: u32,
) {
    use std::os::unix::process::CommandExt;
    let ret_errno = libc::sock_filter {
        code: 0x06,
        jt: 0,
        jf: 0,
        k: 0x0005_0000 | errno,
    };
    let allow = libc::sock_filter {
        code: 0x06,
        jt: 0,
        jf: 0,
        k: 0x7fff_0000,
    };
    let mut filter = vec![
        // A = seccomp_data.nr
        libc::sock_filter {
            code: 0x20,
            jt: 0,
            jf: 0,
            k: 0,
        },
    ];
    match flag {
        None => filter.extend([
            // if A == nr goto errno else goto allow
            libc::sock_filter {
                code: 0x15,
                jt: 0,
                jf: 1,
                k: nr as u32,
            },
            ret_errno,
            allow,
        ]),
        Some((arg, mask)) => filter.extend([
            // if A != nr goto allow
            libc::sock_filter {
                code: 0x15,
                jt: 0,
                jf: 3,
                k: nr as u32,
            },
            // A = low word of args[arg]
            libc::sock_filter {
                code: 0x20,
                jt: 0,
                jf: 0,
                k: 16 + 8 * arg,
            },
            // if A & mask goto errno else goto allow
            libc::sock_filter {
                code: 0x45,
                jt: 0,
                jf: 1,
                k: mask,
            },
            ret_errno,
            allow,
        ]),
    }
    // SAFETY: the closure only calls prctl with data it owns.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A primitive taken away: its name, the syscall, the argument flag that
/// must be set for the call to fail (if any), the errno, and the word the
/// refusal must name.
type Removal = (
    &'static str,
    libc::c_long,
    Option<(u32, u32)>,
    i32,
    &'static str,
);

/// Every kernel primitive the sandboxed profiles need, taken away for real
/// the way a kernel or container without it would (a seccomp filter on the
/// `aq` process answering the errno such a system gives): `aq run` exits
/// 125, names what failed, and the command never runs. Prints the matrix.
#[test]
fn every_sandboxed_profile_fails_closed_without_each_primitive() {
    const SECCOMP_FILTER_FLAG_NEW_LISTENER: u32 = 1 << 3;
    let cases: &[Removal] = &[
        (
            "user namespace",
            libc::SYS_unshare,
            Some((0, libc::CLONE_NEWUSER as u32)),
            libc::EPERM,
            "unshare",
        ),
        (
            "mount namespace",
            libc::SYS_unshare,
            Some((0, libc::CLONE_NEWNS as u32)),
            libc::EPERM,
            "unshare",
        ),
        (
            "PID namespace",
            libc::SYS_unshare,
            Some((0, libc::CLONE_NEWPID as u32)),
            libc::EPERM,
            "unshare",
        ),
        (
            "IPC namespace",
            libc::SYS_unshare,
            Some((0, libc::CLONE_NEWIPC as u32)),
            libc::EPERM,
            "unshare",
        ),
        (
            "network namespace",
            libc::SYS_unshare,
            Some((0, libc::CLONE_NEWNET as u32)),
            libc::EPERM,
            "unshare",
        ),
        (
            "Landlock",
            libc::SYS_landlock_create_ruleset,
            None,
            libc::ENOSYS,
            "Landlock",
        ),
        (
            "seccomp filter",
            libc::SYS_seccomp,
            None,
            libc::ENOSYS,
            "seccomp",
        ),
        (
            "seccomp user notification",
            libc::SYS_seccomp,
            Some((1, SECCOMP_FILTER_FLAG_NEW_LISTENER)),
            libc::EINVAL,
            "seccomp",
        ),
        (
            "ptrace (exec guard)",
            libc::SYS_ptrace,
            None,
            libc::EPERM,
            "ptrace",
        ),
        (
            "mounts (masks, /proc, read-only)",
            libc::SYS_mount,
            None,
            libc::EPERM,
            "mount",
        ),
    ];
    // Every sandboxed profile; `dev` shares the host's network, so taking
    // the network namespace away must not stop it (the positive control).
    let profiles = ["strict", "network-isolated", "ci", "dev"];
    let needs = |profile: &str, what: &str| !(profile == "dev" && what == "network namespace");
    let env = Env::with_policy("", "");
    let mut matrix = vec![format!(
        "{:<34} {}",
        "primitive removed",
        profiles.map(|p| format!("{p:<20}")).join("")
    )];
    let mut failures = Vec::new();
    for (what, nr, flag, errno, named) in cases {
        let mut row = format!("{what:<34} ");
        for profile in profiles {
            let marker = env.work().join("ran");
            let mut cmd = env.command(
                &env.work(),
                &["run", "--profile", profile, "--", "touch", "ran"],
            );
            deny_syscall_with(&mut cmd, *nr, *flag, *errno as u32);
            let out = env.run_command(
                cmd,
                &format!("aq run --profile {profile} -- touch ran  (without {what})"),
            );
            let ran = marker.exists();
            let _ = std::fs::remove_file(&marker);
            let cell = if needs(profile, what) {
                let held = out.code == Some(125)
                    && !ran
                    && out.stderr.contains(named)
                    && out.stderr.contains("nothing was run");
                if !held {
                    failures.push(format!("{profile} without {what}:{}", out.dump()));
                }
                format!("{:?} {}", out.code, if held { *named } else { "FAILED" })
            } else {
                let fine = out.code == Some(0) && ran;
                if !fine {
                    failures.push(format!(
                        "{profile} does not use {what} but did not run:{}",
                        out.dump()
                    ));
                }
                format!("{:?} ran (unused)", out.code)
            };
            row.push_str(&format!("{cell:<20}"));
        }
        matrix.push(row);
    }
    eprintln!("fail-closed matrix:\n{}", matrix.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn without_user_namespaces_aq_exits_125_and_runs_nothing() {
    let env = Env::with_policy("", "");
    let mut cmd = env.command(&env.work(), &["run", "--", "touch", "ran"]);
    deny_syscall(&mut cmd, libc::SYS_unshare, libc::EPERM as u32);
    let out = env.run_command(
        cmd,
        "aq run -- touch ran  (under a filter: unshare → EPERM)",
    );
    out.code(125)
        .stderr_has("unshare")
        .stderr_has("aq doctor --fix");
    assert!(!env.work().join("ran").exists(), "{}", out.dump());
    // The shims-only profile still runs, without the kernel sandbox.
    let mut cmd = env.command(
        &env.work(),
        &["run", "--profile", "shims-only", "--", "touch", "ran"],
    );
    deny_syscall(&mut cmd, libc::SYS_unshare, libc::EPERM as u32);
    env.run_command(cmd, "aq run --profile shims-only -- touch ran")
        .code(0);
    assert!(env.work().join("ran").exists());
}

#[test]
fn without_landlock_aq_exits_125_and_runs_nothing() {
    let env = Env::with_policy("", "");
    let mut cmd = env.command(&env.work(), &["run", "--", "touch", "ran"]);
    deny_syscall(
        &mut cmd,
        libc::SYS_landlock_create_ruleset,
        libc::ENOSYS as u32,
    );
    let out = env.run_command(
        cmd,
        "aq run -- touch ran  (under a filter: Landlock → ENOSYS)",
    );
    out.code(125)
        .stderr_has("Landlock")
        .stderr_has("aq doctor --fix");
    assert!(!env.work().join("ran").exists(), "{}", out.dump());
}

#[test]
fn the_ci_profile_denies_asks_at_once_and_prints_json() {
    let env = Env::with_policy("approval_timeout_secs = 60", "");
    env.write(
        &env.work().join("s.sh"),
        "chmod +x s.sh\necho \"chmod exited $?\"\n",
    );
    let start = Instant::now();
    let out = env.aq(&["run", "--profile", "ci", "--", "sh", "s.sh"]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the ask waited: {}",
        out.dump()
    );
    out.code(0).stdout_has("chmod exited 126");
    // The command's own output, then the summary: one JSON object to the end.
    let at = out
        .stdout
        .find("\n{")
        .unwrap_or_else(|| panic!("no JSON summary: {}", out.dump()));
    let summary: serde_json::Value =
        serde_json::from_str(&out.stdout[at..]).unwrap_or_else(|e| panic!("{e}: {}", out.dump()));
    assert!(summary.is_object(), "{summary}");
    let session = env.only_session();
    let approvals = session.events_of("approval");
    assert!(
        approvals.iter().any(|a| a["answer"] == "headless"),
        "{}",
        session.log_text()
    );
}

#[test]
fn an_unprivileged_user_gets_the_same_sandbox() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: the other tests in this file are the proof.
        return;
    }
    // Everything the user needs, in a directory it owns: a copy of aq, a
    // home with a fake key, a workspace.
    let (root, aq, uid, gid) = crate::util::user_scratch(
        "aq-unpriv-",
        &["home/.ssh", "work/.git/hooks", "state", "config"],
    );
    let r = root.path();
    std::fs::write(r.join("home/.ssh/id_ed25519"), "FAKE-KEY-NOT-REAL\n").unwrap();
    std::fs::write(r.join("home/.bash_history"), "FAKE-HISTORY-NOT-REAL\n").unwrap();
    std::fs::write(
        r.join("work/s.sh"),
        format!(
            "read -r k < \"$HOME/.ssh/id_ed25519\"; echo \"ssh:[$k]\"\n\
             echo x > {outside} || echo refused-outside\n\
             echo x > .git/hooks/pre-commit || echo refused-hook\n\
             echo ok > inside.txt && echo wrote-inside\n\
             {{ read -r h < \"$HOME/.bash_history\"; }} 2>/dev/null && echo \"history:[$h]\" || echo refused-history\n\
             id -u\n",
            outside = r.join("home/outside.txt").display()
        ),
    )
    .unwrap();
    for entry in ["home/.bash_history", "home/.ssh/id_ed25519", "work/s.sh"] {
        std::os::unix::fs::chown(r.join(entry), Some(uid), Some(gid)).unwrap();
    }
    let out = crate::util::aq_as_user(
        r,
        &aq,
        (uid, gid),
        "work",
        &["run", "--quiet", "--", "sh", "s.sh"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dump = format!(
        "uid {uid}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{dump}");
    for want in [
        "ssh:[]",
        "refused-outside",
        "refused-hook",
        "wrote-inside",
        "refused-history",
        &format!("{uid}\n"),
    ] {
        assert!(stdout.contains(want), "lacks {want:?}: {dump}");
    }
    assert!(!stdout.contains("FAKE"), "{dump}");
    assert!(!r.join("home/outside.txt").exists(), "{dump}");
}

#[test]
fn npm_test_runs_in_the_dev_profile_without_asking() {
    if which("npm").is_none() || which("node").is_none() {
        aq_testkit::skip("no npm or node on PATH");
        return;
    }
    // approval_timeout_secs 30: an ask would show as a long wait and a 126.
    let env = Env::with_policy("approval_timeout_secs = 30", "");
    env.write(
        &env.work().join("package.json"),
        "{\"name\":\"tiny\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node test.js\"}}\n",
    );
    env.write(&env.work().join("test.js"), "console.log('tests ok');\n");
    let start = Instant::now();
    let out = env.aq(&["run", "--quiet", "--profile", "dev", "--", "npm", "test"]);
    out.code(0).stdout_has("tests ok");
    assert!(start.elapsed() < Duration::from_secs(20), "{}", out.dump());
    // npm ran its script through `sh -c`, which the shim judged as what it runs.
    let session = env.only_session();
    let sh = session.decisions_for("sh");
    assert!(
        sh.iter().all(|d| d["decision"] == "allow"),
        "{}",
        session.log_text()
    );
}
