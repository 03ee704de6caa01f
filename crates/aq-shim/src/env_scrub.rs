//! The environment shims pass on: secrets that commands do not need are
//! removed by name; the user can let named variables through.

use std::ffi::OsStr;

/// Whether a variable name looks like it holds a secret (the rules' own
/// definition, so what is scrubbed and what counts as printing a secret agree).
pub use aq_knowledge::secret_names::is_secret_env_name as is_secret_name;

/// Whether a shim removes the variable `name` before the program runs: it
/// looks secret and is not in `keep` (the policy's `env_pass`). The
/// supervisor answers this for each name a shim sends; the shim only removes.
pub fn removes(name: &str, keep: &[String]) -> bool {
    is_secret_name(name) && !keep.iter().any(|k| k == name)
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
        let removed: Vec<&str> = env
            .into_iter()
            .filter(|n| removes(n, &["OPENAI_API_KEY".to_string()]))
            .collect();
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
