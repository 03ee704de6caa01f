//! Which names hold a secret value: one algorithm over one table
//! (`secret_names.toml`, compiled by `build.rs`).
//!
//! [`is_secret_name`] answers for any name (a variable, a flag, a JSON or
//! config key): the audit log redacts such values, preflight reports them.
//! [`is_secret_env_name`] is the same question for a variable in a command's
//! environment, where a vendor's whole family (`AWS_*`, `GITHUB_*`) is kept
//! out too, since its identifiers travel with its keys.

include!(concat!(env!("OUT_DIR"), "/secret_names.rs"));

/// Whether a variable, flag or field name holds a secret value: it has a
/// word like `token`, `secret`, `password`, `credential`, `apikey`, or ends
/// in `_key`, `_pass`, `_pwd`, `_auth`, `_pat`; but not when it names where
/// a secret is (`*_file`, `*_path`, `*_url`, `*_stdin`, `*_id`, …), a switch
/// (`no_*`) or an amount (`max_*`). Dashes, dots and camelCase count as
/// word breaks: `--api-key`, `apiKey`, `spring.datasource.password`.
pub fn is_secret_name(name: &str) -> bool {
    let words = split_words(name);
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    // `REDIS_URL`, `MONGODB_URI`: a data store's address, password and all.
    if words.len() > 1
        && WORDS_CONNECTION.contains(&last.as_str())
        && words.iter().any(|w| WORDS_STORES.contains(&w.as_str()))
    {
        return true;
    }
    if WORDS_FIRST_NOT.contains(&first.as_str()) || WORDS_LAST_NOT.contains(&last.as_str()) {
        return false;
    }
    let many = words.len() > 1;
    words.iter().any(|word| {
        WORDS_SECRET.contains(&word.as_str())
            || WORDS_SUBSTRINGS.iter().any(|part| word.contains(part))
    }) || (many && WORDS_LAST.contains(&last.as_str()))
        || (!many && WORDS_ALONE.contains(&last.as_str()))
}

/// Whether an environment variable holds a secret and must not reach a
/// command: [`is_secret_name`], the whole names the table lists, and the
/// vendor families, less the names that only look secret (`SSH_AUTH_SOCK`,
/// `AWS_REGION`, `GITHUB_SHA`).
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if ENVIRONMENT_NOT_SECRET.contains(&upper.as_str()) {
        return false;
    }
    ENVIRONMENT_SECRET.contains(&upper.as_str())
        || is_secret_name(name)
        || ENVIRONMENT_FAMILIES.iter().any(|f| upper.starts_with(f))
}

/// Lowercase words of a name, split at `-`, `_`, `.` and camelCase humps.
fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '-' || c == '_' || c == '.' {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_hold_secrets() {
        for name in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "api-key",
            "apiKey",
            "PGPASSWORD",
            "db.password",
            "client_secret",
            "clientSecret",
            "_authToken",
            "_auth",
            "DB_PASS",
            "MYSQL_PWD",
            "GITLAB_PAT",
            "cookie",
            "REDIS_URL",
            "MONGODB_URI",
            "AMQP_URL",
            "CELERY_BROKER_URL",
            "database_url",
            "PG_DSN",
        ] {
            assert!(is_secret_name(name), "{name} should be secret");
            assert!(
                is_secret_env_name(name),
                "{name} should be a secret variable"
            );
        }
    }

    #[test]
    fn names_that_point_at_or_describe_a_secret() {
        for name in [
            "token-file",
            "PASSWORD_FILE",
            "password-stdin",
            "token_url",
            "max-tokens",
            "no-password",
            "key",
            "KEYBOARD",
            "monkey",
            "PWD",
            "OLDPWD",
            "auth-type",
            "passenger",
            "API_URL",
            "REDIS_HOST",
            "redis-url-file",
            "",
            "--",
        ] {
            assert!(!is_secret_name(name), "{name} should not be secret");
            assert!(
                !is_secret_env_name(name),
                "{name} should not be a secret variable"
            );
        }
    }

    #[test]
    fn a_vendor_family_is_secret_in_the_environment_only() {
        for name in ["AWS_ACCESS_KEY_ID", "GITHUB_APP_ID", "ANTHROPIC_BASE_URL"] {
            assert!(is_secret_env_name(name), "{name}");
            assert!(
                !is_secret_name(name),
                "{name} is redacted only by its words"
            );
        }
        for name in [
            "SSH_AUTH_SOCK",
            "AWS_REGION",
            "GITHUB_SHA",
            "HOME",
            "PATH",
            "TERM",
        ] {
            assert!(!is_secret_env_name(name), "{name}");
        }
    }
}
