//! The answer rules as the page shows them: the Rules view (every rule of the file with its counts
//! from the journal's replay, the file's path and its error) and a shadow rule's suggestion in the
//! dialog. The desktop tells the page whenever the rules in force change
//! ([`crate::page::EVENT_RULES`]).

use std::path::Path;

use askdesk_core::AnswerItem;
use askdesk_i18n::t;
use askdesk_journal::Record;
use askdesk_rules::{file, past_requests, replay, Loaded, Match, Proposal, Verdict};
use serde::Serialize;

/// The Rules view.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesView {
    /// The rules file (absent without a configuration folder: no rules at all).
    pub path: Option<String>,
    /// Why the file as it is now cannot be used; the rules below are then the last good ones.
    pub error: Option<FileError>,
    /// The rules in force, in file order.
    pub rules: Vec<RuleView>,
    /// How many journaled requests the counts replay; `None` when no counts were asked for or
    /// there is no journal.
    pub replayed: Option<usize>,
    /// A rule to start from ([`askdesk_rules::edit::EXAMPLE`]), while the file loads and has no
    /// rules; a broken file shows only its error.
    pub example: Option<&'static str>,
}

/// A rules file that does not load.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileError {
    /// The whole message, as the log says it.
    pub message: String,
    /// Where in the file, when it does not parse.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// What is wrong there.
    pub problem: Option<String>,
}

/// One rule of the Rules view.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    pub name: String,
    /// `on`, `shadow` or `off`.
    pub mode: &'static str,
    /// The rule's match in words (`every request` when it has none).
    pub matches: String,
    pub action: String,
    pub after: Option<String>,
    /// Where the rule starts in the file.
    pub line: usize,
    pub counts: Option<Counts>,
    /// What is risky about the rule (an answer with an empty match, or one that allows commands
    /// broadly: [`askdesk_rules::Rule::warning`]), for the view to show.
    pub warning: Option<String>,
}

/// What `askdesk rules list` counts for a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub hits: usize,
    pub acted: usize,
    pub agreed: usize,
    pub differed: usize,
}

/// The Rules view of `loaded` read from `path`, with counts when `records` (the journal) is given.
pub fn view(path: Option<&Path>, loaded: &Loaded, records: Option<Vec<Record>>) -> RulesView {
    let past = records.map(|records| past_requests(records, None));
    let replayed = past.as_ref().map(|past| replay(&loaded.rules, past));
    let rules = loaded
        .rules
        .rules
        .iter()
        .enumerate()
        .map(|(i, rule)| RuleView {
            name: rule.name.clone(),
            mode: rule.mode.as_str(),
            matches: match_words(&rule.matcher),
            action: rule.action.said(),
            after: rule.after.map(file::format_duration),
            line: rule.line,
            warning: rule.warning().map(|w| w.said()),
            counts: replayed.as_ref().map(|r| {
                let report = &r.rules[i];
                Counts {
                    hits: report.hits,
                    acted: report.acted,
                    agreed: report.agreed,
                    differed: report.differed.len(),
                }
            }),
        })
        .collect();
    RulesView {
        path: path.map(|p| p.display().to_string()),
        error: loaded.error.as_ref().map(|message| FileError {
            message: message.clone(),
            line: loaded.parse_error.as_ref().map(|e| e.line),
            column: loaded.parse_error.as_ref().map(|e| e.column),
            problem: loaded.parse_error.as_ref().map(|e| e.message.clone()),
        }),
        example: (path.is_some() && loaded.error.is_none() && loaded.rules.rules.is_empty())
            .then_some(askdesk_rules::edit::EXAMPLE),
        rules,
        replayed: past.map(|p| p.len()),
    }
}

