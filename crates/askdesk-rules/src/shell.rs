//! Shell command lines read as bash will run them, for `match.command`: the simple commands a line
//! holds, whether it can be read without running it, and the two ways a glob is matched against it
//! (an answer needs every simple command to match, a deny or ask any part).
//!
//! The line is parsed by tree-sitter-bash and walked with an allow-list: only the constructs named
//! here are read; anything else (a substitution, an expansion, a redirection to a file, a subshell,
//! a syntax error, ...) makes the line [`Escape`] static reading, and an answer rule never applies
//! to it.

use std::cell::OnceCell;
use std::collections::HashSet;
use std::fmt;

use askdesk_i18n::t;
use tree_sitter::{Node, Parser};

use crate::glob::Glob;
use crate::runners;

/// Why a command line cannot be read without running it: an answer rule never applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// bash would not parse it as tree-sitter-bash does, or not at all.
    Unparseable,
    /// A control or invisible character, or a character outside ASCII that is not quoted.
    Character,
    /// `$(...)`, backticks, `<(...)` or `>(...)`: a command whose output becomes part of the line.
    Substitution,
    /// `$name`, `${...}`, `$((...))`, `$'...'`, `$"..."`, a glob (`*`, `?`, `[`), `~` or braces:
    /// a word whose value is known only when the line runs.
    Expansion,
    /// `NAME=value` before a command or on its own.
    Assignment,
    /// A redirection to or from a file (only `/dev/null` and file descriptors are read), a
    /// here-document or a here-string.
    Redirection,
    /// `&`: a command left running in the background.
    Background,
    /// A subshell, a `{ ...; }` group, a function, `if`/`for`/`while`/`case`, `[[ ... ]]`, `!`,
    /// `|&`, `;;`, a declaration (`export`, `local`, ...) or a comment.
    Construct,
    /// A word that runs another command, a script or code ([`crate::runners`]): a shell, a
    /// wrapper (`env`, `sudo`, `timeout`, `chrt`, `xargs`, ...), a builtin (`eval`, `source`,
    /// `exec`, `trap`, `mapfile`, ...), an interpreter given code (`python3 -c`), an option that
    /// runs a command (`find -exec`, `git rebase --exec`), or a git global option not read.
    Program,
    /// A builtin given a variable name with a subscript, which bash evaluates as arithmetic,
    /// running the substitutions in it (`printf -v 'a[$(id)]' x`, `read 'a[$(id)]'`).
    Subscript,
    /// git configuration that runs a program or moves where git finds its programs, given on the
    /// line or written (`git -c core.pager=x`, `git config core.fsmonitor x`,
    /// `--exec-path=dir`): see [`crate::git`].
    Config,
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&match self {
            Escape::Unparseable => t!("rules-escape-unparseable"),
            Escape::Character => t!("rules-escape-character"),
            Escape::Substitution => t!("rules-escape-substitution"),
            Escape::Expansion => t!("rules-escape-expansion"),
            Escape::Assignment => t!("rules-escape-assignment"),
            Escape::Redirection => t!("rules-escape-redirection"),
            Escape::Background => t!("rules-escape-background"),
            Escape::Construct => t!("rules-escape-construct"),
            Escape::Program => t!("rules-escape-program"),
            Escape::Subscript => t!("rules-escape-subscript"),
            Escape::Config => t!("rules-escape-config"),
        })
    }
}

/// One simple command of a line: its words as the program receives them (quotes removed,
/// backslashes resolved; a word that is expanded when the line runs is kept as written), and its
/// text as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    pub words: Vec<String>,
    pub text: String,
}

impl Simple {
    /// The normalised text an answer rule's glob is matched against: the words joined by one
    /// space.
    pub fn normalised(&self) -> String {
        self.words.join(" ")
    }
}

/// A command line as read: every simple command in it, and why it cannot be read statically, if
/// it cannot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// Every simple command in source order, those inside substitutions, subshells and functions
    /// included.
    pub commands: Vec<Simple>,
    /// Targets of the line's redirections, as written (only `/dev/null` in a line read
    /// statically).
    pub targets: Vec<String>,
    /// The first reason found that the line escapes static reading.
    pub escape: Option<Escape>,
}

