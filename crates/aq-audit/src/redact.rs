//! Redaction of secrets in command lines before they are written.
//!
//! A secret value is replaced by [`REDACTED`]; what names it is kept, so a
//! reader still sees *that* a token was passed and where:
//!
//! | input                                   | written                                   |
//! |-----------------------------------------|-------------------------------------------|
//! | `-H 'Authorization: Bearer abc123…'`    | `Authorization: Bearer [REDACTED]`        |
//! | `Cookie: sid=…` / `X-Api-Key: …`        | `Cookie: [REDACTED]`                      |
//! | `https://user:pw@host/`                 | `https://user:[REDACTED]@host/`           |
//! | `https://h/x?token=…&sig=…`             | `https://h/x?token=[REDACTED]&sig=[REDACTED]` |
//! | `GITHUB_TOKEN=…`, `--password=…`, `--api-key …` | `GITHUB_TOKEN=[REDACTED]`, …       |
//! | `{"password": "…"}` (e.g. `curl -d`)    | `{"password": "[REDACTED]"}`              |
//! | `ghp_…`, `glpat-…`, `xoxb-…`, `AKIA…`, `sk-…`, `sk-ant-…`, `AIza…`, `sk_live_…`, `npm_…`, `pypi-…`, JWTs | the prefix + `[REDACTED]` |
//! | `curl -u user:pw`                       | `curl -u user:[REDACTED]`                 |
//! | `openssl … -passin pass:pw`             | `pass:[REDACTED]`                         |
//! | a `-----BEGIN … PRIVATE KEY-----` block | the markers around `[REDACTED]`           |
//!
//! Decisions on near misses (tested below):
//! - A value that is only a variable reference (`$TOKEN`, `${TOKEN}`) is not a
//!   secret and is kept: it tells the reader which variable was used.
//! - A name that points *at* a secret rather than holding it is not secret:
//!   `--token-file path`, `--password-stdin`, `PASSWORD_FILE=…`, `--token-url`,
//!   `--auth-type basic`; nor are counters like `--max-tokens 4096` (the word
//!   must be `token`, not `tokens`) or `--no-password` (a switch).
//! - `sk-learn`, `git log -p`, `Basic Authentication`, `https://host:8080/`
//!   stay as they are.
//! - `-p<password>` (mysql) is not recognised: `-p` means too many other things.
//!
//! When unsure the rules lean towards redacting: the cost is a value missing
//! from the log, never a secret in it.
//!
//! Pure: text in, text out. Each pattern is compiled once per process, on
//! the first text that could match it.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What a secret value is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Redacts every argument of a command line: the per-argument rules of
/// [`redact`], plus rules that look at the argument before (`--password
/// VALUE`, `-token VALUE`, `curl -u user:pw`, `curl --user user:pw`).
pub fn redact_argv(argv: &[String]) -> Vec<String> {
    let takes_user_pass = argv.first().is_some_and(|program| {
        let name = program.rsplit('/').next().unwrap_or(program);
        USER_PASS_PROGRAMS.contains(&name)
    });
    let mut out = Vec::with_capacity(argv.len());
    let mut next = NextArg::Plain;
    for arg in argv {
        let redacted = match next {
            NextArg::Secret if !arg.starts_with("--") && !is_reference(arg) => REDACTED.to_string(),
            NextArg::UserPass => redact_user_pass(arg),
            NextArg::Script => redact(arg),
            _ => redact_arg(arg),
        };
        next = classify_flag(arg, takes_user_pass);
        out.push(redacted);
    }
    out
}

/// Redacts secrets in free text: one argument, a `sh -c` script, a `why`.
///
/// Runs the redaction rules in order; a rule whose cheap trigger (a substring
/// check) does not fire is skipped and its pattern never compiled, so a
/// plain `git status` costs no regex compilation in a fresh shim process.
pub fn redact(text: &str) -> String {
    // Fast path for the common short plain word: every rule needs one of
    // these characters or at least 15 characters.
    if text.len() < 15 && !text.contains(['=', ':', '@', ' ', '\t', '\n']) {
        return text.to_string();
    }
    let mut text = Cow::Borrowed(text);
    for rule in &RULES {
        if (rule.applies)(&text) {
            replace(&mut text, &rule.regex, rule.replace);
        }
    }
    text.into_owned()
}

