//! The commands the page may call: thin wrappers over the GUI answerer, the journal, the rules
//! file and the opener; what they return is built by `askdesk_view`.
//!
//! Errors reach the page as `{ kind, message }`; `kind` is `late`, `invalid`, `refused` or `failed`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use askdesk_connect::autostart::{self, Autostart};
use askdesk_connect::overview::{self, Applied, Overview, Preview};
use askdesk_connect::Agent;
use askdesk_core::{Answer, Request, RequestId};
use askdesk_i18n::t;
use askdesk_journal::millis;
use askdesk_rules::file;
use askdesk_view::answerer::{DeadlineView, DraftError, GuiAnswerer, RequestView, SubmitError};
use askdesk_view::history::{self, HistoryPage, HistoryPageBuilder, HistoryQuery};
use askdesk_view::memory::Memory;
use askdesk_view::page::{Notes, PageView, RuleNote, EVENT_NOTES};
use askdesk_view::plan_thread::{CommentError, CommentInput, PastState};
use askdesk_view::rule_draft::{self, RuleDraftView};
use askdesk_view::rules_view::{self, RulesView, SuggestionView};
use serde::Serialize;
use tauri::{AppHandle, Emitter, State, WebviewWindow};
use tauri_plugin_opener::OpenerExt;

use crate::settings::{Choices, ChoicesView, Preferences};
use crate::state::{History, Rules, Socket};
use crate::window::MainWindow;

/// An error as the page receives it.
#[derive(Debug, Serialize)]
pub struct CommandError {
    kind: &'static str,
    message: String,
}

impl CommandError {
    pub(crate) fn new(kind: &'static str, message: impl ToString) -> Self {
        CommandError {
            kind,
            message: message.to_string(),
        }
    }
}

impl From<CommentError> for CommandError {
    fn from(error: CommentError) -> Self {
        let kind = match error {
            CommentError::NotWaiting => "late",
            _ => "invalid",
        };
        CommandError::new(kind, error)
    }
}

impl From<DraftError> for CommandError {
    fn from(error: DraftError) -> Self {
        CommandError::new("invalid", error)
    }
}