impl Reading {
    /// Every word of every simple command, and every redirection target.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.commands
            .iter()
            .flat_map(|c| c.words.iter())
            .chain(&self.targets)
            .map(String::as_str)
    }
}

/// Reads a command line.
pub fn read(line: &str) -> Reading {
    let mut reader = Reader {
        src: line,
        reading: Reading {
            commands: Vec::new(),
            targets: Vec::new(),
            escape: None,
        },
    };
    if line.chars().any(invisible) {
        reader.refuse(Escape::Character);
    }
    // bash removes a backslash-newline before it reads words; tree-sitter-bash reads it as a
    // space between two words.
    if line.contains("\\\n") {
        reader.refuse(Escape::Unparseable);
    }
    match parse(line) {
        Some(tree) if !tree.root_node().has_error() => reader.statement(tree.root_node()),
        Some(tree) => {
            reader.refuse(Escape::Unparseable);
            reader.statement(tree.root_node());
        }
        None => reader.refuse(Escape::Unparseable),
    }
    reader.reading
}

/// One request's command line as every rule tried on it sees it: read once, and the texts a
/// `command` glob is matched against worked out once, on first use.
pub struct Line<'a> {
    text: &'a str,
    reading: OnceCell<Reading>,
    answerable: OnceCell<Option<Vec<Answerable>>>,
    caught: OnceCell<Caught>,
}

/// A simple command of a line read statically, in the two forms an answer's glob may match.
struct Answerable {
    normalised: String,
    /// Its text as written with white space collapsed; `None` when that is the normalised text.
    collapsed: Option<String>,
}

/// Every text a deny's or ask's glob is tried on, and whether the line is caught whatever the glob
/// (it does not parse, holds control or invisible characters, or nests scripts too deep).
struct Caught {
    always: bool,
    texts: Vec<String>,
    /// Every command the line runs as its words, each once (see [`Line::runs`]).
    commands: Vec<Vec<String>>,
    /// The scripts read already (a script is read once however many commands run it).
    scripts: HashSet<String>,
}

