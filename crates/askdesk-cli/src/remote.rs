//! `askdesk remote`: the phone's server (`askdesk_remote`) hosted beside a running broker, as an
//! answerer of the `person` race group: each request the broker offers is held for paired phones
//! until a phone's verified answer claims it or the broker withdraws it. A permission prompt is
//! offered only when a paired phone's scope reaches permission prompts (allowing one there needs
//! the phone's passkey); otherwise it goes to the next answerer at once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use askdesk_broker::client::{IncomingRequest, Outcome};
use askdesk_broker::protocol::methods::CancelReason;
use askdesk_broker::protocol::RpcError;
use askdesk_broker::server::DEFAULT_MAX_MESSAGE_BYTES;
use askdesk_core::{RequestId, Scope, UserQuestionError};
// The answerer's label. The protocol carries only the answerer's label, so the history says
// "phone", not which phone; the device is logged. (The desktop app hosts the remote in-process
// and records `phone:<device>`.)
use askdesk_i18n::t;
use askdesk_remote::answerer::LABEL;
use askdesk_remote::{
    bind, CertificateSource, Ending, Name, PendingRequest, Remote, RemoteConfig, Settled,
};
use clap::Args;
use tokio::task::JoinSet;

use crate::connect::connect;
use crate::exit::{Error, Result};
use crate::output::outln;
use askdesk_core::meta::is_permission_prompt;

/// Room kept in a line for the reply around a device's answer: the JSON-RPC envelope and its id.
const ANSWER_ENVELOPE: usize = 4096;

/// Let paired phones answer the broker's requests, over HTTPS on one address
#[derive(Debug, Args)]
#[command(
    after_help = "Serves the phone's HTTPS and WebSocket server on --listen and registers \
with the running broker as the answerer \"phone\" of the race group `person`, beside the desktop \
app's answerer: a request goes to every paired phone and the desk at once, and the first answer \
settles it. Permission prompts (the asking agent's meta names a tool) are offered only when a \
phone's scope reaches them (`askdesk devices scope NAME --up-to permission-prompt`), and allowing \
one from the phone needs its passkey; otherwise they go to the next answerer at once. Prints the address phones use on standard output; \
runs until Ctrl-C or SIGTERM. Pair phones with --pair; list and revoke them with `askdesk devices`.

A subscribed phone is woken (Web Push) when a request waits, unless in --quiet-hours. With \
--only-when-idle, only when the desktop session on this machine says it is locked or idle (its \
screen saver on the session bus, else logind); beside a headless broker nothing can say so, and \
the phone is woken.

Exit status: 0 after Ctrl-C or SIGTERM; 2 usage error; 3 no broker is running; 20 the address \
cannot be served, or the broker closed the connection.

Examples:
  askdesk remote --listen 100.64.0.7:8443
  askdesk remote --listen 192.168.1.20:8443 --pair
  askdesk remote --listen 100.64.0.7:443 --name desk.tail1234.ts.net --cert desk.crt --key desk.key
  askdesk remote --listen 100.64.0.7:8443 --quiet-hours 22:00-07:00 --only-when-idle 5"
)]
pub struct RemoteArgs {
    /// The one address and port to serve (a LAN or tailnet address of this machine; port 0 picks one)
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Serve this certificate chain (PEM) instead of one from askdesk's own authority
    #[arg(long, value_name = "PEM", requires = "key")]
    pub cert: Option<PathBuf>,
    /// The private key (PEM) of --cert
    #[arg(long, value_name = "PEM", requires = "cert")]
    pub key: Option<PathBuf>,
    /// A name phones use for this machine (repeatable); by default the --listen address
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<Name>,
    /// Allow --listen on 0.0.0.0 or :: (every interface)
    #[arg(long)]
    pub every_interface: bool,
    /// Pair one phone first: print its pairing URL, then read the 6-digit code the phone shows
    /// from standard input
    #[arg(long)]
    pub pair: bool,
    /// How long the pairing link stays valid, in seconds (at most 120, the default)
    #[arg(long, value_name = "SECONDS", requires = "pair", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=120))]
    pub pair_lifetime: u64,
    /// Show a text or choice question itself on the phone's lock screen (never a plan's or a
    /// permission prompt's content); by default only "An agent is waiting (N)"
    #[arg(long)]
    pub show_questions: bool,
    /// Wake no phone in these hours of this machine's local day, as 22:00-07:00
    #[arg(long, value_name = "HH:MM-HH:MM")]
    pub quiet_hours: Option<askdesk_remote::push::QuietHours>,
    /// Wake a phone only once the desktop session has been idle this many minutes or its screen
    /// is locked (asked over D-Bus; where nothing can tell, the phone is woken)
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(0..=1440))]
    pub only_when_idle: Option<u64>,
}

