//! A device's public key (P-256, the raw uncompressed SEC1 point WebCrypto exports, 65 bytes) and
//! the checks of its signatures (ECDSA with SHA-256 in the IEEE P1363 form WebCrypto produces:
//! `r || s`, 64 bytes), with the base64url text both travel as, and the remote's random bytes.

use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// base64url without padding, as every binary value travels.
pub fn encode(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

/// The bytes of base64url text without padding; `None` for anything else.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    B64.decode(text).ok()
}

/// `N` bytes from the operating system's randomness.
pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system's randomness");
    bytes
}

/// A device's public key, checked to be a point of the curve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceKey {
    raw: [u8; 65],
    key: VerifyingKey,
}

impl DeviceKey {
    /// The key from its raw uncompressed SEC1 form (`0x04 || x || y`); compressed points and
    /// anything not on the curve are refused.
    pub fn from_raw(raw: &[u8]) -> Option<DeviceKey> {
        let raw: [u8; 65] = raw.try_into().ok()?;
        if raw[0] != 0x04 {
            return None;
        }
        let key = VerifyingKey::from_sec1_bytes(&raw).ok()?;
        Some(DeviceKey { raw, key })
    }

    /// The key from its base64url text.
    pub fn from_text(text: &str) -> Option<DeviceKey> {
        DeviceKey::from_raw(&decode(text)?)
    }

    pub fn raw(&self) -> &[u8; 65] {
        &self.raw
    }

    /// The base64url text of the raw key: how the device store and the wire name the key.
    pub fn text(&self) -> String {
        encode(&self.raw)
    }

    /// Whether `signature` (base64url of the 64-byte P1363 form) signs `message` with this key.
    /// Both `s` and its negation verify, as in WebCrypto: replays are stopped by nonces and
    /// pending requests, never by the signature's bytes.
    pub fn verifies(&self, message: &[u8], signature: &str) -> bool {
        let Some(bytes) = decode(signature) else {
            return false;
        };
        if bytes.len() != 64 {
            return false;
        }
        Signature::from_slice(&bytes)
            .is_ok_and(|signature| self.key.verify(message, &signature).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::SigningKey;

    fn signing_key() -> SigningKey {
        SigningKey::from_slice(&random::<32>()).unwrap()
    }

    fn raw_public(key: &SigningKey) -> Vec<u8> {
        key.verifying_key().to_sec1_point(false).as_bytes().to_vec()
    }

    #[test]
    fn a_p1363_signature_verifies_and_a_der_one_does_not() {
        let signer = signing_key();
        let key = DeviceKey::from_raw(&raw_public(&signer)).unwrap();
        let signature: Signature = signer.sign(b"message");
        assert!(key.verifies(b"message", &encode(&signature.to_bytes())));
        assert!(!key.verifies(b"massage", &encode(&signature.to_bytes())));
        assert!(!key.verifies(b"message", &encode(signature.to_der().as_bytes())));
        assert!(!key.verifies(b"message", "not base64url!"));
    }

    #[test]
    fn only_uncompressed_points_on_the_curve_are_keys() {
        let signer = signing_key();
        let raw = raw_public(&signer);
        assert!(DeviceKey::from_raw(&raw).is_some());
        let compressed = signer.verifying_key().to_sec1_point(true);
        assert!(DeviceKey::from_raw(compressed.as_bytes()).is_none());
        let mut off_curve = raw.clone();
        off_curve[64] ^= 1;
        assert!(DeviceKey::from_raw(&off_curve).is_none());
        assert!(DeviceKey::from_raw(&raw[..64]).is_none());
    }
}
