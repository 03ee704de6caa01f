//! Red team of the walk records (`dir_record`, `walk_records`): the git
//! guard's search for git directories and the secret search skip listing a
//! directory whose stamp (device, inode, ctime, mtime) is what an earlier
//! walk recorded. Each test tries, for real, to make a session miss what the
//! record would hide:
//!
//! - an index rewritten in place, at the same size and inode, its mtime set
//!   back, adding a gitlink into a directory the walk skips: only the index's
//!   ctime tells it changed;
//! - between sessions, a key written into an old file of an old directory,
//!   and a `.env` added to an old directory whose mtime is set back: the
//!   secret search reads files again, and only the directory's ctime tells
//!   it has a new entry;
//! - the record kept on disk forged from the sandbox, so that the next
//!   session's secret search takes a listing without the `.env`: the state
//!   directory is not writable there (and, outside aq, the same forged
//!   record does unmask it: the record is worth protecting), as root and as
//!   an unprivileged user;
//! - a bare repository whose `HEAD`, `objects` and `refs` are symbolic
//!   links (git takes it for a repository; see the test's note);
//! - a directory made to look like a bare repository, above a nested
//!   repository with a hook: the walk went no further into it.
//!
//! Shell builtins do the writes where the kernel is the boundary tested.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::git_guard::{git, git_ok};
use crate::util::{Env, Session};

/// The test's git identity, in the scratch home (git runs in and out of
/// the sandbox with it).
fn identity(env: &Env) {
    env.write(
        &env.root().join("home/.gitconfig"),
        "[user]\n\tname = t\n\temail = t@example.invalid\n",
    );
}

/// `git clone` of a local repository is a network fetch to the firewall,
/// `chmod +x` an ask: allowed, so only the kernel and the guard stand in
/// the way.
const RULES: &str = "\"net-fetch\" = \"allow\"\n\"fs-permissions\" = \"allow\"\n";

/// Longer than the window (2 s) in which a directory's times are not
/// trusted: what was made before is recorded.
fn age() {
    std::thread::sleep(Duration::from_millis(2200));
}

fn marker(env: &Env, name: &str) -> PathBuf {
    env.root().join(format!("ran-{name}"))
}

fn planted(marker: &Path) -> String {
    format!("echo ran >> {}; false", marker.display())
}

/// The `git_change_refused` event of `path`, its copy holding `needle`.
#[track_caller]
fn assert_put_aside(session: &Session, path: &str, needle: &str) {
    let events = session.events_of("git_change_refused");
    let e = events
        .iter()
        .find(|e| e["path"] == path)
        .unwrap_or_else(|| panic!("no git_change_refused for {path}: {}", session.log_text()));
    let copy = PathBuf::from(e["quarantined"].as_str().expect("a quarantined copy"));
    assert!(copy.starts_with(&session.dir), "{}", copy.display());
    let kept = std::fs::read_to_string(&copy).unwrap_or_default();
    assert!(kept.contains(needle), "{} holds {kept:?}", copy.display());
}

/// `(ino, ctime ns, mtime ns)` of `p`, not followed.
fn stamp(p: &Path) -> (u64, i128, i128) {
    let m = std::fs::symlink_metadata(p).expect("stat");
    (
        m.ino(),
        i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    )
}

/// Sets `p`'s mtime back to `mtime` (ns): its ctime moves to now.
fn set_mtime(p: &Path, mtime: i128) {
    let t = std::time::UNIX_EPOCH + Duration::from_nanos(mtime as u64);
    std::fs::File::open(p)
        .expect("open")
        .set_times(std::fs::FileTimes::new().set_modified(t))
        .expect("set times");
}

/// The secret search's record of this scratch workspace, on disk.
fn secrets_record(env: &Env) -> PathBuf {
    let dir = env.state_home().join("agent-quarantine/walk-records");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("no walk records in {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("secrets-"))
        })
        .expect("a secrets record")
}

