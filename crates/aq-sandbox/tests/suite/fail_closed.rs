//! Fail closed: a boundary that cannot be built stops the command, and the
//! error says which boundary, which call and which path. (Each kernel
//! primitive taken away for real, under `aq run`, is the matrix test
//! `every_sandboxed_profile_fails_closed_without_each_primitive` in
//! tests/sandbox.rs; a plan built from facts flipped by hand proved nothing
//! about the kernel and is gone.)

use std::ffi::OsString;

use aq_sandbox::{HostFacts, PathFacts, PathKind, SandboxError, Step, apply, plan, run_sandboxed};

use super::util::{Scratch, skip};

#[test]
fn failed_mask_names_the_boundary_call_and_path() {
    let s = Scratch::new();
    let spec = s.spec();
    let mut facts = HostFacts::probe(&spec);
    if facts.landlock_abi < aq_sandbox::LANDLOCK_MIN_ABI {
        skip("Landlock ABI below 3");
        return;
    }
    // Facts that lie: a secret said to be a directory is a file, so the
    // mount must fail. (A secret that went away since the plan is skipped:
    // nothing is left to hide.)
    let ghost = s.root.join("ghost-secret");
    std::fs::write(&ghost, "FAKE-SECRET\n").unwrap();
    let mut spec = spec;
    spec.masked = vec![ghost.clone()];
    facts.paths.insert(
        ghost.clone(),
        PathFacts::Exists {
            real: ghost.clone(),
            kind: PathKind::Dir,
            links: 1,
        },
    );
    let plan = plan(&spec, &facts).unwrap();
    assert!(plan.steps.contains(&Step::Mask {
        path: ghost.clone(),
        kind: PathKind::Dir
    }));
    let marker = s.ws.join("ran");
    let argv: Vec<OsString> = vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("touch {}", marker.display()).into(),
    ];
    let err = apply(&plan, &spec.env, &argv).unwrap_err();
    match &err {
        SandboxError::Setup {
            syscall: "unshare", ..
        } => {
            skip(&err.to_string());
            return;
        }
        SandboxError::Setup {
            boundary,
            syscall,
            path,
            ..
        } => {
            assert_eq!(*boundary, "secret mask");
            assert_eq!(*syscall, "mount");
            assert_eq!(path.as_deref(), Some(ghost.as_path()));
            assert_eq!(err.raw_os_error(), Some(libc::ENOTDIR));
        }
        other => panic!("unexpected error: {other}"),
    }
    assert_eq!(err.exit_code(), 125);
    assert!(!marker.exists(), "the command ran despite the failed setup");
}

#[test]
fn missing_command_is_not_found_not_blocked() {
    let s = Scratch::new();
    let argv = vec![OsString::from("aq-no-such-command-xyz")];
    let err = run_sandboxed(&s.spec(), &argv).unwrap_err();
    assert!(
        matches!(&err, SandboxError::CommandNotFound(p) if p == "aq-no-such-command-xyz"),
        "{err}"
    );
    assert_eq!(err.exit_code(), 127);
}

#[test]
fn command_exit_code_is_relayed() {
    let s = Scratch::new();
    let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), "exit 7".into()];
    match run_sandboxed(&s.spec(), &argv) {
        Ok(status) => assert_eq!(status.code(), Some(7)),
        Err(
            e @ SandboxError::Setup {
                syscall: "unshare", ..
            },
        ) => skip(&e.to_string()),
        Err(e @ SandboxError::Plan(_)) => skip(&e.to_string()),
        Err(e) => panic!("could not run: {e}"),
    }
}
