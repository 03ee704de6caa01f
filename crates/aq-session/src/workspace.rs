//! Which directory a session may be given as its workspace, and what of
//! aq's own stays read-only whatever the workspace.
//!
//! A session writes anywhere in its workspace. When `aq run` starts where
//! there is no git repository it takes the current directory; started in
//! the home directory, that used to be the whole home: the shell's startup
//! files, every other project, aq's own policy, and the session's own
//! approval queue and log (a refused command approved itself by appending to
//! it). So a workspace that is the home, holds it, or holds aq's state or
//! configuration (or lies inside them) is refused with what to do instead.
//! And since a profile may make other places writable (`dev`'s `/tmp`, a
//! user's own `writable`), aq's state and configuration are bound
//! read-only in the sandbox wherever a writable path holds them.

use std::path::{Path, PathBuf};

pub use crate::error::WorkspaceError;

/// aq's own places, which no session may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protected {
    /// What it is, for messages ("aq's session state").
    pub what: &'static str,
    /// Where it is (canonical when it exists).
    pub path: PathBuf,
}

/// aq's state directory and its configuration directory, as they are
/// found for this user (canonical where they exist).
pub(crate) fn protected_places() -> Vec<Protected> {
    let canonical = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    let mut out = Vec::new();
    if let Ok(state) = crate::state_root() {
        out.push(Protected {
            what: "aq's session state (logs, approvals)",
            path: canonical(state),
        });
    }
    if let Some(config) = crate::policy_files::config_dir() {
        out.push(Protected {
            what: "aq's configuration (your policy)",
            path: canonical(config),
        });
    }
    out
}

/// Why `workspace` cannot be a session's workspace, if it cannot: it is
/// the home directory `home`, holds it, holds one of `protected` or lies
/// inside one. Paths are compared as given (canonicalize them first).
pub fn check(
    workspace: &Path,
    home: Option<&Path>,
    protected: &[Protected],
) -> Result<(), WorkspaceError> {
    if let Some(home) = home {
        if workspace == home {
            return Err(WorkspaceError::IsHome {
                workspace: workspace.to_path_buf(),
            });
        }
        if home.starts_with(workspace) {
            return Err(WorkspaceError::HoldsHome {
                workspace: workspace.to_path_buf(),
                home: home.to_path_buf(),
            });
        }
    }
    for p in protected {
        if p.path.starts_with(workspace) {
            return Err(WorkspaceError::HoldsProtected {
                workspace: workspace.to_path_buf(),
                what: p.what,
                path: p.path.clone(),
            });
        }
        if workspace.starts_with(&p.path) {
            return Err(WorkspaceError::InsideProtected {
                workspace: workspace.to_path_buf(),
                what: p.what,
                path: p.path.clone(),
            });
        }
    }
    Ok(())
}

/// Which of `protected` a writable path of the sandbox holds (so they are
/// bound read-only over it), with the writable paths that lie inside them
/// and must stay writable (the session's own `TMPDIR`).
pub(crate) fn to_keep_read_only<'a>(
    writable: &[PathBuf],
    protected: &'a [Protected],
) -> Vec<&'a Protected> {
    protected
        .iter()
        .filter(|p| writable.iter().any(|w| p.path.starts_with(w)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected() -> Vec<Protected> {
        vec![
            Protected {
                what: "aq's session state (logs, approvals)",
                path: "/home/u/.local/state/agent-quarantine".into(),
            },
            Protected {
                what: "aq's configuration (your policy)",
                path: "/home/u/.config/agent-quarantine".into(),
            },
        ]
    }

    #[test]
    fn the_home_and_what_holds_it_or_aqs_own_places_are_refused() {
        let home = Some(Path::new("/home/u"));
        let p = protected();
        for bad in [
            "/home/u",
            "/home",
            "/",
            "/home/u/.local",
            "/home/u/.config",
            "/home/u/.local/state/agent-quarantine",
            "/home/u/.local/state/agent-quarantine/sessions/x",
            "/home/u/.config/agent-quarantine/sub",
        ] {
            let err = check(Path::new(bad), home, &p).unwrap_err().to_string();
            assert!(err.contains("--workspace DIR"), "{bad}: {err}");
        }
        let home_err = check(Path::new("/home/u"), home, &p)
            .unwrap_err()
            .to_string();
        assert!(home_err.contains("your home directory"), "{home_err}");
        for good in [
            "/home/u/src/app",
            "/srv/build",
            "/home/u/.local/share/x",
            "/tmp/w",
        ] {
            assert_eq!(check(Path::new(good), home, &p), Ok(()), "{good}");
        }
        // No home known: only aq's own places matter.
        assert_eq!(check(Path::new("/home/u"), None, &[]), Ok(()));
    }

    #[test]
    fn a_writable_path_that_holds_aqs_state_keeps_it_read_only() {
        let p = protected();
        let w = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert!(to_keep_read_only(&w(&["/tmp", "/home/u/.cache"]), &p).is_empty());
        let got = to_keep_read_only(&w(&["/home/u/.local", "/dev/null"]), &p);
        assert_eq!(got, vec![&p[0]]);
        assert_eq!(to_keep_read_only(&w(&["/"]), &p).len(), 2);
        // Inside it (the session's TMPDIR) holds nothing of it.
        assert!(
            to_keep_read_only(
                &w(&["/home/u/.local/state/agent-quarantine/sessions/x/tmp"]),
                &p
            )
            .is_empty()
        );
    }
}