/// A script printing `LABEL:[first line]` for each file (builtins only).
fn reader(env: &Env, files: &[(&str, &str)]) {
    let mut script = String::new();
    for (label, rel) in files {
        script.push_str(&format!(
            "l=''; IFS= read -r l < '{rel}'; echo \"{label}:[$l]\"\n"
        ));
    }
    env.write(&env.work().join("read.sh"), &script);
}

fn private_key() -> String {
    let label = ["OPENSSH", "PRIVATE", "KEY"].join(" ");
    format!(
        "-----BEGIN {label}-----\nFAKE-NOT-A-KEY-b3BlbnNzaC1rZXktdjEAAAAA\n-----END {label}-----\n"
    )
}

/// A nested repository's index rewritten in place by the session (same
/// inode, same size, mtime set back: only its ctime moves) so that it holds
/// a gitlink into `node_modules`, which the walk skips: the end check reads
/// the index again, follows the gitlink and puts the planted config aside.
/// Were the index's gitlinks taken from the start's record by its inode,
/// size or mtime, the plant would stay and `git status` would run it.
#[test]
fn a_gitlink_written_in_place_into_an_old_index_with_its_mtime_set_back_is_followed() {
    let env = Env::with_policy("", RULES);
    let w = env.work();
    let dep = w.join("vendor/dep");
    identity(&env);
    // The user's vendored checkout: one staged file whose name is as long
    // as `node_modules/x`, no commit (no cache tree extension).
    git_ok(&env, &w, &["init", "-q", "vendor/dep"]);
    env.write(&dep.join("aaaaaaaaaaaaaa"), "a\n");
    git_ok(&env, &dep, &["add", "aaaaaaaaaaaaaa"]);
    age();
    let m = marker(&env, "in-place-index");
    let script = format!(
        "set -e\ncd vendor/dep\n\
         git init -q node_modules/x && git -C node_modules/x commit -q --allow-empty -m x\n\
         printf '[core]\\n\\tfsmonitor = \"{cmd}\"\\n' >> node_modules/x/.git/config\n\
         GIT_INDEX_FILE=\"$TMPDIR/i\" git update-index --add --cacheinfo \"160000,$(git -C node_modules/x rev-parse HEAD),node_modules/x\"\n\
         touch -r .git/index \"$TMPDIR/ref\"\n\
         echo \"before $(stat -c '%s %i %Y' .git/index)\"\n\
         cat \"$TMPDIR/i\" 1<> .git/index\n\
         touch -m -r \"$TMPDIR/ref\" .git/index\n\
         echo \"after $(stat -c '%s %i %Y' .git/index)\"\n\
         git ls-files -s | grep -q '^160000' && echo gitlink-in-index\n",
        cmd = planted(&m)
    );
    env.write(&w.join("attack.sh"), &script);
    let out = env.aq(&["run", "--quiet", "--", "sh", "attack.sh"]);
    out.code(0).stdout_has("gitlink-in-index");
    // Same size, inode and mtime: only the ctime tells the index changed.
    let line = |p: &str| {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(p))
            .unwrap_or_else(|| panic!("no {p}line: {}", out.stdout))
            .to_string()
    };
    assert_eq!(line("before "), line("after "), "{}", out.stdout);
    let session = env.only_session();
    assert_put_aside(
        &session,
        "vendor/dep/node_modules/x/.git/config",
        "fsmonitor",
    );
    git_ok(&env, &dep, &["status", "--short"]);
    assert!(!m.exists(), "git status ran the planted command");
    // The control: the same plant outside aq runs.
    std::fs::write(
        dep.join("node_modules/x/.git/config"),
        format!("[core]\n\tfsmonitor = \"{}\"\n", planted(&m)),
    )
    .unwrap();
    git_ok(&env, &dep, &["status", "--short"]);
    assert!(
        m.exists(),
        "the control did not run: the test proves nothing"
    );
}

