//! `aq run`'s git guard, end to end: nothing a session writes may make the
//! user's next git command, outside aq, run a program. Each vector is tried for real from inside the kernel sandbox
//! with shell builtins (so only the kernel and the guard stand in the way):
//!
//! - what exists under `.git` is read-only: the write fails with EROFS,
//!   while the same write to an ordinary file of the workspace succeeds;
//! - what cannot be pinned (a file that does not exist yet, a nested
//!   repository) is put aside when the session ends: the file is gone or
//!   back to what it was, the session's version is in the session
//!   directory, a `git_change_refused` event names it, and a real git run
//!   afterwards does not run the planted command, where the same plant made
//!   outside aq does (the positive control).
//!
//! Planted commands append to a marker file and run nothing else.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{Env, Session};

/// `git clone` of a local repository is a network fetch to the firewall
/// (the benign control clones one), `chmod +x` an ask (a hook is made
/// executable): allowed, so only the kernel and the guard stand in the way.
const RULES: &str = "\"net-fetch\" = \"allow\"\n\"fs-permissions\" = \"allow\"\n";

/// git as the user runs it outside aq: the scratch home, no system config.
pub(crate) fn git(env: &Env, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", env.root().join("home"))
        .env("XDG_CONFIG_HOME", env.root().join("config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run git")
}

#[track_caller]
pub(crate) fn git_ok(env: &Env, dir: &Path, args: &[&str]) -> String {
    let out = git(env, dir, args);
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The workspace as a repository with one commit and a submodule `a`
/// (from `lib` beside the workspace); the test's identity in the home.
pub(crate) fn repo_with_submodule(env: &Env) {
    let work = env.work();
    std::fs::remove_dir_all(work.join(".git")).expect("remove the scratch .git");
    env.write(
        &env.root().join("home/.gitconfig"),
        "[user]\n\tname = t\n\temail = t@example.invalid\n[protocol \"file\"]\n\tallow = always\n",
    );
    git_ok(env, env.root(), &["init", "-q", "lib"]);
    git_ok(
        env,
        &env.root().join("lib"),
        &["commit", "-q", "--allow-empty", "-m", "lib"],
    );
    git_ok(env, &work, &["init", "-q"]);
    git_ok(env, &work, &["submodule", "add", "-q", "../lib", "a"]);
    git_ok(env, &work, &["commit", "-q", "-m", "submodule a"]);
}

/// Where a planted command writes.
fn marker(env: &Env, name: &str) -> PathBuf {
    env.root().join(format!("ran-{name}"))
}

/// A command for a config key that appends to `marker` and runs nothing
/// else (git passes the fsmonitor hook arguments: they go to `false`).
fn planted(marker: &Path) -> String {
    format!("echo ran >> {}; false", marker.display())
}

/// Runs `script` as `aq run --quiet -- sh attack.sh` in the workspace.
fn attack(env: &Env, script: &str) -> crate::util::Output {
    env.write(&env.work().join("attack.sh"), script);
    env.aq(&["run", "--quiet", "--", "sh", "attack.sh"])
}

/// The session's `git_change_refused` events.
fn refusals(session: &Session) -> Vec<serde_json::Value> {
    session.events_of("git_change_refused")
}

/// The one refusal of `path`, with its copy in the session directory
/// holding `needle`.
#[track_caller]
fn assert_put_aside(session: &Session, path: &str, action: &str, needle: &str) {
    let events = refusals(session);
    let e = events
        .iter()
        .find(|e| e["path"] == path)
        .unwrap_or_else(|| panic!("no git_change_refused for {path}: {}", session.log_text()));
    assert_eq!(e["action"], action, "{e}");
    let copy = PathBuf::from(e["quarantined"].as_str().expect("a quarantined copy"));
    assert!(
        copy.starts_with(&session.dir),
        "copy outside the session directory: {}",
        copy.display()
    );
    let kept = std::fs::read_to_string(&copy).unwrap_or_default();
    assert!(kept.contains(needle), "{} holds {kept:?}", copy.display());
}

/// Whether `marker` was written.
fn ran(marker: &Path) -> bool {
    marker.exists()
}

#[test]
fn what_exists_under_dot_git_is_read_only_in_the_sandbox() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    // The user's own config.worktree and info/attributes (sparse checkout,
    // an ignore of theirs) exist: pinned too.
    env.write(
        &w.join(".git/config.worktree"),
        "[core]\n\tsparseCheckout = false\n",
    );
    env.write(&w.join(".git/info/attributes"), "*.bin -diff\n");
    let module_config = std::fs::read_to_string(w.join(".git/modules/a/config")).unwrap();
    let m = marker(&env, "pinned");
    let out = attack(
        &env,
        &format!(
            "printf '[core]\\n\\tfsmonitor = \"{cmd}\"\\n' >> .git/modules/a/config && echo wrote-module-config || echo refused-module-config\n\
             echo x > .git/modules/a/hooks/post-checkout && echo wrote-module-hook || echo refused-module-hook\n\
             echo '[core]' >> .git/config.worktree && echo wrote-config-worktree || echo refused-config-worktree\n\
             echo '* filter=x' >> .git/info/attributes && echo wrote-attributes || echo refused-attributes\n\
             mv .git/modules/a .git/modules/b && echo moved-module || echo refused-move\n\
             echo ok > plain.txt && echo wrote-plain\n",
            cmd = planted(&m)
        ),
    );
    out.code(0)
        .stdout_has("refused-module-config")
        .stdout_has("refused-module-hook")
        .stdout_has("refused-config-worktree")
        .stdout_has("refused-attributes")
        .stdout_has("refused-move")
        // The positive control: the same kind of write to an ordinary file.
        .stdout_has("wrote-plain")
        .stderr_has("Read-only file system");
    assert_eq!(
        std::fs::read_to_string(w.join(".git/modules/a/config")).unwrap(),
        module_config
    );
    assert!(!w.join(".git/modules/a/hooks/post-checkout").exists());
    assert!(w.join("plain.txt").exists());
    git_ok(&env, &w, &["status", "--short"]);
    assert!(!ran(&m));
    // Nothing was written, so nothing was put aside.
    assert!(refusals(&env.only_session()).is_empty());
}

#[test]
fn a_workspace_gitfile_is_read_only() {
    let env = Env::with_policy("", RULES);
    // The workspace is a linked worktree of a repository beside it.
    std::fs::remove_dir_all(env.work().join(".git")).unwrap();
    std::fs::remove_dir_all(env.work()).unwrap();
    git_ok(&env, env.root(), &["init", "-q", "main"]);
    let main = env.root().join("main");
    git_ok(&env, &main, &["commit", "-q", "--allow-empty", "-m", "m"]);
    git_ok(&env, &main, &["worktree", "add", "-q", "../work"]);
    let gitfile = std::fs::read_to_string(env.work().join(".git")).unwrap();
    let out = attack(
        &env,
        "echo 'gitdir: evil' > .git && echo wrote-gitfile || echo refused-gitfile\n\
         echo ok > plain.txt && echo wrote-plain\n",
    );
    out.code(0)
        .stdout_has("refused-gitfile")
        .stdout_has("wrote-plain")
        .stderr_has("Read-only file system");
    assert_eq!(
        std::fs::read_to_string(env.work().join(".git")).unwrap(),
        gitfile
    );
}

#[test]
fn a_commondir_planted_in_dot_git_is_removed_and_git_status_runs_nothing() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let m = marker(&env, "commondir");
    // A complete common directory beside .git whose config runs the
    // marker, and .git told to take its config from there.
    let script = format!(
        "git init -q --bare evil\n\
         printf '[core]\\n\\tbare = false\\n\\tfsmonitor = \"{cmd}\"\\n' > evil/config\n\
         echo ../evil > .git/commondir && echo wrote-commondir\n",
        cmd = planted(&m)
    );
    attack(&env, &script).code(0).stdout_has("wrote-commondir");
    assert!(!w.join(".git/commondir").exists());
    let session = env.only_session();
    assert_put_aside(&session, ".git/commondir", "removed", "../evil");
    // The bare repository it named is one of the workspace's too: its
    // config, which runs the marker, is put aside as well.
    assert_put_aside(&session, "evil/config", "removed", "fsmonitor");
    git_ok(&env, &w, &["status", "--short"]);
    assert!(!ran(&m), "git status ran the planted command");
    // The positive control: the same plant outside aq runs it.
    std::fs::write(
        w.join("evil/config"),
        format!(
            "[core]\n\tbare = false\n\tfsmonitor = \"{}\"\n",
            planted(&m)
        ),
    )
    .unwrap();
    std::fs::write(w.join(".git/commondir"), "../evil\n").unwrap();
    let _ = git(&env, &w, &["status", "--short"]);
    assert!(
        ran(&m),
        "the control plant did not run: the test proves nothing"
    );
}

