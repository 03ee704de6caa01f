//! The OpenTelemetry exporter variables a team already sets for its other
//! OTLP exporters: headers (a collector's API key) and the endpoint.
//!
//! - `OTEL_EXPORTER_OTLP_LOGS_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`:
//!   `key=value,key2=value2`, values percent-encoded, as the OpenTelemetry
//!   specification writes them. Sent with every OTLP request; never logged
//!   or shown (a message names the variable, not its value).
//! - `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` (the logs URL), else
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` (the base; `/v1/logs` is added): the
//!   endpoint `aq audit export --format otlp` uses without `--endpoint`.
//!
//! They come from the user's environment, where a repository cannot reach:
//! a repository's policy file can name no export at all. A malformed
//! headers variable is an error, not a request sent without its key.

/// The headers variables, the more specific first.
pub(crate) const HEADERS_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    "OTEL_EXPORTER_OTLP_HEADERS",
];

/// The endpoint variables, the more specific first.
pub(crate) const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The first of `vars` set to something other than blanks, with its name.
fn first_set(vars: &[&'static str]) -> Option<(&'static str, String)> {
    vars.iter().find_map(|name| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| (*name, v))
    })
}

pub use crate::error::HeadersError;

/// The headers to send with OTLP requests, from the environment.
pub fn headers_from_env() -> Result<Vec<(String, String)>, HeadersError> {
    match first_set(&HEADERS_VARS) {
        Some((name, value)) => parse_headers(&value).map_err(|e| HeadersError::InVariable {
            var: name,
            error: Box::new(e),
        }),
        None => Ok(Vec::new()),
    }
}

/// The OTLP endpoint from the environment, if one is set.
pub fn endpoint_from_env() -> Option<String> {
    first_set(&ENDPOINT_VARS).map(|(_, v)| v.trim().to_string())
}

/// Parses `key=value,key2=value2` (values percent-encoded). Names must be
/// HTTP tokens and values must hold no line breaks or NUL, so a header can
/// never smuggle another line into the request.
pub(crate) fn parse_headers(text: &str) -> Result<Vec<(String, String)>, HeadersError> {
    let mut out = Vec::new();
    for (i, item) in text.split(',').enumerate() {
        if item.trim().is_empty() {
            continue;
        }
        let Some((name, value)) = item.split_once('=') else {
            return Err(HeadersError::NotNameValue { entry: i + 1 });
        };
        let name = name.trim();
        let is_token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(is_token) {
            return Err(HeadersError::Name { entry: i + 1 });
        }
        let value = percent_decode(value.trim()).ok_or_else(|| HeadersError::PercentEncoding {
            entry: i + 1,
            name: name.to_string(),
        })?;
        if value.chars().any(|c| matches!(c, '\r' | '\n' | '\0')) {
            return Err(HeadersError::LineBreak {
                entry: i + 1,
                name: name.to_string(),
            });
        }
        out.push((name.to_string(), value));
    }
    Ok(out)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::parse_headers;

    #[test]
    fn headers_parse_as_the_specification_writes_them() {
        assert_eq!(
            parse_headers("Authorization=Bearer%20fake-token-123, X-Scope-OrgID=team-a,").unwrap(),
            vec![
                (
                    "Authorization".to_string(),
                    "Bearer fake-token-123".to_string()
                ),
                ("X-Scope-OrgID".to_string(), "team-a".to_string()),
            ]
        );
        assert_eq!(parse_headers("").unwrap(), vec![]);
    }

    #[test]
    fn bad_headers_are_refused_without_quoting_the_value() {
        for (text, want) in [
            ("novalue", "entry 1 is not `name=value`"),
            (
                "a=1,bad name=x",
                "entry 2: the name is not an HTTP header name",
            ),
            (
                "X=a%0d%0aHost: example.invalid",
                "may not hold a line break",
            ),
            ("X=%zz", "bad percent-encoding"),
        ] {
            let err = parse_headers(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
            assert!(!err.contains("example.invalid"), "{err}");
        }
    }
}
