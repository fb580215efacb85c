//! Plan threads: the successive plan reviews of one agent, the comments and decision at each
//! version, what changed since the last one, the feedback text comments become, and History's
//! grouping of a thread into one entry.
//!
//! A thread is keyed by the asking agent's `meta.session` when it is a non-empty string, else by
//! its agent id ([`thread_key`]): a client that registers a new agent per call but names its
//! session (or derives the agent id from it, as the hook integration does) still gets one thread.
//! A request without an agent starts no thread. The first plan-review question of a request is the
//! thread's next version; a later plan-review request with the same key is a revision of it.
//!
//! Threads live in memory: [`PlanThreads`] keeps the last [`MAX_THREADS`] threads (by their latest
//! version), the last [`MAX_VERSIONS`] versions of each, and about [`MAX_KEPT_BYTES`] in all. History rebuilds threads from the
//! journal with the same key ([`crate::history::HistoryPageBuilder`]), so it survives a restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use askdesk_core::{meta, AgentInfo, Answer, Question, Request, RequestId};
use askdesk_i18n::t;
use askdesk_journal::millis;
use serde::{Deserialize, Serialize};

use crate::markdown::{self, Block, Rendered};
use crate::plan_diff::{self, Status};

/// How many threads are remembered.
pub const MAX_THREADS: usize = 64;
/// How many versions of a thread are remembered.
pub const MAX_VERSIONS: usize = 20;
/// The longest comment or quote the page may send, in bytes.
pub const MAX_COMMENT_BYTES: usize = 8 * 1024;
/// The most comments on one version.
pub const MAX_COMMENTS: usize = 100;
/// About how many bytes of plans, renderings and comments the threads keep in all; the oldest
/// versions of the least recently active threads are forgotten past it.
pub const MAX_KEPT_BYTES: usize = 8 * 1024 * 1024;

/// The key of the thread a request of this agent belongs to: `meta.session` when it is a
/// non-empty string, else the agent id.
pub fn thread_key(agent: &AgentInfo) -> String {
    match agent
        .meta
        .as_ref()
        .and_then(|meta| meta.get(meta::SESSION))
        .and_then(|session| session.as_str())
        .filter(|session| !session.is_empty())
    {
        Some(session) => format!("session:{session}"),
        None => format!("agent:{}", agent.id),
    }
}

/// The first plan-review question of a batch, if any.
pub fn plan_question(questions: &[Question]) -> Option<&Question> {
    questions.iter().find(|q| {
        q.intent
            .as_ref()
            .is_some_and(askdesk_core::Intent::is_plan_review)
            && q.detail.is_some()
    })
}

/// A comment as the page sends it: the block it is on, the text it narrows to, and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommentInput {
    /// The block's key (`data-block`).
    pub block: String,
    /// The selected text inside the block, when the comment is about part of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    pub text: String,
}

/// Why comments were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentError {
    /// The request is not waiting any more (the agent withdrew it); nothing to send.
    NotWaiting,
    /// The request has no plan under review; the page should submit without comments.
    NoPlan,
    /// A comment names a block the plan does not have; the page is out of step with its plan.
    /// `index` counts from 0; the message counts from 1, as the human does.
    NoBlock { index: usize, key: String },
    /// A comment is empty or too long; the human should fix it. The message names the block it is
    /// on (`path`), and says the limit.
    Bad {
        index: usize,
        path: String,
        problem: String,
    },
    /// More comments than [`MAX_COMMENTS`].
    TooMany,
    /// The page named a comment of the last review that the version before this one does not have.
    NoPastComment(usize),
    /// Only a comment whose block is still in the plan can be carried forward to it.
    CannotCarry(usize),
}

/// In the person's language: the page and the phone show it.
impl std::fmt::Display for CommentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&match self {
            CommentError::NotWaiting => t!("desktop-request-gone"),
            CommentError::NoPlan => t!("desktop-comment-no-plan"),
            CommentError::NoBlock { index, key } => {
                t!(
                    "desktop-comment-no-block",
                    index = index + 1,
                    key = format!("{key:?}")
                )
            }
            CommentError::Bad {
                index,
                path,
                problem,
            } => t!(
                "desktop-comment-bad",
                index = index + 1,
                path = path.as_str(),
                problem = problem.as_str()
            ),
            CommentError::TooMany => t!("desktop-comment-too-many", limit = MAX_COMMENTS),
            CommentError::NoPastComment(index) => t!("desktop-comment-no-past", index = index + 1),
            CommentError::CannotCarry(index) => {
                t!("desktop-comment-cannot-carry", index = index + 1)
            }
        })
    }
}

impl std::error::Error for CommentError {}

