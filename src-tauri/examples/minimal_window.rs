//! A minimal Tauri 2 window (one small static page, nothing else): the anchor that
//! `scripts/bench-desktop.sh` measures the app's open window against, built and run on the same
//! machine in the same run.

use tauri::http::Response;
use tauri::{WebviewUrl, WebviewWindowBuilder};

/// The page, served by a protocol of the example's own (the app's assets are not part of it).
const PAGE: &str =
    "<!doctype html><title>minimal</title><h1>Hello</h1><p>A minimal Tauri window.</p>";

fn main() {
    tauri::Builder::default()
        .register_uri_scheme_protocol("minimal", |_context, _request| {
            Response::builder()
                .header("Content-Type", "text/html")
                .body(PAGE.as_bytes().to_vec())
                .expect("a static response builds")
        })
        .setup(|app| {
            let url = "minimal://localhost/"
                .parse()
                .expect("the page address parses");
            WebviewWindowBuilder::new(app, "main", WebviewUrl::CustomProtocol(url))
                .title("minimal")
                .inner_size(1100.0, 760.0)
                .build()?;
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("the minimal window could not start");
}
