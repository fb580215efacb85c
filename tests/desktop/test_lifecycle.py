# tests/desktop/test_lifecycle.py: the window's lifecycle (hide, drop, rebuild) judged by the screen's pixels, without WebDriver.
"""askdesk desktop lifecycle tests: the window is hidden, dropped and rebuilt again and again, and each time
the dialog must be on the screen, as the person would see it.

run-lifecycle.sh starts Xvfb, a private D-Bus session bus (logged by dbus-monitor) and dunst, and calls this
file. Nothing here uses WebDriver (under WebDriver the app keeps WebKit's network process, which hid a
dialog that never painted after a drop): each case starts its own app with default settings but a short
`--drop-window-after`, asks with the `askdesk` command line, drives the window with X events only (xdotool
keys), and decides what is on screen from the root window's pixels (screen.py): the app's window area must
be mostly the page's own colours, with the Submit button drawn in the footer when a request is shown. The
app's log and the X map state only say when to look (the window was dropped; where the window is), never
whether it is visible. Every case runs twice, without a window manager and under openbox. Prints one line
per case and a final "N passed, N failed" line; a failing case leaves a screenshot in the work directory.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import screen as scr  # noqa: E402
from harness import (  # noqa: E402
    closed_on_bus, dbus, find_notification, find_tray_item, notifications_shown, notify_buttons, web_processes)
from cases import Tally  # noqa: E402

NETWORK = "WebKitNetworkPr"  # comm is cut at 15 bytes
PAINT_TIMEOUT = 15
POLL = 0.1


class Failure(AssertionError):
    pass


def wait_until(condition, what, timeout=15, poll=POLL):
    deadline = time.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.time() > deadline:
            raise Failure(what)
        time.sleep(poll)


class Run:
    """What the cases share: the arguments, the X screen, the bus log, and the case's own processes."""

    homes = 0

    def __init__(self, args, wm):
        self.args = args
        self.wm = wm
        self.screen = scr.Screen()
        self.procs = []
        self.shown_at = None  # when the window was last seen appearing on screen
        self.case = None
        self.shots = 0

    # ----- the app -----
    def start_app(self, extra=(), rules=None, choices=None):
        """Starts an app of the case's own; `rules` is its rules file, `choices` what the person chose in its
        Settings (desktop.json)."""
        # Short: the socket's path must fit in a sockaddr_un.
        Run.homes += 1
        home = os.path.join(self.args.work, f"app{Run.homes}")
        for sub in ("run", "data", "config"):
            os.makedirs(os.path.join(home, sub), mode=0o700)
        os.makedirs(os.path.join(home, "config", "askdesk"), mode=0o700)
        if rules is not None:
            with open(os.path.join(home, "config", "askdesk", "rules.toml"), "w", encoding="utf-8") as f:
                f.write(rules)
        if choices is not None:
            with open(os.path.join(home, "config", "askdesk", "desktop.json"), "w", encoding="utf-8") as f:
                json.dump(choices, f)
        # As people run it: nothing of WebKit's or JavaScriptCore's own settings from the suite's shell.
        env = {k: v for k, v in os.environ.items()
               if k != "TAURI_WEBVIEW_AUTOMATION" and not k.startswith("JSC_")
               and k != "WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR"}
        # As people run it: WebKit picks its compositing mode (services.sh turns it off for the other suites).
        if not self.args.no_compositing:
            env.pop("WEBKIT_DISABLE_COMPOSITING_MODE", None)
        env.update(ASKDESK_SOCKET=os.path.join(home, "run", "askdesk.sock"), XDG_RUNTIME_DIR=os.path.join(home, "run"),
                   XDG_DATA_HOME=os.path.join(home, "data"), XDG_CONFIG_HOME=os.path.join(home, "config"),
                   ASKDESK_LOG="info,askdesk_desktop=debug")
        app = App(self, home, env, extra)
        self.app = app
        return app

    def restart(self):
        """Quits the app (SIGTERM, as at logout) and starts it again on the same folders."""
        old = self.app
        old.proc.send_signal(signal.SIGTERM)
        try:
            old.proc.wait(20)
        except subprocess.TimeoutExpired:
            raise Failure("the app did not quit on SIGTERM") from None
        self.shown_at = None
        self.app = App(self, old.home, old.env, old.extra)
        return self.app

    def spawn(self, argv, env, **kwargs):
        proc = subprocess.Popen(argv, env=env, start_new_session=True, **kwargs)
        self.procs.append(proc)
        return proc

    def cleanup(self):
        """Ends every process the case started (the app's WebKit children with it: they share its group)."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []

    # ----- the screen -----
    def window(self):
        """(window id, geometry) of the app's viewable window, or None."""
        return self.screen.viewable("askdesk", pid=self.app.proc.pid)

    def signs(self):
        found = self.window()
        if not found:
            return None, None
        _, geometry = found
        grab = self.screen.grab(geometry)
        return scr.dialog_signs(grab), grab

    def shot(self, name):
        """Saves the whole screen as a PNG in the work directory (and the screenshots directory)."""
        self.shots += 1
        path = os.path.join(self.args.work, f"{self.shots:02d}-{self.case}-{self.wm}-{name}.png")
        self.screen.grab().save_png(path)
        if self.args.screenshots:
            subprocess.run(["cp", path, self.args.screenshots], check=False)
        return path

    def painted(self, what, request=True, timeout=PAINT_TIMEOUT):
        """Waits until the app's window shows the request view (or, `request=False`, any view of the page)
        on the screen; returns the signs and the grab. Fails with a screenshot after `timeout`."""
        judge = scr.request_painted if request else scr.page_painted
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            signs, grab = self.signs()
            if signs is not None:
                last = signs
                if judge(signs):
                    if self.shown_at is None:
                        self.shown_at = time.time()
                    if self.args.screenshots:
                        self.shot(f"on-screen-{re.sub(r'[^a-z0-9]+', '-', what.lower())}")
                    return signs, grab
            time.sleep(POLL)
        path = self.shot(f"not-painted-{re.sub(r'[^a-z0-9]+', '-', what.lower())}")
        raise Failure(f"{what}: {'the request' if request else 'the page'} was not on screen within {timeout} s "
                      f"(window {self.window()}, last signs {last}; screenshot {path}; {self.app.facts()})")

    def stays_painted(self, what, seconds=2.0):
        """After `painted`: the request stays on the screen for `seconds` (a page that hides itself right
        after it was drawn is not a question the person sees)."""
        until = time.time() + seconds
        while time.time() < until:
            signs, _ = self.signs()
            if signs is None or not scr.request_painted(signs):
                path = self.shot(f"gone-{re.sub(r'[^a-z0-9]+', '-', what.lower())}")
                raise Failure(f"{what}: the request left the screen within {seconds} s of being drawn "
                              f"(window {self.window()}, signs {signs}; screenshot {path}; {self.app.facts()})")
            time.sleep(POLL)

    # ----- input -----
    def keys(self, *keys):
        """Types keys into the app's window with xdotool: the window is given the input focus first
        (activated through the window manager when there is one) and the pointer put over it."""
        self.react()
        self.focus()
        xdotool("key", "--delay", "80", *keys)

    def react(self):
        """Waits until the window has been on screen for a second, as a person reacting to it would: the
        page takes no key sooner (ui/app.js, ARM_AFTER_SHOWN_MS)."""
        if self.shown_at is not None:
            time.sleep(max(0.0, self.shown_at + 1.0 - time.time()))

    def focus(self):
        """Gives the app's window the input focus (activated through the window manager when there is one),
        the pointer put over it; returns the window and its geometry."""
        window, (x, y, w, h) = found = wait_until(self.window, "no window to type into")
        # Over the sidebar's empty lower part, where hovering changes nothing.
        xdotool("mousemove", str(x + 120), str(y + h - 60))
        if self.wm == "openbox":
            xdotool("windowactivate", "--sync", str(window))
        xdotool("windowfocus", str(window))
        return found

    def hide(self):
        """Escape hides the window: waits until it is no longer viewable."""
        self.keys("Escape")
        wait_until(lambda: self.window() is None, "Escape did not hide the window")
        self.shown_at = None

    def hides_itself(self):
        """After the last answer in a window a question opened: it says "Sent" and hides itself."""
        wait_until(lambda: self.window() is None, "the window a question opened did not hide itself after the answer")
        self.shown_at = None

    def wait_dropped(self):
        """Waits for the hidden window's drop (the app's log and its web process gone), then for the end of
        WebKit's network process two seconds later, then a margin. With `never` it waits as long and
        checks the window was kept."""
        app = self.app
        if self.args.drop_window_after == "never":
            time.sleep(2 + 2 + 1)
            assert web_processes(app.proc.pid), "the window was dropped with --drop-window-after=never"
            return
        limit = float(self.args.drop_window_after) + 15
        wait_until(lambda: app.count("hidden window dropped") > app.drops, "the hidden window was not dropped",
                   timeout=limit)
        app.drops = app.count("hidden window dropped")
        wait_until(lambda: not web_processes(app.proc.pid), "the web process outlived the drop", timeout=15)
        wait_until(lambda: app.count("network process ended") > app.network_ends
                   and not web_processes(app.proc.pid, NETWORK), "WebKit's network process was not ended",
                   timeout=15)
        app.network_ends = app.count("network process ended")
        time.sleep(0.5)


