//! Pairing offers, made only at the desk: a single-use token (in the URL's fragment, so never in a
//! request line or a log), valid for a while and for a few tries; the phone proves it holds the
//! token with an HMAC over its public key; both screens show a 6-digit code derived from the token
//! and the key; the desk confirms the code. Times are passed in, so nothing here needs a timer.

use std::fmt;
use std::time::{Duration, Instant};

use askdesk_i18n::t;
use hmac::{KeyInit, Mac};
use sha2::Sha256;

use crate::keys::{self, DeviceKey};

type HmacSha256 = hmac::Hmac<Sha256>;

/// How long an offer stays valid: from the desk showing the QR to the phone's claim, and again from
/// the claim to the desk's confirmation.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(120);
/// Failed claims an offer survives; the next claim is refused, even with the right token.
pub const MAX_TRIES: u32 = 5;
/// Offers alive at once; a new one beyond this ends the oldest.
const MAX_OFFERS: usize = 8;
/// What the code is derived under, so it is never the proof itself.
const CODE_CONTEXT: &[u8] = b"askdesk pairing code v1";

/// Names one pairing offer at the desk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PairingId(pub u64);

impl fmt::Display for PairingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p{}", self.0)
    }
}

/// Why a claim or a confirmation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    /// No live offer has this token (or the proof is wrong): a try was counted.
    #[error("{}", t!("remote-pairing-bad-proof"))]
    BadProof,
    /// The offer's tries are used up: start again at the desk.
    #[error("{}", t!("remote-pairing-too-many-tries"))]
    TooManyTries,
    /// The offer expired: start again at the desk.
    #[error("{}", t!("remote-pairing-expired"))]
    Expired,
    /// The token was already used by a phone (this one or another).
    #[error("{}", t!("remote-pairing-already-used"))]
    AlreadyUsed,
    /// The desk asked to confirm a pairing no phone has claimed.
    #[error("{}", t!("remote-pairing-not-claimed"))]
    NotClaimed,
    /// The desk's code is not the one derived from the claim: the pairing is ended.
    #[error("{}", t!("remote-pairing-wrong-code"))]
    WrongCode,
    /// The desk named no live pairing.
    #[error("{}", t!("remote-pairing-unknown"))]
    Unknown,
    /// The confirmed device could not be written to the device store.
    #[error("{}", t!("remote-pairing-store", reason = .0.as_str()))]
    Store(String),
}

/// A phone's claim of an offer: its key and the proof that it holds the token.
#[derive(Debug, Clone)]
pub struct Claim {
    pub key: DeviceKey,
    /// HMAC-SHA256 keyed by the token over the raw public key.
    pub proof: Vec<u8>,
    pub name: String,
}

/// A claimed offer, waiting for the desk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: PairingId,
    /// The code both screens show.
    pub code: String,
    /// The name the phone asked for.
    pub name: String,
}

#[derive(Debug)]
enum Stage {
    Open {
        tries: u32,
    },
    Claimed {
        key: DeviceKey,
        name: String,
        code: String,
    },
    Used,
    Burnt,
}

#[derive(Debug)]
struct Offer {
    id: PairingId,
    token: [u8; 32],
    /// The offer, or its claim, ends at this time.
    deadline: Instant,
    stage: Stage,
}

/// Every offer alive.
#[derive(Debug)]
pub struct Pairings {
    offers: Vec<Offer>,
    next: u64,
    lifetime: Duration,
}

impl Pairings {
    pub fn new(lifetime: Duration) -> Pairings {
        Pairings {
            offers: Vec::new(),
            next: 1,
            lifetime,
        }
    }

    /// A new offer and its token (32 random bytes).
    pub fn offer(&mut self, now: Instant) -> (PairingId, [u8; 32]) {
        self.forget_ended(now);
        if self.offers.len() >= MAX_OFFERS {
            self.offers.remove(0);
        }
        let id = PairingId(self.next);
        self.next += 1;
        let token = keys::random::<32>();
        self.offers.push(Offer {
            id,
            token,
            deadline: now + self.lifetime,
            stage: Stage::Open { tries: 0 },
        });
        (id, token)
    }

