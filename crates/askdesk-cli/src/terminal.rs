//! Text that agents and answerers supplied, made safe to print on a terminal in human-readable
//! output, and measured, clipped and padded by the columns it takes there.
//!
//! Question texts, agent labels and ids, `meta` values, answerer labels and answers are whatever a
//! client sent. Printed raw, an escape sequence in them would clear the screen, retitle the
//! window or move the cursor, and a bidi override would make a line show other text than it
//! holds. [`one_line`] is the one rule every table and listing applies, [`visible`] the same rule
//! for `Error:` messages, which keep their line breaks; `--json` output stays exact and never goes
//! through either.

use std::fmt::Write as _;

use unicode_width::UnicodeWidthStr;

/// `text` as one line that shows what it holds: each run of whitespace (newlines, tabs and
/// carriage returns included) becomes one space and the ends are trimmed; every other control
/// character (C0, DEL, C1) and every bidi control (U+061C, U+200E, U+200F, U+202A to U+202E,
/// U+2066 to U+2069) is written as its code point, `\u{1b}`, so it neither acts on the terminal nor
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

/// Appends `text` with each character that acts on the terminal as its `\u{..}` escape.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        if acts_on_the_terminal(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
}

/// `text` as [`one_line`], cut to at most `max` terminal columns with an ellipsis. A wide
/// character (CJK, most emoji) takes two columns, so it counts twice.
pub fn clip(text: &str, max: usize) -> String {
    let line = one_line(text);
    if line.width() <= max {
        return line;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in line.chars() {
        let width = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + width > max.saturating_sub(1) {
            break;
        }
        used += width;
        out.push(c);
    }
    out + "…"
}

/// Rows under a header as aligned columns two spaces apart, each padded to the display width of
/// its widest cell (not its count of characters, which would misalign wide text); no trailing
/// spaces. The cells are printed as they are: pass client-supplied text through [`one_line`] or
/// [`clip`] first.
pub fn columns<const N: usize>(header: [impl AsRef<str>; N], rows: &[[String; N]]) -> String {
    let mut widths = header.each_ref().map(|h| h.as_ref().width());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.width());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header.map(|h| h.as_ref().to_owned())).chain(rows.iter().cloned()) {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(widths) {
            line.push_str(cell);
            line.push_str(&" ".repeat(width - cell.width() + 2));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A control character, or a character that changes the direction of the text around it.
fn acts_on_the_terminal(c: char) -> bool {
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
    fn wide_text_is_clipped_and_padded_by_its_columns() {
        let question = "宽字符的问题很长很长很长";
        assert_eq!(question.width(), 24);
        assert_eq!(clip(question, 24), question);
        assert_eq!(clip(question, 10), "宽字符的…");
        assert_eq!(clip(question, 11), "宽字符的问…");
        assert_eq!(clip("abcdef", 4), "abc…");
        let table = columns(
            ["Q", "BY"],
            &[
                ["宽字符".to_owned(), "a".to_owned()],
                ["abc".to_owned(), "b".to_owned()],
            ],
        );
        assert_eq!(table, "Q       BY\n宽字符  a\nabc     b\n");
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
        for c in ('\0'..='\u{10ffff}').filter(|&c| acts_on_the_terminal(c) && !c.is_whitespace()) {
            let shown = one_line(&c.to_string());
            assert!(
                shown.chars().all(|c| c.is_ascii_graphic()),
                "{c:?} as {shown}"
            );
        }
    }
}
