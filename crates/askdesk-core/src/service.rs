//! [`Service`]: `ask()` in the order of protocol section 2 and the answerer waterfall of protocol section 4.

mod race;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::SystemTime;

use futures_util::FutureExt;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tokio::sync::oneshot;
use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;

use crate::answerer::{Answerer, Decision, Failure, Offer, Withdrawal};
use crate::error::{AskError, RegistryError, UserQuestionError};
use crate::registry::{AgentRegistration, AgentSummary, Handle, Registry};
use crate::types::{has_images, without_images, AgentInfo, Answer, Question, Request, RequestId};
use crate::validate::{check_answer, check_intents, check_shape, Limits};

/// How the service is set up.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub limits: Limits,
    /// What makes a request's images safe before dispatch (protocol 1.4). Without one, a request
    /// that carries an image is refused `BAD_IMAGE`: no image reaches an answerer as asked.
    pub images: Option<Arc<dyn ImageGate>>,
}

/// The host's seam for images (protocol 1.4): the core reads no file and decodes nothing.
pub trait ImageGate: Send + Sync + fmt::Debug {
    /// `questions` with every image made safe (a re-encoded PNG as `data`), or the error
    /// (`BAD_IMAGE`, `IMAGE_LIMIT`) the ask fails with. `agent` is the asking agent, whose
    /// `meta.cwd` relative paths are read from. Called only for a batch that has images.
    fn make_safe(
        &self,
        questions: Vec<Question>,
        agent: Option<AgentInfo>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Vec<Question>, UserQuestionError>> + Send>>;

    /// `answer` with every image the person answered with made safe, or the error (`BAD_ANSWER`,
    /// naming the image's field and the limit it hit) the ask fails with. Called only for an
    /// answer that has images, after protocol 1.2's checks.
    fn make_answer_safe(
        &self,
        answer: Answer,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Answer, UserQuestionError>> + Send>>;
}

/// A batch of questions, optionally asked for a registered agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskRequest {
    pub questions: Vec<Question>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Handle>,
}

/// Which requests an answerer receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every request, with or without an agent.
    All,
    /// Only requests made for an agent.
    Agents,
    /// Only this agent's requests; the answerer is removed when the agent goes.
    Agent(Handle),
}

/// How an answerer joins the waterfall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswererRegistration {
    pub scope: Scope,
    /// Prepended answerers come first, newest first; the others follow in registration order.
    pub prepend: bool,
    pub label: Option<String>,
    /// The race group it joins (see [`Service::register_answerer`]); `None` for a link of its own.
    pub group: Option<String>,
}

/// Names a registered answerer; `answerer-<n>` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AnswererId(pub u64);

/// An answerer as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswererSummary {
    pub answerer: AnswererId,
    pub label: String,
    /// `all`, `agents` or `agent:<id>`.
    pub scope: String,
    pub prepend: bool,
    /// The race group it belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// A pending request as `status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSummary {
    pub request: RequestId,
    pub agent: Option<AgentInfo>,
    pub questions: usize,
    pub asked_at: SystemTime,
    /// The label of the answerer holding the request right now.
    pub holder: Option<String>,
}

/// How an ask settled, and who settled it: what [`Service::ask_settled`] resolves to.
#[derive(Debug)]
pub struct AskSettlement {
    pub result: Result<Answer, AskError>,
    /// The label of the answerer whose decision settled the request (its claim or its failure),
    /// or of the override that did; `None` when the service settled it itself.
    pub answerer: Option<String>,
    /// The request, for a history journal: as dispatched, or, refused by the checks of protocol 2,
    /// as it was asked (with id 0, since it was never dispatched, and its agent when that is live).
    pub request: Arc<Request>,
    /// Answers from members of a race group that crossed the one that settled the request (sent
    /// at the same moment, before they were told): discarded, and owed to the journal as late
    /// answers, each with its member's label. Empty outside races.
    pub crossed: Vec<(String, Answer)>,
    /// What the answerer holding the request had of an answer when the ask ended without it (a
    /// person's unsent choices and typing, unchecked), as [`Answerer::withdraw`] gave it back.
    pub draft: Option<Answer>,
}

/// The right to decide one pending request from outside the waterfall, taken with
/// [`Service::take_override`]: a deadline that fires while another answerer holds the request.
///
/// A decision sent through it settles the request as soon as the service sees it: before the
/// request is offered to the next answerer, or while an answerer holds it (that answerer is then
/// told to drop it, as for a cancellation). An answerer's decision that arrives first wins.
#[derive(Debug)]
pub struct Override {
    label: String,
    sender: oneshot::Sender<(String, Decision)>,
}

impl Override {
    /// Decides the request, signed with the label given to [`Service::take_override`]. `Err`
    /// gives the decision back when the request had already settled.
    pub fn decide(self, decision: Decision) -> Result<(), Decision> {
        self.sender
            .send((self.label, decision))
            .map_err(|(_, decision)| decision)
    }

    /// Resolves when the request settles without this override.
    pub async fn settled(&mut self) {
        self.sender.closed().await
    }

    /// Whether the request already settled.
    pub fn is_settled(&self) -> bool {
        self.sender.is_closed()
    }
}

