//! The risk class of a request, decided on the desk before any phone sees it (never by a phone):
//! text and choices, a plan review, or a permission prompt; for a permission prompt, whether it is
//! desk-only ([`crate::desk_only`]) and why; and the standing permissions among its options, which
//! no phone may give. Phones are sent the class and the reason to show them read-only; the checks
//! of a signed answer ([`crate::Remote::verify`]) apply them.

use askdesk_core::{meta, shown_label, AgentInfo, Answer, Question};
use askdesk_rules::standing;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// How much an answer can do, from least to most. A device's scope names the highest it may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Questions with choices or free text: the asker reads the answer as information.
    TextAndChoices,
    /// A plan under review (protocol 1.3's `plan-review` intent): an approval lets the agent act.
    PlanReview,
    /// A tool's permission prompt (the asking agent's meta names a `tool`, as `askdesk hook`
    /// asks): an approval runs the tool.
    PermissionPrompt,
}

impl Class {
    /// The name the wire, `devices.json` and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Class::TextAndChoices => "text-and-choices",
            Class::PlanReview => "plan-review",
            Class::PermissionPrompt => "permission-prompt",
        }
    }

    /// The class named `name` ([`Class::name`]).
    pub fn from_name(name: &str) -> Option<Class> {
        [
            Class::TextAndChoices,
            Class::PlanReview,
            Class::PermissionPrompt,
        ]
        .into_iter()
        .find(|class| class.name() == name)
    }
}

/// What the desk decided about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    pub class: Class,
    /// Why no phone may allow it, for a desk-only permission prompt.
    pub desk_only: Option<String>,
    /// The labels of its options that grant a standing permission ("Always allow in this
    /// session", "Approve, accept edits"): desk-only in every class.
    pub standing: Vec<String>,
    /// For a permission prompt, the labels of its options that deny ([`denies`]): choosing only
    /// those needs no passkey; anything else allows.
    pub deny: Vec<String>,
}

/// Whether an option of a permission prompt denies ("Deny", "Keep planning", with or without
/// "(Recommended)"): the one rule of what a phone may send without a passkey.
pub fn denies(label: &str) -> bool {
    matches!(shown_label(label), "Deny" | "Keep planning")
}

impl Risk {
    /// Classifies a request; a permission prompt's desk-only reason is worked out against this
    /// process's user's protected places.
    pub fn assess(agent: Option<&AgentInfo>, questions: &[Question]) -> Risk {
        let class = if meta::is_permission_prompt(agent) {
            Class::PermissionPrompt
        } else if questions
            .iter()
            .any(|q| q.intent.as_ref().is_some_and(|i| i.is_plan_review()))
        {
            Class::PlanReview
        } else {
            Class::TextAndChoices
        };
        let desk_only = match class {
            Class::PermissionPrompt => crate::desk_only::reason(agent),
            _ => None,
        };
        let standing = questions
            .iter()
            .flat_map(|q| &q.options)
            .filter(|option| standing::one_call_instead(&option.label).is_some())
            .map(|option| option.label.clone())
            .collect();
        let deny = match class {
            Class::PermissionPrompt => questions
                .iter()
                .flat_map(|q| &q.options)
                .filter(|option| denies(&option.label))
                .map(|option| option.label.clone())
                .collect(),
            _ => Vec::new(),
        };
        Risk {
            class,
            desk_only,
            standing,
            deny,
        }
    }

    /// What a phone is told with the request: `{"class", "deskOnly": <reason> | null,
    /// "standing": [<labels>], "deny": [<labels>]}`, to show it read-only where it may not answer
    /// and ask for the passkey where an answer allows.
    pub fn wire(&self) -> Value {
        json!({
            "class": self.class.name(),
            "deskOnly": self.desk_only,
            "standing": self.standing,
            "deny": self.deny,
        })
    }

    /// Whether `answer` chooses a standing permission.
    pub fn grants_standing(answer: &Answer) -> bool {
        answer
            .answers
            .iter()
            .flat_map(|item| &item.selected)
            .any(|label| standing::one_call_instead(label).is_some())
    }

