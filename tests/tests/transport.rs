//! The socket's security and lifetime (protocol 5.1): private directory and socket modes, refusal of
//! unsafe directories, the peer uid check, stale sockets, a second broker, and the default path.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use askdesk_e2e::{run_with_timeout, Broker, Home};
use serde_json::json;

const NOBODY: u32 = 65534;
const EXIT_LIMIT: Duration = Duration::from_secs(20);

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("stat {}: {e}", path.display()))
        .mode()
        & 0o7777
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn socket_dir_is_created_0700_and_socket_is_0600() {
    let broker = Broker::start();
    let dir = broker.socket().parent().unwrap();
    assert_eq!(mode(dir), 0o700, "the socket directory");
    assert_eq!(mode(broker.socket()), 0o600, "the socket");
    assert!(fs::symlink_metadata(broker.socket())
        .unwrap()
        .file_type()
        .is_socket());
    let meta = fs::metadata(dir).unwrap();
    // SAFETY: geteuid has no preconditions.
    assert_eq!(meta.uid(), unsafe { libc::geteuid() }, "owned by the user");
}

#[test]
fn missing_parent_directories_are_created() {
    let home = Home::new();
    let socket = home.path().join("a").join("b").join("askdesk.sock");
    let broker = Broker::start_in(home.with_socket(&socket), &[]);
    assert_eq!(mode(socket.parent().unwrap()), 0o700);
    assert_eq!(mode(broker.socket()), 0o600);
}

/// Runs `askdesk serve` expecting it to refuse to start; returns its stderr.
fn serve_refuses(home: &Home) -> String {
    let output = run_with_timeout(&mut home.command(["serve"]), EXIT_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success(),
        "serve should refuse; it exited {} with stderr {stderr}",
        output.status
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "serve's documented startup failure status; stderr {stderr}"
    );
    assert!(!home.socket().exists(), "no socket was created");
    stderr
}

#[test]
fn a_directory_open_to_group_or_others_is_refused() {
    for open_mode in [0o750, 0o705, 0o777, 0o1777] {
        let home = Home::new();
        let dir = home.path().join("open");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(open_mode)).unwrap();
        let home = home.with_socket(dir.join("askdesk.sock"));
        let stderr = serve_refuses(&home);
        assert!(
            stderr.contains(&dir.display().to_string()),
            "the error names the directory: {stderr}"
        );
        assert!(stderr.contains("Error"), "an `Error:` line: {stderr}");
        assert_eq!(
            mode(&dir),
            open_mode,
            "the broker does not silently chmod a directory it refused"
        );
    }
}

#[test]
fn a_directory_owned_by_another_user_is_refused() {
    if !is_root() {
        eprintln!(
            "a_directory_owned_by_another_user_is_refused needs root to chown; not run as uid != 0"
        );
        return;
    }
    let home = Home::new();
    let dir = home.path().join("theirs");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    let home = home.with_socket(dir.join("askdesk.sock"));
    let stderr = serve_refuses(&home);
    assert!(
        stderr.contains(&dir.display().to_string()),
        "the error names the directory: {stderr}"
    );
    assert!(
        stderr.contains("owned"),
        "the error says who owns it: {stderr}"
    );
}

#[test]
fn a_symlinked_socket_directory_is_refused() {
    let home = Home::new();
    let real = home.path().join("real");
    fs::create_dir(&real).unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o700)).unwrap();
    let link = home.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let home = home.with_socket(link.join("askdesk.sock"));
    let stderr = serve_refuses(&home);
    assert!(
        stderr.contains(&link.display().to_string()),
        "the error names the directory: {stderr}"
    );
}

/// A peer of another uid is closed without a byte, even when the file permissions let it connect.
#[test]
fn a_peer_of_another_uid_is_closed_without_a_byte() {
    if !is_root() {
        eprintln!("a_peer_of_another_uid_is_closed_without_a_byte needs root to switch uid; not run as uid != 0");
        return;
    }
    let broker = Broker::start();
    // Open the path up (after the broker's own checks) so only the peer uid check stands in the way.
    let dir = broker.socket().parent().unwrap();
    fs::set_permissions(broker.home().path(), fs::Permissions::from_mode(0o711)).unwrap();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o711)).unwrap();
    fs::set_permissions(broker.socket(), fs::Permissions::from_mode(0o666)).unwrap();
    let script = r#"
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
print("uid", os.getuid(), flush=True)
try:
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"intruder"}}}\n')
    s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
