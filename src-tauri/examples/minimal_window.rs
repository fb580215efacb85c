//! A minimal Tauri 2 window (one small static page, nothing else): the anchor that
//! `scripts/bench-desktop.sh` measures the app's open window against, built and run on the same
//! machine in the same run.

use tauri::{WebviewUrl, WebviewWindowBuilder};

const PAGE: &str = "data:text/html,<!doctype html><title>minimal</title><h1>Hello</h1><p>A minimal Tauri window.</p>";

fn main() {
    tauri::Builder::default()
        .setup(|app| {
            let url = PAGE.parse().expect("the page address parses");
            WebviewWindowBuilder::new(app, "main", WebviewUrl::External(url))
                .title("minimal")
                .inner_size(1100.0, 760.0)
                .build()?;
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("the minimal window could not start");
}
