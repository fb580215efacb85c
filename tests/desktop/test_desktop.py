"""askdesk desktop end-to-end tests: the real app in a real window on Xvfb, a real notification bus.

run.sh starts the services (Xvfb, a private D-Bus session bus, dunst, dbus-monitor, tauri-driver) and
calls this file; each test drives the page through WebDriver, asks over the socket with askdesk_client, and
watches the bus log. A test that ends the app (kill -9, Quit) sets ctx.app_gone and the next test
gets a fresh app in a new WebDriver session. Prints one line per test and a final "N passed, N failed"
line.
"""
import argparse
import json
import os
import re
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The project's own protocol client (tests/pyclient/askdesk_client.py).
sys.path.insert(0, os.path.join(HERE, "..", "pyclient"))

from askdesk_client import Conn, RpcError  # noqa: E402
import contrast  # noqa: E402
import samples  # noqa: E402
from webdriver import CONTROL, ENTER, ESCAPE, Session, WebDriverError, element_id  # noqa: E402

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
        return conn, rid, outcome

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
        """Clicks the queue entry of the agent with this label."""
        item = self.page.until(
            "return [...document.querySelectorAll('.queue-item')]"
            ".find((li) => li.querySelector('.queue-who').textContent === arguments[0]) || null;",
            agent_label, message=f"no queue entry for {agent_label}")
        self.page.click(element_id(item))

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
        with open(self.args.bus_log, encoding="utf-8", errors="replace") as f:
            return f.read()

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


def find_notification(log, summary):
    """Parses dbus-monitor output: the returned id of the last Notify call with this summary."""
    blocks = re.split(r"\n(?=(?:method call|method return|signal|error) )", log)
    calls = {}
    found = None
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
                    found = int(m.group(1))
    return found


def notify_actions(log, summary):
    """The action keys of the last Notify call whose summary is `summary` (keys and labels alternate)."""
    actions = None
    for block in re.split(r"\n(?=(?:method call|method return|signal|error) )", log):
        head = block.split("\n", 1)[0]
        if head.startswith("method call") and "member=Notify" in head:
            strings = re.findall(r'^\s+string "(.*)"$', block, re.M)
            listed = re.search(r"^\s+array \[\n(.*?)^\s+\]", block, re.M | re.S)
            if len(strings) >= 3 and strings[2] == summary and listed:
                actions = re.findall(r'^\s+string "(.*)"$', listed.group(1), re.M)[::2]
    return actions


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


# ----------------------------------------------------------------------------------------------
# tests

def test_batch_answer_reaches_the_asker(ctx):
    """ask -> Notify names the agent -> dialog shows it -> picks and custom text -> exactly that answer."""
    _, _, outcome = ctx.ask(samples.BATCH, agent="coder")
    nid = ctx.notification_id("claude-code asks")
    assert nid > 0
    ctx.show("scope")
    page = ctx.page
    assert "claude-code" in page.text(page.find("#asker"))
    assert "/home/dana/src/askdesk" in page.text(page.find("#asker"))
    assert "feat/journal-sqlite" in page.text(page.find("#asker"))
    # The detail is rendered markdown.
    assert page.js("return document.querySelector('[data-qid=\"scope\"] .md code') !== null")
    page.click(ctx.option("scope", "server"))
    page.click(ctx.option("scope", "client"))
    page.type(ctx.other_box("scope"), "also the CLI")
    ctx.shot("dialog-batch", top=True)
    page.click(ctx.option("release", "Patch (0.2.5)"))
    page.type(ctx.other_box("notes"), "Mention the new error codes")
    page.click(page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [
        {"id": "scope", "selected": ["server", "client"], "custom": "also the CLI"},
        {"id": "release", "selected": ["Patch (0.2.5)"]},
        {"id": "notes", "selected": [], "custom": "Mention the new error codes"},
    ]}, got
    ctx.wait_queue(0)
    assert closed_on_bus_eventually(ctx, nid)


CLEANUP = [{
    "id": "cleanup",
    "header": "Cleanup",
    "question": "Delete the 14 stale feature branches?",
    "options": [{"label": "Yes"}, {"label": "No"}],
}]


def write_rules(text):
    """Writes the app's rules file and waits past two polls of the engine (it polls every 2 s)."""
    folder = os.path.join(os.environ["XDG_CONFIG_HOME"], "askdesk")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.toml"), "w", encoding="utf-8") as f:
        f.write(text)
    time.sleep(4.5)


def test_rule_deadline_counts_down_in_the_dialog(ctx):
    """A rule with `after` shows its name, its action and a time left that decreases; the human still answers."""
    write_rules('[[rule]]\nname = "cleanup later"\nmatch = { header = "Cleanup" }\nanswer = "No"\nafter = "10m"\n')
    try:
        _, _, outcome = ctx.ask(CLEANUP, agent="coder")
        ctx.show("cleanup")
        page = ctx.page
        line = page.until("return document.querySelector('#asker .rule-deadline')", message="no rule deadline shown")
        text = page.text(element_id(line))
        assert 'Rule “cleanup later” will answer "No" in ' in text, text
        assert text.endswith("unless you answer"), text

        def left():
            m = re.fullmatch(r"(\d+):(\d\d)", page.js("return document.querySelector('#asker .rule-left').textContent"))
            assert m, "the time left is not m:ss"
            return int(m.group(1)) * 60 + int(m.group(2))
        first = left()
        assert 570 <= first <= 600, first
        time.sleep(2.2)
        second = left()
        assert 1 <= first - second <= 4, (first, second)
        ctx.shot("rule-countdown", top=True)
        page.click(ctx.option("cleanup", "Yes"))
        page.click(page.find("#submit"))
        got = answer_of(outcome())
        assert got == {"answers": [{"id": "cleanup", "selected": ["Yes"]}]}, got
    finally:
        write_rules("")


def test_a_rule_answering_at_its_deadline_says_so(ctx):
    """When a rule's `after` time passes, the notice names the rule and its answer, not a withdrawal."""
    write_rules('[[rule]]\nname = "auto no"\nmatch = { header = "Cleanup" }\nanswer = "No"\nafter = "3s"\n')
    try:
        _, _, outcome = ctx.ask(CLEANUP, agent="coder")
        ctx.show("cleanup")
        got = answer_of(outcome(timeout=15))
        assert got == {"answers": [{"id": "cleanup", "selected": ["No"]}]}, got
        text = ctx.page.until("const t = document.getElementById('toast'); return !t.hidden && t.textContent",
                              message="no notice when the rule answered")
        assert text == 'Rule “auto no” answered claude-code\'s question: answer "No".', text
    finally:
        write_rules("")


def test_memory_hint_offers_the_last_answer_again(ctx):
    """A question answered before in the same project shows that answer; "Use again" selects it, the human submits."""
    # The suite's journal is its own (run.sh gives it a private data folder): no earlier answer to this text.
    text = "Rebase the release branch onto main before tagging?"
    questions = [{"id": "rebase", "question": text, "options": [{"label": "Rebase"}, {"label": "Merge"}, {"label": "Leave it"}]}]
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("rebase")
    page = ctx.page
    assert not page.find_all('[data-qid="rebase"] .memory-hint'), "a hint before any answer"
    page.click(ctx.option("rebase", "Merge"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "rebase", "selected": ["Merge"]}]}
    deadline = time.time() + 10
    while text not in open(journal_path(), encoding="utf-8").read():
        assert time.time() < deadline, "the first answer never reached the journal"
        time.sleep(0.2)
    ctx.wait_queue(0)

    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("rebase")
    hint = page.until("return document.querySelector('[data-qid=\"rebase\"] .memory-hint')", message="no memory hint")
    said = page.text(element_id(hint))
    assert said.startswith("You answered Merge on "), said
    assert said.endswith("Use again"), said
    assert not page.js("return document.querySelector('[data-qid=\"rebase\"] input:checked')"), "selected before the click"
    ctx.shot("memory-hint", top=True)
    page.click(page.find('[data-qid="rebase"] .use-again'))
    checked = page.js("return [...document.querySelectorAll('[data-qid=\"rebase\"] input:checked')].map((i) => i.value)")
    assert checked == ["Merge"], checked
    # Nothing is sent until the human submits.
    assert ctx.queue_count() == 1
    page.click(page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "rebase", "selected": ["Merge"]}]}, got


# ----- the answer rules in the app: shadow suggestions, the Rules view, a broken file, who answered -----

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


def journal_record(text, timeout=10):
    """The newest journal record of a request whose first question is `text` (waits for it)."""
    deadline = time.time() + timeout
    while True:
        found = [r for r in map(json.loads, journal_lines()) if r["questions"][0]["question"] == text]
        if found:
            return found[-1]
        assert time.time() < deadline, f"no journal record of {text!r}"
        time.sleep(0.2)


def answered_by_the_rule(ctx, questions, expected):
    """Asks `questions` again: the rule answers with `expected`, no dialog; returns the rule's answerer."""
    count = len(journal_lines())
    _, _, outcome = ctx.ask(questions, agent="coder")
    got = answer_of(outcome())
    assert got == expected, got
    lines = [json.loads(line) for line in journal_lines()]
    assert len(lines) == count + 1, "one more journal record"
    record = lines[-1]
    assert record["questions"][0]["question"] == questions[0]["question"], record
    assert ctx.queue_count() == 0
    return record.get("answerer")


def rule_preview(page):
    """The rule preview's text once the draft has arrived."""
    pre = page.until("return document.querySelector('.rule-preview .rule-toml')", message="no rule preview")
    return page.text(element_id(pre))


MY_RULES = """# My own rules: keep this comment.

[[rule]]
name = "never"   # matches nothing the suite asks
match = { header = "Nothing matches this" }
ask = true
"""


def test_always_answer_this_way_here_saves_a_rule_that_answers_next_time(ctx):
    """"Always answer this way here" previews the rule; Cancel keeps the dialog; Save submits, appends it
    to the rules file (its comments kept), and the same ask is then answered by the rule, no dialog."""
    put_rules(MY_RULES)
    text = "Run the linter on the changed files before committing?"
    questions = [{"id": "lint", "question": text, "header": "Lint", "options": [{"label": "Yes"}, {"label": "No"}]}]
    try:
        _, _, outcome = ctx.ask(questions, agent="coder")
        ctx.show("lint")
        page = ctx.page
        page.click(ctx.option("lint", "Yes"))
        page.click(page.find("#always"))
        shown = rule_preview(page)
        assert 'name = "lint"' in shown, shown
        assert 'cwd = "/home/dana/src/askdesk"' in shown and 'header = "Lint"' in shown, shown
        assert "question = '^Run the linter on the changed files before committing\\?$'" in shown, shown
        assert shown.rstrip().endswith('answer = "Yes"'), shown
        assert shown.startswith("# Made from your answer to claude-code on "), shown
        path = page.text(page.find(".rule-preview .rule-path"))
        assert path == rules_path(), path

        # Cancel: nothing saved, nothing sent, the choice still there.
        page.click(page.find(".rule-preview .rule-cancel"))
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed")
        assert read_rules() == MY_RULES
        assert ctx.queue_count() == 1
        checked = page.js("return [...document.querySelectorAll('[data-qid=\"lint\"] input:checked')].map((i) => i.value)")
        assert checked == ["Yes"], checked

        page.click(page.find("#always"))
        shown = rule_preview(page)
        ctx.shot("rule-preview")
        page.click(page.find(".rule-preview .rule-save"))
        assert answer_of(outcome()) == {"answers": [{"id": "lint", "selected": ["Yes"]}]}
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed after Save")
        saved = read_rules()
        assert saved == MY_RULES + "\n" + shown.rstrip("\n") + "\n", saved
        assert journal_record(text).get("answerer") == "desktop"
        ctx.wait_queue(0)

        assert answered_by_the_rule(ctx, questions, {"answers": [{"id": "lint", "selected": ["Yes"]}]}) == "rule:lint"
    finally:
        put_rules("")


def test_an_answer_no_rule_can_give_offers_no_rule(ctx):
    """Different answers to the questions of a batch: the preview says why no rule is offered, has no Save,
    and Close leaves the dialog as it was."""
    yes_no = [{"label": "Yes"}, {"label": "No"}]
    questions = [{"id": "first", "question": "Squash the fixup commits?", "options": yes_no},
                 {"id": "second", "question": "Delete the merged branch?", "options": yes_no}]
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("first")
    page = ctx.page
    page.click(ctx.option("first", "Yes"))
    page.click(ctx.option("second", "No"))
    page.click(page.find("#always"))
    said = page.until("const p = document.querySelector('.rule-preview .rule-unavailable');"
                      "return p ? p.textContent : null;", message="no reason shown")
    assert said.startswith("No rule is offered: the questions got different answers"), said
    assert page.js("return document.querySelector('.rule-preview .rule-save').hidden") is True
    # Keys stay in the preview: Tab does not reach the form behind it, a digit picks nothing there.
    page.keys("\ue004", "\ue004", "\ue004", "1")
    assert page.js("return document.querySelector('.rule-preview').contains(document.activeElement)"), \
        page.js("return document.activeElement.outerHTML")
    picked = page.js("return [...document.querySelectorAll('input.option-input:checked')].map((i) => i.value)")
    assert picked == ["Yes", "No"], picked
    ctx.shot("rule-unavailable")
    page.click(page.find(".rule-preview .rule-cancel"))
    page.until("return !document.querySelector('.rule-preview')", message="the preview stayed")
    assert ctx.queue_count() == 1
    page.click(page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "first", "selected": ["Yes"]}, {"id": "second", "selected": ["No"]}]}, got


def test_make_a_rule_from_history(ctx):
    """"Make a rule" on a History entry previews the rule of that answer; a broken rules file is reported in
    the preview and nothing is written; once fixed, Save appends the rule and the same ask is answered by it."""
    put_rules(MY_RULES)
    text = "Which changelog section should this change go under?"
    questions = [{"id": "section", "question": text}]
    page = ctx.page
    try:
        _, _, outcome = ctx.ask(questions, agent="coder")
        ctx.show("section")
        page.js("const box = document.querySelector('[data-qid=\"section\"] textarea.other-input');"
                "box.value = 'Fixed'; box.dispatchEvent(new Event('input'));")
        page.click(page.find("#submit"))
        assert answer_of(outcome()) == {"answers": [{"id": "section", "selected": [], "custom": "Fixed"}]}
        journal_record(text)
        ctx.wait_queue(0)

        page.click(page.find("#nav-history"))
        find_entry = ("return [...document.querySelectorAll('.history-item')]"
                      ".find((li) => li.querySelector('dt') && li.querySelector('dt').textContent === arguments[0]) || null;")
        entry = page.until(find_entry, text, message="no History entry for the question")
        button = page.js("return arguments[0].querySelector('.make-rule')", entry)
        assert button, "no Make a rule on an answered entry"
        ctx.shot("history-make-rule", whole_screen=True)
        page.click(element_id(button))
        shown = rule_preview(page)
        assert 'answer = { text = "Fixed" }' in shown, shown
        assert 'name = "which-changelog-section-should-this' in shown, shown

        # The file breaks while the preview is open: Save is refused, said in the preview, nothing written.
        broken = MY_RULES + "\n[[rule]]\nname = \"half\"\n"
        put_rules(broken)
        page.click(page.find(".rule-preview .rule-save"))
        error = page.until("const e = document.querySelector('.rule-preview .rule-preview-error');"
                           "return e && !e.hidden ? e.textContent : null;", message="no error in the preview")
        assert "fix it first" in error and "has no action" in error, error
        assert read_rules() == broken
        ctx.shot("rule-preview-refused", whole_screen=True)

        put_rules(MY_RULES)
        page.click(page.find(".rule-preview .rule-save"))
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed after Save")
        page.until("return document.querySelector('.make-rule:disabled') !== null", message="no sign of the saved rule")
        saved = read_rules()
        assert saved == MY_RULES + "\n" + shown.rstrip("\n") + "\n", saved
        name = re.search(r'^name = "([^"]+)"$', shown, re.M).group(1)
        page.click(page.find("#nav-queue"))

        # The same entry again: the rule just saved answers it already, so none is drafted twice.
        page.click(page.find("#nav-history"))
        # Found and clicked in one step, once History has been drawn again (the list of before, with its
        # "Rule saved", shows until then).
        page.until("const li = [...document.querySelectorAll('.history-item')]"
                   ".find((li) => li.querySelector('dt') && li.querySelector('dt').textContent === arguments[0]);"
                   "const button = li && li.querySelector('.make-rule:not(:disabled)');"
                   "if (!button) return false; button.click(); return true;",
                   text, message="no History entry for the question")
        said = page.until("const p = document.querySelector('.rule-preview .rule-unavailable');"
                          "return p ? p.textContent : null;", message="no reason in the preview")
        assert f'the rule "{name}" (line ' in said and "already answers this way here" in said, said
        assert page.js("return document.querySelector('.rule-preview .rule-save').hidden") is True
        page.click(page.find(".rule-preview .rule-cancel"))
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed")
        assert read_rules() == saved
        page.click(page.find("#nav-queue"))

        expected = {"answers": [{"id": "section", "selected": [], "custom": "Fixed"}]}
        assert answered_by_the_rule(ctx, questions, expected) == f"rule:{name}"
    finally:
        page.js("document.getElementById('nav-queue').click()")
        put_rules("")
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