    /// A phone's claim: the first valid claim of an open offer wins it; the token is then used.
    /// A claim that matches no offer counts a try against every open offer.
    pub fn claim(&mut self, claim: Claim, now: Instant) -> Result<Claimed, PairingError> {
        let matching = self
            .offers
            .iter()
            .position(|offer| proof_matches(&offer.token, &claim.key, &claim.proof));
        let Some(index) = matching else {
            let mut outcome = PairingError::BadProof;
            for offer in &mut self.offers {
                if let Stage::Open { tries } = &mut offer.stage {
                    if now < offer.deadline {
                        *tries += 1;
                        if *tries >= MAX_TRIES {
                            offer.stage = Stage::Burnt;
                            outcome = PairingError::TooManyTries;
                        }
                    }
                }
            }
            return Err(outcome);
        };
        let lifetime = self.lifetime;
        let offer = &mut self.offers[index];
        match offer.stage {
            _ if now >= offer.deadline && matches!(offer.stage, Stage::Open { .. }) => {
                Err(PairingError::Expired)
            }
            Stage::Open { .. } => {
                let code = code(&offer.token, &claim.key);
                let name = crate::devices::clean_name(&claim.name);
                offer.stage = Stage::Claimed {
                    key: claim.key,
                    name: name.clone(),
                    code: code.clone(),
                };
                offer.deadline = now + lifetime;
                Ok(Claimed {
                    id: offer.id,
                    code,
                    name,
                })
            }
            Stage::Claimed { .. } | Stage::Used => Err(PairingError::AlreadyUsed),
            Stage::Burnt => Err(PairingError::TooManyTries),
        }
    }

    /// The desk's confirmation of the code it shows: the device's key and name to store. A wrong
    /// code ends the pairing.
    pub fn confirm(
        &mut self,
        id: PairingId,
        code: &str,
        now: Instant,
    ) -> Result<(DeviceKey, String), PairingError> {
        let offer = self
            .offers
            .iter_mut()
            .find(|offer| offer.id == id)
            .ok_or(PairingError::Unknown)?;
        if now >= offer.deadline {
            offer.stage = Stage::Burnt;
            return Err(PairingError::Expired);
        }
        match std::mem::replace(&mut offer.stage, Stage::Used) {
            Stage::Claimed {
                key,
                name,
                code: expected,
            } => {
                if expected.as_bytes() == code.as_bytes() {
                    Ok((key, name))
                } else {
                    offer.stage = Stage::Burnt;
                    Err(PairingError::WrongCode)
                }
            }
            stage @ Stage::Open { .. } => {
                offer.stage = stage;
                Err(PairingError::NotClaimed)
            }
            stage => {
                offer.stage = stage;
                Err(PairingError::Unknown)
            }
        }
    }

    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// Ends an offer at the desk (the person closed the QR).
    pub fn cancel(&mut self, id: PairingId) {
        self.offers.retain(|offer| offer.id != id);
    }

    /// Offers past their deadline are kept one more lifetime, so a late claim hears "expired" or
    /// "already used" rather than "no such pairing"; then they are forgotten.
    fn forget_ended(&mut self, now: Instant) {
        let lifetime = self.lifetime;
        self.offers.retain(|offer| now < offer.deadline + lifetime);
    }
}

/// HMAC-SHA256 keyed by the token over the raw public key: what the page sends to prove it holds
/// the token.
pub fn proof(token: &[u8; 32], key: &DeviceKey) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(token).expect("any key length");
    mac.update(key.raw());
    mac.finalize().into_bytes().into()
}

fn proof_matches(token: &[u8; 32], key: &DeviceKey, proof: &[u8]) -> bool {
    let mut mac = HmacSha256::new_from_slice(token).expect("any key length");
    mac.update(key.raw());
    // Constant time.
    mac.verify_slice(proof).is_ok()
}

