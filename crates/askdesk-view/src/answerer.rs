//! The GUI answerer: holds the requests the human has not answered yet and decides for the human.
//!
//! [`GuiAnswerer`] sits on the service's waterfall. `offer` never blocks: it queues the request
//! with its [`Responder`] and returns [`Offer::Later`]; the human answers through the commands
//! (`submit`, `dismiss`) or a notification action. Everything visible (window, tray, events,
//! notifications, the journal) happens behind the [`Presenter`] trait, so this module knows
//! nothing of Tauri and is tested with a recording presenter.
//!
//! Invariant: the state mutex is never held while calling the presenter or deciding, and never
//! across an `.await` (this module has none).

use askdesk_i18n::t;
use askdesk_journal::millis;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde_json::value::RawValue;

use askdesk_core::meta::display_name;
use askdesk_core::validate::check_answer;
use askdesk_core::{
    decision_channel, AgentInfo, Answer, Answerer, Decision, Failure, Image, Intent, Offer,
    Request, RequestId, Responder, UserQuestionError, Withdrawal,
};
use serde::Serialize;

use crate::markdown::{self, Block, Heading};
use crate::plan_thread::{self, CommentError, CommentInput, PlanThreads, Review, RevisionView};
use crate::unsent::{picture_refs, unsent_answer};

/// The name the desktop's answerer registers with (History calls it "you"; `askdesk doctor` tells
/// the desktop's broker from `askdesk serve`'s by it).
pub use askdesk_connect::{DESKTOP_ANSWERER, PERSON_GROUP};

/// What the GUI answerer asks of the world around it. Implementations must not block: they run
/// on the broker's tasks (except [`Presenter::late_answer`], which runs where the human answered).
pub trait Presenter: Send + Sync + 'static {
    /// A request joined the queue (`waiting` requests now).
    fn added(&self, request: &Arc<Request>, waiting: usize);
    /// A request left the queue.
    fn removed(&self, request: RequestId, why: Removal, waiting: usize);
    /// The human answered a request that had already settled; the answer was discarded. Called
    /// from `submit` (the page's command or a notification's action), never from the broker's
    /// tasks, before the human is told the answer came late: it may wait for the disk.
    fn late_answer(&self, request: &Arc<Request>, answer: &Answer);
    /// Do not disturb was switched.
    fn dnd_changed(&self, on: bool);
}

/// Why a request left the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Removal {
    /// The human answered it.
    Answered,
    /// The human dismissed the whole batch.
    Dismissed,
    /// It settled without the human: the asker withdrew the question, or the broker stopped.
    Withdrawn,
    /// It settled without the human because its asker went: its connection closed (the process
    /// ended) or its agent was unregistered.
    Disconnected,
    /// An answer rule decided it while it waited (its `after` deadline passed).
    Overruled,
    /// Another member of the desktop's race group (`person`) settled it first, `by` its label:
    /// the person answered on another device. Also sent for a request the human answered here
    /// at the same moment, whose answer lost (it is recorded as a late answer).
    AnsweredElsewhere { by: String },
    /// The human answered after it had settled.
    Late,
}

/// Why a submitted answer was not delivered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SubmitError {
    /// The request is no longer waiting (withdrawn by the agent or settled); nothing to do.
    #[error("{}", t!("desktop-request-gone"))]
    Late,
    /// The answer breaks the answer rules; the page should let the human fix it.
    #[error(transparent)]
    Invalid(UserQuestionError),
    /// A plan comment sent with the answer is wrong (names no block, empty, too long); nothing
    /// was sent.
    #[error(transparent)]
    Comments(CommentError),
}

/// Why a draft was not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftError {
    NotAnObject,
    TooLarge(usize),
    /// More pictures than an answer may carry (the limit).
    TooManyPictures(usize),
}

/// In the person's language: the page shows it.
impl std::fmt::Display for DraftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&match self {
            DraftError::NotAnObject => t!("desktop-draft-not-object"),
            DraftError::TooLarge(bytes) => {
                t!(
                    "desktop-draft-too-large",
                    limit = MAX_DRAFT_BYTES,
                    bytes = *bytes
                )
            }
            DraftError::TooManyPictures(limit) => {
                t!("desktop-draft-too-many-pictures", limit = *limit)
            }
        })
    }
}

impl std::error::Error for DraftError {}

/// The largest draft kept per request, in bytes of JSON: room for far more than a human types.
pub const MAX_DRAFT_BYTES: usize = 1024 * 1024;

/// How many withdrawn requests are remembered so a racing answer can still be journaled.
const RECENT_WITHDRAWN: usize = 32;

/// How many ended requests stay in the queue until the person closes them; past it the oldest goes
/// (its draft is in the journal).
pub const MAX_ENDED: usize = 32;

impl Removal {
    /// What the page says of a request that left this way without the human, naming who asked
    /// (`Claude Code withdrew the question`); `None` for the other ways.
    pub fn said_of(&self, who: &str) -> Option<String> {
        match self {
            Removal::Withdrawn => Some(t!("desktop-ended-withdrew", who = who)),
            Removal::Disconnected => Some(t!("desktop-ended-disconnected", who = who)),
            Removal::Answered
            | Removal::Dismissed
            | Removal::Overruled
            | Removal::AnsweredElsewhere { .. }
            | Removal::Late => None,
        }
    }
}

/// The desktop's own answerer. Cheap to clone; every clone is the same queue.
#[derive(Clone)]
pub struct GuiAnswerer {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    presenter: Arc<dyn Presenter>,
    /// Plan reviews by thread: versions, comments, decisions (see `plan_thread`).
    threads: PlanThreads,
}

#[derive(Default)]
struct State {
    waiting: BTreeMap<RequestId, Waiting>,
    /// Requests that settled without the human while they had chosen or typed something: shown,
    /// ended and read-only, until the human closes them (at most [`MAX_ENDED`]).
    ended: BTreeMap<RequestId, Ended>,
    recent: VecDeque<Arc<Request>>,
    dnd: bool,
}

/// A request kept in the queue after it ended, with the draft the page had and why it ended.
struct Ended {
    request: Arc<Request>,
    view: Arc<OnceLock<RequestView>>,
    draft: Option<Box<RawValue>>,
    /// The pictures the draft names, for a page built after the request ended to show again.
    pictures: KeptPictures,
    end: EndedView,
}

struct Waiting {
    request: Arc<Request>,
    responder: Responder,
    /// Rendered off the broker's runtime (markdown and highlighting take time): by the desktop
    /// thread when it hears of the request, or by the first `queue()` that needs it.
    view: Arc<OnceLock<RequestView>>,
    /// What the human has chosen and typed in this request's form so far, in the page's own
    /// format: the window may be dropped while the request waits, and its next page restores it.
    draft: Option<Box<RawValue>>,
    /// The pictures the human attached to this request's answer, which the draft names.
    pictures: KeptPictures,
}

/// The pictures attached to a waiting request's answer (made safe already), kept here so the
/// page's draft names each by a number instead of carrying its bytes, and a page built after the
/// window was dropped shows them again. One a draft named and a later draft no longer names was
/// removed, and goes; one no draft named yet stays (the draft that names it may still be on its
/// way), up to the cap [`GuiAnswerer::keep_picture`] is given. They go with the request.
#[derive(Default)]
struct KeptPictures {
    next: u64,
    kept: Vec<KeptPicture>,
}

impl KeptPictures {
    /// The picture kept under number `picture`.
    fn get(&self, picture: u64) -> Option<&Image> {
        self.kept
            .iter()
            .find(|kept| kept.id == picture)
            .map(|kept| &kept.image)
    }
}

struct KeptPicture {
    id: u64,
    image: Image,
    /// Whether a draft has named it.
    named: bool,
}