class App:
    """One askdesk-desktop of the case's own, on a private socket and data directory, logging at debug."""

    def __init__(self, run, home, env, extra):
        self.run = run
        self.home = home
        self.env = env
        self.extra = extra
        self.socket = env["ASKDESK_SOCKET"]
        self.log_path = os.path.join(home, "app.log")
        self.drops = 0
        self.network_ends = 0
        self.asks = 0
        # The bus log is the whole run's: this app's notifications are those logged after it started.
        self.bus_from = os.path.getsize(run.args.bus_log)
        with open(self.log_path, "w") as log:
            self.proc = run.spawn([run.args.app, f"--drop-window-after={run.args.drop_window_after}", *extra], env,
                                  stdout=subprocess.DEVNULL, stderr=log)
        wait_until(lambda: os.path.exists(self.socket) or self.proc.poll() is not None, "the app never listened",
                   timeout=30)
        assert self.proc.poll() is None, f"the app exited {self.proc.returncode}: {self.log()[-2000:]}"

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return re.sub(r"\x1b\[[0-9;]*m", "", f.read())

    def count(self, text):
        return self.log().count(text)

    def facts(self):
        """What the app's log says, for a failure's message: it may claim a page the screen does not show."""
        names = ("window built", "page load event=Finished", "request shown", "hidden window dropped",
                 "network process ended")
        return "log: " + ", ".join(f"{n!r} x{self.count(n)}" for n in names) + f" ({self.log_path})"

    def ask(self, question, options=("Yes", "No"), label="lifecycle", meta=()):
        """Starts `askdesk ask` with the question (and `KEY=VALUE` meta); returns an Ask to read its answer from."""
        self.asks += 1
        qid = f"q{self.asks}"
        argv = [self.run.args.cli, "ask", question, "--id", qid, "--agent-label", label,
                "--header", "Lifecycle check"]
        for option in options:
            argv += ["--option", option]
        for pair in meta:
            argv += ["--meta", pair]
        proc = self.run.spawn(argv, self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return Ask(proc, qid, label)

    def rules_on(self):
        """Whether the rules file was read and its answerer is on the chain (`askdesk status`)."""
        out = subprocess.run([self.run.args.cli, "status", "--json"], env=self.env, capture_output=True, text=True,
                             timeout=15)
        return out.returncode == 0 and any(a.get("label") == "rules" for a in json.loads(out.stdout)["answerers"])

    def bus_log(self):
        """What dbus-monitor logged since this app started."""
        with open(self.run.args.bus_log, "rb") as f:
            f.seek(self.bus_from)
            return f.read().decode(errors="replace")

    def notification(self, label, timeout=15, summary=None):
        summary = summary or f"{label} asks"
        return wait_until(lambda: find_notification(self.bus_log(), summary), f"no notification {summary!r} on the bus",
                          timeout=timeout)

    def shown(self, summary, times=1):
        """Waits until `times` Notify calls with this summary are on the bus; returns the id the last one got."""
        return wait_until(lambda: (lambda ids: ids[-1] if len(ids) >= times else None)(
            notifications_shown(self.bus_log(), summary)), f"no {times} notifications {summary!r} on the bus")

    def buttons(self, summary):
        """The [key, label] pairs of the last notification with this summary."""
        return notify_buttons(self.bus_log(), summary)

    def second_launch(self):
        proc = subprocess.run([self.run.args.app], env=self.env, capture_output=True, timeout=30)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])


