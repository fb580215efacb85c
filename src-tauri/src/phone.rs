//! "Answer from your phone": the remote (`askdesk_remote`) hosted in the app's own broker as an
//! answerer of the `person` race group beside the dialog, its settings (off by default, kept in
//! `$XDG_CONFIG_HOME/askdesk/phone.json`), this machine's addresses to choose from, pairing a
//! phone from the desk, and the paired devices: what the Devices view shows and does.
//!
//! Off, nothing of the remote exists: no socket, no task. On, it waits in `accept` and on the
//! pairing claims, with no timer; stopping it closes every socket.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use askdesk_core::{AnswererId, AnswererRegistration, Scope, Service};
use askdesk_i18n::t;
use askdesk_remote::answerer::{RemoteAnswerer, LABEL};
use askdesk_remote::push::QuietHours;
use askdesk_remote::{
    bind, CertificateSource, Device, DeviceStore, PairingId, Presence, Remote, RemoteConfig,
};
use serde::{Deserialize, Serialize};
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Emitter, State};

use crate::commands::{blocking, CommandError};

/// The page hears a phone's claim of the pairing it shows: `{ id, name, code }`.
pub const EVENT_CLAIM: &str = "phone-claim";
/// The port offered until the person picks another.
pub const DEFAULT_PORT: u16 = 8443;
/// The quiet zone around a QR code, in modules, as the standard asks.
const QUIET_ZONE: usize = 4;

/// The person's choices, as `phone.json` keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneSettings {
    /// "Answer from your phone".
    #[serde(default)]
    pub enabled: bool,
    /// The one address to listen on; `None` until chosen (the view proposes the tailnet's, else
    /// the LAN's).
    #[serde(default)]
    pub address: Option<IpAddr>,
    #[serde(default = "default_port")]
    pub port: u16,
    /// The person's own certificate chain and key (PEM); both or neither.
    #[serde(default)]
    pub certificate: Option<PathBuf>,
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// Show a text or choice question itself on the phone's lock screen (never a plan's or a
    /// permission prompt's content); off: only "An agent is waiting (N)".
    #[serde(default)]
    pub show_questions: bool,
    /// No phone is woken in these hours of the local day (`"22:00-07:00"`).
    #[serde(default)]
    pub quiet_hours: Option<QuietHours>,
    /// Wake a phone only once this desk has been idle this many minutes, or its screen is locked.
    #[serde(default)]
    pub only_when_idle: Option<u64>,
}

/// The longest "only when this desk is idle" offered: a day, in minutes.
const MAX_IDLE_MINUTES: u64 = 24 * 60;

fn default_port() -> u16 {
    DEFAULT_PORT
}

impl Default for PhoneSettings {
    fn default() -> Self {
        PhoneSettings {
            enabled: false,
            address: None,
            port: DEFAULT_PORT,
            certificate: None,
            key: None,
            show_questions: false,
            quiet_hours: None,
            only_when_idle: None,
        }
    }
}

/// One of this machine's addresses, with what kind of network it is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    pub ip: IpAddr,
    /// `tailnet` (100.64.0.0/10), `lan` (a private range), `loopback` (this computer only) or
    /// `other`.
    pub kind: &'static str,
    pub interface: String,
}

/// A QR code drawn in Rust: an SVG path of its dark modules on a `size`×`size` grid (quiet zone
/// included), which the page places in an `<svg>` without parsing any markup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Qr {
    pub size: usize,
    pub path: String,
}

/// The remote while it runs, as the view shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    /// `https://<address>:<port>`.
    pub origin: String,
    /// Served from askdesk's own authority: a phone trusts the origin only once it installed it.
    pub own_authority: bool,
    /// The page explaining how to install the authority, and its QR (own authority only).
    pub install_url: Option<String>,
    pub install_qr: Option<Qr>,
}

/// A paired device as the Devices view lists it (times in milliseconds since the epoch).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceView {
    pub name: String,
    pub paired_at: u64,
    pub last_seen: Option<u64>,
    /// Whether it has a passkey (needed to allow a permission prompt from it).
    pub passkey: bool,
    /// Whether the desk allows it to register a passkey now.
    pub passkey_allowed: bool,
    /// Whether the phone is woken: `on`, `off`, or `dropped` by its push service.
    pub push: &'static str,
    /// When its push service dropped it, and what it answered (404 or 410).
    pub push_dropped_at: Option<u64>,
    pub push_dropped_status: Option<u16>,
}

