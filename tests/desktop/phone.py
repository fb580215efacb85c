"""askdesk desktop tests: a phone played in Python, as docs/remote.md describes it (the Rust stand-in in
crates/askdesk-remote/tests/remote/phone.rs plays the same part for the remote's own tests).

It trusts the desk the way a phone that installed askdesk's authority does (the authority's certificate
from the remote's directory, host name checked), and checks the served certificate's fingerprint
against the one in the pairing URL. It pairs (a P-256 key, the HMAC proof of the URL's token), opens
the device socket (a minimal WebSocket client: masked text frames out, unmasked frames in), says hello
with a signed challenge, and answers a request with a signed answer.
"""
import base64
import hashlib
import hmac
import json
import os
import socket
import ssl
import struct
import urllib.parse

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

REMOTE_DIR = os.path.join(os.environ["XDG_DATA_HOME"], "askdesk", "remote")


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def canonical(value):
    """The canonical JSON docs/remote.md specifies, for the ASCII keys and integers used here."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tls(host, port, timeout=10):
    """A TLS connection that trusts askdesk's own authority only, with the host name checked."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with open(os.path.join(REMOTE_DIR, "ca.der"), "rb") as f:
        context.load_verify_locations(cadata=f.read())
    raw = socket.create_connection((host, port), timeout=timeout)
    return context.wrap_socket(raw, server_hostname=host)


class Phone:
    def __init__(self, name):
        self.name = name
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.public = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)

    def sign(self, message):
        r, s = decode_dss_signature(self.key.sign(message, ec.ECDSA(hashes.SHA256())))
        return b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def claim(self, url):
        """Claims the pairing URL; returns (HTTP status, JSON body, the code this phone shows)."""
        parsed = urllib.parse.urlsplit(url)
        version, token, fingerprint = parsed.fragment.split(".")
        assert version == "v1", url
        token = unb64(token)
        body = json.dumps({"publicKey": b64(self.public), "proof": b64(hmac.new(token, self.public, "sha256").digest()),
                           "name": self.name}).encode()
        origin = f"https://{parsed.netloc}"
        with tls(parsed.hostname, parsed.port) as conn:
            served = hashlib.sha256(conn.getpeercert(binary_form=True)).digest()
            assert b64(served) == fingerprint, "the served certificate is not the one the QR code names"
            conn.sendall(f"POST /pair HTTP/1.1\r\nHost: {parsed.netloc}\r\nOrigin: {origin}\r\n"
                         f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                         .encode() + body)
            response = read_all(conn)
        head, _, payload = response.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        mac = hmac.new(token, b"askdesk pairing code v1" + self.public, "sha256").digest()
        code = f"{struct.unpack('>I', mac[:4])[0] % 1_000_000:06d}"
        return status, json.loads(payload or b"{}"), code

    def connect(self, origin):
        """Opens the device socket and says hello; returns the socket after the welcome (or the refusal)."""
        sock = Socket(origin)
        challenge = sock.receive()
        assert challenge["type"] == "challenge", challenge
        hello = canonical({"challenge": challenge["challenge"], "kind": "askdesk/hello", "origin": origin, "v": 1})
        sock.send({"type": "hello", "publicKey": b64(self.public), "signature": self.sign(hello.encode())})
        sock.greeting = sock.receive()
        return sock

    def answer(self, sock, request, answer):
        """Sends a signed answer to `request` (as the socket delivered it)."""
        digest = hashlib.sha256(canonical({
            "agent": request["agent"]["id"] if request.get("agent") else None, "id": request["id"],
            "key": request["key"], "kind": "askdesk/request", "questions": request["questions"], "v": 1,
        }).encode()).digest()
        nonce = b64(os.urandom(16))
        message = canonical({"answer": answer, "digest": b64(digest), "kind": "askdesk/answer", "nonce": nonce, "v": 1})
        sock.send({"type": "answer", "id": request["id"], "nonce": nonce, "answer": answer, "digest": b64(digest),
                   "signature": self.sign(message.encode())})


def read_all(conn):
    chunks = []
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class Socket:
    """A device's WebSocket: JSON text messages; `receive()` is None once the remote closed it."""

    def __init__(self, origin, timeout=20):
        parsed = urllib.parse.urlsplit(origin)
        self.conn = tls(parsed.hostname, parsed.port, timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.conn.sendall(f"GET /socket HTTP/1.1\r\nHost: {parsed.netloc}\r\nOrigin: {origin}\r\n"
                          f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                          "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        self.buffer = b""
        head = self._until(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        self.closed_with = None

    def _until(self, mark):
        while mark not in self.buffer:
            chunk = self.conn.recv(65536)
            if not chunk:
                raise ConnectionError("the remote closed the connection")
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(mark)
        return head

    def _exactly(self, n):
        while len(self.buffer) < n:
            chunk = self.conn.recv(65536)
            if not chunk:
                raise ConnectionError("the remote closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, value, opcode=1):
        payload = json.dumps(value).encode() if opcode == 1 else value
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.conn.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        """The next JSON message; None when the remote closed the socket (its close code in `closed_with`)."""
        while True:
            try:
                first, second = self._exactly(2)
            except (ConnectionError, ssl.SSLError, OSError):
                return None
            opcode, n = first & 0x0F, second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exactly(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exactly(8))[0]
            payload = self._exactly(n)
            if opcode == 8:
                self.closed_with = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                return None
            if opcode == 9:
                self.send(payload, opcode=10)
                continue
            if opcode == 1:
                return json.loads(payload)

    def close(self):
        try:
            self.conn.close()
        except OSError:
            pass
