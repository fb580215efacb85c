//! What passes between the desktop and its page besides the commands: the events the page hears
//! (their names and payloads), the address a newly built window opens the page at, and the notes
//! of what rules did that the page keeps in view until the person closes them.
//!
//! The desktop thread, the window and the rules follower all emit these events; keeping them here
//! lets each of them depend on this module instead of on one another.

use std::collections::VecDeque;
use std::sync::Mutex;

use askdesk_core::meta::display_name;
use askdesk_core::shown_label;
use askdesk_core::{Answer, Request, RequestId};
use askdesk_i18n::t;
use serde::{Deserialize, Serialize};

/// The number of waiting requests changed ([`QueueChanged`]).
pub const EVENT_QUEUE: &str = "queue-changed";
/// A waiting request left without the human ([`Withdrawn`]).
pub const EVENT_WITHDRAWN: &str = "request-withdrawn";
/// Show this request ([`Focus`]).
pub const EVENT_FOCUS: &str = "focus-request";
/// The window was on screen but had not the input focus, and the app is giving it the focus: keys
/// already down in the window the person was typing in must not act in the page.
pub const EVENT_RAISED: &str = "window-raised";
/// Do not disturb was switched (its new state, a boolean).
pub const EVENT_DND: &str = "dnd-changed";
/// The journal gained a record the History view may show.
pub const EVENT_HISTORY: &str = "history-changed";
/// The rules in force or the file's error changed (an edit in the page or in an editor).
pub const EVENT_RULES: &str = "rules-changed";
/// A rule acted on a waiting request, or the person closed such a note ([`Notes`]).
pub const EVENT_NOTES: &str = "notes-changed";
/// The last waiting request was answered in a window a request opened: the page says "Sent" for
/// the moment before the window hides itself.
pub const EVENT_SENT: &str = "answers-sent";

/// [`EVENT_QUEUE`]'s payload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueChanged {
    pub waiting: usize,
}

/// [`EVENT_WITHDRAWN`]'s payload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawn {
    pub request: RequestId,
    pub who: String,
    /// The rule whose `after` deadline settled the request, when it was one (not the agent).
    pub rule: Option<String>,
    /// What that rule did, in words (`answer "No"`).
    pub action: Option<String>,
    /// The label of the member of the desktop's race group that answered it (another device of
    /// the person), when one did: the page shows `Answered on <label>` where the card was.
    pub answered_on: Option<String>,
    /// What the page says of it when the agent withdrew the question or went
    /// ([`Removal::said_of`](crate::answerer::Removal::said_of)).
    pub message: Option<String>,
    /// Whether the request stays in the queue, ended, with what the person typed (the page then
    /// says it on the card rather than in a passing message).
    pub kept: bool,
}

/// [`EVENT_FOCUS`]'s payload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Focus {
    pub request: RequestId,
}

/// The page's main views.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageView {
    /// The waiting requests (or the empty state).
    #[default]
    Queue,
    History,
    Rules,
    /// Connect your agents (also the first run's view).
    Connect,
    /// Answer from your phone: its settings and the paired devices.
    Devices,
}

/// The page's address: the request to select (as the number the page's queue uses, not `r5`)
/// and the view to open on, when it is not the queue.
pub fn address(request: Option<RequestId>, view: PageView) -> String {
    let mut hash = Vec::new();
    if let Some(request) = request {
        hash.push(format!("request={}", request.0));
    }
    match view {
        PageView::Queue => {}
        PageView::History => hash.push("view=history".to_owned()),
        PageView::Rules => hash.push("view=rules".to_owned()),
        PageView::Connect => hash.push("view=connect".to_owned()),
        PageView::Devices => hash.push("view=devices".to_owned()),
    }
    if hash.is_empty() {
        "index.html".to_owned()
    } else {
        format!("index.html#{}", hash.join("&"))
    }
}

/// Where the page was: a window rebuilt for no request in particular opens on the request and the
/// view shown last (the page falls back to the oldest request if that one no longer waits), so
/// hiding the window and coming back later finds the human where they were.
#[derive(Debug, Default)]
pub struct Resume {
    last_shown: Mutex<Option<RequestId>>,
    last_view: Mutex<PageView>,
}

impl Resume {
    /// The page has shown this request.
    pub fn shown(&self, request: RequestId) {
        *askdesk_core::sync::lock(&self.last_shown) = Some(request);
    }

    /// The page switched to this view.
    pub fn viewed(&self, view: PageView) {
        *askdesk_core::sync::lock(&self.last_view) = view;
    }

    /// The address of a page built for no request in particular.
    pub fn address(&self) -> String {
        let request = *askdesk_core::sync::lock(&self.last_shown);
        let view = *askdesk_core::sync::lock(&self.last_view);
        address(request, view)
    }
}

