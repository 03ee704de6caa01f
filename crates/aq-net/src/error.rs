//! Errors of the proxies' parsing and judging steps, each naming what was
//! read or judged: an upstream URL, a request head, a request an HTTP rule
//! refuses. Each `Display` is the sentence that goes into the refusal and
//! the audit record; the variants keep the pieces.

use std::fmt;
use std::io;

/// An upstream URL (a key proxy's, a model endpoint's) that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// Neither `http://` nor `https://`.
    NotHttp {
        /// The URL as written.
        url: String,
    },
    /// No host, or user information before it (never forwarded).
    NoHost {
        /// The URL as written.
        url: String,
    },
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::NotHttp { url } => write!(f, "`{url}` is not an http:// or https:// URL"),
            UrlError::NoHost { url } => write!(f, "`{url}` has no usable host"),
        }
    }
}

impl std::error::Error for UrlError {}

/// A request a host's HTTP rule refuses (`METHOD /path` and why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpRefusal {
    /// TRACE or TRACK: a server that echoes them would hand the credential
    /// the broker added back to the sandbox.
    Echo {
        /// The method.
        method: String,
        /// The request target.
        path: String,
    },
    /// A header that would make the server take another method than the
    /// one judged.
    MethodOverride {
        /// The method.
        method: String,
        /// The request target.
        path: String,
        /// The header, lowercased.
        header: String,
    },
    /// A method the rule does not list.
    Method {
        /// The method.
        method: String,
        /// The path (without the query).
        path: String,
        /// The methods the rule allows.
        allowed: Vec<String>,
    },
    /// A path under none of the rule's prefixes.
    Path {
        /// The method.
        method: String,
        /// The path (without the query).
        path: String,
        /// The prefixes the rule allows.
        allowed: Vec<String>,
    },
}

impl fmt::Display for HttpRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpRefusal::Echo { method, path } => write!(
                f,
                "{method} {path} refused: it echoes the request, the broker's credential included"
            ),
            HttpRefusal::MethodOverride {
                method,
                path,
                header,
            } => write!(
                f,
                "{method} {path} refused: `{header}` would make the server take another method"
            ),
            HttpRefusal::Method {
                method,
                path,
                allowed,
            } => write!(
                f,
                "{method} {path} refused: only {} allowed by the host's HTTP rule",
                allowed.join(", ")
            ),
            HttpRefusal::Path {
                method,
                path,
                allowed,
            } => write!(
                f,
                "{method} {path} refused: only paths under {} allowed by the host's HTTP rule",
                allowed.join(", ")
            ),
        }
    }
}

impl std::error::Error for HttpRefusal {}

/// A request head the HTTP proxy does not forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// The head is not UTF-8.
    NotUtf8,
    /// Not `METHOD TARGET VERSION`.
    MalformedLine {
        /// The request line.
        line: String,
    },
    /// Not HTTP/1.x.
    Version {
        /// The version as written.
        version: String,
    },
    /// An origin-form target (`GET /path`): this is a proxy.
    OriginForm,
    /// An absolute URI that is not `http://` (TLS goes through CONNECT).
    NotHttp {
        /// The request target.
        target: String,
    },
    /// User information in the URI: never forwarded.
    Credentials,
    /// A CR, LF or NUL inside a header line: two parsers could read two
    /// different requests.
    BareControl,
    /// A chunked body, which the plain proxy does not frame.
    Chunked,
    /// A `Content-Length` that is not a number.
    ContentLength {
        /// The value as written (trimmed).
        value: String,
    },
    /// Two `Content-Length` headers that disagree.
    TwoContentLengths,
    /// `[` without `]`.
    Authority {
        /// The authority as written.
        authority: String,
    },
    /// A port that is not 1-65535.
    Port {
        /// The authority as written.
        authority: String,
    },
    /// No port where one is required (CONNECT).
    NoPort {
        /// The authority as written.
        authority: String,
    },
    /// No host.
    NoHost {
        /// The authority as written.
        authority: String,
    },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NotUtf8 => f.write_str("request head is not UTF-8"),
            RequestError::MalformedLine { line } => write!(f, "malformed request line `{line}`"),
            RequestError::Version { version } => write!(f, "unsupported version `{version}`"),
            RequestError::OriginForm => {
                f.write_str("this is a proxy: send an absolute URI (`GET http://host/path`)")
            }
            RequestError::NotHttp { target } => write!(
                f,
                "only http:// URIs are forwarded as plain requests; use CONNECT for `{target}`"
            ),
            RequestError::Credentials => f.write_str("credentials in the URI are not forwarded"),
            RequestError::BareControl => f.write_str("a bare CR, LF or NUL in the request head"),
            RequestError::Chunked => f.write_str(
                "a chunked request body is not forwarded as a plain request: send its length, or use https",
            ),
            RequestError::ContentLength { value } => write!(f, "bad Content-Length `{value}`"),
            RequestError::TwoContentLengths => f.write_str("two different Content-Length headers"),
            RequestError::Authority { authority } => write!(f, "bad authority `{authority}`"),
            RequestError::Port { authority } => write!(f, "bad port in `{authority}`"),
            RequestError::NoPort { authority } => write!(f, "`{authority}` has no port"),
            RequestError::NoHost { authority } => write!(f, "`{authority}` has no host"),
        }
    }
}