/// Replaces every match of `re` in `text` by `f`, allocating only on a match.
fn replace(text: &mut Cow<'_, str>, re: &Regex, f: fn(&Captures) -> String) {
    let changed = match re.replace_all(text, f) {
        Cow::Owned(changed) => Some(changed),
        Cow::Borrowed(_) => None,
    };
    if let Some(changed) = changed {
        *text = Cow::Owned(changed);
    }
}

pub use aq_knowledge::secret_names::is_secret_name;

/// Programs whose `-u`/`--user`/`-U`/`--proxy-user`/`-a`/`--auth` take
/// `user:password`.
const USER_PASS_PROGRAMS: &[&str] = &["curl", "wget", "http", "https", "xh", "xhs"];

/// What the argument after a flag is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NextArg {
    Plain,
    /// The value of a flag with a secret name: redacted whole.
    Secret,
    /// `user:password`: the part after the first `:` is redacted.
    UserPass,
    /// The operand of `-c` (`sh -c`, `bash -lc`, `python -c`): a script, so
    /// `NAME=value` in it ends at whitespace.
    Script,
}

fn classify_flag(arg: &str, takes_user_pass: bool) -> NextArg {
    if !arg.starts_with('-') || arg.contains('=') {
        return NextArg::Plain;
    }
    if takes_user_pass && ["-u", "--user", "-U", "--proxy-user", "-a", "--auth"].contains(&arg) {
        return NextArg::UserPass;
    }
    if is_script_flag(arg) {
        return NextArg::Script;
    }
    let name = arg.trim_start_matches('-');
    // Single-letter switches (`-p`) are too ambiguous to judge.
    if name.len() > 1 && is_secret_name(name) {
        NextArg::Secret
    } else {
        NextArg::Plain
    }
}

/// `-c`, or a cluster of short switches ending in `c` (`-lc`, `-ec`).
fn is_script_flag(arg: &str) -> bool {
    arg.strip_prefix('-').is_some_and(|flags| {
        !flags.starts_with('-')
            && flags.len() <= 3
            && flags.ends_with('c')
            && flags.bytes().all(|b| b.is_ascii_alphabetic())
    })
}

/// One argument on its own: `NAME=value` and `--name=value` with a secret
/// name lose their whole value (it may hold spaces or `;`), the rest goes
/// through [`redact`].
fn redact_arg(arg: &str) -> String {
    if let Some((name, value)) = arg.split_once('=') {
        let bare = name.trim_start_matches('-');
        let is_name = !bare.is_empty()
            && bare
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if is_name && is_secret_name(bare) {
            if value.is_empty() || is_reference(value) {
                return arg.to_string();
            }
            return format!("{name}={REDACTED}");
        }
    }
    redact(arg)
}

fn redact_user_pass(arg: &str) -> String {
    match arg.split_once(':') {
        Some((user, pass)) if !pass.is_empty() && !is_reference(pass) => {
            format!("{user}:{REDACTED}")
        }
        Some(_) => arg.to_string(),
        None => redact(arg),
    }
}

/// `name=value` inside free text; quotes around the value are kept.
fn redact_assignment(name: &str, value: &str) -> String {
    let quote = value
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')
        .map(String::from)
        .unwrap_or_default();
    let inner = value
        .strip_prefix(&quote)
        .and_then(|v| v.strip_suffix(&quote))
        .unwrap_or(value);
    if !is_secret_name(name) || inner.is_empty() || is_reference(inner) {
        return format!("{name}={value}");
    }
    format!("{name}={quote}{REDACTED}{quote}")
}

/// `prefix` + [`REDACTED`] + `suffix`, unless the value is a reference.
fn keep_reference(prefix: &str, value: &str, suffix: &str) -> String {
    if is_reference(value) {
        format!("{prefix}{value}{suffix}")
    } else {
        format!("{prefix}{REDACTED}{suffix}")
    }
}

