//! Replaying settled requests through the rules in force: what each rule would have done, where
//! that differs from what the human chose, and how often it already acted.

use askdesk_core::{AgentInfo, Answer, ErrorCode, Question};
use askdesk_journal::{Outcome, Record};

use crate::file::{Rule, RuleSet};
use crate::matching::Verdict;

/// One settled request, as the journal recorded it.
#[derive(Debug, Clone)]
pub struct Past {
    /// Milliseconds since the Unix epoch.
    pub asked_at: u64,
    pub agent: Option<AgentInfo>,
    pub questions: Vec<Question>,
    pub settled: Settlement,
    /// Who settled it (`rule:<name>` for a rule), when the journal knows.
    pub answerer: Option<String>,
}

impl Past {
    /// A journal record as the replay sees it; `None` for what no answerer, and so no rule, was
    /// ever offered: a late answer (its request is journaled already), an empty batch, and a
    /// request refused by the checks before the chain (protocol 2 steps 2 to 5).
    pub fn from_record(record: Record) -> Option<Past> {
        if record.questions.is_empty() {
            return None;
        }
        let settled = match record.outcome {
            Outcome::Answered => Settlement::Answered(record.answer?),
            Outcome::Dismissed => Settlement::Dismissed,
            Outcome::Failed => {
                let code = record.error.and_then(|e| e.code);
                match code.as_deref().map(ErrorCode::parse) {
                    Some(
                        ErrorCode::EmptyQuestions
                        | ErrorCode::CallerNotLive
                        | ErrorCode::DelegatedCaller
                        | ErrorCode::BadIntent,
                    ) => return None,
                    // Nobody chose anything: no answerer took it, the broker stopped, an
                    // answerer broke (no code) or answered against the rules.
                    None
                    | Some(
                        ErrorCode::NoProvider | ErrorCode::ShuttingDown | ErrorCode::BadAnswer,
                    ) => Settlement::Other,
                    // A decision an answerer made (`ASK_DENIED`, or its own code).
                    Some(_) => Settlement::Failed(code),
                }
            }
            Outcome::Withdrawn => Settlement::Other,
            Outcome::LateAnswer => return None,
        };
        Some(Past {
            asked_at: record.asked_at,
            agent: record.agent,
            questions: record.questions,
            settled,
            answerer: record.answerer,
        })
    }
}

/// The journal's records as past requests, keeping those asked at or after `since` (milliseconds
/// since the Unix epoch) when given.
pub fn past_requests(records: Vec<Record>, since: Option<u64>) -> Vec<Past> {
    records
        .into_iter()
        .filter(|r| since.is_none_or(|since| r.asked_at >= since))
        .filter_map(Past::from_record)
        .collect()
}

/// Whether `rules` apply to `request`: a rule in force decides it, or a shadow rule proposes for
/// it (what [`replay`] counts as a hit).
pub fn applies(rules: &RuleSet, request: &Past) -> bool {
    let evaluation = rules.evaluate(request.agent.as_ref(), &request.questions);
    evaluation.acting.is_some() || !evaluation.shadow.is_empty()
}

/// How a past request settled.
#[derive(Debug, Clone, PartialEq)]
pub enum Settlement {
    Answered(Answer),
    Dismissed,
    /// An answerer failed it with this error code (`ASK_DENIED` for a deny).
    Failed(Option<String>),
    /// Withdrawn by the asker, or failed without anyone's decision (`NO_PROVIDER`, shutdown, a
    /// broken answerer): nobody chose anything to compare with.
    Other,
}

/// What one rule would have done with the replayed requests.
#[derive(Debug, Clone)]
pub struct RuleReport<'a> {
    pub rule: &'a Rule,
    /// Requests the rule applies to now (as the deciding rule, or as a shadow rule).
    pub hits: usize,
    /// Requests this rule settled (the journal names it).
    pub acted: usize,
    /// Requests the human settled where the rule would have done the same.
    pub agreed: usize,
    /// Requests the human settled differently, with what the rule would have done.
    pub differed: Vec<(&'a Past, Verdict)>,
}

/// The replay of a journal through a rule set.
#[derive(Debug, Clone)]
pub struct Replay<'a> {
    /// One report per rule, in file order.
    pub rules: Vec<RuleReport<'a>>,
    /// Requests no rule applies to.
    pub unmatched: usize,
}

/// Replays `past` through `rules`. Only requests a human settled count toward agreement; a
/// request that a rule settled counts toward that rule's `acted`.
pub fn replay<'a>(rules: &'a RuleSet, past: &'a [Past]) -> Replay<'a> {
    let mut reports: Vec<RuleReport<'a>> = rules
        .rules
        .iter()
        .map(|rule| RuleReport {
            rule,
            hits: 0,
            acted: 0,
            agreed: 0,
            differed: Vec::new(),
        })
        .collect();
    let mut unmatched = 0;
    for request in past {
        if let Some(name) = request
            .answerer
            .as_deref()
            .and_then(crate::file::rule_named)
        {
            if let Some(report) = reports.iter_mut().find(|r| r.rule.name == name) {
                report.acted += 1;
            }
        }
        let evaluation = rules.evaluate(request.agent.as_ref(), &request.questions);
        let applying = evaluation.acting.into_iter().chain(evaluation.shadow);
        let mut any = false;
        for (rule, verdict) in applying {
            any = true;
            let report = reports
                .iter_mut()
                .find(|r| std::ptr::eq(r.rule, rule))
                .expect("every rule has a report");
            report.hits += 1;
            let by_human = request
                .answerer
                .as_deref()
                .and_then(crate::file::rule_named)
                .is_none();
            if !by_human || verdict == Verdict::Ask || request.settled == Settlement::Other {
                continue;
            }
            if same(&verdict, &request.settled) {
                report.agreed += 1;
            } else {
                report.differed.push((request, verdict));
            }
        }
        if !any {
            unmatched += 1;
        }
    }
    Replay {
        rules: reports,
        unmatched,
    }
}

