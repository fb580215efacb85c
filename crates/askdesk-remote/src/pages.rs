//! The pages the remote serves: the phone's page (`page/`: pairing, the waiting requests, signed
//! answers; its files built in) and how to install askdesk's certificate authority on iOS and
//! Android.

use axum::extract::State;
use axum::http::header;
use axum::response::Html;
use axum::routing::get;
use axum::Router;

use crate::remote::Remote;

/// Every response's policy: nothing but this origin; no inline script.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const HEAD: &str = r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>askdesk</title></head><body>"#;

/// The phone's page (a PWA), kept as files in `page/` and built into the binary: one document
/// for pairing (`/pair#v1.<token>.<fingerprint>`) and for the waiting requests (`/`).
const PAGE: &str = include_str!("../page/index.html");
/// Every file the page loads: its path, its type and its text.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "/app.js",
        "text/javascript; charset=utf-8",
        include_str!("../page/app.js"),
    ),
    (
        "/passkey.js",
        "text/javascript; charset=utf-8",
        include_str!("../page/passkey.js"),
    ),
    (
        "/push.js",
        "text/javascript; charset=utf-8",
        include_str!("../page/push.js"),
    ),
    (
        "/style.css",
        "text/css; charset=utf-8",
        include_str!("../page/style.css"),
    ),
    (
        "/sw.js",
        "text/javascript; charset=utf-8",
        include_str!("../page/sw.js"),
    ),
    (
        "/manifest.webmanifest",
        "application/manifest+json",
        include_str!("../page/manifest.webmanifest"),
    ),
    (
        "/icon.svg",
        "image/svg+xml",
        include_str!("../page/icon.svg"),
    ),
];

/// `/` and `/pair`: the phone's page, which reads the pairing token from the URL's fragment.
pub(crate) async fn page() -> Html<&'static str> {
    Html(PAGE)
}

/// The routes of the page's files.
pub(crate) fn assets<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    ASSETS
        .iter()
        .fold(router, |router, &(path, content_type, text)| {
            router.route(
                path,
                get(move || async move { ([(header::CONTENT_TYPE, content_type)], text) }),
            )
        })
}

pub(crate) async fn authority(State(remote): State<Remote>) -> Html<String> {
    let body = match remote.authority_der() {
        None => "<p>This desk serves a certificate from an authority your phone already trusts: \
                 there is nothing to install.</p>"
            .to_string(),
        Some(_) => format!(
            "<p>This desk made its own certificate authority. It can vouch only for {names} \
             (it is name-constrained), so installing it lets your phone trust this desk and \
             nothing else.</p>\
             <p>Fingerprint of the desk's certificate (SHA-256, base64url): <code>{fingerprint}</code></p>\
             <p><a href=\"/ca.crt\" download>Download the certificate authority</a></p>\
             <h2>iPhone and iPad</h2><ol>\
             <li>Open this page in Safari and tap the download link; allow the profile download.</li>\
             <li>Settings, General, VPN &amp; Device Management: open the askdesk profile, Install.</li>\
             <li>Settings, General, About, Certificate Trust Settings: turn on full trust for askdesk.</li></ol>\
             <h2>Android</h2><ol>\
             <li>Tap the download link and keep the file.</li>\
             <li>Settings, Security (or Security &amp; privacy), More security settings, Encryption \
             &amp; credentials, Install a certificate, CA certificate; choose the file.</li>\
             <li>Chrome trusts it from then on; some apps do not use user certificates.</li></ol>\
             <p>To remove it later: the same settings pages, Remove or Delete.</p>",
            names = remote
                .served()
                .names()
                .iter()
                .map(|name| format!("<code>{name}</code>"))
                .collect::<Vec<_>>()
                .join(", "),
            fingerprint = remote.fingerprint(),
        ),
    };
    Html(format!(
        "{HEAD}<h1>Trust this desk</h1>{body}</body></html>"
    ))
}
