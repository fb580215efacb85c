//! `askdesk history`: the journal of settled requests, newest first, as a table or JSON lines.

use std::collections::VecDeque;

use askdesk_core::Answer;
use askdesk_i18n::t;
use askdesk_journal::{Outcome, Record};
use clap::Args;

use crate::exit::{Error, Result};
use crate::output::{out, outln};
use crate::terminal::{clip, columns, one_line};

/// Show the history of settled requests, newest first
#[derive(Debug, Args)]
#[command(
    after_help = "Reads the journal under $XDG_DATA_HOME/askdesk/ (no broker needed).

Examples:
  askdesk history
  askdesk history --outcome dismissed --limit 5
  askdesk history --agent release-bot --json | jq .answer"
)]
pub struct HistoryArgs {
    /// JSON lines (one record per line, newest first)
    #[arg(long)]
    pub json: bool,
    /// Only requests of this agent (its id or its label)
    #[arg(long, value_name = "ID|LABEL")]
    pub agent: Option<String>,
    /// Only requests that settled this way
    #[arg(long, value_parser = outcome_parser())]
    pub outcome: Option<Outcome>,
    /// At most this many records
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub async fn run(args: HistoryArgs) -> Result<()> {
    let json = args.json;
    // Read record by record, keeping only what is printed: `--limit 20` of a long journal holds 20.
    let (records, journaled) = tokio::task::spawn_blocking(move || {
        let mut selection = Selection::new(&args);
        visit_journal(|record| selection.push(record))?;
        Ok::<_, Error>(selection.finish())
    })
    .await
    .map_err(|e| Error::Internal(format!("reading the history failed: {e}")))??;
    if records.is_empty() && journaled > 0 && !json {
        outln!("{}", t!("history-none-match", recorded = journaled))?;
        return Ok(());
    }
    if json {
        for record in &records {
            outln!(
                "{}",
                serde_json::to_string(record).expect("a record serializes")
            )?;
        }
    } else {
        out!("{}", table(&records))?;
    }
    Ok(())
}

/// The journal's records, oldest first. A journal that cannot be read is a file that cannot be
/// read (status 20), as `--help` lists it, not a broker that cannot start.
pub fn read_journal() -> Result<Vec<Record>> {
    let mut records = Vec::new();
    visit_journal(|record| records.push(record))?;
    Ok(records)
}

/// Hands the journal's records to `visit`, oldest first, with [`read_journal`]'s errors.
fn visit_journal(visit: impl FnMut(Record)) -> Result<()> {
    askdesk_journal::visit_default(visit).map_err(|e| Error::Internal(e.to_string()))
}

/// Every outcome a record can have. The names are the journal's own ([`Outcome::as_str`]); the
/// match in [`outcome_parser`] stops compiling when the journal gains an outcome missing here.
const OUTCOMES: [Outcome; 5] = [
    Outcome::Answered,
    Outcome::Dismissed,
    Outcome::Withdrawn,
    Outcome::Failed,
    Outcome::LateAnswer,
];

/// `--outcome NAME`: one of the journal's outcome names, listed in `--help`.
pub fn outcome_parser() -> impl clap::builder::TypedValueParser<Value = Outcome> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(OUTCOMES.map(Outcome::as_str)).map(|name| {
        let outcome = OUTCOMES
            .into_iter()
            .find(|outcome| outcome.as_str() == name)
            .expect("clap let through only a listed name");
        match outcome {
            Outcome::Answered
            | Outcome::Dismissed
            | Outcome::Withdrawn
            | Outcome::Failed
            | Outcome::LateAnswer => outcome,
        }
    })
}

/// The records `args` selects, newest first, from records handed over oldest first; only the
/// newest `--limit` that match are held.
pub struct Selection<'a> {
    args: &'a HistoryArgs,
    kept: VecDeque<Record>,
    seen: usize,
}

impl<'a> Selection<'a> {
    pub fn new(args: &'a HistoryArgs) -> Self {
        Selection {
            args,
            kept: VecDeque::new(),
            seen: 0,
        }
    }

    pub fn push(&mut self, record: Record) {
        self.seen += 1;
        let args = self.args;
        let outcome = args.outcome.is_none_or(|o| record.outcome == o);
        let agent = match &args.agent {
            None => true,
            Some(wanted) => record
                .agent
                .as_ref()
                .is_some_and(|a| a.id == *wanted || a.label.as_deref() == Some(wanted.as_str())),
        };
        if outcome && agent {
            self.kept.push_back(record);
            if self.kept.len() > args.limit.unwrap_or(usize::MAX) {
                self.kept.pop_front();
            }
        }
    }

