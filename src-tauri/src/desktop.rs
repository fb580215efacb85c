//! What the GUI answerer's events do on the desktop: events to the page, the window, the tray
//! count, notifications, and late answers into the journal.
//!
//! The answerer calls [`DesktopPresenter`] from the broker's tasks; it only puts an event on a
//! bounded channel. One thread ("askdesk-desktop") takes the events in order and does the work,
//! which may block (tray calls wait for the main thread, the journal fsyncs): the broker never
//! waits on the UI.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;

use askdesk_broker::journal::{Journal, Record};
use askdesk_core::{Answer, AnswerItem, Request, RequestId};
use serde::Serialize;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter, Manager, Wry};

use crate::answerer::{GuiAnswerer, Presenter, Removal};
use crate::notify::{self, Action, Notifier};
use crate::settings::Settings;
use crate::MAIN_WINDOW;

/// Page events.
pub const EVENT_QUEUE: &str = "queue-changed";
pub const EVENT_WITHDRAWN: &str = "request-withdrawn";
pub const EVENT_FOCUS: &str = "focus-request";
pub const EVENT_DND: &str = "dnd-changed";
pub const EVENT_HISTORY: &str = "history-changed";

const TRAY_ID: &str = "askdesk";
/// Events waiting for the desktop thread. Requests are bounded by the broker's limits, so a full
/// channel means the thread is stuck; the page still refreshes from `get_queue`.
const QUEUE: usize = 1024;

/// The desktop side of the app, kept in Tauri's state.
pub struct Desktop {
    events: SyncSender<Event>,
    pub settings: Settings,
}

/// The [`Presenter`] the GUI answerer talks to.
#[derive(Clone)]
pub struct DesktopPresenter {
    events: SyncSender<Event>,
}

enum Event {
    Added(Arc<Request>, usize),
    Removed(RequestId, Removal, usize),
    Late(Arc<Request>, Answer),
    Dnd(bool),
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct QueueChanged {
    waiting: usize,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Withdrawn {
    request: RequestId,
    who: String,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Focus {
    request: RequestId,
}

impl Desktop {
    /// Starts the notification worker and the desktop thread.
    pub fn start(
        app: AppHandle,
        settings: Settings,
        journal: Option<Journal>,
    ) -> std::io::Result<Desktop> {
        let notifier = {
            let app = app.clone();
            Notifier::spawn(move |action| on_notification_action(&app, action))?
        };
        let (events, receiver) = sync_channel(QUEUE);
        let worker = Worker {
            app,
            notifier,
            journal,
            notify_only: settings.notify_only,
        };
        std::thread::Builder::new()
            .name("askdesk-desktop".into())
            .spawn(move || worker.run(receiver))?;
        Ok(Desktop { events, settings })
    }

    pub fn presenter(&self) -> DesktopPresenter {
        DesktopPresenter {
            events: self.events.clone(),
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

    fn late_answer(&self, request: &Arc<Request>, answer: &Answer) {
        self.send(Event::Late(request.clone(), answer.clone()));
    }

    fn dnd_changed(&self, on: bool) {
        self.send(Event::Dnd(on));
    }
}

struct Worker {
    app: AppHandle,
    notifier: Notifier,
    journal: Option<Journal>,
    notify_only: bool,
}

impl Worker {
    fn run(self, events: Receiver<Event>) {
        // Withdrawn requests are remembered by id only long enough to name their agent.
        let mut who: std::collections::HashMap<RequestId, String> =
            std::collections::HashMap::new();
        for event in events {
            match event {
                Event::Added(request, waiting) => {
                    // Render the page's view here, off the broker's runtime, before the page asks.
                    if let Some(gui) = self.app.try_state::<GuiAnswerer>() {
                        gui.prepare(request.id);
                    }
                    let spec = notify::spec_for(&request);
                    who.insert(request.id, spec.title.trim_end_matches(" asks").to_owned());
                    self.notifier.show(spec);
                    self.emit(EVENT_QUEUE, QueueChanged { waiting });
                    if !self.notify_only {
                        show_main(&self.app);
                    }
                    update_tray(&self.app, waiting);
                }
                Event::Removed(request, why, waiting) => {
                    self.notifier.close(request);
                    let name = who
                        .remove(&request)
                        .unwrap_or_else(|| "the agent".to_owned());
                    self.emit(EVENT_QUEUE, QueueChanged { waiting });
                    if why == Removal::Withdrawn {
                        self.emit(EVENT_WITHDRAWN, Withdrawn { request, who: name });
                    }
                    update_tray(&self.app, waiting);
                }
                Event::Late(request, answer) => {
                    self.record_late(&request, answer);
                    self.emit(EVENT_HISTORY, ());
                }
                Event::Dnd(on) => {
                    if let Some(tray) = self.app.try_state::<TrayItems>() {
                        let _ = tray.dnd.set_checked(on);
                    }
                    self.emit(EVENT_DND, on);
                }
            }
        }
    }

    fn emit<S: Serialize + Clone>(&self, event: &str, payload: S) {
        if let Err(error) = self.app.emit(event, payload) {
            tracing::debug!(%error, event, "event not delivered");
        }
    }

    /// Records the discarded answer (SPEC 2: a late answer is recorded in history as such).
    fn record_late(&self, request: &Request, answer: Answer) {
        let Some(journal) = &self.journal else { return };
        let record = Record::late_answer(request, answer, Some("desktop".into()));
        if let Err(error) = journal.append(&record) {
            tracing::warn!(%error, "the late answer could not be recorded");
        }
    }
}

/// Shows, unminimizes and focuses the main window.
pub fn show_main(app: &AppHandle) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

/// A notification action: answer in place, or open the request.
fn on_notification_action(app: &AppHandle, action: Action) {
    let gui = app.state::<GuiAnswerer>();
    match action {
        Action::Open(request) => {
            show_main(app);
            let _ = app.emit(EVENT_FOCUS, Focus { request });
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
                    custom: None,
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

/// The tray's check item, kept so do-not-disturb changes from the page show in the menu.
struct TrayItems {
    dnd: CheckMenuItem<Wry>,
}

/// The tray icon: the waiting count in its tooltip and title, and a menu (Open, Do not disturb, Quit).
pub fn build_tray(app: &AppHandle) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, "open", "Open askdesk", true, None::<&str>)?;
    let dnd = CheckMenuItem::with_id(app, "dnd", "Do not disturb", true, false, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit askdesk", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &open,
            &PredefinedMenuItem::separator(app)?,
            &dnd,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .menu(&menu)
        .tooltip(tooltip(0))
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => show_main(app),
            "dnd" => {
                let on = app
                    .try_state::<TrayItems>()
                    .and_then(|t| t.dnd.is_checked().ok())
                    .unwrap_or(false);
                app.state::<GuiAnswerer>().set_dnd(on);
            }
            "quit" => app.exit(0),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    app.manage(TrayItems { dnd });
    Ok(())
}

fn tooltip(waiting: usize) -> String {
    match waiting {
        0 => "askdesk — no questions waiting".to_owned(),
        1 => "askdesk — 1 question waiting".to_owned(),
        n => format!("askdesk — {n} questions waiting"),
    }
}

fn update_tray(app: &AppHandle, waiting: usize) {
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(tooltip(waiting)));
        let _ = tray.set_title((waiting > 0).then(|| waiting.to_string()));
    }
}
