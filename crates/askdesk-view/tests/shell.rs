//! The page's static shell (ui/index.html) against the modules the page is made of.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn ui() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui")
}

/// The modules `module` (a path under ui/) imports, as paths under ui/.
fn imports(module: &str) -> Vec<String> {
    let text = std::fs::read_to_string(ui().join(module))
        .unwrap_or_else(|error| panic!("ui/{module}: {error}"));
    let dir = Path::new(module).parent().unwrap_or(Path::new(""));
    text.lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with("import ") || line.starts_with("export "))
        .filter_map(|line| line.split(" from ").nth(1))
        .filter_map(|target| {
            let target = target.trim().trim_end_matches(';');
            let target = target.trim_matches(|c| c == '\'' || c == '"');
            target
                .strip_prefix("./")
                .map(|relative| dir.join(relative).to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

/// Every module reached from `root` through static imports, `root` left out.
fn graph(root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = imports(root);
    while let Some(module) = todo.pop() {
        if seen.insert(module.clone()) {
            todo.extend(imports(&module));
        }
    }
    seen
}

/// The `href`s of the shell's `<link rel="modulepreload">` elements.
fn preloaded(html: &str) -> BTreeSet<String> {
    html.lines()
        .filter(|line| line.contains(r#"rel="modulepreload""#))
        .filter_map(|line| line.split(r#"href=""#).nth(1))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_shell_preloads_exactly_the_modules_the_page_imports() {
    let html = std::fs::read_to_string(ui().join("index.html")).unwrap();
    let needed = graph("app.js");
    assert!(
        needed.contains("vendor/fluent-bundle/types.js") && needed.contains("plan.js"),
        "the import graph was not followed: {needed:?}"
    );
    let listed = preloaded(&html);
    let missing: Vec<_> = needed.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&needed).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "ui/index.html's modulepreload links differ from app.js's imports: missing {missing:?}, \
         not imported {extra:?}"
    );
}

#[test]
fn a_missing_preload_is_seen() {
    let html = r#"<link rel="modulepreload" href="dom.js">"#;
    let listed = preloaded(html);
    assert_eq!(listed, BTreeSet::from(["dom.js".to_owned()]));
    assert!(graph("app.js").difference(&listed).count() > 5);
}
