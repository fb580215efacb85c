//! Desktop notifications for waiting requests, over the freedesktop D-Bus interface (notify-rust).
//!
//! Every D-Bus call happens on threads of this module, never on the async runtime: one worker
//! thread shows notifications in order, and each shown notification gets a small thread that
//! waits for its action or for the request to settle elsewhere, and then closes it
//! (`CloseNotification`). When no notification server answers, the app keeps working without
//! notifications and says so once in the log.
//!
//! notify-rust subscribes to `ActionInvoked`/`NotificationClosed` by interface and member, not by
//! sender: a peer on the session bus could forge one. Such a peer runs as the same user, who can
//! answer over the socket anyway; the buttons are offered only for a question whose whole meaning
//! is in the notification, so that a human pressing one has seen what they answer.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;

use askdesk_core::{Request, RequestId};
use futures_lite::future;
use notify_rust::{Notification, NotificationResponse, Timeout};
use tokio::sync::oneshot;

use crate::answerer::display_name;

/// What the human did with a notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Activated the notification itself: open the request in the window.
    Open(RequestId),
    /// Chose option `option` of the request's only question.
    Choose { request: RequestId, option: usize },
}

/// What a notification for a request shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub request: RequestId,
    pub title: String,
    /// Plain text; escaped for the servers that read body markup.
    pub body: String,
    /// Option labels offered as buttons, in option order (empty unless the batch is one simple
    /// single-select question without `detail`).
    pub choices: Vec<String>,
}

/// The most options a notification offers as buttons; more would not fit most desktops.
pub const MAX_CHOICES: usize = 3;
/// The longest body shown; the window has the rest.
const MAX_BODY_CHARS: usize = 300;
/// Commands waiting for the worker; a full queue drops the notification, never blocks the caller.
const QUEUE: usize = 256;

/// The notification for a request: who asks, what, and the buttons when the question is simple.
pub fn spec_for(request: &Request) -> Spec {
    let who = display_name(request.agent.as_ref());
    let first = &request.questions[0];
    let mut body = first.question.trim().to_owned();
    if body.is_empty() {
        body = first.header.clone().unwrap_or_default();
    }
    if body.chars().count() > MAX_BODY_CHARS {
        body = body.chars().take(MAX_BODY_CHARS - 1).collect::<String>() + "…";
    }
    let more = request.questions.len() - 1;
    if more > 0 {
        body.push_str(&format!(
            "\n(+{more} more question{})",
            if more == 1 { "" } else { "s" }
        ));
    }
    // A question whose `detail` says what is at stake (a hook's command, a diff) gets no buttons:
    // answering from the notification would decide without seeing it.
    let simple = request.questions.len() == 1
        && !first.multi_select
        && first.intent.is_none()
        && first.detail.as_deref().is_none_or(|d| d.trim().is_empty())
        && (1..=MAX_CHOICES).contains(&first.options.len());
    let choices = if simple {
        first.options.iter().map(|o| o.label.clone()).collect()
    } else {
        Vec::new()
    };
    Spec {
        request: request.id,
        title: format!("{who} asks"),
        body,
        choices,
    }
}

/// Shows and closes notifications on its own threads. Dropping it stops the worker.
pub struct Notifier {
    commands: SyncSender<Command>,
}

enum Command {
    Show(Spec),
    Close(RequestId),
}

impl Notifier {
    /// Starts the worker thread. `on_action` runs on a notification's thread when the human acts.
    pub fn spawn(on_action: impl Fn(Action) + Send + Sync + 'static) -> std::io::Result<Notifier> {
        let (commands, receiver) = sync_channel(QUEUE);
        let on_action: Arc<dyn Fn(Action) + Send + Sync> = Arc::new(on_action);
        std::thread::Builder::new()
            .name("askdesk-notify".into())
            .spawn(move || worker(receiver, on_action))?;
        Ok(Notifier { commands })
    }

    /// Shows a notification for a request (asynchronously).
    pub fn show(&self, spec: Spec) {
        self.send(Command::Show(spec));
    }

    /// Closes the request's notification, if one is shown.
    pub fn close(&self, request: RequestId) {
        self.send(Command::Close(request));
    }

    fn send(&self, command: Command) {
        match self.commands.try_send(command) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!("the notification queue is full; a notification was dropped")
            }
            Err(TrySendError::Disconnected(_)) => {
                tracing::warn!("the notification worker has stopped")
            }
        }
    }
}

fn worker(commands: Receiver<Command>, on_action: Arc<dyn Fn(Action) + Send + Sync>) {
    // Each shown notification's thread waits on the paired receiver for "the request settled".
    let mut shown: HashMap<RequestId, oneshot::Sender<()>> = HashMap::new();
    let mut warned = false;
    for command in commands {
        match command {
            Command::Show(spec) => match build(&spec).show() {
                Ok(handle) => {
                    tracing::debug!(request = %spec.request, id = handle.id(), "notification shown");
                    let (settled, settled_rx) = oneshot::channel();
                    shown.insert(spec.request, settled);
                    let on_action = on_action.clone();
                    let request = spec.request;
                    let spawned = std::thread::Builder::new()
                        .name(format!("askdesk-notify-{request}"))
                        .spawn(move || watch(handle, request, settled_rx, on_action));
                    if let Err(error) = spawned {
                        tracing::warn!(%error, "cannot watch a notification");
                    }
                }
                Err(error) if !warned => {
                    warned = true;
                    tracing::warn!(%error, "no desktop notification server answered; askdesk works without notifications");
                }
                Err(error) => tracing::debug!(%error, "notification not shown"),
            },
            Command::Close(request) => {
                if let Some(settled) = shown.remove(&request) {
                    let _ = settled.send(());
                }
            }
        }
    }
}

