//! Which environment variable names hold secrets. One definition, used by
//! the rules (printing `$AWS_SECRET_ACCESS_KEY` is a secret read) and by the
//! shims (such variables are removed from what commands get).

/// Names that look secret but are not (sockets, regions, CI metadata).
const NOT_SECRET: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_TTY",
    "GPG_AGENT_INFO",
    "KEYBOARD",
    "KEYMAP",
    "XKB_DEFAULT_LAYOUT",
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

/// Whether a variable name looks like it holds a secret: tokens, keys,
/// passwords, credentials, cloud and model-provider variables.
pub fn is_secret_env_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&n.as_str()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised() {
        for n in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "HF_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "MY_PASSWORD",
            "ANTHROPIC_API_KEY",
            "db_password",
        ] {
            assert!(is_secret_env_name(n), "{n}");
        }
        for n in [
            "HOME",
            "PATH",
            "SSH_AUTH_SOCK",
            "AWS_REGION",
            "GITHUB_SHA",
            "KEYMAP",
            "TERM",
        ] {
            assert!(!is_secret_env_name(n), "{n}");
        }
    }
}
