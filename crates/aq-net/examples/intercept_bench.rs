//! Cost of an intercepted HTTPS request on loopback: the same GET to a
//! real HTTPS server (aq-testkit's `TlsUpstream`), direct and through the
//! broker's `CONNECT` with the host under an HTTP rule and a credential
//! (TLS to the client with the session CA, the request read whole, TLS to
//! the server). Each request is a new connection and a full handshake on
//! both paths, as curl makes it. Prints medians and p90 of N requests
//! each, interleaved. `cargo run --release -p aq-net --example intercept_bench -- [N]`

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Instant;

use aq_net::{Allowlist, Broker, HostRules, HttpRule, Intercept, KeyProxyRecord, ProxyServer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

const HOST: &str = "api.example.invalid";

fn client(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// One GET; through `proxy` with CONNECT when given. Returns microseconds.
fn get(config: &Arc<rustls::ClientConfig>, port: u16, proxy: Option<SocketAddr>) -> f64 {
    let start = Instant::now();
    let mut tcp = match proxy {
        None => TcpStream::connect(("127.0.0.1", port)).unwrap(),
        Some(p) => {
            let mut t = TcpStream::connect(p).unwrap();
            write!(
                t,
                "CONNECT {HOST}:{port} HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n"
            )
            .unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                t.read_exact(&mut b).unwrap();
                head.push(b[0]);
            }
            assert!(head.starts_with(b"HTTP/1.1 200"));
            t
        }
    };
    tcp.set_nodelay(true).unwrap();
    let conn =
        rustls::ClientConnection::new(config.clone(), ServerName::try_from(HOST).unwrap()).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, &mut tcp);
    write!(
        tls,
        "GET /v1/bench HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut body = Vec::new();
    let _ = tls.read_to_end(&mut body);
    assert!(
        body.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    start.elapsed().as_secs_f64() * 1e6
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300);
    let up = aq_testkit::tls::TlsUpstream::start(&[HOST]);
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(up.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let mut hosts = BTreeMap::new();
    hosts.insert(
        HOST.to_string(),
        HostRules {
            http: Some(HttpRule {
                methods: vec!["GET".into()],
                paths: vec!["/v1/".into()],
            }),
            credential: Some(("Authorization".into(), "Bearer fake-bench-token".into())),
        },
    );
    let intercept = Intercept::new(hosts, Some(roots), Arc::new(|_: &KeyProxyRecord| {})).unwrap();
    let session_ca = intercept.ca_pem().to_string();
    let list =
        Allowlist::from_entries(&[HOST], &[&format!("{HOST}=127.0.0.1")], &[] as &[&str]).unwrap();
    let proxy = ProxyServer::bind(Arc::new(
        Broker::new(list).with_intercept(Arc::new(intercept)),
    ))
    .unwrap();
    let direct_cfg = client(&up.ca_pem);
    let broker_cfg = client(&session_ca);
    // Warm up both paths.
    for _ in 0..20 {
        get(&direct_cfg, up.port, None);
        get(&broker_cfg, up.port, Some(proxy.local_addr()));
    }
    let (mut direct, mut through) = (Vec::new(), Vec::new());
    for _ in 0..n {
        direct.push(get(&direct_cfg, up.port, None));
        through.push(get(&broker_cfg, up.port, Some(proxy.local_addr())));
    }
    let (dm, bm) = (pct(&mut direct, 0.5), pct(&mut through, 0.5));
    let (d9, b9) = (pct(&mut direct, 0.9), pct(&mut through, 0.9));
    println!("requests: {n} each, interleaved, one connection and handshake per request");
    println!("direct HTTPS GET:               median {dm:8.0} us   p90 {d9:8.0} us");
    println!("through the broker, read in TLS: median {bm:8.0} us   p90 {b9:8.0} us");
    println!(
        "added per request:              median {:8.0} us   ratio {:.2}",
        bm - dm,
        bm / dm
    );
}
