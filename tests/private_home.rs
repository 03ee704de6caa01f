//! A private home: inside `strict`, reads outside the workspace
//! are limited to the system and what builds read. Each refused read has
//! its positive control: the same read with `--home read-only` succeeds.

use std::path::{Path, PathBuf};

use crate::util::Env;

/// What a command might want to steal from the home, and aq's own state:
/// (label, path, content).
fn plant(env: &Env, state: &Path) -> Vec<(&'static str, PathBuf)> {
    let home = env.root().join("home");
    let files = [
        ("bash-history", home.join(".bash_history")),
        ("zsh-history", home.join(".zsh_history")),
        ("other-repo", home.join("src/other-project/notes.txt")),
        // Browser profiles are credentials of the catalog, masked in every
        // profile (tests/credentials.rs); other applications' data is
        // hidden by the private home alone.
        ("app-data", home.join(".config/some-chat-app/history.db")),
        ("documents", home.join("Documents/taxes-2025.txt")),
        (
            "other-session-log",
            state.join("agent-quarantine/sessions/20261130T000000Z-0ther000/log.jsonl"),
        ),
        (
            "other-session-ask",
            state.join(
                "agent-quarantine/sessions/20261130T000000Z-0ther000/approvals/pending/1.json",
            ),
        ),
    ];
    for (label, path) in &files {
        env.write(path, &format!("FAKE-PRIVATE-{label}\n"));
    }
    files.to_vec()
}

/// A script that tries to read each path and says `read LABEL` or
/// `refused LABEL: <error>`. It reads with the shell's own `read`, so that
/// the sandbox is what refuses (a `cat` of the history would ask the
/// firewall first, and be refused by it).
fn reader(env: &Env, files: &[(&str, PathBuf)]) {
    let mut script = String::new();
    for (label, path) in files {
        script.push_str(&format!(
            "if {{ read -r _ < '{}'; }} 2> err.txt; then echo 'read {label}'; else echo \"refused {label}: $(cat err.txt)\"; fi\n",
            path.display()
        ));
    }
    env.write(&env.work().join("read.sh"), &script);
}

#[test]
fn a_private_home_hides_history_other_repositories_app_data_and_other_sessions() {
    let env = Env::new();
    // aq's state where it is by default: under the home.
    let state = env.root().join("home/.local/state");
    let files = plant(&env, &state);
    reader(&env, &files);
    let state_var = state.display().to_string();
    let vars = [("XDG_STATE_HOME", state_var.as_str())];
    let out = env.aq_with(&vars, &["run", "--quiet", "--", "sh", "read.sh"]);
    out.code(0)
        .stdout_lacks("read ")
        .stdout_lacks("FAKE-PRIVATE");
    for (label, _) in &files {
        out.stdout_has(&format!("refused {label}: "));
    }
    assert_eq!(
        out.stdout.matches("Permission denied").count(),
        files.len(),
        "{}",
        out.dump()
    );
    // The control: with the whole home readable, each read succeeds.
    let out = env.aq_with(
        &vars,
        &[
            "run",
            "--quiet",
            "--home",
            "read-only",
            "--",
            "sh",
            "read.sh",
        ],
    );
    out.code(0).stdout_lacks("refused ");
    for (label, _) in &files {
        out.stdout_has(&format!("read {label}"));
    }
}

#[test]
fn a_private_home_cannot_be_reached_through_another_name() {
    let env = Env::new();
    let home = env.root().join("home");
    let history = home.join(".bash_history");
    env.write(&history, "FAKE-PRIVATE-history\n");
    let script = format!(
        "try() {{ if {{ read -r _ < \"$2\"; }} 2>/dev/null; then echo \"read $1\"; else echo \"refused $1\"; fi; }}\n\
         try proc-root /proc/self/root{h}\n\
         ln -s {h} link && try symlink link\n\
         if ln {h} hard 2>/dev/null; then try hard-link hard; else echo 'refused hard-link'; fi\n\
         try dotdot ../home/.bash_history\n\
         if ls ~ > /dev/null 2>&1; then echo 'read listing'; else echo 'refused listing'; fi\n\
         (cd ~ && read -r _ < .bash_history) 2>/dev/null && echo 'read cd' || echo 'refused cd'\n",
        h = history.display()
    );
    env.write(&env.work().join("alias.sh"), &script);
    let out = env.aq(&["run", "--quiet", "--", "sh", "alias.sh"]);
    out.code(0).stdout_lacks("read ");
    for way in [
        "proc-root",
        "symlink",
        "hard-link",
        "dotdot",
        "listing",
        "cd",
    ] {
        out.stdout_has(&format!("refused {way}"));
    }
    // The control: every way reads it with the whole home readable.
    std::fs::remove_file(env.work().join("link")).unwrap();
    let out = env.aq(&[
        "run",
        "--quiet",
        "--home",
        "read-only",
        "--",
        "sh",
        "alias.sh",
    ]);
    out.code(0);
    for way in ["proc-root", "symlink", "dotdot", "listing", "cd"] {
        out.stdout_has(&format!("read {way}"));
    }
}

