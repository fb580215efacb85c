//! `askdesk answer`: a headless answerer on the broker's waterfall, by policy or by an external command.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use askdesk_broker::client::IncomingRequest;
use askdesk_broker::protocol::methods::RequestParams;
use askdesk_broker::protocol::RpcError;
use askdesk_core::{
    AgentInfo, Answer, AnswerItem, ErrorCode, Intent, Question, Scope, UserQuestionError,
};
use clap::{Args, ValueEnum};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::task::JoinSet;

use crate::connect::connect;
use crate::exit::{Error, Result};

/// Answer requests headlessly, with a policy or an external command
#[derive(Debug, Args)]
#[command(
    after_help = "Registers as an answerer on the broker's waterfall and answers every request it is \
offered until Ctrl-C (or --count requests). With --exec, CMD runs via `sh -c` once per request: the \
request JSON {\"questions\":[...],\"agent\":{...}} is written to its stdin and its stdout must be an \
answer JSON ({\"answers\":[...]}) to claim the request, `null` to pass it to the next answerer, or \
{\"error\":{\"code\":\"CODE\",\"message\":\"...\"}} to fail it with that error code. A non-zero exit \
fails the request as an internal error. A request that is withdrawn (the asker cancelled) kills CMD.

Policies:
  first        the first option of each question; questions without options are skipped
  recommended  the option whose label ends with \"(Recommended)\", else the first
  skip         every question skipped (selected: [])
  dismiss      fail the request ASK_CANCELLED, as a human dismissing it would
  delegate     pass every request to the next answerer

A policy answers neither permission prompts (the asking agent's meta names a tool, as `askdesk \
hook` registers it) nor plan reviews (intent plan-review): it passes them to the next answerer, \
unless --include-permissions or --include-plans says to answer them too. An --exec command sees the \
agent and the intent, and decides for itself.

Exit status: 0 after Ctrl-C or --count requests; 2 usage error; 3 no broker is running; 6 the broker \
is at its connection limit; 20 the broker closed the connection.

Examples:
  askdesk answer --policy recommended --prepend --label autopilot
  askdesk answer --scope agents --policy dismiss
  askdesk answer --count 1 --exec 'jq -c \"{answers: [.questions[] | {id, selected: []}]}\"'"
)]
pub struct AnswerArgs {
    /// Which requests to receive: every one, or only those asked for an agent
    #[arg(long, value_enum, default_value_t = ScopeArg::All)]
    pub scope: ScopeArg,
    /// Go first in the waterfall (before the desktop app's answerer)
    #[arg(long)]
    pub prepend: bool,
    /// The label `askdesk status` and the history show for this answerer
    #[arg(long, value_name = "TEXT", default_value = "askdesk answer")]
    pub label: String,
    /// Race the other members of this group (e.g. `person`, the desktop's): all are offered a
    /// request at the same moment and the first answer settles it
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// How to answer
    #[arg(long, value_enum, default_value_t = Policy::First, conflicts_with = "exec")]
    pub policy: Policy,
    /// Answer with a command, run via `sh -c` for each request (see below)
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// Answer permission prompts too (an agent whose meta names a tool, as `askdesk hook` asks);
    /// by default a policy passes them to the next answerer
    #[arg(long, conflicts_with = "exec")]
    pub include_permissions: bool,
    /// Answer plan reviews too (intent plan-review); by default a policy passes them to the next
    /// answerer
    #[arg(long, conflicts_with = "exec")]
    pub include_plans: bool,
    /// Exit after handling this many requests
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    All,
    Agents,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Policy {
    First,
    Recommended,
    Skip,
    Dismiss,
    Delegate,
}

/// What the answerer sends back for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Claim(Answer),
    Delegate,
    Fail(RpcError),
}

impl Reply {
    fn into_result(self) -> Result<Option<Answer>, RpcError> {
        match self {
            Reply::Claim(answer) => Ok(Some(answer)),
            Reply::Delegate => Ok(None),
            Reply::Fail(error) => Err(error),
        }
    }
}

/// How requests are answered.
#[derive(Debug, Clone)]
enum How {
    Policy(Policy, Reach),
    Exec(Arc<str>),
}

/// Which of the requests a person must mean a policy answers besides ordinary questions; the
/// others it passes to the next answerer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    /// Permission prompts: the asking agent's meta names a tool (`askdesk hook`'s "Allow Bash?").
    pub permissions: bool,
    /// Plan reviews: a question with intent `plan-review`.
    pub plans: bool,
}

