//! A software WebAuthn authenticator for the tests, written from the WebAuthn and CTAP2 texts
//! alone (not from the remote's library): a P-256 credential, `none` attestation, a counter, and a
//! switch for whether it verified the person. It answers the options the remote sends with the
//! credential a browser would send back (binary fields base64url), so each of its bits can be
//! forged: the user-verified flag, the origin, the challenge.

use askdesk_remote::keys;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const USER_PRESENT: u8 = 0x01;
const USER_VERIFIED: u8 = 0x04;
const ATTESTED_CREDENTIAL: u8 = 0x40;

pub struct Authenticator {
    key: SigningKey,
    credential_id: Vec<u8>,
    counter: u32,
    /// The origin its browser names in the client data.
    pub origin: String,
    /// Whether it verified the person (biometrics or PIN) this time.
    pub verifies_user: bool,
}

impl Authenticator {
    pub fn new(origin: &str) -> Authenticator {
        Authenticator {
            key: SigningKey::from_slice(&keys::random::<32>()).unwrap(),
            credential_id: keys::random::<16>().to_vec(),
            counter: 0,
            origin: origin.to_string(),
            verifies_user: true,
        }
    }

    /// Steps its counter back, so its next assertion repeats the last one's count (as a cloned
    /// authenticator's would).
    pub fn rewind(&mut self) {
        self.counter -= 1;
    }

    fn flags(&self) -> u8 {
        USER_PRESENT | if self.verifies_user { USER_VERIFIED } else { 0 }
    }

    fn client_data(&self, kind: &str, challenge: &Value) -> Vec<u8> {
        json!({ "type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": false })
            .to_string()
            .into_bytes()
    }

    /// The credential `navigator.credentials.create` gives for the remote's `passkey-creation`
    /// options (`{"publicKey": {...}}`).
    pub fn register(&mut self, options: &Value) -> Value {
        let options = &options["publicKey"];
        let rp_id = options["rp"]["id"].as_str().unwrap();
        let point = self.key.verifying_key().to_sec1_point(false);
        let bytes = point.as_bytes();
        let mut cose = Vec::new();
        cbor_head(&mut cose, 5, 5);
        for (label, value) in [(1, Cbor::Int(2)), (3, Cbor::Int(-7)), (-1, Cbor::Int(1))] {
            Cbor::Int(label).write(&mut cose);
            value.write(&mut cose);
        }
        Cbor::Int(-2).write(&mut cose);
        Cbor::Bytes(&bytes[1..33]).write(&mut cose);
        Cbor::Int(-3).write(&mut cose);
        Cbor::Bytes(&bytes[33..65]).write(&mut cose);
        let mut auth = self.auth_data(rp_id, self.flags() | ATTESTED_CREDENTIAL);
        auth.extend_from_slice(&[0; 16]);
        auth.extend_from_slice(&(self.credential_id.len() as u16).to_be_bytes());
        auth.extend_from_slice(&self.credential_id);
        auth.extend_from_slice(&cose);
        let mut attestation = Vec::new();
        cbor_head(&mut attestation, 5, 3);
        Cbor::Text("fmt").write(&mut attestation);
        Cbor::Text("none").write(&mut attestation);
        Cbor::Text("attStmt").write(&mut attestation);
        cbor_head(&mut attestation, 5, 0);
        Cbor::Text("authData").write(&mut attestation);
        Cbor::Bytes(&auth).write(&mut attestation);
        self.credential(json!({
            "clientDataJSON": keys::encode(&self.client_data("webauthn.create", &options["challenge"])),
            "attestationObject": keys::encode(&attestation),
        }))
    }

    /// The assertion `navigator.credentials.get` gives for the remote's `passkey-challenge`
    /// options; each one counts up.
    pub fn assert(&mut self, options: &Value) -> Value {
        let options = &options["publicKey"];
        let rp_id = options["rpId"].as_str().unwrap();
        self.counter += 1;
        let auth = self.auth_data(rp_id, self.flags());
        let client_data = self.client_data("webauthn.get", &options["challenge"]);
        let mut signed = auth.clone();
        signed.extend_from_slice(&Sha256::digest(&client_data));
        let signature: Signature = self.key.sign(&signed);
        self.credential(json!({
            "authenticatorData": keys::encode(&auth),
            "clientDataJSON": keys::encode(&client_data),
            "signature": keys::encode(&der(&signature.to_bytes())),
            "userHandle": null,
        }))
    }

    /// The `PublicKeyCredential` the page sends for this credential, with `response`.
    fn credential(&self, response: Value) -> Value {
        let id = keys::encode(&self.credential_id);
        json!({ "id": id, "rawId": id, "type": "public-key", "response": response })
    }

    fn auth_data(&self, rp_id: &str, flags: u8) -> Vec<u8> {
        let mut auth = Sha256::digest(rp_id.as_bytes()).to_vec();
        auth.push(flags);
        auth.extend_from_slice(&self.counter.to_be_bytes());
        auth
    }
}

/// The few CBOR items a credential holds.
enum Cbor<'a> {
    Int(i64),
    Bytes(&'a [u8]),
    Text(&'a str),
}

impl Cbor<'_> {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Cbor::Int(n) if *n >= 0 => cbor_head(out, 0, *n as u64),
            Cbor::Int(n) => cbor_head(out, 1, (-1 - *n) as u64),
            Cbor::Bytes(bytes) => {
                cbor_head(out, 2, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
            Cbor::Text(text) => {
                cbor_head(out, 3, text.len() as u64);
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
}

/// A CBOR item's head: its major type and its argument (RFC 8949, section 3).
fn cbor_head(out: &mut Vec<u8>, major: u8, argument: u64) {
    let major = major << 5;
    match argument {
        0..=23 => out.push(major | argument as u8),
        24..=0xff => out.extend_from_slice(&[major | 24, argument as u8]),
        _ => {
            out.push(major | 25);
            out.extend_from_slice(&(argument as u16).to_be_bytes());
        }
    }
}

/// An ECDSA signature `r || s` as the DER `SEQUENCE { INTEGER r, INTEGER s }` WebAuthn carries.
fn der(raw: &[u8]) -> Vec<u8> {
    let integer = |half: &[u8]| {
        let trimmed: Vec<u8> = half.iter().copied().skip_while(|b| *b == 0).collect();
        let mut bytes = if trimmed.first().is_some_and(|b| b & 0x80 != 0) {
            vec![0]
        } else {
            Vec::new()
        };
        bytes.extend(trimmed);
        let mut out = vec![0x02, bytes.len() as u8];
        out.extend(bytes);
        out
    };
    let body = [integer(&raw[..32]), integer(&raw[32..])].concat();
    let mut out = vec![0x30, body.len() as u8];
    out.extend(body);
    out
}
