//! [`Engine`]: the rules file kept loaded (reloaded when it changes, the last good rules kept when
//! it breaks) and the in-process answerer that applies it at the head of the waterfall.
//!
//! The answerer never claims through its offer. When a rule acts, it takes the request's
//! [`Override`] from the service, signed `rule:<name>`, and delegates:
//! - without `after`, it decides through the override at once, and the service settles the
//!   request before offering it to anyone else;
//! - with `after`, the request goes on down the chain (the human sees it as usual) and a deadline
//!   task decides through the override when the time is up, unless the request settled first.
//!
//! So a deadline never holds the request back from the human, the human's answer always wins a
//! tie, and the request still settles exactly once, by `Service::ask` returning.
//!
//! The human may hold a deadline ([`Engine::hold`]): its clock stops until they release it, and a
//! held request is never decided by its rule (a hold that comes as the time runs out wins; one
//! that comes after the rule decided is refused).
//!
//! The time a deadline runs out is kept on the service as it is set, moved by a reload, held,
//! released or called off (`Service::set_deadline`), so the answerers that show the request (a
//! phone) count down to it; the rule still decides through its override alone.
//!
//! A rule that decides at once is announced ([`Engine::acted`]), so the desktop can say what it
//! did although nobody saw the request.
//!
//! Shadow rules only propose: while a request waits for the human, the engine keeps what each
//! shadow rule that applies would do ([`Engine::proposals`]), and forgets it when the request
//! settles. It watches for that through the request's override, which it takes and never uses
//! when no rule with `after` holds it already.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

// Every critical section here replaces whole values, so a poisoned lock is still sound.
use askdesk_core::sync::lock;
use askdesk_core::{
    Answerer, AnswererId, AnswererRegistration, Decision, Offer, Override, RegistryError, Request,
    RequestId, Scope, Service, WeakService,
};
use askdesk_i18n::t;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::file::{self, Mode, ParseError, RuleSet};
use crate::matching::Verdict;

/// How often the rules file is checked for changes where the system cannot report them.
pub const DEFAULT_POLL: Duration = Duration::from_secs(2);
/// How long the file must go without a reported change before it is read: an editor's save is
/// often several writes, and the rules should be read once they are all done.
const SETTLE: Duration = Duration::from_millis(50);
/// The longest a file changed without pause waits to be read.
const SETTLE_AT_MOST: Duration = Duration::from_secs(1);
/// The label of the rules answerer on the waterfall (`askdesk status` shows it).
pub const ANSWERER_LABEL: &str = "rules";
/// Announcements of rules that decided at once kept for a receiver that lags; past it the oldest
/// are missed.
const ACTED_BACKLOG: usize = 64;

/// A rule decided a request at once, as it was asked (it has no `after`): what
/// [`Engine::acted`] announces.
#[derive(Debug, Clone, PartialEq)]
pub struct Acted {
    pub request: Arc<Request>,
    pub rule: String,
    /// What the rule did, in words (`answer the recommended option`).
    pub action: String,
    /// The answer it sent (`None` when it denied or dismissed).
    pub answer: Option<askdesk_core::Answer>,
}

/// The rules in force and the state of the file.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The last rules read without error (none when the file never loaded).
    pub rules: Arc<RuleSet>,
    /// Why the file as it is now cannot be used; `None` when the rules above are the file's.
    pub error: Option<String>,
    /// The same error located in the file (line, column, what is wrong), when the file does not
    /// parse; `None` when it is fine or cannot be read at all.
    pub parse_error: Option<ParseError>,
}

/// A deadline set by a rule with `after`, as the desktop shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deadline {
    pub rule: String,
    /// When the rule acts; while held, when it would act if released now.
    pub at: SystemTime,
    /// What the rule will do then, in words.
    pub action: String,
    /// Held by the human: the time left when the clock stopped.
    pub held: Option<Duration>,
    /// The answer the rule will give (`None` when it denies or dismisses).
    pub answer: Option<askdesk_core::Answer>,
}

/// When a deadline runs out while its clock runs; `None` while the human holds it.
fn running(deadline: &Deadline) -> Option<SystemTime> {
    deadline.held.is_none().then_some(deadline.at)
}

