//! `askdesk status`: the broker's version, connections, agent tree, answerer chain and pending requests.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use askdesk_broker::protocol::methods::{HistoryState, HistoryStatus, StatusResult};
use askdesk_core::AgentSummary;
use askdesk_i18n::t;
use clap::Args;
use serde_json::Value;

use crate::connect::connect;
use crate::duration;
use crate::exit::{Error, Result};
use crate::output::{out, outln};
use crate::terminal::one_line;

/// Show what the broker holds: connections, agents, answerers, pending requests
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 the status was printed; 2 usage error; 3 no broker is running; \
6 the broker is at its connection limit; 20 the broker did not answer within --timeout (stopped or \
overloaded), closed the connection or answered out of shape, or another I/O error (such as no \
permission on the socket).

Examples:
  askdesk status
  askdesk status --json | jq .pending
  askdesk status --timeout 30                       # a busy broker may take its time"
)]
pub struct StatusArgs {
    /// Print the broker's status object as JSON
    #[arg(long)]
    pub json: bool,
    /// Give up when the broker has not answered after this many seconds (exit 20); more than 0
    /// and at most 31536000 (365 days)
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = duration::seconds)]
    pub timeout: Duration,
}

pub async fn run(args: StatusArgs, socket: PathBuf) -> Result<()> {
    // A broker that accepts but never answers (stopped, or wedged) must not hang the command.
    let asked = async {
        let client = connect(&socket, "status").await?;
        Ok::<_, Error>(client.status().await?)
    };
    let status = tokio::time::timeout(args.timeout, asked)
        .await
        .map_err(|_| Error::NoAnswer {
            path: socket.clone(),
            waited: args.timeout,
        })??;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&status).expect("a status serializes")
        )?;
    } else {
        out!("{}", render(&status))?;
    }
    Ok(())
}

/// The journal's state, where it is, and what is wrong with it.
fn history_line(history: &HistoryStatus) -> String {
    let mut line = match history.state {
        HistoryState::On => t!("status-history-on"),
        HistoryState::Off => t!("status-history-off"),
        HistoryState::Failing => t!("status-history-failing"),
        HistoryState::Unavailable => t!("status-history-unavailable"),
    };
    if let Some(path) = &history.path {
        let _ = write!(line, "  {}", one_line(path));
    }
    if let Some(error) = &history.error {
        let _ = write!(line, "  ({})", one_line(error));
    }
    line
}

/// The status (the broker's `askdesk/status` result) as text. Every text a client supplied goes
/// through [`one_line`], so a label cannot act on the terminal or break the layout.
pub fn render(status: &StatusResult) -> String {
    let mut out = String::new();
    let server = t!(
        "status-server",
        name = one_line(&status.server.name),
        version = one_line(&status.server.version),
        socket = one_line(&status.socket)
    );
    let _ = writeln!(out, "{server}");
    let _ = writeln!(
        out,
        "{}",
        t!("status-connections", count = status.connections)
    );
    if let Some(history) = &status.history {
        let _ = writeln!(
            out,
            "{}",
            t!("status-history", state = history_line(history))
        );
    }

    let _ = writeln!(out, "{}", t!("status-agents", count = status.agents.len()));
    for root in status.agents.iter().filter(|a| a.owner.is_none()) {
        agent_tree(&mut out, &status.agents, root, 1);
    }

    let _ = writeln!(
        out,
        "{}",
        t!("status-answerers", count = status.answerers.len())
    );
    for (n, answerer) in status.answerers.iter().enumerate() {
        let _ = write!(
            out,
            "  {}. {}  scope={}",
            n + 1,
            one_line(&answerer.label),
            answerer.scope,
        );
        if let Some(group) = &answerer.group {
            let _ = write!(out, "  group={}", one_line(group));
        }
        let prepended = if answerer.prepend {
            t!("status-prepended")
        } else {
            String::new()
        };
        let _ = writeln!(out, "{prepended}");
    }

    let _ = writeln!(
        out,
        "{}",
        t!("status-pending", count = status.pending.len())
    );
    for request in &status.pending {
        let agent = match &request.agent {
            None => t!("status-no-agent"),
            Some(agent) => agent_name(&agent.id, agent.label.as_deref()),
        };
        let line = t!(
            "status-request",
            agent = agent,
            questions = request.questions,
            age = age(request.age_ms)
        );
        let held = request
            .holder
            .as_ref()
            .map(|h| t!("status-held-by", holder = one_line(h)))
            .unwrap_or_default();
        let _ = writeln!(out, "  #{}  {line}{held}", request.request.0);
    }
    out
}

fn agent_tree(out: &mut String, agents: &[AgentSummary], agent: &AgentSummary, depth: usize) {
    let meta = match &agent.meta {
        Some(meta) if !meta.is_empty() => {
            let pairs: Vec<String> = meta
                .iter()
                .map(|(k, v)| format!("{}={}", one_line(k), one_line(&text(v))))
                .collect();
            format!("  {}", pairs.join(" "))
        }
        _ => String::new(),
    };
    let role = if depth == 1 {
        String::new()
    } else {
        t!("status-owned")
    };
    let _ = writeln!(
        out,
        "{}{}{role}{meta}",
        "  ".repeat(depth),
        agent_name(&agent.id, agent.label.as_deref())
    );
    for child in agents
        .iter()
        .filter(|a| a.owner.as_deref() == Some(agent.id.as_str()))
    {
        agent_tree(out, agents, child, depth + 1);
    }
}

