//! A rule drafted from one request and the human's answer to it ("Always answer this way here",
//! "Make a rule"): the rule that gives the same answer to the same request in the same project,
//! rendered as the text of one `[[rule]]` for the human to read before it is saved.
//!
//! - Where: the project, `match.cwd` (the agent's `meta.cwd`). Without it there is no "here".
//! - What: for a permission prompt (the agent's `meta.tool` set), the tool and what it touches:
//!   the exact command (`match.command`, glob-escaped), else the one file it changes
//!   (`match.path`, the file resolved as a rule that answers reads it: [`crate::target`]), else
//!   the host of the URL it fetches (`match.host`). A tool prompt with none of these gets no rule:
//!   it would answer every call of the tool, whatever it touches ([`narrowable`]). Any other
//!   question: its text (`match.question`, anchored and regex-escaped; for a batch, any of its
//!   texts) and the header when the batch shares one.
//! - The answer: one option label picked in every question (`answer = "<label>"`), or the same
//!   typed text for every question (`answer = { text = "..." }`). Anything else (different
//!   answers per question, several picks, a skipped question, an answer that grants a standing
//!   permission: [`crate::standing`]) is not offered.
//! - How far: [`Scope::Exact`] is the above; [`Scope::Similar`] is questions like it from the same
//!   agent (`match.agent`, its label) in the project, the question texts with their numbers and
//!   names varying ([`crate::generalise`]); [`Scope::Header`] is every question with the batch's
//!   header in the project. A permission prompt is only ever drafted exactly: a broader rule would
//!   allow commands, files or addresses the person never saw, and is written by hand.
//! - `shadow`: the rule is saved with `mode = "shadow"`, proposing its answer without acting.
//! - A plan review is never drafted: a rule cannot see the plan, so "approve this plan" as a rule
//!   would approve every plan the project's agents write. Such a rule is written by hand.
//!
//! A draft is checked before it is offered: parsed by [`RuleSet::parse`] and evaluated against the
//! same request, it must decide exactly the human's answer.

use askdesk_core::{AgentInfo, Answer, AnswerItem, Question};
use askdesk_i18n::t;
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table};

use crate::file::RuleSet;
use crate::generalise::generalise;
use crate::glob::Glob;
use crate::matching::Verdict;
use crate::standing;
use crate::target::Targets;
use askdesk_core::meta::{COMMAND, CWD, PATH, TOOL, URL};

/// The request and answer a rule is drafted from.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub agent: Option<&'a AgentInfo>,
    pub questions: &'a [Question],
    pub answer: &'a Answer,
    /// When the human answered, in milliseconds since the Unix epoch (for the rule's comment).
    pub answered_at: u64,
}

/// What [`draft`] makes of a request and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Draft {
    /// A rule to offer: its name (unique in the file) and its text, one `[[rule]]` with a
    /// leading comment saying where it came from.
    Rule { name: String, toml: String },
    /// No single rule gives this answer; why, in words for the human.
    Unavailable(String),
}

/// How far a drafted rule reaches, within the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This exact request: its command, file or address, else its question texts.
    Exact,
    /// Questions like it from the same agent: its texts with their numbers and names varying.
    Similar,
    /// Every question with this header.
    Header,
}

impl Scope {
    /// Every scope, narrowest first.
    pub const ALL: [Scope; 3] = [Scope::Exact, Scope::Similar, Scope::Header];
}

/// Drafts the rule that answers `source`'s request as the human did, exactly this request, named
/// so that it is unique among `existing`'s rules.
pub fn draft(source: Source<'_>, existing: &RuleSet) -> Draft {
    draft_as(source, existing, Scope::Exact, false)
}

/// Drafts the rule of [`draft`] reaching as far as `scope`, in `shadow` mode when asked.
pub fn draft_as(source: Source<'_>, existing: &RuleSet, scope: Scope, shadow: bool) -> Draft {
    match build(source, existing, scope, shadow) {
        Ok((name, toml)) => Draft::Rule { name, toml },
        Err(reason) => Draft::Unavailable(reason),
    }
}

/// Whether a rule drafted from this agent's request can be narrowed to what the request is about:
/// any question that is not a permission prompt, and a permission prompt with a command, a file
/// or a URL. A tool prompt with none of them is offered no rule (the desktop does not offer
/// "Always answer this way here" for it).
pub fn narrowable(agent: Option<&AgentInfo>) -> bool {
    let meta = |key: &str| {
        agent
            .and_then(|a| a.meta.as_ref())
            .and_then(|meta| meta.get(key))
            .is_some_and(|v| v.as_str().is_some_and(|v| !v.is_empty()))
    };
    !meta(TOOL) || meta(COMMAND) || meta(PATH) || meta(URL)
}