class Ask:
    def __init__(self, proc, qid, label):
        self.proc, self.qid, self.label = proc, qid, label

    def answer(self, timeout=15):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"askdesk ask for {self.qid} did not return within {timeout} s") from None
        assert self.proc.returncode == 0, f"askdesk ask for {self.qid} exited {self.proc.returncode}: {err[-2000:]}"
        return json.loads(out)

    def expect(self, label, timeout=15):
        got = self.answer(timeout)
        assert got == {"answers": [{"id": self.qid, "selected": [label]}]}, got

    def done(self):
        return self.proc.poll() is not None


def invoke(nid, key):
    """The notification server's ActionInvoked for notification `nid` and action `key`, as a click sends it."""
    subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                    "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}", f"string:{key}"], check=True)


def xdotool(*args):
    proc = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=15)
    assert proc.returncode == 0, f"xdotool {' '.join(args)}: {proc.stderr.strip()}"


def answer_by_keys(run, ask, n, label):
    """Picks option `n` and submits with Ctrl+Enter; the ask must print that answer."""
    run.keys(str(n), "ctrl+Return")
    ask.expect(label)


def queue_avatars(signs_grab):
    """How many requests the sidebar lists, read from the pixels: each queue entry has a round avatar in
    the accent's soft colour (30 px across, about 590 pixels of it around its letter)."""
    _, grab = signs_grab
    scheme = scr.dialog_signs(grab)["scheme"]
    soft = {"light": "#e8effc", "dark": "#24324d"}[scheme]
    return round(grab.count(soft, (0, 0, scr.SIDEBAR, grab.height)) / 590)


