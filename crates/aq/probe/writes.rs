//! Writes outside the workspace or to what stays read-only in it must fail;
//! the positive controls (the workspace, `$TMPDIR`) must work.

use std::io::{self, Write};
use std::path::Path;

use super::{Context, Outcome, Target, errno_text};

pub(super) fn create_file(path: &Path) -> Outcome {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path);
    match f {
        // The file was there before: a refusal would prove nothing.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            Outcome::Error(format!("{} already exists", path.display()))
        }
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(mut f) => {
            let _ = f.write_all(b"written from inside the aq verify sandbox\n");
            drop(f);
            let _ = std::fs::remove_file(path);
            Outcome::Leak("created it".to_string())
        }
    }
}

pub(super) fn append_file(path: &Path) -> Outcome {
    match std::fs::OpenOptions::new().append(true).open(path) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(mut f) => match f.write_all(b"# written from inside the aq verify sandbox\n") {
            Ok(()) => Outcome::Leak("opened for writing and wrote a line".to_string()),
            Err(e) => Outcome::Leak(format!(
                "opened for writing (the write then failed: {})",
                errno_text(&e)
            )),
        },
    }
}

pub(super) fn rename_git(c: &Context) -> Outcome {
    let from = c.workspace.join(".git");
    let to = c.workspace.join(".git-moved");
    match std::fs::rename(&from, &to) {
        Err(e) => Outcome::Held(errno_text(&e)),
        Ok(()) => {
            let _ = std::fs::rename(&to, &from);
            Outcome::Leak("renamed .git away (and back)".to_string())
        }
    }
}

pub(super) fn write_via_symlink(c: &Context) -> Outcome {
    let link = c.workspace.join("aq-verify-rc-link");
    let _ = std::fs::remove_file(&link);
    if let Err(e) = std::os::unix::fs::symlink(Target::Bashrc.path(c), &link) {
        return Outcome::Error(format!(
            "cannot make a symlink in the workspace: {}",
            errno_text(&e)
        ));
    }
    append_file(&link)
}

/// A positive control: failing is an error (the sandbox would be unusable).
pub(super) fn write_must_work(path: &Path) -> Outcome {
    let text = b"aq verify control\n";
    let result = std::fs::write(path, text).and_then(|()| std::fs::read(path));
    let _ = std::fs::remove_file(path);
    match result {
        Ok(back) if back == text => {
            Outcome::Held(format!("wrote and read back {} bytes", text.len()))
        }
        Ok(_) => Outcome::Error("read back something else than was written".to_string()),
        Err(e) => Outcome::Error(format!(
            "{}: {} (a sandbox that cannot write here is unusable)",
            path.display(),
            errno_text(&e)
        )),
    }
}
