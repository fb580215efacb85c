//! One definition per wire method (protocol 5.4, 5.5, and askdesk's `askdesk/` extensions): its name,
//! its params and its result. The server, the client library, the CLI and the desktop app all use
//! these types, so a method's shape is written down once.
//!
//! A method is a type that is never built (`enum Ping {}`); it only carries the names of its
//! params and result types. Field names on the wire are camelCase; optional fields are left out
//! when absent, except where the protocol shows them as `null`.

use std::borrow::Cow;

use askdesk_core::{
    AgentInfo, AgentRegistration, AgentSummary, Answer, AnswererId, AnswererSummary, AskRequest,
    Handle, Question, RequestId, Scope,
};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize};

use super::Id;

/// A request: a method that is answered with a result (or an error).
pub trait RequestMethod {
    /// The method's name on the wire.
    const NAME: &'static str;
    /// What the caller sends. It may borrow what the sender already holds (`'a`); it is always
    /// read back as an owned value.
    type Params<'a>: Serialize + DeserializeOwned;
    /// What a successful response carries.
    type Result: Serialize + DeserializeOwned;
}

/// A notification: a method that is never answered.
pub trait NotificationMethod {
    /// The method's name on the wire.
    const NAME: &'static str;
    type Params: Serialize + DeserializeOwned;
}

/// `{}` on the wire: the params of a method that takes none, and the result of one that only
/// acknowledges. Whatever is sent in its place is ignored (protocol 1.1: unknown fields are ignored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Empty {}

impl<'de> Deserialize<'de> for Empty {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer).map(|_| Empty {})
    }
}

// Session.

/// `initialize`: the first request on a connection; names the client, agrees on the version.
pub enum Initialize {}

impl RequestMethod for Initialize {
    const NAME: &'static str = "initialize";
    type Params<'a> = InitializeParams;
    type Result = InitializeResult;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Must be [`PROTOCOL_VERSION`](super::PROTOCOL_VERSION).
    pub protocol_version: u64,
    pub client: ClientInfo,
}

/// Who is connecting, for logs and for the history of late answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: u64,
    pub server: ServerInfo,
    /// What this broker knows beyond protocol 1; absent from a broker that knows nothing more.
    #[serde(default)]
    pub capabilities: Capabilities,
}

/// The extensions a broker knows, so a client can tell them from fields silently ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// `answerers/register` takes `group`: the members of a race group are offered a request at
    /// the same moment.
    #[serde(default)]
    pub answerer_groups: bool,
    /// The broker says what became of a request it sent an answerer (protocol 4.2): why it was
    /// withdrawn (`$/cancelRequest`'s `reason` and `by`), and to a race group's member whose
    /// reply settled it, `askdesk/settled`.
    #[serde(default)]
    pub outcomes: bool,
}

/// The broker's name (`askdesk`) and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// `ping`: answered at once, even before `initialize`.
pub enum Ping {}

impl RequestMethod for Ping {
    const NAME: &'static str = "ping";
    type Params<'a> = Empty;
    type Result = Empty;
}

// Agents (protocol 3).

/// `agents/register`: registers a live agent; the handle names that incarnation.
pub enum AgentsRegister {}

impl RequestMethod for AgentsRegister {
    const NAME: &'static str = "agents/register";
    type Params<'a> = AgentRegistration;
    type Result = Handle;
}

/// `agents/unregister`: unregisters an agent and, transitively, every agent it owns.
pub enum AgentsUnregister {}

