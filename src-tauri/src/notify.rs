//! Desktop notifications for waiting requests, over the freedesktop D-Bus interface (notify-rust).
//!
//! Every D-Bus call happens on threads of this module, never on the async runtime: one worker
//! thread shows notifications in order, and each shown notification gets a small thread that
//! waits for its action or for the request to settle elsewhere, and then closes it
//! (`CloseNotification`). When no notification server answers, the app keeps working without
//! notifications and says so once in the log.
//!
//! Notes of what a rule did ([`note_spec`]) are shown the same way and stay until the person
//! closes them; quitting closes every notification still shown ([`Notifier::close_all`]), waiting
//! for each thread to close its own.
//!
//! notify-rust subscribes to `ActionInvoked`/`NotificationClosed` by interface and member, not by
//! sender: a peer on the session bus could forge one. Such a peer runs as the same user, who can
//! answer over the socket anyway; the buttons are offered only for a question whose whole meaning
//! is in the notification, so that a human pressing one has seen what they answer.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;

use std::time::{Duration, SystemTime};

use askdesk_core::meta::display_name;
use askdesk_core::{Request, RequestId};
use askdesk_i18n::t;
use askdesk_rules::Deadline;
use futures_lite::future;
use notify_rust::{Notification, NotificationResponse, Timeout};
use tokio::sync::oneshot;

use crate::activation::{self, Token};

/// What the human did with a notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Activated the notification itself: open the request in the window.
    Open(RequestId),
    /// Chose option `option` of the request's only question.
    Choose { request: RequestId, option: usize },
    /// Held the deadline of the rule that would answer the request: its clock stops.
    Hold(RequestId),
    /// Activated a note of what a rule did: open the window, where the note is.
    ShowNotes,
}

/// What a notification for a request shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub request: RequestId,
    pub title: String,
    /// Plain text; escaped for the servers that read body markup.
    pub body: String,
    /// Option labels offered as buttons, in option order (empty unless the batch is one simple
    /// single-select question without `detail`).
    pub choices: Vec<String>,
    /// Whether a rule's deadline runs on the request: the body says so and "Hold" stops it.
    pub hold: bool,
}

/// The key of the action that holds a rule's deadline (its label is `notify-hold`).
const HOLD_KEY: &str = "hold";

/// The most options a notification offers as buttons; more would not fit most desktops.
pub const MAX_CHOICES: usize = 3;
/// The longest body shown; the window has the rest.
const MAX_BODY_CHARS: usize = 300;
/// Commands waiting for the worker; a full queue drops the notification, never blocks the caller.
const QUEUE: usize = 256;
/// Pop directional formatting: closes an embedding or override.
const PDF: char = '\u{202C}';
/// First strong isolate: opens an isolate that takes its direction from its own text.
const FSI: char = '\u{2068}';
/// Pop directional isolate: closes an isolate, and every embedding or override opened inside it.
const PDI: char = '\u{2069}';
/// Paragraph separators (bidi class B): each ends every embedding, override and isolate.
const PARAGRAPH_SEPARATORS: [char; 7] = [
    '\n', '\r', '\u{1C}', '\u{1D}', '\u{1E}', '\u{85}', '\u{2029}',
];

/// The notification for a request: who asks, what, a rule's deadline, and the buttons when the
/// question is simple.
pub fn spec_for(request: &Request, deadline: Option<&Deadline>) -> Spec {
    let who = display_name(request.agent.as_ref());
    let first = &request.questions[0];
    let mut body = first.question.trim().to_owned();
    if body.is_empty() {
        body = first.header.clone().unwrap_or_default();
    }
    if body.chars().count() > MAX_BODY_CHARS {
        body = body.chars().take(MAX_BODY_CHARS - 1).collect::<String>() + "…";
    }
    let mut body = isolate(&body);
    let more = request.questions.len() - 1;
    if more > 0 {
        body.push('\n');
        body.push_str(&t!("notify-more", more = more));
    }
    // A question whose `detail` says what is at stake (a hook's command, a diff) gets no buttons:
    // answering from the notification would decide without seeing it.
    let simple = request.questions.len() == 1
        && !first.multi_select
        && first.intent.is_none()
        && first.detail.as_deref().is_none_or(|d| d.trim().is_empty())
        && (1..=MAX_CHOICES).contains(&first.options.len());
    let choices = if simple {
        // Shown without "(Recommended)"; the action names the option by its place, so the
        // answer keeps the label unchanged.
        first
            .options
            .iter()
            .map(|o| isolate(askdesk_core::shown_label(&o.label)))
            .collect()
    } else {
        Vec::new()
    };
    if let Some(deadline) = deadline {
        let left = deadline
            .at
            .duration_since(SystemTime::now())
            .unwrap_or_default();
        body.push('\n');
        body.push_str(&t!(
            "notify-rule-will",
            rule = isolate(&deadline.rule),
            action = isolate(&deadline.action),
            left = in_words(left)
        ));
    }
    Spec {
        request: request.id,
        title: t!("notify-asks", agent = isolate(who)),
        body,
        choices,
        hold: deadline.is_some(),
    }
}

