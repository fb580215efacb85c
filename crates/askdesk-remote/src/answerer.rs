//! [`RemoteAnswerer`]: the remote as an in-process answerer on a broker's waterfall, for a desk
//! that hosts the broker itself (the desktop app). Each request it is offered is held for the
//! paired devices ([`Remote::offer`]); a permission prompt only when a device's scope reaches
//! permission prompts ([`Remote::takes_permission_prompt`]), else it is passed on at once; a device's verified answer claims the request, signed with the device's name
//! ([`Answerer::signer`]), so the journal and the desk say which phone answered. The service asks
//! for the signer exactly when that answer settles the request, and withdraws the request from
//! this answerer when another member's decision settled it: the devices are told which
//! ([`Remote::settled`]), so the phone says "Sent" only for an answer the broker used. The time an
//! answer rule's deadline runs out reaches the phones as the service tells it
//! ([`Answerer::deadline`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use askdesk_core::answerer::{decision_channel, Answerer, Decision, Failure, Offer, Withdrawal};
use askdesk_core::sync::lock;
use askdesk_core::{meta, Answer, Request, RequestId, UserQuestionError};

use crate::pending::{Ending, PendingRequest, Settled};
use crate::remote::{Offered, Remote};

/// The label the remote answers under, in the broker's status and (with the device's name,
/// `phone:<device>`) in the history.
pub const LABEL: &str = "phone";

/// The device's name in a settlement's signature `phone:<device>`, as [`Answerer::signer`] made
/// it; `None` for any other answerer.
pub fn device_of(by: &str) -> Option<&str> {
    by.strip_prefix(LABEL)?.strip_prefix(':')
}

/// The remote on an in-process waterfall. Register it in the `person` race group; unregister it
/// before [`Remote::shutdown`], so the requests it holds move on.
pub struct RemoteAnswerer {
    remote: Remote,
    held: Arc<Mutex<HashMap<RequestId, Held>>>,
    /// The service's latest word on each offered request's deadline: a permission prompt is held
    /// for the phones only after the device list was read, and learns it from here then.
    deadlines: Arc<Mutex<HashMap<RequestId, Option<SystemTime>>>>,
}

/// What this answerer knows of a request, until both its phone's answer (if any) and the
/// service's word on it are in.
enum Held {
    /// A phone's answer was sent to the service, by the device named; the service asks for the
    /// signer when it settles the request, or withdraws it.
    Answered(String),
    /// The service withdrew the request, for this reason, before a phone's answer claimed it
    /// reached this answerer: an answer that claimed it meanwhile hears why it lost.
    Ended(Ending),
}

impl RemoteAnswerer {
    pub fn new(remote: Remote) -> RemoteAnswerer {
        RemoteAnswerer {
            remote,
            held: Arc::default(),
            deadlines: Arc::default(),
        }
    }

    /// The request settled without this answerer, for the reason `why`: devices are told, and a
    /// phone whose answer was on its way hears it was not used, and why.
    fn ended(&self, request: RequestId, why: Ending) {
        lock(&self.deadlines).remove(&request);
        let answered = {
            let mut held = lock(&self.held);
            match held.remove(&request) {
                Some(Held::Answered(device)) => Some(device),
                _ => {
                    held.insert(request, Held::Ended(why.clone()));
                    None
                }
            }
        };
        match answered {
            Some(device) => self.remote.settled(Settled::lost(request, device, why)),
            // The request leaves the phones: its task then ends and forgets it.
            None => self.remote.withdraw(request, why),
        }
    }
}

