//! Agent identity (protocol section 3): the exact live instance may ask, only roots may ask, ids are
//! unique while live, and unregistration cascades to owned agents, their asks and their answerers.

mod common;

use askdesk_core::{AgentInfo, AgentRegistration, Config, Handle, RegistryError, Scope, Service};
use common::*;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

fn agent(id: &str, owner: Option<&Handle>) -> AgentRegistration {
    AgentRegistration {
        id: id.into(),
        owner: owner.cloned(),
        ..Default::default()
    }
}

/// A service with one answerer that claims everything.
fn answered_service() -> (Service, Log) {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "claims", Script::Claim, Scope::All, false, &log);
    (service, log)
}

async fn ask_as(
    service: &Service,
    handle: &Handle,
) -> Result<askdesk_core::Answer, askdesk_core::AskError> {
    service
        .ask(
            ask_request(vec![question("q")], Some(handle)),
            &CancellationToken::new(),
        )
        .await
}

#[tokio::test]
async fn a_made_up_token_for_a_live_id_is_not_live() {
    let (service, log) = answered_service();
    let real = service.register_agent(agent("coder", None)).unwrap();
    assert_eq!(real.instance.len(), 32, "128 bits, hex");
    let mut forged = vec![
        Handle {
            id: "coder".into(),
            instance: String::new(),
        },
        Handle {
            id: "coder".into(),
            instance: "0".repeat(32),
        },
        // One character off, and the real token with something appended.
        Handle {
            id: "coder".into(),
            instance: format!(
                "{}{}",
                &real.instance[..31],
                if real.instance.ends_with('0') {
                    '1'
                } else {
                    '0'
                }
            ),
        },
        Handle {
            id: "coder".into(),
            instance: format!("{}0", real.instance),
        },
        // The real token under another id.
        Handle {
            id: "CODER".into(),
            instance: real.instance.clone(),
        },
    ];
    forged.push(Handle {
        id: "coder".into(),
        instance: real.instance.to_uppercase(),
    });
    for handle in &forged {
        if handle.instance == real.instance && handle.id == real.id {
            continue; // an all-digit token is its own upper case
        }
        assert_question_error(ask_as(&service, handle).await, "CALLER_NOT_LIVE", NOT_LIVE);
        assert!(!service.is_live(handle), "{handle:?}");
        // "coder" is live under another token; "CODER" was never registered.
        let refused = if handle.id == real.id {
            RegistryError::StaleHandle {
                id: handle.id.clone(),
            }
        } else {
            RegistryError::NotLive {
                id: handle.id.clone(),
            }
        };
        assert_eq!(service.unregister_agent(handle), Err(refused.clone()));
        let scoped = askdesk_core::AnswererRegistration {
            scope: Scope::Agent(handle.clone()),
            prepend: false,
            label: None,
            group: None,
        };
        let (answerer, _) = scripted("scoped", Script::Claim, &log);
        assert_eq!(
            service.register_answerer(scoped, answerer).err(),
            Some(refused.clone())
        );
        assert_eq!(
            service.register_agent(agent("kid", Some(handle))),
            Err(refused),
            "a forged owner is refused"
        );
    }
    assert!(log.offered().is_empty(), "refused before dispatch");
    // The real handle still works after all that.
    assert_eq!(ask_as(&service, &real).await, Ok(skipped(&[question("q")])));
}

#[tokio::test]
async fn an_unregistered_handle_is_not_live() {
    let (service, _) = answered_service();
    let handle = service.register_agent(agent("coder", None)).unwrap();
    assert!(ask_as(&service, &handle).await.is_ok());
    assert_eq!(
        service.unregister_agent(&handle),
        Ok(vec!["coder".to_owned()])
    );
    assert_question_error(ask_as(&service, &handle).await, "CALLER_NOT_LIVE", NOT_LIVE);
    assert_eq!(
        service.unregister_agent(&handle),
        Err(RegistryError::NotLive { id: "coder".into() })
    );
    let never = Handle {
        id: "never-registered".into(),
        instance: handle.instance.clone(),
    };
    assert_question_error(ask_as(&service, &never).await, "CALLER_NOT_LIVE", NOT_LIVE);
}