/// Waits for the human's action on one notification, or for its request to settle elsewhere (then
/// closes it).
fn watch(
    handle: notify_rust::NotificationHandle,
    request: RequestId,
    settled: oneshot::Receiver<()>,
    on_action: Arc<dyn Fn(Action) + Send + Sync>,
) {
    let mut response: Option<NotificationResponse> = None;
    let settled_elsewhere = future::block_on(future::or(
        async {
            handle
                .wait_for_action_async(|r| response = Some(r.clone()))
                .await;
            false
        },
        async {
            // A dropped sender (the worker stopped) also means the notification should go.
            let _ = settled.await;
            true
        },
    ));
    if settled_elsewhere {
        future::block_on(handle.close_async());
        tracing::debug!(%request, "notification closed");
        return;
    }
    let action = match response {
        Some(NotificationResponse::Default) => Some(Action::Open(request)),
        Some(NotificationResponse::Action(key)) => {
            Some(parse_key(&key, request).unwrap_or(Action::Open(request)))
        }
        _ => None,
    };
    if let Some(action) = action {
        on_action(action);
    }
}

fn build(spec: &Spec) -> Notification {
    let mut notification = Notification::new();
    notification
        .appname("askdesk")
        .summary(&spec.title)
        .body(&escape_markup(&spec.body))
        .icon("dialog-question")
        .timeout(Timeout::Never)
        .action("default", "Open");
    for (index, label) in spec.choices.iter().enumerate() {
        notification.action(&choice_key(index), label);
    }
    notification
}

fn choice_key(index: usize) -> String {
    format!("choose-{index}")
}

fn parse_key(key: &str, request: RequestId) -> Option<Action> {
    let option = key.strip_prefix("choose-")?.parse().ok()?;
    Some(Action::Choose { request, option })
}

/// Body text may be read as markup (`body-markup`): show the agent's text literally.
fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::{AgentInfo, Intent, Question, QuestionOption};
    use std::time::SystemTime;

    fn request(agent: Option<AgentInfo>, questions: Vec<Question>) -> Request {
        Request {
            id: RequestId(3),
            questions,
            agent,
            asked_at: SystemTime::now(),
        }
    }

    fn question(options: &[&str]) -> Question {
        Question {
            id: "q".into(),
            question: "Deploy <now>?".into(),
            header: None,
            detail: None,
            options: options
                .iter()
                .map(|l| QuestionOption {
                    label: (*l).into(),
                    description: None,
                })
                .collect(),
            multi_select: false,
            intent: None,
        }
    }

    #[test]
    fn title_names_the_agent() {
        let labelled = AgentInfo {
            id: "a1".into(),
            label: Some("claude-code".into()),
            meta: None,
        };
        assert_eq!(
            spec_for(&request(Some(labelled), vec![question(&[])])).title,
            "claude-code asks"
        );
        let bare = AgentInfo {
            id: "a1".into(),
            label: None,
            meta: None,
        };
        assert_eq!(
            spec_for(&request(Some(bare), vec![question(&[])])).title,
            "a1 asks"
        );
        assert_eq!(
            spec_for(&request(None, vec![question(&[])])).title,
            "a script asks"
        );
    }

    #[test]
    fn simple_single_select_questions_get_buttons() {
        assert_eq!(
            spec_for(&request(None, vec![question(&["Yes", "No"])])).choices,
            vec!["Yes", "No"]
        );
        assert!(
            spec_for(&request(None, vec![question(&["a", "b", "c", "d"])]))
                .choices
                .is_empty()
        );
        assert!(spec_for(&request(None, vec![question(&[])]))
            .choices
            .is_empty());
        let mut multi = question(&["a", "b"]);
        multi.multi_select = true;
        assert!(spec_for(&request(None, vec![multi])).choices.is_empty());
        let mut plan = question(&["Approve", "Revise"]);
        plan.intent = Some(Intent {
            kind: "plan-review".into(),
            approve: "Approve".into(),
        });
        assert!(spec_for(&request(None, vec![plan])).choices.is_empty());
        // A hook's tool prompt: the command is only in the detail, so no in-place answer.
        let mut detailed = question(&["Allow once", "Deny"]);
        detailed.detail = Some("```sh\nrm -rf ~/shop/.git\n```".into());
        assert!(spec_for(&request(None, vec![detailed.clone()]))
            .choices
            .is_empty());
        detailed.detail = Some("  \n".into());
        assert_eq!(
            spec_for(&request(None, vec![detailed])).choices,
            vec!["Allow once", "Deny"]
        );
        let mut second = question(&["Yes"]);
        second.id = "r".into();
        let batch = spec_for(&request(None, vec![question(&["Yes"]), second]));
        assert!(batch.choices.is_empty());
        assert_eq!(batch.body, "Deploy <now>?\n(+1 more question)");
    }

    #[test]
    fn body_markup_is_escaped() {
        assert_eq!(escape_markup("a <b>&</b>"), "a &lt;b&gt;&amp;&lt;/b&gt;");
    }

    #[test]
    fn action_keys_round_trip() {
        assert_eq!(
            parse_key(&choice_key(2), RequestId(9)),
            Some(Action::Choose {
                request: RequestId(9),
                option: 2
            })
        );
        assert_eq!(parse_key("default", RequestId(9)), None);
        assert_eq!(parse_key("choose-x", RequestId(9)), None);
    }
}
