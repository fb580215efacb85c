//! Bringing the window forward only when the person asked for it: the activation token of their
//! action (a notification's action, a second launch), and the window presented with it.
//!
//! Under Wayland an app may not take the focus on its own: the compositor raises a window only with
//! an activation token that stands for the person's own input (xdg-activation), and checks it
//! (GNOME's mutter, KDE's KWin, sway). GTK, asked to present a window without one, requests a token
//! with the app's own last input serial, which a checking compositor turns into "demands attention"
//! (mutter, KWin) or ignores (sway). So where the person acted, their token is passed along:
//!
//! - a notification's action: the notification server sends `ActivationToken(id, token)` just
//!   before `ActionInvoked(id, key)` (freedesktop notifications 1.2); notify-rust does not surface
//!   it, so [`listen_to_notifications`] reads both from the session bus, in the order sent, and
//!   [`notification_token`] gives the one that came with an action;
//! - a second launch: the `XDG_ACTIVATION_TOKEN` (or, on X11, `DESKTOP_STARTUP_ID`) its launcher set
//!   ([`Token::from_launch_env`]), sent along with `askdesk/focus`.
//!
//! [`present`] hands the token to GTK before it presents the window. Where nobody acted (an agent
//! asks while the person works elsewhere) there is no token, and the window asks for attention
//! instead (`window`).
//!
//! Like notify-rust's `ActionInvoked`, the `ActivationToken` signal is taken from any sender on the
//! session bus: such a peer runs as the same user, and a token can only bring the window forward,
//! which that user's second launch does too.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use askdesk_core::sync::lock;
use futures_lite::StreamExt;
use zbus::message::Type;
use zbus::{Connection, MatchRule, MessageStream};

/// The environment variable a Wayland launcher passes the activation token in.
const XDG_ACTIVATION_TOKEN: &str = "XDG_ACTIVATION_TOKEN";
/// The environment variable an X11 launcher (startup notification) passes the startup id in.
const DESKTOP_STARTUP_ID: &str = "DESKTOP_STARTUP_ID";
/// The longest token taken; the compositors' are a few dozen bytes.
const MAX_TOKEN_BYTES: usize = 1024;
/// The freedesktop notifications interface and its signals.
const NOTIFICATIONS: &str = "org.freedesktop.Notifications";
const ACTIVATION_TOKEN: &str = "ActivationToken";
const ACTION_INVOKED: &str = "ActionInvoked";
/// The notifications whose token or action is remembered; older ones are forgotten.
const REMEMBERED: usize = 32;
/// How long an action's thread waits for the listener to see the same `ActionInvoked`: both
/// connections get it from the bus at once, so this bounds a listener that has stopped.
const ACTION_WAIT: Duration = Duration::from_secs(1);