/// A time left as a notification says it: "45 s", "10 min", "2 h 5 min".
fn in_words(left: Duration) -> String {
    let seconds = left.as_secs_f64().round() as u64;
    let minutes = seconds.div_ceil(60);
    match (seconds, minutes) {
        (s, _) if s < 60 => t!("notify-seconds", seconds = s),
        (_, m) if m < 60 => t!("notify-minutes", minutes = m),
        (_, m) if m % 60 == 0 => t!("notify-hours", hours = m / 60),
        (_, m) => t!("notify-hours-minutes", hours = m / 60, minutes = m % 60),
    }
}

/// Shows and closes notifications on its own threads. Dropping it (every clone) stops the worker.
#[derive(Clone)]
pub struct Notifier {
    commands: SyncSender<Command>,
}

enum Command {
    Show(Spec),
    Close(RequestId),
    /// A note of what a rule did ([`note_spec`]).
    ShowNote(NoteSpec),
    /// Close every notification shown, then reply.
    CloseAll(SyncSender<()>),
}

impl Notifier {
    /// Starts the worker thread. `on_action` runs on a notification's thread when the human acts,
    /// with the activation token the server sent with the action, if any.
    pub fn spawn(
        on_action: impl Fn(Action, Option<Token>) + Send + Sync + 'static,
    ) -> std::io::Result<Notifier> {
        let (commands, receiver) = sync_channel(QUEUE);
        let on_action: Arc<dyn Fn(Action, Option<Token>) + Send + Sync> = Arc::new(on_action);
        std::thread::Builder::new()
            .name("askdesk-notify".into())
            .spawn(move || worker(receiver, on_action))?;
        Ok(Notifier { commands })
    }

    /// Shows a notification for a request (asynchronously).
    pub fn show(&self, spec: Spec) {
        self.send(Command::Show(spec));
    }

    /// Closes the request's notification, if one is shown.
    pub fn close(&self, request: RequestId) {
        self.send(Command::Close(request));
    }

    /// Shows a note of what a rule did (asynchronously); it stays until the person closes it or
    /// the app quits.
    pub fn show_note(&self, spec: NoteSpec) {
        self.send(Command::ShowNote(spec));
    }

    /// Closes every notification this app shows (`CloseNotification`, by id), waiting at most
    /// `within`; for quitting, so none is left behind that nobody would answer.
    pub fn close_all(&self, within: Duration) {
        let (done, closed) = sync_channel(1);
        self.send(Command::CloseAll(done));
        if closed.recv_timeout(within).is_err() {
            tracing::warn!("not every notification was closed before quitting");
        }
    }

    fn send(&self, command: Command) {
        match self.commands.try_send(command) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!("the notification queue is full; a notification was dropped")
            }
            Err(TrySendError::Disconnected(_)) => {
                tracing::warn!("the notification worker has stopped")
            }
        }
    }
}

