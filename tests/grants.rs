//! `aq allow`, `aq deny`, `aq grants`: each grant changes what a
//! session really does, is stored in the user's file as the user wrote it,
//! and the dangerous ones are refused with the file untouched.

use crate::util::{Env, echo_server};

/// `aq explain --json -- LINE`'s decision.
fn decision(env: &Env, line: &str) -> String {
    let out = env.aq(&["explain", "--json", "--", line]);
    out.json()["decision"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn allowing_a_path_lets_a_session_write_there_and_removing_it_takes_it_back() {
    let env = Env::new();
    let cache = env.root().join("home/.cache/acme");
    let script = format!(
        "if echo ok > '{}/x' 2>/dev/null; then echo wrote; else echo refused; fi\n",
        cache.display()
    );
    env.write(&env.work().join("w.sh"), &script);
    std::fs::create_dir_all(&cache).unwrap();
    env.aq(&["run", "--quiet", "--", "sh", "w.sh"])
        .code(0)
        .stdout_has("refused");
    env.aq(&["allow", "~/.cache/acme"])
        .code(0)
        .stdout_has("added ~/.cache/acme in [profile.strict] writable");
    env.aq(&["run", "--quiet", "--", "sh", "w.sh"])
        .code(0)
        .stdout_has("wrote");
    assert_eq!(std::fs::read_to_string(cache.join("x")).unwrap(), "ok\n");
    env.aq(&["grants"])
        .code(0)
        .stdout_has("aq allow ~/.cache/acme");
    env.aq(&["allow", "--remove", "~/.cache/acme"])
        .code(0)
        .stdout_has("removed ~/.cache/acme");
    env.aq(&["run", "--quiet", "--", "sh", "w.sh"])
        .code(0)
        .stdout_has("refused");
}

#[test]
fn allowing_a_host_opens_the_tunnel_to_it_and_denying_closes_it() {
    let port = echo_server();
    let env = Env::new();
    let aq = crate::util::aq_exe();
    env.write(
        &env.work().join("n.sh"),
        &format!("echo ping | {aq} __connect git.example.invalid {port}; echo \"exit $?\"\n"),
    );
    let host = format!("git.example.invalid:{port}");
    let run = |env: &Env| {
        env.aq(&[
            "run",
            "--quiet",
            "--resolve",
            "git.example.invalid:127.0.0.1",
            "--",
            "sh",
            "n.sh",
        ])
    };
    run(&env).code(0).stdout_has("exit 1").stdout_lacks("ping");
    env.aq(&["allow", "--net", &host]).code(0);
    run(&env).code(0).stdout_has("ping\nexit 0");
    env.aq(&["deny", "--net", &host])
        .code(0)
        .stdout_has("removed");
    run(&env).code(0).stdout_has("exit 1").stdout_lacks("ping");
    // A host nothing allows cannot be denied further: said, nothing written.
    env.aq(&["deny", "--net", "other.example.invalid"])
        .code(2)
        .stderr_has("does not allow other.example.invalid");
}

#[test]
fn command_grants_change_the_decision() {
    let env = Env::new();
    assert_eq!(decision(&env, "npm ci"), "ask");
    assert_eq!(decision(&env, "terraform apply"), "ask");
    env.aq(&["allow", "--command", "npm ci"]).code(0);
    env.aq(&["deny", "--command", "terraform apply"]).code(0);
    assert_eq!(decision(&env, "npm ci"), "allow");
    assert_eq!(decision(&env, "terraform apply"), "block");
    assert_eq!(decision(&env, "terraform plan"), "allow");
    // A custom allow never lowers a built-in block.
    env.aq(&["allow", "--command", "rm -rf"]).code(0);
    assert_eq!(decision(&env, "rm -rf /"), "block");
    env.aq(&["grants"])
        .code(0)
        .stdout_has("aq allow --command 'npm ci'")
        .stdout_has("aq deny --command 'terraform apply'");
}

#[test]
fn a_grant_keeps_the_users_file_and_a_backup() {
    let env = Env::new();
    let before = "# my own notes\nversion = 1\n\n[session]\napproval_timeout_secs = 30  # short\n";
    env.write(&env.user_policy(), before);
    env.aq(&["allow", "--read-only", "~/data"]).code(0);
    let after = std::fs::read_to_string(env.user_policy()).unwrap();
    assert!(after.starts_with(before), "{after}");
    assert!(after.contains("readable = [\"~/data\"]"), "{after}");
    let backup = env.user_policy().with_extension("toml.bak");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), before);
    env.aq(&["check"]).code(0);
}