impl From<SubmitError> for CommandError {
    fn from(error: SubmitError) -> Self {
        let kind = match error {
            SubmitError::Late | SubmitError::Comments(CommentError::NotWaiting) => "late",
            SubmitError::Invalid(_) | SubmitError::Comments(_) => "invalid",
        };
        CommandError::new(kind, error)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    dnd: bool,
    #[serde(flatten)]
    choices: ChoicesView,
}

/// The waiting requests, oldest first.
#[tauri::command]
pub async fn get_queue(
    gui: State<'_, GuiAnswerer>,
    rules: State<'_, Rules>,
    history: State<'_, History>,
    memory: State<'_, Memory>,
) -> Result<Vec<RequestView>, CommandError> {
    let mut queue = gui.queue();
    if let Some(engine) = rules.0.get() {
        for view in &mut queue {
            view.deadline = engine
                .deadline(view.request)
                .as_ref()
                .map(DeadlineView::new);
            view.suggestions = suggestions(engine, view.request);
        }
    }
    // Past answers come with the queue, so each request is drawn whole the first time. The journal
    // is read off the window's thread, once per request (the memory keeps what it found).
    let Some(journal) = history.0.clone() else {
        return Ok(queue);
    };
    let asked: Vec<(usize, Arc<Request>)> = queue
        .iter()
        .enumerate()
        .filter(|(_, view)| view.ended.is_none())
        .filter_map(|(at, view)| waiting(&gui, view.request.0).ok().map(|r| (at, r)))
        .collect();
    if asked.is_empty() {
        return Ok(queue);
    }
    let memory = memory.inner().clone();
    let found = blocking(move || {
        asked
            .into_iter()
            .map(|(at, request)| (at, memory.lookup(&journal, &request)))
            .collect::<Vec<_>>()
    })
    .await?;
    for (at, past) in found {
        queue[at].memory = past;
    }
    Ok(queue)
}

fn suggestions(engine: &askdesk_rules::Engine, request: RequestId) -> Vec<SuggestionView> {
    engine
        .proposals(request)
        .iter()
        .filter_map(SuggestionView::new)
        .collect()
}

/// Stops (`held`) or restarts the clock of the rule's deadline on a waiting request; a held
/// request is never answered by its rule. Fails when no deadline runs on it any more.
#[tauri::command]
pub fn hold_deadline(
    rules: State<'_, Rules>,
    request: u64,
    held: bool,
) -> Result<DeadlineView, CommandError> {
    let engine = rules
        .0
        .get()
        .ok_or_else(|| CommandError::new("late", askdesk_rules::HoldError::NoDeadline))?;
    engine
        .hold(RequestId(request), held)
        .map(|deadline| DeadlineView::new(&deadline))
        .map_err(|error| CommandError::new("late", error))
}

/// What rules did to requests that waited, until the person closes each note.
#[tauri::command]
pub fn get_notes(notes: State<'_, Notes>) -> Vec<RuleNote> {
    notes.list()
}

/// The person closed a note (every window hears it).
#[tauri::command]
pub fn close_note(app: AppHandle, notes: State<'_, Notes>, id: u64) {
    if notes.close(id) {
        let _ = app.emit(EVENT_NOTES, ());
    }
}

#[tauri::command]
pub fn get_settings(gui: State<'_, GuiAnswerer>, prefs: State<'_, Preferences>) -> SettingsView {
    SettingsView {
        dnd: gui.dnd(),
        choices: prefs.view(),
    }
}

/// Keeps the person's choices ("notify only", "show without taking focus"): on disk, and in
/// force for the next request.
#[tauri::command]
pub fn set_choices(
    prefs: State<'_, Preferences>,
    choices: Choices,
) -> Result<ChoicesView, CommandError> {
    prefs
        .set(choices)
        .map_err(|e| CommandError::new("failed", e))
}

/// Claims the request with the human's answer; on a plan review, `comments` are the human's
/// comments on the plan, which the backend turns into the feedback text with the general feedback
/// the page put in the plan's `custom`.
#[tauri::command]
pub fn submit(
    gui: State<'_, GuiAnswerer>,
    request: u64,
    answer: Answer,
    comments: Option<Vec<CommentInput>>,
) -> Result<(), CommandError> {
    Ok(gui.submit_review(RequestId(request), answer, comments.unwrap_or_default())?)
}

/// A picture attached to an answer, as the page gets it: the re-encoded PNG and the number the
/// desk keeps it under for `request` (`None` when the request no longer waits), which the page's
/// draft names it by.
#[derive(Serialize)]
pub struct AttachedPicture {
    picture: Option<u64>,
    #[serde(flatten)]
    image: askdesk_core::Image,
}

/// A picture the person pasted or dropped into an answer to `request` (base64 of the file as
/// given), made safe in Rust before the page shows it, and kept while the request waits so a page
/// built after the window was dropped shows it again: the re-encoded PNG, or a refusal (`invalid`)
/// naming the limit.
#[tauri::command]
pub async fn attach_image(
    gui: State<'_, GuiAnswerer>,
    request: u64,
    data: String,
) -> Result<AttachedPicture, CommandError> {
    let limits = askdesk_image::Limits::default();
    let image = tauri::async_runtime::spawn_blocking(move || {
        askdesk_image::make_picture_safe(&data, &limits)
    })
    .await
    .map_err(|_| CommandError::new("failed", t!("desktop-command-picture-failed")))?
    .map_err(|refusal| {
        CommandError::new(
            "invalid",
            t!(
                "desktop-command-picture-refused",
                refusal = refusal.to_string()
            ),
        )
    })?;
    // An answer carries no more pictures than a request does.
    let picture = gui
        .keep_picture(RequestId(request), image.clone(), limits.images)
        .map_err(|error| {
            CommandError::new(
                "invalid",
                t!("desktop-picture-not-attached", error = error.to_string()),
            )
        })?;
    Ok(AttachedPicture { picture, image })
}

/// A picture attached to waiting `request`'s answer, by the number its draft names it by, for a
/// page built after the window was dropped; `None` once it was removed or the request ended.
#[tauri::command]
pub fn kept_picture(
    gui: State<'_, GuiAnswerer>,
    request: u64,
    picture: u64,
) -> Option<askdesk_core::Image> {
    gui.kept_picture(RequestId(request), picture)
}

/// Dismisses the whole batch: the asker gets `ASK_CANCELLED`.
#[tauri::command]
pub fn dismiss(gui: State<'_, GuiAnswerer>, request: u64) -> Result<(), CommandError> {
    Ok(gui.dismiss(RequestId(request))?)
}

/// The human closed a request that ended without them (its asker withdrew it or went): it leaves
/// the queue; what they had typed stays in History.
#[tauri::command]
pub fn close_ended(gui: State<'_, GuiAnswerer>, request: u64) -> bool {
    gui.close_ended(RequestId(request))
}

/// Keeps what the human has chosen and typed in a waiting request's form so far (the page's own
/// JSON), for the page a dropped window's next build shows.
#[tauri::command]
pub fn save_draft(
    gui: State<'_, GuiAnswerer>,
    request: u64,
    draft: Box<serde_json::value::RawValue>,
) -> Result<(), CommandError> {
    Ok(gui.save_draft(RequestId(request), draft)?)
}

/// Resolves a comment of a plan's last review on its waiting revision, carries it forward, or
/// opens it again (`state`: `resolved`, `carried`, `open`); the thread keeps what was done.
#[tauri::command]
pub fn set_past_comment(
    gui: State<'_, GuiAnswerer>,
    request: u64,
    index: usize,
    state: PastState,
) -> Result<(), CommandError> {
    Ok(gui.set_past_comment(RequestId(request), index, state)?)
}

#[tauri::command]
pub fn set_dnd(gui: State<'_, GuiAnswerer>, on: bool) {
    gui.set_dnd(on);
}

/// Settled requests that the filters let through, newest first, at most `query.limit` of them;
/// the plan reviews of one thread form one entry. The whole journal is read and filtered here,
/// off the window's thread, so every entry can be reached however long the journal has grown.
#[tauri::command]
pub async fn get_history(
    history: State<'_, History>,
    query: HistoryQuery,
) -> Result<HistoryPage, CommandError> {
    let Some(journal) = history.0.clone() else {
        return Ok(HistoryPageBuilder::new(query).finish());
    };
    blocking(move || {
        let mut page = HistoryPageBuilder::new(query);
        journal.visit(|record| page.push(record))?;
        Ok(page.finish())
    })
    .await?
    .map_err(|e: askdesk_journal::Error| CommandError::new("failed", e))
}

/// The Rules view: the rules in force, the file's path and error, and with `counts` each rule's
/// counts from the journal replayed through it (read and replayed off the window's thread).
#[tauri::command]
pub async fn get_rules(
    rules: State<'_, Rules>,
    history: State<'_, History>,
    counts: bool,
) -> Result<RulesView, CommandError> {
    let Some(engine) = rules.0.get().cloned() else {
        return Ok(rules_view::view(
            None,
            &askdesk_rules::Loaded::default(),
            None,
        ));
    };
    let journal = history.0.clone().filter(|_| counts);
    blocking(move || {
        let records = journal.map(|j| j.read()).transpose()?;
        Ok::<_, askdesk_journal::Error>(rules_view::view(
            Some(engine.path()),
            &engine.current(),
            records,
        ))
    })
    .await?
    .map_err(|e| CommandError::new("failed", e))
}

/// Sets a rule's mode in the rules file (keeping everything else in it) and reloads it at once;
/// the page hears `rules-changed` and shows what the engine loaded.
#[tauri::command]
pub async fn set_rule_mode(
    rules: State<'_, Rules>,
    name: String,
    mode: askdesk_rules::Mode,
) -> Result<(), CommandError> {
    let Some(engine) = rules.0.get().cloned() else {
        return Err(CommandError::new(
            "refused",
            t!("desktop-command-no-rules-file"),
        ));
    };
    let path = engine.path().to_owned();
    blocking(move || askdesk_rules::set_mode(&path, &name, mode))
        .await?
        .map_err(|e| CommandError::new("refused", e))?;
    engine.reload().await;
    Ok(())
}

/// The rules that answer the waiting `request` with `answer` in its project ("Always answer this
/// way here"), one per scope with the History entries each would have matched, for the page to
/// preview.
#[tauri::command]
pub async fn draft_rule(
    gui: State<'_, GuiAnswerer>,
    rules: State<'_, Rules>,
    history: State<'_, History>,
    request: u64,
    answer: Answer,
) -> Result<RuleDraftView, CommandError> {
    let asked = waiting(&gui, request)?;
    let path = rules_path(&rules)?;
    let now = millis(SystemTime::now());
    let journal = history.0.clone();
    blocking(move || {
        let view = rule_draft::from_answer(path, &asked, &answer, now);
        match journal {
            Some(journal) => view.with_history(|each| journal.visit(each)),
            None => Ok(view),
        }
    })
    .await?
    .map_err(|e: askdesk_journal::Error| CommandError::new("failed", e))
}

/// The rules that answer a History entry's request as the human did then ("Make a rule"): the
/// entry is named by its id, and its record read again from the journal.
#[tauri::command]
pub async fn draft_rule_from_history(
    rules: State<'_, Rules>,
    history: State<'_, History>,
    entry: String,
) -> Result<RuleDraftView, CommandError> {
    let path = rules_path(&rules)?;
    let Some(journal) = history.0.clone() else {
        return Err(CommandError::new(
            "refused",
            t!("desktop-command-no-journal"),
        ));
    };
    blocking(move || {
        let record = history::find(|each| journal.visit(each), &entry)?;
        match record {
            Some(record) => {
                rule_draft::from_record(path, &record).with_history(|each| journal.visit(each))
            }
            None => Ok(RuleDraftView::unavailable(
                &path,
                &t!("desktop-command-entry-gone"),
            )),
        }
    })
    .await?
    .map_err(|e: askdesk_journal::Error| CommandError::new("failed", e))
}

/// Appends the previewed rule to the rules file, keeping everything in it, and reloads the rules
/// so the rule is in force when the page hears back; refused (with the file unchanged) when the
/// file does not load, the name is taken, or the text is not one valid rule.
#[tauri::command]
pub async fn save_rule(rules: State<'_, Rules>, text: String) -> Result<String, CommandError> {
    let path = rules_path(&rules)?;
    let saved = path.clone();
    blocking(move || askdesk_rules::append_rule(&path, &text))
        .await?
        .map_err(|e| CommandError::new("refused", rule_draft::error_text(&e)))?;
    if let Some(engine) = rules.0.get() {
        engine.reload().await;
    }
    tracing::info!(path = %saved.display(), "a rule made from an answer was saved");
    Ok(saved.display().to_string())
}

/// Opens the rules file with the system's handler for it ("Open rules file" in the Rules view),
/// creating it first with a commented header and example when it is missing.
#[tauri::command]
pub async fn open_rules_file(app: AppHandle, rules: State<'_, Rules>) -> Result<(), CommandError> {
    let path = rules_path(&rules)?;
    blocking(move || {
        askdesk_rules::create_if_missing(&path)
            .map_err(|e| CommandError::new("failed", rule_draft::error_text(&e)))?;
        app.opener()
            .open_path(path.display().to_string(), None::<&str>)
            .map_err(|e| CommandError::new("failed", e))
    })
    .await?
}

/// The rules file in force: the engine's, else where it would be.
fn rules_path(rules: &Rules) -> Result<PathBuf, CommandError> {
    match rules.0.get() {
        Some(engine) => Ok(engine.path().to_owned()),
        None => file::default_path().map_err(|e| CommandError::new("failed", e)),
    }
}

/// Opens a link from rendered markdown in the system browser (the page asked the human first).
#[tauri::command]
pub async fn open_link(app: AppHandle, url: String) -> Result<(), CommandError> {
    let parsed = tauri::Url::parse(&url).map_err(|e| CommandError::new("refused", e))?;
    if !matches!(parsed.scheme(), "http" | "https" | "mailto") {
        return Err(CommandError::new(
            "refused",
            t!("desktop-command-link-scheme", scheme = parsed.scheme()),
        ));
    }
    blocking(move || app.opener().open_url(parsed.as_str(), None::<&str>))
        .await?
        .map_err(|e| CommandError::new("failed", e))
}

/// Hides the window (Esc); the requests stay queued.
#[tauri::command]
pub fn hide_window(window: WebviewWindow) -> Result<(), CommandError> {
    crate::window::hide(&window.as_ref().window()).map_err(|e| CommandError::new("failed", e))
}

/// The page has painted this request: remembered, so a window rebuilt for no request in
/// particular opens on it again, and logged (at debug level) so the time from an ask to its
/// dialog on screen can be measured from outside (`scripts/bench-desktop.sh`).
#[tauri::command]
pub fn shown(window: State<'_, MainWindow>, request: u64) {
    tracing::debug!(request, "request shown");
    window.shown(RequestId(request));
}

/// The page switched views (queue, History, Rules): remembered, so a window rebuilt for no request
/// in particular opens on it again.
#[tauri::command]
pub fn viewed(window: State<'_, MainWindow>, view: PageView) {
    window.viewed(view);
}

// ----- Connect your agents (`askdesk_connect::overview` decides; these only run it off the
// window's thread) -----

/// The Connect view: each client, whether it is connected, and the first-run flag.
#[tauri::command]
pub async fn get_connect(socket: State<'_, Socket>) -> Result<Overview, CommandError> {
    let socket = socket.0.clone();
    blocking(move || overview::overview(&socket, history_is_empty())).await
}

/// The change Connect (`connect`) or Disconnect would make to `client`'s settings, as a diff.
#[tauri::command]
pub async fn preview_connect(
    socket: State<'_, Socket>,
    client: Agent,
    connect: bool,
) -> Result<Preview, CommandError> {
    let socket = socket.0.clone();
    blocking(move || overview::preview(client, connect, &socket))
        .await?
        .map_err(connect_error)
}

/// Writes the change the page showed as `diff`; refused when it is no longer the change.
#[tauri::command]
pub async fn apply_connect(
    socket: State<'_, Socket>,
    client: Agent,
    connect: bool,
    diff: String,
) -> Result<Applied, CommandError> {
    let socket = socket.0.clone();
    blocking(move || overview::apply(client, connect, &socket, &diff))
        .await?
        .map_err(connect_error)
}

/// Turns starting at login on or off for this user.
#[tauri::command]
pub async fn set_autostart(on: bool) -> Result<Autostart, CommandError> {
    blocking(move || autostart::set(on))
        .await?
        .map_err(connect_error)
}

fn connect_error(error: askdesk_connect::Error) -> CommandError {
    let kind = match error {
        askdesk_connect::Error::Input(_) => "refused",
        _ => "failed",
    };
    CommandError::new(kind, error)
}

/// Whether no question was settled yet: the live journal holds no line (a new journal holds
/// only the spaces kept ahead of its lines).
fn history_is_empty() -> bool {
    use std::io::Read;
    let Ok(dir) = askdesk_journal::default_dir() else {
        return true;
    };
    let mut head = Vec::with_capacity(4096);
    match std::fs::File::open(dir.join(askdesk_journal::FILE_NAME)) {
        Ok(file) => {
            let _ = file.take(4096).read_to_end(&mut head);
            head.iter().all(|b| matches!(b, b' ' | b'\n' | 0))
        }
        Err(_) => true,
    }
}

/// Runs file, journal or desktop work off the window's thread.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CommandError> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| CommandError::new("failed", e))
}

