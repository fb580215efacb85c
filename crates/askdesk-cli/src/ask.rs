//! `askdesk ask`: one batch of questions from flags or JSON, the answer JSON on stdout.

use std::path::{Path, PathBuf};
use std::time::Duration;

use askdesk_broker::protocol::RpcError;
use askdesk_core::{
    meta, AgentRegistration, AskRequest, ErrorCode, Handle, Intent, Question, QuestionOption,
    UserQuestionError,
};
use clap::Args;
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::connect::{connect, current_dir};
use crate::duration;
use crate::exit::{Error, Result};
use crate::output::outln;

/// Ask one batch of questions and print the answer as JSON
#[derive(Debug, Args)]
#[command(after_help = ASK_AFTER_HELP)]
pub struct AskArgs {
    /// The question (or use --question)
    #[arg(value_name = "QUESTION", conflicts_with_all = ["question", "json"])]
    pub positional: Option<String>,
    /// The question
    #[arg(short, long, value_name = "TEXT", conflicts_with = "json")]
    pub question: Option<String>,
    /// The question's id, named again in the answer
    #[arg(long, value_name = "ID", default_value = "q1", conflicts_with = "json")]
    pub id: String,
    /// An option: its label, optionally `=` and a description; repeat for more. The first `=` splits.
    #[arg(
        short,
        long = "option",
        value_name = "LABEL[=DESCRIPTION]",
        conflicts_with = "json"
    )]
    pub options: Vec<String>,
    /// Several options may be chosen
    #[arg(short, long, conflicts_with = "json")]
    pub multi: bool,
    /// A short heading shown above the question
    #[arg(long, value_name = "TEXT", conflicts_with = "json")]
    pub header: Option<String>,
    /// Supporting markdown shown with the question, inline
    #[arg(long, value_name = "MARKDOWN", conflicts_with_all = ["json", "detail_file"])]
    pub detail: Option<String>,
    /// Supporting markdown shown with the question, from a file (`-` reads stdin)
    #[arg(long, value_name = "PATH|-", conflicts_with = "json")]
    pub detail_file: Option<PathBuf>,
    /// Ask for a plan review: the detail is the plan; without options, offers "Approve" and "Keep planning"
    #[arg(long, conflicts_with = "json")]
    pub plan_review: bool,
    /// The option label that approves the plan (required with --plan-review and --option)
    #[arg(long, value_name = "LABEL", requires = "plan_review")]
    pub approve: Option<String>,
    /// The whole batch as JSON: `{"questions":[...]}` or a bare array (`-` reads stdin)
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<PathBuf>,
    /// Ask as an agent with this id: registered as a root agent for the duration of the ask
    #[arg(long, value_name = "ID")]
    pub agent_id: Option<String>,
    /// The agent's display label (registers an agent; the id defaults to `askdesk-ask-<pid>`)
    #[arg(long, value_name = "TEXT")]
    pub agent_label: Option<String>,
    /// Ask as an agent registered elsewhere: its instance token (with --agent-id); nothing is registered
    #[arg(long, value_name = "TOKEN", requires = "agent_id", conflicts_with_all = ["agent_label", "owner", "meta"])]
    pub agent_instance: Option<String>,
    /// Register the agent as owned by this live agent (a delegated child; its asks fail DELEGATED_CALLER)
    #[arg(long, value_name = "ID:INSTANCE")]
    pub owner: Option<String>,
    /// Extra display information about the agent (`cwd` is added from the current directory); repeatable
    #[arg(long, value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Give up after this many seconds, counted from the start (a broker that does not answer
    /// included), more than 0 and at most 31536000 (365 days); the ask is cancelled: exit 10
    #[arg(long, value_name = "SECONDS", value_parser = duration::seconds)]
    pub timeout: Option<Duration>,
    /// Print the answer indented
    #[arg(long)]
    pub pretty: bool,
}

