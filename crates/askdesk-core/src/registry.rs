//! The live agent registry (protocol section 3): handles, owners, roots and cascade unregistration.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::RegistryError;
use crate::types::AgentInfo;

/// Names one registration of an agent: the id plus the unguessable token of that incarnation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Handle {
    pub id: String,
    pub instance: String,
}

/// What a runtime supplies to register an agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRegistration {
    pub id: String,
    /// The live agent that owns this one; `None` makes it a root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Handle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Free-form display information (cwd, repo, branch, model, pid, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A live agent as `agents/list` shows it: never with its instance token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSummary {
    pub id: String,
    pub owner: Option<String>,
    pub root: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One live registration.
#[derive(Debug)]
pub(crate) struct Agent {
    instance: String,
    owner: Option<String>,
    children: BTreeSet<String>,
    label: Option<String>,
    meta: Option<Map<String, Value>>,
    seq: u64,
    /// Cancelled when the agent is unregistered; its pending asks settle `ASK_ABORTED`.
    pub(crate) gone: CancellationToken,
}

impl Agent {
    pub(crate) fn info(&self, id: &str) -> AgentInfo {
        AgentInfo {
            id: id.to_owned(),
            label: self.label.clone(),
            meta: self.meta.clone(),
        }
    }

    /// A *root* is a live agent with no owner. Only a root may ask the human: an owned child
    /// has no human answerer of its own and must hand its open question to its owner.
    /// Runtime ownership decides, not lineage: a resumed session registered without an owner is a root.
    pub(crate) fn is_root(&self) -> bool {
        self.owner.is_none()
    }
}

/// The registry of live agents.
///
/// Invariant: every `owner` names a live agent, and `children` of each agent is exactly the set of
/// live agents whose `owner` is that agent. Unregistration removes whole subtrees to keep it so.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    agents: HashMap<String, Agent>,
    next_seq: u64,
}

impl Registry {
    pub(crate) fn register(
        &mut self,
        registration: AgentRegistration,
    ) -> Result<Handle, RegistryError> {
        let AgentRegistration {
            id,
            owner,
            label,
            meta,
        } = registration;
        if self.agents.contains_key(&id) {
            return Err(RegistryError::IdTaken { id });
        }
        if let Some(owner) = &owner {
            self.live(owner)?;
        }
        let instance = new_instance_token();
        let owner = owner.map(|h| h.id);
        if let Some(owner) = &owner {
            self.agents
                .get_mut(owner)
                .expect("owner checked live above")
                .children
                .insert(id.clone());
        }
        self.next_seq += 1;
        let agent = Agent {
            instance: instance.clone(),
            owner,
            children: BTreeSet::new(),
            label,
            meta,
            seq: self.next_seq,
            gone: CancellationToken::new(),
        };
        self.agents.insert(id.clone(), agent);
        Ok(Handle { id, instance })
    }

    /// The live agent the handle names, if the handle is its exact current instance.
    pub(crate) fn lookup(&self, handle: &Handle) -> Option<&Agent> {
        self.agents
            .get(&handle.id)
            .filter(|agent| tokens_equal(&agent.instance, &handle.instance))
    }

    /// [`Registry::lookup`], or why the handle names no live agent: the id is not registered
    /// ([`RegistryError::NotLive`]) or is live under another instance ([`RegistryError::StaleHandle`]).
    pub(crate) fn live(&self, handle: &Handle) -> Result<&Agent, RegistryError> {
        self.lookup(handle).ok_or_else(|| {
            let id = handle.id.clone();
            if self.agents.contains_key(&handle.id) {
                RegistryError::StaleHandle { id }
            } else {
                RegistryError::NotLive { id }
            }
        })
    }

    /// Unregisters the agent and, transitively, every agent it owns.
    ///
    /// Returns the ids removed (the agent first, then its descendants); their `gone` tokens are cancelled.
    pub(crate) fn unregister(&mut self, handle: &Handle) -> Result<Vec<String>, RegistryError> {
        self.live(handle)?;
        let root = self.agents.remove(&handle.id).expect("looked up above");
        if let Some(owner) = &root.owner {
            if let Some(owner) = self.agents.get_mut(owner) {
                owner.children.remove(&handle.id);
            }
        }
        let mut removed = vec![handle.id.clone()];
        let mut stack: Vec<String> = root.children.iter().cloned().collect();
        root.gone.cancel();
        while let Some(id) = stack.pop() {
            if let Some(agent) = self.agents.remove(&id) {
                agent.gone.cancel();
                stack.extend(agent.children.iter().cloned());
                removed.push(id);
            }
        }
        Ok(removed)
    }

    /// The live agents with no owner, in registration order.
    pub(crate) fn roots(&self) -> Vec<String> {
        let mut roots: Vec<(&u64, &String)> = self
            .agents
            .iter()
            .filter(|(_, a)| a.is_root())
            .map(|(id, a)| (&a.seq, id))
            .collect();
        roots.sort();
        roots.into_iter().map(|(_, id)| id.clone()).collect()
    }