/// How the rule answers: one label everywhere, or one text everywhere.
enum Reply<'a> {
    Label(&'a str),
    Text(&'a str),
}

fn build(
    source: Source<'_>,
    existing: &RuleSet,
    scope: Scope,
    shadow: bool,
) -> Result<(String, String), String> {
    let questions = source.questions;
    if questions.is_empty() {
        return Err(t!("rules-draft-no-question"));
    }
    if questions
        .iter()
        .any(|q| q.intent.as_ref().is_some_and(|i| i.is_plan_review()))
    {
        return Err(t!("rules-draft-plan"));
    }
    // The first rule in force that applies decides: a rule added after it would never act.
    if let Some((rule, verdict)) = existing.evaluate(source.agent, questions).acting {
        return Err(match verdict {
            Verdict::Answer(answer) if answer == *source.answer => t!(
                "rules-draft-same",
                name = format!("{:?}", rule.name),
                line = rule.line
            ),
            _ => t!(
                "rules-draft-shadowed",
                name = format!("{:?}", rule.name),
                line = rule.line
            ),
        });
    }
    let meta = |key: &str| {
        source
            .agent?
            .meta
            .as_ref()?
            .get(key)?
            .as_str()
            .filter(|v| !v.is_empty())
    };
    let Some(cwd) = meta(CWD).filter(|c| c.starts_with('/')) else {
        return Err(t!("rules-draft-no-cwd"));
    };
    let reply = reply(questions, source.answer)?;
    if let Reply::Label(label) = reply {
        if let Some(once) = standing::one_call_instead(label) {
            return Err(t!(
                "rules-draft-standing",
                label = format!("{label:?}"),
                once = format!("{once:?}")
            ));
        }
    }

    let mut matcher = InlineTable::new();
    matcher.insert("cwd", cwd.into());
    let tool = meta(TOOL);
    if tool.is_some() && scope != Scope::Exact {
        return Err(t!("rules-draft-prompt-exact"));
    }
    let command = tool.and(meta(COMMAND));
    // What the tool touches, as a rule that answers reads it.
    let targets = Targets::new(source.agent);
    let target = match (tool, command) {
        (Some(tool), None) => Some(touched(tool, &targets, &meta)?),
        _ => None,
    };
    if let Some(tool) = tool {
        matcher.insert("tool", Glob::escape(tool).into());
    }
    if let Some(command) = command {
        matcher.insert("command", Glob::escape(command).into());
    } else if let Some((key, value, _)) = &target {
        matcher.insert(*key, Glob::escape(value).into());
    } else {
        let texts = distinct(questions.iter().map(|q| q.question.as_str()));
        let headers = distinct(questions.iter().map(|q| q.header.as_deref().unwrap_or("")));
        let header = match headers.as_slice() {
            [header] if !header.is_empty() => Some(*header),
            _ => None,
        };
        if scope == Scope::Similar {
            let who = source.agent.map(AgentInfo::display_name);
            let Some(who) = who else {
                return Err(t!("rules-draft-no-agent"));
            };
            matcher.insert("agent", Glob::escape(who).into());
        }
        if let Some(header) = header {
            matcher.insert("header", Glob::escape(header).into());
        } else if scope == Scope::Header {
            return Err(match questions {
                [_] => t!("rules-draft-no-header"),
                _ => t!("rules-draft-headers-differ"),
            });
        }
        // Every question of a batch must match: one text, or any of the batch's texts.
        let patterns: Vec<String> = match scope {
            Scope::Exact => texts.iter().map(|t| regex::escape(t)).collect(),
            Scope::Similar => {
                let general: Vec<_> = texts.iter().map(|t| generalise(t)).collect();
                if !general.iter().any(|g| g.varies()) {
                    return Err(t!("rules-draft-nothing-varies"));
                }
                general
                    .into_iter()
                    .map(|g| g.regex[1..g.regex.len() - 1].to_owned())
                    .collect()
            }
            Scope::Header => Vec::new(),
        };
        let question = match patterns.as_slice() {
            [] => None,
            [one] => Some(format!("^{one}$")),
            several => Some(format!("^(?:{})$", several.join("|"))),
        };
        if let Some(question) = question {
            matcher.insert("question", question.as_str().into());
        }
    }

    let base = match (tool, command, &questions[0].header) {
        (Some(tool), Some(command), _) => slug(&format!("{tool} {command}")),
        (Some(tool), None, _) => {
            let shown = target.as_ref().map_or("", |(_, _, shown)| shown.as_str());
            slug(&format!("{tool} {shown}"))
        }
        (None, _, Some(header)) if !header.trim().is_empty() => slug(header),
        _ => slug(&questions[0].question),
    };
    let name = unique(&base, existing);

    let mut rule = Table::new();
    rule.insert("name", toml_edit::value(name.as_str()));
    rule.insert("match", toml_edit::value(matcher));
    rule.insert(
        "answer",
        match reply {
            Reply::Label(label) => toml_edit::value(label),
            Reply::Text(text) => {
                let mut table = InlineTable::new();
                table.insert("text", text.into());
                toml_edit::value(table)
            }
        },
    );
    if shadow {
        rule.insert("mode", toml_edit::value("shadow"));
    }
    let who = source.agent.map_or("an agent", |a| {
        a.label
            .as_deref()
            .filter(|l| !l.is_empty())
            .unwrap_or(&a.id)
    });
    rule.decor_mut().set_prefix(format!(
        "# Made from your answer to {} on {}.\n",
        one_line(who),
        date(source.answered_at)
    ));
    let mut rules = ArrayOfTables::new();
    rules.push(rule);
    let mut doc = DocumentMut::new();
    doc.insert("rule", Item::ArrayOfTables(rules));
    let toml = doc.to_string();

    check(&toml, source)?;
    Ok((name, toml))
}

/// What a tool prompt without a command touches, as a `match` key, its value and a short name for
/// the rule: the file (`path`), else the URL's host (`host`); or why there is nothing to narrow a
/// rule to.
fn touched<'a>(
    tool: &str,
    targets: &Targets<'_>,
    meta: &impl Fn(&str) -> Option<&'a str>,
) -> Result<(&'static str, String, String), String> {
    if let Some(given) = meta(PATH) {
        let Some(path) = targets.strict_path() else {
            return Err(t!("rules-draft-file-unsure", file = format!("{given:?}")));
        };
        let file = std::path::Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(path);
        return Ok(("path", path.to_owned(), file.to_owned()));
    }
    if let Some(given) = meta(URL) {
        let Some(url) = targets.strict_url() else {
            return Err(t!("rules-draft-not-http", url = format!("{given:?}")));
        };
        return Ok(("host", url.host.clone(), url.host.clone()));
    }
    Err(t!("rules-draft-nothing-to-narrow", tool = tool))
}