/// A comment with what it quotes, as it goes to the agent and as a later revision shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comment {
    pub block: String,
    pub path: String,
    /// The quoted plan text: the selection, or the whole block.
    pub quote: String,
    /// Whether the quote is part of the block rather than all of it.
    pub narrowed: bool,
    pub text: String,
}

/// A round of comments as "You asked last time" says it: each comment after the place it is about
/// (`Steps › 1: what?`), one after another; `None` for no comments.
fn asked_in(comments: &[Comment]) -> Option<String> {
    (!comments.is_empty()).then(|| {
        comments
            .iter()
            .map(|c| format!("{}: {}", c.path, c.text.trim()))
            .collect::<Vec<_>>()
            .join(" · ")
    })
}

/// The feedback one round of comments becomes: for each comment its heading path and the quoted
/// plan text as a block quote, then the comment; then the general feedback. Markdown the agent
/// can read and act on; the wire only ever sees it as the answer's `custom` text.
pub fn feedback(comments: &[Comment], general: &str) -> String {
    let mut out = String::new();
    for comment in comments {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("> **{}**\n", comment.path));
        for line in comment.quote.lines() {
            if line.trim().is_empty() {
                out.push_str(">\n");
            } else {
                out.push_str(&format!("> {line}\n"));
            }
        }
        out.push('\n');
        out.push_str(comment.text.trim());
        out.push('\n');
    }
    let general = general.trim();
    if !general.is_empty() {
        if !out.is_empty() {
            out.push_str("\n---\n\n");
        }
        out.push_str(general);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// Checks the page's comments against the plan's blocks, attaches their paths and quotes, and puts
/// them in the plan's order (comments on one block keep the order they were written in).
pub fn resolve(blocks: &[Block], inputs: Vec<CommentInput>) -> Result<Vec<Comment>, CommentError> {
    if inputs.len() > MAX_COMMENTS {
        return Err(CommentError::TooMany);
    }
    let mut comments = inputs
        .into_iter()
        .enumerate()
        .map(|(index, input)| {
            let block = blocks
                .iter()
                .find(|b| b.key == input.block)
                .ok_or_else(|| CommentError::NoBlock {
                    index,
                    key: input.block.clone(),
                })?;
            let text = input.text.trim();
            let bad = |problem: String| CommentError::Bad {
                index,
                path: block.path.clone(),
                problem,
            };
            if text.is_empty() {
                return Err(bad(t!("desktop-comment-empty")));
            }
            if text.len() > MAX_COMMENT_BYTES {
                return Err(bad(t!(
                    "desktop-comment-too-long",
                    bytes = text.len(),
                    limit = MAX_COMMENT_BYTES
                )));
            }
            if input
                .quote
                .as_ref()
                .is_some_and(|q| q.len() > MAX_COMMENT_BYTES)
            {
                return Err(bad(t!(
                    "desktop-comment-quote-too-long",
                    limit = MAX_COMMENT_BYTES
                )));
            }
            let quote = input
                .quote
                .map(|q| q.trim().to_owned())
                .filter(|q| !q.is_empty() && *q != block.text);
            Ok(Comment {
                block: block.key.clone(),
                path: block.path.clone(),
                narrowed: quote.is_some(),
                quote: quote.unwrap_or_else(|| block.text.clone()),
                text: text.to_owned(),
            })
        })
        .collect::<Result<Vec<Comment>, CommentError>>()?;
    // In the order of the plan, so the agent reads its feedback from top to bottom.
    let position = |key: &str| blocks.iter().position(|b| b.key == key);
    comments.sort_by_key(|c| position(&c.block));
    Ok(comments)
}

/// The comments and general feedback of one round of review: what [`review`] made the feedback
/// text from.
pub type Review = (Vec<Comment>, Option<String>);

/// A plan review's answer with its comments folded in, the one rule for every surface that
/// reviews a plan (the desk's dialog, the phone): `answer`'s item for the batch's plan question
/// ([`plan_question`]) keeps its `custom` as the general feedback, and with comments, resolved
/// against the plan's blocks (`blocks` gives them for that question's id), that `custom` becomes
/// the [`feedback`] text. `None` when the answer has no item for a plan question (comments are then
/// refused: [`CommentError::NoPlan`]).
pub fn review<'b>(
    questions: &[Question],
    blocks: impl FnOnce(&str) -> &'b [Block],
    answer: &mut Answer,
    comments: Vec<CommentInput>,
) -> Result<Option<Review>, CommentError> {
    let item =
        plan_question(questions).and_then(|q| answer.answers.iter_mut().find(|a| a.id == q.id));
    let Some(item) = item else {
        return match comments.is_empty() {
            true => Ok(None),
            false => Err(CommentError::NoPlan),
        };
    };
    let general = item
        .custom
        .as_deref()
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_owned);
    if comments.is_empty() {
        return Ok(Some((Vec::new(), general)));
    }
    let comments = resolve(blocks(&item.id), comments)?;
    item.custom = Some(feedback(&comments, general.as_deref().unwrap_or("")));
    Ok(Some((comments, general)))
}

