//! The environment shims pass on: secrets that commands do not need are
//! removed by name; the user can let named variables through.

use std::ffi::OsStr;

/// Whether a variable name looks like it holds a secret (the rules' own
/// definition, so what is scrubbed and what counts as printing a secret agree).
pub use aq_knowledge::secret_names::is_secret_env_name as is_secret_name;

/// Which of a shim's variable `names` to remove before the program runs:
/// those that look secret, less the names in `keep` (the policy's
/// `env_pass`). The supervisor answers this; the shim only removes.
pub fn to_remove<'a>(names: impl IntoIterator<Item = &'a str>, keep: &[String]) -> Vec<&'a str> {
    names
        .into_iter()
        .filter(|name| is_secret_name(name) && !keep.iter().any(|k| k == name))
        .collect()
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
        ];
        assert_eq!(
            to_remove(env, &["OPENAI_API_KEY".to_string()]),
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