impl RequestMethod for AgentsUnregister {
    const NAME: &'static str = "agents/unregister";
    type Params<'a> = UnregisterAgentParams;
    /// `null`.
    type Result = ();
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnregisterAgentParams {
    pub agent: Handle,
}

/// `agents/list`: the live agents, without their instance tokens.
pub enum AgentsList {}

impl RequestMethod for AgentsList {
    const NAME: &'static str = "agents/list";
    type Params<'a> = Empty;
    type Result = AgentList;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentList {
    pub agents: Vec<AgentSummary>,
}

// Questions (protocol 1, 2).

/// `user-questions/ask`: asks the human; waits until the request settles.
pub enum Ask {}

impl RequestMethod for Ask {
    const NAME: &'static str = "user-questions/ask";
    type Params<'a> = AskRequest;
    type Result = Answer;
}

// Answerers (protocol 4).

/// `answerers/register`: joins the waterfall; requests then arrive as `user-questions/request`.
pub enum AnswerersRegister {}

impl RequestMethod for AnswerersRegister {
    const NAME: &'static str = "answerers/register";
    type Params<'a> = RegisterAnswererParams;
    type Result = RegisteredAnswerer;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterAnswererParams {
    pub scope: Scope,
    #[serde(default)]
    pub prepend: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The race group to join (docs/protocol.md, section 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredAnswerer {
    /// `answerer-<n>`.
    pub answerer: AnswererId,
}

/// `answerers/unregister`: leaves the waterfall; only the connection that registered may.
pub enum AnswerersUnregister {}

impl RequestMethod for AnswerersUnregister {
    const NAME: &'static str = "answerers/unregister";
    type Params<'a> = UnregisterAnswererParams;
    /// `null`.
    type Result = ();
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnregisterAnswererParams {
    /// Kept as text, so that an id this connection does not hold, well-formed or not, gets the
    /// same "not registered on this connection" error.
    pub answerer: String,
}

/// `$/cancelRequest`, both ways: the sender no longer wants request `id` (an asker withdrawing its
/// ask, the broker withdrawing a request it relayed to an answerer).
pub enum CancelRequest {}

impl NotificationMethod for CancelRequest {
    const NAME: &'static str = "$/cancelRequest";
    type Params = CancelParams;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelParams {
    pub id: Id,
    /// Broker to answerer only: why the request was withdrawn (protocol 4.2). An asker's
    /// `$/cancelRequest` has none, and the broker ignores one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<CancelReason>,
    /// With `answered-elsewhere`, who answered (the winning member's label, `phone:<device>` for
    /// a phone the desk hosts); with `expired`, the rule whose deadline decided (`rule:<name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl CancelParams {
    /// An asker's withdrawal of its own request: no reason.
    pub fn of(id: Id) -> CancelParams {
        CancelParams {
            id,
            reason: None,
            by: None,
        }
    }
}

/// Why the broker withdrew a request from an answerer (protocol 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelReason {
    /// Another member of the answerer's race group settled it (`by` names it).
    AnsweredElsewhere,
    /// An answer rule's deadline decided it (`by` names the rule).
    Expired,
    /// The asker withdrew the question.
    Withdrawn,
    /// The asker went: its connection closed, or its agent was unregistered.
    AgentGone,
    /// The broker is shutting down.
    ShuttingDown,
    /// This answerer left the chain while it held the request.
    Unregistered,
    /// A reason this client does not know yet (a newer broker).
    #[serde(other)]
    Other,
}

/// `askdesk/settled`, broker to a race group's member (protocol 4.2): the member's reply to
/// request `id` settled it; the asker has that answer (or that error).
pub enum Settled {}

impl NotificationMethod for Settled {
    const NAME: &'static str = "askdesk/settled";
    type Params = SettledParams;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettledParams {
    /// The id of the `user-questions/request` the member replied to.
    pub id: Id,
}

/// `askdesk/deadline`, broker to an answerer holding request `id` (protocol 4.3): when the
/// request's deadline (an answer rule's `after`) runs out, or `null` when no clock runs any more
/// (the person holds it at the desk, or the rule was called off). For showing a countdown only.
pub enum Deadline {}

impl NotificationMethod for Deadline {
    const NAME: &'static str = "askdesk/deadline";
    type Params = DeadlineParams;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineParams {
    /// The id of the `user-questions/request` the deadline is for.
    pub id: Id,
    /// Milliseconds since the Unix epoch on the broker's clock; `null`: no deadline runs.
    pub at: Option<u64>,
}

/// `user-questions/request`, broker to answerer (protocol 5.5): the answerer claims with an answer,
/// delegates with `null`, or fails with an error.
pub enum QuestionRequest {}

impl RequestMethod for QuestionRequest {
    const NAME: &'static str = "user-questions/request";
    type Params<'a> = RequestParams<'a>;
    /// `Some(answer)` claims, `None` (`null`) delegates.
    type Result = Option<Answer>;
}

/// The questions and the asking agent (never its instance token). The broker sends the
/// questions it holds without copying them; the answerer reads its own copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestParams<'a> {
    pub questions: Cow<'a, [Question]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Cow<'a, AgentInfo>>,
}

// askdesk's own extensions.

/// `askdesk/status`: what `askdesk status` prints.
pub enum Status {}

impl RequestMethod for Status {
    const NAME: &'static str = "askdesk/status";
    type Params<'a> = Empty;
    type Result = StatusResult;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusResult {
    pub server: ServerInfo,
    /// The socket the broker listens on.
    pub socket: String,
    /// Connections open right now, this one included.
    pub connections: usize,
    pub agents: Vec<AgentSummary>,
    /// In chain order.
    pub answerers: Vec<AnswererSummary>,
    pub pending: Vec<PendingRequest>,
    /// The history journal; absent from a broker that does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryStatus>,
}

/// The history journal as `askdesk/status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryStatus {
    pub state: HistoryState,
    /// The live journal file, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Why the last commit failed (`failing`) or the journal could not be opened (`unavailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HistoryState {
    /// Settled requests are recorded.
    On,
    /// History was turned off (`--no-history`).
    Off,
    /// The last commit failed: answers are delivered, but not recorded until a commit succeeds.
    Failing,
    /// The journal could not be opened: nothing is recorded while this broker runs.
    Unavailable,
}

/// A request waiting for its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingRequest {
    pub request: RequestId,
    /// `null` for a request made without an agent.
    pub agent: Option<AgentInfo>,
    /// How many questions the batch holds.
    pub questions: usize,
    /// The label of the answerer holding it, `null` between answerers.
    pub holder: Option<String>,
    /// How long it has waited, in milliseconds.
    pub age_ms: u64,
}

/// `askdesk/focus`: a second desktop launch asks the first to show its window. Unknown to a
/// headless broker.
pub enum Focus {}

impl RequestMethod for Focus {
    const NAME: &'static str = "askdesk/focus";
    type Params<'a> = FocusParams;
    type Result = Empty;
}

/// `askdesk/focus`'s params: the second launch's activation token, which lets the window come
/// forward on a desktop that only raises a window the person asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FocusParams {
    /// The `XDG_ACTIVATION_TOKEN` (Wayland) or `DESKTOP_STARTUP_ID` (X11) the launcher gave the
    /// second launch; absent when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_token: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{encode_notification, encode_request, encode_response, parse};
    use crate::protocol::{Message, PROTOCOL_VERSION};
    use serde_json::json;
    use std::fmt::Debug;

    /// `M`'s request with id 1 and `params` is exactly `line`, and `line`'s params read back as
    /// `params`.
    fn request<M: RequestMethod>(params: &M::Params<'static>, line: &str)
    where
        M::Params<'static>: PartialEq + Debug,
    {
        let encoded = encode_request::<M>(&Id::Number(1), params);
        assert_eq!(std::str::from_utf8(&encoded).unwrap(), format!("{line}\n"));
        let Ok(Message::Request(parsed)) = parse(line.as_bytes()) else {
            panic!("{line} is not a request")
        };
        assert_eq!(parsed.method, M::NAME);
        let read: M::Params<'static> =
            crate::protocol::params(parsed.params.as_deref()).expect("params read back");
        assert_eq!(&read, params, "{line}");
    }

    /// A response with id 1 and `result` to a request of `M` is exactly `line`, and reads back.
    fn result<M: RequestMethod>(result: &M::Result, line: &str)
    where
        M::Result: PartialEq + Debug,
    {
        let encoded = encode_response::<M>(&Id::Number(1), Ok(result));
        assert_eq!(std::str::from_utf8(&encoded).unwrap(), format!("{line}\n"));
        let Ok(Message::Response(parsed)) = parse(line.as_bytes()) else {
            panic!("{line} is not a response")
        };
        let raw = parsed.result.expect("a result");
        let read: M::Result = serde_json::from_str(raw.get()).expect("result reads back");
        assert_eq!(&read, result, "{line}");
    }

    fn handle() -> Handle {
        Handle {
            id: "a".into(),
            instance: "t".into(),
        }
    }

    fn question() -> Question {
        serde_json::from_value(
            json!({ "id": "q", "question": "Go?", "options": [{ "label": "Yes" }] }),
        )
        .unwrap()
    }

    #[test]
    fn session() {
        request::<Initialize>(
            &InitializeParams {
                protocol_version: PROTOCOL_VERSION,
                client: ClientInfo {
                    name: "cli".into(),
                    version: Some("0.1.0".into()),
                },
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"cli","version":"0.1.0"}}}"#,
        );
        request::<Initialize>(
            &InitializeParams {
                protocol_version: PROTOCOL_VERSION,
                client: ClientInfo {
                    name: "cli".into(),
                    version: None,
                },
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"cli"}}}"#,
        );
        result::<Initialize>(
            &InitializeResult {
                protocol_version: PROTOCOL_VERSION,
                server: ServerInfo {
                    name: "askdesk".into(),
                    version: "0.1.0".into(),
                },
                capabilities: Capabilities {
                    answerer_groups: true,
                    outcomes: true,
                },
            },
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"server":{"name":"askdesk","version":"0.1.0"},"capabilities":{"answererGroups":true,"outcomes":true}}}"#,
        );
        request::<Ping>(
            &Empty {},
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#,
        );
        result::<Ping>(&Empty {}, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    }