/// What the human decided on one version, in words for the pane and History.
pub fn decision_of(question: &Question, answer: &Answer) -> String {
    let Some(item) = answer.answers.iter().find(|a| a.id == question.id) else {
        return t!("desktop-plan-no-answer");
    };
    let approve = question.intent.as_ref().map(|i| i.approve.as_str());
    let approved = approve.is_some_and(|label| item.selected.iter().any(|s| s == label));
    match (approved, item.custom.is_some(), item.selected.first()) {
        (true, true, _) => t!("desktop-plan-approved-notes"),
        (true, false, _) => t!("desktop-plan-approved"),
        (false, true, _) => t!("desktop-plan-feedback-sent"),
        (false, false, Some(label)) => t!("desktop-plan-chose", label = label.as_str()),
        (false, false, None) => t!("desktop-plan-skipped"),
    }
}

/// The threads of plan reviews the desktop has seen. Cheap to share; one lock, never held while
/// rendering.
#[derive(Default)]
pub struct PlanThreads {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    threads: HashMap<String, Thread>,
    /// Which thread and question each version's request is, so decisions find their version.
    requests: HashMap<RequestId, String>,
    /// Incremented on every arrival, so the least recently active thread can be forgotten.
    clock: u64,
}

struct Thread {
    versions: Vec<Version>,
    last_active: u64,
}

#[derive(Clone)]
struct Version {
    request: RequestId,
    question: Question,
    asked_at: u64,
    /// Rendered once, by whoever needs it first (outside the lock).
    rendered: Option<Arc<Rendered>>,
    comments: Vec<Comment>,
    /// The general feedback sent on this version (besides its comments), if any.
    general: Option<String>,
    decision: Option<String>,
    /// What the human did with the previous version's comments on this one, by their index
    /// (the ones not listed are open).
    past: Vec<(usize, PastState)>,
}

/// A revision as the page receives it: which version this is, what changed since the one before,
/// the comments of the one before, and the older versions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionView {
    /// This version's number in its thread (2 or more).
    pub version: usize,
    pub changes: ChangesView,
    /// The previous version's comments, placed on this version.
    pub comments: Vec<PastComment>,
    /// What was asked on the previous version: its general feedback, else (a round of comments
    /// only) its comments, each after the place it is about (`Steps › 1: what?`).
    pub feedback: Option<String>,
    /// The earlier versions, oldest first.
    pub previous: Vec<VersionView>,
}

/// What changed since the previous version.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesView {
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
    pub moved: usize,
    /// The "+N −M" badge (a changed block counts on both sides, as in a diffstat).
    pub plus: usize,
    pub minus: usize,
    /// The blocks of this version that are not the same, by key.
    pub marks: Vec<Mark>,
    /// The previous version's blocks that are gone, with the key of the block they stood before.
    pub removed_blocks: Vec<RemovedBlock>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    pub key: String,
    pub status: Status,
    /// A changed block's text word by word, old to new (plain text runs, shown as text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<plan_diff::Segment>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovedBlock {
    /// The block of this version it stood before; `None` when it was at the end.
    pub before: Option<String>,
    pub kind: markdown::BlockKind,
    pub path: String,
    pub text: String,
}

/// Where a previous comment landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Its block is still there, unchanged (perhaps moved).
    Placed,
    /// Its block is still there but changed since: the comment was about text that is no longer
    /// there (GitHub's word). A change does not mean the comment was acted on; the human says.
    Outdated,
    /// Its block is no longer in the plan.
    Gone,
}

