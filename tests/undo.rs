//! Workspace undo end to end (docs/undo.md): an agent destroys
//! uncommitted work inside the workspace, where the sandbox lets it write,
//! and `aq undo` puts everything back, byte for byte.
//!
//! The battery: each way of destroying work runs in a fresh git repository
//! holding committed, modified, staged and untracked files, an executable
//! script, a symlink, empty directories, a nested tree, a tag, a second
//! branch and a stash, under `aq run -- sh -c LINE` (as an agent's shell
//! tool runs it) with no policy file: the default profile, sandboxed. Then
//! `aq undo --yes`, and the workspace (every path's type, mode, content and
//! link target, empty directories) and the repository (every ref, HEAD, the
//! stash list, the index) must be as they were. Each way first proves that
//! it destroyed something, or the test would prove nothing.
//!
//! A way that the built-in rules ask about (`rm -rf`, `chmod`, `git reset
//! --hard`, ...) is approved the way a headless user approves asks: with
//! `aq --policy approve.toml`, a file outside the workspace holding
//! `[session] unanswered = "allow"` (an explicit `--policy` has the power
//! of the user's own file). With no policy at all such a line is refused,
//! and nothing would be destroyed.
//!
//! Then the verbs around it (undo of an undo, `--to`, `--path`, `aq diff`,
//! `aq checkpoints --json`, refusals), the store's wall against the
//! sandbox, hook mode, and a real agent.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{Env, Output, aq_as_user, user_scratch};

// ---- the workspace and the repository, as they are -----------------------

/// One path of the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Dir { mode: u32 },
    File { mode: u32, bytes: Vec<u8> },
    Link { target: PathBuf },
}

impl Node {
    fn describe(&self) -> String {
        match self {
            Node::Dir { mode } => format!("directory {mode:o}"),
            Node::File { mode, bytes } => {
                let head: String = String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
                    .chars()
                    .map(|c| if c.is_control() { '.' } else { c })
                    .collect();
                format!("file {mode:o}, {} bytes: {head:?}", bytes.len())
            }
            Node::Link { target } => format!("symlink -> {}", target.display()),
        }
    }
}

/// The workspace (but `.git`) path by path, and the repository's state.
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    tree: BTreeMap<PathBuf, Node>,
    git: BTreeMap<&'static str, String>,
}

/// Every path under `root` but `.git` and `skip` (relative), as it is.
fn tree_of(root: &Path, skip: &[&str]) -> BTreeMap<PathBuf, Node> {
    fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<PathBuf, Node>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if rel == Path::new(".git") || skip.iter().any(|s| rel == Path::new(s)) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let node = if meta.file_type().is_symlink() {
                Node::Link {
                    target: std::fs::read_link(&path).unwrap(),
                }
            } else if meta.is_dir() {
                walk(root, &path, skip, out);
                Node::Dir { mode }
            } else {
                Node::File {
                    mode,
                    // Root reads a file whatever its mode (chmod 000).
                    bytes: std::fs::read(&path)
                        .unwrap_or_else(|e| panic!("read {}: {e}", path.display())),
                }
            };
            out.insert(rel, node);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, skip, &mut out);
    out
}

/// `git ARGS` in `work` with no user or system configuration and without
/// the opportunistic index refresh (which, as root in the unprivileged
/// user's repository, would leave an index the user cannot write).
fn git_command(work: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "safe.directory=*", "-C"])
        .arg(work)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE");
    cmd
}