def start_shown(run):
    """Starts the app (its window shows at start) and checks its page is on screen."""
    app = run.start_app()
    run.painted("the window shown at start", request=False)
    return app


# ----- the cases -----

def case_five_cycles_of_ask_answer_hide_drop(run):
    """Five times: a question for a dropped window is painted, answered by keyboard, hides itself after the
    answer and is dropped again."""
    start_shown(run)
    run.hide()
    run.wait_dropped()
    for n in range(1, 6):
        ask = run.app.ask(f"Cycle {n}: ship build {n} to the staging servers?")
        run.painted(f"cycle {n}: the question after a drop")
        run.stays_painted(f"cycle {n}: the question after a drop")
        answer_by_keys(run, ask, 1, "Yes")
        run.hides_itself()
        run.wait_dropped()


def case_a_key_held_when_the_dialog_appears_does_not_act_in_it(run):
    """A person holds Escape in another window when a question arrives: the new dialog takes the focus and
    the key's repeats reach its page. They used to hide it as it loaded (the question never stayed on
    screen); a key held from before the page now does nothing there. Once it is let go, the dialog is
    answered by keyboard and hides itself after the answer. Three cycles."""
    start_shown(run)
    run.hide()
    run.wait_dropped()
    for n in range(1, 4):
        xdotool("keydown", "Escape")
        try:
            ask = run.app.ask(f"Cycle {n}: rotate the signing key {n}?")
            run.painted(f"cycle {n}: the question arriving while Escape is held")
            run.stays_painted(f"cycle {n}: the question arriving while Escape is held")
        finally:
            xdotool("keyup", "Escape")
        answer_by_keys(run, ask, 2, "No")
        run.hides_itself()
        run.wait_dropped()


def case_a_question_raising_the_open_window_ignores_a_key_held_elsewhere(run):
    """The window is open on a question, behind the program the person types in, where Escape is held when
    a second question arrives: the app gives its window the focus, and the key's repeats reach the page.
    They must not hide it; once the key is let go both questions are answered by keyboard."""
    app = start_shown(run)
    first = app.ask("Rotate the signing keys today?", label="agent-one")
    run.painted("the first question")
    run.react()
    other, _ = other_program(run)
    xdotool("keydown", "Escape")
    try:
        second = app.ask("Merge the release branch now?", label="agent-two")
        app.shown("2 questions waiting")
        run.stays_painted("the open window, raised by a question while Escape is held", seconds=3.0)
    finally:
        xdotool("keyup", "Escape")
    other.terminate()
    answer_by_keys(run, first, 1, "Yes")
    run.painted("the second question, next in the queue")
    answer_by_keys(run, second, 2, "No")


def case_a_notification_opens_its_request_after_a_drop(run):
    """Two questions wait; the window is hidden and dropped, and "2 questions waiting" is raised; the first
    question is withdrawn, so the notification becomes the second one's own (the same id); its default action
    brings the window back on that request, answered by keyboard."""
    app = start_shown(run)
    first = app.ask("Rotate the signing keys today?", label="agent-one")
    run.painted("the first question")
    second = app.ask("Merge the release branch now?", label="agent-two")
    wait_until(lambda: app.count("request added") == 2, "the app never heard of the second question")
    run.hide()
    run.wait_dropped()
    nid = app.shown("2 questions waiting")
    first.proc.terminate()
    assert app.shown("agent-two asks") == nid, "the one question left did not get the same notification"
    invoke(nid, "default")
    run.painted("the notification's request after a drop")
    run.keys("2", "ctrl+Return")
    second.expect("No")


def tray_open(item="Open askdesk"):
    """Clicks this item of the tray icon's menu (over D-Bus, as the tray host does)."""
    found = wait_until(find_tray_item, "no tray item on the bus", timeout=10, poll=0.2)
    name, path = found
    layout = dbus(f"--dest={name}", f"{path}/Menu", "com.canonical.dbusmenu.GetLayout", "int32:0", "int32:-1",
                  "array:string:")
    open_id = next(int(re.search(r"int32 (\d+)", chunk).group(1)) for chunk in layout.split("struct {")[1:]
                   if f'string "{item}"' in chunk)
    dbus(f"--dest={name}", f"{path}/Menu", "com.canonical.dbusmenu.Event", f"int32:{open_id}",
         "string:clicked", "variant:int32:0", "uint32:0")


