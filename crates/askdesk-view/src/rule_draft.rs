//! Rules made from answers, as the page previews them: the rule behind "Always answer this way
//! here" (a waiting request and the answer in the dialog) and behind "Make a rule" (a History
//! record), drafted (`askdesk_rules::draft`) apart from the names the rules file already has.
//! The desktop's commands read and save the file off the window's thread; saving appends the text
//! the human saw (`askdesk_rules::append_rule`).

use std::path::PathBuf;

use askdesk_core::{Answer, Request};
use askdesk_journal::Record;
use askdesk_rules::{draft, file, Draft, RuleSet, Source};
use serde::Serialize;

/// A drafted rule as the page previews it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleDraftView {
    /// The rules file the rule goes to.
    path: String,
    /// The rule's name and its text, when one rule can give this answer.
    name: Option<String>,
    toml: Option<String>,
    /// Why no rule is offered, when none is.
    unavailable: Option<String>,
    /// What is wrong with the rules file now (saving will be refused until it is fixed).
    problem: Option<String>,
}

/// The rule that answers the waiting request `asked` with `answer` (given `now`, in milliseconds
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

/// The draft for a History record: only an answer the human gave is repeated. Reads the file.
pub fn from_record(path: PathBuf, record: &Record) -> RuleDraftView {
    let Some(answer) = &record.answer else {
        return RuleDraftView::unavailable(
            &path,
            "this request was not answered, so there is no answer to repeat",
        );
    };
    if let Some(by) = record
        .answerer
        .as_deref()
        .filter(|a| askdesk_rules::rule_named(a).is_some())
    {
        return RuleDraftView::unavailable(
            &path,
            &format!("this request was answered by a rule ({by}), not by you"),
        );
    }
    let source = Source {
        agent: record.agent.as_ref(),
        questions: &record.questions,
        answer,
        answered_at: record.settled_at,
    };
    drafted(path, source)
}

/// The draft, named apart from the file's rules; a file that does not load is reported with it.
fn drafted(path: PathBuf, source: Source<'_>) -> RuleDraftView {
    let (existing, problem) = match file::load(&path) {
        Ok(rules) => (rules, None),
        Err(e) => (RuleSet::default(), Some(error_text(&e))),
    };
    let mut view = match draft(source, &existing) {
        Draft::Rule { name, toml } => RuleDraftView {
            path: path.display().to_string(),
            name: Some(name),
            toml: Some(toml),
            unavailable: None,
            problem: None,
        },
        Draft::Unavailable(why) => RuleDraftView::unavailable(&path, &why),
    };
    view.problem = problem;
    view
}

impl RuleDraftView {
    pub fn unavailable(path: &std::path::Path, why: &str) -> RuleDraftView {
        RuleDraftView {
            path: path.display().to_string(),
            name: None,
            toml: None,
            unavailable: Some(why.to_owned()),
            problem: None,
        }
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
        serde_json::from_value(json!({
            "kind": "record",
            "askedAt": 1_796_291_990_000u64, "settledAt": 1_796_292_000_000u64,
            "agent": { "id": "s-1", "label": "claude-code", "meta": { "cwd": "/home/me/app" } },
            "questions": [{ "id": "q", "question": "Deploy now?", "header": "Deploy",
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
        assert_eq!(view.name.as_deref(), Some("deploy-2"), "{view:?}");
        let toml = view.toml.unwrap();
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
        assert!(view.toml.is_some(), "{view:?}");
        let problem = view.problem.unwrap();
        assert!(problem.contains("line 1, column 1"), "{problem}");
    }

    #[test]
    fn what_a_rule_or_nobody_answered_is_not_drafted() {
        let folder = Folder::new("rules", "");
        let view = from_record(folder.file(), &record(Some("rule:deploy")));
        assert_eq!(view.toml, None);
        assert!(view
            .unavailable
            .unwrap()
            .contains("answered by a rule (rule:deploy)"));
        let mut unanswered = record(None);
        unanswered.answer = None;
        let view = from_record(folder.file(), &unanswered);
        assert!(view.unavailable.unwrap().contains("not answered"));
    }
}