/// `git ARGS`' stdout; it must succeed.
#[track_caller]
fn git(work: &Path, args: &[&str]) -> String {
    let out = git_command(work, args).output().expect("git");
    assert!(
        out.status.success(),
        "git {} in {}: {}",
        args.join(" "),
        work.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git ARGS`' stdout, or what it said when it failed.
fn git_lenient(work: &Path, args: &[&str]) -> String {
    let out = git_command(work, args).output().expect("git");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        if out.status.success() {
            String::new()
        } else {
            format!("[failed: {}]", String::from_utf8_lossy(&out.stderr).trim())
        }
    )
}

impl State {
    fn of(work: &Path) -> State {
        Self::of_but(work, &[])
    }

    /// The state but the paths `skip` (relative to the workspace).
    fn of_but(work: &Path, skip: &[&str]) -> State {
        let mut git_state = BTreeMap::new();
        if work.join(".git/HEAD").exists() {
            let g = |args: &[&str]| git_lenient(work, args);
            git_state.insert(
                "refs",
                g(&[
                    "for-each-ref",
                    "--format=%(refname) %(objectname) %(symref)",
                ]),
            );
            git_state.insert(
                "HEAD",
                g(&["symbolic-ref", "-q", "HEAD"]) + &g(&["rev-parse", "HEAD"]),
            );
            git_state.insert("stash", g(&["stash", "list", "--format=%H %gd %gs"]));
            git_state.insert("index", g(&["ls-files", "--stage"]));
            git_state.insert("diff --cached", g(&["diff", "--cached", "--binary"]));
            let status = g(&["status", "--porcelain=v1", "-uall"])
                .lines()
                .filter(|l| {
                    !skip
                        .iter()
                        .any(|s| l.get(3..).is_some_and(|p| p.starts_with(s)))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            git_state.insert("status", status);
        }
        State {
            tree: tree_of(work, skip),
            git: git_state,
        }
    }

    /// What differs from `other`, one line per difference.
    fn differences(&self, other: &State) -> Vec<String> {
        let mut out = Vec::new();
        let paths: std::collections::BTreeSet<&PathBuf> =
            self.tree.keys().chain(other.tree.keys()).collect();
        for p in paths {
            match (self.tree.get(p), other.tree.get(p)) {
                (Some(a), Some(b)) if a == b => {}
                (a, b) => out.push(format!(
                    "{}: was {}, is {}",
                    p.display(),
                    a.map_or("absent".to_string(), Node::describe),
                    b.map_or("absent".to_string(), Node::describe)
                )),
            }
        }
        for (k, a) in &self.git {
            let b = other.git.get(k).cloned().unwrap_or_default();
            if *a != b {
                out.push(format!("git {k}: was\n{a}  is\n{b}"));
            }
        }
        out
    }
}

/// Asserts that the workspace is as `want`, naming every difference.
#[track_caller]
fn assert_state(want: &State, got: &State, what: &str, outs: &[&Output]) {
    let diffs = want.differences(got);
    assert!(
        diffs.is_empty(),
        "{what}: the workspace is not as it was:\n  {}\n{}",
        diffs.join("\n  "),
        outs.iter().map(|o| o.dump()).collect::<String>()
    );
}

// ---- the fixture -----------------------------------------------------------

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Bytes no text tool would take for text.
fn binary_bytes() -> Vec<u8> {
    (0..=255u8).cycle().take(3000).collect()
}

/// A fresh repository in `work` (the scratch `.git` of [`Env::new`] is
/// replaced) with one of everything that can be lost:
///
/// - committed: `README.md`, `src/main.rs`, `src/lib.rs`, `data.bin`
///   (binary), `run.sh` (0755), `link` (a symlink to `src/main.rs`), a
///   nested tree `src/nested/deep/tree/leaf.txt`;
/// - a tag `v1`, a branch `feature` with a commit of its own, one stash;
/// - modified, not staged: `src/lib.rs`; staged and then modified again:
///   `src/main.rs`; new and staged: `notes.txt`;
/// - untracked: `untracked.txt`, `tool.py` (0755), `untracked_dir/deeper/u.txt`;
/// - empty directories: `empty/`, `untracked_dir/empty/`.
fn fixture(work: &Path) {
    if work.join(".git").is_dir() {
        std::fs::remove_dir_all(work.join(".git")).unwrap();
    }
    std::fs::create_dir_all(work).unwrap();
    let g = |args: &[&str]| {
        git(work, args);
    };
    g(&["init", "-q", "-b", "main"]);
    g(&["config", "user.name", "Undo Test"]);
    g(&["config", "user.email", "undo@example.invalid"]);
    g(&["config", "commit.gpgsign", "false"]);
    write(&work.join("README.md"), "# demo\n\nThe committed readme.\n");
    write(
        &work.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    );
    write(
        &work.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    write(&work.join("src/nested/top.txt"), "top\n");
    write(&work.join("src/nested/deep/mid.txt"), "mid\n");
    write(&work.join("src/nested/deep/tree/leaf.txt"), "leaf\n");
    write(&work.join("data.bin"), binary_bytes());
    write(&work.join("run.sh"), "#!/bin/sh\necho run\n");
    chmod(&work.join("run.sh"), 0o755);
    std::os::unix::fs::symlink("src/main.rs", work.join("link")).unwrap();
    g(&["add", "-A"]);
    g(&["commit", "-q", "-m", "initial"]);
    g(&["tag", "v1"]);
    g(&["checkout", "-q", "-b", "feature"]);
    write(&work.join("feature.txt"), "only on the feature branch\n");
    g(&["add", "feature.txt"]);
    g(&["commit", "-q", "-m", "feature work"]);
    g(&["checkout", "-q", "main"]);
    // A stash from before the session.
    write(
        &work.join("README.md"),
        "# demo\n\nThe committed readme.\nA stashed line.\n",
    );
    g(&["stash", "push", "-q", "-m", "kept stash"]);
    // Uncommitted work.
    write(
        &work.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    write(
        &work.join("src/main.rs"),
        "fn main() {\n    println!(\"hi, staged\");\n}\n",
    );
    g(&["add", "src/main.rs"]);
    write(
        &work.join("src/main.rs"),
        "fn main() {\n    println!(\"hi, staged, then edited\");\n}\n",
    );
    write(&work.join("notes.txt"), "staged notes\n");
    g(&["add", "notes.txt"]);
    write(&work.join("untracked.txt"), "untracked work\n");
    write(
        &work.join("tool.py"),
        "#!/usr/bin/env python3\nprint('tool')\n",
    );
    chmod(&work.join("tool.py"), 0o755);
    write(&work.join("untracked_dir/deeper/u.txt"), "deep untracked\n");
    std::fs::create_dir_all(work.join("empty")).unwrap();
    std::fs::create_dir_all(work.join("untracked_dir/empty")).unwrap();
}

/// Hands `dir` and everything under it to `uid`.
fn chown_tree(dir: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(gid)).unwrap();
    let meta = std::fs::symlink_metadata(dir).unwrap();
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap() {
            chown_tree(&entry.unwrap().path(), uid, gid);
        }
    }
}

// ---- the battery -------------------------------------------------------------

/// One way of destroying work: a shell line, and whether the built-in rules
/// ask about it (then it is approved, see the module's comment).
struct Way {
    name: &'static str,
    line: &'static str,
    asks: bool,
}

/// The table of ways, and one test per way as root (`undo::as_root::NAME`).
macro_rules! ways {
    ($($name:ident ($asks:expr): $line:expr;)*) => {
        const WAYS: &[Way] = &[$(Way { name: stringify!($name), line: $line, asks: $asks }),*];

        mod as_root {
            $(
                #[test]
                fn $name() {
                    super::destroy_and_undo_as_root(stringify!($name));
                }
            )*
        }
    };
}

ways! {
    // Deletes, through several programs and languages.
    rm_rf_a_directory (true): "rm -rf src";
    find_delete (true): "find src untracked_dir -depth -delete";
    python_shutil_rmtree (false): "python3 -c 'import shutil; shutil.rmtree(\"src\"); shutil.rmtree(\"untracked_dir\")'";
    perl_unlink (false): "perl -e 'unlink(glob(\"src/*.rs\"), \"README.md\", \"notes.txt\", \"untracked.txt\") == 5 or die'";
    node_fs_rm_sync (false): "node -e 'const fs = require(\"fs\"); fs.rmSync(\"src\", {recursive: true, force: true}); fs.rmSync(\"untracked.txt\")'";
    deleted_nested_directory (true): "rm -r src/nested/deep";
    // Emptied and rewritten in place.
    truncate_to_zero (false): "truncate -s0 src/lib.rs src/main.rs data.bin";
    redirect_empties_files (false): ": > src/lib.rs; : > untracked.txt; : > notes.txt";
    sed_in_place_deletes_every_line (false): "sed -i d src/lib.rs README.md";
    python_in_place_rewrite (false): "python3 -c 'p = \"src/main.rs\"; s = open(p).read(); open(p, \"w\").write(s.replace(\"fn\", \"gone\"))'";
    dd_over_files (false): "dd if=/dev/zero of=data.bin bs=512 count=1 status=none && dd if=/dev/zero of=README.md bs=7 count=1 conv=notrunc status=none";
    // Renames.
    mv_over_a_file (false): "mv untracked.txt src/lib.rs";
    rename_a_directory (false): "mv src source";
    // Archivers and synchronisers.
    rsync_delete_from_an_empty_dir (false): "rsync -a --delete \"$(mktemp -d)/\" src/";
    tar_remove_files (false): "tar --remove-files -cf archive.tar src untracked_dir untracked.txt";
    // Modes and links.
    chmod_drops_the_exec_bit (true): "chmod -x run.sh tool.py";
    chmod_000 (true): "chmod 000 untracked.txt src/lib.rs";
    symlink_retargeted_and_file_replaced_by_link (false): "ln -sfn README.md link && ln -sf src/lib.rs untracked.txt && ln -sfn /etc/hostname notes.txt";
    // The repository.
    // `git stash` alone is allowed, but with -u git runs `git clean` itself,
    // which the exec guard asks about: unapproved, the stash is left half made.
    git_stash_u (true): "git stash push -q -u -m agent";
    git_reset_hard (true): "git reset -q --hard";
    git_branch_d_tag_d_stash_drop (true): "git branch -q -D feature && git tag -d v1 >/dev/null && git stash drop -q";
    git_checkout_dot (true): "git checkout -q -- .";
    git_clean_fdx (true): "git clean -q -fdx";
    git_rm_recursive (true): "git rm -rqf src";
    git_commit_and_reset_to_an_older_commit (true): "git add -A && git commit -q -m wip && git reset -q --hard HEAD~1";
}

/// The policy that approves what the rules ask about, headless.
const APPROVE: &str = "version = 1\n\n[session]\nunanswered = \"allow\"\n";

fn way(name: &str) -> &'static Way {
    WAYS.iter()
        .find(|w| w.name == name)
        .unwrap_or_else(|| panic!("no way {name}"))
}

/// `aq [--policy APPROVE] run --quiet -- sh -c LINE`'s arguments.
fn run_args<'a>(way: &'a Way, approve: &'a str) -> Vec<&'a str> {
    let mut args = Vec::new();
    if way.asks {
        args.extend(["--policy", approve]);
    }
    args.extend(["run", "--quiet", "--", "sh", "-c", way.line]);
    args
}

fn destroy_and_undo_as_root(name: &str) {
    let way = way(name);
    let env = Env::new();
    let work = env.work();
    fixture(&work);
    let approve = env.root().join("approve.toml");
    env.write(&approve, APPROVE);
    let approve = approve.display().to_string();
    let before = State::of(&work);

    let run = env.aq(&run_args(way, &approve));
    run.code(0);
    let damaged = State::of(&work);
    assert_ne!(
        before.differences(&damaged),
        Vec::<String>::new(),
        "`{}` destroyed nothing: the test would prove nothing{}",
        way.line,
        run.dump()
    );

    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0).stdout_has("restored");
    assert_state(
        &before,
        &State::of(&work),
        &format!("after `{}` and `aq undo --yes`", way.line),
        &[&run, &undo],
    );
}

#[test]
fn the_battery_has_enough_different_ways() {
    assert!(WAYS.len() >= 18, "{} ways", WAYS.len());
    let mut lines: Vec<&str> = WAYS.iter().map(|w| w.line).collect();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), WAYS.len(), "two ways share a line");
}

/// The same battery as the unprivileged user (`aqtest` in CI), one
/// workspace per way in one scratch directory, every failure reported.
#[test]
fn the_battery_as_an_unprivileged_user() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        aq_testkit::not_applicable("already unprivileged: the as_root tests are this test");
        return;
    }
    let mut dirs = vec!["home".to_string(), "state".into(), "config".into()];
    dirs.extend(WAYS.iter().map(|w| format!("w/{}", w.name)));
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let (root, aq, uid, gid) = user_scratch("aq-undo-user-", &dirs);
    let r = root.path();
    let approve = r.join("approve.toml");
    write(&approve, APPROVE);
    chmod(&approve, 0o644);
    let approve = approve.display().to_string();
    let mut failures = Vec::new();
    for way in WAYS {
        let cwd = format!("w/{}", way.name);
        let work = r.join(&cwd);
        fixture(&work);
        chown_tree(&work, uid, gid);
        let before = State::of(&work);
        let run = aq_as_user(r, &aq, (uid, gid), &cwd, &run_args(way, &approve));
        let said = |o: &std::process::Output| {
            format!(
                "exit {:?}\nstdout:\n{}\nstderr:\n{}",
                o.status.code(),
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        };
        if !run.status.success() {
            failures.push(format!("{}: `aq run` failed: {}", way.name, said(&run)));
            continue;
        }
        let damaged = State::of(&work);
        if before.differences(&damaged).is_empty() {
            failures.push(format!(
                "{}: `{}` destroyed nothing: {}",
                way.name,
                way.line,
                said(&run)
            ));
            continue;
        }
        let undo = aq_as_user(r, &aq, (uid, gid), &cwd, &["undo", "--yes"]);
        if !undo.status.success() {
            failures.push(format!(
                "{}: `aq undo --yes` failed: {}",
                way.name,
                said(&undo)
            ));
            continue;
        }
        let diffs = before.differences(&State::of(&work));
        if !diffs.is_empty() {
            failures.push(format!(
                "{}: after `{}` and `aq undo --yes`:\n  {}\n{}",
                way.name,
                way.line,
                diffs.join("\n  "),
                said(&undo)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} ways failed as uid {uid}:\n\n{}",
        failures.len(),
        WAYS.len(),
        failures.join("\n\n")
    );
}

// ---- the verbs ---------------------------------------------------------------

/// A scratch directory with the fixture, and its state before anything ran.
fn fixture_env() -> (Env, State) {
    let env = Env::new();
    fixture(&env.work());
    let before = State::of(&env.work());
    (env, before)
}

/// `aq run --quiet -- sh -c LINE`, which must succeed and change something.
#[track_caller]
fn damage(env: &Env, before: &State, line: &str) -> (Output, State) {
    let out = env.aq(&["run", "--quiet", "--", "sh", "-c", line]);
    out.code(0);
    let damaged = State::of(&env.work());
    assert_ne!(
        before.differences(&damaged),
        Vec::<String>::new(),
        "`{line}` changed nothing{}",
        out.dump()
    );
    (out, damaged)
}

/// `aq checkpoints --json` (with `args`), parsed.
#[track_caller]
fn checkpoints(env: &Env, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["checkpoints", "--json"];
    all.extend_from_slice(args);
    let out = env.aq(&all);
    out.code(0);
    out.json()
        .as_array()
        .unwrap_or_else(|| panic!("not an array{}", out.dump()))
        .clone()
}

/// The id `aq undo` says undoes it: "`aq undo --to ID` undoes this undo".
#[track_caller]
fn undo_of_undo_id(out: &Output) -> String {
    let at = out
        .stdout
        .find("`aq undo --to ")
        .unwrap_or_else(|| panic!("no `aq undo --to` in the output{}", out.dump()));
    let rest = &out.stdout[at + "`aq undo --to ".len()..];
    rest[..rest.find('`').expect("a closing backquote")].to_string()
}

const ALLOWED_DAMAGE: &str =
    "rm -f README.md src/lib.rs && truncate -s0 src/main.rs && echo created > created.txt";

#[test]
fn an_undo_can_itself_be_undone() {
    let (env, before) = fixture_env();
    let (run, damaged) = damage(&env, &before, ALLOWED_DAMAGE);
    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        "after aq undo",
        &[&run, &undo],
    );
    let id = undo_of_undo_id(&undo);
    assert!(
        id.len() >= 8 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{id:?}{}",
        undo.dump()
    );
    // The checkpoint it names is listed: the newest, taken before the undo,
    // or (nothing having changed since) the end of the session.
    let list = checkpoints(&env, &[]);
    let before_undo = list
        .iter()
        .find(|c| c["id"].as_str().is_some_and(|i| i.starts_with(&id)))
        .unwrap_or_else(|| panic!("{id} is not listed: {list:#?}"));
    assert_eq!(
        list.last().unwrap()["id"],
        before_undo["id"],
        "the newest checkpoint is the one before the undo: {list:#?}"
    );
    assert!(
        before_undo["reason"] == "before-undo" || before_undo["reason"] == "session-end",
        "{before_undo:#}"
    );

    let again = env.aq(&["undo", "--to", &id, "--yes"]);
    again.code(0);
    assert_state(
        &damaged,
        &State::of(&env.work()),
        "after undoing the undo",
        &[&undo, &again],
    );
    // And the undo of the undo of the undo: back to the start again.
    let third = env.aq(&["undo", "--to", &undo_of_undo_id(&again), "--yes"]);
    third.code(0);
    // That one goes back to the state before the second undo: the start.
    assert_state(
        &before,
        &State::of(&env.work()),
        "after undoing the undo of the undo",
        &[&again, &third],
    );
}