/// An activation token: opaque text from the compositor, passed on as it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token as received; `None` for one that is empty, too long or holds control characters
    /// (it could not be handed to GTK, and no compositor makes such tokens).
    pub fn new(token: impl Into<String>) -> Option<Token> {
        let token = token.into();
        let sound = !token.is_empty()
            && token.len() <= MAX_TOKEN_BYTES
            && !token.chars().any(char::is_control);
        sound.then_some(Token(token))
    }

    /// The token this process was launched with: `XDG_ACTIVATION_TOKEN`, else `DESKTOP_STARTUP_ID`.
    pub fn from_launch_env() -> Option<Token> {
        Self::from_env_values(
            std::env::var(XDG_ACTIVATION_TOKEN).ok(),
            std::env::var(DESKTOP_STARTUP_ID).ok(),
        )
    }

    fn from_env_values(xdg: Option<String>, startup: Option<String>) -> Option<Token> {
        xdg.and_then(Token::new)
            .or_else(|| startup.and_then(Token::new))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// What the listener has read from the notification server.
#[derive(Default)]
struct Heard {
    /// `ActivationToken` signals, newest last.
    tokens: VecDeque<(u32, Token)>,
    /// Notifications whose `ActionInvoked` has been read, newest last.
    invoked: VecDeque<u32>,
    /// Whether the listener is subscribed (and has not stopped).
    listening: bool,
}

impl Heard {
    fn token(&mut self, id: u32) -> Option<Token> {
        let at = self.tokens.iter().rposition(|(n, _)| *n == id)?;
        self.tokens.remove(at).map(|(_, token)| token)
    }

    fn hear(&mut self, member: &str, id: u32, token: Option<String>) {
        match (member, token.and_then(Token::new)) {
            (ACTIVATION_TOKEN, Some(token)) => push_bounded(&mut self.tokens, (id, token)),
            (ACTION_INVOKED, _) => push_bounded(&mut self.invoked, id),
            _ => {}
        }
    }
}

fn push_bounded<T>(queue: &mut VecDeque<T>, item: T) {
    if queue.len() == REMEMBERED {
        queue.pop_front();
    }
    queue.push_back(item);
}

/// The listener's findings and the condition an action's thread waits on.
struct Notifications {
    heard: Mutex<Heard>,
    changed: Condvar,
}

fn notifications() -> &'static Arc<Notifications> {
    static NOTIFICATIONS_HEARD: OnceLock<Arc<Notifications>> = OnceLock::new();
    NOTIFICATIONS_HEARD.get_or_init(|| {
        Arc::new(Notifications {
            heard: Mutex::new(Heard::default()),
            changed: Condvar::new(),
        })
    })
}

/// Starts reading the notification server's `ActivationToken` and `ActionInvoked` signals on a
/// thread of its own. Without a session bus it logs why and [`notification_token`] finds none.
pub fn listen_to_notifications() -> std::io::Result<()> {
    let shared = notifications().clone();
    std::thread::Builder::new()
        .name("askdesk-activation".into())
        .spawn(move || {
            if let Err(error) = zbus::block_on(listen(&shared)) {
                tracing::debug!(%error, "notification activation tokens are not read");
            }
            lock(&shared.heard).listening = false;
            shared.changed.notify_all();
        })?;
    Ok(())
}

async fn listen(shared: &Notifications) -> zbus::Result<()> {
    let connection = Connection::session().await?;
    let rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .interface(NOTIFICATIONS)
        .build()?;
    let mut stream = MessageStream::for_match_rule(rule, &connection, None).await?;
    lock(&shared.heard).listening = true;
    while let Some(message) = stream.next().await {
        let message = message?;
        let header = message.header();
        let Some(member) = header.member().map(|m| m.to_string()) else {
            continue;
        };
        let heard = match member.as_str() {
            ACTIVATION_TOKEN => message
                .body()
                .deserialize::<(u32, String)>()
                .map(|(id, token)| (id, Some(token))),
            ACTION_INVOKED => message
                .body()
                .deserialize::<(u32, String)>()
                .map(|(id, _)| (id, None)),
            _ => continue,
        };
        if let Ok((id, token)) = heard {
            lock(&shared.heard).hear(&member, id, token);
            shared.changed.notify_all();
        }
    }
    Ok(())
}

/// The activation token the notification server sent with the person's action on notification
/// `id`, if it sent one. Called once the action is known: waits until the listener has read the
/// same `ActionInvoked` (the token comes before it), at most `ACTION_WAIT`.
pub fn notification_token(id: u32) -> Option<Token> {
    let shared = notifications();
    let until = Instant::now() + ACTION_WAIT;
    let mut heard = lock(&shared.heard);
    while heard.listening && !heard.invoked.contains(&id) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        heard = match shared.changed.wait_timeout(heard, left) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
    // Forgotten once used: a restarted server numbers its notifications from 1 again.
    if let Some(at) = heard.invoked.iter().position(|&n| n == id) {
        heard.invoked.remove(at);
    }
    heard.token(id)
}