    /// The selected records, newest first, and how many records there were in all.
    pub fn finish(self) -> (Vec<Record>, usize) {
        (self.kept.into_iter().rev().collect(), self.seen)
    }
}

/// Newest first, filtered, limited.
#[cfg(test)]
pub fn select(records: Vec<Record>, args: &HistoryArgs) -> Vec<Record> {
    let mut selection = Selection::new(args);
    records
        .into_iter()
        .for_each(|record| selection.push(record));
    selection.finish().0
}

/// The records as a table, one line each; every cell goes through [`one_line`] or [`clip`], so
/// agent-supplied text cannot act on the terminal or break the layout, and wide text is measured
/// by the columns it takes.
pub fn table(records: &[Record]) -> String {
    if records.is_empty() {
        return t!("history-empty") + "\n";
    }
    let rows: Vec<[String; 6]> = records
        .iter()
        .map(|r| {
            [
                when(r.asked_at),
                r.agent
                    .as_ref()
                    .map(|a| one_line(a.label.as_deref().unwrap_or(&a.id)))
                    .unwrap_or_else(|| "-".into()),
                r.outcome.as_str().to_owned(),
                clip(
                    r.questions
                        .first()
                        .map(|q| q.question.as_str())
                        .unwrap_or(""),
                    48,
                ) + &if r.questions.len() > 1 {
                    t!("history-more")
                } else {
                    String::new()
                },
                clip(&summary(r), 60),
                // Who settled it: `desktop`, a socket answerer's label, `rule:<name>`.
                r.answerer.as_deref().map_or_else(|| "-".into(), one_line),
            ]
        })
        .collect();
    columns(
        [
            t!("history-col-when"),
            t!("history-col-agent"),
            t!("history-col-outcome"),
            t!("history-col-question"),
            t!("history-col-answer"),
            t!("history-col-by"),
        ],
        &rows,
    )
}

/// The answer in a few words, or the error.
fn summary(record: &Record) -> String {
    if let Some(answer) = &record.answer {
        return answer_summary(answer);
    }
    match &record.error {
        Some(error) => match &error.code {
            Some(code) => format!("{code}: {}", error.message),
            None => error.message.clone(),
        },
        None => String::new(),
    }
}