#[test]
fn undo_to_a_middle_checkpoint() {
    let (env, before) = fixture_env();
    // Every checkpoint that is due is taken, however close together.
    env.write(
        &env.user_policy(),
        "version = 1\n\n[undo]\ncoalesce_ms = 0\n",
    );
    let (run, _) = damage(
        &env,
        &before,
        "cp README.md one.txt; rm src/lib.rs; mv run.sh run2.sh",
    );
    let list = checkpoints(&env, &["--latest"]);
    let before_second = list
        .iter()
        .find(|c| c["command"] == "rm src/lib.rs")
        .unwrap_or_else(|| {
            panic!(
                "no checkpoint before `rm src/lib.rs`: {list:#?}{}",
                run.dump()
            )
        });
    assert_eq!(before_second["reason"], "before-command");
    assert_eq!(
        before_second["changed"]["added"], 1,
        "one.txt: {before_second:#}"
    );
    let id = before_second["id"].as_str().unwrap();

    let undo = env.aq(&["undo", "--to", &id[..12], "--yes"]);
    undo.code(0);
    // The state after the first command: the fixture and one.txt.
    let mut want = before.clone();
    want.tree.insert(
        PathBuf::from("one.txt"),
        before.tree[Path::new("README.md")].clone(),
    );
    let got = State::of(&env.work());
    want.git.remove("status");
    let mut got_but_status = got.clone();
    got_but_status.git.remove("status");
    assert_state(
        &want,
        &got_but_status,
        "after undo --to the checkpoint before the 2nd command",
        &[&run, &undo],
    );
    assert!(got.git["status"].contains("?? one.txt"), "{got:?}");
}

