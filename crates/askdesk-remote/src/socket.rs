//! A device's WebSocket: the device proves its key by signing a fresh challenge, then hears every
//! held request within its scope (and every withdrawal) and sends signed answers. The socket
//! closes at once when its device is revoked or suspended, or the remote stops. Messages are JSON
//! text frames with a `type`.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use crate::devices::Device;
use crate::digest;
use crate::keys::{self, DeviceKey};
use crate::pending::{Shown, Update};
use crate::remote::{AllowIntent, Refusal, Remote, SignedAnswer};

/// The largest message a device may send: an answer's free text, and its pictures as base64 up
/// to the desk's limit on a request's images (`request-bytes`, 16 MiB, 4/3 of that as base64), so
/// a picture over a limit is refused naming the limit rather than dropping the socket.
const MAX_MESSAGE: usize = 26 << 20;
/// A device that does not say hello in this time is dropped (a timer only while it is connected).
const HELLO_TIMEOUT: Duration = Duration::from_secs(30);
/// The close code for a policy refusal (RFC 6455).
const POLICY: u16 = 1008;

pub(crate) async fn upgrade(State(remote): State<Remote>, upgrade: WebSocketUpgrade) -> Response {
    upgrade
        .max_message_size(MAX_MESSAGE)
        .on_upgrade(move |socket| session(remote, socket))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Hello {
    public_key: String,
    signature: String,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum FromDevice {
    Answer(SignedAnswer),
    /// Begin registering a passkey (only while the desk allows it).
    PasskeyRegister,
    /// The new passkey's credential (`navigator.credentials.create`'s, binary fields base64url).
    PasskeyCredential {
        credential: Value,
    },
    /// A passkey challenge to allow a permission prompt with this answer.
    PasskeyChallenge(AllowIntent),
}

async fn session(remote: Remote, mut socket: WebSocket) {
    let shutdown = remote.shutdown_token();
    let greeted = tokio::select! {
        () = shutdown.cancelled() => None,
        greeted = greet(&remote, &mut socket) => greeted,
    };
    let Some((key, mut device)) = greeted else {
        return;
    };
    tracing::debug!(device = ?device.name, "a device connected");
    let mut revocations = remote.revocations();
    // Subscribed before the snapshot is taken, so nothing offered in between is missed.
    let mut updates = remote.updates();
    let mut passkey = remote.passkey_state(&device);
    if send(
        &mut socket,
        json!({ "type": "welcome", "device": device.name, "passkey": passkey }),
    )
    .await
    .is_err()
        || send_snapshot(&remote, &device, &mut socket).await.is_err()
    {
        return;
    }
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                let _ = close(&mut socket, 1001, "the desk stopped").await;
                return;
            }
            changed = revocations.changed() => {
                let now = match changed {
                    Ok(()) => current(&remote, &key).await,
                    Err(_) => None,
                };
                let Some(now) = now else {
                    let _ = send(&mut socket, json!({ "type": "revoked" })).await;
                    let _ = close(&mut socket, POLICY, "revoked").await;
                    return;
                };
                if now.is_suspended() {
                    let _ = send(&mut socket, json!({ "type": "suspended" })).await;
                    let _ = close(&mut socket, POLICY, "suspended").await;
                    return;
                }
                let rescoped = now.scope != device.scope;
                device = now;
                if rescoped && send_snapshot(&remote, &device, &mut socket).await.is_err() {
                    return;
                }
                let told = remote.passkey_state(&device);
                if told != passkey {
                    passkey = told;
                    let message = json!({ "type": "passkey", "passkey": passkey });
                    if send(&mut socket, message).await.is_err() {
                        return;
                    }
                }
            }
            update = updates.recv() => {
                let sent = match update {
                    Ok(Update::Offered(shown)) if admits(&device, &shown) => {
                        send(&mut socket, json!({ "type": "request", "request": shown.wire })).await
                    }
                    Ok(Update::Offered(_)) => Ok(()),
                    Ok(Update::Deadline(shown)) if admits(&device, &shown) => {
                        let message = json!({
                            "type": "deadline",
                            "id": shown.wire["id"],
                            "deadline": shown.wire["deadline"],
                        });
                        send(&mut socket, message).await
                    }
                    Ok(Update::Deadline(_)) => Ok(()),
                    Ok(Update::Withdrawn(id, why)) => {
                        let mut message = json!({ "type": "withdrawn", "id": id.to_string() });
                        why.describe(&mut message);
                        send(&mut socket, message).await
                    }
                    Ok(Update::Settled(settled)) => {
                        let mut message = json!({
                            "type": "settled",
                            "id": settled.request.to_string(),
                            "device": settled.device,
                            "used": settled.used,
                        });
                        if let Some(instead) = &settled.instead {
                            let mut why = json!({});
                            instead.describe(&mut why);
                            message["instead"] = why;
                        }
                        send(&mut socket, message).await
                    }
                    Err(RecvError::Lagged(_)) => send_snapshot(&remote, &device, &mut socket).await,
                    Err(RecvError::Closed) => return,
                };
                if sent.is_err() {
                    return;
                }
            }
            message = socket.recv() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                    Some(Ok(_)) => continue,
                };
                let reply = answer(&remote, &key, text.as_str()).await;
                let ended = if reply["reason"] == Refusal::NotPaired.code() {
                    Some("revoked")
                } else if reply["reason"] == Refusal::Suspended.code() {
                    Some("suspended")
                } else {
                    None
                };
                if send(&mut socket, reply).await.is_err() {
                    return;
                }
                if let Some(ended) = ended {
                    let _ = send(&mut socket, json!({ "type": ended })).await;
                    let _ = close(&mut socket, POLICY, ended).await;
                    return;
                }
            }
        }
    }
}

