//! One-line changes to the user's own policy file: `aq allow`, `aq deny`,
//! and the "always" answer to a network ask. The file is backed up
//! (`policy.toml.bak`), the new text checked as a policy before it is
//! written, and written whole with a rename, so a failure leaves the old
//! file. Only ever the user's file: a repository's is never written.

use std::io::Write;
use std::path::{Path, PathBuf};

use aq_policy::grants::{self, Change, Grant};

pub use crate::error::UserGrantError;
use crate::grant_dates::GrantDates;

/// What [`apply`] did.
#[derive(Debug)]
pub struct Applied {
    /// The change (or why none was needed).
    pub change: Change,
    /// The user's policy file.
    pub file: PathBuf,
    /// The copy of the file before, when there was one and it changed.
    pub backup: Option<PathBuf>,
}

/// Makes `grant` in the user's policy file (or takes it back with
/// `remove`), dated for `aq policy show`.
pub fn apply(grant: &Grant, remove: bool) -> Result<Applied, UserGrantError> {
    let file = crate::policy_files::user_file().ok_or(UserGrantError::NoPolicyFile)?;
    let before = match std::fs::read_to_string(&file) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(UserGrantError::Read { path: file, source }),
    };
    let (after, change) = grants::edit(before.as_deref().unwrap_or(""), grant, remove)
        .map_err(UserGrantError::Edit)?;
    if matches!(change, Change::AlreadyThere(_) | Change::NotThere(_)) {
        return Ok(Applied {
            change,
            file,
            backup: None,
        });
    }
    let layer = aq_policy::parse_layer(&file.display().to_string(), &after)
        .map_err(|e| UserGrantError::Invalid(Box::new(e)))?;
    // Under a managed policy, a grant it would refuse is not written: the
    // refusal names the managed key, now rather than at every session.
    if !remove
        && let Some(path) = crate::policy_files::managed_file()
        && let Some((_, managed)) =
            crate::policy_files::read_managed(&path).map_err(UserGrantError::Managed)?
    {
        let (eff, refused) =
            aq_policy::managed::combine(Some(&managed), &[(&layer, aq_policy::Trust::Full)])
                .map_err(|e| UserGrantError::Combine(Box::new(e)))?;
        if let aq_policy::grants::Target::Net(host) = &grant.target {
            aq_policy::managed::check_host(&eff, host.as_str())
                .map_err(UserGrantError::HostRefused)?;
        }
        let (_, entry) = grants::place(grant);
        if let Some(r) = refused
            .into_iter()
            .find(|r| r.entry.contains(entry.as_str()))
        {
            return Err(UserGrantError::Refused(Box::new(r)));
        }
    }
    let backup = write_with_backup(&file, before.as_deref(), &after)?;
    let (place, entry) = grants::place(grant);
    let dated = GrantDates::load().and_then(|mut dates| {
        match &change {
            Change::Added(_) => dates.record(&place, &entry, crate::now_rfc3339()),
            _ => dates.forget(&place, &entry),
        }
        dates.save()
    });
    if let Err(e) = dated {
        eprintln!("aq: warning: the grant was made, but not its date: {e}");
    }
    Ok(Applied {
        change,
        file,
        backup,
    })
}

/// Writes `text` over `file` through a temporary file and a rename, after
/// copying the old text to `FILE.bak`. Returns the backup's path.
fn write_with_backup(
    file: &Path,
    before: Option<&str>,
    text: &str,
) -> Result<Option<PathBuf>, UserGrantError> {
    let dir = file.parent().ok_or_else(|| UserGrantError::NoDirectory {
        path: file.to_path_buf(),
    })?;
    std::fs::create_dir_all(dir).map_err(|source| UserGrantError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let backup = match before {
        Some(old) => {
            let b = file.with_extension("toml.bak");
            std::fs::write(&b, old).map_err(|source| UserGrantError::Write {
                path: b.clone(),
                source,
            })?;
            Some(b)
        }
        None => None,
    };
    let tmp = dir.join(format!(".policy.toml.{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(UserGrantError::Write {
            path: file.to_path_buf(),
            source: e,
        });
    }
    Ok(backup)
}