#[test]
fn undo_path_restores_only_that_path() {
    let (env, before) = fixture_env();
    let (run, damaged) = damage(
        &env,
        &before,
        "rm -f README.md && truncate -s0 src/lib.rs untracked.txt",
    );
    let undo = env.aq(&["undo", "--yes", "--path", "README.md"]);
    undo.code(0)
        .stdout_has("README.md")
        .stdout_lacks("src/lib.rs");
    let now = State::of(&env.work());
    let readme = Path::new("README.md");
    assert_eq!(now.tree.get(readme), before.tree.get(readme));
    for other in ["src/lib.rs", "untracked.txt"] {
        assert_eq!(
            now.tree.get(Path::new(other)),
            damaged.tree.get(Path::new(other)),
            "{other} was put back too{}{}",
            run.dump(),
            undo.dump()
        );
    }
    // A path is relative to the current directory, as for any command.
    let from_src = env.aq_in(
        &env.work().join("src"),
        &["undo", "--yes", "--path", "lib.rs"],
    );
    from_src.code(0);
    let now = State::of(&env.work());
    let lib = Path::new("src/lib.rs");
    assert_eq!(
        now.tree.get(lib),
        before.tree.get(lib),
        "{}",
        from_src.dump()
    );
    assert_eq!(
        now.tree.get(Path::new("untracked.txt")),
        damaged.tree.get(Path::new("untracked.txt"))
    );
    // A path outside the workspace is an error, and changes nothing.
    env.aq(&["undo", "--yes", "--path", "/etc"])
        .code(2)
        .stderr_has("not inside the workspace");
    env.aq(&["undo", "--yes"]).code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        "after the whole undo",
        &[],
    );
}

#[test]
fn diff_shows_text_binary_and_stat() {
    let (env, before) = fixture_env();
    let (run, _) = damage(
        &env,
        &before,
        "printf 'pub fn mul() {}\\n' >> src/lib.rs; sed -i 's/then edited/then changed/' src/main.rs; \
         python3 -c 'open(\"data.bin\", \"wb\").write(bytes(range(255, 0, -1)) * 4)'; rm -f notes.txt",
    );
    let diff = env.aq(&["diff"]);
    diff.code(0)
        .stdout_has("src/lib.rs")
        .stdout_has("@@")
        .stdout_has("+pub fn mul() {}")
        .stdout_has("-    println!(\"hi, staged, then edited\");")
        .stdout_has("+    println!(\"hi, staged, then changed\");")
        .stdout_has("notes.txt")
        .stdout_has("-staged notes");
    let binary_line = diff
        .stdout
        .lines()
        .find(|l| l.contains("data.bin") && l.to_lowercase().contains("binary"));
    assert!(
        binary_line.is_some(),
        "no line says data.bin is binary{}{}",
        run.dump(),
        diff.dump()
    );
    assert!(
        !diff.stdout.contains('\u{0}'),
        "binary bytes in the diff{}",
        diff.dump()
    );

    let stat = env.aq(&["diff", "--stat"]);
    stat.code(0).stdout_lacks("@@").stdout_lacks("+pub fn mul");
    for path in ["src/lib.rs", "src/main.rs", "data.bin", "notes.txt"] {
        assert_eq!(
            stat.stdout.lines().filter(|l| l.contains(path)).count(),
            1,
            "one --stat line for {path}{}",
            stat.dump()
        );
    }
    assert!(
        !stat.stdout.contains("README.md"),
        "an unchanged file in --stat{}",
        stat.dump()
    );
    // The same since a named checkpoint, and since the session.
    let list = checkpoints(&env, &[]);
    let first = list[0]["id"].as_str().unwrap();
    let named = env.aq(&["diff", &first[..12], "--stat"]);
    named.code(0);
    assert_eq!(named.stdout, stat.stdout);
    let session = env.only_session().id();
    let by_session = env.aq(&["diff", "--session", &session, "--stat"]);
    by_session.code(0);
    assert_eq!(by_session.stdout, stat.stdout);
    // After the undo, nothing is different.
    env.aq(&["undo", "--yes"]).code(0);
    let after = env.aq(&["diff", &first[..12]]);
    after.code(0).stderr_has("nothing changed");
    assert_eq!(after.stdout, "", "{}", after.dump());
}

