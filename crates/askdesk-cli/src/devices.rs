//! `askdesk devices list|revoke NAME`: the phones paired with the remote, read from and changed in
//! the device store the remote itself keeps (`askdesk_remote::DeviceStore`); no broker needed.

use askdesk_remote::{Device, DeviceStore};
use clap::{Args, Subcommand};

use crate::exit::{Error, Result};
use crate::history::when;
use crate::output::{out, outln};
use crate::terminal::{clip, columns};

/// List or revoke the phones paired to answer from afar
#[derive(Debug, Args)]
#[command(
    after_help = "Reads $XDG_DATA_HOME/askdesk/remote/devices.json (no broker needed).

Examples:
  askdesk devices list
  askdesk devices revoke 'Pixel 8'"
)]
pub struct DevicesArgs {
    #[command(subcommand)]
    command: DevicesCommand,
}

#[derive(Debug, Subcommand)]
enum DevicesCommand {
    /// The paired devices: name, when paired, when last seen
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
}

pub async fn run(args: DevicesArgs) -> Result<()> {
    let dir = askdesk_remote::files::default_dir().map_err(|e| Error::Internal(e.to_string()))?;
    let store = DeviceStore::new(&dir);
    tokio::task::spawn_blocking(move || match args.command {
        DevicesCommand::List { json } => list(&store, json),
        DevicesCommand::Revoke { name } => revoke(&store, &name),
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
        outln!("no device is paired")?;
    } else {
        out!("{}", table(&devices))?;
    }
    Ok(())
}

fn table(devices: &[Device]) -> String {
    let rows: Vec<[String; 3]> = devices
        .iter()
        .map(|device| {
            [
                clip(&device.name, 40),
                when(device.paired_at.saturating_mul(1000)),
                device.last_seen.map_or_else(
                    || "never".to_string(),
                    |seen| when(seen.saturating_mul(1000)),
                ),
            ]
        })
        .collect();
    columns(["NAME", "PAIRED (UTC)", "LAST SEEN (UTC)"], &rows)
}

fn revoke(store: &DeviceStore, name: &str) -> Result<()> {
    match store
        .revoke(name)
        .map_err(|e| Error::Internal(e.to_string()))?
    {
        Some(device) => {
            outln!("revoked {}", clip(&device.name, 80))?;
            Ok(())
        }
        None => Err(Error::Usage(format!(
            "no paired device is named {name:?}; `askdesk devices list` shows their names"
        ))),
    }
}
