//! `askdesk rules list|test`: the answer rules in force replayed through the history journal.

use std::fmt::Write;
use std::path::PathBuf;
use std::time::SystemTime;

use askdesk_i18n::t;
use askdesk_journal::{millis, Record};
use askdesk_rules::{file, past_requests, replay, Replay, RuleSet, Settlement, Verdict};
use clap::{Args, Subcommand};

use crate::exit::{Error, Result};
use crate::history::{answer_summary, when};
use crate::output::out;
use crate::terminal::{columns, one_line};

/// Check the answer rules against the history: what they would have done, and how often you agree
#[derive(Debug, Args)]
#[command(
    after_help = "Reads the rules file ($XDG_CONFIG_HOME/askdesk/rules.toml, or --file) and the journal \
under $XDG_DATA_HOME/askdesk/; no broker needed. The rules file's format: docs/rules.md.

Exit status: 0; 2 usage error; 4 the rules file is broken (the error names its line and column); \
20 a file cannot be read.

Examples:
  askdesk rules list
  askdesk rules test --since 7d
  askdesk rules test --file draft.toml"
)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
    /// The rules file to check [default: $XDG_CONFIG_HOME/askdesk/rules.toml]
    #[arg(long, global = true, value_name = "PATH")]
    pub file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Each rule with its mode, action, and its hit, act and agreement counts over the whole journal
    List,
    /// Replay the journal through the rules: per rule, what it would have done and where that
    /// differs from what you chose
    Test {
        /// Only requests asked within this long, e.g. 7d, 12h, 30m [default: the whole journal]
        #[arg(long, value_name = "DURATION")]
        since: Option<String>,
    },
}