/// A rule's match in words, its fields in the file's documented order: `tool Bash, command
/// "cargo test*"`.
pub fn match_words(m: &Match) -> String {
    let glob = |key: &str, glob: &Option<askdesk_rules::glob::Glob>| {
        glob.as_ref().map(|g| format!("{key} {:?}", g.as_str()))
    };
    let mut parts: Vec<String> = [
        glob("agent", &m.agent),
        m.cwd
            .as_ref()
            .map(|cwd| t!("desktop-rules-match-cwd", cwd = cwd.as_str())),
        glob("client", &m.client),
        glob("tool", &m.tool),
        glob("command", &m.command),
        glob("path", &m.path),
        glob("host", &m.host),
        glob("url_path", &m.url_path),
        glob("header", &m.header),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(question) = &m.question {
        parts.push(format!("question /{}/", question.as_str()));
    }
    if let Some(intent) = &m.intent {
        parts.push(format!("intent {intent}"));
    }
    if parts.is_empty() {
        t!("desktop-rules-match-everything")
    } else {
        parts.join(", ")
    }
}

/// What a shadow rule suggests for a waiting request, as the dialog shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuggestionView {
    pub rule: String,
    /// The suggested answer to each question, when the rule answers; the page offers "Use".
    pub answers: Vec<AnswerItem>,
    /// The rule's verdict in words when it does not answer (`deny (message)`).
    pub says: Option<String>,
}