// The exit-status table comes from `exit::exit_table!`, the one place it is written.
const ASK_AFTER_HELP: &str = concat!(
        "Prints the answer JSON on stdout, e.g. {\"answers\":[{\"id\":\"q1\",\"selected\":[\"Yes\"]}]}. \
On failure prints `Error: <message>` on stderr and exits with the status of its error code. \
Ctrl-C while waiting cancels the ask (exit 10).

",
        crate::exit::exit_table!(),
        "

Examples:
  askdesk ask 'Delete the build cache?' -o 'Yes (Recommended)=frees 2 GB' -o No
  askdesk ask --id langs --multi -q 'Which languages?' -o Rust -o Go -o Python
  askdesk ask 'What should the release be called?'          # free text: the answer has `custom`
  askdesk ask --plan-review --detail-file PLAN.md 'Approve this plan?'
  askdesk ask --agent-label 'release bot' 'Ship it?' -o Yes -o No
  echo '[{\"id\":\"a\",\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"}]}]' | askdesk ask --json -
  askdesk ask --timeout 60 'Still there?' -o Yes || echo \"exit $?\""
);

/// The option labels a plan review offers when no `--option` is given.
pub const APPROVE: &str = "Approve";
pub const KEEP_PLANNING: &str = "Keep planning";

pub async fn run(args: AskArgs, socket: PathBuf) -> Result<()> {
    let questions = match &args.json {
        Some(path) => parse_batch(&read_input(path).await?)?,
        None => {
            let detail = match &args.detail_file {
                Some(path) => Some(read_input(path).await?),
                None => args.detail.clone(),
            };
            vec![question_from_flags(&args, detail)?]
        }
    };
    let agent = agent_plan(&args)?;

    // The timeout and Ctrl-C count from here: a broker that accepts but does not answer (stopped,
    // wedged) is given up on like a user who does not answer.
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(cancel_on_interrupt(cancel.clone(), args.timeout));
    let connected = async {
        let client = connect(&socket, "ask").await?;
        let (handle, registered) = match agent {
            AgentPlan::None => (None, false),
            AgentPlan::Existing(handle) => (Some(handle), false),
            AgentPlan::Register(registration) => {
                (Some(client.register_agent(&registration).await?), true)
            }
        };
        Ok::<_, Error>((client, handle, registered))
    };
    let (client, handle, registered) = tokio::select! {
        connected = connected => connected?,
        () = cancel.cancelled() => return Err(aborted()),
    };
    let result = client
        .ask(
            &AskRequest {
                questions,
                agent: handle.clone(),
            },
            &cancel,
        )
        .await;
    watcher.abort();
    if let (true, Some(handle)) = (registered, &handle) {
        // Closing the connection would unregister it too; this makes it immediate.
        client.unregister_agent_promptly(handle).await;
    }
    match result {
        Ok(answer) => {
            let text = if args.pretty {
                serde_json::to_string_pretty(&answer)
            } else {
                serde_json::to_string(&answer)
            };
            outln!("{}", text.expect("an answer serializes"))
        }
        Err(error) => match Error::from(error) {
            // However the client reports a cancellation we asked for, it is an abort.
            Error::Client(_) if cancel.is_cancelled() => Err(aborted()),
            Error::Rpc(error)
                if error.question_code() == Some(ErrorCode::AskCancelled.as_str()) =>
            {
                Err(dismissed(error))
            }
            error => Err(error),
        },
    }
}

/// The error of an ask cancelled by Ctrl-C, SIGTERM or `--timeout`: `ASK_ABORTED`, as from the
/// broker.
fn aborted() -> Error {
    Error::Rpc(RpcError::user_question(&UserQuestionError::aborted()))
}

/// What `askdesk ask` says when the person dismissed the question. The wire message is the one
/// protocol 2 gives `ASK_CANCELLED`, written for an agent calling `ask_user_question`; the exit
/// status (16) and `data.code` stay.
pub const DISMISSED: &str = "the question was dismissed: the person chose not to answer it";

fn dismissed(error: RpcError) -> Error {
    Error::Rpc(error.with_message(DISMISSED))
}

/// Cancels the ask on Ctrl-C, SIGTERM, or when the timeout passes.
async fn cancel_on_interrupt(cancel: CancellationToken, timeout: Option<Duration>) {
    let timeout = async {
        match timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = askdesk_broker::host::interrupted() => {}
        _ = timeout => {}
    }
    cancel.cancel();
}

/// Reads a file, or stdin for `-`.
pub async fn read_input(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        tokio::io::stdin()
            .read_to_string(&mut text)
            .await
            .map_err(|e| Error::Input(format!("cannot read stdin: {e}")))?;
        Ok(text)
    } else {
        tokio::fs::read_to_string(path)
            .await
            .map_err(|e| Error::Input(format!("cannot read {}: {e}", path.display())))
    }
}