/// A handle on the service that does not keep it alive: for an answerer that the service holds
/// and that must reach the service back (taking overrides) without a reference cycle.
#[derive(Clone, Default)]
pub struct WeakService {
    inner: std::sync::Weak<Inner>,
}

impl WeakService {
    /// The service, while it lives.
    pub fn upgrade(&self) -> Option<Service> {
        self.inner.upgrade().map(|inner| Service { inner })
    }
}

/// The askdesk service: the agent registry, the answerer chain and the pending requests.
///
/// Cheap to clone; every clone is the same service. No lock is held across an `.await`.
#[derive(Clone, Default)]
pub struct Service {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    limits: Limits,
    images: Option<Arc<dyn ImageGate>>,
    state: Mutex<State>,
    next_request: AtomicU64,
    closing: CancellationToken,
}

#[derive(Default)]
struct State {
    registry: Registry,
    chain: Chain,
    pending: HashMap<RequestId, Pending>,
}

struct Pending {
    request: Arc<Request>,
    holder: Option<Arc<Entry>>,
    /// The members of a race group still holding the request (empty outside a race).
    racing: Vec<Arc<Entry>>,
    /// The walk's waker while an answerer holds the request: what happens outside the walk and
    /// concerns it (its override taken, its holder or its agent gone, the service closing) is
    /// written under the table's lock and then wakes it. One slot instead of a wait per source
    /// keeps a waiting ask small.
    waker: Option<Waker>,
    overrule: OverrideSlot,
    /// When its deadline runs out, while one runs ([`Service::set_deadline`]).
    deadline: Option<SystemTime>,
}

/// A request's override, made only when someone takes it: most requests never have one.
enum OverrideSlot {
    Free,
    /// Taken; its receiving half waits here until the walk picks it up.
    Handed(oneshot::Receiver<(String, Decision)>),
    /// Taken and picked up.
    PickedUp,
}

impl State {
    /// Wakes the walks that `concerned` picks, so each looks again at what concerns it.
    fn wake_where(&self, mut concerned: impl FnMut(&Pending) -> bool) {
        for pending in self.pending.values() {
            if let Some(waker) = pending.waker.as_ref().filter(|_| concerned(pending)) {
                waker.wake_by_ref();
            }
        }
    }
}

struct Entry {
    id: AnswererId,
    label: String,
    /// The agent id of an agent-scoped answerer.
    scope: EntryScope,
    prepend: bool,
    /// The race group whose link it belongs to.
    group: Option<String>,
    answerer: Arc<dyn Answerer>,
    /// Cancelled when the answerer is unregistered: a request it holds moves on.
    gone: CancellationToken,
}

/// One link of the waterfall: an answerer of its own, or a race group's members.
enum Link {
    One(Arc<Entry>),
    /// Offered the request at the same moment; the first decision settles it.
    Race(Arc<[Arc<Entry>]>),
}

enum EntryScope {
    All,
    Agents,
    Agent(String),
}

impl EntryScope {
    fn admits(&self, agent: Option<&AgentInfo>) -> bool {
        match (self, agent) {
            (EntryScope::All, _) => true,
            (EntryScope::Agents, agent) => agent.is_some(),
            (EntryScope::Agent(id), Some(agent)) => *id == agent.id,
            (EntryScope::Agent(_), None) => false,
        }
    }
}

/// The waterfall, kept in chain order so `ask` takes a snapshot with one reference-count bump.
#[derive(Default)]
struct Chain {
    /// In registration order; the chain walks them newest first.
    prepended: Vec<Arc<Entry>>,
    /// In registration order.
    appended: Vec<Arc<Entry>>,
    snapshot: Arc<[Link]>,
    next_id: u64,
}

impl Chain {
    /// The answerers in the order each would stand alone (protocol 4).
    fn order(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.prepended.iter().rev().chain(self.appended.iter())
    }

    /// The links in order. A race group's link stands where its oldest member would stand alone,
    /// and holds its members in registration order; a member that registers later joins it.
    fn rebuild(&mut self) {
        let oldest = |group: &str| {
            self.order()
                .filter(|e| e.group.as_deref() == Some(group))
                .map(|e| e.id)
                .min()
        };
        self.snapshot = self
            .order()
            .filter_map(|entry| match entry.group.as_deref() {
                None => Some(Link::One(entry.clone())),
                Some(group) if oldest(group) == Some(entry.id) => {
                    let mut members: Vec<Arc<Entry>> = self
                        .order()
                        .filter(|e| e.group.as_deref() == Some(group))
                        .cloned()
                        .collect();
                    members.sort_by_key(|e| e.id);
                    Some(Link::Race(members.into()))
                }
                Some(_) => None,
            })
            .collect();
    }

    fn remove_where(&mut self, mut doomed: impl FnMut(&Entry) -> bool) -> usize {
        let before = self.prepended.len() + self.appended.len();
        for list in [&mut self.prepended, &mut self.appended] {
            list.retain(|entry| {
                let remove = doomed(entry);
                if remove {
                    entry.gone.cancel();
                }
                !remove
            });
        }
        let removed = before - self.prepended.len() - self.appended.len();
        if removed > 0 {
            self.rebuild();
        }
        removed
    }
}

