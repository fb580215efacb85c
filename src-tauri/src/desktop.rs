//! What the GUI answerer's events do on the desktop: events to the page, the window, the tray
//! count, notifications, and late answers into the journal; what rules did, said in a note and a
//! notification; the window's focus, which withdraws the waiting set's notification; every
//! notification closed when the app quits.
//!
//! The answerer calls [`DesktopPresenter`] from the broker's tasks; it only puts an event on a
//! bounded channel. One thread ("askdesk-desktop") takes the events in order and does the work,
//! which may block (tray calls wait for the main thread): the broker never waits on the UI. A late
//! answer is the exception: it comes from the human's side, not the broker's, and is in the
//! journal before the human is told it came late, so quitting right after cannot lose it.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use askdesk_core::meta::{self, display_name};
use askdesk_core::{Answer, AnswerItem, Request, RequestId};
use askdesk_i18n::t;
use askdesk_journal::{Journal, Record};
use askdesk_rules::Acted;
use askdesk_view::answerer::{GuiAnswerer, Presenter, Removal};
use askdesk_view::memory::Memory;
use askdesk_view::page::{
    Notes, QueueChanged, RuleNote, Withdrawn, EVENT_DND, EVENT_HISTORY, EVENT_NOTES, EVENT_QUEUE,
    EVENT_WITHDRAWN,
};
use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager};

use crate::activation::{self, Token};
use crate::notify::{self, Action, Notifier};
use crate::settings::Preferences;
use crate::state::{History, Rules};
use crate::{tray, window};

/// Events waiting for the desktop thread. Requests are bounded by the broker's limits, so a full
/// channel means the thread is stuck; the page still refreshes from `get_queue`.
const QUEUE: usize = 1024;

/// The desktop side of the app, kept in Tauri's state.
pub struct Desktop {
    events: SyncSender<Event>,
    journal: Option<Journal>,
    /// For quitting: the desktop thread may be waiting for the main thread (the tray), which
    /// quits, so the notifications are closed from here, not through that thread.
    notifier: Notifier,
}

/// The [`Presenter`] the GUI answerer talks to.
#[derive(Clone)]
pub struct DesktopPresenter {
    events: SyncSender<Event>,
    /// Where late answers are recorded (`None` with history off).
    journal: Option<Journal>,
}

enum Event {
    Added(Arc<Request>, usize),
    Removed(RequestId, Removal, usize),
    /// A late answer was recorded: History changed.
    Recorded,
    Dnd(bool),
    /// A rule decided a request at once, as it was asked.
    RuleActed(Acted),
}

/// What the desktop thread remembers of a waiting request, to tell the page how it left.
struct Known {
    request: Arc<Request>,
    /// A rule's `after` deadline on it, read when it arrived.
    deadline: Option<askdesk_rules::Deadline>,
}

impl Desktop {
    /// Starts the notification worker and the desktop thread.
    pub fn start(app: AppHandle, journal: Option<Journal>) -> std::io::Result<Desktop> {
        let notifier = {
            let app = app.clone();
            Notifier::spawn(move |action, token| on_notification_action(&app, action, token))?
        };
        activation::listen_to_notifications()?;
        let (events, receiver) = sync_channel(QUEUE);
        let worker = Worker {
            app,
            notifier: notifier.clone(),
        };
        std::thread::Builder::new()
            .name("askdesk-desktop".into())
            .spawn(move || worker.run(receiver))?;
        Ok(Desktop {
            events,
            journal,
            notifier,
        })
    }

    pub fn presenter(&self) -> DesktopPresenter {
        DesktopPresenter {
            events: self.events.clone(),
            journal: self.journal.clone(),
        }
    }

    /// Closes every notification the app shows, waiting at most `within` (the app quits).
    pub fn close_notifications(&self, within: Duration) {
        self.notifier.close_all(within);
    }
}

/// Says what each rule that decides a request at once did, for as long as the rules engine lives:
/// a permission prompt answered by a rule gets a note and a notification, though nobody saw it.
pub async fn follow_acted(app: AppHandle, mut acted: tokio::sync::broadcast::Receiver<Acted>) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match acted.recv().await {
            Ok(acted) => {
                if let Some(desktop) = app.try_state::<Desktop>() {
                    if desktop.events.try_send(Event::RuleActed(acted)).is_err() {
                        tracing::warn!("the desktop thread is behind; a rule's note was dropped");
                    }
                }
            }
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "rules acted faster than the desktop could say so")
            }
            Err(RecvError::Closed) => return,
        }
    }
}

impl DesktopPresenter {
    fn send(&self, event: Event) {
        match self.events.try_send(event) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!("the desktop thread is behind; an update was dropped")
            }
            Err(TrySendError::Disconnected(_)) => tracing::debug!("the desktop thread has stopped"),
        }
    }
}

