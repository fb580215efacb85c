//! Shell-style globs for rule matching: `*` matches any run of characters (slashes and line breaks
//! included, `**` no more than `*`), `?` one character, `\*`, `\?` and `\\` a literal `*`, `?` and
//! `\`, everything else itself (brackets and braces too).

use std::fmt;
use std::sync::OnceLock;

use askdesk_i18n::t;
use regex::Regex;

/// The most characters a glob with `*` or `?` may have. Its regular expression then always fits
/// the regex crate's default size limit (a test holds it to that), so compiling it cannot fail.
pub const MAX_WILDCARD_GLOB_CHARS: usize = 10_000;

/// A glob: the text it matches exactly, or, when it has a wildcard, the regular expression built
/// from it (anchored at both ends, `*` as `(?s:.*)`, `?` as `(?s:.)`, everything else escaped), so
/// matching is the regex crate's linear-time search.
#[derive(Clone)]
pub struct Glob {
    pattern: String,
    matcher: Matcher,
}

#[derive(Clone)]
enum Matcher {
    /// A glob without `*` or `?`: its text, escapes resolved.
    Literal(String),
    Wildcard {
        /// The literal text before the first wildcard, which a match starts with: most texts a
        /// rule is tried on fail there, before its regex is needed.
        prefix: String,
        /// The regex's source, compiled on first use: a file of many rules loads without
        /// compiling the regexes of rules no request reaches.
        source: String,
        regex: OnceLock<Regex>,
    },
}