impl Service {
    pub fn new(config: Config) -> Self {
        Service {
            inner: Arc::new(Inner {
                limits: config.limits,
                images: config.images,
                ..Default::default()
            }),
        }
    }

    /// A handle that does not keep the service alive.
    pub fn downgrade(&self) -> WeakService {
        WeakService {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// Takes the right to decide a pending request from outside the waterfall; its decisions are
    /// signed `label` (journals show it as the answerer). `None` when the request is not pending
    /// or its override was already taken: there is one per request.
    pub fn take_override(&self, request: RequestId, label: impl Into<String>) -> Option<Override> {
        let mut state = self.state();
        let pending = state.pending.get_mut(&request)?;
        if !matches!(pending.overrule, OverrideSlot::Free) {
            return None;
        }
        let (sender, receiver) = oneshot::channel();
        pending.overrule = OverrideSlot::Handed(receiver);
        if let Some(waker) = &pending.waker {
            waker.wake_by_ref();
        }
        Some(Override {
            label: label.into(),
            sender,
        })
    }

    /// Sets the time a pending request's deadline runs out (`None`: no clock runs, or none any
    /// more), as the deadline's owner (the answer rules) keeps it: every answerer holding the
    /// request is told ([`Answerer::deadline`]), and any offered it later. For showing only: the
    /// owner decides through its [`Override`] when the time is up.
    pub fn set_deadline(&self, request: RequestId, at: Option<SystemTime>) {
        let holders: Vec<Arc<Entry>> = {
            let mut state = self.state();
            let Some(pending) = state.pending.get_mut(&request) else {
                return;
            };
            if pending.deadline == at {
                return;
            }
            pending.deadline = at;
            pending.holders().cloned().collect()
        };
        for holder in holders {
            holder.answerer.deadline(request, at);
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.inner)
    }

    // ----- agents (protocol 3) -----

    /// Registers a live agent; `owner` makes it a delegated child.
    pub fn register_agent(&self, registration: AgentRegistration) -> Result<Handle, RegistryError> {
        self.state().registry.register(registration)
    }

    /// Unregisters the agent and every agent it owns, transitively. Their pending asks settle
    /// `ASK_ABORTED` and the answerers scoped to them are removed. Returns the ids removed.
    pub fn unregister_agent(&self, handle: &Handle) -> Result<Vec<String>, RegistryError> {
        let mut state = self.state();
        let removed = state.registry.unregister(handle)?;
        state.chain.remove_where(
            |entry| matches!(&entry.scope, EntryScope::Agent(id) if removed.contains(id)),
        );
        state.wake_where(|pending| {
            pending
                .request
                .agent
                .as_ref()
                .is_some_and(|agent| removed.contains(&agent.id))
                || pending.holders().any(|holder| holder.gone.is_cancelled())
        });
        Ok(removed)
    }

    /// Whether the handle names the registry's exact live instance.
    pub fn is_live(&self, handle: &Handle) -> bool {
        self.state().registry.lookup(handle).is_some()
    }

    /// What answerers are told about the live agent the handle names.
    pub fn agent_info(&self, handle: &Handle) -> Option<AgentInfo> {
        self.state()
            .registry
            .lookup(handle)
            .map(|agent| agent.info(&handle.id))
    }

    /// Every live agent, in registration order.
    pub fn agents(&self) -> Vec<AgentSummary> {
        self.state().registry.list()
    }

    /// The ids of the live agents with no owner: the only ones that may ask the human.
    pub fn roots(&self) -> Vec<String> {
        self.state().registry.roots()
    }

    // ----- answerers (protocol 4) -----

    /// Adds an answerer to the waterfall. An agent scope must name a live agent.
    ///
    /// With a `group`, the answerer joins that race group: the group is one link of the chain,
    /// standing where its oldest member would stand alone, and its members are offered a request
    /// at the same moment (see `race`). A request already dispatched keeps the chain it was
    /// dispatched with: a member that registers later does not join a race under way.
    pub fn register_answerer(
        &self,
        registration: AnswererRegistration,
        answerer: Arc<dyn Answerer>,
    ) -> Result<AnswererId, RegistryError> {
        let mut state = self.state();
        let scope = match registration.scope {
            Scope::All => EntryScope::All,
            Scope::Agents => EntryScope::Agents,
            Scope::Agent(handle) => {
                state.registry.live(&handle)?;
                EntryScope::Agent(handle.id)
            }
        };
        let chain = &mut state.chain;
        chain.next_id += 1;
        let id = AnswererId(chain.next_id);
        let entry = Arc::new(Entry {
            id,
            label: registration.label.unwrap_or_else(|| id.to_string()),
            scope,
            prepend: registration.prepend,
            group: registration.group,
            answerer,
            gone: CancellationToken::new(),
        });
        if registration.prepend {
            chain.prepended.push(entry);
        } else {
            chain.appended.push(entry);
        }
        chain.rebuild();
        Ok(id)
    }

    /// Removes an answerer; a request it holds moves down the chain. Returns whether it was registered.
    pub fn unregister_answerer(&self, id: AnswererId) -> bool {
        let mut state = self.state();
        if state.chain.remove_where(|entry| entry.id == id) == 0 {
            return false;
        }
        state.wake_where(|pending| pending.holders().any(|holder| holder.id == id));
        true
    }

    /// The answerers in chain order, a race group's members together at their link's place.
    pub fn answerers(&self) -> Vec<AnswererSummary> {
        let snapshot = self.state().chain.snapshot.clone();
        snapshot
            .iter()
            .flat_map(|link| match link {
                Link::One(entry) => std::slice::from_ref(entry),
                Link::Race(members) => members,
            })
            .map(|entry| AnswererSummary {
                answerer: entry.id,
                label: entry.label.clone(),
                scope: match &entry.scope {
                    EntryScope::All => "all".to_owned(),
                    EntryScope::Agents => "agents".to_owned(),
                    EntryScope::Agent(id) => format!("agent:{id}"),
                },
                prepend: entry.prepend,
                group: entry.group.clone(),
            })
            .collect()
    }

    /// The requests waiting for an answer, oldest first.
    pub fn pending(&self) -> Vec<PendingSummary> {
        let state = self.state();
        let mut pending: Vec<PendingSummary> = state
            .pending
            .values()
            .map(|p| PendingSummary {
                request: p.request.id,
                agent: p.request.agent.clone(),
                questions: p.request.questions.len(),
                asked_at: p.request.asked_at,
                holder: p.holder_label(),
            })
            .collect();
        pending.sort_by_key(|p| p.request);
        pending
    }

    /// Settles every pending ask with `SHUTTING_DOWN` and refuses new ones.
    pub fn shutdown(&self) {
        let state = self.state();
        self.inner.closing.cancel();
        state.wake_where(|_| true);
    }

    // ----- ask (protocol 2) -----

    /// Asks the human, through the waterfall, in the order of protocol section 2.
    ///
    /// `cancel` is the asker's: cancelling it settles the ask `ASK_ABORTED` at once, whatever the
    /// answerer holding it is doing, and that answerer is told to drop it. Dropping the returned
    /// future does the same. The ask settles exactly once: by returning.
    pub fn ask(
        &self,
        request: AskRequest,
        cancel: &CancellationToken,
    ) -> impl Future<Output = Result<Answer, AskError>> + Send + 'static {
        let settled = self.ask_settled(request, cancel);
        async move { settled.await.result }
    }

    /// [`Service::ask`], also naming the answerer (or override) whose decision settled it, for
    /// the history journal.
    pub fn ask_settled(
        &self,
        request: AskRequest,
        cancel: &CancellationToken,
    ) -> impl Future<Output = AskSettlement> + Send + 'static {
        self.ask_settled_from(request, cancel, None)
    }