#[test]
fn a_config_worktree_planted_in_dot_git_is_removed() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    // The user's repository reads config.worktree (sparse checkout sets it).
    git_ok(&env, &w, &["config", "extensions.worktreeConfig", "true"]);
    let m = marker(&env, "config-worktree");
    let plant = format!("[core]\n\tfsmonitor = \"{}\"\n", planted(&m));
    let script =
        format!("printf '%s' '{plant}' > .git/config.worktree && echo wrote-config-worktree\n");
    attack(&env, &script)
        .code(0)
        .stdout_has("wrote-config-worktree");
    assert!(!w.join(".git/config.worktree").exists());
    assert_put_aside(
        &env.only_session(),
        ".git/config.worktree",
        "removed",
        "fsmonitor",
    );
    git_ok(&env, &w, &["status", "--short"]);
    assert!(!ran(&m), "git status ran the planted command");
    std::fs::write(w.join(".git/config.worktree"), &plant).unwrap();
    git_ok(&env, &w, &["status", "--short"]);
    assert!(
        ran(&m),
        "the control plant did not run: the test proves nothing"
    );
}

#[test]
fn a_submodule_gitfile_pointed_at_tmpdir_is_put_back() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let gitfile = std::fs::read_to_string(w.join("a/.git")).unwrap();
    let m = marker(&env, "gitfile");
    // The submodule's .git now names a repository in the session's TMPDIR
    // (outside the workspace, writable by the session).
    let script = format!(
        "git init -q --bare \"$TMPDIR/evil\"\n\
         printf '[core]\\n\\tbare = false\\n\\tfsmonitor = \"{cmd}\"\\n' >> \"$TMPDIR/evil/config\"\n\
         echo \"gitdir: $TMPDIR/evil\" > a/.git && echo wrote-gitfile\n",
        cmd = planted(&m)
    );
    attack(&env, &script).code(0).stdout_has("wrote-gitfile");
    assert_eq!(std::fs::read_to_string(w.join("a/.git")).unwrap(), gitfile);
    let session = env.only_session();
    assert_put_aside(&session, "a/.git", "restored", "/tmp/evil");
    let e = &refusals(&session)[0];
    assert!(
        e["what"]
            .as_str()
            .unwrap()
            .starts_with("core.fsmonitor of "),
        "{e}"
    );
    git_ok(&env, &w, &["status", "--short"]);
    assert!(!ran(&m), "git status ran the planted command");
    // The control: the same gitfile outside aq.
    let evil = session.dir.join("tmp/evil");
    std::fs::write(w.join("a/.git"), format!("gitdir: {}\n", evil.display())).unwrap();
    let _ = git(&env, &w, &["status", "--short"]);
    assert!(
        ran(&m),
        "the control plant did not run: the test proves nothing"
    );
}

