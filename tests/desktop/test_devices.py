"""askdesk desktop tests: "Answer from your phone" and the Devices view.

The switch starts the remote in the app (a TLS connection to the chosen address and port succeeds) and
stops it (refused); "Add a phone" shows a QR code, read here from a screenshot of the window with
zbarimg, whose URL carries the token in its fragment and pairs a phone played in Python (phone.py),
and only the desk's "Codes match" stores it; headless Chromium (tests/remote/phone.py's `Browser`,
trusting askdesk's authority through NSS) pairs from that URL, the code it shows confirmed at the
desk, and answers an agent's question from its page, once, and with a picture the agent receives
re-encoded; a used pairing URL is refused; Revoke
closes the device's socket at once; "Allow a passkey" opens the phone's window to register one; a
request the phone answers says "Answered on <device>" and History names the device; a permission
prompt is not offered to a phone whose scope stops below it; with Chinese chosen at the desk, the
Devices view's problem with the remote and the words the remote serves the phone are Chinese.
Every test leaves the remote off and no device paired.
"""
import base64
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import types

import pytest

from harness import HERE, answer_of, expect_error, journal_lines, journal_record, outcome_of, png
from phone import REMOTE_DIR, Phone, read_all, tls
from test_dialog import speak

ADDRESS = "127.0.0.1"


