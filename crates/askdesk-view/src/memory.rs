//! The memory of past answers: for each question of a waiting request, the last answer to the same
//! question text asked for the same project (`cwd` in the agent's meta), from the journal, and who
//! gave it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use askdesk_core::{meta, shown_label, AgentInfo, Question, Request, RequestId};
use askdesk_i18n::t;
use askdesk_journal::{Journal, Outcome, Record};
use serde::Serialize;

use crate::answerer::DESKTOP_ANSWERER;

/// What was answered before to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PastAnswer {
    /// The options chosen then, each still an option of the question now (labels unchanged:
    /// "Use again" selects them).
    pub selected: Vec<String>,
    /// When it was answered, in milliseconds since the Unix epoch.
    pub answered_at: u64,
    /// Who answered what, for the line under the question: "You answered Yes", "Rule “prune”
    /// answered Delete them" (labels shown without "(Recommended)"). The page adds the day.
    pub said: String,
}

/// "You answered Yes", "Rule “prune” answered Delete them", "ci answered A, B"; "Answered Yes"
/// when the journal does not say who.
fn said(record: &Record, selected: &[String]) -> String {
    let what = selected
        .iter()
        .map(|label| shown_label(label))
        .collect::<Vec<_>>()
        .join(", ");
    match record.answerer.as_deref() {
        None => t!("desktop-past-unknown", what = what),
        Some(DESKTOP_ANSWERER) => t!("desktop-past-you", what = what),
        Some(label) => match askdesk_rules::rule_named(label) {
            Some(rule) => t!("desktop-past-rule", rule = rule, what = what),
            None => t!("desktop-past-other", who = label, what = what),
        },
    }
}

/// The project an agent works in, as its meta says.
fn cwd(agent: Option<&AgentInfo>) -> Option<&str> {
    agent?.meta_str(meta::CWD)
}

/// For each question of `questions`, the newest answered record of `records` (any order) asked
/// in `project` with the same question text, whose chosen options are all options of the question
/// now, whoever answered it (the person, a rule, another answerer: `said` names which). Only
/// answers that pick options are remembered: a typed answer is not offered again.
pub fn past_answers(
    records: &[Record],
    project: &str,
    questions: &[Question],
) -> Vec<Option<PastAnswer>> {
    questions
        .iter()
        .map(|question| {
            records
                .iter()
                .filter(|r| {
                    r.outcome == Outcome::Answered && cwd(r.agent.as_ref()) == Some(project)
                })
                .filter_map(|r| {
                    let asked = r
                        .questions
                        .iter()
                        .find(|q| q.question == question.question)?;
                    let item = r
                        .answer
                        .as_ref()?
                        .answers
                        .iter()
                        .find(|a| a.id == asked.id)?;
                    let known = |label: &String| question.options.iter().any(|o| &o.label == label);
                    (!item.selected.is_empty() && item.selected.iter().all(known)).then(|| {
                        PastAnswer {
                            selected: item.selected.clone(),
                            answered_at: r.settled_at,
                            said: said(r, &item.selected),
                        }
                    })
                })
                .max_by_key(|p| p.answered_at)
        })
        .collect()
}

/// The answered records of `project`: only those are kept while the journal is read, so a long
/// journal costs its reading, not its size in memory.
fn answered_in(journal: &Journal, project: &str) -> askdesk_journal::Result<Vec<Record>> {
    let mut kept = Vec::new();
    journal.visit(|record| {
        if record.outcome == Outcome::Answered && cwd(record.agent.as_ref()) == Some(project) {
            kept.push(record);
        }
    })?;
    Ok(kept)
}

/// The past answers of waiting requests, looked up once per request.
#[derive(Clone, Default)]
pub struct Memory {
    cache: Arc<Mutex<HashMap<RequestId, Slot>>>,
}

/// One request's past answers, once read. A caller that comes while another reads the journal
/// for the same request (the desktop at the request's arrival, the page's first `get_queue`)
/// waits for that read instead of reading again.
type Slot = Arc<Mutex<Option<Vec<Option<PastAnswer>>>>>;

