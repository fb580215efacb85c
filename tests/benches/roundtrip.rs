//! Broker benchmark: `askdesk serve` (release build) with one socket answerer, next to the anchors
//! measured in the same run:
//! - the floor: the same bytes relayed through two raw Unix-socket hops by a relay process (so both
//!   paths cross the same process boundaries);
//! - `--no-history` against the default (history journal on), for latency and for throughput with
//!   64 asks in flight (the median of five alternating pairs);
//! - the cost of one append + `fdatasync` of a 1 KB line on the journal's disk;
//! - broker memory per pending ask (10,000 pending, 50 per connection, held by an answerer that
//!   never answers), from the broker's resident set.
//!
//! Prints `figure key=value` lines that `./scripts/bench.sh` turns into verdicts, and a readable
//! summary. `--fsync-cost DIR` only measures the append + `fdatasync` cost in `DIR`;
//! `--round-trip-only` only the `--no-history` round trip next to the floors, with busy polling
//! on and off and the broker's CPU per ask in both. Run with
//! `./scripts/bench.sh` (it builds `askdesk` in release first), or
//! `cargo build --release -p askdesk-cli && cargo bench -p askdesk-cli --bench roundtrip`.
//! Not run in CI.
//!
//! Both latency setups use the same asker and the same answerer code on blocking sockets: the asker
//! writes one `user-questions/ask` line and waits for the answer line; the answerer parses each line
//! it is given and replies with an answer for its id. Only the middle differs: the broker (parsing,
//! validation, waterfall, answer checks, journal) or a relay that copies lines unparsed, one thread
//! per direction. Rounds alternate so all see the same machine conditions.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use askdesk_e2e::{askdesk_bin, Broker, Home};
use serde_json::{json, Value};

