//! The History view: journal records as the page shows them — named, identified, found by text,
//! filtered, and the plan reviews of one thread gathered into one entry.
//!
//! Everything the page says of a record is decided here (who asked, who answered, what the outcome
//! is called, which error is worth a line), so the page only lays it out.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};

use askdesk_core::meta::{self, display_name};
use askdesk_core::Question;
use askdesk_i18n::t;
use askdesk_journal::{Outcome, Record};
use serde::{Deserialize, Serialize};

use crate::answerer::DESKTOP_ANSWERER;
use crate::markdown;
use crate::plan_thread::{decision_of, plan_question, thread_key};

/// One entry of the History view: a settled request, or a plan thread (its versions oldest first).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum HistoryEntry {
    Record(Box<RecordEntry>),
    PlanThread(PlanThreadEntry),
}

/// A journal record with what the page shows of it beside it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordEntry {
    /// Names this record for "Make a rule" ([`entry_id`]).
    pub id: String,
    /// Who asked ([`display_name`]).
    pub who: String,
    /// Who answered ([`answerer_name`]), when anyone did.
    pub by: Option<String>,
    /// Whether a rule answered (`by` is `rule:<name>`).
    pub by_rule: bool,
    /// The folder the agent worked in, when it said.
    pub project: Option<String>,
    /// The outcome in words ([`outcome_name`]).
    pub outcome_name: String,
    /// The error worth a line: only a failure's; a withdrawn or dismissed ask says all in its outcome.
    pub problem: Option<String>,
    /// Whether "Make a rule" can repeat this answer: the person gave it.
    pub can_make_rule: bool,
    #[serde(flatten)]
    pub record: Record,
}

