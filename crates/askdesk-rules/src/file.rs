//! The rules file (`rules.toml`): its format, parsed into [`RuleSet`], and its errors, each with the
//! line and column it points at.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use askdesk_i18n::{t, Messages};
use regex::Regex;
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use crate::glob::Glob;

/// The rules file's name under `$XDG_CONFIG_HOME/askdesk/`.
pub const FILE_NAME: &str = "rules.toml";

/// The rules of one file, in file order: the first active rule that matches a request decides.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

/// One `[[rule]]`.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Unique in the file; the journal names the rule `rule:<name>`.
    pub name: String,
    pub matcher: Match,
    pub action: Action,
    /// The action applies only if the human has not answered by then.
    pub after: Option<Duration>,
    pub mode: Mode,
    /// Where the rule starts in the file (1-based), for messages.
    pub line: usize,
}

/// What starts the answerer label of a rule (`rule:<name>`), in the journal and History.
const LABEL_PREFIX: &str = "rule:";

/// The rule named by an answerer label (`rule:deploy` → `deploy`), or `None` for any other
/// answerer.
pub fn rule_named(answerer: &str) -> Option<&str> {
    answerer.strip_prefix(LABEL_PREFIX)
}

impl Rule {
    /// The answerer label the journal shows for this rule.
    pub fn label(&self) -> String {
        format!("{LABEL_PREFIX}{}", self.name)
    }

    /// What is risky about a rule that loads: an answer with an empty match (no `match`, or
    /// `match = {}`) answers every request it fits, from every agent and project; an answer
    /// that allows commands broadly ([`Match::allows_broadly`]) allows whatever the programs
    /// it allows run themselves ([`broad_allow`]). Such a rule loads (a file that worked keeps
    /// working), and `askdesk rules list`, the desktop's Rules view and the log say this.
    pub fn warning(&self) -> Option<Warning> {
        if !matches!(self.action, Action::Answer(_)) {
            return None;
        }
        let risk = if self.matcher.is_empty() {
            Risk::EmptyMatch
        } else if self.matcher.allows_broadly() {
            Risk::BroadAllow
        } else {
            return None;
        };
        Some(Warning {
            rule: self.name.clone(),
            line: self.line,
            risk,
        })
    }
}

/// What is risky about a rule that loads ([`Rule::warning`]); in words with [`Warning::said`] (the
/// person's language) or `Display` (English, for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The rule's name.
    pub rule: String,
    /// Where the rule starts in the file.
    pub line: usize,
    pub risk: Risk,
}

/// The risks a rule that loads may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    /// It answers, and its match is empty: every request it fits, from any agent and project.
    EmptyMatch,
    /// It answers a command prompt with a match that allows commands broadly.
    BroadAllow,
}

impl Warning {
    /// The warning in this process's language.
    pub fn said(&self) -> String {
        self.said_in(&askdesk_i18n::current())
    }

    /// The warning in the language of `messages`.
    pub fn said_in(&self, messages: &Messages) -> String {
        let name = format!("{:?}", self.rule);
        match self.risk {
            Risk::EmptyMatch => t!(
                in messages,
                "rules-warning-empty-match",
                name = name,
                line = self.line
            ),
            Risk::BroadAllow => t!(
                in messages,
                "rules-warning-broad-allow",
                name = name,
                line = self.line
            ),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.said_in(&askdesk_i18n::english()))
    }
}

/// What a broad command allow still lets through, in English: the sentence docs/rules.md quotes
/// (the catalogues say it for `askdesk rules list`, the desktop's Rules view and the log).
pub fn broad_allow() -> String {
    t!(in askdesk_i18n::english(), "rules-broad-allow")
}

/// The tools whose prompts carry a command line (`meta.command`): Claude Code's `Bash`, Codex's
/// `shell` and `exec_command`.
const SHELL_TOOLS: &[&str] = &["Bash", "shell", "exec_command"];

/// What a rule looks at. Every field given must match; an empty match matches every request
/// (within the safety rules of [`crate::matching`]).
#[derive(Debug, Clone, Default)]
pub struct Match {
    /// Matches the agent's id or its label.
    pub agent: Option<Glob>,
    /// A path prefix of the agent's `meta.cwd`, compared by whole path components.
    pub cwd: Option<String>,
    /// Matches the agent's `meta.client` (the program the agent runs in).
    pub client: Option<Glob>,
    /// Matches the agent's `meta.tool`: the tool a permission prompt is about.
    pub tool: Option<Glob>,
    /// Matches the agent's `meta.command`: the command a shell tool would run. Needs `tool`.
    pub command: Option<Glob>,
    /// Matches the file a tool would change (the agent's `meta.path`), resolved: see
    /// [`crate::target`].
    pub path: Option<Glob>,
    /// Matches the host of the URL a tool would fetch (the agent's `meta.url`), lowercase.
    pub host: Option<Glob>,
    /// Matches the path of that URL. Needs `host`.
    pub url_path: Option<Glob>,
    /// Matches every question's header.
    pub header: Option<Glob>,
    /// Searched in every question's text.
    pub question: Option<Regex>,
    /// Every question's intent kind.
    pub intent: Option<String>,
}

