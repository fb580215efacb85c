//! The tray icon: how many requests wait (drawn on the icon, and in its tooltip and title), and a
//! menu to open the window, switch do-not-disturb and quit.

use askdesk_view::answerer::GuiAnswerer;
use askdesk_view::badge::{self, Rgba};
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

use crate::window;

const TRAY_ID: &str = "askdesk";

/// The menu's check item, kept so do-not-disturb changes from the page show in the menu, and the
/// icon the count is drawn on.
struct TrayItems {
    dnd: CheckMenuItem<Wry>,
    icon: Option<Rgba>,
}

/// Builds the tray icon with no requests waiting.
pub fn build(app: &AppHandle) -> tauri::Result<()> {
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
            "open" => window::open(app, None),
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