#[test]
fn checkpoints_json_has_every_field() {
    let (env, before) = fixture_env();
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let (run, _) = damage(&env, &before, "rm -f README.md");
    let session = env.only_session().id();
    let list = checkpoints(&env, &[]);
    assert!(
        list.len() >= 2,
        "a start and an end: {list:#?}{}",
        run.dump()
    );
    let mut ids = std::collections::BTreeSet::new();
    for (i, c) in list.iter().enumerate() {
        let id = c["id"].as_str().unwrap_or_else(|| panic!("{c:#}"));
        assert!(
            id.len() >= 40 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{c:#}"
        );
        assert!(ids.insert(id.to_string()), "{id} twice: {list:#?}");
        let t = c["time_ms"].as_u64().unwrap_or_else(|| panic!("{c:#}"));
        assert!(
            t + 2000 >= t0 && t < t0 + 120_000,
            "time {t} vs {t0}: {c:#}"
        );
        assert_eq!(c["session"], session.as_str(), "{c:#}");
        for k in ["added", "modified", "deleted"] {
            assert!(c["changed"][k].is_u64(), "changed.{k}: {c:#}");
        }
        assert_eq!(c["not_kept"], serde_json::json!([]), "{c:#}");
        assert_eq!(c["git_kept"], true, "{c:#}");
        assert!(c.get("command").is_some(), "{c:#}");
        if i > 0 {
            assert_eq!(c["parent"], list[i - 1]["id"], "{list:#?}");
        }
    }
    assert_eq!(list[0]["reason"], "session-start", "{list:#?}");
    assert_eq!(list[0]["parent"], Value::Null, "{list:#?}");
    let last = list.last().unwrap();
    assert_eq!(last["reason"], "session-end", "{list:#?}");
    let deleted: u64 = list
        .iter()
        .map(|c| c["changed"]["deleted"].as_u64().unwrap())
        .sum();
    assert_eq!(deleted, 1, "README.md: {list:#?}");

    // --latest and --session (a prefix) give the same; the log has the ids.
    assert_eq!(checkpoints(&env, &["--latest"]), list);
    assert_eq!(checkpoints(&env, &["--session", &session[..12]]), list);
    let logged: Vec<String> = env
        .only_session()
        .events_of("checkpoint")
        .iter()
        .map(|e| e["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let listed: Vec<String> = list
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(logged, listed, "the log's checkpoint events");
    // The table: a header, one line per checkpoint, short ids.
    let table = env.aq(&["checkpoints"]);
    table
        .code(0)
        .stdout_has("ID")
        .stdout_has("session-start")
        .stdout_has("session-end");
    for id in &listed {
        table.stdout_has(&id[..12]);
    }
    // An unknown session is an error.
    env.aq(&["checkpoints", "--session", "nope"])
        .code(2)
        .stderr_has("no checkpoints of a session `nope`");
}

#[test]
fn undo_without_a_terminal_and_without_yes_refuses_and_changes_nothing() {
    let (env, before) = fixture_env();
    let (run, damaged) = damage(&env, &before, ALLOWED_DAMAGE);
    let undo = env.aq(&["undo"]);
    undo.code(2)
        .stderr_has("no terminal")
        .stderr_has("--yes")
        .stdout_has("README.md");
    assert_state(
        &damaged,
        &State::of(&env.work()),
        "after a refused undo",
        &[&run, &undo],
    );
    // No checkpoint was taken either: nothing was about to change.
    assert!(
        checkpoints(&env, &[])
            .iter()
            .all(|c| c["reason"] != "before-undo")
    );
    // On a terminal it asks; "n" changes nothing, "y" puts it back.
    let line = crate::util::aq_line(&["undo"]);
    let Some(no) = env.on_terminal(&line, "n\n") else {
        aq_testkit::skip("no util-linux `script` to give `aq undo` a terminal");
        return;
    };
    no.code(0)
        .stdout_has("Put these back?")
        .stdout_has("nothing changed");
    assert_state(
        &damaged,
        &State::of(&env.work()),
        "after answering no",
        &[&no],
    );
    let yes = env.on_terminal(&line, "y\n").unwrap();
    yes.code(0).stdout_has("restored");
    assert_state(
        &before,
        &State::of(&env.work()),
        "after answering yes",
        &[&yes],
    );
}

#[test]
fn undo_refuses_inside_a_session() {
    let (env, before) = fixture_env();
    let (run, damaged) = damage(&env, &before, ALLOWED_DAMAGE);
    let first = env.sessions()[0].id();
    let inside = env.aq(&[
        "run",
        "--quiet",
        "--",
        crate::util::aq_exe(),
        "undo",
        "--yes",
    ]);
    inside.stderr_has("aq undo cannot run inside an aq session");
    assert_ne!(inside.code, Some(0), "{}", inside.dump());
    assert_state(
        &damaged,
        &State::of(&env.work()),
        "after `aq undo` inside a session",
        &[&run, &inside],
    );
    // The same through a session's environment alone.
    let fake = env.aq_with(
        &[("AQ_SESSION_DIR", "/nonexistent")],
        &["undo", "--yes", "--session", &first],
    );
    fake.code(2)
        .stderr_has("aq undo cannot run inside an aq session");
    // From outside, the first session's start is still there.
    let undo = env.aq(&["undo", "--yes", "--session", &first]);
    undo.code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        "after aq undo --session",
        &[&undo],
    );
}

#[test]
fn ignored_files_are_neither_kept_nor_removed() {
    let env = Env::new();
    let work = env.work();
    fixture(&work);
    write(&work.join(".gitignore"), "target/\n*.log\n");
    write(&work.join("target/debug/old.o"), "old object\n");
    write(&work.join("build.log"), "old log\n");
    let before = State::of_but(&work, &["target", "build.log"]);
    let run = env.aq(&[
        "run",
        "--quiet",
        "--",
        "sh",
        "-c",
        "rm -f target/debug/old.o build.log README.md && echo new > target/debug/new.o && echo new > new.log",
    ]);
    run.code(0);
    assert!(!work.join("README.md").exists(), "{}", run.dump());
    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0).stdout_lacks("target").stdout_lacks(".log");
    // Not kept: what was deleted there stays deleted.
    assert!(!work.join("target/debug/old.o").exists(), "{}", undo.dump());
    assert!(!work.join("build.log").exists(), "{}", undo.dump());
    // Not removed: what was created there stays.
    assert_eq!(
        std::fs::read_to_string(work.join("target/debug/new.o")).ok(),
        Some("new\n".into()),
        "{}",
        undo.dump()
    );
    assert!(work.join("new.log").exists(), "{}", undo.dump());
    assert_state(
        &before,
        &State::of_but(&work, &["target", "build.log", "new.log"]),
        "the files git does not ignore",
        &[&run, &undo],
    );
}

#[test]
fn a_file_over_the_size_limit_is_reported_not_kept() {
    let env = Env::new();
    let work = env.work();
    fixture(&work);
    env.write(
        &env.user_policy(),
        "version = 1\n\n[undo]\nmax_file_mb = 1\n",
    );
    // 2 MiB, untracked.
    write(&work.join("big.bin"), vec![7u8; 2 << 20]);
    write(&work.join("small.bin"), vec![7u8; 1000]);
    let before = State::of_but(&work, &["big.bin"]);
    let run = env.aq(&["run", "--", "sh", "-c", "rm -f big.bin small.bin README.md"]);
    run.code(0).stderr_has("files over the size limit not kept");
    let table = env.aq(&["checkpoints"]);
    table.code(0).stdout_has("not kept: big.bin");
    let list = checkpoints(&env, &[]);
    let start = &list[0];
    let not_kept = start["not_kept"].as_array().unwrap();
    assert_eq!(not_kept.len(), 1, "{start:#}");
    assert_eq!(not_kept[0]["path"], "big.bin", "{start:#}");
    assert!(not_kept[0]["why"].as_str().is_some_and(|w| !w.is_empty()));

    let undo = env.aq(&["undo", "--yes"]);
    // Said, not silently skipped: and the exit code says not everything is back.
    undo.code(1)
        .stdout_has("big.bin")
        .stdout_has("not restored");
    assert!(!work.join("big.bin").exists());
    assert_state(
        &before,
        &State::of_but(&work, &["big.bin"]),
        "the files under the limit",
        &[&run, &undo],
    );
}

#[test]
fn a_workspace_that_is_not_a_git_repository() {
    let env = Env::new();
    let work = env.work();
    std::fs::remove_dir_all(work.join(".git")).unwrap();
    write(&work.join("notes/a.txt"), "a\n");
    write(&work.join("notes/deep/b.txt"), "b\n");
    write(&work.join("bin/tool"), "#!/bin/sh\n");
    chmod(&work.join("bin/tool"), 0o755);
    write(&work.join("blob"), binary_bytes());
    std::os::unix::fs::symlink("notes/a.txt", work.join("a-link")).unwrap();
    std::fs::create_dir_all(work.join("empty")).unwrap();
    let before = State::of(&work);
    assert!(before.git.is_empty());
    let run = env.aq(&[
        "run",
        "--quiet",
        "--",
        "sh",
        "-c",
        "python3 -c 'import os, shutil; shutil.rmtree(\"notes\"); os.rmdir(\"empty\")' && : > blob && mv bin/tool bin/tool.old && rm -f a-link && echo x > new.txt",
    ]);
    run.code(0);
    assert_ne!(before, State::of(&work), "{}", run.dump());
    // From outside the workspace, naming it.
    let list = env.aq_in(env.root(), &["checkpoints", "-C", "work", "--json"]);
    list.code(0);
    let list = list.json();
    assert_eq!(list[0]["git_kept"], false, "{list:#}");
    let undo = env.aq_in(env.root(), &["undo", "-C", "work", "--yes"]);
    undo.code(0);
    assert_state(
        &before,
        &State::of(&work),
        "a plain directory",
        &[&run, &undo],
    );
}

#[test]
fn the_recap_and_the_report_say_how_to_undo() {
    let (env, before) = fixture_env();
    let run = env.aq(&["run", "--", "sh", "-c", "rm -f README.md"]);
    run.code(0);
    assert_ne!(before, State::of(&env.work()));
    let session = env.only_session().id();
    let undo_line = format!("aq undo --session {session}");
    let n = checkpoints(&env, &[]).len();
    run.stderr_has(&format!("{n} checkpoints of the workspace"))
        .stderr_has(&undo_line);
    let report = env.aq(&["report", "--latest"]);
    report
        .code(0)
        .stdout_has("## Undo")
        .stdout_has(&format!("{n} checkpoints of the workspace"))
        .stdout_has(&undo_line);
    // The command it names works.
    let words: Vec<&str> = undo_line.split(' ').skip(1).collect();
    let mut args = words.clone();
    args.push("--yes");
    env.aq(&args).code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        "after the recap's command",
        &[],
    );
}

