//! The one window: created when it is needed, hidden when closed, and dropped after it has stayed
//! hidden for a while.
//!
//! A webview costs a WebKit web process of its own (about two thirds of the app's memory), and a
//! page that has just been hidden keeps the engine busy for a while (garbage collections, cache
//! clean-ups), while a tray app spends most of its day hidden. So the window is built on demand
//! (a request arrives, the tray's Open, a second launch, a notification) and destroyed once it has
//! been hidden for [`Settings::drop_window_after`], whether or not requests wait. The web engine's
//! network process, which WebKit would keep for the app's lifetime, is ended a moment after the
//! drop (WebKit starts a new one for the next page). Nothing is lost when they go: the queue lives
//! in the GUI answerer and the page reads it again when it starts, and what the human has chosen
//! and typed in a waiting request is kept there too, as the page's draft
//! ([`GuiAnswerer::save_draft`]), which the next page restores.
//!
//! A window opened because the person asked (a notification's Open, a second launch, the tray)
//! comes forward with their activation token when there is one ([`activation::present`]); one
//! opened for a request that arrived while the person works elsewhere asks for attention instead,
//! and the compositor decides (under Wayland it does not take the focus; see docs/desktop.md).
//!
//! With "show without taking focus" chosen ([`Choices::without_focus`]), a window a request opens
//! is shown without the focus, marked urgent where the window manager shows it; with "notify
//! only" the desktop thread does not open it at all. A window a request opened, not the person
//! (the tray, the launcher, a second launch, a notification), says "Sent" a moment after the last
//! answer and hides itself ([`answered_last`]).
//!
//! The window's size and place are kept by `tauri-plugin-window-state` ([`REMEMBERED`]): it
//! follows the window's moves and resizes, restores them when the window is built again (after a
//! drop or at the next start), and writes them at a drop and on quitting; a place on no current
//! monitor is left alone, so the window opens centred.
//!
//! Every window operation runs on the main thread ([`AppHandle::run_on_main_thread`]), so callers
//! on any thread never wait for it and two opens cannot race.
//!
//! [`Settings::drop_window_after`]: crate::settings::Settings::drop_window_after
//! [`Choices::without_focus`]: crate::settings::Choices::without_focus
//! [`GuiAnswerer::save_draft`]: askdesk_view::answerer::GuiAnswerer::save_draft

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use askdesk_core::RequestId;
use askdesk_view::answerer::GuiAnswerer;
use askdesk_view::page::{self, Focus, PageView, Resume, EVENT_FOCUS, EVENT_RAISED, EVENT_SENT};
use tauri::{
    AppHandle, Emitter, Manager, UserAttentionType, WebviewUrl, WebviewWindowBuilder, Window,
    WindowEvent,
};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

use crate::activation::{self, Token};
use crate::settings::Preferences;
use crate::trim;

/// The label of the one window.
pub const LABEL: &str = "main";
/// How long after a drop the leftover pages are released (the web engine tears down first).
const TRIM_AFTER_DROP: Duration = Duration::from_secs(2);
/// How long after its page loads a window's start-up garbage is returned (`trim::heap_later`):
/// once the page has read the queue and drawn.
const TRIM_AFTER_LOAD: Duration = Duration::from_secs(1);
/// How long a window a request opened says "Sent" before it hides itself.
const SENT_FOR: Duration = Duration::from_millis(1200);
/// What of the window is kept across hides, drops and starts.
pub const REMEMBERED: StateFlags = StateFlags::SIZE
    .union(StateFlags::POSITION)
    .union(StateFlags::MAXIMIZED);

/// The window's lifecycle state, kept in Tauri's state.
pub struct MainWindow {
    drop_after: Option<Duration>,
    /// Bumped whenever the window is opened or hidden, or the person switches views: a drop
    /// planned at an earlier hide, or a hide after "Sent", is void.
    epoch: AtomicU64,
    /// Whether a request opened the window (it was hidden or not built), not the person.
    opened_by_request: AtomicBool,
    /// The request and the view the page showed last: a window rebuilt for no request in
    /// particular opens on them again.
    resume: Resume,
}