impl RecordEntry {
    pub fn new(record: Record) -> RecordEntry {
        let by = answerer_name(&record);
        let by_rule = record
            .answerer
            .as_deref()
            .and_then(askdesk_rules::rule_named)
            .is_some();
        let problem = match (&record.outcome, &record.error) {
            (Outcome::Failed, Some(error)) => Some(match &error.code {
                Some(code) => format!("{code}: {}", error.message),
                None => error.message.clone(),
            }),
            _ => None,
        };
        RecordEntry {
            id: entry_id(&record),
            who: display_name(record.agent.as_ref()).to_owned(),
            can_make_rule: record.answer.is_some()
                && matches!(record.outcome, Outcome::Answered | Outcome::LateAnswer)
                && !by_rule,
            by_rule,
            by,
            project: record
                .agent
                .as_ref()
                .and_then(|agent| agent.meta_str(meta::CWD))
                .map(str::to_owned),
            outcome_name: outcome_name(record.outcome),
            problem,
            record,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanThreadEntry {
    pub versions: Vec<PlanVersionEntry>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanVersionEntry {
    #[serde(flatten)]
    pub entry: RecordEntry,
    /// What the human decided, in words (`approved`, `feedback sent`, `dismissed`, ...).
    pub decision: String,
    /// The feedback sent with this version (markdown: quoted blocks and comments), sanitized HTML.
    pub feedback_html: Option<String>,
    /// The same feedback on one line (its blocks' text), shown until the entry is opened.
    pub feedback_line: Option<String>,
}

impl PlanVersionEntry {
    fn new(record: Record, question: &Question) -> PlanVersionEntry {
        let decision = match &record.answer {
            Some(answer) => decision_of(question, answer),
            None => record.outcome.as_str().to_owned(),
        };
        let feedback = record
            .answer
            .as_ref()
            .and_then(|answer| answer.answers.iter().find(|a| a.id == question.id))
            .and_then(|item| item.custom.as_deref())
            .map(markdown::render);
        let feedback_line = feedback.as_ref().map(|rendered| {
            let parts: Vec<&str> = rendered
                .blocks
                .iter()
                .map(|block| block.text.as_str())
                .filter(|text| !text.is_empty())
                .collect();
            parts.join(" · ")
        });
        PlanVersionEntry {
            entry: RecordEntry::new(record),
            decision,
            feedback_html: feedback.map(|rendered| rendered.html),
            feedback_line,
        }
    }
}

impl HistoryEntry {
    /// The record the entry is filtered and sorted by: itself, or a plan thread's latest version.
    pub fn latest(&self) -> &Record {
        match self {
            HistoryEntry::Record(entry) => &entry.record,
            HistoryEntry::PlanThread(thread) => {
                &thread
                    .versions
                    .last()
                    .expect("a thread has a version")
                    .entry
                    .record
            }
        }
    }
}

/// Names a record for as long as the journal holds it, whatever was written or rotated since:
/// when it settled and a hash of the record itself (two identical records draft the same rule).
pub fn entry_id(record: &Record) -> String {
    let mut hasher = DefaultHasher::new();
    serde_json::to_vec(record)
        .expect("a record serializes")
        .hash(&mut hasher);
    format!("{}-{:016x}", record.settled_at, hasher.finish())
}

/// The History view's filters; `None` lets every entry through.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryQuery {
    /// The agent as the page names it ([`display_name`]).
    pub agent: Option<String>,
    /// `answered`, `dismissed`, ...
    pub outcome: Option<String>,
    /// Who answered, as the journal names it (`desktop`, `rule:<name>`): the value of one of
    /// [`HistoryPage::answerers`], whatever the language the page shows it in.
    pub answerer: Option<String>,
    /// Words to find, in any case: every word must appear in the question, its options or detail,
    /// the answer, who asked or answered, the project or the error.
    pub text: Option<String>,
    /// At most this many entries (newest first).
    pub limit: usize,
}

impl HistoryQuery {
    fn lets_through(&self, record: &Record) -> bool {
        self.agent
            .as_ref()
            .is_none_or(|agent| agent == display_name(record.agent.as_ref()))
            && self
                .outcome
                .as_ref()
                .is_none_or(|outcome| outcome == record.outcome.as_str())
            && self
                .answerer
                .as_ref()
                .is_none_or(|answerer| Some(answerer.as_str()) == record.answerer.as_deref())
    }

    /// The search's words, lower-cased; none when there is nothing to find.
    fn words(&self) -> Vec<String> {
        self.text
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_lowercase)
            .collect()
    }
}

/// Whether every word is found in what History shows of the records (any of them, for a thread).
fn found(words: &[String], records: &[&Record]) -> bool {
    if words.is_empty() {
        return true;
    }
    let mut text = String::new();
    for record in records {
        searchable(record, &mut text);
    }
    let text = text.to_lowercase();
    words.iter().all(|word| text.contains(word.as_str()))
}

/// The text of a record that search looks in, each part on a line of its own.
fn searchable(record: &Record, out: &mut String) {
    let mut push = |part: &str| {
        out.push_str(part);
        out.push('\n');
    };
    push(display_name(record.agent.as_ref()));
    if let Some(project) = record.agent.as_ref().and_then(|a| a.meta_str(meta::CWD)) {
        push(project);
    }
    if let Some(by) = answerer_name(record) {
        push(&by);
    }
    for question in &record.questions {
        push(&question.question);
        question.header.as_deref().map(&mut push);
        question.detail.as_deref().map(&mut push);
        question.options.iter().for_each(|o| push(&o.label));
    }
    // What was sent, and what the person had typed in a request that ended before they sent it.
    for item in record
        .answer
        .iter()
        .chain(&record.draft)
        .flat_map(|a| &a.answers)
    {
        item.selected.iter().for_each(|s| push(s));
        item.custom.as_deref().map(&mut push);
    }
    if let Some(error) = &record.error {
        push(&error.message);
    }
}

/// One choice of the answerer filter: the journal's name for the answerer, and History's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswererChoice {
    pub value: String,
    pub name: String,
}

/// One choice of the outcome filter.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeChoice {
    pub value: &'static str,
    pub name: String,
}

