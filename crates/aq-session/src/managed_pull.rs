//! `aq policy pull` and `aq policy status`: a managed policy fetched from a
//! team's source, verified, and installed so that a bad bundle changes
//! nothing.
//!
//! A bundle is a managed policy file (`managed.toml`) and its detached
//! minisign signature (`managed.toml.minisig`). It is installed only when:
//! the signature verifies against the public key pinned in the managed file
//! in force (`[managed] public-key`; for the first install, `--key`), it
//! parses as a managed file, and its `[managed] serial` is higher than the
//! installed one (no rollback to an older policy). Then it replaces the
//! managed file by a rename in its directory, and a status record beside it
//! says where it came from. Anything else leaves the installed file as it
//! was and says why.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

pub use crate::error::{BundleRefusal, FetchError, ManagedPullError, SourceError, VerifyError};

/// Where a bundle comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `https://…/managed.toml` (and `…/managed.toml.minisig`).
    Url(String),
    /// A git repository (`git+https://…`, `git+file://…`, or a path ending in
    /// `.git`): its `managed.toml` and `managed.toml.minisig` at the top.
    Git(String),
    /// A local file (`/srv/policy/managed.toml`, `file:///…`).
    File(PathBuf),
}

impl Source {
    /// Reads how a source is written.
    pub fn parse(s: &str) -> Result<Source, SourceError> {
        if let Some(repo) = s.strip_prefix("git+") {
            return Ok(Source::Git(repo.to_string()));
        }
        if s.starts_with("https://") {
            return Ok(Source::Url(s.to_string()));
        }
        if s.starts_with("http://") {
            // The signature keeps the content honest, not its age: over
            // plain HTTP anyone on the way could keep serving an old bundle.
            return Err(SourceError::PlainHttp {
                text: s.to_string(),
            });
        }
        if let Some(p) = s.strip_prefix("file://") {
            return Ok(Source::File(PathBuf::from(p)));
        }
        if s.trim_end_matches('/').ends_with(".git") {
            return Ok(Source::Git(s.to_string()));
        }
        if s.starts_with('/') {
            return Ok(Source::File(PathBuf::from(s)));
        }
        Err(SourceError::NotASource {
            text: s.to_string(),
        })
    }
}

/// What the status record beside the managed file says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The source it was pulled from.
    pub source: String,
    /// Its `[managed] serial`.
    pub serial: u64,
    /// The public key its signature verified with.
    pub signer: String,
    /// The signature's trusted comment.
    pub comment: String,
    /// When it was installed (seconds since the epoch).
    pub installed_unix: u64,
    /// SHA-256 of the installed file.
    pub sha256: String,
}

/// The status record of the managed file at `managed`.
pub(crate) fn status_path(managed: &Path) -> PathBuf {
    managed.with_extension("status.json")
}