impl Presenter for DesktopPresenter {
    fn added(&self, request: &Arc<Request>, waiting: usize) {
        self.send(Event::Added(request.clone(), waiting));
    }

    fn removed(&self, request: RequestId, why: Removal, waiting: usize) {
        self.send(Event::Removed(request, why, waiting));
    }

    /// Records the discarded answer (protocol 2: a late answer is recorded in history as such), on
    /// disk before this returns.
    fn late_answer(&self, request: &Arc<Request>, answer: &Answer) {
        let Some(journal) = &self.journal else { return };
        let record = Record::late_answer(
            request,
            answer.clone(),
            Some(askdesk_view::answerer::DESKTOP_ANSWERER.into()),
        );
        match journal.append(&record) {
            Ok(()) => self.send(Event::Recorded),
            Err(error) => tracing::warn!(%error, "the late answer could not be recorded"),
        }
    }

    fn dnd_changed(&self, on: bool) {
        self.send(Event::Dnd(on));
    }
}

struct Worker {
    app: AppHandle,
    notifier: Notifier,
}

impl Worker {
    fn run(self, events: Receiver<Event>) {
        // Waiting requests are remembered by id only long enough to say how they left.
        let mut known: std::collections::HashMap<RequestId, Known> =
            std::collections::HashMap::new();
        for event in events {
            match event {
                Event::Added(request, waiting) => {
                    tracing::debug!(request = %request.id, "request added");
                    // Render the page's view here, off the broker's runtime, before the page asks.
                    if let Some(gui) = self.app.try_state::<GuiAnswerer>() {
                        gui.prepare(request.id);
                    }
                    self.recall(&request);
                    // A rule with `after` set its deadline as it was offered the request, first.
                    let deadline = self
                        .app
                        .try_state::<Rules>()
                        .and_then(|rules| rules.0.get().and_then(|e| e.deadline(request.id)));
                    self.notifier.waiting(request.clone(), deadline.clone());
                    known.insert(
                        request.id,
                        Known {
                            request: request.clone(),
                            deadline,
                        },
                    );
                    self.emit(EVENT_QUEUE, QueueChanged { waiting });
                    // "Notify only", as the person chose it now: the window waits for them.
                    let notify_only = self
                        .app
                        .try_state::<Preferences>()
                        .is_some_and(|p| p.get().notify_only);
                    if !notify_only {
                        window::open_for_new(&self.app, request.id);
                    }
                    tray::set_waiting(&self.app, waiting);
                }
                Event::Removed(request, why, waiting) => {
                    let answered_last = why == Removal::Answered && waiting == 0;
                    self.notifier.settled(request);
                    let known = known.remove(&request);
                    self.emit(EVENT_QUEUE, QueueChanged { waiting });
                    if let Removal::AnsweredElsewhere { by } = why {
                        let who = known.as_ref().map_or_else(
                            || t!("desktop-the-agent"),
                            |k| display_name(k.request.agent.as_ref()).to_owned(),
                        );
                        let withdrawn = Withdrawn {
                            request,
                            rule: None,
                            action: None,
                            who,
                            // A phone's signature names the device that answered.
                            answered_on: Some(
                                askdesk_remote::answerer::device_of(&by)
                                    .map_or(by.clone(), str::to_owned),
                            ),
                            message: None,
                            kept: false,
                        };
                        self.emit(EVENT_WITHDRAWN, withdrawn);
                    } else if matches!(
                        why,
                        Removal::Withdrawn | Removal::Disconnected | Removal::Overruled
                    ) {
                        // Only a rule's deadline overrules a waiting request.
                        let rule = known
                            .as_ref()
                            .and_then(|k| k.deadline.as_ref())
                            .filter(|_| why == Removal::Overruled);
                        // What a rule did stays in the window until the person closes it, and is
                        // said at once in a notification: they may be away.
                        if let (Some(deadline), Some(known)) = (rule, &known) {
                            self.rule_note(RuleNote::new(
                                &known.request,
                                &deadline.rule,
                                &deadline.action,
                                deadline.answer.as_ref(),
                            ));
                        }
                        let who = known.as_ref().map_or_else(
                            || t!("desktop-the-agent"),
                            |k| display_name(k.request.agent.as_ref()).to_owned(),
                        );
                        let kept = self
                            .app
                            .try_state::<GuiAnswerer>()
                            .is_some_and(|gui| gui.is_ended(request));
                        let withdrawn = Withdrawn {
                            request,
                            rule: rule.map(|d| d.rule.clone()),
                            action: rule.map(|d| d.action.clone()),
                            message: why.said_of(&who),
                            who,
                            answered_on: None,
                            kept,
                        };
                        self.emit(EVENT_WITHDRAWN, withdrawn);
                    }
                    tray::set_waiting(&self.app, waiting);
                    if answered_last {
                        window::answered_last(&self.app);
                    }
                }
                Event::Recorded => self.emit(EVENT_HISTORY, ()),
                // Nobody saw a request a rule answers at once; a permission prompt is said all
                // the same (what runs on the person's machine is never decided unseen).
                Event::RuleActed(acted) => {
                    if acted
                        .request
                        .agent
                        .as_ref()
                        .and_then(|a| a.meta_str(meta::TOOL))
                        .is_some()
                    {
                        self.rule_note(RuleNote::new(
                            &acted.request,
                            &acted.rule,
                            &acted.action,
                            acted.answer.as_ref(),
                        ));
                    }
                }

                Event::Dnd(on) => {
                    tray::set_dnd(&self.app, on);
                    self.emit(EVENT_DND, on);
                }
            }
        }
    }

