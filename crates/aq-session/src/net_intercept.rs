//! The hosts whose HTTPS requests the broker reads: `[network.http."HOST"]`
//! (which methods and paths may go) and `[network.credentials."HOST"]` (a
//! header the broker adds, its secret never inside the sandbox).
//!
//! Set up once per session, before the sandbox is planned: the session CA
//! ([`aq_net::Intercept`]; its key stays in this process), a trust bundle
//! for the sandbox (the CA bundle the host trusts, plus the session CA),
//! the variables that point the common tools at that bundle, and the names
//! of the variables the credentials were read from, which the sandbox then
//! does not get.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aq_audit::EventBody;
use aq_policy::NetworkSettings;

pub use crate::error::CredentialPresetError;
use crate::supervisor::Supervisor;

/// The trust bundles the host may keep (Debian and kin, Fedora and kin,
/// Alpine, openSUSE), tried in order when `SSL_CERT_FILE` is not set.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/etc/ssl/ca-bundle.pem",
];

/// The variables that make the common tools trust a bundle file.
const TRUST_VARIABLES: &[&str] = &[
    "SSL_CERT_FILE",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
    "CARGO_HTTP_CAINFO",
    "npm_config_cafile",
];

/// What a session's interception needs from the rest of the setup.
pub struct SessionIntercept {
    /// For the broker.
    pub intercept: Arc<aq_net::Intercept>,
    /// Added to the sandbox's environment: the trust variables.
    pub env: Vec<(OsString, OsString)>,
    /// Removed from the sandbox's environment: the credentials' variables.
    pub hidden: Vec<String>,
    /// The bundle the sandbox trusts.
    pub bundle: PathBuf,
}