def case_a_second_launch_and_the_trays_open_show_a_dropped_window(run):
    """After a drop, a second launch of the app shows the window (on the request waiting), and after the next
    drop so does the tray's Open (on the empty view: nothing waits)."""
    app = start_shown(run)
    ask = app.ask("Publish the docs site?")
    run.painted("the question")
    run.hide()
    run.wait_dropped()
    app.second_launch()
    run.painted("the waiting question, after a second launch")
    answer_by_keys(run, ask, 1, "Yes")
    run.hide()
    run.wait_dropped()
    tray_open()
    run.painted("the empty view, after the tray's Open", request=False)
    run.hide()
    run.wait_dropped()
    ask = app.ask("Tag the release?")
    run.painted("a question after the tray's Open and a drop")
    answer_by_keys(run, ask, 2, "No")


def case_a_window_dropped_with_two_requests_waiting_comes_back_with_both(run):
    """Two questions wait when the window is hidden and dropped; brought back (a second launch), the queue
    lists both, as it did before, and both are answered by keyboard."""
    app = start_shown(run)
    first = app.ask("Run the database migration tonight?", label="agent-one")
    run.painted("the first question")
    second = app.ask("Send the weekly report?", label="agent-two")
    wait_until(lambda: app.count("request added") == 2, "the app never heard of the second question")
    before = wait_until(lambda: (lambda s: s if queue_avatars(s) == 2 else None)(run.painted("two waiting")),
                        "the queue never listed two requests before the drop", timeout=PAINT_TIMEOUT)
    assert queue_avatars(before) == 2
    run.hide()
    run.wait_dropped()
    app.second_launch()
    after = run.painted("two waiting requests after a drop")
    listed = queue_avatars(after)
    if listed != 2:
        after = wait_until(lambda: (lambda s: s if queue_avatars(s) == 2 else None)(run.painted("two waiting")),
                           f"the rebuilt window's queue lists {listed} requests, not 2", timeout=5)
    answer_by_keys(run, first, 1, "Yes")
    run.painted("the second question, after the first was answered")
    answer_by_keys(run, second, 2, "No")


PERMISSION_RULES = '[[rule]]\nname = "tests"\nmatch = { tool = "Bash", command = "cargo test*" }\nanswer = "Allow"\n'


def case_quitting_closes_every_notification(run):
    """A question waits (its notification shown) and a rule has answered a permission prompt (its note's
    notification shown, which only quitting closes); quitting closes both by id before the app exits: by
    SIGTERM, and, for a second app, by the tray's Quit."""
    for how in ("SIGTERM", "the tray's Quit"):
        # The window stays hidden, so the question's notification stays too.
        app = run.start_app(extra=("--hidden",), rules=PERMISSION_RULES, choices={"notifyOnly": True})
        wait_until(lambda: app.rules_on(), "the rules answerer never joined", timeout=15, poll=0.2)
        prompt = app.ask("Allow Bash: cargo test -p shop?", options=("Allow", "Deny"), label="hooked",
                         meta=("tool=Bash", "command=cargo test -p shop"))
        prompt.expect("Allow")
        note = app.notification("hooked", summary="Rule “tests” answered: Allow")
        waiting = app.ask("Ship the release notes?", label="quitter")
        asked = app.notification("quitter")
        if how == "SIGTERM":
            app.proc.send_signal(signal.SIGTERM)
        else:
            tray_open("Quit askdesk")
        try:
            app.proc.wait(20)
        except subprocess.TimeoutExpired:
            raise Failure(f"the app did not quit on {how}") from None
        log = app.bus_log()
        left = [nid for nid in (note, asked) if not closed_on_bus(log, nid)]
        assert not left, f"after {how}, notifications {left} were left open (note {note}, question {asked})"
        waiting.proc.wait(15)


def geometry_settles(run, what, check=lambda geometry: True, timeout=10):
    """The window's geometry once it has stopped changing (two equal readings) and passes `check`."""
    last = [None]

    def steady():
        found = run.window()
        geometry = found[1] if found else None
        settled = geometry if geometry is not None and geometry == last[0] and check(geometry) else None
        last[0] = geometry
        return settled
    return wait_until(steady, f"{what}: the window's geometry never settled (last {last[0]})", timeout=timeout,
                      poll=0.3)


def near(a, b, slack=2):
    return all(abs(p - q) <= slack for p, q in zip(a, b))