    /// Whether `answer` approves something the agent then does: for a permission prompt, any
    /// answer but choosing only deny options ("Deny", "Keep planning": none of the approving
    /// labels); for a plan review, choosing a question's approving option or a standing one.
    pub fn approves(&self, questions: &[Question], answer: &Answer) -> bool {
        match self.class {
            Class::TextAndChoices => false,
            Class::PlanReview => answer.answers.iter().any(|item| {
                let approve = questions
                    .iter()
                    .find(|q| q.id == item.id)
                    .and_then(|q| q.intent.as_ref())
                    .map(|intent| shown_label(&intent.approve));
                item.selected.iter().any(|label| {
                    approve == Some(shown_label(label))
                        || standing::one_call_instead(label).is_some()
                })
            }),
            Class::PermissionPrompt => answer.answers.iter().any(|item| {
                item.custom.is_some() || item.selected.iter().any(|label| !denies(label))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::{AnswerItem, Intent};

    fn question(labels: &[&str], plan: bool) -> Question {
        Question {
            intent: plan.then(|| Intent {
                kind: Intent::PLAN_REVIEW.into(),
                approve: "Approve (Recommended)".into(),
            }),
            ..askdesk_core::testing::question("q", "?", labels)
        }
    }

    fn agent(meta: Value) -> AgentInfo {
        AgentInfo {
            id: "a".into(),
            label: None,
            meta: meta.as_object().cloned(),
        }
    }

    fn chose(label: &str) -> Answer {
        Answer {
            answers: vec![AnswerItem {
                id: "q".into(),
                selected: vec![label.into()],
                ..Default::default()
            }],
        }
    }

    #[test]
    fn the_class_is_decided_by_the_tool_then_the_intent() {
        let plain = [question(&["Yes", "No"], false)];
        let plan = [question(&["Approve (Recommended)", "Keep planning"], true)];
        assert_eq!(Risk::assess(None, &plain).class, Class::TextAndChoices);
        assert_eq!(Risk::assess(None, &plan).class, Class::PlanReview);
        for tool in [json!("Bash"), json!(""), json!(7), json!({})] {
            let prompt = agent(json!({ "tool": tool }));
            assert_eq!(
                Risk::assess(Some(&prompt), &plan).class,
                Class::PermissionPrompt,
                "{tool}"
            );
        }
        let no_tool = agent(json!({ "tool": null, "cwd": "/w" }));
        assert_eq!(
            Risk::assess(Some(&no_tool), &plain).class,
            Class::TextAndChoices
        );
        assert!(Class::TextAndChoices < Class::PlanReview);
        assert!(Class::PlanReview < Class::PermissionPrompt);
        for class in [
            Class::TextAndChoices,
            Class::PlanReview,
            Class::PermissionPrompt,
        ] {
            assert_eq!(Class::from_name(class.name()), Some(class));
        }
    }

    #[test]
    fn standing_options_are_listed_and_choosing_one_is_seen() {
        let prompt = [question(
            &["Allow once", "Always allow in this session", "Deny"],
            false,
        )];
        let risk = Risk::assess(Some(&agent(json!({ "tool": "Bash" }))), &prompt);
        assert_eq!(risk.standing, ["Always allow in this session"]);
        assert_eq!(
            risk.wire()["standing"],
            json!(["Always allow in this session"])
        );
        assert!(Risk::grants_standing(&chose(
            "Always allow in this session (Recommended)"
        )));
        assert!(!Risk::grants_standing(&chose("Allow once")));
    }

    #[test]
    fn approvals_are_told_from_denials() {
        let prompt = [question(&["Allow once", "Deny"], false)];
        let risk = Risk::assess(Some(&agent(json!({ "tool": "Edit" }))), &prompt);
        assert!(risk.approves(&prompt, &chose("Allow once")));
        assert!(!risk.approves(&prompt, &chose("Deny")));
        let plan = [question(
            &[
                "Approve (Recommended)",
                "Approve, accept edits",
                "Keep planning",
            ],
            true,
        )];
        let risk = Risk::assess(None, &plan);
        assert!(risk.approves(&plan, &chose("Approve")));
        assert!(risk.approves(&plan, &chose("Approve, accept edits")));
        assert!(!risk.approves(&plan, &chose("Keep planning")));
        let plain = [question(&["Yes", "No"], false)];
        assert!(!Risk::assess(None, &plain).approves(&plain, &chose("Yes")));
    }
}
