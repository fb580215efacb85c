//! Rules made from answers, as the page previews them: the rule behind "Always answer this way
//! here" (a waiting request and the answer in the dialog) and behind "Make a rule" (a History
//! record), drafted (`askdesk_rules::draft_as`) apart from the names the rules file already has,
//! once for each scope it can reach (this exact question, questions like it, every question with
//! its header), each on and in shadow mode, with the History entries it would have matched
//! (`askdesk_rules::applies`, the rules' own matching). The desktop's commands read and save the
//! file off the window's thread; saving appends the text the human saw
//! (`askdesk_rules::append_rule`).

use std::collections::VecDeque;
use std::path::PathBuf;

use askdesk_core::meta::display_name;
use askdesk_core::{Answer, Question, Request};
use askdesk_i18n::t;
use askdesk_journal::Record;
use askdesk_rules::generalise::{generalise, Varies};
use askdesk_rules::{draft_as, file, Draft, Past, RuleSet, Scope, Source};
use serde::Serialize;

use crate::history::{answerer_name, entry_id};

/// How many of the History entries a choice would have matched are listed (the newest).
pub const MATCHES_SHOWN: usize = 5;

/// The drafted rules as the page previews them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleDraftView {
    /// The rules file the rule goes to.
    path: String,
    /// The scopes offered, narrowest first; empty when no rule is offered.
    choices: Vec<ScopeChoice>,
    /// Why no rule is offered, when none is.
    unavailable: Option<String>,
    /// What is wrong with the rules file now (saving will be refused until it is fixed).
    problem: Option<String>,
}

/// One scope a rule can have, as the preview offers it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeChoice {
    /// `exact`, `similar` or `header`.
    scope: &'static str,
    /// The choice in words.
    title: String,
    /// The rule's name and its text, in force and in shadow mode, when the scope can be drafted.
    name: Option<String>,
    toml: Option<String>,
    shadow_toml: Option<String>,
    /// Why this scope is not offered.
    unavailable: Option<String>,
    /// For questions like it: each question's text, its varying parts marked.
    parts: Vec<Vec<PartView>>,
    /// The newest History entries the rule would have matched (at most [`MATCHES_SHOWN`]).
    matched: Vec<PastMatch>,
    /// How many History entries it would have matched in all.
    matched_count: usize,
    #[serde(skip)]
    rules: Option<RuleSet>,
}

/// A piece of a question's text: as written, or varying (`number`, `name`).
#[derive(Debug, Serialize)]
pub struct PartView {
    text: String,
    varies: Option<&'static str>,
}

/// A History entry a drafted rule would have matched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PastMatch {
    /// The entry's id in History ([`entry_id`]).
    id: String,
    /// Milliseconds since the Unix epoch.
    asked_at: u64,
    /// The first question's text.
    question: String,
    /// Who asked.
    who: String,
    /// Who answered, as History says it.
    by: Option<String>,
}

/// The rules that answer the waiting request `asked` with `answer` (given `now`, in milliseconds
/// since the Unix epoch) in its project, to go to the rules file at `path`. Reads the file.
pub fn from_answer(path: PathBuf, asked: &Request, answer: &Answer, now: u64) -> RuleDraftView {
    let source = Source {
        agent: asked.agent.as_ref(),
        questions: &asked.questions,
        answer,
        answered_at: now,
    };
    drafted(path, source)
}

/// The drafts for a History record: only an answer the human gave is repeated. Reads the file.
pub fn from_record(path: PathBuf, record: &Record) -> RuleDraftView {
    let Some(answer) = &record.answer else {
        return RuleDraftView::unavailable(&path, &t!("desktop-draft-not-answered"));
    };
    if let Some(by) = record
        .answerer
        .as_deref()
        .filter(|a| askdesk_rules::rule_named(a).is_some())
    {
        return RuleDraftView::unavailable(&path, &t!("desktop-draft-by-rule", rule = by));
    }
    let source = Source {
        agent: record.agent.as_ref(),
        questions: &record.questions,
        answer,
        answered_at: record.settled_at,
    };
    drafted(path, source)
}

/// The drafts, named apart from the file's rules; a file that does not load is reported with them.
/// No rule at all when this exact request cannot be drafted (every wider scope would fail alike).
fn drafted(path: PathBuf, source: Source<'_>) -> RuleDraftView {
    let (existing, problem) = match file::load(&path) {
        Ok(rules) => (rules, None),
        Err(e) => (RuleSet::default(), Some(error_text(&e))),
    };
    let mut choices = Vec::new();
    for scope in Scope::ALL {
        let on = draft_as(source, &existing, scope, false);
        let choice = match (on, draft_as(source, &existing, scope, true)) {
            (Draft::Rule { name, toml }, Draft::Rule { toml: shadow, .. }) => ScopeChoice {
                rules: RuleSet::parse(&toml).ok(),
                name: Some(name),
                toml: Some(toml),
                shadow_toml: Some(shadow),
                ..ScopeChoice::new(scope, source)
            },
            (Draft::Unavailable(why), _) | (_, Draft::Unavailable(why)) => {
                if scope == Scope::Exact {
                    let mut view = RuleDraftView::unavailable(&path, &why);
                    view.problem = problem;
                    return view;
                }
                ScopeChoice {
                    unavailable: Some(why),
                    ..ScopeChoice::new(scope, source)
                }
            }
        };
        choices.push(choice);
    }
    RuleDraftView {
        path: path.display().to_string(),
        choices,
        unavailable: None,
        problem,
    }
}

