//! The requests the remote offers to devices, fed by a broker-facing adapter: each is held until a
//! device's verified answer claims it or the adapter withdraws it, with the nonces devices used on
//! it (so nonces are kept only while their request lives). Devices hear of every change.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::SystemTime;

use askdesk_core::{AgentInfo, Answer, Question, RequestId, Withdrawal};
use askdesk_view::answerer::RequestView;
use askdesk_view::plan_thread::PlanThreads;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot};

use crate::digest;
use crate::keys;
use crate::passkeys::Bound;
use crate::risk::{Class, Risk};

/// At most this many requests are held; an offer beyond it is refused (the adapter delegates).
pub const MAX_PENDING: usize = 1024;
/// At most this many signed attempts per device on one request.
pub const MAX_ATTEMPTS: usize = 64;

/// A request as the adapter hands it over.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingRequest {
    pub id: RequestId,
    pub agent: Option<AgentInfo>,
    pub questions: Vec<Question>,
    /// When the desk decides it without the person (an answer rule's deadline), while that
    /// clock runs: phones count down to it. `None` when no deadline runs (none set, or the
    /// person holds it at the desk). For showing only: the broker decides when the time is up.
    pub deadline: Option<SystemTime>,
}

/// A device's answer that passed every check: the adapter passes it to the broker.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedAnswer {
    pub request: RequestId,
    /// The name of the device that answered.
    pub device: String,
    /// `None`: the person dismissed the whole batch on the device (the ask fails
    /// `ASK_CANCELLED`, as a dismissal at the desk does).
    pub answer: Option<Answer>,
}

/// A held request as devices are shown it: its wire form, and what decides which devices see it
/// (their [`crate::Scope`]).
#[derive(Debug)]
pub struct Shown {
    pub wire: Value,
    pub agent: Option<AgentInfo>,
    pub class: Class,
}

/// What devices are told about the held requests.
#[derive(Debug, Clone)]
pub enum Update {
    Offered(Arc<Shown>),
    /// A held request's deadline was set, moved, held or released: its new wire form.
    Deadline(Arc<Shown>),
    Withdrawn(RequestId, Ending),
    Settled(Settled),
}

/// Why a held request stopped waiting for devices, as they are told (docs/remote.md, "The
/// device's socket"): the broker says why it withdrew a request, so the phone can say which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A device's verified answer claimed it; `settled` tells how the broker took it.
    Claimed,
    /// Another answerer settled it: the desk, or (`Some`) the paired device of that name.
    AnsweredElsewhere { device: Option<String> },
    /// An answer rule's deadline decided it.
    Expired,
    /// The agent withdrew the question.
    Withdrawn,
    /// The asking agent went (its process ended, or it was unregistered).
    AgentGone,
    /// The desk stopped, or the remote left the broker; the broker did not say (an older one).
    Stopped,
}

impl Ending {
    /// Another answerer, signed `by` (its label, `phone:<device>` for a phone of this desk),
    /// settled the request.
    pub fn answered_by(by: Option<&str>) -> Ending {
        Ending::AnsweredElsewhere {
            device: by.and_then(crate::answerer::device_of).map(str::to_owned),
        }
    }

    /// Why the broker withdrew a request from an in-process answerer.
    pub fn of(why: &Withdrawal) -> Ending {
        match why {
            Withdrawal::AnsweredElsewhere { by } => Ending::answered_by(Some(by)),
            Withdrawal::Cancelled => Ending::Withdrawn,
            Withdrawal::AskerGone => Ending::AgentGone,
            Withdrawal::ShuttingDown | Withdrawal::Unregistered => Ending::Stopped,
        }
    }

    /// Adds `reason` (and `device`, for a device that answered) to a message to devices.
    pub(crate) fn describe(&self, message: &mut Value) {
        let reason = match self {
            Ending::Claimed => "claimed",
            Ending::AnsweredElsewhere { device } => {
                if let Some(device) = device {
                    message["device"] = Value::from(device.as_str());
                }
                "answered-elsewhere"
            }
            Ending::Expired => "expired",
            Ending::Withdrawn => "withdrawn",
            Ending::AgentGone => "agent-gone",
            Ending::Stopped => "stopped",
        };
        message["reason"] = Value::from(reason);
    }
}

/// How a device's verified answer fared at the broker, which the adapter learns after passing it
/// on ([`crate::Remote::settled`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    pub request: RequestId,
    /// The device that answered.
    pub device: String,
    /// Whether the broker used the answer; `false`: another answerer settled the request first
    /// (the desk), and the broker recorded this one as a late answer.
    pub used: bool,
    /// When the answer was not used, what settled the request instead, as far as it is known.
    pub instead: Option<Ending>,
}

impl Settled {
    /// The device's answer settled the request.
    pub fn used(request: RequestId, device: String) -> Settled {
        Settled {
            request,
            device,
            used: true,
            instead: None,
        }
    }

    /// The device's answer came too late: `instead` settled the request.
    pub fn lost(request: RequestId, device: String, instead: Ending) -> Settled {
        Settled {
            request,
            device,
            used: false,
            instead: Some(instead),
        }
    }
}

