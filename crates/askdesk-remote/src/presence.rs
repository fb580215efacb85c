//! Whether the person is at the desk, for "wake the phone only when the desk is idle": the
//! screen locked, or no input for a while, as the desktop session tells it over D-Bus
//! (`org.freedesktop.ScreenSaver` on the session bus, else logind's session hints on the system
//! bus). What a host cannot tell is [`Idle::Unknown`], and the phone is then woken.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zbus::Connection;

/// How the desk is being used, as far as it can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// The screen is locked (or the screen saver runs): the person is away.
    Locked,
    /// The last input was this long ago.
    For(Duration),
    /// Nothing says: no session bus, no screen saver service, no logind session.
    Unknown,
}

impl Idle {
    /// Whether the desk has been idle for at least `minimum`; `None` when it cannot tell.
    pub fn at_least(self, minimum: Duration) -> Option<bool> {
        match self {
            Idle::Locked => Some(true),
            Idle::For(idle) => Some(idle >= minimum),
            Idle::Unknown => None,
        }
    }
}

/// Where the remote asks how the desk is used; asked on a blocking thread, once for each request
/// offered while "only when the desk is idle" is set.
#[derive(Clone)]
pub struct Presence(Arc<dyn Fn() -> Idle + Send + Sync>);

impl Presence {
    /// A source of the host's choosing (a test's, say).
    pub fn new(source: impl Fn() -> Idle + Send + Sync + 'static) -> Presence {
        Presence(Arc::new(source))
    }

    /// A host that cannot tell ([`Idle::Unknown`] always).
    pub fn unknown() -> Presence {
        Presence::new(|| Idle::Unknown)
    }

    /// The desktop session, over D-Bus ([`session_idle`]).
    pub fn session() -> Presence {
        Presence::new(session_idle)
    }

    pub fn idle(&self) -> Idle {
        (self.0)()
    }
}

impl Default for Presence {
    fn default() -> Self {
        Presence::unknown()
    }
}

impl fmt::Debug for Presence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Presence")
    }
}

const SCREEN_SAVER: &str = "org.freedesktop.ScreenSaver";
const LOGIN1: &str = "org.freedesktop.login1";
const LOGIN1_SESSION: &str = "org.freedesktop.login1.Session";

/// The desktop session's idleness, blocking: the session bus's `org.freedesktop.ScreenSaver`
/// (`GetActive`: locked; `GetSessionIdleTime`: seconds since the last input, as KDE Plasma and
/// other freedesktop screen savers answer), else logind's `LockedHint`, and `IdleHint` with
/// `IdleSinceHint` when it says idle (GNOME sets them; a session nothing manages says "not idle"
/// for ever, so "not idle" from logind is taken as unknown). [`Idle::Unknown`] when none answers.
pub fn session_idle() -> Idle {
    zbus::block_on(async {
        if let Ok(connection) = Connection::session().await {
            if let Some(idle) = screen_saver(&connection).await {
                return idle;
            }
        }
        logind().await.unwrap_or(Idle::Unknown)
    })
}

/// The screen saver's answer on `connection`'s bus; `None` when it gives no idle time.
async fn screen_saver(connection: &Connection) -> Option<Idle> {
    let call = |method: &'static str| {
        let connection = connection.clone();
        async move {
            connection
                .call_method(
                    Some(SCREEN_SAVER),
                    "/org/freedesktop/ScreenSaver",
                    Some(SCREEN_SAVER),
                    method,
                    &(),
                )
                .await
        }
    };
    let active = call("GetActive")
        .await
        .ok()
        .and_then(|reply| reply.body().deserialize::<bool>().ok());
    if active == Some(true) {
        return Some(Idle::Locked);
    }
    let seconds = call("GetSessionIdleTime")
        .await
        .ok()
        .and_then(|reply| reply.body().deserialize::<u32>().ok())?;
    Some(Idle::For(Duration::from_secs(u64::from(seconds))))
}