/// One page of History: the newest matching entries, how many match in all, and the values the
/// filters offer, taken from the whole journal (not only from the entries sent).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    pub entries: Vec<HistoryEntry>,
    pub matching: usize,
    pub total: usize,
    pub agents: Vec<String>,
    /// Everyone who answered, the desktop ("you") first.
    pub answerers: Vec<AnswererChoice>,
    /// Every outcome a record can have, in the filter's order.
    pub outcomes: Vec<OutcomeChoice>,
    /// The words searched for, as search matched them (lowercase): the page marks them where they show.
    pub words: Vec<String>,
}

/// An outcome as History calls it, in the person's language.
pub fn outcome_name(outcome: Outcome) -> String {
    match outcome {
        Outcome::Answered => t!("desktop-history-outcome-answered"),
        Outcome::Dismissed => t!("desktop-history-outcome-dismissed"),
        Outcome::Withdrawn => t!("desktop-history-outcome-withdrawn"),
        Outcome::Failed => t!("desktop-history-outcome-failed"),
        Outcome::LateAnswer => t!("desktop-history-outcome-late-answer"),
    }
}

/// How History names who answered ([`shown_answerer`]), when anyone did.
pub fn answerer_name(record: &Record) -> Option<String> {
    record.answerer.as_deref().map(shown_answerer)
}

/// How History names an answerer the journal names `answerer`: "you" in the person's language
/// for the desktop dialog, else the answerer's own label (`rule:<name>`, a phone's name).
pub fn shown_answerer(answerer: &str) -> String {
    match answerer {
        DESKTOP_ANSWERER => t!("desktop-history-you"),
        other => other.to_owned(),
    }
}

/// Builds a [`HistoryPage`] from the journal's records, handed over oldest first, holding only
/// what the page can show: the newest matching plain records (at most `limit`) and the plan
/// threads (whose place and filter values are known only once their last version is read).
/// However long the journal, the page costs its reading, not its size in memory.
pub struct HistoryPageBuilder {
    query: HistoryQuery,
    words: Vec<String>,
    /// Records handed over so far; an entry's place is that of its newest record.
    seen: u64,
    /// The newest matching records that are not plan reviews, oldest first, with their places.
    plain: VecDeque<(u64, Record)>,
    plain_total: usize,
    plain_matching: usize,
    /// Plan threads by thread key, with the place of their newest version.
    threads: HashMap<String, (u64, Vec<Record>)>,
    agents: BTreeSet<String>,
    answerers: BTreeSet<String>,
}

impl HistoryPageBuilder {
    pub fn new(query: HistoryQuery) -> Self {
        HistoryPageBuilder {
            words: query.words(),
            query,
            seen: 0,
            plain: VecDeque::new(),
            plain_total: 0,
            plain_matching: 0,
            threads: HashMap::new(),
            agents: BTreeSet::new(),
            answerers: BTreeSet::new(),
        }
    }

    /// The next record of the journal (oldest first).
    pub fn push(&mut self, record: Record) {
        self.seen += 1;
        let key = record.agent.as_ref().map(thread_key);
        match key.filter(|_| plan_question(&record.questions).is_some()) {
            Some(key) => {
                let thread = self.threads.entry(key).or_default();
                thread.0 = self.seen;
                thread.1.push(record);
            }
            None => {
                self.offered(&record);
                self.plain_total += 1;
                if self.query.lets_through(&record) && found(&self.words, &[&record]) {
                    self.plain_matching += 1;
                    self.plain.push_back((self.seen, record));
                    if self.plain.len() > self.query.limit {
                        self.plain.pop_front();
                    }
                }
            }
        }
    }

    /// The filters' values: every agent and answerer of an entry's newest record.
    fn offered(&mut self, record: &Record) {
        self.agents
            .insert(display_name(record.agent.as_ref()).to_owned());
        if let Some(answerer) = &record.answerer {
            self.answerers.insert(answerer.clone());
        }
    }

