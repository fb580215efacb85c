"""tests/remote/phone.py: what the phone-page suite drives (stdlib only).

- `Browser`: headless Chromium (Debian's) standing in for the phone, driven by raw CDP over
  `--remote-debugging-pipe`: a fresh profile, a 390x844 touch screen, its process group killed at
  teardown. It trusts the desk's certificate authority only through the test HOME's NSS database
  (`certutil`), never by switching certificate checks off. The desktop suite's pairing test
  (tests/desktop/test_devices.py) uses it too, with the authority the desktop app's remote keeps.
- `Desk`: a real `askdesk serve` on a temporary socket (or the desktop app hosting the broker there,
  for the benchmark) and `askdesk remote --listen 127.0.0.1:PORT --pair`, whose pairing URL is read
  from its output and whose code is typed into its stdin.
"""
import base64
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "pyclient"))
from askdesk_client import Conn  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/lib/chromium/chromium")
BINARY = os.environ.get("ASKDESK_CLI_BIN", os.path.join(REPO, "target", "debug", "askdesk"))
# How long any one expected change may take before the test fails (a ceiling, never a pause).
PATIENCE = 30


def until(what, check, patience=PATIENCE):
    """Calls `check` until it returns something truthy and returns it; fails after `patience`."""
    deadline = time.time() + patience
    while True:
        value = check()
        if value:
            return value
        if time.time() > deadline:
            raise AssertionError(f"timed out: {what}")
        time.sleep(0.05)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# How `askdesk remote` starts its lines in each language the suite runs the desk in (cli.ftl).
SAYS = {
    "en": {"serving": "serving phones at", "open": "open on the phone"},
    "zh-CN": {"serving": "正在为手机提供服务", "open": "请在"},
}