    /// [`Service::ask_settled`] for an asker that can go as a whole (a connection, whose asks'
    /// tokens are children of `gone`): an ask cancelled once `gone` is cancelled settles
    /// `ASK_ABORTED` as any cancelled ask, and the answerer holding it is told the asker went
    /// ([`Withdrawal::AskerGone`]) rather than that it withdrew the question.
    pub fn ask_settled_from(
        &self,
        request: AskRequest,
        cancel: &CancellationToken,
        gone: Option<&CancellationToken>,
    ) -> impl Future<Output = AskSettlement> + Send + 'static {
        // The guard is made here, not in the async block, so that a future dropped before its
        // first poll still takes its request out of the pending table.
        let started = self
            .start(request, cancel)
            .map(|(request, agent_gone, chain)| {
                let guard = PendingGuard {
                    inner: self.inner.clone(),
                    id: request.id,
                    holder: None,
                    overruled_by: None,
                };
                (request, agent_gone, chain, guard)
            });
        // No async block around `walk`: it would keep `started` beside the walk's own copy of it
        // for as long as the request waits, and that is memory per pending ask.
        match started {
            Ok((request, agent_gone, chain, guard)) => {
                let stops = Stops {
                    cancel: cancel.clone(),
                    asker_gone: gone.cloned(),
                    agent_gone,
                };
                Either::Left(walk(request, chain, guard, stops))
            }
            Err(refused) => Either::Right(std::future::ready(*refused)),
        }
    }

    /// The checks before dispatch, in the protocol's order; on success the request is pending. A refusal
    /// is settled at once, with the request as asked (id 0: it was never dispatched) for the
    /// journal.
    #[allow(clippy::type_complexity)]
    fn start(
        &self,
        request: AskRequest,
        cancel: &CancellationToken,
    ) -> Result<(Arc<Request>, Option<CancellationToken>, Arc<[Link]>), Box<AskSettlement>> {
        let AskRequest { questions, agent } = request;
        // A refused request keeps no image: none was made safe (protocol 1.4).
        let refuse = |error: AskError, questions: Vec<Question>, info: Option<AgentInfo>| {
            Box::new(AskSettlement {
                result: Err(error),
                answerer: None,
                request: Arc::new(Request {
                    id: RequestId(0),
                    questions: without_images(questions),
                    agent: info,
                    asked_at: SystemTime::now(),
                }),
                crossed: Vec::new(),
                draft: None,
            })
        };
        let early = if let Err(error) = check_shape(&questions, &self.inner.limits) {
            Some(AskError::from(error))
        } else if cancel.is_cancelled() {
            Some(UserQuestionError::aborted().into())
        } else if self.inner.closing.is_cancelled() {
            Some(UserQuestionError::shutting_down().into())
        } else if questions.is_empty() {
            Some(UserQuestionError::empty_questions().into())
        } else {
            None
        };
        if let Some(error) = early {
            let info = agent.as_ref().and_then(|handle| self.agent_info(handle));
            return Err(refuse(error, questions, info));
        }
        let mut state = self.state();
        let (agent, agent_gone) = match &agent {
            None => (None, None),
            Some(handle) => {
                let Some(live) = state.registry.lookup(handle) else {
                    return Err(refuse(
                        UserQuestionError::caller_not_live().into(),
                        questions,
                        None,
                    ));
                };
                let info = live.info(&handle.id);
                if !live.is_root() {
                    return Err(refuse(
                        UserQuestionError::delegated_caller().into(),
                        questions,
                        Some(info),
                    ));
                }
                (Some(info), Some(live.gone.clone()))
            }
        };
        if let Err(error) = check_intents(&questions) {
            return Err(refuse(error.into(), questions, agent));
        }
        let id = RequestId(self.inner.next_request.fetch_add(1, Ordering::Relaxed) + 1);
        let request = Arc::new(Request {
            id,
            questions,
            agent,
            asked_at: SystemTime::now(),
        });
        state.pending.insert(
            id,
            Pending {
                request: request.clone(),
                holder: None,
                racing: Vec::new(),
                waker: None,
                overrule: OverrideSlot::Free,
                deadline: None,
            },
        );
        Ok((request, agent_gone, state.chain.snapshot.clone()))
    }
}

