//! Desktop notifications for waiting requests, over the freedesktop D-Bus interface (notify-rust).
//!
//! The waiting requests have one notification between them (`waiting` decides what it shows):
//! a single request's own, with its options as buttons when it is simple, or "N questions
//! waiting" when several wait, updated in place (`Notify` with the same id) as requests come and
//! go, and withdrawn while the window has the keyboard focus. Its action keys name their request
//! (`choose-<request>-<option>`, `hold-<request>`), so a late click on what the notification showed
//! before acts on that request or, when it is gone, on nothing.
//!
//! Every D-Bus call happens on threads of this module, never on the async runtime: one worker
//! thread shows notifications in order, and each shown notification gets a small thread that
//! waits for its actions, or for the worker to withdraw it, and then closes it
//! (`CloseNotification`). When no notification server answers, the app keeps working without
//! notifications and says so once in the log.
//!
//! Notes of what a rule did ([`note_spec`]) are shown the same way and stay until the person
//! closes them (the note of a late click, [`gone_note_spec`], expires); quitting closes every notification still shown ([`Notifier::close_all`]), waiting
//! for each thread to close its own.
//!
//! notify-rust subscribes to `ActionInvoked`/`NotificationClosed` by interface and member, not by
//! sender: a peer on the session bus could forge one. Such a peer runs as the same user, who can
//! answer over the socket anyway; the buttons are offered only for a question whose whole meaning
//! is in the notification, so that a human pressing one has seen what they answer.

mod waiting;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use std::time::{Duration, SystemTime};

use askdesk_core::meta::display_name;
use askdesk_core::{Request, RequestId};
use askdesk_i18n::t;
use askdesk_rules::Deadline;
use futures_lite::future;
use notify_rust::{Notification, NotificationResponse, Timeout};
use tokio::sync::oneshot;

use self::waiting::{Change, Shown, Waiting};
use crate::activation::{self, Token};

/// What the human did with a notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Activated the notification itself: open the window, on the request it showed alone.
    Open(Option<RequestId>),
    /// Chose option `option` of the request's only question.
    Choose { request: RequestId, option: usize },
    /// Held the deadline of the rule that would answer the request: its clock stops.
    Hold(RequestId),
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
    /// The first question's first image (else its first option's), a PNG the broker made safe,
    /// sent as the `image-data` hint: servers that show images show it (scaled to
    /// `IMAGE_SIDE`), the others ignore it.
    pub image: Option<askdesk_core::Image>,
}

/// The longest side of a notification's image, in pixels.
const IMAGE_SIDE: u32 = 256;

/// How many waiting requests "N questions waiting" names in its body.
const MAX_LISTED: usize = 4;

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
    let image = first
        .images
        .first()
        .or_else(|| first.options.iter().find_map(|o| o.images.first()))
        .cloned();
    Spec {
        request: request.id,
        title: t!("notify-asks", agent = isolate(who)),
        body,
        choices,
        hold: deadline.is_some(),
        image,
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
    /// A request waits, with a rule's deadline on it.
    Waiting(Arc<Request>, Option<Deadline>),
    /// A request no longer waits.
    Settled(RequestId),
    /// The window came on screen (it has the keyboard focus) or left it.
    OnScreen(bool),
    /// A note of what a rule did ([`note_spec`]), or of a click that came too late.
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
            .spawn(move || Worker::new(on_action).run(receiver))?;
        Ok(Notifier { commands })
    }

    /// A request waits: the waiting set's notification says so (asynchronously).
    pub fn waiting(&self, request: Arc<Request>, deadline: Option<Deadline>) {
        self.send(Command::Waiting(request, deadline));
    }

    /// A request no longer waits: the notification leaves it out.
    pub fn settled(&self, request: RequestId) {
        self.send(Command::Settled(request));
    }

    /// The window came on screen or left it: the waiting set's notification is withdrawn, or
    /// raised again.
    pub fn on_screen(&self, on_screen: bool) {
        self.send(Command::OnScreen(on_screen));
    }

    /// Shows a note (asynchronously); it stays until the person closes it, it expires (a
    /// passing one) or the app quits.
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

type OnAction = Arc<dyn Fn(Action, Option<Token>) + Send + Sync>;

/// The waiting set's notification as the server shows it.
struct Current {
    id: u32,
    shown: Shown,
    /// The request the default action opens: the one shown alone, none for several.
    default: Arc<Mutex<Option<RequestId>>>,
    /// Set by the notification's thread when the server closed it (the person dismissed it).
    gone: Arc<AtomicBool>,
    /// Tells the notification's thread to close it.
    withdraw: oneshot::Sender<()>,
}