def case_the_window_keeps_its_size_and_place_across_hide_drop_and_restart(run):
    """The person moves and resizes the window; hidden and dropped, then opened from the tray, it comes back at
    that size and place, and again after the app is quit and started. A place on no monitor (a screen since
    unplugged) opens the window centred, at its kept size."""
    start_shown(run)
    first = geometry_settles(run, "the window shown at start")
    window, _ = run.focus()
    xdotool("windowsize", str(window), "900", "600")
    xdotool("windowmove", str(window), "60", "40")
    chosen = geometry_settles(run, "the moved and resized window",
                              lambda g: g[2:] == (900, 600) and not near(g[:2], first[:2], 20))
    run.hide()
    run.wait_dropped()
    tray_open()
    run.painted("the window opened from the tray after a drop", request=False)
    again = geometry_settles(run, "the window rebuilt after a drop")
    assert near(again, chosen), f"after a drop the window is at {again}, not where it was left: {chosen}"
    run.restart()
    run.painted("the window shown at the next start", request=False)
    restarted = geometry_settles(run, "the window at the next start")
    assert near(restarted, chosen), f"after a restart the window is at {restarted}, not where it was left: {chosen}"
    # The screen the window was on is gone: its place is on no monitor.
    state_path = os.path.join(run.app.home, "config", "askdesk", "window-state.json")
    old = run.app
    old.proc.send_signal(signal.SIGTERM)
    old.proc.wait(20)
    with open(state_path, encoding="utf-8") as f:
        kept = json.load(f)
    assert kept["main"]["width"] == 900 and kept["main"]["height"] == 600, kept
    kept["main"].update(x=5000, y=4000, prev_x=5000, prev_y=4000)
    with open(state_path, "w", encoding="utf-8") as f:
        json.dump(kept, f)
    run.app = App(run, old.home, old.env, old.extra)
    run.shown_at = None
    run.painted("the window whose place is on no monitor", request=False)
    x, y, w, h = geometry_settles(run, "the window whose place is on no monitor")
    assert (w, h) == (900, 600), f"the kept size was not restored: {w}x{h}"
    centre = (x + w / 2, y + h / 2)
    assert abs(centre[0] - run.screen.width / 2) <= 40 and abs(centre[1] - run.screen.height / 2) <= 60, \
        f"the window is at {(x, y, w, h)}, not centred on the {run.screen.width}x{run.screen.height} screen"


def case_a_window_a_question_opened_says_sent_and_hides_after_the_last_answer(run):
    """A question opens the hidden window; once it is answered the window says "Sent" and hides itself. One the
    person opened (the tray's Open) stays after the answer, as does one a second question arrived in."""
    app = start_shown(run)
    run.hide()
    ask = app.ask("Deploy the hotfix to production now?")
    run.painted("the question that opened the window")
    answer_by_keys(run, ask, 1, "Yes")
    if run.args.screenshots:
        def says_sent():
            signs, _ = run.signs()
            return signs is not None and scr.page_painted(signs) and not scr.request_painted(signs)
        wait_until(says_sent, "the window never showed the page without the question after the answer", timeout=5,
                   poll=0.05)
        run.shot("sent")
    run.hides_itself()
    log = app.log()
    assert "answers sent; the window hides itself" in log and "window hidden after sending" in log, app.facts()
    # Opened by the person: answering leaves it open.
    tray_open()
    run.painted("the empty view, after the tray's Open", request=False)
    ask = app.ask("Tag the release candidate?")
    run.shown_at = None  # the page takes keys a moment after the question swaps in
    run.painted("a question in the window the person opened")
    answer_by_keys(run, ask, 2, "No")
    run.painted("the empty view after the answer, in the window the person opened", request=False)
    until = time.time() + 3
    while time.time() < until:
        assert run.window() is not None, "the window the person opened hid itself after the answer"
        time.sleep(POLL)
    assert app.count("answers sent") == 1, app.facts()