impl Glob {
    /// Reads `pattern`; fails when it has a wildcard and more than [`MAX_WILDCARD_GLOB_CHARS`]
    /// characters.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let mut source = String::with_capacity(pattern.len() + 16);
        let mut literal = String::with_capacity(pattern.len());
        let mut prefix = None;
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            let c = match c {
                '*' | '?' => {
                    prefix.get_or_insert_with(|| literal.clone());
                    if c == '*' {
                        // A run of stars matches what one does.
                        while chars.next_if_eq(&'*').is_some() {}
                        source.push_str("(?s:.*)");
                    } else {
                        source.push_str("(?s:.)");
                    }
                    continue;
                }
                // A backslash escapes only `*`, `?` and itself; before anything else it is itself.
                '\\' => chars
                    .next_if(|next| matches!(next, '*' | '?' | '\\'))
                    .unwrap_or('\\'),
                c => c,
            };
            literal.push(c);
            source.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
        }
        let matcher = match prefix {
            None => Matcher::Literal(literal),
            Some(_) if pattern.chars().count() > MAX_WILDCARD_GLOB_CHARS => {
                return Err(t!(
                    "rules-error-glob-long",
                    limit = MAX_WILDCARD_GLOB_CHARS,
                    length = pattern.chars().count()
                ))
            }
            Some(prefix) => Matcher::Wildcard {
                prefix,
                source: format!(r"\A(?:{source})\z"),
                regex: OnceLock::new(),
            },
        };
        Ok(Glob {
            pattern: pattern.to_owned(),
            matcher,
        })
    }

    /// The glob that matches exactly `text`: its `*`, `?` and `\\` escaped.
    pub fn escape(text: &str) -> String {
        let mut escaped = String::with_capacity(text.len());
        for c in text.chars() {
            if matches!(c, '*' | '?' | '\\') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        escaped
    }

    /// Whether the glob has no `*` or `?`: it matches exactly one text.
    pub fn is_literal(&self) -> bool {
        matches!(self.matcher, Matcher::Literal(_))
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The text every match starts with: the literal text before the first wildcard, escapes
    /// resolved (all of it for a literal glob).
    pub fn literal_prefix(&self) -> &str {
        match &self.matcher {
            Matcher::Literal(literal) => literal,
            Matcher::Wildcard { prefix, .. } => prefix,
        }
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        match &self.matcher {
            Matcher::Literal(literal) => text == literal,
            Matcher::Wildcard {
                prefix,
                source,
                regex,
            } => {
                text.starts_with(prefix.as_str())
                    && regex
                        .get_or_init(|| {
                            Regex::new(source).expect("a glob's regex fits the size limit")
                        })
                        .is_match(text)
            }
        }
    }
}

/// Two globs are the same when their patterns are: the matcher is made from the pattern.
impl PartialEq for Glob {
    fn eq(&self, other: &Glob) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Glob {}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::{Glob, Matcher, Regex, MAX_WILDCARD_GLOB_CHARS};

    fn check(pattern: &str, text: &str, expected: bool) {
        assert_eq!(
            Glob::new(pattern).unwrap().matches(text),
            expected,
            "{pattern:?} against {text:?}"
        );
    }

    #[test]
    fn matching() {
        check("Bash", "Bash", true);
        check("Bash", "bash", false);
        check("Bash", "Bash2", false);
        check("cargo test*", "cargo test", true);
        check("cargo test*", "cargo test --all", true);
        check("cargo test*", "cargo build", false);
        check("*", "", true);
        check("", "", true);
        check("", "x", false);
        check("?", "é", true);
        check("é?z*", "éyzé", true);
        check("*é", "aé", true);
        check("a?é", "aéé", true);
        check("a?é", "aé", false);
        check("?", "", false);
        check("a*b*c", "aXbYc", true);
        check("a*b*c", "abc", true);
        check("a*b*c", "acb", false);
        check("*.rs", "src/lib.rs", true);
        check("claude-*", "claude-code 2.1.0", true);
        check("*git push*", "cd x && git push origin main", true);
        check("a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false);
    }

    /// The glob matched the slow, obvious way, to check [`Glob::matches`] against.
    fn reference(pattern: &[char], text: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('*', rest)) => (0..=text.len()).any(|i| reference(rest, &text[i..])),
            Some(('?', rest)) => !text.is_empty() && reference(rest, &text[1..]),
            Some((c, rest)) => text.first() == Some(c) && reference(rest, &text[1..]),
        }
    }

    /// Every string over `alphabet` up to `len` characters long.
    fn strings(alphabet: &[char], len: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..len {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    /// Every glob over `pattern_chars` up to `pattern_len` long against every text over
    /// `text_chars` up to `text_len` long: [`Glob::matches`] says what [`reference`] says.
    fn agrees_with_the_reference(
        (pattern_chars, pattern_len): (&[char], usize),
        (text_chars, text_len): (&[char], usize),
    ) {
        let texts = strings(text_chars, text_len);
        for pattern in strings(pattern_chars, pattern_len) {
            let glob = Glob::new(&pattern).unwrap();
            let chars: Vec<char> = pattern.chars().collect();
            for text in &texts {
                let expected = reference(&chars, &text.chars().collect::<Vec<_>>());
                assert_eq!(glob.matches(text), expected, "{pattern:?} against {text:?}");
            }
        }
    }

    #[test]
    fn every_small_glob_matches_as_the_reference_does() {
        agrees_with_the_reference((&['a', 'b', '*', '?'], 5), (&['a', 'b'], 6));
    }

    #[test]
    fn every_small_glob_with_slashes_and_dots_matches_as_the_reference_does() {
        agrees_with_the_reference((&['a', '/', '.', '*', '?'], 4), (&['a', '/', '.'], 5));
    }

    #[test]
    fn star_and_question_mark_cross_slashes_and_line_breaks() {
        check("/home/*", "/home/me/src/lib.rs", true);
        check("/home/*.rs", "/home/me/src/lib.rs", true);
        check("a?b", "a/b", true);
        check("echo *", "echo a\nb", true);
        check("a?b", "a\nb", true);
        check("*", "\n", true);
    }

    #[test]
    fn a_double_star_is_two_stars_with_no_path_meaning() {
        // `**/` does not make the directory optional, nor `/**/` the middle one.
        check("**/foo", "foo", false);
        check("**/foo", "a/b/foo", true);
        check("/src/**/main.rs", "/src/main.rs", false);
        check("/src/**/main.rs", "/src/a/b/main.rs", true);
        check("**", "any/thing", true);
        check("a**b", "ab", true);
    }

    #[test]
    fn only_star_and_question_mark_are_wildcards() {
        // No classes, alternatives or negation: brackets, braces and `!` are themselves.
        check("ls [ab]", "ls [ab]", true);
        check("ls [ab]", "ls a", false);
        check("*.{rs,toml}", "Cargo.{rs,toml}", true);
        check("*.{rs,toml}", "Cargo.toml", false);
        check("[!a]*", "[!a]x", true);
        check("[!a]*", "b", false);
        // Regular-expression characters are themselves too.
        check("a.c", "abc", false);
        check("a.c*", "a.cx", true);
        check("(a|b)+$^*", "(a|b)+$^ yes", true);
        check("(a|b)+$^*", "a", false);
        check("^a*", "a", false);
    }

    #[test]
    fn matching_is_case_sensitive_in_every_script() {
        check("Bash*", "bash -c x", false);
        check("*.RS", "lib.rs", false);
        check("É*", "é", false);
        check("straße*", "STRASSE", false);
    }

    #[test]
    fn literal_globs_are_literal() {
        assert!(Glob::new("cargo test").unwrap().is_literal());
        assert!(Glob::new(r"ls \*.rs").unwrap().is_literal());
        assert!(!Glob::new("cargo test*").unwrap().is_literal());
        assert!(!Glob::new("a?").unwrap().is_literal());
    }

    #[test]
    fn the_longest_wildcard_globs_compile_and_longer_ones_are_refused() {
        // `?` and `*` are the largest parts of a regex: globs of nothing else, at the limit.
        let max = MAX_WILDCARD_GLOB_CHARS;
        for pattern in ["?".repeat(max), "?*".repeat(max / 2), "é?".repeat(max / 2)] {
            let glob = Glob::new(&pattern).unwrap();
            let Matcher::Wildcard { source, .. } = &glob.matcher else {
                panic!("{glob:?} has a wildcard");
            };
            assert!(Regex::new(source).is_ok(), "{glob:?}");
        }
        assert!(Glob::new(&"?".repeat(max))
            .unwrap()
            .matches(&"é".repeat(max)));
        let error = Glob::new(&"?".repeat(max + 1)).unwrap_err();
        assert!(error.contains("at most 10000 characters"), "{error}");
        // A literal glob has no regex, and no limit.
        assert!(Glob::new(&"a".repeat(max * 10)).unwrap().is_literal());
    }

    #[test]
    fn escapes() {
        check(r"ls \*.rs", "ls *.rs", true);
        check(r"ls \*.rs", "ls main.rs", false);
        check(r"what\?", "what?", true);
        check(r"what\?", "whatx", false);
        check(r"a\\b", r"a\b", true);
        check(r"a\\*", r"a\bc", true);
        // A backslash before anything else is itself.
        check(r"grep 'a\|b'", r"grep 'a\|b'", true);
        check(r"end\", r"end\", true);
        for text in [
            "ls *.rs",
            "echo ?",
            r"printf 'a\n' \\",
            "plain",
            r"\*\?",
            "",
        ] {
            let glob = Glob::new(&Glob::escape(text)).unwrap();
            assert!(glob.matches(text), "{text:?} escaped as {glob:?}");
            assert!(!glob.matches(&format!("{text}x")), "{glob:?} matches more");
        }
        assert!(!Glob::new(&Glob::escape("ls *.rs"))
            .unwrap()
            .matches("ls main.rs"));
    }
}
