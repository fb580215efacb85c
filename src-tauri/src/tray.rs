//! The tray icon: how many requests wait (drawn on the icon, and in its tooltip and title), and a
//! menu to open the window, switch do-not-disturb and quit.
//!
//! Where a tray host (a panel) owns `org.kde.StatusNotifierWatcher` on the session bus, the icon is
//! askdesk's own StatusNotifierItem (`Item`, with ksni): the host passes the person's activation
//! token along with a click (`ProvideXdgActivationToken`), and Open presents the window with it, so
//! a compositor that checks tokens brings it forward. Without a host, under X11, the icon is Tauri's
//! (libayatana-appindicator), whose `GtkStatusIcon` fallback X11 panels show (XEmbed); under Wayland,
//! which cannot show that fallback, the icon waits until a host appears ([`build_where_hosted`]).

use askdesk_i18n::t;
use askdesk_view::answerer::GuiAnswerer;
use askdesk_view::badge::{self, Rgba};
use futures_lite::StreamExt;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};

use crate::activation::Token;

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
    let host = tray_host_running();
    if host == Some(true) {
        spawn_item(app);
        return;
    }
    if !crate::graphics::is_wayland() {
        if let Err(error) = build(app) {
            tracing::warn!(%error, "no tray icon");
        }
        return;
    }
    tracing::info!("no tray host (org.kde.StatusNotifierWatcher) on the session bus: the tray icon is shown once one appears");
    let app = app.clone();
    if let Err(error) = when_tray_host_appears(move || spawn_item(&app)) {
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
    let open = MenuItem::with_id(app, "open", t!("tray-open"), true, None::<&str>)?;
    let dnd = CheckMenuItem::with_id(app, "dnd", t!("tray-dnd"), true, false, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", t!("tray-quit"), true, None::<&str>)?;
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
            // libayatana passes no token along: the window manager decides whether the window
            // comes forward (this icon is only built under X11).
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
    let icon = default_icon(app);
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    app.manage(TrayItems { dnd, icon });
    Ok(())
}

/// Shows how many requests wait.
pub fn set_waiting(app: &AppHandle, waiting: usize) {
    update_item(app, move |item| item.waiting = waiting);
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
    update_item(app, move |item| item.dnd = on);
    if let Some(tray) = app.try_state::<TrayItems>() {
        let _ = tray.dnd.set_checked(on);
    }
}

/// Changes askdesk's own item, if it is shown; the tray host hears of it.
fn update_item(app: &AppHandle, change: impl FnOnce(&mut Item) + Send + 'static) {
    if let Some(item) = app.try_state::<ItemHandle>() {
        let handle = item.0.clone();
        tauri::async_runtime::spawn(async move {
            handle.update(change).await;
        });
    }
}

/// askdesk's own StatusNotifierItem, shown by a tray host: the icon with the count, the tooltip,
/// the menu, and the person's activation token with their click.
struct Item {
    app: AppHandle,
    waiting: usize,
    dnd: bool,
    icon: Option<Rgba>,
}

/// The running item, kept to update its count and do-not-disturb mark.
struct ItemHandle(ksni::Handle<Item>);

/// How long Open waits for the tray host's token after the click: KDE Plasma may send it just
/// after the click rather than before (ksni's note on `current_xdg_activation_token`).
const TOKEN_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

impl Item {
    /// Opens the window because the person clicked the icon or Open, with the token the tray host
    /// gave for that click, if it gave one.
    fn open(&self) {
        let token = person_token();
        tracing::debug!(token = token.is_some(), "tray item opened the window");
        window::open(&self.app, None, token);
    }
}

/// The activation token of the tray event being handled, waiting up to [`TOKEN_WAIT`] for it.
fn person_token() -> Option<Token> {
    let until = std::time::Instant::now() + TOKEN_WAIT;
    loop {
        if let Some(token) = ksni::current_xdg_activation_token().and_then(Token::new) {
            return Some(token);
        }
        if std::time::Instant::now() >= until {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

impl ksni::Tray for Item {
    fn id(&self) -> String {
        TRAY_ID.to_owned()
    }

    fn title(&self) -> String {
        "askdesk".to_owned()
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        ksni::ToolTip {
            title: tooltip(self.waiting),
            ..Default::default()
        }
    }

    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        self.icon
            .as_ref()
            .map(|icon| vec![argb(&badge::badged(icon, self.waiting))])
            .unwrap_or_default()
    }

    fn activate(&mut self, _x: i32, _y: i32) {
        self.open();
    }

    fn menu(&self) -> Vec<ksni::MenuItem<Self>> {
        use ksni::menu::{CheckmarkItem, StandardItem};
        vec![
            StandardItem {
                label: t!("tray-open"),
                activate: Box::new(|item: &mut Self| item.open()),
                ..Default::default()
            }
            .into(),
            ksni::MenuItem::Separator,
            CheckmarkItem {
                label: t!("tray-dnd"),
                checked: self.dnd,
                activate: Box::new(|item: &mut Self| {
                    item.dnd = !item.dnd;
                    item.app.state::<GuiAnswerer>().set_dnd(item.dnd);
                }),
                ..Default::default()
            }
            .into(),
            ksni::MenuItem::Separator,
            StandardItem {
                label: t!("tray-quit"),
                activate: Box::new(|item: &mut Self| item.app.exit(0)),
                ..Default::default()
            }
            .into(),
        ]
    }
}

/// The icon as StatusNotifierItem carries it: ARGB32, each pixel's bytes in network order.
fn argb(icon: &Rgba) -> ksni::Icon {
    let data = icon
        .pixels
        .chunks_exact(4)
        .flat_map(|p| [p[3], p[0], p[1], p[2]])
        .collect();
    ksni::Icon {
        width: icon.width as i32,
        height: icon.height as i32,
        data,
    }
}

/// Registers askdesk's own item with the tray host, showing what waits now.
fn spawn_item(app: &AppHandle) {
    let item = Item {
        app: app.clone(),
        waiting: app.state::<GuiAnswerer>().queue().len(),
        dnd: app.state::<GuiAnswerer>().dnd(),
        icon: default_icon(app),
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        match ksni::TrayMethods::spawn(item).await {
            Ok(handle) => {
                app.manage(ItemHandle(handle));
                tracing::info!("tray icon shown (a StatusNotifierItem, with the tray host's activation tokens)");
            }
            Err(error) => tracing::warn!(%error, "no tray icon"),
        }
    });
}

fn default_icon(app: &AppHandle) -> Option<Rgba> {
    app.default_window_icon().map(|icon| Rgba {
        width: icon.width(),
        height: icon.height(),
        pixels: icon.rgba().to_vec(),
    })
}

fn tooltip(waiting: usize) -> String {
    t!("tray-waiting", waiting = waiting)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_carries_its_icon_as_argb_in_network_order() {
        let icon = Rgba {
            width: 2,
            height: 1,
            pixels: vec![0x11, 0x22, 0x33, 0x44, 0xaa, 0xbb, 0xcc, 0xdd],
        };
        let carried = argb(&icon);
        assert_eq!((carried.width, carried.height), (2, 1));
        assert_eq!(
            carried.data,
            [0x44, 0x11, 0x22, 0x33, 0xdd, 0xaa, 0xbb, 0xcc]
        );
    }

    #[test]
    fn the_tooltip_counts_waiting_questions() {
        assert_eq!(tooltip(0), "askdesk — no questions waiting");
        assert_eq!(tooltip(1), "askdesk — 1 question waiting");
        assert_eq!(tooltip(7), "askdesk — 7 questions waiting");
    }
}
