//! Text that agents and answerers supplied, made safe to print on a terminal in human-readable
//! output, and measured, clipped and padded by the columns it takes there.
//!
//! Question texts, agent labels and ids, `meta` values, answerer labels and answers are whatever a
//! client sent. Printed raw, an escape sequence in them would clear the screen, retitle the
//! window or move the cursor, and a bidi override would make a line show other text than it
//! holds. [`one_line`] is the one rule every table and listing applies, [`visible`] the same rule
//! for `Error:` messages, which keep their line breaks (both `askdesk_core::text`'s, which the
//! phone's lock screen shares); `--json` output stays exact and never goes through either.

use unicode_width::UnicodeWidthStr;

pub use askdesk_core::text::{one_line, visible};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