/// `$NAME` or `${NAME}`: names a secret, does not hold it. `[REDACTED]`
/// itself counts too, so redacting twice changes nothing.
fn is_reference(value: &str) -> bool {
    if value == REDACTED {
        return true;
    }
    let Some(rest) = value.strip_prefix('$') else {
        return false;
    };
    let name = rest
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or(rest);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A token after `Bearer`/`Basic` rather than an English word: 8+ characters
/// with a digit, a symbol, or a capital letter past the first.
fn looks_like_token(word: &str) -> bool {
    word.len() >= 8
        && (word
            .bytes()
            .any(|b| b.is_ascii_digit() || b"=+/_.~-".contains(&b))
            || word.bytes().skip(1).any(|b| b.is_ascii_uppercase()))
}

/// One redaction rule: a cheap trigger, a pattern compiled on first use,
/// and what a match becomes.
struct Rule {
    /// A substring test that every match needs; false means skip the rule.
    applies: fn(&str) -> bool,
    regex: LazyLock<Regex>,
    replace: fn(&Captures) -> String,
}

/// Compiles a pattern written in this file; a typo is caught by every test.
fn compile(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(re) => re,
        Err(err) => panic!("redaction pattern {pattern:?} does not compile: {err}"),
    }
}

/// ASCII case-insensitive substring test.
fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Prefixes of the vendor token formats in the `tokens` rule.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "xapp-",
    "AKIA",
    "ASIA",
    "AIza",
    "_live_",
    "_test_",
    "npm_",
    "pypi-",
    "eyJ",
];