/// The Devices view.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneView {
    pub settings: PhoneSettings,
    pub addresses: Vec<Address>,
    pub running: Option<Running>,
    /// Why the remote is not running although it is on (the address is gone, the port is taken,
    /// the certificate does not fit).
    pub problem: Option<String>,
    pub devices: Vec<DeviceView>,
}

/// A pairing offer as the page shows it: the URL only as a QR code (its token is a secret).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingView {
    pub id: u64,
    pub qr: Qr,
    pub seconds: u64,
}

/// [`EVENT_CLAIM`]'s payload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimView {
    pub id: u64,
    pub name: String,
    pub code: String,
}

/// The hosted remote, in Tauri's state.
pub struct Phone {
    service: Service,
    /// An async mutex, held across a start or a stop so that switching on and off happens one at
    /// a time; only the Devices view's commands take it, never the broker.
    state: tokio::sync::Mutex<Hosting>,
}

#[derive(Default)]
struct Hosting {
    settings: PhoneSettings,
    running: Option<Hosted>,
    problem: Option<String>,
}

struct Hosted {
    remote: Remote,
    answerer: AnswererId,
    server: JoinHandle<()>,
    claims: JoinHandle<()>,
}

impl Phone {
    /// The settings are read here; the remote starts with [`Phone::start_if_on`].
    pub fn new(service: Service) -> Phone {
        let settings = read_settings().unwrap_or_else(|error| {
            tracing::warn!(%error, "the phone settings cannot be read; the remote stays off");
            PhoneSettings::default()
        });
        Phone {
            service,
            state: tokio::sync::Mutex::new(Hosting {
                settings,
                ..Hosting::default()
            }),
        }
    }

    /// Starts the remote when the settings say so (at start-up).
    pub async fn start_if_on(&self, app: &AppHandle) {
        let mut hosting = self.state.lock().await;
        if hosting.settings.enabled {
            self.restart(&mut hosting, app).await;
        }
    }

    /// Stops whatever runs, then starts the remote as the settings say.
    async fn restart(&self, hosting: &mut Hosting, app: &AppHandle) {
        if let Some(hosted) = hosting.running.take() {
            self.stop(hosted).await;
        }
        hosting.problem = None;
        if !hosting.settings.enabled {
            return;
        }
        match self.start(&hosting.settings, app).await {
            Ok(hosted) => hosting.running = Some(hosted),
            Err(problem) => {
                tracing::warn!(%problem, "the remote cannot serve phones");
                hosting.problem = Some(problem);
            }
        }
    }

    async fn start(&self, settings: &PhoneSettings, app: &AppHandle) -> Result<Hosted, String> {
        let address = settings
            .address
            .ok_or_else(|| t!("desktop-phone-choose-address"))?;
        let dir = askdesk_remote::files::default_dir().map_err(|e| e.to_string())?;
        let mut config = RemoteConfig::new(SocketAddr::new(address, settings.port), dir);
        match (&settings.certificate, &settings.key) {
            (Some(certificate), Some(key)) => {
                config.certificates = CertificateSource::Provided {
                    certificate: certificate.clone(),
                    key: key.clone(),
                }
            }
            (None, None) => {}
            _ => return Err(t!("desktop-phone-certificate-pair")),
        }
        config.push.show_questions = settings.show_questions;
        config.push.quiet_hours = settings.quiet_hours;
        config.push.only_when_idle = settings
            .only_when_idle
            .map(|minutes| std::time::Duration::from_secs(minutes.saturating_mul(60)));
        // The session's screen saver (else logind) says whether the person is at the desk.
        config.push.presence = Presence::session();
        let (remote, server) = bind(config).await.map_err(|e| e.to_string())?;
        let registration = AnswererRegistration {
            scope: Scope::All,
            prepend: false,
            label: Some(LABEL.into()),
            group: Some(askdesk_view::answerer::PERSON_GROUP.into()),
        };
        let answerer = self
            .service
            .register_answerer(registration, Arc::new(RemoteAnswerer::new(remote.clone())))
            .map_err(|e| e.to_string())?;
        tracing::info!(origin = %remote.served().origin(), "serving phones");
        let claims = tauri::async_runtime::spawn(forward_claims(remote.clone(), app.clone()));
        let server = tauri::async_runtime::spawn(server.run());
        Ok(Hosted {
            remote,
            answerer,
            server,
            claims,
        })
    }

