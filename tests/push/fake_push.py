# tests/push/fake_push.py: a fake Web Push service on 127.0.0.1 for the desk's sender. It makes a
# phone's subscription keys (P-256, 16-byte secret) and a self-signed certificate, serves HTTPS,
# and for every POST checks the VAPID header (py-vapid's JWT check, the audience, the expiry) and
# decrypts the aes128gcm body with http-ece, both independent of the desk's Rust code. It answers
# the status its path starts with (/201/..., /404/..., /410/..., /429/...) and logs each push as a
# JSON line. Usage: fake_push.py DIR (writes DIR/config.json when ready, DIR/pushes.jsonl).
import base64
import datetime
import http.server
import json
import os
import ssl
import sys
import time

import http_ece
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from py_vapid import jwt as vapid_jwt


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


work = sys.argv[1]
phone_key = ec.generate_private_key(ec.SECP256R1())
phone_public = phone_key.public_key().public_bytes(
    serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
)
auth_secret = os.urandom(16)

tls_key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake push service")])
now = datetime.datetime.now(datetime.timezone.utc)
certificate = (
    x509.CertificateBuilder()
    .subject_name(name)
    .issuer_name(name)
    .public_key(tls_key.public_key())
    .serial_number(x509.random_serial_number())
    .not_valid_before(now - datetime.timedelta(minutes=5))
    .not_valid_after(now + datetime.timedelta(days=1))
    .add_extension(x509.SubjectAlternativeName([x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]), critical=False)
    .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    .sign(tls_key, hashes.SHA256())
)
with open(os.path.join(work, "cert.pem"), "wb") as f:
    f.write(certificate.public_bytes(serialization.Encoding.PEM))
with open(os.path.join(work, "key.pem"), "wb") as f:
    f.write(tls_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
with open(os.path.join(work, "cert.der"), "wb") as f:
    f.write(certificate.public_bytes(serialization.Encoding.DER))

log = open(os.path.join(work, "pushes.jsonl"), "a", buffering=1)


def check_vapid(header, audience):
    """The claims of a valid `vapid t=<jwt>, k=<key>` header for `audience`, else raises."""
    scheme, _, rest = header.partition(" ")
    assert scheme == "vapid", f"scheme {scheme!r}"
    parts = dict(p.strip().split("=", 1) for p in rest.split(","))
    claims = vapid_jwt.decode(parts["t"], parts["k"])
    assert claims["aud"] == audience, f"aud {claims['aud']!r} for {audience!r}"
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600, f"exp {claims['exp']}"
    return claims


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = int(self.path.strip("/").split("/")[0])
        entry = {"path": self.path, "status": status}
        try:
            entry["claims"] = check_vapid(self.headers["Authorization"], f"https://127.0.0.1:{port}")
            assert self.headers["Content-Encoding"] == "aes128gcm"
            assert int(self.headers["TTL"]) > 0
            plain = http_ece.decrypt(body, private_key=phone_key, auth_secret=auth_secret, version="aes128gcm")
            entry["payload"] = json.loads(plain)
        except Exception as error:  # the check fails: the push is logged as refused
            entry["error"] = repr(error)
            status = 400
        log.write(json.dumps(entry) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
port = server.server_address[1]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(work, "cert.pem"), os.path.join(work, "key.pem"))
server.socket = context.wrap_socket(server.socket, server_side=True)
config = {"base": f"https://127.0.0.1:{port}", "p256dh": b64(phone_public), "auth": b64(auth_secret), "root": os.path.join(work, "cert.der")}
with open(os.path.join(work, "config.json.tmp"), "w") as f:
    json.dump(config, f)
os.rename(os.path.join(work, "config.json.tmp"), os.path.join(work, "config.json"))
server.serve_forever()