/// What the human did with a comment of the last review on the new version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PastState {
    /// Shown beside its block (or under "No longer in the plan").
    #[default]
    Open,
    /// Done with: hidden from the thread.
    Resolved,
    /// Re-attached to its block of the new version as one of this round's comments, to be sent
    /// again with the next feedback (the page holds it among its comments).
    Carried,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PastComment {
    #[serde(flatten)]
    pub comment: Comment,
    /// Its place among the last review's comments, as the page names it to resolve or carry it.
    pub index: usize,
    pub placement: Placement,
    pub state: PastState,
    /// The block of this version it sits beside (none when gone).
    pub key: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionView {
    pub version: usize,
    pub asked_at: u64,
    pub decision: Option<String>,
    pub comments: usize,
    /// The version rendered and sanitized, like `detailHtml`.
    pub html: String,
}

impl PlanThreads {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        // Every critical section completes its edit or makes none, so a poisoned lock is sound.
        askdesk_core::sync::lock(&self.inner)
    }

    /// A request arrived: when it is a plan review from an agent, it becomes the newest version of
    /// that agent's thread.
    pub fn arrived(&self, request: &Request) {
        let (Some(agent), Some(question)) = (&request.agent, plan_question(&request.questions))
        else {
            return;
        };
        let key = thread_key(agent);
        let mut inner = self.inner();
        inner.clock += 1;
        let now = inner.clock;
        let thread = inner.threads.entry(key.clone()).or_insert(Thread {
            versions: Vec::new(),
            last_active: now,
        });
        thread.last_active = now;
        thread.versions.push(Version {
            request: request.id,
            question: question.clone(),
            asked_at: millis(request.asked_at),
            rendered: None,
            comments: Vec::new(),
            general: None,
            decision: None,
            past: Vec::new(),
        });
        // Only the newest two versions keep their rendering (the diff needs the one before);
        // older ones are rendered again when a revision view lists them.
        let versions = thread.versions.len();
        for version in thread.versions.iter_mut().take(versions.saturating_sub(2)) {
            version.rendered = None;
        }
        if thread.versions.len() > MAX_VERSIONS {
            let gone = thread.versions.remove(0).request;
            inner.requests.remove(&gone);
        }
        inner.requests.insert(request.id, key);
        if inner.threads.len() > MAX_THREADS {
            let oldest = inner
                .threads
                .iter()
                .min_by_key(|(_, t)| t.last_active)
                .map(|(k, _)| k.clone());
            if let Some(thread) = oldest.and_then(|k| inner.threads.remove(&k)) {
                for version in &thread.versions {
                    inner.requests.remove(&version.request);
                }
            }
        }
        inner.fit(request.id);
    }

    /// Records this version's rendering, so the next revision need not render it again.
    pub fn rendered(&self, request: RequestId, rendered: &Rendered) {
        let mut inner = self.inner();
        if let Some(version) = version_mut(&mut inner, request) {
            version
                .rendered
                .get_or_insert_with(|| Arc::new(rendered.clone()));
        }
    }

    /// The revision view of a request whose plan (`rendered`) follows an earlier version of its
    /// thread; `None` for a first version or a request that is no plan review.
    pub fn revision(&self, request: RequestId, rendered: &Rendered) -> Option<RevisionView> {
        self.rendered(request, rendered);
        // Take what is needed out of the lock; render missing versions outside it.
        let (earlier, states): (Vec<Version>, Vec<(usize, PastState)>) = {
            let inner = self.inner();
            let key = inner.requests.get(&request)?;
            let thread = inner.threads.get(key)?;
            let at = thread.versions.iter().position(|v| v.request == request)?;
            (
                thread.versions[..at].to_vec(),
                thread.versions[at].past.clone(),
            )
        };
        let feedback = earlier
            .last()
            .and_then(|v| v.general.clone().or_else(|| asked_in(&v.comments)));
        let previous: Vec<(VersionView, Arc<Rendered>, Vec<Comment>)> = earlier
            .into_iter()
            .enumerate()
            .map(|(i, version)| {
                let rendered = version.rendered.unwrap_or_else(|| {
                    Arc::new(markdown::render(
                        version.question.detail.as_deref().unwrap_or(""),
                    ))
                });
                let view = VersionView {
                    version: i + 1,
                    asked_at: version.asked_at,
                    decision: version.decision,
                    comments: version.comments.len(),
                    html: rendered.html.clone(),
                };
                (view, rendered, version.comments)
            })
            .collect();
        let (last_view, last, comments) = previous.last()?;
        let version = last_view.version + 1;
        let changes = compare(&last.blocks, &rendered.blocks);
        let d = plan_diff::diff(&last.blocks, &rendered.blocks);
        let mut comments = place_comments(comments, &last.blocks, &rendered.blocks, &d);
        for (index, state) in states {
            if let Some(comment) = comments.get_mut(index) {
                comment.state = state;
            }
        }
        Some(RevisionView {
            version,
            changes,
            comments,
            feedback,
            previous: previous.into_iter().map(|(view, _, _)| view).collect(),
        })
    }

    /// The requests of the versions that follow this request's in its thread, oldest first.
    pub fn later_versions(&self, request: RequestId) -> Vec<RequestId> {
        let inner = self.inner();
        let Some(thread) = inner
            .requests
            .get(&request)
            .and_then(|key| inner.threads.get(key))
        else {
            return Vec::new();
        };
        let after = thread
            .versions
            .iter()
            .skip_while(|v| v.request != request)
            .skip(1);
        after.map(|v| v.request).collect()
    }

    /// Records what the human did with comment `index` of the last review on this version: resolved
    /// it, carried it forward, or opened it again. The index is checked against the version before.
    pub fn set_past(
        &self,
        request: RequestId,
        index: usize,
        state: PastState,
    ) -> Result<(), CommentError> {
        let mut inner = self.inner();
        let key = inner
            .requests
            .get(&request)
            .cloned()
            .ok_or(CommentError::NoPastComment(index))?;
        let thread = inner
            .threads
            .get_mut(&key)
            .ok_or(CommentError::NoPastComment(index))?;
        let at = thread
            .versions
            .iter()
            .position(|v| v.request == request)
            .filter(|&at| at > 0)
            .ok_or(CommentError::NoPastComment(index))?;
        if index >= thread.versions[at - 1].comments.len() {
            return Err(CommentError::NoPastComment(index));
        }
        let past = &mut thread.versions[at].past;
        past.retain(|(i, _)| *i != index);
        if state != PastState::Open {
            past.push((index, state));
        }
        Ok(())
    }

    /// Records the comments and general feedback sent on a version, so its revision can show
    /// them again.
    pub fn commented(&self, request: RequestId, comments: Vec<Comment>, general: Option<String>) {
        let mut inner = self.inner();
        if let Some(version) = version_mut(&mut inner, request) {
            version.comments = comments;
            version.general = general;
            inner.fit(request);
        }
    }

    /// Records what the human decided on a version. An answer whose comments were not recorded
    /// (a rule's, or feedback with no comments) keeps its `custom` as the general feedback.
    pub fn decided(&self, request: RequestId, answer: &Answer) {
        let mut inner = self.inner();
        if let Some(version) = version_mut(&mut inner, request) {
            version.decision = Some(decision_of(&version.question, answer));
            if version.comments.is_empty() && version.general.is_none() {
                version.general = answer
                    .answers
                    .iter()
                    .find(|a| a.id == version.question.id)
                    .and_then(|a| a.custom.clone())
                    .filter(|c| !c.trim().is_empty());
            }
        }
    }

    /// Records how a version ended without an answer (`dismissed`, `withdrawn`).
    pub fn ended(&self, request: RequestId, how: &str) {
        let mut inner = self.inner();
        if let Some(version) = version_mut(&mut inner, request) {
            version.decision.get_or_insert_with(|| how.to_owned());
        }
    }
}