/// Sets up interception for the hosts `settings` names, or `None` when it
/// names none. A credential whose variable is not set stops the session
/// (nothing is sent without it, rather than sent unauthenticated).
pub fn prepare(
    settings: &NetworkSettings,
    session_dir: &Path,
    supervisor: Arc<Supervisor>,
) -> Result<Option<SessionIntercept>, String> {
    if settings.http.is_empty()
        && settings.credentials.is_empty()
        && settings.credential_presets.is_empty()
    {
        return Ok(None);
    }
    let mut hosts: BTreeMap<String, aq_net::HostRules> = BTreeMap::new();
    let mut hidden = Vec::new();
    let mut placeholders: Vec<(OsString, OsString)> = Vec::new();
    for name in &settings.credential_presets {
        let preset = preset(name, &|n| std::env::var(n).ok())?;
        for (host, header, value) in preset.hosts {
            hosts.entry(host).or_default().credential = Some((header, value));
        }
        hidden.extend(preset.hidden);
        placeholders.extend(
            preset
                .placeholders
                .into_iter()
                .map(|v| (OsString::from(v), OsString::from(PLACEHOLDER))),
        );
    }
    for (host, rule) in &settings.http {
        hosts.entry(host.clone()).or_default().http = Some(aq_net::HttpRule {
            methods: rule.methods.clone(),
            paths: rule.paths.clone(),
        });
    }
    for (host, cred) in &settings.credentials {
        let (value, names) = expand(&cred.value, &|n| std::env::var(n).ok())
            .map_err(|e| format!("[network.credentials.\"{host}\"]: {e}"))?;
        hidden.extend(names);
        hosts.entry(host.clone()).or_default().credential = Some((cred.header.clone(), value));
    }
    let log = supervisor.clone();
    let recorder: aq_net::InterceptRecorder =
        Arc::new(move |r: &aq_net::KeyProxyRecord| record(&log, r));
    let intercept = aq_net::Intercept::new(hosts, None, recorder)
        .map_err(|e| format!("the broker cannot look inside TLS: {e}"))?;
    let base = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .chain(SYSTEM_BUNDLES.iter().map(PathBuf::from))
        .find_map(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let dir = session_dir.join("tmp");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let bundle = dir.join("aq-trust.pem");
    let mut text = base;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(intercept.ca_pem());
    std::fs::write(&bundle, text).map_err(|e| format!("cannot write {}: {e}", bundle.display()))?;
    let env = TRUST_VARIABLES
        .iter()
        .map(|v| (OsString::from(v), bundle.as_os_str().to_owned()))
        .chain(placeholders)
        .collect();
    hidden.sort();
    hidden.dedup();
    Ok(Some(SessionIntercept {
        intercept: Arc::new(intercept),
        env,
        hidden,
        bundle,
    }))
}

/// What the sandbox sees in a variable a tool insists on (`gh` will not
/// send a request without `GH_TOKEN`): the broker replaces the header.
pub const PLACEHOLDER: &str = "aq-placeholder-the-broker-adds-the-real-token";

/// One built-in credential recipe, filled from the environment.
pub struct Preset {
    /// Host, header name and value.
    pub hosts: Vec<(String, String, String)>,
    /// Variables the sandbox does not get.
    pub hidden: Vec<String>,
    /// Variables the sandbox gets as [`PLACEHOLDER`].
    pub placeholders: Vec<String>,
}

/// The recipe `name` (`[network] credential_presets`):
/// - `github`: `GH_TOKEN` (else `GITHUB_TOKEN`) as a bearer token to
///   `api.github.com` and `uploads.github.com` (gh, the REST API), and as
///   the password of `x-access-token` to `github.com` (git over HTTPS);
/// - `npm`: `NPM_TOKEN` as a bearer token to `registry.npmjs.org` (npm
///   publish, private packages).
pub fn preset(
    name: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Preset, CredentialPresetError> {
    let first = |names: &[&'static str]| -> Result<String, CredentialPresetError> {
        names
            .iter()
            .find_map(|n| lookup(n).filter(|v| !v.is_empty()))
            .filter(|v| !v.contains(['\r', '\n', '\0']))
            .ok_or_else(|| CredentialPresetError::Missing {
                preset: name.to_string(),
                vars: names.to_vec(),
            })
    };
    match name {
        "github" => {
            let token = first(&["GH_TOKEN", "GITHUB_TOKEN"])?;
            let bearer = format!("Bearer {token}");
            let basic = format!(
                "Basic {}",
                base64(format!("x-access-token:{token}").as_bytes())
            );
            Ok(Preset {
                hosts: vec![
                    (
                        "api.github.com".into(),
                        "Authorization".into(),
                        bearer.clone(),
                    ),
                    ("uploads.github.com".into(), "Authorization".into(), bearer),
                    ("github.com".into(), "Authorization".into(), basic),
                ],
                hidden: vec!["GH_TOKEN".into(), "GITHUB_TOKEN".into()],
                placeholders: vec!["GH_TOKEN".into()],
            })
        }
        "npm" => {
            let token = first(&["NPM_TOKEN"])?;
            Ok(Preset {
                hosts: vec![(
                    "registry.npmjs.org".into(),
                    "Authorization".into(),
                    format!("Bearer {token}"),
                )],
                hidden: vec!["NPM_TOKEN".into()],
                placeholders: vec!["NPM_TOKEN".into()],
            })
        }
        other => Err(CredentialPresetError::Unknown {
            name: other.to_string(),
        }),
    }
}

/// Standard base64 with padding (RFC 4648), for a Basic credential.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `Bearer ${NAME}` with each `${NAME}` replaced by `lookup(NAME)`; the
/// names used. A name that is not set, or an unclosed `${`, is an error.
pub fn expand(
    template: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, Vec<String>), String> {
    let mut out = String::new();
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{template}` has a `${{` without its `}}`"))?;
        let name = &after[..end];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("`${{{name}}}` is not a variable name"));
        }
        let value = lookup(name).ok_or_else(|| {
            format!("`${{{name}}}` is not set in the environment aq was started in")
        })?;
        if value.contains(['\r', '\n', '\0']) {
            return Err(format!("`${{{name}}}` holds a line break"));
        }
        out.push_str(&value);
        names.push(name.to_string());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok((out, names))
}

/// Logs one intercepted request: method and path (never the query or the
/// body), and what became of it.
fn record(supervisor: &Supervisor, r: &aq_net::KeyProxyRecord) {
    let decision = if r.denied {
        "denied"
    } else if r.error.is_some() {
        "failed"
    } else {
        "allowed"
    };
    crate::log_event(
        &supervisor.log,
        &supervisor.file.id,
        EventBody::NetworkConnection {
            host: r.host.clone(),
            port: r.port,
            addr: None,
            decision: decision.to_string(),
            rule: if r.denied {
                "net-http-rule".to_string()
            } else {
                format!("{} (read inside TLS)", r.host)
            },
            reason: Some(match &r.error {
                Some(e) => format!("{}: {e}", r.request),
                None => format!(
                    "{}{}",
                    r.request,
                    if r.keyed {
                        " (credential added outside)"
                    } else {
                        ""
                    }
                ),
            }),
            front_end: "https-intercept".to_string(),
            bytes_up: r.bytes_up,
            bytes_down: r.bytes_down,
            duration_ms: r.duration_ms,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_fill_their_hosts_from_the_environment() {
        assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        let env = |n: &str| (n == "GITHUB_TOKEN").then(|| "fake-gh".to_string());
        let gh = preset("github", &env).unwrap();
        assert!(gh.hosts.contains(&(
            "api.github.com".into(),
            "Authorization".into(),
            "Bearer fake-gh".into()
        )));
        assert!(gh.hosts.contains(&(
            "github.com".into(),
            "Authorization".into(),
            format!("Basic {}", base64(b"x-access-token:fake-gh"))
        )));
        assert_eq!(gh.placeholders, ["GH_TOKEN"]);
        assert!(
            preset("npm", &env)
                .err()
                .is_some_and(|e| e.to_string().contains("needs NPM_TOKEN"))
        );
        assert!(preset("gitlab", &env).is_err());
    }

    #[test]
    fn credential_values_take_their_variables_and_name_them() {
        let env = |n: &str| match n {
            "EXAMPLE_TOKEN" => Some("fake-123".to_string()),
            "EVIL" => Some("a\r\nX-Other: 1".to_string()),
            _ => None,
        };
        assert_eq!(
            expand("Bearer ${EXAMPLE_TOKEN}", &env).unwrap(),
            (
                "Bearer fake-123".to_string(),
                vec!["EXAMPLE_TOKEN".to_string()]
            )
        );
        assert!(
            expand("Bearer ${MISSING}", &env)
                .unwrap_err()
                .contains("not set")
        );
        assert!(expand("Bearer ${EXAMPLE_TOKEN", &env).is_err());
        assert!(expand("${A-B}", &env).is_err());
        assert!(expand("${EVIL}", &env).unwrap_err().contains("line break"));
    }
}