/// Why a hold was not changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HoldError {
    /// The request has no running deadline: it settled, its rule already acted, or a reload
    /// called the deadline off. Nothing is left to hold.
    #[error("{}", t!("rules-hold-no-deadline"))]
    NoDeadline,
}

/// What a shadow rule proposes for a pending request: the human still decides.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub rule: String,
    pub verdict: Verdict,
}

/// What the rules hold about one pending request until it settles.
#[derive(Debug, Default)]
struct Pending {
    deadline: Option<Deadline>,
    proposals: Vec<Proposal>,
    /// With a deadline: the request and the verdict its rule will carry out, to check against
    /// the rules after a reload, and how to call the deadline off.
    acting: Option<Acting>,
}

#[derive(Debug)]
struct Acting {
    request: Arc<Request>,
    verdict: Verdict,
    stop: CancellationToken,
    /// When the deadline started (the rule's `after` counts from then), on the wall clock for
    /// the desktop's countdown.
    since: SystemTime,
    /// The rule's `after` (a reload may change it) and whether the human holds the clock: the
    /// deadline task follows both.
    timing: watch::Sender<Timing>,
    /// How long the clock stood held before the current hold.
    paused: Duration,
    /// When the current hold began.
    held_since: Option<SystemTime>,
}

/// What the deadline task follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timing {
    after: Duration,
    held: bool,
}

impl Acting {
    /// When the rule acts if the clock runs from now on.
    fn acts_at(&self, now: SystemTime) -> SystemTime {
        let held = self.held_since.map_or(Duration::ZERO, |since| {
            now.duration_since(since).unwrap_or_default()
        });
        self.since + self.timing.borrow().after + self.paused + held
    }
}

/// The rules engine. Cheap to clone; every clone is the same engine.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    loaded: watch::Sender<Loaded>,
    /// The file's size and modification time when last read, to notice changes cheaply.
    seen: Mutex<Option<Signature>>,
    /// Deadlines and shadow proposals of requests waiting for the human.
    pending: Mutex<HashMap<RequestId, Pending>>,
    /// The service the answerer goes on, once installed, and its registration while it is on.
    installed: Mutex<Option<(WeakService, Option<AnswererId>)>>,
    /// Rules that decided at once, for whoever listens ([`Engine::acted`]).
    acted: broadcast::Sender<Acted>,
}

type Signature = Option<(u64, SystemTime)>;

impl Engine {
    /// Loads the rules file at `path`. A missing file is no rules; a broken one is no rules and
    /// an error (logged, and in [`Loaded::error`]): the broker serves either way.
    pub async fn open(path: PathBuf) -> Engine {
        let engine = Engine {
            shared: Arc::new(Shared {
                path,
                loaded: watch::Sender::new(Loaded::default()),
                seen: Mutex::new(None),
                pending: Mutex::default(),
                installed: Mutex::default(),
                acted: broadcast::Sender::new(ACTED_BACKLOG),
            }),
        };
        engine.reload().await;
        engine
    }

    /// What a broker does at start: loads `$XDG_CONFIG_HOME/askdesk/rules.toml`, installs the
    /// rules answerer on `service` and follows the file until `shutdown`. Without a configuration
    /// directory the broker runs without rules (logged); nothing here ever stops it.
    pub async fn start_default(service: &Service, shutdown: &CancellationToken) -> Option<Engine> {
        let path = match file::default_path() {
            Ok(path) => path,
            Err(error) => {
                tracing::warn!(%error, "answer rules are off");
                return None;
            }
        };
        let engine = Engine::open(path).await;
        if let Err(error) = engine.install(service) {
            tracing::error!(%error, "answer rules are off: the rules answerer cannot register");
            return None;
        }
        tokio::spawn(engine.clone().follow(DEFAULT_POLL, shutdown.clone()));
        Some(engine)
    }

    /// The rules file this engine reads.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The rules in force now.
    pub fn current(&self) -> Loaded {
        self.shared.loaded.borrow().clone()
    }

