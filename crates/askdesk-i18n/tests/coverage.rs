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
    english_in(|_| true)
}

/// The English messages of the files `file` picks, with their variables.
fn english_in(file: impl Fn(&str) -> bool) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (name, text) in askdesk_i18n::files(askdesk_i18n::DEFAULT).unwrap() {
        if !file(name) {
            continue;
        }
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
                // Others' code, and ui/dist, the bundle made of the files scanned here.
                if path
                    .file_name()
                    .is_some_and(|n| n != "vendor" && n != "dist")
                {
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

/// `t!("id")`, `t!("id", name = value, ...)` and `t!(in messages, "id", ...)` in Rust.
fn rust_uses(file: &Path, text: &str) -> Vec<Use> {
    let mut out = Vec::new();
    for (start, _) in text.match_indices("t!(") {
        if text[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut rest = text[start + 3..].trim_start();
        if let Some(after) = rest.strip_prefix("in ") {
            // The messages to format in, up to the comma before the id.
            let Some(comma) = after.find(',') else {
                continue;
            };
            rest = after[comma + 1..].trim_start();
        }
        let Some(rest) = rest.strip_prefix('"') else {
            continue;
        };
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

/// `t('id'`, `t("id"`, `tAttr('id'` and `data-l10n-id="id"` in the page.
fn page_uses(file: &Path, text: &str) -> Vec<Use> {
    let mut out = Vec::new();
    for opener in ["t('", "t(\"", "tAttr('", "data-l10n-id=\"", "l10n('"] {
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
    // `t(cond ? 'one' : 'other', ...)`: each id the first argument's conditions choose.
    for opener in ["t(", "tAttr("] {
        for (start, _) in text.match_indices(opener) {
            let rest = &text[start + opener.len()..];
            if text[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
                || rest.starts_with(['\'', '"'])
            {
                continue;
            }
            out.extend(chosen_ids(rest).into_iter().map(|id| Use {
                file: file.to_owned(),
                id,
                args: None,
            }));
        }
    }
    out
}

/// The quoted ids a call's first argument (`rest` starts right after the opening parenthesis)
/// chooses between with `?` and `:`.
fn chosen_ids(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut previous = ' ';
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => break,
            '\'' | '"' => {
                let end = rest[i + 1..].find(c).map_or(rest.len(), |e| i + 1 + e);
                if depth == 0 && matches!(previous, '?' | ':') {
                    out.push(rest[i + 1..end].to_owned());
                }
                // Past the literal's closing quote.
                while chars.next().is_some_and(|(j, _)| j < end) {}
            }
            _ => {}
        }
        if !c.is_whitespace() {
            previous = c;
        }
    }
    out
}

#[test]
fn the_page_scanner_finds_the_ids_a_condition_chooses() {
    let uses = page_uses(
        Path::new("x.js"),
        "t(on ? 'a-on' : n > 1 ? 'a-many' : 'a-one', { n: f(1, 'x') }); tAttr(open ? 'b-open' : 'b-shut', 'title'); x.t(y ? 'no' : 'none'); t('plain')",
    );
    let ids: Vec<&str> = uses.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(
        ids,
        ["plain", "a-on", "a-many", "a-one", "b-open", "b-shut"]
    );
}

#[test]
fn every_message_the_code_asks_for_exists_with_the_arguments_it_names() {
    let english = english();
    let mut uses = Vec::new();
    for dir in [
        "crates/askdesk-cli/src",
        "src-tauri/src",
        "crates/askdesk-view/src",
        "crates/askdesk-rules/src",
        "crates/askdesk-remote/src",
        "crates/askdesk-connect/src",
    ] {
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

/// The phone's page (`crates/askdesk-remote/page`), which the desk serves with `phone.ftl` alone.
const PHONE_PAGE: &str = "crates/askdesk-remote/page";

/// The ids the phone's page asks for, by file.
fn phone_uses() -> Vec<Use> {
    let mut uses = Vec::new();
    for extension in ["js", "html"] {
        for file in sources(PHONE_PAGE, extension) {
            uses.extend(page_uses(&file, &std::fs::read_to_string(&file).unwrap()));
        }
    }
    uses
}

#[test]
fn every_message_the_phone_asks_for_is_in_the_catalogue_the_desk_sends_it() {
    let phone = english_in(|file| file == "phone.ftl");
    let uses = phone_uses();
    assert!(
        uses.len() > 60,
        "the scan found too few uses: {}",
        uses.len()
    );
    let missing: Vec<String> = uses
        .iter()
        .filter(|used| !phone.contains_key(&used.id))
        .map(|used| format!("{}: {}", used.file.display(), used.id))
        .collect();
    assert!(
        missing.is_empty(),
        "the phone asks for messages phone.ftl lacks:\n{}",
        missing.join("\n")
    );
    // And phone.ftl holds nothing the page never asks for (pairing errors are chosen by code).
    let asked: BTreeSet<&str> = uses.iter().map(|used| used.id.as_str()).collect();
    let page = phone_page_text();
    let unused: Vec<&String> = phone
        .keys()
        .filter(|id| !asked.contains(id.as_str()) && !page.contains(&format!("'{id}'")))
        .collect();
    assert!(
        unused.is_empty(),
        "phone.ftl has messages no page asks for: {unused:?}"
    );
}

/// The text of every module of the phone's page.
fn phone_page_text() -> String {
    sources(PHONE_PAGE, "js")
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap())
        .collect()
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

/// Literal text on the page outside the catalogues, each with why: (file, the text).
const PAGE_ALLOWED: &[(&str, &str)] = &[
    // Said when the page cannot reach the backend, which is where the catalogue comes from.
    (
        "app.js",
        "The askdesk backend is not reachable from this page.",
    ),
    // A console message for whoever debugs the page, not for the person.
    ("l10n.js", "askdesk: ${} catalogue:"),
    // The type a drag of files carries (`DataTransfer.types`), compared with, never shown.
    ("images.js", "Files"),
    // The phone's page: the names WebCrypto and fetch take (algorithms, a method), the label its
    // pairing code is computed over (the desk computes the same bytes), a global's name tested
    // with `in`, and the class names of a permission prompt's allow button.
    ("app.js", "SHA-256"),
    ("app.js", "ECDSA"),
    ("app.js", "HMAC"),
    ("app.js", "POST"),
    ("app.js", "askdesk pairing code v1"),
    ("push.js", "POST"),
    ("push.js", "Notification"),
    ("passkey.js", "allow primary"),
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

/// Where a literal of the page's code stands, as the code just before it says.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Context {
    /// Names for the code: a class list, a CSS selector, an element's tag name to compare with.
    Code,
    /// Put before a person: an element's text (`h(tag, props, 'text')`), a title, label or
    /// placeholder, a toast, an element's `textContent`.
    Shown,
    /// Anything else: words are told from names by how they look.
    Other,
}

/// A string literal of the page's code, template placeholders as `${}`.
#[derive(Debug)]
struct Literal {
    text: String,
    context: Context,
}

/// What the code before a literal (`before`, up to its opening quote) makes of it.
fn context_of(before: &[char]) -> Context {
    let code: String = before
        .iter()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let code = code.trim_end();
    let code_ends = [
        "class:",
        "className =",
        "querySelector(",
        "querySelectorAll(",
        "closest(",
        "matches(",
        "tagName ===",
        "tagName !==",
    ];
    let shown_ends = [
        "title:",
        "placeholder:",
        "'aria-label':",
        "alt:",
        "text:",
        "textContent =",
        ".title =",
        ".placeholder =",
        "toast(",
        // The first child of `h(tag, props, ...)`: after its props.
        "},",
    ];
    if code_ends.iter().any(|end| code.ends_with(end)) {
        Context::Code
    } else if shown_ends.iter().any(|end| code.ends_with(end)) {
        Context::Shown
    } else {
        Context::Other
    }
}

/// Where a `//` or `/* */` comment starting at `i` ends (JavaScript and Rust alike), if one starts there.
fn past_comment(chars: &[char], mut i: usize) -> Option<usize> {
    if chars[i] != '/' {
        return None;
    }
    match chars.get(i + 1) {
        Some('/') => {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            Some(i)
        }
        Some('*') => {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            Some(i + 2)
        }
        _ => None,
    }
}

/// The string literals of a module's code (comments left out), each with its context.
fn js_literals(text: &str) -> Vec<Literal> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(after) = past_comment(&chars, i) {
            i = after;
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
            let context = context_of(&chars[..i]);
            let before_quote = chars[..i]
                .iter()
                .rev()
                .find(|c| !c.is_whitespace())
                .copied();
            let mut literal = String::new();
            // The code of a template's placeholders, each a statement of its own, scanned after it.
            let mut inner = String::new();
            let mut depth = 0;
            i += 1;
            while i < chars.len() && !(chars[i] == c && depth == 0) {
                if chars[i] == '\\' {
                    literal.push(chars[i]);
                    i += 1;
                } else if c == '`' && chars[i] == '$' && chars.get(i + 1) == Some(&'{') {
                    if depth == 0 {
                        literal.push_str("${}");
                    } else {
                        inner.push_str("${");
                    }
                    depth += 1;
                    i += 1;
                } else if c == '`' && depth > 0 && chars[i] == '}' {
                    depth -= 1;
                    inner.push_str(if depth == 0 { ";\n" } else { "}" });
                } else if c == '`' && depth > 0 && chars[i] == '{' {
                    depth += 1;
                    inner.push('{');
                } else if depth == 0 {
                    literal.push(chars[i]);
                } else {
                    inner.push(chars[i]);
                }
                i += 1;
            }
            i += 1;
            let inner = js_literals(&inner);
            // An object's key ({ 'aria-label': ... }) names a property.
            let after = chars[i.min(chars.len())..]
                .iter()
                .find(|c| !c.is_whitespace());
            let key = after == Some(&':') && matches!(before_quote, Some('{' | ','));
            out.push(Literal {
                text: literal,
                context: if key { Context::Code } else { context },
            });
            out.extend(inner);
        } else {
            i += 1;
        }
    }
    out
}

/// Whether a literal reads as words for a person. Shown where a person reads it: any two letters.
/// Elsewhere: a capitalised word ("Skip", "Not sent: ${}"), lower-case words ending a sentence
/// ("just now."), an abbreviation ("LAN"), two or more words of letters alone between spaces
/// ("never connected"), or
/// letters outside ASCII (text written in another language). Class lists and selectors are code.
fn reads_as_words(literal: &Literal) -> bool {
    let text = literal.text.as_str();
    if literal.context == Context::Code || NOT_WORDS.contains(&text) {
        return false;
    }
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        .collect();
    if literal.context == Context::Shown {
        return !words.is_empty();
    }
    let capitalised = words.iter().any(|w| {
        let mut chars = w.chars();
        chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
    });
    let sentence =
        words.len() >= 2 && text.contains(' ') && text.trim_end().ends_with(['.', '…', '?', '!']);
    // Whole words between spaces: "prompts," is one, "[data-x]" and ".card" are not.
    let phrase = text
        .split_whitespace()
        .map(|w| w.trim_end_matches([',', '.', ':', ';', '?', '!']))
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_alphabetic() || c == '’'))
        .count()
        >= 2;
    let abbreviation = words.iter().any(|w| w.chars().all(char::is_uppercase));
    let foreign = text.chars().any(|c| c.is_alphabetic() && !c.is_ascii());
    capitalised || abbreviation || sentence || phrase || foreign
}

#[test]
fn the_page_puts_no_words_outside_the_catalogues() {
    let mut left = Vec::new();
    for file in sources("ui", "js")
        .into_iter()
        .chain(sources(PHONE_PAGE, "js"))
    {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for literal in js_literals(&std::fs::read_to_string(&file).unwrap()) {
            if reads_as_words(&literal)
                && !PAGE_ALLOWED.contains(&(name.as_str(), literal.text.as_str()))
            {
                left.push(format!("{name}: {:?}", literal.text));
            }
        }
    }
    // The window's frame: every element with words of its own, or a title, label or placeholder,
    // names its message.
    for page in ["ui/index.html", "crates/askdesk-remote/page/index.html"] {
        left.extend(unnamed_elements(page));
    }
    assert!(
        left.is_empty(),
        "on the page outside the catalogues:\n{}",
        left.join("\n")
    );
}

/// The elements of a page's frame (`index.html`) with words of their own, or a title, label or
/// placeholder, that name no message.
fn unnamed_elements(page: &str) -> Vec<String> {
    let mut left = Vec::new();
    let html = std::fs::read_to_string(root().join(page)).unwrap();
    let body = &html[html.find("<body>").unwrap()..];
    for (n, tag) in body.split('<').enumerate().skip(1) {
        let (open, text) = tag.split_once('>').unwrap_or((tag, ""));
        let worded = text.trim().chars().filter(|c| c.is_alphabetic()).count() >= 2
            && text.trim() != "askdesk";
        let attributes = ["title=", "aria-label=", "placeholder="]
            .iter()
            .any(|a| open.contains(a));
        if !open.starts_with('/') && (worded || attributes) && !open.contains("data-l10n-id") {
            left.push(format!("{page}, element {n}: <{open}>{}", text.trim()));
        }
    }
    left
}

#[test]
fn the_page_scanner_sees_words_and_not_code() {
    let code = "h('span', { class: 'link skip' }, 'Skip this question'); // 'Not this'\n\
        toast(`Not sent: ${(e && e.message) || e}`); if (e.key === 'Tab') x.replace(/\\s*(Recommended)$/, '');\n\
        t('waited-days', { days }); h('b', {}, 'just now.');\n\
        h('span', { class: 'muted connect-via' }, 'passkey'); y('never connected', 'tailnet', '已连接');\n\
        e.target.closest('button, a[href], summary'); if (el.tagName === 'TR') h('i', { title: 'any name' });\n\
        h('label', { class: 'option other' }, 'x'); b.textContent = 'Use';\n\
        h('li', { x }, { 'aria-selected': 'true', 'data-x': 'y' }); k = { lan: 'LAN' };\n\
        h('p', {}, `${on ? 'Connecting' : `${n} more`} changes ${f}:`, `pill${on ? ' active' : ''}`);";
    let words: Vec<String> = js_literals(code)
        .into_iter()
        .filter(reads_as_words)
        .map(|l| l.text)
        .collect();
    assert_eq!(
        words,
        [
            "Skip this question",
            "Not sent: ${}",
            "just now.",
            "passkey",
            "never connected",
            "已连接",
            "any name",
            "Use",
            "LAN",
            "${} changes ${}:",
            "Connecting",
        ]
    );
}

/// The backend's sources whose text reaches the person: what the desktop app composes for the
/// page, its notifications and the page's commands' errors (`askdesk-view`, `src-tauri`), what
/// Connect reports about a client and its errors (`askdesk-connect`, for the desktop and the
/// command line), the answer rules' words, and the phone's server (what it tells a phone, the
/// lock screen, the problems the Devices view shows).
const BACKEND: [&str; 5] = [
    "crates/askdesk-view/src",
    "crates/askdesk-connect/src",
    "src-tauri/src",
    "crates/askdesk-rules/src",
    "crates/askdesk-remote/src",
];

/// The calls whose text is for whoever reads the log or debugs, not for the person: left out of
/// the backend's scan with everything between their parentheses.
const NOT_FOR_THE_PERSON: &[&str] = &[
    "trace!(",
    "debug!(",
    "info!(",
    "warn!(",
    "error!(",
    "panic!(",
    "unreachable!(",
    "expect(",
    "assert!(",
    "debug_assert!(",
];

/// Literal sentences the backend composes outside the catalogues, each with why: (file, text).
const BACKEND_ALLOWED: &[(&str, &str)] = &[
    // Markup and attribute values of the rendered markdown, and the name syntect gives plain
    // text: not words a person reads.
    (
        "markdown.rs",
        r#"<span class="task-box task-done">☑</span> "#,
    ),
    ("markdown.rs", r#"<span class="task-box">☐</span> "#),
    ("markdown.rs", "Plain Text"),
    ("markdown.rs", "noopener noreferrer"),
    // Why the desktop cannot start, on its standard error before it has a window or a language
    // (as the CLI's `Error:` line, it stays English).
    (
        "graphics.rs",
        "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)",
    ),
    (
        "graphics.rs",
        "cannot open the display {display} (GTK refused to start)",
    ),
    (
        "graphics.rs",
        "; `askdesk serve` runs the broker without a window",
    ),
    // The comment a drafted rule carries into the rules file, whose keys and comments are
    // English: the file reads the same whoever edits it.
    ("draft.rs", "an agent"),
    ("draft.rs", "# Made from your answer to {} on {}.\\n"),
    // The phone's server. Its content security policy and the markup around the authority's page.
    (
        "pages.rs",
        "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    ),
    (
        "pages.rs",
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"color-scheme\" content=\"light dark\"><title>askdesk</title></head><body>",
    ),
    // Bytes a signature or a MAC is computed over, and the names in the desk's certificates:
    // protocol, the same in every language.
    ("pairing.rs", "askdesk pairing code v1"),
    ("certs.rs", "askdesk on {}"),
    ("certs.rs", "askdesk remote"),
    // An option label of the clients' own (Claude Code's plan mode), compared with, never composed.
    ("risk.rs", "Keep planning"),
    // Mistakes of the calling code, never of a person: a number with no canonical form, a
    // request offered twice or past the limit the host checks first.
    ("canonical.rs", "only integers up to 2^53 have a canonical form here"),
    ("pending.rs", "request {0} is already offered"),
    ("pending.rs", "the remote already holds {MAX_PENDING} requests"),
    // Why a push service did not take a notice: for the log (the Devices view says only that a
    // subscription was dropped, in the catalogues' words).
    ("push.rs", "a push service root: {error}"),
    ("push.rs", "the push service did not answer in time"),
    ("push.rs", "the subscription is not usable"),
    ("push.rs", "{host} is not a known push service"),
    ("push.rs", "no host"),
    ("push.rs", "not base64url"),
    ("push.rs", "the push service answered {other}"),
    // The detail of a malformed message (a broken client, not a person's mistake), after the
    // catalogue's "the message is malformed:"; and the API's message beside its stable code,
    // which the phone's page reads and words itself.
    ("remote.rs", "no request id {:?}"),
    ("remote.rs", "the nonce is not 16 bytes of base64url"),
    ("remote.rs", "only a permission prompt is allowed with a passkey"),
    ("remote.rs", "the answer has no canonical form"),
    ("socket.rs", "an answer is not a passkey's"),
    ("server.rs", "this server does not serve that host"),
    ("server.rs", "requests from other sites are refused"),
    ("server.rs", "publicKey is not a raw P-256 public key"),
    ("server.rs", "proof is not base64url"),
    ("server.rs", "the subscription is not signed by a paired device's key"),
    (
        "server.rs",
        "not an https push endpoint with a P-256 key and a 16-byte secret",
    ),
    (
        "server.rs",
        "this desk serves a certificate of its own choosing: nothing to install",
    ),
    // fontconfig's names for its generic families, compared with the desktop's font, never shown.
    ("font.rs", "sans serif"),
    // A WebSocket close frame's reason (RFC 6455), which the page never shows.
    ("socket.rs", "the desk stopped"),
    // The example rule and the comment a new rules file starts with: the file's keys and comments
    // are English, as above.
    (
        "edit.rs",
        r#"[[rule]]\nname = \"tests\"\nmatch = { tool = \"Bash\", command = \"cargo test*\", cwd = \"/home/me/src\" }\nanswer = \"Allow once\"\n"#,
    ),
    (
        "edit.rs",
        r#"# askdesk answer rules: each [[rule]] answers the questions it matches, so they never reach you.\n\
         # Rules are tried in order; the file is read again as soon as it is saved.\n\
         # How to write them: docs/rules.md in askdesk's documentation; `askdesk rules test`\n\
         # replays your history through them.\n\
         #\n\
         # For example, running the tests in one project is always fine:\n\
         #\n"#,
    ),
    // The clients' own names, as they call themselves.
    ("client.rs", "Claude Code"),
    ("client.rs", "Gemini CLI"),
    // The autostart entry written to turn starting at login off: a desktop entry's syntax and
    // its comment, read by the session and whoever edits the file, not shown by askdesk.
    ("autostart.rs", "[Desktop Entry]"),
    (
        "autostart.rs",
        r#"# Written by askdesk's \"Start at login\" switch: keeps the system's askdesk autostart entry off.\n\
                    [Desktop Entry]\nType=Application\nName=askdesk\nExec=askdesk-desktop --hidden\nHidden=true\n"#,
    ),
    // The labels of the options `askdesk hook` offers for a permission prompt, which are the
    // answer the client receives and the label a rule names in the file: the clients' words.
    ("standing.rs", "Allow once"),
    ("standing.rs", "Always allow in this session"),
    ("standing.rs", "Approve, ask before edits"),
    ("standing.rs", "Approve, accept edits"),
];

/// The string literals of Rust code (comments and char literals left out), raw strings included,
/// without the calls of [`NOT_FOR_THE_PERSON`].
fn rust_literals(code: &str) -> Vec<String> {
    let mut code = code.to_owned();
    for call in NOT_FOR_THE_PERSON {
        while let Some(start) = code.find(call) {
            let open = start + call.len();
            let mut depth = 1;
            let mut end = code.len();
            let mut in_string = false;
            let mut escaped = false;
            for (i, c) in code[open..].char_indices() {
                match c {
                    '\\' if in_string && !escaped => {
                        escaped = true;
                        continue;
                    }
                    '"' if !escaped => in_string = !in_string,
                    '(' if !in_string => depth += 1,
                    ')' if !in_string => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
                escaped = false;
            }
            code.replace_range(start..end, "");
        }
    }
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(after) = past_comment(&chars, i) {
            i = after;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A char literal ('"'); a lifetime has no closing quote there.
            i += 3;
        } else if c == '\'' && chars.get(i + 1) == Some(&'\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == 'r'
            && matches!(chars.get(i + 1), Some('#' | '"'))
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            let start = i + 1 + hashes + 1;
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let rest: String = chars[start.min(chars.len())..].iter().collect();
            let end = rest.find(&close).unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
            i = start + rest[..end].chars().count() + close.chars().count();
        } else if c == '"' {
            let mut literal = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    literal.push(chars[i]);
                    i += 1;
                }
                if let Some(&c) = chars.get(i) {
                    literal.push(c);
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

/// Whether a literal is a sentence for a person: two words in a row (letters, apart by one
/// space) outside its `{...}` placeholders.
fn is_sentence(literal: &str) -> bool {
    let mut plain = String::new();
    let mut depth = 0;
    for c in literal.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => plain.push('\u{0}'),
        }
    }
    plain
        .split(|c: char| !(c.is_alphabetic() || c == ' ' || c == '\''))
        .any(|run| {
            run.split(' ')
                .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
                .count()
                >= 2
                && run.contains(|c: char| c.is_alphabetic() && c.is_lowercase())
        })
}

#[test]
fn the_backend_composes_no_sentences_outside_the_catalogues() {
    let mut left = Vec::new();
    let mut scanned = 0;
    for dir in BACKEND {
        for file in sources(dir, "rs") {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("\n#[cfg(test)]").next().unwrap_or(&text);
            for literal in rust_literals(code) {
                scanned += 1;
                if is_sentence(&literal)
                    && !BACKEND_ALLOWED.contains(&(name.as_str(), literal.as_str()))
                {
                    left.push(format!("{dir}/{name}: {literal:?}"));
                }
            }
        }
    }
    assert!(scanned > 200, "the scan found too few literals: {scanned}");
    assert!(
        left.is_empty(),
        "composed outside the catalogues ({}):\n{}",
        left.len(),
        left.join("\n")
    );
}

#[test]
fn the_backend_scanner_sees_sentences_and_not_code_or_logs() {
    let code = r##"let a = format!("{who} withdrew the question"); // "Not this"
        let b = "rules.toml"; let c = '"'; let d = r#"a "quoted" word list"#;
        tracing::warn!("a log line {x}", x = f("nested (words)"));
        #[error("an error the page shows")] E; let e: &'a str = "snake_case_only";
        t!(in messages, "rules-warning", name = "x");"##;
    let sentences: Vec<String> = rust_literals(code)
        .into_iter()
        .filter(|l| is_sentence(l))
        .collect();
    assert_eq!(
        sentences,
        [
            "{who} withdrew the question",
            "a \"quoted\" word list",
            "an error the page shows"
        ]
    );
    assert!(!is_sentence("{a} {b}"));
    assert!(!is_sentence("Plain"));
    let uses = rust_uses(Path::new("x.rs"), code);
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0].id, "rules-warning");
    assert_eq!(uses[0].args, Some(BTreeSet::from(["name".to_owned()])));
}
