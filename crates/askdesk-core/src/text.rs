//! Text that agents and answerers supplied, made safe to show where it could act: every control
//! character and bidi control written as its code point (`\u{1b}`), the one escape rule the CLI's
//! output, a phone's lock screen and the phone's page (which mirrors it in JavaScript) share.
//!
//! Question texts, agent labels and ids, `meta` values, answerer labels and answers are whatever a
//! client sent. Shown raw, an escape sequence in them would clear a terminal, retitle a window or
//! move the cursor, a line break would forge a line of its own, and a bidi override would make a
//! line show other text than it holds.

use std::fmt::Write as _;

/// `text` as one line that shows what it holds: each run of whitespace (newlines, tabs and
/// carriage returns included) becomes one space and the ends are trimmed; every other control
/// character (C0, DEL, C1) and every bidi control (U+061C, U+200E, U+200F, U+202A to U+202E,
/// U+2066 to U+2069) is written as its code point, `\u{1b}`, so it neither acts on a terminal nor
/// reorders the line.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        escape_into(&mut out, word);
    }
    out
}

/// `text` with its line breaks and tabs kept and every other character [`one_line`] escapes
/// escaped the same way: for messages of several lines, such as `Error: <message>`, whose message
/// may be an answerer's.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        for (n, part) in line.split('\t').enumerate() {
            if n > 0 {
                out.push('\t');
            }
            escape_into(&mut out, part);
        }
    }
    out
}

/// Appends `text` with each character [`is_escaped`] as its `\u{..}` escape.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        if is_escaped(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
}

/// A control character, or a character that changes the direction of the text around it: what
/// [`one_line`] and [`visible`] escape, and what a name kept for display may not hold.
pub fn is_escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_becomes_one_space() {
        assert_eq!(
            one_line("  first\nline two\rCR\ttab\u{85}nel  "),
            "first line two CR tab nel"
        );
        assert_eq!(
            one_line("Proceed with the cleanup?"),
            "Proceed with the cleanup?"
        );
        assert_eq!(one_line("宽字符 ok é"), "宽字符 ok é");
    }

    #[test]
    fn visible_keeps_lines_and_tabs() {
        assert_eq!(
            visible("line 1\n\tline\u{1b}[2J 2\r\u{202e}\n"),
            "line 1\n\tline\\u{1b}[2J 2\\u{d}\\u{202e}\n"
        );
    }

    #[test]
    fn control_and_bidi_characters_are_shown_as_escapes() {
        assert_eq!(
            one_line("esc \u{1b}[2J\u{1b}]0;pwned\u{7} title"),
            "esc \\u{1b}[2J\\u{1b}]0;pwned\\u{7} title"
        );
        assert_eq!(
            one_line("a\u{0}b\u{7f}c\u{9b}31m"),
            "a\\u{0}b\\u{7f}c\\u{9b}31m"
        );
        assert_eq!(
            one_line("invoice_\u{202e}fdp.exe \u{2066}x\u{2069} \u{200f}"),
            "invoice_\\u{202e}fdp.exe \\u{2066}x\\u{2069} \\u{200f}"
        );
        for c in ('\0'..='\u{10ffff}').filter(|&c| is_escaped(c) && !c.is_whitespace()) {
            let shown = one_line(&c.to_string());
            assert!(
                shown.chars().all(|c| c.is_ascii_graphic()),
                "{c:?} as {shown}"
            );
        }
    }
}
