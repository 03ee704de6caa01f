//! An HTTPS server on 127.0.0.1 with a certificate authority of its own:
//! the "real host" behind the broker's TLS interception. Each request is
//! answered with what the server saw (the request line and the
//! `Authorization` header), and kept for the test to look at.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// The commit `git ls-remote` sees as the server's `HEAD`.
pub const GIT_HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

/// A running server; it stops with the test process.
pub struct TlsUpstream {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The CA that signed its certificate (PEM): what a client must trust.
    pub ca_pem: String,
    /// Every request head it received, in order.
    pub heads: Arc<Mutex<Vec<String>>>,
}

impl TlsUpstream {
    /// Serves HTTPS for `names` (the certificate's names).
    pub fn start(names: &[&str]) -> TlsUpstream {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let kept = heads.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(tcp) = conn else { continue };
                let config = config.clone();
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let Ok(tls) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let mut s = rustls::StreamOwned::new(tls, tcp);
                    let mut head = Vec::new();
                    let mut b = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        match s.read(&mut b) {
                            Ok(1) => head.push(b[0]),
                            _ => return,
                        }
                    }
                    let text = String::from_utf8_lossy(&head).into_owned();
                    let line = text.lines().next().unwrap_or("").to_string();
                    let auth = text
                        .lines()
                        .find_map(|l| {
                            l.split_once(':')
                                .filter(|(n, _)| n.eq_ignore_ascii_case("authorization"))
                                .map(|(_, v)| v.trim().to_string())
                        })
                        .unwrap_or_else(|| "(none)".to_string());
                    kept.lock().unwrap().push(text);
                    let (kind, body) = if line.contains("/info/refs?service=git-upload-pack") {
                        // A smart-HTTP ref advertisement (protocol v0) of a
                        // repository whose HEAD is GIT_HEAD: enough for
                        // `git ls-remote`.
                        let pkt = |s: &str| format!("{:04x}{s}", s.len() + 4);
                        (
                            "application/x-git-upload-pack-advertisement",
                            format!(
                                "{}0000{}0000",
                                pkt("# service=git-upload-pack\n"),
                                pkt(&format!("{GIT_HEAD} HEAD\0agent=aq-testkit\n")),
                            ),
                        )
                    } else {
                        (
                            "text/plain",
                            format!("saw: {line}\nauthorization: {auth}\n"),
                        )
                    };
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = s.flush();
                    s.conn.send_close_notify();
                    let _ = s.conn.complete_io(&mut s.sock);
                });
            }
        });
        TlsUpstream {
            port,
            ca_pem: ca.pem(),
            heads,
        }
    }

    /// The request heads received so far.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}