impl MainWindow {
    /// `drop_after`: how long the window may stay hidden before it is dropped; `None` keeps it
    /// for the app's lifetime.
    pub fn new(drop_after: Option<Duration>) -> Self {
        MainWindow {
            drop_after,
            epoch: AtomicU64::new(0),
            opened_by_request: AtomicBool::new(false),
            resume: Resume::default(),
        }
    }

    /// The page has shown this request.
    pub fn shown(&self, request: RequestId) {
        self.resume.shown(request);
    }

    /// The page switched to this view: the person is using the window, which stays.
    pub fn viewed(&self, view: PageView) {
        self.resume.viewed(view);
        self.bump();
    }

    fn bump(&self) -> u64 {
        self.epoch.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// Shows the window because the person asked for it, building it first if there is none, and
/// brings `focus` to the front; `token` is the activation token of their action, if it came with
/// one.
pub fn open(app: &AppHandle, focus: Option<RequestId>, token: Option<Token>) {
    open_with(app, focus, false, token);
}

/// Shows the window for a request that just arrived. A window that was hidden (or not built)
/// shows that request, whatever view it was left on; a visible one keeps what the human is
/// looking at (another request, History), and the new request waits in the queue. Nobody asked
/// for the window: one open behind another program asks for attention.
pub fn open_for_new(app: &AppHandle, request: RequestId) {
    open_with(app, Some(request), true, None);
}

fn open_with(
    app: &AppHandle,
    focus: Option<RequestId>,
    only_if_hidden: bool,
    token: Option<Token>,
) {
    let handle = app.clone();
    let ran = app.run_on_main_thread(move || {
        tracing::debug!("window opening");
        // Shown without the focus only when a request opens it and the person chose so.
        let without_focus = only_if_hidden
            && handle
                .try_state::<Preferences>()
                .is_some_and(|p| p.get().without_focus);
        let state = handle.try_state::<MainWindow>();
        if let Some(state) = &state {
            state.bump();
        }
        let window = handle.get_webview_window(LABEL);
        let was_shown = window.as_ref().is_some_and(|window| {
            window.is_visible().unwrap_or(false) && !window.is_minimized().unwrap_or(false)
        });
        // A request that arrives in a window already shown leaves it as it was opened.
        if let Some(state) = &state {
            if !(only_if_hidden && was_shown) {
                state
                    .opened_by_request
                    .store(only_if_hidden, Ordering::SeqCst);
            }
        }
        match window {
            Some(window) => {
                let behind = was_shown && !window.is_focused().unwrap_or(true);
                // A hidden page sees its visibility change; a visible one is told it takes the focus.
                if behind && !without_focus {
                    let _ = handle.emit(EVENT_RAISED, ());
                }
                if without_focus && !was_shown {
                    show_without_focus(&window);
                } else {
                    let _ = window.show();
                }
                let _ = window.unminimize();
                if only_if_hidden && (behind || without_focus) {
                    // Where the compositor allows it (an X11 window manager, mutter and KWin when
                    // they refuse the focus), the window is marked urgent until it has the focus.
                    let _ = window.request_user_attention(Some(UserAttentionType::Informational));
                    tracing::debug!("window asks for attention");
                }
                if !without_focus {
                    bring_forward(&window, token.as_ref());
                }
                match focus {
                    Some(_) if only_if_hidden && was_shown => {}
                    Some(request) => {
                        let _ = handle.emit(EVENT_FOCUS, Focus { request });
                    }
                    None => {}
                }
            }
            None => {
                // A window built for a request shows it; any other resumes where the last page was.
                let address = match (focus, &state) {
                    (Some(request), _) => page::address(Some(request), PageView::Queue),
                    (None, Some(state)) => state.resume.address(),
                    (None, None) => page::address(None, PageView::Queue),
                };
                if let Err(error) = build(&handle, address, token.as_ref(), without_focus) {
                    tracing::warn!(%error, "the window could not be built");
                }
            }
        }
    });
    if let Err(error) = ran {
        tracing::debug!(%error, "the window was not opened");
    }
}

/// Shows a hidden window without taking the focus: the window manager is told not to focus it as
/// it maps it (`_NET_WM_USER_TIME` 0, as EWMH says), and a click into it focuses it as usual.
#[cfg(target_os = "linux")]
fn show_without_focus(window: &tauri::WebviewWindow) {
    use gtk::prelude::*;
    let Ok(gtk_window) = window.gtk_window() else {
        let _ = window.show();
        return;
    };
    gtk_window.set_focus_on_map(false);
    // Once on screen, a later show (the person's) takes the focus again.
    let handler = std::rc::Rc::new(std::cell::Cell::new(None));
    let id = gtk_window.connect_map_event({
        let handler = handler.clone();
        move |gtk_window, _| {
            gtk_window.set_focus_on_map(true);
            if let Some(id) = handler.take() {
                gtk_window.disconnect(id);
            }
            gtk::glib::Propagation::Proceed
        }
    });
    handler.set(Some(id));
    let _ = window.show();
    tracing::debug!("window shown without the focus");
}

#[cfg(not(target_os = "linux"))]
fn show_without_focus(window: &tauri::WebviewWindow) {
    let _ = window.show();
}

/// The last waiting request was answered. A window a request opened (not the person) says
/// "Sent" for a moment and then hides itself, unless meanwhile it was opened again, a request
/// arrived or the person switched views.
pub fn answered_last(app: &AppHandle) {
    let handle = app.clone();
    let ran = app.run_on_main_thread(move || {
        let Some(state) = handle.try_state::<MainWindow>() else {
            return;
        };
        let Some(window) = handle.get_webview_window(LABEL) else {
            return;
        };
        if !state.opened_by_request.load(Ordering::SeqCst) || !window.is_visible().unwrap_or(false)
        {
            return;
        }
        let epoch = state.epoch.load(Ordering::SeqCst);
        let _ = handle.emit(EVENT_SENT, ());
        tracing::debug!("answers sent; the window hides itself");
        later_on_main(&handle, SENT_FOR, move |app| hide_after_sent(app, epoch));
    });
    if let Err(error) = ran {
        tracing::debug!(%error, "the window was not told the answers went");
    }
}

fn hide_after_sent(app: &AppHandle, epoch: u64) {
    let current = app
        .try_state::<MainWindow>()
        .is_some_and(|state| state.epoch.load(Ordering::SeqCst) == epoch);
    let idle = app
        .try_state::<GuiAnswerer>()
        .is_some_and(|gui| gui.queue().is_empty());
    let Some(window) = app.get_webview_window(LABEL) else {
        return;
    };
    if !current || !idle {
        tracing::debug!("the window stays: it was used or a request came");
        return;
    }
    match hide(&window.as_ref().window()) {
        Ok(()) => tracing::debug!("window hidden after sending"),
        Err(error) => tracing::debug!(%error, "the window could not be hidden"),
    }
}

/// Hides the window; the requests stay queued. The window is dropped later if it stays hidden.
pub fn hide(window: &Window) -> tauri::Result<()> {
    window.hide()?;
    plan_drop(window.app_handle());
    Ok(())
}

/// Asks for the focus: with the person's activation token when there is one, else as the app
/// itself (the compositor decides).
fn bring_forward(window: &tauri::WebviewWindow, token: Option<&Token>) {
    let brought = match token {
        Some(token) => activation::present(window, token),
        None => window.set_focus(),
    };
    if let Err(error) = brought {
        tracing::debug!(%error, "the window was not brought forward");
    }
}

/// Closing the window hides it; the app keeps answering from the tray. The focus coming and going
/// is logged at debug level (the tests read it where they cannot see the screen); with the focus,
/// the window no longer asks for attention.
pub fn on_event(window: &Window, event: &WindowEvent) {
    match event {
        WindowEvent::CloseRequested { api, .. } => {
            api.prevent_close();
            if let Err(error) = hide(window) {
                tracing::debug!(%error, "the window could not be hidden");
            }
        }
        WindowEvent::Focused(true) => {
            tracing::debug!("window focused");
            let _ = window.request_user_attention(None);
        }
        WindowEvent::Focused(false) => tracing::debug!("window lost the focus"),
        _ => {}
    }
}

/// Builds the window at `address` (from [`page::address`]) and shows it. The page reads the queue
/// when it starts, and selects the request and view its address names.
fn build(
    app: &AppHandle,
    address: String,
    token: Option<&Token>,
    without_focus: bool,
) -> tauri::Result<()> {
    let theme = app
        .try_state::<crate::settings::Settings>()
        .and_then(|settings| settings.theme);
    let window = WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App(address.into()))
        .title("askdesk")
        .inner_size(1100.0, 760.0)
        .min_inner_size(640.0, 420.0)
        .visible(false)
        // A file dropped on the window reaches the page's own drop event (a picture dropped into
        // an answer, made safe by `attach_image`); the page ignores any other drop.
        .disable_drag_drop_handler()
        // The page never navigates: links open in the system browser through `open_link`.
        .on_navigation(|url| url.scheme() == "tauri" || url.host_str() == Some("tauri.localhost"))
        .on_page_load(|_, payload| {
            tracing::debug!(event = ?payload.event(), "page load");
            if matches!(payload.event(), tauri::webview::PageLoadEvent::Finished) {
                trim::heap_later(TRIM_AFTER_LOAD);
            }
        })
        // The desktop's font by name, before the page's first layout (`font`).
        .initialization_script(crate::font::script())
        .build()?;
    centre_unless_placed(&window);
    // Set on the built window: on Linux the builder's theme gives way to the desktop portal's.
    if theme.is_some() {
        window.set_theme(theme)?;
    }
    if without_focus {
        show_without_focus(&window);
        let _ = window.request_user_attention(Some(UserAttentionType::Informational));
    } else {
        window.show()?;
        bring_forward(&window, token);
    }
    tracing::debug!("window built");
    Ok(())
}

/// Opens the window centred at the size it is shown at, unless it is placed first: the window
/// state plugin restores a kept place (one on a current monitor) before it is shown. (Centred by
/// the builder, it would be centred for the default size, then resized around that corner.)
#[cfg(target_os = "linux")]
fn centre_unless_placed(window: &tauri::WebviewWindow) {
    use gtk::prelude::*;
    match window.gtk_window() {
        Ok(gtk_window) => gtk_window.set_position(gtk::WindowPosition::Center),
        Err(error) => tracing::debug!(%error, "the window is not centred"),
    }
}

#[cfg(not(target_os = "linux"))]
fn centre_unless_placed(window: &tauri::WebviewWindow) {
    let _ = window.center();
}

/// Drops the window after the configured delay if by then it is still hidden and has not been
/// opened again. One timer per hide; none runs while the window is gone.
fn plan_drop(app: &AppHandle) {
    let Some(state) = app.try_state::<MainWindow>() else {
        return;
    };
    let Some(after) = state.drop_after else {
        return;
    };
    let epoch = state.bump();
    later_on_main(app, after, move |app| drop_if_still_hidden(app, epoch));
}

/// Runs `then` on the main thread, where windows are handled, `after` from now.
fn later_on_main(app: &AppHandle, after: Duration, then: impl FnOnce(&AppHandle) + Send + 'static) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(after).await;
        let handle = app.clone();
        if let Err(error) = app.run_on_main_thread(move || then(&handle)) {
            tracing::debug!(%error, "a planned window change was not run");
        }
    });
}