impl Match {
    /// Whether the match, in a rule that answers, allows a shell tool's commands broadly: its
    /// `command` glob fixes at most the program (`*`, `git *`, `find*`), or it names a shell tool
    /// and no command, file or address (every command of the tool).
    pub fn allows_broadly(&self) -> bool {
        match &self.command {
            Some(glob) => {
                !glob.is_literal() && glob.literal_prefix().split_whitespace().count() <= 1
            }
            None => {
                self.path.is_none()
                    && self.host.is_none()
                    && self
                        .tool
                        .as_ref()
                        .is_some_and(|tool| SHELL_TOOLS.iter().any(|name| tool.matches(name)))
            }
        }
    }

    /// Whether the match names nothing, and so holds for every request.
    pub fn is_empty(&self) -> bool {
        let Match {
            agent,
            cwd,
            client,
            tool,
            command,
            path,
            host,
            url_path,
            header,
            question,
            intent,
        } = self;
        agent.is_none()
            && cwd.is_none()
            && client.is_none()
            && tool.is_none()
            && command.is_none()
            && path.is_none()
            && host.is_none()
            && url_path.is_none()
            && header.is_none()
            && question.is_none()
            && intent.is_none()
    }
}

/// What a matching rule does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Answers every question of the batch.
    Answer(Choice),
    /// Fails the ask with `ASK_DENIED` and this message: "no, and here is why".
    Deny(String),
    /// Fails the ask with `ASK_CANCELLED` and this message, as if the human dismissed it.
    Dismiss(String),
    /// Leaves the request to the human explicitly: later rules are not consulted.
    Ask,
}

/// How [`Action::Answer`] answers each question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The option with this label (a trailing " (Recommended)" on the option may be left out).
    Option(String),
    /// The option whose label ends with "(Recommended)".
    Recommended,
    /// Free text, the answer's `custom`.
    Text(String),
}

/// Whether a rule acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The rule acts.
    #[default]
    On,
    /// The rule only proposes: the human decides, and `askdesk rules list` counts agreements.
    Shadow,
    /// The rule is ignored.
    Off,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::On => "on",
            Mode::Shadow => "shadow",
            Mode::Off => "off",
        }
    }
}

/// A rules file that cannot be used: where, and why (in the person's language, the file's keys
/// as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", t!("rules-error-where", line = *line, column = *column, message = message.as_str()))]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The rules file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file exists but cannot be read: fix its permissions.
    #[error("{}", t!("rules-error-read", path = path.display().to_string(), error = source.to_string()))]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid rules file: fix the place named.
    #[error("{path}: {error}")]
    Parse { path: PathBuf, error: ParseError },
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is set: give the file's path explicitly.
    #[error("{}", t!("rules-error-no-config-dir"))]
    NoConfigDir,
    /// An edit of the file was refused (see [`crate::edit`]); the file is as it was.
    #[error("{}", t!("rules-error-refused", path = path.display().to_string(), message = message.as_str()))]
    Refused { path: PathBuf, message: String },
    /// An edit could not be written (fix the folder's permissions or free space); the file is
    /// as it was.
    #[error("{}", t!("rules-error-write", path = path.display().to_string(), error = error.to_string()))]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// `$XDG_CONFIG_HOME/askdesk/rules.toml`, else `~/.config/askdesk/rules.toml`.
pub fn default_path() -> Result<PathBuf, Error> {
    let config = askdesk_core::xdg::config_home().ok_or(Error::NoConfigDir)?;
    Ok(config.join("askdesk").join(FILE_NAME))
}