#[test]
fn a_new_nested_repository_with_a_program_or_a_hook_is_put_aside() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let (mc, mh) = (marker(&env, "nested-config"), marker(&env, "nested-hook"));
    let script = format!(
        "git init -q n && printf '[core]\\n\\tfsmonitor = \"{cmd}\"\\n' >> n/.git/config && echo wrote-nested\n\
         git init -q h && printf '#!/bin/sh\\necho ran >> {hook}\\n' > h/.git/hooks/pre-commit && chmod +x h/.git/hooks/pre-commit && echo wrote-hook\n",
        cmd = planted(&mc),
        hook = mh.display()
    );
    attack(&env, &script)
        .code(0)
        .stdout_has("wrote-nested")
        .stdout_has("wrote-hook");
    let session = env.only_session();
    assert_put_aside(&session, "n/.git/config", "removed", "fsmonitor");
    assert_put_aside(&session, "h/.git/hooks/pre-commit", "removed", "ran >>");
    // The rest of the new repositories stays: only what runs is put aside.
    assert!(w.join("n/.git/HEAD").exists() && w.join("h/.git/hooks/pre-push.sample").exists());
    let _ = git(&env, &w.join("n"), &["status", "--short"]);
    git_ok(
        &env,
        &w.join("h"),
        &["commit", "-q", "--allow-empty", "-m", "x"],
    );
    assert!(!ran(&mc) && !ran(&mh), "git ran a planted command");
    // The controls: the same plants outside aq.
    std::fs::write(
        w.join("n/.git/config"),
        format!("[core]\n\tfsmonitor = \"{}\"\n", planted(&mc)),
    )
    .unwrap();
    let _ = git(&env, &w.join("n"), &["status", "--short"]);
    assert!(
        ran(&mc),
        "the control config did not run: the test proves nothing"
    );
    let hook = w.join("h/.git/hooks/pre-commit");
    std::fs::write(&hook, format!("#!/bin/sh\necho ran >> {}\n", mh.display())).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    git_ok(
        &env,
        &w.join("h"),
        &["commit", "-q", "--allow-empty", "-m", "y"],
    );
    assert!(
        ran(&mh),
        "the control hook did not run: the test proves nothing"
    );
}