    /// The requests the remote held move on to the next answerer, then every socket closes.
    async fn stop(&self, hosted: Hosted) {
        self.service.unregister_answerer(hosted.answerer);
        hosted.claims.abort();
        hosted.remote.shutdown();
        let _ = hosted.server.await;
        tracing::info!("stopped serving phones");
    }

    async fn view(&self) -> PhoneView {
        let hosting = self.state.lock().await;
        let running = hosting
            .running
            .as_ref()
            .map(|hosted| running(&hosted.remote));
        let store = store(hosting.running.as_ref());
        drop(hosting);
        let devices = blocking(move || store.map(|store| store.list()))
            .await
            .ok()
            .and_then(|listed| listed.ok())
            .and_then(Result::ok)
            .unwrap_or_default();
        let hosting = self.state.lock().await;
        PhoneView {
            settings: hosting.settings.clone(),
            addresses: addresses(),
            running,
            problem: hosting.problem.clone(),
            devices: devices.into_iter().map(device_view).collect(),
        }
    }

    /// Stops the remote on the app's exit.
    pub async fn shut_down(&self) {
        if let Some(hosted) = self.state.lock().await.running.take() {
            self.stop(hosted).await;
        }
    }
}

fn running(remote: &Remote) -> Running {
    let origin = remote.served().origin();
    let own_authority = remote.authority_der().is_some();
    let install_url = own_authority.then(|| format!("{origin}/ca"));
    Running {
        install_qr: install_url.as_deref().and_then(qr),
        install_url,
        own_authority,
        origin,
    }
}

/// The running remote's store, else one on the same directory.
fn store(hosted: Option<&Hosted>) -> Result<DeviceStore, String> {
    match hosted {
        Some(hosted) => Ok(hosted.remote.devices().clone()),
        None => askdesk_remote::files::default_dir()
            .map(|dir| DeviceStore::new(&dir))
            .map_err(|e| e.to_string()),
    }
}

fn device_view(device: Device) -> DeviceView {
    let passkey_allowed = device.may_register_passkey(askdesk_remote::devices::now());
    let push = match (&device.push, &device.push_dropped) {
        (Some(_), _) => "on",
        (None, Some(_)) => "dropped",
        (None, None) => "off",
    };
    let dropped = device.push_dropped.filter(|_| device.push.is_none());
    DeviceView {
        name: device.name,
        paired_at: device.paired_at.saturating_mul(1000),
        last_seen: device.last_seen.map(|seen| seen.saturating_mul(1000)),
        passkey: device.passkey.is_some(),
        passkey_allowed,
        push,
        push_dropped_at: dropped.as_ref().map(|d| d.at.saturating_mul(1000)),
        push_dropped_status: dropped.map(|d| d.status),
    }
}