pub async fn run(args: RemoteArgs, socket: PathBuf) -> Result<()> {
    let dir = askdesk_remote::files::default_dir().map_err(|e| Error::Internal(e.to_string()))?;
    let mut config = RemoteConfig::new(args.listen, dir);
    config.names = args.names;
    config.every_interface = args.every_interface;
    config.pairing_lifetime = std::time::Duration::from_secs(args.pair_lifetime);
    // A device's answer goes to the broker as one line: one too long for it would close the
    // connection, so the remote refuses it to the phone first (room left for the reply's envelope).
    config.limits.answer_bytes = Some(DEFAULT_MAX_MESSAGE_BYTES - ANSWER_ENVELOPE);
    config.push.show_questions = args.show_questions;
    config.push.quiet_hours = args.quiet_hours;
    config.push.only_when_idle = args
        .only_when_idle
        .map(|minutes| std::time::Duration::from_secs(minutes * 60));
    if config.push.only_when_idle.is_some() {
        config.push.presence = askdesk_remote::Presence::session();
    }
    if let (Some(certificate), Some(key)) = (args.cert, args.key) {
        config.certificates = CertificateSource::Provided { certificate, key };
    }
    // Installed before the remote registers: a SIGTERM once the broker lists it stops it cleanly.
    let interrupted = askdesk_broker::host::interrupted();
    // The broker first: without one there is nothing to serve.
    let client = connect(&socket, "remote").await?;
    let (remote, server) = bind(config)
        .await
        .map_err(|e| Error::Internal(format!("cannot serve the remote: {e}")))?;
    let (answerer, mut incoming) = client
        .register_answerer_in(
            Scope::All,
            false,
            Some(LABEL),
            Some(askdesk_connect::PERSON_GROUP),
        )
        .await?;
    let server = tokio::spawn(server.run());
    outln!(
        "{}",
        t!(
            "remote-serving",
            origin = remote.served().origin().to_string()
        )
    )?;
    tracing::info!(%answerer, "answering requests from paired phones");
    let pairing = tokio::spawn(pair_if(args.pair, remote.clone()));

    tokio::pin!(interrupted);
    let ids = AtomicU64::new(1);
    let mut tasks = JoinSet::new();
    let result = loop {
        tokio::select! {
            _ = &mut interrupted => break Ok(()),
            next = incoming.next() => match next {
                Some(request) => {
                    let id = RequestId(ids.fetch_add(1, Ordering::Relaxed));
                    tasks.spawn(bridge(remote.clone(), id, request));
                }
                None => break Err(Error::Internal("the broker closed the connection".into())),
            },
            Some(_) = tasks.join_next() => {}
        }
    };
    pairing.abort();
    // Every held request is withdrawn from the phones; the replies already queued reach the
    // broker before the connection (and with it the registration) closes.
    tasks.abort_all();
    remote.shutdown();
    let _ = server.await;
    if result.is_ok() {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), client.ping()).await;
    }
    result
}

