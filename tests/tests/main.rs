//! The end-to-end tests, one test binary: each file of `tests/tests/` is a module of it, declared here.
//!
//! The binary is the `e2e` test target of askdesk-cli (`crates/askdesk-cli/Cargo.toml`), so cargo
//! builds `askdesk` before it; the tests drive that binary through the harness, the `askdesk-e2e`
//! library in `tests/src/`. Run one file's tests with `cargo test -p askdesk-cli --test e2e hook::`.

mod agents;
mod cli;
mod client;
mod devices;
mod doctor;
mod history;
mod hook;
mod images;
mod lifecycle;
mod race;
mod remote;
mod rules;
mod rules_adversarial;
mod transport;
mod waterfall;
mod wire;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// A file of `tests/tests/` that no `mod` line above names is compiled into nothing and its tests
/// never run, without a warning: this test makes it a failure.
#[test]
fn every_test_file_is_a_module_of_main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/tests");
    let main = fs::read_to_string(dir.join("main.rs")).expect("read tests/tests/main.rs");
    let declared: BTreeSet<&str> = main
        .lines()
        .filter_map(|line| line.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut files = BTreeSet::new();
    for entry in fs::read_dir(&dir).expect("read tests/tests") {
        let name = entry.expect("a directory entry").file_name();
        if let Some(module) = name.to_str().and_then(|name| name.strip_suffix(".rs")) {
            files.insert(module.to_owned());
        }
    }
    files.remove("main");
    assert!(files.contains("hook"), "no test files in {}", dir.display());
    let missing: Vec<_> = files
        .iter()
        .filter(|f| !declared.contains(f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "declare these files in tests/tests/main.rs: {missing:?}"
    );
}