/// Tells the page each phone's claim, for it to show the code; waits without a timer.
async fn forward_claims(remote: Remote, app: AppHandle) {
    let mut claims = remote.pairing_claims();
    drop(remote);
    loop {
        match claims.recv().await {
            Ok(claimed) => {
                let claim = ClaimView {
                    id: claimed.id.0,
                    name: claimed.name,
                    code: claimed.code,
                };
                if let Err(error) = app.emit(EVENT_CLAIM, claim) {
                    tracing::debug!(%error, "a pairing claim was not delivered to the page");
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// This machine's addresses a phone could reach, tailnet first, then LAN, then the rest; never
/// the unspecified address (every interface). IPv6 link-local addresses are left out (a URL
/// cannot carry their zone reliably).
pub fn addresses() -> Vec<Address> {
    let mut found: Vec<Address> = if_addrs::get_if_addrs()
        .unwrap_or_default()
        .into_iter()
        .filter(|interface| {
            let ip = interface.ip();
            !ip.is_unspecified()
                && !matches!(ip, IpAddr::V6(v6) if v6.segments()[0] & 0xffc0 == 0xfe80)
        })
        .map(|interface| Address {
            ip: interface.ip(),
            kind: kind(interface.ip()),
            interface: interface.name,
        })
        .collect();
    let rank = |kind: &str| match kind {
        "tailnet" => 0,
        "lan" => 1,
        "other" => 2,
        _ => 3,
    };
    found.sort_by_key(|address| (rank(address.kind), address.ip));
    found.dedup_by_key(|address| address.ip);
    found
}

/// What kind of network an address is on.
fn kind(ip: IpAddr) -> &'static str {
    match ip {
        IpAddr::V4(v4) if v4.is_loopback() => "loopback",
        IpAddr::V6(v6) if v6.is_loopback() => "loopback",
        IpAddr::V4(v4) if in_tailnet(v4) => "tailnet",
        IpAddr::V4(v4) if v4.is_private() => "lan",
        IpAddr::V6(v6) if v6.segments()[0] & 0xfe00 == 0xfc00 => "lan",
        _ => "other",
    }
}

/// 100.64.0.0/10, the shared address space tailnets use.
fn in_tailnet(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 100 && (64..128).contains(&b)
}

/// `text` as a QR code; `None` when it does not fit one.
fn qr(text: &str) -> Option<Qr> {
    let code = qrcode::QrCode::new(text.as_bytes()).ok()?;
    let width = code.width();
    let mut path = String::new();
    for (at, color) in code.to_colors().into_iter().enumerate() {
        if color == qrcode::Color::Dark {
            let (x, y) = (at % width + QUIET_ZONE, at / width + QUIET_ZONE);
            path.push_str(&format!("M{x} {y}h1v1h-1z"));
        }
    }
    Some(Qr {
        size: width + 2 * QUIET_ZONE,
        path,
    })
}

fn settings_path() -> Result<PathBuf, String> {
    askdesk_core::xdg::config_home()
        .map(|home| home.join("askdesk").join("phone.json"))
        .ok_or_else(|| t!("desktop-phone-no-config-dir"))
}

fn read_settings() -> Result<PhoneSettings, String> {
    let path = settings_path()?;
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(PhoneSettings::default()),
        Err(error) => Err(format!("{}: {error}", path.display())),
    }
}

fn write_settings(settings: &PhoneSettings) -> Result<(), String> {
    let path = settings_path()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let bytes = serde_json::to_vec_pretty(settings).expect("settings serialize");
    askdesk_remote::files::write_private(&path, &bytes).map_err(|e| e.to_string())
}

// ----- the page's commands -----

/// The Devices view: the settings, this machine's addresses, the remote's state, the devices.
#[tauri::command]
pub async fn get_phone(phone: State<'_, Phone>) -> Result<PhoneView, CommandError> {
    Ok(phone.view().await)
}

/// Saves the settings and starts, restarts or stops the remote to match them.
#[tauri::command]
pub async fn set_phone(
    app: AppHandle,
    phone: State<'_, Phone>,
    settings: PhoneSettings,
) -> Result<PhoneView, CommandError> {
    if settings.address.is_some_and(|ip| ip.is_unspecified()) {
        return Err(CommandError::new(
            "invalid",
            t!("desktop-phone-one-address"),
        ));
    }
    if settings
        .only_when_idle
        .is_some_and(|minutes| minutes > MAX_IDLE_MINUTES)
    {
        return Err(CommandError::new(
            "invalid",
            t!("desktop-phone-idle-limit", minutes = MAX_IDLE_MINUTES),
        ));
    }
    let saved = settings.clone();
    blocking(move || write_settings(&saved))
        .await?
        .map_err(|e| CommandError::new("failed", e))?;
    {
        let mut hosting = phone.state.lock().await;
        hosting.settings = settings;
        phone.restart(&mut hosting, &app).await;
    }
    Ok(phone.view().await)
}

/// Unpairs a device: its key is refused from then on, and its sockets close at once.
#[tauri::command]
pub async fn revoke_device(phone: State<'_, Phone>, name: String) -> Result<(), CommandError> {
    change_device(&phone, name, Remote::revoke, DeviceStore::revoke).await
}

/// Allows a device to register a passkey (in place of any it has) for the next few minutes; its
/// page offers it at once.
#[tauri::command]
pub async fn allow_passkey(phone: State<'_, Phone>, name: String) -> Result<(), CommandError> {
    change_device(&phone, name, Remote::allow_passkey, |store, name| {
        store.allow_passkey(name, askdesk_remote::passkeys::REGISTRATION_WINDOW)
    })
    .await
}

/// Changes the device named `name` through the running remote (whose sockets then hear of it),
/// or through the store when the remote is off.
async fn change_device(
    phone: &Phone,
    name: String,
    through_remote: fn(&Remote, &str) -> Result<Option<Device>, askdesk_remote::Error>,
    through_store: fn(&DeviceStore, &str) -> Result<Option<Device>, askdesk_remote::Error>,
) -> Result<(), CommandError> {
    let hosting = phone.state.lock().await;
    let remote = hosting.running.as_ref().map(|hosted| hosted.remote.clone());
    let store = store(hosting.running.as_ref()).map_err(|e| CommandError::new("failed", e))?;
    drop(hosting);
    let changed = blocking(move || match remote {
        Some(remote) => through_remote(&remote, &name),
        None => through_store(&store, &name),
    })
    .await?
    .map_err(|e| CommandError::new("failed", e))?;
    match changed {
        Some(_) => Ok(()),
        None => Err(CommandError::new("late", t!("desktop-phone-no-device"))),
    }
}

/// A pairing offer: its URL as a QR code for the phone's camera, valid for `seconds`.
#[tauri::command]
pub async fn add_phone(phone: State<'_, Phone>) -> Result<PairingView, CommandError> {
    let hosting = phone.state.lock().await;
    let hosted = hosting
        .running
        .as_ref()
        .ok_or_else(|| CommandError::new("refused", t!("desktop-phone-turn-on")))?;
    let offer = hosted.remote.offer_pairing();
    let qr =
        qr(&offer.url).ok_or_else(|| CommandError::new("failed", t!("desktop-phone-no-qr")))?;
    Ok(PairingView {
        id: offer.id.0,
        qr,
        seconds: offer.lifetime.as_secs(),
    })
}

/// The person saw the same code on both screens: the phone is paired. Returns its name.
#[tauri::command]
pub async fn confirm_phone(
    phone: State<'_, Phone>,
    id: u64,
    code: String,
) -> Result<String, CommandError> {
    let remote = running_remote(&phone).await?;
    blocking(move || remote.confirm_pairing(PairingId(id), &code))
        .await?
        .map(|device| device.name)
        .map_err(|error| CommandError::new("refused", error))
}

/// The person closed the QR or the code: the offer ends.
#[tauri::command]
pub async fn cancel_phone(phone: State<'_, Phone>, id: u64) -> Result<(), CommandError> {
    if let Ok(remote) = running_remote(&phone).await {
        remote.cancel_pairing(PairingId(id));
    }
    Ok(())
}

async fn running_remote(phone: &Phone) -> Result<Remote, CommandError> {
    phone
        .state
        .lock()
        .await
        .running
        .as_ref()
        .map(|hosted| hosted.remote.clone())
        .ok_or_else(|| CommandError::new("late", t!("desktop-phone-stopped")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_told_apart_by_their_network() {
        assert_eq!(kind("100.64.0.7".parse().unwrap()), "tailnet");
        assert_eq!(kind("100.127.255.1".parse().unwrap()), "tailnet");
        assert_eq!(kind("100.128.0.1".parse().unwrap()), "other");
        assert_eq!(kind("192.168.1.20".parse().unwrap()), "lan");
        assert_eq!(kind("10.1.2.3".parse().unwrap()), "lan");
        assert_eq!(kind("fd7a:115c:a1e0::1".parse().unwrap()), "lan");
        assert_eq!(kind("127.0.0.1".parse().unwrap()), "loopback");
        assert_eq!(kind("8.8.8.8".parse().unwrap()), "other");
    }

    #[test]
    fn the_machine_offers_no_unspecified_address() {
        assert!(addresses().iter().all(|a| !a.ip.is_unspecified()));
    }

    #[test]
    fn settings_are_off_by_default_and_read_back_with_defaults() {
        assert!(!PhoneSettings::default().enabled);
        let read: PhoneSettings = serde_json::from_str(r#"{"enabled": true}"#).unwrap();
        assert_eq!(read.port, DEFAULT_PORT);
        assert_eq!(read.address, None);
        assert!(
            !read.show_questions && read.quiet_hours.is_none() && read.only_when_idle.is_none()
        );
        let night: PhoneSettings =
            serde_json::from_str(r#"{"quietHours": "22:00-07:00", "onlyWhenIdle": 5}"#).unwrap();
        assert_eq!(night.quiet_hours, Some("22:00-07:00".parse().unwrap()));
        assert_eq!(night.only_when_idle, Some(5));
        assert!(serde_json::from_str::<PhoneSettings>(r#"{"quietHours": "late"}"#).is_err());
    }

    #[test]
    fn a_qr_code_has_its_quiet_zone_and_dark_modules() {
        let code = qr("https://192.168.1.20:8443/pair#v1.token.fingerprint").unwrap();
        assert!(code.size > 2 * QUIET_ZONE);
        assert!(code.path.starts_with('M'));
        // Every module lies inside the quiet zone's frame.
        assert!(!code.path.contains(&format!("M{} ", code.size - 1)));
    }
}