    #[test]
    fn empty_params_ignore_what_is_sent() {
        for text in ["{}", r#"{"pad":"x","n":[1,2]}"#, "[]", "[1]"] {
            assert_eq!(
                serde_json::from_str::<Empty>(text).unwrap(),
                Empty {},
                "{text}"
            );
        }
    }

    #[test]
    fn agents() {
        let mut meta = serde_json::Map::new();
        meta.insert("cwd".into(), json!("/src"));
        request::<AgentsRegister>(
            &AgentRegistration {
                id: "b".into(),
                owner: Some(handle()),
                label: Some("Builder".into()),
                meta: Some(meta.clone()),
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"agents/register","params":{"id":"b","owner":{"id":"a","instance":"t"},"label":"Builder","meta":{"cwd":"/src"}}}"#,
        );
        request::<AgentsRegister>(
            &AgentRegistration {
                id: "b".into(),
                ..AgentRegistration::default()
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"agents/register","params":{"id":"b"}}"#,
        );
        result::<AgentsRegister>(
            &handle(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"id":"a","instance":"t"}}"#,
        );
        request::<AgentsUnregister>(
            &UnregisterAgentParams { agent: handle() },
            r#"{"jsonrpc":"2.0","id":1,"method":"agents/unregister","params":{"agent":{"id":"a","instance":"t"}}}"#,
        );
        result::<AgentsUnregister>(&(), r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
        request::<AgentsList>(
            &Empty {},
            r#"{"jsonrpc":"2.0","id":1,"method":"agents/list","params":{}}"#,
        );
        result::<AgentsList>(
            &AgentList {
                agents: vec![
                    AgentSummary {
                        id: "a".into(),
                        owner: None,
                        root: true,
                        label: Some("Builder".into()),
                        meta: Some(meta),
                    },
                    AgentSummary {
                        id: "b".into(),
                        owner: Some("a".into()),
                        root: false,
                        label: None,
                        meta: None,
                    },
                ],
            },
            r#"{"jsonrpc":"2.0","id":1,"result":{"agents":[{"id":"a","owner":null,"root":true,"label":"Builder","meta":{"cwd":"/src"}},{"id":"b","owner":"a","root":false}]}}"#,
        );
    }