    pub fn finish(mut self) -> HistoryPage {
        let threads = std::mem::take(&mut self.threads);
        let mut total = self.plain_total;
        let mut matching = self.plain_matching;
        // Entries are made (feedback rendered, ids hashed) only for those the page gets.
        let mut kept: Vec<(u64, Vec<Record>)> = Vec::new();
        for (place, versions) in threads.into_values() {
            let latest = versions.last().expect("a thread has a version");
            self.offered(latest);
            total += 1;
            let all: Vec<&Record> = versions.iter().collect();
            if self.query.lets_through(latest) && found(&self.words, &all) {
                matching += 1;
                kept.push((place, versions));
            }
        }
        let mut entries: Vec<(u64, HistoryEntry)> = Vec::new();
        kept.sort_unstable_by_key(|(place, _)| std::cmp::Reverse(*place));
        kept.truncate(self.query.limit);
        entries.extend(
            kept.into_iter()
                .map(|(place, versions)| (place, HistoryEntry::PlanThread(thread(versions)))),
        );
        entries.extend(self.plain.into_iter().map(|(place, record)| {
            (
                place,
                HistoryEntry::Record(Box::new(RecordEntry::new(record))),
            )
        }));
        entries.sort_unstable_by_key(|entry| std::cmp::Reverse(entry.0));
        entries.truncate(self.query.limit);
        // "you" first, then the rules and other answerers in order.
        let mut answerers: Vec<String> = self.answerers.into_iter().collect();
        if let Some(you) = answerers.iter().position(|name| name == DESKTOP_ANSWERER) {
            let you = answerers.remove(you);
            answerers.insert(0, you);
        }
        let answerers = answerers
            .into_iter()
            .map(|value| AnswererChoice {
                name: shown_answerer(&value),
                value,
            })
            .collect();
        HistoryPage {
            entries: entries.into_iter().map(|(_, entry)| entry).collect(),
            matching,
            total,
            agents: self.agents.into_iter().collect(),
            answerers,
            outcomes: Outcome::ALL
                .iter()
                .map(|&outcome| OutcomeChoice {
                    value: outcome.as_str(),
                    name: outcome_name(outcome),
                })
                .collect(),
            words: self.words,
        }
    }
}

/// A thread's entry: each version with the decision taken on it.
fn thread(versions: Vec<Record>) -> PlanThreadEntry {
    PlanThreadEntry {
        versions: versions
            .into_iter()
            .map(|record| {
                let question = plan_question(&record.questions)
                    .expect("a thread holds plan reviews")
                    .clone();
                PlanVersionEntry::new(record, &question)
            })
            .collect(),
    }
}

/// The record of the journal that `id` names ([`entry_id`]), read oldest first by `visit`.
pub fn find<E>(
    visit: impl FnOnce(&mut dyn FnMut(Record)) -> Result<(), E>,
    id: &str,
) -> Result<Option<Record>, E> {
    let mut hit = None;
    let settled_at = id.split_once('-').map(|(at, _)| at);
    visit(&mut |record: Record| {
        if hit.is_none()
            && settled_at == Some(record.settled_at.to_string().as_str())
            && entry_id(&record) == id
        {
            hit = Some(record);
        }
    })?;
    Ok(hit)
}