/// The request with its images made safe (protocol 1.4: after step 5, before the waterfall), and
/// the pending table's copy replaced by it; the error the ask settles with when they are refused or
/// the ask stopped meanwhile. Only for a request with images.
async fn admit_images(
    request: Arc<Request>,
    guard: &PendingGuard,
    stops: &Stops,
) -> Result<Arc<Request>, AskSettlement> {
    let Some(gate) = guard.inner.images.clone() else {
        let error = UserQuestionError::bad_image("questions", "this broker takes no images");
        return Err(AskSettlement::by_service(&request, error));
    };
    let made = gate.make_safe(request.questions.clone(), request.agent.clone());
    let agent_gone = async {
        match &stops.agent_gone {
            Some(gone) => gone.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let made = tokio::select! {
        biased;
        _ = stops.cancel.cancelled() => None,
        _ = agent_gone => None,
        _ = guard.inner.closing.cancelled() => None,
        made = made => Some(made),
    };
    let refused = |error| {
        let bare = Arc::new(Request {
            questions: without_images(request.questions.clone()),
            agent: request.agent.clone(),
            ..*request
        });
        AskSettlement::by_service(&bare, error)
    };
    let questions = match made {
        Some(Ok(questions)) => questions,
        Some(Err(error)) => return Err(refused(error)),
        None => {
            let (error, _) = stops
                .stopped(&guard.inner)
                .unwrap_or_else(|| (UserQuestionError::aborted(), Withdrawal::Cancelled));
            return Err(refused(error));
        }
    };
    let safe = Arc::new(Request {
        id: request.id,
        questions,
        agent: request.agent.clone(),
        asked_at: request.asked_at,
    });
    if let Some(pending) = lock(&guard.inner).pending.get_mut(&safe.id) {
        pending.request = safe.clone();
    }
    Ok(safe)
}

/// One dispatched request settled: its waterfall walked, then the images of its answer made safe.
///
/// A combinator, not an async fn: an async fn would keep its own copy of the arguments beside the
/// walk's for as long as the request waits, and a waiting ask's future is memory per pending ask.
fn walk(
    request: Arc<Request>,
    chain: Arc<[Link]>,
    guard: PendingGuard,
    stops: Stops,
) -> impl Future<Output = AskSettlement> + Send + 'static {
    let gate = guard.inner.images.clone();
    walk_links(request, chain, guard, stops)
        .then(move |settlement| admit_answer_images(settlement, gate))
}

/// The settlement with its answer's images made safe (protocol 1.4), or failed `BAD_ANSWER` when
/// the gate refuses one or there is no gate: an image as an answerer sent it never reaches the
/// asker, and the journal keeps what the asker got.
async fn admit_answer_images(
    mut settlement: AskSettlement,
    gate: Option<Arc<dyn ImageGate>>,
) -> AskSettlement {
    let answer = match settlement.result {
        Ok(answer) if answer.has_images() => answer,
        result => {
            settlement.result = result;
            return settlement;
        }
    };
    settlement.result = match gate {
        Some(gate) => gate.make_answer_safe(answer).await.map_err(AskError::from),
        None => Err(UserQuestionError::bad_answer("this broker takes no images").into()),
    };
    settlement
}

/// The waterfall of one dispatched request (protocol 4), after the checks of protocol 2 passed.
async fn walk_links(
    request: Arc<Request>,
    chain: Arc<[Link]>,
    mut guard: PendingGuard,
    stops: Stops,
) -> AskSettlement {
    // Boxed, as a race below is: a state the ask passes through only sometimes would otherwise
    // size every waiting ask's future.
    let request = if has_images(&request.questions) {
        match Box::pin(admit_images(request, &guard, &stops)).await {
            Ok(request) => request,
            Err(refused) => return refused,
        }
    } else {
        request
    };
    let Stops {
        cancel, agent_gone, ..
    } = &stops;
    let mut overridden = OverrideReceiver(None);
    // The asker may have cancelled (or its agent gone) between dispatch and the first poll;
    // an answerer that decides at once must not claim a request that already settled.
    if let Some((error, _)) = stops.stopped(&guard.inner) {
        return AskSettlement::by_service(&request, error);
    }
    for link in chain.iter() {
        // An override decided while an earlier answerer looked at the request settles it
        // before anyone else sees it.
        guard.pick_up(&mut overridden);
        if let Some((label, decision)) = overridden.try_take() {
            return settle(&request, label, decision);
        }
        let entry = match link {
            Link::One(entry) => entry,
            Link::Race(members) => {
                let raced = Box::pin(race::run(
                    &request,
                    members,
                    &stops,
                    &guard,
                    &mut overridden,
                ));
                match raced.await {
                    Some(settlement) => return settlement,
                    None => continue,
                }
            }
        };
        if !entry.takes(&request) {
            continue;
        }
        let decision = match offer(entry, &request) {
            Offer::Now(decision) => decision,
            Offer::Later(mut receiver) => {
                guard.hold(entry);
                guard.tell_deadline(std::slice::from_ref(entry));
                // A decision already sent wins over any stop or override that crossed it.
                let waited = tokio::select! {
                    biased;
                    decision = &mut receiver => Ok(decision),
                    _ = cancel.cancelled() => Err(Some((UserQuestionError::aborted(), stops.cancelled_why()))),
                    news = guard.news(std::slice::from_ref(entry), agent_gone.as_ref(), &mut overridden) => match news {
                        News::Stop(error, why) => Err(Some((error, why))),
                        News::HolderGone => Err(None),
                        News::Override(label, decision) => match receiver.close_and_take() {
                            Some(decision @ (Decision::Claim(_) | Decision::Fail(_))) => Ok(decision),
                            _ => {
                                guard.overruled_by = Some(label.clone());
                                return settle(&request, label, decision);
                            }
                        },
                    },
                };
                let decision = match waited {
                    // A delegation that crossed a stop does not move the request on.
                    Ok(Decision::Delegate) => match stops.stopped(&guard.inner) {
                        Some((error, why)) => return guard.withdrawn(&request, error, why),
                        None => Decision::Delegate,
                    },
                    Ok(decision) => decision,
                    // A decision the answerer sent before this task saw the stop is not
                    // lost (an answerer that replies and then disconnects, an answer that
                    // crosses the asker's cancel); one sent after the close comes back to
                    // its answerer as late.
                    Err(stop) => match (receiver.close_and_take(), stop) {
                        (Some(decision @ (Decision::Claim(_) | Decision::Fail(_))), _) => decision,
                        (_, Some((error, why))) => return guard.withdrawn(&request, error, why),
                        // The holder left the chain while it held the request: it is told the
                        // request is no longer its own (an answer it sends now is late), and
                        // the request moves on.
                        (_, None) => {
                            entry
                                .answerer
                                .withdraw(request.id, Withdrawal::Unregistered);
                            Decision::Delegate
                        }
                    },
                };
                guard.release();
                decision
            }
        };
        if !matches!(decision, Decision::Delegate) {
            return settle(&request, entry.signed(request.id), decision);
        }
    }
    guard.pick_up(&mut overridden);
    if let Some((label, decision)) = overridden.try_take() {
        return settle(&request, label, decision);
    }
    AskSettlement::by_service(&request, UserQuestionError::no_provider())
}

impl Entry {
    /// Whether the request is this answerer's to be offered: it is still registered and its
    /// scope admits the request's agent.
    fn takes(&self, request: &Request) -> bool {
        !self.gone.is_cancelled() && self.scope.admits(request.agent.as_ref())
    }

    /// Who settled a request with this answerer's decision: its label, with the signer it names
    /// (`phone:Pixel 8`), asked once.
    fn signed(&self, request: RequestId) -> String {
        match self.answerer.signer(request) {
            Some(signer) => format!("{}:{signer}", self.label),
            None => self.label.clone(),
        }
    }
}

/// Offers the request to one answerer. An answerer that panics fails this ask like any failing
/// answerer: the request settles and is recorded, its asker is told, and the broker goes on.
fn offer(entry: &Entry, request: &Arc<Request>) -> Offer {
    std::panic::catch_unwind(AssertUnwindSafe(|| entry.answerer.offer(request))).unwrap_or_else(
        |_| {
            Offer::Now(Decision::Fail(Failure::Internal(format!(
                "the answerer {:?} failed while it was offered the request",
                entry.label
            ))))
        },
    )
}

/// What ends an ask from outside its waterfall: the asker's token, the asker going as a whole,
/// its agent going.
struct Stops {
    cancel: CancellationToken,
    /// Cancelled when the asker as a whole went (its connection closed); `cancel` is its child.
    asker_gone: Option<CancellationToken>,
    agent_gone: Option<CancellationToken>,
}

impl Stops {
    /// Why the ask must end now, if it must, and what its holder is told: the asker cancelled or
    /// went, its agent is gone, or the service is closing.
    fn stopped(&self, inner: &Inner) -> Option<(UserQuestionError, Withdrawal)> {
        if self
            .agent_gone
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            Some((UserQuestionError::aborted(), Withdrawal::AskerGone))
        } else if self.cancel.is_cancelled() {
            Some((UserQuestionError::aborted(), self.cancelled_why()))
        } else if inner.closing.is_cancelled() {
            Some((UserQuestionError::shutting_down(), Withdrawal::ShuttingDown))
        } else {
            None
        }
    }

    /// Why the asker's token was cancelled: the asker went, or it withdrew the question.
    fn cancelled_why(&self) -> Withdrawal {
        match &self.asker_gone {
            Some(gone) if gone.is_cancelled() => Withdrawal::AskerGone,
            _ => Withdrawal::Cancelled,
        }
    }
}