/// The rules in the order they run. Order matters: headers before
/// `Bearer`, URL userinfo before tokens (so `https://ghp_…@host` keeps its
/// host either way), `sk-ant-` before `sk-`.
static RULES: [Rule; 12] = [
    // The body of a PEM private key, up to its END marker or the end.
    Rule {
        applies: |t| t.contains("PRIVATE KEY"),
        regex: LazyLock::new(|| {
            compile(
                r"(?s)(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
            )
        }),
        replace: |c| format!("{}{REDACTED}{}", &c[1], &c[2]),
    },
    // `Authorization: Bearer x`, `Proxy-Authorization: Basic x`: keep the
    // scheme. Headers start the text, a word, or a `--header=` value, never
    // inside a URL (`https://x-access-token:…@` is userinfo).
    Rule {
        applies: |t| contains_ci(t, "authorization"),
        regex: LazyLock::new(|| {
            compile(
                r#"(?i)((?:^|[\s"'=,;])(?:proxy-)?authorization\s*:\s*(?:[a-z][a-z0-9_-]*\s+)?)([^\s"']+)"#,
            )
        }),
        replace: |c| keep_reference(&c[1], &c[2], ""),
    },
    // Headers whose whole value is secret, up to a quote or the line's end.
    Rule {
        applies: |t| {
            t.contains(':')
                && ["cookie", "key", "token", "secret", "password", "auth"]
                    .iter()
                    .any(|word| contains_ci(t, word))
        },
        regex: LazyLock::new(|| {
            compile(
                r#"(?i)((?:^|[\s"'=,;])(?:(?:set-)?cookie|(?:x-)?api-?key|private-token|x-[a-z0-9-]*(?:token|secret|password|api-?key|auth))\s*:\s*)([^\r\n"']*[^\s"'])"#,
            )
        }),
        replace: |c| keep_reference(&c[1], &c[2], ""),
    },
    // `scheme://user:password@`: keep the user.
    Rule {
        applies: |t| t.contains("://") && t.contains('@'),
        regex: LazyLock::new(|| {
            compile(r#"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@"'?#]*:)([^/\s@"'?#]+)@"#)
        }),
        replace: |c| keep_reference(&c[1], &c[2], "@"),
    },
    // `"name": "value"` in JSON bodies.
    Rule {
        applies: |t| t.contains('"') && t.contains(':'),
        regex: LazyLock::new(|| {
            compile(r#"(")([A-Za-z_][A-Za-z0-9_.-]*)("\s*:\s*")((?:[^"\\]|\\.)*)""#)
        }),
        replace: |c| {
            if is_secret_name(&c[2]) && !c[4].is_empty() && !is_reference(&c[4]) {
                format!("{}{}{}{REDACTED}\"", &c[1], &c[2], &c[3])
            } else {
                c[0].to_string()
            }
        },
    },
    // `NAME=value`, `--name=value`, `name="value"`, form fields `a=1&password=x`.
    Rule {
        applies: |t| t.contains('='),
        regex: LazyLock::new(|| {
            compile(r#"([A-Za-z_][A-Za-z0-9_.-]*)=("[^"]*"|'[^']*'|[^\s"'&;|]+)"#)
        }),
        replace: |c| redact_assignment(&c[1], &c[2]),
    },
    // Query parameters whose bare name is too generic for `is_secret_name`.
    Rule {
        applies: |t| t.contains('=') && (t.contains('?') || t.contains('&')),
        regex: LazyLock::new(|| {
            compile(
                r#"(?i)([?&](?:key|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)([^&#\s"']+)"#,
            )
        }),
        replace: |c| keep_reference(&c[1], &c[2], ""),
    },
    // openssl's `pass:secret`.
    Rule {
        applies: |t| t.contains("pass:"),
        regex: LazyLock::new(|| compile(r#"(\bpass:)([^\s"']+)"#)),
        replace: |c| keep_reference(&c[1], &c[2], ""),
    },
    // `curl -u user:pw` / `--user user:pw` / `--user=user:pw` inside scripts;
    // only where curl or wget is named, `-u` means other things elsewhere.
    Rule {
        applies: |t| t.contains(':') && (t.contains("curl") || t.contains("wget")),
        regex: LazyLock::new(|| {
            compile(r#"((?:^|\s)(?:-u|-U|--user|--proxy-user)(?:\s+|=)?["']?[^\s:"']+:)([^\s"']+)"#)
        }),
        replace: |c| keep_reference(&c[1], &c[2], ""),
    },
    // `Bearer x` / `Basic x` outside a header; `x` must look like a token.
    Rule {
        applies: |t| contains_ci(t, "bearer") || contains_ci(t, "basic"),
        regex: LazyLock::new(|| compile(r"(?i)(\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]+)")),
        replace: |c| {
            if looks_like_token(&c[2]) {
                format!("{}{REDACTED}", &c[1])
            } else {
                c[0].to_string()
            }
        },
    },
    // Token formats with a prefix only their vendor uses.
    Rule {
        applies: |t| TOKEN_PREFIXES.iter().any(|prefix| t.contains(prefix)),
        regex: LazyLock::new(|| {
            compile(concat!(
                r"\b(gh[pousr]_)[A-Za-z0-9]{20,}",
                r"|\b(github_pat_)[A-Za-z0-9_]{20,}",
                r"|\b(glpat-)[A-Za-z0-9_-]{20,}",
                r"|\b(xox[abprs]-|xapp-)[A-Za-z0-9-]{10,}",
                r"|\b(AKIA|ASIA)[A-Z0-9]{16}\b",
                r"|\b(AIza)[0-9A-Za-z_-]{35}",
                r"|\b((?:sk|rk)_(?:live|test)_)[0-9A-Za-z]{10,}",
                r"|\b(npm_)[A-Za-z0-9]{36}\b",
                r"|\b(pypi-)[A-Za-z0-9_-]{40,}",
                r"|\b(eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
            ))
        }),
        replace: |c| {
            // One prefix group per alternative: the one that took part.
            let prefix = c.iter().skip(1).flatten().next().map_or("", |m| m.as_str());
            format!("{prefix}{REDACTED}")
        },
    },
    // `sk-…` keys (OpenAI, Anthropic `sk-ant-`); the tail must mix letters
    // and digits so that `sk-some-long-branch-name` stays.
    Rule {
        applies: |t| t.contains("sk-"),
        regex: LazyLock::new(|| {
            compile(r"\b(sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|sk-)([A-Za-z0-9_-]{20,})")
        }),
        replace: |c| {
            let tail = &c[2];
            if tail.bytes().any(|b| b.is_ascii_digit())
                && tail.bytes().any(|b| b.is_ascii_alphabetic())
            {
                format!("{}{REDACTED}", &c[1])
            } else {
                c[0].to_string()
            }
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// Fake secrets of the real shapes (none of them is a live credential).
    const GITHUB: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";

    #[test]
    fn free_text_secrets_are_redacted() {
        let cases = [
            // Headers.
            (
                "Authorization: Bearer abc123def456",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "authorization:Basic dXNlcjpwYXNz",
                "authorization:Basic [REDACTED]",
            ),
            (
                "Proxy-Authorization: Basic dXNlcjpwYXNz",
                "Proxy-Authorization: Basic [REDACTED]",
            ),
            (
                "Authorization: token0123456789",
                "Authorization: [REDACTED]",
            ),
            ("Cookie: sid=abc; theme=dark", "Cookie: [REDACTED]"),
            ("X-Api-Key: 12345abcde", "X-Api-Key: [REDACTED]"),
            ("X-Auth-Token: zzz", "X-Auth-Token: [REDACTED]"),
            ("PRIVATE-TOKEN: glabc", "PRIVATE-TOKEN: [REDACTED]"),
            (
                r#"curl -H "Authorization: Bearer abc123def456" https://api.example.com"#,
                r#"curl -H "Authorization: Bearer [REDACTED]" https://api.example.com"#,
            ),
            (
                "git -c http.extraHeader='Authorization: Basic dXNlcjpwYXNz' clone x",
                "git -c http.extraHeader='Authorization: Basic [REDACTED]' clone x",
            ),
            // Bearer outside a header.
            ("--oauth2 Bearer abc123def456", "--oauth2 Bearer [REDACTED]"),
            // URLs.
            (
                "https://user:hunter2@example.com/repo.git",
                "https://user:[REDACTED]@example.com/repo.git",
            ),
            (
                "postgres://app:s3cr3t@db:5432/app",
                "postgres://app:[REDACTED]@db:5432/app",
            ),
            (
                "https://x-access-token:abc123@github.com/o/r",
                "https://x-access-token:[REDACTED]@github.com/o/r",
            ),
            (
                "https://h/p?token=abc123&page=2",
                "https://h/p?token=[REDACTED]&page=2",
            ),
            (
                "https://h/p?a=1&access_token=abc&api_key=def&key=ghi&sig=jkl",
                "https://h/p?a=1&access_token=[REDACTED]&api_key=[REDACTED]&key=[REDACTED]&sig=[REDACTED]",
            ),
            (
                "https://b.s3.amazonaws.com/o?X-Amz-Signature=abcdef&X-Amz-Expires=60",
                "https://b.s3.amazonaws.com/o?X-Amz-Signature=[REDACTED]&X-Amz-Expires=60",
            ),
            (
                "https://h/p?password=pw&signature=s",
                "https://h/p?password=[REDACTED]&signature=[REDACTED]",
            ),
            // Assignments.
            (
                "GITHUB_TOKEN=abc123 gh pr list",
                "GITHUB_TOKEN=[REDACTED] gh pr list",
            ),
            (
                "export AWS_SECRET_ACCESS_KEY='a b c'",
                "export AWS_SECRET_ACCESS_KEY='[REDACTED]'",
            ),
            (
                "DB_PASSWORD=\"x y\"; run",
                "DB_PASSWORD=\"[REDACTED]\"; run",
            ),
            ("PGPASSWORD=pw psql", "PGPASSWORD=[REDACTED] psql"),
            ("OPENAI_API_KEY=abc", "OPENAI_API_KEY=[REDACTED]"),
            ("mysql --password=pw db", "mysql --password=[REDACTED] db"),
            (
                "-Djavax.net.ssl.trustStorePassword=pw",
                "-Djavax.net.ssl.trustStorePassword=[REDACTED]",
            ),
            (
                "-d 'user=a&password=b&x=1'",
                "-d 'user=a&password=[REDACTED]&x=1'",
            ),
            (
                "//registry.npmjs.org/:_authToken=abc",
                "//registry.npmjs.org/:_authToken=[REDACTED]",
            ),
            (
                "//registry.npmjs.org/:_auth=abc",
                "//registry.npmjs.org/:_auth=[REDACTED]",
            ),
            (
                "MYSQL_PWD=pw DB_PASS=pw",
                "MYSQL_PWD=[REDACTED] DB_PASS=[REDACTED]",
            ),
            ("AZURE_CLIENT_SECRET=x", "AZURE_CLIENT_SECRET=[REDACTED]"),
            (
                "GOOGLE_APPLICATION_CREDENTIALS_JSON=x",
                "GOOGLE_APPLICATION_CREDENTIALS_JSON=[REDACTED]",
            ),
            // JSON bodies.
            (
                r#"{"user":"a","password":"hunter2","apiKey":"k1"}"#,
                r#"{"user":"a","password":"[REDACTED]","apiKey":"[REDACTED]"}"#,
            ),
            (
                r#"{"client_secret" : "s\"x"}"#,
                r#"{"client_secret" : "[REDACTED]"}"#,
            ),
            // openssl.
            (
                "openssl rsa -passin pass:hunter2",
                "openssl rsa -passin pass:[REDACTED]",
            ),
            // curl -u inside a script.
            (
                "sh -c 'curl -u bob:pw https://h'",
                "sh -c 'curl -u bob:[REDACTED] https://h'",
            ),
            (
                "curl --user=bob:pw https://h",
                "curl --user=bob:[REDACTED] https://h",
            ),
            // Token formats.
            (GITHUB, "ghp_[REDACTED]"),
            ("gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "gho_[REDACTED]"),
            ("ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "ghs_[REDACTED]"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
                "github_pat_[REDACTED]",
            ),
            ("glpat-abcdefghij0123456789", "glpat-[REDACTED]"),
            ("xoxb-1234567890-abcdefghij", "xoxb-[REDACTED]"),
            ("xoxp-1234567890-abcdefghij", "xoxp-[REDACTED]"),
            ("AKIAIOSFODNN7EXAMPLE", "AKIA[REDACTED]"),
            ("ASIAIOSFODNN7EXAMPLE", "ASIA[REDACTED]"),
            ("sk-abcdefghij0123456789ABCDEFGHIJ", "sk-[REDACTED]"),
            (
                "sk-proj-abcdefghij0123456789_ABCDEFGHIJ",
                "sk-proj-[REDACTED]",
            ),
            (
                "sk-ant-api03-abcdefghij0123456789ABCDEFGHIJ",
                "sk-ant-[REDACTED]",
            ),
            ("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIza[REDACTED]"),
            ("sk_live_abcdefghij0123456789", "sk_live_[REDACTED]"),
            ("rk_live_abcdefghij0123456789", "rk_live_[REDACTED]"),
            ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_[REDACTED]"),
            (
                "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0",
                "pypi-[REDACTED]",
            ),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "eyJ[REDACTED]",
            ),
            (
                "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----' > k",
                "echo '-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----' > k",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE cut short",
                "-----BEGIN RSA PRIVATE KEY-----[REDACTED]",
            ),
            (
                &format!("git clone https://{GITHUB}@github.com/o/r"),
                "git clone https://ghp_[REDACTED]@github.com/o/r",
            ),
        ];
        let mut failures = Vec::new();
        for (input, expected) in cases {
            let got = redact(input);
            if got != expected {
                failures.push(format!("{input:?}\n   got {got:?}\n  want {expected:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn near_misses_stay_untouched() {
        let cases = [
            "git log -p",
            "pip install sk-learn scikit-learn",
            "git checkout sk-fix-the-login-page-bug-quickly",
            "git checkout -b sk-some-long-branch-name-here",
            "https://example.com:8080/path",
            "https://user@example.com/path",
            "https://h/p?page=2&q=keyboard",
            "use Basic Authentication here",
            "Bearer token",
            "curl --token-file /run/secrets/t",
            "docker login --password-stdin",
            "llm --max-tokens=4096",
            "TOKEN_FILE=/path/t",
            "GITHUB_TOKEN=$GITHUB_TOKEN gh pr list",
            "PASSWORD=${DB_PASSWORD}",
            "Authorization: Bearer $TOKEN",
            "https://user:$PASS@host/",
            "ghp_short",
            "npm_config_cache=/tmp/npm",
            "AKIA",
            "PWD=/home/u OLDPWD=/tmp",
            "KEY=value sort",
            "a=b c=d",
            "echo monkey=banana",
            "--auth-type=basic",
            "git push --no-verify origin main",
            "pypi-server run",
            "eyJhbGciOiJIUzI1NiJ9",
            "AWS_ACCESS_KEY_ID_FILE=/x",
            "bypass:yes",
            "[REDACTED]",
            "",
        ];
        let mut failures = Vec::new();
        for input in cases {
            let got = redact(input);
            if got != input {
                failures.push(format!("{input:?} became {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn argv_secrets_are_redacted() {
        let cases: &[(&[&str], &[&str])] = &[
            (
                &[
                    "curl",
                    "-H",
                    "Authorization: Bearer abc123def456",
                    "https://h",
                ],
                &[
                    "curl",
                    "-H",
                    "Authorization: Bearer [REDACTED]",
                    "https://h",
                ],
            ),
            (
                &["curl", "--header=Authorization: Bearer abc123def456"],
                &["curl", "--header=Authorization: Bearer [REDACTED]"],
            ),
            (
                &["curl", "-u", "bob:hunter2", "https://h"],
                &["curl", "-u", "bob:[REDACTED]", "https://h"],
            ),
            (
                &["/usr/bin/curl", "--user", "bob:hunter2"],
                &["/usr/bin/curl", "--user", "bob:[REDACTED]"],
            ),
            (
                &["curl", "--proxy-user", "bob:hunter2"],
                &["curl", "--proxy-user", "bob:[REDACTED]"],
            ),
            (
                &["mysql", "--password", "hunter2", "db"],
                &["mysql", "--password", "[REDACTED]", "db"],
            ),
            (
                &["tool", "--api-key", "abc", "--verbose"],
                &["tool", "--api-key", "[REDACTED]", "--verbose"],
            ),
            (
                &["tool", "-token", "abc"],
                &["tool", "-token", "[REDACTED]"],
            ),
            (
                &["tool", "--client-secret", "a b;c"],
                &["tool", "--client-secret", "[REDACTED]"],
            ),
            (
                &["env", "DB_PASSWORD=a b;c|d", "run"],
                &["env", "DB_PASSWORD=[REDACTED]", "run"],
            ),
            (&["tool", "--token=a&b"], &["tool", "--token=[REDACTED]"]),
            (
                &["gh", "auth", "login", "--with-token", GITHUB],
                &["gh", "auth", "login", "--with-token", "[REDACTED]"],
            ),
            (
                &[
                    "docker",
                    "login",
                    "-u",
                    "bob",
                    "--password",
                    "pw",
                    "registry",
                ],
                &[
                    "docker",
                    "login",
                    "-u",
                    "bob",
                    "--password",
                    "[REDACTED]",
                    "registry",
                ],
            ),
            (
                &["sh", "-c", "GITHUB_TOKEN=abc123 gh pr list"],
                &["sh", "-c", "GITHUB_TOKEN=[REDACTED] gh pr list"],
            ),
            (
                &[
                    "bash",
                    "-lc",
                    "curl -H 'Authorization: Bearer abc123def456' https://h",
                ],
                &[
                    "bash",
                    "-lc",
                    "curl -H 'Authorization: Bearer [REDACTED]' https://h",
                ],
            ),
            (&["gh", GITHUB], &["gh", "ghp_[REDACTED]"]),
        ];
        let mut failures = Vec::new();
        for (input, expected) in cases {
            let got = redact_argv(&argv(input));
            if got != argv(expected) {
                failures.push(format!("{input:?}\n   got {got:?}\n  want {expected:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn argv_near_misses_stay_untouched() {
        let cases: &[&[&str]] = &[
            &["git", "log", "-p"],
            &["git", "push", "-u", "origin", "main"],
            &["docker", "run", "-u", "1000:1000", "img"],
            &["curl", "--token-file", "/run/t", "https://h"],
            &["docker", "login", "--password-stdin", "registry"],
            &["llm", "--max-tokens", "4096"],
            &["tool", "--password", "--verbose"],
            &["gh", "--token", "$GH_TOKEN"],
            &["ssh", "-p", "2222", "host"],
            &["pip", "install", "sk-learn"],
            &["ls", "-la", "/tmp"],
        ];
        let mut failures = Vec::new();
        for input in cases {
            let got = redact_argv(&argv(input));
            if got != argv(input) {
                failures.push(format!("{input:?} became {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn redacting_twice_changes_nothing() {
        for input in [
            "Authorization: Bearer abc123def456",
            "https://u:p@h/?token=x",
            "PASSWORD=x",
            GITHUB,
            "Cookie: a=b",
            r#"{"password":"x"}"#,
        ] {
            let once = redact(input);
            assert_eq!(redact(&once), once, "{input}");
        }
    }

    #[test]
    fn secret_names() {
        for name in [
            "TOKEN",
            "GITHUB_TOKEN",
            "token",
            "--token",
            "api-key",
            "API_KEY",
            "apiKey",
            "apikey",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "password",
            "passwd",
            "db.password",
            "client_secret",
            "clientSecret",
            "GOOGLE_CREDENTIALS",
            "ssh_passphrase",
            "authtoken",
            "_authToken",
            "_auth",
            "DB_PASS",
            "MYSQL_PWD",
            "cookie",
        ] {
            assert!(is_secret_name(name), "{name} should be secret");
        }
        for name in [
            "token-file",
            "PASSWORD_FILE",
            "password-stdin",
            "token_url",
            "max-tokens",
            "max_token",
            "tokens",
            "no-password",
            "key",
            "KEYBOARD",
            "monkey",
            "PWD",
            "OLDPWD",
            "AWS_ACCESS_KEY_ID",
            "auth-type",
            "passenger",
            "",
            "--",
        ] {
            assert!(!is_secret_name(name), "{name} should not be secret");
        }
    }
}