impl GuiAnswerer {
    pub fn new(presenter: Arc<dyn Presenter>) -> Self {
        GuiAnswerer {
            shared: Arc::new(Shared {
                state: Mutex::default(),
                presenter,
                threads: PlanThreads::default(),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every critical section below completes its edit or makes none, so a poisoned lock is sound.
        askdesk_core::sync::lock(&self.shared.state)
    }

    /// The waiting requests and the ended ones not closed yet, oldest first, as the page shows
    /// them (an ended request says so in its `ended`).
    pub fn queue(&self) -> Vec<RequestView> {
        type Entry = (
            Arc<Request>,
            Arc<OnceLock<RequestView>>,
            Option<Box<RawValue>>,
            Option<EndedView>,
        );
        let mut shown: Vec<Entry> = {
            let state = self.state();
            let waiting = state
                .waiting
                .values()
                .map(|w| (w.request.clone(), w.view.clone(), w.draft.clone(), None));
            let ended = state.ended.values().map(|e| {
                let end = Some(e.end.clone());
                (e.request.clone(), e.view.clone(), e.draft.clone(), end)
            });
            waiting.chain(ended).collect()
        };
        shown.sort_by_key(|(request, ..)| request.id);
        // Rendering happens outside the lock, so the broker is never held up by it.
        shown
            .into_iter()
            .map(|(request, view, draft, ended)| RequestView {
                draft,
                ended,
                ..view
                    .get_or_init(|| RequestView::new(&request, &self.shared.threads))
                    .clone()
            })
            .collect()
    }

    /// The human closed an ended request: it leaves the queue. Whether it was there.
    pub fn close_ended(&self, id: RequestId) -> bool {
        self.state().ended.remove(&id).is_some()
    }

    /// Whether the request ended and stays in the queue until the human closes it.
    pub fn is_ended(&self, id: RequestId) -> bool {
        self.state().ended.contains_key(&id)
    }

    /// How many requests wait for the human (ended ones do not).
    pub fn waiting(&self) -> usize {
        self.state().waiting.len()
    }

    /// Keeps the page's draft of a waiting request's answer (replacing the one before), so the
    /// window can be dropped while the request waits and nothing the human chose or typed is
    /// lost. A draft for a request that no longer waits is not needed and is let go.
    pub fn save_draft(&self, id: RequestId, draft: Box<RawValue>) -> Result<(), DraftError> {
        let text = draft.get();
        if text.len() > MAX_DRAFT_BYTES {
            return Err(DraftError::TooLarge(text.len()));
        }
        if !text.starts_with('{') {
            return Err(DraftError::NotAnObject);
        }
        // Read outside the lock: a draft may be large.
        let named = picture_refs(&draft);
        if let Some(waiting) = self.state().waiting.get_mut(&id) {
            waiting.draft = Some(draft);
            waiting.pictures.kept.retain_mut(|picture| {
                let now = named.contains(&picture.id);
                let removed = picture.named && !now;
                picture.named |= now;
                !removed
            });
        }
        Ok(())
    }

    /// Keeps a picture the human attached to waiting request `id`'s answer (made safe already)
    /// while the request waits, at most `max` at a time; returns the number the page's draft names
    /// it by, or `None` when the request no longer waits.
    pub fn keep_picture(
        &self,
        id: RequestId,
        image: Image,
        max: usize,
    ) -> Result<Option<u64>, DraftError> {
        let mut state = self.state();
        let Some(waiting) = state.waiting.get_mut(&id) else {
            return Ok(None);
        };
        let pictures = &mut waiting.pictures;
        if pictures.kept.len() >= max {
            return Err(DraftError::TooManyPictures(max));
        }
        pictures.next += 1;
        let picture = pictures.next;
        pictures.kept.push(KeptPicture {
            id: picture,
            image,
            named: false,
        });
        Ok(Some(picture))
    }

    /// The picture the draft of request `id` names `picture`, for the page to show again, while
    /// the request waits or stays ended in the queue; `None` once it was removed or the request
    /// left the queue.
    pub fn kept_picture(&self, id: RequestId, picture: u64) -> Option<Image> {
        let state = self.state();
        let pictures = match state.waiting.get(&id) {
            Some(waiting) => &waiting.pictures,
            None => &state.ended.get(&id)?.pictures,
        };
        pictures.get(picture).cloned()
    }

    /// Renders a waiting request's view ahead of the page asking for it. Call it off the async
    /// runtime: markdown rendering and code highlighting are CPU work.
    pub fn prepare(&self, id: RequestId) {
        let waiting = self
            .state()
            .waiting
            .get(&id)
            .map(|w| (w.request.clone(), w.view.clone()));
        if let Some((request, view)) = waiting {
            view.get_or_init(|| RequestView::new(&request, &self.shared.threads));
        }
    }

    /// Records what the human did with comment `index` of the last review on a waiting revision
    /// (resolved, carried forward, open again); the request's view is read again with it. Only a
    /// comment whose block is still in the plan can be carried.
    pub fn set_past_comment(
        &self,
        id: RequestId,
        index: usize,
        state: plan_thread::PastState,
    ) -> Result<(), CommentError> {
        let waiting = self
            .state()
            .waiting
            .get(&id)
            .map(|w| (w.request.clone(), w.view.clone()));
        let (request, view) = waiting.ok_or(CommentError::NotWaiting)?;
        let view = view.get_or_init(|| RequestView::new(&request, &self.shared.threads));
        let past = view
            .questions
            .iter()
            .find_map(|q| q.revision.as_ref())
            .and_then(|r| r.comments.get(index))
            .ok_or(CommentError::NoPastComment(index))?;
        if state == plan_thread::PastState::Carried && past.key.is_none() {
            return Err(CommentError::CannotCarry(index));
        }
        self.shared.threads.set_past(id, index, state)?;
        if let Some(waiting) = self.state().waiting.get_mut(&id) {
            waiting.view = Arc::default();
        }
        Ok(())
    }

    /// The waiting request with this id, if any.
    pub fn request(&self, id: RequestId) -> Option<Arc<Request>> {
        self.state().waiting.get(&id).map(|w| w.request.clone())
    }

    pub fn dnd(&self) -> bool {
        self.state().dnd
    }

    /// Switches do not disturb: while on, new requests are delegated down the waterfall at once.
    /// Requests already waiting stay.
    pub fn set_dnd(&self, on: bool) {
        let changed = std::mem::replace(&mut self.state().dnd, on) != on;
        if changed {
            self.shared.presenter.dnd_changed(on);
        }
    }

    /// Claims the request with the human's answer.
    pub fn submit(&self, id: RequestId, answer: Answer) -> Result<(), SubmitError> {
        self.submit_review(id, answer, Vec::new())
    }

    /// Claims the request with the human's answer and, on its plan review, the human's comments:
    /// the feedback text is built here from the comments (quoted from the plan, in its order) and
    /// the general feedback the page put in the plan's `custom`, and replaces that `custom` (the
    /// wire shape does not change). The comments are recorded for the plan's next revision only
    /// once the answer is delivered.
    pub fn submit_review(
        &self,
        id: RequestId,
        mut answer: Answer,
        comments: Vec<CommentInput>,
    ) -> Result<(), SubmitError> {
        let review = self.review_of(id, &mut answer, comments)?;
        let taken = {
            let mut state = self.state();
            match state.waiting.get(&id) {
                Some(waiting) => {
                    let answer = check_answer(&waiting.request.questions, answer.clone())
                        .map_err(SubmitError::Invalid)?;
                    let waiting = state.waiting.remove(&id).expect("checked above");
                    Ok((waiting, answer, state.waiting.len()))
                }
                None => Err(state.recent.iter().find(|r| r.id == id).cloned()),
            }
        };
        match taken {
            Ok((waiting, answer, left)) => {
                let decided = answer.clone();
                match waiting.responder.decide(Decision::Claim(answer)) {
                    Ok(()) => {
                        if let Some((comments, general)) = review {
                            self.shared.threads.commented(id, comments, general);
                        }
                        self.shared.threads.decided(id, &decided);
                        self.thread_changed(id);
                        self.shared.presenter.removed(id, Removal::Answered, left);
                        Ok(())
                    }
                    // The request settled between the lookup and the decision: the answer is late.
                    Err(refused) => {
                        if let Decision::Claim(answer) = &refused {
                            self.shared.presenter.late_answer(&waiting.request, answer);
                        }
                        self.shared.presenter.removed(id, Removal::Late, left);
                        Err(SubmitError::Late)
                    }
                }
            }
            Err(Some(withdrawn)) => {
                self.shared.presenter.late_answer(&withdrawn, &answer);
                Err(SubmitError::Late)
            }
            Err(None) => Err(SubmitError::Late),
        }
    }

    /// The comments and general feedback of a waiting plan review's answer, checked against its
    /// plan; the plan's `custom` in `answer` becomes the feedback text they make. `None` when the
    /// request does not wait, has no plan under review, or the answer skips the plan (and then
    /// comments are refused).
    fn review_of(
        &self,
        id: RequestId,
        answer: &mut Answer,
        comments: Vec<CommentInput>,
    ) -> Result<Option<Review>, SubmitError> {
        let waiting = self
            .state()
            .waiting
            .get(&id)
            .map(|w| (w.request.clone(), w.view.clone()));
        // A request that no longer waits is told late by the claim itself.
        let Some((request, view)) = waiting else {
            return Ok(None);
        };
        plan_thread::review(
            &request.questions,
            |id| {
                // Rendered outside the lock, as in `queue`.
                let view = view.get_or_init(|| RequestView::new(&request, &self.shared.threads));
                view.questions
                    .iter()
                    .find(|q| q.id == id)
                    .map(|q| q.blocks.as_slice())
                    .unwrap_or_default()
            },
            answer,
            comments,
        )
        .map_err(SubmitError::Comments)
    }

    /// The human dismissed the whole batch: the ask fails `ASK_CANCELLED`.
    pub fn dismiss(&self, id: RequestId) -> Result<(), SubmitError> {
        let taken = {
            let mut state = self.state();
            state.waiting.remove(&id).map(|w| (w, state.waiting.len()))
        };
        let Some((waiting, left)) = taken else {
            return Err(SubmitError::Late);
        };
        let decided = waiting.responder.decide(Decision::Fail(Failure::Domain(
            UserQuestionError::cancelled_by_user(),
        )));
        self.shared.threads.ended(id, &t!("desktop-plan-dismissed"));
        self.thread_changed(id);
        let why = if decided.is_ok() {
            Removal::Dismissed
        } else {
            Removal::Late
        };
        self.shared.presenter.removed(id, why, left);
        decided.map_err(|_| SubmitError::Late)
    }
}

impl Answerer for GuiAnswerer {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let (responder, receiver) = decision_channel();
        let waiting = {
            let mut state = self.state();
            if state.dnd {
                return Offer::Now(Decision::Delegate);
            }
            state.waiting.insert(
                request.id,
                Waiting {
                    request: request.clone(),
                    responder,
                    view: Arc::default(),
                    draft: None,
                    pictures: KeptPictures::default(),
                },
            );
            state.waiting.len()
        };
        self.shared.threads.arrived(request);
        self.shared.presenter.added(request, waiting);
        Offer::Later(receiver)
    }

    /// The request leaves the queue; what the human had chosen or typed in it goes back for the
    /// journal, and, when the asker withdrew it or went, keeps the request in the queue, ended
    /// and read-only, until the human closes it: nothing they typed vanishes under their hands.
    fn withdraw(&self, id: RequestId, why: Withdrawal) -> Option<Answer> {
        let (removal, keep) = match why {
            Withdrawal::AskerGone => (Removal::Disconnected, true),
            Withdrawal::Cancelled => (Removal::Withdrawn, true),
            // The app is stopping, or the request moves on to another answerer.
            Withdrawal::ShuttingDown | Withdrawal::Unregistered => (Removal::Withdrawn, false),
            Withdrawal::AnsweredElsewhere { by } => {
                let ended = t!("desktop-plan-answered-on", device = by.as_str());
                let why = Removal::AnsweredElsewhere { by };
                // Not waiting any more: the human's own answer crossed the winner's and lost;
                // the page still hears where the request was answered.
                let waiting = self.state().waiting.contains_key(&id);
                if waiting {
                    self.leave(id, why, &ended, false);
                } else {
                    let left = self.state().waiting.len();
                    self.shared.presenter.removed(id, why, left);
                }
                // The request was answered: what the human had typed here is not a draft of it.
                return None;
            }
        };
        self.leave(id, removal, &t!("desktop-plan-withdrawn"), keep)
    }

    fn overruled(&self, id: RequestId, by: &str) {
        tracing::debug!(request = %id, by, "decided while it waited");
        // A plan version a rule decided shows who decided it, not that the agent withdrew it.
        self.leave(
            id,
            Removal::Overruled,
            &t!("desktop-plan-decided-by", by = by),
            false,
        );
    }
}

impl GuiAnswerer {
    /// A waiting request leaves the queue without the human (`why`): remembered a while, so an
    /// answer the human sends just after is recognised as late; a plan version records `ended`.
    /// Returns what the human had chosen and typed in it ([`unsent_answer`]); with `keep`, a
    /// request with such a draft stays in the queue as ended.
    fn leave(&self, id: RequestId, why: Removal, ended: &str, keep: bool) -> Option<Answer> {
        let (waiting, left) = {
            let mut state = self.state();
            let waiting = state.waiting.remove(&id)?;
            if state.recent.len() == RECENT_WITHDRAWN {
                state.recent.pop_front();
            }
            state.recent.push_back(waiting.request.clone());
            (waiting, state.waiting.len())
        };
        // Read outside the lock: a draft may be large.
        let unsent = waiting.draft.as_deref().and_then(|draft| {
            unsent_answer(&waiting.request.questions, draft, |n| {
                waiting.pictures.get(n).cloned()
            })
        });
        let end = why
            .said_of(display_name(waiting.request.agent.as_ref()))
            .filter(|_| keep && unsent.is_some())
            .map(|text| EndedView {
                why: why.clone(),
                text,
            });
        if let Some(end) = end {
            let mut state = self.state();
            if state.ended.len() == MAX_ENDED {
                state.ended.pop_first();
            }
            state.ended.insert(
                id,
                Ended {
                    request: waiting.request,
                    view: waiting.view,
                    draft: waiting.draft,
                    pictures: waiting.pictures,
                    end,
                },
            );
        }
        self.shared.threads.ended(id, ended);
        self.thread_changed(id);
        self.shared.presenter.removed(id, why, left);
        unsent
    }

    /// A plan version was decided, commented on or ended: the later versions of its thread that
    /// still wait show its decision and comments, so their views are rendered again when next read
    /// (the page reads the queue again on the `removed` that follows).
    fn thread_changed(&self, id: RequestId) {
        let later = self.shared.threads.later_versions(id);
        if later.is_empty() {
            return;
        }
        let mut state = self.state();
        for request in later {
            if let Some(waiting) = state.waiting.get_mut(&request) {
                waiting.view = Arc::default();
            }
        }
    }
}

/// A waiting request as the page receives it. Only `detailHtml` is HTML (sanitized); every
/// other string is shown as text.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    pub request: RequestId,
    pub agent: Option<AgentInfo>,
    /// Who asks ([`askdesk_core::meta::display_name`]).
    pub who: String,
    /// The folder the agent works in ([`project_of`]): parallel sessions of one client are told
    /// apart by it and by `session`.
    pub project: Option<String>,
    /// The agent's session, short ([`session_of`]).
    pub session: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub asked_at: u64,
    pub questions: Vec<QuestionView>,
    /// A rule's pending `after` deadline, filled in as the queue is read (it is not cached).
    pub deadline: Option<DeadlineView>,
    /// What shadow rules suggest, filled in as the queue is read.
    pub suggestions: Vec<crate::rules_view::SuggestionView>,
    /// The page's last draft of the answer ([`GuiAnswerer::save_draft`]), filled in as the queue
    /// is read.
    pub draft: Option<Box<RawValue>>,
    /// The person's past answers to these questions, one entry per question
    /// ([`crate::memory::Memory::lookup`]), filled in as the queue is read: they come with the
    /// request's first draw, so a hint never appears later above the options and moves them.
    pub memory: Vec<Option<crate::memory::PastAnswer>>,
    /// Set when the request ended without the human and stays, read-only, until they close it.
    pub ended: Option<EndedView>,
    /// Whether "Always answer this way here" is offered: not for a tool prompt with no command,
    /// file or URL to narrow a rule to (`askdesk_rules::draft::narrowable`).
    pub offers_rule: bool,
}

/// Why a request the page still shows ended, in the page's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedView {
    /// [`Removal::Withdrawn`] or [`Removal::Disconnected`].
    pub why: Removal,
    /// What the card says ([`Removal::said_of`]): `Claude Code disconnected (the process ended)`.
    pub text: String,
}