    /// Follows the rules in force (and the file's errors) as they change.
    pub fn subscribe(&self) -> watch::Receiver<Loaded> {
        self.shared.loaded.subscribe()
    }

    /// Hears of every rule that decides a request at once from now on (a rule with `after`
    /// decides a request the human was shown: its answerer hears of that). A receiver that falls
    /// more than a few dozen behind misses the oldest.
    pub fn acted(&self) -> broadcast::Receiver<Acted> {
        self.shared.acted.subscribe()
    }

    /// The deadline a rule set on a pending request, if any.
    pub fn deadline(&self, request: RequestId) -> Option<Deadline> {
        lock(&self.shared.pending)
            .get(&request)
            .and_then(|p| p.deadline.clone())
    }

    /// Stops (`held`) or restarts the clock of the deadline a rule set on a pending request. While
    /// held the rule never acts; released, it acts when the time left at the hold has passed.
    pub fn hold(&self, request: RequestId, held: bool) -> Result<Deadline, HoldError> {
        let deadline = self.hold_clock(request, held)?;
        self.announce(request, running(&deadline));
        Ok(deadline)
    }

    /// [`Engine::hold`] under the lock of the pending deadlines.
    fn hold_clock(&self, request: RequestId, held: bool) -> Result<Deadline, HoldError> {
        let mut pending = lock(&self.shared.pending);
        let entry = pending.get_mut(&request).ok_or(HoldError::NoDeadline)?;
        let (Some(acting), Some(deadline)) = (&mut entry.acting, &mut entry.deadline) else {
            return Err(HoldError::NoDeadline);
        };
        let now = SystemTime::now();
        match (held, acting.held_since) {
            (true, None) => {
                deadline.held = Some(deadline.at.duration_since(now).unwrap_or_default());
                acting.held_since = Some(now);
                tracing::info!(request = %request, rule = %deadline.rule, "the human holds the rule's deadline");
            }
            (false, Some(since)) => {
                acting.paused += now.duration_since(since).unwrap_or_default();
                acting.held_since = None;
                deadline.held = None;
                deadline.at = acting.acts_at(now);
                tracing::info!(request = %request, rule = %deadline.rule, "the human released the rule's deadline");
            }
            _ => {}
        }
        // Under the lock the deadline task takes before it acts: a hold it has not seen yet wins.
        acting.timing.send_modify(|timing| timing.held = held);
        Ok(deadline.clone())
    }

    /// Whether the deadline task of `request` may act now: not while held. Taken under the lock
    /// [`Engine::hold`] takes, and forgets the request when it may.
    fn may_act(&self, request: RequestId) -> bool {
        let mut pending = lock(&self.shared.pending);
        let held = pending
            .get(&request)
            .and_then(|entry| entry.acting.as_ref())
            .is_some_and(|acting| acting.held_since.is_some());
        if !held {
            pending.remove(&request);
        }
        !held
    }

    /// What the shadow rules that apply to a pending request propose, in file order; empty once
    /// the request settled.
    pub fn proposals(&self, request: RequestId) -> Vec<Proposal> {
        lock(&self.shared.pending)
            .get(&request)
            .map(|p| p.proposals.clone())
            .unwrap_or_default()
    }

    /// Puts the rules answerer at the head of `service`'s waterfall (prepended, every request)
    /// whenever the file has rules that are not `off`, and takes it off while it has none, so a
    /// broker without rules shows no rules answerer. Reloads keep this in step.
    pub fn install(&self, service: &Service) -> Result<(), RegistryError> {
        *lock(&self.shared.installed) = Some((service.downgrade(), None));
        self.sync()
    }

    /// Registers or unregisters the answerer to match the rules in force.
    fn sync(&self) -> Result<(), RegistryError> {
        let mut installed = lock(&self.shared.installed);
        let Some((weak, registered)) = installed.as_mut() else {
            return Ok(());
        };
        let Some(service) = weak.upgrade() else {
            return Ok(());
        };
        let wanted = self
            .shared
            .loaded
            .borrow()
            .rules
            .rules
            .iter()
            .any(|rule| rule.mode != Mode::Off);
        match (wanted, *registered) {
            (true, None) => {
                let id = service.register_answerer(
                    AnswererRegistration {
                        scope: Scope::All,
                        prepend: true,
                        label: Some(ANSWERER_LABEL.to_owned()),
                        group: None,
                    },
                    Arc::new(RulesAnswerer {
                        engine: self.clone(),
                        service: service.downgrade(),
                    }),
                )?;
                *registered = Some(id);
            }
            (false, Some(id)) => {
                service.unregister_answerer(id);
                *registered = None;
            }
            _ => {}
        }
        Ok(())
    }

