//! The pages the remote serves: the phone's page (`page/`: pairing, the waiting requests, signed
//! answers; its files built in), its words in the desk's language (`/catalogue`, formatted on the
//! phone by the desktop page's own `ui/l10n.js` and vendored Fluent, served from the same files),
//! and how to install askdesk's certificate authority on iOS and Android.

use askdesk_i18n::t;
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::remote::Remote;

/// Every response's policy: nothing but this origin; no inline script.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// The page's catalogue file: the phone's words.
const PAGE_FILE: &str = "phone.ftl";

const HEAD: &str = r#"<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
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
    // The page's words: the desktop page's loader and Project Fluent's own implementation,
    // the same files the desktop app loads.
    (
        "/l10n.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/l10n.js"),
    ),
    (
        "/icon.svg",
        "image/svg+xml",
        include_str!("../page/icon.svg"),
    ),
];

/// The vendored `@fluent/bundle` modules `l10n.js` imports, at the paths it imports them from.
const FLUENT: &[(&str, &str)] = &[
    (
        "index.js",
        include_str!("../../../ui/vendor/fluent-bundle/index.js"),
    ),
    (
        "ast.js",
        include_str!("../../../ui/vendor/fluent-bundle/ast.js"),
    ),
    (
        "builtins.js",
        include_str!("../../../ui/vendor/fluent-bundle/builtins.js"),
    ),
    (
        "bundle.js",
        include_str!("../../../ui/vendor/fluent-bundle/bundle.js"),
    ),
    (
        "memoizer.js",
        include_str!("../../../ui/vendor/fluent-bundle/memoizer.js"),
    ),
    (
        "resolver.js",
        include_str!("../../../ui/vendor/fluent-bundle/resolver.js"),
    ),
    (
        "resource.js",
        include_str!("../../../ui/vendor/fluent-bundle/resource.js"),
    ),
    (
        "scope.js",
        include_str!("../../../ui/vendor/fluent-bundle/scope.js"),
    ),
    (
        "types.js",
        include_str!("../../../ui/vendor/fluent-bundle/types.js"),
    ),
];

/// `/catalogue`: the phone's words in the desk's language (the one the desk runs in:
/// `ASKDESK_LANG`, the desktop's setting, the system's; `askdesk_i18n::current`), then in English,
/// which the page falls back to per message; the shape the desktop page's `useCatalogue` takes.
/// The phone never chooses: what the desk speaks, the phone speaks.
pub(crate) async fn catalogue() -> Json<serde_json::Value> {
    Json(catalogue_view(askdesk_i18n::current().language()))
}

fn catalogue_view(language: &str) -> serde_json::Value {
    let page = |language| askdesk_i18n::source(language, PAGE_FILE).unwrap_or_default();
    json!({
        "language": language,
        "source": page(language),
        "fallback": page(askdesk_i18n::DEFAULT),
    })
}

/// `/manifest.webmanifest`: the installed page's name and description, in the desk's language.
pub(crate) async fn manifest() -> Response {
    let manifest = json!({
        "name": "askdesk",
        "short_name": "askdesk",
        "lang": askdesk_i18n::current().language(),
        "description": t!("remote-manifest-description"),
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#1b1d22",
        "theme_color": "#1b1d22",
        "icons": [{ "src": "/icon.svg", "sizes": "any", "type": "image/svg+xml" }],
    });
    (
        [(header::CONTENT_TYPE, "application/manifest+json")],
        manifest.to_string(),
    )
        .into_response()
}

/// `/` and `/pair`: the phone's page, which reads the pairing token from the URL's fragment.
pub(crate) async fn page() -> Html<&'static str> {
    Html(PAGE)
}

/// The routes of the page's files.
pub(crate) fn assets<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    let fluent = FLUENT.iter().map(|&(name, text)| {
        (
            format!("/vendor/fluent-bundle/{name}"),
            "text/javascript; charset=utf-8",
            text,
        )
    });
    ASSETS
        .iter()
        .map(|&(path, content_type, text)| (path.to_owned(), content_type, text))
        .chain(fluent)
        .fold(router, |router, (path, content_type, text)| {
            router.route(
                &path,
                get(move || async move { ([(header::CONTENT_TYPE, content_type)], text) }),
            )
        })
}

/// `text` with the characters HTML gives a meaning escaped, for a message put into markup.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `/ca`: how to install the desk's own certificate authority, in the desk's language.
pub(crate) async fn authority(State(remote): State<Remote>) -> Html<String> {
    let p = |id: &str| format!("<p>{}</p>", escaped(&askdesk_i18n::current().get(id, None)));
    let steps = |ids: &[&str]| {
        let items: String = ids
            .iter()
            .map(|id| {
                format!(
                    "<li>{}</li>",
                    escaped(&askdesk_i18n::current().get(id, None))
                )
            })
            .collect();
        format!("<ol>{items}</ol>")
    };
    let body = match remote.authority_der() {
        None => p("remote-ca-nothing"),
        Some(_) => {
            let names = remote
                .served()
                .names()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let own = escaped(&t!("remote-ca-own", names = names));
            [
                format!("<p>{own}</p>"),
                format!(
                    "<p>{} <code>{}</code></p>",
                    escaped(&t!("remote-ca-fingerprint")),
                    remote.fingerprint()
                ),
                format!(
                    "<p><a href=\"/ca.crt\" download>{}</a></p>",
                    escaped(&t!("remote-ca-download"))
                ),
                format!("<h2>{}</h2>", escaped(&t!("remote-ca-ios"))),
                steps(&["remote-ca-ios-1", "remote-ca-ios-2", "remote-ca-ios-3"]),
                format!("<h2>{}</h2>", escaped(&t!("remote-ca-android"))),
                steps(&[
                    "remote-ca-android-1",
                    "remote-ca-android-2",
                    "remote-ca-android-3",
                ]),
                p("remote-ca-remove"),
            ]
            .concat()
        }
    };
    Html(format!(
        "{}<h1>{}</h1>{body}</body></html>",
        HEAD.replace("{lang}", askdesk_i18n::current().language()),
        escaped(&t!("remote-ca-title"))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_the_desks_language_with_english_behind_it() {
        let chinese = catalogue_view("zh-CN");
        assert_eq!(chinese["language"], "zh-CN");
        assert!(chinese["source"]
            .as_str()
            .unwrap()
            .contains("phone-pair-title = 与这台电脑配对"));
        assert!(chinese["fallback"]
            .as_str()
            .unwrap()
            .contains("phone-pair-title = Pair with this desk"));
        let english = catalogue_view("en");
        assert_eq!(english["source"], english["fallback"]);
    }

    #[test]
    fn a_message_put_into_markup_is_escaped() {
        assert_eq!(
            escaped(r#"VPN & <b>"x"</b>"#),
            "VPN &amp; &lt;b&gt;&quot;x&quot;&lt;/b&gt;"
        );
    }
}