/// A rule that will act on the request unless the human answers first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadlineView {
    pub rule: String,
    /// When the rule acts, in milliseconds since the Unix epoch.
    pub at: u64,
    /// What the rule will do then, in words.
    pub action: String,
    /// Held by the person: the milliseconds left when the clock stopped (`at` then moves on
    /// with the wall clock and means nothing).
    pub held: Option<u64>,
    /// The answer the rule will give, for the page to compare with the person's current choice.
    pub answer: Option<Answer>,
}

impl DeadlineView {
    pub fn new(deadline: &askdesk_rules::Deadline) -> Self {
        DeadlineView {
            rule: deadline.rule.clone(),
            at: millis(deadline.at),
            action: deadline.action.clone(),
            held: deadline
                .held
                .map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX)),
            answer: deadline.answer.clone(),
        }
    }
}

/// The project an agent works in, as the queue names it: the last folder of its `meta.cwd`
/// (`/home/dana/src/askdesk` is `askdesk`).
pub fn project_of(agent: Option<&AgentInfo>) -> Option<String> {
    let cwd = agent?.meta.as_ref()?.get("cwd")?.as_str()?;
    let name = cwd.trim_end_matches('/').rsplit('/').next()?.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The agent's `meta.session` short enough for a queue row and long enough to tell parallel
/// sessions apart: a UUID (Claude Code's, Codex's) by its first 8 characters, as their own
/// interfaces show it; anything else (`askdesk mcp`'s `mcp-<pid>-<start>`) by its last 6, where
/// sessions differ.
pub fn session_of(agent: Option<&AgentInfo>) -> Option<String> {
    let session = agent?.meta.as_ref()?.get("session")?.as_str()?.trim();
    let chars: Vec<char> = session.chars().collect();
    let uuid = chars.len() == 36
        && chars.iter().enumerate().all(|(i, c)| {
            matches!(i, 8 | 13 | 18 | 23) == (*c == '-') && (*c == '-' || c.is_ascii_hexdigit())
        });
    let short: String = if uuid {
        chars[..8].iter().collect()
    } else if chars.len() > 8 {
        chars[chars.len() - 6..].iter().collect()
    } else {
        session.to_owned()
    };
    (!short.is_empty()).then_some(short)
}

/// One question as the page receives it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionView {
    pub id: String,
    pub question: String,
    pub header: Option<String>,
    /// `detail` rendered and sanitized.
    pub detail_html: Option<String>,
    pub outline: Vec<Heading>,
    /// The blocks of `detail`, for comments: key, kind, heading path and text.
    pub blocks: Vec<Block>,
    /// For a plan that revises an earlier one of the same thread: what changed, the earlier
    /// comments and versions.
    pub revision: Option<RevisionView>,
    pub options: Vec<OptionView>,
    pub multi_select: bool,
    pub intent: Option<Intent>,
    /// Whether the page should show the plan-review pane.
    pub plan_review: bool,
    /// The question's (or plan's) images, re-encoded PNGs (protocol 1.4).
    pub images: Vec<Image>,
    /// On a plan review, the longest comment the backend takes, in bytes of UTF-8
    /// ([`plan_thread::MAX_COMMENT_BYTES`]), so the comment editor can say it before sending.
    pub comment_limit: Option<usize>,
}

