//! Secret masks: empty in place of the secret, through every alias: symlinks
//! (made before or inside), `/proc/self/root`, another process's `/proc/<pid>/cwd`,
//! `/proc/1/root`, hard links (refused before, impossible inside).

use std::ffi::{CString, OsString};
use std::io::{self, Read};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use aq_sandbox::{LandlockMode, PlanError, SandboxError, SandboxSpec, Step, run_sandboxed};

use super::probe::{DONE, DONE_WITH_DATA};
use super::util::{ONE_TEST, Outcome, Scratch, on, run_probe, run_probe_without};

/// `home/real-ssh/id_rsa` holds a secret; `home/.ssh` is a symlink to
/// `real-ssh` and `home/key-alias` a symlink to the key.
fn fake_ssh_home(s: &Scratch) {
    std::fs::create_dir_all(s.home.join("real-ssh")).unwrap();
    std::fs::write(s.home.join("real-ssh/id_rsa"), "-----BEGIN SECRET-----\n").unwrap();
    symlink("real-ssh", s.home.join(".ssh")).unwrap();
    symlink("real-ssh/id_rsa", s.home.join("key-alias")).unwrap();
}

#[test]
fn masked_key_reads_empty_through_every_alias() {
    let s = Scratch::new();
    fake_ssh_home(&s);
    let mut spec = s.spec();
    // Named through the symlinked directory: the real file must be the one masked.
    spec.masked = vec![s.home.join(".ssh/id_rsa")];
    for path in [
        s.home.join(".ssh/id_rsa"),
        s.home.join("real-ssh/id_rsa"),
        s.home.join("key-alias"),
    ] {
        let Some(got) = run_probe(&spec, &on("read", &path)) else {
            return;
        };
        assert_eq!(
            got,
            Outcome::Done,
            "reading {} must give nothing",
            path.display()
        );
    }
    // The probe does see data when nothing is masked: the test can tell the difference.
    let Some(got) = run_probe(&s.spec(), &on("read", &s.home.join("key-alias"))) else {
        return;
    };
    assert_eq!(got, Outcome::DoneWithData);
}

#[test]
fn masked_directory_is_empty() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.home.join(".aws")).unwrap();
    std::fs::write(s.home.join(".aws/credentials"), "aws_secret_access_key=x\n").unwrap();
    let mut spec = s.spec();
    spec.masked = vec![s.home.join(".aws")];
    let Some(got) = run_probe(&spec, &on("read", &s.home.join(".aws/credentials"))) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::ENOENT));
    let Some(got) = run_probe(&spec, &on("listdir", &s.home.join(".aws"))) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
}

#[test]
fn masked_workspace_file_reads_empty_and_cannot_be_written() {
    let s = Scratch::new();
    std::fs::write(s.ws.join(".env"), "API_TOKEN=secret\n").unwrap();
    let mut spec = s.spec();
    spec.masked = vec![s.ws.join(".env")];
    let Some(got) = run_probe(&spec, &on("read", &s.ws.join(".env"))) else {
        return;
    };
    assert_eq!(got, Outcome::Done);
    let Some(got) = run_probe(&spec, &on("write", &s.ws.join(".env"))) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EROFS));
    assert_eq!(
        std::fs::read_to_string(s.ws.join(".env")).unwrap(),
        "API_TOKEN=secret\n"
    );
}

#[test]
fn mask_cannot_be_unmounted_from_inside() {
    let s = Scratch::new();
    fake_ssh_home(&s);
    let mut spec = s.spec();
    spec.masked = vec![s.home.join(".ssh/id_rsa")];
    // Unmount the mask (on the real path), then read the key.
    let probe = on("umount-read", &s.home.join("real-ssh/id_rsa"));
    let Some(got) = run_probe(&spec, &probe) else {
        return;
    };
    // Refused, and the key still reads empty after the attempt: the mask is
    // still there. (EPERM alone says nothing of the mask: an unmount of a
    // path that is no mount point fails the same way in the sandbox.)
    assert_eq!(got, Outcome::Errno(libc::EPERM));
    // Without the mask the same probe reads the key: the test can tell.
    let Some(got) = run_probe(&s.spec(), &probe) else {
        return;
    };
    assert_eq!(got, Outcome::DoneWithData);
    // Positive control: without what refuses the unmount (the seccomp
    // filter, the dropped capabilities, Landlock), the same probe removes the
    // mask and reads the key, so the probe unmounts the mask for real. The
    // command keeps its capabilities in the user namespace across its exec
    // only as uid 0 there, so this part runs as root only.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIP (positive control only): not root, the probe would hold no capabilities");
        return;
    }
    let Some(got) = run_probe_without(&spec, &probe, |step| {
        matches!(
            step,
            Step::Seccomp(_) | Step::DropCapabilities | Step::Landlock { .. }
        )
    }) else {
        return;
    };
    assert_eq!(
        got,
        Outcome::DoneWithData,
        "without seccomp, capability drop and Landlock the mask should come off"
    );
}

