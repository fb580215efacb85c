//! The rules' own benchmark (`cargo bench -p askdesk-rules --bench rules`, release build): loading
//! a file of 10,000 rules, and one ask's evaluation against 1,000 rules, each figure printed next
//! to its target. Exits 1 when a target is missed.

use std::time::{Duration, Instant};

use askdesk_core::{AgentInfo, Question};
use askdesk_rules::RuleSet;
use serde_json::{json, Value};

/// Loading 10,000 rules: at most this long.
const LOAD_TARGET: Duration = Duration::from_millis(250);
/// One ask against 1,000 rules: at most this long at the median.
const EVALUATE_TARGET: Duration = Duration::from_micros(100);

/// `count` rules of the kinds people write: commands in a project, files in a project, hosts,
/// questions by header and text, denials, shadow rules and deadlines.
fn rules_file(count: usize) -> String {
    let mut text = String::with_capacity(count * 160);
    for i in 0..count {
        let project = format!("/home/me/src/p{}", i % 50);
        let rule = match i % 7 {
            0 => format!(
                "match = {{ tool = \"Bash\", command = \"cargo test -p crate{i}*\", cwd = \"{project}\" }}\nanswer = \"Allow once\"\n"
            ),
            1 => format!(
                "match = {{ header = \"Deploy {i}\", question = '^Deploy build {i} to staging\\?$' }}\nanswer = \"No\"\nafter = \"10m\"\n"
            ),
            2 => format!(
                "match = {{ tool = \"Edit\", path = \"{project}/src/m{i}/*\", cwd = \"{project}\" }}\nanswer = \"Allow once\"\n"
            ),
            3 => format!(
                "match = {{ tool = \"WebFetch\", host = \"docs{i}.example.org\" }}\nanswer = \"Allow once\"\n"
            ),
            4 => format!(
                "match = {{ tool = \"Bash\", command = \"*git push*origin{i}*\" }}\ndeny = \"Do not push to origin{i}.\"\n"
            ),
            5 => format!(
                "match = {{ agent = \"claude-{i}-*\", header = \"Cleanup\" }}\nanswer = {{ recommended = true }}\nmode = \"shadow\"\n"
            ),
            _ => format!(
                "match = {{ client = \"codex\", tool = \"shell\", command = \"ls {i} *\", cwd = \"{project}\" }}\nanswer = \"Allow once\"\nmode = \"off\"\n"
            ),
        };
        text.push_str(&format!(
            "\n# Rule {i}.\n[[rule]]\nname = \"rule {i}\"\n{rule}"
        ));
    }
    text
}

fn question(text: &str, header: Option<&str>) -> Question {
    let options = ["Allow once", "Deny", "Yes (Recommended)", "No"].map(|l| json!({ "label": l }));
    serde_json::from_value(
        json!({ "id": "q", "question": text, "header": header, "options": options }),
    )
    .unwrap()
}

fn agent(meta: Value) -> AgentInfo {
    serde_json::from_value(json!({ "id": "claude-code-s1", "label": "Claude Code", "meta": meta }))
        .unwrap()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn verdict(name: &str, figure: Duration, target: Duration) -> bool {
    let met = figure <= target;
    println!(
        "{name}: {figure:.2?} (target ≤ {target:?}) {}",
        if met { "MET" } else { "MISSED" }
    );
    met
}

fn main() {
    // Loading: the median of several parses of the same text, as the engine reads the file.
    let text = rules_file(10_000);
    let loads: Vec<Duration> = (0..7)
        .map(|_| {
            let start = Instant::now();
            let set = RuleSet::parse(&text).expect("the benchmark's rules parse");
            let took = start.elapsed();
            assert_eq!(set.rules.len(), 10_000);
            took
        })
        .collect();
    println!("rules file: {} rules, {} KiB", 10_000, text.len() / 1024);
    let load = verdict(
        "load 10,000 rules (median of 7)",
        median(loads),
        LOAD_TARGET,
    );

    // Evaluating: asks of each kind against 1,000 rules; most match none, so every rule is tried.
    let set = RuleSet::parse(&rules_file(1_000)).unwrap();
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    let asks: Vec<(&str, Option<AgentInfo>, Vec<Question>)> = vec![
        (
            "Bash prompt",
            Some(agent(
                json!({ "tool": "Bash", "command": "cargo build --release", "cwd": "/home/me/src/p3", "client": "claude-code" }),
            )),
            vec![question("Allow Bash?", Some("Bash"))],
        ),
        (
            "Edit prompt",
            Some(agent(
                json!({ "tool": "Edit", "path": format!("{dir}/askdesk-bench/src/lib.rs"), "cwd": dir, "client": "claude-code" }),
            )),
            vec![question("Allow Edit?", Some("Edit"))],
        ),
        (
            "WebFetch prompt",
            Some(agent(
                json!({ "tool": "WebFetch", "url": "https://docs.rs/tokio/latest/tokio/", "cwd": "/home/me/src/p3", "client": "claude-code" }),
            )),
            vec![question("Allow WebFetch?", Some("WebFetch"))],
        ),
        (
            "plain question",
            Some(agent(
                json!({ "cwd": "/home/me/src/p3", "client": "claude-code" }),
            )),
            vec![question(
                "Deploy build 77 to production?",
                Some("Deploy 77"),
            )],
        ),
    ];
    let mut slowest = Duration::ZERO;
    for (name, agent, questions) in &asks {
        // The first ask after a load also compiles the regex of each glob it gets past the
        // literal prefix of: printed for the log, with no target of its own.
        let fresh = RuleSet::parse(&rules_file(1_000)).unwrap();
        let start = Instant::now();
        std::hint::black_box(fresh.evaluate(agent.as_ref(), questions));
        let first = start.elapsed();
        let samples: Vec<Duration> = (0..2_000)
            .map(|_| {
                let start = Instant::now();
                let evaluation = set.evaluate(agent.as_ref(), questions);
                let took = start.elapsed();
                std::hint::black_box(&evaluation);
                took
            })
            .collect();
        let p50 = median(samples);
        println!("  {name}: p50 {p50:.2?} (the first after a load: {first:.2?})");
        slowest = slowest.max(p50);
    }
    let evaluate = verdict(
        "evaluate one ask against 1,000 rules (p50 of the slowest kind of ask)",
        slowest,
        EVALUATE_TARGET,
    );
    if !(load && evaluate) {
        std::process::exit(1);
    }
}