/// The one reply the human gave every question, or why there is none.
fn reply<'a>(questions: &[Question], answer: &'a Answer) -> Result<Reply<'a>, String> {
    let mut replies = Vec::new();
    for question in questions {
        let Some(item) = answer.answers.iter().find(|a| a.id == question.id) else {
            return Err(t!(
                "rules-draft-unanswered",
                question = format!("{:?}", question.question)
            ));
        };
        replies.push(match (item.selected.as_slice(), item.custom.as_deref()) {
            ([label], None) => Reply::Label(label),
            ([], Some(text)) if !text.trim().is_empty() => Reply::Text(text),
            ([], None) => return Err(t!("rules-draft-skipped")),
            _ => return Err(t!("rules-draft-several")),
        });
    }
    let first = &replies[0];
    let same = replies.iter().all(|r| match (r, first) {
        (Reply::Label(a), Reply::Label(b)) | (Reply::Text(a), Reply::Text(b)) => a == b,
        _ => false,
    });
    if !same {
        return Err(t!("rules-draft-different"));
    }
    Ok(replies.swap_remove(0))
}

/// The draft, read back as the file would read it, decides exactly the human's answer.
fn check(toml: &str, source: Source<'_>) -> Result<(), String> {
    let cannot = |why: &str| Err(t!("rules-draft-cannot", why = why));
    let set = match RuleSet::parse(toml) {
        Ok(set) => set,
        Err(e) => return cannot(&e.to_string()),
    };
    let mut evaluation = set.evaluate(source.agent, source.questions);
    let Some((_, Verdict::Answer(decided))) = evaluation.acting.or(evaluation.shadow.pop()) else {
        return cannot(&t!("rules-draft-would-not-answer"));
    };
    let sorted = |items: &[AnswerItem]| {
        let mut items: Vec<_> = items
            .iter()
            .map(|i| (i.id.clone(), i.selected.clone(), i.custom.clone()))
            .collect();
        items.sort();
        items
    };
    if sorted(&decided.answers) != sorted(&source.answer.answers) {
        return cannot(&t!("rules-draft-would-differ"));
    }
    Ok(())
}

fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// A short lowercase name: words joined by `-`, at most 40 characters, cut at a word.
fn slug(text: &str) -> String {
    let mut name = String::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        let extra = word.chars().count() + usize::from(!name.is_empty());
        if name.chars().count() + extra > 40 {
            if name.is_empty() {
                name = word.chars().take(40).collect();
            }
            break;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&word);
    }
    if name.is_empty() {
        "answer".into()
    } else {
        name
    }
}