    #[test]
    fn questions() {
        request::<Ask>(
            &AskRequest {
                questions: vec![question()],
                agent: Some(handle()),
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"user-questions/ask","params":{"questions":[{"id":"q","question":"Go?","options":[{"label":"Yes"}]}],"agent":{"id":"a","instance":"t"}}}"#,
        );
        request::<Ask>(
            &AskRequest {
                questions: vec![question()],
                agent: None,
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"user-questions/ask","params":{"questions":[{"id":"q","question":"Go?","options":[{"label":"Yes"}]}]}}"#,
        );
        let answer: Answer = serde_json::from_value(
            json!({ "answers": [{ "id": "q", "selected": [], "custom": "Later" }] }),
        )
        .unwrap();
        result::<Ask>(
            &answer,
            r#"{"jsonrpc":"2.0","id":1,"result":{"answers":[{"id":"q","selected":[],"custom":"Later"}]}}"#,
        );

        let questions = [question()];
        let agent = AgentInfo {
            id: "a".into(),
            label: Some("Builder".into()),
            meta: None,
        };
        // The broker's borrowed params encode exactly as the answerer's owned ones read back.
        let borrowed = encode_request::<QuestionRequest>(
            &Id::Number(1),
            &RequestParams {
                questions: Cow::Borrowed(&questions),
                agent: Some(Cow::Borrowed(&agent)),
            },
        );
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"user-questions/request","params":{"questions":[{"id":"q","question":"Go?","options":[{"label":"Yes"}]}],"agent":{"id":"a","label":"Builder"}}}"#;
        assert_eq!(borrowed, format!("{line}\n").into_bytes());
        request::<QuestionRequest>(
            &RequestParams {
                questions: Cow::Owned(questions.to_vec()),
                agent: Some(Cow::Owned(agent)),
            },
            line,
        );
        request::<QuestionRequest>(
            &RequestParams {
                questions: Cow::Owned(questions.to_vec()),
                agent: None,
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"user-questions/request","params":{"questions":[{"id":"q","question":"Go?","options":[{"label":"Yes"}]}]}}"#,
        );
        result::<QuestionRequest>(
            &Some(answer),
            r#"{"jsonrpc":"2.0","id":1,"result":{"answers":[{"id":"q","selected":[],"custom":"Later"}]}}"#,
        );
        result::<QuestionRequest>(&None, r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
    }