/// The 6-digit code: HMAC-SHA256 keyed by the token over `"askdesk pairing code v1" || raw key`,
/// its first four bytes as a big-endian number, modulo 1,000,000, with leading zeros.
pub fn code(token: &[u8; 32], key: &DeviceKey) -> String {
    let mut mac = HmacSha256::new_from_slice(token).expect("any key length");
    mac.update(CODE_CONTEXT);
    mac.update(key.raw());
    let bytes = mac.finalize().into_bytes();
    let number = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    format!("{:06}", number % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> DeviceKey {
        let signer = p256::ecdsa::SigningKey::from_slice(&[seed; 32]).unwrap();
        DeviceKey::from_raw(signer.verifying_key().to_sec1_point(false).as_bytes()).unwrap()
    }

    fn claim(token: &[u8; 32], seed: u8) -> Claim {
        Claim {
            key: key(seed),
            proof: proof(token, &key(seed)).to_vec(),
            name: "Pixel".into(),
        }
    }

    #[test]
    fn a_claimed_offer_pairs_when_the_desk_confirms_its_code() {
        let start = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (id, token) = pairings.offer(start);
        let claimed = pairings.claim(claim(&token, 1), start).unwrap();
        assert_eq!(claimed.code, code(&token, &key(1)));
        assert_eq!(claimed.code.len(), 6);
        let (paired, name) = pairings.confirm(id, &claimed.code, start).unwrap();
        assert_eq!((paired, name.as_str()), (key(1), "Pixel"));
        assert_eq!(
            pairings.confirm(id, &claimed.code, start),
            Err(PairingError::Unknown)
        );
    }

    #[test]
    fn an_offer_expires_before_its_claim_and_a_claim_before_its_confirmation() {
        let start = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (_, token) = pairings.offer(start);
        let late = start + DEFAULT_LIFETIME;
        assert_eq!(
            pairings.claim(claim(&token, 1), late).unwrap_err(),
            PairingError::Expired
        );

        let (id, token) = pairings.offer(start);
        let claimed = pairings
            .claim(claim(&token, 1), start + Duration::from_secs(100))
            .unwrap();
        let confirm_at = start + Duration::from_secs(100) + DEFAULT_LIFETIME;
        assert_eq!(
            pairings.confirm(id, &claimed.code, confirm_at),
            Err(PairingError::Expired)
        );
    }

    #[test]
    fn a_token_pairs_one_phone_only() {
        let now = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (_, token) = pairings.offer(now);
        pairings.claim(claim(&token, 1), now).unwrap();
        assert_eq!(
            pairings.claim(claim(&token, 2), now).unwrap_err(),
            PairingError::AlreadyUsed
        );
        assert_eq!(
            pairings.claim(claim(&token, 1), now).unwrap_err(),
            PairingError::AlreadyUsed
        );
    }

    #[test]
    fn the_sixth_try_is_refused_even_with_the_token() {
        let now = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (_, token) = pairings.offer(now);
        let wrong = [9u8; 32];
        for attempt in 1..=MAX_TRIES {
            let expected = if attempt < MAX_TRIES {
                PairingError::BadProof
            } else {
                PairingError::TooManyTries
            };
            assert_eq!(pairings.claim(claim(&wrong, 1), now).unwrap_err(), expected);
        }
        assert_eq!(
            pairings.claim(claim(&token, 1), now).unwrap_err(),
            PairingError::TooManyTries
        );
    }

    #[test]
    fn a_proof_for_another_key_is_a_failed_try() {
        let now = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (_, token) = pairings.offer(now);
        let mut stolen = claim(&token, 1);
        stolen.key = key(2);
        assert_eq!(
            pairings.claim(stolen, now).unwrap_err(),
            PairingError::BadProof
        );
    }

    #[test]
    fn a_wrong_code_at_the_desk_ends_the_pairing() {
        let now = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (id, token) = pairings.offer(now);
        let claimed = pairings.claim(claim(&token, 1), now).unwrap();
        let wrong = if claimed.code == "000000" {
            "000001"
        } else {
            "000000"
        };
        assert_eq!(
            pairings.confirm(id, wrong, now),
            Err(PairingError::WrongCode)
        );
        assert_eq!(
            pairings.confirm(id, &claimed.code, now),
            Err(PairingError::Unknown)
        );
    }

    #[test]
    fn an_unclaimed_offer_cannot_be_confirmed() {
        let now = Instant::now();
        let mut pairings = Pairings::new(DEFAULT_LIFETIME);
        let (id, _) = pairings.offer(now);
        assert_eq!(
            pairings.confirm(id, "123456", now),
            Err(PairingError::NotClaimed)
        );
    }

    #[test]
    fn the_code_is_the_documented_derivation() {
        let token = [3u8; 32];
        let mut mac = HmacSha256::new_from_slice(&token).unwrap();
        mac.update(b"askdesk pairing code v1");
        mac.update(key(1).raw());
        let bytes = mac.finalize().into_bytes();
        let n = u32::from_be_bytes(bytes[..4].try_into().unwrap()) % 1_000_000;
        assert_eq!(code(&token, &key(1)), format!("{n:06}"));
        assert_ne!(code(&token, &key(1)), code(&token, &key(2)));
    }
}