impl ScopeChoice {
    fn new(scope: Scope, source: Source<'_>) -> ScopeChoice {
        let header = source.questions.first().and_then(|q| q.header.as_deref());
        let (name, title) = match scope {
            Scope::Exact => ("exact", t!("desktop-draft-exact")),
            Scope::Similar => (
                "similar",
                t!("desktop-draft-similar", agent = display_name(source.agent)),
            ),
            Scope::Header => (
                "header",
                match header.filter(|h| !h.trim().is_empty()) {
                    Some(header) => t!("desktop-draft-header", header = header),
                    None => t!("desktop-draft-header-none"),
                },
            ),
        };
        ScopeChoice {
            scope: name,
            title,
            name: None,
            toml: None,
            shadow_toml: None,
            unavailable: None,
            parts: match scope {
                Scope::Similar => parts(source.questions),
                _ => Vec::new(),
            },
            matched: Vec::new(),
            matched_count: 0,
            rules: None,
        }
    }
}

/// Each distinct question text with its numbers and names marked as varying.
fn parts(questions: &[Question]) -> Vec<Vec<PartView>> {
    let mut texts: Vec<&str> = Vec::new();
    for q in questions {
        if !texts.contains(&q.question.as_str()) {
            texts.push(&q.question);
        }
    }
    texts
        .into_iter()
        .map(|text| {
            generalise(text)
                .parts
                .into_iter()
                .map(|p| PartView {
                    text: p.text,
                    varies: p.varies.map(|v| match v {
                        Varies::Number => "number",
                        Varies::Name => "name",
                    }),
                })
                .collect()
        })
        .collect()
}

impl RuleDraftView {
    pub fn unavailable(path: &std::path::Path, why: &str) -> RuleDraftView {
        RuleDraftView {
            path: path.display().to_string(),
            choices: Vec::new(),
            unavailable: Some(why.to_owned()),
            problem: None,
        }
    }

    /// Adds to each choice the History entries its rule would have matched, the journal's records
    /// handed over oldest first by `visit` (only the newest few are kept).
    pub fn with_history<E>(
        mut self,
        visit: impl FnOnce(&mut dyn FnMut(Record)) -> Result<(), E>,
    ) -> Result<RuleDraftView, E> {
        let mut newest: Vec<VecDeque<PastMatch>> = vec![VecDeque::new(); self.choices.len()];
        let choices = &mut self.choices;
        visit(&mut |record: Record| {
            let id = entry_id(&record);
            let by = answerer_name(&record);
            let Some(past) = Past::from_record(record) else {
                return;
            };
            for (choice, kept) in choices.iter_mut().zip(newest.iter_mut()) {
                let Some(rules) = &choice.rules else { continue };
                if !askdesk_rules::applies(rules, &past) {
                    continue;
                }
                choice.matched_count += 1;
                if kept.len() == MATCHES_SHOWN {
                    kept.pop_front();
                }
                kept.push_back(PastMatch {
                    id: id.clone(),
                    asked_at: past.asked_at,
                    question: past.questions[0].question.clone(),
                    who: display_name(past.agent.as_ref()).to_owned(),
                    by: by.clone(),
                });
            }
        })?;
        for (choice, kept) in self.choices.iter_mut().zip(newest) {
            choice.matched = kept.into_iter().rev().collect();
        }
        Ok(self)
    }
}

