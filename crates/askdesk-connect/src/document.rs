//! A client's settings file as jsonc-parser's concrete syntax tree: read, edited in place and
//! written back with everything askdesk did not add as it was (layout, key order, numbers as
//! written, repeated keys, escapes, comments), askdesk's own entries laid out in the file's style.

use std::path::Path;

use askdesk_i18n::t;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use jsonc_parser::ParseOptions;

use crate::error::{Error, Result};

/// A value askdesk writes, its keys in the order they are written.
pub type Entry = CstInputValue;

/// The JSON a settings file may hold: JSON, with the comments and trailing commas of JSONC
/// (Gemini CLI reads them), and none of JSON5's other liberties.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// A settings file's text as it is, and its tree as askdesk edits it.
pub(crate) struct Document {
    /// The file as read (empty when it does not exist).
    before: String,
    root: CstRootNode,
    existed: bool,
}

impl Document {
    /// The file at `path`: an empty object when it does not exist or holds only whitespace; an
    /// error when it is not a JSON object.
    pub(crate) fn load(path: &Path) -> Result<Document> {
        let (before, existed) = match std::fs::read_to_string(path) {
            Ok(text) => (text, true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
            Err(e) => {
                return Err(Error::Internal(t!(
                    "connect-cannot-read",
                    path = path.display().to_string(),
                    error = e.to_string()
                )))
            }
        };
        Document::parse(before, existed, path)
    }

    /// `before`, the text of the file at `path`, which `existed` or not.
    pub(crate) fn parse(before: String, existed: bool, path: &Path) -> Result<Document> {
        let root = CstRootNode::parse(&before, &options()).map_err(|e| {
            Error::Input(t!(
                "connect-not-json",
                path = path.display().to_string(),
                error = e.to_string()
            ))
        })?;
        if root.value().is_some() && root.object_value().is_none() {
            return Err(Error::Input(t!(
                "connect-not-json-object",
                path = path.display().to_string()
            )));
        }
        Ok(Document {
            before,
            root,
            existed,
        })
    }

    pub(crate) fn existed(&self) -> bool {
        self.existed
    }

    /// The file's text as read.
    pub(crate) fn before(&self) -> &str {
        &self.before
    }

    /// The file's text as edited; a file that had no object gets one, with a final newline.
    pub(crate) fn text(&self) -> String {
        self.root.to_string()
    }

    /// The top-level object (created when the file has none).
    pub(crate) fn object(&self) -> CstObject {
        self.root.object_value_or_set()
    }
}

/// The property `name` of `object`: the last one when the name repeats, the one JSON parsers
/// (and so the clients) read.
pub(crate) fn property(object: &CstObject, name: &str) -> Option<CstObjectProp> {
    object
        .properties()
        .into_iter()
        .rev()
        .find(|prop| prop.decoded_name().as_deref() == Some(name))
}

/// Every property named `name` in `object`.
pub(crate) fn properties(object: &CstObject, name: &str) -> Vec<CstObjectProp> {
    object
        .properties()
        .into_iter()
        .filter(|prop| prop.decoded_name().as_deref() == Some(name))
        .collect()
}

/// What a node means, for reading and comparing (numbers by value, repeated keys as parsers
/// read them).
pub(crate) fn value(node: &CstNode) -> serde_json::Value {
    node.to_serde_value().unwrap_or(serde_json::Value::Null)
}

/// What `entry` means, to compare with what a file holds.
pub(crate) fn entry_value(entry: &Entry) -> serde_json::Value {
    serde_json::from_str(&render(entry)).expect("an entry renders as JSON")
}

/// `entry` as a JSON document of its own (two-space indents), as a snippet shows it.
pub(crate) fn render(entry: &Entry) -> String {
    let root = CstRootNode::parse("", &options()).expect("empty text parses");
    root.set_value(entry.clone());
    root.to_string().trim_end().to_owned()
}

/// Adds `name: entry` as the first property of `object`, so that no line of the file changes but
/// the ones added (a property added last would add a comma to the line before it). In the
/// object's style: on lines of its own, indented as its siblings are, or, in an object written on
/// one line, on that line without spaces.
pub(crate) fn prepend(object: &CstObject, name: &str, entry: Entry) {
    if spans_lines(&object.clone().into()) || object.properties().is_empty() && multiline(&entry) {
        object.insert(0, name, entry);
        return;
    }
    // The tree lays an object it adds to on several lines: the one-line object is written again
    // as its own text with the property added after its opening brace.
    let text = object.to_string();
    let comma = if object.properties().is_empty() {
        ""
    } else {
        ","
    };
    let name = serde_json::to_string(name).expect("a string serializes");
    let raw = format!("{{{name}:{}{comma}{}", compact(&entry), &text[1..]);
    set_raw(object.clone().replace_with(Entry::Number("0".into())), raw);
}

/// Adds `entry` to `array` at `index`, in the array's style (as [`prepend`] does).
pub(crate) fn insert(array: &CstArray, index: usize, entry: Entry) {
    if spans_lines(&array.clone().into()) || array.elements().is_empty() {
        array.insert(index, entry);
    } else if index == 0 {
        let text = array.to_string();
        let raw = format!("[{},{}", compact(&entry), &text[1..]);
        set_raw(array.clone().replace_with(Entry::Number("0".into())), raw);
    } else {
        // A placeholder keeps the array on its line; it then reads as the entry without spaces.
        set_raw(
            Some(array.insert(index, Entry::Number("0".into()))),
            compact(&entry),
        );
    }
}

fn set_raw(node: Option<CstNode>, raw: String) {
    node.and_then(|node| node.as_number_lit())
        .expect("a number was inserted")
        .set_raw_value(raw);
}

/// Whether a container is written on several lines.
fn spans_lines(node: &CstNode) -> bool {
    node.children().iter().any(CstNode::is_newline)
}

fn multiline(entry: &Entry) -> bool {
    matches!(entry, Entry::Object(fields) if !fields.is_empty())
        || matches!(entry, Entry::Array(items) if items.iter().any(multiline))
}

/// `entry` on one line without spaces.
fn compact(entry: &Entry) -> String {
    let text = |s: &str| serde_json::to_string(s).expect("a string serializes");
    match entry {
        Entry::Null => "null".to_owned(),
        Entry::Bool(b) => b.to_string(),
        Entry::Number(n) => n.clone(),
        Entry::String(s) => text(s),
        Entry::Array(items) => format!(
            "[{}]",
            items.iter().map(compact).collect::<Vec<_>>().join(",")
        ),
        Entry::Object(fields) => format!(
            "{{{}}}",
            fields
                .iter()
                .map(|(k, v)| format!("{}:{}", text(k), compact(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}
