//! Secret masks: empty in place of the secret, through symlink aliases too.

use std::os::unix::fs::symlink;

use super::util::{Outcome, Scratch, on, run_probe};

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
    let Some(got) = run_probe(&spec, &on("umount", &s.home.join("real-ssh/id_rsa"))) else {
        return;
    };
    assert_eq!(got, Outcome::Errno(libc::EPERM));
}