const WARMUP: usize = 1_000;
const ROUNDS: usize = 10;
const PER_ROUND: usize = 1_000;
/// History-on rounds are bounded by the disk's sync rate: fewer samples.
const PER_ROUND_HISTORY: usize = 200;
const THROUGHPUT_ASKS: usize = 10_000;
/// Throughput is read in this many alternating pairs and judged on the median pair: one reading
/// of 10,000 asks moves by up to 2x from the next on a shared machine.
const THROUGHPUT_PAIRS: usize = 5;
const IN_FLIGHT: usize = 64;
const PENDING: usize = 10_000;
const PENDING_PER_CONNECTION: usize = 50;
const FSYNC_SAMPLES: usize = 100;
/// The pause before each isolated append + `fdatasync`: about what separates two commits of one
/// asker asking in turn.
const ISOLATED_GAP: Duration = Duration::from_micros(200);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == RELAY_PROCESS) {
        return relay_process(
            Path::new(&args[at + 1]),
            args.get(at + 2).is_some_and(|a| a == IN_TURN),
        );
    }
    if let Some(at) = args.iter().position(|a| a == "--fsync-cost") {
        let dir = args.get(at + 1).expect("--fsync-cost DIR");
        let (p50, p99) = fsync_cost(Path::new(dir), Duration::ZERO);
        println!("figure fsync_p50_us={:.1}", micros(p50));
        // Reported, not an anchor: how far this disk's syncs stray from their median.
        println!("figure fsync_p99_us={:.1}", micros(p99));
        // Reported, not an anchor: a commit as a lone ask makes it, after a pause.
        let (isolated, _) = fsync_cost(Path::new(dir), ISOLATED_GAP);
        return println!("figure fsync_isolated_p50_us={:.1}", micros(isolated));
    }
    if args.iter().any(|a| a == "--round-trip-only") {
        return round_trip_only();
    }
    // `cargo bench` passes `--bench`; other arguments are ignored.
    println!("askdesk binary: {}", askdesk_bin().display());
    let plain = Broker::start_in(Home::new(), &["--no-history"]);
    let journaled = Broker::start_in(Home::new(), &[]);
    let journal_dir = journaled.home().data_home().join("askdesk");

    let mut via_plain = BrokerPath::connect(plain.socket());
    let mut via_journaled = BrokerPath::connect(journaled.socket());
    // The floor's relay runs in a process of its own, as the broker does: both paths then make
    // the same process switches, and the difference is what the broker does with the bytes.
    let relay_dir = tempfile::tempdir().expect("a temporary directory");
    let mut via_relay = RelayPath::start_process(relay_dir.path());
    for i in 0..WARMUP {
        via_plain.round_trip(i);
        via_relay.round_trip(i);
    }
    for i in 0..WARMUP / 10 {
        via_journaled.round_trip(i);
    }
    let mut plain_samples = Vec::new();
    let mut relay_samples = Vec::new();
    let mut journaled_samples = Vec::new();
    // The journal's disk is probed between rounds, so the anchor sees the disk as the broker did.
    let mut fsync_samples = Vec::new();
    for round in 0..ROUNDS {
        let base = WARMUP + round * PER_ROUND;
        plain_samples.extend((0..PER_ROUND).map(|i| via_plain.round_trip(base + i)));
        relay_samples.extend((0..PER_ROUND).map(|i| via_relay.round_trip(base + i)));
        journaled_samples
            .extend((0..PER_ROUND_HISTORY).map(|i| via_journaled.round_trip(base + i)));
        fsync_samples.push(fsync_cost(&journal_dir, Duration::ZERO).0);
    }
    let fsync = percentiles(&mut fsync_samples).0;
    let (rp50, rp99) = percentiles(&mut relay_samples);
    let (bp50, bp99) = percentiles(&mut plain_samples);
    let (hp50, hp99) = percentiles(&mut journaled_samples);

    let mut pairs: Vec<(f64, f64)> = (0..THROUGHPUT_PAIRS)
        .map(|_| (throughput(plain.socket()), throughput(journaled.socket())))
        .collect();
    pairs.sort_by(|a, b| (a.1 / a.0).total_cmp(&(b.1 / b.0)));
    let (plain_tput, journaled_tput) = pairs[pairs.len() / 2];
    let ratios: Vec<String> = pairs.iter().map(|(p, j)| format!("{:.2}", j / p)).collect();
    let plain_memory = memory_per_pending_ask(&plain);
    let journaled_memory = memory_per_pending_ask(&journaled);

    println!(
        "figure floor_p50_us={:.1} floor_p99_us={:.1}",
        micros(rp50),
        micros(rp99)
    );
    println!(
        "figure nohist_p50_us={:.1} nohist_p99_us={:.1}",
        micros(bp50),
        micros(bp99)
    );
    println!(
        "figure hist_p50_us={:.1} hist_p99_us={:.1}",
        micros(hp50),
        micros(hp99)
    );
    println!("figure nohist_asks_per_s={plain_tput:.0} hist_asks_per_s={journaled_tput:.0}");
    println!("figure nohist_bytes_per_pending_ask={plain_memory} hist_bytes_per_pending_ask={journaled_memory}");
    println!("figure fsync_p50_us={:.1}", micros(fsync));
    // The payload: the ask's params as sent.
    let line: Value = serde_json::from_slice(&ask_line(0)).unwrap();
    println!("figure payload_bytes={}", line["params"].to_string().len());
    println!(
        "ask round trip p50/p99 µs: --no-history {}/{} | history on {}/{} | raw 2-hop floor {}/{} | append+fdatasync 1 KB {} ({} / {} / {} samples)",
        bp50.as_micros(), bp99.as_micros(), hp50.as_micros(), hp99.as_micros(),
        rp50.as_micros(), rp99.as_micros(), fsync.as_micros(),
        plain_samples.len(), journaled_samples.len(), relay_samples.len()
    );
    println!(
        "throughput ({IN_FLIGHT} in flight, {THROUGHPUT_ASKS} asks, median of {THROUGHPUT_PAIRS} pairs): --no-history {plain_tput:.0} asks/s | history on {journaled_tput:.0} asks/s (ratios, sorted: {})",
        ratios.join(", ")
    );
    println!(
        "memory per pending ask ({PENDING} pending, {PENDING_PER_CONNECTION} per connection): --no-history {plain_memory} B | history on {journaled_memory} B"
    );
}

