//! Passkeys (WebAuthn with user verification, checked by webauthn-rs): the relying party the
//! remote is, a device's registration (only while the desk allows it: [`REGISTRATION_WINDOW`]
//! after the desk confirmed its pairing or the person allowed one), and the assertion that must
//! come with a phone's allow of a permission prompt, bound to the digest of that exact answer
//! ([`crate::digest::answer_digest`]): the remote keeps each challenge's state beside the digest
//! it was made for, and an assertion counts only for that digest, once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use askdesk_core::sync::lock;
use askdesk_i18n::t;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};
use webauthn_rs::prelude::{
    AuthenticationResult, Passkey, PasskeyAuthentication, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Url, Uuid, Webauthn, WebauthnBuilder,
};

use crate::keys::DeviceKey;
use crate::names::{Name, Served};
use crate::remote::Refusal;

/// How long a device may register a passkey once the desk allows it (after the pairing is
/// confirmed, or the person pressed "Allow a passkey").
pub const REGISTRATION_WINDOW: Duration = Duration::from_secs(300);

/// A registered passkey as `devices.json` keeps it (webauthn-rs's own form: its credential id,
/// public key and signature counter).
#[derive(Debug, Clone)]
pub struct StoredPasskey(pub Passkey);

impl PartialEq for StoredPasskey {
    fn eq(&self, other: &StoredPasskey) -> bool {
        serde_json::to_value(&self.0).ok() == serde_json::to_value(&other.0).ok()
    }
}

impl Eq for StoredPasskey {}

impl Serialize for StoredPasskey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for StoredPasskey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<StoredPasskey, D::Error> {
        Passkey::deserialize(deserializer).map(StoredPasskey)
    }
}

/// A challenge made for one device's allow of one request: the digest of the answer it was made
/// for and webauthn-rs's state, used at most once.
pub(crate) struct Bound {
    pub answer_digest: [u8; 32],
    pub state: PasskeyAuthentication,
}

/// The remote as a WebAuthn relying party.
pub struct Passkeys {
    /// `None` when the remote serves only addresses: browsers refuse WebAuthn on an IP address.
    webauthn: Option<Webauthn>,
    /// Registrations begun, by device key, until finished or the window closes.
    registrations: Mutex<HashMap<String, (PasskeyRegistration, Instant)>>,
}

impl Passkeys {
    /// The relying party for the first DNS name the remote serves (its id), accepting that name's
    /// origin with the served port only.
    pub fn new(served: &Served) -> Passkeys {
        let webauthn = served
            .names()
            .iter()
            .find_map(|name| match name {
                Name::Dns(host) => Some(host.clone()),
                Name::Ip(_) => None,
            })
            .and_then(|host| {
                let origin = Url::parse(&format!("https://{host}:{}", served.port())).ok()?;
                WebauthnBuilder::new(&host, &origin)
                    .ok()?
                    .rp_name("askdesk")
                    .build()
                    .ok()
            });
        Passkeys {
            webauthn,
            registrations: Mutex::default(),
        }
    }

    /// Whether passkeys can be used at all (the remote serves a DNS name).
    pub fn available(&self) -> bool {
        self.webauthn.is_some()
    }

    fn webauthn(&self) -> Result<&Webauthn, Refusal> {
        self.webauthn.as_ref().ok_or(Refusal::PasskeysUnavailable)
    }

    /// Begins a registration for the device (the caller checked the desk allows it): the options
    /// for `navigator.credentials.create`, user verification required.
    pub(crate) fn start_registration(
        &self,
        key: &DeviceKey,
        name: &str,
        now: Instant,
    ) -> Result<Value, Refusal> {
        let (options, state) = self
            .webauthn()?
            .start_passkey_registration(user_id(key), name, name, None)
            .map_err(|error| Refusal::Internal(error.to_string()))?;
        let mut registrations = lock(&self.registrations);
        registrations.retain(|_, (_, at)| now.saturating_duration_since(*at) < REGISTRATION_WINDOW);
        registrations.insert(key.text(), (state, now));
        serde_json::to_value(options).map_err(|error| Refusal::Internal(error.to_string()))
    }

    /// Finishes the device's registration begun last: the passkey, if the credential answers that
    /// challenge from this origin with user verification.
    pub(crate) fn finish_registration(
        &self,
        key: &DeviceKey,
        credential: Value,
        now: Instant,
    ) -> Result<Passkey, Refusal> {
        let (state, at) = lock(&self.registrations)
            .remove(&key.text())
            .ok_or(Refusal::PasskeyNotAllowed)?;
        if now.saturating_duration_since(at) >= REGISTRATION_WINDOW {
            return Err(Refusal::PasskeyNotAllowed);
        }
        let credential: RegisterPublicKeyCredential = serde_json::from_value(credential)
            .map_err(|error| Refusal::Malformed(error.to_string()))?;
        self.webauthn()?
            .finish_passkey_registration(&credential, &state)
            .map_err(|error| Refusal::BadPasskey(error.to_string()))
    }

    /// A challenge for the device's passkey, bound to `answer_digest`: the options for
    /// `navigator.credentials.get` and the state kept beside the digest.
    pub(crate) fn challenge(
        &self,
        passkey: &StoredPasskey,
        answer_digest: [u8; 32],
    ) -> Result<(Value, Bound), Refusal> {
        let (options, state) = self
            .webauthn()?
            .start_passkey_authentication(std::slice::from_ref(&passkey.0))
            .map_err(|error| Refusal::Internal(error.to_string()))?;
        let options =
            serde_json::to_value(options).map_err(|error| Refusal::Internal(error.to_string()))?;
        Ok((
            options,
            Bound {
                answer_digest,
                state,
            },
        ))
    }

    /// Checks an assertion against the challenge bound to this answer's digest: the challenge,
    /// the origin, the signature by the device's passkey, the counter (webauthn-rs), and that the
    /// person was verified (biometrics or PIN), not only present.
    pub(crate) fn verify(
        &self,
        bound: &Bound,
        answer_digest: &[u8; 32],
        assertion: &Value,
    ) -> Result<AuthenticationResult, Refusal> {
        if bound.answer_digest != *answer_digest {
            return Err(Refusal::BadPasskey(t!("remote-passkey-other-answer")));
        }
        let assertion: PublicKeyCredential = serde_json::from_value(assertion.clone())
            .map_err(|error| Refusal::BadPasskey(error.to_string()))?;
        let result = self
            .webauthn()?
            .finish_passkey_authentication(&assertion, &bound.state)
            .map_err(|error| Refusal::BadPasskey(error.to_string()))?;
        if !result.user_verified() {
            return Err(Refusal::BadPasskey(t!("remote-passkey-not-verified")));
        }
        Ok(result)
    }
}

/// The WebAuthn user handle of a device: the first 16 bytes of its key's SHA-256.
fn user_id(key: &DeviceKey) -> Uuid {
    let hash = Sha256::digest(key.text().as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hash[..16]);
    Uuid::from_bytes(bytes)
}