impl Inner {
    /// Forgets the oldest versions of the least recently active threads until what is kept fits
    /// in [`MAX_KEPT_BYTES`]; the version of `keep` (the one just touched) always stays.
    fn fit(&mut self, keep: RequestId) {
        let mut total: usize = self
            .threads
            .values()
            .flat_map(|t| &t.versions)
            .map(Version::bytes)
            .sum();
        while total > MAX_KEPT_BYTES {
            let victim = self
                .threads
                .iter()
                .filter(|(_, t)| t.versions.first().is_some_and(|v| v.request != keep))
                .min_by_key(|(_, t)| t.last_active)
                .map(|(k, _)| k.clone());
            let Some(key) = victim else { break };
            let Some(thread) = self.threads.get_mut(&key) else {
                break;
            };
            let gone = thread.versions.remove(0);
            total -= gone.bytes();
            self.requests.remove(&gone.request);
            if thread.versions.is_empty() {
                self.threads.remove(&key);
            }
        }
    }
}

impl Version {
    /// About how much memory the version holds: its plan, its rendering and its comments.
    fn bytes(&self) -> usize {
        let plan = self.question.detail.as_ref().map_or(0, String::len);
        let rendered = self.rendered.as_ref().map_or(0, |r| {
            r.html.len()
                + r.blocks
                    .iter()
                    .map(|b| b.text.len() + b.path.len())
                    .sum::<usize>()
        });
        let comments: usize = self
            .comments
            .iter()
            .map(|c| c.text.len() + c.quote.len() + c.path.len())
            .sum();
        plan + rendered + comments + self.general.as_ref().map_or(0, String::len)
    }
}

fn version_mut(inner: &mut Inner, request: RequestId) -> Option<&mut Version> {
    let key = inner.requests.get(&request)?.clone();
    inner
        .threads
        .get_mut(&key)?
        .versions
        .iter_mut()
        .find(|v| v.request == request)
}

/// The changes between two versions' blocks, as the page marks them.
pub fn compare(old: &[Block], new: &[Block]) -> ChangesView {
    let d = plan_diff::diff(old, new);
    let (plus, minus) = d.badge();
    ChangesView {
        added: d.count(Status::Added),
        removed: d.removed_count(),
        changed: d.count(Status::Changed),
        moved: d.count(Status::Moved),
        plus,
        minus,
        marks: d
            .new
            .iter()
            .enumerate()
            .filter(|(_, (status, _))| *status != Status::Same)
            .map(|(j, (status, pair))| Mark {
                key: new[j].key.clone(),
                status: *status,
                words: pair
                    .filter(|_| *status == Status::Changed)
                    .map(|i| plan_diff::word_diff(&old[i].text, &new[j].text)),
            })
            .collect(),
        removed_blocks: d
            .removed()
            .into_iter()
            .map(|(i, before)| RemovedBlock {
                before: before.map(|j| new[j].key.clone()),
                kind: old[i].kind,
                path: old[i].path.clone(),
                text: old[i].text.clone(),
            })
            .collect(),
    }
}