    #[test]
    fn answerers() {
        request::<AnswerersRegister>(
            &RegisterAnswererParams {
                scope: Scope::Agent(handle()),
                prepend: true,
                label: Some("phone".into()),
                group: None,
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"answerers/register","params":{"scope":{"agent":{"id":"a","instance":"t"}},"prepend":true,"label":"phone"}}"#,
        );
        request::<AnswerersRegister>(
            &RegisterAnswererParams {
                scope: Scope::All,
                prepend: false,
                label: Some("phone".into()),
                group: Some("person".into()),
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"answerers/register","params":{"scope":"all","prepend":false,"label":"phone","group":"person"}}"#,
        );
        request::<AnswerersRegister>(
            &RegisterAnswererParams {
                scope: Scope::All,
                prepend: false,
                label: None,
                group: None,
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"answerers/register","params":{"scope":"all","prepend":false}}"#,
        );
        let defaults: RegisterAnswererParams =
            serde_json::from_str(r#"{"scope":"agents"}"#).unwrap();
        assert_eq!(
            defaults,
            RegisterAnswererParams {
                scope: Scope::Agents,
                prepend: false,
                label: None,
                group: None,
            }
        );
        result::<AnswerersRegister>(
            &RegisteredAnswerer {
                answerer: AnswererId(3),
            },
            r#"{"jsonrpc":"2.0","id":1,"result":{"answerer":"answerer-3"}}"#,
        );
        request::<AnswerersUnregister>(
            &UnregisterAnswererParams {
                answerer: "answerer-3".into(),
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"answerers/unregister","params":{"answerer":"answerer-3"}}"#,
        );
        result::<AnswerersUnregister>(&(), r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
    }

    #[test]
    fn cancel_request() {
        for (id, line) in [
            (
                Id::Number(7),
                r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}"#,
            ),
            (
                Id::String("ask-1".into()),
                r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"ask-1"}}"#,
            ),
        ] {
            let params = CancelParams::of(id);
            let encoded = encode_notification::<CancelRequest>(&params);
            assert_eq!(std::str::from_utf8(&encoded).unwrap(), format!("{line}\n"));
            let Ok(Message::Notification(parsed)) = parse(line.as_bytes()) else {
                panic!("{line} is not a notification")
            };
            assert_eq!(parsed.method, CancelRequest::NAME);
            let read: CancelParams = crate::protocol::params(parsed.params.as_deref()).unwrap();
            assert_eq!(read, params);
        }
    }

