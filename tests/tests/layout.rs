//! The test layout itself: every end-to-end test file is a target of askdesk-cli.
//!
//! Cargo discovers test files only in a package's own `tests/` folder; these live in the
//! repository's `tests/tests/` and are listed one by one in `crates/askdesk-cli/Cargo.toml`. A file
//! that is not listed would never run, silently; this test makes that a failure.

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_test_file_is_a_target_of_askdesk_cli() {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest =
        std::fs::read_to_string(cli.join("Cargo.toml")).expect("read askdesk-cli's Cargo.toml");
    let listed: BTreeSet<String> = manifest
        .lines()
        .filter_map(|line| line.trim().strip_prefix("path = \"../../tests/tests/"))
        .filter_map(|rest| rest.strip_suffix('"'))
        .map(str::to_owned)
        .collect();
    let dir = cli.join("../../tests/tests");
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("read tests/tests")
        .map(|entry| {
            entry
                .expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".rs"))
        .collect();
    assert!(
        files.contains("layout.rs"),
        "this very file was not found in {}",
        dir.display()
    );
    let missing: Vec<_> = files.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&files).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "crates/askdesk-cli/Cargo.toml: add a [[test]] entry for {missing:?}, remove the one for {stale:?}"
    );
}