/// Places the previous version's comments on the new one: beside the same block when it is
/// unchanged, marked outdated when it changed, gone when it was removed.
pub fn place_comments(
    comments: &[Comment],
    old: &[Block],
    new: &[Block],
    d: &plan_diff::Diff,
) -> Vec<PastComment> {
    comments
        .iter()
        .enumerate()
        .map(|(index, comment)| {
            let paired = old
                .iter()
                .position(|b| b.key == comment.block)
                .and_then(|i| d.old[i]);
            let (placement, key) = match paired {
                None => (Placement::Gone, None),
                Some(j) => match d.new[j].0 {
                    Status::Changed => (Placement::Outdated, Some(new[j].key.clone())),
                    _ => (Placement::Placed, Some(new[j].key.clone())),
                },
            };
            PastComment {
                comment: comment.clone(),
                index,
                placement,
                state: PastState::Open,
                key,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use askdesk_core::{AnswerItem, Intent, QuestionOption};

    pub(crate) fn plan_question(detail: &str) -> Question {
        Question {
            id: "plan".into(),
            question: "Approve?".into(),
            detail: Some(detail.into()),
            options: vec![
                QuestionOption {
                    label: "Approve".into(),
                    ..Default::default()
                },
                QuestionOption {
                    label: "Keep planning".into(),
                    ..Default::default()
                },
            ],
            intent: Some(Intent {
                kind: "plan-review".into(),
                approve: "Approve".into(),
            }),
            ..Default::default()
        }
    }

    fn agent(id: &str, session: Option<&str>) -> AgentInfo {
        let meta = session.map(|s| serde_json::json!({ "session": s }));
        serde_json::from_value(serde_json::json!({ "id": id, "meta": meta })).unwrap()
    }

    #[test]
    fn threads_are_keyed_by_session_else_agent_id() {
        assert_eq!(thread_key(&agent("a1", None)), "agent:a1");
        assert_eq!(thread_key(&agent("a1", Some("s9"))), "session:s9");
        assert_eq!(
            thread_key(&agent("a2", Some("s9"))),
            thread_key(&agent("a1", Some("s9")))
        );
        assert_eq!(thread_key(&agent("a1", Some(""))), "agent:a1");
    }

    #[test]
    fn feedback_quotes_each_block_with_its_path_then_the_general_text() {
        let blocks = markdown::render(
            "# Plan\n\n## Steps\n\n1. Read it\n2. Write the schema\n   carefully\n\n```sql\nSELECT 1;\n```\n",
        )
        .blocks;
        let key = |text: &str| blocks.iter().find(|b| b.text == text).unwrap().key.clone();
        let comments = resolve(
            &blocks,
            vec![
                CommentInput {
                    block: key("Write the schema carefully"),
                    quote: None,
                    text: " Which schema? ".into(),
                },
                CommentInput {
                    block: key("SELECT 1;"),
                    quote: Some("1".into()),
                    text: "Use 2.".into(),
                },
            ],
        )
        .unwrap();
        assert_eq!(
            feedback(&comments, "Otherwise fine."),
            "> **Steps › 2**\n> Write the schema carefully\n\nWhich schema?\n\n\
             > **Steps › line 1**\n> 1\n\nUse 2.\n\n---\n\nOtherwise fine."
        );
        assert!(comments[1].narrowed && !comments[0].narrowed);
        assert_eq!(feedback(&[], "  just this  "), "just this");
        assert_eq!(
            feedback(&comments[..1], ""),
            "> **Steps › 2**\n> Write the schema carefully\n\nWhich schema?"
        );
    }

    #[test]
    fn bad_comments_are_refused_with_their_index() {
        let blocks = markdown::render("text\n").blocks;
        let ok = CommentInput {
            block: blocks[0].key.clone(),
            quote: None,
            text: "fine".into(),
        };
        let unknown = CommentInput {
            block: "s9.p9".into(),
            ..ok.clone()
        };
        let empty = CommentInput {
            text: "  ".into(),
            ..ok.clone()
        };
        assert_eq!(
            resolve(&blocks, vec![ok.clone(), unknown]),
            Err(CommentError::NoBlock {
                index: 1,
                key: "s9.p9".into()
            })
        );
        assert!(matches!(
            resolve(&blocks, vec![empty]),
            Err(CommentError::Bad { index: 0, .. })
        ));
        // Said as the human counts, on the block it is on, with the limit.
        let long = CommentInput {
            text: "word ".repeat(4000),
            ..ok.clone()
        };
        let error = resolve(&blocks, vec![ok.clone(), long]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "your comment 2 on “{}” is too long: 19999 bytes, and a comment may have at most 8192 bytes (about as many characters of plain text); shorten it or split it",
                blocks[0].path
            )
        );
        assert_eq!(
            resolve(&blocks, vec![ok; MAX_COMMENTS + 1]),
            Err(CommentError::TooMany)
        );
    }

    fn request(id: u64, agent: AgentInfo, detail: &str) -> Request {
        Request {
            id: RequestId(id),
            questions: vec![plan_question(detail)],
            agent: Some(agent),
            asked_at: std::time::SystemTime::now(),
        }
    }

    pub(crate) const V1: &str = "# Plan\n\n## Steps\n\n1. Read\n2. Write the schema\n3. Ship\n";
    pub(crate) const V2: &str =
        "# Plan\n\n## Steps\n\n1. Read\n2. Write the schema in SQL\n\n## Tests\n\n- Test it\n";

    #[test]
    fn a_second_plan_from_the_same_agent_is_a_revision_with_its_comments_placed() {
        let threads = PlanThreads::default();
        let first = request(1, agent("coder", None), V1);
        threads.arrived(&first);
        let r1 = markdown::render(V1);
        assert!(
            threads.revision(first.id, &r1).is_none(),
            "a first version is no revision"
        );
        let key = |r: &Rendered, text: &str| {
            r.blocks
                .iter()
                .find(|b| b.text == text)
                .unwrap()
                .key
                .clone()
        };
        let comments = resolve(
            &r1.blocks,
            vec![
                CommentInput {
                    block: key(&r1, "Read"),
                    quote: None,
                    text: "what?".into(),
                },
                CommentInput {
                    block: key(&r1, "Write the schema"),
                    quote: None,
                    text: "which?".into(),
                },
                CommentInput {
                    block: key(&r1, "Ship"),
                    quote: None,
                    text: "when?".into(),
                },
            ],
        )
        .unwrap();
        let sent = feedback(&comments, "");
        threads.commented(first.id, comments, None);
        assert!(
            sent.starts_with("> **Steps › 1**\n> Read\n\nwhat?"),
            "{sent}"
        );
        threads.decided(
            first.id,
            &Answer {
                answers: vec![AnswerItem {
                    id: "plan".into(),
                    custom: Some(sent),
                    ..Default::default()
                }],
            },
        );
        // Another agent's plan is a thread of its own.
        let other = request(2, agent("reviewer", None), V2);
        threads.arrived(&other);
        assert!(threads.revision(other.id, &markdown::render(V2)).is_none());

        let second = request(3, agent("coder", None), V2);
        threads.arrived(&second);
        let r2 = markdown::render(V2);
        let revision = threads.revision(second.id, &r2).unwrap();
        assert_eq!(revision.version, 2);
        assert_eq!(revision.previous.len(), 1);
        assert_eq!(
            revision.previous[0].decision.as_deref(),
            Some("feedback sent")
        );
        assert_eq!(revision.previous[0].comments, 3);
        // A round of comments only: "You asked last time" says the comments, not the quoted plan.
        assert_eq!(
            revision.feedback.as_deref(),
            Some("Steps › 1: what? · Steps › 2: which? · Steps › 3: when?")
        );
        let c = &revision.changes;
        assert_eq!((c.added, c.removed, c.changed, c.moved), (2, 1, 1, 0));
        assert_eq!((c.plus, c.minus), (3, 2));
        let placed: Vec<(&str, Placement, Option<String>)> = revision
            .comments
            .iter()
            .map(|p| (p.comment.text.as_str(), p.placement, p.key.clone()))
            .collect();
        assert_eq!(
            placed,
            vec![
                ("what?", Placement::Placed, Some(key(&r2, "Read"))),
                (
                    "which?",
                    Placement::Outdated,
                    Some(key(&r2, "Write the schema in SQL"))
                ),
                ("when?", Placement::Gone, None),
            ]
        );
        // The changed step says which words came; the added ones carry no word diff.
        let words: Vec<(Status, Option<String>)> = c
            .marks
            .iter()
            .map(|m| {
                let came = m.words.as_ref().map(|w| {
                    w.iter()
                        .filter(|s| s.op == plan_diff::Op::Insert)
                        .map(|s| s.text.as_str())
                        .collect()
                });
                (m.status, came)
            })
            .collect();
        assert_eq!(
            words,
            vec![
                (Status::Changed, Some(" in SQL".to_owned())),
                (Status::Added, None),
                (Status::Added, None),
            ]
        );

        // The human resolves the outdated comment and carries the placed one forward; the view
        // read again says so, and an index the last review does not have is refused.
        threads.set_past(second.id, 1, PastState::Resolved).unwrap();
        threads.set_past(second.id, 0, PastState::Carried).unwrap();
        assert_eq!(
            threads.set_past(second.id, 3, PastState::Resolved),
            Err(CommentError::NoPastComment(3))
        );
        assert_eq!(
            threads.set_past(first.id, 0, PastState::Resolved),
            Err(CommentError::NoPastComment(0)),
            "a first version has no last review"
        );
        let states = |threads: &PlanThreads| -> Vec<PastState> {
            threads
                .revision(second.id, &r2)
                .unwrap()
                .comments
                .iter()
                .map(|p| p.state)
                .collect()
        };
        assert_eq!(
            states(&threads),
            [PastState::Carried, PastState::Resolved, PastState::Open]
        );
        threads.set_past(second.id, 1, PastState::Open).unwrap();
        assert_eq!(
            states(&threads),
            [PastState::Carried, PastState::Open, PastState::Open]
        );
    }

    #[test]
    fn a_session_joins_agents_into_one_thread() {
        let threads = PlanThreads::default();
        threads.arrived(&request(1, agent("hook-a", Some("s1")), V1));
        let second = request(2, agent("hook-b", Some("s1")), V2);
        threads.arrived(&second);
        let revision = threads.revision(second.id, &markdown::render(V2)).unwrap();
        assert_eq!(revision.version, 2);
        // The first version was never shown: it is rendered for the comparison.
        assert!(revision.previous[0].html.contains("Ship"));
    }

    #[test]
    fn old_threads_and_versions_are_forgotten() {
        let threads = PlanThreads::default();
        for n in 0..(MAX_THREADS as u64 + 5) {
            threads.arrived(&request(n, agent(&format!("a{n}"), None), V1));
        }
        let inner = threads.inner();
        assert_eq!(inner.threads.len(), MAX_THREADS);
        assert!(!inner.threads.contains_key("agent:a0"));
        assert_eq!(inner.requests.len(), MAX_THREADS);
        drop(inner);
        for n in 0..(MAX_VERSIONS as u64 + 3) {
            threads.arrived(&request(1000 + n, agent("busy", None), V1));
        }
        assert_eq!(
            threads.inner().threads["agent:busy"].versions.len(),
            MAX_VERSIONS
        );
        assert_eq!(
            threads.inner().requests.len(),
            MAX_THREADS - 1 + MAX_VERSIONS
        );
    }

    #[test]
    fn big_plans_are_forgotten_oldest_first_past_the_byte_budget() {
        let threads = PlanThreads::default();
        let big = format!("# Plan\n\n{}\n", "word ".repeat(MAX_KEPT_BYTES / 5 / 3));
        for n in 0..4u64 {
            threads.arrived(&request(n, agent(&format!("a{n}"), None), &big));
        }
        let inner = threads.inner();
        let kept: usize = inner
            .threads
            .values()
            .flat_map(|t| &t.versions)
            .map(Version::bytes)
            .sum();
        assert!(kept <= MAX_KEPT_BYTES, "{kept}");
        // The newest stays, the oldest went first.
        assert!(inner.threads.contains_key("agent:a3"));
        assert!(!inner.threads.contains_key("agent:a0"));
        assert!(!inner.requests.contains_key(&RequestId(0)));
        drop(inner);
        // A single plan over the budget is still kept: the one just asked is never dropped.
        let huge = format!("# Plan\n\n{}\n", "word ".repeat(MAX_KEPT_BYTES / 4));
        threads.arrived(&request(9, agent("huge", None), &huge));
        assert_eq!(threads.inner().threads.len(), 1);
        assert!(threads
            .revision(RequestId(9), &markdown::render("x"))
            .is_none());
    }

    #[test]
    fn decisions_read_the_answer() {
        let q = plan_question(V1);
        let item = |selected: &[&str], custom: Option<&str>| Answer {
            answers: vec![AnswerItem {
                id: "plan".into(),
                selected: selected.iter().map(|s| (*s).to_owned()).collect(),
                custom: custom.map(str::to_owned),
                ..Default::default()
            }],
        };
        assert_eq!(decision_of(&q, &item(&["Approve"], None)), "approved");
        assert_eq!(
            decision_of(&q, &item(&["Approve"], Some("n"))),
            "approved with notes"
        );
        assert_eq!(decision_of(&q, &item(&[], Some("n"))), "feedback sent");
        assert_eq!(
            decision_of(&q, &item(&["Keep planning"], None)),
            "chose “Keep planning”"
        );
        assert_eq!(decision_of(&q, &item(&[], None)), "skipped");
    }
}