impl<'a> Line<'a> {
    pub fn new(text: &'a str) -> Line<'a> {
        Line {
            text,
            reading: OnceCell::new(),
            answerable: OnceCell::new(),
            caught: OnceCell::new(),
        }
    }

    /// The line as given.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The line as [`read`] reads it.
    pub fn reading(&self) -> &Reading {
        self.reading.get_or_init(|| read(self.text))
    }

    /// Whether an answer rule's `command` glob holds for the line: the line is read statically and
    /// the glob matches every simple command of it, its normalised text or its text as written. A
    /// glob with no `*` or `?` names one exact line, and also matches the whole line as written.
    pub fn allows(&self, glob: &Glob) -> bool {
        let Some(commands) = self.answerable.get_or_init(|| {
            let reading = self.reading();
            if reading.escape.is_some() || reading.commands.is_empty() {
                return None;
            }
            let forms = reading.commands.iter().map(|c| {
                let normalised = c.normalised();
                let collapsed = Some(collapse(&c.text)).filter(|t| *t != normalised);
                Answerable {
                    normalised,
                    collapsed,
                }
            });
            Some(forms.collect())
        }) else {
            return false;
        };
        if glob.is_literal() && glob.matches(self.text.trim()) {
            return true;
        }
        commands.iter().all(|c| {
            glob.matches(&c.normalised) || c.collapsed.as_deref().is_some_and(|t| glob.matches(t))
        })
    }

    /// Whether a deny's or ask's `command` glob catches the line: it matches the line (as written,
    /// or with its white space collapsed), or any simple command in it (those inside substitutions
    /// and subshells too), its text as written or its normalised text, that text with the wrappers
    /// and a program's global options taken off (see [`invocations`]); scripts given to `sh -c`,
    /// `eval` and the like are read the same way. A line that does not parse, or holds control or
    /// invisible characters, is caught.
    pub fn catches(&self, glob: &Glob) -> bool {
        let caught = self.caught();
        caught.always || caught.texts.iter().any(|text| glob.matches(text))
    }

    /// Every command the line runs, as a deny reads it ([`Line::catches`]): each simple command's
    /// words and what it runs through wrappers, aliases the line defines and scripts given to
    /// shells ([`invocations`]), those inside substitutions too; `None` when the line may run
    /// something its words do not show (a deny catches it whatever its glob).
    pub fn runs(&self) -> Option<&[Vec<String>]> {
        let caught = self.caught();
        (!caught.always).then_some(caught.commands.as_slice())
    }

    fn caught(&self) -> &Caught {
        self.caught.get_or_init(|| {
            let mut caught = Caught {
                always: false,
                texts: Vec::new(),
                commands: Vec::new(),
                scripts: HashSet::new(),
            };
            let mut seen = HashSet::new();
            // Read once for both kinds of rule, unless bash would join lines first.
            let reading = (!self.text.contains("\\\n")).then(|| self.reading());
            gather(self.text, reading, 0, &mut caught, &mut seen);
            caught
        })
    }
}

/// Whether an answer rule's `command` glob holds for the line (see [`Line::allows`]).
pub fn allows(glob: &Glob, line: &str) -> bool {
    Line::new(line).allows(glob)
}

/// Whether a deny's or ask's `command` glob catches the line (see [`Line::catches`]).
pub fn catches(glob: &Glob, line: &str) -> bool {
    Line::new(line).catches(glob)
}

/// How deep scripts inside scripts (`bash -c "eval '...'"`) are read before a deny gives up and
/// catches the line.
const MAX_DEPTH: usize = 4;

/// Adds to `caught` every text of `line` a deny's glob is tried on (each once), reading the
/// scripts it runs as text `depth + 1` deep; `read_already` is the line read already, if it has been.
fn gather(
    line: &str,
    read_already: Option<&Reading>,
    depth: usize,
    caught: &mut Caught,
    seen: &mut HashSet<String>,
) {
    if caught.always {
        return;
    }
    if depth > MAX_DEPTH {
        caught.always = true;
        return;
    }
    let mut texts = vec![line.to_owned(), collapse(line)];
    // bash removes a backslash-newline before it reads words.
    let own;
    let reading = match read_already {
        Some(reading) => reading,
        None => {
            own = read(&line.replace("\\\n", ""));
            &own
        }
    };
    if matches!(
        reading.escape,
        Some(Escape::Unparseable | Escape::Character)
    ) {
        caught.always = true;
        return;
    }
    let mut scripts = Vec::new();
    for simple in &reading.commands {
        texts.push(collapse(&simple.text));
        let invocations = invocations(&simple.words);
        if invocations.unknown {
            caught.always = true;
            return;
        }
        texts.extend(invocations.commands.iter().map(|words| words.join(" ")));
        for words in invocations.commands {
            if !caught.commands.contains(&words) {
                caught.commands.push(words);
            }
        }
        scripts.extend(invocations.scripts);
    }
    for text in texts {
        if seen.insert(text.clone()) {
            caught.texts.push(text);
        }
    }
    for script in scripts {
        if caught.scripts.insert(script.clone()) {
            gather(&script, None, depth + 1, caught, seen);
        }
    }
}

/// White space runs collapsed to one space, and the ends trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a character is a control character other than tab and newline, a format character
/// (zero-width, direction marks), or white space outside ASCII: what makes a line look other than
/// it runs.
fn invisible(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || (!c.is_ascii() && c.is_whitespace())
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
            | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}' | '\u{E0000}'..='\u{E0FFF}')
}

fn parse(line: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    // The grammar is built into the binary: failing to load it is a build defect, and reading
    // nothing then is safe (the line is unparseable).
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    parser.parse(line, None)
}

struct Reader<'s> {
    src: &'s str,
    reading: Reading,
}

impl<'s> Reader<'s> {
    fn refuse(&mut self, escape: Escape) {
        self.reading.escape.get_or_insert(escape);
    }