/// Between two sessions, in directories the first session's secret search
/// recorded (old enough to be trusted): a key written into an existing
/// file in place (the directory does not change), and a `.env` added to a
/// directory whose mtime is then set back (only its ctime moves). The next
/// session masks both; a neighbour stays readable.
#[test]
fn secrets_added_to_old_directories_between_sessions_are_masked() {
    let env = Env::new();
    let w = env.work();
    env.write(&w.join("deploy/ci_deploy"), "placeholder, not a key\n");
    env.write(&w.join("deploy/notes.txt"), "CONTROL-DEPLOY\n");
    env.write(&w.join("conf/app.toml"), "CONTROL-CONF\n");
    for i in 0..20 {
        env.write(&w.join(format!("src/d{i}/f.rs")), "fn f() {}\n");
    }
    age();
    env.aq(&["run", "--quiet", "--", "true"]).code(0);
    let record = std::fs::read_to_string(secrets_record(&env)).expect("record");
    assert!(record.contains("ci_deploy"), "{record}");
    let deploy = stamp(&w.join("deploy"));
    let conf = stamp(&w.join("conf"));
    // The user, between sessions.
    let file = w.join("deploy/ci_deploy");
    let ino = stamp(&file).0;
    std::fs::write(&file, private_key()).unwrap();
    assert_eq!(stamp(&file).0, ino, "written in place");
    env.write(&w.join("conf/.env"), "API_TOKEN=FAKE-DOTENV-SECRET\n");
    set_mtime(&w.join("conf"), conf.2);
    assert_eq!(stamp(&w.join("deploy")), deploy, "deploy/ did not change");
    let after = stamp(&w.join("conf"));
    assert_eq!(
        (after.0, after.2),
        (conf.0, conf.2),
        "conf/: same inode, mtime"
    );
    assert_ne!(after.1, conf.1, "conf/: its ctime moved");
    reader(
        &env,
        &[
            ("key", "deploy/ci_deploy"),
            ("dotenv", "conf/.env"),
            ("notes", "deploy/notes.txt"),
            ("app", "conf/app.toml"),
        ],
    );
    env.aq(&["run", "-v", "--", "sh", "read.sh"])
        .code(0)
        .stdout_has("key:[]")
        .stdout_has("dotenv:[]")
        .stdout_has("notes:[CONTROL-DEPLOY]")
        .stdout_has("app:[CONTROL-CONF]")
        .stdout_lacks("FAKE-DOTENV-SECRET")
        .stdout_lacks("BEGIN");
    // Outside aq each holds what was written.
    assert!(std::fs::read_to_string(&file).unwrap().contains("BEGIN"));
}

/// The sandbox tries to replace the record the next session's secret
/// search starts from with one whose listing of `cfg/` (unchanged, so
/// taken from the record) leaves the `.env` out: the state directory is not
/// writable there, and the next session masks it. The control: the same
/// forged record written outside aq does unmask it.
#[test]
fn the_record_cannot_be_forged_from_the_sandbox() {
    let env = Env::new();
    let w = env.work();
    env.write(&w.join("cfg/.env"), "API_TOKEN=FAKE-DOTENV-SECRET\n");
    env.write(&w.join("cfg/app.toml"), "CONTROL-CFG\n");
    age();
    env.aq(&["run", "--quiet", "--", "true"]).code(0);
    let path = secrets_record(&env);
    let original = std::fs::read_to_string(&path).expect("record");
    let mut forged: serde_json::Value = serde_json::from_str(&original).expect("JSON");
    let dirs = forged["dirs"].as_object_mut().expect("dirs");
    let (_, cfg) = dirs
        .iter_mut()
        .find(|(k, _)| k.ends_with("/cfg"))
        .unwrap_or_else(|| panic!("cfg/ not recorded: {original}"));
    let listing = &mut cfg["listing"];
    assert!(
        listing.to_string().contains(".env"),
        "the record lists cfg/.env: {listing}"
    );
    listing["masked"] = serde_json::json!([]);
    listing["read"] = serde_json::json!([]);
    let forged = serde_json::to_string(&forged).unwrap();
    env.write(&w.join("forged.json"), &forged);
    let script = format!(
        "R='{r}'\n\
         (while IFS= read -r l; do printf '%s\\n' \"$l\"; done < forged.json > \"$R\") 2>/dev/null && echo overwrote\n\
         (: > \"$R.new\") 2>/dev/null && echo created\n\
         echo done\n",
        r = path.display()
    );
    env.write(&w.join("attack.sh"), &script);
    env.aq(&["run", "--quiet", "--", "sh", "attack.sh"])
        .code(0)
        .stdout_has("done")
        .stdout_lacks("overwrote")
        .stdout_lacks("created");
    assert!(!std::fs::read_to_string(&path).unwrap().contains(&forged));
    reader(&env, &[("dotenv", "cfg/.env"), ("app", "cfg/app.toml")]);
    env.aq(&["run", "--quiet", "--", "sh", "read.sh"])
        .code(0)
        .stdout_has("dotenv:[]")
        .stdout_has("app:[CONTROL-CFG]");
    // The control: a forged record in the state directory is believed.
    std::fs::write(&path, &forged).unwrap();
    env.aq(&["run", "--quiet", "--", "sh", "read.sh"])
        .code(0)
        .stdout_has("dotenv:[API_TOKEN=FAKE-DOTENV-SECRET]");
}