/// `home/.ssh/id_ed25519` holds "FAKE-KEY"; returns the key's path.
fn fake_ed25519(s: &Scratch) -> PathBuf {
    std::fs::create_dir_all(s.home.join(".ssh")).unwrap();
    let key = s.home.join(".ssh/id_ed25519");
    std::fs::write(&key, "FAKE-KEY").unwrap();
    key
}

/// The scratch spec with `home/.ssh` masked.
fn ssh_masked(s: &Scratch) -> SandboxSpec {
    let mut spec = s.spec();
    spec.masked = vec![s.home.join(".ssh")];
    spec
}

/// `read-via-child-cwd:<dir>:<relative>`: fork a child that `chdir`s to
/// `<dir>` and waits, then read `/proc/<child>/cwd/<relative>`.
pub fn read_via_child_cwd(arg: &str) -> io::Result<i32> {
    let (dir, rel) = arg.split_once(':').unwrap_or((arg, ""));
    let dir = CString::new(dir).map_err(io::Error::other)?;
    let mut fds = [0; 2];
    // SAFETY: plain syscalls; the child calls only chdir, write and pause
    // (async-signal-safe) on data made before the fork, until it is killed.
    let child = unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) == -1 {
            return Err(io::Error::last_os_error());
        }
        let pid = libc::fork();
        if pid == 0 {
            let ok = u8::from(libc::chdir(dir.as_ptr()) == 0);
            libc::write(fds[1], (&raw const ok).cast(), 1);
            loop {
                libc::pause();
            }
        }
        libc::close(fds[1]);
        pid
    };
    let mut ok = 0u8;
    // SAFETY: reading one byte into a local.
    let n = unsafe { libc::read(fds[0], (&raw mut ok).cast(), 1) };
    let result = if child == -1 || n != 1 || ok != 1 {
        Err(io::Error::from_raw_os_error(0))
    } else {
        let mut data = Vec::new();
        std::fs::File::open(format!("/proc/{child}/cwd/{rel}"))
            .and_then(|mut f| f.read_to_end(&mut data))
            .map(|_| {
                if data.is_empty() {
                    DONE
                } else {
                    DONE_WITH_DATA
                }
            })
    };
    // SAFETY: killing and reaping our own child; closing our fd.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        libc::waitpid(child, std::ptr::null_mut(), 0);
        libc::close(fds[0]);
    }
    result
}

#[test]
fn masked_key_is_empty_through_proc_self_root() {
    let s = Scratch::new();
    let key = fake_ed25519(&s);
    let via = Path::new("/proc/self/root").join(key.strip_prefix("/").unwrap());
    let Some(got) = run_probe(&ssh_masked(&s), &on("read", &via)) else {
        return;
    };
    // The masked directory is empty.
    assert_eq!(got, Outcome::Errno(libc::ENOENT));
    // Control: unmasked, the same path shows the key.
    let Some(got) = run_probe(&s.spec(), &on("read", &via)) else {
        return;
    };
    assert_eq!(got, Outcome::DoneWithData);
}

#[test]
fn masked_key_is_empty_through_another_sandboxed_process_cwd() {
    let s = Scratch::new();
    fake_ed25519(&s);
    let probe = format!("read-via-child-cwd:{}:.ssh/id_ed25519", s.home.display());
    let Some(got) = run_probe(&ssh_masked(&s), &probe) else {
        return;
    };
    // The masked directory is empty.
    assert_eq!(got, Outcome::Errno(libc::ENOENT));
    let Some(got) = run_probe(&s.spec(), &probe) else {
        return;
    };
    assert_eq!(got, Outcome::DoneWithData);
}

#[test]
fn pid_1_root_is_out_of_the_command_s_reach() {
    let s = Scratch::new();
    let key = fake_ed25519(&s);
    // Init holds every capability of the user namespace and the command none,
    // so the ptrace-read check behind /proc/1/{root,cwd} fails (commoncap),
    // with or without Landlock (whose domain excludes init as well).
    let via_root = Path::new("/proc/1/root").join(key.strip_prefix("/").unwrap());
    let mut no_landlock = ssh_masked(&s);
    no_landlock.landlock = LandlockMode::Off;
    for spec in [ssh_masked(&s), s.spec(), no_landlock] {
        let Some(got) = run_probe(&spec, &on("read", &via_root)) else {
            return;
        };
        assert_eq!(got, Outcome::Errno(libc::EACCES), "{spec:?}");
    }
}