    fn text(&self, node: Node) -> &'s str {
        let src: &'s str = self.src;
        &src[node.byte_range()]
    }

    /// A statement or a list of them: the only connectors read are `;`, newlines, `&&`, `||`
    /// and `|`.
    fn statement(&mut self, node: Node) {
        match node.kind() {
            "program" | "list" | "pipeline" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if child.is_named() {
                        self.statement(child);
                    } else {
                        match child.kind() {
                            ";" | "&&" | "||" | "|" => {}
                            "&" => self.refuse(Escape::Background),
                            _ => self.refuse(Escape::Construct),
                        }
                    }
                }
            }
            "redirected_statement" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if node_is_redirect(child) {
                        self.redirect(child);
                    } else if child.is_named() {
                        self.statement(child);
                    } else {
                        self.refuse(Escape::Construct);
                    }
                }
            }
            "command" => self.command(node),
            "comment" => self.refuse(Escape::Construct),
            "variable_assignment" | "variable_assignments" => {
                self.refuse(Escape::Assignment);
                self.inside(node);
            }
            _ => {
                self.refuse(Escape::Construct);
                self.inside(node);
            }
        }
    }

    /// A construct that is not read: the commands inside it are still collected, for deny rules.
    fn inside(&mut self, node: Node) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command" => self.command(child),
                "command_substitution" | "process_substitution" => {
                    self.refuse(Escape::Substitution);
                    self.inside(child);
                }
                _ => self.inside(child),
            }
        }
    }

    fn command(&mut self, node: Node) {
        // Its place is taken now, so the commands inside its words come after it.
        let index = self.reading.commands.len();
        self.reading.commands.push(Simple {
            words: Vec::new(),
            text: self.text(node).to_owned(),
        });
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => {
                    self.refuse(Escape::Assignment);
                    self.inside(child);
                }
                _ if node_is_redirect(child) => self.redirect(child),
                "command_name" => {
                    let mut inner = child.walk();
                    for name in child.named_children(&mut inner) {
                        words.push(self.word(name));
                    }
                }
                _ if child.is_named() => words.push(self.word(child)),
                _ => self.refuse(Escape::Construct),
            }
        }
        if let Some(escape) = runners::escape(&words) {
            self.refuse(escape);
        }
        self.reading.commands[index].words = words;
    }

    /// A redirection: read only to `/dev/null`, or duplicating or closing a file descriptor.
    fn redirect(&mut self, node: Node) {
        if node.kind() != "file_redirect" {
            // A here-document or here-string: its text is the command's input.
            self.refuse(Escape::Redirection);
            self.inside(node);
            return;
        }
        let mut duplicates = false;
        let mut destinations = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                ">&" | "<&" => duplicates = true,
                ">" | ">>" | "<" | "&>" | "&>>" | ">|" | ">&-" | "<&-" => {}
                "file_descriptor" => {}
                _ if child.is_named() => destinations.push(child),
                _ => self.refuse(Escape::Redirection),
            }
        }
        let closes = matches!(self.text(node).trim_end().chars().last(), Some('-'))
            && destinations.is_empty();
        if closes {
            return;
        }
        for destination in destinations {
            let target = self.word(destination);
            let descriptor = destination.kind() == "number"
                || (destination.kind() == "word" && self.text(destination) == "-");
            if !((duplicates && descriptor) || target == "/dev/null") {
                self.refuse(Escape::Redirection);
            }
            self.reading.targets.push(target);
        }
    }

    /// The value of one word as the program receives it; a word whose value is known only when
    /// the line runs is kept as written, and the line refused.
    fn word(&mut self, node: Node) -> String {
        let text = self.text(node);
        match node.kind() {
            "word" | "number" => {
                if !text.is_ascii() {
                    self.refuse(Escape::Character);
                }
                if text.contains(['*', '?', '[', '~', '{', '}', '$', '`']) {
                    self.refuse(Escape::Expansion);
                }
                unescape(text, |_| true)
            }
            "raw_string" => text
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .unwrap_or(text)
                .to_owned(),
            "string" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if child.kind() == "\"" {
                        continue;
                    }
                    if !child.is_named() {
                        // A `$` that starts nothing is itself.
                        value.push_str(self.text(child));
                    } else if child.kind() == "string_content" {
                        let content = self.text(child);
                        value.push_str(&unescape(content, |c| {
                            matches!(c, '$' | '`' | '"' | '\\' | '\n')
                        }));
                    } else {
                        self.expanded(child);
                        value.push_str(self.text(child));
                    }
                }
                value
            }
            "concatenation" => {
                let mut value = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if child.is_named() {
                        value.push_str(&self.word(child));
                    } else {
                        self.refuse(Escape::Expansion);
                        value.push_str(self.text(child));
                    }
                }
                value
            }
            _ => {
                self.expanded(node);
                text.to_owned()
            }
        }
    }

    /// A part of a word that is expanded when the line runs.
    fn expanded(&mut self, node: Node) {
        match node.kind() {
            "command_substitution" | "process_substitution" => self.refuse(Escape::Substitution),
            _ => self.refuse(Escape::Expansion),
        }
        self.inside(node);
    }
}