/// A bare repository whose `objects` and `refs` are symbolic links to
/// directories beside them and whose `HEAD` is a symbolic link to
/// `refs/heads/main`: git takes it for a repository (`access(2)` follows
/// links, a `HEAD` link into `refs/` is valid), and its config runs on
/// `git fetch` there. Found by this red team: the walk's bare-repository
/// test read the entries' own types, so it was not found (with or without
/// records); now any entries of the three names make a candidate.
#[test]
fn a_bare_repository_made_of_links_is_put_aside() {
    let env = Env::with_policy("", RULES);
    let w = env.work();
    let m = marker(&env, "linked-bare");
    let config = format!(
        "[core]\n\tsshCommand = \"{cmd}\"\n[remote \"o\"]\n\turl = ssh://example.invalid/x\n",
        cmd = planted(&m)
    );
    let script = format!(
        "set -e\nmkdir -p tools/ev/.o tools/ev/.r/heads\ncd tools/ev\n\
         ln -s .o objects && ln -s .r refs && ln -s refs/heads/main HEAD\n\
         printf '{cfg}' > config && echo planted-bare\n",
        cfg = config.replace('\n', "\\n").replace('\t', "\\t")
    );
    env.write(&w.join("attack.sh"), &script);
    env.aq(&["run", "--quiet", "--", "sh", "attack.sh"])
        .code(0)
        .stdout_has("planted-bare");
    let ev = w.join("tools/ev");
    let gd = git(&env, &ev, &["rev-parse", "--git-dir"]);
    assert_eq!(String::from_utf8_lossy(&gd.stdout).trim(), ".", "{gd:?}");
    let session = env.only_session();
    let _ = git(&env, &ev, &["fetch", "-q", "o"]);
    assert!(!m.exists(), "git fetch ran the planted command");
    assert_put_aside(&session, "tools/ev/config", "sshCommand");
}