/// The result of a claim or a failure, signed by whoever decided it.
fn settle(request: &Arc<Request>, label: String, decision: Decision) -> AskSettlement {
    let result = match decision {
        Decision::Claim(answer) => check_answer(&request.questions, answer).map_err(AskError::from),
        Decision::Fail(Failure::Domain(error)) => Err(error.into()),
        Decision::Fail(Failure::Internal(message)) => Err(AskError::Internal {
            answerer: label.clone(),
            message,
        }),
        // Nobody passes a request on through an override; treat it as no decision at all.
        Decision::Delegate => Err(UserQuestionError::no_provider().into()),
    };
    AskSettlement {
        result,
        answerer: Some(label),
        request: request.clone(),
        crossed: Vec::new(),
        draft: None,
    }
}

impl AskSettlement {
    /// The request ended by the service itself, with `error`.
    fn by_service(request: &Arc<Request>, error: UserQuestionError) -> AskSettlement {
        AskSettlement {
            result: Err(error.into()),
            answerer: None,
            request: request.clone(),
            crossed: Vec::new(),
            draft: None,
        }
    }
}

/// The receiving half of a request's override; pends forever once its sender is gone.
struct OverrideReceiver(Option<oneshot::Receiver<(String, Decision)>>);

impl OverrideReceiver {
    fn try_take(&mut self) -> Option<(String, Decision)> {
        let receiver = self.0.as_mut()?;
        match receiver.try_recv() {
            Ok(decided) => {
                self.0 = None;
                Some(decided)
            }
            Err(oneshot::error::TryRecvError::Empty) => None,
            Err(oneshot::error::TryRecvError::Closed) => {
                self.0 = None;
                None
            }
        }
    }