fn node_is_redirect(node: Node) -> bool {
    matches!(
        node.kind(),
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

/// Backslashes removed as bash removes them: outside quotes before any character, inside double
/// quotes only before the characters `special` names (a backslash-newline disappears).
fn unescape(text: &str, special: impl Fn(char) -> bool) -> String {
    let mut value = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            value.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(next) if special(next) => value.push(next),
            Some(next) => {
                value.push('\\');
                value.push(next);
            }
            None => value.push('\\'),
        }
    }
    value
}

/// The name a command runs, without its directory (`/usr/bin/git` is `git`).
pub(crate) fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a word is a `NAME=value` assignment.
pub(crate) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// How many commands one simple command may be read as before a deny gives up and catches it.
const MAX_INVOCATIONS: usize = 4096;

/// Every way a deny reads one simple command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Invocations {
    /// Its words, then every command it runs through the runners in front of it, each taken
    /// off with its options (`nice -n 5 timeout 5 rm -rf x` is also `timeout 5 rm -rf x` and
    /// `rm -rf x`), the program named without its directory, git's global options taken off and
    /// an alias the line defines expanded: see [`runners::inner`].
    pub commands: Vec<Vec<String>>,
    /// The scripts it gives a shell as text (`sh -c`, `eval`, `watch`, `flock -c`, a `!` git
    /// alias, ...).
    pub scripts: Vec<String>,
    /// It runs something its words do not show: a deny catches it.
    pub unknown: bool,
}