FMT = [{"id": "fmt", "question": "Run cargo fmt on the whole workspace?",
        "options": [{"label": "Yes"}, {"label": "No"}, {"label": "Only changed files"}]}]


def test_a_shadow_rule_suggests_and_the_human_decides(ctx):
    """A shadow rule's answer is shown under the question with Use; Use selects it, nothing is sent until Submit."""
    load_rules(ctx, '[[rule]]\nname = "fmt"\nmatch.question = "^Run cargo fmt"\nanswer = "Only changed files"\nmode = "shadow"\n',
              lambda s: rule_names(s) == [("fmt", "shadow")])
    try:
        _, _, outcome = ctx.ask(FMT, agent="coder")
        ctx.show("fmt")
        page = ctx.page
        line = page.until("return document.querySelector('[data-qid=\"fmt\"] .suggestion')", message="no suggestion shown")
        said = page.text(element_id(line))
        assert said == "Rule “fmt” (shadow) suggests: Only changed files Use", said
        assert not page.js("return document.querySelector('[data-qid=\"fmt\"] input:checked')"), "selected before Use"
        ctx.shot("shadow-suggestion", top=True)
        page.click(page.find('[data-qid="fmt"] .use-suggestion'))
        checked = page.js("return [...document.querySelectorAll('[data-qid=\"fmt\"] input:checked')].map((i) => i.value)")
        assert checked == ["Only changed files"], checked
        assert ctx.queue_count() == 1, "Use sent nothing"
        # The human still decides: here, something else than the suggestion.
        page.click(ctx.option("fmt", "No"))
        page.click(page.find("#submit"))
        got = answer_of(outcome())
        assert got == {"answers": [{"id": "fmt", "selected": ["No"]}]}, got
        ctx.wait_queue(0)
    finally:
        no_rules(ctx)


RULES_VIEW = """# Routine lint questions are mine to skip.
[[rule]]
name = "skip-lint"
match = { header = "Lint", cwd = "/home/dana/src" }
answer = "Skip"

# Trying this one out first.
[[rule]]
name = "fmt"
match.question = "^Run cargo fmt --check"   # only this wording
answer = "Yes"
mode = "shadow"
after = "1h30m"
"""


def rule_card(page, name):
    return page.until("return document.querySelector('#rules-list .rule-item[data-rule=\"' + arguments[0] + '\"]')",
                      name, message=f"no rule card for {name}")


def card_mode(page, name):
    return page.js("const c = document.querySelector('#rules-list .rule-item[data-rule=\"' + arguments[0] + '\"]');"
                   "return c && c.dataset.mode;", name)


def test_the_rules_view_lists_rules_counts_and_switches_their_mode(ctx):
    """Every rule in order with its match, action, after and replayed counts; a switch rewrites the file
    (comments kept) and the view shows what the engine reloaded, as it does for an edit made elsewhere."""
    load_rules(ctx, RULES_VIEW, lambda s: rule_names(s) == [("skip-lint", "on"), ("fmt", "shadow")])
    page = ctx.page
    try:
        # One request the rule settles, one the human settles as the shadow rule proposed.
        lint = [{"id": "lint", "header": "Lint", "question": "Fix the 3 clippy lints now?",
                 "options": [{"label": "Fix"}, {"label": "Skip"}]}]
        _, _, outcome = ctx.ask(lint, agent="coder")
        assert answer_of(outcome()) == {"answers": [{"id": "lint", "selected": ["Skip"]}]}
        check = [{"id": "fmt", "question": "Run cargo fmt --check before the commit?",
                  "options": [{"label": "Yes"}, {"label": "No"}]}]
        human_answers(ctx, check, "Yes")

        page.click(page.find("#nav-rules"))
        rule_card(page, "fmt")
        assert page.text(page.find("#rules-path")) == rules_path()
        rows = page.js("""return [...document.querySelectorAll('#rules-list .rule-item')].map((c) => ({
            name: c.dataset.rule, mode: c.dataset.mode,
            matches: c.querySelector('.rule-match').textContent, action: c.querySelector('.rule-action').textContent,
            after: c.querySelector('.rule-after') ? c.querySelector('.rule-after').textContent : null,
            counts: Object.fromEntries([...c.querySelectorAll('[data-count]')].map((n) => [n.dataset.count, Number(n.textContent)])),
        }))""")
        assert rows == [
            {"name": "skip-lint", "mode": "on", "matches": 'cwd under /home/dana/src, header "Lint"', "action": 'answer "Skip"',
             "after": None, "counts": {"hits": 1, "acted": 1, "agreed": 0, "differed": 0}},
            {"name": "fmt", "mode": "shadow", "matches": "question /^Run cargo fmt --check/", "action": 'answer "Yes"',
             "after": "1h30m", "counts": {"hits": 1, "acted": 0, "agreed": 1, "differed": 0}},
        ], rows
        assert not page.find_all("#rules-error:not([hidden])"), "an error shown for a good file"
        ctx.shot("rules-view", x_window=True)

        # The switch writes the file, keeping what the person wrote; the view follows the engine.
        page.click(page.find('#rules-list .rule-item[data-rule="skip-lint"] .mode-option[data-mode="off"]'))
        deadline = time.time() + 10
        while card_mode(page, "skip-lint") != "off":
            assert time.time() < deadline, "the view never showed lint off"
            time.sleep(0.2)
        with open(rules_path(), encoding="utf-8") as f:
            written = f.read()
        assert "# Routine lint questions are mine to skip." in written, written
        assert 'match.question = "^Run cargo fmt --check"   # only this wording' in written, written
        assert rule_names(rules_state(ctx)) == [("skip-lint", "off"), ("fmt", "shadow")]
        ctx.shot("rules-view-off", x_window=True)
        # Now off, the rule no longer answers: the question comes to the human.
        _, _, outcome = ctx.ask(lint, agent="coder")
        page.click(page.find("#nav-queue"))
        ctx.show("lint")
        page.click(page.find("#dismiss"))
        expect_error(outcome(), "ASK_CANCELLED")
        page.click(page.find("#nav-rules"))

        # An edit made in a text editor shows up too.
        with open(rules_path(), "w", encoding="utf-8") as f:
            f.write(written.replace('mode = "shadow"', 'mode = "on"'))
        deadline = time.time() + 15
        while card_mode(page, "fmt") != "on":
            assert time.time() < deadline, "the view never showed the edit made elsewhere"
            time.sleep(0.2)
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


def test_a_broken_rules_file_is_shown_and_the_last_good_rules_stay(ctx):
    """A broken file: a notice in the sidebar leads to the Rules view, which says where and what; fixed, both go."""
    good = '[[rule]]\nname = "keep"\nmatch.header = "Keep"\nanswer = "Yes"\n'
    load_rules(ctx, good, lambda s: rule_names(s) == [("keep", "on")])
    page = ctx.page
    try:
        assert not page.find_all("#rules-notice:not([hidden])"), "a notice for a good file"
        load_rules(ctx, good + 'after = "soon"\n', lambda s: s["error"] is not None, "the breakage was never seen")
        notice = page.until("return document.querySelector('#rules-notice:not([hidden])')",
                            message="no notice of the broken file")
        assert page.text(element_id(notice)) == "⚠ The rules file has an error"
        page.click(element_id(notice))
        error = page.until("return document.querySelector('#rules-error:not([hidden])')", message="no error in the Rules view")
        said = page.text(element_id(error))
        assert "Line 5, column 9: " in said and "is not a duration" in said, said
        assert "The last good rules stay in force until it is fixed: the rule below." in said, said
        assert card_mode(page, "keep") == "on"
        switches = page.js("return [...document.querySelectorAll('.mode-option')].map((b) => b.disabled)")
        assert switches and all(switches), "a switch on a broken file"
        ctx.shot("rules-broken", x_window=True)

        load_rules(ctx, good, lambda s: s["error"] is None, "the fix was never seen")
        page.until("return document.getElementById('rules-notice').hidden", message="the notice stayed after the fix")
        page.until("return document.getElementById('rules-error').hidden", message="the error stayed after the fix")
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


LONG_LABEL = "A very long agent label that describes the agent in too much detail, twice over, to test layout"


def test_history_filters_stay_in_the_window_with_a_long_agent_label(ctx):
    """An agent's long label is cut in the Agent filter; every filter stays inside the window."""
    conn = ctx.conn()
    agent = conn.call("agents/register", {"id": "long-label", "label": LONG_LABEL})
    rid = conn.start("user-questions/ask", {"agent": agent, "questions": [
        {"id": "long", "question": "Which layout?", "options": [{"label": "Wide"}, {"label": "Narrow"}]}]})
    ctx.show("long")
    page = ctx.page
    page.click(ctx.option("long", "Narrow"))
    page.click(page.find("#submit"))
    assert conn.wait(rid, timeout=15) == {"answers": [{"id": "long", "selected": ["Narrow"]}]}
    try:
        page.click(page.find("#nav-history"))
        page.until("return [...document.getElementById('history-agent').options].some((o) => o.value === arguments[0])",
                   LONG_LABEL, message="the long label never reached the Agent filter")
        filter_history(page, "history-agent", LONG_LABEL)
        boxes = page.js(
            "const r = (id) => { const b = document.getElementById(id).getBoundingClientRect();"
            " return [Math.round(b.left), Math.round(b.right)]; };"
            "return {width: document.documentElement.clientWidth, agent: r('history-agent'), answerer: r('history-answerer'),"
            " outcome: r('history-outcome')};")
        for name in ("agent", "answerer", "outcome"):
            left, right = boxes[name]
            assert 0 <= left and right <= boxes["width"], boxes
        assert boxes["agent"][1] - boxes["agent"][0] < 320, boxes
        ctx.shot("history-long-label", x_window=True)
        filter_history(page, "history-agent", "")
    finally:
        page.click(page.find("#nav-queue"))


def test_long_unbroken_labels_and_answers_stay_in_their_cards(ctx):
    """A 200-character label without spaces wraps inside its option; an unbroken answer wraps in History."""
    page = ctx.page
    label = "Unbroken_" + "y" * 200
    answer = "z" * 300
    _, _, outcome = ctx.ask([{"id": "wide", "question": "Which_" + "w" * 150 + "?",
                              "options": [{"label": label}, {"label": "Short"}]}], agent="coder")
    ctx.show("wide")
    sizes = page.js(
        "const card = document.querySelector('[data-qid=\"wide\"]'); const c = card.getBoundingClientRect();"
        "const inside = (el) => { const r = document.createRange(); r.selectNodeContents(el); const b = r.getBoundingClientRect();"
        " return b.width > 0 && b.left >= c.left - 1 && b.right <= c.right + 1; };"
        "return {label: inside(card.querySelector('.option-label')), question: inside(card.querySelector('.q-text')) ,"
        " scroll: document.getElementById('request-form').scrollWidth - document.getElementById('request-form').clientWidth};")
    assert sizes == {"label": True, "question": True, "scroll": 0}, sizes
    ctx.shot("long-label", top=True)
    page.type(ctx.other_box("wide"), answer)
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "wide", "selected": [], "custom": answer}]}
    try:
        page.click(page.find("#nav-history"))
        item = page.until("return [...document.querySelectorAll('.history-item')]"
                          ".find((e) => e.textContent.includes(arguments[0])) || null", answer,
                          message="the answer never showed in History")
        inside = page.js(
            "const item = arguments[0]; const c = item.getBoundingClientRect();"
            "return [...item.querySelectorAll('dt, dd')].every((el) => el.getBoundingClientRect().right <= c.right + 1)"
            " && item.scrollWidth <= item.clientWidth;", item)
        assert inside, "an unbroken answer overflows its History card"
    finally:
        page.click(page.find("#nav-queue"))


def test_history_shows_who_answered_and_filters_by_it(ctx):
    """History tags each entry "by you" or "by rule:<name>", and the answerer filter keeps only theirs."""
    load_rules(ctx, '[[rule]]\nname = "tidy"\nmatch.question = "^Tidy the imports"\nanswer = "Yes"\n',
              lambda s: rule_names(s) == [("tidy", "on")])
    page = ctx.page
    try:
        tidy = [{"id": "tidy", "question": "Tidy the imports of crates/ now?", "options": [{"label": "Yes"}, {"label": "No"}]}]
        _, _, outcome = ctx.ask(tidy, agent="coder")
        assert answer_of(outcome()) == {"answers": [{"id": "tidy", "selected": ["Yes"]}]}
        mine = [{"id": "mine", "question": "Keep the old changelog format?", "options": [{"label": "Yes"}, {"label": "No"}]}]
        human_answers(ctx, mine, "No")

        page.click(page.find("#nav-history"))
        shown = page.until("""const m = Object.fromEntries([...document.querySelectorAll('.history-item')].map((e) => [
            e.querySelector('dt') ? e.querySelector('dt').textContent : '',
            e.querySelector('.pill.answerer') ? e.querySelector('.pill.answerer').textContent : null]));
            return m['Keep the old changelog format?'] ? m : null;""", message="the entries never showed")
        assert shown["Tidy the imports of crates/ now?"] == "by rule:tidy", shown
        assert shown["Keep the old changelog format?"] == "by you", shown
        choices = page.js("return [...document.getElementById('history-answerer').options].map((o) => o.value)")
        assert choices[:2] == ["", "you"] and "rule:tidy" in choices, choices
        filter_history(page, "history-answerer", "rule:tidy")
        tags = page.js("return [...document.querySelectorAll('.history-item .pill.answerer')].map((e) => e.textContent)")
        kept = page.js("return document.querySelectorAll('.history-item').length")
        assert tags == ["by rule:tidy"] and kept == 1, (tags, kept)
        filter_history(page, "history-answerer", "you")
        tags = page.js("return [...document.querySelectorAll('.history-item .pill.answerer')].map((e) => e.textContent)")
        assert tags and set(tags) == {"by you"}, tags
        filter_history(page, "history-answerer", "")
        ctx.shot("history-answerer", x_window=True)
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


