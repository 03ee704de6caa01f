//! The environment shims pass on: secrets that commands do not need are
//! removed by name; the user can let named variables through.

use std::ffi::{OsStr, OsString};

/// Whether a variable name looks like it holds a secret (the rules' own
/// definition, so what is scrubbed and what counts as printing a secret agree).
pub use aq_knowledge::secret_names::is_secret_env_name as is_secret_name;

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
