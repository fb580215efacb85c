//! askdesk-desktop: the askdesk broker with a window, a tray icon and desktop notifications.
//!
//! The crate is the Tauri shell around `askdesk_view`, which holds everything the desktop shows
//! and decides without a GUI toolkit (the GUI answerer, markdown, plan threads, past answers, the
//! rules views, the page's events and addresses) and is tested by plain `cargo test`. What stays
//! here talks to Tauri, GTK, WebKit or D-Bus:
//!
//! - [`run`] (this file): start-up as a few named steps (a display, one instance per user, the
//!   broker on Tauri's async runtime), and a clean stop on exit.
//! - [`graphics`]: whether a display is there, checked before anything is bound.
//! - [`state`]: what several modules share through Tauri's state: the journal, the rules engine.
//! - [`window`]: the one window, created on demand and dropped after it has been hidden a while
//!   (what the human typed stays as the page's draft), so a hidden app holds no web process.
//! - [`tray`]: the tray icon, its menu and its waiting count.
//! - [`desktop`]: what the GUI answerer's events do on the desktop: page events, window, tray,
//!   notifications, late answers into the journal.
//! - [`commands`]: the thin `#[tauri::command]` wrappers the page calls.
//! - [`notify`]: freedesktop notifications with actions, on threads of their own: one for the
//!   waiting set (withdrawn while the window has the focus), and the rules' notes.
//! - [`activation`]: the activation token of the person's action (a notification's, a second
//!   launch's), with which the window comes forward under Wayland.
//! - [`phone`]: "Answer from your phone": the remote hosted in the broker beside the dialog, its
//!   settings, pairing and the paired devices (the Devices view).
//! - [`settings`]: start-up settings from the environment and the command line, and the person's
//!   choices in the window ("notify only", "show without focus"), kept in `desktop.json`.
//! - [`trim`]: the memory an idle app gives back once its window is dropped.
//! - [`language`]: the app's language, the page's catalogue, and the choice that changes it.
//!
//! Dependencies between the modules point one way, with no cycle: `commands` → `window`,
//! `state`, `settings`; `desktop` → `tray`, `window`, `notify`, `activation`, `state`,
//! `settings`; `phone` → `commands`; `language` → `commands`, `settings`; `tray` → `window`, `graphics`; `notify` → `activation`; `window` → `activation`,
//! `trim`, `settings`. Each may use `askdesk_view`, which uses none of them. The page's
//! event names and payloads live in `askdesk_view::page`, so the window and the desktop thread
//! both emit them without knowing of each other; the handles they share (the journal, the rules
//! engine) sit in `state`, not in the commands that read them.

pub mod activation;
pub mod commands;
pub mod desktop;
pub mod font;
pub mod graphics;
pub mod language;
pub mod notify;
pub mod phone;
pub mod settings;
pub mod state;
pub mod tray;
pub mod trim;
pub mod window;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askdesk_broker::client::{Client, ClientError};
use askdesk_broker::protocol::methods::{Focus, FocusParams};
use askdesk_broker::transport::Listener;
use askdesk_broker::ServerConfig;
use askdesk_core::{AnswererRegistration, Config, Service};
use askdesk_journal::Journal;
use tauri::async_runtime::JoinHandle;
use tauri::{App, AppHandle, Manager, RunEvent};
use tokio_util::sync::CancellationToken;

use askdesk_view::answerer::GuiAnswerer;
use askdesk_view::markdown;
use askdesk_view::memory::Memory;

use crate::desktop::Desktop;
use crate::settings::{Preferences, Settings};
use crate::state::{History, Rules};
use crate::window::MainWindow;

/// How long the app waits for the broker to settle its requests and stop on exit.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// The exit status when there is no display to show a window on.
const EXIT_NO_DISPLAY: i32 = 2;

/// The running broker, stopped on exit.
struct Broker {
    shutdown: CancellationToken,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Starts the app; returns when it exits.
pub fn run() {
    trim::few_heap_arenas();
    init_tracing();
    let settings = Settings::from_env_and_args(std::env::args().skip(1));
    quiet_web_engine();
    require_display();
    let listener = bind_or_focus_running();
    tracing::info!(path = %listener.path().display(), "listening");
    let (journal, history_error) = open_journal();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_opener::init())
        .plugin(window_state())
        .invoke_handler(tauri::generate_handler![
            commands::get_queue,
            commands::get_settings,
            commands::set_choices,
            commands::submit,
            commands::attach_image,
            commands::kept_picture,
            commands::dismiss,
            commands::close_ended,
            commands::set_dnd,
            commands::save_draft,
            commands::set_past_comment,
            commands::get_history,
            commands::open_link,
            commands::hide_window,
            commands::shown,
            commands::viewed,
            commands::draft_rule,
            commands::draft_rule_from_history,
            commands::save_rule,
            commands::get_rules,
            commands::set_rule_mode,
            commands::open_rules_file,
            commands::hold_deadline,
            commands::get_notes,
            commands::close_note,
            commands::get_connect,
            commands::preview_connect,
            commands::apply_connect,
            commands::set_autostart,
            language::get_catalogue,
            language::set_language,
            phone::get_phone,
            phone::set_phone,
            phone::revoke_device,
            phone::allow_passkey,
            phone::add_phone,
            phone::confirm_phone,
            phone::cancel_phone,
        ])
        .on_window_event(|window, event| {
            window::on_event(window, event);
            desktop::on_window_event(window, event);
        })
        .setup(move |app| start_desktop(app, settings, listener, journal, history_error))
        .build(tauri::generate_context!())
        .expect("the Tauri application could not be built");
    app.run(on_run_event);
}