/// A rule acted on a request while the person was not answering it: its deadline passed on a
/// request that waited for them, or it answered a permission prompt at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleNote {
    pub id: u64,
    pub request: RequestId,
    /// Who asked.
    pub who: String,
    /// The first question's text.
    pub question: String,
    pub rule: String,
    /// What the rule did, in words (`answer "No"`): said when it sent no answer.
    pub action: String,
    /// The exact answer it sent, in words ([`answer_words`]); `None` when it denied or dismissed.
    pub answer: Option<String>,
    /// When the request was asked, in milliseconds since the Unix epoch: with `who`, it finds the
    /// request's History entry.
    pub asked_at: u64,
    /// When the rule acted, in milliseconds since the Unix epoch.
    pub at: u64,
}

/// The longest free text a note quotes from an answer; the rest is in History.
const MAX_NOTE_TEXT: usize = 80;

impl RuleNote {
    /// The note of rule `rule` acting on `request`: `action` in words, and the answer it sent.
    pub fn new(request: &Request, rule: &str, action: &str, answer: Option<&Answer>) -> RuleNote {
        RuleNote {
            id: 0,
            request: request.id,
            who: display_name(request.agent.as_ref()).to_owned(),
            question: request.questions[0].question.clone(),
            rule: rule.to_owned(),
            action: action.to_owned(),
            answer: answer.map(answer_words),
            asked_at: askdesk_journal::millis(request.asked_at),
            at: askdesk_journal::millis(std::time::SystemTime::now()),
        }
    }

    /// The note in one line, as its notification's title says it: `Rule “prune” answered: Delete
    /// them`, or, when the rule sent no answer, `Rule “prune”: deny (not here)`.
    pub fn headline(&self) -> String {
        let rule = self.rule.as_str();
        match &self.answer {
            Some(answer) => t!(
                "desktop-rule-note-answered",
                rule = rule,
                answer = answer.as_str()
            ),
            None => t!(
                "desktop-rule-note-acted",
                rule = rule,
                action = self.action.as_str()
            ),
        }
    }

    /// Which question it was, as its notification's body says it.
    pub fn about(&self) -> String {
        t!(
            "desktop-rule-note-about",
            who = self.who.as_str(),
            question = shorten(&self.question)
        )
    }
}

/// An answer as a person reads it: each question's chosen labels (without "(Recommended)")
/// joined by commas and its free text quoted and shortened, questions apart by semicolons;
/// `skipped` for a question with neither.
pub fn answer_words(answer: &Answer) -> String {
    let items: Vec<String> = answer
        .answers
        .iter()
        .map(|item| {
            let mut parts: Vec<String> = item
                .selected
                .iter()
                .map(|label| shown_label(label).to_owned())
                .collect();
            if let Some(text) = item
                .custom
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
            {
                parts.push(format!("“{}”", shorten(text)));
            }
            if parts.is_empty() {
                t!("desktop-answer-skipped")
            } else {
                parts.join(", ")
            }
        })
        .collect();
    items.join("; ")
}

/// Text on one line, at most [`MAX_NOTE_TEXT`] characters (the last one `…` when cut).
fn shorten(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_NOTE_TEXT {
        return line;
    }
    let cut: String = line.chars().take(MAX_NOTE_TEXT - 1).collect();
    format!("{}…", cut.trim_end())
}

/// The most notes kept; the oldest goes first.
pub const MAX_NOTES: usize = 20;

/// What rules did to waiting requests, kept in the app (not the page) so that a window dropped
/// while the person was away still shows it when they come back, until they close each note.
#[derive(Debug, Default)]
pub struct Notes {
    notes: Mutex<(u64, VecDeque<RuleNote>)>,
}

impl Notes {
    /// Keeps a note (its `id` is given here).
    pub fn add(&self, mut note: RuleNote) {
        let mut notes = askdesk_core::sync::lock(&self.notes);
        notes.0 += 1;
        note.id = notes.0;
        if notes.1.len() == MAX_NOTES {
            notes.1.pop_front();
        }
        notes.1.push_back(note);
    }

    /// The notes kept, oldest first.
    pub fn list(&self) -> Vec<RuleNote> {
        askdesk_core::sync::lock(&self.notes)
            .1
            .iter()
            .cloned()
            .collect()
    }

