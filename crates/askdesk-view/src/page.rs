//! What passes between the desktop and its page besides the commands: the events the page hears
//! (their names and payloads), the address a newly built window opens the page at, and the notes
//! of what rules did that the page keeps in view until the person closes them.
//!
//! The desktop thread, the window and the rules follower all emit these events; keeping them here
//! lets each of them depend on this module instead of on one another.

use std::collections::VecDeque;
use std::sync::Mutex;

use askdesk_core::RequestId;
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
    /// the person), when one did: the page shows "Answered on <label>" where the card was.
    pub answered_on: Option<String>,
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

/// A rule's deadline passed and the rule answered a request that waited for the person.
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
    /// What the rule did, in words (`answer "No"`).
    pub action: String,
    /// When, in milliseconds since the Unix epoch.
    pub at: u64,
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

    #[test]
    fn the_views_are_named_as_the_page_sends_them() {
        let view: PageView = serde_json::from_str("\"history\"").unwrap();
        assert_eq!(view, PageView::History);
        let view: PageView = serde_json::from_str("\"rules\"").unwrap();
        assert_eq!(view, PageView::Rules);
        assert!(serde_json::from_str::<PageView>("\"History\"").is_err());
    }
}