impl Answerer for RemoteAnswerer {
    /// Must be called on a tokio runtime (the broker's): the wait for a device runs as a task.
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let pending = PendingRequest {
            id: request.id,
            agent: request.agent.clone(),
            questions: request.questions.clone(),
            deadline: None,
        };
        let prompt = meta::is_permission_prompt(request.agent.as_ref());
        // A permission prompt is held for the phones only once a device's scope was found to reach
        // it (that reads the device list, off this thread); any other request at once.
        let offered = if prompt {
            None
        } else {
            match self.remote.offer(pending.clone()) {
                Ok(offered) => Some(offered),
                Err(error) => {
                    tracing::warn!(%error, "passing a request to the next answerer");
                    return Offer::Now(Decision::Delegate);
                }
            }
        };
        let (responder, receiver) = decision_channel();
        let held = self.held.clone();
        let deadlines = self.deadlines.clone();
        let remote = self.remote.clone();
        let id = request.id;
        tokio::spawn(async move {
            let offered = match offered {
                Some(offered) => offered,
                None => match offer_prompt(&remote, pending).await {
                    Some(offered) => {
                        // Ended while the device list was read: it leaves the phones at once.
                        let ended = {
                            let mut held = lock(&held);
                            match held.get(&id) {
                                Some(Held::Ended(_)) => held.remove(&id),
                                _ => None,
                            }
                        };
                        if let Some(Held::Ended(why)) = ended {
                            return remote.withdraw(id, why);
                        }
                        // A deadline told while the device list was read.
                        let deadline = lock(&deadlines).get(&id).copied().flatten();
                        remote.set_deadline(id, deadline);
                        offered
                    }
                    // The dropped responder passes the request on.
                    None => {
                        lock(&deadlines).remove(&id);
                        return;
                    }
                },
            };
            // `None`: withdrawn from the phones; the dropped responder passes the request on.
            let verified = offered.await;
            lock(&deadlines).remove(&id);
            let Some(verified) = verified else {
                lock(&held).remove(&id);
                return;
            };
            tracing::info!(device = %verified.device, request = %id, "answered from a phone");
            {
                let mut held = lock(&held);
                if let Some(Held::Ended(why)) = held.remove(&id) {
                    drop(held);
                    return remote.settled(Settled::lost(id, verified.device, why));
                }
                held.insert(id, Held::Answered(verified.device));
            }
            let decision = match verified.answer {
                Some(answer) => Decision::Claim(answer),
                // The person dismissed the whole batch on the phone, as at the desk.
                None => Decision::Fail(Failure::Domain(UserQuestionError::cancelled_by_user())),
            };
            // Refused: the request settled elsewhere, and its withdrawal tells the phone how.
            let _ = responder.decide(decision);
        });
        Offer::Later(receiver)
    }

    fn withdraw(&self, request: RequestId, why: Withdrawal) -> Option<Answer> {
        self.ended(request, Ending::of(&why));
        None
    }

    fn overruled(&self, request: RequestId, _by: &str) {
        self.ended(request, Ending::Expired);
    }

    fn deadline(&self, request: RequestId, at: Option<SystemTime>) {
        lock(&self.deadlines).insert(request, at);
        self.remote.set_deadline(request, at);
    }

    fn signer(&self, request: RequestId) -> Option<String> {
        let Some(Held::Answered(device)) = lock(&self.held).remove(&request) else {
            return None;
        };
        self.remote.settled(Settled::used(request, device.clone()));
        Some(device)
    }
}

/// Holds a permission prompt for the phones if a device's scope reaches it; `None` passes it on.
async fn offer_prompt(remote: &Remote, pending: PendingRequest) -> Option<Offered> {
    let check = remote.clone();
    let agent = pending.agent.clone();
    let takes = tokio::task::spawn_blocking(move || check.takes_permission_prompt(agent.as_ref()))
        .await
        .unwrap_or(false);
    if !takes {
        tracing::info!("passing a permission prompt on: no phone's scope reaches it");
        return None;
    }
    remote
        .offer(pending)
        .inspect_err(|error| tracing::warn!(%error, "passing a request to the next answerer"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phone_signature_names_its_device_and_nothing_else_does() {
        assert_eq!(device_of("phone:Pixel 8"), Some("Pixel 8"));
        assert_eq!(device_of("phone:a:b"), Some("a:b"));
        assert_eq!(device_of("phone"), None);
        assert_eq!(device_of("phoney:x"), None);
        assert_eq!(device_of("desktop"), None);
        assert_eq!(device_of("rule:phone:x"), None);
    }
}