#[test]
fn a_second_session_in_an_unchanged_workspace_is_undone_too() {
    // The second session starts where the first ended: its first checkpoint
    // is the same state as the first session's last (the store answers
    // `Taken::Unchanged`, and no checkpoint of the second session's start
    // is recorded). `aq undo` (the start
    // of the latest session) and the recap's `aq undo --session ID` must
    // still go back to where the second session started.
    let (env, before) = fixture_env();
    env.aq(&["run", "--quiet", "--", "true"]).code(0);
    let (run, _) = damage(&env, &before, ALLOWED_DAMAGE);
    let list = checkpoints(&env, &[]);
    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        &format!("after a second session and aq undo; its checkpoints: {list:#?}"),
        &[&run, &undo],
    );
}

// ---- the store, from inside ---------------------------------------------------

/// Tries each operation on the store from inside the sandbox and prints
/// `NAME ok` or `NAME ERRNO`; the same on a workspace directory as a control.
const PROBE: &str = r#"import errno, os, sys
root, store, record, obj = sys.argv[1:5]
def t(name, f):
    try:
        r = f()
        print(name, "ok", r if r is not None else "")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def run(prefix, root, store, record, obj):
    t(prefix + "list-root", lambda: len(os.listdir(root)))
    t(prefix + "list-store", lambda: len(os.listdir(store)))
    t(prefix + "read-record", lambda: len(open(record, "rb").read()))
    t(prefix + "read-object", lambda: len(open(obj, "rb").read()))
    t(prefix + "append-record", lambda: open(record, "a").write("{}\n"))
    t(prefix + "truncate-record", lambda: os.truncate(record, 0))
    t(prefix + "create-in-root", lambda: open(os.path.join(root, "planted"), "w").write("x"))
    t(prefix + "create-in-store", lambda: open(os.path.join(store, "planted"), "w").write("x"))
    t(prefix + "mkdir-in-root", lambda: os.mkdir(os.path.join(root, "d")))
    t(prefix + "unlink-object", lambda: os.unlink(obj))
    t(prefix + "unlink-record", lambda: os.unlink(record))
    t(prefix + "rename-store", lambda: os.rename(store, store + ".gone"))
run("store:", root, store, record, obj)
c = "ctl/undo"
os.makedirs(c + "/ws/objects/ab", exist_ok=True)
open(c + "/ws/checkpoints.jsonl", "w").write("{}\n")
open(c + "/ws/objects/ab/cd", "w").write("x")
run("control:", c, c + "/ws", c + "/ws/checkpoints.jsonl", c + "/ws/objects/ab/cd")
os.unlink("README.md")
"#;

/// The one workspace store under the state directory, and a file in its
/// `objects/`.
fn store_paths(env: &Env) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let root = env.state_home().join("agent-quarantine/undo");
    let stores: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(stores.len(), 1, "{stores:?}");
    let store = stores[0].clone();
    let record = store.join("checkpoints.jsonl");
    assert!(record.is_file(), "{}", crate::util::listing(&store));
    fn first_file(dir: &Path) -> Option<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        entries
            .into_iter()
            .find_map(|p| if p.is_dir() { first_file(&p) } else { Some(p) })
    }
    let obj = first_file(&store.join("objects"))
        .unwrap_or_else(|| panic!("no object in {}", crate::util::listing(&store)));
    (root, store, record, obj)
}