/// An error with its causes, for the preview (and for a refused save).
pub fn error_text(error: &file::Error) -> String {
    let mut text = error.to_string();
    if let file::Error::Read { source, .. } = error {
        text.push_str(&format!(": {source}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A History record as the page sends it back (with its entry's `kind`).
    fn record(answerer: Option<&str>) -> Record {
        asked("claude-code", "Deploy now?", answerer)
    }

    /// A record of `who` asking `text` (headed "Deploy"), answered "No" by `answerer`.
    fn asked(who: &str, text: &str, answerer: Option<&str>) -> Record {
        serde_json::from_value(json!({
            "kind": "record",
            "askedAt": 1_796_291_990_000u64, "settledAt": 1_796_292_000_000u64,
            "agent": { "id": "s-1", "label": who, "meta": { "cwd": "/home/me/app" } },
            "questions": [{ "id": "q", "question": text, "header": "Deploy",
                            "options": [{ "label": "Yes" }, { "label": "No" }] }],
            "outcome": "answered",
            "answer": { "answers": [{ "id": "q", "selected": ["No"] }] },
            "answerer": answerer,
        }))
        .unwrap()
    }

    /// A rules file in a folder of its own, removed at the end.
    struct Folder(PathBuf);

    impl Folder {
        fn new(name: &str, text: &str) -> Folder {
            let dir = std::env::temp_dir()
                .join(format!("askdesk-rule-draft-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("rules.toml"), text).unwrap();
            Folder(dir)
        }

        fn file(&self) -> PathBuf {
            self.0.join("rules.toml")
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_record_answered_by_the_human_is_drafted_apart_from_the_file_s_names() {
        // The file's `deploy` is about another project: it does not decide this request.
        let folder = Folder::new(
            "names",
            "[[rule]]\nname = \"deploy\"\nmatch = { cwd = \"/srv/other\" }\nask = true\n",
        );
        let view = from_record(folder.file(), &record(Some("desktop")));
        let exact = &view.choices[0];
        assert_eq!(exact.name.as_deref(), Some("deploy-2"), "{view:?}");
        let toml = exact.toml.clone().unwrap();
        assert!(toml.contains("answer = \"No\""), "{toml}");
        assert!(toml.starts_with("# Made from your answer to claude-code on 2026-12-03."));
        assert_eq!(view.path, folder.file().display().to_string());
        assert_eq!(view.problem, None);
        assert_eq!(view.unavailable, None);
    }

    #[test]
    fn a_broken_file_is_reported_with_the_draft() {
        let folder = Folder::new("broken", "[[rule]]\nname = \"half\"\n");
        let view = from_record(folder.file(), &record(None));
        assert!(view.choices[0].toml.is_some(), "{view:?}");
        let problem = view.problem.unwrap();
        assert!(problem.contains("line 1, column 1"), "{problem}");
    }

    #[test]
    fn what_a_rule_or_nobody_answered_is_not_drafted() {
        let folder = Folder::new("rules", "");
        let view = from_record(folder.file(), &record(Some("rule:deploy")));
        assert!(view.choices.is_empty());
        assert!(view
            .unavailable
            .unwrap()
            .contains("answered by a rule (rule:deploy)"));
        let mut unanswered = record(None);
        unanswered.answer = None;
        let view = from_record(folder.file(), &unanswered);
        assert!(view.unavailable.unwrap().contains("not answered"));
    }

    #[test]
    fn each_scope_lists_the_history_entries_it_would_have_matched() {
        let folder = Folder::new("scopes", "");
        let mut answered = asked("claude-code", "Deploy build 41 now?", Some("desktop"));
        answered.settled_at += 1;
        let view = from_record(folder.file(), &answered);
        let scopes: Vec<_> = view.choices.iter().map(|c| c.scope).collect();
        assert_eq!(scopes, ["exact", "similar", "header"]);
        assert!(
            view.choices.iter().all(|c| c.unavailable.is_none()),
            "{view:?}"
        );
        assert!(view.choices[1]
            .shadow_toml
            .as_deref()
            .unwrap()
            .ends_with("mode = \"shadow\"\n"));
        let varying: Vec<_> = view.choices[1].parts[0]
            .iter()
            .filter_map(|p| p.varies.map(|v| (p.text.as_str(), v)))
            .collect();
        assert_eq!(varying, [("41", "number")]);

        let mut journal: Vec<Record> = (0..8)
            .map(|n| {
                asked(
                    "claude-code",
                    &format!("Deploy build {n} now?"),
                    Some("desktop"),
                )
            })
            .collect();
        journal.push(asked("claude-code", "Deploy build 41 now?", None));
        journal.push(asked("ci-bot", "Deploy build 7 now?", Some("desktop")));
        journal.push(asked(
            "claude-code",
            "Deploy build 7 later?",
            Some("rule:x"),
        ));
        for (n, record) in journal.iter_mut().enumerate() {
            record.asked_at += n as u64;
        }
        let view = view
            .with_history(|each| {
                journal.iter().cloned().for_each(each);
                Ok::<_, ()>(())
            })
            .unwrap();
        let counts: Vec<_> = view.choices.iter().map(|c| c.matched_count).collect();
        // Exact: the one request of that text. Like it: claude-code's eight builds too, not ci-bot's
        // nor the other wording. Header: every one of them.
        assert_eq!(counts, [1, 9, 11]);
        let similar = &view.choices[1].matched;
        assert_eq!(similar.len(), MATCHES_SHOWN);
        assert_eq!(similar[0].question, "Deploy build 41 now?", "newest first");
        assert_eq!(similar[1].question, "Deploy build 7 now?");
        assert_eq!(similar[1].by.as_deref(), Some("you"));
        assert_eq!(similar[0].id, entry_id(&journal[8]));
    }
}