def load_browser_phone():
    """tests/remote/phone.py, whose `Browser` is headless Chromium standing in for the phone; loaded
    by its path, since this folder's phone.py holds the name `phone`."""
    spec = importlib.util.spec_from_file_location("browser_phone", os.path.join(HERE, "..", "remote", "phone.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


browser_phone = load_browser_phone()


def free_port():
    with socket.socket() as s:
        s.bind((ADDRESS, 0))
        return s.getsockname()[1]


def open_devices(ctx):
    page = ctx.page
    before = page.js("return Number(document.getElementById('view-devices').dataset.loaded || 0)")
    page.click(page.find("#nav-devices"))
    page.until("return Number(document.getElementById('view-devices').dataset.loaded || 0) > arguments[0]", before,
               message="the Devices view never loaded")


def loads(ctx):
    return ctx.page.js("return Number(document.getElementById('view-devices').dataset.loaded || 0)")


def turn_on(ctx, port):
    """Chooses 127.0.0.1 and `port`, then turns the switch on."""
    page = ctx.page
    open_devices(ctx)
    page.js("document.getElementById('phone-address').value = arguments[0];"
            "document.getElementById('phone-port').value = arguments[1];", ADDRESS, str(port))
    page.click(page.find("#phone-enabled"))


def switch_on(ctx, port):
    """Turns the switch on with 127.0.0.1 and `port` (`turn_on`); returns the origin phones use."""
    page = ctx.page
    turn_on(ctx, port)
    status = page.until("const s = document.getElementById('phone-status'); return s && s.textContent",
                        message="the remote never said it serves phones")
    origin = f"https://{ADDRESS}:{port}"
    assert status == f"Serving phones at {origin}", status
    return origin


def switch_off(ctx):
    before = loads(ctx)
    ctx.page.click(ctx.page.find("#phone-enabled"))
    ctx.page.until("return Number(document.getElementById('view-devices').dataset.loaded || 0) > arguments[0]"
                   " && !document.getElementById('phone-enabled').checked && !document.getElementById('phone-status')",
                   before, message="the switch did not turn off")


def connects(port):
    """False when nothing listens on the port; True when a TLS connection to it succeeds, trusting
    askdesk's authority (anything else fails the test)."""
    try:
        socket.create_connection((ADDRESS, port), timeout=10).close()
    except ConnectionRefusedError:
        return False
    with tls(ADDRESS, port):
        return True


@pytest.fixture
def phone_off(ctx):
    """Leaves the remote off and no device paired, whatever the test did."""
    yield
    ctx.page.js("return window.__TAURI__.core.invoke('set_phone', {settings: {enabled: false, address: null,"
                " port: 8443, certificate: null, key: null}})")
    path = os.path.join(REMOTE_DIR, "devices.json")
    if os.path.exists(path):
        os.remove(path)
    ctx.page.js("document.getElementById('pair-modal')?.remove(); document.getElementById('nav-queue').click()")


def qr_url(ctx):
    """The URL of the QR code the window shows, read from a screenshot of it."""
    ctx.page.wait_for("#pair-modal svg.qr")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "window.png")
        ctx.page.screenshot(path)
        read = subprocess.run(["zbarimg", "--raw", "-q", path], capture_output=True, text=True)
    assert read.returncode == 0, f"no QR code in the window: {read.stderr}"
    # The authority's QR code stays readable behind the dialog's backdrop.
    pairing = [line for line in read.stdout.splitlines() if "/pair#" in line]
    assert len(pairing) == 1, read.stdout
    return pairing[0]


def offer(ctx, origin):
    """Add a phone → the URL of the QR code the window shows, for this desk's `origin`."""
    ctx.page.click(ctx.page.find("#add-phone"))
    url = qr_url(ctx)
    assert url.startswith(f"{origin}/pair#v1."), url
    return url


def confirm_at_desk(ctx, name, code, shot=None):
    """The desk shows the code the phone `name` shows (`code`, six digits); the person sees they
    match and confirms: the desk lists the phone."""
    page = ctx.page
    shown = page.until("const c = document.getElementById('pair-code'); return c && c.textContent",
                       message="the desk never showed the code")
    assert shown.replace(" ", "") == code, (shown, code)
    if shot:
        ctx.shot(f"{shot}-code", x_window=True)
    page.click(page.find("#pair-match"))
    page.until("return !document.getElementById('pair-modal') &&"
               " [...document.querySelectorAll('.device-name')].some((n) => n.textContent === arguments[0])", name,
               message=f"{name} is not in the list")


def pair(ctx, origin, name, shot=None):
    """Add a phone → QR → the phone claims it → the desk shows the phone's code → Codes match."""
    url = offer(ctx, origin)
    if shot:
        ctx.shot(f"{shot}-qr", x_window=True)
    phone = Phone(name)
    status, body, code = phone.claim(url)
    assert (status, body) == (202, {"state": "confirm-at-desk"}), (status, body)
    confirm_at_desk(ctx, name, code, shot)
    return phone, url


def test_the_switch_serves_phones_on_the_chosen_address_and_stops(ctx, phone_off):
    port = free_port()
    open_devices(ctx)
    page = ctx.page
    assert not page.js("return document.getElementById('phone-enabled').checked"), "on by default"
    offered = page.js("return [...document.querySelectorAll('#phone-address option')].map((o) => o.value)")
    assert ADDRESS in offered and "0.0.0.0" not in offered and "::" not in offered, offered
    assert not connects(port), "something listens before the switch is on"
    assert page.js("return document.getElementById('add-phone').disabled"), "pairing offered while off"

    origin = switch_on(ctx, port)
    assert connects(port), "the remote does not serve TLS on the chosen port"
    # askdesk's own authority: the desk says plainly that the phone must install it, with its QR code.
    trust = page.until("const t = document.getElementById('phone-trust'); return t && t.textContent",
                       message="no word that a phone cannot trust the desk yet")
    assert "does not trust this desk yet" in trust and f"{origin}/ca" in trust, trust
    assert page.find_all("#phone-trust svg.qr")
    ctx.shot("devices-phone-settings", x_window=True)

    switch_off(ctx)
    assert not connects(port), "the remote still listens after the switch is off"


def test_a_phone_pairs_through_the_qr_code_and_the_code_confirmed_at_the_desk(ctx, phone_off):
    origin = switch_on(ctx, free_port())
    phone, url = pair(ctx, origin, "Test Pixel", shot="devices-pairing")
    # Paired: the socket welcomes the device by the name the desk stored.
    sock = phone.connect(origin)
    try:
        # Served by address: no passkeys, though the pairing opened the desk's window for one.
        assert sock.greeting == {"type": "welcome", "device": "Test Pixel", "passkey": {
            "available": False, "registered": False, "allowed": True}}, sock.greeting
    finally:
        sock.close()
    # The URL is single use: a second phone with the same token is refused.
    status, body, _ = Phone("Intruder").claim(url)
    assert (status, body["error"]) == (409, "already-used"), (status, body)
    open_devices(ctx)
    row = ctx.page.js("return document.querySelector('.device[data-device=\"Test Pixel\"]').textContent")
    assert "paired " in row and "last seen " in row, row
    assert ctx.page.js("return document.querySelectorAll('.device').length") == 1, "the intruder was listed"
    ctx.shot("devices-list", x_window=True)


def authority_der():
    """askdesk's own authority, as the remote in the app keeps it (what the phone installs)."""
    with open(os.path.join(REMOTE_DIR, "ca.der"), "rb") as f:
        return f.read()


def chromium_paired(ctx, name):
    """Headless Chromium paired as `name` from the QR code in the window, confirmed at the desk and
    connected; the caller closes it."""
    chromium = browser_phone.CHROMIUM
    assert os.access(chromium, os.X_OK), \
        f"no Chromium at {chromium}: scripts/setup.sh installs Debian's chromium (CHROMIUM names another)"
    assert shutil.which("certutil"), "no certutil: scripts/setup.sh installs libnss3-tools"
    origin = switch_on(ctx, free_port())
    url = offer(ctx, origin)
    browser = browser_phone.Browser(types.SimpleNamespace(authority_der=authority_der))
    try:
        browser_phone.open_pairing(browser, url, name)
        # Served over TLS the browser trusts: a secure context on the desk's origin.
        assert browser.evaluate("window.isSecureContext && location.origin") == origin
        code = browser_phone.until("the page shows the code", lambda: browser.evaluate(
            "(document.getElementById('pair-code') || {}).textContent"))
        assert re.fullmatch(r"\d{3} \d{3}", code), code
        confirm_at_desk(ctx, name, code.replace(" ", ""))
        browser.wait_text(f"Connected as {name}", "#status")
    except BaseException:
        browser.close()
        raise
    return browser


def test_chromium_pairs_from_the_qr_in_the_window_and_answers_an_agent_once(ctx, phone_off):
    """Headless Chromium is the phone (tests/remote's Browser: a 390x844 touch screen, a fresh
    profile, askdesk's authority trusted through its own NSS database, certificate checks on): it
    opens the URL read from the QR code in a screenshot of the window, shows the code the desk
    shows, and is paired once the person confirms at the desk; a question an agent asks is then
    answered by touching the page: the agent has that answer, the journal records it once, by the
    phone, and the desk says where it was answered."""
    name = "Chromium phone"
    browser = chromium_paired(ctx, name)
    try:
        page = ctx.page
        page.click(page.find("#nav-queue"))
        question = "Ship the release from the phone?"
        _, _, outcome = ctx.ask([{"id": "ship", "question": question,
                                  "options": [{"label": "Ship"}, {"label": "Wait"}]}], agent="coder")
        # Both surfaces of the person show it: the desk's dialog and the phone's page.
        ctx.show("ship")
        browser.wait_text(question, ".request")
        browser.tap('[data-question=ship] [data-label="Wait"]')
        browser.tap(".request .send")
        where = page.until("const v = document.getElementById('view-elsewhere');"
                           " return !v.hidden && document.getElementById('elsewhere-where').textContent",
                           message="the desk never said the request was answered elsewhere")
        assert where == f"Answered on {name}", where
        browser.wait_text("Sent", ".request .note")
    finally:
        browser.close()
    assert answer_of(outcome()) == {"answers": [{"id": "ship", "selected": ["Wait"]}]}
    assert journal_record(question)["answerer"] == f"phone:{name}"
    records = [r for r in map(json.loads, journal_lines()) if r["questions"][0]["question"] == question]
    assert len(records) == 1, records
    # Nothing is left at the desk to answer it a second time.
    ctx.wait_queue(0)


def test_a_picture_answered_on_the_phone_reaches_the_agent_through_the_app(ctx, phone_off, tmp_path):
    """The remote hosted in the app: the phone picks a picture for Other; the agent gets it re-encoded as
    a PNG, as a picture answered at the desk, and History shows it with the answer."""
    name = "Chromium phone"
    shot = tmp_path / "shot.png"
    shot.write_bytes(base64.b64decode(png(48, 32, (30, 140, 90))["data"]))
    browser = chromium_paired(ctx, name)
    try:
        question = "Which crop should the banner use?"
        _, _, outcome = ctx.ask([{"id": "crop", "question": question,
                                  "options": [{"label": "Wide"}, {"label": "Square"}]}], agent="coder")
        browser.wait_text(question, ".request")
        browser.choose_files("[data-question=crop] .picture-input", [str(shot)])
        browser.wait_text("shot.png", "[data-question=crop] .pictures")
        browser.tap(".request .send")
        browser.wait_text("Sent", ".request .note")
    finally:
        browser.close()
    (item,) = answer_of(outcome())["answers"]
    assert (item["id"], item["selected"], "custom" in item) == ("crop", [], False), item
    (image,) = item["images"]
    assert set(image) == {"mime", "data"} and image["mime"] == "image/png", image
    raw = base64.b64decode(image["data"])
    assert raw.startswith(b"\x89PNG\r\n\x1a\n")
    assert (int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")) == (48, 32)
    assert journal_record(question)["answerer"] == f"phone:{name}"
    page = ctx.page
    page.click(page.find("#nav-history"))
    page.until("const img = document.querySelector('.history-item dd .image-strip img');"
               " return Boolean(img && img.complete && img.naturalWidth === 48)",
               message="History does not show the phone's picture")
    page.click(page.find("#nav-queue"))


def test_cancel_at_the_desk_pairs_nothing(ctx, phone_off):
    origin = switch_on(ctx, free_port())
    page = ctx.page
    url = offer(ctx, origin)
    phone = Phone("Unconfirmed")
    status, _, _ = phone.claim(url)
    assert status == 202
    page.wait_for("#pair-code")
    page.click(page.find("#pair-cancel"))
    page.until("return !document.getElementById('pair-modal')")
    open_devices(ctx)
    assert page.find_all("#no-devices"), "a device was stored without the desk's confirmation"
    sock = phone.connect(origin)
    try:
        assert sock.greeting == {"type": "refused", "reason": "not-paired"}, sock.greeting
    finally:
        sock.close()


def test_revoke_closes_the_device_socket_at_once(ctx, phone_off):
    origin = switch_on(ctx, free_port())
    phone, _ = pair(ctx, origin, "Lost Phone")
    sock = phone.connect(origin)
    try:
        assert sock.greeting["type"] == "welcome", sock.greeting
        assert sock.receive() == {"type": "requests", "requests": []}
        page = ctx.page
        row = '.device[data-device="Lost Phone"]'
        page.click(page.find(f'{row} [data-action="revoke"]'))
        assert sock.receive() == {"type": "revoked"}
        assert sock.receive() is None and sock.closed_with == 1008, sock.closed_with
        page.until("return !document.querySelector(arguments[0])", row, message="the device is still listed")
    finally:
        sock.close()
    again = phone.connect(origin)
    try:
        assert again.greeting == {"type": "refused", "reason": "not-paired"}, again.greeting
    finally:
        again.close()


def test_allow_a_passkey_opens_the_phones_window_to_register_one(ctx, phone_off):
    """Only the desk opens a phone's window to register a passkey: the pairing opens one; closed
    from the command line, the phone is told so, and "Allow a passkey" in its row opens it again,
    which its socket hears at once."""
    origin = switch_on(ctx, free_port())
    phone, _ = pair(ctx, origin, "Pocket")
    sock = phone.connect(origin)
    try:
        assert sock.greeting["passkey"]["allowed"] is True, sock.greeting
        assert sock.receive() == {"type": "requests", "requests": []}
        closed = subprocess.run([ctx.args.cli, "devices", "passkey", "Pocket", "--forget"],
                                capture_output=True, text=True, timeout=30)
        assert closed.returncode == 0, closed.stderr
        assert sock.receive() == {"type": "passkey", "passkey": {
            "available": False, "registered": False, "allowed": False}}
        page = ctx.page
        row = '.device[data-device="Pocket"]'
        page.click(page.find(f'{row} [data-action="allow-passkey"]'))
        assert sock.receive() == {"type": "passkey", "passkey": {
            "available": False, "registered": False, "allowed": True}}
        page.until("return (document.querySelector(arguments[0]) || {}).textContent.includes('may add a passkey now')",
                   row, message="the row does not say the phone may add a passkey")
    finally:
        sock.close()


def test_a_request_answered_on_the_phone_says_which_phone(ctx, phone_off):
    origin = switch_on(ctx, free_port())
    phone, _ = pair(ctx, origin, "Dana's Pixel")
    ctx.page.click(ctx.page.find("#nav-queue"))
    sock = phone.connect(origin)
    try:
        assert sock.receive() == {"type": "requests", "requests": []}
        question = "Deploy the docs from the phone?"
        _, _, outcome = ctx.ask([{"id": "docs", "question": question,
                                  "options": [{"label": "Deploy"}, {"label": "Hold"}]}], agent="coder")
        ctx.show("docs")
        message = sock.receive()
        assert message["type"] == "request", message
        answer = {"answers": [{"id": "docs", "selected": ["Hold"]}]}
        phone.answer(sock, message["request"], answer)
        assert sock.receive() == {"type": "accepted", "id": message["request"]["id"]}
        assert answer_of(outcome()) == answer
        where = ctx.page.until("const v = document.getElementById('view-elsewhere');"
                               " return !v.hidden && document.getElementById('elsewhere-where').textContent")
        assert where == "Answered on Dana's Pixel", where
    finally:
        sock.close()
    assert journal_record(question)["answerer"] == "phone:Dana's Pixel"
    page = ctx.page
    page.until("return document.getElementById('view-elsewhere').hidden")
    page.click(page.find("#nav-history"))
    by = page.until(
        "const e = [...document.querySelectorAll('#history-list li')]"
        ".find((li) => li.textContent.includes(arguments[0]));"
        " const pill = e && e.querySelector('.answerer'); return pill && pill.textContent", question,
        message="History does not list the request with who answered")
    assert by == "by phone:Dana's Pixel", by


def test_a_permission_prompt_is_not_offered_to_a_phone_outside_its_scope(ctx, phone_off):
    """A request whose agent's meta names a tool (a hook's permission prompt) stays at the desk while
    the phone's scope stops below permission prompts (the default): the phone hears the ordinary question asked after it, never the prompt."""
    origin = switch_on(ctx, free_port())
    phone, _ = pair(ctx, origin, "Pocket")
    ctx.page.click(ctx.page.find("#nav-queue"))
    sock = phone.connect(origin)
    try:
        assert sock.receive() == {"type": "requests", "requests": []}
        conn = ctx.conn()
        hook = conn.call("agents/register", {"id": "hook-agent", "label": "claude-code",
                                             "meta": {"tool": "Bash", "command": "rm -rf build"}})
        prompt = conn.start("user-questions/ask", {"agent": hook, "questions": [
            {"id": "allow", "question": "Allow Bash: rm -rf build?", "options": [{"label": "Allow"}, {"label": "Deny"}]}]})
        prompt_outcome = outcome_of(conn, prompt)
        ctx.show("allow")
        _, _, outcome = ctx.ask([{"id": "plain", "question": "Which branch?",
                                  "options": [{"label": "main"}, {"label": "dev"}]}], agent="coder")
        message = sock.receive()
        assert message["type"] == "request" and message["request"]["questions"][0]["id"] == "plain", message
        phone.answer(sock, message["request"], {"answers": [{"id": "plain", "selected": ["dev"]}]})
        assert sock.receive()["type"] == "accepted"
        answer_of(outcome())
        conn.notify("$/cancelRequest", {"id": prompt})
        expect_error(prompt_outcome(), "ASK_ABORTED")
    finally:
        sock.close()


def test_a_subscription_its_push_service_dropped_is_shown_under_the_phone(ctx, phone_off):
    """The desk drops a subscription its push service answered 404 or 410 for (tests/push checks
    that) and records it in devices.json: the view says so under the phone until it subscribes again."""
    import json
    os.makedirs(REMOTE_DIR, exist_ok=True)
    subscription = {"endpoint": "https://fcm.googleapis.com/fcm/send/x", "keys": {"p256dh": "BKey", "auth": "secret"}}
    with open(os.path.join(REMOTE_DIR, "devices.json"), "w") as f:
        json.dump({"version": 1, "devices": [
            {"name": "Woken", "publicKey": "B1", "pairedAt": 1780000000, "push": subscription},
            {"name": "Dropped", "publicKey": "B2", "pairedAt": 1780000000,
             "pushDropped": {"at": 1780003600, "status": 410}},
            {"name": "Silent", "publicKey": "B3", "pairedAt": 1780000000},
        ]}, f)
    open_devices(ctx)
    states = ctx.page.js("""return Object.fromEntries([...document.querySelectorAll('.device')].map((d) =>
        [d.dataset.device, [d.querySelector('.device-push').dataset.push, d.querySelector('.device-push').textContent]]))""")
    assert states["Woken"] == ["on", "woken by notifications"], states
    assert states["Silent"] == ["off", "not subscribed to notifications"], states
    assert states["Dropped"][0] == "dropped", states
    assert "dropped by its push service" in states["Dropped"][1] and "(410)" in states["Dropped"][1], states


def test_when_a_phone_is_woken_is_kept_and_the_remote_serves_with_it(ctx, phone_off):
    import json
    origin = switch_on(ctx, free_port())
    page = ctx.page
    before = loads(ctx)
    page.click(page.find("#phone-show-questions"))
    page.click(page.find("#phone-quiet"))
    page.js("document.getElementById('phone-quiet-from').value = '21:30';"
            "document.getElementById('phone-quiet-to').value = '06:45';")
    page.click(page.find("#phone-idle"))
    page.js("document.getElementById('phone-idle-minutes').value = '7';")
    page.click(page.find("#phone-apply"))
    page.until("return Number(document.getElementById('view-devices').dataset.loaded || 0) > arguments[0]"
               " && document.getElementById('phone-status')", before, message="the view did not come back")
    with open(os.path.join(os.environ["XDG_CONFIG_HOME"], "askdesk", "phone.json")) as f:
        saved = json.load(f)
    assert (saved["showQuestions"], saved["quietHours"], saved["onlyWhenIdle"]) == (True, "21:30-06:45", 7), saved
    assert page.js("return document.getElementById('phone-quiet').checked"
                   " && document.getElementById('phone-quiet-from').value === '21:30'"
                   " && document.getElementById('phone-idle-minutes').value === '7'"
                   " && document.getElementById('phone-show-questions').checked")
    assert page.js("return document.getElementById('phone-status').textContent") == f"Serving phones at {origin}"
    port = int(origin.rsplit(":", 1)[1])
    assert connects(port)


def test_the_devices_view_and_the_phone_speak_the_language_chosen_at_the_desk(ctx, phone_off):
    """Chinese chosen in the sidebar: the problem the Devices view shows when the remote cannot listen,
    and the catalogue the remote serves the phone's page, are Chinese; back to the system's, English."""
    page = ctx.page
    speak(page, "zh-CN")
    try:
        with socket.socket() as taken:
            taken.bind((ADDRESS, 0))
            taken.listen()
            port = taken.getsockname()[1]
            turn_on(ctx, port)
            problem = page.until("const p = document.getElementById('phone-problem'); return p && p.textContent",
                                 message="the Devices view never said the remote cannot listen")
            assert problem.startswith(f"无法监听 {ADDRESS}:{port}："), problem
        port = free_port()
        page.js("return window.__TAURI__.core.invoke('set_phone', {settings: {enabled: true, address: arguments[0],"
                " port: arguments[1], certificate: null, key: null}})", ADDRESS, port)
        assert catalogue(port)["language"] == "zh-CN"
        speak(page, "")
        # The phone's next load speaks what the desk now speaks.
        assert catalogue(port)["language"] == "en"
    finally:
        speak(page, "")


def catalogue(port):
    """The page's catalogue, as the phone's page fetches it from the remote on `port`."""
    with tls(ADDRESS, port) as conn:
        conn.sendall(f"GET /catalogue HTTP/1.1\r\nHost: {ADDRESS}:{port}\r\nConnection: close\r\n\r\n".encode())
        head, _, body = read_all(conn).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return json.loads(body)