/// A batch as JSON: `{"questions": [...]}` or a bare array of questions.
pub fn parse_batch(text: &str) -> Result<Vec<Question>> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| Error::Input(format!("--json: not JSON: {e}")))?;
    let questions = match value {
        Value::Array(_) => value,
        Value::Object(mut object) => object.remove("questions").ok_or_else(|| {
            Error::Input("--json: expected {\"questions\": [...]} or an array of questions".into())
        })?,
        _ => {
            return Err(Error::Input(
                "--json: expected {\"questions\": [...]} or an array of questions".into(),
            ))
        }
    };
    // The unknown keys, each as its path and its name.
    let unknown = |questions: &Value| -> Result<Vec<(String, String)>> {
        let mut unknown = Vec::new();
        serde_ignored::deserialize(questions, |path| unknown.push(describe(&path)))
            .map(|_: Vec<Question>| ())
            .map_err(|e| Error::Input(format!("--json: questions: {e}")))?;
        Ok(unknown)
    };
    // A key the protocol does not know is refused, not dropped: a misspelt `multiSelect` would
    // otherwise ask a single-select question.
    if let Some((path, key)) = unknown(&questions)?.into_iter().next() {
        let camel = camel_case(&key);
        let mut renamed = questions.clone();
        rename_keys(&mut renamed, &key, &camel);
        let known = camel != key && !unknown(&renamed)?.iter().any(|(_, k)| *k == camel);
        let hint = if known {
            format!(" (the protocol spells it `{camel}`)")
        } else {
            String::new()
        };
        return Err(Error::Input(format!(
            "--json: {path}: unknown key `{key}`{hint}"
        )));
    }
    serde_json::from_value(questions).map_err(|e| Error::Input(format!("--json: questions: {e}")))
}

/// A path serde_ignored reports as the field path of the batch (`questions[0].multi_select`),
/// and the key at its end.
fn describe(path: &serde_ignored::Path<'_>) -> (String, String) {
    use serde_ignored::Path;
    match path {
        Path::Root => ("questions".to_owned(), String::new()),
        Path::Seq { parent, index } => (format!("{}[{index}]", describe(parent).0), String::new()),
        Path::Map { parent, key } => (format!("{}.{key}", describe(parent).0), key.clone()),
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => describe(parent),
    }
}

/// `multi_select` as the protocol spells its keys: `multiSelect`.
fn camel_case(key: &str) -> String {
    let mut parts = key.split('_');
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// Renames every object key `from` to `to`, at any depth.
fn rename_keys(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::Object(object) => {
            if let Some(moved) = object.remove(from) {
                object.insert(to.to_owned(), moved);
            }
            object.values_mut().for_each(|v| rename_keys(v, from, to));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_keys(v, from, to)),
        _ => {}
    }
}

/// The one question the flags describe.
pub fn question_from_flags(args: &AskArgs, detail: Option<String>) -> Result<Question> {
    let text = args
        .positional
        .clone()
        .or_else(|| args.question.clone())
        .ok_or_else(|| {
            Error::Usage(
                "give a question (QUESTION or --question TEXT) or a batch (--json FILE)".into(),
            )
        })?;
    let mut options: Vec<QuestionOption> =
        args.options.iter().map(|spec| parse_option(spec)).collect();
    let intent = if args.plan_review {
        let approve = match (&args.approve, options.is_empty()) {
            (approve, true) => {
                let approve = approve.clone().unwrap_or_else(|| APPROVE.to_owned());
                options = vec![
                    QuestionOption {
                        label: approve.clone(),
                        description: Some("Go ahead with this plan".into()),
                        ..Default::default()
                    },
                    QuestionOption {
                        label: KEEP_PLANNING.to_owned(),
                        description: Some("Revise the plan first; say what to change".into()),
                        ..Default::default()
                    },
                ];
                approve
            }
            (Some(approve), false) => approve.clone(),
            (None, false) => {
                return Err(Error::Usage(
                    "--plan-review with --option needs --approve LABEL".into(),
                ));
            }
        };
        Some(Intent {
            kind: Intent::PLAN_REVIEW.to_owned(),
            approve,
        })
    } else {
        None
    };
    Ok(Question {
        id: args.id.clone(),
        question: text,
        header: args.header.clone(),
        detail,
        options,
        multi_select: args.multi,
        intent,
        ..Default::default()
    })
}