def other_program(run):
    """Starts another program's window and gives it the input focus, as the person working there; returns its
    process and its window's id."""
    def others():
        return subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", "askdesk-lifecycle-other"],
                              capture_output=True, text=True).stdout.split()
    before = set(others())
    proc = run.spawn(["xmessage", "-geometry", "+0+0", "-name", "askdesk-lifecycle-other", "Another program"],
                     run.app.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Its own window, not one an earlier call started (a window manager focuses a new window as it maps).
    found = wait_until(lambda: [w for w in others() if w not in before], "the other program's window never showed")
    if run.wm == "openbox":
        xdotool("windowactivate", "--sync", found[0])
    xdotool("windowfocus", "--sync", found[0])
    return proc, int(found[0])


def focused_window():
    out = subprocess.run(["xdotool", "getwindowfocus"], capture_output=True, text=True, timeout=15)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def case_show_without_focus_leaves_the_keyboard_where_the_person_types(run):
    """With "Show without focus" chosen, a question shows the window (built again after a drop, and merely hidden)
    while the keyboard focus stays in the program the person types in; clicked into, it answers as usual.
    Without the choice (the control), the question's window takes the focus under a window manager."""
    for choice in (False, True):
        app = run.start_app(choices={"withoutFocus": choice})
        run.painted("the window shown at start", request=False)
        run.hide()
        run.wait_dropped()
        # With the choice: a window built again after a drop, then one merely hidden (it hides itself after
        # the answer, and the next question comes before its drop).
        for n in range(1, 3 if choice else 2):
            _, other = other_program(run)
            ask = app.ask(f"Rotate deploy key {n} ({'without' if choice else 'with'} focus)?")
            run.painted(f"question {n}'s window")
            window = wait_until(run.window, "no window")[0]
            if choice:
                wait_until(lambda: app.count("window shown without the focus") >= n,
                           "the window did not say it showed without the focus")
                assert focused_window() == other, f"the focus went to {focused_window()}, not the other program {other}"
                run.stays_painted(f"question {n}'s window, shown without the focus", seconds=1.5)
                assert focused_window() == other, f"the focus moved to {focused_window()}"
            elif run.wm == "openbox":
                # Without a window manager nothing gives a new window the focus: the control needs one.
                wait_until(lambda: focused_window() == window, f"the window never took the focus ({focused_window()})")
            answer_by_keys(run, ask, 1, "Yes")
            run.hides_itself()
        run.cleanup()


def case_notify_only_leaves_the_window_to_the_person(run):
    """With "Notify only" chosen, a question raises its notification and the window stays hidden; the
    notification's Open brings it on screen, where it is answered."""
    app = run.start_app(extra=("--hidden",), choices={"notifyOnly": True})
    ask = app.ask("Prune the stale branches?", label="pruner")
    nid = app.notification("pruner")
    wait_until(lambda: app.count("request added"), "the app never heard of the question")
    until = time.time() + 2
    while time.time() < until:
        assert run.window() is None, "the window opened by itself with notify only"
        time.sleep(POLL)
    invoke(nid, "default")
    run.painted("the question opened from its notification")
    answer_by_keys(run, ask, 2, "No")


def quiet_app(run):
    """An app whose window stays hidden until the person opens it ("Notify only"): its notifications stay."""
    return run.start_app(extra=("--hidden",), choices={"notifyOnly": True})


def case_several_questions_share_one_notification_updated_in_place(run):
    """One question has its own notification, its options as buttons; a second and a third collapse it into "2
    questions waiting", then "3 questions waiting": the same notification updated in place (the same id, never
    closed). As they leave it counts down, and the one left gets its own notification again, with its buttons,
    one of which answers it."""
    app = quiet_app(run)
    first = app.ask("Rotate the signing keys today?", label="agent-one")
    nid = app.shown("agent-one asks")
    second = app.ask("Merge the release branch now?", label="agent-two")
    assert app.shown("2 questions waiting") == nid
    third = app.ask("Tag the release?", label="agent-three")
    assert app.shown("3 questions waiting") == nid
    third.proc.terminate()
    assert app.shown("2 questions waiting", times=2) == nid
    first.proc.terminate()
    assert app.shown("agent-two asks") == nid
    assert not closed_on_bus(app.bus_log(), nid), "the notification was closed, not updated in place"
    assert not notifications_shown(app.bus_log(), "agent-three asks"), "the third question got its own notification"
    buttons = app.buttons("agent-two asks")
    assert [label for _, label in buttons] == ["Open", "Yes", "No"], buttons
    assert all(re.fullmatch(r"choose-\d+-[01]", key) for key, _ in buttons[1:]), buttons
    invoke(nid, buttons[2][0])
    second.expect("No")
    wait_until(lambda: closed_on_bus(app.bus_log(), nid), "the notification stayed after its question was answered")


def case_a_late_click_on_a_replaced_button_answers_nothing(run):
    """A question's notification is updated in place, in the end to another question's buttons: a click that
    comes late with the first question's button (its key names that request, now gone) answers nothing and
    says so; the second question's own button then answers it."""
    app = quiet_app(run)
    first = app.ask("Rotate the signing keys today?", label="agent-one")
    nid = app.shown("agent-one asks")
    stale = app.buttons("agent-one asks")[1][0]
    second = app.ask("Merge the release branch now?", label="agent-two")
    app.shown("2 questions waiting")
    first.proc.terminate()
    assert app.shown("agent-two asks") == nid
    invoke(nid, stale)
    app.shown("That question is no longer waiting")
    assert not second.done(), "the late click answered the question its notification shows now"
    invoke(nid, app.buttons("agent-two asks")[1][0])
    second.expect("Yes")


def case_the_window_on_screen_withdraws_the_notification_and_hiding_raises_it(run):
    """A question's notification is withdrawn once the window has the keyboard focus (the person sees the queue);
    a question arriving meanwhile raises none; hiding the window raises "2 questions waiting", whose Open brings
    the window back, where both are answered."""
    app = quiet_app(run)
    first = app.ask("Rotate the signing keys today?", label="agent-one")
    nid = app.shown("agent-one asks")
    tray_open()
    run.painted("the question, opened from the tray")
    run.focus()
    wait_until(lambda: closed_on_bus(app.bus_log(), nid), "the notification stayed while the window had the focus")
    second = app.ask("Merge the release branch now?", label="agent-two")
    wait_until(lambda: app.count("request added") == 2, "the app never heard of the second question")
    run.hide()
    raised = app.shown("2 questions waiting")
    assert not notifications_shown(app.bus_log(), "agent-two asks"), \
        "a question that came while the window had the focus raised a notification"
    invoke(raised, "default")
    run.painted("the window, opened from the notification")
    answer_by_keys(run, first, 1, "Yes")
    run.painted("the second question")
    answer_by_keys(run, second, 2, "No")


def case_the_page_runs_without_the_script_compilers(run):
    """The window's web process runs its page without JavaScriptCore's JIT (less memory, no executable memory
    of the page's own) and without WebKit's memory-pressure monitor; the app sets both for its web processes.
    A page in English maps no Chinese font."""
    app = start_shown(run)
    pids = web_processes(app.proc.pid)
    assert pids, "no web process while the window is shown"
    for pid in pids:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = set(f.read().split(b"\0"))
        assert b"JSC_useJIT=0" in environ, f"web process {pid} runs with the JIT"
        assert b"WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR=1" in environ, f"web process {pid} runs the monitor"
    ask = run.app.ask("Without the JIT: does the dialog still answer?")
    run.painted("a question drawn by the interpreter")
    # A page in English loads no Chinese font: the language list names other languages (in their own
    # script) only once the person reaches for it (setup.sh installs the font the suites use).
    font = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
    assert os.path.exists(font), f"{font} is missing: scripts/setup.sh installs it"
    for pid in pids:
        with open(f"/proc/{pid}/maps", encoding="utf-8") as f:
            assert font not in f.read(), f"web process {pid} loaded the Chinese font for a page in English"
    answer_by_keys(run, ask, 1, "Yes")


CASES = [
    case_the_page_runs_without_the_script_compilers,
    case_five_cycles_of_ask_answer_hide_drop,
    case_a_key_held_when_the_dialog_appears_does_not_act_in_it,
    case_a_question_raising_the_open_window_ignores_a_key_held_elsewhere,
    case_a_notification_opens_its_request_after_a_drop,
    case_a_second_launch_and_the_trays_open_show_a_dropped_window,
    case_a_window_dropped_with_two_requests_waiting_comes_back_with_both,
    case_quitting_closes_every_notification,
    case_the_window_keeps_its_size_and_place_across_hide_drop_and_restart,
    case_a_window_a_question_opened_says_sent_and_hides_after_the_last_answer,
    case_show_without_focus_leaves_the_keyboard_where_the_person_types,
    case_notify_only_leaves_the_window_to_the_person,
    case_several_questions_share_one_notification_updated_in_place,
    case_a_late_click_on_a_replaced_button_answers_nothing,
    case_the_window_on_screen_withdraws_the_notification_and_hiding_raises_it,
]


# ----- window managers -----

def start_wm(wm, work):
    """Starts the window manager (None for none) and waits until it manages the screen."""
    if wm == "none":
        return None
    log = open(os.path.join(work, f"{wm}.log"), "w")
    proc = subprocess.Popen(["openbox", "--sm-disable"], stdout=log, stderr=log, start_new_session=True)

    def running():
        out = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], capture_output=True, text=True)
        return "window id" in out.stdout
    wait_until(running, "openbox did not start", timeout=15)
    return proc


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--bus-log", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--drop-window-after", default="2", help="the app's setting: seconds, or never")
    parser.add_argument("--wm", default="none,openbox", help="window managers to run the cases under")
    parser.add_argument("--screenshots", help="also copy failure screenshots here, and take one each time the "
                        "dialog is seen on screen")
    parser.add_argument("--no-compositing", action="store_true",
                        help="turn WebKit's compositing mode off, as the WebDriver suite runs (by default WebKit "
                        "picks it, as on a person's machine)")
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    args = parser.parse_args()
    print(f"app {args.app}, --drop-window-after={args.drop_window_after}", flush=True)

    tally = Tally(args.only)
    for wm in args.wm.split(","):
        wm_proc = start_wm(wm, args.work)
        try:
            for case in tally.selected(CASES):
                run = Run(args, wm)
                run.case = case.__name__[len("case_"):]

                def end(run=run):
                    run.cleanup()
                    run.screen.close()
                tally.run(case, wm, run, end)
        finally:
            stop(wm_proc)
    return tally.summary()

if __name__ == "__main__":
    sys.exit(main())
