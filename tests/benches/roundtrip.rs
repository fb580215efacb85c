//! Ask round-trip benchmark: `askdesk serve` (release build) with one socket answerer, next to the
//! floor measured in the same run, the same bytes relayed through two raw Unix-socket hops by a
//! relay process (so both paths cross the same process boundaries).
//!
//! Run with `./scripts/bench.sh` or `cargo bench -p askdesk-cli --bench roundtrip` (a target of
//! askdesk-cli: cargo builds the release `askdesk` it measures first).
//! Target: p50 within 1.5x of the floor and p99 within 2x. Not run in CI.
//!
//! Both setups use the same asker and the same answerer code on blocking sockets: the asker writes
//! one `user-questions/ask` line and waits for the answer line; the answerer parses each line it is
//! given and replies with an answer for its id. Only the middle differs: the broker (parsing,
//! validation, waterfall, answer checks) or a relay that copies lines unparsed, one thread per
//! direction. Rounds of the two alternate so both see the same machine conditions.

// The end-to-end harness (tests/src/lib.rs says why each target compiles it in).
#[path = "../src/lib.rs"]
mod askdesk_e2e;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use askdesk_e2e::{askdesk_bin, Broker, Home};
use serde_json::{json, Value};

const WARMUP: usize = 2_000;
const ROUNDS: usize = 10;
const PER_ROUND: usize = 2_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == RELAY_PROCESS) {
        return relay_process(Path::new(&args[at + 1]));
    }
    // `cargo bench` passes `--bench`; a filter argument that is not ours is ignored.
    let with_journal = std::env::args().any(|a| a == "--with-history");
    println!("askdesk binary: {}", askdesk_bin().display());
    let args: &[&str] = if with_journal { &[] } else { &["--no-history"] };
    let broker = Broker::start_in(Home::new(), args);

    let mut via_broker = BrokerPath::connect(broker.socket());
    // The floor's relay runs in a process of its own, as the broker does: both paths then make
    // the same process switches, and the difference is what the broker does with the bytes.
    let relay_dir = tempfile::tempdir().expect("a temporary directory");
    let mut via_relay = RelayPath::start_process(relay_dir.path());
    for i in 0..WARMUP {
        via_broker.round_trip(i);
        via_relay.round_trip(i);
    }
    let mut broker_samples = Vec::with_capacity(ROUNDS * PER_ROUND);
    let mut relay_samples = Vec::with_capacity(ROUNDS * PER_ROUND);
    for round in 0..ROUNDS {
        for i in 0..PER_ROUND {
            let n = WARMUP + round * PER_ROUND + i;
            broker_samples.push(via_broker.round_trip(n));
        }
        for i in 0..PER_ROUND {
            let n = WARMUP + round * PER_ROUND + i;
            relay_samples.push(via_relay.round_trip(n));
        }
    }
    // One hop for scale: `ping` through the broker against a thread that parses the line and answers.
    let mut broker_ping = BrokerPath::connect_asker(broker.socket());
    let mut echo = EchoPath::start();
    let mut ping_samples = Vec::with_capacity(ROUNDS * PER_ROUND);
    let mut echo_samples = Vec::with_capacity(ROUNDS * PER_ROUND);
    for n in 0..WARMUP {
        broker_ping.ping(n);
        echo.ping(n);
    }
    for round in 0..ROUNDS {
        for i in 0..PER_ROUND {
            ping_samples.push(broker_ping.ping(round * PER_ROUND + i));
        }
        for i in 0..PER_ROUND {
            echo_samples.push(echo.ping(round * PER_ROUND + i));
        }
    }
    let (pp50, pp99) = percentiles(&mut ping_samples);
    let (ep50, ep99) = percentiles(&mut echo_samples);

    let (bp50, bp99) = percentiles(&mut broker_samples);
    let (rp50, rp99) = percentiles(&mut relay_samples);
    let ratio50 = bp50.as_secs_f64() / rp50.as_secs_f64();
    let ratio99 = bp99.as_secs_f64() / rp99.as_secs_f64();
    println!(
        "ask round trip{}: p50 {} µs p99 {} µs | raw 2-hop floor (relay process): p50 {} µs p99 {} µs | ratio p50 {:.2} p99 {:.2}",
        if with_journal { " (history journal on)" } else { "" },
        bp50.as_micros(),
        bp99.as_micros(),
        rp50.as_micros(),
        rp99.as_micros(),
        ratio50,
        ratio99
    );
    println!(
        "ping round trip: p50 {} µs p99 {} µs | raw 1-hop echo (a thread of this process): p50 {} µs p99 {} µs | ratio p50 {:.2} p99 {:.2}",
        pp50.as_micros(),
        pp99.as_micros(),
        ep50.as_micros(),
        ep99.as_micros(),
        pp50.as_secs_f64() / ep50.as_secs_f64(),
        pp99.as_secs_f64() / ep99.as_secs_f64()
    );
    println!(
        "target p50 <= 1.5x, p99 <= 2x: {} ({} samples each)",
        if ratio50 <= 1.5 && ratio99 <= 2.0 {
            "met"
        } else {
            "NOT met"
        },
        broker_samples.len()
    );
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort_unstable();
    let at = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.99))
}

