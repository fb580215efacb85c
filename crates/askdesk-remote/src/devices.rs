//! The paired devices: `devices.json` (0600, written atomically) in the remote's directory, the one
//! record the remote, the desktop and `askdesk devices` share. Every change is a read, modify and
//! write under an exclusive lock on `devices.lock`, so a revoke from the command line and a
//! "last seen" written by a running remote can never undo each other. Each device keeps the scope
//! the person set ([`Scope`]) and its suspension; entries written before those existed read as the
//! default scope, not suspended.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askdesk_i18n::t;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::files;
use crate::keys::DeviceKey;
use crate::passkeys::StoredPasskey;
use crate::push::Subscription;
use crate::scope::Scope;

/// One paired device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// Unique among the paired devices; `askdesk devices revoke NAME` names it.
    pub name: String,
    /// The device's P-256 public key, raw uncompressed SEC1, base64url.
    pub public_key: String,
    /// When the desk confirmed the pairing (seconds since the Unix epoch).
    pub paired_at: u64,
    /// When the device last opened a socket (seconds since the Unix epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<u64>,
    /// What it may answer, set at the desk (not written while it is the default).
    #[serde(default, skip_serializing_if = "Scope::is_default")]
    pub scope: Scope,
    /// Bad signatures on its answers since it was paired or last confirmed at the desk.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_signatures: u32,
    /// When too many bad signatures suspended it (seconds since the Unix epoch): it answers
    /// nothing and opens no socket until confirmed at the desk ([`DeviceStore::confirm`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspended_at: Option<u64>,
    /// Its Web Push subscription, made on the phone after pairing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<Subscription>,
    /// Its passkey, which a phone's allow of a permission prompt must assert with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passkey: Option<StoredPasskey>,
    /// Until when the desk allows it to register a passkey (seconds since the Unix epoch): set
    /// when the desk confirms its pairing or the person allows one, ended by a registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passkey_until: Option<u64>,
    /// When its push service said the subscription is gone (404 or 410), until the phone
    /// subscribes again: the desk shows it, since the phone no longer rings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_dropped: Option<PushDropped>,
}

/// A subscription the push service dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushDropped {
    /// Seconds since the Unix epoch.
    pub at: u64,
    /// What the push service answered: 404 or 410.
    pub status: u16,
}

impl Device {
    pub fn is_suspended(&self) -> bool {
        self.suspended_at.is_some()
    }

    /// Whether the desk allows it to register a passkey at `now` (seconds since the Unix epoch).
    pub fn may_register_passkey(&self, now: u64) -> bool {
        self.passkey_until.is_some_and(|until| now < until)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    version: u32,
    devices: Vec<Device>,
}

const VERSION: u32 = 1;
/// The longest device name kept, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The device list in `dir`.
#[derive(Debug, Clone)]
pub struct DeviceStore {
    dir: PathBuf,
}

impl DeviceStore {
    pub fn new(dir: &Path) -> DeviceStore {
        DeviceStore {
            dir: dir.to_path_buf(),
        }
    }

    /// The directory the list is kept in.
    pub fn dir(&self) -> PathBuf {
        self.dir.clone()
    }

    /// The file the list is kept in.
    pub fn path(&self) -> PathBuf {
        self.dir.join("devices.json")
    }

    /// Every paired device, in pairing order.
    pub fn list(&self) -> Result<Vec<Device>, Error> {
        Ok(self.read()?.devices)
    }

    /// The device with this key, if it is paired (a revoked key is not).
    pub fn find(&self, key: &DeviceKey) -> Result<Option<Device>, Error> {
        let text = key.text();
        Ok(self.list()?.into_iter().find(|d| d.public_key == text))
    }

