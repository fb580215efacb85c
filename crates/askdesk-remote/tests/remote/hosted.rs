//! The remote hosted in the broker as the desktop app hosts it (`RemoteAnswerer` in the `person`
//! race group beside the desk's dialog): what a phone is told of each way a request ends.

use std::sync::Arc;

use askdesk_core::testing::{choose, member, overrule, Holding};
use askdesk_core::{
    Answer, Answerer, AnswererRegistration, AskError, AskRequest, Config, Decision, Offer, Request,
    Scope, Service,
};
use askdesk_remote::RemoteAnswerer;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::answers::{connected, request, yes};
use crate::phone::{desk, next, nonce, Desk, Phone, Socket};

struct Hosted {
    /// Serves the phone's socket while the test runs.
    _desk: Desk,
    service: Service,
    /// The desk's dialog: holds every request until the test decides for it.
    dialog: Arc<Holding>,
    phone: Phone,
    socket: Socket,
}

async fn hosted() -> Hosted {
    let desk = desk().await;
    let service = Service::new(Config::default());
    let dialog = Arc::new(Holding::default());
    service
        .register_answerer(member("desktop", Some("person")), dialog.clone())
        .unwrap();
    service
        .register_answerer(
            member(askdesk_remote::answerer::LABEL, Some("person")),
            Arc::new(RemoteAnswerer::new(desk.remote.clone())),
        )
        .unwrap();
    let (phone, socket) = connected(&desk, "Pixel").await;
    Hosted {
        _desk: desk,
        service,
        dialog,
        phone,
        socket,
    }
}

impl Hosted {
    /// Asks; returns the ask and the request as the phone received it.
    async fn ask(
        &mut self,
        cancel: &CancellationToken,
    ) -> (tokio::task::JoinHandle<Result<Answer, AskError>>, Value) {
        let asked = AskRequest {
            questions: request(1).questions,
            agent: None,
        };
        let asking = tokio::spawn(self.service.ask(asked, cancel));
        let message = next(&mut self.socket).await;
        assert_eq!(message["type"], "request", "{message}");
        (asking, message["request"].clone())
    }

    /// The next message for the phone, with the request's id left out.
    async fn told(&mut self) -> Value {
        let mut message = next(&mut self.socket).await;
        message.as_object_mut().unwrap().remove("id");
        message
    }
}

fn chose_yes() -> Answer {
    choose("go", "Yes (Recommended)")
}

#[tokio::test]
async fn the_phone_that_answered_hears_its_answer_was_used() {
    let mut hosted = hosted().await;
    let (asking, wire) = hosted.ask(&CancellationToken::new()).await;
    let reply = hosted.phone.answer(&wire, &nonce(), yes());
    let socket = &mut hosted.socket;
    assert_eq!(
        crate::answers::send(socket, &reply).await["type"],
        "accepted"
    );
    assert_eq!(asking.await.unwrap().unwrap(), chose_yes());
    assert_eq!(
        hosted.told().await,
        json!({ "type": "withdrawn", "reason": "claimed" })
    );
    assert_eq!(
        hosted.told().await,
        json!({ "type": "settled", "device": "Pixel", "used": true })
    );
}

#[tokio::test]
async fn a_request_answered_on_the_desk_says_so() {
    let mut hosted = hosted().await;
    let (asking, _) = hosted.ask(&CancellationToken::new()).await;
    let responder = hosted.dialog.take().unwrap();
    responder.decide(Decision::Claim(chose_yes())).unwrap();
    asking.await.unwrap().unwrap();
    assert_eq!(
        hosted.told().await,
        json!({ "type": "withdrawn", "reason": "answered-elsewhere" })
    );
}

#[tokio::test]
async fn a_request_the_agent_withdrew_says_so() {
    let mut hosted = hosted().await;
    let cancel = CancellationToken::new();
    let (asking, _) = hosted.ask(&cancel).await;
    cancel.cancel();
    assert!(asking.await.unwrap().is_err());
    assert_eq!(
        hosted.told().await,
        json!({ "type": "withdrawn", "reason": "withdrawn" })
    );
}

#[tokio::test]
async fn a_request_an_answer_rules_deadline_decided_says_it_expired() {
    let mut hosted = hosted().await;
    let (asking, _) = hosted.ask(&CancellationToken::new()).await;
    let pending = hosted.service.pending();
    overrule(
        &hosted.service,
        pending[0].request,
        "rule:lunch",
        chose_yes(),
    );
    asking.await.unwrap().unwrap();
    assert_eq!(
        hosted.told().await,
        json!({ "type": "withdrawn", "reason": "expired" })
    );
}

#[tokio::test]
async fn a_request_whose_agent_went_says_so() {
    let mut hosted = hosted().await;
    // The asker as a whole (its connection) goes: its asks' tokens are children of its own.
    let gone = CancellationToken::new();
    let asked = AskRequest {
        questions: request(1).questions,
        agent: None,
    };
    let asking = tokio::spawn(hosted.service.ask_settled_from(
        asked,
        &gone.child_token(),
        Some(&gone),
    ));
    assert_eq!(next(&mut hosted.socket).await["type"], "request");
    gone.cancel();
    assert!(asking.await.unwrap().result.is_err());
    assert_eq!(
        hosted.told().await,
        json!({ "type": "withdrawn", "reason": "agent-gone" })
    );
}

/// An answer rule with `after`, as the rules engine keeps its deadline: set on the service while
/// it is offered the request, before the person's group is.
struct Timed {
    service: askdesk_core::WeakService,
    at: std::time::SystemTime,
}

impl Answerer for Timed {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        if let Some(service) = self.service.upgrade() {
            service.set_deadline(request.id, Some(self.at));
        }
        Offer::Now(Decision::Delegate)
    }
}

#[tokio::test]
async fn the_phone_counts_down_to_the_deadline_the_service_keeps() {
    let mut hosted = hosted().await;
    let at = std::time::SystemTime::now() + std::time::Duration::from_secs(120);
    let timed = Timed {
        service: hosted.service.downgrade(),
        at,
    };
    let rules = AnswererRegistration {
        scope: Scope::All,
        prepend: true,
        label: Some("rules".into()),
        group: None,
    };
    hosted
        .service
        .register_answerer(rules, Arc::new(timed))
        .unwrap();
    let cancel = CancellationToken::new();
    let (asking, wire) = hosted.ask(&cancel).await;
    let millis = |at: std::time::SystemTime| {
        u64::try_from(
            at.duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap()
    };
    assert_eq!(
        hosted.told().await,
        json!({ "type": "deadline", "deadline": millis(at) })
    );
    let id = askdesk_core::RequestId(wire["id"].as_str().unwrap()[1..].parse().unwrap());
    // Held at the desk: no clock runs; released later.
    hosted.service.set_deadline(id, None);
    assert_eq!(
        hosted.told().await,
        json!({ "type": "deadline", "deadline": null })
    );
    let later = at + std::time::Duration::from_secs(30);
    hosted.service.set_deadline(id, Some(later));
    assert_eq!(
        hosted.told().await,
        json!({ "type": "deadline", "deadline": millis(later) })
    );
    cancel.cancel();
    assert!(asking.await.unwrap().is_err());
    assert_eq!(hosted.told().await["reason"], "withdrawn");
}
