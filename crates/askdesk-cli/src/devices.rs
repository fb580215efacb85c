//! `askdesk devices list|revoke|confirm|scope|passkey NAME`: the phones paired with the remote, read from
//! and changed in the device store the remote itself keeps (`askdesk_remote::DeviceStore`); no
//! broker needed.

use askdesk_i18n::t;
use askdesk_remote::{Class, Device, DeviceStore, Scope};
use clap::{Args, Subcommand};

use crate::exit::{Error, Result};
use crate::history::when;
use crate::output::{out, outln};
use crate::terminal::{clip, columns};

/// List, revoke, confirm or scope the phones paired to answer from afar; allow their passkeys
#[derive(Debug, Args)]
#[command(
    after_help = "Reads $XDG_DATA_HOME/askdesk/remote/devices.json (no broker needed).

Examples:
  askdesk devices list
  askdesk devices revoke 'Pixel 8'
  askdesk devices confirm 'Pixel 8'
  askdesk devices scope 'Pixel 8' --agent coder --project ~/src/app --up-to text-and-choices
  askdesk devices passkey 'Pixel 8'"
)]
pub struct DevicesArgs {
    #[command(subcommand)]
    command: DevicesCommand,
}

#[derive(Debug, Subcommand)]
enum DevicesCommand {
    /// The paired devices: name, when paired, when last seen, scope, whether it is woken (PUSH:
    /// on, off, or dropped by its push service), state
    List {
        /// The store's entries as JSON (exact names and public keys)
        #[arg(long)]
        json: bool,
    },
    /// Unpair a device: its key is refused from then on
    Revoke {
        /// The device's name, as `askdesk devices list` shows it
        name: String,
    },
    /// End a device's suspension (after bad signatures): it may connect and answer again
    Confirm {
        /// The device's name, as `askdesk devices list` shows it
        name: String,
    },
    /// Set what a device may answer (replacing its scope; no option: the default scope)
    Scope {
        /// The device's name, as `askdesk devices list` shows it
        name: String,
        /// Only this agent (its id or label); repeat for more (default: every agent)
        #[arg(long = "agent", value_name = "AGENT")]
        agents: Vec<String>,
        /// Only requests whose working directory is in this folder; repeat for more (default: any)
        #[arg(long = "project", value_name = "DIR")]
        projects: Vec<std::path::PathBuf>,
        /// The highest class it may answer
        #[arg(long, value_name = "CLASS", default_value = "plan-review",
              value_parser = ["text-and-choices", "plan-review", "permission-prompt"])]
        up_to: String,
    },
    /// Allow a device to register a passkey (in place of any it has) for the next 5 minutes: it
    /// needs one to allow permission prompts
    Passkey {
        /// The device's name, as `askdesk devices list` shows it
        name: String,
        /// Remove the device's passkey instead: it can no longer allow permission prompts
        #[arg(long)]
        forget: bool,
    },
}

pub async fn run(args: DevicesArgs) -> Result<()> {
    let dir = askdesk_remote::files::default_dir().map_err(|e| Error::Internal(e.to_string()))?;
    let store = DeviceStore::new(&dir);
    tokio::task::spawn_blocking(move || match args.command {
        DevicesCommand::List { json } => list(&store, json),
        DevicesCommand::Revoke { name } => revoke(&store, &name),
        DevicesCommand::Confirm { name } => {
            let device = store
                .confirm(&name)
                .map_err(|e| Error::Internal(e.to_string()))?;
            done(device, &name, "devices-confirmed")
        }
        DevicesCommand::Scope {
            name,
            agents,
            projects,
            up_to,
        } => scope(&store, &name, agents, projects, &up_to),
        DevicesCommand::Passkey { name, forget } => {
            let (device, what) = if forget {
                (store.forget_passkey(&name), "passkey forgotten for")
            } else {
                let window = askdesk_remote::passkeys::REGISTRATION_WINDOW;
                (
                    store.allow_passkey(&name, window),
                    "a passkey may be registered for 5 minutes by",
                )
            };
            done(
                device.map_err(|e| Error::Internal(e.to_string()))?,
                &name,
                what,
            )
        }
    })
    .await
    .map_err(|e| Error::Internal(format!("the devices command failed: {e}")))?
}