impl std::error::Error for RequestError {}

/// A request head the key proxy will not rewrite for its upstream. A head
/// two parsers could read two ways (smuggling) is refused, never guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewriteError {
    /// A CR, LF or NUL inside a line.
    BareControl {
        /// The line, escaped for printing.
        line: String,
    },
    /// No request line.
    Empty,
    /// Not `METHOD TARGET VERSION`.
    RequestLine {
        /// The request line.
        line: String,
    },
    /// Not HTTP/1, or a target that is not a path.
    NotOriginForm {
        /// The request line.
        line: String,
    },
    /// A header line without `:`.
    HeaderLine {
        /// The line.
        line: String,
    },
    /// A `Content-Length` that is not a number.
    ContentLength {
        /// The value as written.
        value: String,
    },
    /// Two `Content-Length` headers that disagree.
    TwoContentLengths,
    /// A `Transfer-Encoding` other than one `chunked`.
    TransferEncoding {
        /// The value as written.
        value: String,
    },
    /// Both `Content-Length` and `Transfer-Encoding`.
    LengthAndChunked,
}

impl fmt::Display for RewriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RewriteError::BareControl { line } => {
                write!(f, "a bare CR, LF or NUL in the request head: `{line}`")
            }
            RewriteError::Empty => f.write_str("empty request"),
            RewriteError::RequestLine { line } => write!(f, "bad request line `{line}`"),
            RewriteError::NotOriginForm { line } => {
                write!(f, "not an HTTP/1 origin-form request: `{line}`")
            }
            RewriteError::HeaderLine { line } => write!(f, "bad header line `{line}`"),
            RewriteError::ContentLength { value } => write!(f, "bad Content-Length `{value}`"),
            RewriteError::TwoContentLengths => f.write_str("two different Content-Length headers"),
            RewriteError::TransferEncoding { value } => {
                write!(f, "Transfer-Encoding `{value}` (only one `chunked`)")
            }
            RewriteError::LengthAndChunked => {
                f.write_str("both Content-Length and Transfer-Encoding")
            }
        }
    }
}

impl std::error::Error for RewriteError {}

/// Why the key proxy did not get a whole request head from its client.
#[derive(Debug)]
pub enum HeadError {
    /// The head did not end within the handshake timeout (a head trickled a
    /// byte at a time still ends in time).
    Timeout,
    /// The head is not UTF-8.
    NotUtf8,
    /// The head is longer than the proxy reads.
    TooLong {
        /// The most it reads, in bytes.
        max: usize,
    },
    /// Reading from the client failed.
    Read {
        /// The error.
        source: io::Error,
    },
    /// The client closed before the head ended.
    Closed,
}

impl fmt::Display for HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadError::Timeout => f.write_str("no whole request head in time"),
            HeadError::NotUtf8 => f.write_str("the request head is not UTF-8"),
            HeadError::TooLong { max } => write!(f, "request head over {max} bytes"),
            HeadError::Read { source } => write!(f, "{source}"),
            HeadError::Closed => f.write_str("the client closed before a whole request"),
        }
    }
}