/// One option as the page receives it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OptionView {
    /// Sent back unchanged, "(Recommended)" and all.
    pub label: String,
    pub description: Option<String>,
    pub recommended: bool,
    /// Its images, re-encoded PNGs (protocol 1.4); the page shows them as `data:` URLs.
    pub images: Vec<Image>,
}

impl RequestView {
    pub fn new(request: &Request, threads: &PlanThreads) -> Self {
        let thread_question = plan_thread::plan_question(&request.questions).map(|q| q.id.as_str());
        RequestView {
            request: request.id,
            agent: request.agent.clone(),
            who: display_name(request.agent.as_ref()).to_owned(),
            project: project_of(request.agent.as_ref()),
            session: session_of(request.agent.as_ref()),
            asked_at: millis(request.asked_at),
            deadline: None,
            suggestions: Vec::new(),
            draft: None,
            memory: Vec::new(),
            ended: None,
            offers_rule: askdesk_rules::draft::narrowable(request.agent.as_ref()),
            questions: request
                .questions
                .iter()
                .map(|q| {
                    let rendered = q.detail.as_deref().map(markdown::render);
                    let revision = rendered
                        .as_ref()
                        .filter(|_| thread_question == Some(q.id.as_str()))
                        .and_then(|r| threads.revision(request.id, r));
                    QuestionView {
                        blocks: rendered
                            .as_ref()
                            .map(|r| r.blocks.clone())
                            .unwrap_or_default(),
                        revision,
                        id: q.id.clone(),
                        question: q.question.clone(),
                        header: q.header.clone(),
                        outline: rendered
                            .as_ref()
                            .map(|r| r.outline.clone())
                            .unwrap_or_default(),
                        detail_html: rendered.map(|r| r.html),
                        options: q
                            .options
                            .iter()
                            .map(|o| OptionView {
                                label: o.label.clone(),
                                description: o.description.clone(),
                                recommended: o.is_recommended(),
                                images: o.images.clone(),
                            })
                            .collect(),
                        multi_select: q.multi_select,
                        images: q.images.clone(),
                        plan_review: q.intent.as_ref().is_some_and(Intent::is_plan_review),
                        comment_limit: q
                            .intent
                            .as_ref()
                            .is_some_and(Intent::is_plan_review)
                            .then_some(plan_thread::MAX_COMMENT_BYTES),
                        intent: q.intent.clone(),
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_deadline_reaches_the_page_as_epoch_millis_and_words() {
        let at = std::time::UNIX_EPOCH + Duration::from_millis(1_800_000_123_456);
        let deadline = askdesk_rules::Deadline {
            rule: "cleanup later".into(),
            at,
            action: "answer \"No\"".into(),
            held: None,
            answer: Some(choose("q", "No")),
        };
        let view = DeadlineView::new(&deadline);
        assert_eq!(view.at, 1_800_000_123_456);
        let json = serde_json::to_value(&view).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"rule": "cleanup later", "at": 1_800_000_123_456u64, "action": "answer \"No\"",
                "held": null, "answer": {"answers": [{"id": "q", "selected": ["No"]}]}})
        );
        let held = DeadlineView::new(&askdesk_rules::Deadline {
            held: Some(Duration::from_millis(61_500)),
            ..deadline
        });
        assert_eq!(held.held, Some(61_500));
    }

    fn agent(meta: serde_json::Value) -> AgentInfo {
        AgentInfo {
            id: "a".into(),
            label: Some("claude-code".into()),
            meta: meta.as_object().cloned(),
        }
    }

    #[test]
    fn parallel_sessions_are_told_apart_by_project_and_session() {
        let claude = agent(serde_json::json!({
            "cwd": "/home/dana/src/askdesk/", "session": "7f3a9c21-5b6d-4e8f-9a0b-1c2d3e4f5a6b"
        }));
        assert_eq!(project_of(Some(&claude)).as_deref(), Some("askdesk"));
        assert_eq!(session_of(Some(&claude)).as_deref(), Some("7f3a9c21"));
        let mcp =
            agent(serde_json::json!({ "cwd": "/srv/web", "session": "mcp-4242-18f3a9b2c4d5e6" }));
        assert_eq!(project_of(Some(&mcp)).as_deref(), Some("web"));
        assert_eq!(session_of(Some(&mcp)).as_deref(), Some("c4d5e6"));
        let bare = agent(serde_json::json!({ "cwd": "/", "session": 7 }));
        assert_eq!(project_of(Some(&bare)), None);
        assert_eq!(session_of(Some(&bare)), None);
        assert_eq!(project_of(None), None);
        let short = agent(serde_json::json!({ "session": "s1" }));
        assert_eq!(session_of(Some(&short)).as_deref(), Some("s1"));
    }

    use askdesk_core::testing::{choose, chosen, member, typed, Holding};
    use askdesk_core::{AnswerItem, AskError, AskRequest, Config, ErrorCode, Question, Service};
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    #[derive(Default)]
    struct Recorder {
        events: Mutex<Vec<String>>,
    }

    impl Recorder {
        fn events(&self) -> Vec<String> {
            self.events.lock().unwrap().clone()
        }
        fn push(&self, event: String) {
            self.events.lock().unwrap().push(event);
        }
    }

    impl Presenter for Recorder {
        fn added(&self, request: &Arc<Request>, waiting: usize) {
            self.push(format!("added {} ({waiting})", request.id));
        }
        fn removed(&self, request: RequestId, why: Removal, waiting: usize) {
            self.push(format!("removed {request} {why:?} ({waiting})"));
        }
        fn late_answer(&self, request: &Arc<Request>, answer: &Answer) {
            self.push(format!(
                "late {} {}",
                request.id,
                serde_json::to_string(answer).unwrap()
            ));
        }
        fn dnd_changed(&self, on: bool) {
            self.push(format!("dnd {on}"));
        }
    }

    fn setup() -> (Service, GuiAnswerer, Arc<Recorder>) {
        let service = Service::new(Config::default());
        let recorder = Arc::new(Recorder::default());
        let gui = GuiAnswerer::new(recorder.clone());
        service
            .register_answerer(member("desktop", None), Arc::new(gui.clone()))
            .unwrap();
        (service, gui, recorder)
    }

    fn question(id: &str, options: &[&str]) -> Question {
        Question {
            detail: Some("**bold** <script>x()</script>".into()),
            ..askdesk_core::testing::question(id, &format!("{id}?"), options)
        }
    }

    fn ask(
        service: &Service,
        questions: Vec<Question>,
    ) -> (
        tokio::task::JoinHandle<Result<Answer, AskError>>,
        CancellationToken,
    ) {
        let cancel = CancellationToken::new();
        let fut = service.ask(
            AskRequest {
                questions,
                agent: None,
            },
            &cancel,
        );
        (tokio::spawn(fut), cancel)
    }

    async fn wait_queued(gui: &GuiAnswerer, n: usize) -> Vec<RequestView> {
        for _ in 0..200 {
            let queue = gui.queue();
            if queue.len() == n {
                return queue;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("queue never reached {n}");
    }

    #[tokio::test]
    async fn submit_claims_with_the_answer() {
        let (service, gui, recorder) = setup();
        let (task, _cancel) = ask(
            &service,
            vec![
                question("a", &["Yes (Recommended)", "No"]),
                question("b", &[]),
            ],
        );
        let queue = wait_queued(&gui, 1).await;
        let view = &queue[0];
        assert!(view.questions[0].options[0].recommended);
        assert!(!view.questions[0].options[1].recommended);
        let html = view.questions[0].detail_html.as_deref().unwrap();
        assert!(
            html.contains("<strong>bold</strong>") && !html.contains("script"),
            "{html}"
        );
        // Items in any order come back in question order.
        let answer = Answer {
            answers: vec![typed("b", "free"), chosen("a", &["Yes (Recommended)"])],
        };
        gui.submit(view.request, answer).unwrap();
        let got = task.await.unwrap().unwrap();
        assert_eq!(
            got.answers[0].selected,
            vec!["Yes (Recommended)".to_string()]
        );
        assert_eq!(got.answers[1].custom.as_deref(), Some("free"));
        assert!(gui.queue().is_empty());
        assert_eq!(
            recorder.events(),
            vec![
                "added r1 (1)".to_string(),
                "removed r1 Answered (0)".to_string()
            ]
        );
    }

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn a_draft_is_kept_while_its_request_waits_and_goes_with_it() {
        let (service, gui, _) = setup();
        let (first, _c1) = ask(&service, vec![question("a", &["Yes", "No"])]);
        let (_second, _c2) = ask(&service, vec![question("b", &["Yes", "No"])]);
        let queue = wait_queued(&gui, 2).await;
        let (a, b) = (queue[0].request, queue[1].request);
        assert!(queue.iter().all(|v| v.draft.is_none()));

        gui.save_draft(a, raw(r#"{"questions":[{"text":"half"}]}"#))
            .unwrap();
        gui.save_draft(a, raw(r#"{"questions":[{"text":"half a thought"}]}"#))
            .unwrap();
        let queue = gui.queue();
        // The newest draft, as the page wrote it, and only on its own request.
        assert_eq!(
            queue[0].draft.as_deref().map(RawValue::get),
            Some(r#"{"questions":[{"text":"half a thought"}]}"#)
        );
        assert!(queue[1].draft.is_none());
        let json = serde_json::to_value(&queue[0]).unwrap();
        assert_eq!(json["draft"]["questions"][0]["text"], "half a thought");

        let answer = choose("a", "Yes");
        gui.submit(a, answer).unwrap();
        first.await.unwrap().unwrap();
        // Settled: a late save is let go, not kept for a request that no longer waits.
        gui.save_draft(a, raw(r#"{"late":true}"#)).unwrap();
        let queue = gui.queue();
        assert_eq!(queue.len(), 1);
        assert_eq!(queue[0].request, b);
        assert!(queue[0].draft.is_none());
    }

    #[tokio::test]
    async fn a_draft_that_is_not_an_object_or_too_large_is_refused() {
        let (service, gui, _) = setup();
        let (_task, _cancel) = ask(&service, vec![question("a", &["Yes", "No"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        gui.save_draft(id, raw(r#"{"kept":1}"#)).unwrap();
        assert_eq!(
            gui.save_draft(id, raw("[1, 2]")),
            Err(DraftError::NotAnObject)
        );
        let big = format!(r#"{{"text":"{}"}}"#, "x".repeat(MAX_DRAFT_BYTES));
        assert_eq!(
            gui.save_draft(id, raw(&big)),
            Err(DraftError::TooLarge(MAX_DRAFT_BYTES + 11))
        );
        assert_eq!(
            DraftError::TooLarge(MAX_DRAFT_BYTES + 11).to_string(),
            "a draft may have at most 1048576 bytes (this one has 1048587)"
        );
        // A refused draft leaves the one before it.
        assert_eq!(
            gui.queue()[0].draft.as_deref().map(RawValue::get),
            Some(r#"{"kept":1}"#)
        );
    }

    fn picture(colour: &str) -> Image {
        Image {
            mime: Some(Image::SAFE_MIME.into()),
            data: Some(colour.into()),
            path: None,
        }
    }

    /// A draft naming `pictures` for question "a", as the page writes one.
    fn naming(pictures: &[u64]) -> Box<RawValue> {
        raw(&serde_json::json!({"questions": [{"id": "a", "pictures": pictures}]}).to_string())
    }

    #[tokio::test]
    async fn an_attached_picture_is_kept_by_number_until_a_draft_drops_it_or_the_request_goes() {
        let (service, gui, _) = setup();
        let (task, _cancel) = ask(&service, vec![question("a", &["Yes", "No"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        let red = gui.keep_picture(id, picture("red"), 3).unwrap().unwrap();
        let blue = gui.keep_picture(id, picture("blue"), 3).unwrap().unwrap();
        assert_ne!(red, blue);
        assert_eq!(gui.kept_picture(id, red), Some(picture("red")));
        // A draft saved before the page knew of the blue one does not take it away.
        gui.save_draft(id, naming(&[red])).unwrap();
        assert_eq!(gui.kept_picture(id, blue), Some(picture("blue")));
        gui.save_draft(id, naming(&[red, blue])).unwrap();
        // Removed: the next draft no longer names it.
        gui.save_draft(id, naming(&[blue])).unwrap();
        assert_eq!(gui.kept_picture(id, red), None);
        assert_eq!(gui.kept_picture(id, blue), Some(picture("blue")));
        // Another request's number, or a number never given, is nothing.
        assert_eq!(gui.kept_picture(RequestId(id.0 + 1), blue), None);
        assert_eq!(gui.kept_picture(id, blue + 100), None);
        // At most the cap at a time.
        gui.keep_picture(id, picture("green"), 3).unwrap().unwrap();
        gui.keep_picture(id, picture("grey"), 3).unwrap().unwrap();
        assert_eq!(
            gui.keep_picture(id, picture("black"), 3),
            Err(DraftError::TooManyPictures(3))
        );
        assert_eq!(
            DraftError::TooManyPictures(3).to_string(),
            "an answer may have at most 3 pictures"
        );
        gui.submit(id, choose("a", "Yes")).unwrap();
        task.await.unwrap().unwrap();
        // They go with the request.
        assert_eq!(gui.kept_picture(id, blue), None);
        assert_eq!(gui.keep_picture(id, picture("white"), 3), Ok(None));
    }

    #[tokio::test]
    async fn a_bad_answer_is_refused_and_the_request_stays() {
        let (service, gui, _) = setup();
        let (task, cancel) = ask(&service, vec![question("a", &["Yes", "No"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        let bad = choose("a", "Maybe");
        assert!(
            matches!(gui.submit(id, bad), Err(SubmitError::Invalid(e)) if e.code == ErrorCode::BadAnswer)
        );
        assert_eq!(gui.queue().len(), 1);
        cancel.cancel();
        let err = task.await.unwrap().unwrap_err();
        assert_eq!(err.code(), Some(&ErrorCode::AskAborted));
    }

    #[tokio::test]
    async fn dismiss_fails_ask_cancelled() {
        let (service, gui, recorder) = setup();
        let (task, _cancel) = ask(&service, vec![question("a", &["Yes"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        gui.dismiss(id).unwrap();
        let err = task.await.unwrap().unwrap_err();
        assert_eq!(
            err,
            AskError::Question(UserQuestionError::cancelled_by_user())
        );
        assert_eq!(
            recorder.events().last().unwrap(),
            "removed r1 Dismissed (0)"
        );
        assert_eq!(gui.dismiss(id), Err(SubmitError::Late));
    }

    #[tokio::test]
    async fn do_not_disturb_delegates_new_requests() {
        let (service, gui, recorder) = setup();
        gui.set_dnd(true);
        let (task, _cancel) = ask(&service, vec![question("a", &["Yes"])]);
        let err = task.await.unwrap().unwrap_err();
        assert_eq!(err.code(), Some(&ErrorCode::NoProvider));
        assert_eq!(recorder.events(), vec!["dnd true".to_string()]);
        gui.set_dnd(false);
        let (task, _cancel) = ask(&service, vec![question("a", &["Yes"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        gui.dismiss(id).unwrap();
        assert!(task.await.unwrap().is_err());
    }

    #[tokio::test]
    async fn a_cancelled_ask_is_withdrawn_and_a_late_answer_is_recorded() {
        let (service, gui, recorder) = setup();
        let (task, cancel) = ask(&service, vec![question("a", &["Yes"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        cancel.cancel();
        assert_eq!(
            task.await.unwrap().unwrap_err().code(),
            Some(&ErrorCode::AskAborted)
        );
        assert!(gui.queue().is_empty());
        let answer = choose("a", "Yes");
        assert_eq!(gui.submit(id, answer), Err(SubmitError::Late));
        assert_eq!(
            recorder.events(),
            vec![
                "added r1 (1)".to_string(),
                "removed r1 Withdrawn (0)".to_string(),
                r#"late r1 {"answers":[{"id":"a","selected":["Yes"]}]}"#.to_string(),
            ]
        );
    }

    /// Decides waiting request `id` with one answer item, as rule `by`'s deadline would.
    fn overrule(service: &Service, id: RequestId, by: &str, item: AnswerItem) {
        let answer = Answer {
            answers: vec![item],
        };
        askdesk_core::testing::overrule(service, id, by, answer);
    }

    #[tokio::test]
    async fn a_request_a_rule_decides_while_it_waits_leaves_as_overruled() {
        let (service, gui, recorder) = setup();
        let (task, _cancel) = ask(&service, vec![question("a", &["Yes", "No"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        overrule(&service, id, "rule:auto no", chosen("a", &["No"]));
        assert!(task.await.unwrap().is_ok());
        assert!(gui.queue().is_empty());
        assert_eq!(
            recorder.events(),
            vec![
                "added r1 (1)".to_string(),
                "removed r1 Overruled (0)".to_string(),
            ]
        );
    }

    /// The desktop and a phone in the group `person`, the phone first when `phone_first`. The
    /// phone holds every request it is offered until the test decides for it.
    fn setup_with_phone(phone_first: bool) -> (Service, GuiAnswerer, Arc<Recorder>, Arc<Holding>) {
        let service = Service::new(Config::default());
        let recorder = Arc::new(Recorder::default());
        let gui = GuiAnswerer::new(recorder.clone());
        let phone = Arc::new(Holding::default());
        let members: [(&str, Arc<dyn Answerer>); 2] = if phone_first {
            [
                ("phone", phone.clone()),
                (DESKTOP_ANSWERER, Arc::new(gui.clone())),
            ]
        } else {
            [
                (DESKTOP_ANSWERER, Arc::new(gui.clone())),
                ("phone", phone.clone()),
            ]
        };
        for (label, answerer) in members {
            service
                .register_answerer(member(label, Some(PERSON_GROUP)), answerer)
                .unwrap();
        }
        (service, gui, recorder, phone)
    }

    fn yes() -> Answer {
        choose("a", "Yes")
    }

    #[tokio::test]
    async fn a_request_answered_on_another_device_leaves_as_answered_there() {
        let (service, gui, recorder, phone) = setup_with_phone(false);
        let (task, _cancel) = ask(&service, vec![question("a", &["Yes", "No"])]);
        let id = wait_queued(&gui, 1).await[0].request;
        let on_phone = phone.take().expect("the phone races");
        on_phone.decide(Decision::Claim(yes())).unwrap();
        assert_eq!(task.await.unwrap(), Ok(yes()));
        assert!(gui.queue().is_empty());
        assert_eq!(
            recorder.events(),
            vec![
                "added r1 (1)".to_string(),
                r#"removed r1 AnsweredElsewhere { by: "phone" } (0)"#.to_string(),
            ]
        );
        assert_eq!(gui.submit(id, yes()), Err(SubmitError::Late));
    }

    #[tokio::test]
    async fn an_answer_here_that_crosses_the_phones_hears_where_it_was_answered() {
        // The phone is the older member: when both answers are in, its is taken first.
        let (service, gui, recorder, phone) = setup_with_phone(true);
        let cancel = CancellationToken::new();
        let asked = tokio::spawn(service.ask_settled(
            AskRequest {
                questions: vec![question("a", &["Yes", "No"])],
                agent: None,
            },
            &cancel,
        ));
        let id = wait_queued(&gui, 1).await[0].request;
        let on_phone = phone.take().expect("the phone races");
        let no = choose("a", "No");
        // Both before the broker's task runs again (this test's runtime has one thread).
        on_phone.decide(Decision::Claim(no.clone())).unwrap();
        assert_eq!(gui.submit(id, yes()), Ok(()));
        let settled = asked.await.unwrap();
        assert_eq!(settled.result.unwrap(), no);
        assert_eq!(settled.answerer.as_deref(), Some("phone"));
        assert_eq!(
            settled.crossed,
            [(DESKTOP_ANSWERER.to_owned(), yes())],
            "the person's answer goes to the journal as late"
        );
        assert_eq!(
            recorder.events(),
            vec![
                "added r1 (1)".to_string(),
                "removed r1 Answered (0)".to_string(),
                r#"removed r1 AnsweredElsewhere { by: "phone" } (0)"#.to_string(),
            ]
        );
    }

    #[tokio::test]
    async fn plan_comments_sent_with_the_answer_become_its_feedback() {
        let (service, gui, _) = setup();
        let mut plan = question("plan", &["Approve", "Keep planning"]);
        plan.detail = Some("# Plan\n\n## Steps\n\n1. Read\n2. Write <b>it</b>\n".into());
        plan.intent = Some(Intent {
            kind: "plan-review".into(),
            approve: "Approve".into(),
        });
        let (task, _cancel) = ask(&service, vec![plan]);
        let view = wait_queued(&gui, 1).await.remove(0);
        assert_eq!(
            view.questions[0].comment_limit,
            Some(plan_thread::MAX_COMMENT_BYTES)
        );
        let blocks = &view.questions[0].blocks;
        let key = |text: &str| blocks.iter().find(|b| b.text == text).unwrap().key.clone();
        // No agent: no thread and no revision, but comments work all the same.
        assert!(view.questions[0].revision.is_none());
        let general = |custom: Option<&str>| Answer {
            answers: vec![AnswerItem {
                id: "plan".into(),
                custom: custom.map(str::to_owned),
                ..Default::default()
            }],
        };
        let comment = |block: String, text: &str| CommentInput {
            block,
            quote: None,
            text: text.into(),
        };
        // A comment on no block of the plan: nothing is sent, the request still waits.
        assert!(matches!(
            gui.submit_review(
                view.request,
                general(None),
                vec![comment("s9.li9".into(), "x")]
            ),
            Err(SubmitError::Comments(CommentError::NoBlock {
                index: 0,
                ..
            }))
        ));
        assert_eq!(gui.queue().len(), 1);
        gui.submit_review(
            view.request,
            general(Some("General.")),
            vec![comment(key("Write it"), "<script>x()</script> is text")],
        )
        .unwrap();
        let sent = task.await.unwrap().unwrap();
        assert_eq!(
            sent.answers[0].custom.as_deref(),
            Some("> **Steps › 2**\n> Write it\n\n<script>x()</script> is text\n\n---\n\nGeneral.")
        );
        assert_eq!(
            gui.submit_review(view.request, general(None), Vec::new()),
            Err(SubmitError::Late)
        );
    }

    fn plan(detail: &str) -> Question {
        let mut plan = question("plan", &["Approve", "Keep planning"]);
        plan.detail = Some(detail.into());
        plan.intent = Some(Intent {
            kind: "plan-review".into(),
            approve: "Approve".into(),
        });
        plan
    }

    /// A plan asked by agent `id` of session `s-1`: the agents of one session make one thread.
    fn ask_in_session(
        service: &Service,
        id: &str,
        detail: &str,
    ) -> (
        tokio::task::JoinHandle<Result<Answer, AskError>>,
        CancellationToken,
    ) {
        let meta = serde_json::json!({ "session": "s-1" });
        let agent = service
            .register_agent(askdesk_core::AgentRegistration {
                id: id.into(),
                meta: meta.as_object().cloned(),
                ..Default::default()
            })
            .unwrap();
        let cancel = CancellationToken::new();
        let ask = service.ask(
            AskRequest {
                questions: vec![plan(detail)],
                agent: Some(agent),
            },
            &cancel,
        );
        (tokio::spawn(ask), cancel)
    }

    /// What the version before this waiting one came to, as its revision shows it.
    fn decision_before(view: &RequestView) -> Option<String> {
        view.questions[0].revision.as_ref().unwrap().previous[0]
            .decision
            .clone()
    }

    #[tokio::test]
    async fn a_version_a_rule_decided_says_so_in_the_next_revision() {
        let (service, gui, _) = setup();
        let (first, _c1) = ask_in_session(&service, "a1", "# Plan\n\n1. Read\n");
        let id = wait_queued(&gui, 1).await[0].request;
        overrule(&service, id, "rule:plans", typed("plan", "Split step 1."));
        first.await.unwrap().unwrap();
        let (second, cancel) = ask_in_session(&service, "a2", "# Plan\n\n1. Read twice\n");
        let queue = wait_queued(&gui, 1).await;
        assert_eq!(
            decision_before(&queue[0]),
            Some("decided by rule:plans".into())
        );
        cancel.cancel();
        assert!(second.await.unwrap().is_err());
    }

    #[tokio::test]
    async fn a_waiting_revision_shows_what_was_decided_on_the_version_before() {
        let (service, gui, _) = setup();
        // Two agents of one session: their plans are one thread, both versions waiting at once.
        let (first, _c1) = ask_in_session(&service, "a1", "# Plan\n\n1. Read\n2. Write\n");
        wait_queued(&gui, 1).await;
        let (second, _c2) = ask_in_session(&service, "a2", "# Plan\n\n1. Read\n2. Write twice\n");
        let queue = wait_queued(&gui, 2).await;
        let decision = decision_before;
        assert_eq!(decision(&queue[1]), None);
        let step = queue[0].questions[0]
            .blocks
            .iter()
            .find(|b| b.text == "Write")
            .unwrap()
            .key
            .clone();
        let comments = vec![CommentInput {
            block: step,
            quote: None,
            text: "Twice.".into(),
        }];
        // A refused answer records nothing: the comments count only once they are sent.
        let approve_and_keep_planning = Answer {
            answers: vec![AnswerItem {
                id: "plan".into(),
                selected: vec!["Approve".into(), "Keep planning".into()],
                ..Default::default()
            }],
        };
        assert!(matches!(
            gui.submit_review(
                queue[0].request,
                approve_and_keep_planning,
                comments.clone()
            ),
            Err(SubmitError::Invalid(_))
        ));
        let later = gui.queue();
        assert!(later[1].questions[0]
            .revision
            .as_ref()
            .unwrap()
            .comments
            .is_empty());
        let keep = Answer {
            answers: vec![typed("plan", "Keep the JSON export.")],
        };
        gui.submit_review(queue[0].request, keep, comments).unwrap();
        first.await.unwrap().unwrap();
        let queue = wait_queued(&gui, 1).await;
        assert_eq!(decision(&queue[0]), Some("feedback sent".into()));
        let revision = queue[0].questions[0].revision.as_ref().unwrap();
        assert_eq!(revision.previous[0].comments, 1);
        let past: Vec<&str> = revision
            .comments
            .iter()
            .map(|c| c.comment.text.as_str())
            .collect();
        assert_eq!(past, ["Twice."]);
        assert_eq!(revision.feedback.as_deref(), Some("Keep the JSON export."));
        // Resolving the comment of the last review is kept with the waiting revision.
        let resolved = plan_thread::PastState::Resolved;
        gui.set_past_comment(queue[0].request, 0, resolved).unwrap();
        assert_eq!(
            gui.set_past_comment(queue[0].request, 1, resolved),
            Err(CommentError::NoPastComment(1))
        );
        let again = gui.queue();
        assert_eq!(
            again[0].questions[0].revision.as_ref().unwrap().comments[0].state,
            resolved
        );
        gui.dismiss(queue[0].request).unwrap();
        assert!(second.await.unwrap().is_err());
    }

    #[tokio::test]
    async fn several_requests_queue_side_by_side() {
        let (service, gui, _) = setup();
        let (first, _c1) = ask(&service, vec![question("a", &["One"])]);
        let (second, _c2) = ask(&service, vec![question("a", &["Two"])]);
        let queue = wait_queued(&gui, 2).await;
        let pick = |label: &str| Answer {
            answers: vec![AnswerItem {
                id: "a".into(),
                selected: vec![label.into()],
                ..Default::default()
            }],
        };
        gui.submit(queue[1].request, pick("Two")).unwrap();
        gui.submit(queue[0].request, pick("One")).unwrap();
        assert_eq!(
            first.await.unwrap().unwrap().answers[0].selected,
            vec!["One".to_string()]
        );
        assert_eq!(
            second.await.unwrap().unwrap().answers[0].selected,
            vec!["Two".to_string()]
        );
    }

    /// Asks as an agent labelled "Claude Code" on a connection-like asker: cancelling `gone` is
    /// the asker going, cancelling the returned token alone is it withdrawing the question.
    fn ask_as_agent(
        service: &Service,
        questions: Vec<Question>,
        gone: &CancellationToken,
    ) -> (
        tokio::task::JoinHandle<askdesk_core::AskSettlement>,
        CancellationToken,
        askdesk_core::Handle,
    ) {
        let agent = service
            .register_agent(askdesk_core::AgentRegistration {
                id: "claude-code-7".into(),
                label: Some("Claude Code".into()),
                meta: None,
                owner: None,
            })
            .unwrap();
        let cancel = gone.child_token();
        let settled = service.ask_settled_from(
            AskRequest {
                questions,
                agent: Some(agent.clone()),
            },
            &cancel,
            Some(gone),
        );
        (tokio::spawn(settled), cancel, agent)
    }

    /// A question from "Claude Code" waiting with the person's typing in it: its ask, its own
    /// token, its agent, its connection's token and its id.
    struct Typed {
        task: tokio::task::JoinHandle<askdesk_core::AskSettlement>,
        cancel: CancellationToken,
        agent: askdesk_core::Handle,
        gone: CancellationToken,
        id: RequestId,
    }

    async fn typed_question(service: &Service, gui: &GuiAnswerer) -> Typed {
        let gone = CancellationToken::new();
        let (task, cancel, agent) =
            ask_as_agent(service, vec![question("a", &["Yes", "No"])], &gone);
        let id = wait_queued(gui, 1).await[0].request;
        gui.save_draft(id, raw(TYPED)).unwrap();
        Typed {
            task,
            cancel,
            agent,
            gone,
            id,
        }
    }

    const TYPED: &str = r#"{"questions":[{"id":"a","checked":[],"other":true,"text":"keep the old branch","skipped":false}]}"#;

    #[tokio::test]
    async fn an_asker_that_disconnects_leaves_the_typed_card_ended_until_it_is_closed() {
        let (service, gui, recorder) = setup();
        let Typed { task, gone, id, .. } = typed_question(&service, &gui).await;
        gone.cancel();
        let settled = task.await.unwrap();
        assert_eq!(
            settled.result.unwrap_err().code(),
            Some(&ErrorCode::AskAborted)
        );
        // The journal gets what the person typed.
        let draft = settled.draft.expect("the typed text goes to the journal");
        assert_eq!(
            draft.answers[0].custom.as_deref(),
            Some("keep the old branch")
        );
        // The card stays, ended, with the page's draft, and the tray counts nothing waiting.
        let queue = gui.queue();
        assert_eq!(queue.len(), 1);
        assert_eq!(
            queue[0].ended,
            Some(EndedView {
                why: Removal::Disconnected,
                text: "Claude Code disconnected (the process ended)".into(),
            })
        );
        assert_eq!(queue[0].draft.as_deref().map(RawValue::get), Some(TYPED));
        assert_eq!(
            recorder.events().last().unwrap(),
            "removed r1 Disconnected (0)"
        );
        // It cannot be answered any more: an answer now is late.
        let answer = choose("a", "Yes");
        assert_eq!(gui.submit(id, answer), Err(SubmitError::Late));
        assert_eq!(gui.queue().len(), 1, "a late answer does not close it");
        // Only the person closes it.
        assert!(gui.close_ended(id));
        assert!(gui.queue().is_empty());
        assert!(!gui.close_ended(id));
    }

    #[tokio::test]
    async fn the_pictures_of_an_unsent_draft_go_to_the_journal_and_stay_with_the_ended_card() {
        let (service, gui, _) = setup();
        let Typed { task, gone, id, .. } = typed_question(&service, &gui).await;
        let kept = gui.keep_picture(id, picture("red"), 3).unwrap().unwrap();
        let removed = gui.keep_picture(id, picture("blue"), 3).unwrap().unwrap();
        gui.save_draft(id, naming(&[kept, removed])).unwrap();
        gui.save_draft(id, naming(&[kept])).unwrap();
        gone.cancel();
        let draft = task
            .await
            .unwrap()
            .draft
            .expect("a picture alone is a draft");
        assert_eq!(draft.answers.len(), 1);
        assert_eq!(draft.answers[0].images, [picture("red")]);
        // The ended card's page, rebuilt, still gets its picture; closed, it goes.
        assert!(gui.queue()[0].ended.is_some());
        assert_eq!(gui.kept_picture(id, kept), Some(picture("red")));
        assert_eq!(gui.kept_picture(id, removed), None);
        assert!(gui.close_ended(id));
        assert_eq!(gui.kept_picture(id, kept), None);
    }

    #[tokio::test]
    async fn an_agent_unregistered_while_its_question_waits_counts_as_disconnected() {
        let (service, gui, _) = setup();
        let Typed { task, agent, .. } = typed_question(&service, &gui).await;
        service.unregister_agent(&agent).unwrap();
        assert!(task.await.unwrap().draft.is_some());
        assert_eq!(
            gui.queue()[0].ended.as_ref().unwrap().why,
            Removal::Disconnected
        );
    }

    #[tokio::test]
    async fn a_question_the_asker_withdraws_says_so_and_keeps_the_typing() {
        let (service, gui, recorder) = setup();
        let Typed { task, cancel, .. } = typed_question(&service, &gui).await;
        cancel.cancel();
        assert!(task.await.unwrap().draft.is_some());
        let ended = gui.queue()[0].ended.clone().unwrap();
        assert_eq!(ended.why, Removal::Withdrawn);
        assert_eq!(ended.text, "Claude Code withdrew the question");
        assert_eq!(
            recorder.events().last().unwrap(),
            "removed r1 Withdrawn (0)"
        );
    }

    #[tokio::test]
    async fn a_card_with_nothing_typed_leaves_at_once_and_the_journal_gets_no_draft() {
        let (service, gui, recorder) = setup();
        let gone = CancellationToken::new();
        let (task, _cancel, _agent) =
            ask_as_agent(&service, vec![question("a", &["Yes", "No"])], &gone);
        let id = wait_queued(&gui, 1).await[0].request;
        // A draft with nothing chosen or typed is no draft.
        gui.save_draft(
            id,
            raw(r#"{"questions":[{"id":"a","checked":[],"other":false,"text":"","skipped":false}]}"#),
        )
        .unwrap();
        gone.cancel();
        assert_eq!(task.await.unwrap().draft, None);
        assert!(gui.queue().is_empty());
        assert_eq!(
            recorder.events().last().unwrap(),
            "removed r1 Disconnected (0)"
        );
    }

    #[tokio::test]
    async fn a_stopping_broker_journals_the_typing_but_keeps_no_card() {
        let (service, gui, _) = setup();
        let (task, _cancel) = {
            let cancel = CancellationToken::new();
            let settled = service.ask_settled(
                AskRequest {
                    questions: vec![question("a", &["Yes", "No"])],
                    agent: None,
                },
                &cancel,
            );
            (tokio::spawn(settled), cancel)
        };
        let id = wait_queued(&gui, 1).await[0].request;
        gui.save_draft(id, raw(TYPED)).unwrap();
        service.shutdown();
        let settled = task.await.unwrap();
        assert_eq!(
            settled.result.unwrap_err().code(),
            Some(&ErrorCode::ShuttingDown)
        );
        assert!(settled.draft.is_some());
        assert!(gui.queue().is_empty());
    }

    #[tokio::test]
    async fn ended_cards_are_bounded_and_keep_their_place_among_the_waiting() {
        let (service, gui, _) = setup();
        let mut tasks = Vec::new();
        for n in 0..=MAX_ENDED {
            let cancel = CancellationToken::new();
            let settled = service.ask_settled(
                AskRequest {
                    questions: vec![question("a", &["Yes", "No"])],
                    agent: None,
                },
                &cancel,
            );
            tasks.push((tokio::spawn(settled), cancel));
            wait_queued(&gui, n + 1).await;
        }
        let (last, _c) = ask(&service, vec![question("a", &["Yes"])]);
        let queue = wait_queued(&gui, MAX_ENDED + 2).await;
        for view in &queue[..=MAX_ENDED] {
            gui.save_draft(view.request, raw(TYPED)).unwrap();
        }
        for (task, cancel) in tasks {
            cancel.cancel();
            task.await.unwrap();
        }
        let queue = gui.queue();
        // The oldest ended card gave way; the waiting request keeps its place after the others.
        assert_eq!(queue.len(), MAX_ENDED + 1);
        assert_eq!(queue[0].request, RequestId(2));
        assert!(queue[..MAX_ENDED].iter().all(|v| v.ended.is_some()));
        assert!(queue[MAX_ENDED].ended.is_none());
        gui.dismiss(queue[MAX_ENDED].request).unwrap();
        assert!(last.await.unwrap().is_err());
    }
}