/// `--round-trip-only`: the `--no-history` round trip next to two floors relayed in turn by one
/// thread (askload's relay), in alternating rounds: one whose far end echoes the line back
/// (askload's floor) and one whose far end is this benchmark's answerer, which parses each line
/// and writes a JSON answer as it does behind the broker. A second `--no-history` broker with
/// busy polling off (`--busy-poll 0`) takes its turn in the same rounds, and both brokers' CPU
/// per ask is read from the kernel's per-thread run time: back to back, and for lone asks with a
/// pause after each (the window then runs out unused). `./scripts/bench.sh` reports them beside
/// askload's figures.
fn round_trip_only() {
    let plain = Broker::start_in(Home::new(), &["--no-history"]);
    let sleeper = Broker::start_in(Home::new(), &["--no-history", "--busy-poll", "0"]);
    let mut via_plain = BrokerPath::connect(plain.socket());
    let mut via_sleeper = BrokerPath::connect(sleeper.socket());
    let answer_dir = tempfile::tempdir().expect("a temporary directory");
    let mut via_answering = RelayPath::start_in_turn(answer_dir.path(), serve_answers);
    let echo_dir = tempfile::tempdir().expect("a temporary directory");
    let mut via_echo = RelayPath::start_in_turn(echo_dir.path(), serve_echo);
    for i in 0..WARMUP {
        via_plain.round_trip(i);
        via_sleeper.round_trip(i);
        via_answering.round_trip(i);
        via_echo.round_trip(i);
    }
    // The two brokers, polling and not, each timed and its CPU read in the same turns.
    let mut brokers = [(&mut via_plain, &plain), (&mut via_sleeper, &sleeper)];
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut cpu = [Duration::ZERO; 2];
    for round in 0..ROUNDS {
        let base = WARMUP + round * PER_ROUND;
        for (at, (path, broker)) in brokers.iter_mut().enumerate() {
            let before = broker.cpu_time();
            samples[at].extend((0..PER_ROUND).map(|i| path.round_trip(base + i)));
            cpu[at] += broker.cpu_time() - before;
        }
        samples[2].extend((0..PER_ROUND).map(|i| via_answering.round_trip(base + i)));
        samples[3].extend((0..PER_ROUND).map(|i| via_echo.round_trip(base + i)));
    }
    let asks = (ROUNDS * PER_ROUND) as f64;
    let [busy_cpu, sleeper_cpu] = cpu.map(|t| micros(t) / asks);
    let mut lone = [Duration::ZERO; 2];
    for i in 0..LONE_ASKS {
        for (at, (path, broker)) in brokers.iter_mut().enumerate() {
            thread::sleep(LONE_PAUSE);
            let before = broker.cpu_time();
            path.round_trip(i);
            // The window after the answer runs out within the pause; its cost is the ask's.
            thread::sleep(LONE_PAUSE);
            lone[at] += broker.cpu_time() - before;
        }
    }
    let [busy_lone, sleeper_lone] = lone.map(|t| micros(t) / LONE_ASKS as f64);
    let [plain, sleeping, answering, echo] = samples.map(|mut s| micros(percentiles(&mut s).0));
    println!(
        "figure same_ends_nohist_p50_us={plain:.1} same_ends_floor_p50_us={answering:.1} echo_floor_p50_us={echo:.1}"
    );
    println!(
        "figure busy_poll_off_p50_us={sleeping:.1} busy_poll_cpu_per_ask_us={busy_cpu:.1} busy_poll_off_cpu_per_ask_us={sleeper_cpu:.1} busy_poll_cpu_per_lone_ask_us={busy_lone:.1} busy_poll_off_cpu_per_lone_ask_us={sleeper_lone:.1}"
    );
}

/// Lone asks for the CPU reading: each with a pause before and after, longer than the window.
const LONE_ASKS: usize = 300;
const LONE_PAUSE: Duration = Duration::from_millis(2);

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The cost of appending a 1 KB line to a file in `dir` and `fdatasync`ing it, each after `gap`
/// (zero: back to back), at p50 and p99: what one journal commit costs on that disk.
fn fsync_cost(dir: &Path, gap: Duration) -> (Duration, Duration) {
    std::fs::create_dir_all(dir).expect("the measuring directory");
    let path = dir.join(format!("fsync-probe-{}", std::process::id()));
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("the probe file");
    let mut line = vec![b'x'; 1023];
    line.push(b'\n');
    let mut samples: Vec<Duration> = (0..FSYNC_SAMPLES)
        .map(|_| {
            if !gap.is_zero() {
                thread::sleep(gap);
            }
            let started = Instant::now();
            file.write_all(&line).expect("append");
            file.sync_data().expect("fdatasync");
            started.elapsed()
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    percentiles(&mut samples)
}

/// Asks per second with `IN_FLIGHT` asks outstanding on one connection at all times.
fn throughput(socket: &Path) -> f64 {
    let mut asker = BrokerPath::connect_asker(socket);
    let started = Instant::now();
    let mut sent = 0;
    while sent < IN_FLIGHT {
        asker.stream.write_all(&ask_line(sent + 10)).unwrap();
        sent += 1;
    }
    for _ in 0..THROUGHPUT_ASKS {
        read_line(&mut asker.reader, &mut asker.buf);
        assert!(
            !asker.buf.windows(7).any(|w| w == b"\"error\""),
            "an ask failed: {}",
            String::from_utf8_lossy(&asker.buf)
        );
        if sent < THROUGHPUT_ASKS {
            asker.stream.write_all(&ask_line(sent + 10)).unwrap();
            sent += 1;
        }
    }
    THROUGHPUT_ASKS as f64 / started.elapsed().as_secs_f64()
}

/// The broker's resident set, in bytes.
fn rss(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the broker's status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS");
    kb * 1024
}

/// Growth of the broker's resident set per pending ask, with `PENDING` asks held by an answerer
/// (registered first in the chain) that never answers. The asks are withdrawn afterwards.
fn memory_per_pending_ask(broker: &Broker) -> u64 {
    let init = json!({ "protocolVersion": 1, "client": { "name": "bench holder" } });
    let mut holder = UnixStream::connect(broker.socket()).unwrap();
    let mut holder_reader = BufReader::new(holder.try_clone().unwrap());
    call(&mut holder, &mut holder_reader, 1, "initialize", init);
    call(
        &mut holder,
        &mut holder_reader,
        2,
        "answerers/register",
        json!({ "scope": "all", "prepend": true, "label": "holder" }),
    );
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let mut held = 0;
        while holder_reader.read_until(b'\n', &mut buf).unwrap_or(0) > 0 {
            if buf.windows(23).any(|w| w == b"\"user-questions/request") {
                held += 1;
                if held == PENDING {
                    let _ = held_tx.send(());
                }
            }
            buf.clear();
        }
    });
    thread::sleep(Duration::from_millis(200));
    let before = rss(broker.pid());
    let mut askers = Vec::new();
    for n in 0..PENDING {
        if n % PENDING_PER_CONNECTION == 0 {
            askers.push(BrokerPath::connect_asker(broker.socket()));
        }
        let asker = askers.last_mut().expect("one asker");
        asker.stream.write_all(&ask_line(n + 10)).unwrap();
    }
    held_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("every ask reached the holding answerer");
    thread::sleep(Duration::from_millis(500));
    let after = rss(broker.pid());
    drop(askers);
    drop(holder);
    after.saturating_sub(before) / PENDING as u64
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
        let question = &message["params"]["questions"][0];
        let reply = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": { "answers": [{ "id": question["id"], "selected": [question["options"][0]["label"]] }] }
        });
        let mut line = serde_json::to_vec(&reply).unwrap();
        line.push(b'\n');
        if writer.write_all(&line).is_err() {
            return;
        }
    }
}