/// Whether the rule's verdict is what the human did.
fn same(verdict: &Verdict, settled: &Settlement) -> bool {
    match (verdict, settled) {
        (Verdict::Answer(proposed), Settlement::Answered(chosen)) => {
            proposed.answers.len() == chosen.answers.len()
                && proposed.answers.iter().all(|p| {
                    chosen.answers.iter().any(|c| {
                        c.id == p.id
                            && sorted(&c.selected) == sorted(&p.selected)
                            && c.custom == p.custom
                    })
                })
        }
        (Verdict::Dismiss(_), Settlement::Dismissed) => true,
        (Verdict::Deny(_), Settlement::Failed(Some(code))) => code == crate::matching::ASK_DENIED,
        _ => false,
    }
}

fn sorted(labels: &[String]) -> Vec<&str> {
    let mut labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    labels.sort_unstable();
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::AnswerItem;

    fn question(text: &str) -> Question {
        askdesk_core::testing::question("q", text, &["Yes", "No"])
    }

    fn past(text: &str, settled: Settlement, answerer: Option<&str>) -> Past {
        Past {
            asked_at: 0,
            agent: None,
            questions: vec![question(text)],
            settled,
            answerer: answerer.map(str::to_owned),
        }
    }

    fn chose(label: &str) -> Settlement {
        Settlement::Answered(Answer {
            answers: vec![AnswerItem {
                id: "q".into(),
                selected: vec![label.into()],
                ..Default::default()
            }],
        })
    }

    #[test]
    fn counts_hits_agreements_differences_and_acts() {
        let rules = RuleSet::parse(
            r#"
[[rule]]
name = "deploy"
match.question = "^Deploy"
answer = "No"
[[rule]]
name = "guess"
match.question = "^Guess"
answer = "Yes"
mode = "shadow"
[[rule]]
name = "cleanup"
match.question = "^Clean"
dismiss = "later"
"#,
        )
        .unwrap();
        let journal = vec![
            past("Deploy now?", chose("No"), Some("desktop")),
            past("Deploy again?", chose("Yes"), Some("desktop")),
            past("Deploy later?", chose("No"), Some("rule:deploy")),
            past("Deploy, withdrawn?", Settlement::Other, None),
            past("Guess?", chose("Yes"), Some("human")),
            past("Clean up?", Settlement::Dismissed, Some("desktop")),
            past("Something else?", chose("No"), Some("desktop")),
        ];
        let replay = replay(&rules, &journal);
        let summary: Vec<_> = replay
            .rules
            .iter()
            .map(|r| {
                (
                    r.rule.name.as_str(),
                    r.hits,
                    r.acted,
                    r.agreed,
                    r.differed.len(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("deploy", 4, 1, 1, 1),
                ("guess", 1, 0, 1, 0),
                ("cleanup", 1, 0, 1, 0)
            ]
        );
        let (request, verdict) = &replay.rules[0].differed[0];
        assert_eq!(request.questions[0].question, "Deploy again?");
        assert!(matches!(verdict, Verdict::Answer(a) if a.answers[0].selected == ["No"]));
        assert_eq!(replay.unmatched, 1);
    }

    #[test]
    fn journal_records_become_past_requests_without_late_answers_and_from_since() {
        let record = |asked_at: u64, outcome: &str, extra: serde_json::Value| -> Record {
            let mut line = serde_json::json!({
                "askedAt": asked_at, "settledAt": asked_at + 1, "outcome": outcome,
                "questions": [{"id": "q", "question": "Deploy?", "options": [{"label": "Yes"}]}],
            });
            line.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value(line).unwrap()
        };
        let answered = serde_json::json!({
            "answer": {"answers": [{"id": "q", "selected": ["Yes"]}]}, "answerer": "rule:deploy"
        });
        let records = vec![
            record(10, "answered", answered.clone()),
            record(20, "late-answer", answered),
            record(
                30,
                "failed",
                serde_json::json!({"error": {"code": "ASK_DENIED", "message": "no"}}),
            ),
            record(40, "withdrawn", serde_json::json!({})),
            record(
                50,
                "failed",
                serde_json::json!({"error": {"code": "NO_PROVIDER", "message": "nobody"}}),
            ),
            record(
                60,
                "failed",
                serde_json::json!({"error": {"message": "an answerer broke"}}),
            ),
            record(
                70,
                "failed",
                serde_json::json!({"error": {"code": "DELEGATED_CALLER", "message": "a child"}}),
            ),
            {
                let mut empty = record(
                    80,
                    "failed",
                    serde_json::json!({"error": {"code": "EMPTY_QUESTIONS", "message": "none"}}),
                );
                empty.questions.clear();
                empty
            },
        ];
        let all = past_requests(records.clone(), None);
        let settled: Vec<_> = all.iter().map(|p| (p.asked_at, &p.settled)).collect();
        assert_eq!(
            settled,
            [
                (10, &chose("Yes")),
                (30, &Settlement::Failed(Some("ASK_DENIED".into()))),
                (40, &Settlement::Other),
                (50, &Settlement::Other),
                (60, &Settlement::Other),
            ]
        );
        assert_eq!(all[0].answerer.as_deref(), Some("rule:deploy"));
        let recent: Vec<_> = past_requests(records, Some(30))
            .iter()
            .map(|p| p.asked_at)
            .collect();
        assert_eq!(recent, [30, 40, 50, 60]);
    }
}