pub fn answer_summary(answer: &Answer) -> String {
    let items: Vec<String> = answer
        .answers
        .iter()
        .map(|item| {
            let mut parts = item.selected.clone();
            if let Some(custom) = &item.custom {
                parts.push(format!("\"{custom}\""));
            }
            if parts.is_empty() {
                format!("{}: {}", item.id, t!("history-skipped"))
            } else {
                format!("{}: {}", item.id, parts.join(", "))
            }
        })
        .collect();
    items.join("; ")
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` (UTC); a time past chrono's range (some
/// 262,000 years) as its milliseconds.
pub fn when(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || ms.to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(
        asked_at: u64,
        agent: Option<&str>,
        outcome: &str,
        answer: Option<serde_json::Value>,
    ) -> Record {
        serde_json::from_value(json!({
            "askedAt": asked_at, "settledAt": asked_at + 5,
            "agent": agent.map(|a| json!({ "id": a, "label": format!("{a} bot") })),
            "questions": [{ "id": "q1", "question": "Proceed   with\nthe cleanup?" }],
            "outcome": outcome,
            "answer": answer,
            "answerer": if outcome == "answered" { json!(format!("rule:{asked_at}")) } else { json!("desktop") },
            "error": if outcome == "dismissed" {
                json!({ "code": "ASK_CANCELLED", "message": "the user cancelled ask_user_question" })
            } else { json!(null) },
        }))
        .unwrap()
    }

    fn args(argv: &[&str]) -> HistoryArgs {
        use clap::Parser;
        let mut full = vec!["askdesk", "history"];
        full.extend_from_slice(argv);
        match crate::cli::Cli::try_parse_from(full).unwrap().command {
            crate::cli::Command::History(args) => args,
            other => panic!("{other:?}"),
        }
    }

    fn journal() -> Vec<Record> {
        vec![
            record(
                1_000,
                Some("a"),
                "answered",
                Some(json!({ "answers": [{ "id": "q1", "selected": ["Yes"] }] })),
            ),
            record(2_000, None, "dismissed", None),
            record(
                3_000,
                Some("b"),
                "answered",
                Some(json!({ "answers": [{ "id": "q1", "selected": [], "custom": "later" }] })),
            ),
        ]
    }

    #[test]
    fn every_outcome_is_taken_by_its_journal_name() {
        use clap::Parser;
        for outcome in OUTCOMES {
            let name = outcome.as_str();
            assert_eq!(args(&["--outcome", name]).outcome, Some(outcome), "{name}");
            assert_eq!(serde_json::to_value(outcome).unwrap(), json!(name));
        }
        let unknown = crate::cli::Cli::try_parse_from(["askdesk", "history", "--outcome", "late"]);
        assert!(unknown.is_err());
    }

    #[test]
    fn filters_newest_first() {
        let ids = |records: Vec<Record>| records.iter().map(|r| r.asked_at).collect::<Vec<_>>();
        assert_eq!(ids(select(journal(), &args(&[]))), [3_000, 2_000, 1_000]);
        assert_eq!(ids(select(journal(), &args(&["--limit", "1"]))), [3_000]);
        assert_eq!(
            ids(select(journal(), &args(&["--outcome", "dismissed"]))),
            [2_000]
        );
        assert_eq!(ids(select(journal(), &args(&["--agent", "a"]))), [1_000]);
        assert_eq!(
            ids(select(journal(), &args(&["--agent", "b bot"]))),
            [3_000]
        );
    }

    #[test]
    fn table_shows_one_line_per_record() {
        let text = table(&select(journal(), &args(&[])));
        let expected = "\
WHEN (UTC)           AGENT  OUTCOME    QUESTION                   ANSWER                                               BY
1970-01-01 00:00:03  b bot  answered   Proceed with the cleanup?  q1: \"later\"                                          rule:3000
1970-01-01 00:00:02  -      dismissed  Proceed with the cleanup?  ASK_CANCELLED: the user cancelled ask_user_question  desktop
1970-01-01 00:00:01  a bot  answered   Proceed with the cleanup?  q1: Yes                                              rule:1000
";
        assert_eq!(text, expected);
        assert_eq!(table(&[]), "no history yet\n");
    }

    #[test]
    fn table_shows_control_characters_as_escapes() {
        let mut hostile = record(
            1_000,
            Some("a"),
            "answered",
            Some(json!({ "answers": [{ "id": "q1", "selected": ["Y\u{1b}[8mes"] }] })),
        );
        hostile.questions[0].question = "esc \u{1b}[2J\u{1b}]0;pwned\u{7} \u{202e}red".into();
        hostile.agent.as_mut().unwrap().label = Some("lab\u{1b}[1A\rFAKE".into());
        hostile.answerer = Some("ans\u{9b}wer".into());
        let text = table(&[hostile]);
        assert_eq!(
            text.lines().nth(1).unwrap(),
            "1970-01-01 00:00:01  lab\\u{1b}[1A FAKE  answered  \
             esc \\u{1b}[2J\\u{1b}]0;pwned\\u{7} \\u{202e}red  q1: Y\\u{1b}[8mes  ans\\u{9b}wer"
        );
    }

    #[test]
    fn wide_text_is_clipped_and_aligned_by_its_columns() {
        use unicode_width::UnicodeWidthStr;
        let mut records = journal();
        records[0].questions[0].question =
            "宽字符的问题很长很长很长很长很长很长很长很长很长很长很长很长很长".into();
        let text = table(&records);
        let lines: Vec<&str> = text.lines().collect();
        // Every line's ANSWER column starts at the same terminal column.
        let starts: Vec<usize> = lines
            .iter()
            .map(|line| {
                let at = line
                    .find("ANSWER")
                    .or_else(|| line.find("q1:"))
                    .unwrap_or_else(|| line.find("ASK_CANCELLED").expect("an answer or an error"));
                line[..at].width()
            })
            .collect();
        assert!(starts.iter().all(|&s| s == starts[0]), "{starts:?}\n{text}");
        // The wide question is cut to 48 columns, not 48 characters.
        let question = lines[1]
            .split("  ")
            .map(str::trim)
            .find(|c| c.starts_with('宽'))
            .expect(&text);
        assert!(question.ends_with("很长很…"), "{question}");
        assert_eq!(question.width(), 47);
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(when(0), "1970-01-01 00:00:00");
        assert_eq!(when(1_796_219_110_000), "2026-12-02 13:45:10");
        assert_eq!(when(951_782_400_000), "2000-02-29 00:00:00");
        // Milliseconds are cut, never rounded up into the next second.
        assert_eq!(when(1_796_219_110_999), "2026-12-02 13:45:10");
        assert_eq!(when(u64::MAX), u64::MAX.to_string());
    }
}