    /// Pairs a key under `wanted` (made unique with " 2", " 3"… if taken). A key already paired
    /// keeps its entry.
    pub fn add(&self, wanted: &str, key: &DeviceKey) -> Result<Device, Error> {
        let text = key.text();
        self.update(|devices| {
            if let Some(known) = devices.iter().find(|d| d.public_key == text) {
                return known.clone();
            }
            let base = clean_name(wanted);
            let taken = |name: &str| devices.iter().any(|d| d.name == name);
            let name = (1..)
                .map(|n| match n {
                    1 => base.clone(),
                    n => format!("{base} {n}"),
                })
                .find(|name| !taken(name))
                .expect("a free name");
            let device = Device {
                name,
                public_key: text.clone(),
                paired_at: now(),
                last_seen: None,
                scope: Scope::default(),
                bad_signatures: 0,
                suspended_at: None,
                push: None,
                passkey: None,
                passkey_until: None,
                push_dropped: None,
            };
            devices.push(device.clone());
            device
        })
    }

    /// Removes the device named `name`; its key is refused from then on. `None` if no device has
    /// that name.
    pub fn revoke(&self, name: &str) -> Result<Option<Device>, Error> {
        self.update(|devices| {
            let index = devices.iter().position(|d| d.name == name)?;
            Some(devices.remove(index))
        })
    }

    /// Sets the scope of the device named `name`; `None` if no device has that name.
    pub fn set_scope(&self, name: &str, scope: Scope) -> Result<Option<Device>, Error> {
        self.update(|devices| {
            let device = devices.iter_mut().find(|d| d.name == name)?;
            device.scope = scope;
            Some(device.clone())
        })
    }

    /// Counts a bad signature on an answer of the device with this key; the `limit`-th suspends
    /// it. The device as it now is, `None` if it is not paired.
    pub fn bad_signature(&self, key: &DeviceKey, limit: u32) -> Result<Option<Device>, Error> {
        let text = key.text();
        self.update(|devices| {
            let device = devices.iter_mut().find(|d| d.public_key == text)?;
            device.bad_signatures = device.bad_signatures.saturating_add(1);
            if device.bad_signatures >= limit && device.suspended_at.is_none() {
                device.suspended_at = Some(now());
            }
            Some(device.clone())
        })
    }

    /// The person confirms the device named `name` again at the desk: its suspension and its count
    /// of bad signatures end. `None` if no device has that name.
    pub fn confirm(&self, name: &str) -> Result<Option<Device>, Error> {
        self.update(|devices| {
            let device = devices.iter_mut().find(|d| d.name == name)?;
            device.bad_signatures = 0;
            device.suspended_at = None;
            Some(device.clone())
        })
    }

    /// Sets (or with `None` removes) the push subscription of the device with this key; the device
    /// as it now is, `None` if it is not paired.
    pub fn set_push(
        &self,
        key: &DeviceKey,
        push: Option<Subscription>,
    ) -> Result<Option<Device>, Error> {
        let text = key.text();
        self.update(|devices| {
            let device = devices.iter_mut().find(|d| d.public_key == text)?;
            if push.is_some() {
                device.push_dropped = None;
            }
            device.push = push;
            Some(device.clone())
        })
    }

    /// Drops the push subscription of the device named `name` if it is still `endpoint` (its push
    /// service answered `status`, 404 or 410: it is gone) and records that it did; whether one was
    /// dropped.
    pub fn drop_push(&self, name: &str, endpoint: &str, status: u16) -> Result<bool, Error> {
        self.update(|devices| {
            match devices
                .iter_mut()
                .find(|d| d.name == name && d.push.as_ref().is_some_and(|p| p.endpoint == endpoint))
            {
                Some(device) => {
                    device.push = None;
                    device.push_dropped = Some(PushDropped { at: now(), status });
                    true
                }
                None => false,
            }
        })
    }

    /// Allows the device named `name` to register a passkey for `window` from now (the person's
    /// choice at the desk); `None` if no device has that name.
    pub fn allow_passkey(&self, name: &str, window: Duration) -> Result<Option<Device>, Error> {
        self.update(|devices| {
            let device = devices.iter_mut().find(|d| d.name == name)?;
            device.passkey_until = Some(now() + window.as_secs());
            Some(device.clone())
        })
    }