/// The end check lists again only the directories whose entries changed
/// since the start (their change time moved): a repository planted deep in
/// a tree older than the check's two-second window is still found, and the
/// check listed that directory, not the whole tree. The next session's
/// start does the same from the record the end check left.
#[test]
fn a_repository_planted_deep_in_an_old_tree_is_found_by_a_short_end_check() {
    let env = Env::with_policy("", RULES);
    let w = env.work();
    for i in 0..40 {
        env.write(&w.join(format!("src/d{i}/e/f.rs")), "fn f() {}\n");
    }
    // Older than the window in which a directory's times are not trusted.
    std::thread::sleep(Duration::from_millis(2100));
    let mc = marker(&env, "deep-config");
    let script = format!(
        "git init -q src/d17/e/n && printf '[core]\\n\\tfsmonitor = \"{cmd}\"\\n' >> src/d17/e/n/.git/config && echo wrote-deep\n",
        cmd = planted(&mc)
    );
    attack(&env, &script).code(0).stdout_has("wrote-deep");
    let session = env.only_session();
    assert_put_aside(&session, "src/d17/e/n/.git/config", "removed", "fsmonitor");
    let checked: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(session.dir.join("git-guard/checked")).expect("checked"),
    )
    .expect("checked is JSON");
    let listed = checked["dirs_listed"].as_u64().expect("dirs_listed");
    // The workspace root (attack.sh), src/d17/e and the new repository's
    // directory: not the 80 directories of the tree.
    assert!((1..=6).contains(&listed), "{checked}");
    let _ = git(&env, &w.join("src/d17/e/n"), &["status", "--short"]);
    assert!(!ran(&mc), "git ran a planted command");

    // The next session's start takes the record the end check left: a
    // repository the user made between the sessions, in an old directory,
    // is in its snapshot, and the start listed a few directories, not all.
    git_ok(&env, &w.join("src/d30/e"), &["init", "-q", "m"]);
    env.aq(&["run", "--quiet", "--", "true"]).code(0);
    let second = env
        .sessions()
        .into_iter()
        .find(|s| s.dir != session.dir)
        .expect("a second session");
    let snapshot: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(second.dir.join("git-guard/snapshot.json")).expect("snapshot"),
    )
    .expect("snapshot is JSON");
    let files = snapshot["files"].as_object().expect("files");
    assert!(
        files.keys().any(|k| k.ends_with("src/d30/e/m/.git/config")),
        "{:?}",
        files.keys().collect::<Vec<_>>()
    );
    let listed = snapshot["dirs_listed"].as_u64().expect("dirs_listed");
    assert!(
        (1..=8).contains(&listed),
        "the start listed {listed} directories"
    );
}