#[test]
fn dangerous_grants_are_refused_and_the_file_is_untouched() {
    let env = Env::new();
    let before = "version = 1\n";
    env.write(&env.user_policy(), before);
    for (args, why) in [
        (vec!["allow", "/"], "too broad"),
        (vec!["allow", "~"], "too broad"),
        (vec!["allow", "~/.ssh"], "credential location `~/.ssh`"),
        (
            vec!["allow", "--read-only", "~/.aws/credentials"],
            "`~/.aws`",
        ),
        (vec!["allow", "~/.config"], "credential location"),
        (vec!["deny", "~"], "too broad"),
        (vec!["allow", "--net", "*"], "not a host name"),
        (
            vec!["allow", "--command", "a b c"],
            "at most one subcommand",
        ),
    ] {
        env.aq(&args).code(2).stderr_has(why);
    }
    // Inside a session, nobody but the user makes grants.
    env.aq_with(&[("AQ_SESSION_DIR", "/nonexistent")], &["allow", "~/x"])
        .code(2)
        .stderr_has("cannot run inside an aq session");
    assert_eq!(std::fs::read_to_string(env.user_policy()).unwrap(), before);
    assert!(!env.user_policy().with_extension("toml.bak").exists());
}

#[test]
fn the_latest_audit_names_each_refusal_with_the_line_that_allows_it() {
    let port = echo_server();
    let env = Env::new();
    let aq = crate::util::aq_exe();
    env.write(
        &env.work().join("r.sh"),
        &format!(
            "echo ping | {aq} __connect other.example.invalid {port}; echo \"tunnel $?\"\n\
             curl -s -o /dev/null http://127.0.0.1:9/; echo \"curl $?\"\n\
             python3 -c 'import ctypes; print(\"keyctl\", ctypes.CDLL(None).syscall({keyctl}, 0, -3, 0))'\n",
            keyctl = libc::SYS_keyctl
        ),
    );
    let run = |env: &Env| {
        env.aq(&[
            "run",
            "--quiet",
            "--net",
            &format!("allow:git.example.invalid:{port}"),
            "--resolve",
            "other.example.invalid:127.0.0.1",
            "--",
            "sh",
            "r.sh",
        ])
    };
    // A refused host and an ask nobody answers (curl: net-fetch).
    run(&env)
        .code(0)
        .stdout_has("tunnel 1")
        .stdout_has("curl 126");
    let recap = env.aq(&["audit", "--latest"]);
    let net_line = format!("aq allow --net other.example.invalid:{port}");
    recap
        .code(0)
        .stdout_has("refused, and the line that allows it next time:")
        .stdout_has(&net_line)
        .stdout_has("aq allow --command 'curl'")
        .stdout_has("! `net-fetch` asked because it fetches from or sends to the network")
        .stdout_has("syscall keyctl refused (EPERM), once")
        .stdout_has("no grant for keyctl: every sandboxed profile denies it");
    let report = env.aq(&["report", "--latest", "--format", "json"]).json();
    let lines: Vec<&str> = report["remedies"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["line"].as_str())
        .collect();
    assert!(lines.contains(&net_line.as_str()), "{report}");
    // The lines, run as written, permit both next time.
    for line in [net_line.as_str(), "aq allow --command 'curl'"] {
        let words = shell_split(line);
        env.aq(&words.iter().skip(1).map(String::as_str).collect::<Vec<_>>())
            .code(0);
    }
    run(&env)
        .code(0)
        .stdout_has("ping\ntunnel 0")
        .stdout_lacks("curl 126");
}

