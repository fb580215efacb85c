//! Which rule applies to a request, and what it would decide: matching, the two safety rules, and
//! the answer a rule builds for each question of the batch.
//!
//! Safety rules, checked before anything else a rule says:
//! - a batch with a plan review (`intent.kind = "plan-review"`) is acted on only by a rule whose
//!   match names that intent;
//! - a permission prompt (the asking agent's `meta.tool` is set, as `askdesk hook` sets it) is
//!   answered only by a rule whose match names the tool.
//!
//! `ask = true` leaves the request to the human and is exempt from both.
//!
//! What a rule can never do: answer a command line that cannot be read statically, or a command
//! or file that names or leads to a protected place (askdesk's configuration and history, the
//! agents' settings, shell start-up files, git's hooks and config: [`crate::protected`]); answer a
//! request whose `meta.path`, `meta.url` or `meta.command` is set but is no string to read; pick
//! an option that grants a standing permission ([`crate::standing`]). A rule that denies,
//! dismisses or asks beats any rule that
//! answers, whatever their order; `command` globs are matched as [`crate::shell`] says.

use std::cell::OnceCell;
use std::path::{Component, Path};

use askdesk_core::{
    meta, AgentInfo, Answer, AnswerItem, Decision, ErrorCode, Failure, Intent, Question,
    UserQuestionError,
};

use crate::file::{Action, Choice, Mode, Rule, RuleSet};
use crate::target::{Reading, Targets};
use crate::{protected, shell, standing};

/// The error code of a rule's `deny`.
pub const ASK_DENIED: &str = "ASK_DENIED";

/// What a rule decides for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Answer(Answer),
    Deny(String),
    Dismiss(String),
    Ask,
}

impl Verdict {
    /// The waterfall decision; `None` for `Ask` (the request goes on to the human).
    pub fn decision(&self) -> Option<Decision> {
        match self {
            Verdict::Answer(answer) => Some(Decision::Claim(answer.clone())),
            Verdict::Deny(message) => Some(Decision::Fail(Failure::Domain(
                UserQuestionError::new(ErrorCode::Other(ASK_DENIED.to_owned()), message.clone()),
            ))),
            Verdict::Dismiss(message) => Some(Decision::Fail(Failure::Domain(
                UserQuestionError::new(ErrorCode::AskCancelled, message.clone()),
            ))),
            Verdict::Ask => None,
        }
    }
}

/// What the rules make of one request.
#[derive(Debug, Default)]
pub struct Evaluation<'a> {
    /// The first rule in `on` mode that applies, and its verdict.
    pub acting: Option<(&'a Rule, Verdict)>,
    /// Every rule in `shadow` mode that applies: proposals only.
    pub shadow: Vec<(&'a Rule, Verdict)>,
}

/// One request as every rule tried on it reads it: the path and URL it touches ([`Targets`]), its
/// command line read as bash runs it ([`shell::Line`]), and whether no answer may be given to it
/// ([`protected`]), each worked out on first use and kept for the other rules of the evaluation.
pub struct Request<'a> {
    agent: Option<&'a AgentInfo>,
    questions: &'a [Question],
    targets: Targets<'a>,
    cwd: OnceCell<Option<String>>,
    real_cwd: OnceCell<Option<std::path::PathBuf>>,
    command: Option<shell::Line<'a>>,
    refused: OnceCell<bool>,
}