/// Groups journal records (oldest first) into History entries, newest first.
#[cfg(test)]
pub fn history_entries(records: Vec<Record>) -> Vec<HistoryEntry> {
    let mut page = HistoryPageBuilder::new(HistoryQuery {
        limit: usize::MAX,
        ..HistoryQuery::default()
    });
    records.into_iter().for_each(|record| page.push(record));
    page.finish().entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan_thread::tests::{plan_question, V1, V2};

    #[test]
    fn history_groups_a_thread_into_one_entry() {
        let record = |id: &str, detail: Option<&str>, answer: &str| -> Record {
            let mut q = plan_question(detail.unwrap_or("x"));
            if detail.is_none() {
                q.intent = None;
                q.detail = None;
            }
            serde_json::from_value(serde_json::json!({
                "askedAt": 1, "settledAt": 2, "agent": { "id": id },
                "questions": [q], "outcome": "answered",
                "answer": { "answers": [{ "id": "plan", "selected": [answer] }] },
            }))
            .unwrap()
        };
        let entries = history_entries(vec![
            record("coder", Some(V1), "Keep planning"),
            record("coder", None, "Approve"),
            record("other", Some(V1), "Approve"),
            record("coder", Some(V2), "Approve"),
        ]);
        let shape: Vec<String> = entries
            .iter()
            .map(|e| match e {
                HistoryEntry::Record(r) => {
                    format!("record {}", r.record.agent.as_ref().unwrap().id)
                }
                HistoryEntry::PlanThread(t) => format!(
                    "thread {} [{}]",
                    t.versions[0].entry.record.agent.as_ref().unwrap().id,
                    t.versions
                        .iter()
                        .map(|v| v.decision.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                "thread coder [chose “Keep planning”, approved]",
                "thread other [approved]",
                "record coder",
            ]
        );
        assert_eq!(history_entries(Vec::new()).len(), 0);
        let json = serde_json::to_value(&entries[0]).unwrap();
        assert_eq!(json["kind"], "plan-thread");
        assert_eq!(json["versions"][1]["decision"], "approved");
        assert_eq!(json["versions"][1]["outcome"], "answered");
    }

    #[test]
    fn history_pages_filter_the_whole_journal_and_offer_every_value() {
        let record =
            |n: u64, agent: Option<(&str, Option<&str>)>, outcome: &str, by: Option<&str>| {
                let mut value = serde_json::json!({
                    "askedAt": n, "settledAt": n, "outcome": outcome,
                    "questions": [{ "id": "q", "question": format!("question {n}") }],
                });
                if let Some((id, label)) = agent {
                    value["agent"] = serde_json::json!({ "id": id, "label": label });
                }
                if let Some(by) = by {
                    value["answerer"] = serde_json::json!(by);
                }
                serde_json::from_value::<Record>(value).unwrap()
            };
        // The oldest from "nightly" (by a rule), then 2,500 from "coder" (by the desktop), and
        // one from a script.
        let mut records = vec![record(
            0,
            Some(("nightly", None)),
            "answered",
            Some("rule:ci"),
        )];
        records.extend((1..=2500).map(|n| {
            record(
                n,
                Some(("c1", Some(" coder "))),
                "answered",
                Some("desktop"),
            )
        }));
        records.push(record(2501, None, "withdrawn", None));
        let page = |agent: Option<&str>, outcome: Option<&str>, answerer: Option<&str>, limit| {
            let mut page = HistoryPageBuilder::new(HistoryQuery {
                agent: agent.map(str::to_owned),
                outcome: outcome.map(str::to_owned),
                answerer: answerer.map(str::to_owned),
                text: None,
                limit,
            });
            records.iter().cloned().for_each(|record| page.push(record));
            page.finish()
        };
        let newest = page(None, None, None, 1000);
        assert_eq!(
            (newest.entries.len(), newest.matching, newest.total),
            (1000, 2502, 2502)
        );
        assert_eq!(newest.entries[0].latest().settled_at, 2501);
        assert_eq!(newest.agents, ["a script", "coder", "nightly"]);
        let answerers: Vec<(&str, &str)> = newest
            .answerers
            .iter()
            .map(|a| (a.value.as_str(), a.name.as_str()))
            .collect();
        assert_eq!(answerers, [("desktop", "you"), ("rule:ci", "rule:ci")]);
        // The oldest entry, far past the first page, is one filter away.
        let nightly = page(Some("nightly"), None, None, 1000);
        assert_eq!((nightly.entries.len(), nightly.matching), (1, 1));
        assert_eq!(nightly.entries[0].latest().settled_at, 0);
        assert_eq!(page(None, None, Some("rule:ci"), 1000).matching, 1);
        assert_eq!(page(None, Some("withdrawn"), None, 1000).matching, 1);
        assert_eq!(
            page(Some("a script"), Some("answered"), None, 1000).matching,
            0
        );
        assert_eq!(page(None, None, Some("desktop"), 3000).entries.len(), 2500);
        // The filter takes the journal's name, never the one shown: "you" is no answerer's.
        assert_eq!(page(None, None, Some("you"), 3000).matching, 0);
    }

    #[test]
    fn the_desktop_is_you_in_every_language() {
        for language in askdesk_i18n::languages() {
            let you = askdesk_i18n::Messages::new(language).get("desktop-history-you", None);
            assert!(
                !you.is_empty() && you != "desktop-history-you",
                "{language}"
            );
        }
        let chinese = askdesk_i18n::Messages::new("zh-CN").get("desktop-history-you", None);
        assert_eq!(chinese, "你");
        assert_ne!(
            chinese,
            askdesk_i18n::english().get("desktop-history-you", None)
        );
    }

    #[test]
    fn a_plan_thread_takes_the_place_of_its_newest_version_on_a_page() {
        let plain = |n: u64| -> Record {
            serde_json::from_value(serde_json::json!({
                "askedAt": n, "settledAt": n, "agent": { "id": format!("p{n}") },
                "questions": [{ "id": "q", "question": format!("plain {n}") }], "outcome": "withdrawn",
            }))
            .unwrap()
        };
        let version = |n: u64, detail: &str| -> Record {
            serde_json::from_value(serde_json::json!({
                "askedAt": n, "settledAt": n, "agent": { "id": "planner" },
                "questions": [plan_question(detail)], "outcome": "answered",
                "answer": { "answers": [{ "id": "plan", "selected": ["Keep planning"] }] },
            }))
            .unwrap()
        };
        let records = [plain(1), version(2, V1), plain(3), version(4, V2), plain(5)];
        let page = |agent: Option<&str>, limit| {
            let mut page = HistoryPageBuilder::new(HistoryQuery {
                agent: agent.map(str::to_owned),
                limit,
                ..HistoryQuery::default()
            });
            records.iter().cloned().for_each(|record| page.push(record));
            page.finish()
        };
        let places = |page: &HistoryPage| -> Vec<u64> {
            page.entries.iter().map(|e| e.latest().settled_at).collect()
        };
        let two = page(None, 2);
        assert_eq!(places(&two), [5, 4]);
        assert!(matches!(&two.entries[1], HistoryEntry::PlanThread(t) if t.versions.len() == 2));
        assert_eq!((two.matching, two.total), (4, 4));
        assert_eq!(places(&page(None, 10)), [5, 4, 3, 1]);
        let planner = page(Some("planner"), 10);
        assert_eq!((places(&planner), planner.matching), (vec![4], 1));
        assert_eq!(planner.agents, ["p1", "p3", "p5", "planner"]);
    }

    /// A record of `question` from `agent` (label, cwd), settled at `at` with `outcome`.
    fn asked(at: u64, question: &str, outcome: &str, extra: serde_json::Value) -> Record {
        let mut value = serde_json::json!({
            "askedAt": at, "settledAt": at, "outcome": outcome,
            "agent": { "id": "c1", "label": "Claude Code", "meta": { "cwd": "/home/me/shop" } },
            "questions": [{ "id": "q", "question": question,
                            "options": [{ "label": "Postgres" }, { "label": "SQLite" }] }],
        });
        value
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(value).unwrap()
    }

    fn search(records: &[Record], text: &str) -> Vec<u64> {
        let mut page = HistoryPageBuilder::new(HistoryQuery {
            text: Some(text.into()),
            limit: 100,
            ..HistoryQuery::default()
        });
        records.iter().cloned().for_each(|r| page.push(r));
        page.finish()
            .entries
            .iter()
            .map(|e| e.latest().settled_at)
            .collect()
    }

    #[test]
    fn search_finds_every_word_in_what_history_shows_in_any_case() {
        let answered = serde_json::json!({
            "answerer": "desktop",
            "answer": { "answers": [{ "id": "q", "selected": ["SQLite"], "custom": "keep the JSON export" }] },
        });
        let records = [
            asked(1, "Which database?", "answered", answered),
            asked(2, "Deploy to staging?", "withdrawn", serde_json::json!({})),
            asked(
                3,
                "Plan",
                "answered",
                serde_json::json!({
                    "agent": { "id": "p", "meta": { "session": "s1" } },
                    "questions": [plan_question(V1)], "answerer": "rule:ship",
                    "answer": { "answers": [{ "id": "plan", "selected": ["Approve"] }] },
                }),
            ),
        ];
        assert_eq!(search(&records, "database"), [1]);
        assert_eq!(
            search(&records, "  json   EXPORT "),
            [1],
            "the answer's text, any case"
        );
        assert_eq!(
            search(&records, "sqlite which"),
            [1],
            "every word, in any order"
        );
        assert_eq!(search(&records, "postgres"), [2, 1], "an option offered");
        assert_eq!(search(&records, "shop"), [2, 1], "the project folder");
        assert_eq!(search(&records, "claude"), [2, 1], "who asked");
        assert_eq!(search(&records, "schema"), [3], "a plan's text");
        assert_eq!(search(&records, "rule:ship"), [3], "who answered");
        assert_eq!(search(&records, "database staging"), Vec::<u64>::new());
        assert_eq!(search(&records, ""), [3, 2, 1]);
        // The page is told the words, as matched, to mark them.
        let mut page = HistoryPageBuilder::new(HistoryQuery {
            text: Some("  json   EXPORT ".into()),
            limit: 100,
            ..HistoryQuery::default()
        });
        records.iter().cloned().for_each(|r| page.push(r));
        assert_eq!(page.finish().words, ["json", "export"]);
    }

    #[test]
    fn a_withdrawn_requests_draft_is_shown_and_found() {
        let drafted = serde_json::json!({
            "error": { "code": "ASK_ABORTED", "message": "aborted" },
            "draft": { "answers": [{ "id": "q", "selected": [], "custom": "keep the nightly backups" }] },
        });
        let record = asked(4, "Drop the old tables?", "withdrawn", drafted);
        assert_eq!(search(std::slice::from_ref(&record), "nightly"), [4]);
        let entry = serde_json::to_value(RecordEntry::new(record)).unwrap();
        assert_eq!(
            entry["draft"]["answers"][0]["custom"],
            "keep the nightly backups"
        );
        assert_eq!(entry["problem"], serde_json::Value::Null);
    }

    #[test]
    fn a_thread_is_found_by_the_words_of_any_version() {
        let version = |n: u64, detail: &str| -> Record {
            serde_json::from_value(serde_json::json!({
                "askedAt": n, "settledAt": n, "agent": { "id": "planner" },
                "questions": [plan_question(detail)], "outcome": "answered",
                "answer": { "answers": [{ "id": "plan", "selected": [], "custom": format!("note {n}") }] },
            }))
            .unwrap()
        };
        let records = [version(1, V1), version(2, V2)];
        assert_eq!(search(&records, "ship"), [2], "only version 1 says Ship");
        assert_eq!(search(&records, "note 2"), [2]);
        assert_eq!(search(&records, "nowhere"), Vec::<u64>::new());
    }

    #[test]
    fn an_entry_says_who_asked_who_answered_and_what_the_outcome_is_called() {
        let by_you = asked(
            1,
            "Which database?",
            "answered",
            serde_json::json!({
                "answerer": "desktop",
                "answer": { "answers": [{ "id": "q", "selected": ["SQLite"] }] },
            }),
        );
        let withdrawn = asked(
            2,
            "Deploy?",
            "withdrawn",
            serde_json::json!({
                "error": { "code": "ASK_ABORTED", "message": "ask_user_question was aborted" },
            }),
        );
        let failed = asked(
            3,
            "Deploy?",
            "failed",
            serde_json::json!({
                "error": { "code": "NO_PROVIDER", "message": "nobody answers" },
            }),
        );
        let by_rule = asked(
            4,
            "Which database?",
            "answered",
            serde_json::json!({
                "answerer": "rule:db",
                "answer": { "answers": [{ "id": "q", "selected": ["SQLite"] }] },
            }),
        );
        let entries: Vec<serde_json::Value> =
            history_entries(vec![by_you.clone(), withdrawn, failed, by_rule])
                .iter()
                .map(|e| serde_json::to_value(e).unwrap())
                .collect();
        let [rule, failed, withdrawn, you] = &entries[..] else {
            panic!("{entries:?}")
        };
        assert_eq!(you["who"], "Claude Code");
        assert_eq!(you["by"], "you");
        assert_eq!(you["project"], "/home/me/shop");
        assert_eq!(you["outcomeName"], "Answered");
        assert_eq!(you["canMakeRule"], true);
        assert_eq!(you["id"], entry_id(&by_you));
        assert_eq!(rule["by"], "rule:db");
        assert_eq!(
            rule["canMakeRule"], false,
            "a rule's answer is not the person's"
        );
        assert_eq!(withdrawn["outcomeName"], "Withdrawn");
        assert_eq!(
            withdrawn["problem"],
            serde_json::Value::Null,
            "withdrawn says it all"
        );
        assert_eq!(withdrawn["by"], serde_json::Value::Null);
        assert_eq!(failed["problem"], "NO_PROVIDER: nobody answers");
        assert_eq!(failed["canMakeRule"], false);
    }

    #[test]
    fn an_answer_from_another_member_of_the_persons_group_names_that_device() {
        let on_phone = asked(
            1,
            "Which database?",
            "answered",
            serde_json::json!({
                "answerer": "Pixel 8",
                "answer": { "answers": [{ "id": "q", "selected": ["SQLite"] }] },
            }),
        );
        let entries = history_entries(vec![on_phone]);
        let entry = serde_json::to_value(&entries[0]).unwrap();
        assert_eq!(entry["by"], "Pixel 8");
        assert_eq!(entry["canMakeRule"], true, "the person answered it");
    }

    #[test]
    fn the_outcome_filter_offers_every_outcome_by_name() {
        let page = HistoryPageBuilder::new(HistoryQuery::default()).finish();
        let offered: Vec<(&str, &str)> = page
            .outcomes
            .iter()
            .map(|o| (o.value, o.name.as_str()))
            .collect();
        assert_eq!(
            offered,
            [
                ("answered", "Answered"),
                ("dismissed", "Dismissed"),
                ("withdrawn", "Withdrawn"),
                ("failed", "Failed"),
                ("late-answer", "Late answer"),
            ]
        );
    }

    #[test]
    fn plan_feedback_is_rendered_as_sanitized_markdown() {
        let record: Record = serde_json::from_value(serde_json::json!({
            "askedAt": 1, "settledAt": 1, "agent": { "id": "planner" },
            "questions": [plan_question(V1)], "outcome": "answered",
            "answer": { "answers": [{ "id": "plan", "selected": [],
                "custom": "> **Steps**\n\nKeep it <script>alert(1)</script>" }] },
        }))
        .unwrap();
        let entries = history_entries(vec![record]);
        let HistoryEntry::PlanThread(thread) = &entries[0] else {
            panic!()
        };
        let html = thread.versions[0].feedback_html.as_deref().unwrap();
        assert!(
            html.contains("<blockquote>") && html.contains("<strong>Steps</strong>"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
        let line = thread.versions[0].feedback_line.as_deref().unwrap();
        assert!(line.starts_with("Steps · Keep it"), "{line}");
        assert!(!line.contains('>') && !line.contains("**"), "{line}");
    }

    #[test]
    fn an_entry_id_finds_its_record_again_and_nothing_else() {
        let records: Vec<Record> = (1..=3)
            .map(|n| {
                asked(
                    n,
                    &format!("question {n}"),
                    "answered",
                    serde_json::json!({}),
                )
            })
            .collect();
        let visit = |each: &mut dyn FnMut(Record)| -> Result<(), ()> {
            records.iter().cloned().for_each(each);
            Ok(())
        };
        let id = entry_id(&records[1]);
        assert_eq!(find(visit, &id).unwrap(), Some(records[1].clone()));
        assert_eq!(find(visit, "2-0000000000000000").unwrap(), None);
        assert_eq!(find(visit, "nonsense").unwrap(), None);
        let mut edited = records[1].clone();
        edited.questions[0].question.push('!');
        assert_ne!(entry_id(&edited), id, "an id names one record's content");
    }
}
