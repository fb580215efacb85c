//! What a race group's socket member is told became of a request (protocol 4.2), through a real
//! broker and the client library: its reply used (`askdesk/settled`), or the request withdrawn
//! with the reason (another member answered, naming it; an answer rule's deadline; the agent
//! withdrew it; the agent went).

use std::sync::Arc;

use askdesk_broker::client::{Client, Incoming, IncomingRequest, Outcome};
use askdesk_broker::protocol::methods::CancelReason;
use askdesk_broker::ServerConfig;
use askdesk_core::testing::{ask, choose, member, overrule, question, Holding};
use askdesk_core::{Answer, AskRequest, Config, Decision, Scope, Service};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

fn yes() -> Answer {
    choose("go", "Yes")
}

fn deploy() -> AskRequest {
    ask(vec![question("go", "Deploy?", &["Yes", "No"])])
}

struct Broker {
    _dir: tempfile::TempDir,
    socket: std::path::PathBuf,
    service: Service,
    /// The desk's dialog as a race group's in-process member.
    desk: Arc<Holding>,
    /// The socket member: the phone's bridge, as `askdesk remote` registers it.
    phone: Client,
    incoming: Incoming,
    shutdown: CancellationToken,
}

async fn broker() -> Broker {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run").join("askdesk.sock");
    let service = Service::new(Config::default());
    let desk = Arc::new(Holding::default());
    service
        .register_answerer(member("desktop", Some("person")), desk.clone())
        .unwrap();
    let shutdown = CancellationToken::new();
    let listener = askdesk_broker::bind(&socket).unwrap();
    tokio::spawn(askdesk_broker::run(
        listener,
        service.clone(),
        ServerConfig::default(),
        shutdown.clone(),
    ));
    let phone = Client::connect(&socket, "phone").await.unwrap();
    let (_, incoming) = phone
        .register_answerer_in(Scope::All, false, Some("phone"), Some("person"))
        .await
        .unwrap();
    Broker {
        _dir: dir,
        socket,
        service,
        desk,
        phone,
        incoming,
        shutdown,
    }
}

impl Broker {
    /// Asks from a connection of its own; the phone has the request when this returns.
    async fn ask(
        &mut self,
    ) -> (
        tokio::task::JoinHandle<()>,
        CancellationToken,
        IncomingRequest,
    ) {
        let asker = Client::connect(&self.socket, "asker").await.unwrap();
        let cancel = CancellationToken::new();
        let asking = tokio::spawn({
            let cancel = cancel.clone();
            async move {
                let _ = asker.ask(&deploy(), &cancel).await;
            }
        });
        let request = self.incoming.next().await.expect("the phone is offered it");
        (asking, cancel, request)
    }

    /// The reason and the signer the phone was given for the withdrawn `request`.
    async fn withdrawn(request: &IncomingRequest) -> (Option<CancelReason>, Option<String>) {
        request.cancelled.cancelled().await;
        match request.outcome() {
            Some(Outcome::Withdrawn { reason, by }) => (reason, by),
            other => panic!("not withdrawn: {other:?}"),
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

#[tokio::test]
async fn the_broker_says_it_knows_outcomes() {
    let broker = broker().await;
    assert!(broker.phone.capabilities().outcomes);
}

#[tokio::test]
async fn a_member_whose_answer_settled_the_request_is_told_it_was_used() {
    let mut broker = broker().await;
    let (asking, _, request) = broker.ask().await;
    assert_eq!(
        request.reply_confirmed(Ok(Some(yes()))).await.unwrap(),
        Outcome::Used
    );
    asking.await.unwrap();
}

#[tokio::test]
async fn a_member_that_lost_to_the_desk_is_told_the_desk_answered() {
    let mut broker = broker().await;
    let (asking, _, request) = broker.ask().await;
    let responder = broker.desk.take().unwrap();
    responder.decide(Decision::Claim(yes())).unwrap();
    assert_eq!(
        Broker::withdrawn(&request).await,
        (
            Some(CancelReason::AnsweredElsewhere),
            Some("desktop".into())
        )
    );
    asking.await.unwrap();
    // An answer that crossed the desk's is told the same, never that it was used.
    let (asking, _, request) = broker.ask().await;
    let responder = broker.desk.take().unwrap();
    responder.decide(Decision::Claim(yes())).unwrap();
    asking.await.unwrap();
    assert_eq!(
        request.reply_confirmed(Ok(Some(yes()))).await.unwrap(),
        Outcome::Withdrawn {
            reason: Some(CancelReason::AnsweredElsewhere),
            by: Some("desktop".into())
        }
    );
}

#[tokio::test]
async fn a_request_the_agent_withdrew_says_so() {
    let mut broker = broker().await;
    let (asking, cancel, request) = broker.ask().await;
    cancel.cancel();
    assert_eq!(
        Broker::withdrawn(&request).await,
        (Some(CancelReason::Withdrawn), None)
    );
    asking.await.unwrap();
}

#[tokio::test]
async fn a_request_whose_agent_went_says_so() {
    let mut broker = broker().await;
    // The asker speaks the wire by hand, so its connection closes exactly when it is dropped.
    let stream = UnixStream::connect(&broker.socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    for line in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": { "protocolVersion": 1, "client": { "name": "asker" } } }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "user-questions/ask", "params": deploy() }),
    ] {
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = BufReader::new(read).lines();
    lines.next_line().await.unwrap().expect("initialized");
    let request = broker
        .incoming
        .next()
        .await
        .expect("the phone is offered it");
    drop((write, lines));
    assert_eq!(
        Broker::withdrawn(&request).await,
        (Some(CancelReason::AgentGone), None)
    );
}

#[tokio::test]
async fn a_request_an_answer_rules_deadline_decided_says_it_expired() {
    let mut broker = broker().await;
    let (asking, _, request) = broker.ask().await;
    let pending = broker.service.pending();
    overrule(&broker.service, pending[0].request, "rule:lunch", yes());
    assert_eq!(
        Broker::withdrawn(&request).await,
        (Some(CancelReason::Expired), Some("rule:lunch".into()))
    );
    asking.await.unwrap();
}

/// The deadline the phone's bridge was last told for `request`, once it differs from `before`.
async fn told_deadline(
    request: &IncomingRequest,
    before: Option<std::time::SystemTime>,
) -> Option<std::time::SystemTime> {
    let mut deadline = request.deadline();
    let told = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        deadline.wait_for(|at| *at != before),
    )
    .await
    .expect("told within the ceiling")
    .expect("the connection stays");
    *told
}

#[tokio::test]
async fn a_member_holding_a_request_is_told_its_deadline_as_it_moves() {
    let mut broker = broker().await;
    let (asking, cancel, request) = broker.ask().await;
    assert_eq!(*request.deadline().borrow(), None, "no deadline runs");
    let id = broker.service.pending()[0].request;
    // On the broker's clock, to the millisecond the protocol carries.
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(4_102_444_800_123);
    broker.service.set_deadline(id, Some(at));
    assert_eq!(told_deadline(&request, None).await, Some(at));
    // Held at the desk: no clock runs.
    broker.service.set_deadline(id, None);
    assert_eq!(told_deadline(&request, Some(at)).await, None);
    cancel.cancel();
    asking.await.unwrap();
}