impl<'a> Request<'a> {
    pub fn new(agent: Option<&'a AgentInfo>, questions: &'a [Question]) -> Request<'a> {
        Request {
            agent,
            questions,
            targets: Targets::new(agent),
            cwd: OnceCell::new(),
            real_cwd: OnceCell::new(),
            command: meta_str(agent, meta::COMMAND).map(shell::Line::new),
            refused: OnceCell::new(),
        }
    }

    /// The agent's `meta.cwd` as `match.cwd` compares it ([`plain_cwd`]).
    fn cwd(&self) -> Option<&str> {
        self.cwd
            .get_or_init(|| plain_cwd(meta_str(self.agent, meta::CWD)?))
            .as_deref()
    }

    /// Whether the agent's `meta.cwd`, resolved for sure ([`crate::target::resolve`]), is under
    /// `prefix`, as written or resolved: a folder of the project that is a link out of it is
    /// where it leads.
    fn cwd_leads_under(&self, prefix: &str) -> bool {
        let real = self
            .real_cwd
            .get_or_init(|| crate::target::resolve(meta_str(self.agent, meta::CWD)?, None));
        real.as_ref().is_some_and(|real| {
            real.starts_with(prefix)
                || crate::target::resolve(prefix, None).is_some_and(|p| real.starts_with(p))
        })
    }

    /// Whether no rule may answer this request, whatever it says: it names what is protected
    /// ([`protected::refuses_answer`]), or what it touches is not text ([`unreadable_target`]).
    fn refuses_answer(&self) -> bool {
        *self.refused.get_or_init(|| {
            unreadable_target(self.agent)
                || protected::refuses_answer_with(self.agent, self.command.as_ref())
        })
    }
}

impl RuleSet {
    /// Evaluates the request: rules in file order, `off` rules skipped, the first `on` rule that
    /// applies decides, and shadow rules are all consulted.
    pub fn evaluate<'a>(
        &'a self,
        agent: Option<&AgentInfo>,
        questions: &[Question],
    ) -> Evaluation<'a> {
        let mut evaluation = Evaluation::default();
        // The path, URL and command line are worked out once, for every rule that names them.
        let request = Request::new(agent, questions);
        for rule in &self.rules {
            match rule.mode {
                Mode::Off => {}
                Mode::On if outranks(rule, evaluation.acting.as_ref()) => {
                    if let Some(verdict) = rule.verdict_for(&request) {
                        evaluation.acting = Some((rule, verdict));
                    }
                }
                Mode::On => {}
                Mode::Shadow => {
                    if let Some(verdict) = rule.verdict_for(&request) {
                        evaluation.shadow.push((rule, verdict));
                    }
                }
            }
        }
        evaluation
    }
}

impl Rule {
    /// What this rule decides for the request, or `None` when it does not apply: its match fails,
    /// a safety rule keeps it out, or its answer does not fit every question (an option label the
    /// question lacks, no recommended option).
    pub fn verdict(&self, agent: Option<&AgentInfo>, questions: &[Question]) -> Option<Verdict> {
        self.verdict_for(&Request::new(agent, questions))
    }

    /// [`Rule::verdict`] for a request that other rules may have read already.
    pub fn verdict_for(&self, request: &Request<'_>) -> Option<Verdict> {
        let (agent, questions) = (request.agent, request.questions);
        if !self.matches_for(request) {
            return None;
        }
        if self.action != Action::Ask {
            let plan_review = questions
                .iter()
                .any(|q| q.intent.as_ref().is_some_and(Intent::is_plan_review));
            if plan_review && self.matcher.intent.as_deref() != Some(Intent::PLAN_REVIEW) {
                return None;
            }
            let permission = meta::is_permission_prompt(agent);
            if permission && matches!(self.action, Action::Answer(_)) && self.matcher.tool.is_none()
            {
                return None;
            }
            if matches!(self.action, Action::Answer(_)) && request.refuses_answer() {
                return None;
            }
        }
        Some(match &self.action {
            Action::Answer(choice) => Verdict::Answer(Answer {
                answers: questions
                    .iter()
                    .map(|q| answer_item(q, choice))
                    .collect::<Option<_>>()?,
            }),
            Action::Deny(message) => Verdict::Deny(message.clone()),
            Action::Dismiss(message) => Verdict::Dismiss(message.clone()),
            Action::Ask => Verdict::Ask,
        })
    }

    /// Whether every field of the rule's match holds for the request.
    pub fn matches(&self, agent: Option<&AgentInfo>, questions: &[Question]) -> bool {
        self.matches_for(&Request::new(agent, questions))
    }