struct Worker {
    on_action: OnAction,
    waiting: Waiting,
    /// What the notification is built from, for each waiting request.
    requests: HashMap<RequestId, (Arc<Request>, Option<Deadline>)>,
    current: Option<Current>,
    /// Every notification's thread, and the notes' "close now": quitting closes them all.
    watching: Vec<std::thread::JoinHandle<()>>,
    notes: Vec<oneshot::Sender<()>>,
    warned: bool,
    /// Whether the server shows actions (buttons), asked at the first notification: a Hold it
    /// would not show is not offered (the body still says the deadline; the window holds it).
    actions: Option<bool>,
}

impl Worker {
    fn new(on_action: OnAction) -> Worker {
        Worker {
            on_action,
            waiting: Waiting::default(),
            requests: HashMap::new(),
            current: None,
            watching: Vec::new(),
            notes: Vec::new(),
            warned: false,
            actions: None,
        }
    }

    fn run(mut self, commands: Receiver<Command>) {
        for command in commands {
            match command {
                Command::Waiting(request, deadline) => {
                    self.waiting.add(request.id);
                    self.requests.insert(request.id, (request, deadline));
                    self.update();
                }
                Command::Settled(request) => {
                    self.waiting.remove(request);
                    self.requests.remove(&request);
                    self.update();
                }
                Command::OnScreen(on_screen) => {
                    self.waiting.set_on_screen(on_screen);
                    self.update();
                }
                Command::ShowNote(spec) => {
                    if let Some((close, thread)) = show_note(&spec, &self.on_action) {
                        self.notes.push(close);
                        self.watching.push(thread);
                    }
                }
                Command::CloseAll(done) => {
                    let current = self.current.take().map(|current| current.withdraw);
                    for close in current.into_iter().chain(self.notes.drain(..)) {
                        let _ = close.send(());
                    }
                    // Each thread closes its notification before it ends.
                    for thread in self.watching.drain(..) {
                        let _ = thread.join();
                    }
                    let _ = done.send(());
                }
            }
            self.watching.retain(|thread| !thread.is_finished());
            self.notes.retain(|close| !close.is_closed());
        }
    }

    /// Brings the notification in line with the waiting set and the window.
    fn update(&mut self) {
        // One the person dismissed is shown anew at the next change.
        if self
            .current
            .as_ref()
            .is_some_and(|current| current.gone.load(Ordering::SeqCst))
        {
            self.current = None;
        }
        match self.waiting.change(self.current.as_ref().map(|c| &c.shown)) {
            Change::Keep => {}
            Change::Withdraw => {
                if let Some(current) = self.current.take() {
                    let _ = current.withdraw.send(());
                }
            }
            Change::Show(shown) => self.show(shown),
        }
    }