#[test]
fn an_existing_nested_repository_gets_its_config_back() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    // A vendored checkout with a config of its own, there before the session.
    git_ok(&env, &w, &["init", "-q", "vendor/dep"]);
    git_ok(
        &env,
        &w.join("vendor/dep"),
        &["config", "remote.origin.url", "https://example.invalid/dep"],
    );
    let original = std::fs::read_to_string(w.join("vendor/dep/.git/config")).unwrap();
    let m = marker(&env, "vendored");
    let script = format!(
        "printf '[core]\\n\\tsshCommand = \"{cmd}\"\\n\\tpager = \"{cmd}\"\\n' >> vendor/dep/.git/config && echo wrote-vendored\n",
        cmd = planted(&m)
    );
    attack(&env, &script).code(0).stdout_has("wrote-vendored");
    assert_eq!(
        std::fs::read_to_string(w.join("vendor/dep/.git/config")).unwrap(),
        original
    );
    let session = env.only_session();
    assert_put_aside(&session, "vendor/dep/.git/config", "restored", "sshCommand");
    let e = &refusals(&session)[0];
    assert!(e["what"].as_str().unwrap().contains("(and 1 more)"), "{e}");
    // The recap tells the user which file, what it would run, where the copy is.
    let log = session.log_text();
    assert!(log.contains("vendor/dep/.git/config"), "{log}");
}

#[test]
fn a_gitlink_into_node_modules_is_followed_and_its_config_put_aside() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let m = marker(&env, "gitlink");
    // A repository where the walk does not look, reached by a gitlink the
    // session adds to the index: the user's `git status` goes into it.
    let script = format!(
        "git init -q node_modules/x && git -C node_modules/x commit -q --allow-empty -m x\n\
         printf '[core]\\n\\tfsmonitor = \"{cmd}\"\\n' >> node_modules/x/.git/config\n\
         git update-index --add --cacheinfo \"160000,$(git -C node_modules/x rev-parse HEAD),node_modules/x\" && echo wrote-gitlink\n",
        cmd = planted(&m)
    );
    attack(&env, &script).code(0).stdout_has("wrote-gitlink");
    assert_put_aside(
        &env.only_session(),
        "node_modules/x/.git/config",
        "removed",
        "fsmonitor",
    );
    git_ok(&env, &w, &["status", "--short"]);
    assert!(!ran(&m), "git status ran the planted command");
    std::fs::write(
        w.join("node_modules/x/.git/config"),
        format!("[core]\n\tfsmonitor = \"{}\"\n", planted(&m)),
    )
    .unwrap();
    git_ok(&env, &w, &["status", "--short"]);
    assert!(
        ran(&m),
        "the control plant did not run: the test proves nothing"
    );
}