/// The bytes of the `n`th ask: one single-select question, like a typical agent confirmation.
fn ask_line(n: usize) -> Vec<u8> {
    let message = json!({
        "jsonrpc": "2.0",
        "id": n,
        "method": "user-questions/ask",
        "params": { "questions": [{
            "id": "confirm",
            "question": "Delete the build cache before the release build?",
            "header": "Cleanup",
            "options": [{ "label": "Yes (Recommended)", "description": "frees 2 GB" }, { "label": "No" }]
        }] }
    });
    let mut line = serde_json::to_vec(&message).unwrap();
    line.push(b'\n');
    line
}

/// Reads one line; panics on EOF (the other side went away mid-benchmark).
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) {
    buf.clear();
    let n = reader.read_until(b'\n', buf).expect("read a line");
    assert!(n > 0, "the connection closed mid-benchmark");
}

/// The answerer both setups share: parse the line, answer the first option for its id.
fn serve_answers(stream: UnixStream) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).unwrap_or(0) == 0 {
            return;
        }
        let message: Value = serde_json::from_slice(&buf).expect("a JSON line");
        let Some(id) = message
            .get("id")
            .filter(|_| message.get("method").is_some())
        else {
            continue;
        };
        let reply = if message["method"] == "ping" {
            json!({ "jsonrpc": "2.0", "id": id, "result": {} })
        } else {
            let question = &message["params"]["questions"][0];
            json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": { "answers": [{ "id": question["id"], "selected": [question["options"][0]["label"]] }] }
            })
        };
        let mut line = serde_json::to_vec(&reply).unwrap();
        line.push(b'\n');
        if writer.write_all(&line).is_err() {
            return;
        }
    }
}

/// Sends one request and reads lines until its response (used for setup only).
fn call(
    stream: &mut UnixStream,
    reader: &mut BufReader<UnixStream>,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let mut line = serde_json::to_vec(
        &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
    )
    .unwrap();
    line.push(b'\n');
    stream.write_all(&line).unwrap();
    let mut buf = Vec::new();
    loop {
        read_line(reader, &mut buf);
        let message: Value = serde_json::from_slice(&buf).unwrap();
        if message["id"] == json!(id) {
            assert!(message.get("error").is_none(), "{method} failed: {message}");
            return message["result"].clone();
        }
    }
}

struct BrokerPath {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    buf: Vec<u8>,
}

impl BrokerPath {
    fn connect(socket: &Path) -> BrokerPath {
        let init = json!({ "protocolVersion": 1, "client": { "name": "bench" } });
        let mut answerer = UnixStream::connect(socket).unwrap();
        let mut answerer_reader = BufReader::new(answerer.try_clone().unwrap());
        call(&mut answerer, &mut answerer_reader, 1, "initialize", init);
        call(
            &mut answerer,
            &mut answerer_reader,
            2,
            "answerers/register",
            json!({ "scope": "all", "label": "bench" }),
        );
        // The answerer's reader has consumed nothing beyond the responses; hand the socket over.
        drop(answerer_reader);
        thread::spawn(move || serve_answers(answerer));
        BrokerPath::connect_asker(socket)
    }

    /// An initialized connection with no answerer of its own.
    fn connect_asker(socket: &Path) -> BrokerPath {
        let init = json!({ "protocolVersion": 1, "client": { "name": "bench" } });
        let mut stream = UnixStream::connect(socket).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        call(&mut stream, &mut reader, 1, "initialize", init);
        BrokerPath {
            stream,
            reader,
            buf: Vec::new(),
        }
    }

