//! The architecture invariant "only `protocol` knows JSON-RPC", checked over the sources: outside
//! `askdesk-broker/src/protocol*`, no production code spells out a `jsonrpc` object, builds an
//! `RpcError` by number, or writes a JSON-RPC error number.

use std::fs;
use std::path::{Path, PathBuf};

/// What production code outside `protocol` must not contain, and why.
const FORBIDDEN: &[(&str, &str)] = &[
    ("jsonrpc", "spells out a JSON-RPC message"),
    ("RpcError::new(", "picks an error number"),
    ("RpcError {", "builds an error by hand"),
    (".with_data(", "builds an error's data by hand"),
];

#[test]
fn no_module_outside_protocol_knows_jsonrpc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["crates", "src-tauri/src"] {
        collect(&root.join(dir), &mut files);
    }
    let protocol = root.join("crates/askdesk-broker/src/protocol");
    let sources: Vec<&PathBuf> = files
        .iter()
        .filter(|f| f.components().any(|c| c.as_os_str() == "src"))
        .filter(|f| !f.starts_with(&protocol) && *f != &protocol.with_extension("rs"))
        .collect();
    assert!(
        sources.len() > 20,
        "the scan found only {} source files under {}",
        sources.len(),
        root.display()
    );
    let mut found = Vec::new();
    for file in sources {
        let text = fs::read_to_string(file).unwrap();
        for (number, line) in production_lines(&text) {
            let problems = FORBIDDEN
                .iter()
                .filter(|(needle, _)| line.contains(needle))
                .map(|(_, why)| *why)
                .chain(error_number(line).then_some("writes a JSON-RPC error number"));
            for why in problems {
                found.push(format!(
                    "{}:{number}: {why}: {}",
                    file.display(),
                    line.trim()
                ));
            }
        }
    }
    assert!(found.is_empty(), "\n{}", found.join("\n"));
}

/// The scan itself catches what it is meant to catch, and leaves comments and tests alone.
#[test]
fn the_scan_sees_what_it_forbids() {
    let text = "\
//! A file that talks about \"jsonrpc\" and -32001 in comments only.
fn a() {
    let x = 1; // -32601 in a trailing comment
}
fn b() -> Vec<u8> {
    br#\"{\"jsonrpc\":\"2.0\"}\"#.to_vec()
}
fn c() -> i64 {
    -32603
}
#[cfg(test)]
mod tests {
    const LINE: &str = r#\"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32001}}\"#;
}
";
    let lines: Vec<(usize, &str)> = production_lines(text)
        .filter(|(_, line)| {
            FORBIDDEN.iter().any(|(needle, _)| line.contains(needle)) || error_number(line)
        })
        .collect();
    assert_eq!(
        lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        vec![6, 9],
        "{lines:?}"
    );
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !matches!(
                path.file_name().and_then(|n| n.to_str()),
                Some("target" | "tests" | "benches" | "node_modules")
            ) {
                collect(&path, files);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The numbered lines of a source file up to its `#[cfg(test)]` module, with comments removed.
fn production_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .map(|(n, line)| {
            let code = match line.find("//") {
                // A `//` inside a string literal (a URL) is rare in these files and only hides
                // the rest of its own line.
                Some(at) => &line[..at],
                None => line,
            };
            (n + 1, code)
        })
}

/// Whether the line holds a JSON-RPC error number (`-32000` to `-32768`).
fn error_number(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.windows(6).enumerate().any(|(at, w)| {
        w[0] == b'-'
            && w[1] == b'3'
            && w[2] == b'2'
            && w[3..].iter().all(u8::is_ascii_digit)
            && !bytes.get(at + 6).is_some_and(u8::is_ascii_digit)
            && (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
    })
}