    /// [`Rule::matches`] for a request that other rules may have read already.
    pub fn matches_for(&self, request: &Request<'_>) -> bool {
        let (agent, questions, targets) = (request.agent, request.questions, &request.targets);
        let m = &self.matcher;
        if let Some(glob) = &m.agent {
            let Some(agent) = agent else { return false };
            let label = agent.label.as_deref().is_some_and(|l| glob.matches(l));
            if !glob.matches(&agent.id) && !label {
                return false;
            }
        }
        if let Some(prefix) = &m.cwd {
            let Some(cwd) = request.cwd() else {
                return false;
            };
            if !plain_under(cwd, prefix) {
                return false;
            }
            // A rule that answers holds where the folder leads, too.
            if matches!(self.action, Action::Answer(_)) && !request.cwd_leads_under(prefix) {
                return false;
            }
        }
        for (glob, key) in [(&m.client, meta::CLIENT), (&m.tool, meta::TOOL)] {
            if let Some(glob) = glob {
                if !meta_str(agent, key).is_some_and(|value| glob.matches(value)) {
                    return false;
                }
            }
        }
        if let Some(glob) = &m.command {
            let Some(line) = &request.command else {
                return false;
            };
            let holds = match self.action {
                Action::Answer(_) => line.allows(glob),
                _ => line.catches(glob),
            };
            if !holds {
                return false;
            }
        }
        // What the tool touches: read strictly by a rule that answers (an answer may allow),
        // generously by one that denies, dismisses or asks.
        let reading = match self.action {
            Action::Answer(_) => Reading::Strict,
            _ => Reading::Generous,
        };
        if !targets.hold(m, reading) {
            return false;
        }
        questions.iter().all(|q| {
            m.header
                .as_ref()
                .is_none_or(|glob| q.header.as_deref().is_some_and(|h| glob.matches(h)))
                && m.question
                    .as_ref()
                    .is_none_or(|re| re.is_match(&q.question))
                && m.intent
                    .as_ref()
                    .is_none_or(|kind| q.intent.as_ref().is_some_and(|i| i.kind == *kind))
        })
    }
}

/// Whether `rule` takes the decision from `acting`, the `on` rule that applies so far: the first
/// rule that applies decides, except that a rule that denies, dismisses or asks beats one that
/// answers.
fn outranks(rule: &Rule, acting: Option<&(&Rule, Verdict)>) -> bool {
    match acting {
        None => true,
        Some((_, Verdict::Answer(_))) => !matches!(rule.action, Action::Answer(_)),
        Some(_) => false,
    }
}

/// Whether the agent's `meta` names what a tool touches (`path`, `url`, `command`) in a form no
/// rule can read: set, but not a non-empty string (a number, a list, an object, `null`, `""`).
/// No rule answers such a request: every rule would see no file, address or command where the
/// agent says there is one.
fn unreadable_target(agent: Option<&AgentInfo>) -> bool {
    let Some(fields) = agent.and_then(|a| a.meta.as_ref()) else {
        return false;
    };
    [meta::PATH, meta::URL, meta::COMMAND]
        .into_iter()
        .any(|key| {
            fields
                .get(key)
                .is_some_and(|value| value.as_str().is_none_or(str::is_empty))
        })
}

/// A string entry of the agent's `meta`.
fn meta_str<'a>(agent: Option<&'a AgentInfo>, key: &str) -> Option<&'a str> {
    agent?.meta.as_ref()?.get(key)?.as_str()
}

/// A `meta.cwd` as `match.cwd` compares it: its names joined by single slashes (`//` and `/./`
/// change nothing), or `None` when it does not say where the agent is. Only an absolute path
/// without `..` does: `/src/app/../other` is not under `/src/app`, and resolving `..` without the
/// file system could cross a symbolic link.
fn plain_cwd(path: &str) -> Option<String> {
    let path = Path::new(path);
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return None;
    }
    let mut plain = String::with_capacity(path.as_os_str().len());
    for component in path.components() {
        if let Component::Normal(name) = component {
            plain.push('/');
            plain.push_str(name.to_str()?);
        }
    }
    if plain.is_empty() {
        plain.push('/');
    }
    Some(plain)
}