fn agent_name(id: &str, label: Option<&str>) -> String {
    match label {
        Some(label) => format!("{} [{}]", one_line(label), one_line(id)),
        None => one_line(id),
    }
}

/// A free-form `meta` value as text: strings without their quotes.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_owned(),
        other => other.to_string(),
    }
}

/// `42s`, `3m 5s`, `2h 10m`.
pub fn age(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..=59 => t!("age-seconds", seconds = secs),
        60..=3599 => t!("age-minutes", minutes = secs / 60, seconds = secs % 60),
        _ => t!("age-hours", hours = secs / 3600, minutes = secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_tree_chain_and_pending() {
        let status = serde_json::from_value(json!({
            "server": { "name": "askdesk", "version": "0.1.0" },
            "socket": "/run/user/1000/askdesk/askdesk.sock",
            "connections": 3,
            "agents": [
                { "id": "a", "owner": null, "root": true, "label": "coder", "meta": { "cwd": "/src" } },
                { "id": "b", "owner": "a", "root": false },
                { "id": "c", "owner": null, "root": true }
            ],
            "answerers": [
                { "answerer": "answerer-2", "label": "autopilot", "scope": "agents", "prepend": true },
                { "answerer": "answerer-1", "label": "desktop", "scope": "all", "prepend": false, "group": "person" },
                { "answerer": "answerer-3", "label": "phone", "scope": "all", "prepend": true, "group": "person" }
            ],
            "pending": [
                { "request": 4, "agent": { "id": "a", "label": "coder" }, "questions": 2, "holder": "desktop", "ageMs": 75_000 },
                { "request": 5, "agent": null, "questions": 1, "holder": null, "ageMs": 0 }
            ]
        }))
        .unwrap();
        let expected = "\
askdesk 0.1.0 at /run/user/1000/askdesk/askdesk.sock
connections: 3
agents: 3
  coder [a]  cwd=/src
    b  (owned)
  c
answerers (chain order): 3
  1. autopilot  scope=agents  prepended
  2. desktop  scope=all  group=person
  3. phone  scope=all  group=person  prepended
pending requests: 2
  #4  coder [a]  2 questions  waiting 1m 15s  held by desktop
  #5  no agent  1 question  waiting 0s
";
        assert_eq!(render(&status), expected);
    }

    #[test]
    fn history_says_whether_answers_are_recorded() {
        let line = |value| history_line(&serde_json::from_value(value).unwrap());
        assert_eq!(
            line(json!({ "state": "on", "path": "/h/history.jsonl" })),
            "on  /h/history.jsonl"
        );
        assert_eq!(line(json!({ "state": "off" })), "off (--no-history)");
        assert_eq!(
            line(json!({ "state": "failing", "path": "/h/history.jsonl", "error": "/h/history.jsonl: No space left on device (os error 28)" })),
            "FAILING, answers are delivered but not recorded  /h/history.jsonl  (/h/history.jsonl: No space left on device (os error 28))"
        );
        assert_eq!(
            line(json!({ "state": "unavailable", "error": "/h: Not a directory" })),
            "UNAVAILABLE, nothing is recorded  (/h: Not a directory)"
        );
    }

    #[test]
    fn control_characters_are_shown_as_escapes() {
        let status = serde_json::from_value(json!({
            "server": { "name": "askdesk", "version": "0.1.0" },
            "socket": "/s",
            "connections": 2,
            "agents": [{ "id": "id\u{1b}[2Jx", "owner": null, "root": true,
                         "label": "lab\u{1b}[1A\rFAKE", "meta": { "cwd": "/t\u{1b}[31m", "k\nk": "v\u{202e}v" } }],
            "answerers": [{ "answerer": "answerer-1", "label": "ans\u{1b}]0;T\u{7}", "scope": "all", "prepend": false }],
            "pending": [{ "request": 1, "agent": { "id": "id\u{1b}[2Jx", "label": null }, "questions": 1,
                          "holder": "ans\u{1b}]0;T\u{7}", "ageMs": 0 }]
        }))
        .unwrap();
        let expected = r"askdesk 0.1.0 at /s
connections: 2
agents: 1
  lab\u{1b}[1A FAKE [id\u{1b}[2Jx]  cwd=/t\u{1b}[31m k k=v\u{202e}v
answerers (chain order): 1
  1. ans\u{1b}]0;T\u{7}  scope=all
pending requests: 1
  #1  id\u{1b}[2Jx  1 question  waiting 0s  held by ans\u{1b}]0;T\u{7}
";
        assert_eq!(render(&status), expected);
    }

    #[test]
    fn ages_read_naturally() {
        for (ms, expected) in [
            (0, "0s"),
            (59_999, "59s"),
            (60_000, "1m 0s"),
            (7_500_000, "2h 5m"),
        ] {
            assert_eq!(age(ms), expected);
        }
    }
}