impl Memory {
    /// The past answers for `request`'s questions; reads the journal (blocking) the first time.
    pub fn lookup(&self, journal: &Journal, request: &Request) -> Vec<Option<PastAnswer>> {
        let slot = {
            let mut cache = askdesk_core::sync::lock(&self.cache);
            // Forget requests no longer asked about; the cache holds the waiting few.
            if cache.len() > 64 && !cache.contains_key(&request.id) {
                cache.clear();
            }
            Arc::clone(cache.entry(request.id).or_default())
        };
        let mut slot = askdesk_core::sync::lock(&slot);
        if let Some(found) = slot.as_ref() {
            return found.clone();
        }
        let found = match cwd(request.agent.as_ref()) {
            None => vec![None; request.questions.len()],
            Some(project) => match answered_in(journal, project) {
                Ok(records) => past_answers(&records, project, &request.questions),
                Err(error) => {
                    // Not kept: the next lookup reads the journal again.
                    tracing::warn!(%error, "past answers unavailable");
                    return vec![None; request.questions.len()];
                }
            },
        };
        *slot = Some(found.clone());
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::{Answer, AnswerItem};
    use serde_json::json;

    fn question(text: &str, options: &[&str]) -> Question {
        serde_json::from_value(json!({
            "id": "q", "question": text,
            "options": options.iter().map(|l| json!({"label": l})).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    fn record(
        cwd: &str,
        text: &str,
        selected: &[&str],
        settled_at: u64,
        outcome: Outcome,
    ) -> Record {
        Record {
            asked_at: settled_at - 10,
            settled_at,
            agent: Some(serde_json::from_value(json!({"id": "a", "meta": {"cwd": cwd}})).unwrap()),
            questions: vec![question(text, &["Yes", "No"])],
            outcome,
            answer: Some(Answer {
                answers: vec![AnswerItem {
                    id: "q".into(),
                    selected: selected.iter().map(|s| s.to_string()).collect(),
                    ..Default::default()
                }],
            }),
            error: None,
            answerer: Some(crate::answerer::DESKTOP_ANSWERER.into()),
            draft: None,
            images_omitted: None,
        }
    }

    const ASKED: &str = "Delete the stale branches?";

    #[test]
    fn the_newest_answer_to_the_same_text_in_the_same_project_is_remembered() {
        let records = vec![
            record("/p", ASKED, &["Yes"], 1_000, Outcome::Answered),
            record("/p", ASKED, &["No"], 3_000, Outcome::Answered),
            record("/p", ASKED, &["Yes"], 2_000, Outcome::Answered),
        ];
        let found = past_answers(&records, "/p", &[question(ASKED, &["Yes", "No"])]);
        assert_eq!(
            found,
            vec![Some(PastAnswer {
                selected: vec!["No".into()],
                answered_at: 3_000,
                said: "You answered No".into(),
            })]
        );
    }

    #[test]
    fn the_line_says_who_answered_and_shows_labels_without_the_recommended_mark() {
        let options = ["Delete them (Recommended)", "Keep"];
        let by = |answerer: Option<&str>, selected: &[&str]| {
            let mut r = record("/p", ASKED, selected, 1_000, Outcome::Answered);
            r.questions = vec![question(ASKED, &options)];
            r.answerer = answerer.map(str::to_owned);
            past_answers(&[r], "/p", &[question(ASKED, &options)])[0]
                .clone()
                .map(|p| (p.said, p.selected))
        };
        assert_eq!(
            by(Some("rule:prune"), &["Delete them (Recommended)"]),
            Some((
                "Rule “prune” answered Delete them".into(),
                vec!["Delete them (Recommended)".to_string()]
            )),
            "the label sent back keeps its mark; the line does not"
        );
        assert_eq!(
            by(Some(crate::answerer::DESKTOP_ANSWERER), &["Keep"]).map(|p| p.0),
            Some("You answered Keep".into())
        );
        assert_eq!(
            by(Some("ci-bot"), &["Keep"]).map(|p| p.0),
            Some("ci-bot answered Keep".into())
        );
        // A journal that does not say who answered is not taken for the person.
        assert_eq!(
            by(None, &["Keep"]).map(|p| p.0),
            Some("Answered Keep".into())
        );
    }

    #[test]
    fn another_project_text_outcome_or_option_set_is_not_remembered() {
        let records = vec![
            record("/other", ASKED, &["Yes"], 1_000, Outcome::Answered),
            record(
                "/p",
                "Delete the old tags?",
                &["Yes"],
                1_000,
                Outcome::Answered,
            ),
            record("/p", ASKED, &["Yes"], 1_000, Outcome::LateAnswer),
            record("/p", ASKED, &[], 1_000, Outcome::Answered),
        ];
        let now = [
            question(ASKED, &["Yes", "No"]),
            question("Something else?", &["Yes"]),
        ];
        assert_eq!(past_answers(&records, "/p", &now), vec![None, None]);
        // A past label the question no longer offers is not offered again.
        let answered = [record("/p", ASKED, &["Yes"], 1_000, Outcome::Answered)];
        let changed = [question(ASKED, &["Keep", "Drop"])];
        assert_eq!(past_answers(&answered, "/p", &changed), vec![None]);
    }
}