impl Reach {
    /// Why a policy leaves this request to the next answerer, or `None` when it answers it.
    pub fn leaves(self, agent: Option<&AgentInfo>, questions: &[Question]) -> Option<&'static str> {
        if !self.plans
            && questions
                .iter()
                .any(|q| q.intent.as_ref().is_some_and(Intent::is_plan_review))
        {
            return Some("a plan review (--include-plans answers it)");
        }
        if !self.permissions && askdesk_core::meta::is_permission_prompt(agent) {
            return Some("a permission prompt (--include-permissions answers it)");
        }
        None
    }
}

pub async fn run(args: AnswerArgs, socket: PathBuf) -> Result<()> {
    let how = match &args.exec {
        Some(command) => How::Exec(command.as_str().into()),
        None => How::Policy(
            args.policy,
            Reach {
                permissions: args.include_permissions,
                plans: args.include_plans,
            },
        ),
    };
    let scope = match args.scope {
        ScopeArg::All => Scope::All,
        ScopeArg::Agents => Scope::Agents,
    };
    let client = connect(&socket, "answer").await?;
    let (answerer, mut incoming) = client
        .register_answerer_in(
            scope,
            args.prepend,
            Some(&args.label),
            args.group.as_deref(),
        )
        .await?;
    tracing::info!(%answerer, "answering requests");
    if args.count == Some(0) {
        return Ok(());
    }

    let interrupted = askdesk_broker::host::interrupted();
    tokio::pin!(interrupted);
    let mut tasks = JoinSet::new();
    let mut handled = 0u64;
    loop {
        tokio::select! {
            _ = &mut interrupted => break,
            next = incoming.next() => match next {
                Some(request) => {
                    tasks.spawn(handle(request, how.clone()));
                }
                None => return Err(Error::Internal("the broker closed the connection".into())),
            },
            Some(done) = tasks.join_next() => {
                if matches!(done, Ok(true)) {
                    handled += 1;
                    if args.count.is_some_and(|count| handled >= count) {
                        break;
                    }
                }
            }
        }
    }
    // Replies are written by the client's writer task in order: once a ping's reply is back, every
    // reply queued before it has reached the broker, and exiting cannot lose one.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), client.ping()).await;
    Ok(())
}

/// Decides one request and replies; `false` when the request was withdrawn first.
async fn handle(request: IncomingRequest, how: How) -> bool {
    let cancelled = request.cancelled.clone();
    let reply = tokio::select! {
        _ = cancelled.cancelled() => return false,
        reply = decide(&request, &how) => reply,
    };
    if let Reply::Fail(error) = &reply {
        tracing::info!(code = error.code, message = %error.message, "failing a request");
    }
    request.reply(reply.into_result()).await;
    true
}

async fn decide(request: &IncomingRequest, how: &How) -> Reply {
    match how {
        How::Policy(policy, reach) => {
            let params = &request.params;
            match reach.leaves(params.agent.as_deref(), &params.questions) {
                Some(what) if *policy != Policy::Delegate => {
                    tracing::info!("passing {what} to the next answerer");
                    Reply::Delegate
                }
                _ => apply_policy(*policy, &params.questions),
            }
        }
        How::Exec(command) => match exec(command, &request.params).await {
            Ok(reply) => reply,
            Err(message) => Reply::Fail(RpcError::answerer_failure(message)),
        },
    }
}

/// A policy's reply to a batch.
pub fn apply_policy(policy: Policy, questions: &[Question]) -> Reply {
    let pick = |question: &Question, choose: fn(&Question) -> Option<&str>| match choose(question) {
        Some(label) => AnswerItem {
            id: question.id.clone(),
            selected: vec![label.to_owned()],
            ..Default::default()
        },
        None => AnswerItem::skipped(&question.id),
    };
    let answer_each = |choose: fn(&Question) -> Option<&str>| {
        Reply::Claim(Answer {
            answers: questions.iter().map(|q| pick(q, choose)).collect(),
        })
    };
    match policy {
        Policy::First => answer_each(first_option),
        Policy::Recommended => answer_each(|q| {
            q.options
                .iter()
                .find(|o| o.is_recommended())
                .map(|o| o.label.as_str())
                .or_else(|| first_option(q))
        }),
        Policy::Skip => answer_each(|_| None),
        Policy::Dismiss => Reply::Fail(RpcError::user_question(
            &UserQuestionError::cancelled_by_user(),
        )),
        Policy::Delegate => Reply::Delegate,
    }
}

fn first_option(question: &Question) -> Option<&str> {
    question.options.first().map(|o| o.label.as_str())
}

/// The process group of a running `--exec` command, killed whole when the command's future is
/// dropped before it finished (the request was withdrawn): `sh -c` and everything it started.
struct CommandGroup(Option<u32>);

