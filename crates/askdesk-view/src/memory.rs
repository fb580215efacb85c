//! The memory of past answers: for each question of a waiting request, the human's last answer to
//! the same question text asked for the same project (`cwd` in the agent's meta), from the journal.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use askdesk_core::{meta, AgentInfo, Question, Request, RequestId};
use askdesk_journal::{Journal, Outcome, Record};
use serde::Serialize;

/// What the human answered before to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PastAnswer {
    /// The options chosen then, each still an option of the question now.
    pub selected: Vec<String>,
    /// When it was answered, in milliseconds since the Unix epoch.
    pub answered_at: u64,
}

/// The project an agent works in, as its meta says.
fn cwd(agent: Option<&AgentInfo>) -> Option<&str> {
    agent?.meta_str(meta::CWD)
}

/// For each question of `questions`, the newest answered record of `records` (any order) asked
/// in `project` with the same question text, whose chosen options are all options of the question
/// now. Only answers that pick options are remembered: a typed answer is not offered again.
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
    cache: Arc<Mutex<HashMap<RequestId, Vec<Option<PastAnswer>>>>>,
}

impl Memory {
    /// The past answers for `request`'s questions; reads the journal (blocking) the first time.
    pub fn lookup(&self, journal: &Journal, request: &Request) -> Vec<Option<PastAnswer>> {
        if let Some(found) = askdesk_core::sync::lock(&self.cache).get(&request.id) {
            return found.clone();
        }
        let found = match cwd(request.agent.as_ref()) {
            None => vec![None; request.questions.len()],
            Some(project) => match answered_in(journal, project) {
                Ok(records) => past_answers(&records, project, &request.questions),
                Err(error) => {
                    tracing::warn!(%error, "past answers unavailable");
                    return vec![None; request.questions.len()];
                }
            },
        };
        let mut cache = askdesk_core::sync::lock(&self.cache);
        // Forget requests no longer asked about; the cache holds the waiting few.
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(request.id, found.clone());
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
                    custom: None,
                }],
            }),
            error: None,
            answerer: None,
            draft: None,
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
                answered_at: 3_000
            })]
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