#[test]
fn info_attributes_that_pick_a_users_driver_are_removed() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let m = marker(&env, "attributes");
    // The user's own diff driver (a textconv they set up), never used here
    // until an attribute picks it.
    env.write(
        &env.root().join("home/.gitconfig"),
        &format!(
            "[user]\n\tname = t\n\temail = t@example.invalid\n[diff \"conv\"]\n\ttextconv = \"echo ran >> {}; cat\"\n",
            m.display()
        ),
    );
    env.write(&w.join("data.txt"), "one\n");
    git_ok(&env, &w, &["add", "data.txt"]);
    git_ok(&env, &w, &["commit", "-q", "-m", "data"]);
    env.write(&w.join("data.txt"), "two\n");
    attack(
        &env,
        "echo '* diff=conv' > .git/info/attributes && echo wrote-attributes\n",
    )
    .code(0)
    .stdout_has("wrote-attributes");
    assert!(!w.join(".git/info/attributes").exists());
    assert_put_aside(
        &env.only_session(),
        ".git/info/attributes",
        "removed",
        "diff=conv",
    );
    git_ok(&env, &w, &["diff"]);
    assert!(!ran(&m), "git diff ran the driver");
    std::fs::write(w.join(".git/info/attributes"), "* diff=conv\n").unwrap();
    git_ok(&env, &w, &["diff"]);
    assert!(
        ran(&m),
        "the control attribute did not run: the test proves nothing"
    );
}

#[test]
fn git_init_commit_and_clone_in_the_session_are_left_alone() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let out = attack(
        &env,
        "git init -q sub && echo hi > sub/f && git -C sub add f && git -C sub commit -q -m one && echo committed\n\
         git clone -q sub cloned && echo cloned\n\
         git -C cloned config user.name Dev && git -C cloned remote add up ../sub && echo configured\n",
    );
    out.code(0)
        .stdout_has("committed")
        .stdout_has("cloned")
        .stdout_has("configured")
        .stderr_lacks("git change refused");
    assert!(
        refusals(&env.only_session()).is_empty(),
        "{}",
        env.only_session().log_text()
    );
    assert!(w.join("cloned/.git/hooks/pre-commit.sample").exists());
    let config = std::fs::read_to_string(w.join("cloned/.git/config")).unwrap();
    assert!(
        config.contains("name = Dev") && config.contains("[remote \"up\"]"),
        "{config}"
    );
    assert_eq!(
        git_ok(&env, &w.join("cloned"), &["log", "--format=%s"]),
        "one\n"
    );
}