    /// The override's decision once sent; pending forever when there is none or it was dropped.
    fn poll_decided(&mut self, cx: &mut Context<'_>) -> Poll<(String, Decision)> {
        let Some(receiver) = self.0.as_mut() else {
            return Poll::Pending;
        };
        match std::pin::Pin::new(receiver).poll(cx) {
            Poll::Ready(Ok(decided)) => {
                self.0 = None;
                Poll::Ready(decided)
            }
            Poll::Ready(Err(_)) => {
                self.0 = None;
                Poll::Pending
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// What a walk learns from outside while an answerer holds its request.
enum News {
    /// The ask ends with this error (its agent gone, the service closing), told to the holder so.
    Stop(UserQuestionError, Withdrawal),
    /// The holder was unregistered: the request moves on.
    HolderGone,
    /// The override decided.
    Override(String, Decision),
}

/// Keeps a request in the pending table while its ask runs; when the ask ends while an answerer
/// still holds the request (cancelled, aborted, dropped), that answerer is told to drop it.
struct PendingGuard {
    inner: Arc<Inner>,
    id: RequestId,
    holder: Option<Arc<Entry>>,
    /// The label of the override that decided the request while the holder held it.
    overruled_by: Option<String>,
}

impl PendingGuard {
    fn hold(&mut self, entry: &Arc<Entry>) {
        self.holder = Some(entry.clone());
        if let Some(pending) = lock(&self.inner).pending.get_mut(&self.id) {
            pending.holder = Some(entry.clone());
        }
    }

    fn release(&mut self) {
        self.holder = None;
    }

    /// Tells `holders`, just recorded as holding the request, when its deadline runs out, if one
    /// runs: set before they held it, it reached none of them. Read after they were recorded, so
    /// a change in between reaches them either way.
    fn tell_deadline(&self, holders: &[Arc<Entry>]) {
        let at = lock(&self.inner)
            .pending
            .get(&self.id)
            .and_then(|pending| pending.deadline);
        if let Some(at) = at {
            for holder in holders {
                holder.answerer.deadline(self.id, Some(at));
            }
        }
    }

    /// Records the members of a race still holding the request, for `status`, for the news of
    /// one leaving, and for the guard's drop.
    fn set_racing(&self, members: &[Arc<Entry>]) {
        if let Some(pending) = lock(&self.inner).pending.get_mut(&self.id) {
            pending.racing.clear();
            pending.racing.extend_from_slice(members);
        }
    }

    /// The ask ends with `error` while an answerer holds its request: the holder is told why and
    /// drops it, and what it had of an answer goes with the settlement for the journal.
    fn withdrawn(
        &mut self,
        request: &Arc<Request>,
        error: UserQuestionError,
        why: Withdrawal,
    ) -> AskSettlement {
        let draft = self
            .holder
            .take()
            .and_then(|holder| holder.answerer.withdraw(self.id, why));
        AskSettlement {
            draft,
            ..AskSettlement::by_service(request, error)
        }
    }

    /// Moves an override taken since the last look from the table into the walk's hands.
    fn pick_up(&self, overridden: &mut OverrideReceiver) {
        if let Some(pending) = lock(&self.inner).pending.get_mut(&self.id) {
            pending.pick_up(overridden);
        }
    }

    /// Resolves with the first news for a walk whose request `holders` hold. Every source is
    /// looked at under the table's lock, where each is written before the walk's waker is woken,
    /// so no news is missed between a look and the wait.
    fn news<'a>(
        &'a self,
        holders: &'a [Arc<Entry>],
        agent_gone: Option<&'a CancellationToken>,
        overridden: &'a mut OverrideReceiver,
    ) -> impl Future<Output = News> + 'a {
        std::future::poll_fn(move |cx| {
            {
                let mut state = lock(&self.inner);
                if agent_gone.is_some_and(CancellationToken::is_cancelled) {
                    return Poll::Ready(News::Stop(
                        UserQuestionError::aborted(),
                        Withdrawal::AskerGone,
                    ));
                }
                if self.inner.closing.is_cancelled() {
                    return Poll::Ready(News::Stop(
                        UserQuestionError::shutting_down(),
                        Withdrawal::ShuttingDown,
                    ));
                }
                if holders.iter().any(|holder| holder.gone.is_cancelled()) {
                    return Poll::Ready(News::HolderGone);
                }
                if let Some(pending) = state.pending.get_mut(&self.id) {
                    pending.pick_up(overridden);
                    if !pending
                        .waker
                        .as_ref()
                        .is_some_and(|w| w.will_wake(cx.waker()))
                    {
                        pending.waker = Some(cx.waker().clone());
                    }
                }
            }
            overridden
                .poll_decided(cx)
                .map(|(label, decision)| News::Override(label, decision))
        })
    }
}

impl Pending {
    /// The answerers holding the request now: its holder, or the members still racing for it.
    fn holders(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.holder.iter().chain(self.racing.iter())
    }

    /// Who holds the request, as `status` shows it: the racing members' labels, else the holder's.
    fn holder_label(&self) -> Option<String> {
        if self.racing.is_empty() {
            return self.holder.as_ref().map(|h| h.label.clone());
        }
        let labels: Vec<&str> = self.racing.iter().map(|e| e.label.as_str()).collect();
        Some(labels.join(", "))
    }

    fn pick_up(&mut self, overridden: &mut OverrideReceiver) {
        match std::mem::replace(&mut self.overrule, OverrideSlot::PickedUp) {
            OverrideSlot::Handed(receiver) => overridden.0 = Some(receiver),
            other => self.overrule = other,
        }
    }
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let removed = lock(&self.inner).pending.remove(&self.id);
        if let Some(holder) = self.holder.take() {
            match self.overruled_by.take() {
                Some(by) => holder.answerer.overruled(self.id, &by),
                // The ask's future was dropped: its asker no longer waits for it.
                None => drop(holder.answerer.withdraw(self.id, Withdrawal::Cancelled)),
            }
        }
        // A race ended with the ask (the future dropped mid-race): every member still holding
        // the request is told to drop it.
        for member in removed.map(|p| p.racing).unwrap_or_default() {
            drop(member.answerer.withdraw(self.id, Withdrawal::Cancelled));
        }
    }
}

fn lock(inner: &Inner) -> MutexGuard<'_, State> {
    crate::sync::lock(&inner.state)
}

