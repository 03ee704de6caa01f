//! TLS interception for hosts with an HTTP rule or a credential: curl
//! through the broker's CONNECT to a real HTTPS server on loopback.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use aq_net::{HostRules, HttpRule, Intercept, KeyProxyRecord};
use aq_testkit::tls::TlsUpstream;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::util::{curl, have_curl, session_broker};

const HOST: &str = "api.example.invalid";

fn roots(pem: &str) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pem.as_bytes()).unwrap())
        .unwrap();
    roots
}

/// GET under the allowed prefix goes through with the credential the
/// broker adds (the client's own Authorization replaced); POST, another
/// path and a path that climbs out get a 403 naming the rule, and never
/// reach the server; the client trusts only the session CA, and the server
/// is verified against its own CA, not the session's.
#[test]
fn an_http_rule_and_a_credential_hold_inside_tls() {
    if !have_curl("an_http_rule_and_a_credential_hold_inside_tls") {
        return;
    }
    let up = TlsUpstream::start(&[HOST]);
    let mut hosts = BTreeMap::new();
    hosts.insert(
        HOST.to_string(),
        HostRules {
            http: Some(HttpRule {
                methods: vec!["GET".into(), "HEAD".into()],
                paths: vec!["/v1/".into()],
            }),
            credential: Some(("Authorization".into(), "Bearer fake-token-outside".into())),
        },
    );
    let records: Arc<Mutex<Vec<KeyProxyRecord>>> = Arc::default();
    let kept = records.clone();
    let intercept = Intercept::new(
        hosts,
        Some(roots(&up.ca_pem)),
        Arc::new(move |r: &KeyProxyRecord| kept.lock().unwrap().push(r.clone())),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("session-ca.pem");
    std::fs::write(&ca_file, intercept.ca_pem()).unwrap();
    let ca = ca_file.to_str().unwrap();
    let (broker, _) = session_broker(&[HOST], &[&format!("{HOST}=127.0.0.1")], &[], None);
    let broker = broker.with_intercept(Arc::new(intercept));
    let proxy = aq_net::ProxyServer::bind(Arc::new(broker)).unwrap();
    let via = format!("http://{}", proxy.local_addr());
    let url = |path: &str| format!("https://{HOST}:{}{path}", up.port);
    let env = [("https_proxy", via.as_str())];

    let got = curl(
        &[
            "--cacert",
            ca,
            "-H",
            "Authorization: Bearer from-the-sandbox",
            &url("/v1/items?q=1"),
        ],
        &env,
    );
    assert_eq!(
        got.success(),
        "saw: GET /v1/items?q=1 HTTP/1.1\nauthorization: Bearer fake-token-outside\n"
    );
    for (args, what) in [
        (vec!["-X", "POST", "-d", "x=1"], "/v1/items"),
        (
            vec!["-H", "Connection: Upgrade", "-H", "Upgrade: websocket"],
            "/v1/socket",
        ),
        (vec![], "/admin"),
        (vec!["--path-as-is"], "/v1/../admin"),
    ] {
        let mut a: Vec<&str> = vec!["--cacert", ca, "-i"];
        a.extend(args);
        let u = url(what);
        a.push(&u);
        let run = curl(&a, &env);
        let out = run.stdout();
        assert!(
            out.contains("\r\n\r\nHTTP/1.1 403 Forbidden\r\n"),
            "{what}: {run}"
        );
        assert!(out.contains("X-Aq-Rule: net-http-rule"), "{run}");
        assert!(out.contains(&format!("aq: {HOST}: ")), "{run}");
        assert!(
            out.contains("[network.http.\"api.example.invalid\"]"),
            "{run}"
        );
    }
    assert_eq!(
        up.heads().len(),
        1,
        "refused requests reached the server: {:?}",
        up.heads()
    );
    // Without the session CA the client refuses the broker's certificate:
    // it is no certificate of the real host's.
    let run = curl(&[&url("/v1/x")], &env);
    assert_eq!(run.code(), Some(60), "{run}");
    // SOCKS5 to an intercepted host is refused: its bytes could not be read.
    let run = curl(
        &[
            "--cacert",
            ca,
            "--socks5-hostname",
            &proxy.local_addr().to_string(),
            &url("/v1/x"),
        ],
        &[],
    );
    assert_eq!(run.code(), Some(97), "{run}");
    let recs = records.lock().unwrap().clone();
    let denied: Vec<&str> = recs
        .iter()
        .filter(|r| r.denied)
        .map(|r| r.request.as_str())
        .collect();
    assert_eq!(
        denied,
        [
            "POST /v1/items",
            "GET /v1/socket",
            "GET /admin",
            "GET /v1/../admin"
        ],
        "{recs:?}"
    );
    assert!(
        recs.iter()
            .any(|r| r.request == "GET /v1/items" && r.keyed && r.error.is_none())
    );
    assert!(
        recs.iter().all(|r| !r.request.contains('?')),
        "queries stay out of records"
    );
}

/// The upstream is verified against the real roots: a server whose
/// certificate no trusted CA signed is refused, even for a rule-covered host.
#[test]
fn an_upstream_the_roots_do_not_vouch_for_is_refused() {
    if !have_curl("an_upstream_the_roots_do_not_vouch_for_is_refused") {
        return;
    }
    let up = TlsUpstream::start(&[HOST]);
    let other = TlsUpstream::start(&[HOST]);
    let mut hosts = BTreeMap::new();
    hosts.insert(
        HOST.to_string(),
        HostRules {
            http: None,
            credential: Some(("X-Key".into(), "k".into())),
        },
    );
    let intercept = Intercept::new(
        hosts,
        Some(roots(&other.ca_pem)),
        Arc::new(|_: &KeyProxyRecord| {}),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, intercept.ca_pem()).unwrap();
    let (broker, _) = session_broker(&[HOST], &[&format!("{HOST}=127.0.0.1")], &[], None);
    let proxy =
        aq_net::ProxyServer::bind(Arc::new(broker.with_intercept(Arc::new(intercept)))).unwrap();
    let via = format!("http://{}", proxy.local_addr());
    let run = curl(
        &[
            "-f",
            "--cacert",
            ca_file.to_str().unwrap(),
            &format!("https://{HOST}:{}/", up.port),
        ],
        &[("https_proxy", &via)],
    );
    assert_eq!(run.code(), Some(22), "a 502: {run}");
    assert!(
        up.heads().is_empty(),
        "a request reached an unverified server"
    );
}
