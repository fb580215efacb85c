"""askdesk desktop tests: a minimal W3C WebDriver client over plain HTTP (urllib), enough to drive tauri-driver."""
import base64
import http.client
import json
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(Exception):
    pass


def element_id(reference):
    """The id in a web element reference (W3C key, or the legacy "ELEMENT" key)."""
    if isinstance(reference, dict):
        for key in (ELEMENT, "ELEMENT"):
            if key in reference:
                return reference[key]
    raise WebDriverError(f"not an element reference: {reference!r}")


class Session:
    """One WebDriver session: tauri-driver starts the app for it and ends the app with it."""

    def __init__(self, url, application, timeout=60, args=()):
        self.url = url.rstrip("/")
        args = list(args)
        # A dropped window ends the WebDriver session with it, and a window left hidden by one test
        # would be dropped in the middle of a slower one that follows. The drop is tested where it is
        # meant to happen: by tests that start their app with a short --drop-window-after, and without
        # WebDriver by the lifecycle suite.
        if not any(a.startswith("--drop-window-after") for a in args):
            args.append("--drop-window-after=never")
        options = {"application": application, "args": args}
        caps = {"capabilities": {"alwaysMatch": {"browserName": "wry", "tauri:options": options}}}
        deadline = time.time() + timeout
        while True:
            try:
                value = self._raw("POST", "/session", caps)
                break
            except (urllib.error.URLError, ConnectionError) as e:
                if time.time() > deadline:
                    raise WebDriverError(f"no WebDriver session: {e}")
                time.sleep(0.5)
        self.id = value["sessionId"]

    def _raw(self, method, path, body=None):
        # tauri-driver forwards over pooled keep-alive connections that WebKitWebDriver may have
        # dropped; such a request never reached the driver, so sending it again is safe.
        for attempt in range(4):
            try:
                return self._once(method, path, body)
            except (http.client.RemoteDisconnected, ConnectionResetError) as e:
                if attempt == 3:
                    raise WebDriverError(f"{method} {path}: {e}")
                time.sleep(0.3)
            except WebDriverError as e:
                if attempt == 3 or "Connection reset" not in str(e) and "connection error" not in str(e):
                    raise
                time.sleep(0.3)

    def _once(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                payload = json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            raise WebDriverError(f"{method} {path}: HTTP {e.code}: {text[:500]}")
        return payload.get("value")

    def cmd(self, method, path, body=None):
        return self._raw(method, f"/session/{self.id}{path}", body)

    # ----- elements -----
    def find_all(self, css):
        return [element_id(e) for e in self.cmd("POST", "/elements", {"using": "css selector", "value": css})]

    def find(self, css):
        found = self.find_all(css)
        if not found:
            raise WebDriverError(f"no element matches {css!r}")
        return found[0]

    def wait_for(self, css, timeout=10):
        deadline = time.time() + timeout
        while True:
            found = self.find_all(css)
            if found:
                return found[0]
            if time.time() > deadline:
                raise WebDriverError(f"timed out waiting for {css!r}")
            time.sleep(0.2)

    def click(self, element):
        try:
            self.cmd("POST", f"/element/{element}/click", {})
        except WebDriverError as error:
            if "intercepted" not in str(error):
                raise
            # Name what lay over the element's centre, so a failure says what covered it.
            over = self.js("const r = arguments[0].getBoundingClientRect();"
                           "const x = r.left + r.width / 2, y = r.top + r.height / 2;"
                           "const at = document.elementFromPoint(x, y);"
                           "return [x, y, innerWidth, innerHeight, at ? at.outerHTML.slice(0, 200) : null];",
                           {ELEMENT: element})
            raise WebDriverError(f"{error}; at its centre {over}") from None

    def type(self, element, text):
        self.wait_for_keys()
        self.cmd("POST", f"/element/{element}/value", {"text": text})

    def text(self, element):
        return self.cmd("GET", f"/element/{element}/text")

    # ----- script, keys, window -----
    def js(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def until(self, script, *args, timeout=10, message=None):
        deadline = time.time() + timeout
        while True:
            value = self.js(script, *args)
            if value:
                return value
            if time.time() > deadline:
                raise WebDriverError(message or f"timed out waiting for script: {script[:80]}")
            time.sleep(0.2)

    def wait_for_keys(self):
        """A page just shown ignores keys for a moment (ui/app.js): waits until it takes them."""
        self.until("return document.documentElement.dataset.keys === 'taken'",
                   message="the page did not start taking keys")

    def keys(self, *keys, modifier=None):
        """Presses each key in turn, optionally while holding a modifier (e.g. '\\ue009' Control)."""
        self.wait_for_keys()
        actions = []
        if modifier:
            actions.append({"type": "keyDown", "value": modifier})
        for key in keys:
            actions += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        if modifier:
            actions.append({"type": "keyUp", "value": modifier})
        self.cmd("POST", "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})
        self.cmd("DELETE", "/actions")

    def window_handles(self):
        return self.cmd("GET", "/window/handles")

    def switch_to_window(self, handle):
        self.cmd("POST", "/window", {"handle": handle})

    def window_rect(self):
        return self.cmd("GET", "/window/rect")

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.cmd("GET", "/screenshot")))

    def quit(self):
        try:
            self.cmd("DELETE", "")
        except Exception:  # noqa: BLE001 - the app may already have quit
            pass


CONTROL = "\ue009"
ENTER = "\ue007"
ESCAPE = "\ue00c"
