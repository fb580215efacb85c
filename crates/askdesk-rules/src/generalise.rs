//! A question's text generalised for "questions like it": its numbers and names may vary, every
//! other word stays exactly as written. The pattern fails closed: it is never broader than the
//! parts the person sees marked as varying.
//!
//! The text is read word by word (runs of non-white space; the white space between them is kept
//! as written). A word's core is the word without the punctuation around it (`(`, `"`, `?`,
//! `,`, ...). A core varies when it is
//! - a **number**: ASCII digits only, matched by `[0-9]+`;
//! - a **name**: only letters, digits and `_ . / -` (ASCII), with a digit, `/` or `_` in it, or
//!   a `.` between two parts of at least two characters (`lib.rs`, `README.md`), or written in
//!   quotes or backticks (`` `deploy` ``, `"main"`); matched by `[A-Za-z0-9_./-]+`, so a name
//!   never takes a space, a quote or any other character.
//!
//! Everything else, the punctuation around a varying core included, is matched literally, and the
//! whole text is anchored (`^...$`): another word, one word more or less, or a name with a space
//! in it does not match.

/// What a varying part of a question may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Varies {
    /// Any run of ASCII digits.
    Number,
    /// Any run of ASCII letters, digits and `_ . / -`.
    Name,
}

impl Varies {
    /// The regular expression a part of this kind matches.
    pub fn pattern(self) -> &'static str {
        match self {
            Varies::Number => "[0-9]+",
            Varies::Name => "[A-Za-z0-9_./-]+",
        }
    }
}

/// A piece of the question as the person reads it: kept as written, or varying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The text as the question has it.
    pub text: String,
    /// `None` when the text is matched exactly.
    pub varies: Option<Varies>,
}

/// A question's text with its numbers and names varying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generalised {
    /// The anchored regular expression (`^...$`) for `match.question`.
    pub regex: String,
    /// The text, in order, each varying part marked.
    pub parts: Vec<Part>,
}

impl Generalised {
    /// Whether anything in the text varies.
    pub fn varies(&self) -> bool {
        self.parts.iter().any(|p| p.varies.is_some())
    }
}

/// The punctuation that may open a word around its core, and what closes it.
const OPENING: &str = "([{<#\"'`“‘";
const CLOSING: &str = ")]}>\"'`”’?!.,;:";

/// `text` with its numbers and names generalised (see the module's documentation).
pub fn generalise(text: &str) -> Generalised {
    let mut parts: Vec<Part> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let space = rest.len() - rest.trim_start().len();
        if space > 0 {
            literal(&mut parts, &rest[..space]);
            rest = &rest[space..];
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        let core = word.trim_start_matches(|c| OPENING.contains(c));
        let lead = &word[..word.len() - core.len()];
        let core = core.trim_end_matches(|c| CLOSING.contains(c));
        let trail = &word[lead.len() + core.len()..];
        match kind(core, quoted(lead, trail)) {
            Some(varies) => {
                literal(&mut parts, lead);
                parts.push(Part {
                    text: core.to_owned(),
                    varies: Some(varies),
                });
                literal(&mut parts, trail);
            }
            None => literal(&mut parts, word),
        }
    }
    parts.retain(|p| !p.text.is_empty());
    let body: String = parts
        .iter()
        .map(|p| match p.varies {
            Some(varies) => varies.pattern().to_owned(),
            None => regex::escape(&p.text),
        })
        .collect();
    Generalised {
        regex: format!("^{body}$"),
        parts,
    }
}

/// Adds text matched as written, joined to the literal part before it.
fn literal(parts: &mut Vec<Part>, piece: &str) {
    match parts.last_mut() {
        Some(Part { text, varies: None }) => text.push_str(piece),
        _ => parts.push(Part {
            text: piece.to_owned(),
            varies: None,
        }),
    }
}

/// Whether the core sits in a pair of quotes or backticks.
fn quoted(lead: &str, trail: &str) -> bool {
    let (Some(open), Some(close)) = (lead.chars().last(), trail.chars().next()) else {
        return false;
    };
    matches!(
        (open, close),
        ('"', '"') | ('\'', '\'') | ('`', '`') | ('“', '”') | ('‘', '’')
    )
}