#[test]
fn masked_key_is_empty_through_a_symlink_made_inside_the_workspace() {
    let s = Scratch::new();
    let key = fake_ed25519(&s);
    let link = s.ws.join("innocent");
    let probe = format!("symlink-read:{}:{}", key.display(), link.display());
    let Some(got) = run_probe(&ssh_masked(&s), &probe) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::ENOENT));
    // The same link to an unmasked key does read it: the test can tell.
    let probe = format!(
        "symlink-read:{}:{}",
        key.display(),
        s.ws.join("other").display()
    );
    let Some(got) = run_probe(&s.spec(), &probe) else {
        return;
    };
    assert_eq!(got, Outcome::DoneWithData);
}

#[test]
fn masked_key_cannot_be_hard_linked_from_inside() {
    let s = Scratch::new();
    let key = fake_ed25519(&s);
    let mut spec = s.spec();
    // The file itself masked, so the name still resolves (to the mask).
    spec.masked = vec![key.clone()];
    let link = s.ws.join("copy");
    let Some(got) = run_probe(&spec, &format!("link:{}:{}", key.display(), link.display())) else {
        return;
    };
    // The name resolves to the mask, on another mount than the workspace.
    assert_eq!(got, Outcome::Errno(libc::EXDEV));
    assert!(!link.exists());
}

#[test]
fn secret_hard_linked_before_the_sandbox_is_refused_not_hidden() {
    let s = Scratch::new();
    let key = fake_ed25519(&s);
    std::fs::hard_link(&key, s.ws.join("key-copy")).unwrap();
    let mut spec = s.spec();
    spec.masked = vec![key.clone()];
    let marker = s.ws.join("ran");
    let argv: Vec<OsString> = vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("touch {}", marker.display()).into(),
    ];
    let err = run_sandboxed(&spec, &argv).unwrap_err();
    assert!(
        matches!(
            &err,
            SandboxError::Plan(PlanError::MaskedFileHasHardLinks { path, links: 2 }) if *path == key
        ),
        "{err}"
    );
    assert_eq!(err.exit_code(), 125);
    assert!(
        err.to_string()
            .contains("has 2 hard links; a mask cannot hide the other names"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
}

/// Runs a sandbox from the working directory it was started in (see
/// [`run_probe_from`]); a no-op in a normal test run.
#[test]
fn cwd_helper_entry() {
    let Some(arg) = std::env::var_os("AQ_SANDBOX_MASK_CWD") else {
        return;
    };
    let arg = arg.into_string().unwrap();
    let parts: Vec<&str> = arg.split('\t').collect();
    let [ws, masked, probe] = parts[..] else {
        panic!("bad AQ_SANDBOX_MASK_CWD {arg:?}");
    };
    let mut spec = SandboxSpec::strict(ws);
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.masked = vec![masked.into()];
    let got = run_probe(&spec, probe);
    println!("OUTCOME {got:?}");
    std::process::exit(0);
}

/// `run_probe` in a sandbox masking `masked`, from a caller whose working
/// directory is `cwd` (a helper process: the test's own cannot change). The
/// outcome as `run_probe` would print it (`None` when skipped).
fn run_probe_from(cwd: &Path, ws: &Path, masked: &Path, probe: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .arg("suite::masking::cwd_helper_entry")
        .args(ONE_TEST)
        .current_dir(cwd)
        .env(
            "AQ_SANDBOX_MASK_CWD",
            format!("{}\t{}\t{probe}", ws.display(), masked.display()),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match stdout.lines().find_map(|l| l.strip_prefix("OUTCOME ")) {
        Some(got) if out.status.success() => {
            eprint!("{stderr}");
            got.to_string()
        }
        _ => panic!("helper failed ({}):\n{stdout}\n{stderr}", out.status),
    }
}

#[test]
fn working_directory_inside_a_masked_directory_does_not_reach_the_secret() {
    let s = Scratch::new();
    fake_ed25519(&s);
    let ssh = s.home.join(".ssh");
    // Started from inside ~/.ssh, the command's working directory must be the
    // mask, not the real directory underneath it.
    for probe in ["read:id_ed25519", "read-via-child-cwd:.:id_ed25519"] {
        let got = run_probe_from(&ssh, &s.ws, &ssh, probe);
        if got == "None" {
            return;
        }
        assert_eq!(
            got,
            format!("{:?}", Some(Outcome::Errno(libc::ENOENT))),
            "{probe}"
        );
    }
    // Control: masking something else, the same relative read finds the key.
    let got = run_probe_from(&ssh, &s.ws, &s.home.join("elsewhere"), "read:id_ed25519");
    assert_eq!(got, format!("{:?}", Some(Outcome::DoneWithData)));
}
