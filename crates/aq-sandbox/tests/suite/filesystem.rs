//! Landlock and read-only binds: write only the workspace; `.git/hooks` and
//! `.git/config` stay read-only.

use super::util::{Outcome, Scratch, on, run_probe};

#[test]
fn sandbox_can_write_inside_the_workspace() {
    let s = Scratch::new();
    let target = s.ws.join("made-in-sandbox.txt");
    let Some(got) = run_probe(&s.spec(), &on("write", &target)) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written by the sandbox"
    );
}

#[test]
fn sandbox_blocks_write_outside_the_workspace() {
    let s = Scratch::new();
    let target = s.root.join("outside/escape.txt");
    let Some(got) = run_probe(&s.spec(), &on("write", &target)) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EACCES));
    assert!(!target.exists());
}

#[test]
fn sandbox_blocks_write_to_the_fake_home() {
    let s = Scratch::new();
    let target = s.home.join(".bashrc");
    let Some(got) = run_probe(&s.spec(), &on("write", &target)) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EACCES));
}

#[test]
fn sandbox_writes_granted_paths() {
    let s = Scratch::new();
    let mut spec = s.spec();
    spec.writable = vec![s.root.join("outside"), "/dev/null".into()];
    let Some(got) = run_probe(&spec, &on("write", &s.root.join("outside/granted.txt"))) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    let Some(got) = run_probe(&spec, "write:/dev/null") else {
        return;
    };
    assert_eq!(got, Outcome::Done);
}

#[test]
fn sandbox_blocks_write_to_git_hooks() {
    let s = Scratch::new();
    let hook = s.ws.join(".git/hooks/pre-commit");
    let Some(got) = run_probe(&s.spec(), &on("write", &hook)) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EROFS));
    assert!(!hook.exists());
}

#[test]
fn sandbox_blocks_write_to_git_config() {
    let s = Scratch::new();
    let config = s.ws.join(".git/config");
    let Some(got) = run_probe(&s.spec(), &on("write", &config)) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EROFS));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[core]\n");
}

#[test]
fn sandbox_blocks_renaming_git_away_from_its_read_only_hooks() {
    let s = Scratch::new();
    let probe = format!(
        "rename:{}:{}",
        s.ws.join(".git").display(),
        s.ws.join(".git-moved").display()
    );
    let Some(got) = run_probe(&s.spec(), &probe) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EBUSY));
    assert!(s.ws.join(".git/hooks").is_dir());
}
