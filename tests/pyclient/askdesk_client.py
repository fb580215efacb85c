"""askdesk_client: the project's own small Python client of the askdesk wire protocol (stdlib only).

One JSON-RPC 2.0 message per line over the broker's Unix socket (protocol section 5). A reader thread
files each response under its request id and queues the broker's own requests and notifications,
so a test can keep requests in flight, answer as an answerer, and read what the broker pushes, all
on one connection. Used by the MCP and desktop end-to-end suites (tests/mcp, tests/desktop).

    conn = Conn(path)                      # connects; raises OSError when nothing listens
    conn.initialize("my-test")             # the protocol handshake
    conn.call("ping", {})                  # a request and its result (RpcError on an error reply)
    rid = conn.start("user-questions/ask", params); conn.wait(rid)   # the same in two steps
    conn.notify("$/cancelRequest", {"id": rid})
    msg = conn.next_incoming(timeout=1)    # a broker-sent request/notification (queue.Empty if none)
    conn.reply(msg, result) / conn.reply(msg, error={...})
    conn.close()
"""
import itertools
import json
import queue
import socket
import threading
import time
import traceback

PROTOCOL_VERSION = 1


class RpcError(Exception):
    """An error response: `code`, `message` and `data` (an empty dict when the error has none)."""

    def __init__(self, error):
        self.code = error.get("code")
        self.message = error.get("message", "")
        data = error.get("data")
        self.data = data if isinstance(data, dict) else {}
        self.raw = error
        super().__init__(f"{self.code} {self.message} {json.dumps(data) if data is not None else ''}".rstrip())


class ConnectionClosed(ConnectionError):
    """The broker closed the connection while a response was still expected."""


class Conn:
    """One connection to the broker; thread-safe (a lock serialises writes)."""

    def __init__(self, path, timeout=30):
        self.timeout = timeout
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(path)
        except OSError:
            self._sock.close()
            raise
        # The reader blocks until a line arrives or the socket is shut down.
        self._sock.settimeout(None)
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._cond = threading.Condition()
        self._responses = {}  # id -> response message
        self._closed = False
        self._incoming = queue.Queue()
        self._reader = threading.Thread(target=self._read_loop, name="askdesk-client-reader", daemon=True)
        self._reader.start()

    # ----- requests -----
    def initialize(self, name, version=None):
        client = {"name": name}
        if version is not None:
            client["version"] = version
        return self.call("initialize", {"protocolVersion": PROTOCOL_VERSION, "client": client})

    def call(self, method, params=None, timeout=None):
        """Sends a request and returns its result; raises RpcError on an error response."""
        return self.wait(self.start(method, params), timeout)

    def start(self, method, params=None):
        """Sends a request without waiting; returns its id for `wait`."""
        rid = next(self._ids)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def wait(self, rid, timeout=None):
        """The result of request `rid`; RpcError on an error response, TimeoutError, ConnectionClosed."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            while rid not in self._responses:
                if self._closed:
                    raise ConnectionClosed(f"the broker closed the connection before answering request {rid}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no response to request {rid} within {limit} s")
                self._cond.wait(left)
            msg = self._responses.pop(rid)
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg.get("result")

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # ----- the broker's own requests (answerer connections) -----
    def next_incoming(self, timeout=None):
        """The next request or notification the broker sent; raises queue.Empty after `timeout`."""
        return self._incoming.get(timeout=self.timeout if timeout is None else timeout)

    def reply(self, request, result=None, error=None):
        """Answers a broker-sent request: `result` (None sends null, i.e. delegate) or `error`."""
        msg = {"jsonrpc": "2.0", "id": request["id"]}
        if error is not None:
            msg["error"] = error
        else:
            msg["result"] = result
        self.send(msg)

    # ----- raw -----
    def send(self, msg):
        """Writes one message (a dict, or a str/bytes line sent as it is) followed by a newline."""
        if isinstance(msg, dict):
            line = json.dumps(msg, separators=(",", ":")).encode()
        elif isinstance(msg, str):
            line = msg.encode()
        else:
            line = bytes(msg)
        with self._write_lock:
            self._sock.sendall(line + b"\n")

    @property
    def closed(self):
        """Whether the broker closed the connection (or it was closed here)."""
        with self._cond:
            return self._closed

    def close(self):
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._reader.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read_loop(self):
        buf = b""
        try:
            while True:
                chunk = self._sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        self._dispatch(json.loads(line))
        except OSError:
            pass
        finally:
            with self._cond:
                self._closed = True
                self._cond.notify_all()

    def _dispatch(self, msg):
        if "method" in msg:
            self._incoming.put(msg)
            return
        with self._cond:
            self._responses[msg.get("id")] = msg
            self._cond.notify_all()


HOLD = object()  # a scripted answerer's policy result: keep the request, never reply


class ScriptedAnswerer(threading.Thread):
    """An answerer connection (scope all, label "scripted") that answers each request with
    `policy(params)`: a result, `{"error": {...}}`, or HOLD to keep it unanswered. A policy that raises
    fails the ask with the error, so a broken expectation fails the test. Subclasses record what
    arrives in `_on_request(msg)` and `_on_cancel(request_id)`, and call `start()`."""

    def __init__(self, path, name):
        super().__init__(daemon=True)
        self.conn = Conn(path)
        self.conn.initialize(name)
        self.conn.call("answerers/register", {"scope": "all", "label": "scripted"})
        self.policy = lambda params: None
        self.stopped = False

    def _on_request(self, msg):
        pass

    def _on_cancel(self, request_id):
        pass

    def run(self):
        while not self.stopped:
            try:
                msg = self.conn.next_incoming(timeout=0.2)
            except queue.Empty:
                continue
            if msg.get("method") == "$/cancelRequest":
                self._on_cancel(msg["params"]["id"])
            elif msg.get("method") == "user-questions/request":
                self._on_request(msg)
                try:
                    result = self.policy(msg["params"])
                except Exception as error:  # noqa: BLE001 - reported to the asker
                    traceback.print_exc()
                    result = {"error": {"code": -32603, "message": f"scripted answerer: {error!r}"}}
                if result is HOLD:
                    continue
                if isinstance(result, dict) and "error" in result:
                    self.conn.reply(msg, error=result["error"])
                else:
                    self.conn.reply(msg, result)

    def stop(self):
        self.stopped = True
        self.conn.close()