    #[test]
    fn a_withdrawal_says_why_and_an_unknown_reason_still_reads() {
        let params = CancelParams {
            id: Id::Number(3),
            reason: Some(CancelReason::AnsweredElsewhere),
            by: Some("phone:Pixel 8".into()),
        };
        let line = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3,"reason":"answered-elsewhere","by":"phone:Pixel 8"}}"#;
        let encoded = encode_notification::<CancelRequest>(&params);
        assert_eq!(std::str::from_utf8(&encoded).unwrap(), format!("{line}\n"));
        let newer = r#"{"id":3,"reason":"moved-to-the-moon"}"#;
        let read: CancelParams = serde_json::from_str(newer).unwrap();
        assert_eq!(read.reason, Some(CancelReason::Other));
        let settled = encode_notification::<Settled>(&SettledParams { id: Id::Number(3) });
        assert_eq!(
            std::str::from_utf8(&settled).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"askdesk/settled\",\"params\":{\"id\":3}}\n"
        );
    }

    #[test]
    fn extensions() {
        request::<Status>(
            &Empty {},
            r#"{"jsonrpc":"2.0","id":1,"method":"askdesk/status","params":{}}"#,
        );
        result::<Status>(
            &StatusResult {
                server: ServerInfo {
                    name: "askdesk".into(),
                    version: "0.1.0".into(),
                },
                socket: "/run/user/1000/askdesk/askdesk.sock".into(),
                connections: 2,
                agents: vec![AgentSummary {
                    id: "a".into(),
                    owner: None,
                    root: true,
                    label: None,
                    meta: None,
                }],
                answerers: vec![AnswererSummary {
                    answerer: AnswererId(1),
                    label: "desktop".into(),
                    scope: "all".into(),
                    prepend: false,
                    group: Some("person".into()),
                }],
                pending: vec![
                    PendingRequest {
                        request: RequestId(4),
                        agent: Some(AgentInfo {
                            id: "a".into(),
                            label: None,
                            meta: None,
                        }),
                        questions: 2,
                        holder: Some("desktop".into()),
                        age_ms: 1500,
                    },
                    PendingRequest {
                        request: RequestId(5),
                        agent: None,
                        questions: 1,
                        holder: None,
                        age_ms: 0,
                    },
                ],
                history: Some(HistoryStatus {
                    state: HistoryState::Failing,
                    path: Some("/home/u/.local/share/askdesk/history.jsonl".into()),
                    error: Some("No space left on device (os error 28)".into()),
                }),
            },
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"result":{"server":{"name":"askdesk","version":"0.1.0"},"#,
                r#""socket":"/run/user/1000/askdesk/askdesk.sock","connections":2,"#,
                r#""agents":[{"id":"a","owner":null,"root":true}],"#,
                r#""answerers":[{"answerer":"answerer-1","label":"desktop","scope":"all","prepend":false,"group":"person"}],"#,
                r#""pending":[{"request":4,"agent":{"id":"a"},"questions":2,"holder":"desktop","ageMs":1500},"#,
                r#"{"request":5,"agent":null,"questions":1,"holder":null,"ageMs":0}],"#,
                r#""history":{"state":"failing","path":"/home/u/.local/share/askdesk/history.jsonl","#,
                r#""error":"No space left on device (os error 28)"}}}"#
            ),
        );
        request::<Focus>(
            &FocusParams::default(),
            r#"{"jsonrpc":"2.0","id":1,"method":"askdesk/focus","params":{}}"#,
        );
        request::<Focus>(
            &FocusParams {
                activation_token: Some("sway-1234".into()),
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"askdesk/focus","params":{"activationToken":"sway-1234"}}"#,
        );
        result::<Focus>(&Empty {}, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    }
}
