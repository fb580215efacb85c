//! `askdesk status`: the broker's version, connections, agent tree, answerer chain and pending requests.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use crate::cli::StatusArgs;
use crate::connect::connect;
use crate::exit::Result;

pub async fn run(args: StatusArgs, socket: PathBuf) -> Result<()> {
    let client = connect(&socket, "status").await?;
    let status = client.status().await?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&status).expect("a JSON value serializes")
        );
    } else {
        print!("{}", render(&status));
    }
    Ok(())
}

/// The status object (the broker's `askdesk/status` result) as text.
pub fn render(status: &Value) -> String {
    let mut out = String::new();
    let server = &status["server"];
    let _ = writeln!(
        out,
        "{} {}{}",
        server["name"].as_str().unwrap_or("askdesk"),
        server["version"].as_str().unwrap_or("?"),
        status["socket"]
            .as_str()
            .map(|s| format!(" at {s}"))
            .unwrap_or_default()
    );
    if let Some(connections) = status["connections"].as_u64() {
        let _ = writeln!(out, "connections: {connections}");
    }

    let agents = status["agents"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let _ = writeln!(out, "agents: {}", agents.len());
    let roots = agents.iter().filter(|a| a["owner"].is_null());
    for root in roots {
        agent_tree(&mut out, agents, root, 1);
    }

    let answerers = status["answerers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let _ = writeln!(out, "answerers (chain order): {}", answerers.len());
    for (n, answerer) in answerers.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {}. {}  scope={}{}",
            n + 1,
            text(&answerer["label"]),
            text(&answerer["scope"]),
            if answerer["prepend"].as_bool() == Some(true) {
                "  prepended"
            } else {
                ""
            }
        );
    }

    let pending = status["pending"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let _ = writeln!(out, "pending requests: {}", pending.len());
    for request in pending {
        let agent = match &request["agent"] {
            Value::Null => "no agent".to_owned(),
            agent => agent_name(agent),
        };
        let questions = request["questions"].as_u64().unwrap_or(0);
        let _ = writeln!(
            out,
            "  #{}  {}  {} question{}  waiting {}{}",
            text(&request["request"]),
            agent,
            questions,
            if questions == 1 { "" } else { "s" },
            age(request["ageMs"].as_u64().unwrap_or(0)),
            request["holder"]
                .as_str()
                .map(|h| format!("  held by {h}"))
                .unwrap_or_default()
        );
    }
    out
}

fn agent_tree(out: &mut String, agents: &[Value], agent: &Value, depth: usize) {
    let meta = match agent["meta"].as_object() {
        Some(meta) if !meta.is_empty() => {
            let pairs: Vec<String> = meta
                .iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect();
            format!("  {}", pairs.join(" "))
        }
        _ => String::new(),
    };
    let role = if depth == 1 { "" } else { "  (owned)" };
    let _ = writeln!(
        out,
        "{}{}{role}{meta}",
        "  ".repeat(depth),
        agent_name(agent)
    );
    let id = &agent["id"];
    for child in agents.iter().filter(|a| a["owner"] == *id) {
        agent_tree(out, agents, child, depth + 1);
    }
}

fn agent_name(agent: &Value) -> String {
    match agent["label"].as_str() {
        Some(label) => format!("{label} [{}]", text(&agent["id"])),
        None => text(&agent["id"]),
    }
}

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
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m {}s", secs / 60, secs % 60),
        _ => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_tree_chain_and_pending() {
        let status = json!({
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
                { "answerer": "answerer-1", "label": "desktop", "scope": "all", "prepend": false }
            ],
            "pending": [
                { "request": 4, "agent": { "id": "a", "label": "coder" }, "questions": 2, "holder": "desktop", "ageMs": 75_000 }
            ]
        });
        let expected = "\
askdesk 0.1.0 at /run/user/1000/askdesk/askdesk.sock
connections: 3
agents: 3
  coder [a]  cwd=/src
    b  (owned)
  c
answerers (chain order): 2
  1. autopilot  scope=agents  prepended
  2. desktop  scope=all
pending requests: 1
  #4  coder [a]  2 questions  waiting 1m 15s  held by desktop
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
