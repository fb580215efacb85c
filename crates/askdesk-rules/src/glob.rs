//! Shell-style globs for rule matching: `*` matches any run of characters (slashes included), `?`
//! one character, `\*`, `\?` and `\\` a literal `*`, `?` and `\`, everything else itself.

use std::fmt;

/// A compiled glob.
#[derive(Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    parts: Vec<Part>,
    /// The literal text before the first wildcard, which a match must start with: most texts a
    /// rule is tried on fail there, without the full walk.
    prefix: String,
    /// The other runs of literal text between wildcards, in order: a match holds each of them
    /// after the prefix, one after the other, so a text that lacks one fails at a substring search.
    runs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(char),
    Any,
    AnyRun,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        let mut parts = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            parts.push(match c {
                '*' => Part::AnyRun,
                '?' => Part::Any,
                '\\' => match chars.next_if(|next| matches!(next, '*' | '?' | '\\')) {
                    Some(escaped) => Part::Literal(escaped),
                    None => Part::Literal('\\'),
                },
                c => Part::Literal(c),
            });
        }
        let prefix = parts
            .iter()
            .map_while(|part| match part {
                Part::Literal(c) => Some(*c),
                _ => None,
            })
            .collect();
        let mut runs: Vec<String> = Vec::new();
        let mut run = String::new();
        for part in &parts {
            match part {
                Part::Literal(c) => run.push(*c),
                _ => runs.push(std::mem::take(&mut run)),
            }
        }
        runs.push(run);
        // The first run is the prefix, checked on its own (empty when the glob starts with a
        // wildcard).
        runs.remove(0);
        runs.retain(|run| !run.is_empty());
        Glob {
            pattern: pattern.to_owned(),
            parts,
            prefix,
            runs,
        }
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
        self.parts
            .iter()
            .all(|part| matches!(part, Part::Literal(_)))
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        if !text.starts_with(self.prefix.as_str()) {
            return false;
        }
        let mut at = self.prefix.len();
        for run in &self.runs {
            match text[at..].find(run.as_str()) {
                Some(found) => at += found + run.len(),
                None => return false,
            }
        }
        // Positions in `text` are byte offsets at character boundaries: nothing is allocated, so
        // a request tried against many rules costs no copies of its text.
        let next = |t: usize| text[t..].chars().next().map_or(0, char::len_utf8);
        let (mut p, mut t) = (0, 0);
        // Where to resume after the last `*`: its position in the pattern and the text.
        let mut resume: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.parts.get(p) {
                Some(Part::AnyRun) => {
                    resume = Some((p, t));
                    p += 1;
                }
                Some(Part::Any) => {
                    p += 1;
                    t += next(t);
                }
                Some(Part::Literal(c)) if text[t..].starts_with(*c) => {
                    p += 1;
                    t += c.len_utf8();
                }
                _ => match resume {
                    // Let the last `*` swallow one more character and try again.
                    Some((star, at)) => {
                        let at = at + next(at);
                        p = star + 1;
                        t = at;
                        resume = Some((star, at));
                    }
                    None => return false,
                },
            }
        }
        self.parts[p..].iter().all(|part| *part == Part::AnyRun)
    }
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn check(pattern: &str, text: &str, expected: bool) {
        assert_eq!(
            Glob::new(pattern).matches(text),
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

    #[test]
    fn every_small_glob_matches_as_the_reference_does() {
        let texts = strings(&['a', 'b'], 6);
        for pattern in strings(&['a', 'b', '*', '?'], 5) {
            let glob = Glob::new(&pattern);
            let chars: Vec<char> = pattern.chars().collect();
            for text in &texts {
                let expected = reference(&chars, &text.chars().collect::<Vec<_>>());
                assert_eq!(glob.matches(text), expected, "{pattern:?} against {text:?}");
            }
        }
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
            let glob = Glob::new(&Glob::escape(text));
            assert!(glob.matches(text), "{text:?} escaped as {glob:?}");
            assert!(!glob.matches(&format!("{text}x")), "{glob:?} matches more");
        }
        assert!(!Glob::new(&Glob::escape("ls *.rs")).matches("ls main.rs"));
    }
}