/// The window's size and place, kept in askdesk's configuration folder (`window-state.json`).
fn window_state() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    let builder = tauri_plugin_window_state::Builder::new().with_state_flags(window::REMEMBERED);
    match settings::window_state_file() {
        // An absolute name: the plugin joins it to its folder, which it then replaces.
        Some(file) => builder.with_filename(file.to_string_lossy()),
        None => builder,
    }
    .build()
}

/// The web engine's settings that only its environment carries, each kept when the user set it.
/// Runs before any thread exists (the environment is process-wide); the web processes inherit it.
/// - WebKit's memory-pressure monitor wakes the app every few seconds for its whole life, even
///   with no page loaded, to tell web processes to shed caches; the app's one small page has none
///   worth shedding.
/// - JavaScriptCore runs the page in its interpreter, without its JIT compilers: the page is a
///   small form whose code runs a few times per question, which the JIT tiers compiled on threads
///   of their own while the dialog was drawn, and kept about 8 MB in the web process for (113.5
///   against 105.8 MB with the window open). A page without executable memory of its own is also
///   a smaller target for whatever an agent manages to put in front of it.
fn quiet_web_engine() {
    for (name, value) in [
        ("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1"),
        ("JSC_useJIT", "0"),
    ] {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
}

/// Step 1: without a display there is nothing to show; say so and leave before binding anything.
fn require_display() {
    if let Err(missing) = graphics::check() {
        eprintln!("askdesk-desktop: {missing}");
        std::process::exit(EXIT_NO_DISPLAY);
    }
}

/// Step 2: take the socket, or, when another instance has it, ask that one to show its window and
/// leave. Binding comes before any window exists, so a second launch leaves without a flicker.
fn bind_or_focus_running() -> Listener {
    let path = askdesk_broker::socket_path();
    match tauri::async_runtime::block_on(async { askdesk_broker::bind(&path) }) {
        Ok(listener) => listener,
        Err(askdesk_broker::Error::AlreadyRunning { path }) => {
            match focus_running(&path) {
                Ok(()) => {
                    tracing::info!(path = %path.display(), "askdesk is already running; asked it to show its window")
                }
                Err(error) => {
                    tracing::warn!(%error, path = %path.display(), "askdesk is already running but did not answer")
                }
            }
            std::process::exit(0);
        }
        Err(error) => {
            eprintln!("askdesk-desktop: {error}");
            std::process::exit(1);
        }
    }
}

/// Step 3: the history journal. One that cannot be opened now is opened by the first commit
/// after the cause is gone; meanwhile the app still answers (and `askdesk status` says why
/// nothing is recorded). Without a data directory at all there is none.
fn open_journal() -> (Option<Journal>, Option<String>) {
    match Journal::open_default_or_later() {
        Ok((journal, None)) => (Some(journal), None),
        Ok((journal, Some(error))) => {
            tracing::warn!(%error, "the history journal cannot be opened yet; settled requests are not recorded until it can");
            (Some(journal), None)
        }
        Err(error) => {
            tracing::warn!(%error, "no history journal; settled requests are not recorded");
            (None, Some(error.to_string()))
        }
    }
}

/// Step 4 (Tauri's setup): the desktop thread, the GUI answerer, the tray, the broker, the window.
fn start_desktop(
    app: &mut App,
    settings: Settings,
    listener: Listener,
    journal: Option<Journal>,
    history_error: Option<String>,
) -> Result<(), Box<dyn std::error::Error>> {
    let handle = app.handle().clone();
    markdown::warm_up();
    app.manage(MainWindow::new(settings.drop_window_after));
    app.manage(crate::state::Socket(listener.path().to_owned()));
    let prefs = Preferences::load(&settings);
    // Before the tray, the first notification and the page say anything.
    language::apply(&prefs);
    app.manage(prefs);
    let desktop = Desktop::start(handle.clone(), journal.clone())?;
    let gui = GuiAnswerer::new(Arc::new(desktop.presenter()));
    let service = Service::new(Config {
        images: Some(Arc::new(askdesk_image::Gate::default())),
        ..Config::default()
    });
    let registration = AnswererRegistration {
        scope: settings.scope.clone(),
        prepend: false,
        label: Some(askdesk_view::answerer::DESKTOP_ANSWERER.into()),
        group: Some(askdesk_view::answerer::PERSON_GROUP.into()),
    };
    service.register_answerer(registration, Arc::new(gui.clone()))?;
    let shutdown = CancellationToken::new();
    // The answer rules go to the head of the chain once their file is read; the page reads
    // their deadlines through the managed handle.
    app.manage(Rules::default());
    tauri::async_runtime::spawn({
        let (service, shutdown, handle) = (service.clone(), shutdown.clone(), handle.clone());
        async move {
            if let Some(engine) = askdesk_rules::Engine::start_default(&service, &shutdown).await {
                let _ = handle.state::<Rules>().0.set(engine.clone());
                tauri::async_runtime::spawn(desktop::follow_acted(handle.clone(), engine.acted()));
                state::follow_rules(handle, engine).await;
            }
        }
    });
    app.manage(gui);
    app.manage(desktop);
    app.manage(settings.clone());
    app.manage(History(journal.clone()));
    app.manage(Memory::default());
    app.manage(askdesk_view::page::Notes::default());
    // The remote, when "Answer from your phone" is on, joins the `person` group beside the dialog.
    app.manage(phone::Phone::new(service.clone()));
    tauri::async_runtime::spawn({
        let handle = handle.clone();
        async move { handle.state::<phone::Phone>().start_if_on(&handle).await }
    });
    tray::build_where_hosted(&handle);
    start_broker(&handle, service, listener, journal, history_error, shutdown);
    tauri::async_runtime::spawn(exit_on_signal(handle.clone()));
    if !settings.start_hidden {
        window::open(&handle, None, None);
    }
    Ok(())
}

/// Runs the broker on Tauri's runtime; a second launch's `askdesk/focus` opens the window, with
/// the activation token that launch was given.
fn start_broker(
    app: &AppHandle,
    service: Service,
    listener: Listener,
    journal: Option<Journal>,
    history_error: Option<String>,
    shutdown: CancellationToken,
) {
    let focus = {
        let app = app.clone();
        Arc::new(move |token: Option<String>| {
            window::open(&app, None, token.and_then(activation::Token::new))
        }) as Arc<dyn Fn(Option<String>) + Send + Sync>
    };
    let config = ServerConfig {
        journal,
        history_error,
        focus: Some(focus),
        ..ServerConfig::default()
    };
    let task = tauri::async_runtime::spawn(askdesk_broker::run(
        listener,
        service,
        config,
        shutdown.clone(),
    ));
    app.manage(Broker {
        shutdown,
        task: Mutex::new(Some(task)),
    });
}

/// The window never really closes (it hides, or is dropped), so keep running in the tray unless
/// the exit was asked for (Quit, a signal).
fn on_run_event(app: &AppHandle, event: RunEvent) {
    match event {
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        RunEvent::Exit => {
            stop_broker(app);
            close_notifications(app);
        }
        _ => {}
    }
}

/// Stops the broker: pending asks settle `SHUTTING_DOWN`, connections end, the socket goes; then
/// the journal is closed (the process ends without dropping the app's state, which holds it).
fn stop_broker(app: &AppHandle) {
    let Some(broker) = app.try_state::<Broker>() else {
        return;
    };
    broker.shutdown.cancel();
    let task = askdesk_core::sync::lock(&broker.task).take();
    if let Some(task) = task {
        let stopped = tauri::async_runtime::block_on(async {
            tokio::time::timeout(STOP_TIMEOUT, task).await
        });
        match stopped {
            Ok(_) => tracing::info!("stopped"),
            Err(_) => tracing::warn!("the broker did not stop within {STOP_TIMEOUT:?}"),
        }
    }
    if let Some(journal) = app.try_state::<History>().and_then(|h| h.0.clone()) {
        journal.close();
    }
}

/// Quitting leaves no notification behind: the waiting requests' (their asks settled as the broker
/// stopped) and the notes of what rules did are closed, by id, before the process ends.
fn close_notifications(app: &AppHandle) {
    if let Some(desktop) = app.try_state::<Desktop>() {
        desktop.close_notifications(STOP_TIMEOUT);
    }
}

/// SIGTERM and SIGINT quit the app the same way the tray's Quit does.
async fn exit_on_signal(app: AppHandle) {
    askdesk_broker::host::interrupted().await;
    tracing::info!("signal received; quitting");
    app.exit(0);
}

/// Asks the running instance to show its window (`askdesk/focus`) with the activation token this
/// launch was given, waiting a few seconds at most: this runs before anything else exists (GTK has
/// not read the token).
fn focus_running(path: &Path) -> Result<(), ClientError> {
    tauri::async_runtime::block_on(async {
        let focus = async {
            let client = Client::connect(path, "askdesk-desktop").await?;
            let params = FocusParams {
                activation_token: activation::Token::from_launch_env()
                    .map(activation::Token::into_string),
            };
            client.call::<Focus>(&params).await
        };
        match tokio::time::timeout(Duration::from_secs(3), focus).await {
            Ok(focused) => focused.map(drop),
            Err(_) => Err(ClientError::Io(std::io::ErrorKind::TimedOut.into())),
        }
    })
}

fn init_tracing() {
    askdesk_broker::host::init_logging("info");
}