#[test]
fn a_private_home_keeps_git_and_builds_working() {
    let env = Env::new();
    let home = env.root().join("home");
    env.write(
        &home.join(".gitconfig"),
        "[user]\n\tname = Test Person\n\temail = test@example.invalid\n",
    );
    let ws = env.work();
    env.write(
        &ws.join("test_tiny.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n\nif __name__ == '__main__':\n    unittest.main()\n",
    );
    env.write(
        &ws.join("package.json"),
        "{\"name\":\"tiny\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node test.js\"}}\n",
    );
    env.write(&ws.join("test.js"), "console.log('node tests ok');\n");
    env.write(
        &ws.join("build.sh"),
        "mkdir repo && (cd repo && git init -q && echo x > f && git add f && git commit -qm first && git log --format='%an <%ae>')\n\
         python3 -m unittest -q test_tiny 2>&1 | tail -1\n\
         if command -v npm > /dev/null; then npm test --silent; else echo 'node tests ok'; fi\n",
    );
    let out = env.aq(&["run", "--quiet", "--", "sh", "build.sh"]);
    out.code(0)
        .stdout_has("Test Person <test@example.invalid>")
        .stdout_has("OK")
        .stdout_has("node tests ok");
}

#[test]
fn pytest_runs_in_a_private_home() {
    let has_pytest = std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_pytest {
        aq_testkit::skip("no pytest for python3 (.ci/setup installs it)");
        return;
    }
    let env = Env::new();
    env.write(
        &env.work().join("test_tiny.py"),
        "def add(a, b):\n    return a + b\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    );
    // The real toolchain, whatever HOME is here (pyenv finds itself by it).
    let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let pyenv_root = std::env::var("PYENV_ROOT").unwrap_or(format!("{real_home}/.pyenv"));
    let out = env.aq_with(
        &[("PYENV_ROOT", &pyenv_root)],
        &[
            "run",
            "--quiet",
            "--",
            "python3",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
    );
    out.code(0).stdout_has("1 passed");
}

#[test]
fn a_link_planted_beside_the_home_does_not_grant_what_it_points_to() {
    // Red team: the home here lies inside /tmp (as on many CI runners), so
    // the readable /tmp is granted entry by entry with the home left out.
    // A link planted among those entries, pointing into the home, was
    // granted at its target: the private home's files read through it.
    let env = Env::new();
    let home = env.root().join("home");
    let notes = home.join("src/other-project/notes.txt");
    env.write(&notes, "FAKE-PRIVATE-notes\n");
    let link = env.root().join("planted-link");
    std::os::unix::fs::symlink(home.join("src/other-project"), &link).unwrap();
    reader(&env, &[("via-link", link.join("notes.txt"))]);
    let out = env.aq(&["run", "--quiet", "--", "sh", "read.sh"]);
    out.code(0)
        .stdout_lacks("read via-link")
        .stdout_has("refused via-link: ")
        .stdout_has("Permission denied");
    // The control: with the whole home readable the link reads it.
    let out = env.aq(&[
        "run",
        "--quiet",
        "--home",
        "read-only",
        "--",
        "sh",
        "read.sh",
    ]);
    out.code(0).stdout_has("read via-link");
}

#[test]
fn an_unprivileged_users_home_is_not_opened_by_a_link_planted_beside_it() {
    // The planted link again, as an unprivileged user whose home lies in
    // /tmp; a link back to the directory being cut must not hang the start.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: the test above is the proof.
        return;
    }
    let (root, aq, uid, gid) = crate::util::user_scratch(
        "aq-unpriv-link-",
        &["home/src/other-project", "state", "config", "work"],
    );
    let r = root.path();
    let notes = r.join("home/src/other-project/notes.txt");
    std::fs::write(&notes, "FAKE-PRIVATE-notes\n").unwrap();
    std::os::unix::fs::chown(&notes, Some(uid), Some(gid)).unwrap();
    std::os::unix::fs::symlink(r.join("home/src/other-project"), r.join("planted-link")).unwrap();
    std::os::unix::fs::symlink(r, r.join("loop")).unwrap();
    let script = r.join("work/read.sh");
    std::fs::write(
        &script,
        format!(
            "if {{ read -r _ < '{}'; }} 2> err.txt; then echo 'read via-link'; else echo \"refused via-link: $(cat err.txt)\"; fi\n",
            r.join("planted-link/notes.txt").display()
        ),
    )
    .unwrap();
    std::os::unix::fs::chown(&script, Some(uid), Some(gid)).unwrap();
    let run = |args: &[&str]| {
        let out = crate::util::aq_as_user(r, &aq, (uid, gid), "work", args);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&["run", "--quiet", "--", "sh", "read.sh"]);
    assert!(
        out.contains("refused via-link: ") && out.contains("Permission denied"),
        "{out}"
    );
    // The control: with the whole home readable the same user reads it.
    let out = run(&[
        "run",
        "--quiet",
        "--home",
        "read-only",
        "--",
        "sh",
        "read.sh",
    ]);
    assert!(out.contains("read via-link"), "{out}");
}
