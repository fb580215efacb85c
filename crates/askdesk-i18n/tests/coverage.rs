//! No words a person reads are left outside the catalogues: every message id the code asks for
//! exists (with the arguments the Rust call names), and no literal text is printed by the CLI's
//! human-readable output or put on the page outside them, but for the allow-lists below, each with
//! its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fluent_syntax::ast;
use fluent_syntax::parser;

mod common;
use common::pattern_variables;

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
                    pattern_variables(value, &mut variables);
                }
                out.insert(m.id.name.to_owned(), variables);
            }
        }
    }
    out
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

/// The page's modules not converted yet: their words are still English literals.
const PAGE_NOT_YET: &[&str] = &[
    "connect.js",
    "devices.js",
    "images.js",
    "rule_preview.js",
    "rules.js",
];

/// Literal text on the page outside the catalogues, each with why: (file, the text).
const PAGE_ALLOWED: &[(&str, &str)] = &[
    // Said when the page cannot reach the backend, which is where the catalogue comes from.
    (
        "app.js",
        "The askdesk backend is not reachable from this page.",
    ),
    // A console message for whoever debugs the page, not for the person.
    ("l10n.js", "askdesk: ${} catalogue:"),
];

/// The names of keys (`KeyboardEvent.key`) and of elements the page compares with: not words.
const NOT_WORDS: &[&str] = &[
    "Tab",
    "Shift",
    "Control",
    "Alt",
    "Meta",
    "Escape",
    "Enter",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
];

/// The string literals of a module's code (comments left out), template placeholders as `${}`.
fn js_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '/' && i > 0 && {
            // A regular expression literal: after an operator or an opening bracket.
            let before = chars[..i].iter().rev().find(|c| !c.is_whitespace());
            matches!(
                before,
                Some('(' | ',' | '=' | ':' | '[' | '!' | '&' | '|' | '?' | '{' | ';')
            )
        } {
            i += 1;
            while i < chars.len() && chars[i] != '/' && chars[i] != '\n' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if matches!(c, '\'' | '"' | '`') {
            let mut literal = String::new();
            let mut depth = 0;
            i += 1;
            while i < chars.len() && !(chars[i] == c && depth == 0) {
                if chars[i] == '\\' {
                    literal.push(chars[i]);
                    i += 1;
                } else if c == '`' && chars[i] == '$' && chars.get(i + 1) == Some(&'{') {
                    if depth == 0 {
                        literal.push_str("${}");
                    }
                    depth += 1;
                    i += 1;
                } else if c == '`' && depth > 0 && chars[i] == '}' {
                    depth -= 1;
                } else if c == '`' && depth > 0 && chars[i] == '{' {
                    depth += 1;
                } else if depth == 0 {
                    literal.push(chars[i]);
                }
                i += 1;
            }
            i += 1;
            out.push(literal);
        } else {
            i += 1;
        }
    }
    out
}

/// Whether a literal reads as words for a person: a capitalised word ("Skip", "Not sent: ${}"), or
/// lower-case words ending a sentence ("just now.").
fn reads_as_words(literal: &str) -> bool {
    if NOT_WORDS.contains(&literal) {
        return false;
    }
    let words: Vec<&str> = literal
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        .collect();
    let capitalised = words.iter().any(|w| {
        let mut chars = w.chars();
        chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
    });
    let sentence = words.len() >= 2
        && literal.contains(' ')
        && literal.trim_end().ends_with(['.', '…', '?', '!']);
    capitalised || sentence
}

#[test]
fn the_page_puts_no_words_outside_the_catalogues() {
    let mut left = Vec::new();
    for file in sources("ui", "js") {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if PAGE_NOT_YET.contains(&name.as_str()) {
            continue;
        }
        for literal in js_literals(&std::fs::read_to_string(&file).unwrap()) {
            if reads_as_words(&literal)
                && !PAGE_ALLOWED.contains(&(name.as_str(), literal.as_str()))
            {
                left.push(format!("{name}: {literal:?}"));
            }
        }
    }
    // The window's frame: every element with words of its own, or a title, label or placeholder,
    // names its message.
    let html = std::fs::read_to_string(root().join("ui/index.html")).unwrap();
    let body = &html[html.find("<body>").unwrap()..];
    for (n, tag) in body.split('<').enumerate().skip(1) {
        let (open, text) = tag.split_once('>').unwrap_or((tag, ""));
        let worded = text.trim().chars().filter(|c| c.is_alphabetic()).count() >= 2
            && text.trim() != "askdesk";
        let attributes = ["title=", "aria-label=", "placeholder="]
            .iter()
            .any(|a| open.contains(a));
        if !open.starts_with('/') && (worded || attributes) && !open.contains("data-l10n-id") {
            left.push(format!("index.html, element {n}: <{open}>{}", text.trim()));
        }
    }
    assert!(
        left.is_empty(),
        "on the page outside the catalogues:\n{}",
        left.join("\n")
    );
}

#[test]
fn the_page_scanner_sees_words_and_not_code() {
    let code = "h('span', { class: 'link skip' }, 'Skip this question'); // 'Not this'\n\
        toast(`Not sent: ${(e && e.message) || e}`); if (e.key === 'Tab') x.replace(/\\s*(Recommended)$/, '');\n\
        t('waited-days', { days }); h('b', {}, 'just now.');";
    let words: Vec<String> = js_literals(code)
        .into_iter()
        .filter(|l| reads_as_words(l))
        .collect();
    assert_eq!(words, ["Skip this question", "Not sent: ${}", "just now."]);
}