#[tokio::test]
async fn a_replaced_handle_is_not_live() {
    let (service, _) = answered_service();
    let old = service.register_agent(agent("coder", None)).unwrap();
    service.unregister_agent(&old).unwrap();
    let new = service.register_agent(agent("coder", None)).unwrap();
    assert_ne!(
        old.instance, new.instance,
        "a new registration gets a new token"
    );
    assert_question_error(ask_as(&service, &old).await, "CALLER_NOT_LIVE", NOT_LIVE);
    assert!(ask_as(&service, &new).await.is_ok());
    // The old handle cannot unregister the new incarnation, and the error says the id is live.
    let refused = service.unregister_agent(&old).unwrap_err();
    assert_eq!(refused, RegistryError::StaleHandle { id: "coder".into() });
    assert_eq!(refused.code(), "AGENT_NOT_LIVE");
    assert_eq!(
        refused.to_string(),
        "agent \"coder\" is live, but not under this instance token (a handle from an earlier \
         registration of the id, or one never issued); use the handle its registration returned"
    );
    assert_eq!(
        RegistryError::NotLive { id: "coder".into() }.to_string(),
        "agent \"coder\" is not live (never registered, or unregistered)"
    );
    assert!(service.is_live(&new));
}

#[tokio::test]
async fn a_resumed_root_with_a_long_lineage_may_ask() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut holds) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    let lineage: Vec<String> = (0..40).map(|i| format!("ancestor-{i}")).collect();
    let meta: Map<String, Value> =
        json!({ "lineage": lineage, "cwd": "/src/app", "resumed": true })
            .as_object()
            .unwrap()
            .clone();
    let resumed = service
        .register_agent(AgentRegistration {
            id: "resumed".into(),
            owner: None,
            label: Some("coder (resumed)".into()),
            meta: Some(meta.clone()),
        })
        .unwrap();
    assert_eq!(service.roots(), ["resumed"]);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], Some(&resumed)),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    // The answerer learns who asks, and never the instance token.
    let expected = AgentInfo {
        id: "resumed".into(),
        label: Some("coder (resumed)".into()),
        meta: Some(meta),
    };
    assert_eq!(held.request.agent.as_ref(), Some(&expected));
    assert!(!serde_json::to_string(&held.request.agent)
        .unwrap()
        .contains(&resumed.instance));
    held.responder
        .decide(askdesk_core::Decision::Claim(skipped(
            &held.request.questions,
        )))
        .unwrap();
    assert_eq!(ask.await.unwrap(), Ok(skipped(&[question("q")])));
}

#[tokio::test]
async fn an_owned_child_may_not_ask_however_shallow() {
    let (service, log) = answered_service();
    let root = service.register_agent(agent("root", None)).unwrap();
    let child = service.register_agent(agent("child", Some(&root))).unwrap();
    let grandchild = service
        .register_agent(agent("grandchild", Some(&child)))
        .unwrap();
    assert_eq!(service.roots(), ["root"]);
    let listed: Vec<_> = service
        .agents()
        .into_iter()
        .map(|a| (a.id, a.owner, a.root))
        .collect();
    assert_eq!(
        listed,
        [
            ("root".to_owned(), None, true),
            ("child".to_owned(), Some("root".to_owned()), false),
            ("grandchild".to_owned(), Some("child".to_owned()), false)
        ]
    );
    assert_question_error(
        ask_as(&service, &child).await,
        "DELEGATED_CALLER",
        DELEGATED,
    );
    assert_question_error(
        ask_as(&service, &grandchild).await,
        "DELEGATED_CALLER",
        DELEGATED,
    );
    assert!(
        log.offered().is_empty(),
        "a refused child reaches no answerer"
    );
    assert!(ask_as(&service, &root).await.is_ok());
}

#[tokio::test]
async fn a_live_id_is_taken() {
    let service = Service::new(Config::default());
    let first = service.register_agent(agent("coder", None)).unwrap();
    let taken = service.register_agent(agent("coder", None)).unwrap_err();
    assert_eq!(taken, RegistryError::IdTaken { id: "coder".into() });
    assert_eq!(taken.code(), "AGENT_ID_TAKEN");
    // Also as a child of another agent, and the first registration is untouched.
    let other = service.register_agent(agent("other", None)).unwrap();
    assert_eq!(
        service.register_agent(agent("coder", Some(&other))),
        Err(RegistryError::IdTaken { id: "coder".into() })
    );
    assert!(service.is_live(&first));
    // Once unregistered, the id is free again.
    service.unregister_agent(&first).unwrap();
    assert!(service.register_agent(agent("coder", None)).is_ok());
    assert_eq!(
        RegistryError::NotLive { id: "x".into() }.code(),
        "AGENT_NOT_LIVE"
    );
}