    /// Keeps a note of what a rule did in the window, and raises its notification.
    fn rule_note(&self, note: RuleNote) {
        self.notifier.show_note(notify::note_spec(&note));
        if let Some(notes) = self.app.try_state::<Notes>() {
            notes.add(note);
            self.emit(EVENT_NOTES, ());
        }
    }

    /// Reads the past answers the page draws with `request` ("You answered … today") from the
    /// journal now, on a blocking thread, so the page's first `get_queue` finds them kept: a
    /// window built for the request does not wait for the journal before its first draw.
    fn recall(&self, request: &Arc<Request>) {
        let (Some(history), Some(memory)) = (
            self.app.try_state::<History>(),
            self.app.try_state::<Memory>(),
        ) else {
            return;
        };
        let Some(journal) = history.0.clone() else {
            return;
        };
        let memory = memory.inner().clone();
        let request = request.clone();
        tauri::async_runtime::spawn_blocking(move || {
            memory.lookup(&journal, &request);
        });
    }

    fn emit<S: Serialize + Clone>(&self, event: &str, payload: S) {
        if let Err(error) = self.app.emit(event, payload) {
            tracing::debug!(%error, event, "event not delivered");
        }
    }
}

/// The window's focus, as the waiting set's notification follows it: withdrawn while the window
/// has the keyboard focus (the person sees the queue), raised again when it loses it (hidden,
/// minimized, or another program in front).
pub fn on_window_event(window: &tauri::Window, event: &tauri::WindowEvent) {
    let on_screen = match event {
        tauri::WindowEvent::Focused(focused) => *focused,
        tauri::WindowEvent::Destroyed => false,
        _ => return,
    };
    if let Some(desktop) = window.app_handle().try_state::<Desktop>() {
        desktop.notifier.on_screen(on_screen);
    }
}

/// A notification action: answer in place, or open the request, brought forward with the action's
/// activation token. An answer or a hold given in place opens no window, and its token goes unused.
/// A button whose request no longer waits (its key names it) does nothing but say so.
fn on_notification_action(app: &AppHandle, action: Action, token: Option<Token>) {
    let gui = app.state::<GuiAnswerer>();
    match action {
        Action::Open(request) => window::open(app, request, token),
        Action::Hold(request) | Action::Choose { request, .. }
            if gui.request(request).is_none() =>
        {
            tracing::info!(%request, "a notification's button for a request that no longer waits");
            if let Some(desktop) = app.try_state::<Desktop>() {
                desktop.notifier.show_note(notify::gone_note_spec());
            }
        }
        Action::Hold(request) => {
            let held = app
                .try_state::<Rules>()
                .and_then(|rules| rules.0.get().map(|engine| engine.hold(request, true)));
            match held {
                Some(Ok(_)) => {
                    tracing::info!(%request, "deadline held from the notification");
                    // The page shows the deadline held (it reads the queue again).
                    let waiting = gui.waiting();
                    if let Err(error) = app.emit(EVENT_QUEUE, QueueChanged { waiting }) {
                        tracing::debug!(%error, "event not delivered");
                    }
                }
                Some(Err(error)) => tracing::info!(%request, %error, "nothing to hold"),
                None => tracing::info!(%request, "no rules engine: nothing to hold"),
            }
        }
        Action::Choose { request, option } => {
            let Some(waiting) = gui.request(request) else {
                return;
            };
            let question = &waiting.questions[0];
            let Some(choice) = question.options.get(option) else {
                return;
            };
            let answer = Answer {
                answers: vec![AnswerItem {
                    id: question.id.clone(),
                    selected: vec![choice.label.clone()],
                    ..Default::default()
                }],
            };
            match gui.submit(request, answer) {
                Ok(()) => tracing::info!(%request, "answered from the notification"),
                Err(error) => {
                    tracing::info!(%request, %error, "the notification's answer was not delivered")
                }
            }
        }
    }
}