/// The waiting request `request`; the page is told `late` when it has settled meanwhile.
fn waiting(gui: &GuiAnswerer, request: u64) -> Result<Arc<Request>, CommandError> {
    gui.request(RequestId(request))
        .ok_or_else(|| CommandError::new("late", t!("desktop-command-not-waiting")))
}

#[cfg(test)]
mod tests {
    //! The command list is written in four places that must agree: the handler list in `lib.rs`,
    //! `COMMANDS` in `build.rs` (which generates the `allow-<command>` permissions), the capability
    //! file that grants them to the window, and the page's `ui/bridge.js`. A command missing from
    //! one of them fails only at run time, in the window; this test fails at `cargo test`.

    use std::collections::BTreeSet;
    use std::path::Path;

    fn read(relative: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    /// Every `"name"` between `start` and the next `end` in `text`.
    fn quoted_between(text: &str, start: &str, end: &str) -> BTreeSet<String> {
        let rest = text
            .split_once(start)
            .unwrap_or_else(|| panic!("no {start:?}"))
            .1;
        let list = rest
            .split_once(end)
            .unwrap_or_else(|| panic!("no {end:?} after {start:?}"))
            .0;
        list.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }

    /// The `name` of every `prefix + name + suffix` in `text` (names are snake_case identifiers).
    fn names_after(text: &str, prefix: &str, suffix: char) -> BTreeSet<String> {
        text.split(prefix)
            .skip(1)
            .filter_map(|rest| rest.split_once(suffix).map(|(name, _)| name))
            .filter(|name| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn build_rs_the_capability_file_the_handler_list_and_the_page_agree() {
        let build = quoted_between(&read("build.rs"), "const COMMANDS: &[&str] = &[", "];");
        assert!(build.len() >= 8, "COMMANDS was read: {build:?}");

        let capability: serde_json::Value =
            serde_json::from_str(&read("capabilities/default.json"))
                .expect("the capability file is JSON");
        let granted: BTreeSet<String> = capability["permissions"]
            .as_array()
            .expect("a permissions list")
            .iter()
            .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
            .map(|name| name.replace('-', "_"))
            .collect();
        assert_eq!(
            granted, build,
            "capabilities/default.json grants exactly build.rs's COMMANDS"
        );

        // The handler list, in whichever source file of src/ holds it (not its modules' folders).
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let holder = std::fs::read_dir(&src)
            .expect("read src/")
            .map(|entry| entry.expect("an entry").path())
            .filter(|path| path.is_file())
            .map(|path| std::fs::read_to_string(path).expect("read a source file"))
            .find(|text| text.contains(concat!("generate_handler", "![")))
            .expect("a source file with the handler list");
        let handlers = holder
            .split_once(concat!("generate_handler", "!["))
            .expect("the handler list")
            .1;
        let handlers = handlers
            .split_once("])")
            .expect("the end of the handler list")
            .0;
        // The Devices view's commands live beside the hosted remote, in `phone`; the page's
        // catalogue and the language choice in `language`.
        let mut registered = names_after(handlers, "commands::", ',');
        registered.extend(names_after(handlers, "phone::", ','));
        registered.extend(names_after(handlers, "language::", ','));
        assert_eq!(
            registered, build,
            "the handler list registers exactly COMMANDS"
        );

        let page = read("../ui/bridge.js");
        assert_eq!(
            names_after(&page, "invoke('", '\''),
            build,
            "ui/bridge.js invokes exactly COMMANDS"
        );
    }
}
