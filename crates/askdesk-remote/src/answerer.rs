//! [`RemoteAnswerer`]: the remote as an in-process answerer on a broker's waterfall, for a desk
//! that hosts the broker itself (the desktop app). Each request it is offered is held for the
//! paired devices ([`Remote::offer`]); a permission prompt is passed on at once, never offered to
//! a phone; a device's verified answer claims the request, signed with the device's name
//! ([`Answerer::signer`]), so the journal and the desk say which phone answered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use askdesk_core::answerer::{decision_channel, Answerer, Decision, Offer, Withdrawal};
use askdesk_core::sync::lock;
use askdesk_core::{meta, Answer, Request, RequestId};

use crate::pending::PendingRequest;
use crate::remote::Remote;

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
    /// The device whose answer this answerer sent, per request, until the service asks.
    signers: Arc<Mutex<HashMap<RequestId, String>>>,
}

impl RemoteAnswerer {
    pub fn new(remote: Remote) -> RemoteAnswerer {
        RemoteAnswerer {
            remote,
            signers: Arc::default(),
        }
    }
}

impl Answerer for RemoteAnswerer {
    /// Must be called on a tokio runtime (the broker's): the wait for a device runs as a task.
    fn offer(&self, request: &Arc<Request>) -> Offer {
        if meta::is_permission_prompt(request.agent.as_ref()) {
            tracing::info!("passing a permission prompt on: phones cannot approve one");
            return Offer::Now(Decision::Delegate);
        }
        let offered = self.remote.offer(PendingRequest {
            id: request.id,
            agent: request.agent.clone(),
            questions: request.questions.clone(),
        });
        let offered = match offered {
            Ok(offered) => offered,
            Err(error) => {
                tracing::warn!(%error, "passing a request to the next answerer");
                return Offer::Now(Decision::Delegate);
            }
        };
        let (responder, receiver) = decision_channel();
        let signers = self.signers.clone();
        tokio::spawn(async move {
            // `None`: withdrawn from the phones; the dropped responder passes the request on.
            let Some(verified) = offered.await else {
                return;
            };
            tracing::info!(device = %verified.device, request = %verified.request, "answered from a phone");
            lock(&signers).insert(verified.request, verified.device);
            if responder.decide(Decision::Claim(verified.answer)).is_err() {
                lock(&signers).remove(&verified.request);
            }
        });
        Offer::Later(receiver)
    }

    fn withdraw(&self, request: RequestId, _why: Withdrawal) -> Option<Answer> {
        self.remote.withdraw(request);
        lock(&self.signers).remove(&request);
        None
    }

    fn signer(&self, request: RequestId) -> Option<String> {
        lock(&self.signers).remove(&request)
    }
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