fn end_network_process_if_windowless(app: &AppHandle) {
    if app.get_webview_window(LABEL).is_some() {
        return;
    }
    // A WebDriver session takes the network process's end for a crashed page and deletes itself.
    if std::env::var("TAURI_WEBVIEW_AUTOMATION").as_deref() == Ok("true") {
        tracing::debug!("the network process is kept: the app is driven by WebDriver");
        return;
    }
    match trim::end_network_process() {
        Ok(Some(pid)) => tracing::debug!(pid, "the web engine's network process ended"),
        Ok(None) => {}
        Err(error) => tracing::debug!(%error, "the network process was not ended"),
    }
}

/// Lets the web view go when its window is destroyed.
///
/// The web view layer (wry) connects the page's message handler (`script-message-received`) to
/// the view's user content manager with a closure that holds the view itself, and the view holds
/// its manager until it is finalized: a cycle that destroying the window does not break. Every
/// window dropped would then keep its view, its manager and the manager's shared memory (its user
/// scripts) for the app's lifetime, one file descriptor and about 120 KB per window (measured by
/// building and destroying a window 15 times in a bare Tauri app). Disconnecting the handler
/// breaks the cycle; the page is about to go, so no message is lost. The closure runs on the main
/// thread before the destroy queued after it.
#[cfg(target_os = "linux")]
fn release_webview(window: &tauri::WebviewWindow) {
    use gtk::glib::gobject_ffi;
    use gtk::glib::prelude::*;
    use gtk::glib::subclass::signal::SignalId;
    use gtk::glib::translate::IntoGlib;
    use webkit2gtk::WebViewExt;

    let released = window.with_webview(|platform| {
        let Some(manager) = platform.inner().user_content_manager() else {
            return;
        };
        let Some(signal) = SignalId::lookup("script-message-received", manager.type_()) else {
            return;
        };
        let instance = manager.as_ptr() as *mut gobject_ffi::GObject;
        loop {
            // SAFETY: `instance` is a live GObject (`manager` holds a reference) and `signal` is
            // one of its type's signals; finding and disconnecting handlers by id is what GObject
            // offers for handlers whose id the connecting code did not keep.
            let handler = unsafe {
                gobject_ffi::g_signal_handler_find(
                    instance as *mut _,
                    gobject_ffi::G_SIGNAL_MATCH_ID,
                    signal.into_glib(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if handler == 0 {
                break;
            }
            // SAFETY: as above; `handler` was just found on this instance.
            unsafe { gobject_ffi::g_signal_handler_disconnect(instance as *mut _, handler) };
        }
    });
    if let Err(error) = released {
        tracing::debug!(%error, "the web view's message handler was not released");
    }
}

#[cfg(not(target_os = "linux"))]
fn release_webview(_window: &tauri::WebviewWindow) {}

fn drop_if_still_hidden(app: &AppHandle, epoch: u64) {
    let current = app
        .try_state::<MainWindow>()
        .is_some_and(|state| state.epoch.load(Ordering::SeqCst) == epoch);
    let Some(window) = app.get_webview_window(LABEL) else {
        return;
    };
    if !current || window.is_visible().unwrap_or(true) {
        return;
    }
    release_webview(&window);
    match window.destroy() {
        Ok(()) => tracing::debug!("hidden window dropped"),
        Err(error) => {
            tracing::debug!(%error, "the hidden window could not be dropped");
            return;
        }
    }
    // Its size and place, as last followed, go to disk now: the app may not quit cleanly.
    if let Err(error) = app.save_window_state(REMEMBERED) {
        tracing::debug!(%error, "the window's size and place were not saved");
    }
    // The web engine finishes tearing the page down on this thread once this call returns;
    // release what it leaves resident a moment later, off the main thread.
    let app = app.clone();
    trim::later(TRIM_AFTER_DROP, move || {
        // On the main thread, where windows are made: a window opened since the drop keeps
        // the network process it is using.
        let ended = app.run_on_main_thread({
            let app = app.clone();
            move || end_network_process_if_windowless(&app)
        });
        if let Err(error) = ended {
            tracing::debug!(%error, "the network process was not ended");
        }
        match trim::release_clean_pages() {
            Ok(released) => tracing::debug!(
                mappings = released.mappings,
                bytes = released.bytes,
                "released clean pages"
            ),
            Err(error) => tracing::debug!(%error, "clean pages not released"),
        }
    });
}