/// askload's far end of the floor: every line echoed back as it came.
fn serve_echo(stream: UnixStream) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    while copy_line(&mut reader, &mut writer, &mut buf) {}
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

/// The argument that makes this binary the floor's relay process.
const RELAY_PROCESS: &str = "--relay-process";
/// After `RELAY_PROCESS DIR`: relay in turn on one thread.
const IN_TURN: &str = "in-turn";

/// Copies one line from `from` to `to`; false once either side has closed.
fn copy_line(from: &mut impl BufRead, to: &mut impl Write, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    from.read_until(b'\n', buf).unwrap_or(0) > 0 && to.write_all(buf).is_ok()
}

/// Copies lines unparsed in both directions, one thread each, until either side closes.
fn relay(front: UnixStream, back: UnixStream) -> [thread::JoinHandle<()>; 2] {
    let copy = |from: UnixStream, mut to: UnixStream| {
        thread::spawn(move || {
            let mut reader = BufReader::new(from);
            let mut buf = Vec::new();
            while copy_line(&mut reader, &mut to, &mut buf) {}
        })
    };
    [
        copy(front.try_clone().unwrap(), back.try_clone().unwrap()),
        copy(back, front),
    ]
}

/// Copies a line from the asker to the answerer, then the reply back, in turn on one thread: the
/// floor askload measures (`./scripts/bench.sh` uses it to put askload's figures in context).
fn relay_in_turn(mut front: UnixStream, mut back: UnixStream) {
    let mut front_reader = BufReader::new(front.try_clone().unwrap());
    let mut back_reader = BufReader::new(back.try_clone().unwrap());
    let mut buf = Vec::new();
    while copy_line(&mut front_reader, &mut back, &mut buf)
        && copy_line(&mut back_reader, &mut front, &mut buf)
    {}
}

/// The relay process: accepts the asker on `<dir>/front.sock`, connects to the answerer on
/// `<dir>/back.sock`, relays (in turn when `in_turn`) until the benchmark ends.
fn relay_process(dir: &Path, in_turn: bool) {
    let listener =
        std::os::unix::net::UnixListener::bind(dir.join("front.sock")).expect("bind front.sock");
    let (front, _) = listener.accept().expect("the asker connects");
    let back = UnixStream::connect(dir.join("back.sock")).expect("the answerer listens");
    if in_turn {
        return relay_in_turn(front, back);
    }
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
        RelayPath::start(dir, false, serve_answers)
    }

    /// As [`RelayPath::start_process`], with the relay copying in turn on one thread and the far
    /// end served by `answerer`.
    fn start_in_turn(dir: &Path, answerer: fn(UnixStream)) -> RelayPath {
        RelayPath::start(dir, true, answerer)
    }

    fn start(dir: &Path, in_turn: bool, serve: fn(UnixStream)) -> RelayPath {
        let back =
            std::os::unix::net::UnixListener::bind(dir.join("back.sock")).expect("bind back.sock");
        let mut child =
            std::process::Command::new(std::env::current_exe().expect("this benchmark's path"))
                .arg(RELAY_PROCESS)
                .arg(dir)
                .args(in_turn.then_some(IN_TURN))
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
        thread::spawn(move || serve(answerer));
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