except OSError as e:
    print("send failed", e, flush=True)
data = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print("closed after", len(data), "bytes", flush=True)
except socket.timeout:
    print("timeout after", len(data), "bytes", flush=True)
except OSError as e:
    print("closed by error", e, "after", len(data), "bytes", flush=True)
"#;
    // The system Python: a per-user interpreter (pyenv under /root) is not reachable for nobody.
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let output = run_with_timeout(
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                python,
                "-c",
                script,
            ])
            .arg(broker.socket()),
        EXIT_LIMIT,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the intruder script ran: {stdout} {stderr}"
    );
    assert!(
        stdout.contains("uid 65534"),
        "connected as nobody: {stdout} {stderr}"
    );
    assert!(
        stdout.contains("closed after 0 bytes") || stdout.contains("closed by error"),
        "the broker closes a foreign peer without a byte: {stdout} {stderr}"
    );
    // The broker itself is unharmed and still serves its own user.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let conn = broker.conn().await;
        assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    });
}

#[test]
fn a_stale_socket_file_is_replaced() {
    let home = Home::new();
    let dir = home.socket().parent().unwrap().to_owned();
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    // A listener that is gone leaves its socket file behind, as a crashed broker does.
    drop(std::os::unix::net::UnixListener::bind(home.socket()).unwrap());
    assert!(home.socket().exists());
    let broker = Broker::start_in(home, &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let conn = broker.conn().await;
        assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    });
    assert_eq!(mode(broker.socket()), 0o600);
}

#[test]
fn a_regular_file_at_the_socket_path_is_left_alone() {
    let home = Home::new();
    let dir = home.socket().parent().unwrap().to_owned();
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    fs::write(home.socket(), b"not a socket").unwrap();
    let output = run_with_timeout(&mut home.command(["serve"]), EXIT_LIMIT);
    assert_eq!(
        output.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(fs::read(home.socket()).unwrap(), b"not a socket");
}

#[test]
fn a_second_broker_on_a_live_socket_exits_nonzero_and_the_first_keeps_serving() {
    let broker = Broker::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let conn = rt.block_on(broker.conn());
    let output = run_with_timeout(&mut broker.cli(["serve"]), EXIT_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the second broker's status; stderr: {stderr}"
    );
    assert!(stderr.contains("Error"), "an `Error:` line: {stderr}");
    assert!(
        stderr.contains(&broker.socket().display().to_string()),
        "it names the socket: {stderr}"
    );
    assert!(
        broker.socket().exists(),
        "the live broker's socket is untouched"
    );
    rt.block_on(async {
        assert_eq!(
            conn.call("ping", json!({})).await.unwrap(),
            json!({}),
            "the existing connection still works"
        );
        let fresh = broker.conn().await;
        assert_eq!(
            fresh.call("ping", json!({})).await.unwrap(),
            json!({}),
            "new connections reach the first broker"
        );
    });
}

#[test]
fn without_askdesk_socket_the_socket_is_under_xdg_runtime_dir() {
    let home = Home::new();
    let runtime = home.runtime_dir();
    fs::create_dir(&runtime).unwrap();
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).unwrap();
    let expected = runtime.join("askdesk").join("askdesk.sock");
    serves_at_the_default_path(&home, &expected, |cmd| {
        cmd.env_remove("ASKDESK_SOCKET");
    });
}

#[test]
fn without_askdesk_socket_or_xdg_runtime_dir_the_socket_is_under_the_temp_dir() {
    let home = Home::new();
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let expected = home
        .path()
        .join(format!("askdesk-{uid}"))
        .join("askdesk.sock");
    serves_at_the_default_path(&home, &expected, |cmd| {
        cmd.env_remove("ASKDESK_SOCKET")
            .env_remove("XDG_RUNTIME_DIR")
            .env("TMPDIR", home.path());
    });
}