class Desk:
    """A broker and `askdesk remote` in a private temporary home."""

    def __init__(self, language="en"):
        self.language = language
        self.dir = tempfile.mkdtemp(prefix="askdesk-remote-")
        os.chmod(self.dir, 0o700)
        self.home = os.path.join(self.dir, "home")
        os.makedirs(self.home)
        self.socket = os.path.join(self.dir, "run", "askdesk.sock")
        self.env = {
            **os.environ,
            "HOME": self.home,
            "ASKDESK_SOCKET": self.socket,
            "XDG_DATA_HOME": os.path.join(self.dir, "data"),
            "XDG_CONFIG_HOME": os.path.join(self.dir, "config"),
            "XDG_RUNTIME_DIR": self.dir,
            "ASKDESK_LOG": "info",
            # The language the desk runs in, and so the phone's (whatever this machine's LANG).
            "ASKDESK_LANG": language,
        }
        self.port = free_port()
        self.origin = f"https://127.0.0.1:{self.port}"
        self.broker = None
        self.remote = None
        self.lines = queue.Queue()
        self.start_broker()

    def log(self, name):
        return open(os.path.join(self.dir, name), "ab")

    def start_broker(self, app=None):
        """The broker: `askdesk serve`, or the desktop app at `app` hosting it (on the caller's
        display and session bus), whose debug log, with each request its page painted, is
        `self.broker_log`."""
        if app:
            command, env, log, name = [app], dict(self.env, ASKDESK_LOG="info,askdesk_desktop=debug"), \
                "desktop.log", "the desktop app"
        else:
            command, env, log, name = [BINARY, "serve"], self.env, "broker.log", "askdesk serve"
        self.broker_log = os.path.join(self.dir, log)
        # A session of its own: the desktop app's web processes end with it.
        self.broker = subprocess.Popen(command, env=env, stdout=self.log(log), stderr=subprocess.STDOUT,
                                       start_new_session=True)

        def up():
            assert self.broker.poll() is None, f"{name} exited with {self.broker.returncode}"
            try:
                Conn(self.socket, timeout=2).close()
                return True
            except OSError:
                return False
        until(f"{name} opens its socket", up)

    def stop_broker(self):
        self.broker.send_signal(signal.SIGTERM)
        self.broker.wait(PATIENCE)

    def start_remote(self, *extra, pair=True):
        """`askdesk remote` on this desk's port; returns the pairing URL when `pair`."""
        args = [BINARY, "remote", "--listen", f"127.0.0.1:{self.port}", *extra]
        if pair:
            args.append("--pair")
        self.lines = queue.Queue()
        self.remote = subprocess.Popen(args, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=self.log("remote.log"), text=True, bufsize=1)
        lines = self.lines
        stdout = self.remote.stdout

        def read():
            for line in stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)
        threading.Thread(target=read, daemon=True).start()
        said = SAYS[self.language]
        self.expect_line(said["serving"])
        if pair:
            return re.search(r"https://\S+", self.expect_line(said["open"])).group(0)
        return None

    def expect_line(self, start):
        """The remote's next line of output, which must start with `start`."""
        try:
            line = self.lines.get(timeout=PATIENCE)
        except queue.Empty:
            raise AssertionError(f"askdesk remote printed nothing; expected {start!r}\n{self.remote_log()}")
        assert line is not None, f"askdesk remote ended; expected {start!r}\n{self.remote_log()}"
        assert line.startswith(start), f"{line!r} does not start with {start!r}"
        return line

    def type_code(self, code):
        self.remote.stdin.write(code + "\n")
        self.remote.stdin.flush()

    def remote_log(self):
        with open(os.path.join(self.dir, "remote.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def authority_der(self):
        with open(os.path.join(self.dir, "data", "askdesk", "remote", "ca.der"), "rb") as f:
            return f.read()

    def cli(self, *args):
        return subprocess.run([BINARY, *args], env=self.env, capture_output=True, text=True, timeout=PATIENCE)

    def connect(self, name="test"):
        conn = Conn(self.socket)
        conn.initialize(name)
        return conn

    def stop_remote(self):
        if self.remote and self.remote.poll() is None:
            self.remote.send_signal(signal.SIGTERM)
            self.remote.wait(PATIENCE)

    def close(self):
        if self.remote and self.remote.poll() is None:
            self.remote.kill()
            self.remote.wait(PATIENCE)
        if self.broker:
            try:
                os.killpg(self.broker.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.broker.wait(PATIENCE)
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)


class CdpError(Exception):
    pass


class Browser:
    """Headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, desk, dark=False):
        self.dir = tempfile.mkdtemp(prefix="askdesk-phone-")
        home = os.path.join(self.dir, "home")
        nssdb = os.path.join(home, ".pki", "nssdb")
        os.makedirs(nssdb)
        ca = os.path.join(self.dir, "ca.der")
        with open(ca, "wb") as f:
            f.write(desk.authority_der())
        subprocess.run(["certutil", "-d", f"sql:{nssdb}", "-N", "--empty-password"], check=True)
        subprocess.run(["certutil", "-d", f"sql:{nssdb}", "-A", "-t", "C,,", "-n", "askdesk-test-ca", "-i", ca],
                       check=True)
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()

        def pipes():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--remote-debugging-pipe",
             f"--user-data-dir={os.path.join(self.dir, 'profile')}", "--no-first-run",
             "--no-default-browser-check", "--disable-gpu", "--lang=en-US", "about:blank"],
            env={**os.environ, "HOME": home, "TZ": os.environ.get("TZ", "UTC")},
            stdout=open(os.path.join(self.dir, "chromium.log"), "wb"), stderr=subprocess.STDOUT,
            preexec_fn=pipes, pass_fds=(3, 4), start_new_session=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._out = os.fdopen(to_browser_w, "wb", buffering=0)
        self._in = os.fdopen(from_browser_r, "rb", buffering=0)
        self._ids = iter(range(1, 1 << 30))
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._results = {}
        self.events = []
        threading.Thread(target=self._read, daemon=True).start()
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        for method, params in [
            ("Page.enable", {}), ("Runtime.enable", {}),
            ("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}),
            ("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5}),
        ]:
            self.page(method, params)
        self.color_scheme("dark" if dark else "light")

    def color_scheme(self, scheme):
        """What `prefers-color-scheme` says from now on: "light" or "dark"."""
        self.page("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})

    def _read(self):
        buffer = b""
        while True:
            chunk = self._in.read(65536)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                with self._cond:
                    if "id" in message:
                        self._results[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._cond.notify_all()
        with self._cond:
            self._results[None] = {"error": {"message": "the browser closed its pipe"}}
            self._cond.notify_all()

    def call(self, method, params=None, session=None):
        number = next(self._ids)
        message = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        with self._lock:
            self._out.write(json.dumps(message).encode() + b"\0")
        with self._cond:
            ok = self._cond.wait_for(lambda: number in self._results or None in self._results, PATIENCE)
            if not ok:
                raise CdpError(f"{method}: no reply")
            result = self._results.pop(number, None) or self._results[None]
        if "error" in result:
            raise CdpError(f"{method}: {result['error'].get('message')}")
        return result["result"]

    def page(self, method, params=None):
        return self.call(method, params, self.session)

    def evaluate(self, expression, await_promise=True):
        result = self.page("Runtime.evaluate", {"expression": expression, "awaitPromise": await_promise,
                                                "returnByValue": True, "userGesture": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise CdpError(f"{expression[:80]}: {details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def goto(self, url):
        """Opens `url`; returns once the new document loaded (Page.navigate replies once it committed)."""
        navigated = self.page("Page.navigate", {"url": url})
        if navigated.get("errorText"):
            raise CdpError(f"{url}: {navigated['errorText']}")
        until(f"{url} loads", lambda: self.evaluate("document.readyState") == "complete")

    def text(self, selector="body"):
        return self.evaluate(f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''")

    def wait_text(self, needle, selector="body"):
        return until(f"{needle!r} shown in {selector}; the page shows: {self.text()!r}",
                     lambda: needle in self.text(selector))

    def tap(self, selector):
        """A finger on the middle of the element (scrolled into view first): touch start and end."""
        box = until(f"{selector} is on the page", lambda: self.evaluate(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el || el.disabled) return null;
            el.scrollIntoView({{block: 'center'}});
            const r = el.getBoundingClientRect();
            return r.width && r.height ? {{x: r.x + r.width / 2, y: r.y + r.height / 2}} : null;
        }})()"""))
        point = {"x": box["x"], "y": box["y"]}
        self.page("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
        self.page("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    def type(self, selector, text):
        self.tap(selector)
        until(f"{selector} has the focus", lambda: self.evaluate(
            f"document.activeElement === document.querySelector({json.dumps(selector)})"))
        self.page("Input.insertText", {"text": text})

    def choose_files(self, selector, paths):
        """Picks `paths` in the file input `selector`, as the phone's file or camera chooser would hand them over."""
        root = self.page("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = self.page("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        assert node, f"no {selector} on the page"
        self.page("DOM.setFileInputFiles", {"nodeId": node, "files": list(paths)})

    def grant_notifications(self, origin):
        """The page may show notifications, as if the person had allowed them."""
        self.call("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]})

    def stub_push(self, subscribe):
        """Replaces `PushManager.prototype.subscribe` in every document from now on (headless Chromium
        has no push service to reach): `subscribe` is the body of an async function of `options`
        that may use `b64u(bytes)`. The application server keys it was called with collect in
        `window.pushKeys`."""
        self.page("Page.addScriptToEvaluateOnNewDocument", {"source": rf"""(() => {{
            if (!window.PushManager) return;
            const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
              .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
            window.pushKeys = [];
            PushManager.prototype.subscribe = async function (options) {{
              window.pushKeys.push(b64u(options.applicationServerKey));
              {subscribe}
            }};
        }})();"""})

    def deliver_push(self, origin, notice):
        """Drives `notice` (JSON) into the page's service worker as a push message and returns the
        worker's message once it showed it (read earlier, `getNotifications()` loses it)."""
        until("the service worker is active", lambda: self.evaluate(
            "navigator.serviceWorker.ready.then((r) => Boolean(r.active))"))
        self.page("ServiceWorker.enable")
        registration = until("the service worker's registration is reported", lambda: next(
            (r["registrationId"] for e in reversed(self.events)
             if e.get("method") == "ServiceWorker.workerRegistrationUpdated"
             for r in e["params"]["registrations"]
             if r["scopeURL"].startswith(origin) and not r.get("isDeleted")), None))
        self.evaluate("""(() => {
            if (window.notified) return;
            window.notified = [];
            navigator.serviceWorker.addEventListener('message', (e) => window.notified.push(e.data));
        })()""")
        seen = self.evaluate("window.notified.length")
        self.page("ServiceWorker.deliverPushMessage",
                  {"origin": origin, "registrationId": registration, "data": json.dumps(notice)})
        until("the service worker says it showed the notice", lambda: self.evaluate("window.notified.length") > seen)
        return self.evaluate(f"window.notified[{seen}]")

    def notifications(self):
        """The page's notifications: [{title, body, tag}]."""
        return self.evaluate("""navigator.serviceWorker.ready
            .then((r) => r.getNotifications())
            .then((list) => list.map((n) => ({ title: n.title, body: n.body, tag: n.tag })))""")

    def screenshot(self, path):
        data = self.page("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(PATIENCE)
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)


def open_pairing(browser, url, name):
    """Opens pairing `url` in `browser` and asks to pair as `name`."""
    browser.goto(url)
    browser.wait_text("Pair with this desk")
    browser.evaluate(f"document.getElementById('device-name').value = {json.dumps(name)}")
    browser.tap("#pair")


def pair_page(desk, browser, url, name):
    """Pairs `browser` through the page at pairing `url`, with the code typed at `desk`'s
    `askdesk remote --pair`, until the page says it is connected."""
    open_pairing(browser, url, name)
    code = until("the page shows the code", lambda: browser.evaluate(
        "(document.getElementById('pair-code') || {}).textContent"))
    desk.expect_line(f'"{name}" asks to pair')
    desk.type_code(code.replace(" ", ""))
    desk.expect_line(f'paired "{name}"')
    browser.wait_text(f"Connected as {name}", "#status")