async fn logind() -> Option<Idle> {
    let connection = Connection::system().await.ok()?;
    let properties = zbus::fdo::PropertiesProxy::builder(&connection)
        .destination(LOGIN1)
        .path("/org/freedesktop/login1/session/auto")
        .build()
        .await
        .ok()?;
    let interface = zbus::names::InterfaceName::from_static_str_unchecked(LOGIN1_SESSION);
    let flag = |name: &'static str| {
        let properties = properties.clone();
        let interface = interface.clone();
        async move {
            let value = properties.get(interface, name).await.ok()?;
            bool::try_from(value).ok()
        }
    };
    if flag("LockedHint").await == Some(true) {
        return Some(Idle::Locked);
    }
    if flag("IdleHint").await != Some(true) {
        return None;
    }
    let since = properties
        .get(interface.clone(), "IdleSinceHint")
        .await
        .ok()
        .and_then(|value| u64::try_from(value).ok())?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_micros();
    let idle = now.saturating_sub(u128::from(since));
    Some(Idle::For(Duration::from_micros(
        u64::try_from(idle).unwrap_or(u64::MAX),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use std::io::{BufRead, BufReader};
    use std::process::{Child, Command, Stdio};
    use zbus::message::{Message, Type};

    /// A private session bus (`dbus-daemon`, as the desktop tests start one), stopped on drop.
    struct Bus {
        daemon: Child,
        address: String,
    }

    impl Drop for Bus {
        fn drop(&mut self) {
            let _ = self.daemon.kill();
            let _ = self.daemon.wait();
        }
    }

    fn private_bus() -> Bus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon runs (the desktop tests need it too)");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        Bus {
            daemon,
            address: address.trim().to_owned(),
        }
    }

    async fn connect(bus: &Bus) -> Connection {
        zbus::connection::Builder::address(bus.address.as_str())
            .build()
            .await
            .unwrap()
    }

    /// A screen saver on `bus` that answers `GetActive` with `active` and `GetSessionIdleTime`
    /// with `idle_seconds` (or, with `None`, "not supported", as GNOME's does).
    async fn serve_screen_saver(bus: &Bus, active: bool, idle_seconds: Option<u32>) -> Connection {
        let connection = connect(bus).await;
        let mut calls = zbus::MessageStream::from(&connection);
        connection.request_name(SCREEN_SAVER).await.unwrap();
        let serving = connection.clone();
        tokio::spawn(async move {
            while let Some(Ok(call)) = calls.next().await {
                let header = call.header();
                if header.message_type() != Type::MethodCall
                    || header.interface().map(|i| i.as_str()) != Some(SCREEN_SAVER)
                {
                    continue;
                }
                let reply = match (header.member().map(|m| m.as_str()), idle_seconds) {
                    (Some("GetActive"), _) => Message::method_return(&header).build(&(active,)),
                    (Some("GetSessionIdleTime"), Some(seconds)) => {
                        Message::method_return(&header).build(&(seconds,))
                    }
                    _ => Message::error(&header, "org.freedesktop.DBus.Error.NotSupported")
                        .build(&("not supported",)),
                };
                serving.send(&reply.unwrap()).await.unwrap();
            }
        });
        connection
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_screen_saver_tells_a_locked_screen_and_the_time_since_the_last_input() {
        let bus = private_bus();
        let client = connect(&bus).await;
        assert_eq!(
            screen_saver(&client).await,
            None,
            "no screen saver on the bus"
        );
        let locked = serve_screen_saver(&bus, true, Some(3)).await;
        assert_eq!(screen_saver(&client).await, Some(Idle::Locked));
        drop(locked);
        let other = private_bus();
        let client = connect(&other).await;
        let _idle = serve_screen_saver(&other, false, Some(400)).await;
        assert_eq!(
            screen_saver(&client).await,
            Some(Idle::For(Duration::from_secs(400)))
        );
        let gnome_like = private_bus();
        let client = connect(&gnome_like).await;
        let _unsupported = serve_screen_saver(&gnome_like, false, None).await;
        assert_eq!(screen_saver(&client).await, None, "no idle time, no answer");
    }

    #[test]
    fn idleness_is_judged_against_the_chosen_minimum() {
        let five = Duration::from_secs(300);
        assert_eq!(Idle::Locked.at_least(five), Some(true));
        assert_eq!(Idle::For(five).at_least(five), Some(true));
        assert_eq!(
            Idle::For(Duration::from_secs(299)).at_least(five),
            Some(false)
        );
        assert_eq!(Idle::Unknown.at_least(five), None);
        assert_eq!(Presence::new(|| Idle::Locked).idle(), Idle::Locked);
        assert_eq!(Presence::default().idle(), Idle::Unknown);
    }
}