fn worker(
    commands: Receiver<Command>,
    on_action: Arc<dyn Fn(Action, Option<Token>) + Send + Sync>,
) {
    // Each shown notification's thread waits on the paired receiver for "the request settled".
    let mut shown: HashMap<RequestId, oneshot::Sender<()>> = HashMap::new();
    // Every notification's thread, and the notes' "close now": quitting closes them all.
    let mut watching: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let mut notes: Vec<oneshot::Sender<()>> = Vec::new();
    let mut warned = false;
    // Whether the server shows actions (buttons), asked at the first notification: a Hold it would not
    // show is not offered (the body still says the deadline; the window holds it).
    let mut actions: Option<bool> = None;
    for command in commands {
        match command {
            Command::Show(mut spec) => {
                spec.hold &= *actions.get_or_insert_with(server_shows_actions);
                match build(&spec).show() {
                    Ok(handle) => {
                        tracing::debug!(request = %spec.request, id = handle.id(), "notification shown");
                        let (settled, settled_rx) = oneshot::channel();
                        shown.insert(spec.request, settled);
                        let on_action = on_action.clone();
                        let request = spec.request;
                        let spawned = std::thread::Builder::new()
                            .name(format!("askdesk-notify-{request}"))
                            .spawn(move || watch(handle, request, settled_rx, on_action));
                        match spawned {
                            Ok(thread) => watching.push(thread),
                            Err(error) => tracing::warn!(%error, "cannot watch a notification"),
                        }
                    }
                    Err(error) if !warned => {
                        warned = true;
                        tracing::warn!(%error, "no desktop notification server answered; askdesk works without notifications");
                    }
                    Err(error) => tracing::debug!(%error, "notification not shown"),
                }
            }
            Command::Close(request) => {
                if let Some(settled) = shown.remove(&request) {
                    let _ = settled.send(());
                }
            }
            Command::ShowNote(spec) => {
                if let Some((close, thread)) = show_note(&spec, &on_action) {
                    notes.push(close);
                    watching.push(thread);
                }
            }
            Command::CloseAll(done) => {
                let closes = shown.drain().map(|(_, close)| close).chain(notes.drain(..));
                for close in closes {
                    let _ = close.send(());
                }
                // Each thread closes its notification before it ends.
                for thread in watching.drain(..) {
                    let _ = thread.join();
                }
                let _ = done.send(());
            }
        }
        watching.retain(|thread| !thread.is_finished());
        notes.retain(|close| !close.is_closed());
    }
}

/// What a note of a rule's action shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSpec {
    pub title: String,
    pub body: String,
}

/// The notification of what a rule did, in the note's words (`Rule “prune” answered: Delete
/// them`, then who asked what).
pub fn note_spec(note: &askdesk_view::page::RuleNote) -> NoteSpec {
    NoteSpec {
        title: isolate(&note.headline()),
        body: isolate(&note.about()),
    }
}

/// Shows a note and starts its thread, which waits for the person to activate it (the window
/// opens) or for the app to close it. `None` when it could not be shown.
fn show_note(
    spec: &NoteSpec,
    on_action: &Arc<dyn Fn(Action, Option<Token>) + Send + Sync>,
) -> Option<(oneshot::Sender<()>, std::thread::JoinHandle<()>)> {
    let mut notification = Notification::new();
    notification
        .appname("askdesk")
        .summary(&spec.title)
        .body(&escape_markup(&spec.body))
        .icon("dialog-information")
        .timeout(Timeout::Never)
        .action("default", &t!("notify-open"));
    let handle = match notification.show() {
        Ok(handle) => handle,
        Err(error) => {
            tracing::debug!(%error, "note not shown");
            return None;
        }
    };
    tracing::debug!(id = handle.id(), "note shown");
    let (close, closing) = oneshot::channel();
    let on_action = on_action.clone();
    let thread = std::thread::Builder::new()
        .name("askdesk-notify-note".into())
        .spawn(move || {
            let mut acted = false;
            let closed = future::block_on(future::or(
                async {
                    handle
                        .wait_for_action_async(|r| {
                            acted = matches!(
                                r,
                                NotificationResponse::Default | NotificationResponse::Action(_)
                            )
                        })
                        .await;
                    false
                },
                async {
                    let _ = closing.await;
                    true
                },
            ));
            if closed {
                future::block_on(handle.close_async());
                tracing::debug!("note closed");
            } else if acted {
                // "Open" on a note brings the window forward with the person's token, as on a
                // question's notification.
                on_action(
                    Action::ShowNotes,
                    activation::notification_token(handle.id()),
                );
            }
        });
    match thread {
        Ok(thread) => Some((close, thread)),
        Err(error) => {
            tracing::warn!(%error, "cannot watch a note");
            None
        }
    }
}

/// Whether the notification server shows actions (buttons); yes when it cannot be asked, as
/// before: a server without them ignores them.
fn server_shows_actions() -> bool {
    notify_rust::get_capabilities()
        .map(|capabilities| capabilities.iter().any(|c| c == "actions"))
        .unwrap_or(true)
}