    /// Follows the rules file until `shutdown` is cancelled, reloading it when it changes. The
    /// system reports changes in the file's directory (inotify on Linux; the directory is made
    /// when missing), so a broker nobody asks never wakes for the file. Where that cannot be set
    /// up, or once the directory itself is removed, the file is checked every `poll` instead.
    pub async fn follow(self, poll: Duration, shutdown: CancellationToken) {
        // One report waiting is enough: the file is read whole whatever the number of reports.
        let (report, mut reports) = tokio::sync::mpsc::channel(1);
        match self.watch_directory(report) {
            Ok(watcher) => {
                if self.follow_reports(&mut reports, &shutdown).await {
                    return;
                }
                drop(watcher);
                tracing::warn!(path = %self.shared.path.display(), every = ?poll, "the rules file's directory is gone; checking for the file every so often");
            }
            Err(error) => {
                tracing::warn!(%error, path = %self.shared.path.display(), every = ?poll, "cannot watch the rules file's directory; checking the file every so often");
            }
        }
        self.watch(poll, shutdown).await;
    }

    /// Asks the system to report changes to the rules file (and to its directory): each one
    /// is sent on `report`. The watch lasts as long as the returned watcher.
    fn watch_directory(
        &self,
        report: tokio::sync::mpsc::Sender<()>,
    ) -> Result<notify::RecommendedWatcher, notify::Error> {
        use notify::Watcher;
        let file = self.shared.path.clone();
        let dir = file::directory_of(&file).to_owned();
        std::fs::create_dir_all(&dir).map_err(notify::Error::io)?;
        let watched = dir.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let concerns = match &event {
                    Ok(event) => {
                        event.need_rescan()
                            || (finishes_a_change(&event.kind)
                                && event
                                    .paths
                                    .iter()
                                    .any(|path| *path == file || *path == watched))
                    }
                    // A report was lost: look at the file rather than miss a change.
                    Err(_) => true,
                };
                if concerns {
                    // Full: a report is already waiting, and it stands for this one too.
                    let _ = report.try_send(());
                }
            })?;
        watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
        Ok(watcher)
    }

    /// Reloads the file after each report until `shutdown` (true) or until its directory is gone
    /// and no more reports can come (false).
    async fn follow_reports(
        &self,
        reports: &mut tokio::sync::mpsc::Receiver<()>,
        shutdown: &CancellationToken,
    ) -> bool {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return true,
                report = reports.recv() => if report.is_none() { return false },
            }
            // Each report while settling starts the wait again (up to SETTLE_AT_MOST in all):
            // the reports of one save are read as one change, once the save is quiet.
            let give_up = tokio::time::Instant::now() + SETTLE_AT_MOST;
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return true,
                    _ = tokio::time::sleep(SETTLE) => break,
                    _ = tokio::time::sleep_until(give_up) => break,
                    report = reports.recv() => if report.is_none() { break },
                }
            }
            while reports.try_recv().is_ok() {}
            self.reload_if_changed().await;
            if !file::directory_of(&self.shared.path).is_dir() {
                return false;
            }
        }
    }

    /// Checks the file every `poll` and reloads it when its size or modification time changed,
    /// until `shutdown` is cancelled.
    pub async fn watch(self, poll: Duration, shutdown: CancellationToken) {
        let mut ticks = tokio::time::interval(poll);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = ticks.tick() => {}
            }
            self.reload_if_changed().await;
        }
    }

    /// Reloads the file if its size or modification time is not what was last read.
    async fn reload_if_changed(&self) {
        let now = Some(self.signature().await);
        if now != *lock(&self.shared.seen) {
            self.reload().await;
        }
    }

    /// Reads the file now. Returns whether the rules in force are the file's (false when it is
    /// broken and the last good rules stay).
    pub async fn reload(&self) -> bool {
        let signature = self.signature().await;
        let path = self.shared.path.clone();
        let (result, logged) = tokio::task::spawn_blocking(move || {
            let result = file::load(&path);
            // The log says what is wrong in English whatever the person's language: read again
            // speaking it (the file is small, and this is only when it is broken).
            let logged = result.is_err().then(|| {
                askdesk_i18n::speaking(askdesk_i18n::DEFAULT, || {
                    file::load(&path).err().map(|e| e.to_string())
                })
            });
            (result, logged.flatten())
        })
        .await
        .unwrap_or_else(|e| {
            let error = file::Error::Read {
                path: self.shared.path.clone(),
                source: std::io::Error::other(e.to_string()),
            };
            (Err(error), None)
        });
        *lock(&self.shared.seen) = Some(signature);
        match result {
            Ok(rules) => {
                let count = rules.rules.len();
                let was_broken = self.shared.loaded.borrow().error.is_some();
                for warning in rules.warnings() {
                    tracing::warn!(path = %self.shared.path.display(), "{warning}");
                }
                // Before the change is announced, so whoever reads the deadlines then sees them.
                self.recheck_deadlines(&rules);
                self.shared.loaded.send_replace(Loaded {
                    rules: Arc::new(rules),
                    error: None,
                    parse_error: None,
                });
                if let Err(error) = self.sync() {
                    tracing::error!(%error, "the rules answerer cannot register");
                }
                if was_broken && !self.shared.path.exists() {
                    tracing::info!(path = %self.shared.path.display(), "the broken rules file is gone; no rules are in force");
                } else if was_broken {
                    tracing::info!(path = %self.shared.path.display(), rules = count, "the rules file is fixed; its rules are in force");
                } else {
                    tracing::info!(path = %self.shared.path.display(), rules = count, "rules loaded");
                }
                true
            }
            Err(error) => {
                let message = error.to_string();
                // The file's English error; the person's when it changed between the two reads.
                let logged = logged.unwrap_or_else(|| message.clone());
                if self.shared.loaded.borrow().rules.rules.is_empty() {
                    tracing::error!(error = %logged, "the rules file is broken; no rules are in force until it is fixed");
                } else {
                    tracing::error!(error = %logged, "the rules file is broken; the last good rules stay in force");
                }
                let located = match error {
                    file::Error::Parse { error, .. } => Some(error),
                    _ => None,
                };
                self.shared.loaded.send_modify(|loaded| {
                    loaded.error = Some(message);
                    loaded.parse_error = located;
                });
                false
            }
        }
    }

    /// Calls off each pending deadline whose rule no longer does what it promised: switched off,
    /// removed, no longer matching the request, deciding otherwise, or acting at once now. The
    /// human decides those. A rule whose `after` changed moves its deadline: the new `after`
    /// counts from when the deadline started (a deadline already past acts now).
    fn recheck_deadlines(&self, rules: &RuleSet) {
        let mut changed = Vec::new();
        let mut pending = lock(&self.shared.pending);
        for (request, entry) in pending.iter_mut() {
            let (Some(acting), Some(deadline)) = (&entry.acting, &mut entry.deadline) else {
                continue;
            };
            let evaluation =
                rules.evaluate(acting.request.agent.as_ref(), &acting.request.questions);
            let after = evaluation.acting.and_then(|(rule, verdict)| {
                (rule.name == deadline.rule && verdict == acting.verdict)
                    .then_some(rule.after)
                    .flatten()
            });
            if let Some(after) = after {
                if after != acting.timing.borrow().after {
                    tracing::info!(request = %request, rule = %deadline.rule, after = ?after, "the rule's `after` changed; its deadline moves");
                    acting.timing.send_modify(|timing| timing.after = after);
                    let now = SystemTime::now();
                    deadline.at = acting.acts_at(now);
                    if deadline.held.is_some() {
                        deadline.held = Some(deadline.at.duration_since(now).unwrap_or_default());
                    }
                    changed.push((*request, running(deadline)));
                }
            } else {
                tracing::info!(request = %request, rule = %deadline.rule, "the rule changed before its deadline; the human decides");
                acting.stop.cancel();
                entry.deadline = None;
                entry.acting = None;
                changed.push((*request, None));
            }
        }
        drop(pending);
        for (request, at) in changed {
            self.announce(request, at);
        }
    }

    /// Tells the service when a pending request's deadline runs out now (`None`: it is held or
    /// called off), so the answerers that show it count down (`Service::set_deadline`).
    fn announce(&self, request: RequestId, at: Option<SystemTime>) {
        let service = lock(&self.shared.installed)
            .as_ref()
            .and_then(|(service, _)| service.upgrade());
        if let Some(service) = service {
            service.set_deadline(request, at);
        }
    }

    async fn signature(&self) -> Signature {
        let metadata = tokio::fs::metadata(&self.shared.path).await.ok()?;
        Some((metadata.len(), metadata.modified().ok()?))
    }
}