/// Whether a cwd as [`plain_cwd`] gives it is `prefix` or lies under it, by whole components.
fn plain_under(cwd: &str, prefix: &str) -> bool {
    let plain_prefix = prefix.len() > 1
        && prefix.starts_with('/')
        && prefix[1..]
            .split('/')
            .all(|name| !matches!(name, "" | "." | ".."));
    if !plain_prefix {
        // The root, or a prefix written with `//`, `.` or `..`: compared name by name.
        return Path::new(cwd).starts_with(prefix);
    }
    cwd.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether `path` is `prefix` or lies under it, by whole components.
#[cfg(test)]
fn under(path: &str, prefix: &str) -> bool {
    plain_cwd(path).is_some_and(|cwd| plain_under(&cwd, prefix))
}

/// The answer a choice gives to one question, if it fits the question. An option that grants a
/// standing permission ([`standing`]) is never picked: the rules file refuses a rule that names
/// one, and this holds for any rule however it was made.
fn answer_item(question: &Question, choice: &Choice) -> Option<AnswerItem> {
    let selected = |label: &str| AnswerItem {
        id: question.id.clone(),
        selected: vec![label.to_owned()],
        ..Default::default()
    };
    match choice {
        Choice::Option(wanted) => {
            let exact = question.options.iter().find(|o| o.label == *wanted);
            let loose = || {
                question
                    .options
                    .iter()
                    .find(|o| askdesk_core::shown_label(&o.label) == wanted.as_str())
            };
            exact
                .or_else(loose)
                .and_then(|o| one_call(&o.label))
                .map(selected)
        }
        Choice::Recommended => question
            .options
            .iter()
            .find(|o| o.is_recommended())
            .and_then(|o| one_call(&o.label))
            .map(selected),
        Choice::Text(text) => Some(AnswerItem {
            id: question.id.clone(),
            custom: Some(text.clone()),
            ..Default::default()
        }),
    }
}

/// `label`, unless it grants a standing permission.
fn one_call(label: &str) -> Option<&str> {
    standing::one_call_instead(label).is_none().then_some(label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Match;
    use serde_json::{json, Map, Value};

    fn rules(text: &str) -> RuleSet {
        RuleSet::parse(text).unwrap()
    }

    fn question(id: &str, text: &str, options: &[&str]) -> Question {
        askdesk_core::testing::question(id, text, options)
    }

    fn plan() -> Question {
        let mut q = question("plan", "Approve the plan?", &["Approve", "Keep planning"]);
        q.detail = Some("# Plan".into());
        q.intent = Some(Intent {
            kind: "plan-review".into(),
            approve: "Approve".into(),
        });
        q
    }

    fn agent(id: &str, label: Option<&str>, meta: Value) -> AgentInfo {
        AgentInfo {
            id: id.into(),
            label: label.map(str::to_owned),
            meta: match meta {
                Value::Object(map) => Some(map),
                _ => Some(Map::new()),
            },
        }
    }

    fn chosen(verdict: Option<Verdict>) -> Option<Vec<(Vec<String>, Option<String>)>> {
        match verdict? {
            Verdict::Answer(a) => Some(
                a.answers
                    .into_iter()
                    .map(|i| (i.selected, i.custom))
                    .collect(),
            ),
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    fn one(label: &str) -> Option<Vec<(Vec<String>, Option<String>)>> {
        Some(vec![(vec![label.to_owned()], None)])
    }

    #[test]
    fn each_match_field() {
        let set = rules(
            r#"
[[rule]]
name = "r"
answer = "Yes"
match = { agent = "claude-*", cwd = "/src/app", client = "claude-code", header = "Tests", question = "(?i)run .* tests" }
"#,
        );
        let rule = &set.rules[0];
        let coder = agent(
            "s1",
            Some("claude-code 2.1"),
            json!({ "cwd": "/src/app/crates", "client": "claude-code" }),
        );
        let mut q = question("q", "Run the unit tests now?", &["Yes", "No"]);
        q.header = Some("Tests".into());
        assert_eq!(
            chosen(rule.verdict(Some(&coder), std::slice::from_ref(&q))),
            one("Yes")
        );

        // Each field, broken on its own, stops the match.
        let other_label = agent(
            "s1",
            Some("codex"),
            json!({ "cwd": "/src/app", "client": "claude-code" }),
        );
        assert!(!rule.matches(Some(&other_label), std::slice::from_ref(&q)));
        let by_id = agent(
            "claude-7",
            None,
            json!({ "cwd": "/src/app", "client": "claude-code" }),
        );
        assert!(
            rule.matches(Some(&by_id), std::slice::from_ref(&q)),
            "the glob matches the id too"
        );
        let sibling = agent(
            "s1",
            Some("claude-code"),
            json!({ "cwd": "/src/application", "client": "claude-code" }),
        );
        assert!(
            !rule.matches(Some(&sibling), std::slice::from_ref(&q)),
            "cwd is a prefix by components"
        );
        let no_client = agent("s1", Some("claude-code"), json!({ "cwd": "/src/app" }));
        assert!(!rule.matches(Some(&no_client), std::slice::from_ref(&q)));
        assert!(
            !rule.matches(None, std::slice::from_ref(&q)),
            "no agent, no agent match"
        );
        let mut headless = q.clone();
        headless.header = None;
        assert!(!rule.matches(Some(&coder), &[headless]));
        let other_text = question("q", "Deploy?", &["Yes", "No"]);
        assert!(
            !rule.matches(Some(&coder), &[q.clone(), other_text]),
            "every question must match"
        );
    }

    #[test]
    fn empty_match_matches_everything_it_safely_can() {
        let set = rules("[[rule]]\nname = \"all\"\nanswer = { recommended = true }\n");
        let q = question("q", "Clean up?", &["Yes (Recommended)", "No"]);
        assert_eq!(
            chosen(set.rules[0].verdict(None, &[q])),
            one("Yes (Recommended)")
        );
    }

    #[test]
    fn answers_fit_every_question_or_the_rule_does_not_apply() {
        let set = rules(
            r#"
[[rule]]
name = "yes"
answer = "Yes"
[[rule]]
name = "rec"
answer = { recommended = true }
[[rule]]
name = "text"
answer.text = "after lunch"
"#,
        );
        let (yes, rec, text) = (&set.rules[0], &set.rules[1], &set.rules[2]);
        let plain = question("a", "?", &["Yes", "No"]);
        let recommended = question("b", "?", &["Yes (Recommended)", "No"]);
        let free = question("c", "When?", &[]);
        assert_eq!(
            chosen(yes.verdict(None, std::slice::from_ref(&plain))),
            one("Yes")
        );
        assert_eq!(
            chosen(yes.verdict(None, std::slice::from_ref(&recommended))),
            one("Yes (Recommended)"),
            "the label may leave out (Recommended)"
        );
        assert_eq!(
            yes.verdict(None, &[plain.clone(), free.clone()]),
            None,
            "no Yes on a free-text question"
        );
        assert_eq!(
            rec.verdict(None, std::slice::from_ref(&plain)),
            None,
            "nothing recommended"
        );
        assert_eq!(
            chosen(rec.verdict(None, std::slice::from_ref(&recommended))),
            one("Yes (Recommended)")
        );
        assert_eq!(
            chosen(text.verdict(None, &[plain, free])),
            Some(vec![
                (vec![], Some("after lunch".into())),
                (vec![], Some("after lunch".into()))
            ])
        );
    }

    #[test]
    fn plan_reviews_need_a_rule_that_names_them() {
        let set = rules(
            r#"
[[rule]]
name = "everything"
answer = "Approve"
[[rule]]
name = "deny everything"
deny = "no"
[[rule]]
name = "plans"
match.intent = "plan-review"
answer = "Approve"
[[rule]]
name = "human"
ask = true
"#,
        );
        assert_eq!(set.rules[0].verdict(None, &[plan()]), None);
        assert_eq!(set.rules[1].verdict(None, &[plan()]), None);
        assert_eq!(
            chosen(set.rules[2].verdict(None, &[plan()])),
            one("Approve")
        );
        assert_eq!(set.rules[3].verdict(None, &[plan()]), Some(Verdict::Ask));
        // A plan mixed into a batch protects the whole batch.
        let mixed = [question("q", "?", &["Approve"]), plan()];
        assert_eq!(set.rules[0].verdict(None, &mixed), None);
        assert_eq!(
            set.rules[2].verdict(None, &mixed),
            None,
            "the plain question has no intent"
        );
        // An `ask` beats any answer, whatever the order.
        let evaluation = set.evaluate(None, &[plan()]);
        assert_eq!(
            evaluation.acting.map(|(r, _)| r.name.as_str()),
            Some("human")
        );
    }

    #[test]
    fn permission_prompts_are_answered_only_by_rules_that_name_the_tool() {
        let set = rules(
            r#"
[[rule]]
name = "yes to all"
answer = "Allow"
[[rule]]
name = "no pushes"
match = { tool = "Bash", command = "*git push*" }
answer = "Deny"
[[rule]]
name = "tests"
match = { tool = "Bash", command = "cargo test*" }
answer = "Allow"
[[rule]]
name = "refuse the stranger"
match.agent = "stranger"
deny = "ask in the terminal"
"#,
        );
        let prompt = [question("q", "Allow Bash?", &["Allow", "Deny"])];
        let hook = |command: &str| agent("s", None, json!({ "tool": "Bash", "command": command }));
        let name = |command: &str| {
            set.evaluate(Some(&hook(command)), &prompt)
                .acting
                .map(|(r, _)| r.name.clone())
        };
        assert_eq!(name("cargo test -p x").as_deref(), Some("tests"));
        assert_eq!(name("git push origin main").as_deref(), Some("no pushes"));
        assert_eq!(
            name("rm -rf target"),
            None,
            "no rule names the tool and this command"
        );
        let stranger = agent(
            "stranger",
            None,
            json!({ "tool": "Bash", "command": "cargo test" }),
        );
        assert_eq!(
            set.evaluate(Some(&stranger), &prompt)
                .acting
                .map(|(r, _)| r.name.as_str()),
            Some("refuse the stranger"),
            "deny needs no tool, and beats the answer before it"
        );
        // A tool of another type is still set: still a permission prompt.
        for tool in [json!(5), json!({}), json!(["Bash"])] {
            let odd = set.evaluate(Some(&agent("s", None, json!({ "tool": tool }))), &prompt);
            assert!(odd.acting.is_none(), "tool {tool}");
        }
        // The same question from a plain agent is not a permission prompt.
        let plain = set.evaluate(Some(&agent("s", None, json!({}))), &prompt);
        assert_eq!(
            plain.acting.map(|(r, _)| r.name.as_str()),
            Some("yes to all")
        );
    }

    #[test]
    fn a_target_set_but_not_a_string_is_answered_by_no_rule() {
        let set = rules(
            r#"
[[rule]]
name = "any edit"
match.tool = "Edit"
answer = "Allow once"
[[rule]]
name = "any fetch"
match.tool = "WebFetch"
answer = "Allow once"
[[rule]]
name = "any bash"
match.tool = "Bash"
answer = "Allow once"
[[rule]]
name = "no env"
match = { tool = "Edit", path = "*" }
ask = true
"#,
        );
        let prompt = [question("q", "Allow it?", &["Allow once", "Deny"])];
        let acting = |meta: Value| {
            set.evaluate(Some(&agent("s", None, meta)), &prompt)
                .acting
                .map(|(r, v)| (r.name.clone(), matches!(v, Verdict::Answer(_))))
        };
        for (tool, key) in [("Edit", "path"), ("WebFetch", "url"), ("Bash", "command")] {
            for value in [
                json!(5),
                json!(["/w/a.rs"]),
                json!({ "path": "/w/a.rs" }),
                json!(null),
                json!(""),
                json!(true),
            ] {
                let got = acting(json!({ "tool": tool, "cwd": "/w", key: value }));
                assert!(
                    !got.as_ref().is_some_and(|(_, answers)| *answers),
                    "{tool} {key} = {value}: {got:?}"
                );
            }
        }
        // Read as strings, the same rules answer.
        assert_eq!(
            acting(json!({ "tool": "Bash", "cwd": "/w", "command": "ls" })),
            Some(("any bash".to_owned(), true))
        );
        assert_eq!(
            acting(json!({ "tool": "WebFetch", "url": "https://docs.rs/" })),
            Some(("any fetch".to_owned(), true))
        );
    }

    #[test]
    fn no_rule_picks_an_option_that_grants_a_standing_permission() {
        // Made by hand, past the file's refusal: a rule still never picks such an option.
        let hand_made = |choice: Choice| Rule {
            name: "hand made".into(),
            matcher: Match::default(),
            action: Action::Answer(choice),
            after: None,
            mode: Mode::On,
            line: 1,
        };
        let prompt = [question(
            "permission",
            "Allow Edit?",
            &[
                standing::ALLOW_ONCE,
                "Always allow in this session (Recommended)",
                "Deny",
            ],
        )];
        let plan = [question(
            "plan",
            "Approve this plan?",
            &[standing::APPROVE_ASK, standing::APPROVE_ACCEPT],
        )];
        for (choice, questions) in [
            (Choice::Option(standing::ALLOW_SESSION.into()), &prompt[..]),
            (
                Choice::Option("Always allow in this session (Recommended)".into()),
                &prompt[..],
            ),
            (Choice::Recommended, &prompt[..]),
            (Choice::Option(standing::APPROVE_ACCEPT.into()), &plan[..]),
        ] {
            let rule = hand_made(choice.clone());
            assert_eq!(rule.verdict(None, questions), None, "{choice:?}");
        }
        let once = hand_made(Choice::Option(standing::ALLOW_ONCE.into()));
        assert_eq!(
            chosen(once.verdict(None, &prompt)),
            one(standing::ALLOW_ONCE)
        );
    }

    #[test]
    fn first_on_rule_decides_shadow_rules_all_propose_off_rules_sleep() {
        let set = rules(
            r#"
[[rule]]
name = "off"
answer = "Yes"
mode = "off"
[[rule]]
name = "shadow-no"
answer = "No"
mode = "shadow"
[[rule]]
name = "first"
answer = "Yes"
[[rule]]
name = "second"
answer = "No"
[[rule]]
name = "shadow-late"
answer = "Yes"
mode = "shadow"
"#,
        );
        let q = [question("q", "?", &["Yes", "No"])];
        let evaluation = set.evaluate(None, &q);
        let (rule, verdict) = evaluation.acting.unwrap();
        assert_eq!(rule.name, "first");
        assert_eq!(chosen(Some(verdict)), one("Yes"));
        let shadows: Vec<_> = evaluation
            .shadow
            .iter()
            .map(|(r, _)| r.name.as_str())
            .collect();
        assert_eq!(shadows, ["shadow-no", "shadow-late"]);
    }

    #[test]
    fn ask_stops_the_rules() {
        let set = rules(
            "[[rule]]\nname = \"human\"\nask = true\nmatch.header = \"Deploy\"\n\n[[rule]]\nname = \"yes\"\nanswer = \"Yes\"\n",
        );
        let mut deploy = question("q", "?", &["Yes"]);
        deploy.header = Some("Deploy".into());
        let evaluation = set.evaluate(None, &[deploy]);
        assert_eq!(
            evaluation
                .acting
                .as_ref()
                .map(|(r, v)| (r.name.as_str(), v)),
            Some(("human", &Verdict::Ask))
        );
        assert_eq!(evaluation.acting.unwrap().1.decision(), None);
    }

    #[test]
    fn deny_and_dismiss_decisions() {
        let denied = Verdict::Deny("not on main".into()).decision().unwrap();
        let Decision::Fail(Failure::Domain(e)) = denied else {
            panic!("{denied:?}")
        };
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("ASK_DENIED", "not on main")
        );
        let dismissed = Verdict::Dismiss("later".into()).decision().unwrap();
        let Decision::Fail(Failure::Domain(e)) = dismissed else {
            panic!("{dismissed:?}")
        };
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("ASK_CANCELLED", "later")
        );
    }

    #[test]
    fn cwd_prefixes() {
        assert!(under("/src/app", "/src/app"));
        assert!(under("/src/app/", "/src/app"));
        assert!(under("/src/app/x/y", "/src/app"));
        assert!(!under("/src/apple", "/src/app"));
        assert!(!under("/src", "/src/app"));
        assert!(under("/anything", "/"));
        assert!(under("/src//app/./x", "/src/app"));
        assert!(!under("/src/app/../other", "/src/app"));
        assert!(!under("/src/app/../../../etc", "/src/app"));
        assert!(!under("/src/app/..", "/"));
        assert!(!under("src/app", "/src/app"), "a relative cwd is nowhere");
        assert!(under("/src/app/x", "/src//app/."));
        assert!(!under("/src/app", "/src/app/.."));
    }

    #[test]
    fn a_rule_that_answers_holds_in_a_folder_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("app/src")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("app/out")).unwrap();
        std::os::unix::fs::symlink(root.join("app"), root.join("alias")).unwrap();
        let root = root.display();
        let set = rules(&format!(
            "[[rule]]\nname = \"tests\"\nmatch = {{ tool = \"Bash\", command = \"cargo test\", cwd = \"{root}/app\" }}\nanswer = \"Allow once\"\n\
             [[rule]]\nname = \"by alias\"\nmatch = {{ tool = \"Bash\", command = \"cargo test\", cwd = \"{root}/alias\" }}\nanswer = \"Allow once\"\n\
             [[rule]]\nname = \"no tests\"\nmatch = {{ tool = \"Bash\", command = \"cargo test\", cwd = \"{root}/app\" }}\ndeny = \"no\"\n"
        ));
        let in_folder = |cwd: String| {
            agent(
                "a",
                None,
                json!({ "tool": "Bash", "command": "cargo test", "cwd": cwd }),
            )
        };
        let holds = |i: usize, cwd: String| set.rules[i].matches(Some(&in_folder(cwd)), &[]);
        assert!(holds(0, format!("{root}/app/src")));
        assert!(
            !holds(0, format!("{root}/app/out")),
            "a link out of the project"
        );
        assert!(holds(2, format!("{root}/app/out")), "a deny reads the text");
        assert!(
            !holds(1, format!("{root}/app/src")),
            "the cwd as written counts"
        );
        assert!(
            holds(1, format!("{root}/alias/src")),
            "a prefix through a link"
        );
        assert!(!holds(1, format!("{root}/alias/out")));
    }

    #[test]
    fn cwd_prefixes_compare_as_whole_components_do() {
        // What `match.cwd` means, the slow way: paths compared component by component.
        let reference = |path: &str, prefix: &str| {
            let path = Path::new(path);
            path.is_absolute()
                && !path.components().any(|c| c == Component::ParentDir)
                && path.starts_with(prefix)
        };
        let names = ["", ".", "..", "a", "ab", "b"];
        let mut paths = vec![String::new()];
        for _ in 0..3 {
            paths = paths
                .iter()
                .flat_map(|p| names.iter().map(move |n| format!("{p}/{n}")))
                .chain(paths.iter().cloned())
                .collect();
        }
        paths.sort();
        paths.dedup();
        let prefixes: Vec<&str> = paths
            .iter()
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| !p.is_empty())
            .chain(["/"])
            .collect();
        for path in paths.iter().chain([&"a/b".to_owned()]) {
            for prefix in &prefixes {
                assert_eq!(
                    under(path, prefix),
                    reference(path, prefix),
                    "{path:?} under {prefix:?}"
                );
            }
        }
    }
}