/// Reads the status record, if a pull wrote one.
pub fn read_status(managed: &Path) -> Result<Option<Status>, ManagedPullError> {
    match std::fs::read(status_path(managed)) {
        Ok(b) => {
            serde_json::from_slice(&b)
                .map(Some)
                .map_err(|source| ManagedPullError::StatusNotJson {
                    path: status_path(managed),
                    source,
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ManagedPullError::ReadStatus {
            path: status_path(managed),
            source,
        }),
    }
}

/// What a pull did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pulled {
    /// A new bundle is installed.
    Installed(Status),
    /// The source holds the serial already installed.
    Current(u64),
}

/// Fetches, verifies and installs a bundle over the managed file at
/// `managed`. `key` is the public key for a first install (ignored, and
/// refused when it differs, once a managed file pins one).
pub fn pull(
    managed: &Path,
    source: Option<&str>,
    key: Option<&str>,
) -> Result<Pulled, ManagedPullError> {
    let installed =
        crate::policy_files::read_managed(managed).map_err(ManagedPullError::Managed)?;
    let installed_settings = installed
        .as_ref()
        .and_then(|(_, l)| l.managed.as_ref().map(|(s, _)| s.clone()));
    let pinned = installed_settings
        .as_ref()
        .and_then(|s| s.public_key.clone());
    let key = match (&pinned, key) {
        (Some(p), Some(k)) if p != k => {
            return Err(ManagedPullError::KeyDiffers {
                managed: managed.to_path_buf(),
            });
        }
        (Some(p), _) => p.clone(),
        (None, Some(k)) => k.to_string(),
        (None, None) => {
            return Err(ManagedPullError::NoKey {
                managed: managed.to_path_buf(),
            });
        }
    };
    let source_text = match source {
        Some(s) => s.to_string(),
        None => installed_settings
            .as_ref()
            .and_then(|s| s.source.clone())
            .ok_or_else(|| ManagedPullError::NoSource {
                managed: managed.to_path_buf(),
            })?,
    };
    let src = Source::parse(&source_text).map_err(ManagedPullError::Source)?;
    let (bundle, sig) = fetch(&src).map_err(BundleRefusal::Fetch)?;
    let comment = verify(&bundle, &sig, &key).map_err(BundleRefusal::Verify)?;
    let text = String::from_utf8(bundle.clone()).map_err(|_| BundleRefusal::NotUtf8)?;
    let layer = aq_policy::parse_layer(&source_text, &text)
        .map_err(|e| BundleRefusal::Parse(Box::new(e)))?;
    let new_settings = layer
        .managed
        .as_ref()
        .map(|(s, _)| s.clone())
        .ok_or(BundleRefusal::NoManagedTable)?;
    let serial = new_settings.serial.ok_or(BundleRefusal::NoSerial)?;
    if new_settings.public_key.is_none() {
        return Err(BundleRefusal::NoPublicKey.into());
    }
    if let Some(old) = installed_settings.as_ref().and_then(|s| s.serial) {
        if serial == old {
            return Ok(Pulled::Current(serial));
        }
        if serial < old {
            return Err(BundleRefusal::Rollback {
                serial,
                installed: old,
            }
            .into());
        }
    }
    install(managed, &bundle)?;
    let status = Status {
        source: source_text,
        serial,
        signer: key,
        comment,
        installed_unix: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        sha256: crate::policy_files::digest(&bundle),
    };
    let json = serde_json::to_vec_pretty(&status).map_err(ManagedPullError::EncodeStatus)?;
    write_atomic(&status_path(managed), &json)?;
    Ok(Pulled::Installed(status))
}

/// Checks `sig` (a minisign signature file's text) over `bundle` with the
/// public key `key` (its base64 line); returns the trusted comment.
pub fn verify(bundle: &[u8], sig: &[u8], key: &str) -> Result<String, VerifyError> {
    let pk = minisign_verify::PublicKey::from_base64(key.trim()).map_err(VerifyError::Key)?;
    let sig_text = std::str::from_utf8(sig).map_err(|_| VerifyError::SignatureNotText)?;
    let sig = minisign_verify::Signature::decode(sig_text).map_err(VerifyError::Signature)?;
    pk.verify(bundle, &sig, false)
        .map_err(VerifyError::Mismatch)?;
    Ok(sig.trusted_comment().to_string())
}

fn fetch(src: &Source) -> Result<(Vec<u8>, Vec<u8>), FetchError> {
    match src {
        Source::File(p) => {
            let sig = PathBuf::from(format!("{}.minisig", p.display()));
            Ok((read(p)?, read(&sig)?))
        }
        Source::Url(u) => Ok((get(u)?, get(&format!("{u}.minisig"))?)),
        Source::Git(repo) => {
            let dir = std::env::temp_dir().join(format!(
                "aq-policy-pull-{}-{}",
                std::process::id(),
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            ));
            let out = std::process::Command::new("git")
                .args(["clone", "--quiet", "--depth", "1", "--", repo])
                .arg(&dir)
                .env("GIT_TERMINAL_PROMPT", "0")
                .output()
                .map_err(FetchError::Git)?;
            let got = if out.status.success() {
                let f = dir.join("managed.toml");
                read(&f).and_then(|b| Ok((b, read(&dir.join("managed.toml.minisig"))?)))
            } else {
                Err(FetchError::Clone {
                    repo: repo.clone(),
                    stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                })
            };
            let _ = std::fs::remove_dir_all(&dir);
            got
        }
    }
}

fn read(p: &Path) -> Result<Vec<u8>, FetchError> {
    use std::io::Read as _;
    let cannot_read = |source| FetchError::Read {
        path: p.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(p).map_err(cannot_read)?;
    let mut bytes = Vec::new();
    f.take(MAX_BUNDLE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_BUNDLE {
        return Err(FetchError::TooLarge {
            path: p.to_path_buf(),
            max: MAX_BUNDLE,
        });
    }
    Ok(bytes)
}

/// A bundle is small: more than this is not one.
const MAX_BUNDLE: u64 = 1 << 20;

fn get(url: &str) -> Result<Vec<u8>, FetchError> {
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(30)))
        .build()
        .new_agent();
    let mut resp = agent.get(url).call().map_err(|e| FetchError::Get {
        url: url.to_string(),
        source: Box::new(e),
    })?;
    resp.body_mut()
        .with_config()
        .limit(MAX_BUNDLE)
        .read_to_vec()
        .map_err(|e| FetchError::ReadBody {
            url: url.to_string(),
            source: Box::new(e),
        })
}

fn install(managed: &Path, bundle: &[u8]) -> Result<(), ManagedPullError> {
    write_atomic(managed, bundle)?;
    // What was written is what a session reads: same checks, same parse.
    crate::policy_files::read_managed(managed).map_err(ManagedPullError::Managed)?;
    Ok(())
}

/// Writes through a temporary file in the same directory, synced, then a
/// rename: a reader sees the old file or the new one, never a part.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ManagedPullError> {
    use std::io::Write as _;
    let dir = path.parent().ok_or_else(|| ManagedPullError::NoDirectory {
        path: path.to_path_buf(),
    })?;
    std::fs::create_dir_all(dir).map_err(|source| ManagedPullError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("managed"),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        ManagedPullError::Install {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// How long ago, in words (`3 h`, `2 d`).
pub fn age(installed_unix: u64) -> String {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let s = now.saturating_sub(installed_unix);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86400 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_read_by_their_form() {
        assert_eq!(
            Source::parse("https://example.invalid/managed.toml").unwrap(),
            Source::Url("https://example.invalid/managed.toml".into())
        );
        assert_eq!(
            Source::parse("git+https://example.invalid/policy").unwrap(),
            Source::Git("https://example.invalid/policy".into())
        );
        assert_eq!(
            Source::parse("/srv/team/policy.git").unwrap(),
            Source::Git("/srv/team/policy.git".into())
        );
        assert_eq!(
            Source::parse("file:///srv/managed.toml").unwrap(),
            Source::File("/srv/managed.toml".into())
        );
        assert!(Source::parse("managed.toml").is_err());
    }

    #[test]
    fn a_signature_that_does_not_parse_is_refused() {
        let key = "RWRQnnHq5jLBN4IkakQeTERPtnWH1QavFeptm9JFxJ02kTV8D/hXoGbp";
        assert!(verify(b"x", b"not a signature", key).is_err());
        assert!(verify(b"x", b"x", "not a key").is_err());
    }
}