/// The directory that holds the rules file at `path` (`.` for a bare file name).
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Reads and parses the rules file; a missing file is an empty rule set.
pub fn load(path: &Path) -> Result<RuleSet, Error> {
    let read = std::fs::read(path).and_then(|bytes| {
        String::from_utf8(bytes).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                t!(
                    "rules-error-not-utf8",
                    offset = e.utf8_error().valid_up_to()
                ),
            )
        })
    });
    match read {
        Ok(text) => RuleSet::parse(&text).map_err(|error| Error::Parse {
            path: path.to_owned(),
            error,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RuleSet::default()),
        Err(source) => Err(Error::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

impl RuleSet {
    /// Parses the text of a rules file.
    pub fn parse(text: &str) -> Result<RuleSet, ParseError> {
        let file: RawFile =
            toml::from_str(text).map_err(|e| locate(text, e.span(), e.message()))?;
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut rules = Vec::with_capacity(file.rule.len());
        // Rules come in file order: each one's line is counted on from the last, so the file is
        // read once however many rules it has.
        let mut lines = Lines::default();
        for spanned in file.rule {
            // Problems of a whole rule (no action, two actions) point at its `[[rule]]` line;
            // problems of one value at the value (the parser's own, or ours through its span).
            let at = lines.locate(text, spanned.span().start);
            let mut rule =
                Rule::try_from(spanned.into_inner()).map_err(|invalid| match invalid {
                    Invalid::Rule(message) => ParseError {
                        message,
                        ..at.clone()
                    },
                    Invalid::Value(span, message) => locate(text, Some(span), &message),
                })?;
            rule.line = at.line;
            if let Some(first) = seen.insert(rule.name.clone(), rule.line) {
                return Err(ParseError {
                    message: t!(
                        "rules-error-duplicate",
                        name = format!("{:?}", rule.name),
                        first = first
                    ),
                    ..at
                });
            }
            rules.push(rule);
        }
        Ok(RuleSet { rules })
    }

    pub fn get(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.name == name)
    }

    /// Each rule's [`Rule::warning`], in file order.
    pub fn warnings(&self) -> impl Iterator<Item = Warning> + '_ {
        self.rules.iter().filter_map(Rule::warning)
    }
}

/// Lines counted so far through a text, for locating offsets that come in increasing order.
#[derive(Default)]
struct Lines {
    /// The offset counted up to, and the line it is on (0-based) and where that line starts.
    offset: usize,
    line: usize,
    line_start: usize,
}

impl Lines {
    /// The 1-based line and column of `offset`; an offset before the last one counts from the
    /// start again.
    fn locate(&mut self, text: &str, offset: usize) -> ParseError {
        let offset = offset.min(text.len());
        if offset < self.offset {
            *self = Lines::default();
        }
        let between = &text.as_bytes()[self.offset..offset];
        if let Some(last) = between.iter().rposition(|&b| b == b'\n') {
            self.line += between.iter().filter(|&&b| b == b'\n').count();
            self.line_start = self.offset + last + 1;
        }
        self.offset = offset;
        let column = text
            .get(self.line_start..offset)
            .map_or(0, |before| before.chars().count());
        ParseError {
            line: self.line + 1,
            column: column + 1,
            message: String::new(),
        }
    }
}

/// Turns a byte span of `text` into a 1-based line and column.
fn locate(text: &str, span: Option<std::ops::Range<usize>>, message: &str) -> ParseError {
    let start = span.map_or(0, |s| s.start.min(text.len()));
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |n| n + 1)..]
        .chars()
        .count()
        + 1;
    ParseError {
        line,
        column,
        message: message.trim_end().to_owned(),
    }
}

// ----- the file as written -----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    rule: Vec<toml::Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    name: Spanned<String>,
    #[serde(default, rename = "match")]
    matcher: RawMatch,
    #[serde(default)]
    answer: Option<Spanned<RawAnswer>>,
    #[serde(default)]
    deny: Option<Spanned<String>>,
    #[serde(default)]
    dismiss: Option<Spanned<String>>,
    #[serde(default)]
    ask: Option<Spanned<bool>>,
    #[serde(default)]
    after: Option<After>,
    #[serde(default)]
    mode: Mode,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatch {
    agent: Option<String>,
    cwd: Option<Spanned<String>>,
    client: Option<String>,
    tool: Option<String>,
    command: Option<String>,
    path: Option<Spanned<String>>,
    host: Option<Spanned<String>>,
    url_path: Option<Spanned<String>>,
    header: Option<String>,
    question: Option<QuestionRegex>,
    intent: Option<Spanned<String>>,
}

/// `answer`: an option's label, or a table; any other shape is told what is allowed.
enum RawAnswer {
    Label(String),
    Table(RawAnswerTable),
}

/// The shapes [`RawAnswer`] takes, as serde reads them.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawAnswerShape {
    Label(String),
    Table(RawAnswerTable),
}

impl<'de> Deserialize<'de> for RawAnswer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match RawAnswerShape::deserialize(deserializer) {
            Ok(RawAnswerShape::Label(label)) => Ok(RawAnswer::Label(label)),
            Ok(RawAnswerShape::Table(table)) => Ok(RawAnswer::Table(table)),
            Err(_) => Err(serde::de::Error::custom(t!("rules-error-answer-form"))),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnswerTable {
    option: Option<String>,
    recommended: Option<bool>,
    text: Option<String>,
}

/// What is wrong with a rule as written: the whole rule, or one value of it (its span).
enum Invalid {
    Rule(String),
    Value(std::ops::Range<usize>, String),
}

impl<M: Into<String>> From<M> for Invalid {
    fn from(message: M) -> Self {
        Invalid::Rule(message.into())
    }
}

impl TryFrom<RawRule> for Rule {
    type Error = Invalid;