/// `LABEL` or `LABEL=DESCRIPTION`; the first `=` splits.
pub fn parse_option(spec: &str) -> QuestionOption {
    match spec.split_once('=') {
        Some((label, description)) => QuestionOption {
            label: label.to_owned(),
            description: Some(description.to_owned()),
            ..Default::default()
        },
        None => QuestionOption {
            label: spec.to_owned(),
            ..Default::default()
        },
    }
}

/// Whom the ask is made for.
#[derive(Debug, PartialEq)]
pub enum AgentPlan {
    None,
    /// An agent registered elsewhere (`--agent-id` with `--agent-instance`).
    Existing(Handle),
    /// An agent this command registers for the duration of the ask.
    Register(AgentRegistration),
}

pub fn agent_plan(args: &AskArgs) -> Result<AgentPlan> {
    if let (Some(id), Some(instance)) = (&args.agent_id, &args.agent_instance) {
        return Ok(AgentPlan::Existing(Handle {
            id: id.clone(),
            instance: instance.clone(),
        }));
    }
    if args.agent_id.is_none()
        && args.agent_label.is_none()
        && args.owner.is_none()
        && args.meta.is_empty()
    {
        return Ok(AgentPlan::None);
    }
    let owner = args.owner.as_deref().map(parse_handle).transpose()?;
    let mut meta = Map::new();
    if let Some(cwd) = current_dir() {
        meta.insert(meta::CWD.into(), Value::String(cwd));
    }
    meta.insert(meta::PID.into(), Value::from(std::process::id()));
    for pair in &args.meta {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--meta {pair:?}: expected KEY=VALUE")))?;
        meta.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    Ok(AgentPlan::Register(AgentRegistration {
        id: args
            .agent_id
            .clone()
            .unwrap_or_else(|| format!("askdesk-ask-{}", std::process::id())),
        owner,
        label: args.agent_label.clone(),
        meta: Some(meta),
    }))
}

/// `ID:INSTANCE`; the last `:` splits, since instance tokens never contain one.
fn parse_handle(spec: &str) -> Result<Handle> {
    match spec.rsplit_once(':') {
        Some((id, instance)) if !id.is_empty() && !instance.is_empty() => Ok(Handle {
            id: id.to_owned(),
            instance: instance.to_owned(),
        }),
        _ => Err(Error::Usage(format!(
            "--owner {spec:?}: expected ID:INSTANCE"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use serde_json::json;

    fn ask_args(argv: &[&str]) -> AskArgs {
        let mut full = vec!["askdesk", "ask"];
        full.extend_from_slice(argv);
        match Cli::try_parse_from(full).expect("parses").command {
            Command::Ask(args) => *args,
            other => panic!("parsed as {other:?}"),
        }
    }

    fn flags_to_json(argv: &[&str]) -> Value {
        let args = ask_args(argv);
        serde_json::to_value(question_from_flags(&args, args.detail.clone()).unwrap()).unwrap()
    }

    #[test]
    fn flags_make_one_question() {
        let cases = [
            (
                vec!["Proceed?"],
                json!({ "id": "q1", "question": "Proceed?" }),
            ),
            (
                vec![
                    "--id",
                    "cleanup",
                    "-q",
                    "Delete?",
                    "-o",
                    "Yes (Recommended)=frees 2 GB",
                    "-o",
                    "No",
                ],
                json!({ "id": "cleanup", "question": "Delete?", "options": [
                    { "label": "Yes (Recommended)", "description": "frees 2 GB" }, { "label": "No" }
                ]}),
            ),
            (
                vec![
                    "Which?", "--multi", "--header", "Langs", "--detail", "*md*", "-o", "a=b=c",
                    "-o", "d",
                ],
                json!({ "id": "q1", "question": "Which?", "header": "Langs", "detail": "*md*", "multiSelect": true,
                        "options": [{ "label": "a", "description": "b=c" }, { "label": "d" }] }),
            ),
            (
                vec!["Plan ok?", "--plan-review", "--detail", "# Plan"],
                json!({ "id": "q1", "question": "Plan ok?", "detail": "# Plan",
                        "options": [
                            { "label": "Approve", "description": "Go ahead with this plan" },
                            { "label": "Keep planning", "description": "Revise the plan first; say what to change" }
                        ],
                        "intent": { "kind": "plan-review", "approve": "Approve" } }),
            ),
            (
                vec![
                    "Plan ok?",
                    "--plan-review",
                    "--approve",
                    "Ship",
                    "-o",
                    "Ship",
                    "-o",
                    "Wait",
                ],
                json!({ "id": "q1", "question": "Plan ok?",
                        "options": [{ "label": "Ship" }, { "label": "Wait" }],
                        "intent": { "kind": "plan-review", "approve": "Ship" } }),
            ),
        ];
        for (argv, expected) in cases {
            assert_eq!(flags_to_json(&argv), expected, "{argv:?}");
        }
    }

    #[test]
    fn inconsistent_flags_are_usage_errors() {
        let no_question = ask_args(&["-o", "Yes"]);
        assert!(matches!(
            question_from_flags(&no_question, None),
            Err(Error::Usage(_))
        ));
        let no_approve = ask_args(&["Plan?", "--plan-review", "-o", "A"]);
        assert!(matches!(
            question_from_flags(&no_approve, None),
            Err(Error::Usage(_))
        ));
        for argv in [
            vec!["askdesk", "ask", "Q", "--json", "-"],
            vec!["askdesk", "ask", "Q", "--approve", "A"],
            vec!["askdesk", "ask", "Q", "--agent-instance", "t"],
            vec!["askdesk", "ask", "Q", "-q", "Q2"],
        ] {
            assert!(
                Cli::try_parse_from(&argv).is_err(),
                "{argv:?} should not parse"
            );
        }
    }

    #[test]
    fn a_json_key_the_protocol_does_not_know_is_refused_by_name() {
        let error = parse_batch(r#"[{"id":"a","question":"?","multi_select":true}]"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "--json: questions[0].multi_select: unknown key `multi_select` (the protocol spells it `multiSelect`)"
        );
        let error = parse_batch(
            r#"{"questions":[{"id":"a","question":"?"},{"id":"b","question":"?","options":[{"label":"x","hint":"y"}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "--json: questions[1].options[0].hint: unknown key `hint`"
        );
    }

    #[test]
    fn json_batches_come_in_two_shapes() {
        let wrapped =
            parse_batch(r#"{"questions":[{"id":"a","question":"?","multiSelect":true}]}"#).unwrap();
        let bare = parse_batch(r#"[{"id":"a","question":"?","multiSelect":true}]"#).unwrap();
        assert_eq!(wrapped, bare);
        assert!(wrapped[0].multi_select);
        assert_eq!(parse_batch("[]").unwrap(), vec![]);
        for bad in ["nope", "7", r#"{"qs":[]}"#, r#"[{"id":1}]"#] {
            assert!(matches!(parse_batch(bad), Err(Error::Input(_))), "{bad}");
        }
    }

    #[test]
    fn agent_flags_pick_a_plan() {
        assert_eq!(agent_plan(&ask_args(&["Q"])).unwrap(), AgentPlan::None);
        assert_eq!(
            agent_plan(&ask_args(&[
                "Q",
                "--agent-id",
                "a",
                "--agent-instance",
                "t"
            ]))
            .unwrap(),
            AgentPlan::Existing(Handle {
                id: "a".into(),
                instance: "t".into()
            })
        );
        let AgentPlan::Register(reg) = agent_plan(&ask_args(&[
            "Q",
            "--agent-label",
            "bot",
            "--owner",
            "p:x:tok",
            "--meta",
            "repo=r",
        ]))
        .unwrap() else {
            panic!("expected a registration");
        };
        assert_eq!(reg.id, format!("askdesk-ask-{}", std::process::id()));
        assert_eq!(reg.label.as_deref(), Some("bot"));
        assert_eq!(
            reg.owner,
            Some(Handle {
                id: "p:x".into(),
                instance: "tok".into()
            })
        );
        let meta = reg.meta.unwrap();
        assert_eq!(meta["repo"], "r");
        assert!(meta["cwd"].is_string());
        assert!(matches!(
            agent_plan(&ask_args(&["Q", "--owner", "nocolon"])),
            Err(Error::Usage(_))
        ));
    }
}
