//! askdesk-desktop: the askdesk broker with a window, a tray icon and desktop notifications.
//!
//! - [`run`] (this file): start-up (one instance per user), the broker on Tauri's async runtime,
//!   the main window, and a clean stop on exit.
//! - [`answerer`]: the GUI answerer on the waterfall; knows nothing of Tauri.
//! - [`desktop`]: what the answerer's events do on the desktop: page events, window, tray,
//!   notifications, late answers into the journal.
//! - [`commands`]: the thin `#[tauri::command]` wrappers the page calls.
//! - [`notify`]: freedesktop notifications with actions, on threads of their own.
//! - [`markdown`]: `detail` rendered and sanitized; the only HTML the page inserts.
//! - [`settings`]: start-up settings from the environment and the command line.

pub mod answerer;
pub mod commands;
pub mod desktop;
pub mod markdown;
pub mod notify;
pub mod settings;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askdesk_broker::journal::Journal;
use askdesk_broker::ServerConfig;
use askdesk_core::{AnswererRegistration, Config, Service};
use tauri::async_runtime::JoinHandle;
use tauri::{Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent};
use tokio_util::sync::CancellationToken;

use crate::answerer::GuiAnswerer;
use crate::desktop::Desktop;
use crate::settings::Settings;

/// The label of the one window.
pub const MAIN_WINDOW: &str = "main";
/// How long the app waits for the broker to settle its requests and stop on exit.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// The running broker, stopped on exit.
struct Broker {
    shutdown: CancellationToken,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Starts the app; returns when it exits.
pub fn run() {
    init_tracing();
    let settings = Settings::from_env_and_args(std::env::args().skip(1));
    let path = askdesk_broker::socket_path();
    // Bind before any window exists, so a second launch leaves without a flicker.
    let listener = match tauri::async_runtime::block_on(async { askdesk_broker::bind(&path) }) {
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
    };
    tracing::info!(path = %listener.path().display(), "listening");
    let service = Service::new(Config::default());
    let journal = match Journal::open_default() {
        Ok(journal) => Some(journal),
        Err(error) => {
            tracing::warn!(%error, "no history journal; settled requests are not recorded");
            None
        }
    };
    let shutdown = CancellationToken::new();

    let app = tauri::Builder::default()
        .plugin(tauri_plugin_opener::init())
        .invoke_handler(tauri::generate_handler![
            commands::get_queue,
            commands::get_settings,
            commands::submit,
            commands::dismiss,
            commands::set_dnd,
            commands::get_history,
            commands::open_link,
            commands::hide_window,
        ])
        .on_window_event(|window, event| {
            // Closing the window hides it; the app keeps answering from the tray.
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                let _ = window.hide();
            }
        })
        .setup(move |app| {
            let handle = app.handle().clone();
            markdown::warm_up();
            WebviewWindowBuilder::new(app, MAIN_WINDOW, WebviewUrl::App("index.html".into()))
                .title("askdesk")
                .inner_size(1100.0, 760.0)
                .min_inner_size(640.0, 420.0)
                .center()
                .visible(false)
                // The page never navigates: links open in the system browser through `open_link`.
                .on_navigation(|url| {
                    url.scheme() == "tauri" || url.host_str() == Some("tauri.localhost")
                })
                .build()?;

            let desktop = Desktop::start(handle.clone(), settings.clone(), journal.clone())?;
            let gui = GuiAnswerer::new(Arc::new(desktop.presenter()));
            let registration = AnswererRegistration {
                scope: settings.scope.clone(),
                prepend: false,
                label: Some("desktop".into()),
            };
            service.register_answerer(registration, Arc::new(gui.clone()))?;
            tauri::async_runtime::spawn({
                let (service, shutdown) = (service.clone(), shutdown.clone());
                async move { askdesk_rules::Engine::start_default(&service, &shutdown).await }
            });
            app.manage(gui);
            app.manage(desktop);
            app.manage(commands::History(journal.clone()));
            if let Err(error) = desktop::build_tray(&handle) {
                tracing::warn!(%error, "no tray icon");
            }

            let focus = {
                let handle = handle.clone();
                Arc::new(move || desktop::show_main(&handle)) as Arc<dyn Fn() + Send + Sync>
            };
            let config = ServerConfig {
                journal: journal.clone(),
                focus: Some(focus),
                ..ServerConfig::default()
            };
            let task = tauri::async_runtime::spawn(askdesk_broker::run(
                listener,
                service.clone(),
                config,
                shutdown.clone(),
            ));
            app.manage(Broker {
                shutdown: shutdown.clone(),
                task: Mutex::new(Some(task)),
            });
            tauri::async_runtime::spawn(exit_on_signal(handle.clone()));

            if !settings.start_hidden {
                desktop::show_main(&handle);
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .expect("the Tauri application could not be built");

    app.run(|app, event| match event {
        // The last window never really closes (it hides), but keep running in the tray anyway
        // unless the exit was asked for (Quit, a signal).
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        RunEvent::Exit => stop_broker(app),
        _ => {}
    });
}

/// Stops the broker: pending asks settle `SHUTTING_DOWN`, connections end, the socket goes.
fn stop_broker(app: &tauri::AppHandle) {
    let Some(broker) = app.try_state::<Broker>() else {
        return;
    };
    broker.shutdown.cancel();
    let task = broker.task.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(task) = task {
        let stopped = tauri::async_runtime::block_on(async {
            tokio::time::timeout(STOP_TIMEOUT, task).await
        });
        match stopped {
            Ok(_) => tracing::info!("stopped"),
            Err(_) => tracing::warn!("the broker did not stop within {STOP_TIMEOUT:?}"),
        }
    }
}

/// SIGTERM and SIGINT quit the app the same way the tray's Quit does.
async fn exit_on_signal(app: tauri::AppHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot listen for signals");
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    tracing::info!("signal received; quitting");
    app.exit(0);
}

/// Asks the running instance to show its window (`askdesk/focus`), with a plain blocking client:
/// this runs before anything else exists.
fn focus_running(path: &Path) -> std::io::Result<()> {
    let stream = UnixStream::connect(path)?;
    stream.set_read_timeout(Some(Duration::from_secs(3)))?;
    stream.set_write_timeout(Some(Duration::from_secs(3)))?;
    let mut writer = &stream;
    writer.write_all(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"askdesk-desktop"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"askdesk/focus","params":{}}"#,
            "\n"
        )
        .as_bytes(),
    )?;
    for line in BufReader::new(&stream).lines() {
        let reply: serde_json::Value =
            serde_json::from_str(&line?).map_err(std::io::Error::other)?;
        if reply["id"] == 2 {
            return match reply.get("error") {
                Some(error) => Err(std::io::Error::other(error.to_string())),
                None => Ok(()),
            };
        }
    }
    Err(std::io::Error::other(
        "the running instance closed the connection",
    ))
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ASKDESK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
