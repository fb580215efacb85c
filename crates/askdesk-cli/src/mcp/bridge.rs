//! The MCP session's link to the broker: one connection and one root agent, made again when the
//! broker restarts, unregistered when the session ends.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askdesk_broker::client::{answered_within, Client, ClientError};
use askdesk_core::{meta, AgentRegistration, Handle, RegistryError};
use rmcp::model::Implementation;
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::launch::Launcher;
use crate::exit::Result;

/// The name this process gives the broker in `initialize`.
const CLIENT_NAME: &str = "askdesk mcp";

/// The session's link to the broker: its connection and its root agent.
pub struct Link {
    pub client: Client,
    pub agent: Handle,
}

/// Whether a missing broker may be started (the desktop app).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// Start the desktop app when no broker runs and a display is available.
    IfNeeded,
    /// Only connect to a running broker.
    Never,
}

pub struct Bridge {
    socket: PathBuf,
    launch: Launch,
    link: Mutex<Option<Arc<Link>>>,
    launcher: Launcher,
}

impl Bridge {
    pub fn new(socket: PathBuf, launch: Launch) -> Self {
        Bridge {
            socket,
            launch,
            link: Mutex::new(None),
            launcher: Launcher::default(),
        }
    }

    /// The live link, connecting and registering the agent if there is none. With
    /// `Launch::IfNeeded` (and the bridge allowing it), a missing broker is started.
    pub async fn link(
        &self,
        client_info: Option<&Implementation>,
        launch: Launch,
    ) -> Result<Arc<Link>> {
        // Held across the connect so concurrent first calls register one agent, not several.
        let mut slot = self.link.lock().await;
        if let Some(link) = slot.as_ref() {
            // A broker that went away (restarted, stopped) closed the connection: connect again.
            let closed = tokio::time::timeout(Duration::ZERO, link.client.closed())
                .await
                .is_ok();
            if !closed {
                return Ok(link.clone());
            }
            tracing::info!("the broker closed the connection; connecting again");
            *slot = None;
        }
        let may_launch = launch == Launch::IfNeeded && self.launch == Launch::IfNeeded;
        let client =
            match Client::connect_within(&self.socket, CLIENT_NAME, crate::connect::HANDSHAKE_WAIT)
                .await
            {
                Ok(client) => client,
                Err(ClientError::NotRunning { .. }) if may_launch => {
                    self.launcher.launch(&self.socket, CLIENT_NAME).await?
                }
                Err(error) => return Err(error.into()),
            };
        // A broker that answered the handshake and then stopped answering is given up on as well.
        let agent = answered_within(
            &self.socket,
            crate::connect::HANDSHAKE_WAIT,
            register(&client, client_info),
        )
        .await??;
        tracing::info!(agent = %agent.id, "registered the MCP session's agent");
        let link = Arc::new(Link { client, agent });
        *slot = Some(link.clone());
        Ok(link)
    }

    /// Drops a link whose connection broke, unless a newer one replaced it already.
    pub fn forget(&self, broken: &Arc<Link>) {
        if let Ok(mut slot) = self.link.try_lock() {
            if slot.as_ref().is_some_and(|link| Arc::ptr_eq(link, broken)) {
                *slot = None;
            }
        }
    }

    /// Unregisters the session's agent; closing the connection would too, this makes it prompt.
    /// A link still being made (a broker that does not answer, a call not yet given up) is not
    /// waited for: there is no agent to unregister yet, and the process ends.
    pub async fn close(&self) {
        let Ok(mut slot) = self.link.try_lock() else {
            return;
        };
        if let Some(link) = slot.take() {
            link.client.unregister_agent_promptly(&link.agent).await;
        }
    }
}

/// Registers the session's root agent, labelled after the MCP client.
async fn register(client: &Client, client_info: Option<&Implementation>) -> Result<Handle> {
    let base = format!("mcp-{}", std::process::id());
    let mut registration = agent_registration(&base, client_info);
    for attempt in 2..=5 {
        match client.register_agent(&registration).await {
            Err(ClientError::Rpc(error))
                if error.data_code()
                    == Some(RegistryError::IdTaken { id: String::new() }.code()) =>
            {
                registration.id = format!("{base}-{attempt}");
            }
            result => return Ok(result?),
        }
    }
    Ok(client.register_agent(&registration).await?)
}

/// This MCP session's name in the agent's `meta.session`, the same for every registration the
/// session makes (it registers again after a broker restart). The agent id `mcp-<pid>` is not
/// enough to tell sessions apart: two sessions in different PID namespaces (containers) can both
/// be pid 1, and the desktop groups a session's plans into one thread by this name.
fn session_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        format!("mcp-{}-{started:x}", std::process::id())
    })
}

/// The agent an MCP session registers: label from the client's name and version, meta with the
/// session's name, the current directory and the client's pid (this process's parent: the agent
/// runtime).
pub fn agent_registration(id: &str, client_info: Option<&Implementation>) -> AgentRegistration {
    let label = match client_info {
        Some(info) if !info.version.is_empty() => format!("{} {}", info.name, info.version),
        Some(info) => info.name.clone(),
        None => "MCP client".to_owned(),
    };
    let mut meta = Map::new();
    meta.insert(
        meta::SESSION.into(),
        Value::String(session_name().to_owned()),
    );
    if let Some(cwd) = crate::connect::current_dir() {
        meta.insert(meta::CWD.into(), Value::String(cwd));
    }
    #[cfg(unix)]
    meta.insert(
        meta::PID.into(),
        Value::from(std::os::unix::process::parent_id()),
    );
    if let Some(info) = client_info {
        meta.insert(meta::CLIENT.into(), Value::String(info.name.clone()));
    }
    meta.insert(meta::VIA.into(), Value::String("mcp".into()));
    AgentRegistration {
        id: id.to_owned(),
        owner: None,
        label: Some(label),
        meta: Some(meta),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_agent_is_labelled_after_the_client() {
        let info = Implementation::new("claude-code", "2.1.0");
        let reg = agent_registration("mcp-1", Some(&info));
        assert_eq!(reg.label.as_deref(), Some("claude-code 2.1.0"));
        assert_eq!(reg.owner, None);
        let meta = reg.meta.unwrap();
        assert_eq!(meta["client"], "claude-code");
        assert_eq!(
            meta["cwd"],
            std::env::current_dir().unwrap().display().to_string()
        );
        assert!(meta["pid"].is_u64());
        // One name for the whole session, unique to this process.
        let session = meta["session"].as_str().unwrap();
        assert!(session.starts_with(&format!("mcp-{}-", std::process::id())));
        assert_eq!(
            agent_registration("mcp-1-2", None).meta.unwrap()["session"],
            session
        );
        assert_eq!(
            agent_registration("mcp-1", None).label.as_deref(),
            Some("MCP client")
        );
    }
}
