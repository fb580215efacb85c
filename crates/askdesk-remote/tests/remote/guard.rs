//! `Host` and `Origin` on every request and socket: DNS rebinding and cross-site pages refused.

use hyper::StatusCode;
use sha2::Digest;

use crate::phone::desk;

#[tokio::test]
async fn a_foreign_host_is_refused_as_misdirected() {
    let desk = desk().await;
    let port = desk.addr.port();
    let foreign = [
        format!("attacker.example:{port}"),
        format!("localhost:{port}"),
        "127.0.0.1".to_string(),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
    ];
    for host in &foreign {
        let (status, _, _) = desk.request("GET", "/", &[("host", host)], b"").await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{host}");
    }
    let (status, _, _) = desk.request("GET", "/", &[], b"").await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "no Host");
    let own = desk.host();
    let (status, _, _) = desk
        .request(
            "GET",
            "/",
            &[("host", &own), ("host", "attacker.example")],
            b"",
        )
        .await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "two Hosts");
}

#[tokio::test]
async fn an_absolute_request_target_for_another_host_is_refused() {
    let desk = desk().await;
    let host = desk.host();
    let target = format!("https://attacker.example:{}/", desk.addr.port());
    let (status, _, _) = desk.request("GET", &target, &[("host", &host)], b"").await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST);
}

#[tokio::test]
async fn the_served_host_gets_the_page_with_a_strict_policy() {
    let desk = desk().await;
    let (status, headers, body) = desk.get("/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8_lossy(&body).contains("askdesk"));
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["referrer-policy"], "no-referrer");
}

#[tokio::test]
async fn the_phone_page_and_its_files_are_served_with_no_inline_script() {
    let desk = desk().await;
    for path in ["/", "/pair"] {
        let (status, _, body) = desk.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let body = String::from_utf8_lossy(&body);
        assert!(
            body.contains(r#"<script type="module" src="/app.js">"#),
            "{body}"
        );
        assert!(
            !body.contains("<script>") && !body.contains("style="),
            "{body}"
        );
    }
    for (path, kind) in [
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/sw.js", "text/javascript; charset=utf-8"),
        ("/manifest.webmanifest", "application/manifest+json"),
        ("/icon.svg", "image/svg+xml"),
        ("/l10n.js", "text/javascript; charset=utf-8"),
        (
            "/vendor/fluent-bundle/index.js",
            "text/javascript; charset=utf-8",
        ),
        (
            "/vendor/fluent-bundle/resolver.js",
            "text/javascript; charset=utf-8",
        ),
        ("/catalogue", "application/json"),
    ] {
        let (status, headers, _) = desk.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(headers["content-type"], kind, "{path}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
    }
    let (_, headers, _) = desk.get("/").await;
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
}

#[tokio::test]
async fn a_cross_site_origin_is_refused() {
    let desk = desk().await;
    let host = desk.host();
    let port = desk.addr.port();
    let foreign = [
        "https://attacker.example".to_string(),
        format!("http://127.0.0.1:{port}"),
        format!("https://127.0.0.1:{}", port.wrapping_add(1)),
        "null".to_string(),
    ];
    for origin in &foreign {
        let (status, _, _) = desk
            .request("GET", "/", &[("host", &host), ("origin", origin)], b"")
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "GET from {origin}");
        let headers = [
            ("host", host.as_str()),
            ("origin", origin.as_str()),
            ("content-type", "application/json"),
        ];
        let (status, _, _) = desk.request("POST", "/pair", &headers, b"{}").await;
        assert_eq!(status, StatusCode::FORBIDDEN, "POST from {origin}");
    }
}

#[tokio::test]
async fn a_post_without_origin_is_refused() {
    let desk = desk().await;
    let host = desk.host();
    let headers = [
        ("host", host.as_str()),
        ("content-type", "application/json"),
    ];
    let (status, _, _) = desk.request("POST", "/pair", &headers, b"{}").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_socket_needs_the_served_host_and_origin() {
    let desk = desk().await;
    let origin = desk.origin();
    assert_eq!(
        desk.socket_with(&[]).await.err(),
        Some(StatusCode::FORBIDDEN),
        "no Origin"
    );
    let cross = desk
        .socket_with(&[("origin", "https://attacker.example")])
        .await;
    assert_eq!(cross.err(), Some(StatusCode::FORBIDDEN));
    let rebound = format!("attacker.example:{}", desk.addr.port());
    let foreign = desk
        .socket_with(&[("origin", &origin), ("host", &rebound)])
        .await;
    assert_eq!(foreign.err(), Some(StatusCode::MISDIRECTED_REQUEST));
    assert!(desk.socket_with(&[("origin", &origin)]).await.is_ok());
}

#[tokio::test]
async fn the_authority_downloads_as_der_from_an_explaining_page() {
    let desk = desk().await;
    let (status, headers, body) = desk.get("/ca.crt").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/x-x509-ca-cert");
    assert_eq!(&body[..], desk.remote.authority_der().unwrap());
    let (status, _, page) = desk.get("/ca").await;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8_lossy(&page);
    for needed in [
        "iPhone",
        "Certificate Trust Settings",
        "Android",
        "/ca.crt",
        desk.remote.fingerprint(),
    ] {
        assert!(page.contains(needed), "the page lacks {needed}");
    }
}

#[tokio::test]
async fn a_provided_certificate_is_served_and_there_is_no_authority_to_install() {
    // The person's own authority and certificate, as `tailscale cert` or a domain would give.
    let files = tempfile::tempdir().unwrap();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, &ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let (certificate, private) = (files.path().join("desk.crt"), files.path().join("desk.key"));
    std::fs::write(&certificate, leaf.pem()).unwrap();
    std::fs::write(&private, key.serialize_pem()).unwrap();
    let source = askdesk_remote::CertificateSource::Provided {
        certificate,
        key: private,
    };
    let desk = crate::phone::desk_trusting(
        |config| config.certificates = source,
        Some(ca.der().to_vec()),
    )
    .await;
    assert!(desk.remote.authority_der().is_none());
    let (status, _, _) = desk.get("/ca.crt").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, _, page) = desk.get("/ca").await;
    assert!(String::from_utf8_lossy(&page).contains("nothing to install"));
    let fingerprint = askdesk_remote::keys::encode(&sha2::Sha256::digest(leaf.der().as_ref()));
    assert_eq!(desk.remote.fingerprint(), fingerprint);
    assert!(desk.remote.offer_pairing().url.ends_with(&fingerprint));
    assert!(
        !desk.dir.path().join("remote/ca-key.pem").exists(),
        "no authority made"
    );
}