    fn show(&mut self, shown: Shown) {
        let (mut notification, default) = match &shown {
            Shown::One(request) => {
                let Some((request, deadline)) = self.requests.get(request) else {
                    return;
                };
                let mut spec = spec_for(request, deadline.as_ref());
                spec.hold &= *self.actions.get_or_insert_with(server_shows_actions);
                (build(&spec), Some(request.id))
            }
            Shown::Several(requests) => {
                let requests: Vec<&Request> = requests
                    .iter()
                    .filter_map(|id| self.requests.get(id).map(|(r, _)| r.as_ref()))
                    .collect();
                (build_several(&requests), None)
            }
        };
        if let Some(current) = &self.current {
            notification.id(current.id);
        }
        let handle = match notification.show() {
            Ok(handle) => handle,
            Err(error) if !self.warned => {
                self.warned = true;
                tracing::warn!(%error, "no desktop notification server answered; askdesk works without notifications");
                return;
            }
            Err(error) => {
                tracing::debug!(%error, "notification not shown");
                return;
            }
        };
        tracing::debug!(id = handle.id(), ?shown, "notification shown");
        // Replaced in place: its thread goes on listening, now for what it shows.
        if let Some(current) = self
            .current
            .as_mut()
            .filter(|current| current.id == handle.id() && !current.gone.load(Ordering::SeqCst))
        {
            *lock(&current.default) = default;
            current.shown = shown;
            return;
        }
        if let Some(old) = self.current.take() {
            let _ = old.withdraw.send(());
        }
        let (withdraw, withdrawn) = oneshot::channel();
        let default = Arc::new(Mutex::new(default));
        let gone = Arc::new(AtomicBool::new(false));
        let id = handle.id();
        let watcher = Watcher {
            default: default.clone(),
            gone: gone.clone(),
            on_action: self.on_action.clone(),
        };
        match std::thread::Builder::new()
            .name(format!("askdesk-notify-{id}"))
            .spawn(move || watcher.watch(handle, withdrawn))
        {
            Ok(thread) => self.watching.push(thread),
            Err(error) => tracing::warn!(%error, "cannot watch a notification"),
        }
        self.current = Some(Current {
            id,
            shown,
            default,
            gone,
            withdraw,
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a note of a rule's action shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSpec {
    pub title: String,
    pub body: String,
    /// Whether it stays until closed (what a rule did), or expires as the server chooses.
    pub lasting: bool,
}

/// The notification of what a rule did, in the note's words (`Rule “prune” answered: Delete
/// them`, then who asked what).
pub fn note_spec(note: &askdesk_view::page::RuleNote) -> NoteSpec {
    NoteSpec {
        title: isolate(&note.headline()),
        body: isolate(&note.about()),
        lasting: true,
    }
}

/// The note for a click on a notification's button whose request no longer waits (answered,
/// withdrawn, or decided by a rule in the meantime): nothing was done.
pub fn gone_note_spec() -> NoteSpec {
    NoteSpec {
        title: t!("notify-gone-title"),
        body: t!("notify-gone-body"),
        lasting: false,
    }
}

/// Shows a note and starts its thread, which waits for the person to activate it (the window
/// opens) or for the app to close it. `None` when it could not be shown.
fn show_note(
    spec: &NoteSpec,
    on_action: &OnAction,
) -> Option<(oneshot::Sender<()>, std::thread::JoinHandle<()>)> {
    let mut notification = Notification::new();
    notification
        .appname("askdesk")
        .summary(&spec.title)
        .body(&escape_markup(&spec.body))
        .icon("dialog-information")
        .timeout(if spec.lasting {
            Timeout::Never
        } else {
            Timeout::Default
        })
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
                    Action::Open(None),
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

/// What the thread of the waiting set's notification needs to act on its clicks.
struct Watcher {
    default: Arc<Mutex<Option<RequestId>>>,
    gone: Arc<AtomicBool>,
    on_action: OnAction,
}

impl Watcher {
    /// Waits for the human's actions on the notification (each key names its request, whatever
    /// the notification shows now) until the server closes it or the worker withdraws it (then
    /// closes it).
    fn watch(self, handle: notify_rust::NotificationHandle, mut withdrawn: oneshot::Receiver<()>) {
        loop {
            let mut response: Option<NotificationResponse> = None;
            let withdraw = future::block_on(future::or(
                async {
                    handle
                        .wait_for_action_async(|r| response = Some(r.clone()))
                        .await;
                    false
                },
                async {
                    // A dropped sender (the worker stopped) also means the notification should go.
                    let _ = (&mut withdrawn).await;
                    true
                },
            ));
            if withdraw {
                future::block_on(handle.close_async());
                tracing::debug!(id = handle.id(), "notification closed");
                return;
            }
            let action = match response {
                Some(NotificationResponse::Default) => Action::Open(*lock(&self.default)),
                Some(NotificationResponse::Action(key)) => match parse_key(&key) {
                    Some(action) => action,
                    None => {
                        tracing::debug!(key, "an action key that names nothing");
                        continue;
                    }
                },
                _ => {
                    self.gone.store(true, Ordering::SeqCst);
                    tracing::debug!(id = handle.id(), "notification closed by the server");
                    return;
                }
            };
            (self.on_action)(action, activation::notification_token(handle.id()));
        }
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
        notification.action(&choice_key(spec.request, index), label);
    }
    if spec.hold {
        notification.action(&hold_key(spec.request), &t!("notify-hold"));
    }
    let pixels = spec
        .image
        .as_ref()
        .and_then(|image| askdesk_image::thumbnail_rgba(image, IMAGE_SIDE));
    if let Some((width, height, rgba)) = pixels {
        // The image hint's name depends on the server's spec version, which notify-rust asks for
        // lazily, on first use, with a blocking D-Bus call: asked there, inside `show`'s own
        // blocking call, it panics. Asked here first, once, it is known by then.
        let _spec = &*notify_rust::SPEC_VERSION;
        match notify_rust::Image::from_rgba(width as i32, height as i32, rgba) {
            Ok(image) => {
                notification.image_data(image);
            }
            Err(error) => tracing::debug!(%error, "the notification's image was left out"),
        }
    }
    notification
}

/// "N questions waiting": who asks what, oldest first; its only action opens the window.
fn build_several(requests: &[&Request]) -> Notification {
    let mut lines: Vec<String> = requests
        .iter()
        .take(MAX_LISTED)
        .map(|request| {
            let who = display_name(request.agent.as_ref());
            let first = &request.questions[0];
            let what = first.question.lines().next().unwrap_or("").trim();
            let what = if what.chars().count() > 80 {
                what.chars().take(79).collect::<String>() + "…"
            } else {
                what.to_owned()
            };
            format!("{}: {}", isolate(who), isolate(&what))
        })
        .collect();
    if requests.len() > MAX_LISTED {
        lines.push(t!("notify-and-more", more = requests.len() - MAX_LISTED));
    }
    let mut notification = Notification::new();
    notification
        .appname("askdesk")
        .summary(&several_title(requests.len()))
        .body(&escape_markup(&lines.join("\n")))
        .icon("dialog-question")
        .timeout(Timeout::Never)
        .action("default", &t!("notify-open"));
    notification
}

fn several_title(count: usize) -> String {
    t!("notify-waiting", count = count)
}

/// The key of option `index`'s button: it names the request, so a late click answers that
/// request or nothing.
fn choice_key(request: RequestId, index: usize) -> String {
    format!("choose-{}-{index}", request.0)
}

fn hold_key(request: RequestId) -> String {
    format!("hold-{}", request.0)
}

/// The action a button's key names; `None` for a key of no button of this app's.
fn parse_key(key: &str) -> Option<Action> {
    if let Some(request) = key.strip_prefix("hold-") {
        return Some(Action::Hold(RequestId(request.parse().ok()?)));
    }
    let (request, option) = key.strip_prefix("choose-")?.split_once('-')?;
    Some(Action::Choose {
        request: RequestId(request.parse().ok()?),
        option: option.parse().ok()?,
    })
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
            id: "q".into(),
            question: "Deploy <now>?".into(),
            options: options
                .iter()
                .map(|l| QuestionOption {
                    label: (*l).into(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
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
        assert_eq!(keys, ["default", "choose-3-0", "choose-3-1", "hold-3"]);
        assert!(!spec_for(&request(None, vec![question(&["Yes"])]), None).hold);
        assert_eq!(parse_key("hold-4"), Some(Action::Hold(RequestId(4))));
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
            parse_key(&choice_key(RequestId(3), 0)),
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
    fn action_keys_name_their_request() {
        assert_eq!(
            parse_key(&choice_key(RequestId(9), 2)),
            Some(Action::Choose {
                request: RequestId(9),
                option: 2
            })
        );
        assert_eq!(
            parse_key(&hold_key(RequestId(12))),
            Some(Action::Hold(RequestId(12)))
        );
        // Keys that name no request act on nothing: the old unnamed ones among them.
        for key in [
            "default",
            "choose-2",
            "choose-x-1",
            "choose-9-",
            "choose--1",
            "choose-9-1-2",
            "choose-9--1",
            "hold",
            "hold-",
            "hold-x",
            "hold--3",
        ] {
            assert_eq!(parse_key(key), None, "{key}");
        }
    }

    #[test]
    fn several_waiting_are_one_notification_that_opens_the_window() {
        let named = |label: &str| AgentInfo {
            id: "a1".into(),
            label: Some(label.into()),
            meta: None,
        };
        let mut asks: Vec<Request> = (0..6)
            .map(|n| {
                let mut r = request(Some(named(&format!("agent-{n}"))), vec![question(&["Yes"])]);
                r.id = RequestId(n);
                r
            })
            .collect();
        asks[0].questions[0].question = "Deploy <now>?\nsecond line".into();
        let refs: Vec<&Request> = asks.iter().take(2).collect();
        let two = build_several(&refs);
        assert_eq!(two.summary, "2 questions waiting");
        assert_eq!(
            two.body,
            "agent-0: Deploy &lt;now&gt;?\nagent-1: Deploy &lt;now&gt;?"
        );
        // No answer from here: its only action opens the window.
        assert_eq!(two.actions, ["default", "Open"]);
        let refs: Vec<&Request> = asks.iter().collect();
        let six = build_several(&refs);
        assert_eq!(six.summary, "6 questions waiting");
        assert!(
            six.body
                .ends_with("agent-3: Deploy &lt;now&gt;?\nand 2 more"),
            "{}",
            six.body
        );
    }
}