#[test]
fn the_store_cannot_be_reached_from_inside_strict_or_dev() {
    for profile in ["strict", "dev"] {
        let env = Env::new();
        let work = env.work();
        fixture(&work);
        // A first session makes the store. The probe is written after it,
        // so that the second session does not start where the first ended
        // (a_second_session_in_an_unchanged_workspace_is_undone_too).
        env.aq(&["run", "--quiet", "--", "true"]).code(0);
        write(&work.join("probe.py"), PROBE);
        let before = State::of(&work);
        let (root, store, record, obj) = store_paths(&env);
        let record_before = std::fs::read(&record).unwrap();
        let obj_before = std::fs::read(&obj).unwrap();
        let paths: Vec<String> = [&root, &store, &record, &obj]
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let mut args = vec![
            "run",
            "--quiet",
            "--profile",
            profile,
            "--",
            "python3",
            "probe.py",
        ];
        args.extend(paths.iter().map(String::as_str));
        let out = env.aq(&args);
        out.code(0);
        let said: BTreeMap<&str, &str> = out
            .stdout
            .lines()
            .filter_map(|l| l.split_once(' '))
            .collect();
        let result = |k: &str| {
            said.get(k)
                .map(|v| v.split(' ').next().unwrap_or_default())
                .unwrap_or_else(|| panic!("no {k}{}", out.dump()))
        };
        // Positive control: every operation works on a workspace directory.
        for op in [
            "list-root",
            "list-store",
            "read-record",
            "read-object",
            "append-record",
            "truncate-record",
            "create-in-root",
            "create-in-store",
            "mkdir-in-root",
            "unlink-object",
            "unlink-record",
            "rename-store",
        ] {
            assert_eq!(
                result(&format!("control:{op}")),
                "ok",
                "{profile}: control {op}{}",
                out.dump()
            );
        }
        // The store: an empty, read-only directory stands in its place, so
        // its files are not there (ENOENT) and nothing can be made (EROFS).
        let listing = said["store:list-root"];
        assert!(
            listing == "EACCES" || listing == "ok 0",
            "{profile}: listing the undo root gave {listing}{}",
            out.dump()
        );
        for op in [
            "list-store",
            "read-record",
            "read-object",
            "append-record",
            "truncate-record",
            "create-in-store",
            "unlink-object",
            "unlink-record",
        ] {
            assert_eq!(
                result(&format!("store:{op}")),
                "ENOENT",
                "{profile}: {op}{}",
                out.dump()
            );
        }
        for op in ["create-in-root", "mkdir-in-root", "rename-store"] {
            assert_eq!(
                result(&format!("store:{op}")),
                "EROFS",
                "{profile}: {op}{}",
                out.dump()
            );
        }
        // Nothing of the store changed (but what the session added).
        let record_after = std::fs::read(&record).unwrap();
        assert!(
            record_after.starts_with(&record_before),
            "{profile}: checkpoints.jsonl was rewritten"
        );
        assert_eq!(std::fs::read(&obj).unwrap(), obj_before, "{profile}");
        assert!(!root.join("planted").exists() && !store.join("planted").exists());
        assert!(!work.join("README.md").exists(), "{}", out.dump());
        // And the undo still works.
        let undo = env.aq(&["undo", "--yes"]);
        undo.code(0);
        assert_state(
            &before,
            &State::of(&work),
            &format!("{profile}: after the attempt and aq undo"),
            &[&out, &undo],
        );
    }
}

#[test]
fn planted_checkpoints_are_not_restored() {
    let (env, before) = fixture_env();
    let fake = "deadbeef".repeat(5);
    // What a store looks like, planted where the agent can write: in the
    // workspace, in its temporary directory and in its home's state
    // directory; then a file deleted, as a reason to undo.
    let plant = format!(
        "for d in .aq-undo \"${{TMPDIR:-/tmp}}/agent-quarantine/undo\" \"$HOME/.local/state/agent-quarantine/undo\"; do \
           mkdir -p \"$d/work-0000/objects/de\" && \
           printf '%s\\n' '{{\"id\":\"{fake}\",\"time_ms\":1,\"reason\":\"session-start\",\"session\":\"planted\",\"command\":null,\"parent\":null,\"changed\":{{\"added\":0,\"modified\":0,\"deleted\":0}},\"not_kept\":[],\"git_kept\":true}}' > \"$d/work-0000/checkpoints.jsonl\" && \
           printf 'blob 6\\0pwned\\n' > \"$d/work-0000/objects/de/{rest}\" && \
           echo \"$d\" > \"$d/work-0000/workspace\"; \
         done; rm -f README.md",
        rest = &fake[2..]
    );
    let (run, damaged) = damage(&env, &before, &plant);
    assert!(
        env.work()
            .join(".aq-undo/work-0000/checkpoints.jsonl")
            .exists(),
        "{}",
        run.dump()
    );
    let list = checkpoints(&env, &[]);
    assert!(
        list.iter()
            .all(|c| c["id"] != fake.as_str() && c["session"] != "planted"),
        "a planted checkpoint is listed: {list:#?}"
    );
    let to_fake = env.aq(&["undo", "--to", &fake[..12], "--yes"]);
    assert_ne!(to_fake.code, Some(0), "{}", to_fake.dump());
    assert_state(
        &damaged,
        &State::of(&env.work()),
        "after `aq undo --to` a planted id",
        &[&to_fake],
    );
    env.aq(&["checkpoints", "--session", "planted"]).code(2);
    // The real undo: back to the start, the planted files removed as any
    // file the session created.
    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        "after aq undo",
        &[&run, &undo],
    );
}

// ---- hook mode -----------------------------------------------------------------

