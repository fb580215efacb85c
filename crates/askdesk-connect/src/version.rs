//! The version both binaries print: the workspace's version and the git commit it was built from.

/// `0.1.0 (commit 1a2b3c4)`, as `askdesk --version` and `askdesk-desktop --version` print it
/// after the program's name.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ASKDESK_COMMIT"),
    ")"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_names_the_release_and_a_commit() {
        let (release, commit) = VERSION.split_once(" (commit ").unwrap();
        assert_eq!(release, env!("CARGO_PKG_VERSION"));
        let commit = commit.strip_suffix(')').unwrap();
        assert!(
            commit == "unknown"
                || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
            "{commit}"
        );
    }
}