def test_history_reaches_every_entry_however_long_the_journal(ctx):
    """History sends the newest 200 entries the filters let through, and says so; its filters offer
    every agent and answerer of the whole journal, so the oldest entry is one choice away, and
    "Show more" brings the next 200."""
    page = ctx.page
    helper = ctx.conn("bulk-answerer")
    helper.call("answerers/register", {"scope": "all", "prepend": True, "label": "bulk"})
    stop = threading.Event()

    def answer_all():
        while not stop.is_set():
            try:
                req = helper.next_incoming(timeout=0.5)
            except queue.Empty:
                continue
            if req.get("method") == "user-questions/request":
                helper.reply(req, {"answers": [{"id": req["params"]["questions"][0]["id"], "selected": ["Yes"]}]})
    threading.Thread(target=answer_all, daemon=True).start()
    try:
        first = ctx.conn("the-first")
        agent = first.call("agents/register", {"id": "archivist", "label": "the-oldest-agent"})
        first.call("user-questions/ask", {"agent": agent, "questions": [
            {"id": "first", "question": "The first of many?", "options": [{"label": "Yes"}]}]}, timeout=30)
        bulk = ctx.conn("bulk-asker")
        waiting = []
        for i in range(250):
            waiting.append(bulk.start("user-questions/ask", {"questions": [
                {"id": f"b{i}", "question": f"Routine question {i}?", "options": [{"label": "Yes"}]}]}))
            if len(waiting) == 64:
                bulk.wait(waiting.pop(0), timeout=30)
        for rid in waiting:
            bulk.wait(rid, timeout=30)
    finally:
        stop.set()
        helper.close()

    page.click(page.find("#nav-history"))
    page.wait_for(".history-more", timeout=30)
    told = page.text(page.find(".history-more span"))
    assert re.fullmatch(r"The newest 200 of \d+\.", told), told
    matching = int(told.split()[-1][:-1])
    assert matching > 250, told
    ctx.shot("history-more", scroll_to=".history-more")
    assert page.js("return document.querySelectorAll('.history-item').length") == 200
    questions = "return [...document.querySelectorAll('.history-item dt')].map((e) => e.textContent)"
    assert "The first of many?" not in page.js(questions)
    agents = page.js("return [...document.getElementById('history-agent').options].map((o) => o.value)")
    assert "the-oldest-agent" in agents, agents
    assert "bulk" in page.js("return [...document.getElementById('history-answerer').options].map((o) => o.value)")
    filter_history(page, "history-agent", "the-oldest-agent")
    assert page.js(questions) == ["The first of many?"], page.js(questions)
    assert not page.find_all(".history-more"), "one entry matches: nothing more to show"
    filter_history(page, "history-agent", "")
    before = page.js("return document.getElementById('history-list').dataset.loaded")
    page.click(page.find(".history-more-button"))
    page.until("return document.getElementById('history-list').dataset.loaded !== arguments[0]", before,
               message="Show more read nothing")
    shown = page.js("return document.querySelectorAll('.history-item').length")
    assert shown == min(400, matching), (shown, matching)
    assert "The first of many?" in page.js(questions)
    page.click(page.find("#nav-queue"))


def closed_on_bus_eventually(ctx, nid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if closed_on_bus(ctx.bus_log(), nid):
            return True
        time.sleep(0.2)
    return False


def test_single_select_custom_overrides_and_keyboard(ctx):
    """Digits pick an option, typed "Other" text overrides it (selected empty), Ctrl+Enter submits."""
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    ctx.shot("dialog-single")
    ctx.page.keys("2")
    assert ctx.page.js("return document.querySelectorAll('[data-qid=\"migrate\"] input:checked')[0].value") == \
        "Offline, in one transaction"
    ctx.page.type(ctx.other_box("migrate"), "Wait until Monday")
    ctx.page.keys(ENTER, modifier=CONTROL)
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "migrate", "selected": [], "custom": "Wait until Monday"}]}, got


def focused(page):
    """Where the focus is: the question id and the control's value, or the element's id or tag."""
    return page.js("const a = document.activeElement; if (!a || a === document.body) return 'body';"
                   "const q = a.closest('[data-qid]');"
                   "return q ? q.dataset.qid + ':' + (a.value !== undefined ? a.value : a.className) : (a.id || a.tagName);")


def test_keyboard_focus_follows_the_request_and_stays_in_the_link_confirm(ctx):
    """A shown request takes the focus on its first control; submitting moves it to the next one, then to the
    empty view; a request arriving meanwhile leaves a text box being typed in alone; the confirm traps Tab."""
    page = ctx.page
    _, _, first = ctx.ask(samples.BATCH, agent="coder")
    ctx.show("scope")
    page.until("return document.activeElement && document.activeElement.value === 'server'",
               message=f"the first option did not take the focus ({focused(page)})")
    # A link in the detail: the confirm keeps Tab on its buttons and gives the focus back to the link.
    link = page.find('[data-qid="scope"] .md a[href]')
    page.click(link)
    page.wait_for("#confirm:not([hidden])")
    assert focused(page) == "confirm-ok", focused(page)
    seen = set()
    for _ in range(4):
        page.keys(TAB)
        seen.add(focused(page))
    page.keys(TAB, modifier=SHIFT)
    seen.add(focused(page))
    assert seen == {"confirm-ok", "confirm-cancel"}, seen
    page.keys(ESCAPE)
    page.until("return document.getElementById('confirm').hidden", message="Esc did not close the confirm")
    assert page.js("return document.activeElement.tagName") == "A", focused(page)
    # Typing in a text box: a second request arriving does not take the focus.
    box = ctx.other_box("release")
    page.type(box, "Hold the bump")
    _, _, second = ctx.ask([{"id": "next", "question": "Merge now?", "options": [{"label": "Yes"}, {"label": "No"}]}])
    ctx.wait_queue(2)
    time.sleep(0.5)
    assert focused(page).startswith("release:"), focused(page)
    page.js("const t = document.querySelector('[data-qid=\"release\"] textarea.other-input'); t.value = '';"
            "t.dispatchEvent(new Event('input'));")
    # Answered by script: this test is about the focus, and the form has scrolled.
    page.js("const pick = (qid, value) => [...document.querySelectorAll('[data-qid=\"' + qid + '\"] input.option-input')]"
            ".find((i) => i.value === value).click();"
            "pick('scope', 'server'); pick('release', 'Patch (0.2.5)');"
            "document.querySelector('[data-qid=\"notes\"] .skip').click();")
    page.click(page.find("#submit"))
    answer_of(first())
    ctx.show("next")
    page.until("return document.activeElement && document.activeElement.value === 'Yes'",
               message=f"the next request did not take the focus ({focused(page)})")
    page.keys("2")
    page.keys(ENTER, modifier=CONTROL)
    assert answer_of(second()) == {"answers": [{"id": "next", "selected": ["No"]}]}
    ctx.wait_queue(0)
    page.until("return document.activeElement && document.activeElement.id === 'view-empty'",
               message=f"the focus did not go to the empty view ({focused(page)})")


def test_a_request_that_takes_the_place_of_a_withdrawn_one_gets_no_keys_meant_for_it(ctx):
    """The human types in one request's text box; its agent withdraws it and another agent's request takes its
    place. The focus goes to the request view, not to a control, and for a second no key acts on the new
    request (a digit, Ctrl+Enter); then keys work as usual. A request the human settles moves the focus on."""
    page = ctx.page
    conn, first, _ = ctx.ask([{"id": "hold", "question": "Hold the release?",
                               "options": [{"label": "Yes"}, {"label": "No"}]}], agent="coder")
    # An agent of its own: a notification summary no other test looks for.
    other = ctx.conn()
    handle = other.call("agents/register", {"id": f"deployer-{os.getpid()}", "label": "deploy-bot"})
    merge = other.start("user-questions/ask", {"agent": handle, "questions": [
        {"id": "merge", "question": "Merge the branch?", "options": [{"label": "Yes"}, {"label": "No"}]}]})

    def second(timeout=15):
        try:
            return {"result": other.wait(merge, timeout=timeout)}
        except TimeoutError:
            raise AssertionError("the asker got no reply") from None
    ctx.wait_queue(2)
    ctx.show("hold")
    page.type(ctx.other_box("hold"), "Wait for the")
    conn.notify("$/cancelRequest", {"id": first})
    ctx.show("merge")
    ctx.wait_queue(1)
    page.keys("2")
    page.keys(ENTER, modifier=CONTROL)
    state = page.js("return {checked: [...document.querySelectorAll('[data-qid=\"merge\"] input:checked')].map((i) => i.value),"
                    " focus: document.activeElement.id, waiting: document.getElementById('queue-count').textContent};")
    assert state == {"checked": [], "focus": "view-request", "waiting": "1"}, state
    try:
        got = second(timeout=0.3)
    except AssertionError:
        got = None
    assert got is None, f"Ctrl+Enter answered the request that took the withdrawn one's place: {got}"
    time.sleep(1.0)
    page.keys("2")
    page.until("return document.querySelector('[data-qid=\"merge\"] input:checked')?.value === 'No'",
               message="a digit did not pick once the request had been on screen for a while")
    page.keys(ENTER, modifier=CONTROL)
    assert answer_of(second()) == {"answers": [{"id": "merge", "selected": ["No"]}]}
    ctx.wait_queue(0)


def set_window_size(page, width, height):
    """Asks for a window of this size and returns the page's viewport once it has changed."""
    page.cmd("POST", "/window/rect", {"width": width, "height": height})
    return page.until("return window.innerWidth <= arguments[0] + 40 && window.innerHeight <= arguments[1] + 40"
                      " ? [window.innerWidth, window.innerHeight] : null", width, height,
                      message=f"the window did not become {width}x{height}")


def test_the_smallest_window_keeps_the_question_and_its_buttons_in_reach(ctx):
    """At the window's minimum size (640x420) a long agent label and meta scroll inside the header (at most a
    third of the window), the question and every button stay inside the window, and a plan review in one
    column puts the plan right after the decision, its outline after the plan."""
    page = ctx.page
    before = page.window_rect()
    conn = ctx.conn()
    handle = conn.call("agents/register", {"id": f"long-{os.getpid()}", "label": "claude-code " + "x" * 200,
                                           "meta": {"cwd": "/home/me/" + "deep/" * 60, "repo": "r", "branch": "b"}})
    rid = conn.start("user-questions/ask", {"agent": handle, "questions": [
        {"id": "small", "question": "Proceed with the small window?",
         "options": [{"label": "Yes"}, {"label": "No"}]}]})
    plan_conn, plan_rid, _ = ctx.ask([dict(samples.PLAN_REVIEW[0], detail=long_plan(24))], agent="coder")
    try:
        ctx.show("small")
        width, height = set_window_size(page, 640, 420)
        assert width <= 680 and height <= 460, (width, height)
        layout = page.js(
            "const r = (el) => el.getBoundingClientRect();"
            "const inside = (el) => { const b = r(el); return b.left >= 0 && b.right <= innerWidth + 0.5 && b.bottom <= innerHeight + 0.5; };"
            "const asker = document.getElementById('asker');"
            "return {header: r(asker).height <= innerHeight / 3 + 1, scrolls: asker.scrollHeight > asker.clientHeight,"
            " question: r(document.querySelector('[data-qid=\"small\"] .q-text')).top < innerHeight - 40,"
            " buttons: ['submit', 'dismiss', 'always'].filter((id) => !inside(document.getElementById(id))),"
            " wide: document.documentElement.scrollWidth <= document.documentElement.clientWidth};")
        assert layout == {"header": True, "scrolls": True, "question": True, "buttons": [], "wide": True}, layout
        ctx.shot("small-window", x_window=True)
        page.click(ctx.option("small", "No"))
        page.click(page.find("#submit"))
        assert conn.wait(rid, timeout=15) == {"answers": [{"id": "small", "selected": ["No"]}]}

        ctx.show("plan")
        page.wait_for('[data-qid="plan"] .plan-outline')
        order = page.js(
            "const top = (s) => document.querySelector('[data-qid=\"plan\"] ' + s).getBoundingClientRect().top;"
            "const decision = document.querySelector('[data-qid=\"plan\"] .plan-decision').getBoundingClientRect();"
            "return {decisionFirst: decision.top < top('.plan-main'), planNext: top('.plan-main') - decision.bottom < 200,"
            " outlineAfter: top('.plan-outline') > top('.plan-main'),"
            " buttons: ['submit', 'dismiss'].filter((id) => document.getElementById(id).getBoundingClientRect().right > innerWidth + 0.5)};")
        assert order == {"decisionFirst": True, "planNext": True, "outlineAfter": True, "buttons": []}, order
        ctx.shot("small-window-plan", x_window=True)
    finally:
        plan_conn.notify("$/cancelRequest", {"id": plan_rid})
        set_window_size(page, before["width"], before["height"])
        ctx.wait_queue(0)


def test_recommended_label_comes_back_unchanged(ctx):
    _, _, outcome = ctx.ask(samples.SINGLE)
    ctx.show("migrate")
    assert ctx.page.find_all(".option.recommended"), "the recommended option is not highlighted"
    ctx.page.click(ctx.option("migrate", "Online, in batches (Recommended)"))
    ctx.page.click(ctx.page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "migrate", "selected": ["Online, in batches (Recommended)"]}]}, got


def test_skip_keeps_the_shape(ctx):
    _, _, outcome = ctx.ask(samples.BATCH[1:])
    ctx.show("release")
    ctx.page.click(ctx.page.find('[data-qid="release"] .skip'))
    ctx.page.type(ctx.other_box("notes"), "nothing")
    ctx.page.click(ctx.page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "release", "selected": []}, {"id": "notes", "selected": [], "custom": "nothing"}]}, got


def test_notification_action_answers_in_place(ctx):
    """ActionInvoked on the bus for the notification answers a single-select question."""
    _, _, outcome = ctx.ask(samples.SINGLE, agent="reviewer")
    nid = ctx.notification_id("review-bot asks")
    ctx.show("migrate")
    ctx.shot("notification", whole_screen=True)
    box = None
    for _ in range(20):
        # The app subscribes to ActionInvoked right after Notify returns; repeat until it has.
        subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                        "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}", "string:choose-1"], check=True)
        try:
            box = outcome(timeout=0.5)
            break
        except AssertionError:
            continue
    assert box is not None, "the notification action did not answer"
    assert answer_of(box) == {"answers": [{"id": "migrate", "selected": ["Offline, in one transaction"]}]}, box
    ctx.wait_queue(0)