fn list(store: &DeviceStore, json: bool) -> Result<()> {
    let devices = store.list().map_err(|e| Error::Internal(e.to_string()))?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&devices).expect("devices serialize")
        )?;
    } else if devices.is_empty() {
        outln!("{}", t!("devices-none"))?;
    } else {
        out!("{}", table(&devices))?;
    }
    Ok(())
}

fn table(devices: &[Device]) -> String {
    let now = askdesk_remote::devices::now();
    let rows: Vec<[String; 7]> = devices
        .iter()
        .map(|device| {
            [
                clip(&device.name, 40),
                when(device.paired_at.saturating_mul(1000)),
                device.last_seen.map_or_else(
                    || t!("devices-never"),
                    |seen| when(seen.saturating_mul(1000)),
                ),
                clip(&scope_text(&device.scope), 60),
                match (&device.passkey, device.may_register_passkey(now)) {
                    (_, true) => t!("devices-passkey-may"),
                    (Some(_), false) => t!("devices-passkey-yes"),
                    (None, false) => t!("devices-passkey-no"),
                },
                push_text(device),
                if device.is_suspended() {
                    t!("devices-suspended")
                } else {
                    t!("devices-ok")
                },
            ]
        })
        .collect();
    columns(
        [
            t!("devices-col-name"),
            t!("devices-col-paired"),
            t!("devices-col-seen"),
            t!("devices-col-scope"),
            t!("devices-col-passkey"),
            t!("devices-col-push"),
            t!("devices-col-state"),
        ],
        &rows,
    )
}

/// Whether the phone is woken: `on`, `off`, or dropped by its push service (until the phone's
/// page subscribes again).
fn push_text(device: &Device) -> String {
    match (&device.push, &device.push_dropped) {
        (Some(_), _) => t!("devices-push-on"),
        (None, Some(dropped)) => t!(
            "devices-push-dropped",
            when = when(dropped.at.saturating_mul(1000)),
            status = dropped.status
        ),
        (None, None) => t!("devices-push-off"),
    }
}

/// A scope in one line: the highest class, then the agents and projects it is narrowed to.
fn scope_text(scope: &Scope) -> String {
    let mut text = t!("devices-scope-up-to", class = scope.up_to.name());
    if !scope.agents.is_empty() {
        text += &t!("devices-scope-agents", agents = scope.agents.join(", "));
    }
    if !scope.projects.is_empty() {
        text += &t!(
            "devices-scope-projects",
            projects = scope.projects.join(", ")
        );
    }
    text
}

fn scope(
    store: &DeviceStore,
    name: &str,
    agents: Vec<String>,
    projects: Vec<std::path::PathBuf>,
    up_to: &str,
) -> Result<()> {
    let up_to = Class::from_name(up_to)
        .ok_or_else(|| Error::Usage(format!("no class is named {up_to:?}")))?;
    let projects = projects
        .into_iter()
        .map(|dir| {
            std::path::absolute(&dir)
                .map(|dir| dir.display().to_string())
                .map_err(|e| Error::Usage(format!("{}: {e}", dir.display())))
        })
        .collect::<Result<Vec<_>>>()?;
    let scope = Scope {
        agents,
        projects,
        up_to,
    };
    let device = store
        .set_scope(name, scope)
        .map_err(|e| Error::Internal(e.to_string()))?;
    done(device, name, "devices-scoped")
}

/// Message `what` (`devices-revoked`) naming the device changed, or the usage error for a name no
/// device has.
fn done(device: Option<Device>, name: &str, what: &str) -> Result<()> {
    match device {
        Some(device) => {
            outln!("{}", t!(what, name = clip(&device.name, 80)))?;
            Ok(())
        }
        None => Err(Error::Usage(format!(
            "no paired device is named {name:?}; `askdesk devices list` shows their names"
        ))),
    }
}

fn revoke(store: &DeviceStore, name: &str) -> Result<()> {
    let device = store
        .revoke(name)
        .map_err(|e| Error::Internal(e.to_string()))?;
    done(device, name, "devices-revoked")
}