#[test]
fn hook_mode_takes_a_checkpoint_before_the_agent_deletes_src() {
    let (env, before) = fixture_env();
    // Claude Code's PreToolUse event for its Bash tool (tests/hook.rs).
    let payload = serde_json::json!({
        "session_id": "11111111-2222-4333-8444-272727272727",
        "transcript_path": "/home/user/.claude/projects/p/x.jsonl",
        "cwd": env.work().display().to_string(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf src", "description": "clean up"},
        "tool_use_id": "toolu_fake_0027",
    })
    .to_string();
    let hook = env.aq_input(&["hook", "claude"], &payload);
    hook.code(0);
    let answer: Value = serde_json::from_str(hook.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON: {e}{}", hook.dump()));
    let decision = &answer["hookSpecificOutput"]["permissionDecision"];
    assert!(
        decision == "ask" || decision == "allow",
        "rm -rf src is not refused outright: {answer:#}"
    );
    // The agent (its user said yes) runs it.
    std::fs::remove_dir_all(env.work().join("src")).unwrap();
    let damaged = State::of(&env.work());
    assert_ne!(before, damaged);
    let list = checkpoints(&env, &[]);
    let cp = list
        .iter()
        .find(|c| c["command"] == "rm -rf src")
        .unwrap_or_else(|| panic!("no checkpoint before rm -rf src: {list:#?}{}", hook.dump()));
    assert!(
        cp["session"].as_str().is_some_and(|s| s.contains("claude")),
        "{cp:#}"
    );
    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0).stdout_has("src/");
    assert_state(
        &before,
        &State::of(&env.work()),
        "after the hook's checkpoint and aq undo",
        &[&hook, &undo],
    );
}

#[test]
fn hook_mode_takes_its_checkpoint_with_the_policys_undo_settings() {
    // The hook decides in a child and takes the checkpoint in the parent,
    // which takes `[undo]` from the child's policy: a size limit holds, and
    // `enabled = false` means no checkpoint at all.
    let payload = |env: &Env, command: &str| {
        serde_json::json!({
            "session_id": "11111111-2222-4333-8444-272727272728",
            "transcript_path": "/home/user/.claude/projects/p/x.jsonl",
            "cwd": env.work().display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_fake_0028",
        })
        .to_string()
    };
    let (env, _) = fixture_env();
    env.write(
        &env.user_policy(),
        "version = 1\n\n[undo]\nmax_file_mb = 1\n",
    );
    write(&env.work().join("big.bin"), vec![7u8; 2 << 20]);
    env.aq_input(&["hook", "claude"], &payload(&env, "ls -la"))
        .code(0);
    let list = checkpoints(&env, &[]);
    let cp = list
        .iter()
        .find(|c| c["command"] == "ls -la")
        .unwrap_or_else(|| panic!("no checkpoint before ls -la: {list:#?}"));
    let not_kept = cp["not_kept"].as_array().unwrap();
    assert!(
        not_kept.iter().any(|n| n["path"] == "big.bin"),
        "the 1 MiB limit was not applied: {cp:#}"
    );

    let (env, _) = fixture_env();
    env.write(
        &env.user_policy(),
        "version = 1\n\n[undo]\nenabled = false\n",
    );
    env.aq_input(&["hook", "claude"], &payload(&env, "ls -la"))
        .code(0);
    let list = checkpoints(&env, &[]);
    assert!(
        list.iter().all(|c| c["command"] != "ls -la"),
        "a checkpoint with [undo] enabled = false: {list:#?}"
    );
}

// ---- a real agent ----------------------------------------------------------------

#[test]
fn claude_code_deletes_a_file_and_undo_brings_it_back() {
    use crate::real_agents::{FakeModel, agents_bin};
    let Some(bin) = agents_bin() else {
        return;
    };
    let (env, before) = fixture_env();
    let model = FakeModel::start(
        &env.root().join("model"),
        "anthropic",
        &serde_json::json!([
            { "command": "rm -f data.bin src/lib.rs && echo deleted-ok" },
            { "text": "All done." }
        ]),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let base = format!("http://127.0.0.1:{}", model.port);
    let run = env.aq_with(
        &[
            ("PATH", &path),
            ("ANTHROPIC_API_KEY", "sk-test-undo-0123456789abcdef"),
            ("ANTHROPIC_BASE_URL", &base),
            ("SHELL", "/bin/bash"),
            ("TERM", "dumb"),
        ],
        &[
            "run",
            "--",
            "claude",
            "-p",
            "do the task",
            "--dangerously-skip-permissions",
        ],
    );
    run.code(0).stdout_has("All done.");
    assert!(
        model.bodies().contains("deleted-ok"),
        "the agent did not run the command{}",
        run.dump()
    );
    assert!(!env.work().join("data.bin").exists(), "{}", run.dump());
    assert!(!env.work().join("src/lib.rs").exists(), "{}", run.dump());
    let undo = env.aq(&["undo", "--yes"]);
    undo.code(0);
    let after = State::of(&env.work());
    assert_eq!(
        after.tree.get(Path::new("data.bin")),
        before.tree.get(Path::new("data.bin")),
        "{}",
        undo.dump()
    );
    assert_state(
        &before,
        &after,
        "after Claude Code and aq undo",
        &[&run, &undo],
    );
}

/// A disk that fills up: aq's state on a 1 MiB tmpfs (made by the test, as
/// root; unprivileged users cannot mount one), a workspace whose new content
/// does not fit. The checkpoint that cannot be written fails, the session
/// goes on and says so, and the checkpoint taken before is whole: undo to it
/// still works once there is room (the positive control: the same session
/// with room takes its checkpoints).
#[test]
fn a_full_disk_fails_that_checkpoint_and_keeps_the_earlier_ones() {
    if unsafe { libc::geteuid() } != 0 {
        aq_testkit::skip("needs root to mount a small tmpfs for the state directory");
        return;
    }
    let (env, before) = fixture_env();
    let state = env.state_home();
    std::fs::create_dir_all(&state).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&state)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a 1 MiB tmpfs");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(state.clone());
    // A first session fits: its checkpoint is whole.
    let first = env.aq(&["run", "--quiet", "--", "true"]);
    first.code(0);
    assert_eq!(checkpoints(&env, &[]).len(), 1, "{}", first.dump());
    // 3 MiB of new, incompressible work cannot be kept on 1 MiB.
    let mut noise = vec![0u8; 3 << 20];
    use std::io::Read;
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut noise)
        .unwrap();
    write(&env.work().join("big-new-work.bin"), &noise);
    let run = env.aq(&["run", "--", "sh", "-c", "rm -f README.md; echo ran"]);
    run.code(0)
        .stdout_has("ran")
        .stderr_has("no checkpoint of the workspace at the start of this session");
    // (Two sessions in one second: their ids do not sort by time.)
    let failed: Vec<Value> = env
        .sessions()
        .iter()
        .flat_map(|s| s.events_of("checkpoint"))
        .filter(|e| e["error"].is_string())
        .collect();
    // The start's and the end's: the new work fits at neither.
    assert_eq!(
        failed.len(),
        2,
        "the failed checkpoints are logged with their error"
    );
    // The first session's checkpoint is still listed and whole.
    let list = env.aq(&["checkpoints", "--json"]);
    list.code(0);
    assert!(
        !list.json().as_array().unwrap().is_empty(),
        "{}",
        list.dump()
    );
    // Room again: undo to the first session's start brings README.md back.
    std::fs::remove_file(env.work().join("big-new-work.bin")).unwrap();
    let first_id = first_session_id(&env);
    let undo = env.aq(&["undo", "--yes", "--session", &first_id]);
    undo.code(0);
    assert_state(
        &before,
        &State::of(&env.work()),
        "after aq undo",
        &[&run, &undo],
    );
}

/// The session of the oldest checkpoint of `env`'s workspace.
fn first_session_id(env: &Env) -> String {
    checkpoints(env, &[])[0]["session"]
        .as_str()
        .expect("a session")
        .to_string()
}