    /// The person closed a note; whether it was there.
    pub fn close(&self, id: u64) -> bool {
        let mut notes = askdesk_core::sync::lock(&self.notes);
        let before = notes.1.len();
        notes.1.retain(|note| note.id != id);
        notes.1.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_address_names_the_request_by_its_number_and_the_view() {
        // ui/app.js reads it as the hash's `request` and `view` parameters.
        assert_eq!(
            address(Some(RequestId(17)), PageView::Queue),
            "index.html#request=17"
        );
        assert_eq!(address(None, PageView::Queue), "index.html");
        assert_eq!(address(None, PageView::History), "index.html#view=history");
        assert_eq!(address(None, PageView::Connect), "index.html#view=connect");
        assert_eq!(
            address(Some(RequestId(3)), PageView::Rules),
            "index.html#request=3&view=rules"
        );
    }

    #[test]
    fn a_page_built_for_no_request_resumes_the_last_view_and_request() {
        let resume = Resume::default();
        assert_eq!(resume.address(), "index.html");
        resume.shown(RequestId(5));
        assert_eq!(resume.address(), "index.html#request=5");
        resume.viewed(PageView::History);
        assert_eq!(resume.address(), "index.html#request=5&view=history");
        resume.viewed(PageView::Queue);
        assert_eq!(resume.address(), "index.html#request=5");
    }

    #[test]
    fn notes_stay_until_closed_and_the_oldest_goes_past_the_limit() {
        let notes = Notes::default();
        let note = |n: u64| RuleNote {
            id: 0,
            request: RequestId(n),
            who: "claude-code".into(),
            question: "Delete?".into(),
            rule: "auto no".into(),
            action: "answer \"No\"".into(),
            answer: Some("No".into()),
            asked_at: n,
            at: n,
        };
        notes.add(note(1));
        notes.add(note(2));
        let ids: Vec<u64> = notes.list().iter().map(|n| n.id).collect();
        assert_eq!(ids, [1, 2]);
        assert!(notes.close(1));
        assert!(!notes.close(1));
        assert_eq!(notes.list()[0].request, RequestId(2));
        for n in 3..=(MAX_NOTES as u64 + 5) {
            notes.add(note(n));
        }
        let list = notes.list();
        assert_eq!(list.len(), MAX_NOTES);
        assert_eq!(
            list.last().unwrap().request,
            RequestId(MAX_NOTES as u64 + 5)
        );
    }

    fn request(questions: serde_json::Value) -> Request {
        Request {
            id: RequestId(9),
            questions: serde_json::from_value(questions).unwrap(),
            agent: Some(
                serde_json::from_value(serde_json::json!({"id": "cc-1", "label": "Claude Code"}))
                    .unwrap(),
            ),
            asked_at: std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_800_000_000_123),
        }
    }

    fn answer(items: serde_json::Value) -> Answer {
        serde_json::from_value(serde_json::json!({ "answers": items })).unwrap()
    }

    #[test]
    fn a_rule_note_names_the_exact_answer_not_the_rules_words_for_it() {
        let asked = request(
            serde_json::json!([{"id": "q", "question": "Prune the stale branches?",
            "options": [{"label": "Delete them (Recommended)"}, {"label": "Keep them"}]}]),
        );
        let note = RuleNote::new(
            &asked,
            "prune",
            "answer the recommended option",
            Some(&answer(
                serde_json::json!([{"id": "q", "selected": ["Delete them (Recommended)"]}]),
            )),
        );
        assert_eq!(note.headline(), "Rule “prune” answered: Delete them");
        assert_eq!(note.about(), "Claude Code asked: Prune the stale branches?");
        assert_eq!(note.asked_at, 1_800_000_000_123);
        assert_eq!(note.request, RequestId(9));
        let denied = RuleNote::new(&asked, "no pushes", "deny (not from here)", None);
        assert_eq!(denied.headline(), "Rule “no pushes”: deny (not from here)");
    }

    #[test]
    fn an_answer_in_words_joins_labels_and_shortens_free_text() {
        let several = answer(serde_json::json!([
            {"id": "a", "selected": ["Lint", "Test (Recommended)"]},
            {"id": "b", "selected": [], "custom": "  ship it\n today  "},
            {"id": "c", "selected": []}
        ]));
        assert_eq!(
            answer_words(&several),
            "Lint, Test; “ship it today”; skipped"
        );
        let long =
            answer(serde_json::json!([{"id": "a", "selected": [], "custom": "word ".repeat(40)}]));
        let said = answer_words(&long);
        assert_eq!(said.chars().count(), MAX_NOTE_TEXT + 2, "{said}");
        assert!(said.ends_with("…”"), "{said}");
    }

    #[test]
    fn the_views_are_named_as_the_page_sends_them() {
        let view: PageView = serde_json::from_str("\"history\"").unwrap();
        assert_eq!(view, PageView::History);
        let view: PageView = serde_json::from_str("\"rules\"").unwrap();
        assert_eq!(view, PageView::Rules);
        assert!(serde_json::from_str::<PageView>("\"History\"").is_err());
    }
}