/// Starts `askdesk serve` in `home` with its environment changed by `environment`, expects it to listen at
/// `expected` in a 0700 directory, and `askdesk status` with the same environment to find it there.
fn serves_at_the_default_path(home: &Home, expected: &Path, environment: impl Fn(&mut Command)) {
    let mut serve = home.command(["serve"]);
    environment(&mut serve);
    let log = home.path().join("serve.log");
    let file = fs::File::create(&log).unwrap();
    let mut child = serve
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::os::unix::net::UnixStream::connect(expected).is_err() {
        if std::time::Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "no socket at {}; log: {}",
                expected.display(),
                fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(mode(expected.parent().unwrap()), 0o700);
    assert_eq!(mode(expected), 0o600);
    // The CLI finds it the same way.
    let mut status = home.command(["status", "--json"]);
    environment(&mut status);
    let output = run_with_timeout(&mut status, EXIT_LIMIT);
    child.kill().ok();
    child.wait().ok();
    assert!(
        output.status.success(),
        "status found the broker: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["socket"].as_str(), expected.to_str(), "{status}");
}

#[test]
fn the_socket_file_is_removed_on_a_clean_stop() {
    let mut broker = Broker::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let conn = broker.conn().await;
        assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    });
    broker.signal(libc::SIGINT);
    let status = rt.block_on(broker.wait_exit(Duration::from_secs(10)));
    assert!(
        status.success(),
        "SIGINT is a clean stop: {status}; log: {}",
        broker.log()
    );
    assert!(!broker.socket().exists(), "the socket file is removed");
}

/// A supervisor may stop the broker the moment its socket accepts connections: that must already
/// be a clean stop (exit 0, socket removed), not death by the signal's default action.
#[test]
fn a_signal_as_soon_as_the_socket_accepts_is_a_clean_stop() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The window is short: enough attempts make a miss all but certain while it exists.
    for attempt in 0..20 {
        let mut broker = Broker::start();
        broker.signal(libc::SIGTERM);
        let status = rt.block_on(broker.wait_exit(Duration::from_secs(10)));
        assert_eq!(
            status.code(),
            Some(0),
            "attempt {attempt}: {status}; log: {}",
            broker.log()
        );
        assert!(
            !broker.socket().exists(),
            "attempt {attempt}: the socket file is removed"
        );
    }
}

/// A peer that sends and stops reading fills its socket: the broker queues what it cannot write,
/// then stops reading from that peer only. Another connection is served meanwhile, and the slow
/// peer gets every response, whole and in order, once it reads again.
#[test]
fn a_peer_that_stops_reading_holds_up_only_itself_and_loses_nothing() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    // Far more response bytes than the socket buffers and the broker's queue hold together.
    const PINGS: usize = 40_000;
    let broker = Broker::start();
    let slow = UnixStream::connect(broker.socket()).expect("connect");
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let mut slow = slow.try_clone().unwrap();
        let written = written.clone();
        std::thread::spawn(move || {
            let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": { "protocolVersion": 1, "client": { "name": "slow reader" } } });
            slow.write_all(format!("{init}\n").as_bytes()).unwrap();
            for id in 1..=PINGS {
                let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
                slow.write_all(ping.as_bytes()).unwrap();
                written.store(id, Ordering::SeqCst);
            }
        })
    };
    // Wait until the writer is stuck: the broker has stopped reading from this peer.
    let mut last = usize::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = written.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        assert!(
            now < PINGS,
            "every ping was taken while nothing was read: no back-pressure"
        );
        last = now;
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let other = broker.conn().await;
        let pong = tokio::time::timeout(Duration::from_secs(5), other.call("ping", json!({})))
            .await
            .expect("another connection is served while one is stuck");
        assert_eq!(pong.unwrap(), json!({}));
    });

    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reader = BufReader::new(slow);
    let mut line = String::new();
    for expected in 0..=PINGS {
        line.clear();
        reader.read_line(&mut line).expect("a response line");
        let response: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("response {expected} is not whole JSON ({e}): {line:?}"));
        assert_eq!(
            response["id"],
            json!(expected),
            "responses in order: {line}"
        );
        assert!(response.get("result").is_some(), "{line}");
    }
    writer
        .join()
        .expect("the writer finished once the broker read again");
}
