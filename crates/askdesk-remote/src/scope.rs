//! What one device may answer, set by the person on the desk and kept with the device in
//! `devices.json`: which agents, which projects, and the highest [`Class`]. A request outside it
//! is not shown to the device, and an answer to one is refused.

use std::path::Path;

use askdesk_core::{meta, AgentInfo};
use serde::{Deserialize, Serialize};

use crate::risk::Class;

/// A device's scope. The default (what a device paired before scopes existed has): every agent,
/// every project, up to plan reviews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// The agents it may answer, each by its id or its label; empty: every agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// The projects it may answer: absolute folders the asking agent's working directory must be
    /// in (or be); empty: any, requests without a working directory too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projects: Vec<String>,
    /// The highest class it may answer.
    #[serde(default = "default_up_to")]
    pub up_to: Class,
}

fn default_up_to() -> Class {
    Class::PlanReview
}

impl Default for Scope {
    fn default() -> Scope {
        Scope {
            agents: Vec::new(),
            projects: Vec::new(),
            up_to: default_up_to(),
        }
    }
}

impl Scope {
    pub fn is_default(&self) -> bool {
        *self == Scope::default()
    }

    /// Whether a request of `class` from `agent` is within the scope. With agents named, a
    /// request without an agent is not; with projects named, a request whose agent names no
    /// absolute working directory is not (`..` in it is taken by name).
    pub fn admits(&self, agent: Option<&AgentInfo>, class: Class) -> bool {
        if class > self.up_to {
            return false;
        }
        let agent_in = self.agents.is_empty()
            || agent.is_some_and(|agent| {
                self.agents
                    .iter()
                    .any(|name| *name == agent.id || agent.label.as_ref() == Some(name))
            });
        let project_in = self.projects.is_empty()
            || agent
                .and_then(|agent| agent.meta_str(meta::CWD))
                .map(Path::new)
                .filter(|cwd| cwd.is_absolute())
                .map(askdesk_rules::target::fold_dots)
                .is_some_and(|cwd| {
                    self.projects.iter().any(|project| {
                        cwd.starts_with(askdesk_rules::target::fold_dots(Path::new(project)))
                    })
                });
        agent_in && project_in
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn agent(id: &str, label: Option<&str>, cwd: Option<&str>) -> AgentInfo {
        AgentInfo {
            id: id.into(),
            label: label.map(Into::into),
            meta: cwd.and_then(|cwd| json!({ "cwd": cwd }).as_object().cloned()),
        }
    }

    #[test]
    fn the_default_scope_answers_every_agent_up_to_plan_reviews() {
        let scope = Scope::default();
        assert!(scope.admits(None, Class::TextAndChoices));
        assert!(scope.admits(Some(&agent("a", None, None)), Class::PlanReview));
        assert!(!scope.admits(None, Class::PermissionPrompt));
        let read: Scope = serde_json::from_value(json!({})).unwrap();
        assert_eq!(read, scope);
    }

    #[test]
    fn agents_projects_and_class_each_narrow_it() {
        let scope = Scope {
            agents: vec!["coder".into(), "Reviewer".into()],
            projects: vec!["/home/me/app".into()],
            up_to: Class::TextAndChoices,
        };
        let inside = Some("/home/me/app/crates/x");
        assert!(scope.admits(Some(&agent("coder", None, inside)), Class::TextAndChoices));
        assert!(scope.admits(
            Some(&agent("r-2", Some("Reviewer"), Some("/home/me/app"))),
            Class::TextAndChoices
        ));
        assert!(!scope.admits(Some(&agent("coder", None, inside)), Class::PlanReview));
        assert!(!scope.admits(Some(&agent("other", None, inside)), Class::TextAndChoices));
        assert!(!scope.admits(None, Class::TextAndChoices));
        for cwd in [
            None,
            Some("/home/me/application"),
            Some("/home/me/app/../other"),
            Some("app"),
        ] {
            assert!(
                !scope.admits(Some(&agent("coder", None, cwd)), Class::TextAndChoices),
                "{cwd:?}"
            );
        }
    }
}