/// Waits for the human's action on one notification, or for its request to settle elsewhere (then
/// closes it).
fn watch(
    handle: notify_rust::NotificationHandle,
    request: RequestId,
    settled: oneshot::Receiver<()>,
    on_action: Arc<dyn Fn(Action, Option<Token>) + Send + Sync>,
) {
    let mut response: Option<NotificationResponse> = None;
    let settled_elsewhere = future::block_on(future::or(
        async {
            handle
                .wait_for_action_async(|r| response = Some(r.clone()))
                .await;
            false
        },
        async {
            // A dropped sender (the worker stopped) also means the notification should go.
            let _ = settled.await;
            true
        },
    ));
    if settled_elsewhere {
        future::block_on(handle.close_async());
        tracing::debug!(%request, "notification closed");
        return;
    }
    let action = match response {
        Some(NotificationResponse::Default) => Some(Action::Open(request)),
        Some(NotificationResponse::Action(key)) => {
            Some(parse_key(&key, request).unwrap_or(Action::Open(request)))
        }
        _ => None,
    };
    if let Some(action) = action {
        on_action(action, activation::notification_token(handle.id()));
    }
}

/// Agent text as a notification shows it: text with bidi controls (U+202A-U+202E, U+2066-U+2069)
/// gets each line in its own first-strong isolate, with what it leaves open closed and what it
/// closes without having opened dropped, so an override in an agent's label or question cannot
/// reorder the words around it ("asks", the next line). Text without them is returned unchanged.
fn isolate(text: &str) -> String {
    if !text.chars().any(is_bidi_control) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    // What is open in the current line, innermost last: true for an isolate, false for an
    // embedding or override.
    let mut open: Vec<bool> = Vec::new();
    let close = |out: &mut String, open: &mut Vec<bool>| {
        for isolate in open.drain(..).rev() {
            out.push(if isolate { PDI } else { PDF });
        }
        out.push(PDI);
    };
    out.push(FSI);
    for c in text.chars() {
        match c {
            PDF if open.last() == Some(&false) => {
                open.pop();
            }
            // Closes nothing opened in this text: it would close something around it.
            PDF => continue,
            PDI => match open.iter().rposition(|&isolate| isolate) {
                Some(at) => open.truncate(at),
                None => continue,
            },
            '\u{2066}'..='\u{2068}' => open.push(true),
            c if is_bidi_control(c) => open.push(false),
            c if PARAGRAPH_SEPARATORS.contains(&c) => {
                close(&mut out, &mut open);
                out.push(c);
                out.push(FSI);
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    close(&mut out, &mut open);
    out
}

/// The explicit directional embeddings, overrides and isolates, with their closers.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn build(spec: &Spec) -> Notification {
    let mut notification = Notification::new();
    notification
        .appname("askdesk")
        .summary(&spec.title)
        .body(&escape_markup(&spec.body))
        .icon("dialog-question")
        .timeout(Timeout::Never)
        .action("default", &t!("notify-open"));
    for (index, label) in spec.choices.iter().enumerate() {
        notification.action(&choice_key(index), label);
    }
    if spec.hold {
        notification.action(HOLD_KEY, &t!("notify-hold"));
    }
    notification
}

fn choice_key(index: usize) -> String {
    format!("choose-{index}")
}

fn parse_key(key: &str, request: RequestId) -> Option<Action> {
    if key == HOLD_KEY {
        return Some(Action::Hold(request));
    }
    let option = key.strip_prefix("choose-")?.parse().ok()?;
    Some(Action::Choose { request, option })
}

/// Body text may be read as markup (`body-markup`): show the agent's text literally.
fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::{AgentInfo, Intent, Question, QuestionOption};
    use std::time::SystemTime;

    fn request(agent: Option<AgentInfo>, questions: Vec<Question>) -> Request {
        Request {
            id: RequestId(3),
            questions,
            agent,
            asked_at: SystemTime::now(),
        }
    }

    fn question(options: &[&str]) -> Question {
        Question {
            images: Vec::new(),
            id: "q".into(),
            question: "Deploy <now>?".into(),
            header: None,
            detail: None,
            options: options
                .iter()
                .map(|l| QuestionOption {
                    images: Vec::new(),
                    label: (*l).into(),
                    description: None,
                })
                .collect(),
            multi_select: false,
            intent: None,
        }
    }

    #[test]
    fn title_names_the_agent() {
        let labelled = AgentInfo {
            id: "a1".into(),
            label: Some("claude-code".into()),
            meta: None,
        };
        assert_eq!(
            spec_for(&request(Some(labelled), vec![question(&[])]), None).title,
            "claude-code asks"
        );
        let bare = AgentInfo {
            id: "a1".into(),
            label: None,
            meta: None,
        };
        assert_eq!(
            spec_for(&request(Some(bare), vec![question(&[])]), None).title,
            "a1 asks"
        );
        assert_eq!(
            spec_for(&request(None, vec![question(&[])]), None).title,
            "a script asks"
        );
    }

    #[test]
    fn simple_single_select_questions_get_buttons() {
        assert_eq!(
            spec_for(&request(None, vec![question(&["Yes", "No"])]), None).choices,
            vec!["Yes", "No"]
        );
        assert!(
            spec_for(&request(None, vec![question(&["a", "b", "c", "d"])]), None)
                .choices
                .is_empty()
        );
        assert!(spec_for(&request(None, vec![question(&[])]), None)
            .choices
            .is_empty());
        let mut multi = question(&["a", "b"]);
        multi.multi_select = true;
        assert!(spec_for(&request(None, vec![multi]), None)
            .choices
            .is_empty());
        let mut plan = question(&["Approve", "Revise"]);
        plan.intent = Some(Intent {
            kind: "plan-review".into(),
            approve: "Approve".into(),
        });
        assert!(spec_for(&request(None, vec![plan]), None)
            .choices
            .is_empty());
        // A hook's tool prompt: the command is only in the detail, so no in-place answer.
        let mut detailed = question(&["Allow once", "Deny"]);
        detailed.detail = Some("```sh\nrm -rf ~/shop/.git\n```".into());
        assert!(spec_for(&request(None, vec![detailed.clone()]), None)
            .choices
            .is_empty());
        detailed.detail = Some("  \n".into());
        assert_eq!(
            spec_for(&request(None, vec![detailed]), None).choices,
            vec!["Allow once", "Deny"]
        );
        let mut second = question(&["Yes"]);
        second.id = "r".into();
        let batch = spec_for(&request(None, vec![question(&["Yes"]), second]), None);
        assert!(batch.choices.is_empty());
        assert_eq!(batch.body, "Deploy <now>?\n(+1 more question)");
    }

    /// The bidi state after each char of `text`: the open embeddings, overrides and isolates
    /// (as the Unicode bidi algorithm counts them, rules X1-X8; a paragraph separator closes all).
    fn depths(text: &str) -> Vec<usize> {
        let mut open: Vec<bool> = Vec::new();
        text.chars()
            .map(|c| {
                match c {
                    '\u{202A}'..='\u{202E}' if c != PDF => open.push(false),
                    '\u{2066}'..='\u{2068}' => open.push(true),
                    PDF if open.last() == Some(&false) => {
                        open.pop();
                    }
                    PDI => {
                        if let Some(at) = open.iter().rposition(|&isolate| isolate) {
                            open.truncate(at);
                        }
                    }
                    c if PARAGRAPH_SEPARATORS.contains(&c) => open.clear(),
                    _ => {}
                }
                open.len()
            })
            .collect()
    }

    /// Checks that `shown` holds `agent` text closed in its own isolates: every line of it opens
    /// one, nothing in it closes that early, and the state after it is the state before it.
    fn check_isolated(shown: &str, agent: &str, after: &str) {
        let d = depths(shown);
        let chars: Vec<char> = shown.chars().collect();
        let end = chars.len() - after.chars().count();
        assert!(shown.ends_with(after), "{shown:?}");
        assert_eq!(
            d.get(end.wrapping_sub(1)).copied().unwrap_or(0),
            0,
            "{shown:?}"
        );
        assert!(d[end..].iter().all(|&n| n == 0), "{shown:?}");
        for (i, c) in chars[..end].iter().enumerate() {
            let line_end = i + 1 == end || PARAGRAPH_SEPARATORS.contains(&chars[i + 1]);
            if !PARAGRAPH_SEPARATORS.contains(c) && !line_end {
                assert!(d[i] > 0, "the isolate closed early at {i} in {shown:?}");
            }
        }
        let visible =
            |text: &str| -> String { text.chars().filter(|&c| !is_bidi_control(c)).collect() };
        assert_eq!(visible(shown), format!("{}{after}", visible(agent)));
    }

    #[test]
    fn bidi_controls_in_agent_text_cannot_reorder_the_notification() {
        let labelled = |label: &str| AgentInfo {
            id: "a1".into(),
            label: Some(label.into()),
            meta: None,
        };
        for label in [
            "evil\u{202E}exe.txt",
            "\u{2067}closed early\u{2069}\u{2069}\u{202E} tail",
            "\u{202B}\u{202B}deep\u{202C}",
        ] {
            let spec = spec_for(&request(Some(labelled(label)), vec![question(&[])]), None);
            check_isolated(&spec.title, label, " asks");
        }
        let mut q = question(&["\u{202E}seY", "No"]);
        q.question = "Delete \u{202E}gpj.exe?\nsecond \u{2066}line".into();
        let mut second = question(&["x"]);
        second.id = "r".into();
        let spec = spec_for(&request(None, vec![q.clone()]), None);
        check_isolated(&spec.body, &q.question, "");
        check_isolated(&spec.choices[0], "\u{202E}seY", "");
        assert_eq!(spec.choices[1], "No");
        let batch = spec_for(&request(None, vec![q.clone(), second]), None);
        check_isolated(&batch.body, &q.question, "\n(+1 more question)");
        // A body cut at its length limit still closes what it opened.
        q.question = format!("\u{202E}{}", "y".repeat(400));
        let long = spec_for(&request(None, vec![q]), None).body;
        assert!(long.ends_with('\u{2069}'), "{long:?}");
        assert_eq!(*depths(&long).last().unwrap(), 0);
        // Text without bidi controls is left as it is.
        assert_eq!(
            spec_for(
                &request(Some(labelled("claude-code")), vec![question(&[])]),
                None
            )
            .title,
            "claude-code asks"
        );
    }

    #[test]
    fn a_rule_deadline_is_said_and_can_be_held() {
        let deadline = Deadline {
            rule: "auto no".into(),
            at: SystemTime::now() + Duration::from_secs(600),
            action: "answer \"No\"".into(),
            held: None,
            answer: None,
        };
        let spec = spec_for(
            &request(None, vec![question(&["Yes", "No"])]),
            Some(&deadline),
        );
        assert_eq!(
            spec.body,
            "Deploy <now>?\nRule “auto no” will answer \"No\" in 10 min unless you answer."
        );
        assert!(spec.hold);
        let keys: Vec<String> = build(&spec).actions.iter().step_by(2).cloned().collect();
        assert_eq!(keys, ["default", "choose-0", "choose-1", "hold"]);
        assert!(!spec_for(&request(None, vec![question(&["Yes"])]), None).hold);
        assert_eq!(
            parse_key("hold", RequestId(4)),
            Some(Action::Hold(RequestId(4)))
        );
    }

    #[test]
    fn a_time_left_is_said_in_seconds_minutes_or_hours() {
        assert_eq!(in_words(Duration::from_secs(45)), "45 s");
        assert_eq!(in_words(Duration::from_millis(599_400)), "10 min");
        assert_eq!(in_words(Duration::from_secs(3600)), "1 h");
        assert_eq!(in_words(Duration::from_secs(7500)), "2 h 5 min");
    }

    #[test]
    fn a_button_shows_its_option_without_the_recommended_mark() {
        let spec = spec_for(
            &request(None, vec![question(&["Delete them (Recommended)", "Keep"])]),
            None,
        );
        assert_eq!(spec.choices, ["Delete them", "Keep"]);
        // The button names its option by place: the answer carries the label unchanged.
        assert_eq!(
            parse_key(&choice_key(0), RequestId(3)),
            Some(Action::Choose {
                request: RequestId(3),
                option: 0
            })
        );
    }

    #[test]
    fn body_markup_is_escaped() {
        assert_eq!(escape_markup("a <b>&</b>"), "a &lt;b&gt;&amp;&lt;/b&gt;");
    }

    #[test]
    fn action_keys_round_trip() {
        assert_eq!(
            parse_key(&choice_key(2), RequestId(9)),
            Some(Action::Choose {
                request: RequestId(9),
                option: 2
            })
        );
        assert_eq!(parse_key("default", RequestId(9)), None);
        assert_eq!(parse_key("choose-x", RequestId(9)), None);
    }
}