    fn try_from(raw: RawRule) -> Result<Rule, Invalid> {
        let name = non_empty("name", raw.name)?;
        let action = {
            let mut actions = Vec::new();
            if let Some(answer) = raw.answer {
                let span = answer.span();
                let choice = answer
                    .into_inner()
                    .choice()
                    .map_err(|message| Invalid::Value(span, message))?;
                actions.push(Action::Answer(choice));
            }
            if let Some(message) = raw.deny {
                actions.push(Action::Deny(non_empty("deny", message)?));
            }
            if let Some(message) = raw.dismiss {
                actions.push(Action::Dismiss(non_empty("dismiss", message)?));
            }
            match raw.ask.as_ref().map(|ask| (*ask.get_ref(), ask.span())) {
                Some((true, _)) => actions.push(Action::Ask),
                Some((false, span)) => {
                    return Err(Invalid::Value(span, t!("rules-error-ask-false")))
                }
                None => {}
            }
            match actions.len() {
                1 => actions.pop().expect("one action"),
                0 => return Err(t!("rules-error-no-action", name = format!("{name:?}")).into()),
                _ => return Err(t!("rules-error-two-actions", name = format!("{name:?}")).into()),
            }
        };
        // A rule answers the calls it matches one at a time: never with a permission that
        // would stand for calls it does not see.
        if let Action::Answer(Choice::Option(label)) = &action {
            if let Some(why) = crate::standing::refusal(&name, label) {
                return Err(why.into());
            }
        }
        if raw.after.is_some() && action == Action::Ask {
            return Err(t!("rules-error-after-ask").into());
        }
        let m = raw.matcher;
        if m.command.is_some() && m.tool.is_none() {
            return Err(t!("rules-error-command-needs-tool").into());
        }
        if let Some(cwd) = &m.cwd {
            if !cwd.get_ref().starts_with('/') {
                return Err(Invalid::Value(
                    cwd.span(),
                    t!(
                        "rules-error-cwd-absolute",
                        cwd = format!("{:?}", cwd.get_ref())
                    ),
                ));
            }
        }
        if m.url_path.is_some() && m.host.is_none() {
            return Err(t!("rules-error-url-path-needs-host").into());
        }
        for (field, value) in [("path", &m.path), ("url_path", &m.url_path)] {
            if let Some(value) = value {
                check_path_glob(field, value.get_ref())
                    .map_err(|message| Invalid::Value(value.span(), message))?;
            }
        }
        if let Some(host) = &m.host {
            check_host(host.get_ref()).map_err(|message| Invalid::Value(host.span(), message))?;
        }
        if let Some(intent) = &m.intent {
            check_intent(intent.get_ref())
                .map_err(|message| Invalid::Value(intent.span(), message))?;
        }
        let glob = |field: &str, g: Option<&str>| {
            g.map(Glob::new)
                .transpose()
                .map_err(|error| format!("`match.{field}`: {error}"))
        };
        let host = match &m.host {
            Some(h) => Some(crate::target::host_pattern(h.get_ref()).ok_or_else(|| {
                Invalid::Value(
                    h.span(),
                    t!("rules-error-not-host", host = format!("{:?}", h.get_ref())),
                )
            })?),
            None => None,
        };
        Ok(Rule {
            name,
            matcher: Match {
                agent: glob("agent", m.agent.as_deref())?,
                cwd: m.cwd.map(|c| {
                    let trimmed = c.get_ref().trim_end_matches('/');
                    if trimmed.is_empty() {
                        "/".to_owned()
                    } else {
                        trimmed.to_owned()
                    }
                }),
                client: glob("client", m.client.as_deref())?,
                tool: glob("tool", m.tool.as_deref())?,
                command: glob("command", m.command.as_deref())?,
                path: glob("path", m.path.as_ref().map(|p| p.get_ref().as_str()))?,
                host: glob("host", host.as_deref())?,
                url_path: glob(
                    "url_path",
                    m.url_path.as_ref().map(|p| p.get_ref().as_str()),
                )?,
                header: glob("header", m.header.as_deref())?,
                question: m.question.map(|q| q.0),
                intent: m.intent.map(Spanned::into_inner),
            },
            action,
            after: raw.after.map(|a| a.0),
            mode: raw.mode,
            line: 0,
        })
    }
}

/// `match.path` and `match.url_path`: globs over absolute paths, so they start with `/` (or `*`),
/// and name no `..` or `.`, which a resolved path never holds.
fn check_path_glob(field: &str, glob: &str) -> Result<(), String> {
    if !glob.starts_with(['/', '*']) {
        return Err(t!(
            "rules-error-path-absolute",
            field = field,
            glob = format!("{glob:?}")
        ));
    }
    if glob.split('/').any(|part| part == ".." || part == ".") {
        return Err(t!(
            "rules-error-path-dots",
            field = field,
            glob = format!("{glob:?}")
        ));
    }
    Ok(())
}

/// `match.host`: a host name glob, without scheme, port or path.
fn check_host(host: &str) -> Result<(), String> {
    if host.trim().is_empty() {
        return Err(t!("rules-error-host-empty"));
    }
    if host.contains(['/', '@', ' ']) || (host.contains(':') && !host.starts_with('[')) {
        return Err(t!("rules-error-host-only", host = format!("{host:?}")));
    }
    Ok(())
}

/// An intent kind a rule may name: any kind an agent may send (unknown kinds pass through,
/// protocol 1.3), but not an empty one, nor a misspelling of a kind the product knows, which would
/// silently match nothing.
fn check_intent(kind: &str) -> Result<(), String> {
    let plan_review = askdesk_core::Intent::PLAN_REVIEW;
    let folded = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    if kind.trim().is_empty() {
        Err(t!("rules-error-intent-empty"))
    } else if kind != plan_review && folded(kind) == folded(plan_review) {
        Err(t!(
            "rules-error-intent-typo",
            kind = format!("{kind:?}"),
            known = format!("{plan_review:?}")
        ))
    } else {
        Ok(())
    }
}

impl RawAnswer {
    fn choice(self) -> Result<Choice, String> {
        match self {
            RawAnswer::Label(label) => Ok(Choice::Option(non_blank("answer", label)?)),
            RawAnswer::Table(table) => match (table.option, table.recommended, table.text) {
                (Some(label), None, None) => Ok(Choice::Option(non_blank("answer.option", label)?)),
                (None, Some(true), None) => Ok(Choice::Recommended),
                (None, None, Some(text)) => Ok(Choice::Text(non_blank("answer.text", text)?)),
                (None, Some(false), None) => Err(t!("rules-error-recommended-false")),
                _ => Err(t!("rules-error-answer-one")),
            },
        }
    }
}

fn non_blank(field: &str, value: String) -> Result<String, String> {
    if value.trim().is_empty() {
        Err(t!("rules-error-empty", field = field))
    } else {
        Ok(value)
    }
}

/// A value that must not be blank, its error pointing at the value.
fn non_empty(field: &str, value: Spanned<String>) -> Result<String, Invalid> {
    let span = value.span();
    non_blank(field, value.into_inner()).map_err(|message| Invalid::Value(span, message))
}

/// The longest `after`: a rule that waits longer is no deadline, and a deadline past the clock's
/// range could not be timed at all.
const MAX_AFTER: Duration = Duration::from_secs(7 * 86_400);

/// `after = "10m"`: a positive duration written as numbers with units `s`, `m`, `h`, `d`, at most
/// [`MAX_AFTER`].
struct After(Duration);

impl<'de> Deserialize<'de> for After {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let after = parse_duration(&text).map_err(serde::de::Error::custom)?;
        if after.is_zero() {
            return Err(serde::de::Error::custom(t!("rules-error-after-zero")));
        }
        if after > MAX_AFTER {
            return Err(serde::de::Error::custom(t!(
                "rules-error-after-long",
                text = format!("{text:?}")
            )));
        }
        Ok(After(after))
    }
}

