//! Telling a credential by its content: a private key or a cloud key in a
//! file's first bytes, a credential value in a settings file.

/// How much of a file [`sniff_secret`] looks at: key headers sit at the
/// start of a file.
pub const SNIFF_BYTES: usize = 4096;

/// How much of a settings file [`holds_value`] reads.
pub const VALUE_BYTES: usize = 64 * 1024;

/// `.npmrc` and Yarn 1's `.yarnrc`: `//registry/:_authToken=...`, `_auth`, `_password`.
pub(crate) const NPM_KEYS: &[&str] = &["_auth", "_authToken", "_password"];
/// Yarn's `.yarnrc.yml`: `npmAuthToken`, `npmAuthIdent` (and the npm keys).
pub(crate) const YARN_KEYS: &[&str] = &[
    "_auth",
    "_authToken",
    "_password",
    "npmAuthIdent",
    "npmAuthToken",
];
/// Maven's `settings.xml`: `<password>`, `<passphrase>` of a server.
pub(crate) const MAVEN_KEYS: &[&str] = &["passphrase", "password"];
/// NuGet's `NuGet.Config`: `<add key="ClearTextPassword" value="..."/>`.
pub(crate) const NUGET_KEYS: &[&str] = &["password"];
/// A password and nothing else (`~/.my.cnf`).
pub(crate) const PASSWORD_KEYS: &[&str] = &["passwd", "password"];
/// A token and nothing else (`~/.terraformrc`).
pub(crate) const TOKEN_KEYS: &[&str] = &["token"];
/// Anything that names a secret (Gradle properties, Terraform variables).
pub(crate) const SECRET_KEYS: &[&str] = &[
    "access_key",
    "accesskey",
    "api-key",
    "api_key",
    "apikey",
    "passphrase",
    "passwd",
    "password",
    "private_key",
    "privatekey",
    "secret",
    "token",
];
/// Only URLs with a password (`index-url = https://user:pass@host/` in pip.conf).
pub(crate) const URL_ONLY: &[&str] = &[];

/// Whether a settings file holds a credential: a key that ends in one of
/// `keys` (ASCII case ignored) given a literal value, in any of the usual
/// spellings (`KEY=v`, `KEY: v`, `<KEY>v</KEY>`, `"KEY" "v"`,
/// `key="KEY" value="v"`), or a URL with a password (`https://u:p@host`).
/// A value is literal unless it is empty or a reference (`${NPM_TOKEN}`,
/// `$TOKEN`): a settings file that only names a variable holds no secret.
/// Comment lines (`#`, `;`, `!`) are skipped.
pub fn holds_value(keys: &[&str], text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&text[..text.len().min(VALUE_BYTES)]);
    text.lines().any(|line| {
        let line = line.trim();
        if line.starts_with(['#', ';', '!']) {
            return false;
        }
        url_password(line) || keys.iter().any(|k| key_with_value(line, k))
    })
}

/// Whether `line` gives `key` (ending a key) a literal value.
fn key_with_value(line: &str, key: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let key = key.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(&key) {
        let end = from + pos + key.len();
        from = end;
        let rest = &line[end..];
        // The key's closing quote, if it was quoted.
        let quoted = rest.starts_with(['"', '\'']);
        let after = if quoted { &rest[1..] } else { rest };
        let trimmed = after.trim_start();
        let spaced = trimmed.len() < after.len();
        let value = if let Some(v) = trimmed.strip_prefix(['=', ':', '>']) {
            v
        } else if quoted && spaced {
            // `"//host/:_authToken" "value"` or `key="Password" value="v"`.
            trimmed.strip_prefix("value=").unwrap_or(trimmed)
        } else {
            continue;
        };
        if is_literal(value) {
            return true;
        }
    }
    false
}

/// Whether a value (what follows a key's separator) is a literal secret.
fn is_literal(value: &str) -> bool {
    let v = value.trim_start().trim_start_matches(['"', '\'']);
    let v = v
        .split(['"', '\'', '<', ',', ' ', '\t'])
        .next()
        .unwrap_or("")
        .trim();
    !v.is_empty() && !v.starts_with(['$', '%']) && !v.eq_ignore_ascii_case("null")
}

/// Whether `line` holds a URL with a literal password (`scheme://user:pass@host`).
fn url_password(line: &str) -> bool {
    let mut rest = line;
    while let Some(pos) = rest.find("://") {
        rest = &rest[pos + 3..];
        let authority = rest
            .split(['/', ' ', '\t', '"', '\'', '<', '>'])
            .next()
            .unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
            && is_literal(password)
        {
            return true;
        }
    }
    false
}

/// What a file's first bytes show it is, if a credential: a PEM or
/// OpenSSH private key (`-----BEGIN ... PRIVATE KEY-----`, a PGP private
/// key block), a PuTTY key, or a cloud service-account key (JSON with
/// `"type": "service_account"` and a `"private_key"`). Reads at most
/// [`SNIFF_BYTES`] of `head`.
pub fn sniff_secret(head: &[u8]) -> Option<&'static str> {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if find(head, b"\"service_account\"").is_some() && find(head, b"\"private_key\"").is_some() {
        return Some("a cloud service-account key");
    }
    if head.starts_with(b"PuTTY-User-Key-File-") {
        return Some("a PuTTY private key");
    }
    let mut at = 0;
    while let Some(pos) = find(&head[at..], b"-----BEGIN ") {
        let start = at + pos + b"-----BEGIN ".len();
        let label = &head[start..head.len().min(start + 48)];
        if let Some(end) = find(label, b"-----")
            && find(&label[..end], b"PRIVATE KEY").is_some()
        {
            return Some("a private key");
        }
        at = start;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}
