//! No words a person reads are left outside the catalogues: every message id the code asks for
//! exists (with the arguments the Rust call names), and no literal text is printed by the CLI's
//! human-readable output or put on the page outside them, but for the allow-lists below, each with
//! its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fluent_syntax::ast;
use fluent_syntax::parser;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every English message with its variables.
fn english() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (name, text) in askdesk_i18n::files(askdesk_i18n::DEFAULT).unwrap() {
        let resource = parser::parse(*text).unwrap_or_else(|(_, e)| panic!("{name}: {e:?}"));
        for entry in resource.body {
            if let ast::Entry::Message(m) = entry {
                let mut variables = BTreeSet::new();
                if let Some(value) = &m.value {
                    variables_of(value, &mut variables);
                }
                out.insert(m.id.name.to_owned(), variables);
            }
        }
    }
    out
}

fn variables_of(pattern: &ast::Pattern<&str>, out: &mut BTreeSet<String>) {
    for element in &pattern.elements {
        if let ast::PatternElement::Placeable { expression } = element {
            expression_variables(expression, out);
        }
    }
}

fn expression_variables(expression: &ast::Expression<&str>, out: &mut BTreeSet<String>) {
    let inline = match expression {
        ast::Expression::Select { selector, variants } => {
            for variant in variants {
                variables_of(&variant.value, out);
            }
            selector
        }
        ast::Expression::Inline(inline) => inline,
    };
    match inline {
        ast::InlineExpression::VariableReference { id } => {
            out.insert(id.name.to_owned());
        }
        ast::InlineExpression::Placeable { expression } => expression_variables(expression, out),
        _ => {}
    }
}

/// The message ids (and the argument names, for Rust) each source file asks for.
struct Use {
    file: PathBuf,
    id: String,
    /// The arguments passed, when the call site names them (`t!("id", name = ...)`).
    args: Option<BTreeSet<String>>,
}

fn sources(dir: &str, extension: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "vendor") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == extension) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `t!("id")` and `t!("id", name = value, ...)` in Rust.
fn rust_uses(file: &Path, text: &str) -> Vec<Use> {
    let mut out = Vec::new();
    for (start, _) in text.match_indices("t!(\"") {
        if text[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[start + 4..];
        let id = &rest[..rest.find('"').unwrap()];
        // The macro's arguments up to its closing parenthesis, at depth 0.
        let mut depth = 1;
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let inside = &rest[id.len() + 1..end];
        let mut args = BTreeSet::new();
        let mut depth = 0;
        let mut word = String::new();
        let mut chars = inside.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                '=' if depth == 0 && chars.peek() != Some(&'=') && chars.peek() != Some(&'>') => {
                    args.insert(word.trim().to_owned());
                }
                ',' if depth == 0 => word.clear(),
                _ if depth == 0 => word.push(c),
                _ => {}
            }
        }
        out.push(Use {
            file: file.to_owned(),
            id: id.to_owned(),
            args: Some(args),
        });
    }
    out
}