/// Offers one request to the phones and replies with a phone's verified answer (a dismissal fails
/// the ask `ASK_CANCELLED`, as at the desk), then tells the phones whether the broker used it;
/// delegates a permission prompt at once; withdraws the request from the phones when the broker
/// does, saying why (protocol 4.2).
async fn bridge(remote: Remote, id: RequestId, request: IncomingRequest) {
    let agent = request.params.agent.as_deref();
    // Offered only when a phone's scope reaches permission prompts (docs/remote.md).
    if is_permission_prompt(agent) {
        let check = remote.clone();
        let owned = agent.cloned();
        let takes =
            tokio::task::spawn_blocking(move || check.takes_permission_prompt(owned.as_ref()))
                .await
                .unwrap_or(false);
        if !takes {
            tracing::info!(
                "passing a permission prompt to the next answerer: no phone's scope reaches it"
            );
            return request.reply(Ok(None)).await;
        }
    }
    let mut deadline = request.deadline();
    let offered = remote.offer(PendingRequest {
        id,
        agent: agent.cloned(),
        questions: request.params.questions.to_vec(),
        deadline: *deadline.borrow_and_update(),
    });
    let mut offered = match offered {
        Ok(offered) => offered,
        Err(error) => {
            tracing::warn!(%error, "passing a request to the next answerer");
            return request.reply(Ok(None)).await;
        }
    };
    let cancelled = request.cancelled.clone();
    // The phones count down to the deadline the broker tells, as it moves.
    let follow = {
        let remote = remote.clone();
        async move {
            while deadline.changed().await.is_ok() {
                let at = *deadline.borrow_and_update();
                remote.set_deadline(id, at);
            }
            std::future::pending::<()>().await
        }
    };
    // A withdrawn request drops `offered`, which withdraws it from every phone.
    tokio::select! {
        () = follow => {}
        _ = cancelled.cancelled() => {
            let why = ending(request.outcome());
            // Withdrawn first, so no answer can claim it any more; one that claimed it as the
            // broker withdrew it was not used, and its phone hears so.
            remote.withdraw(id, why.clone());
            if let Some(verified) = offered.try_answer() {
                remote.settled(Settled::lost(id, verified.device, why));
            }
        }
        answer = &mut offered => match answer {
            Some(verified) => {
                tracing::info!(device = %verified.device, request = %id, "answered from a phone");
                let reply = match verified.answer {
                    Some(answer) => Ok(Some(answer)),
                    None => Err(RpcError::user_question(&UserQuestionError::cancelled_by_user())),
                };
                // The phone says "Sent" only once the broker says it used the answer.
                let settled = match request.reply_confirmed(reply).await {
                    Ok(Outcome::Used) => Settled::used(id, verified.device),
                    told => Settled::lost(id, verified.device, ending(told.ok())),
                };
                remote.settled(settled);
            }
            None => request.reply(Ok(None)).await,
        },
    }
}

/// What the phones are told of a request the broker withdrew, from what the broker said.
fn ending(told: Option<Outcome>) -> Ending {
    let Some(Outcome::Withdrawn { reason, by }) = told else {
        return Ending::Stopped;
    };
    match reason {
        Some(CancelReason::AnsweredElsewhere) => Ending::answered_by(by.as_deref()),
        Some(CancelReason::Expired) => Ending::Expired,
        Some(CancelReason::Withdrawn) => Ending::Withdrawn,
        Some(CancelReason::AgentGone) => Ending::AgentGone,
        // An older broker gives no reason; a newer one may give one this remote does not know.
        Some(CancelReason::ShuttingDown | CancelReason::Unregistered | CancelReason::Other)
        | None => Ending::Stopped,
    }
}

/// With `--pair`: one pairing offer, its URL printed for the person to open on the phone (the
/// token is in the URL's fragment and goes to standard output only, never to a log), then the
/// code the phone shows read from standard input and confirmed.
async fn pair_if(pair: bool, remote: Remote) {
    if !pair {
        return;
    }
    if let Err(message) = pair_one(&remote).await {
        eprintln!("{}", t!("remote-pairing-failed", reason = message));
    }
}

async fn pair_one(remote: &Remote) -> std::result::Result<(), String> {
    use tokio::io::AsyncBufReadExt;
    let mut claims = remote.pairing_claims();
    let offer = remote.offer_pairing();
    outln!(
        "{}",
        t!(
            "remote-open-on-phone",
            seconds = offer.lifetime.as_secs(),
            url = offer.url.to_string()
        )
    )
    .map_err(|e| e.to_string())?;
    let claimed = loop {
        let claimed = tokio::time::timeout(offer.lifetime, claims.recv())
            .await
            .map_err(|_| "the offer expired".to_owned())?
            .map_err(|e| e.to_string())?;
        if claimed.id == offer.id {
            break claimed;
        }
    };
    outln!(
        "{}",
        t!(
            "remote-asks-to-pair",
            name = crate::terminal::visible(&claimed.name)
        )
    )
    .map_err(|e| e.to_string())?;
    let mut line = String::new();
    tokio::io::BufReader::new(tokio::io::stdin())
        .read_line(&mut line)
        .await
        .map_err(|e| e.to_string())?;
    let device = remote
        .confirm_pairing(offer.id, line.trim())
        .map_err(|e| e.to_string())?;
    outln!(
        "{}",
        t!(
            "remote-paired",
            name = crate::terminal::visible(&device.name)
        )
    )
    .map_err(|e| e.to_string())
}