/// `base`, or `base-2`, `base-3`, ... : the first name no rule of `existing` has.
fn unique(base: &str, existing: &RuleSet) -> String {
    std::iter::once(base.to_owned())
        .chain((2..).map(|n| format!("{base}-{n}")))
        .find(|name| existing.get(name).is_none())
        .expect("an unbounded range")
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Milliseconds since the epoch as `YYYY-MM-DD` (UTC); a time past chrono's range (some 262,000
/// years) as its milliseconds.
fn date(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(|| ms.to_string(), |t| t.format("%Y-%m-%d").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// 2026-12-03 10:00 UTC.
    const WHEN: u64 = 1_796_292_000_000;

    fn agent(meta: Value) -> AgentInfo {
        serde_json::from_value(json!({ "id": "s-1", "label": "claude-code", "meta": meta }))
            .unwrap()
    }

    fn question(id: &str, text: &str, header: Option<&str>, options: &[&str]) -> Question {
        serde_json::from_value(json!({
            "id": id, "question": text, "header": header,
            "options": options.iter().map(|l| json!({ "label": l })).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    fn picked(id: &str, labels: &[&str]) -> AnswerItem {
        AnswerItem {
            id: id.into(),
            selected: labels.iter().map(|l| l.to_string()).collect(),
            ..Default::default()
        }
    }

    fn typed(id: &str, text: &str) -> AnswerItem {
        AnswerItem {
            id: id.into(),
            custom: Some(text.into()),
            ..Default::default()
        }
    }

    fn drafted(agent: &AgentInfo, questions: &[Question], items: Vec<AnswerItem>) -> Draft {
        drafted_among(agent, questions, items, &RuleSet::default())
    }

    fn drafted_among(
        agent: &AgentInfo,
        questions: &[Question],
        items: Vec<AnswerItem>,
        existing: &RuleSet,
    ) -> Draft {
        let answer = Answer { answers: items };
        draft(
            Source {
                agent: Some(agent),
                questions,
                answer: &answer,
                answered_at: WHEN,
            },
            existing,
        )
    }

    fn rule_text(draft: Draft) -> (String, String) {
        match draft {
            Draft::Rule { name, toml } => (name, toml),
            Draft::Unavailable(why) => panic!("no rule: {why}"),
        }
    }

    #[track_caller]
    fn unavailable(draft: Draft, says: &str) {
        match draft {
            Draft::Unavailable(why) => assert!(why.contains(says), "{why:?} should say {says:?}"),
            Draft::Rule { toml, .. } => panic!("expected no rule, drafted\n{toml}"),
        }
    }

    /// Whether the rule text decides the request.
    fn acts(toml: &str, agent: &AgentInfo, questions: &[Question]) -> bool {
        let set = RuleSet::parse(toml).unwrap();
        set.evaluate(Some(agent), questions).acting.is_some()
    }

    /// The drafted rule, read as the file reads it, answers the request with `items` exactly,
    /// and the same request from another project is left alone.
    #[track_caller]
    fn round_trip(toml: &str, agent: &AgentInfo, questions: &[Question], items: &[AnswerItem]) {
        let set = RuleSet::parse(toml).unwrap();
        assert_eq!(set.rules.len(), 1);
        let evaluation = set.evaluate(Some(agent), questions);
        let (rule, verdict) = evaluation.acting.expect("the rule applies");
        assert!(rule.after.is_none());
        assert_eq!(
            verdict,
            Verdict::Answer(Answer {
                answers: items.to_vec()
            })
        );
        let mut elsewhere = agent.clone();
        let meta = elsewhere.meta.as_mut().unwrap();
        meta.insert("cwd".into(), json!("/home/me/other"));
        assert!(!acts(toml, &elsewhere, questions));
        let mut sibling = agent.clone();
        let cwd = sibling.meta.as_ref().unwrap()["cwd"]
            .as_str()
            .unwrap()
            .to_owned();
        sibling
            .meta
            .as_mut()
            .unwrap()
            .insert("cwd".into(), json!(format!("{cwd}-old")));
        assert!(!acts(toml, &sibling, questions));
    }

    #[test]
    fn a_picked_label_with_header() {
        let coder = agent(json!({ "cwd": "/home/me/app" }));
        let qs = [question(
            "q",
            "Deploy to staging now?",
            Some("Deploy"),
            &["Yes", "No"],
        )];
        let items = vec![picked("q", &["No"])];
        let (name, toml) = rule_text(drafted(&coder, &qs, items.clone()));
        assert_eq!(name, "deploy");
        assert_eq!(
            toml,
            "# Made from your answer to claude-code on 2026-12-03.\n[[rule]]\nname = \"deploy\"\nmatch = { cwd = \"/home/me/app\", header = \"Deploy\", question = '^Deploy to staging now\\?$' }\nanswer = \"No\"\n"
        );
        round_trip(&toml, &coder, &qs, &items);
        // Another question in the same project is not answered.
        let other = [question(
            "q",
            "Deploy to production now?",
            Some("Deploy"),
            &["Yes", "No"],
        )];
        assert!(!acts(&toml, &coder, &other));
    }

    #[test]
    fn typed_text_and_no_header() {
        let coder = agent(json!({ "cwd": "/home/me/app" }));
        let qs = [question("q", "Which branch? (main / dev) *", None, &[])];
        let items = vec![typed("q", "dev \"for now\"\nthen main")];
        let (name, toml) = rule_text(drafted(&coder, &qs, items.clone()));
        assert_eq!(name, "which-branch-main-dev");
        assert!(!toml.contains("header"), "{toml}");
        assert!(toml.contains("answer = { text = "), "{toml}");
        round_trip(&toml, &coder, &qs, &items);
    }

    #[test]
    fn the_same_label_in_every_question_of_a_batch() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [
            question("a", "Proceed?", Some("Step"), &["Yes", "No"]),
            question("b", "Proceed?", Some("Step"), &["Yes (Recommended)", "No"]),
        ];
        let items = vec![picked("b", &["Yes (Recommended)"]), picked("a", &["Yes"])];
        // Labels differ by the (Recommended) mark: one rule cannot say both.
        unavailable(drafted(&coder, &qs, items), "different answers");
        let qs = [
            question("a", "Proceed?", Some("Step"), &["Yes", "No"]),
            question("b", "Proceed?", Some("Step"), &["Yes", "No"]),
        ];
        let items = vec![picked("b", &["Yes"]), picked("a", &["Yes"])];
        let (_, toml) = rule_text(drafted(&coder, &qs, items));
        round_trip(
            &toml,
            &coder,
            &qs,
            &[picked("a", &["Yes"]), picked("b", &["Yes"])],
        );
    }

    #[test]
    fn a_batch_of_different_questions_matches_any_of_its_texts() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [
            question("a", "Squash the fixups?", Some("Git"), &["Yes", "No"]),
            question("b", "Delete the branch (merged)?", None, &["Yes"]),
        ];
        let items = vec![picked("a", &["Yes"]), picked("b", &["Yes"])];
        let (name, toml) = rule_text(drafted(&coder, &qs, items.clone()));
        assert_eq!(name, "git");
        assert!(
            toml.contains(
                r#"question = '^(?:Squash the fixups\?|Delete the branch \(merged\)\?)$'"#
            ),
            "{toml}"
        );
        assert!(!toml.contains("header"), "the headers differ: {toml}");
        round_trip(&toml, &coder, &qs, &items);
        // A batch with a question of another text is not answered.
        let other = [
            qs[0].clone(),
            question("b", "Delete the branch?", None, &["Yes"]),
        ];
        assert!(!acts(&toml, &coder, &other));
    }

    #[test]
    fn a_permission_prompt_names_the_tool_and_the_exact_command() {
        let hook = agent(json!({
            "cwd": "/home/me/app", "tool": "Bash", "command": "ls 'src/*.rs' && echo 'done?'", "client": "claude-code"
        }));
        let qs = [question("q", "Allow Bash?", None, &["Allow once", "Deny"])];
        let items = vec![picked("q", &["Allow once"])];
        let (name, toml) = rule_text(drafted(&hook, &qs, items.clone()));
        assert_eq!(name, "bash-ls-src-rs-echo-done");
        assert!(
            toml.contains(r#"tool = "Bash", command = '''ls 'src/\*.rs' && echo 'done\?'''' }"#),
            "{toml}"
        );
        assert!(!toml.contains("question"), "{toml}");
        round_trip(&toml, &hook, &qs, &items);
        // Another command is not answered.
        let mut other = hook.clone();
        other
            .meta
            .as_mut()
            .unwrap()
            .insert("command".into(), json!("ls main.rs && echo done!"));
        assert!(!acts(&toml, &other, &qs));
    }

    #[test]
    fn a_web_fetch_is_narrowed_to_its_host() {
        let hook = agent(
            json!({ "cwd": "/home/me/app", "tool": "WebFetch", "url": "https://Docs.rs/tokio/latest/" }),
        );
        let qs = [question(
            "q",
            "Allow WebFetch?",
            None,
            &["Allow once", "Deny"],
        )];
        let items = vec![picked("q", &["Allow once"])];
        let (name, toml) = rule_text(drafted(&hook, &qs, items.clone()));
        assert_eq!(name, "webfetch-docs-rs");
        assert!(
            toml.contains(
                r#"match = { cwd = "/home/me/app", tool = "WebFetch", host = "docs.rs" }"#
            ),
            "{toml}"
        );
        round_trip(&toml, &hook, &qs, &items);
        let fetch = |url: &str| {
            let mut other = hook.clone();
            other
                .meta
                .as_mut()
                .unwrap()
                .insert("url".into(), json!(url));
            acts(&toml, &other, &qs)
        };
        assert!(fetch("https://docs.rs/serde/"), "the same host");
        assert!(!fetch("https://evil.example/"), "another host");
        assert!(!fetch("https://docs.rs.evil.example/"));
        let mut nowhere = hook.clone();
        nowhere.meta.as_mut().unwrap().remove("url");
        assert!(!acts(&toml, &nowhere, &qs), "no URL");
        // What is not a web address is not drafted.
        let ftp = agent(json!({ "cwd": "/home/me/app", "tool": "WebFetch", "url": "ftp://x/" }));
        unavailable(
            drafted(&ftp, &qs, vec![picked("q", &["Allow once"])]),
            "not a plain http",
        );
    }

    #[test]
    fn an_edit_is_narrowed_to_its_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().canonicalize().unwrap().join("app");
        std::fs::create_dir_all(app.join("src")).unwrap();
        let app = app.display().to_string();
        let hook = agent(json!({ "cwd": app, "tool": "Edit", "path": "src/lib.rs" }));
        let qs = [question("q", "Allow Edit?", None, &["Allow once", "Deny"])];
        let items = vec![picked("q", &["Allow once"])];
        let (name, toml) = rule_text(drafted(&hook, &qs, items.clone()));
        assert_eq!(name, "edit-lib-rs");
        assert!(
            toml.contains(&format!(r#"tool = "Edit", path = "{app}/src/lib.rs" }}"#)),
            "{toml}"
        );
        round_trip(&toml, &hook, &qs, &items);
        let edit = |path: &str| {
            let mut other = hook.clone();
            other
                .meta
                .as_mut()
                .unwrap()
                .insert("path".into(), json!(path));
            acts(&toml, &other, &qs)
        };
        assert!(
            edit(&format!("{app}/src/lib.rs")),
            "the same file, written absolute"
        );
        assert!(!edit("src/main.rs"), "another file");
        assert!(!edit("/home/me/.bashrc"));
        // A file that cannot be resolved, or that no rule may allow, is not drafted.
        let relative = agent(json!({ "tool": "Write", "path": "src/lib.rs", "cwd": "app" }));
        unavailable(drafted(&relative, &qs, items.clone()), "no absolute `cwd`");
        let hooks = agent(json!({ "cwd": app, "tool": "Write", "path": ".git/hooks/pre-commit" }));
        unavailable(
            drafted(&hooks, &qs, items.clone()),
            "cannot be resolved for sure",
        );
    }

    #[test]
    fn a_tool_prompt_with_nothing_to_narrow_to_is_not_drafted() {
        let hook = agent(json!({ "cwd": "/home/me/app", "tool": "mcp__db__query" }));
        let qs = [question(
            "q",
            "Allow mcp__db__query?",
            None,
            &["Allow once", "Deny"],
        )];
        unavailable(
            drafted(&hook, &qs, vec![picked("q", &["Allow once"])]),
            "names no command, file or web address",
        );
        assert!(!narrowable(Some(&hook)));
        for meta in [
            json!({ "tool": "Bash", "command": "ls" }),
            json!({ "tool": "Edit", "path": "/x" }),
            json!({ "tool": "WebFetch", "url": "https://x/" }),
            json!({ "cwd": "/w" }),
        ] {
            assert!(narrowable(Some(&agent(meta.clone()))), "{meta}");
        }
        assert!(narrowable(None));
        assert!(!narrowable(Some(&agent(
            json!({ "tool": "Edit", "path": "" })
        ))));
    }

    #[test]
    fn names_are_unique_in_the_file() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [question("q", "Go?", Some("Deploy"), &["Yes", "No"])];
        let existing = RuleSet::parse(
            "[[rule]]\nname = \"deploy\"\nmatch = { cwd = \"/elsewhere\" }\nask = true\n[[rule]]\nname = \"deploy-2\"\nmatch = { cwd = \"/elsewhere\" }\nask = true\n",
        )
        .unwrap();
        let (name, toml) = rule_text(drafted_among(
            &coder,
            &qs,
            vec![picked("q", &["Yes"])],
            &existing,
        ));
        assert_eq!(name, "deploy-3");
        assert!(toml.contains("name = \"deploy-3\""));
    }

    #[test]
    fn a_request_an_existing_rule_decides_is_not_drafted_again() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [question("q", "Go?", Some("Deploy"), &["Yes", "No"])];
        let yes = vec![picked("q", &["Yes"])];
        let (_, toml) = rule_text(drafted(&coder, &qs, yes.clone()));
        let existing = RuleSet::parse(&toml).unwrap();
        unavailable(
            drafted_among(&coder, &qs, yes, &existing),
            "the rule \"deploy\" (line 2) already answers this way here",
        );
        unavailable(
            drafted_among(&coder, &qs, vec![picked("q", &["No"])], &existing),
            "the rule \"deploy\" (line 2) already decides this request",
        );
        // A rule that only suggests, or is off, decides nothing: the draft is offered.
        for mode in ["shadow", "off"] {
            let text = format!("{toml}mode = \"{mode}\"\n");
            let existing = RuleSet::parse(&text).unwrap();
            let (name, _) = rule_text(drafted_among(
                &coder,
                &qs,
                vec![picked("q", &["No"])],
                &existing,
            ));
            assert_eq!(name, "deploy-2", "{mode}");
        }
    }

    #[test]
    fn what_one_rule_cannot_say_is_not_offered() {
        let coder = agent(json!({ "cwd": "/w" }));
        let yes_no = |id| question(id, "Go?", None, &["Yes", "No"]);
        unavailable(
            drafted(
                &coder,
                &[yes_no("a"), yes_no("b")],
                vec![picked("a", &["Yes"]), picked("b", &["No"])],
            ),
            "different answers",
        );
        let mut multi = yes_no("a");
        multi.multi_select = true;
        unavailable(
            drafted(&coder, &[multi], vec![picked("a", &["Yes", "No"])]),
            "several picks",
        );
        unavailable(
            drafted(&coder, &[yes_no("a")], vec![picked("a", &[])]),
            "skipped",
        );
        unavailable(
            drafted(
                &coder,
                &[yes_no("a"), yes_no("b")],
                vec![picked("a", &["Yes"])],
            ),
            "nothing for",
        );
        let nowhere = agent(json!({}));
        unavailable(
            drafted(&nowhere, &[yes_no("a")], vec![picked("a", &["Yes"])]),
            "no absolute `cwd`",
        );
        let relative = agent(json!({ "cwd": "src" }));
        unavailable(
            drafted(&relative, &[yes_no("a")], vec![picked("a", &["Yes"])]),
            "no absolute `cwd`",
        );
    }

    #[test]
    fn a_plan_review_is_not_made_into_a_rule() {
        let coder = agent(json!({ "cwd": "/w" }));
        let plan: Question = serde_json::from_value(json!({
            "id": "p", "question": "Approve the plan?", "detail": "# Plan",
            "options": [{ "label": "Approve" }, { "label": "Keep planning" }],
            "intent": { "kind": "plan-review", "approve": "Approve" },
        }))
        .unwrap();
        unavailable(
            drafted(&coder, &[plan], vec![picked("p", &["Approve"])]),
            "a plan review is not made into a rule",
        );
    }

    #[test]
    fn an_answer_that_grants_a_standing_permission_is_not_made_into_a_rule() {
        let hook = agent(json!({ "cwd": "/home/me/app", "tool": "Bash", "command": "cargo test" }));
        let qs = [question(
            "q",
            "Allow Bash?",
            None,
            &[standing::ALLOW_ONCE, standing::ALLOW_SESSION, "Deny"],
        )];
        unavailable(
            drafted(&hook, &qs, vec![picked("q", &[standing::ALLOW_SESSION])]),
            "grants a standing permission for the rest of the session",
        );
        let items = vec![picked("q", &[standing::ALLOW_ONCE])];
        let (_, toml) = rule_text(drafted(&hook, &qs, items.clone()));
        round_trip(&toml, &hook, &qs, &items);
    }

    fn drafted_as(
        agent: &AgentInfo,
        questions: &[Question],
        items: Vec<AnswerItem>,
        scope: Scope,
        shadow: bool,
    ) -> Draft {
        let answer = Answer { answers: items };
        let source = Source {
            agent: Some(agent),
            questions,
            answer: &answer,
            answered_at: WHEN,
        };
        draft_as(source, &RuleSet::default(), scope, shadow)
    }

    #[test]
    fn questions_like_it_vary_numbers_and_names_for_the_same_agent_only() {
        let coder = agent(json!({ "cwd": "/home/me/app" }));
        let qs = [question(
            "q",
            "Delete the 14 branches merged into release/2.3?",
            Some("Cleanup"),
            &["Yes", "No"],
        )];
        let items = vec![picked("q", &["Yes"])];
        let (name, toml) = rule_text(drafted_as(
            &coder,
            &qs,
            items.clone(),
            Scope::Similar,
            false,
        ));
        assert_eq!(name, "cleanup");
        assert!(
            toml.contains(r#"match = { cwd = "/home/me/app", agent = "claude-code", header = "Cleanup", question = '^Delete the [0-9]+ branches merged into [A-Za-z0-9_./-]+\?$' }"#),
            "{toml}"
        );
        round_trip(&toml, &coder, &qs, &items);
        let asked = |text: &str, header: Option<&str>, who: &AgentInfo| {
            acts(&toml, who, &[question("q", text, header, &["Yes", "No"])])
        };
        assert!(asked(
            "Delete the 3 branches merged into main?",
            Some("Cleanup"),
            &coder
        ));
        // Other words, another header, another agent: not answered.
        assert!(!asked(
            "Delete the 3 branches pushed to main?",
            Some("Cleanup"),
            &coder
        ));
        assert!(!asked(
            "Delete the 3 branches merged into my main?",
            Some("Cleanup"),
            &coder
        ));
        assert!(!asked(
            "Delete the 3 branches merged into main?",
            Some("Deploy"),
            &coder
        ));
        assert!(!asked(
            "Delete the 3 branches merged into $(id)?",
            Some("Cleanup"),
            &coder
        ));
        let other: AgentInfo = serde_json::from_value(
            json!({ "id": "s-9", "label": "ci-bot", "meta": { "cwd": "/home/me/app" } }),
        )
        .unwrap();
        assert!(!asked(
            "Delete the 3 branches merged into main?",
            Some("Cleanup"),
            &other
        ));
    }

    #[test]
    fn questions_like_it_need_something_that_varies() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [question(
            "q",
            "Proceed with the deploy?",
            None,
            &["Yes", "No"],
        )];
        unavailable(
            drafted_as(
                &coder,
                &qs,
                vec![picked("q", &["Yes"])],
                Scope::Similar,
                false,
            ),
            "nothing in the question varies",
        );
    }

    #[test]
    fn every_question_with_this_header_in_the_project() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [question(
            "q",
            "Format the files?",
            Some("Style"),
            &["Yes", "No"],
        )];
        let items = vec![picked("q", &["Yes"])];
        let (_, toml) = rule_text(drafted_as(&coder, &qs, items.clone(), Scope::Header, false));
        assert!(
            toml.contains(r#"match = { cwd = "/w", header = "Style" }"#),
            "{toml}"
        );
        round_trip(&toml, &coder, &qs, &items);
        let other = [question(
            "q",
            "Sort the imports?",
            Some("Style"),
            &["Yes", "No"],
        )];
        assert!(acts(&toml, &coder, &other));
        let unheaded = [question("q", "Sort the imports?", None, &["Yes", "No"])];
        assert!(!acts(&toml, &coder, &unheaded));
        let no_header = [question("q", "Format the files?", None, &["Yes", "No"])];
        unavailable(
            drafted_as(&coder, &no_header, items, Scope::Header, false),
            "the question has no header",
        );
    }

    #[test]
    fn a_permission_prompt_is_only_drafted_exactly() {
        let hook =
            agent(json!({ "cwd": "/home/me/app", "tool": "Bash", "command": "cargo test -p x1" }));
        let qs = [question(
            "q",
            "Allow Bash?",
            Some("Bash"),
            &["Allow once", "Deny"],
        )];
        for scope in [Scope::Similar, Scope::Header] {
            unavailable(
                drafted_as(&hook, &qs, vec![picked("q", &["Allow once"])], scope, false),
                "names its exact command, file or address",
            );
        }
    }

    #[test]
    fn a_shadow_draft_proposes_without_acting() {
        let coder = agent(json!({ "cwd": "/w" }));
        let qs = [question("q", "Run 3 checks?", None, &["Yes", "No"])];
        let items = vec![picked("q", &["No"])];
        for scope in [Scope::Exact, Scope::Similar] {
            let (_, toml) = rule_text(drafted_as(&coder, &qs, items.clone(), scope, true));
            assert!(
                toml.ends_with("answer = \"No\"\nmode = \"shadow\"\n"),
                "{toml}"
            );
            let set = RuleSet::parse(&toml).unwrap();
            let evaluation = set.evaluate(Some(&coder), &qs);
            assert!(evaluation.acting.is_none());
            assert_eq!(
                evaluation.shadow[0].1,
                Verdict::Answer(Answer {
                    answers: items.clone()
                })
            );
        }
    }

    #[test]
    fn slugs_and_dates() {
        assert_eq!(slug("Run the tests?"), "run-the-tests");
        assert_eq!(slug("  ***  "), "answer");
        assert_eq!(
            slug("a very long question that goes on and on past forty characters"),
            "a-very-long-question-that-goes-on-and-on"
        );
        assert_eq!(slug(&"x".repeat(50)).len(), 40);
        assert_eq!(date(WHEN), "2026-12-03");
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_868_799_999), "2000-02-29");
        assert_eq!(date(u64::MAX), u64::MAX.to_string());
    }
}