/// Parses `"90s"`, `"10m"`, `"1h30m"`, `"2d"` (and `"0s"`: each use says whether zero makes sense).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || t!("rules-error-duration", text = format!("{text:?}"));
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
        any = true;
    }
    if !digits.is_empty() || !any {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

/// Writes a duration the way [`parse_duration`] reads it back: `"90s"` as `"1m30s"`, `"1h30m"`.
pub fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    for (n, unit) in [(d, 'd'), (h, 'h'), (m, 'm')] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// `match.question`: a regular expression, checked when the file is read.
struct QuestionRegex(Regex);

impl<'de> Deserialize<'de> for QuestionRegex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Regex::new(&text).map(QuestionRegex).map_err(|e| {
            // The regex crate's message spans several lines; the first says what is wrong.
            let detail = e.to_string();
            let detail = detail.lines().last().unwrap_or_default().trim().to_owned();
            serde::de::Error::custom(t!("rules-error-question-regex", detail = detail))
        })
    }
}

impl Action {
    /// What the rule does, in this process's language (`answer "No"`); the rules file's own label,
    /// text and message stay as it writes them.
    pub fn said(&self) -> String {
        self.said_in(&askdesk_i18n::current())
    }

    /// What the rule does, in the language of `messages`.
    pub fn said_in(&self, messages: &Messages) -> String {
        match self {
            Action::Answer(Choice::Option(label)) => {
                t!(in messages, "rules-action-answer", label = format!("{label:?}"))
            }
            Action::Answer(Choice::Recommended) => t!(in messages, "rules-action-recommended"),
            Action::Answer(Choice::Text(text)) => {
                t!(in messages, "rules-action-text", text = format!("{text:?}"))
            }
            Action::Deny(message) => {
                t!(in messages, "rules-verdict-deny", message = message.as_str())
            }
            Action::Dismiss(message) => {
                t!(in messages, "rules-verdict-dismiss", message = message.as_str())
            }
            Action::Ask => t!(in messages, "rules-action-ask"),
        }
    }
}

