//! The tray icon: how many requests wait (drawn on the icon, and in its tooltip and title), and a
//! menu to open the window, switch do-not-disturb and quit.
//!
//! The icon is a StatusNotifierItem, shown by a tray host (a panel) that owns
//! `org.kde.StatusNotifierWatcher` on the session bus. Without a host, the tray library falls back
//! to a `GtkStatusIcon`, which X11 panels show (XEmbed) but which under Wayland only logs GTK
//! criticals: there the icon waits until a host appears ([`build_where_hosted`]).

use askdesk_view::answerer::GuiAnswerer;
use askdesk_view::badge::{self, Rgba};
use futures_lite::StreamExt;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

use zbus::message::Type;
use zbus::{Connection, MatchRule, MessageStream};

use crate::window;

const TRAY_ID: &str = "askdesk";
/// The name a tray host (the StatusNotifierItem watcher) owns on the session bus.
const TRAY_WATCHER: &str = "org.kde.StatusNotifierWatcher";

/// The menu's check item, kept so do-not-disturb changes from the page show in the menu, and the
/// icon the count is drawn on.
struct TrayItems {
    dnd: CheckMenuItem<Wry>,
    icon: Option<Rgba>,
}

/// Builds the tray icon, under Wayland only once a tray host runs: with none yet, says so once and
/// builds it when one appears (a panel started after the app, as at login).
pub fn build_where_hosted(app: &AppHandle) {
    let hosted = !crate::graphics::is_wayland() || tray_host_running() != Some(false);
    if hosted {
        if let Err(error) = build(app) {
            tracing::warn!(%error, "no tray icon");
        }
        return;
    }
    tracing::info!("no tray host (org.kde.StatusNotifierWatcher) on the session bus: the tray icon is shown once one appears");
    let app = app.clone();
    let waiting = when_tray_host_appears(move || {
        let handle = app.clone();
        let ran = app.run_on_main_thread(move || match build(&handle) {
            Ok(()) => {
                tracing::info!("a tray host appeared: tray icon shown");
                let waiting = handle.state::<GuiAnswerer>().queue().len();
                set_waiting(&handle, waiting);
            }
            Err(error) => tracing::warn!(%error, "no tray icon"),
        });
        if let Err(error) = ran {
            tracing::debug!(%error, "the tray icon was not built");
        }
    });
    if let Err(error) = waiting {
        tracing::debug!(%error, "not waiting for a tray host");
    }
}

/// Whether a tray host is there to show the tray icon: the StatusNotifierItem watcher owns its
/// name on the session bus. `None` when the bus cannot be asked.
fn tray_host_running() -> Option<bool> {
    zbus::block_on(async {
        let connection = Connection::session().await?;
        let proxy = zbus::fdo::DBusProxy::new(&connection).await?;
        Ok::<bool, zbus::Error>(proxy.name_has_owner(TRAY_WATCHER.try_into()?).await?)
    })
    .map_err(|error| tracing::debug!(%error, "the session bus could not be asked for a tray host"))
    .ok()
}

/// Waits on a thread of its own until a tray host appears on the session bus, then runs `then`
/// once (a panel started after the app, as at login).
fn when_tray_host_appears(then: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("askdesk-tray-host".into())
        .spawn(move || {
            let appeared = zbus::block_on(async {
                let connection = Connection::session().await?;
                let rule = MatchRule::builder()
                    .msg_type(Type::Signal)
                    .sender("org.freedesktop.DBus")
                    .interface("org.freedesktop.DBus")
                    .member("NameOwnerChanged")
                    .arg(0, TRAY_WATCHER)
                    .build()?;
                let mut stream = MessageStream::for_match_rule(rule, &connection, None).await?;
                // Asked after subscribing, so a host that came in between is not missed.
                let proxy = zbus::fdo::DBusProxy::new(&connection).await?;
                if proxy.name_has_owner(TRAY_WATCHER.try_into()?).await? {
                    return Ok::<bool, zbus::Error>(true);
                }
                while let Some(message) = stream.next().await {
                    let (_, _, owner) =
                        message?.body().deserialize::<(String, String, String)>()?;
                    if !owner.is_empty() {
                        return Ok(true);
                    }
                }
                Ok(false)
            });
            match appeared {
                Ok(true) => then(),
                Ok(false) => {}
                Err(error) => tracing::debug!(%error, "no longer waiting for a tray host"),
            }
        })?;
    Ok(())
}

/// Builds the tray icon with no requests waiting.
fn build(app: &AppHandle) -> tauri::Result<()> {
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
            // The menu's activation carries no token (neither StatusNotifierItem nor dbusmenu
            // passes one): the compositor decides whether the window comes forward.
            "open" => window::open(app, None, None),
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
    let icon = app.default_window_icon().map(|icon| Rgba {
        width: icon.width(),
        height: icon.height(),
        pixels: icon.rgba().to_vec(),
    });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    app.manage(TrayItems { dnd, icon });
    Ok(())
}

/// Shows how many requests wait.
pub fn set_waiting(app: &AppHandle, waiting: usize) {
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(tooltip(waiting)));
        let _ = tray.set_title((waiting > 0).then(|| waiting.to_string()));
        let icon = app.try_state::<TrayItems>().and_then(|t| t.icon.clone());
        if let Some(icon) = icon {
            let drawn = badge::badged(&icon, waiting);
            if let Err(error) = tray.set_icon(Some(Image::new_owned(
                drawn.pixels,
                drawn.width,
                drawn.height,
            ))) {
                tracing::debug!(%error, "the tray icon was not updated");
            }
        }
    }
}

/// Shows do-not-disturb's state in the menu (it may have been switched from the page).
pub fn set_dnd(app: &AppHandle, on: bool) {
    if let Some(tray) = app.try_state::<TrayItems>() {
        let _ = tray.dnd.set_checked(on);
    }
}

fn tooltip(waiting: usize) -> String {
    match waiting {
        0 => "askdesk — no questions waiting".to_owned(),
        1 => "askdesk — 1 question waiting".to_owned(),
        n => format!("askdesk — {n} questions waiting"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tooltip_counts_waiting_questions() {
        assert_eq!(tooltip(0), "askdesk — no questions waiting");
        assert_eq!(tooltip(1), "askdesk — 1 question waiting");
        assert_eq!(tooltip(7), "askdesk — 7 questions waiting");
    }
}
