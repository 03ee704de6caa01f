//! Secrets in the tree: `.env` files with values, private key blocks, and
//! tokens in well-known formats. Evidence is always masked.

use std::sync::LazyLock;

use regex::Regex;

use crate::catalog::finding;
use crate::text::{line_of, mask};
use crate::walk::FileView;
use crate::{Finding, Severity};

/// One cheap pass that rules out almost every file.
static PREFILTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"AKIA|ASIA|gh[pousr]_|github_pat_|xox[bapors]-|sk-|AIza|[sr]k_live_|-----BEGIN")
        .unwrap()
});

/// (detector id, pattern, what).
static TOKENS: LazyLock<Vec<(&'static str, Regex, &'static str)>> = LazyLock::new(|| {
    let r = |s: &str| Regex::new(s).unwrap();
    vec![
        (
            "secret-aws-key",
            r(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
            "AWS access key id",
        ),
        (
            "secret-github-token",
            r(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{50,}\b"),
            "GitHub token",
        ),
        (
            "secret-slack-token",
            r(r"\bxox[bapors]-[0-9A-Za-z-]{10,}"),
            "Slack token",
        ),
        (
            "secret-anthropic-key",
            r(r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
            "Anthropic API key",
        ),
        (
            "secret-openai-key",
            r(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
            "OpenAI API key",
        ),
        (
            "secret-google-key",
            r(r"\bAIza[0-9A-Za-z_-]{35}\b"),
            "Google API key",
        ),
        (
            "secret-stripe-key",
            r(r"\b[sr]k_live_[0-9A-Za-z]{20,}"),
            "Stripe live key",
        ),
    ]
});

static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----\s*([A-Za-z0-9+/=:\s-]{40,})").unwrap()
});

pub(crate) fn check(f: &FileView, out: &mut Vec<Finding>) {
    credential_file(f, out);
    let Some(text) = f.text else { return };
    if f.name.starts_with(".env") {
        dotenv(f, text, out);
    }
    if !PREFILTER.is_match(text) {
        return;
    }
    if let Some(c) = PRIVATE_KEY.captures(text) {
        let m = c.get(0).map_or(0, |m| m.start());
        let kind = c.get(1).map_or("PRIVATE KEY", |m| m.as_str());
        out.push(finding(
            "secret-private-key",
            Severity::Critical,
            f.rel,
            line_of(text, m),
            format!("{} block", kind.to_ascii_lowercase()),
            format!(
                "-----BEGIN {kind}----- {}",
                mask(c.get(2).map_or("", |m| m.as_str().trim()))
            ),
        ));
    }
    for (id, re, what) in TOKENS.iter() {
        for m in re.find_iter(text) {
            let s = m.as_str();
            if looks_fake(s) || (*id == "secret-openai-key" && !plausible_openai(s)) {
                continue;
            }
            out.push(finding(
                id,
                Severity::High,
                f.rel,
                line_of(text, m.start()),
                *what,
                mask(s),
            ));
            break; // one per kind and file
        }
    }
}

/// A file the credential catalog names (`aq_knowledge::credentials`), as
/// the sandbox decides it: by name, by a credential value in a settings
/// file, or by a key in its first bytes. Environment files have their own
/// detector (`secret-dotenv`), and a private key block found by content is
/// `secret-private-key`.
fn credential_file(f: &FileView, out: &mut Vec<Finding>) {
    use aq_knowledge::credentials::{self, Kind, Look};
    let dirs = f.rel.rsplit_once('/').map_or("", |(d, _)| d);
    let in_fixtures = dirs.split('/').any(credentials::is_fixture_dir);
    let what = match credentials::look_at(f.name, in_fixtures) {
        Look::Mask(c) if c.kind != Kind::Environment => Some(c.what),
        Look::Read(c) if c.mask != credentials::Mask::IfKey && c.masks_content(f.bytes) => {
            Some(c.what)
        }
        // A key found by content is `secret-private-key`'s.
        _ => None,
    };
    if let Some(what) = what {
        out.push(finding(
            "secret-credential-file",
            Severity::High,
            f.rel,
            0,
            what,
            f.name.to_string(),
        ));
    }
}

/// Documented example values (AWS's `AKIAIOSFODNN7EXAMPLE`) and obvious fillers.
fn looks_fake(s: &str) -> bool {
    let upper = s.to_ascii_uppercase();
    upper.contains("EXAMPLE") || upper.contains("XXXXXXXX") || upper.contains("YOUR")
}

/// An `sk-` key (not `sk-ant-`) that mixes digits, upper and lower case, as
/// generated keys do; `sk-this-is-a-css-class-name-not-a-key` does not.
fn plausible_openai(s: &str) -> bool {
    !s.starts_with("sk-ant-")
        && s.chars().any(|c| c.is_ascii_digit())
        && s.chars().any(|c| c.is_ascii_uppercase())
        && s.chars().any(|c| c.is_ascii_lowercase())
}

/// Values that are placeholders, not secrets.
fn is_placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    v.is_empty()
        || (v.starts_with('<') && v.ends_with('>'))
        || (v.starts_with("${") && v.ends_with('}'))
        || [
            "changeme",
            "change-me",
            "change_me",
            "your",
            "example",
            "placeholder",
            "replace",
            "todo",
            "xxx",
            "...",
            "dummy",
            "fake",
            "secret_here",
            "none",
            "null",
        ]
        .iter()
        .any(|p| l.contains(p))
}

fn dotenv(f: &FileView, text: &str, out: &mut Vec<Finding>) {
    if aq_knowledge::credentials::is_template(f.name) {
        return;
    }
    let mut worst: Option<(Severity, usize, String)> = None;
    let mut names = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim().trim_start_matches("export ").trim();
        if l.starts_with('#') {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim().trim_matches(['"', '\'']));
        if is_placeholder(v) {
            continue;
        }
        let severity = if aq_knowledge::secret_names::is_secret_env_name(k) {
            Severity::High
        } else {
            Severity::Low
        };
        names.push(k.to_string());
        if worst.as_ref().is_none_or(|w| severity > w.0) {
            worst = Some((severity, i + 1, format!("{k}={}", mask(v))));
        }
    }
    if let Some((severity, line, evidence)) = worst {
        out.push(finding(
            "secret-dotenv",
            severity,
            f.rel,
            line,
            format!(
                "{} value(s): {}",
                names.len(),
                crate::text::clip(&names.join(", "), 80)
            ),
            evidence,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{by_id, scan_files};

    /// Fake keys, assembled so this source holds no key-shaped string.
    fn fake(prefix: &str, body: &str, n: usize) -> String {
        format!("{prefix}{}", &body.repeat(n / body.len() + 1)[..n])
    }

    #[test]
    fn token_formats_are_found_and_masked() {
        let aws = fake("AKIA", "Q7ZT", 16);
        let gh = fake("ghp_", "aB3dE6", 36);
        let slack = fake("xoxb-", "1234-abcd", 24);
        let ant = fake("sk-ant-api03-", "aZ9_", 40);
        let oai = fake("sk-proj-", "Ab3De6Gh", 40);
        let goog = fake("AIza", "Sy0-aB", 35);
        let stripe = fake("sk_live_", "51Hx", 24);
        let text = format!("a={aws}\nb={gh}\nc={slack}\nd={ant}\ne={oai}\nf={goog}\ng={stripe}\n");
        let found = scan_files(&[("config/settings.py", &text)]);
        for (id, line) in [
            ("secret-aws-key", 1),
            ("secret-github-token", 2),
            ("secret-slack-token", 3),
            ("secret-anthropic-key", 4),
            ("secret-openai-key", 5),
            ("secret-google-key", 6),
            ("secret-stripe-key", 7),
        ] {
            assert_eq!(
                by_id(&found, id),
                vec![(Severity::High, line)],
                "{id}: {found:#?}"
            );
        }
        for f in &found {
            assert!(f.evidence.contains('…') && f.evidence.len() < 30, "{f:#?}");
            assert!(
                !text.lines().any(|l| f.evidence.contains(&l[2..])),
                "{f:#?}"
            );
        }
    }

    #[test]
    fn near_misses_are_not_secrets() {
        let text = "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nclass=sk-this-is-a-css-class-name-not-a-key\nsk_test_ok\n-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n";
        let found = scan_files(&[("docs/keys.md", text)]);
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn private_key_block_is_critical() {
        let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
        let key = format!(
            "-----BEGIN OPENSSH {}-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n",
            "PRIVATE KEY"
        );
        let found = scan_files(&[("deploy/id_ed25519", &key)]);
        assert_eq!(
            by_id(&found, "secret-private-key"),
            vec![(Severity::Critical, 1)]
        );
        assert!(!found[0].evidence.contains(body));
    }

    #[test]
    fn credential_files_of_the_catalog_are_reported() {
        let found = scan_files(&[
            ("credentials.json", "{}"),
            ("infra/terraform.tfstate", "{}"),
            (".npmrc", "//registry.npmjs.org/:_authToken=fake-token\n"),
            ("web/.npmrc", "engine-strict=true\n"),
            ("prod.tfvars", "region = \"eu-west-1\"\n"),
            ("deploy/id_rsa.pub", "ssh-ed25519 AAAA fake\n"),
            ("tests/fixtures/server.key", "fake"),
            ("credentials.json.example", "{}"),
        ]);
        let mut paths: Vec<&str> = found
            .iter()
            .filter(|f| f.id == "secret-credential-file")
            .map(|f| f.path.as_str())
            .collect();
        paths.sort();
        assert_eq!(
            paths,
            [".npmrc", "credentials.json", "infra/terraform.tfstate"],
            "{found:#?}"
        );
    }

    #[test]
    fn dotenv_values_but_not_templates() {
        let env = "# local\nPORT=3000\nDATABASE_PASSWORD=hunter2-but-longer\n";
        let example = "DATABASE_PASSWORD=<your password>\nAPI_KEY=changeme\nPORT=3000\n";
        let found = scan_files(&[(".env", env), (".env.example", example)]);
        assert_eq!(
            by_id(&found, "secret-dotenv"),
            vec![(Severity::High, 3)],
            "{found:#?}"
        );
        assert_eq!(found.len(), 1);
    }
}