impl std::error::Error for HeadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HeadError::Read { source } => Some(source),
            _ => None,
        }
    }
}

/// Why the key proxy or the TLS interceptor could not start, or could not
/// make the certificate for one host.
#[derive(Debug)]
pub enum ProxySetupError {
    /// The key proxy's upstream URL.
    Upstream(UrlError),
    /// The system trusts no root certificate: no upstream could be verified.
    NoRoots,
    /// rustls refused its own safe protocol versions.
    Protocols {
        /// rustls's answer.
        source: rustls::Error,
    },
    /// The session CA's key could not be made.
    CaKey {
        /// rcgen's answer.
        source: rcgen::Error,
    },
    /// The session CA's parameters were refused.
    CaParams {
        /// rcgen's answer.
        source: rcgen::Error,
    },
    /// The session CA could not be self-signed.
    CaCert {
        /// rcgen's answer.
        source: rcgen::Error,
    },
    /// A leaf certificate's key could not be made.
    LeafKey {
        /// rcgen's answer.
        source: rcgen::Error,
    },
    /// A host name a leaf certificate cannot be made for.
    LeafParams {
        /// The host.
        host: String,
        /// rcgen's answer.
        source: rcgen::Error,
    },
    /// The session CA could not sign a host's certificate.
    LeafCert {
        /// The host.
        host: String,
        /// rcgen's answer.
        source: rcgen::Error,
    },
    /// rustls refused a host's certificate and key.
    ServerCert {
        /// The host.
        host: String,
        /// rustls's answer.
        source: rustls::Error,
    },
    /// The key proxy's listener could not be made non-blocking.
    Listener {
        /// The error.
        source: io::Error,
    },
    /// The key proxy's accept thread could not start.
    Thread {
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for ProxySetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxySetupError::Upstream(e) => write!(f, "{e}"),
            ProxySetupError::NoRoots => f.write_str(
                "no trusted root certificates found on this system (install ca-certificates, or set SSL_CERT_FILE)",
            ),
            ProxySetupError::Protocols { source } => write!(f, "{source}"),
            ProxySetupError::CaKey { source } => write!(f, "the session CA's key: {source}"),
            ProxySetupError::CaParams { source } | ProxySetupError::LeafKey { source } => {
                write!(f, "{source}")
            }
            ProxySetupError::CaCert { source } => write!(f, "the session CA: {source}"),
            ProxySetupError::LeafParams { host, source } => write!(f, "{host}: {source}"),
            ProxySetupError::LeafCert { host, source } => {
                write!(f, "a certificate for {host}: {source}")
            }
            ProxySetupError::ServerCert { host, source } => {
                write!(f, "a certificate for {host}: {source}")
            }
            ProxySetupError::Listener { source } => write!(f, "key proxy listener: {source}"),
            ProxySetupError::Thread { source } => write!(f, "key proxy thread: {source}"),
        }
    }
}

impl std::error::Error for ProxySetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProxySetupError::Upstream(e) => Some(e),
            ProxySetupError::NoRoots => None,
            ProxySetupError::Protocols { source } | ProxySetupError::ServerCert { source, .. } => {
                Some(source)
            }
            ProxySetupError::CaKey { source }
            | ProxySetupError::CaParams { source }
            | ProxySetupError::CaCert { source }
            | ProxySetupError::LeafKey { source }
            | ProxySetupError::LeafParams { source, .. }
            | ProxySetupError::LeafCert { source, .. } => Some(source),
            ProxySetupError::Listener { source } | ProxySetupError::Thread { source } => {
                Some(source)
            }
        }
    }
}

impl From<UrlError> for ProxySetupError {
    fn from(e: UrlError) -> ProxySetupError {
        ProxySetupError::Upstream(e)
    }
}

/// Callers whose own errors are still sentences (`Result<_, String>`, the
/// text of a [`crate::KeyProxyRecord`]) use `?` on these as before; the text
/// is the `Display` above.
macro_rules! into_string {
    ($($t:ty),*) => {$(
        impl From<$t> for String {
            fn from(e: $t) -> String {
                e.to_string()
            }
        }
    )*};
}

into_string!(
    UrlError,
    HttpRefusal,
    RequestError,
    RewriteError,
    HeadError,
    ProxySetupError
);