/// What a word's core is, when it varies.
fn kind(core: &str, quoted: bool) -> Option<Varies> {
    if core.is_empty() {
        return None;
    }
    if core.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Varies::Number);
    }
    let name_chars = core
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b));
    if !name_chars || !core.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let dotted = core
        .split('.')
        .collect::<Vec<_>>()
        .windows(2)
        .any(|pair| pair[0].len() >= 2 && pair[1].len() >= 2);
    let named = core
        .bytes()
        .any(|b| b.is_ascii_digit() || b == b'/' || b == b'_')
        || dotted;
    (named || quoted).then_some(Varies::Name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn matcher(text: &str) -> Regex {
        Regex::new(&generalise(text).regex).unwrap()
    }

    fn varying(text: &str) -> Vec<(String, Varies)> {
        generalise(text)
            .parts
            .into_iter()
            .filter_map(|p| p.varies.map(|v| (p.text, v)))
            .collect()
    }

    #[test]
    fn numbers_and_names_vary_and_nothing_else() {
        assert_eq!(
            varying("Delete the 14 stale branches merged into release/2.3?"),
            [
                ("14".to_owned(), Varies::Number),
                ("release/2.3".to_owned(), Varies::Name)
            ]
        );
        assert_eq!(
            varying("Rename `old_name` to \"new\" in src/lib.rs, README.md and e.g. Cargo?"),
            [
                ("old_name".to_owned(), Varies::Name),
                ("new".to_owned(), Varies::Name),
                ("src/lib.rs".to_owned(), Varies::Name),
                ("README.md".to_owned(), Varies::Name),
            ]
        );
        // Plain words, hyphenated words and words with other characters stay as written.
        assert!(varying("Re-run the well-known checks, e.g. lint?").is_empty());
        assert!(varying("Is 1+1 = two? Café 3€").is_empty());
        assert!(varying("Proceed?").is_empty());
        assert!(!generalise("Proceed?").varies());
    }

    #[test]
    fn the_pattern_matches_its_own_text_and_the_same_text_with_other_numbers_and_names() {
        for text in [
            "Delete the 14 stale feature branches?",
            "Run tests in crates/askdesk-view (3 failed)?",
            "Bump v1.2.3 to v1.2.4? [y/n] $HOME ^x* (a|b)",
            "  Merge PR #512\tinto `main`?\n",
            "Rename ‘old’ to “new”?",
        ] {
            assert!(matcher(text).is_match(text), "{text:?}");
        }
        let m = matcher("Delete the 14 stale feature branches?");
        assert!(m.is_match("Delete the 3 stale feature branches?"));
        let m = matcher("Run tests in crates/askdesk-view (3 failed)?");
        assert!(m.is_match("Run tests in crates/askdesk-core (12 failed)?"));
        let m = matcher("Merge PR #512 into `main`?");
        assert!(m.is_match("Merge PR #7 into `release-2`?"));
    }

    #[test]
    fn other_words_do_not_match() {
        let m = matcher("Delete the 14 stale feature branches?");
        for other in [
            "Delete the 14 stale release branches?",
            "Delete all stale feature branches?",
            "Delete the 14 15 stale feature branches?",
            "Delete the -14 stale feature branches?",
            "Delete the 14 stale feature branches? And push them.",
            "Delete the 14 stale feature branches?\n",
            "Really delete the 14 stale feature branches?",
            "delete the 14 stale feature branches?",
            "Delete the x stale feature branches?",
            "Delete the 14  stale feature branches?",
        ] {
            assert!(!m.is_match(other), "{other:?}");
        }
        let m = matcher("Merge `feature_x` into main?");
        for other in [
            "Merge `feature x` into main?",
            "Merge `$(rm -rf ~)` into main?",
            "Merge `a;b` into main?",
            "Merge `x` into master?",
            "Merge feature_x into main?",
            "Merge `` into main?",
            "Merge `a` `b` into main?",
        ] {
            assert!(!m.is_match(other), "{other:?}");
        }
    }

    #[test]
    fn literal_parts_are_escaped() {
        let m = matcher("Apply 2 fixes (a|b) to *.rs?");
        assert!(m.is_match("Apply 5 fixes (a|b) to *.rs?"));
        assert!(!m.is_match("Apply 5 fixes a to *.rs?"));
        assert!(!m.is_match("Apply 5 fixes (a|b) to x.rs?"));
    }
}