/// English, for the log.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.said_in(&askdesk_i18n::english()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn error(text: &str) -> ParseError {
        match RuleSet::parse(text) {
            Err(e) => e,
            Ok(set) => panic!("expected an error, parsed {set:?}"),
        }
    }

    /// Checks the error's line and that its message says `says`.
    #[track_caller]
    fn check_error(text: &str, line: usize, says: &str) {
        let e = error(text);
        assert_eq!(e.line, line, "{e}");
        assert!(e.message.contains(says), "{e:?} should say {says:?}");
    }

    #[test]
    fn full_rule_parses() {
        let set = RuleSet::parse(
            r#"
# Tests may always run.
[[rule]]
name = "cargo test"
match = { tool = "Bash", command = "cargo test*", cwd = "/home/me/src/", agent = "claude-*", client = "claude-code", header = "Run", question = "^Run .*\\?$" }
answer = "Allow once"
after = "1h30m"
mode = "shadow"

[[rule]]
name = "plans"
match.intent = "plan-review"
ask = true

[[rule]]
name = "recommended"
answer = { recommended = true }

[[rule]]
name = "text"
answer.text = "later"

[[rule]]
name = "no push"
match = { tool = "Bash", command = "*git push*" }
deny = "Do not push; open a pull request instead."

[[rule]]
name = "not here"
dismiss = "Answer this one in the terminal."
mode = "off"
"#,
        )
        .unwrap();
        let names: Vec<_> = set
            .rules
            .iter()
            .map(|r| (r.name.as_str(), r.line))
            .collect();
        assert_eq!(
            names,
            [
                ("cargo test", 3),
                ("plans", 10),
                ("recommended", 15),
                ("text", 19),
                ("no push", 23),
                ("not here", 28)
            ]
        );
        let first = &set.rules[0];
        assert_eq!(first.label(), "rule:cargo test");
        assert_eq!(first.after, Some(Duration::from_secs(5400)));
        assert_eq!(first.mode, Mode::Shadow);
        assert_eq!(first.matcher.cwd.as_deref(), Some("/home/me/src"));
        assert_eq!(
            first.action,
            Action::Answer(Choice::Option("Allow once".into()))
        );
        assert_eq!(set.rules[1].action, Action::Ask);
        assert_eq!(set.rules[1].matcher.intent.as_deref(), Some("plan-review"));
        assert_eq!(set.rules[2].action, Action::Answer(Choice::Recommended));
        assert_eq!(
            set.rules[3].action,
            Action::Answer(Choice::Text("later".into()))
        );
        assert_eq!(
            set.rules[4].action,
            Action::Deny("Do not push; open a pull request instead.".into())
        );
        assert_eq!(set.rules[5].mode, Mode::Off);
        assert_eq!(set.rules[2].mode, Mode::On);
    }

    #[test]
    fn each_rule_s_line_is_counted_once_through_the_file() {
        let mut text = String::from("# rules\n");
        let mut expected = Vec::new();
        for i in 0..500 {
            let line = text.matches('\n').count() + 1;
            let rule = format!("[[rule]]\nname = \"r{i}\"\nanswer = \"é {i}\"\n");
            text.push_str(&rule);
            expected.push(line);
            text.push_str(&"\n".repeat(i % 3));
        }
        let set = RuleSet::parse(&text).unwrap();
        let lines: Vec<usize> = set.rules.iter().map(|r| r.line).collect();
        assert_eq!(lines, expected);
        let mut lines = Lines::default();
        let at = lines.locate("ab\né x\n", 5);
        assert_eq!((at.line, at.column), (2, 2), "columns count characters");
        let back = lines.locate("ab\né x\n", 1);
        assert_eq!(
            (back.line, back.column),
            (1, 2),
            "an earlier offset counts from the start"
        );
    }

    #[test]
    fn an_answer_with_an_empty_match_loads_with_a_warning() {
        let set = RuleSet::parse(
            "[[rule]]\nname = \"all\"\nanswer = \"Yes\"\n\n[[rule]]\nname = \"braces\"\nmatch = {}\nanswer.text = \"ok\"\n\n[[rule]]\nname = \"no\"\ndeny = \"no\"\n\n[[rule]]\nname = \"some\"\nmatch.host = \"docs.rs\"\nanswer = \"Yes\"\n",
        )
        .unwrap();
        let warnings: Vec<String> = set.warnings().map(|w| w.to_string()).collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("rule \"all\" (line 1) answers with an empty match"));
        assert!(warnings[1].starts_with("rule \"braces\" (line 5)"));
        assert!(set.rules[2].warning().is_none(), "a denial is not risky");
        assert!(set.rules[3].warning().is_none());
    }

    #[test]
    fn an_answer_that_allows_commands_broadly_loads_with_the_broad_allow_warning() {
        let rule = |m: &str, action: &str| {
            let text = format!("[[rule]]\nname = \"r\"\n{action}\nmatch = {{ {m} }}\n");
            RuleSet::parse(&text)
                .unwrap()
                .rules
                .remove(0)
                .warning()
                .map(|w| w.to_string())
        };
        let answer = "answer = \"Allow once\"";
        for m in [
            r#"tool = "Bash", command = "*""#,
            r#"tool = "Bash", command = "git *""#,
            r#"tool = "Bash", command = "find*""#,
            r#"tool = "Bash", command = "*git status*""#,
            r#"tool = "Bash""#,
            r#"tool = "*""#,
            r#"tool = "shell", cwd = "/src""#,
        ] {
            let warning = rule(m, answer).unwrap_or_else(|| panic!("no warning for {m}"));
            assert_eq!(
                warning,
                format!(
                    "rule \"r\" (line 1) allows commands broadly: {}",
                    broad_allow()
                )
            );
        }
        for m in [
            r#"tool = "Bash", command = "cargo test*""#,
            r#"tool = "Bash", command = "git status""#,
            r#"tool = "Edit""#,
            r#"tool = "Edit", path = "/src/*""#,
            r#"tool = "WebFetch", host = "docs.rs""#,
        ] {
            assert_eq!(rule(m, answer), None, "{m}");
        }
        assert_eq!(
            rule(r#"tool = "Bash", command = "*""#, "deny = \"no\""),
            None
        );
    }

    #[test]
    fn warnings_and_actions_are_said_in_the_language_asked_and_english_in_the_log() {
        let set = RuleSet::parse(
            "[[rule]]\nname = \"all\"\nanswer = \"Yes\"\n\n[[rule]]\nname = \"no\"\ndeny = \"not here\"\n",
        )
        .unwrap();
        let chinese = Messages::new("zh-CN");
        let warning = set.rules[0].warning().unwrap();
        assert_eq!(warning.risk, Risk::EmptyMatch);
        let said = warning.said_in(&chinese);
        assert!(said.starts_with("规则 \"all\"（第 1 行）"), "{said}");
        assert!(
            warning
                .to_string()
                .starts_with("rule \"all\" (line 1) answers"),
            "{warning}"
        );
        assert_eq!(set.rules[0].action.said_in(&chinese), "回答 \"Yes\"");
        assert_eq!(set.rules[0].action.to_string(), "answer \"Yes\"");
        // The rules file's message is the agent's, and stays as the file writes it.
        assert_eq!(set.rules[1].action.said_in(&chinese), "拒绝（not here）");
    }

    #[test]
    fn docs_rules_md_quotes_the_broad_allow_sentence() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules.md"),
        )
        .unwrap();
        let collapsed = docs.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(collapsed.contains(&format!("\"{}\"", broad_allow())));
    }

    #[test]
    fn path_and_url_fields_are_checked() {
        let set = RuleSet::parse(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch = { tool = \"WebFetch\", host = \"*.GitHub.com\", url_path = \"/repos/*\", path = \"*/.env\" }\n",
        )
        .unwrap();
        let m = &set.rules[0].matcher;
        assert_eq!(m.host.as_ref().map(Glob::as_str), Some("*.github.com"));
        assert_eq!(m.url_path.as_ref().map(Glob::as_str), Some("/repos/*"));
        assert_eq!(m.path.as_ref().map(Glob::as_str), Some("*/.env"));
        let rule =
            |m: &str| format!("[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch = {{ {m} }}\n");
        check_error(&rule("path = \"src/*\""), 4, "must start with `/` or `*`");
        check_error(&rule("path = \"/w/../etc/*\""), 4, "holds `.` or `..`");
        check_error(&rule("url_path = \"/x\""), 1, "needs `match.host`");
        check_error(
            &rule("host = \"docs.rs\", url_path = \"x\""),
            4,
            "must start with `/`",
        );
        check_error(&rule("host = \"https://docs.rs\""), 4, "a host name only");
        check_error(&rule("host = \"docs.rs:443\""), 4, "a host name only");
        check_error(&rule("host = \" \""), 4, "must not be empty");
        assert!(RuleSet::parse(&rule("host = \"[::1]\"")).is_ok());
    }

    #[test]
    fn empty_file_has_no_rules() {
        assert!(RuleSet::parse("").unwrap().rules.is_empty());
        assert!(RuleSet::parse("# nothing yet\n").unwrap().rules.is_empty());
    }

    #[test]
    fn a_glob_too_long_to_match_is_refused_with_its_field() {
        let text = format!(
            "[[rule]]\nname = \"a\"\ndeny = \"no\"\nmatch = {{ tool = \"Bash\", command = \"{}\" }}\n",
            "?".repeat(crate::glob::MAX_WILDCARD_GLOB_CHARS + 1)
        );
        let e = error(&text);
        assert!(
            e.message
                .contains("`match.command`: a glob with `*` or `?` may be at most"),
            "{e:?}"
        );
    }

    #[test]
    fn a_rule_that_answers_a_standing_permission_is_refused_by_name() {
        // However narrow the match: the permission would stand for calls the rule never sees.
        for (answer, once) in [
            ("\"Always allow in this session\"", "Allow once"),
            (
                "{ option = \"Always allow in this session\" }",
                "Allow once",
            ),
            (
                "\"Always allow in this session (Recommended)\"",
                "Allow once",
            ),
            ("\"Approve, accept edits\"", "Approve, ask before edits"),
        ] {
            let text = format!(
                "[[rule]]\nname = \"ok\"\nask = true\n\n[[rule]]\nname = \"src edits\"\nmatch = {{ tool = \"Edit\", path = \"/home/me/app/src/*\", intent = \"plan-review\" }}\nanswer = {answer}\n"
            );
            let e = error(&text);
            assert_eq!((e.line, e.column), (5, 1), "{e}");
            assert!(
                e.message.starts_with("rule \"src edits\" answers \""),
                "{answer}: {e}"
            );
            assert!(
                e.message.contains(&format!("answer {once:?}")),
                "{answer}: {e}"
            );
        }
        // The one-call answers load, and a standing label as typed text is no pick.
        for answer in [
            "\"Allow once\"",
            "\"Approve, ask before edits\"",
            "{ text = \"Always allow in this session\" }",
        ] {
            let text =
                format!("[[rule]]\nname = \"a\"\nmatch.tool = \"Edit\"\nanswer = {answer}\n");
            assert!(RuleSet::parse(&text).is_ok(), "{answer}");
        }
    }

    #[test]
    fn errors_name_their_line() {
        // Not TOML at all.
        check_error("[[rule]]\nname = \"a\"\nanswer = \n", 3, "");
        // An unknown key, top level and in a rule and in its match.
        check_error("rules = 1\n", 1, "unknown field `rules`");
        check_error(
            "[[rule]]\nname = \"a\"\nanswr = \"Yes\"\n",
            3,
            "unknown field `answr`",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch = { tol = \"Bash\" }\n",
            4,
            "unknown field `tol`",
        );
        // Bad values point at the value.
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nafter = \"ten minutes\"\n",
            4,
            "not a duration",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nafter = \"0s\"\n",
            4,
            "longer than zero",
        );
        // A deadline past any use (and past the clock's range, which once panicked).
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nafter = \"213503982334601d\"\n",
            4,
            "`after` may be at most 7d",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nafter = \"7d1s\"\n",
            4,
            "`after` may be at most 7d",
        );
        assert!(
            RuleSet::parse("[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nafter = \"7d\"\n").is_ok()
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch.question = \"(unclosed\"\n",
            4,
            "not a regular expression",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmode = \"sometimes\"\n",
            4,
            "unknown variant `sometimes`",
        );
        // Whole-rule problems point at the rule.
        check_error(
            "[[rule]]\nname = \"ok\"\nask = true\n\n[[rule]]\nname = \"a\"\n",
            5,
            "has no action",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\ndeny = \"no\"\n",
            1,
            "more than one action",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch.command = \"ls\"\n",
            1,
            "needs `match.tool`",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nask = true\nafter = \"1m\"\n",
            1,
            "means nothing",
        );
        // Values checked after parsing point at the value too.
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch.cwd = \"src\"\n",
            4,
            "absolute path",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = { recommended = true, text = \"x\" }\n",
            3,
            "exactly one of",
        );
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = { recommended = false }\n",
            3,
            "means nothing",
        );
        check_error(
            "[[rule]]\nname = \" \"\nask = true\n",
            2,
            "`name` must not be empty",
        );
        for (key, says) in [
            ("answer", "`answer` must not be empty"),
            ("deny", "`deny` must not be empty"),
            ("dismiss", "`dismiss` must not be empty"),
        ] {
            check_error(
                &format!("[[rule]]\nname = \"a\"\n\n{key} = \"\"\n"),
                4,
                says,
            );
        }
        check_error(
            "[[rule]]\nname = \"a\"\nmatch = { header = \"x\" }\nask = false\n",
            4,
            "`ask = false` means nothing",
        );
        // A value of the wrong shape says what is allowed, in the file's words.
        let e = error("[[rule]]\nname = \"a\"\nanswer = 5\n");
        assert_eq!((e.line, e.column), (3, 10), "{e}");
        assert_eq!(
            e.message,
            "`answer` is an option's label (\"Yes\") or a table: { option = \"<label>\" }, { recommended = true } or { text = \"...\" }"
        );
        check_error("[[rule]]\nanswer = \"Yes\"\n", 1, "missing field `name`");
        check_error(
            "[[rule]]\nname = \"twice\"\nask = true\n\n[[rule]]\nname = \"twice\"\nask = true\n",
            5,
            "already defined on line 1",
        );
    }

    #[test]
    fn a_misspelt_or_empty_intent_is_refused_and_other_kinds_pass() {
        for typo in ["plan_review", "Plan-Review", "planreview", "plan review"] {
            check_error(
                &format!("[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch.intent = {typo:?}\n"),
                4,
                "did you mean \"plan-review\"?",
            );
        }
        check_error(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch.intent = \" \"\n",
            4,
            "`match.intent` must not be empty",
        );
        // Kinds the product does not know are an agent's to send (protocol 1.3).
        let set = RuleSet::parse(
            "[[rule]]\nname = \"a\"\nanswer = \"Yes\"\nmatch.intent = \"design-pick\"\n",
        )
        .expect("a custom kind");
        assert_eq!(set.rules[0].matcher.intent.as_deref(), Some("design-pick"));
    }

    #[test]
    fn error_display_has_line_and_column() {
        let e = error("[[rule]]\nname = \"a\"\nanswer = \"Yes\"\n  after = \"soon\"\n");
        assert_eq!((e.line, e.column), (4, 11));
        assert!(e.to_string().starts_with("line 4, column 11: "), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(172_800)));
        for bad in [
            "",
            "10",
            "m",
            "1.5h",
            "10 minutes",
            "-1s",
            "99999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} parsed");
        }
        for (secs, text) in [
            (0, "0s"),
            (90, "1m30s"),
            (5400, "1h30m"),
            (90_061, "1d1h1m1s"),
        ] {
            let written = format_duration(Duration::from_secs(secs));
            assert_eq!(written, text);
            assert_eq!(parse_duration(&written), Ok(Duration::from_secs(secs)));
        }
    }

    #[test]
    fn load_reads_a_file_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        assert!(load(&path).unwrap().rules.is_empty());
        std::fs::write(&path, "[[rule]]\nname = \"a\"\nask = true\n").unwrap();
        assert_eq!(load(&path).unwrap().rules.len(), 1);
        std::fs::write(&path, "[[rule]]\nname = \"a\"\n").unwrap();
        let message = load(&path).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("{}: line 1, column 1: ", path.display())),
            "{message}"
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.toml");
        std::fs::write(&path, b"[[rule]]\nname = \"\xff\"\n").unwrap();
        let error = load(&path).unwrap_err().to_string();
        assert!(
            error
                .ends_with("rules.toml: it is not UTF-8 text (the first bad byte is at offset 17)"),
            "{error}"
        );
        let error = load(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("cannot read") && error.contains("directory"),
            "{error}"
        );
        assert!(load(&dir.path().join("absent.toml"))
            .unwrap()
            .rules
            .is_empty());
    }
}