/// `aq allow --command 'curl'` as argv.
fn shell_split(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The kernel's audit switched on for one test and back as it was: Landlock
/// reports its refusals only there (what `aq run` reads as root).
struct AuditOn {
    was: bool,
}

impl AuditOn {
    fn set(on: bool) -> std::io::Result<bool> {
        // A netlink AUDIT_GET, then AUDIT_SET of `enabled` when it differs.
        // SAFETY: plain socket calls on an fd we own, buffers we own.
        unsafe {
            let fd = libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 9);
            if fd == -1 {
                return Err(std::io::Error::last_os_error());
            }
            let header = |len: u32, kind: u16| {
                let mut h = Vec::new();
                h.extend_from_slice(&len.to_ne_bytes());
                h.extend_from_slice(&kind.to_ne_bytes());
                h.extend_from_slice(
                    &((libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16).to_ne_bytes(),
                );
                h.extend_from_slice(&[0; 8]);
                h
            };
            let get = header(16, 1000);
            libc::send(fd, get.as_ptr().cast(), get.len(), 0);
            let mut buf = [0u8; 4096];
            let mut was = false;
            for _ in 0..4 {
                let n = libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0);
                if n >= 24 && u16::from_ne_bytes([buf[4], buf[5]]) == 1000 {
                    was = u32::from_ne_bytes([buf[20], buf[21], buf[22], buf[23]]) != 0;
                    break;
                }
            }
            if was != on {
                // struct audit_status: mask = AUDIT_STATUS_ENABLED, enabled.
                let mut set = header(16 + 64, 1001);
                set.extend_from_slice(&1u32.to_ne_bytes());
                set.extend_from_slice(&u32::from(on).to_ne_bytes());
                set.resize(16 + 64, 0);
                libc::send(fd, set.as_ptr().cast(), set.len(), 0);
                libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0);
            }
            libc::close(fd);
            Ok(was)
        }
    }
}

impl Drop for AuditOn {
    fn drop(&mut self) {
        let _ = AuditOn::set(self.was);
    }
}

#[test]
fn landlock_refusals_are_read_back_with_their_line_as_root() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        aq_testkit::not_applicable("the kernel's audit log is for root to read");
        return;
    }
    let _audit = match AuditOn::set(true) {
        Ok(was) => AuditOn { was },
        Err(e) => panic!("cannot switch the kernel's audit on: {e}"),
    };
    let env = Env::new();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let history = env.root().join("home/.bash_history");
    env.write(&history, "FAKE-HISTORY\n");
    env.write(
        &env.work().join("t.sh"),
        &format!(
            "echo x > '{}/f' 2>/dev/null || echo refused-write\n{{ read -r _ < '{}'; }} 2>/dev/null || echo refused-read\n",
            outside.display(),
            history.display()
        ),
    );
    env.aq(&["run", "--quiet", "--", "sh", "t.sh"])
        .code(0)
        .stdout_has("refused-write")
        .stdout_has("refused-read");
    let write_line = format!("aq allow {}", outside.display());
    let read_line = format!("aq allow --read-only {}", history.display());
    env.aq(&["audit", "--latest"])
        .code(0)
        .stdout_has(&format!(
            "write   {} (fs.make_reg) refused",
            outside.display()
        ))
        .stdout_has(&write_line)
        .stdout_has(&format!(
            "read    {} (fs.read_file) refused",
            history.display()
        ))
        .stdout_has(&read_line);
    // The write's line, run as printed, permits it next time.
    env.aq(&["allow", &outside.display().to_string()]).code(0);
    env.aq(&["run", "--quiet", "--", "sh", "t.sh"])
        .code(0)
        .stdout_lacks("refused-write");
    assert_eq!(std::fs::read_to_string(outside.join("f")).unwrap(), "x\n");
}

#[test]
fn a_grant_made_here_holds_only_in_this_workspace() {
    let env = Env::new();
    let shared = env.root().join("shared-cache");
    std::fs::create_dir_all(&shared).unwrap();
    let other = env.root().join("other-project");
    std::fs::create_dir_all(&other).unwrap();
    let script = format!(
        "if echo ok > '{}/x' 2>/dev/null; then echo wrote; else echo refused; fi\n",
        shared.display()
    );
    env.write(&env.work().join("w.sh"), &script);
    env.write(&other.join("w.sh"), &script);
    let path = shared.display().to_string();
    env.aq(&["allow", "--here", &path])
        .code(0)
        .stdout_has("[workspace.");
    env.aq(&["run", "--quiet", "--", "sh", "w.sh"])
        .code(0)
        .stdout_has("wrote");
    env.aq_in(&other, &["run", "--quiet", "--", "sh", "w.sh"])
        .code(0)
        .stdout_has("refused");
    env.aq(&["grants"])
        .code(0)
        .stdout_has(&format!("aq allow --here {path}"));
    // A repository's own file cannot grant itself a workspace.
    env.write(
        &other.join("agent-quarantine.toml"),
        &format!(
            "version = 1\n\n[workspace.\"{}\"]\nwritable = [\"{path}\"]\n",
            other.display()
        ),
    );
    env.aq_in(&other, &["run", "--", "sh", "w.sh"])
        .code(0)
        .stdout_has("refused")
        .stderr_has("grants are the user's");
}