    /// Keeps a passkey for the device with this key, in place of any it had, if the desk still
    /// allows it a registration, which this one ends. The device as it now is; `None` if it is not
    /// paired or not allowed.
    pub fn set_passkey(
        &self,
        key: &DeviceKey,
        passkey: StoredPasskey,
    ) -> Result<Option<Device>, Error> {
        let text = key.text();
        let now = now();
        self.update(|devices| {
            let device = devices
                .iter_mut()
                .find(|d| d.public_key == text && d.may_register_passkey(now))?;
            device.passkey = Some(passkey);
            device.passkey_until = None;
            Some(device.clone())
        })
    }

    /// Removes the passkey of the device named `name` (and any window to register one); `None`
    /// if no device has that name.
    pub fn forget_passkey(&self, name: &str) -> Result<Option<Device>, Error> {
        self.update(|devices| {
            let device = devices.iter_mut().find(|d| d.name == name)?;
            device.passkey = None;
            device.passkey_until = None;
            Some(device.clone())
        })
    }

    /// Records a verified assertion of the device's passkey (its new signature counter). `false`
    /// if the device or that passkey is no longer there.
    pub fn passkey_used(
        &self,
        key: &DeviceKey,
        result: &webauthn_rs::prelude::AuthenticationResult,
    ) -> Result<bool, Error> {
        let text = key.text();
        self.update(|devices| {
            devices
                .iter_mut()
                .find(|d| d.public_key == text)
                .and_then(|d| d.passkey.as_mut())
                .and_then(|passkey| passkey.0.update_credential(result))
                .is_some()
        })
    }

    /// Records that the device with this key was seen now; `false` if it is not paired.
    pub fn touch(&self, key: &DeviceKey) -> Result<bool, Error> {
        let text = key.text();
        self.update(
            |devices| match devices.iter_mut().find(|d| d.public_key == text) {
                Some(device) => {
                    device.last_seen = Some(now());
                    true
                }
                None => false,
            },
        )
    }

    fn read(&self) -> Result<StoreFile, Error> {
        let path = self.path();
        let Some(bytes) = files::read_if_present(&path)? else {
            return Ok(StoreFile {
                version: VERSION,
                devices: Vec::new(),
            });
        };
        let store: StoreFile =
            serde_json::from_slice(&bytes).map_err(|error| Error::DeviceStore {
                path: path.clone(),
                reason: error.to_string(),
            })?;
        if store.version != VERSION {
            return Err(Error::DeviceStore {
                path,
                reason: t!(
                    "remote-error-device-store-version",
                    version = store.version,
                    reads = VERSION
                ),
            });
        }
        Ok(store)
    }

    fn update<T>(&self, change: impl FnOnce(&mut Vec<Device>) -> T) -> Result<T, Error> {
        files::private_dir(&self.dir)?;
        let lock_path = self.dir.join("devices.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(Error::io(&lock_path))?;
        lock.lock().map_err(Error::io(&lock_path))?;
        let result = self.change_locked(change);
        drop::<File>(lock);
        result
    }

    fn change_locked<T>(&self, change: impl FnOnce(&mut Vec<Device>) -> T) -> Result<T, Error> {
        let mut store = self.read()?;
        let result = change(&mut store.devices);
        let json = serde_json::to_vec_pretty(&store).expect("plain data");
        files::write_private(&self.path(), &json)?;
        Ok(result)
    }
}

/// A device name as kept: control characters dropped, whitespace runs made one space, at most
/// [`MAX_NAME_CHARS`]; "phone" when nothing is left.
pub fn clean_name(wanted: &str) -> String {
    let words: Vec<&str> = wanted.split_whitespace().collect();
    let joined: String = words
        .join(" ")
        .chars()
        .filter(|c| !askdesk_core::text::is_escaped(*c))
        .take(MAX_NAME_CHARS)
        .collect();
    match joined.trim() {
        "" => "phone".to_string(),
        name => name.to_string(),
    }
}

/// Seconds since the Unix epoch, as the device list keeps times.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn key(seed: u8) -> DeviceKey {
        let signer = p256::ecdsa::SigningKey::from_slice(&[seed; 32]).unwrap();
        DeviceKey::from_raw(signer.verifying_key().to_sec1_point(false).as_bytes()).unwrap()
    }