impl CommandGroup {
    /// The command finished: nothing to kill.
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CommandGroup {
    fn drop(&mut self) {
        if let Some(Ok(group)) = self.0.map(libc::pid_t::try_from) {
            // SAFETY: killpg(2) on the group our child leads; a group that has ended is ESRCH.
            unsafe { libc::killpg(group, libc::SIGKILL) };
        }
    }
}

/// Runs `sh -c command` with the request on stdin; its stdout is the reply.
async fn exec(command: &str, params: &RequestParams<'_>) -> Result<Reply, String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A group of its own, so a withdrawn request can end what the command started too.
        .process_group(0)
        // A withdrawn request drops this future: the command is killed with it.
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run `sh -c {command}`: {e}"))?;
    let mut group = CommandGroup(child.id());
    let input = serde_json::to_vec(params).expect("request params serialize");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // A command that does not read its stdin must still be able to answer: ignore a broken pipe.
    let writer = async move {
        let _ = stdin.write_all(&input).await;
        let _ = stdin.shutdown().await;
    };
    let (_, output) = tokio::join!(writer, child.wait_with_output());
    group.disarm();
    let output = output.map_err(|e| format!("`{command}` failed: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr = stderr.trim();
        let status = output
            .status
            .code()
            .map_or_else(|| "a signal".to_owned(), |c| format!("status {c}"));
        return Err(if stderr.is_empty() {
            format!("`{command}` exited with {status}")
        } else {
            format!(
                "`{command}` exited with {status}: {}",
                truncate(stderr, 500)
            )
        });
    }
    parse_reply(&String::from_utf8_lossy(&output.stdout))
        .map_err(|e| format!("`{command}` printed {e}"))
}

/// What an `--exec` command may print: an answer, `null`, or `{"error": {"code"?, "message"}}`.
pub fn parse_reply(stdout: &str) -> Result<Reply, String> {
    #[derive(Deserialize)]
    struct Failure {
        code: Option<String>,
        message: String,
    }
    let value: Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("something that is not JSON ({e})"))?;
    if value.is_null() {
        return Ok(Reply::Delegate);
    }
    if let Some(error) = value.get("error") {
        let failure: Failure = serde_json::from_value(error.clone())
            .map_err(|e| format!("an error that is not {{\"code\", \"message\"}} ({e})"))?;
        return Ok(Reply::Fail(match failure.code {
            Some(code) => RpcError::user_question(&UserQuestionError::new(
                ErrorCode::parse(&code),
                failure.message,
            )),
            None => RpcError::answerer_failure(failure.message),
        }));
    }
    let answer: Answer = serde_json::from_value(value)
        .map_err(|e| format!("something that is not an answer, null or an error ({e})"))?;
    Ok(Reply::Claim(answer))
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_broker::protocol;
    use serde_json::json;

    fn batch() -> Vec<Question> {
        serde_json::from_value(json!([
            { "id": "a", "question": "?", "options": [{ "label": "One" }, { "label": "Two (Recommended)" }] },
            { "id": "b", "question": "?", "options": [{ "label": "Only" }], "multiSelect": true },
            { "id": "c", "question": "free text?" }
        ]))
        .unwrap()
    }

    fn claimed(policy: Policy) -> Value {
        match apply_policy(policy, &batch()) {
            Reply::Claim(answer) => serde_json::to_value(answer).unwrap(),
            other => panic!("{policy:?} gave {other:?}"),
        }
    }

    #[test]
    fn policies_answer_as_documented() {
        assert_eq!(
            claimed(Policy::First),
            json!({ "answers": [
                { "id": "a", "selected": ["One"] }, { "id": "b", "selected": ["Only"] }, { "id": "c", "selected": [] }
            ]})
        );
        assert_eq!(
            claimed(Policy::Recommended),
            json!({ "answers": [
                { "id": "a", "selected": ["Two (Recommended)"] }, { "id": "b", "selected": ["Only"] },
                { "id": "c", "selected": [] }
            ]})
        );
        assert_eq!(
            claimed(Policy::Skip),
            json!({ "answers": [{ "id": "a", "selected": [] }, { "id": "b", "selected": [] }, { "id": "c", "selected": [] }]})
        );
        assert_eq!(apply_policy(Policy::Delegate, &batch()), Reply::Delegate);
        let Reply::Fail(error) = apply_policy(Policy::Dismiss, &batch()) else {
            panic!("dismiss must fail")
        };
        assert_eq!(error.code, protocol::USER_QUESTION_ERROR);
        assert_eq!(error.data_code(), Some("ASK_CANCELLED"));
        assert_eq!(error.message, "the user cancelled ask_user_question");
    }

    /// Permission prompts and plan reviews are left to the next answerer unless included.
    #[test]
    fn policies_leave_prompts_and_plans_unless_included() {
        let plan: Vec<Question> = serde_json::from_value(json!([{
            "id": "plan", "question": "Approve this plan?", "detail": "# Plan",
            "options": [{ "label": "Approve" }, { "label": "Keep planning" }],
            "intent": { "kind": "plan-review", "approve": "Approve" }
        }]))
        .unwrap();
        let hook: AgentInfo = serde_json::from_value(
            json!({ "id": "claude-code-s", "meta": { "tool": "Bash", "command": "curl x | sh" } }),
        )
        .unwrap();
        let plain: AgentInfo =
            serde_json::from_value(json!({ "id": "a", "meta": { "tool": null } })).unwrap();
        let none = Reach::default();
        let all = Reach {
            permissions: true,
            plans: true,
        };
        assert!(none.leaves(None, &plan).unwrap().contains("plan review"));
        assert!(none
            .leaves(Some(&hook), &batch())
            .unwrap()
            .contains("permission prompt"));
        assert_eq!(none.leaves(Some(&plain), &batch()), None);
        assert_eq!(none.leaves(None, &batch()), None);
        assert_eq!(all.leaves(Some(&hook), &plan), None);
        // Each flag opens its own kind only.
        let plans = Reach {
            plans: true,
            ..Reach::default()
        };
        assert_eq!(plans.leaves(None, &plan), None);
        assert!(plans.leaves(Some(&hook), &plan).is_some());
        let permissions = Reach {
            permissions: true,
            ..Reach::default()
        };
        assert_eq!(permissions.leaves(Some(&hook), &batch()), None);
        assert!(permissions.leaves(Some(&hook), &plan).is_some());
    }

    #[test]
    fn exec_output_is_parsed() {
        assert_eq!(parse_reply(" null\n").unwrap(), Reply::Delegate);
        assert_eq!(
            parse_reply(r#"{"answers":[{"id":"a","selected":["One"],"custom":"x"}]}"#).unwrap(),
            Reply::Claim(Answer {
                answers: vec![AnswerItem {
                    id: "a".into(),
                    selected: vec!["One".into()],
                    custom: Some("x".into()),
                    ..Default::default()
                }]
            })
        );
        let Reply::Fail(domain) =
            parse_reply(r#"{"error":{"code":"RATE_LIMITED","message":"slow down"}}"#).unwrap()
        else {
            panic!("expected a failure")
        };
        assert_eq!(
            (domain.code, domain.data_code(), domain.message.as_str()),
            (-32001, Some("RATE_LIMITED"), "slow down")
        );
        let Reply::Fail(internal) = parse_reply(r#"{"error":{"message":"broken"}}"#).unwrap()
        else {
            panic!("expected a failure")
        };
        assert_eq!(internal.code, protocol::INTERNAL_ERROR);
        for bad in ["", "yes", "[]", r#"{"answers":7}"#, r#"{"error":"x"}"#] {
            assert!(parse_reply(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn exec_runs_the_command_with_the_request() {
        let params: RequestParams =
            serde_json::from_value(json!({ "questions": [{ "id": "a", "question": "?" }] }))
                .unwrap();
        // The command echoes the question id back as the answer's id.
        let reply = exec(r#"id=$(sed 's/.*"id":"\([^"]*\)".*/\1/'); printf '{"answers":[{"id":"%s","selected":[]}]}' "$id""#, &params)
            .await
            .unwrap();
        assert_eq!(
            reply,
            Reply::Claim(Answer {
                answers: vec![AnswerItem::skipped("a")]
            })
        );
        let failed = exec("echo oops >&2; exit 3", &params).await.unwrap_err();
        assert!(
            failed.contains("status 3") && failed.contains("oops"),
            "{failed}"
        );
        assert_eq!(exec("echo null", &params).await.unwrap(), Reply::Delegate);
    }

    /// A withdrawn request drops the command's future: `sh -c` and what it started both end.
    #[tokio::test]
    async fn a_dropped_command_ends_with_everything_it_started() {
        let params: RequestParams =
            serde_json::from_value(json!({ "questions": [{ "id": "a", "question": "?" }] }))
                .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        // A grandchild of ours (the sleep), its pid written down, then a wait for it.
        let command = format!("sleep 300 & echo $! > '{}'; wait", pid_file.display());
        let running = exec(&command, &params);
        let started = tokio::time::timeout(std::time::Duration::from_secs(2), running).await;
        assert!(started.is_err(), "the command finished on its own");
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Dropped (the timeout dropped the future): the sleep is gone within a moment (or a
        // zombie, for whoever adopted it to reap).
        let alive = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while alive() {
            assert!(
                std::time::Instant::now() < deadline,
                "the command's child {pid} outlived the withdrawn request"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