impl SuggestionView {
    /// The page's view of one proposal; `None` for a rule that would only leave it to the human.
    pub fn new(proposal: &Proposal) -> Option<Self> {
        let (answers, says) = match &proposal.verdict {
            Verdict::Answer(answer) => (answer.answers.clone(), None),
            Verdict::Deny(message) => (
                Vec::new(),
                Some(t!("rules-verdict-deny", message = message.as_str())),
            ),
            Verdict::Dismiss(message) => (
                Vec::new(),
                Some(t!("rules-verdict-dismiss", message = message.as_str())),
            ),
            Verdict::Ask => return None,
        };
        Some(SuggestionView {
            rule: proposal.rule.clone(),
            answers,
            says,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::testing::choose;
    use askdesk_rules::RuleSet;
    use serde_json::json;

    const FILE: &str = r#"
[[rule]]
name = "tests"
match = { tool = "Bash", command = "cargo test*", cwd = "/src" }
answer = "Allow once"

[[rule]]
name = "fmt"
match.question = "^Run cargo fmt"
answer = "Yes"
after = "1h30m"
mode = "shadow"

[[rule]]
name = "all"
ask = true
mode = "off"
"#;

    fn record(text: &str, chose: &str, answerer: &str) -> Record {
        serde_json::from_value(json!({
            "askedAt": 1, "settledAt": 2, "outcome": "answered",
            "questions": [{"id": "q", "question": text, "options": [{"label": "Yes"}, {"label": "No"}]}],
            "answer": {"answers": [{"id": "q", "selected": [chose]}]},
            "answerer": answerer,
        }))
        .unwrap()
    }

    #[test]
    fn the_view_lists_every_rule_in_order_with_the_replay_counts() {
        let loaded = Loaded {
            rules: RuleSet::parse(FILE).unwrap().into(),
            ..Loaded::default()
        };
        let journal = vec![
            record("Run cargo fmt now?", "Yes", "desktop"),
            record("Run cargo fmt again?", "No", "desktop"),
            record("Something else?", "No", "desktop"),
        ];
        let view = view(Some(Path::new("/cfg/rules.toml")), &loaded, Some(journal));
        assert_eq!(view.path.as_deref(), Some("/cfg/rules.toml"));
        assert!(view.error.is_none());
        assert_eq!(view.replayed, Some(3));
        let rows: Vec<_> = view
            .rules
            .iter()
            .map(|r| (r.name.as_str(), r.mode, r.after.as_deref(), r.line))
            .collect();
        assert_eq!(
            rows,
            [
                ("tests", "on", None, 2),
                ("fmt", "shadow", Some("1h30m"), 7),
                ("all", "off", None, 14)
            ]
        );
        assert_eq!(
            view.rules[0].matches,
            r#"cwd under /src, tool "Bash", command "cargo test*""#
        );
        assert_eq!(view.rules[1].matches, "question /^Run cargo fmt/");
        assert_eq!(view.rules[2].matches, "every request");
        assert_eq!(view.rules[0].action, r#"answer "Allow once""#);
        assert_eq!(
            view.rules[1].counts,
            Some(Counts {
                hits: 2,
                acted: 0,
                agreed: 1,
                differed: 1
            })
        );
        let without = super::view(None, &loaded, None);
        assert!(without.rules.iter().all(|r| r.counts.is_none()));
        assert_eq!(without.replayed, None);
    }

    #[test]
    fn a_broad_command_allow_is_shown_with_the_broad_allow_warning() {
        let loaded = Loaded {
            rules: RuleSet::parse(
                "[[rule]]\nname = \"find\"\nmatch = { tool = \"Bash\", command = \"find *\" }\nanswer = \"Allow once\"\n",
            )
            .unwrap()
            .into(),
            ..Loaded::default()
        };
        let view = view(None, &loaded, None);
        let warning = view.rules[0].warning.as_deref().expect("a warning");
        assert!(
            warning.ends_with(&askdesk_rules::file::broad_allow()),
            "{warning}"
        );
        let narrow = super::view(
            None,
            &Loaded {
                rules: RuleSet::parse(FILE).unwrap().into(),
                ..Loaded::default()
            },
            None,
        );
        assert_eq!(narrow.rules[0].warning, None, "`cargo test*` is narrow");
    }

    #[test]
    fn a_broken_file_is_shown_located_beside_the_last_good_rules() {
        let error =
            RuleSet::parse("[[rule]]\nname = \"x\"\nask = true\nafter = \"soon\"\n").unwrap_err();
        let loaded = Loaded {
            rules: RuleSet::parse(FILE).unwrap().into(),
            error: Some(format!("rules.toml: {error}")),
            parse_error: Some(error),
        };
        let view = view(None, &loaded, None);
        let shown = view.error.expect("the error is shown");
        assert_eq!((shown.line, shown.column), (Some(4), Some(9)));
        assert!(shown.message.starts_with("rules.toml: line 4, column 9: "));
        assert!(shown.problem.unwrap().contains("is not a duration"));
        assert_eq!(view.rules.len(), 3, "the last good rules");
    }

    #[test]
    fn an_example_is_offered_only_for_a_file_that_loads_with_no_rules() {
        let path = Path::new("/home/me/.config/askdesk/rules.toml");
        let empty = view(Some(path), &Loaded::default(), None);
        assert_eq!(empty.example, Some(askdesk_rules::edit::EXAMPLE));
        let error = RuleSet::parse("[[rule]]\nname = \"x\"\n").unwrap_err();
        let broken = Loaded {
            rules: RuleSet::default().into(),
            error: Some(format!("rules.toml: {error}")),
            parse_error: Some(error),
        };
        assert_eq!(
            view(Some(path), &broken, None).example,
            None,
            "only the error"
        );
        let some = Loaded {
            rules: RuleSet::parse(FILE).unwrap().into(),
            ..Loaded::default()
        };
        assert_eq!(view(Some(path), &some, None).example, None);
        assert_eq!(
            view(None, &Loaded::default(), None).example,
            None,
            "no file at all"
        );
    }

    #[test]
    fn a_suggestion_carries_the_answer_or_the_verdict_in_words() {
        let answer = choose("q", "Yes");
        let shown = SuggestionView::new(&Proposal {
            rule: "fmt".into(),
            verdict: Verdict::Answer(answer.clone()),
        })
        .unwrap();
        assert_eq!(
            serde_json::to_value(&shown).unwrap(),
            json!({"rule": "fmt", "answers": [{"id": "q", "selected": ["Yes"]}], "says": null})
        );
        let deny = SuggestionView::new(&Proposal {
            rule: "no".into(),
            verdict: Verdict::Deny("not now".into()),
        })
        .unwrap();
        assert_eq!(deny.says.as_deref(), Some("deny (not now)"));
        assert!(deny.answers.is_empty());
        assert_eq!(
            SuggestionView::new(&Proposal {
                rule: "me".into(),
                verdict: Verdict::Ask
            }),
            None
        );
    }
}