    fn ping(&mut self, n: usize) -> Duration {
        ping_over(&mut self.stream, &mut self.reader, &mut self.buf, n)
    }

    fn round_trip(&mut self, n: usize) -> Duration {
        let line = ask_line(n + 10);
        let started = Instant::now();
        self.stream.write_all(&line).unwrap();
        read_line(&mut self.reader, &mut self.buf);
        let elapsed = started.elapsed();
        debug_assert!(
            self.buf.starts_with(b"{") && !self.buf.windows(7).any(|w| w == b"\"error\"")
        );
        elapsed
    }
}

fn ping_over(
    stream: &mut UnixStream,
    reader: &mut BufReader<UnixStream>,
    buf: &mut Vec<u8>,
    n: usize,
) -> Duration {
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\",\"params\":{{}}}}\n",
        n + 10
    );
    let started = Instant::now();
    stream.write_all(line.as_bytes()).unwrap();
    read_line(reader, buf);
    started.elapsed()
}

/// asker <-> echo thread (the shared answerer code) over one socket pair.
struct EchoPath {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    buf: Vec<u8>,
}

impl EchoPath {
    fn start() -> EchoPath {
        let (asker, echo) = UnixStream::pair().unwrap();
        thread::spawn(move || serve_answers(echo));
        let reader = BufReader::new(asker.try_clone().unwrap());
        EchoPath {
            stream: asker,
            reader,
            buf: Vec::new(),
        }
    }

    fn ping(&mut self, n: usize) -> Duration {
        ping_over(&mut self.stream, &mut self.reader, &mut self.buf, n)
    }
}

/// The argument that makes this binary the floor's relay process.
const RELAY_PROCESS: &str = "--relay-process";

/// Copies lines unparsed in both directions, one thread each, until either side closes.
fn relay(front: UnixStream, back: UnixStream) -> [thread::JoinHandle<()>; 2] {
    let copy = |from: UnixStream, mut to: UnixStream| {
        thread::spawn(move || {
            let mut reader = BufReader::new(from);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                if reader.read_until(b'\n', &mut buf).unwrap_or(0) == 0
                    || to.write_all(&buf).is_err()
                {
                    return;
                }
            }
        })
    };
    [
        copy(front.try_clone().unwrap(), back.try_clone().unwrap()),
        copy(back, front),
    ]
}

/// The relay process: accepts the asker on `<dir>/front.sock`, connects to the answerer on
/// `<dir>/back.sock`, relays until the benchmark ends.
fn relay_process(dir: &Path) {
    let listener =
        std::os::unix::net::UnixListener::bind(dir.join("front.sock")).expect("bind front.sock");
    let (front, _) = listener.accept().expect("the asker connects");
    let back = UnixStream::connect(dir.join("back.sock")).expect("the answerer listens");
    for copier in relay(front, back) {
        let _ = copier.join();
    }
}

struct RelayPath {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    buf: Vec<u8>,
}

impl RelayPath {
    /// asker <-> relay process <-> answerer thread: the same process hops as through the broker.
    fn start_process(dir: &Path) -> RelayPath {
        let back =
            std::os::unix::net::UnixListener::bind(dir.join("back.sock")).expect("bind back.sock");
        let mut child =
            std::process::Command::new(std::env::current_exe().expect("this benchmark's path"))
                .arg(RELAY_PROCESS)
                .arg(dir)
                .spawn()
                .expect("start the relay process");
        let deadline = Instant::now() + Duration::from_secs(10);
        let asker = loop {
            match UnixStream::connect(dir.join("front.sock")) {
                Ok(stream) => break stream,
                Err(_) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                Err(error) => {
                    let _ = child.kill();
                    panic!("the relay process never listened: {error}");
                }
            }
        };
        let (answerer, _) = back.accept().expect("the relay connects");
        thread::spawn(move || serve_answers(answerer));
        // The child ends when the asker's socket closes with this process.
        std::mem::forget(child);
        let reader = BufReader::new(asker.try_clone().unwrap());
        RelayPath {
            stream: asker,
            reader,
            buf: Vec::new(),
        }
    }

    fn round_trip(&mut self, n: usize) -> Duration {
        let line = ask_line(n + 10);
        let started = Instant::now();
        self.stream.write_all(&line).unwrap();
        read_line(&mut self.reader, &mut self.buf);
        started.elapsed()
    }
}