#[test]
fn a_killed_supervisors_git_changes_are_reported_then_put_aside_by_the_next_session() {
    let env = Env::with_policy("", RULES);
    repo_with_submodule(&env);
    let w = env.work();
    let m = marker(&env, "killed");
    env.write(
        &w.join("attack.sh"),
        &format!(
            "git init -q n && printf '[core]\\n\\tfsmonitor = \"{cmd}\"\\n' >> n/.git/config && touch planted\nsleep 30\n",
            cmd = planted(&m)
        ),
    );
    let mut running = env.spawn(&["run", "--quiet", "--", "sh", "attack.sh"]);
    let start = Instant::now();
    while !w.join("planted").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the plant never happened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The supervisor dies before its end check.
    let status = Command::new("kill")
        .args(["-KILL", &running.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    while running.is_running() {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(w.join("n/.git/config").exists(), "nothing checked yet");
    let killed = env.only_session();
    // The session is marked as not checked yet, so that a start looks at
    // marked sessions only; state an older `aq` wrote has no marks, and
    // every session is looked at once then (the marks are rebuilt).
    let pending = env.state_home().join("agent-quarantine/git-guard-pending");
    assert!(pending.join(killed.id()).exists(), "not marked as pending");
    std::fs::remove_dir_all(&pending).unwrap();
    // aq preflight reports the planted config and the unchecked session.
    let pre = env.aq(&["preflight", "--format", "json"]);
    pre.stderr_has(&format!(
        "session {} in this workspace ended without its git check",
        killed.id()
    ));
    assert!(
        pre.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "git-config-exec" && f["path"] == "n/.git/config"),
        "{}",
        pre.dump()
    );
    // The next session puts it aside, into the killed session's directory.
    drop(running);
    let next = env.aq(&["run", "--quiet", "--", "true"]);
    next.code(0)
        .stderr_has(&format!("git change of session {}", killed.id()));
    assert!(!w.join("n/.git/config").exists());
    assert_put_aside(&killed, "n/.git/config", "removed", "fsmonitor");
    assert!(
        std::fs::read_dir(&pending).unwrap().next().is_none(),
        "checked sessions stay marked"
    );
    let _ = git(&env, &w.join("n"), &["status"]);
    assert!(!ran(&m));
}

#[test]
fn an_unprivileged_user_gets_the_same_git_guard() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: the other tests in this file are the proof.
        return;
    }
    let (root, aq, uid, gid) =
        crate::util::user_scratch("aq-unpriv-git-", &["home", "state", "config"]);
    let r = root.path();
    // The repository, made as root in a scratch Env's way, then given to
    // the user.
    let env = Env::new();
    repo_with_submodule(&env);
    let copy = Command::new("cp")
        .args(["-a"])
        .arg(env.work())
        .arg(env.root().join("lib"))
        .arg(r)
        .status()
        .unwrap();
    assert!(copy.success());
    // The copy's gitfile and module config name `../lib` relatively: fine.
    let chown = Command::new("chown")
        .args(["-R", &format!("{uid}:{gid}")])
        .arg(r.join("work"))
        .arg(r.join("lib"))
        .status()
        .unwrap();
    assert!(chown.success());
    let module_config = std::fs::read_to_string(r.join("work/.git/modules/a/config")).unwrap();
    std::fs::write(
        r.join("work/attack.sh"),
        "printf '[core]\\n\\tfsmonitor = ./x\\n' >> .git/modules/a/config && echo wrote-module || echo refused-module\n\
         mkdir -p n/.git && printf '[core]\\n\\tfsmonitor = ./x\\n' > n/.git/config && echo wrote-nested\n\
         echo ok > plain.txt && echo wrote-plain\n",
    )
    .unwrap();
    std::os::unix::fs::chown(r.join("work/attack.sh"), Some(uid), Some(gid)).unwrap();
    let out = crate::util::aq_as_user(
        r,
        &aq,
        (uid, gid),
        "work",
        &["run", "--quiet", "--", "sh", "attack.sh"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let dump = format!("uid {uid}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "{dump}");
    for want in ["refused-module", "wrote-nested", "wrote-plain"] {
        assert!(stdout.contains(want), "lacks {want:?}: {dump}");
    }
    assert!(stderr.contains("Read-only file system"), "{dump}");
    assert!(
        stderr.contains("git change refused: n/.git/config"),
        "{dump}"
    );
    assert_eq!(
        std::fs::read_to_string(r.join("work/.git/modules/a/config")).unwrap(),
        module_config
    );
    assert!(!r.join("work/n/.git/config").exists(), "{dump}");
}

/// A session whose sandbox cannot be set up (exit 125, nothing run) after
/// its git guard started still gets the guard's end check: the session is
/// not left for the next one to take as killed.
#[test]
fn a_session_stopped_before_its_command_still_gets_its_git_check() {
    let env = Env::with_policy("", RULES);
    let w = env.work();
    // A secret with a second name: no mask can hide it, the plan refuses.
    env.write(&w.join(".env"), "TOKEN=fake\n");
    std::fs::hard_link(w.join(".env"), w.join("env-copy")).unwrap();
    env.aq(&["run", "--quiet", "--profile", "strict", "--", "true"])
        .code(125)
        .stderr_has("hard links");
    let session = env.only_session();
    assert!(
        session.dir.join("git-guard/snapshot.json").is_file(),
        "the git guard started"
    );
    assert!(
        session.dir.join("git-guard/checked").is_file(),
        "the end check ran"
    );
    let pending = env.state_home().join("agent-quarantine/git-guard-pending");
    assert!(
        !pending.join(session.id()).exists(),
        "the session is still marked as unchecked"
    );
}