/// The request as the desk's dialog sees it ([`RequestView`]): who asks,
/// the project, each question with its `detail` rendered and sanitized and its plan blocks, and a
/// revised plan's revision (what changed since the version before, the earlier versions) from
/// `threads`, the plan threads of the requests the remote was offered, which it joins. The page
/// shows this and never renders markdown or diffs itself.
pub fn view(request: &PendingRequest, threads: &PlanThreads) -> RequestView {
    let request = askdesk_core::Request {
        id: request.id,
        questions: request.questions.clone(),
        agent: request.agent.clone(),
        asked_at: SystemTime::now(),
    };
    threads.arrived(&request);
    RequestView::new(&request, threads)
}

/// A deadline as devices are sent it: milliseconds since the Unix epoch (the desk's clock), or
/// `null` when none runs.
pub fn deadline_wire(at: Option<SystemTime>) -> Value {
    at.map_or(Value::Null, |at| Value::from(askdesk_journal::millis(at)))
}

pub(crate) struct Entry {
    pub request: PendingRequest,
    /// Its class, desk-only reason and standing options, decided when it was offered.
    pub risk: Risk,
    pub digest: [u8; 32],
    pub shown: Arc<Shown>,
    /// What devices are shown; a plan's blocks, which comments are anchored to.
    pub view: RequestView,
    /// (device key text, nonce) pairs already used on this request.
    pub nonces: HashSet<(String, String)>,
    /// The passkey challenge each device (by key text) was last given for an allow of this
    /// request, bound to its answer's digest; forgotten with the request.
    pub assertions: HashMap<String, Bound>,
    pub answer: oneshot::Sender<VerifiedAnswer>,
}

impl Entry {
    /// Whether the request's deadline has passed, judged by the desk's own clock whatever a
    /// device showed.
    pub fn expired(&self) -> bool {
        self.request
            .deadline
            .is_some_and(|at| SystemTime::now() >= at)
    }
}

pub(crate) struct Pending {
    entries: HashMap<RequestId, Entry>,
    /// The order requests were offered in, for the snapshot a new socket gets.
    order: Vec<RequestId>,
    pub updates: broadcast::Sender<Update>,
}

/// The request is already held, or too many are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OfferError {
    #[error("request {0} is already offered")]
    Duplicate(RequestId),
    #[error("the remote already holds {MAX_PENDING} requests")]
    Full,
}

impl Pending {
    pub fn new() -> Pending {
        Pending {
            entries: HashMap::new(),
            order: Vec::new(),
            updates: broadcast::channel(256).0,
        }
    }

    /// Holds `request`, shown to devices with `view` ([`view`], made before the lock is taken:
    /// rendering a long plan takes a while).
    pub fn offer(
        &mut self,
        request: PendingRequest,
        view: RequestView,
    ) -> Result<oneshot::Receiver<VerifiedAnswer>, OfferError> {
        if self.entries.contains_key(&request.id) {
            return Err(OfferError::Duplicate(request.id));
        }
        if self.entries.len() >= MAX_PENDING {
            return Err(OfferError::Full);
        }
        let key = keys::random::<16>();
        let agent = request.agent.as_ref();
        let digest = digest::request_digest(request.id, &key, agent, &request.questions);
        let risk = Risk::assess(agent, &request.questions);
        let mut wire = digest::request_wire(request.id, &key, agent, &request.questions);
        wire["risk"] = risk.wire();
        wire["view"] = serde_json::to_value(&view).unwrap_or(Value::Null);
        wire["deadline"] = deadline_wire(request.deadline);
        let shown = Arc::new(Shown {
            wire,
            agent: request.agent.clone(),
            class: risk.class,
        });
        let (answer, receiver) = oneshot::channel();
        let _ = self.updates.send(Update::Offered(shown.clone()));
        self.order.push(request.id);
        self.entries.insert(
            request.id,
            Entry {
                request,
                risk,
                digest,
                shown,
                view,
                nonces: HashSet::new(),
                assertions: HashMap::new(),
                answer,
            },
        );
        Ok(receiver)
    }

    /// Removes a request (answered here, settled elsewhere or cancelled) and tells devices why.
    pub fn remove(&mut self, id: RequestId, why: Ending) -> Option<Entry> {
        let entry = self.entries.remove(&id)?;
        self.order.retain(|held| *held != id);
        let _ = self.updates.send(Update::Withdrawn(id, why));
        Some(entry)
    }

    /// Sets the time a held request's deadline runs out (`None`: no deadline runs) and tells
    /// devices; `false` when the request is not held.
    pub fn set_deadline(&mut self, id: RequestId, at: Option<SystemTime>) -> bool {
        let Some(entry) = self.entries.get_mut(&id) else {
            return false;
        };
        if entry.request.deadline == at {
            return true;
        }
        entry.request.deadline = at;
        let mut wire = entry.shown.wire.clone();
        wire["deadline"] = deadline_wire(at);
        entry.shown = Arc::new(Shown {
            wire,
            agent: entry.shown.agent.clone(),
            class: entry.shown.class,
        });
        let _ = self.updates.send(Update::Deadline(entry.shown.clone()));
        true
    }

    /// Tells devices how a request a device answered ended at the broker.
    pub fn settled(&self, settled: Settled) {
        let _ = self.updates.send(Update::Settled(settled));
    }

    pub fn get_mut(&mut self, id: RequestId) -> Option<&mut Entry> {
        self.entries.get_mut(&id)
    }

    /// Every held request as devices see it, oldest first.
    pub fn snapshot(&self) -> Vec<Arc<Shown>> {
        self.order
            .iter()
            .filter_map(|id| self.entries.get(id))
            .map(|entry| entry.shown.clone())
            .collect()
    }
}
