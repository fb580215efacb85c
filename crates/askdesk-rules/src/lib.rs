//! askdesk-rules: answer rules the human writes and controls, applied at the head of the waterfall.
//!
//! - [`file`](mod@file): the rules file (`$XDG_CONFIG_HOME/askdesk/rules.toml`), parsed into a [`RuleSet`];
//!   errors carry the line and column they point at. Reading the file, and writing it in
//!   [`edit`], are the crate's only I/O.
//! - [`draft`](mod@draft): a rule drafted from one request and the human's answer, checked to give that
//!   answer back ("Always answer this way here", "Make a rule"), exactly or for questions like it.
//! - [`generalise`](mod@generalise): a question's text with its numbers and names varying, for a
//!   rule drafted for "questions like it".
//! - [`edit`]: edits of the rules file that keep its comments and formatting (appending a rule,
//!   setting a rule's `mode`), validated and written atomically; a missing file created with a
//!   commented header and example.
//! - [`glob`]: the shell-style globs rules match names with.
//! - [`matching`]: which rule applies to a request and what it decides, with the two safety rules
//!   (plan reviews and permission prompts).
//! - [`target`]: what a tool touches, the file it changes and the URL it fetches, resolved for
//!   `match.path`, `match.host` and `match.url_path` (strictly for rules that answer); where a
//!   path leads, and a host as the URL standard reads it, for allows and denies alike.
//! - [`shell`]: command lines read as bash runs them (tree-sitter-bash): the simple commands of a
//!   line, whether it can be read statically, and how a `command` glob matches it (an answer needs
//!   every simple command, a deny any part).
//! - [`standing`]: the hook's approving answers, and those that grant more than the one call (a
//!   standing permission for the session), which no rule gives.
//! - [`runners`]: the words that run another command, as data derived from bash's builtins and the
//!   wrappers' synopses, with each one's option grammar, for the shell reading and deny rules.
//! - [`git`]: git's global options, configuration and aliases given on the line, and the
//!   configuration keys that run programs.
//! - [`protected`]: what no rule may allow: changes to the places that run code or hold trust
//!   for askdesk, the agents, the shells and git (`PLACES`, each with who reads it), judged where
//!   a path leads (links and hard links), and commands that run askdesk or name those places.
//! - [`engine`]: [`Engine`], which keeps the file loaded (reloading it when it changes, keeping the
//!   last good rules when it breaks) and installs the in-process answerer labelled `rules` whose
//!   decisions the journal shows as `rule:<name>`; rules with `after` decide through a deadline.
//! - [`replay`](mod@replay): settled requests replayed through the rules in force, per rule: hits, acts,
//!   agreements with the human and differences (`askdesk rules test` and `list`, the desktop's
//!   Rules view); journal records become [`Past`] requests here, once for both.

pub mod draft;
pub mod edit;
pub mod engine;
pub mod file;
pub mod generalise;
pub mod git;
pub mod glob;
pub mod matching;
pub mod protected;
pub mod replay;
pub mod runners;
pub mod shell;
pub mod standing;
pub mod target;

pub use draft::{draft, draft_as, Draft, Scope, Source};
pub use edit::{append_rule, create_if_missing, set_mode};
pub use engine::{
    Acted, Deadline, Engine, HoldError, Loaded, Proposal, ANSWERER_LABEL, DEFAULT_POLL,
};
pub use file::{
    default_path, rule_named, Action, Choice, Error, Match, Mode, ParseError, Risk, Rule, RuleSet,
    Warning,
};
pub use matching::{Evaluation, Request, Verdict, ASK_DENIED};
pub use replay::{applies, past_requests, replay, Past, Replay, RuleReport, Settlement};
