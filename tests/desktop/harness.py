"""askdesk desktop tests: the harness the per-area test files share (conftest.py makes the fixtures).

`Ctx` is what every test gets: the page (a WebDriver session on the app), the socket path, the bus log
and helpers to ask, read the page and find notifications. Besides it: parsers of the dbus-monitor log,
helpers of more than one area (rules file, journal, plan comments, pictures), and starting the app under
WebDriver. test_lifecycle.py uses the bus and process helpers too.
"""
import base64
import contextlib
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
# The project's own protocol client (tests/pyclient/askdesk_client.py).
sys.path.insert(0, os.path.join(HERE, "..", "pyclient"))

from askdesk_client import Conn, RpcError  # noqa: E402
import samples  # noqa: E402
from webdriver import CONTROL, ENTER, Session, WebDriverError, element_id  # noqa: E402

TAB = "\ue004"
SHIFT = "\ue008"


class Ctx:
    """What every test gets: the page, the socket path, the bus log, and a few helpers."""

    def __init__(self, args, page):
        self.args = args
        self.page = page
        self.socket = os.environ["ASKDESK_SOCKET"]
        self.conns = []
        self.agent_seq = 0
        # Set by a test that ends the app: the harness starts a fresh one for the next test.
        self.app_gone = False
        # Where this test's part of the bus log begins: a notification of an earlier test with the
        # same summary is never taken for this one's.
        self.bus_from = os.path.getsize(args.bus_log) if os.path.exists(args.bus_log) else 0

    # ----- asking -----
    def conn(self, name="e2e"):
        c = Conn(self.socket, timeout=60)
        c.initialize(name)
        self.conns.append(c)
        return c

    def agent(self, conn, which):
        a = dict(samples.AGENTS[which])
        self.agent_seq += 1
        return conn.call("agents/register", {"id": f"{a['id']}-{self.agent_seq}", "label": a["label"], "meta": a["meta"]})

    def ask(self, questions, agent=None, conn=None):
        """Starts an ask; returns (conn, request id, future) where future() waits for the outcome."""
        conn = conn or self.conn()
        params = {"questions": questions}
        if agent:
            params["agent"] = self.agent(conn, agent)
        rid = conn.start("user-questions/ask", params)
        return conn, rid, outcome_of(conn, rid)

    # ----- page -----
    def show(self, qid, timeout=15):
        return self.page.wait_for(f'[data-qid="{qid}"]', timeout)

    def option(self, qid, label):
        el = self.page.js(
            "const inputs = document.querySelectorAll('[data-qid=\"' + arguments[0] + '\"] input.option-input');"
            "return [...inputs].find((i) => i.value === arguments[1]) || null;", qid, label)
        if not el:
            raise AssertionError(f"no option {label!r} in question {qid!r}")
        return element_id(el)

    def other_box(self, qid):
        return self.page.find(f'[data-qid="{qid}"] textarea.other-input')

    def queue_count(self):
        return int(self.page.js("return document.getElementById('queue-count').textContent"))

    def wait_queue(self, n, timeout=10):
        self.page.until("return document.getElementById('queue-count').textContent === arguments[0]", str(n),
                        timeout=timeout, message=f"queue never showed {n}")

    def open_request_of(self, agent_label):
        """Clicks the queue entry of the agent with this label. The queue is drawn again whenever it
        changes (a request comes or goes, a count moves), so an entry found just before may be gone
        by the click: then it is found again."""
        self.click_fresh(
            "return [...document.querySelectorAll('.queue-item')]"
            ".find((li) => li.querySelector('.queue-who').textContent === arguments[0]) || null;",
            agent_label, message=f"no queue entry for {agent_label}")

    def click_fresh(self, script, *args, message="no element to click"):
        """Clicks the element `script` returns, waiting until it returns one. A view drawn again (the
        queue when it changes, the Rules view when the file changes) replaces its elements, so one
        found just before may be gone when it is handed back or clicked: then it is found again."""
        for attempt in range(5):
            try:
                item = self.page.until(script, *args, message=message)
                self.page.click(element_id(item))
                return
            except WebDriverError as error:
                if "stale element" not in str(error) or attempt == 4:
                    raise

    @contextlib.contextmanager
    def elsewhere(self):
        """The person works in another program, the window open behind it, with "Notify only" chosen so that a
        question does not bring the window forward: the waiting requests' notification stays up (it is withdrawn
        while the window has the focus). Afterwards the other program ends, the choice is undone and a second
        launch gives the window the focus back."""
        page = self.page
        choice = os.path.join(os.environ["XDG_CONFIG_HOME"], "askdesk", "desktop.json")

        def notify_only(on):
            page.js("const box = document.getElementById('notify-only'); if (box.checked !== arguments[0]) box.click();",
                    on)
            deadline = time.time() + 10
            while not (os.path.exists(choice) and json.load(open(choice, encoding="utf-8")).get("notifyOnly") == on):
                assert time.time() < deadline, f"notify only was not set to {on}"
                time.sleep(0.1)
        notify_only(True)
        try:
            with other_program():
                page.until("return !document.hasFocus()", message="the window kept the focus")
                yield
        finally:
            notify_only(False)
            subprocess.run([self.args.app], env=os.environ.copy(), capture_output=True, timeout=30, check=True)
            page.until("return document.hasFocus()", message="a second launch did not give the window the focus")

    def shot(self, name, whole_screen=False, top=False, scroll_to=None, x_window=False):
        """Saves a screenshot: the window as WebKit renders it, the window as X shows it (`x_window`: WebKit's
        own capture can stall on a page without a request open), or the whole screen (for notifications)."""
        if not self.args.screenshots:
            return
        path = os.path.join(self.args.screenshots, f"{name}.png")
        # No leftover toast from an earlier step, no hover tooltip where the last click was.
        self.page.js("document.getElementById('toast').hidden = true;"
                     "if (arguments[0]) document.getElementById('request-form').scrollTop = 0;"
                     "const target = arguments[1] && document.querySelector(arguments[1]);"
                     "if (target) target.scrollIntoView({block: 'start'});", top, scroll_to)
        self.page.cmd("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse", "actions": [
            {"type": "pointerMove", "x": 2, "y": 2, "origin": "viewport"}]}]})
        time.sleep(0.8)
        if whole_screen or x_window:
            window = "root" if whole_screen else "askdesk"
            subprocess.run(["import", "-display", os.environ["DISPLAY"], "-window", window, path], check=True)
        else:
            self.page.screenshot(path)

    # ----- bus -----
    def bus_log(self):
        """What dbus-monitor logged since this test began."""
        with open(self.args.bus_log, "rb") as f:
            f.seek(self.bus_from)
            return f.read().decode("utf-8", errors="replace")

    def notification_id(self, summary, timeout=10):
        """The id the server gave the Notify call whose summary is `summary`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = find_notification(self.bus_log(), summary)
            if found is not None:
                return found
            time.sleep(0.2)
        raise AssertionError(f"no Notify call with summary {summary!r} on the bus")

    def close(self):
        for c in self.conns:
            c.close()


def outcome_of(conn, rid):
    """Waits for request `rid` on `conn` in the background; returns outcome(), which gives
    {"result": ...} or {"error": ...} once the asker has its reply."""
    box = {}

    def wait():
        try:
            box["result"] = conn.wait(rid, timeout=120)
        except Exception as e:  # noqa: BLE001 - the test inspects it
            box["error"] = e

    t = threading.Thread(target=wait, daemon=True)
    t.start()

    def outcome(timeout=15):
        t.join(timeout)
        if t.is_alive():
            raise AssertionError("the asker got no reply")
        return box
    return outcome


@contextlib.contextmanager
def other_program():
    """Another program's window, given the X input focus as the person working there; it ends with the block."""
    other = subprocess.Popen(["xmessage", "-geometry", "-0-0", "-name", "askdesk-test-other", "Another program"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while not (found := subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", "askdesk-test-other"],
                                           capture_output=True, text=True).stdout.split()):
            assert time.time() < deadline, "the other program's window never showed"
            time.sleep(0.1)
        subprocess.run(["xdotool", "windowfocus", "--sync", found[0]], check=True, timeout=15)
        yield
    finally:
        other.terminate()
        other.wait(10)


def notifications_shown(log, summary):
    """Parses dbus-monitor output: the ids the server returned to the Notify calls with this summary, in order
    (a notification updated in place with `replaces_id` keeps its id)."""
    blocks = re.split(r"\n(?=(?:method call|method return|signal|error) )", log)
    calls = {}
    found = []
    for block in blocks:
        head = block.split("\n", 1)[0]
        if head.startswith("method call") and "member=Notify" in head:
            strings = re.findall(r'^\s+string "(.*)"$', block, re.M)
            sender = re.search(r"sender=(\S+)", head).group(1)
            serial = re.search(r" serial=(\d+)", head).group(1)
            if len(strings) >= 3 and strings[2] == summary:
                calls[(sender, serial)] = True
        elif head.startswith("method return"):
            dest = re.search(r"destination=(\S+)", head)
            reply = re.search(r"reply_serial=(\d+)", head)
            if dest and reply and (dest.group(1), reply.group(1)) in calls:
                m = re.search(r"uint32 (\d+)", block)
                if m:
                    found.append(int(m.group(1)))
    return found


def find_notification(log, summary):
    """Parses dbus-monitor output: the returned id of the last Notify call with this summary."""
    shown = notifications_shown(log, summary)
    return shown[-1] if shown else None


def notify_calls(log, summary):
    """Parses dbus-monitor output: the blocks of the Notify calls whose summary is `summary`, in order."""
    for block in re.split(r"\n(?=(?:method call|method return|signal|error) )", log):
        head = block.split("\n", 1)[0]
        if head.startswith("method call") and "member=Notify" in head:
            strings = re.findall(r'^\s+string "(.*)"$', block, re.M)
            if len(strings) >= 3 and strings[2] == summary:
                yield block


def notify_buttons(log, summary):
    """The actions of the last Notify call whose summary is `summary`: [key, label] pairs (they alternate)."""
    actions = None
    for block in notify_calls(log, summary):
        listed = re.search(r"^\s+array \[\n(.*?)^\s+\]", block, re.M | re.S)
        if listed:
            flat = re.findall(r'^\s+string "(.*)"$', listed.group(1), re.M)
            actions = [list(pair) for pair in zip(flat[::2], flat[1::2])]
    return actions


def notify_hints(log, summary):
    """The hint names of the last Notify call whose summary is `summary` (None when there is none)."""
    hints = None
    for block in notify_calls(log, summary):
        hints = re.findall(r'^\s+dict entry\(\n\s+string "([a-z-]+)"', block, re.M)
    return hints


def notify_actions(log, summary):
    """The action keys of the last Notify call whose summary is `summary`."""
    buttons = notify_buttons(log, summary)
    return None if buttons is None else [key for key, _ in buttons]


def closed_on_bus(log, nid):
    """Whether the app asked the server to close notification `nid`, or the server reported it closed."""
    for block in re.split(r"\n(?=(?:method call|method return|signal|error) )", log):
        head = block.split("\n", 1)[0]
        if ("member=CloseNotification" in head or "member=NotificationClosed" in head) and \
                re.search(rf"uint32 {nid}\b", block):
            return True
    return False


def expect_error(box, code):
    err = box.get("error")
    assert isinstance(err, RpcError), f"expected {code}, got {box}"
    assert err.data.get("code") == code, f"expected {code}, got {err.code} {err.message} {err.data}"
    return err


def answer_of(box):
    assert "result" in box, f"expected an answer, got {box.get('error')!r}"
    return box["result"]


def rules_path():
    return os.path.join(os.environ["XDG_CONFIG_HOME"], "askdesk", "rules.toml")


def put_rules(text):
    """Writes the rules file as a person would, without waiting for the app to read it."""
    os.makedirs(os.path.dirname(rules_path()), exist_ok=True)
    with open(rules_path(), "w", encoding="utf-8") as f:
        f.write(text)


def read_rules():
    with open(rules_path(), encoding="utf-8") as f:
        return f.read()


def rule_preview(page):
    """The rule preview's text once the draft has arrived."""
    pre = page.until("return document.querySelector('.rule-preview .rule-toml')", message="no rule preview")
    return page.text(element_id(pre))


def rules_state(ctx):
    """What the app's rules engine has loaded now (the Rules view's data, without counts)."""
    return ctx.page.js("return window.__TAURI__.core.invoke('get_rules', {counts: false})")


def load_rules(ctx, text, loaded, what="the rules file was never loaded"):
    """Writes the rules file, then waits until the engine's state satisfies `loaded(state)`."""
    os.makedirs(os.path.dirname(rules_path()), exist_ok=True)
    with open(rules_path(), "w", encoding="utf-8") as f:
        f.write(text)
    deadline = time.time() + 20
    while True:
        state = rules_state(ctx)
        if loaded(state):
            return state
        assert time.time() < deadline, f"{what}: {state}"
        time.sleep(0.2)


def rule_names(state):
    return [(r["name"], r["mode"]) for r in state["rules"]]


def human_answers(ctx, questions, label):
    """Asks one question as the coder agent; the human picks `label` in the dialog and submits."""
    qid = questions[0]["id"]
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show(qid)
    ctx.page.click(ctx.option(qid, label))
    ctx.page.click(ctx.page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": qid, "selected": [label]}]}, got
    ctx.wait_queue(0)


def no_rules(ctx):
    load_rules(ctx, "", lambda s: not s["rules"] and not s["error"], "the rules were never emptied")


def closed_on_bus_eventually(ctx, nid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if closed_on_bus(ctx.bus_log(), nid):
            return True
        time.sleep(0.2)
    return False


def dbus(*args):
    """One D-Bus call with dbus-send; "" when it fails (some peers, like dbus-monitor, never reply)."""
    try:
        out = subprocess.run(["dbus-send", "--session", "--print-reply", "--reply-timeout=1000", *args],
                             capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return ""
    return out.stdout if out.returncode == 0 else ""


def find_tray_item():
    """(bus name, object path) of the app's StatusNotifierItem (libayatana-appindicator)."""
    names = re.findall(r'string "(:[0-9.]+)"', dbus("--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                     "org.freedesktop.DBus.ListNames"))
    for name in names:
        nodes = re.findall(r'node name="([^"]+)"', dbus(f"--dest={name}", "/org/ayatana/NotificationItem",
                                                       "org.freedesktop.DBus.Introspectable.Introspect"))
        for node in nodes:
            if "askdesk" in node:
                return name, f"/org/ayatana/NotificationItem/{node}"
    return None


DOC = '[data-qid="plan"] .plan-doc:not(.plan-older)'


def png(width, height, colour):
    """A plain-colour RGB PNG, base64."""
    raw = b"".join(b"\x00" + bytes(colour) * width for _ in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    data = (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))
    return {"mime": "image/png", "data": base64.b64encode(data).decode()}


def png_width(image):
    """The width of a base64 PNG, from its header."""
    return struct.unpack(">I", base64.b64decode(image["data"])[16:20])[0]


def give_picture(page, selector, picture, how):
    """Pastes (`how` 'paste') or drops ('drop') a file holding `picture` (base64) into the element: the events
    a clipboard or a file manager would send, with a DataTransfer holding the file."""
    page.js(
        "const bytes = Uint8Array.from(atob(arguments[1]), (c) => c.charCodeAt(0));"
        "const transfer = new DataTransfer();"
        "transfer.items.add(new File([bytes], 'shot.png', {type: 'image/png'}));"
        "const target = document.querySelector(arguments[0]);"
        "target.focus();"
        "const event = arguments[2] === 'paste'"
        "  ? new ClipboardEvent('paste', {clipboardData: transfer, bubbles: true, cancelable: true})"
        "  : new DragEvent('drop', {dataTransfer: transfer, bubbles: true, cancelable: true});"
        "target.dispatchEvent(event);", selector, picture, how)


# The thumbnails of the pictures attached to answers, on the page.
ATTACHED = "[...document.querySelectorAll('.answer-pictures .image-thumb img')]"


def comment_by_keyboard(ctx, steps, text):
    """Presses j `steps` times in the focused plan, c, types the comment and saves it with Ctrl+Enter."""
    page = ctx.page
    page.keys(*(["j"] * steps))
    page.keys("c")
    box = page.wait_for('[data-qid="plan"] .note-input')
    assert page.js("return document.activeElement.classList.contains('note-input')"), "the comment box has no focus"
    page.type(box, text)
    page.keys(ENTER, modifier=CONTROL)
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')"
               " && document.activeElement.classList.contains('plan-doc')",
               message="the comment was not saved back to the plan")


def long_plan(sections=60):
    parts = ["# A long plan\n\nEvery part below is one step of a long migration.\n"]
    for i in range(1, sections + 1):
        parts.append(f"## Part {i}\n\nMove table {i} to the new store, check its row count, and drop the old copy "
                     f"only when the counts agree. This keeps part {i} reversible until the very end.\n")
    return "\n".join(parts)


def journal_path():
    return os.path.join(os.environ["XDG_DATA_HOME"], "askdesk", "history.jsonl")


def journal_lines():
    """The journal's lines; a running app holds spaces after the last one for the next ones (a read
    racing their cut-off may see zeros there instead)."""
    with open(journal_path(), encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if line.strip(" \t\0")]


def journal_record(text, timeout=10):
    """The newest journal record of a request whose first question is `text` (waits for it)."""
    deadline = time.time() + timeout
    while True:
        found = [r for r in map(json.loads, journal_lines()) if r["questions"][0]["question"] == text]
        if found:
            return found[-1]
        assert time.time() < deadline, f"no journal record of {text!r}"
        time.sleep(0.2)


def server_pid(sock):
    """The pid of the process listening on the socket's other end (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, _uid, _gid = struct.unpack("3i", creds)
    return pid


def web_processes(app_pid, name="WebKitWebProces"):
    """Pids of the WebKit web processes (or, by `name`, other WebKit processes) under the app."""
    found, todo = [], [app_pid]
    while todo:
        pid = todo.pop()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    rest = f.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(rest[1]) == pid and rest[0] not in ("Z", "X"):
                todo.append(int(entry))
                with open(f"/proc/{entry}/comm", encoding="utf-8") as f:
                    if f.read().strip().startswith(name):  # comm is cut at 15 bytes
                        found.append(int(entry))
    return found


def start_app(args, app_args=()):
    """A WebDriver session: tauri-driver starts the app for it; returns once the page is ready."""
    page = Session(args.driver, args.app, args=app_args)
    deadline = time.time() + 30
    while True:
        # WebKitWebDriver may answer "unknown error" while the first page is still loading.
        try:
            page.until("return document.body.dataset.ready === 'true'", timeout=30,
                       message="the page never became ready")
            # A first app on an empty journal opens on Connect (the first run, test_connect.py checks
            # it); every other test starts on the queue.
            page.js("if (!document.getElementById('view-connect').hidden) document.getElementById('nav-queue').click()")
            return page
        except WebDriverError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


def settle(page):
    """Waits until the window shows no request: a test starts on an empty queue, so a request the last
    one answered or dismissed (still on screen until the app's queue refresh lands) is never mistaken for
    this test's own."""
    try:
        page.until("return document.getElementById('queue-count').textContent === '0'"
                   " && !document.querySelector('#request-form [data-qid]')", timeout=10)
    except WebDriverError:
        left = page.js("return {waiting: document.getElementById('queue-count').textContent,"
                       " shown: [...document.querySelectorAll('#request-form [data-qid]')].map((q) => q.dataset.qid),"
                       " ended: document.querySelector('#asker .ended-note')?.textContent ?? null}")
        raise WebDriverError(f"the previous test left a request on screen: {left}") from None
    # A rule's note stays until the person closes it (a permission prompt a rule answered, a
    # deadline that passed): close what earlier tests left, so their notes take no room here.
    page.js("document.querySelectorAll('.note-close').forEach((b) => b.click())")
    page.until("return !document.querySelector('.note-close')", timeout=10,
               message="an earlier test's rule note did not close")


def filter_history(page, select, value):
    """Sets a History filter as the human does and waits for the page the backend filtered."""
    before = page.js("return document.getElementById('history-list').dataset.loaded || ''")
    page.js("const s = document.getElementById(arguments[0]); s.value = arguments[1];"
            "s.dispatchEvent(new Event('change'));", select, value)
    page.until("return (document.getElementById('history-list').dataset.loaded || '') !== arguments[0]",
               before, message=f"History was not read again for {select} = {value!r}")