#[tokio::test(start_paused = true)]
async fn cascade_unregistration_aborts_asks_and_removes_scoped_answerers() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let root = service.register_agent(agent("root", None)).unwrap();
    let child = service.register_agent(agent("child", Some(&root))).unwrap();
    let grandchild = service
        .register_agent(agent("grandchild", Some(&child)))
        .unwrap();
    let other = service.register_agent(agent("other", None)).unwrap();
    let other_child = service
        .register_agent(agent("other-child", Some(&other)))
        .unwrap();

    // The root's and the other root's asks are held by answerers scoped to them.
    let (_, mut root_holds) = register(
        &service,
        "for-root",
        Script::Hold,
        Scope::Agent(root.clone()),
        false,
        &log,
    );
    register(
        &service,
        "for-child",
        Script::Claim,
        Scope::Agent(child.clone()),
        false,
        &log,
    );
    register(
        &service,
        "for-grandchild",
        Script::Claim,
        Scope::Agent(grandchild.clone()),
        true,
        &log,
    );
    let (_, mut other_holds) = register(
        &service,
        "for-other",
        Script::Hold,
        Scope::Agent(other.clone()),
        false,
        &log,
    );
    register(
        &service,
        "for-other-child",
        Script::Claim,
        Scope::Agent(other_child.clone()),
        false,
        &log,
    );
    // If the root's ask moved on instead of aborting, this would claim it.
    register(&service, "fallback", Script::Claim, Scope::All, false, &log);

    let root_ask = tokio::spawn(service.ask(
        ask_request(vec![question("r")], Some(&root)),
        &CancellationToken::new(),
    ));
    let other_ask = tokio::spawn(service.ask(
        ask_request(vec![question("o")], Some(&other)),
        &CancellationToken::new(),
    ));
    let root_held = root_holds.next().await;
    let other_held = other_holds.next().await;
    assert_eq!(service.pending().len(), 2);

    // Unregistering the child first removes only its subtree: the root's ask stays pending.
    assert_eq!(
        service.unregister_agent(&child),
        Ok(vec!["child".to_owned(), "grandchild".to_owned()])
    );
    assert!(!service.is_live(&grandchild));
    assert!(!root_held.responder.is_withdrawn());
    let labels: Vec<String> = service.answerers().into_iter().map(|a| a.label).collect();
    assert_eq!(
        labels,
        ["for-root", "for-other", "for-other-child", "fallback"]
    );

    // Now the root with a fresh child of its own.
    let new_child = service.register_agent(agent("child", Some(&root))).unwrap();
    register(
        &service,
        "for-new-child",
        Script::Claim,
        Scope::Agent(new_child.clone()),
        false,
        &log,
    );
    let start = tokio::time::Instant::now();
    assert_eq!(
        service.unregister_agent(&root),
        Ok(vec!["root".to_owned(), "child".to_owned()])
    );
    assert_question_error(root_ask.await.unwrap(), "ASK_ABORTED", ABORTED);
    assert_eq!(tokio::time::Instant::now(), start, "aborted at once");
    assert!(root_held.responder.is_withdrawn());
    assert_eq!(
        log.withdrawn(),
        [("for-root".to_owned(), root_held.request.id)]
    );
    assert!(!service.is_live(&new_child));
    assert_eq!(service.roots(), ["other"]);
    let labels: Vec<String> = service.answerers().into_iter().map(|a| a.label).collect();
    assert_eq!(labels, ["for-other", "for-other-child", "fallback"]);

    // The other root is untouched: its ask is still pending and still answerable.
    let pending = service.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].request, other_held.request.id);
    assert_eq!(pending[0].holder.as_deref(), Some("for-other"));
    other_held
        .responder
        .decide(askdesk_core::Decision::Claim(skipped(
            &other_held.request.questions,
        )))
        .unwrap();
    assert_eq!(other_ask.await.unwrap(), Ok(skipped(&[question("o")])));
    assert!(service.pending().is_empty());
    assert!(
        !log.offered().contains(&"fallback".to_owned()),
        "nothing fell through: {:?}",
        log.offered()
    );
}