/// A directory given entries named `HEAD`, `objects` and `refs` looked like
/// a bare repository, and the walk did not go into it: a nested repository
/// below it, with an executable hook, was not found. Now the walk goes on
/// below a bare repository, its `objects` included.
#[test]
fn a_nested_repository_below_a_fake_bare_one_is_put_aside() {
    let env = Env::with_policy("", RULES);
    identity(&env);
    let w = env.work();
    let m = marker(&env, "below-fake-bare");
    let script = format!(
        "set -e\nmkdir -p lib/objects lib/refs\necho junk > lib/HEAD\n\
         git init -q lib/objects/inner\n\
         printf '#!/bin/sh\\necho ran >> {m}\\n' > lib/objects/inner/.git/hooks/pre-commit\n\
         chmod +x lib/objects/inner/.git/hooks/pre-commit && echo planted-below\n",
        m = m.display()
    );
    env.write(&w.join("attack.sh"), &script);
    env.aq(&["run", "--quiet", "--", "sh", "attack.sh"])
        .code(0)
        .stdout_has("planted-below");
    let session = env.only_session();
    assert_put_aside(
        &session,
        "lib/objects/inner/.git/hooks/pre-commit",
        "ran >>",
    );
    let inner = w.join("lib/objects/inner");
    git_ok(&env, &inner, &["commit", "-q", "--allow-empty", "-m", "x"]);
    assert!(!m.exists(), "git ran the planted hook");
    // Control: the same hook made outside aq runs.
    let hook = inner.join(".git/hooks/pre-commit");
    std::fs::write(&hook, format!("#!/bin/sh\necho ran >> {}\n", m.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git_ok(&env, &inner, &["commit", "-q", "--allow-empty", "-m", "y"]);
    assert!(
        m.exists(),
        "the control hook did not run: the test proves nothing"
    );
}

/// The forged record again, as an unprivileged user: the user's own state
/// directory is theirs to write outside aq, but not from the sandbox.
#[test]
fn an_unprivileged_users_sandbox_cannot_write_its_walk_records() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Already unprivileged: the test above is the proof.
        return;
    }
    let (root, aq, uid, gid) =
        crate::util::user_scratch("aq-unpriv-walks-", &["home", "state", "config", "work/cfg"]);
    let r = root.path();
    let w = r.join("work");
    for (rel, text) in [
        ("cfg/.env", "API_TOKEN=FAKE-DOTENV-SECRET\n"),
        ("cfg/app.toml", "CONTROL-CFG\n"),
        (
            "attack.sh",
            "for R in \"$XDG_STATE_HOME\"/agent-quarantine/walk-records/*.json; do\n\
             (: > \"$R\") 2>/dev/null && echo overwrote\n\
             done\n\
             (: > \"$XDG_STATE_HOME/agent-quarantine/walk-records/x\") 2>/dev/null && echo created\n\
             echo done\n",
        ),
        (
            "read.sh",
            "printf 'dotenv:[%s]\\n' \"$(cat cfg/.env)\"\nprintf 'app:[%s]\\n' \"$(cat cfg/app.toml)\"\n",
        ),
    ] {
        std::fs::write(w.join(rel), text).unwrap();
        std::os::unix::fs::chown(w.join(rel), Some(uid), Some(gid)).unwrap();
    }
    age();
    let run = |script: &str| {
        let out = crate::util::aq_as_user(
            r,
            &aq,
            (uid, gid),
            "work",
            &["run", "--quiet", "--", "sh", script],
        );
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The first session leaves the records (the workspace is old enough).
    run("read.sh");
    let records: Vec<PathBuf> = std::fs::read_dir(r.join("state/agent-quarantine/walk-records"))
        .expect("walk records kept")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        records
            .iter()
            .any(|p| p.to_string_lossy().contains("secrets-")),
        "{records:?}"
    );
    let before: Vec<String> = records
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let out = run("attack.sh");
    assert!(out.contains("done"), "{out}");
    assert!(
        !out.contains("overwrote") && !out.contains("created"),
        "{out}"
    );
    let after: Vec<String> = records
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(before, after, "a record changed from inside the sandbox");
    // The next session, from the record: the secret still masked, the
    // control file readable.
    let out = run("read.sh");
    assert!(
        out.contains("dotenv:[]") && out.contains("app:[CONTROL-CFG]"),
        "{out}"
    );
    // The control: the same user, outside aq, can write the records.
    use std::os::unix::process::CommandExt;
    let control = std::process::Command::new("sh")
        .arg("-c")
        .arg(": > \"$1\" && echo overwrote")
        .arg("sh")
        .arg(&records[0])
        .uid(uid)
        .gid(gid)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&control.stdout).contains("overwrote"),
        "the control write failed: the test proves nothing ({control:?})"
    );
}