pub async fn run(args: RulesArgs) -> Result<()> {
    // The installed file may be missing (no rules yet); a draft named with --file must exist.
    let named = args.file.is_some();
    let path = match args.file {
        Some(path) => path,
        None => file::default_path().map_err(|e| Error::Internal(e.to_string()))?,
    };
    let since = match &args.command {
        RulesCommand::Test { since: Some(since) } => {
            let since =
                file::parse_duration(since).map_err(|e| Error::Usage(format!("--since: {e}")))?;
            if since.is_zero() {
                return Err(Error::Usage(
                    "--since must be longer than zero: leave it out for the whole journal".into(),
                ));
            }
            Some(since)
        }
        _ => None,
    };
    let (rules, records) = tokio::task::spawn_blocking({
        let path = path.clone();
        move || -> Result<(RuleSet, Vec<Record>)> {
            if named && !path.exists() {
                return Err(Error::Internal(format!(
                    "cannot read {}: there is no such file",
                    path.display()
                )));
            }
            let rules = file::load(&path).map_err(|e| match e {
                file::Error::Parse { .. } => Error::Input(e.to_string()),
                _ => Error::Internal(e.to_string()),
            })?;
            Ok((rules, crate::history::read_journal()?))
        }
    })
    .await
    .map_err(|e| Error::Internal(format!("reading the rules failed: {e}")))??;
    // A span longer than the clock counts back (or than a u64 of milliseconds holds) reaches
    // the epoch: the whole journal.
    let cutoff = since.map(|since| {
        millis(SystemTime::now())
            .saturating_sub(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    });
    let past = past_requests(records, cutoff);
    let replayed = replay(&rules, &past);
    match args.command {
        RulesCommand::List => out!("{}", list(&path, &replayed)),
        RulesCommand::Test { since } => {
            out!("{}", test(&path, since.as_deref(), past.len(), &replayed))
        }
    }
}

/// `rules list`: one row per rule.
pub fn list(path: &std::path::Path, replay: &Replay) -> String {
    if replay.rules.is_empty() {
        return t!("rules-none", path = path.display().to_string()) + "\n";
    }
    let rows: Vec<[String; 8]> = replay
        .rules
        .iter()
        .map(|r| {
            [
                r.rule.name.clone(),
                r.rule.mode.as_str().to_owned(),
                r.rule
                    .after
                    .map(file::format_duration)
                    .unwrap_or_else(|| "-".into()),
                r.rule.action.said(),
                r.hits.to_string(),
                r.acted.to_string(),
                r.agreed.to_string(),
                r.differed.len().to_string(),
            ]
        })
        .collect();
    let mut out = columns(
        [
            t!("rules-col-rule"),
            t!("rules-col-mode"),
            t!("rules-col-after"),
            t!("rules-col-action"),
            t!("rules-col-hits"),
            t!("rules-col-acted"),
            t!("rules-col-agreed"),
            t!("rules-col-differed"),
        ],
        &rows,
    );
    for report in &replay.rules {
        if let Some(warning) = report.rule.warning() {
            let _ = writeln!(
                out,
                "{}",
                t!("rules-warning", warning = one_line(&warning.said()))
            );
        }
    }
    out
}

/// `rules test`: per rule, what it would have done and each request where that differs from what
/// the human chose.
pub fn test(
    path: &std::path::Path,
    since: Option<&str>,
    requests: usize,
    replay: &Replay,
) -> String {
    let mut out = String::new();
    let span = since.map_or_else(
        || t!("rules-span-all"),
        |s| t!("rules-span-since", since = s),
    );
    let replayed = t!(
        "rules-replayed",
        requests = requests,
        span = span,
        path = path.display().to_string()
    );
    let _ = writeln!(out, "{replayed}");
    for report in &replay.rules {
        let rule = t!(
            "rules-rule",
            name = format!("{:?}", report.rule.name),
            mode = report.rule.mode.as_str(),
            line = report.rule.line,
            action = report.rule.action.said()
        );
        let applies = t!(
            "rules-applies",
            hits = report.hits,
            acted = report.acted,
            agreed = report.agreed,
            differed = report.differed.len()
        );
        let _ = writeln!(out, "\n{rule}\n{applies}");
        for (request, verdict) in &report.differed {
            let question = request
                .questions
                .first()
                .map(|q| q.question.as_str())
                .unwrap_or_default();
            let rule = t!(
                "rules-differs-rule",
                verdict = one_line(&verdict_text(verdict))
            );
            let you = t!(
                "rules-differs-you",
                settled = one_line(&settlement_text(&request.settled))
            );
            let _ = writeln!(
                out,
                "  {}  {:?}\n{rule}\n{you}",
                when(request.asked_at),
                question
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{}",
        t!("rules-unmatched", unmatched = replay.unmatched)
    );
    out
}

fn verdict_text(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Answer(answer) => t!("rules-verdict-answer", answer = answer_summary(answer)),
        Verdict::Deny(message) => t!("rules-verdict-deny", message = message.as_str()),
        Verdict::Dismiss(message) => t!("rules-verdict-dismiss", message = message.as_str()),
        Verdict::Ask => t!("rules-verdict-ask"),
    }
}

fn settlement_text(settled: &Settlement) -> String {
    match settled {
        Settlement::Answered(answer) => {
            t!("rules-settled-answered", answer = answer_summary(answer))
        }
        Settlement::Dismissed => t!("rules-settled-dismissed"),
        Settlement::Failed(code) => t!(
            "rules-settled-failed",
            code = code.as_deref().unwrap_or("internal")
        ),
        Settlement::Other => t!("rules-settled-withdrawn"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_warns_of_an_answer_with_an_empty_match() {
        let rules = RuleSet::parse(
            "[[rule]]\nname = \"all\"\nanswer = \"Yes\"\n\n[[rule]]\nname = \"no\"\ndeny = \"no\"\n",
        )
        .unwrap();
        let out = list(std::path::Path::new("rules.toml"), &replay(&rules, &[]));
        let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert_eq!(warnings.len(), 1, "{out}");
        assert!(
            warnings[0].starts_with("warning: rule \"all\" (line 1) answers with an empty match"),
            "{out}"
        );
    }

    #[test]
    fn list_warns_of_a_broad_command_allow_with_the_one_sentence() {
        let rules = RuleSet::parse(
            "[[rule]]\nname = \"git\"\nmatch = { tool = \"Bash\", command = \"git *\" }\nanswer = \"Allow once\"\n\n[[rule]]\nname = \"tests\"\nmatch = { tool = \"Bash\", command = \"cargo test*\" }\nanswer = \"Allow once\"\n",
        )
        .unwrap();
        let out = list(std::path::Path::new("rules.toml"), &replay(&rules, &[]));
        let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert_eq!(
            warnings,
            [format!(
                "warning: rule \"git\" (line 1) allows commands broadly: {}",
                askdesk_rules::file::broad_allow()
            )],
            "{out}"
        );
    }
}