/// Whether a report on the rules file marks a change that is complete: written and closed, put
/// in place by a rename, or removed. Writes to a file still open are not: a save that truncates
/// the file and then writes would otherwise be read empty in between, and its "no rules" would
/// replace the last good rules. Nor is a file made (inotify's `IN_CREATE`): it is made empty and
/// written after, and a piece of it can be valid TOML with fewer rules; its close after writing
/// (`IN_CLOSE_WRITE`) is reported, or its rename into place (`IN_MOVED_TO`). Opening and reading
/// the file (the engine's own reads) are not changes at all.
fn finishes_a_change(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    use notify::EventKind;
    matches!(
        kind,
        EventKind::Access(AccessKind::Close(AccessMode::Write))
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Name(_))
            | EventKind::Any
            | EventKind::Other
    )
}

/// The in-process answerer: evaluates the rules in force against each request.
struct RulesAnswerer {
    engine: Engine,
    service: WeakService,
}

impl Answerer for RulesAnswerer {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let loaded = self.engine.current();
        let evaluation = loaded
            .rules
            .evaluate(request.agent.as_ref(), &request.questions);
        let proposals: Vec<Proposal> = evaluation
            .shadow
            .iter()
            .map(|(rule, verdict)| {
                tracing::info!(request = %request.id, rule = %rule.name, proposal = ?verdict, "shadow rule proposes; the human decides");
                Proposal {
                    rule: rule.name.clone(),
                    verdict: verdict.clone(),
                }
            })
            .collect();
        let acting = evaluation.acting.and_then(|(rule, verdict)| {
            let decision = verdict.decision();
            if decision.is_none() {
                tracing::debug!(request = %request.id, rule = %rule.name, "rule leaves the request to the human");
            }
            decision.map(|decision| (rule, decision, verdict))
        });
        if acting.is_none() && proposals.is_empty() {
            return Offer::Now(Decision::Delegate);
        }
        let label = acting
            .as_ref()
            .map_or_else(|| ANSWERER_LABEL.to_owned(), |(rule, _, _)| rule.label());
        let overrule = self
            .service
            .upgrade()
            .and_then(|service| service.take_override(request.id, label));
        let Some(overrule) = overrule else {
            tracing::warn!(request = %request.id, "the request can no longer be decided by a rule");
            return Offer::Now(Decision::Delegate);
        };
        let runtime = tokio::runtime::Handle::try_current();
        let act = match acting {
            None => None,
            Some((rule, decision, verdict)) => match rule.after {
                None => {
                    // Settled before anyone else sees it: nobody is shown the proposals.
                    tracing::info!(request = %request.id, rule = %rule.name, action = %rule.action, "rule decides");
                    let answer = match &decision {
                        Decision::Claim(answer) => Some(answer.clone()),
                        _ => None,
                    };
                    if overrule.decide(decision).is_ok() {
                        // Nobody listening is fine: then nobody says what the rule did.
                        let _ = self.engine.shared.acted.send(Acted {
                            request: request.clone(),
                            rule: rule.name.clone(),
                            action: rule.action.said(),
                            answer,
                        });
                    }
                    return Offer::Now(Decision::Delegate);
                }
                Some(after) if runtime.is_ok() => {
                    tracing::info!(request = %request.id, rule = %rule.name, after = ?after, "rule decides unless the human answers first");
                    let deadline = Deadline {
                        rule: rule.name.clone(),
                        at: SystemTime::now() + after,
                        action: rule.action.said(),
                        held: None,
                        answer: match &decision {
                            Decision::Claim(answer) => Some(answer.clone()),
                            _ => None,
                        },
                    };
                    Some((deadline, after, decision, verdict))
                }
                Some(_) => {
                    tracing::error!(rule = %rule.name, "no runtime to time the rule's deadline; the human decides");
                    None
                }
            },
        };
        let Ok(runtime) = runtime else {
            return Offer::Now(Decision::Delegate);
        };
        let stop = CancellationToken::new();
        let timing = watch::Sender::new(Timing {
            after: act.as_ref().map_or(Duration::ZERO, |(_, after, ..)| *after),
            held: false,
        });
        let since = act
            .as_ref()
            .map_or_else(SystemTime::now, |(deadline, after, ..)| {
                deadline.at.checked_sub(*after).unwrap_or(deadline.at)
            });
        lock(&self.engine.shared.pending).insert(
            request.id,
            Pending {
                deadline: act.as_ref().map(|(deadline, ..)| deadline.clone()),
                proposals,
                acting: act.as_ref().map(|(.., verdict)| Acting {
                    request: request.clone(),
                    verdict: verdict.clone(),
                    stop: stop.clone(),
                    since,
                    timing: timing.clone(),
                    paused: Duration::ZERO,
                    held_since: None,
                }),
            },
        );
        // The answerers offered the request after this one count down to it.
        if let (Some((deadline, ..)), Some(service)) = (&act, self.service.upgrade()) {
            service.set_deadline(request.id, Some(deadline.at));
        }
        runtime.spawn(follow(
            self.engine.clone(),
            request.id,
            overrule,
            act.map(|(deadline, _, decision, _)| (deadline.rule, timing.subscribe(), decision)),
            stop,
        ));
        Offer::Now(Decision::Delegate)
    }
}