/// `t('id'`, `t("id"` and `data-l10n-id="id"` in the page.
fn page_uses(file: &Path, text: &str) -> Vec<Use> {
    let mut out = Vec::new();
    for opener in ["t('", "t(\"", "data-l10n-id=\"", "l10n('"] {
        for (start, _) in text.match_indices(opener) {
            if opener.starts_with('t')
                && text[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
            {
                continue;
            }
            let rest = &text[start + opener.len()..];
            let close = opener.chars().last().unwrap();
            let id = &rest[..rest.find(close).unwrap()];
            out.push(Use {
                file: file.to_owned(),
                id: id.to_owned(),
                args: None,
            });
        }
    }
    out
}

#[test]
fn every_message_the_code_asks_for_exists_with_the_arguments_it_names() {
    let english = english();
    let mut uses = Vec::new();
    for dir in ["crates/askdesk-cli/src", "src-tauri/src"] {
        for file in sources(dir, "rs") {
            uses.extend(rust_uses(&file, &std::fs::read_to_string(&file).unwrap()));
        }
    }
    for extension in ["js", "html"] {
        for file in sources("ui", extension) {
            uses.extend(page_uses(&file, &std::fs::read_to_string(&file).unwrap()));
        }
    }
    assert!(
        uses.len() > 20,
        "the scan found too few uses: {}",
        uses.len()
    );
    for used in uses {
        let Some(variables) = english.get(&used.id) else {
            panic!(
                "{} asks for {}, which no catalogue has",
                used.file.display(),
                used.id
            );
        };
        if let Some(args) = used.args {
            assert_eq!(
                &args,
                variables,
                "{} passes other arguments to {} than it takes",
                used.file.display(),
                used.id
            );
        }
    }
}

/// The macros whose text a person reads when the CLI prints it.
const PRINTING: [&str; 8] = [
    "outln!(",
    "out!(",
    "eprintln!(",
    "eprint!(",
    "println!(",
    "print!(",
    "writeln!(",
    "write!(",
];

/// Literal text the CLI prints outside the catalogues, each with why: (file, the text).
const CLI_ALLOWED: &[(&str, &str)] = &[
    // The line a failed command ends with carries the protocol's or an answerer's message, which
    // stays as the protocol gives it; the prefix stays with it, and scripts look for it.
    ("main.rs", "Error: {}"),
    ("main.rs", "Error: cannot start the async runtime: {error}"),
    // An answerer's registration, by the field names the protocol gives it (`askdesk/register`).
    ("status.rs", "  {}. {}  scope={}"),
    ("status.rs", "  group={}"),
];

/// Files of the CLI not converted yet: their human-readable output is still English.
const CLI_NOT_YET: &[&str] = &["doctor.rs"];

/// The format string of each printing macro in `text` (its production code, before the tests).
fn printed_literals(text: &str) -> Vec<String> {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    let mut out = Vec::new();
    for name in PRINTING {
        for (start, _) in code.match_indices(name) {
            if code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let mut rest = code[start + name.len()..].trim_start();
            if name.starts_with("write") {
                // The destination comes first.
                let Some(comma) = rest.find(',') else {
                    continue;
                };
                rest = rest[comma + 1..].trim_start();
            }
            let Some(literal) = rest.strip_prefix('"') else {
                continue;
            };
            let mut end = 0;
            let mut escaped = false;
            for (i, c) in literal.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => {
                        end = i;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            out.push(literal[..end].to_owned());
        }
    }
    out
}

/// Whether a format string holds words: two letters in a row outside its `{...}` placeholders
/// and escapes.
fn has_words(format: &str) -> bool {
    let mut depth = 0;
    let mut run = 0;
    let mut previous = ' ';
    for c in format.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 && c.is_alphabetic() && previous != '\\' => {
                run += 1;
                if run >= 2 {
                    return true;
                }
            }
            _ => run = 0,
        }
        previous = c;
    }
    false
}

#[test]
fn the_cli_prints_no_words_outside_the_catalogues() {
    let mut left = Vec::new();
    for file in sources("crates/askdesk-cli/src", "rs") {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if CLI_NOT_YET.contains(&name.as_str()) {
            continue;
        }
        for literal in printed_literals(&std::fs::read_to_string(&file).unwrap()) {
            if has_words(&literal) && !CLI_ALLOWED.contains(&(name.as_str(), literal.as_str())) {
                left.push(format!("{}: {literal:?}", file.display()));
            }
        }
    }
    assert!(
        left.is_empty(),
        "printed outside the catalogues:\n{}",
        left.join("\n")
    );
}

#[test]
fn the_cli_scanner_sees_words_in_every_printing_macro() {
    let code = r#"outln!("plain {x} words")?; writeln!(out, "{a}  held by {b}"); eprintln!("{}", t!("id"));
        writeln!(f, "{:<8} fix: {}", "", x); out!("{}\n", y)"#;
    let words: Vec<String> = printed_literals(code)
        .into_iter()
        .filter(|l| has_words(l))
        .collect();
    assert_eq!(
        words,
        ["plain {x} words", "{a}  held by {b}", "{:<8} fix: {}"]
    );
    assert!(!has_words("{}\\n{rule}\\n{you}"));
}