    #[test]
    fn paired_devices_are_kept_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::new(dir.path());
        let device = store.add("Pixel", &key(1)).unwrap();
        assert_eq!(store.list().unwrap(), vec![device.clone()]);
        assert_eq!(store.find(&key(1)).unwrap(), Some(device));
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn names_are_made_unique_and_safe() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::new(dir.path());
        assert_eq!(store.add("Pixel", &key(1)).unwrap().name, "Pixel");
        assert_eq!(store.add("Pixel", &key(2)).unwrap().name, "Pixel 2");
        assert_eq!(
            store
                .add("\u{202e}Pixel\n\t 8\u{1b}", &key(3))
                .unwrap()
                .name,
            "Pixel 8"
        );
        assert_eq!(store.add(" \u{7} ", &key(4)).unwrap().name, "phone");
        assert_eq!(
            store
                .add("x".repeat(100).as_str(), &key(5))
                .unwrap()
                .name
                .len(),
            MAX_NAME_CHARS
        );
    }

    #[test]
    fn a_revoked_key_is_no_longer_found_and_touching_it_fails() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::new(dir.path());
        store.add("Pixel", &key(1)).unwrap();
        assert!(store.touch(&key(1)).unwrap());
        assert!(store.list().unwrap()[0].last_seen.is_some());
        assert_eq!(
            store.revoke("Pixel").unwrap().map(|d| d.name),
            Some("Pixel".into())
        );
        assert_eq!(store.find(&key(1)).unwrap(), None);
        assert!(!store.touch(&key(1)).unwrap());
        assert_eq!(store.revoke("Pixel").unwrap(), None);
    }

    #[test]
    fn a_store_written_before_scopes_reads_with_the_default_scope() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::new(dir.path());
        std::fs::write(
            store.path(),
            br#"{"version":1,"devices":[{"name":"Pixel","publicKey":"k","pairedAt":1}]}"#,
        )
        .unwrap();
        let device = &store.list().unwrap()[0];
        assert_eq!(device.scope, Scope::default());
        assert!(!device.is_suspended());
    }

    #[test]
    fn bad_signatures_suspend_a_device_until_it_is_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::new(dir.path());
        store.add("Pixel", &key(1)).unwrap();
        for _ in 0..4 {
            assert!(!store
                .bad_signature(&key(1), 5)
                .unwrap()
                .unwrap()
                .is_suspended());
        }
        assert!(store
            .bad_signature(&key(1), 5)
            .unwrap()
            .unwrap()
            .is_suspended());
        assert!(store.find(&key(1)).unwrap().unwrap().is_suspended());
        assert_eq!(store.bad_signature(&key(2), 5).unwrap(), None);
        let confirmed = store.confirm("Pixel").unwrap().unwrap();
        assert!(!confirmed.is_suspended());
        assert_eq!(confirmed.bad_signatures, 0);
        assert_eq!(store.confirm("Nobody").unwrap(), None);
    }

    #[test]
    fn a_store_of_another_format_is_an_error_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::new(dir.path());
        std::fs::write(store.path(), b"{\"version\":2,\"devices\":[]}").unwrap();
        assert!(matches!(store.list(), Err(Error::DeviceStore { .. })));
        std::fs::write(store.path(), b"not json").unwrap();
        assert!(matches!(
            store.add("x", &key(1)),
            Err(Error::DeviceStore { .. })
        ));
    }
}