/// Follows a request that waits for the human until it settles, then forgets its deadline and
/// proposals. With a deadline (`act`: the rule, its `after` as reloads change it and the human's
/// hold, its decision), decides through `overrule` when the time is up, unless the request settled
/// first, the human holds it, or a reload called the deadline off (`stop`).
async fn follow(
    engine: Engine,
    request: RequestId,
    mut overrule: Override,
    act: Option<(String, watch::Receiver<Timing>, Decision)>,
    stop: CancellationToken,
) {
    let Some((rule, mut timing, decision)) = act else {
        overrule.settled().await;
        lock(&engine.shared.pending).remove(&request);
        return;
    };
    let since = tokio::time::Instant::now();
    // The clock stands still while held: the time held is added to the deadline.
    let mut paused = Duration::ZERO;
    let mut held_since: Option<tokio::time::Instant> = None;
    let fired = loop {
        let now = tokio::time::Instant::now();
        let Timing { after, held } = *timing.borrow_and_update();
        match (held, held_since) {
            (true, None) => held_since = Some(now),
            (false, Some(began)) => {
                paused += now - began;
                held_since = None;
            }
            _ => {}
        }
        let at = (!held).then(|| since + after + paused);
        tokio::select! {
            _ = overrule.settled() => break false,
            _ = async {
                match at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {
                // A hold that came as the time ran out wins: the human holds, the rule waits.
                if engine.may_act(request) {
                    break true;
                }
            }
            // A reload moved the deadline, or the human held or released it.
            Ok(()) = timing.changed() => {}
            _ = stop.cancelled() => {
                overrule.settled().await;
                break false;
            }
        }
    };
    lock(&engine.shared.pending).remove(&request);
    if fired {
        match overrule.decide(decision) {
            Ok(()) => {
                tracing::info!(request = %request, rule = %rule, "the rule's deadline passed; the rule decides")
            }
            Err(_) => {
                tracing::debug!(request = %request, rule = %rule, "settled as the deadline passed")
            }
        }
    }
}