/// The challenge and the device's signed hello: the paired device, or `None` (refused, closed).
async fn greet(remote: &Remote, socket: &mut WebSocket) -> Option<(DeviceKey, Device)> {
    let challenge = keys::encode(&keys::random::<32>());
    send(
        socket,
        json!({ "type": "challenge", "challenge": challenge }),
    )
    .await
    .ok()?;
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, socket.recv()).await {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<Value>(text.as_str()).ok(),
        _ => None,
    };
    let hello = hello
        .filter(|value| value["type"] == "hello")
        .and_then(|value| serde_json::from_value::<Hello>(value).ok());
    let origin = remote.served().origin();
    let key = hello.and_then(|hello| {
        let key = DeviceKey::from_text(&hello.public_key)?;
        let message = digest::hello_message(&challenge, &origin);
        key.verifies(&message, &hello.signature).then_some(key)
    });
    let device = match key {
        Some(key) => {
            let store = remote.devices().clone();
            let seen = key.clone();
            tokio::task::spawn_blocking(move || {
                store
                    .touch(&seen)
                    .ok()?
                    .then(|| store.find(&seen).ok().flatten())?
            })
            .await
            .ok()
            .flatten()
            .map(|device| (key, device))
        }
        None => None,
    };
    let refusal = match &device {
        None => Refusal::NotPaired,
        Some((_, device)) if device.is_suspended() => Refusal::Suspended,
        Some(_) => return device,
    };
    let _ = send(
        socket,
        json!({ "type": "refused", "reason": refusal.code() }),
    )
    .await;
    let _ = close(socket, POLICY, refusal.code()).await;
    None
}

/// The device with this key as the store now has it; `None` if it is no longer paired (or the
/// store cannot be read).
async fn current(remote: &Remote, key: &DeviceKey) -> Option<Device> {
    let store = remote.devices().clone();
    let key = key.clone();
    tokio::task::spawn_blocking(move || store.find(&key).ok().flatten())
        .await
        .ok()
        .flatten()
}

/// Whether the device is shown a held request: within its scope.
fn admits(device: &Device, shown: &Shown) -> bool {
    device.scope.admits(shown.agent.as_ref(), shown.class)
}

/// A device's message checked and answered: `accepted` or `refused` with the refusal's code; for
/// a passkey's registration or challenge, the options for the browser or a refusal.
async fn answer(remote: &Remote, key: &DeviceKey, text: &str) -> Value {
    let signed = match serde_json::from_str::<FromDevice>(text) {
        Ok(FromDevice::Answer(signed)) => signed,
        Ok(other) => return passkey(remote, key, other).await,
        Err(error) => {
            let refusal = Refusal::Malformed(error.to_string());
            return json!({ "type": "refused", "reason": refusal.code(), "message": refusal.to_string() });
        }
    };
    let id = signed.id.clone();
    let remote = remote.clone();
    let key = key.clone();
    let checked = tokio::task::spawn_blocking(move || remote.verify(&key, signed))
        .await
        .unwrap_or_else(|error| Err(Refusal::Internal(error.to_string())));
    match checked {
        Ok(_) => json!({ "type": "accepted", "id": id }),
        Err(refusal) => {
            // The id is the device's text: logged escaped, and the reason by its code only.
            tracing::info!(request = ?id, reason = refusal.code(), "a device's answer was refused");
            json!({ "type": "refused", "id": id, "reason": refusal.code(), "message": refusal.to_string() })
        }
    }
}

/// A passkey's registration or challenge, off the async threads (they read the device store):
/// the options for the browser, or `passkey-refused` with the refusal's code (and the request's
/// id, for a challenge).
async fn passkey(remote: &Remote, key: &DeviceKey, message: FromDevice) -> Value {
    let remote = remote.clone();
    let key = key.clone();
    let id = match &message {
        FromDevice::PasskeyChallenge(intent) => Some(intent.id.clone()),
        _ => None,
    };
    let done = tokio::task::spawn_blocking(move || match message {
        FromDevice::PasskeyRegister => remote
            .start_passkey_registration(&key)
            .map(|options| json!({ "type": "passkey-creation", "options": options })),
        FromDevice::PasskeyCredential { credential } => remote
            .finish_passkey_registration(&key, credential)
            .map(|()| json!({ "type": "passkey-registered" })),
        FromDevice::PasskeyChallenge(intent) => {
            let id = intent.id.clone();
            remote
                .passkey_challenge(&key, intent)
                .map(|options| json!({ "type": "passkey-challenge", "id": id, "options": options }))
        }
        FromDevice::Answer(_) => Err(Refusal::Internal("an answer is not a passkey's".into())),
    })
    .await
    .unwrap_or_else(|error| Err(Refusal::Internal(error.to_string())));
    done.unwrap_or_else(|refusal| {
        tracing::info!(reason = refusal.code(), "a device's passkey message was refused");
        json!({ "type": "passkey-refused", "id": id, "reason": refusal.code(), "message": refusal.to_string() })
    })
}

async fn send_snapshot(
    remote: &Remote,
    device: &Device,
    socket: &mut WebSocket,
) -> Result<(), axum::Error> {
    let requests: Vec<Value> = remote
        .snapshot()
        .iter()
        .filter(|shown| admits(device, shown))
        .map(|shown| shown.wire.clone())
        .collect();
    send(socket, json!({ "type": "requests", "requests": requests })).await
}

async fn send(socket: &mut WebSocket, value: Value) -> Result<(), axum::Error> {
    socket.send(Message::Text(value.to_string().into())).await
}

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) -> Result<(), axum::Error> {
    socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await
}
