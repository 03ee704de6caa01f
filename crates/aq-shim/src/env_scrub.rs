//! The environment shims pass on: secrets that commands do not need are
//! removed by name; the user can let named variables through.

use std::ffi::{OsStr, OsString};

/// Whether a variable name looks like it holds a secret: tokens, keys,
/// passwords, cloud credentials.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const SAFE: &[&str] = &[
        "SSH_AUTH_SOCK",
        "GPG_TTY",
        "GPG_AGENT_INFO",
        "KEYMAP",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_CONFIG_FILE",
        "GITHUB_WORKSPACE",
        "GITHUB_REF",
        "GITHUB_SHA",
        "GITHUB_ACTIONS",
        "GITHUB_RUN_ID",
        "GITHUB_REPOSITORY",
        "GITHUB_EVENT_NAME",
        "GITHUB_ACTOR",
        "GITHUB_SERVER_URL",
        "GITHUB_API_URL",
    ];
    if SAFE.contains(&n.as_str()) {
        return false;
    }
    n.ends_with("_TOKEN")
        || n.ends_with("_KEY")
        || n.ends_with("_PAT")
        || n.ends_with("APIKEY")
        || n.ends_with("_AUTH")
        || n.contains("SECRET")
        || n.contains("PASSWORD")
        || n.contains("PASSWD")
        || n.contains("CREDENTIAL")
        || n.starts_with("AWS_")
        || n.starts_with("GITHUB_")
        || n.starts_with("OPENAI_")
        || n.starts_with("ANTHROPIC_")
        || n.starts_with("AZURE_")
        || matches!(
            n.as_str(),
            "TOKEN"
                | "HF_TOKEN"
                | "CARGO_REGISTRY_TOKEN"
                | "NPM_TOKEN"
                | "GH_TOKEN"
                | "GITLAB_TOKEN"
                | "DATABASE_URL"
                | "PGPASSWORD"
        )
}

/// Splits an environment into what is passed on and the names removed.
/// `keep` lists names that pass even though they look secret.
pub fn scrub_env<I>(env: I, keep: &[String]) -> (Vec<(OsString, OsString)>, Vec<String>)
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut passed = Vec::new();
    let mut removed = Vec::new();
    for (k, v) in env {
        let name = k.to_string_lossy();
        if is_secret_name(&name) && !keep.iter().any(|n| n.as_str() == name) {
            removed.push(name.into_owned());
        } else {
            passed.push((k, v));
        }
    }
    (passed, removed)
}

/// Whether a variable is one the shims themselves use.
pub fn is_session_var(name: &OsStr) -> bool {
    name.to_string_lossy().starts_with("AQ_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_removed_and_pass_through_works() {
        let env = [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "HOME",
            "PATH",
            "MY_PASSWORD",
            "SSH_AUTH_SOCK",
            "HF_TOKEN",
            "CARGO_REGISTRY_TOKEN",
        ]
        .iter()
        .map(|k| (OsString::from(k), OsString::from("x")));
        let (passed, removed) = scrub_env(env, &["OPENAI_API_KEY".to_string()]);
        let passed: Vec<String> = passed
            .into_iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(passed, ["OPENAI_API_KEY", "HOME", "PATH", "SSH_AUTH_SOCK"]);
        assert_eq!(
            removed,
            [
                "GITHUB_TOKEN",
                "AWS_SECRET_ACCESS_KEY",
                "MY_PASSWORD",
                "HF_TOKEN",
                "CARGO_REGISTRY_TOKEN"
            ]
        );
    }
}
