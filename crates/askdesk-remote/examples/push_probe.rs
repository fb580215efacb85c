//! The desk's side of tests/push/run.sh: a remote whose paired devices subscribed at a fake push
//! service (tests/push/fake_push.py), offered a text question and a permission prompt, each then
//! settled, printing as JSON how each push went and which subscriptions the desk still keeps.
//! Usage: push_probe CONFIG.json (the fake service's `base`, `p256dh`, `auth` and `root`).

use std::time::Duration;

use askdesk_core::{AgentInfo, Question, QuestionOption, RequestId};
use askdesk_remote::push::{PushReport, PushSettings, Subscription, SubscriptionKeys};
use askdesk_remote::{bind, keys, Class, PendingRequest, RemoteConfig, Scope};
use serde_json::{json, Value};

/// A ceiling for the pushes to be reported; never a measure of speed.
const CEILING: Duration = Duration::from_secs(60);

fn question(text: &str, labels: &[&str]) -> Question {
    Question {
        id: "q".into(),
        question: text.into(),
        options: labels
            .iter()
            .map(|label| QuestionOption {
                label: (*label).into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

async fn reports(
    receiver: &mut tokio::sync::broadcast::Receiver<PushReport>,
    n: usize,
) -> Vec<Value> {
    let mut seen = Vec::new();
    while seen.len() < n {
        let report = tokio::time::timeout(CEILING, receiver.recv())
            .await
            .expect("reported within the ceiling")
            .expect("the remote runs");
        seen.push(json!({ "device": report.device, "delivery": format!("{:?}", report.delivery) }));
    }
    seen
}

/// The host of the fake service's base URL (`https://127.0.0.1:PORT`): a push service of one's own.
fn host_of(base: &str) -> String {
    let authority = base.trim_start_matches("https://");
    let authority = authority.split('/').next().unwrap_or_default();
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host)
        .to_owned()
}

#[tokio::main]
async fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: push_probe CONFIG.json");
    let config: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let text = |key: &str| config[key].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let mut remote_config =
        RemoteConfig::new("127.0.0.1:0".parse().unwrap(), dir.path().join("remote"));
    remote_config.push = PushSettings {
        show_questions: true,
        quiet_hours: None,
        only_when_idle: None,
        contact: "mailto:desk@example.invalid".into(),
        extra_roots: vec![std::fs::read(text("root")).unwrap()],
        extra_services: vec![host_of(&text("base"))],
        ..PushSettings::default()
    };
    let (remote, _server) = bind(remote_config).await.unwrap();
    let mut pushed = remote.push_reports();
    for (name, status) in [
        ("ok", 201),
        ("gone404", 404),
        ("gone410", 410),
        ("busy", 429),
    ] {
        let signer = p256::ecdsa::SigningKey::from_slice(&keys::random::<32>()).unwrap();
        let key = keys::DeviceKey::from_raw(signer.verifying_key().to_sec1_point(false).as_bytes())
            .unwrap();
        let store = remote.devices();
        store.add(name, &key).unwrap();
        let subscription = Subscription {
            endpoint: format!("{}/{status}/{name}", text("base")),
            keys: SubscriptionKeys {
                p256dh: text("p256dh"),
                auth: text("auth"),
            },
        };
        store.set_push(&key, Some(subscription)).unwrap();
    }
    let prompts = Scope {
        up_to: Class::PermissionPrompt,
        ..Scope::default()
    };
    remote.set_scope("ok", prompts).unwrap();

    let mut log = Vec::new();
    let text_request = remote
        .offer(PendingRequest {
            id: RequestId(1),
            deadline: None,
            agent: None,
            questions: vec![question("Deploy to staging?", &["Yes", "No"])],
        })
        .unwrap();
    log.extend(reports(&mut pushed, 4).await);
    let prompt = AgentInfo {
        id: "coder".into(),
        label: None,
        meta: json!({ "tool": "Bash", "command": "cat secret-token", "cwd": "/w" })
            .as_object()
            .cloned(),
    };
    let prompt = remote
        .offer(PendingRequest {
            id: RequestId(2),
            deadline: None,
            agent: Some(prompt),
            questions: vec![question(
                "Allow Bash: cat secret-token?",
                &["Allow once", "Deny"],
            )],
        })
        .unwrap();
    log.extend(reports(&mut pushed, 1).await);
    drop(text_request);
    log.extend(reports(&mut pushed, 2).await);
    drop(prompt);
    log.extend(reports(&mut pushed, 1).await);
    let devices = remote.devices().list().unwrap();
    let kept: Value = devices
        .iter()
        .map(|device| (device.name.clone(), Value::Bool(device.push.is_some())))
        .collect::<serde_json::Map<_, _>>()
        .into();
    let dropped: Value = devices
        .iter()
        .map(|device| {
            let status = device.push_dropped.as_ref().map(|dropped| dropped.status);
            (device.name.clone(), json!(status))
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    println!(
        "{}",
        json!({ "reports": log, "subscribed": kept, "dropped": dropped })
    );
}
