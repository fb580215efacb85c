//! The commands the page may call: thin wrappers over the GUI answerer, the journal and the opener.
//!
//! Errors reach the page as `{ kind, message }`; `kind` is `late`, `invalid`, `refused` or `failed`.

use askdesk_broker::journal::{Journal, Record};
use askdesk_core::{Answer, RequestId};
use serde::Serialize;
use tauri::{AppHandle, State, WebviewWindow};
use tauri_plugin_opener::OpenerExt;

use crate::answerer::{GuiAnswerer, RequestView, SubmitError};
use crate::desktop::Desktop;

/// The journal the History view reads, if there is one.
pub struct History(pub Option<Journal>);

/// The most history records sent to the page.
const HISTORY_LIMIT: usize = 1000;

/// An error as the page receives it.
#[derive(Debug, Serialize)]
pub struct CommandError {
    kind: &'static str,
    message: String,
}

impl CommandError {
    fn new(kind: &'static str, message: impl ToString) -> Self {
        CommandError {
            kind,
            message: message.to_string(),
        }
    }
}

impl From<SubmitError> for CommandError {
    fn from(error: SubmitError) -> Self {
        let kind = match error {
            SubmitError::Late => "late",
            SubmitError::Invalid(_) => "invalid",
        };
        CommandError::new(kind, error)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    dnd: bool,
    notify_only: bool,
}

/// The waiting requests, oldest first.
#[tauri::command]
pub fn get_queue(gui: State<'_, GuiAnswerer>) -> Vec<RequestView> {
    gui.queue()
}

#[tauri::command]
pub fn get_settings(gui: State<'_, GuiAnswerer>, desktop: State<'_, Desktop>) -> SettingsView {
    SettingsView {
        dnd: gui.dnd(),
        notify_only: desktop.settings.notify_only,
    }
}

/// Claims the request with the human's answer.
#[tauri::command]
pub fn submit(
    gui: State<'_, GuiAnswerer>,
    request: u64,
    answer: Answer,
) -> Result<(), CommandError> {
    Ok(gui.submit(RequestId(request), answer)?)
}

/// Dismisses the whole batch: the asker gets `ASK_CANCELLED`.
#[tauri::command]
pub fn dismiss(gui: State<'_, GuiAnswerer>, request: u64) -> Result<(), CommandError> {
    Ok(gui.dismiss(RequestId(request))?)
}

#[tauri::command]
pub fn set_dnd(gui: State<'_, GuiAnswerer>, on: bool) {
    gui.set_dnd(on);
}

/// Settled requests, newest first.
#[tauri::command]
pub async fn get_history(history: State<'_, History>) -> Result<Vec<Record>, CommandError> {
    let Some(journal) = history.0.clone() else {
        return Ok(Vec::new());
    };
    let records = tauri::async_runtime::spawn_blocking(move || journal.read())
        .await
        .map_err(|e| CommandError::new("failed", e))?
        .map_err(|e| CommandError::new("failed", e))?;
    Ok(records.into_iter().rev().take(HISTORY_LIMIT).collect())
}

/// Opens a link from rendered markdown in the system browser (the page asked the human first).
#[tauri::command]
pub async fn open_link(app: AppHandle, url: String) -> Result<(), CommandError> {
    let parsed = tauri::Url::parse(&url).map_err(|e| CommandError::new("refused", e))?;
    if !matches!(parsed.scheme(), "http" | "https" | "mailto") {
        return Err(CommandError::new(
            "refused",
            format!("{} links are not opened", parsed.scheme()),
        ));
    }
    tauri::async_runtime::spawn_blocking(move || {
        app.opener().open_url(parsed.as_str(), None::<&str>)
    })
    .await
    .map_err(|e| CommandError::new("failed", e))?
    .map_err(|e| CommandError::new("failed", e))
}

/// Hides the window (Esc); the requests stay queued.
#[tauri::command]
pub fn hide_window(window: WebviewWindow) -> Result<(), CommandError> {
    crate::window::hide(&window.as_ref().window()).map_err(|e| CommandError::new("failed", e))
}

/// The page has painted this request: logged (at debug level) so the time from an ask to its
/// dialog on screen can be measured from outside (`scripts/bench-desktop.sh`).
#[tauri::command]
pub fn shown(request: u64) {
    tracing::debug!(request, "request shown");
}