/// Presents the window with the person's activation token: the compositor raises it and gives it
/// the focus. Runs on the main thread.
#[cfg(target_os = "linux")]
pub fn present(window: &tauri::WebviewWindow, token: &Token) -> tauri::Result<()> {
    use gtk::prelude::*;

    let gtk_window = window.gtk_window()?;
    // GTK keeps the id for the window's next present: under Wayland the token of
    // xdg_activation_v1.activate, under X11 the launch's time (`_TIME<n>`) for the window
    // manager's focus-stealing prevention.
    gtk_window.set_startup_id(token.as_str());
    gtk_window.present();
    tracing::debug!("window presented with an activation token");
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn present(window: &tauri::WebviewWindow, _token: &Token) -> tauri::Result<()> {
    window.set_focus()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_taken_as_it_came() {
        let token = Token::new("mutter-1234-abcdef_TIME42").expect("a sound token");
        assert_eq!(token.as_str(), "mutter-1234-abcdef_TIME42");
    }

    #[test]
    fn a_token_gtk_could_not_take_is_refused() {
        assert_eq!(Token::new(""), None);
        assert_eq!(Token::new("abc\0def"), None, "a NUL would cut it short");
        assert_eq!(Token::new("abc\ndef"), None);
        assert_eq!(Token::new("a".repeat(MAX_TOKEN_BYTES + 1)), None);
        assert!(Token::new("a".repeat(MAX_TOKEN_BYTES)).is_some());
    }

    #[test]
    fn the_wayland_token_comes_before_the_x11_startup_id() {
        let both = Token::from_env_values(Some("wayland".into()), Some("x11_TIME1".into()));
        assert_eq!(both.unwrap().as_str(), "wayland");
        let x11 = Token::from_env_values(None, Some("x11_TIME1".into()));
        assert_eq!(x11.unwrap().as_str(), "x11_TIME1");
        let empty_wayland = Token::from_env_values(Some(String::new()), Some("x11_TIME1".into()));
        assert_eq!(empty_wayland.unwrap().as_str(), "x11_TIME1");
        assert_eq!(Token::from_env_values(None, None), None);
    }

    #[test]
    fn a_token_goes_with_its_own_notification_only() {
        let mut heard = Heard::default();
        heard.hear(ACTIVATION_TOKEN, 7, Some("seven".into()));
        heard.hear(ACTION_INVOKED, 7, None);
        heard.hear(ACTION_INVOKED, 8, None);
        assert_eq!(heard.token(8), None, "notification 8 came without a token");
        assert_eq!(heard.token(7).unwrap().as_str(), "seven");
        assert_eq!(heard.token(7), None, "a token is used once");
    }

    #[test]
    fn a_malformed_token_signal_is_dropped() {
        let mut heard = Heard::default();
        heard.hear(ACTIVATION_TOKEN, 3, Some("bad\0token".into()));
        heard.hear(ACTIVATION_TOKEN, 4, None);
        assert_eq!(heard.token(3), None);
        assert_eq!(heard.token(4), None);
    }

    #[test]
    fn only_the_newest_notifications_are_remembered() {
        let mut heard = Heard::default();
        for id in 0..(REMEMBERED as u32 + 5) {
            heard.hear(ACTIVATION_TOKEN, id, Some(format!("t{id}")));
            heard.hear(ACTION_INVOKED, id, None);
        }
        assert_eq!(heard.tokens.len(), REMEMBERED);
        assert_eq!(heard.invoked.len(), REMEMBERED);
        assert_eq!(heard.token(0), None, "the oldest is forgotten");
        let newest = REMEMBERED as u32 + 4;
        assert_eq!(heard.token(newest).unwrap().as_str(), format!("t{newest}"));
    }

    #[test]
    fn without_a_listener_an_action_finds_no_token() {
        // The listener is not started in unit tests.
        assert!(!lock(&notifications().heard).listening);
        assert_eq!(notification_token(99), None);
    }
}