    /// Every live agent, in registration order.
    pub(crate) fn list(&self) -> Vec<AgentSummary> {
        let mut agents: Vec<(&String, &Agent)> = self.agents.iter().collect();
        agents.sort_by_key(|(_, a)| a.seq);
        agents
            .into_iter()
            .map(|(id, a)| AgentSummary {
                id: id.clone(),
                owner: a.owner.clone(),
                root: a.is_root(),
                label: a.label.clone(),
                meta: a.meta.clone(),
            })
            .collect()
    }
}

/// 128 random bits, hex-encoded.
fn new_instance_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares tokens without stopping at the first difference, so timing tells nothing.
fn tokens_equal(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(id: &str, owner: Option<&Handle>) -> AgentRegistration {
        AgentRegistration {
            id: id.into(),
            owner: owner.cloned(),
            ..Default::default()
        }
    }

    #[test]
    fn tokens_are_unguessable_and_distinct() {
        let mut registry = Registry::default();
        let a = registry.register(reg("a", None)).unwrap();
        let b = registry.register(reg("b", None)).unwrap();
        assert_eq!(a.instance.len(), 32);
        assert_ne!(a.instance, b.instance);
    }

    #[test]
    fn exact_instance_only() {
        let mut registry = Registry::default();
        let a = registry.register(reg("a", None)).unwrap();
        assert!(registry.lookup(&a).is_some());
        // The last character changed to another hex digit: one off, so never the real token.
        let last = if a.instance.ends_with('0') { '1' } else { '0' };
        let forged = Handle {
            id: "a".into(),
            instance: format!("{}{last}", &a.instance[..31]),
        };
        assert!(registry.lookup(&forged).is_none());
        registry.unregister(&a).unwrap();
        assert!(registry.lookup(&a).is_none());
        let again = registry.register(reg("a", None)).unwrap();
        assert!(
            registry.lookup(&a).is_none(),
            "a replaced handle is not live"
        );
        assert!(registry.lookup(&again).is_some());
    }

    #[test]
    fn id_taken_and_dead_owner() {
        let mut registry = Registry::default();
        let a = registry.register(reg("a", None)).unwrap();
        assert_eq!(
            registry.register(reg("a", None)),
            Err(RegistryError::IdTaken { id: "a".into() })
        );
        let stale = Handle {
            id: "a".into(),
            instance: "00".into(),
        };
        assert_eq!(
            registry.register(reg("b", Some(&stale))),
            Err(RegistryError::StaleHandle { id: "a".into() })
        );
        let never = Handle {
            id: "z".into(),
            instance: a.instance.clone(),
        };
        assert_eq!(
            registry.register(reg("b", Some(&never))),
            Err(RegistryError::NotLive { id: "z".into() })
        );
        assert!(registry.register(reg("b", Some(&a))).is_ok());
    }

    #[test]
    fn cascade_removes_the_whole_subtree_only() {
        let mut registry = Registry::default();
        let root = registry.register(reg("root", None)).unwrap();
        let child = registry.register(reg("child", Some(&root))).unwrap();
        let grandchild = registry.register(reg("grandchild", Some(&child))).unwrap();
        let sibling = registry.register(reg("sibling", Some(&root))).unwrap();
        let other = registry.register(reg("other", None)).unwrap();
        let gone = registry.agents["grandchild"].gone.clone();

        let removed = registry.unregister(&child).unwrap();
        assert_eq!(removed, vec!["child".to_owned(), "grandchild".to_owned()]);
        assert!(gone.is_cancelled());
        assert!(registry.lookup(&grandchild).is_none());
        assert!(registry.lookup(&sibling).is_some());
        assert_eq!(
            registry.agents["root"].children,
            BTreeSet::from(["sibling".to_owned()])
        );

        let removed = registry.unregister(&root).unwrap();
        assert_eq!(removed, vec!["root".to_owned(), "sibling".to_owned()]);
        assert_eq!(registry.roots(), vec!["other".to_owned()]);
        assert!(registry.lookup(&other).is_some());
        assert_eq!(
            registry.unregister(&root),
            Err(RegistryError::NotLive { id: "root".into() })
        );
    }

    #[test]
    fn roots_and_list_in_registration_order() {
        let mut registry = Registry::default();
        let z = registry.register(reg("z", None)).unwrap();
        registry.register(reg("y", Some(&z))).unwrap();
        registry.register(reg("a", None)).unwrap();
        assert_eq!(registry.roots(), vec!["z".to_owned(), "a".to_owned()]);
        let list = registry.list();
        let shape: Vec<_> = list
            .iter()
            .map(|a| (a.id.as_str(), a.owner.as_deref(), a.root))
            .collect();
        assert_eq!(
            shape,
            vec![
                ("z", None, true),
                ("y", Some("z"), false),
                ("a", None, true)
            ]
        );
    }
}