impl fmt::Display for AnswererId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "answerer-{}", self.0)
    }
}

impl std::str::FromStr for AnswererId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        s.strip_prefix("answerer-")
            .and_then(|n| n.parse().ok())
            .map(AnswererId)
            .ok_or_else(|| format!("{s:?} is not an answerer id"))
    }
}

impl Serialize for AnswererId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AnswererId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct AgentScope<'a> {
            agent: &'a Handle,
        }
        match self {
            Scope::All => serializer.serialize_str("all"),
            Scope::Agents => serializer.serialize_str("agents"),
            Scope::Agent(agent) => AgentScope { agent }.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct AgentScope {
            agent: Handle,
        }
        const EXPECTED: &str = r#"expected "all", "agents" or { "agent": { "id", "instance" } }"#;
        let value = serde_json::Value::deserialize(deserializer)?;
        match value {
            serde_json::Value::String(s) if s == "all" => Ok(Scope::All),
            serde_json::Value::String(s) if s == "agents" => Ok(Scope::Agents),
            value @ serde_json::Value::Object(_) => serde_json::from_value::<AgentScope>(value)
                .map(|s| Scope::Agent(s.agent))
                .map_err(|_| serde::de::Error::custom(EXPECTED)),
            _ => Err(serde::de::Error::custom(EXPECTED)),
        }
    }
}