def test_activating_a_notification_opens_its_request(ctx):
    """The notification's default action shows the window with that request selected."""
    _, _, first = ctx.ask([dict(samples.SINGLE[0], id="older")], agent="coder")
    ctx.show("older")
    _, _, second = ctx.ask([{"id": "newer", "question": "Rotate the API keys today?",
                             "options": [{"label": "Yes"}, {"label": "No"}, {"label": "Tomorrow"}]}], agent="reviewer")
    ctx.wait_queue(2)
    nid = ctx.notification_id("review-bot asks")
    assert ctx.page.find_all('[data-qid="older"]'), "the older request should still be shown"
    ctx.page.keys("\ue00c")
    ctx.page.until("return document.visibilityState === 'hidden'", message="Esc did not hide the window")
    deadline = time.time() + 10
    while time.time() < deadline and not ctx.page.find_all('[data-qid="newer"]'):
        subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                        "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}", "string:default"], check=True)
        time.sleep(0.5)
    ctx.show("newer", timeout=1)
    ctx.page.until("return document.visibilityState === 'visible'", message="the window was not shown")
    ctx.page.click(ctx.option("newer", "Tomorrow"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(second()) == {"answers": [{"id": "newer", "selected": ["Tomorrow"]}]}
    ctx.show("older")
    ctx.page.click(ctx.page.find("#dismiss"))
    expect_error(first(), "ASK_CANCELLED")


def shown_view(page):
    return page.js("return ['view-empty', 'view-request', 'view-history', 'view-rules']"
                   ".filter((id) => !document.getElementById(id).hidden).join(',')")


def test_a_question_that_shows_the_hidden_window_is_what_it_shows(ctx):
    """A window left on History and hidden comes back for a new question showing that question; a visible
    window stays on the view the human is looking at."""
    page = ctx.page
    try:
        page.click(page.find("#nav-history"))
        page.until("return !document.getElementById('view-history').hidden", message="History did not open")
        _, _, seen = ctx.ask([{"id": "while-looking", "question": "Arrives while History is looked at?",
                               "options": [{"label": "Yes"}, {"label": "No"}]}], agent="coder")
        ctx.wait_queue(1)
        time.sleep(1)
        assert shown_view(page) == "view-history", shown_view(page)
        page.keys(ESCAPE)
        page.until("return document.visibilityState === 'hidden'", message="Esc did not hide the window")
        _, _, new = ctx.ask([{"id": "while-hidden", "question": "Arrives while the window is hidden?",
                              "options": [{"label": "Yes"}, {"label": "No"}]}], agent="reviewer")
        page.until("return document.visibilityState === 'visible'", message="the new question did not show the window")
        ctx.show("while-hidden")
        assert shown_view(page) == "view-request", shown_view(page)
        page.click(ctx.option("while-hidden", "Yes"))
        page.click(page.find("#submit"))
        assert answer_of(new()) == {"answers": [{"id": "while-hidden", "selected": ["Yes"]}]}
        ctx.show("while-looking")
        page.click(page.find("#dismiss"))
        expect_error(seen(), "ASK_CANCELLED")
    finally:
        page.js("document.getElementById('nav-queue').click()")


def test_cancel_withdraws_dialog_and_notification(ctx):
    conn, rid, outcome = ctx.ask(samples.SINGLE, agent="coder")
    nid = ctx.notification_id("claude-code asks")
    ctx.show("migrate")
    conn.notify("$/cancelRequest", {"id": rid})
    expect_error(outcome(), "ASK_ABORTED")
    ctx.wait_queue(0)
    toast = ctx.page.until("const t = document.getElementById('toast'); return !t.hidden && t.textContent")
    assert "Withdrawn" in toast, toast
    assert closed_on_bus_eventually(ctx, nid), f"notification {nid} was not closed"
    assert not ctx.page.find_all('[data-qid="migrate"]')


def test_two_agents_are_queued_and_answered_separately(ctx):
    _, _, first = ctx.ask([dict(samples.SINGLE[0], id="first")], agent="coder")
    ctx.wait_queue(1)
    _, _, second = ctx.ask([{"id": "second", "question": "Publish the website now?", "header": "Deploy",
                             "options": [{"label": "Publish"}, {"label": "Hold"}]}], agent="reviewer")
    ctx.wait_queue(2)
    ctx.open_request_of("review-bot")
    ctx.show("second")
    ctx.shot("dialog-queue")
    ctx.page.click(ctx.option("second", "Hold"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(second()) == {"answers": [{"id": "second", "selected": ["Hold"]}]}
    ctx.wait_queue(1)
    ctx.show("first")
    ctx.page.click(ctx.option("first", "Offline, in one transaction"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(first()) == {"answers": [{"id": "first", "selected": ["Offline, in one transaction"]}]}


def test_dismiss_fails_ask_cancelled(ctx):
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    ctx.page.click(ctx.page.find("#dismiss"))
    err = expect_error(outcome(), "ASK_CANCELLED")
    assert err.message == "the user cancelled ask_user_question", err.message
    ctx.wait_queue(0)


def test_do_not_disturb_delegates(ctx):
    page = ctx.page
    page.click(page.find("#dnd"))
    page.until("return document.getElementById('dnd').checked")
    time.sleep(0.3)
    try:
        _, _, outcome = ctx.ask(samples.SINGLE)
        expect_error(outcome(), "NO_PROVIDER")
        # With another answerer after the GUI, the request moves on to it.
        helper = ctx.conn("helper")
        helper.call("answerers/register", {"scope": "all", "label": "helper"})

        def answer_one():
            req = helper.next_incoming(timeout=15)
            helper.reply(req, {"answers": [{"id": "migrate", "selected": ["Skip the migration for now"]}]})
        t = threading.Thread(target=answer_one, daemon=True)
        t.start()
        _, _, outcome = ctx.ask(samples.SINGLE)
        assert answer_of(outcome()) == {"answers": [{"id": "migrate", "selected": ["Skip the migration for now"]}]}
        assert ctx.queue_count() == 0
        helper.close()
    finally:
        page.click(page.find("#dnd"))
        page.until("return !document.getElementById('dnd').checked")
        time.sleep(0.3)


def test_second_launch_exits_and_first_keeps_serving(ctx):
    started = time.time()
    proc = subprocess.run([ctx.args.app], env=os.environ.copy(), capture_output=True, timeout=30)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert time.time() - started < 30
    c = ctx.conn("after-second-launch")
    assert c.call("ping", {}) == {}
    _, _, outcome = ctx.ask(samples.SINGLE, conn=c)
    ctx.show("migrate")
    ctx.page.click(ctx.option("migrate", "Offline, in one transaction"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(outcome())["answers"][0]["selected"] == ["Offline, in one transaction"]


def test_escape_hides_the_window_and_a_second_launch_shows_it(ctx):
    """Esc hides the window (the request stays queued); a second launch asks the first to show it."""
    _, _, outcome = ctx.ask(samples.SINGLE)
    ctx.show("migrate")
    ctx.page.until("return document.visibilityState === 'visible'", message="the window is not visible")
    ctx.page.keys("\ue00c")
    ctx.page.until("return document.visibilityState === 'hidden'", message="Esc did not hide the window")
    assert ctx.queue_count() == 1, "Esc must not dismiss"
    proc = subprocess.run([ctx.args.app], env=os.environ.copy(), capture_output=True, timeout=30)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    ctx.page.until("return document.visibilityState === 'visible'", message="the second launch did not show the window")
    ctx.page.click(ctx.option("migrate", "Skip the migration for now"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(outcome())["answers"][0]["selected"] == ["Skip the migration for now"]


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


def tray_label(name, path):
    out = dbus(f"--dest={name}", path, "org.freedesktop.DBus.Properties.Get",
               "string:org.kde.StatusNotifierItem", "string:XAyatanaLabel")
    m = re.search(r'string "(.*)"', out)
    return m.group(1) if m else None


def test_tray_shows_the_count_and_its_menu_switches_do_not_disturb(ctx):
    found = None
    deadline = time.time() + 10
    while found is None and time.time() < deadline:
        found = find_tray_item()
        time.sleep(0.2)
    assert found, "no tray item on the bus"
    name, path = found
    _, _, outcome = ctx.ask(samples.SINGLE)
    ctx.show("migrate")
    deadline = time.time() + 10
    while tray_label(name, path) != "1" and time.time() < deadline:
        time.sleep(0.2)
    assert tray_label(name, path) == "1", tray_label(name, path)
    layout = dbus(f"--dest={name}", f"{path}/Menu", "com.canonical.dbusmenu.GetLayout", "int32:0", "int32:-1", "array:string:")
    items = {}
    for chunk in layout.split("struct {")[1:]:
        item_id = re.search(r"int32 (\d+)", chunk)
        label = re.search(r'string "label"\s+variant\s+string "([^"]*)"', chunk)
        if item_id and label:
            items[label.group(1)] = int(item_id.group(1))
    assert {"Open askdesk", "Do not disturb", "Quit askdesk"} <= set(items), layout
    dbus(f"--dest={name}", f"{path}/Menu", "com.canonical.dbusmenu.Event", f"int32:{items['Do not disturb']}",
         "string:clicked", "variant:int32:0", "uint32:0")
    try:
        ctx.page.until("return document.getElementById('dnd').checked", message="the tray did not switch do not disturb on")
    finally:
        ctx.page.click(ctx.page.find("#dnd"))
        ctx.page.until("return !document.getElementById('dnd').checked")
    ctx.page.click(ctx.page.find("#dismiss"))
    expect_error(outcome(), "ASK_CANCELLED")
    deadline = time.time() + 10
    while tray_label(name, path) != "" and time.time() < deadline:
        time.sleep(0.2)
    assert tray_label(name, path) == "", tray_label(name, path)


def test_tray_quit_settles_waiting_requests_and_removes_the_socket(ctx):
    """Last test: Quit stops the broker; a waiting ask settles SHUTTING_DOWN and the socket goes."""
    name, path = find_tray_item()
    _, _, outcome = ctx.ask(samples.SINGLE)
    ctx.show("migrate")
    ctx.app_gone = True
    layout = dbus(f"--dest={name}", f"{path}/Menu", "com.canonical.dbusmenu.GetLayout", "int32:0", "int32:-1", "array:string:")
    quit_id = next(int(re.search(r"int32 (\d+)", chunk).group(1)) for chunk in layout.split("struct {")[1:]
                   if 'string "Quit askdesk"' in chunk)
    dbus(f"--dest={name}", f"{path}/Menu", "com.canonical.dbusmenu.Event", f"int32:{quit_id}",
         "string:clicked", "variant:int32:0", "uint32:0")
    err = expect_error(outcome(), "SHUTTING_DOWN")
    assert err.message == "askdesk shut down before the user answered", err.message
    deadline = time.time() + 10
    while os.path.exists(ctx.socket) and time.time() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(ctx.socket), "the socket file is still there"
    # The journal is closed on the way out: cut back to its lines, the spaces held for more gone.
    deadline = time.time() + 10
    while time.time() < deadline:
        with open(journal_path(), "rb") as f:
            tail = f.read()[-40:]
        if tail.endswith(b"\n"):
            break
        time.sleep(0.2)
    assert tail.endswith(b"\n"), f"the journal still ends in held spaces after Quit: {tail!r}"


def test_plan_review_renders_and_approve_returns_the_label(ctx):
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    page = ctx.page
    doc = '[data-qid="plan"] .plan-doc'
    page.wait_for(doc)
    counts = page.js(
        "const d = document.querySelector(arguments[0]);"
        "return {h1: d.querySelectorAll('h1').length, h2: d.querySelectorAll('h2').length,"
        " table: d.querySelectorAll('table').length, code: d.querySelectorAll('pre code').length,"
        " tasks: d.querySelectorAll('input[type=checkbox][disabled]').length,"
        " outline: document.querySelectorAll('[data-qid=\"plan\"] .outline-link').length};", doc)
    assert counts == {"h1": 1, "h2": 5, "table": 1, "code": 1, "tasks": 3, "outline": 6}, counts
    # The fenced SQL is highlighted in Rust; style.css colours its classes (no inline styles).
    colours = page.js(
        "const code = document.querySelector(arguments[0] + ' pre code.language-sql');"
        "const colour = (sel) => { const el = code.querySelector(sel); return el && getComputedStyle(el).color; };"
        "return {code: getComputedStyle(code).color, keyword: colour('.hl-keyword'), comment: colour('.hl-comment'),"
        " string: colour('.hl-string'), styled: code.querySelectorAll('[style]').length};", doc)
    assert colours["keyword"] and colours["comment"] and colours["string"], colours
    assert len({colours["code"], colours["keyword"], colours["comment"], colours["string"]}) == 4, colours
    assert colours["styled"] == 0, colours
    ctx.shot("plan-review", scroll_to='[data-qid="plan"] .plan-doc #md-h-3')
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    # The next tests ask with the same question id: the answered form must be gone first.
    ctx.wait_queue(0)


def test_plan_feedback_returns_as_custom(ctx):
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    ctx.page.type(ctx.page.find('[data-qid="plan"] .plan-feedback'), "Use WAL mode and keep the JSON export.")
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": [], "custom": "Use WAL mode and keep the JSON export."}]}
    ctx.wait_queue(0)


def approve_pressed(page):
    return page.js("return document.querySelector('[data-qid=\"plan\"] .plan-approve').getAttribute('aria-pressed')")


FEEDBACK = '[data-qid="plan"] .plan-feedback'


def approve_with_feedback(ctx, questions):
    """Asks, types feedback in the plan, presses Approve and waits for the question it asks; returns outcome()."""
    page = ctx.page
    page.until("return !document.querySelector('#request-form [data-qid]')", message="the last request stayed")
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("plan")
    page.type(page.find(FEEDBACK), "Add a rollback step.")
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    page.wait_for(".plan-notes-modal")
    assert approve_pressed(page) == "false"
    return outcome


def test_plan_approve_with_feedback_typed_asks_and_shows_what_is_sent(ctx):
    """A single-select approval cannot carry feedback: pressing Approve with feedback typed asks, and Approve
    is never shown pressed while the answer would be the feedback."""
    page = ctx.page
    # Alone: "Approve and drop your feedback" empties the box and sends the approval.
    outcome = approve_with_feedback(ctx, samples.PLAN_REVIEW)
    ctx.shot("plan-approve-with-feedback")
    choices = page.js("return [...document.querySelectorAll('.plan-notes-modal button')].map((b) => [b.dataset.choice, b.textContent])")
    assert choices == [["drop", "Approve and drop your feedback"], ["feedback", "Keep planning instead"]], choices
    page.click(page.find('.plan-notes-modal [data-choice="drop"]'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)
    # Alone: "Keep planning instead" sends the feedback, not an approval.
    outcome = approve_with_feedback(ctx, samples.PLAN_REVIEW)
    page.click(page.find('.plan-notes-modal [data-choice="feedback"]'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": [], "custom": "Add a rollback step."}]}
    ctx.wait_queue(0)
    # In a batch: Esc goes back with nothing pressed; dropping presses Approve with the box empty.
    outcome = approve_with_feedback(ctx, samples.MIXED)
    page.keys(ESCAPE)
    page.until("return !document.querySelector('.plan-notes-modal')", message="Esc did not close the question")
    assert approve_pressed(page) == "false"
    assert page.js(f"return document.querySelector('{FEEDBACK}').value") == "Add a rollback step."
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    page.wait_for(".plan-notes-modal")
    page.click(page.find('.plan-notes-modal [data-choice="drop"]'))
    assert approve_pressed(page) == "true"
    assert page.js(f"return document.querySelector('{FEEDBACK}').value") == ""
    assert ctx.queue_count() == 1, "approving in a batch must not submit it"
    page.click(ctx.option("tests", "No"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [
        {"id": "plan", "selected": ["Approve plan (Recommended)"]},
        {"id": "tests", "selected": ["No"]},
    ]}
    ctx.wait_queue(0)


def test_plan_mixed_with_questions_has_one_submit(ctx):
    _, _, outcome = ctx.ask(samples.MIXED, agent="coder")
    ctx.show("plan")
    ctx.show("tests")
    ctx.page.click(ctx.page.find('[data-qid="plan"] .plan-approve'))
    time.sleep(0.3)
    assert ctx.queue_count() == 1, "approve must not submit a mixed batch on its own"
    ctx.page.click(ctx.option("tests", "Yes (Recommended)"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [
        {"id": "plan", "selected": ["Approve plan (Recommended)"]},
        {"id": "tests", "selected": ["Yes (Recommended)"]},
    ]}
    ctx.wait_queue(0)


def test_xss_plan_runs_nothing(ctx):
    _, _, outcome = ctx.ask(samples.XSS_REVIEW)
    ctx.show("plan")
    page = ctx.page
    page.wait_for('[data-qid="plan"] .plan-doc h2')
    time.sleep(1.0)
    report = page.js(
        "const d = document.querySelector('[data-qid=\"plan\"] .plan-doc');"
        "const on = [...document.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name)));"
        "return {pwned: window.__pwned === undefined ? null : String(window.__pwned), on: on.length,"
        " bad: d.querySelectorAll('script, iframe, svg, img, form, object, embed, style').length,"
        " hrefs: [...d.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')),"
        " styled: d.querySelectorAll('[style]').length, text: d.textContent.includes('Real step'),"
        # The emptied `javascript:` link reads as the text around it, not as a link that does nothing.
        " emptied: [...d.querySelectorAll('a:not([href])')].filter((a) => a.textContent === 'click me').map((a) => {"
        "   const s = getComputedStyle(a), p = getComputedStyle(a.parentElement);"
        "   return s.color === p.color && s.borderBottomStyle === 'none'; })};")
    assert report == {"pwned": None, "on": 0, "bad": 0, "hrefs": [], "styled": 0, "text": True,
                      "emptied": [True]}, report
    page.click(page.find("#dismiss"))
    expect_error(outcome(), "ASK_CANCELLED")


# ----- plan comments and revisions -----

# One agent id for the comment and revision tests: the second is a revision of the first's plan.
PLANNER_ID = f"planner-{os.getpid()}"


def ask_as(ctx, questions, agent_id, label="claude-code", meta=None):
    """Starts an ask as an agent with this exact id (a thread is keyed by it, or by `meta.session`);
    returns outcome()."""
    conn = ctx.conn()
    meta = dict(samples.AGENTS["coder"]["meta"], **(meta or {}))
    handle = conn.call("agents/register", {"id": agent_id, "label": label, "meta": meta})
    rid = conn.start("user-questions/ask", {"questions": questions, "agent": handle})
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


DOC = '[data-qid="plan"] .plan-doc:not(.plan-older)'


def block_keys(page):
    return page.js(f"return [...document.querySelectorAll('{DOC} [data-block]')].map((e) => e.dataset.block)")


def block_key_of(page, text):
    """The key of the first block whose text contains `text`."""
    key = page.js(
        f"const el = [...document.querySelectorAll('{DOC} [data-block]')].find((e) => e.textContent.includes(arguments[0]));"
        "return el ? el.dataset.block : null;", text)
    assert key, f"no block with {text!r}"
    return key


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


def test_plan_comments_by_keyboard_and_mouse_become_feedback(ctx):
    outcome = ask_as(ctx, samples.PLAN_REVIEW, PLANNER_ID)
    ctx.show("plan")
    page = ctx.page
    page.wait_for(f"{DOC} [data-block]")
    keys = block_keys(page)
    empty = page.js("return document.querySelector('[data-qid=\"plan\"] .plan-comments').textContent")
    assert empty == "Comments 0Select a block (J/K or a click) and press C, or select text inside it, to comment.", empty
    step3 = block_key_of(page, "Switch Journal::append")
    line6 = block_key_of(page, "outcome     TEXT NOT NULL")
    step2 = block_key_of(page, "one-time importer")
    # The plan takes the focus with Tab like any control; here it is focused directly.
    page.js(f"document.querySelector('{DOC}').focus()")
    comment_by_keyboard(ctx, keys.index(step3) + 1, "Batch the inserts in one transaction per second.")
    comment_by_keyboard(ctx, keys.index(line6) - keys.index(step3), "Make outcome a CHECK over the known names.")
    # By mouse: click the step, select part of its text, click the block's Comment button.
    page.click(page.find(f'{DOC} [data-block="{step2}"]'))
    page.js(f"const li = document.querySelector('{DOC} [data-block=\"{step2}\"]');"
            "const text = li.firstChild; const at = text.data.indexOf('one-time importer');"
            "const range = document.createRange(); range.setStart(text, at); range.setEnd(text, at + 17);"
            "const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);"
            "li.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));")
    button = page.find('[data-qid="plan"] .block-comment-btn')
    assert page.text(button) == "+ Comment on selection", page.text(button)
    page.click(button)
    page.type(page.find('[data-qid="plan"] .note-input'), "Import in batches of 10k rows, as the online migration does.")
    page.click(page.find('[data-qid="plan"] .note-save'))
    # Edit before submitting: the second comment gets a better text.
    page.click(page.find(f'[data-qid="plan"] .plan-notes[data-for="{line6}"] .note-edit'))
    box = page.find('[data-qid="plan"] .note-input')
    page.js("document.querySelector('[data-qid=\"plan\"] .note-input').value = ''")
    page.type(box, "Make outcome a CHECK over the five outcome names.")
    page.click(page.find('[data-qid="plan"] .note-save'))
    listed = page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .comment-item')].map((li) =>"
                     " [li.querySelector('.comment-path').textContent, li.querySelector('.comment-text').textContent])")
    # Listed in the plan's order, whatever the order they were written in.
    assert listed == [["Steps › 2", "Import in batches of 10k rows, as the online migration does."],
                      ["Steps › 3", "Batch the inserts in one transaction per second."],
                      ["Schema › line 6", "Make outcome a CHECK over the five outcome names."]], listed
    # Each note sits beside its block.
    beside = page.js(
        f"const doc = document.querySelector('{DOC}');"
        "const quote = (key) => { const n = doc.querySelector('[data-block=\"' + key + '\"] > .plan-notes .plan-note');"
        " return n ? (n.querySelector('.note-quote') || {}).textContent || '' : null; };"
        "return {step2: quote(arguments[0]), step3: quote(arguments[1]),"
        " line: !!doc.querySelector('pre + .plan-notes[data-for=\"' + arguments[2] + '\"]')};", step2, step3, line6)
    assert beside == {"step2": "one-time importer", "step3": "", "line": True}, beside
    page.type(page.find('[data-qid="plan"] .plan-feedback'), "Use WAL mode and keep the JSON export.")
    ctx.shot("plan-comments", scroll_to=f'{DOC} #md-h-3')
    page.click(ctx.option("plan", "Keep planning"))
    page.click(page.find("#submit"))
    expected = (
        "> **Steps › 2**\n"
        "> one-time importer\n\n"
        "Import in batches of 10k rows, as the online migration does.\n\n"
        "> **Steps › 3**\n"
        "> Switch `Journal::append` to a prepared `INSERT`, keeping the fsync guarantee (`synchronous=FULL`).\n\n"
        "Batch the inserts in one transaction per second.\n\n"
        "> **Schema › line 6**\n"
        ">   outcome     TEXT NOT NULL DEFAULT 'answered',\n\n"
        "Make outcome a CHECK over the five outcome names.\n\n"
        "---\n\n"
        "Use WAL mode and keep the JSON export."
    )
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "plan", "selected": [], "custom": expected}]}, json.dumps(got, indent=1)
    ctx.wait_queue(0)


def test_plan_revision_shows_changes_and_past_comments(ctx):
    outcome = ask_as(ctx, samples.PLAN_REVIEW_REVISED, PLANNER_ID)
    ctx.show("plan")
    page = ctx.page
    page.wait_for('[data-qid="plan"] .revision-bar')
    view = page.js(
        f"const doc = document.querySelector('{DOC}'); const bar = document.querySelector('[data-qid=\"plan\"] .revision-bar');"
        "const texts = (sel) => [...doc.querySelectorAll(sel)].map((e) => e.textContent.replace(/\\s+/g, ' ').trim());"
        "return {title: bar.querySelector('.revision-title').textContent,"
        " plus: bar.querySelector('.diff-badge .plus').textContent, minus: bar.querySelector('.diff-badge .minus').textContent,"
        " changed: texts('.diff-changed'), added: texts('.diff-added'), moved: texts('.diff-moved'),"
        " removed: texts('.diff-removed .ghost-text'), showing: doc.classList.contains('showing-changes')};")
    assert view["title"] == "Changes since version 1", view
    assert (view["plus"], view["minus"]) == ("+2", "−2"), view
    assert view["showing"], view
    assert len(view["changed"]) == 1 and "one transaction per second" in view["changed"][0], view
    assert len(view["added"]) == 1 and "askdesk history --export" in view["added"][0], view
    assert view["moved"] == [], view
    assert len(view["removed"]) == 1 and "one-time importer" in view["removed"][0], view
    # Last round's comments: addressed beside the changed step, placed beside the unchanged line, gone listed.
    step3 = block_key_of(page, "one transaction per second")
    line6 = block_key_of(page, "outcome     TEXT NOT NULL")
    past = page.js(
        f"const doc = document.querySelector('{DOC}');"
        "const note = (sel) => { const n = doc.querySelector(sel); return n ? n.querySelector('.note-text').textContent : null; };"
        "return {addressed: note('[data-block=\"' + arguments[0] + '\"] > .plan-notes .plan-note.past.addressed'),"
        " placed: note('.plan-notes[data-for=\"' + arguments[1] + '\"] .plan-note.past.placed'),"
        " gone: [...document.querySelectorAll('[data-qid=\"plan\"] .comment-item.past.gone .comment-text')].map((e) => e.textContent)};",
        step3, line6)
    assert past == {"addressed": "Batch the inserts in one transaction per second.",
                    "placed": "Make outcome a CHECK over the five outcome names.",
                    "gone": ["Import in batches of 10k rows, as the online migration does."]}, past
    ctx.shot("plan-revision", scroll_to=f'{DOC} #md-h-3')
    # The removed step stands where it was without taking a number: the next step is still 2.
    numbers = page.js(f"return [...document.querySelectorAll('{DOC} ol > li')].map((li) => getComputedStyle(li).display)")
    assert numbers.count("list-item") == 4 and numbers.count("block") == 1, numbers
    # The toggle goes back to the clean plan and returns.
    page.click(page.find('[data-qid="plan"] .revision-toggle'))
    clean = page.js(f"const doc = document.querySelector('{DOC}');"
                    "return [doc.classList.contains('showing-changes'), doc.querySelectorAll('.diff-removed').length]")
    assert clean == [False, 0], clean
    page.click(page.find('[data-qid="plan"] .revision-toggle'))
    page.until(f"return document.querySelectorAll('{DOC} .diff-removed').length === 1")
    # The earlier version is one click away.
    page.click(page.find('[data-qid="plan"] .version-link'))
    older = page.js("const o = document.querySelector('[data-qid=\"plan\"] .plan-older');"
                    "return [o.hidden, o.textContent.includes('one-time importer'),"
                    " document.querySelector('[data-qid=\"plan\"] .older-bar').textContent]")
    assert older[0] is False and older[1], older
    assert "Version 1 · feedback sent" in older[2], older
    ctx.shot("plan-older")
    page.click(page.find('[data-qid="plan"] .older-back'))
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)
    # History shows the thread as one entry with the decision at each version.
    page.click(page.find("#nav-history"))
    entry = page.until(
        "const items = [...document.querySelectorAll('.history-item.plan-thread')];"
        "const mine = items.find((li) => li.querySelectorAll('.thread-version').length === 2"
        " && li.textContent.includes('one transaction per second'));"
        "return mine ? [...mine.querySelectorAll('.thread-version .decision')].map((e) => e.textContent) : null;",
        message="no plan thread with two versions in History")
    assert entry == ["feedback sent", "approved"], entry
    # The feedback sent with version 1 shows as one line, and all of it on a click.
    feedback = page.js(
        "const li = [...document.querySelectorAll('.history-item.plan-thread')]"
        ".find((li) => li.textContent.includes('one transaction per second'));"
        "const b = li.querySelector('.thread-version .version-feedback'); const one = b.getBoundingClientRect().height;"
        "const cut = b.scrollWidth > b.clientWidth + 1; b.click();"
        "return {cut, grown: b.getBoundingClientRect().height > 2 * one, whole: b.scrollWidth <= b.clientWidth + 1,"
        " wide: b.getBoundingClientRect().width > 0.9 * b.parentElement.getBoundingClientRect().width,"
        " expanded: b.getAttribute('aria-expanded'), comment: b.textContent.includes('Batch the inserts')};")
    assert feedback == {"cut": True, "grown": True, "whole": True, "wide": True, "expanded": "true", "comment": True}, feedback
    ctx.shot("history-thread-feedback", scroll_to=".history-item.plan-thread")
    page.click(page.find("#nav-queue"))


def test_plan_comment_is_text_and_approve_asks_about_it(ctx):
    outcome = ask_as(ctx, samples.PLAN_REVIEW, f"{PLANNER_ID}-xss")
    ctx.show("plan")
    page = ctx.page
    page.wait_for(f"{DOC} [data-block]")
    evil = "<img src=x onerror=\"window.__pwned = 'comment'\"><b>bold</b><script>window.__pwned = 1</script>"
    page.js(f"document.querySelector('{DOC}').focus()")
    comment_by_keyboard(ctx, 2, evil)
    time.sleep(0.5)
    report = page.js(
        "const note = document.querySelector('[data-qid=\"plan\"] .plan-note .note-text');"
        "const item = document.querySelector('[data-qid=\"plan\"] .comment-item .comment-text');"
        "return {pwned: window.__pwned === undefined ? null : String(window.__pwned),"
        " note: note.textContent, item: item.textContent, children: note.children.length + item.children.length,"
        " bad: document.querySelectorAll('[data-qid=\"plan\"] img, [data-qid=\"plan\"] script, [data-qid=\"plan\"] b').length};")
    assert report == {"pwned": None, "note": evil, "item": evil, "children": 0, "bad": 0}, report
    # Approving with a comment on a single-select review asks once; dropping it approves plainly.
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    page.wait_for(".plan-notes-modal")
    choices = page.js("return [...document.querySelectorAll('.plan-notes-modal button')].map((b) => b.dataset.choice)")
    assert choices == ["drop", "feedback"], choices
    page.click(page.find('.plan-notes-modal [data-choice="drop"]'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    assert not page.find_all(".plan-notes-modal")
    ctx.wait_queue(0)


def test_plan_comment_over_the_limit_is_refused_in_the_editor(ctx):
    """The comment editor says the limit and keeps a comment over it; one at the limit is saved and sent."""
    outcome = ask_as(ctx, samples.PLAN_REVIEW, f"{PLANNER_ID}-limit")
    ctx.show("plan")
    page = ctx.page
    page.wait_for(f"{DOC} [data-block]")
    page.js(f"document.querySelector('{DOC}').focus()")
    page.keys("j", "j", "c")
    page.wait_for('[data-qid="plan"] .note-input')
    page.js("const b = document.querySelector('[data-qid=\"plan\"] .note-input'); b.value = 'word '.repeat(4000);"
            "b.dispatchEvent(new Event('input'));")
    said = page.js("const l = document.querySelector('[data-qid=\"plan\"] .note-limit');"
                   "return l.classList.contains('over') && l.textContent;")
    assert said == "Too long: a comment may have at most 8192 bytes (this one has 19999). Shorten it or split it.", said
    ctx.shot("plan-comment-too-long", scroll_to='[data-qid="plan"] .plan-note.editor')
    page.click(page.find('[data-qid="plan"] .note-save'))
    time.sleep(0.3)
    assert page.find_all('[data-qid="plan"] .note-input'), "a comment over the limit was saved"
    assert page.js("return document.querySelectorAll('[data-qid=\"plan\"] .comment-item:not(.past)').length") == 0
    page.js("const b = document.querySelector('[data-qid=\"plan\"] .note-input'); b.value = 'x'.repeat(8192);"
            "b.dispatchEvent(new Event('input'));")
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .note-limit').classList.contains('over')") is False
    page.click(page.find('[data-qid="plan"] .note-save'))
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')", message="the comment was not saved")
    page.click(page.find("#submit"))
    got = answer_of(outcome())["answers"][0]
    assert got["selected"] == [] and got["custom"].endswith("x" * 8192), {k: str(v)[:80] for k, v in got.items()}
    ctx.wait_queue(0)


def test_plan_multi_select_approval_carries_comments_as_notes(ctx):
    # A multi-select plan question may answer an approval with `custom` beside it (protocol 1), so the
    # comments can go as notes with the approval; the answer keeps its shape.
    question = dict(samples.PLAN_REVIEW[0], multiSelect=True)
    outcome = ask_as(ctx, [question], f"{PLANNER_ID}-notes")
    ctx.show("plan")
    page = ctx.page
    page.wait_for(f"{DOC} [data-block]")
    keys = block_keys(page)
    step4 = block_key_of(page, "Page the History view")
    page.js(f"document.querySelector('{DOC}').focus()")
    comment_by_keyboard(ctx, keys.index(step4) + 1, "Keep the default page at 200 records.")
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    page.wait_for(".plan-notes-modal")
    choices = page.js("return [...document.querySelectorAll('.plan-notes-modal button')].map((b) => b.dataset.choice)")
    assert choices == ["send", "drop"], choices
    page.click(page.find('.plan-notes-modal [data-choice="send"]'))
    assert answer_of(outcome()) == {"answers": [{
        "id": "plan",
        "selected": ["Approve plan (Recommended)"],
        "custom": "> **Steps › 4**\n> Page the History view: `get_history(offset, limit)`.\n\n"
                  "Keep the default page at 200 records.",
    }]}
    ctx.wait_queue(0)


# ----- plan pane: options, meta, long plans, what is sent -----

MULTI_PLAN = [dict(samples.PLAN_REVIEW[0], multiSelect=True, options=samples.PLAN_OPTIONS + [
    {"label": "Add a benchmark", "description": "Measure the History view before and after."},
    {"label": "Update the docs", "description": "Say where the journal lives now."},
])]


def plan_inputs(page):
    """The option inputs of the plan's decision: [type, value, checked] each."""
    return page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .plan-decision input.option-input')]"
                   ".map((i) => [i.type, i.value, i.checked])")


def test_plan_multi_select_options_are_checkboxes_and_every_checked_one_is_sent(ctx):
    """A multi-select plan question (protocol 1: any number of labels, `custom` beside them) shows checkboxes,
    and the answer carries the approval, every checked option and the feedback."""
    _, _, outcome = ctx.ask(MULTI_PLAN, agent="coder")
    ctx.show("plan")
    page = ctx.page
    assert [t for t, _, _ in plan_inputs(page)] == ["checkbox"] * 3, plan_inputs(page)
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-decision .options').getAttribute('role')") == "group"
    for label in ("Keep planning", "Add a benchmark", "Update the docs"):
        page.click(ctx.option("plan", label))
    page.click(ctx.option("plan", "Keep planning"))
    assert plan_inputs(page) == [["checkbox", "Keep planning", False], ["checkbox", "Add a benchmark", True],
                                 ["checkbox", "Update the docs", True]], plan_inputs(page)
    page.type(page.find(FEEDBACK), "Keep the JSON export.")
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    assert approve_pressed(page) == "true"
    assert ctx.queue_count() == 1, "an approval with feedback typed waits for Submit"
    assert [c for _, _, c in plan_inputs(page)] == [False, True, True], "approving unchecked the other options"
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{
        "id": "plan",
        "selected": ["Approve plan (Recommended)", "Add a benchmark", "Update the docs"],
        "custom": "Keep the JSON export.",
    }]}
    ctx.wait_queue(0)


def test_the_header_shows_every_meta_key_as_text_and_wraps_long_values(ctx):
    """Every meta key the agent registered is shown (protocol 5.4), as text, and a long value wraps in the header."""
    page = ctx.page
    meta = {"cwd": "/home/dana/src/askdesk", "repo": "askdesk", "branch": "main", "model": "opus", "pid": 4242,
            "session": "s-41", "ticket": "<b>JIRA-7</b>", "host": "build-" + "x" * 240, "env": {"CI": True},
            "note": "first line\nsecond line"}
    conn = ctx.conn()
    handle = conn.call("agents/register", {"id": f"meta-{os.getpid()}", "label": "claude-code", "meta": meta})
    rid = conn.start("user-questions/ask", {"questions": samples.PLAN_REVIEW, "agent": handle})
    ctx.show("plan")
    shown = page.js(
        "const chips = [...document.querySelectorAll('#asker .chip')];"
        "return Object.fromEntries(chips.map((c) => [c.querySelector('.chip-kind').textContent,"
        " c.querySelector('.chip-value').textContent]));")
    assert shown == {"cwd": "/home/dana/src/askdesk", "repo": "askdesk", "branch": "main", "model": "opus",
                     "pid": "4242", "session": "s-41", "ticket": "<b>JIRA-7</b>", "host": meta["host"],
                     "env": '{"CI":true}', "note": "first line\nsecond line"}, shown
    layout = page.js(
        "const asker = document.getElementById('asker'); const a = asker.getBoundingClientRect();"
        "const chips = [...asker.querySelectorAll('.chip')];"
        "return {markup: asker.querySelectorAll('b').length, page: document.documentElement.scrollWidth <= document.documentElement.clientWidth,"
        " header: asker.scrollWidth <= asker.clientWidth,"
        " inside: chips.every((c) => { const r = c.getBoundingClientRect(); return r.left >= a.left - 1 && r.right <= a.right + 1; }),"
        " clipped: chips.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.querySelector('.chip-kind').textContent),"
        " plan: document.querySelector('[data-qid=\"plan\"] .plan-approve').getBoundingClientRect().top < window.innerHeight};")
    assert layout == {"markup": 0, "page": True, "header": True, "inside": True, "clipped": [], "plan": True}, layout
    ctx.shot("meta-header", top=True)
    conn.notify("$/cancelRequest", {"id": rid})
    ctx.wait_queue(0)


def long_plan(sections=60):
    parts = ["# A long plan\n\nEvery part below is one step of a long migration.\n"]
    for i in range(1, sections + 1):
        parts.append(f"## Part {i}\n\nMove table {i} to the new store, check its row count, and drop the old copy "
                     f"only when the counts agree. This keeps part {i} reversible until the very end.\n")
    return "\n".join(parts)


def test_a_long_plan_keeps_the_decision_in_reach(ctx):
    """With a plan far taller than the window, the side column scrolls on its own beside it: Approve is in view
    wherever the plan is scrolled, and the end of the side column can be reached without scrolling the plan."""
    question = dict(samples.PLAN_REVIEW[0], detail=long_plan())
    _, _, outcome = ctx.ask([question], agent="coder")
    ctx.show("plan")
    page = ctx.page
    page.wait_for('[data-qid="plan"] .plan-outline')
    reach = page.js(
        "const form = document.getElementById('request-form'); const side = document.querySelector('[data-qid=\"plan\"] .plan-side');"
        "form.scrollTop = form.scrollHeight / 2;"
        "const view = form.getBoundingClientRect();"
        "const within = (el) => { const r = el.getBoundingClientRect(); return r.top >= view.top - 1 && r.bottom <= view.bottom + 1; };"
        "const approve = within(document.querySelector('[data-qid=\"plan\"] .plan-approve'));"
        "const plan = form.scrollHeight > 3 * form.clientHeight;"
        "side.scrollTop = side.scrollHeight;"
        "const links = side.querySelectorAll('.outline-link');"
        "return {plan, approve, last: within(links[links.length - 1]), scrolled: form.scrollTop > 0};")
    assert reach == {"plan": True, "approve": True, "last": True, "scrolled": True}, reach
    ctx.shot("plan-long", x_window=True)
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)


def test_the_plan_pane_shows_every_option_description(ctx):
    """The approve option's description shows beside Approve, and every other option's beside it, as in a dialog."""
    _, _, outcome = ctx.ask(MULTI_PLAN, agent="coder")
    ctx.show("plan")
    page = ctx.page
    shown = page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .plan-decision .option-desc')].map((e) => e.textContent)")
    assert shown == [o["description"] for o in MULTI_PLAN[0]["options"]], shown
    near = page.js("const d = document.querySelector('[data-qid=\"plan\"] .plan-decision .approve-desc');"
                   "const a = document.querySelector('[data-qid=\"plan\"] .plan-approve');"
                   "return d ? Math.round(d.getBoundingClientRect().top - a.getBoundingClientRect().bottom) : null;")
    assert near is not None and 0 <= near < 20, near
    page.click(page.find("#dismiss"))
    expect_error(outcome(), "ASK_CANCELLED")
    ctx.wait_queue(0)


def sends(page):
    return page.js("return document.querySelector('[data-qid=\"plan\"] .plan-sends').textContent")


def test_a_plan_option_with_feedback_shows_what_is_sent(ctx):
    """On a single-select review feedback replaces the choice (protocol 1): whatever the order of clicks and typing,
    the pane shows pressed or checked only what goes back, and says what that is."""
    page = ctx.page
    _, _, outcome = ctx.ask(samples.MIXED, agent="coder")
    ctx.show("plan")
    assert sends(page) == "Nothing chosen yet"
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    assert (approve_pressed(page), sends(page)) == ("true", "Sends: Approve plan"), sends(page)
    page.click(ctx.option("plan", "Keep planning"))
    assert (approve_pressed(page), sends(page)) == ("false", "Sends: Keep planning"), sends(page)
    page.type(page.find(FEEDBACK), "Split step 3.")
    assert plan_inputs(page) == [["radio", "Keep planning", False]], plan_inputs(page)
    assert sends(page) == "Sends: your feedback, instead of a choice", sends(page)
    # Picking the option again with the feedback still typed: the feedback is still what goes back.
    page.click(ctx.option("plan", "Keep planning"))
    assert plan_inputs(page) == [["radio", "Keep planning", False]], plan_inputs(page)
    assert approve_pressed(page) == "false"
    assert sends(page) == "Sends: your feedback, instead of a choice", sends(page)
    page.click(ctx.option("tests", "No"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [
        {"id": "plan", "selected": [], "custom": "Split step 3."},
        {"id": "tests", "selected": ["No"]},
    ]}
    ctx.wait_queue(0)


def test_text_colours_meet_wcag_aa_contrast(ctx):
    """Every text colour of ui/style.css on every surface it is drawn on, light and dark: at least 4.5:1."""
    problems = contrast.failures()
    assert not problems, "\n".join(problems)


# ----- revision wording and a thread's badges -----

def ask_in_session(ctx, questions, agent_id, session):
    """Asks as an agent of this session (plans of one session form one thread); returns outcome()."""
    return ask_as(ctx, questions, agent_id, meta={"session": session})


def revision_bar(page, qid="plan"):
    return page.js(
        "const bar = document.querySelector('[data-qid=\"' + arguments[0] + '\"] .revision-bar');"
        "if (!bar) return null;"
        "const titled = [...bar.querySelectorAll('[title]')].map((e) => e.getAttribute('title')).join(' | ');"
        "return {title: bar.querySelector('.revision-title').textContent,"
        " summary: (bar.querySelector('.revision-summary') || {}).textContent || '',"
        " badge: (bar.querySelector('.diff-badge') || {}).textContent || '', toggle: !!bar.querySelector('.revision-toggle'),"
        " versions: [...bar.querySelectorAll('.version-link')].map((v) => v.textContent), said: bar.textContent + ' | ' + titled};",
        qid)


def test_plan_revision_wording_says_only_what_changed(ctx):
    """A revision that only moves a step says "1 block moved" (no +0 −0, no "changed"); an unchanged one says
    so without a badge."""
    session = f"wording-{os.getpid()}"
    page = ctx.page
    first = ask_in_session(ctx, samples.PLAN_REVIEW, f"{session}-1", session)
    ctx.show("plan")
    page.type(page.find(FEEDBACK), "Swap steps 3 and 4.")
    page.click(page.find("#submit"))
    answer_of(first())
    ctx.wait_queue(0)
    step3 = "3. Switch `Journal::append` to a prepared `INSERT`, keeping the fsync guarantee (`synchronous=FULL`).\n"
    step4 = "4. Page the History view: `get_history(offset, limit)`.\n"
    swapped = samples.PLAN.replace(step3 + step4, step4.replace("4.", "3.") + step3.replace("3.", "4."))
    assert swapped != samples.PLAN
    moved = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=swapped)], f"{session}-2", session)
    ctx.show("plan")
    page.wait_for('[data-qid="plan"] .revision-bar')
    bar = revision_bar(page)
    assert bar["title"] == "Changes since version 1" and bar["summary"] == "1 block moved", bar
    assert bar["badge"] == "" and bar["toggle"], bar
    assert not re.search(r"\b0 \w|changed|[+−]0\b", bar["said"]), bar
    page.type(page.find(FEEDBACK), "Keep it as it is now.")
    page.click(page.find("#submit"))
    answer_of(moved())
    ctx.wait_queue(0)
    same = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=swapped)], f"{session}-3", session)
    ctx.show("plan")
    page.wait_for('[data-qid="plan"] .revision-bar')
    bar = revision_bar(page)
    assert bar["title"] == "No changes since version 2" and bar["summary"] == "" and bar["badge"] == "", bar
    assert not bar["toggle"] and bar["versions"] == ["v1feedback sent", "v2feedback sent"], bar
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    answer_of(same())
    ctx.wait_queue(0)


def test_a_waiting_revision_follows_its_thread(ctx):
    """Two versions of one thread wait side by side: when the human answers the first with a comment, the second's
    revision bar and past comments show that decision without reopening anything."""
    session = f"follow-{os.getpid()}"
    page = ctx.page
    first = ask_in_session(ctx, samples.PLAN_REVIEW, f"{session}-1", session)
    ctx.wait_queue(1)
    second = ask_in_session(ctx, samples.PLAN_REVIEW_REVISED, f"{session}-2", session)
    ctx.wait_queue(2)
    # The second version first: its bar knows no decision on version 1 yet.
    page.click(page.find_all(".queue-item")[1])
    page.until("return document.querySelector('[data-qid=\"plan\"] .revision-bar') && true")
    bar = revision_bar(page)
    assert bar["versions"] == ["v1"], bar
    assert bar["title"] == "Changes since version 1" and bar["summary"] == "1 block added · 1 changed · 1 removed", bar
    assert bar["badge"] == "+2−2", bar
    # Back to version 1: a comment on the schema line and Keep planning.
    page.click(page.find_all(".queue-item")[0])
    page.until(f"return document.querySelectorAll('{DOC} [data-block]').length > 0"
               " && !document.querySelector('[data-qid=\"plan\"] .revision-bar')")
    keys = block_keys(page)
    line6 = block_key_of(page, "outcome     TEXT NOT NULL")
    page.js(f"document.querySelector('{DOC}').focus()")
    comment_by_keyboard(ctx, keys.index(line6) + 1, "Make outcome a CHECK.")
    page.click(ctx.option("plan", "Keep planning"))
    page.click(page.find("#submit"))
    assert answer_of(first())["answers"][0]["selected"] == []
    ctx.wait_queue(1)
    shown = page.until(
        "const bar = document.querySelector('[data-qid=\"plan\"] .revision-bar');"
        "const past = document.querySelector('[data-qid=\"plan\"] .plan-note.past .note-text');"
        "const v = bar && bar.querySelector('.version-link .version-decision');"
        "return v && past ? [v.textContent, past.textContent] : null;",
        message="the waiting revision never showed the decision on version 1")
    assert shown == ["feedback sent", "Make outcome a CHECK."], shown
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    assert answer_of(second())["answers"][0]["selected"] == ["Approve plan (Recommended)"]
    ctx.wait_queue(0)


def test_late_answer_is_refused_and_recorded(ctx):
    conn, rid, outcome = ctx.ask([{"id": "late", "question": "Still there?", "options": [{"label": "Yes"}]}])
    ctx.show("late")
    request = ctx.page.js("return Number(document.querySelector('.queue-item.active').dataset.request)")
    conn.notify("$/cancelRequest", {"id": rid})
    expect_error(outcome(), "ASK_ABORTED")
    ctx.wait_queue(0)
    result = ctx.page.js(
        "return window.__TAURI__.core.invoke('submit', {request: arguments[0],"
        " answer: {answers: [{id: 'late', selected: ['Yes']}]}}).then(() => 'ok', (e) => e.kind);", request)
    assert result == "late", result
    # On disk before the page is told it came late: nothing to wait for.
    late = [r for r in map(json.loads, journal_lines())
            if r["outcome"] == "late-answer" and r["questions"][0]["id"] == "late"]
    assert [r["answer"] for r in late] == [{"answers": [{"id": "late", "selected": ["Yes"]}]}], late


def filter_history(page, select, value):
    """Sets a History filter as the human does and waits for the page the backend filtered."""
    before = page.js("return document.getElementById('history-list').dataset.loaded || ''")
    page.js("const s = document.getElementById(arguments[0]); s.value = arguments[1];"
            "s.dispatchEvent(new Event('change'));", select, value)
    page.until("return (document.getElementById('history-list').dataset.loaded || '') !== arguments[0]",
               before, message=f"History was not read again for {select} = {value!r}")


def test_history_lists_settled_requests_with_filters(ctx):
    page = ctx.page
    page.click(page.find("#nav-history"))
    # The late answer of the test before is on disk, but the view learns of it by "history-changed",
    # which the desktop thread emits after: wait for it rather than race it.
    page.wait_for('.history-item[data-outcome="late-answer"]')
    outcomes = page.js("return [...document.querySelectorAll('.history-item')].map((e) => e.dataset.outcome)")
    for needed in ("answered", "dismissed", "withdrawn", "late-answer"):
        assert needed in outcomes, (needed, outcomes)
    # Newest first: the late answer (recorded last) is on top.
    assert outcomes[0] == "late-answer", outcomes
    filter_history(page, "history-outcome", "dismissed")
    shown = page.js("return [...document.querySelectorAll('.history-item')].map((e) => e.dataset.outcome)")
    assert shown and set(shown) == {"dismissed"}, shown
    filter_history(page, "history-outcome", "")
    filter_history(page, "history-agent", "review-bot")
    agents = page.js("return [...document.querySelectorAll('.history-agent')].map((e) => e.textContent)")
    assert agents and set(agents) == {"review-bot"}, agents
    filter_history(page, "history-agent", "")
    ctx.shot("history")
    page.click(page.find("#nav-queue"))


def journal_path():
    return os.path.join(os.environ["XDG_DATA_HOME"], "askdesk", "history.jsonl")


def journal_lines():
    """The journal's lines; a running app holds spaces after the last one for the next ones (a read
    racing their cut-off may see zeros there instead)."""
    with open(journal_path(), encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if line.strip(" \t\0")]


def raw_asker(path, questions):
    """An asker on a plain socket: initializes, sends one ask, and from then on reads nothing."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(path)
    sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": 1, "client": {"name": "crash-asker", "version": "0"}}})
                  + "\n").encode())
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = sock.recv(4096)
        assert chunk, "the broker closed the connection during initialize"
        reply += chunk
    assert "result" in json.loads(reply), reply
    sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 2, "method": "user-questions/ask",
                              "params": {"questions": questions}}) + "\n").encode())
    return sock


def server_pid(sock):
    """The pid of the process listening on the socket's other end (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, _uid, _gid = struct.unpack("3i", creds)
    return pid


def process_ended(pid):
    """Whether `pid` is gone or a zombie (its parent, WebKitWebDriver, reaps it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_kill_after_submit_leaves_a_complete_journal_line(ctx):
    """SIGKILL of the app after the human submits, before the asker reads, leaves the answer in the journal."""
    question = {"id": "crash", "question": "Keep the answer through a crash?",
                "options": [{"label": "Keep it"}, {"label": "Drop it"}]}
    asker = raw_asker(ctx.socket, [question])
    try:
        pid = server_pid(asker)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert os.path.basename(f.read().split(b"\0")[0]) == os.path.basename(ctx.args.app).encode(), pid
        ctx.show("crash")
        ctx.page.click(ctx.option("crash", "Keep it"))
        ctx.page.type(ctx.other_box("crash"), "and say so")
        ctx.page.click(ctx.page.find("#submit"))
        submitted = {"answers": [{"id": "crash", "selected": [], "custom": "and say so"}]}

        def answered_line():
            try:
                with open(journal_path(), encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except FileNotFoundError:
                return None
            for line in lines:
                if '"crash"' in line and '"answered"' in line:
                    return line
            return None
        deadline = time.time() + 10
        while answered_line() is None and time.time() < deadline:
            time.sleep(0.05)
        assert answered_line() is not None, "the answer never reached the journal"

        ctx.app_gone = True
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + 10
        while not process_ended(pid) and time.time() < deadline:
            time.sleep(0.05)
        assert process_ended(pid), f"the app (pid {pid}) survived SIGKILL"

        with open(journal_path(), "rb") as f:
            data = f.read().rstrip(b" ")  # the spaces the killed app held for its next lines
        assert data.endswith(b"\n"), f"the journal ends in a torn line: {data[-200:]!r}"
        last = json.loads(data.splitlines()[-1])
        assert last["outcome"] == "answered", last
        assert [q["id"] for q in last["questions"]] == ["crash"], last
        assert last["answer"] == submitted, last
    finally:
        asker.close()


# ----- permission hooks: `askdesk hook claude-code` fed a fixture of tests/hooks as Claude Code would -----

HOOK_FIXTURES = os.path.join(HERE, "..", "hooks")


def run_hook(ctx, fixture, client="claude-code"):
    """Starts `askdesk hook <client>` with a fixture on stdin; returns (fixture text, done) where done()
    waits for the hook and gives (exit status, stdout, stderr)."""
    with open(os.path.join(HOOK_FIXTURES, f"{fixture}.json"), encoding="utf-8") as f:
        text = f.read()
    proc = subprocess.Popen([ctx.args.cli, "hook", client], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=os.environ.copy())
    box = {}

    def talk():
        box["out"], box["err"] = proc.communicate(input=text.encode(), timeout=120)

    t = threading.Thread(target=talk, daemon=True)
    t.start()

    def done(timeout=15):
        t.join(timeout)
        if t.is_alive():
            proc.kill()
            raise AssertionError("askdesk hook did not finish")
        return proc.returncode, box["out"].decode(), box["err"].decode()
    done.proc = proc
    return text, done


def decision_line(decision):
    return '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":' + decision + "}}\n"


def test_hook_plan_is_approved_in_the_pane(ctx):
    """A plan arrives through `askdesk hook claude-code`, is approved in the pane, and the hook prints
    the allow echoing the tool input unchanged."""
    text, done = run_hook(ctx, "claude-plan")
    ctx.show("plan")
    page = ctx.page
    assert "Claude Code" in page.text(page.find("#asker"))
    assert "/home/dev/shop" in page.text(page.find("#asker"))
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-doc h1').textContent") == "Add a cart export"
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    status, out, err = done()
    assert status == 0 and err == "", (status, err)
    tool_input = json.dumps(json.loads(text)["tool_input"], separators=(",", ":"), ensure_ascii=False)
    assert out == decision_line('{"behavior":"allow","updatedInput":' + tool_input + "}"), out
    ctx.wait_queue(0)


def test_hook_tool_approvals_show_the_command_and_the_diff(ctx):
    """A Bash approval shows the command; an Edit approval shows the edit as a highlighted diff."""
    _, done = run_hook(ctx, "claude-bash")
    ctx.show("permission")
    page = ctx.page
    assert page.js("return document.querySelector('[data-qid=\"permission\"] pre').textContent.trim()") == \
        "cargo test --workspace"
    ctx.shot("hook-bash", top=True)
    page.click(ctx.option("permission", "Allow once"))
    page.click(page.find("#submit"))
    status, out, err = done()
    assert status == 0 and err == "", (status, err)
    assert out == decision_line('{"behavior":"allow"}'), out
    # Both prompts' questions are "permission": the Bash one must be gone before the Edit one is read.
    ctx.wait_queue(0)

    _, done = run_hook(ctx, "claude-edit")
    ctx.show("permission")
    page.until("const pre = document.querySelector('[data-qid=\"permission\"] pre');"
               "return !!pre && pre.textContent.includes('self.items');", message="the Edit prompt's diff never showed")
    colours = page.js(
        "const pre = document.querySelector('[data-qid=\"permission\"] pre');"
        "const of = (sel) => { const el = pre.querySelector(sel); return el && getComputedStyle(el).color; };"
        "return [of('.hl-markup.hl-inserted'), of('.hl-markup.hl-deleted'), getComputedStyle(pre).color];")
    added, removed, plain = colours
    assert added and removed and len({added, removed, plain}) == 3, f"the diff is not highlighted: {colours}"
    assert "+    self.items.iter().map(|i| i.price * i.quantity).sum()" in \
        page.js("return document.querySelector('[data-qid=\"permission\"] pre').textContent")
    ctx.shot("hook-edit", top=True)
    page.type(ctx.other_box("permission"), "Keep total() as it is")
    page.click(page.find("#submit"))
    status, out, err = done()
    assert status == 0 and err == "", (status, err)
    assert out == decision_line('{"behavior":"deny","message":"Keep total() as it is"}'), out
    ctx.wait_queue(0)


def test_always_allow_this_command_here_answers_the_next_hook_prompt(ctx):
    """"Always answer this way here" on a Bash permission prompt drafts a rule naming the tool and the exact
    command; once saved, the same prompt from the hook is allowed by the rule, with no dialog."""
    put_rules("")
    try:
        _, done = run_hook(ctx, "claude-bash")
        ctx.show("permission")
        page = ctx.page
        page.click(ctx.option("permission", "Allow once"))
        page.click(page.find("#always"))
        shown = rule_preview(page)
        assert 'name = "bash-cargo-test-workspace"' in shown, shown
        assert 'tool = "Bash", command = "cargo test --workspace"' in shown, shown
        assert shown.rstrip().endswith('answer = "Allow once"'), shown
        page.click(page.find(".rule-preview .rule-save"))
        status, out, err = done()
        assert status == 0 and err == "", (status, err)
        assert out == decision_line('{"behavior":"allow"}'), out
        ctx.wait_queue(0)
        assert read_rules() == shown.rstrip("\n") + "\n"

        count = len(journal_lines())
        _, done = run_hook(ctx, "claude-bash")
        status, out, err = done()
        assert status == 0 and err == "", (status, err)
        assert out == decision_line('{"behavior":"allow"}'), out
        lines = [json.loads(line) for line in journal_lines()]
        assert len(lines) == count + 1, "one more journal record"
        assert lines[-1].get("answerer") == "rule:bash-cargo-test-workspace", lines[-1]
        assert ctx.queue_count() == 0
    finally:
        put_rules("")


def test_hook_killed_by_the_client_withdraws_the_question(ctx):
    """Answering in the terminal first makes the client kill the hook: the question leaves the
    dialog and its notification closes. The notification offers no answer buttons: the command is
    only in the question's detail."""
    _, done = run_hook(ctx, "claude-bash")
    nid = ctx.notification_id("Claude Code asks")
    actions = notify_actions(ctx.bus_log(), "Claude Code asks")
    assert actions == ["default"], actions
    ctx.show("permission")
    done.proc.send_signal(signal.SIGTERM)
    status, out, _ = done()
    assert out == "", out
    ctx.wait_queue(0)
    assert not ctx.page.find_all('[data-qid="permission"]')
    assert closed_on_bus_eventually(ctx, nid), f"notification {nid} was not closed"


# ----------------------------------------------------------------------------------------------
# an idle app drops its window; no display is a clear answer

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


def app_pid_of(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    try:
        return server_pid(sock)
    finally:
        sock.close()


def switch_to_rebuilt_window(page, selector, timeout=15):
    """A rebuilt window is a new browsing context: switches to the session's window showing `selector`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for handle in page.window_handles():
            page.switch_to_window(handle)
            try:
                if page.find_all(selector):
                    return
            except WebDriverError:
                continue
        time.sleep(0.3)
    raise AssertionError(f"no window shows {selector}")


def test_a_question_for_a_dropped_window_opens_a_working_dialog(ctx):
    """Hidden with nothing waiting, the window (and its web process) goes; a question brings both back.
    (Under WebDriver the engine's network process is kept; the next test covers its end.)"""
    page = ctx.page
    pid = app_pid_of(ctx.socket)
    assert web_processes(pid), "no web process while the window is shown"
    page.keys(ESCAPE)
    deadline = time.time() + 15
    while web_processes(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert not web_processes(pid), "the hidden, idle window kept its web process"
    _, _, outcome = ctx.ask(samples.SINGLE, agent="reviewer")
    assert ctx.notification_id("review-bot asks") > 0
    deadline = time.time() + 15
    while not web_processes(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert web_processes(pid), "the window was not rebuilt for the question"
    switch_to_rebuilt_window(page, '[data-qid="migrate"]')
    ctx.show("migrate")
    page.until("return document.visibilityState === 'visible'", message="the rebuilt window is not visible")
    ctx.shot("dialog-after-drop")
    page.click(ctx.option("migrate", "Offline, in one transaction"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "migrate", "selected": ["Offline, in one transaction"]}]}
    ctx.wait_queue(0)
    ctx.app_gone = True


test_a_question_for_a_dropped_window_opens_a_working_dialog.app_args = ["--drop-window-after=1"]


def test_a_window_dropped_with_questions_waiting_keeps_what_was_chosen_and_typed(ctx):
    """A window hidden with requests waiting is dropped like an idle one (its web process goes); the next
    page opens on the request shown last and shows every choice, text, skip, plan comment, feedback and
    half-written comment as it was."""
    page = ctx.page
    pid = app_pid_of(ctx.socket)
    _, _, batch = ctx.ask(samples.BATCH, agent="coder")  # the oldest
    _, _, review = ctx.ask(samples.MIXED, agent="reviewer")
    ctx.show("scope")
    page.click(ctx.option("scope", "server"))
    page.click(ctx.option("scope", "client"))
    page.type(ctx.other_box("release"), "0.3.0-rc.1")
    page.click(page.find('[data-qid="notes"] .skip'))
    ctx.open_request_of("review-bot")
    ctx.show("plan")
    page.wait_for(f"{DOC} [data-block]")
    page.click(ctx.option("tests", "No"))
    page.js("document.querySelector(arguments[0]).focus()", DOC)
    comment_by_keyboard(ctx, 2, "Say where the backup goes.")
    page.type(page.find('[data-qid="plan"] .plan-feedback'), "Smaller steps, please.")
    page.js("document.querySelector(arguments[0]).focus()", DOC)
    page.keys("j", "c")
    page.type(page.wait_for('[data-qid="plan"] .note-input'), "half a thought")
    # Closed as a window manager closes it (Esc would cancel the comment being written).
    from bench_desktop import close_window
    assert close_window("askdesk", pid=pid) == 1, "no window of this app to close"
    deadline = time.time() + 15
    while web_processes(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert not web_processes(pid), "the hidden window was kept with questions waiting"

    proc = subprocess.run([ctx.args.app], env=os.environ.copy(), capture_output=True, timeout=30)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    # It opens on the request shown last, not on the oldest.
    switch_to_rebuilt_window(page, '[data-qid="plan"]')
    page.until("return document.visibilityState === 'visible'", message="the rebuilt window is not visible")
    assert not page.find_all('[data-qid="scope"]'), "the rebuilt window did not open on the request shown last"
    checked = lambda qid: page.js(  # noqa: E731
        "return [...document.querySelectorAll('[data-qid=\"' + arguments[0] + '\"] input.option-input')]"
        ".filter((i) => i.checked).map((i) => i.value)", qid)
    assert checked("tests") == ["No"], checked("tests")
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-feedback').value") == "Smaller steps, please."
    notes = page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .comment-item:not(.past) .comment-text')]"
                    ".map((e) => e.textContent)")
    assert notes == ["Say where the backup goes."], notes
    page.wait_for('[data-qid="plan"] .note-input')
    typed = page.js("return document.querySelector('[data-qid=\"plan\"] .note-input').value")
    assert typed == "half a thought", typed
    ctx.shot("dialog-restored-after-drop", scroll_to='[data-qid="plan"] .plan-notes')
    page.click(page.find('[data-qid="plan"] .note-input'))
    page.keys(ENTER, modifier=CONTROL)
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')", message="the comment was not saved")
    page.click(page.find("#submit"))
    answer = answer_of(review())
    plan = answer["answers"][0]
    assert plan["id"] == "plan" and plan["selected"] == [], answer
    for text in ("Say where the backup goes.", "half a thought", "Smaller steps, please."):
        assert text in plan["custom"], (text, plan["custom"])
    assert answer["answers"][1] == {"id": "tests", "selected": ["No"]}, answer

    ctx.show("scope")
    assert checked("scope") == ["server", "client"], checked("scope")
    assert checked("release") == [""], checked("release")  # "Other", chosen by typing in it
    assert page.js("return document.querySelector('[data-qid=\"release\"] textarea.other-input').value") == "0.3.0-rc.1"
    assert page.js("return document.querySelector('[data-qid=\"notes\"]').classList.contains('skipped')")
    page.click(page.find("#submit"))
    assert answer_of(batch()) == {"answers": [
        {"id": "scope", "selected": ["server", "client"]},
        {"id": "release", "selected": [], "custom": "0.3.0-rc.1"},
        {"id": "notes", "selected": []},
    ]}
    ctx.wait_queue(0)
    ctx.app_gone = True


test_a_window_dropped_with_questions_waiting_keeps_what_was_chosen_and_typed.app_args = ["--drop-window-after=1"]


def wait_dropped(pid, timeout=15):
    deadline = time.time() + timeout
    while web_processes(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert not web_processes(pid), "the hidden window was not dropped"


def test_a_window_dropped_on_history_or_rules_comes_back_there(ctx):
    """The human hides the window on History (or Rules) and it is dropped: opened again (a second launch,
    which opens it as the tray's Open does) it comes back on that view, not on the queue. A question that
    arrives while it is gone opens on the question, and once the human is back on the queue, that is where
    the next window opens."""
    page = ctx.page
    pid = app_pid_of(ctx.socket)

    def reopen():
        proc = subprocess.run([ctx.args.app], env=os.environ.copy(), capture_output=True, timeout=30)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])

    def view_shown():
        return page.js("return ['view-empty', 'view-request', 'view-history', 'view-rules']"
                       ".filter((id) => !document.getElementById(id).hidden)")

    for nav, view in (("#nav-history", "view-history"), ("#nav-rules", "view-rules")):
        page.click(page.find(nav))
        page.wait_for(f"#{view}:not([hidden])")
        page.keys(ESCAPE)
        wait_dropped(pid)
        reopen()
        switch_to_rebuilt_window(page, "body[data-ready='true']")
        page.until(f"return !document.getElementById('{view}').hidden",
                   message=f"the rebuilt window did not come back on {view}: {view_shown()}")
        assert view_shown() == [view], view_shown()
        active = page.js("return document.querySelector(arguments[0]).classList.contains('active')", nav)
        assert active, f"{nav} is not marked as the view shown"
        if view == "view-history":
            page.wait_for("#history-list")

    # Gone while on Rules, the window a question brings opens on the question.
    page.keys(ESCAPE)
    wait_dropped(pid)
    _, _, outcome = ctx.ask(samples.SINGLE, agent="reviewer")
    switch_to_rebuilt_window(page, '[data-qid="migrate"]')
    assert view_shown() == ["view-request"], view_shown()
    page.click(ctx.option("migrate", "Offline, in one transaction"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "migrate", "selected": ["Offline, in one transaction"]}]}
    ctx.wait_queue(0)
    # The human answered there, on the queue: the next window opens on the queue.
    page.keys(ESCAPE)
    wait_dropped(pid)
    reopen()
    switch_to_rebuilt_window(page, "body[data-ready='true']")
    assert view_shown() == ["view-empty"], view_shown()
    ctx.app_gone = True


test_a_window_dropped_on_history_or_rules_comes_back_there.app_args = ["--drop-window-after=1"]


def shared_memory_fds(pid):
    """The app's file descriptors on WebKit's shared memory (each web view's user scripts hold one)."""
    found = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if "WebKitSharedMemory" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                found += 1
        except FileNotFoundError:
            continue
    return found


def test_windows_built_and_dropped_all_day_leave_nothing_behind(ctx):
    """A tray app builds and drops its window many times a day: each drop lets the web view go
    with its shared memory and descriptors (a web view whose message handler held it was kept,
    one descriptor and about 120 KB per window, for the app's lifetime)."""
    page = ctx.page
    pid = app_pid_of(ctx.socket)
    counts = []
    for _ in range(6):
        page.keys(ESCAPE)
        wait_dropped(pid)
        time.sleep(0.5)
        counts.append((shared_memory_fds(pid), len(os.listdir(f"/proc/{pid}/fd"))))
        proc = subprocess.run([ctx.args.app], env=os.environ.copy(), capture_output=True, timeout=30)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
        switch_to_rebuilt_window(page, "body[data-ready='true']")
    # The first window may stay referenced by the WebDriver session itself; none after it.
    shared = [c[0] for c in counts[1:]]
    fds = [c[1] for c in counts[1:]]
    assert shared == [shared[0]] * len(shared), f"shared memory descriptors per drop: {counts}"
    assert max(fds) - min(fds) <= 2, f"descriptors per drop: {counts}"
    ctx.app_gone = True


test_windows_built_and_dropped_all_day_leave_nothing_behind.app_args = ["--drop-window-after=1"]


def test_an_idle_app_ends_the_network_process_and_a_question_brings_a_working_page(ctx):
    """An app of its own, not driven by WebDriver (a WebDriver session takes the end of WebKit's
    network process for a crashed page, so the app keeps it then): started hidden, it shows a question
    in a page that paints; hidden and idle, it drops the window and ends the network process; the next
    question brings both back, its page paints, and its answer arrives."""
    from bench_desktop import close_window
    home = os.path.join(os.path.dirname(ctx.socket), f"light-{time.time_ns()}")
    os.makedirs(home, mode=0o700)
    path = os.path.join(home, "run", "askdesk.sock")
    env = {k: v for k, v in os.environ.items() if k != "TAURI_WEBVIEW_AUTOMATION"}
    env.update(ASKDESK_SOCKET=path, XDG_DATA_HOME=os.path.join(home, "data"),
               XDG_CONFIG_HOME=os.path.join(home, "config"), ASKDESK_LOG="info,askdesk_desktop=debug")
    log_path = os.path.join(home, "app.log")
    network = "WebKitNetworkPr"

    def shown_lines():
        with open(log_path, encoding="utf-8", errors="replace") as f:
            return sum("request shown" in line for line in f)

    def wait(condition, what, timeout=20):
        deadline = time.time() + timeout
        while not condition():
            assert time.time() < deadline, f"{what} (log: {log_path})"
            time.sleep(0.1)

    with open(log_path, "w") as log:
        app = subprocess.Popen([ctx.args.app, "--hidden", "--drop-window-after=1"], env=env,
                               stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait(lambda: os.path.exists(path), "the app never listened")
        conn = Conn(path, timeout=60)
        conn.initialize("light")
        agent = conn.call("agents/register", {"id": f"light-{os.getpid()}", "label": "light-check"})
        for n in (1, 2):
            rid = conn.start("user-questions/ask", {"agent": agent, "questions": [
                {"id": f"light{n}", "question": f"Round {n}: go on?", "options": [{"label": "Yes"}, {"label": "No"}]}]})
            # The page reports each request it painted: it loaded, with a network process to serve it.
            wait(lambda: shown_lines() >= n, f"round {n}: the question was never painted")
            assert web_processes(app.pid) and web_processes(app.pid, network), f"round {n}: no web engine"
            nid = ctx.notification_id("light-check asks")
            answered = None
            for _ in range(20):
                subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                                "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}", "string:choose-0"],
                               check=True)
                try:
                    answered = conn.wait(rid, timeout=0.5)
                    break
                except TimeoutError:
                    continue
            assert answered == {"answers": [{"id": f"light{n}", "selected": ["Yes"]}]}, answered
            if n == 1:
                assert close_window("askdesk", pid=app.pid) == 1, "no window of this app to close"
                wait(lambda: not web_processes(app.pid) and not web_processes(app.pid, network),
                     "the hidden, idle app kept its web or network process")
        conn.close()
    finally:
        app.terminate()
        try:
            app.wait(timeout=10)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()


def run_without_display(ctx, env_changes):
    """Runs the app on a socket path of its own with `env_changes`; returns (process, socket path)."""
    run_dir = os.path.join(os.path.dirname(ctx.socket), f"nodisplay-{time.time_ns()}")
    path = os.path.join(run_dir, "askdesk.sock")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(env_changes, ASKDESK_SOCKET=path)
    proc = subprocess.run([ctx.args.app], env=env, capture_output=True, text=True, timeout=30)
    return proc, path


def test_no_display_is_one_clear_line_and_binds_nothing(ctx):
    for env, missing in (({}, "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"),
                         ({"DISPLAY": ":4242"}, "cannot open the display :4242")):
        proc, path = run_without_display(ctx, env)
        assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr[-2000:]
        assert lines[0].startswith(f"askdesk-desktop: {missing}"), lines
        assert "`askdesk serve` runs the broker without a window" in lines[0], lines
        assert not os.path.exists(path), f"a socket was left at {path}"
    # The running app was not disturbed.
    assert ctx.conn("after-no-display").call("ping", {}) == {}


TESTS = [
    test_batch_answer_reaches_the_asker,
    test_single_select_custom_overrides_and_keyboard,
    test_recommended_label_comes_back_unchanged,
    test_a_request_that_takes_the_place_of_a_withdrawn_one_gets_no_keys_meant_for_it,
    test_the_smallest_window_keeps_the_question_and_its_buttons_in_reach,
    test_keyboard_focus_follows_the_request_and_stays_in_the_link_confirm,
    test_skip_keeps_the_shape,
    test_notification_action_answers_in_place,
    test_activating_a_notification_opens_its_request,
    test_a_question_that_shows_the_hidden_window_is_what_it_shows,
    test_cancel_withdraws_dialog_and_notification,
    test_two_agents_are_queued_and_answered_separately,
    test_dismiss_fails_ask_cancelled,
    test_do_not_disturb_delegates,
    test_second_launch_exits_and_first_keeps_serving,
    test_escape_hides_the_window_and_a_second_launch_shows_it,
    test_tray_shows_the_count_and_its_menu_switches_do_not_disturb,
    test_plan_review_renders_and_approve_returns_the_label,
    test_plan_feedback_returns_as_custom,
    test_plan_approve_with_feedback_typed_asks_and_shows_what_is_sent,
    test_plan_mixed_with_questions_has_one_submit,
    test_xss_plan_runs_nothing,
    test_hook_plan_is_approved_in_the_pane,
    test_hook_tool_approvals_show_the_command_and_the_diff,
    test_hook_killed_by_the_client_withdraws_the_question,
    test_always_allow_this_command_here_answers_the_next_hook_prompt,
    test_plan_comments_by_keyboard_and_mouse_become_feedback,
    test_plan_revision_shows_changes_and_past_comments,
    test_plan_comment_is_text_and_approve_asks_about_it,
    test_plan_comment_over_the_limit_is_refused_in_the_editor,
    test_plan_multi_select_approval_carries_comments_as_notes,
    test_plan_multi_select_options_are_checkboxes_and_every_checked_one_is_sent,
    test_the_header_shows_every_meta_key_as_text_and_wraps_long_values,
    test_a_long_plan_keeps_the_decision_in_reach,
    test_the_plan_pane_shows_every_option_description,
    test_a_plan_option_with_feedback_shows_what_is_sent,
    test_plan_revision_wording_says_only_what_changed,
    test_a_waiting_revision_follows_its_thread,
    test_text_colours_meet_wcag_aa_contrast,
    test_late_answer_is_refused_and_recorded,
    test_history_lists_settled_requests_with_filters,
    test_kill_after_submit_leaves_a_complete_journal_line,
    test_no_display_is_one_clear_line_and_binds_nothing,
    test_a_question_for_a_dropped_window_opens_a_working_dialog,
    test_an_idle_app_ends_the_network_process_and_a_question_brings_a_working_page,
    test_a_window_dropped_with_questions_waiting_keeps_what_was_chosen_and_typed,
    test_a_window_dropped_on_history_or_rules_comes_back_there,
    test_windows_built_and_dropped_all_day_leave_nothing_behind,
    test_rule_deadline_counts_down_in_the_dialog,
    test_a_rule_answering_at_its_deadline_says_so,
    test_memory_hint_offers_the_last_answer_again,
    test_always_answer_this_way_here_saves_a_rule_that_answers_next_time,
    test_an_answer_no_rule_can_give_offers_no_rule,
    test_make_a_rule_from_history,
    test_a_shadow_rule_suggests_and_the_human_decides,
    test_the_rules_view_lists_rules_counts_and_switches_their_mode,
    test_a_broken_rules_file_is_shown_and_the_last_good_rules_stay,
    test_long_unbroken_labels_and_answers_stay_in_their_cards,
    test_history_shows_who_answered_and_filters_by_it,
    test_history_filters_stay_in_the_window_with_a_long_agent_label,
    test_history_reaches_every_entry_however_long_the_journal,
    test_tray_quit_settles_waiting_requests_and_removes_the_socket,
]


def start_app(args, app_args=()):
    """A WebDriver session: tauri-driver starts the app for it; returns once the page is ready."""
    page = Session(args.driver, args.app, args=app_args)
    deadline = time.time() + 30
    while True:
        # WebKitWebDriver may answer "unknown error" while the first page is still loading.
        try:
            page.until("return document.body.dataset.ready === 'true'", timeout=30,
                       message="the page never became ready")
            return page
        except WebDriverError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


def settle(page):
    """Waits until the window shows no request: a test starts on an empty queue, so a request the last
    one answered or dismissed (still on screen until the app's queue refresh lands) is never mistaken for
    this test's own."""
    page.until("return document.getElementById('queue-count').textContent === '0'"
               " && !document.querySelector('#request-form [data-qid]')", timeout=10,
               message="the previous test left a request on screen")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", required=True)
    parser.add_argument("--driver", required=True)
    parser.add_argument("--bus-log", required=True)
    parser.add_argument("--screenshots")
    parser.add_argument("--cli", default=os.path.join(HERE, "..", "..", "target", "debug", "askdesk"),
                        help="the askdesk command-line binary (for the hook tests)")
    parser.add_argument("-k", dest="only", help="run only tests whose name contains this")
    args = parser.parse_args()
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)

    page = start_app(args)
    passed = failed = 0
    try:
        app_gone = False
        for test in TESTS:
            if args.only and args.only not in test.__name__:
                continue
            app_args = getattr(test, "app_args", ())
            if app_gone or app_args:
                # The previous test ended the app, or this one needs its own: a fresh app in a new
                # session (a test with arguments of its own sets ctx.app_gone for the next one).
                page.quit()
                try:
                    page = start_app(args, app_args)
                except Exception:  # noqa: BLE001 - report it as this test's failure
                    failed += 1
                    print(f"FAIL {test.__name__} (no fresh app)", flush=True)
                    traceback.print_exc()
                    continue
                app_gone = False
            ctx = Ctx(args, page)
            started = time.time()
            try:
                settle(page)
                test(ctx)
                passed += 1
                print(f"PASS {test.__name__} ({time.time() - started:.1f}s)", flush=True)
            except Exception as e:  # noqa: BLE001 - report and go on
                failed += 1
                # The cause first, on one line: a long traceback may be cut where the log is shown.
                print(f"FAIL {test.__name__}: {type(e).__name__}: {str(e)[:400]}", flush=True)
                traceback.print_exc()
                # Leave a clean queue for the next test (an app that was ended is replaced instead).
                try:
                    if ctx.app_gone:
                        raise WebDriverError("the app was ended")
                    page.js("document.getElementById('nav-queue').click()")
                    for _ in range(10):
                        if not page.find_all("#view-request:not([hidden])"):
                            break
                        page.click(page.find("#dismiss"))
                        time.sleep(0.3)
                except Exception:  # noqa: BLE001 - best effort
                    pass
            finally:
                ctx.close()
                app_gone = ctx.app_gone
    finally:
        page.quit()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