/// The ways a simple command may be read for a deny ([`Invocations`]).
pub fn invocations(words: &[String]) -> Invocations {
    let mut found = Invocations::default();
    let mut seen = HashSet::new();
    let mut todo = vec![words.to_vec()];
    while let Some(next) = todo.pop() {
        if seen.contains(&next) {
            continue;
        }
        if seen.len() == MAX_INVOCATIONS {
            found.unknown = true;
            break;
        }
        let inner = runners::inner(&next);
        todo.extend(inner.commands);
        found.scripts.extend(inner.scripts);
        found.unknown |= inner.unknown;
        seen.insert(next.clone());
        found.commands.push(next);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escape(line: &str) -> Option<Escape> {
        read(line).escape
    }

    fn normalised(line: &str) -> Vec<String> {
        read(line).commands.iter().map(Simple::normalised).collect()
    }

    #[test]
    fn plain_lines_are_read_into_their_simple_commands() {
        for (line, commands) in [
            ("cargo test", &["cargo test"][..]),
            ("cargo test -p foo 2>&1", &["cargo test -p foo"]),
            ("cargo test > /dev/null", &["cargo test"]),
            ("cargo test &> /dev/null >&2 2>&-", &["cargo test"]),
            (
                "cargo test && cargo build; ls | wc -l",
                &["cargo test", "cargo build", "ls", "wc -l"],
            ),
            ("cargo test\ncargo build", &["cargo test", "cargo build"]),
            ("'cargo' \"test\" -p x\\ y", &["cargo test -p x y"]),
            (
                "git commit -m \"fix: \\\"it\\\"\"",
                &["git commit -m fix: \"it\""],
            ),
            ("echo 'a \\ b'", &["echo a \\ b"]),
            ("c'argo' test", &["cargo test"]),
        ] {
            let reading = read(line);
            assert_eq!(reading.escape, None, "{line:?}");
            assert_eq!(normalised(line), commands, "{line:?}");
        }
    }

    #[test]
    fn what_escapes_static_reading() {
        use Escape::*;
        for (line, expected) in [
            ("cargo test $(rm -rf /)", Substitution),
            ("cargo test `rm -rf /`", Substitution),
            ("cargo test <(curl x)", Substitution),
            ("cargo test \"$(rm)\"", Substitution),
            ("cargo test $HOME", Expansion),
            ("cargo test ${X:-rm}", Expansion),
            ("cargo test \"$X\"", Expansion),
            ("$X test", Expansion),
            ("cargo test $'\\x3b' rm", Expansion),
            ("cargo test $\"x\"", Construct),
            ("cargo test *", Expansion),
            ("cargo test ~/x", Expansion),
            ("cargo test {a,b}", Expansion),
            ("cargo test $((1+2))", Expansion),
            ("A=1 cargo test", Assignment),
            ("A=1", Assignment),
            ("export A=1", Construct),
            ("cargo test > ~/.bashrc", Expansion),
            ("cargo test > out.txt", Redirection),
            ("cargo test >| out", Redirection),
            ("cargo test &> out", Redirection),
            ("cargo test 2> err", Redirection),
            ("cargo test > 1", Redirection),
            ("cargo test < /dev/tcp/host/80", Redirection),
            ("cargo test <<< x", Redirection),
            ("cat <<EOF\nx\nEOF", Redirection),
            ("cargo test & rm -rf /", Background),
            ("cargo test &", Background),
            ("(cargo test)", Construct),
            ("{ cargo test; }", Construct),
            ("f() { rm -rf /; }; f", Construct),
            ("if true; then cargo test; fi", Construct),
            ("! cargo test", Construct),
            ("cargo test |& sh", Construct),
            ("cargo test;; rm", Construct),
            ("cargo test # x", Construct),
            ("eval cargo test", Program),
            ("source x", Program),
            (". x", Program),
            ("sh -c 'cargo test'", Program),
            ("/bin/bash -c 'cargo test'", Program),
            ("env -S 'cargo test'", Program),
            ("xargs rm", Program),
            ("exec cargo test", Program),
            ("sudo cargo test", Program),
            ("timeout 5 cargo test", Program),
            ("cargo test\rrm", Character),
            ("cargo test\u{200B};rm", Character),
            ("cargo test\u{FF1B}rm", Character),
            ("cargo test\u{037E} rm", Character),
            ("cargo\u{00A0}test", Character),
            ("car\\\ngo test", Unparseable),
            ("cargo test (", Unparseable),
            ("cargo test 'x", Unparseable),
        ] {
            assert_eq!(escape(line), Some(expected), "{line:?}");
        }
        // Quoted, a non-ASCII character is only text.
        assert_eq!(escape("git commit -m 'café ；'"), None);
    }

    #[test]
    fn commands_inside_substitutions_and_constructs_are_collected() {
        let commands = normalised("cargo test $(git push) && (git -C . push) | { rm x; }");
        assert_eq!(
            commands,
            [
                "cargo test $(git push)",
                "git push",
                "git -C . push",
                "rm x"
            ]
        );
        assert_eq!(normalised("f() { git push; }"), ["git push"]);
        assert_eq!(
            normalised("cat <<EOF\n$(git push)\nEOF"),
            ["cat", "git push"]
        );
    }

    fn check_allows(glob: &str, line: &str, expected: bool) {
        assert_eq!(
            allows(&Glob::new(glob).unwrap(), line),
            expected,
            "{glob:?} allows {line:?}"
        );
    }

    #[test]
    fn an_answer_needs_every_simple_command_to_match() {
        let glob = "cargo test*";
        for line in [
            "cargo test",
            "cargo test -p foo 2>&1",
            "cargo test > /dev/null",
            "cargo test && cargo test --doc",
            "cargo test -- 'a; b'",
            "  cargo   test  ",
        ] {
            check_allows(glob, line, true);
        }
        for line in [
            "cargo test; rm -rf ~",
            "cargo test && curl x | sh",
            "cargo test | sh",
            "cargo test\nrm -rf /",
            "cargo test --; rm",
            "cargo build",
            "c'argo' test;x",
            "",
            "   ",
        ] {
            check_allows(glob, line, false);
        }
        // An exact glob also matches the whole line, as a drafted rule names it.
        check_allows(
            "cargo test 2>&1 | tail -5",
            "cargo test 2>&1 | tail -5",
            true,
        );
        check_allows(r#"git commit -m "a b""#, r#"git commit -m "a b""#, true);
        check_allows(
            r#"git commit -m "a b""#,
            r#"git commit -m "a b"; rm x"#,
            false,
        );
        check_allows("ls $(pwd)", "ls $(pwd)", false);
    }

    fn check_catches(glob: &str, line: &str, expected: bool) {
        assert_eq!(
            catches(&Glob::new(glob).unwrap(), line),
            expected,
            "{glob:?} catches {line:?}"
        );
    }

    #[test]
    fn a_deny_catches_any_part() {
        for line in [
            "git push",
            "cargo test && git -C . push --force",
            "'git' \"push\"",
            "g''it pu\\sh",
            "/usr/bin/git push",
            "git -c k=v --git-dir=x --no-pager push",
            "env A=1 git push",
            "command git push",
            "sudo -u me nice -n 5 git push",
            "timeout 5s git push",
            "xargs -n1 git push",
            "cargo test $(git push)",
            "echo `git push`",
            "(cd x && git push)",
            "bash -c 'git push'",
            "sh -lc \"cargo test; git push\"",
            "eval git push",
            "env -S 'git push'",
            "git pu\\\nsh",
            "cargo test (",
            "cargo test\u{200B}",
        ] {
            check_catches("*git push*", line, true);
        }
        for line in ["cargo test", "git status", "echo git", "git pull"] {
            check_catches("*git push*", line, false);
        }
        check_catches("git push*", "cargo test; git push origin", true);
        check_catches("rm -rf*", "cd x && rm -rf /", true);
    }

    #[test]
    fn a_line_read_once_answers_every_glob_as_a_fresh_reading_does() {
        let globs = [
            "cargo test*",
            "*git push*",
            "git push*",
            "cargo test",
            "*rm*",
            "*",
            "ls*",
        ]
        .map(|g| Glob::new(g).unwrap());
        for text in [
            "cargo test",
            "cargo test && git -C . push",
            "bash -c 'git push'",
            "git pu\\\nsh",
            "cargo test; rm -rf ~",
            "ls $(git push)",
            "cargo test (",
            "",
        ] {
            let line = Line::new(text);
            // Each kind first, then the other, as rules of both kinds come in a file.
            for glob in globs.iter().chain(globs.iter().rev()) {
                assert_eq!(line.allows(glob), allows(glob, text), "{glob:?} {text:?}");
                assert_eq!(line.catches(glob), catches(glob, text), "{glob:?} {text:?}");
            }
            assert_eq!(*line.reading(), read(text));
        }
    }

    #[test]
    fn wrappers_and_global_options_come_off() {
        let words = |line: &str| read(line).commands[0].words.clone();
        let reads = |line: &str, expected: &str| {
            let found = invocations(&words(line)).commands;
            assert!(
                found.iter().any(|c| c.join(" ") == expected),
                "{line:?} is not read as {expected:?}: {found:?}"
            );
        };
        reads(
            "env -i -u X A=1 -- /usr/bin/git -C d -c a=b push -f",
            "git push -f",
        );
        reads("sudo -E -u root git --work-tree w push", "git push");
        reads("exec -a x nohup rm -rf /", "rm -rf /");
        reads("cargo test", "cargo test");
        assert_eq!(invocations(&words("git")).commands, [["git"]]);
    }
}
