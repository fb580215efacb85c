//! The pages the remote serves today: where the phone lands, the pairing landing page, and how to
//! install askdesk's certificate authority on iOS and Android. Static text; no script yet.

use axum::extract::State;
use axum::response::Html;

use crate::remote::Remote;

/// Every response's policy: nothing but this origin; no inline script.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const HEAD: &str = r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>askdesk</title></head><body>"#;

pub(crate) async fn index() -> Html<String> {
    Html(format!(
        "{HEAD}<h1>askdesk</h1><p>This is the desk's remote. A phone is paired from the desk: \
         Devices, then Add a phone, then scan the code it shows.</p>\
         <p><a href=\"/ca\">Install this desk's certificate authority</a></p></body></html>"
    ))
}

pub(crate) async fn pair() -> Html<String> {
    Html(format!(
        "{HEAD}<h1>Pair with askdesk</h1><p>This page pairs a phone that scanned the code shown \
         at the desk. The pairing script is not served yet by this version.</p></body></html>"
    ))
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
