# tests/desktop/test_wayland.py: the window's lifecycle and focus under Wayland compositors (sway, mutter), without WebDriver.
"""askdesk under Wayland: the window shown, hidden, dropped and rebuilt, and brought forward only where the
person acted, under compositors that check activation tokens: sway (wlroots) and GNOME's mutter, both headless.

run-wayland.sh starts a private D-Bus session bus (logged by dbus-monitor) and, when run as root, a user for
sway (which refuses to run as root), and calls this file. Each compositor is started here, with the person's
other program (wayland_peer.py: a GTK window that says when it has the focus, the session's notification
server, and the keys the person types through the compositor's own input). Each case starts its own app with
`GDK_BACKEND=wayland` and no X display, asks with the `askdesk` command line and answers by keys.

What is judged: under sway, the screen's pixels (grim, the window's place from sway's tree) and which window
has the focus (sway's tree); under mutter, which offers no screen copy to clients, what the compositor tells
the clients: the other program's GTK is-active (its wl_keyboard enter and leave) and the app's own log of its
window's focus (GTK's, logged at debug level), with the page's report of the request it painted.

Where the person acts, the compositor issues a real activation token for their key (the other program asks
for it with that key's serial, as a launcher or a notification popup does): `o` in the other program makes it,
as the notification server, send ActivationToken and ActionInvoked for the newest notification; `l` gives a
token a second launch gets as XDG_ACTIVATION_TOKEN. Prints one line per case and "N passed, N failed".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import screen as scr  # noqa: E402
from test_lifecycle import NETWORK, PAINT_TIMEOUT, POLL, App, Failure, stop, wait_until  # noqa: E402
from cases import Tally  # noqa: E402
from harness import web_processes  # noqa: E402

SYSTEM_PYTHON = "/usr/bin/python3"  # python3-gi is installed for the system's Python
KEEPS_FOCUS = 2.0  # s: how long a window that asked for nothing must leave the focus where it is
SWAY_CONFIG = """\
output HEADLESS-1 resolution 1280x800 position 0 0
default_border none
default_floating_border none
focus_on_window_activation smart
for_window [app_id=".*"] floating enable
for_window [title="askdesk-other"] resize set 320 200, move position 0 0
"""


class Peer:
    """wayland_peer.py: its events read on a thread, waited for by what they say."""

    def __init__(self, run, input_method):
        self.events = []
        self.changed = threading.Condition()
        self.proc = run.spawn([SYSTEM_PYTHON, os.path.join(HERE, "wayland_peer.py"), "--input", input_method],
                              run.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              stderr=open(os.path.join(run.args.work, "peer.log"), "a"))
        threading.Thread(target=self.read, daemon=True).start()
        self.wait("ready")

    def read(self):
        for line in self.proc.stdout:
            with self.changed:
                self.events.append(line.strip())
                self.changed.notify_all()

    def mark(self):
        with self.changed:
            return len(self.events)

    def wait(self, pattern, since=0, timeout=15):
        """The first event from `since` on matching `pattern` (a regular expression), as a match."""
        deadline = time.time() + timeout
        with self.changed:
            while True:
                for event in self.events[since:]:
                    found = re.fullmatch(pattern, event)
                    if found:
                        return found
                left = deadline - time.time()
                if left <= 0 or self.proc.poll() is not None:
                    raise Failure(f"the other program never said {pattern!r} (it said {self.events[since:]})")
                self.changed.wait(left)

    def active(self):
        with self.changed:
            states = [e for e in self.events if e in ("active", "inactive", "gone")]
        return bool(states) and states[-1] == "active"

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def keys(self, *keys):
        since = self.mark()
        self.send("keys " + " ".join(keys))
        self.wait(re.escape("typed " + " ".join(keys)), since)

    def show(self):
        """Maps the other program's window; the compositor gives a new window the focus."""
        since = self.mark()
        self.send("show")
        self.wait("active", since)

    def hide(self):
        since = self.mark()
        self.send("hide")
        self.wait("gone", since)


class Compositor:
    name = None

    def __init__(self, run):
        self.run = run

    def focused_app(self, app):
        """Whether the app's window has the keyboard focus, as the compositor says."""
        raise NotImplementedError

    def painted(self, app, what, request=True, again=False):
        """Waits until the app's window shows the request (or any page); `again`: the request it showed
        before, brought forward."""
        raise NotImplementedError


class Sway(Compositor):
    """sway headless, run as the suite's own user; its tree says where the window is and what is focused."""

    name = "sway"

    def start(self):
        args = self.run.args
        home = args.sway_dir
        with open(os.path.join(home, "config"), "w") as f:
            f.write(SWAY_CONFIG)
        env = {"HOME": home, "XDG_RUNTIME_DIR": home, "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
               "WLR_RENDERER": "pixman", "PATH": os.environ["PATH"]}
        argv = ["sway", "-c", os.path.join(home, "config")]
        if args.sway_user:
            argv = ["setpriv", f"--reuid={args.sway_user}", f"--regid={args.sway_user}", "--clear-groups"] + argv
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, start_new_session=True,
                                     stderr=open(os.path.join(args.work, "sway.log"), "w"))
        socket = wait_until(lambda: next((os.path.join(home, n) for n in os.listdir(home)
                                          if re.fullmatch(r"wayland-\d+", n)), None), "sway did not start")
        ipc = wait_until(lambda: next((os.path.join(home, n) for n in os.listdir(home) if n.startswith("sway-ipc")),
                                      None), "sway's IPC socket did not appear")
        self.ipc = ipc
        wait_until(lambda: self.tree() is not None, "sway did not answer on its IPC socket")
        # The headless seat has no keyboard until a client adds one, and without one no window gets the
        # focus: a virtual keyboard is kept for the whole run (wtype sleeping), the person's own.
        self.keyboard = subprocess.Popen(["wtype", "-s", "86400000"], env=dict(os.environ, WAYLAND_DISPLAY=socket),
                                         start_new_session=True)
        return {"WAYLAND_DISPLAY": socket, "SWAYSOCK": ipc}, "wtype"

    def tree(self):
        out = subprocess.run(["swaymsg", "-s", self.ipc, "-t", "get_tree", "-r"], capture_output=True, text=True)
        return json.loads(out.stdout) if out.returncode == 0 else None

    def node(self, app):
        """The app's visible window in sway's tree, or None."""
        todo = [self.tree() or {}]
        while todo:
            node = todo.pop()
            if node.get("pid") == app.proc.pid and node.get("visible"):
                return node
            todo += node.get("nodes", []) + node.get("floating_nodes", [])
        return None

    def focused_app(self, app):
        node = self.node(app)
        return bool(node and node.get("focused"))

    def grab(self, node):
        r = node["rect"]
        out = subprocess.run(["grim", "-t", "ppm", "-g", f"{r['x']},{r['y']} {r['width']}x{r['height']}", "-"],
                             env=self.run.env, capture_output=True, timeout=15, check=True).stdout
        header = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", out)
        width, height = int(header.group(1)), int(header.group(2))
        body = out[header.end():]
        data = bytearray(width * height * 4)
        data[0::4], data[1::4], data[2::4] = body[2::3], body[1::3], body[0::3]
        return scr.Grab(r["x"], r["y"], width, height, bytes(data))

    def painted(self, app, what, request=True, again=False):
        judge = scr.request_painted if request else scr.page_painted
        deadline = time.time() + PAINT_TIMEOUT
        signs = None
        while time.time() < deadline:
            node = self.node(app)
            if node:
                grab = self.grab(node)
                signs = scr.dialog_signs(grab)
                if judge(signs):
                    return
            time.sleep(POLL)
        path = os.path.join(self.run.args.work, f"not-painted-{re.sub(r'[^a-z0-9]+', '-', what.lower())}.png")
        subprocess.run(["grim", path], env=self.run.env, check=False)
        raise Failure(f"{what}: not on screen within {PAINT_TIMEOUT} s (last signs {signs}; screenshot {path})")

    def stop(self):
        stop(self.keyboard)
        stop(self.proc)


class Mutter(Compositor):
    """GNOME's mutter, headless on a virtual monitor, run on the suite's session bus; no screen copy for
    clients, so the window's focus is what GTK reports and the request's paint is the page's report."""

    name = "mutter"

    def start(self):
        args = self.run.args
        runtime = os.path.join(args.work, "mutter-run")
        os.makedirs(runtime, mode=0o700, exist_ok=True)
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        env.pop("DISPLAY", None)
        self.proc = subprocess.Popen(["mutter", "--headless", "--wayland", "--no-x11", "--virtual-monitor",
                                      "1280x800", "--wayland-display=askdesk-mutter"], env=env,
                                     stdout=subprocess.DEVNULL, start_new_session=True,
                                     stderr=open(os.path.join(args.work, "mutter.log"), "w"))
        socket = os.path.join(runtime, "askdesk-mutter")
        wait_until(lambda: os.path.exists(socket) or self.proc.poll() is not None, "mutter did not start")
        assert self.proc.poll() is None, f"mutter exited {self.proc.returncode} (see mutter.log)"
        return {"WAYLAND_DISPLAY": socket}, "mutter"

    def focused_app(self, app):
        log = app.log()
        return log.rfind("window focused") > log.rfind("window lost the focus")

    def painted(self, app, what, request=True, again=False):
        """The page's report: a request it has painted (`request shown`, once per request that comes into view),
        or a page load finished. `again`: a window brought forward on the request it showed before has nothing
        new to report; its earlier report stands (the window was not hidden in between)."""
        if again:
            assert app.painted_seen.get("request shown", 0) > 0, f"{what}: the page never reported the request"
            return
        name = "request shown" if request else "page load event=Finished"
        seen = app.painted_seen.get(name, 0)
        wait_until(lambda: app.count(name) > seen, f"{what}: the page never reported it painted",
                   timeout=PAINT_TIMEOUT)
        app.painted_seen[name] = app.count(name)

    def stop(self):
        stop(self.proc)


class Run:
    """One compositor's run: the compositor, the other program, and each case's own processes."""

    homes = 0

    def __init__(self, args, compositor_class):
        self.args = args
        self.procs = []
        self.compositor = compositor_class(self)
        extra, self.input_method = self.compositor.start()
        self.env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "TAURI_WEBVIEW_AUTOMATION")}
        self.env.update(extra, GDK_BACKEND="wayland")
        self.peer = Peer(self, self.input_method)

    def spawn(self, argv, env, **kwargs):
        proc = subprocess.Popen(argv, env=env, start_new_session=True, **kwargs)
        self.procs.append(proc)
        return proc

    def start_app(self):
        Run.homes += 1
        home = os.path.join(self.args.work, f"wl-app{Run.homes}")
        for sub in ("run", "data", "config"):
            os.makedirs(os.path.join(home, sub), mode=0o700)
        env = dict(self.env, ASKDESK_SOCKET=os.path.join(home, "run", "askdesk.sock"),
                   XDG_RUNTIME_DIR=os.path.join(home, "run"), XDG_DATA_HOME=os.path.join(home, "data"),
                   XDG_CONFIG_HOME=os.path.join(home, "config"), ASKDESK_LOG="info,askdesk_desktop=debug")
        app = App(self, home, env, ())
        app.painted_seen = {}
        app.focus_seen = 0
        self.app = app
        return app

    def end_case(self):
        for proc in reversed(self.procs):
            if proc is self.peer.proc:
                continue
            end(proc)
        self.procs = [self.peer.proc]
        self.peer.hide()

    def stop(self):
        self.peer.proc.stdin.close()
        for proc in reversed(self.procs):
            end(proc)
        self.compositor.stop()

    # ----- what the person sees and does -----
    def painted(self, what, request=True, again=False):
        self.compositor.painted(self.app, what, request, again)
        self.shown_at = time.time()

    def focused(self, what, since=None):
        """Waits until the app's window has the focus (a focus-in logged after `since`, a count of them),
        the compositor agreeing, and the other program has lost it."""
        app = self.app
        since = app.focus_seen if since is None else since
        wait_until(lambda: app.count("window focused") > since, f"{what}: the window never took the focus")
        wait_until(lambda: self.compositor.focused_app(app), f"{what}: the compositor does not focus the window")
        wait_until(lambda: not self.peer.active(), f"{what}: the other program kept the focus")
        app.focus_seen = app.count("window focused")

    def keeps_focus(self, what, since):
        """The other program keeps the focus for KEEPS_FOCUS seconds, and the window takes none (no focus-in
        logged after `since`, a count of them)."""
        until = time.time() + KEEPS_FOCUS
        while time.time() < until:
            if not self.peer.active():
                raise Failure(f"{what}: the other program lost the focus")
            if self.app.count("window focused") > since or self.compositor.focused_app(self.app):
                raise Failure(f"{what}: the askdesk window took the focus")
            time.sleep(POLL)

    def keys(self, *keys):
        """Types into the app's window once it has been on screen a second, as a person reacting to it."""
        time.sleep(max(0.0, self.shown_at + 1.0 - time.time()))
        self.peer.keys(*keys)

    def answer(self, ask, n, label):
        self.keys(str(n), "ctrl+Return")
        ask.expect(label)

    def hide_and_drop(self):
        app = self.app
        self.keys("Escape")
        wait_until(lambda: app.count("hidden window dropped") > app.drops, "the hidden window was not dropped",
                   timeout=float(self.args.drop_window_after) + 15)
        app.drops = app.count("hidden window dropped")
        wait_until(lambda: not web_processes(app.proc.pid), "the web process outlived the drop")
        wait_until(lambda: app.count("network process ended") > app.network_ends
                   and not web_processes(app.proc.pid, NETWORK), "WebKit's network process was not ended")
        app.network_ends = app.count("network process ended")

    def notification(self, summary, since):
        return int(self.peer.wait(rf"notify (\d+) {re.escape(summary)}", since).group(1))

    def second_launch(self, token=None):
        env = {k: v for k, v in self.app.env.items() if k not in ("XDG_ACTIVATION_TOKEN", "DESKTOP_STARTUP_ID")}
        if token:
            env["XDG_ACTIVATION_TOKEN"] = token
        proc = subprocess.run([self.args.app], env=env, capture_output=True, timeout=30)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])


def end(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass



def start_focused(run):
    """Starts the app (its window shows at start, the person launched it) with nothing else open: the
    window has the focus and its page is on screen."""
    app = run.start_app()
    run.painted("the window shown at start", request=False)
    run.focused("the window shown at start", since=0)
    return app


# ----- the cases -----

def case_the_first_question_is_on_screen_and_answered_by_keys(run):
    app = start_focused(run)
    ask = app.ask("Ship build 1 to the staging servers?")
    run.painted("the first question")
    run.answer(ask, 1, "Yes")


def case_hidden_dropped_and_asked_again_the_question_is_on_screen(run):
    """Twice: Escape hides the window, it is dropped, and the next question brings a new one on screen, with
    the focus (nothing else is open), answered by keys."""
    app = start_focused(run)
    for n in (1, 2):
        run.hide_and_drop()
        focus_before = app.count("window focused")
        ask = app.ask(f"Cycle {n}: rotate the signing key {n}?")
        run.painted(f"cycle {n}: the question after a drop")
        run.focused(f"cycle {n}: the question after a drop", since=focus_before)
        run.answer(ask, 2, "No")


def case_a_question_leaves_the_focus_elsewhere_and_its_notification_opens_it(run):
    """The window is open on a question behind the program the person types in when a second question
    arrives: that program keeps the focus, the window asks for attention, the notification ("2 questions
    waiting") is there. The person opens the notification (its server sends the compositor's token for their
    action, then the action): the window comes to the front with the focus, and both are answered by keys."""
    app = start_focused(run)
    first = app.ask("Rotate the signing keys today?", label="agent-one")
    run.painted("the first question")
    run.peer.show()
    wait_until(lambda: app.count("window lost the focus") > 0, "the window never lost the focus")
    focus_before = app.count("window focused")
    attention_before = app.count("window asks for attention")
    since = run.peer.mark()
    second = app.ask("Merge the release branch now?", label="agent-two")
    nid = run.notification("2 questions waiting", since)
    wait_until(lambda: app.count("window asks for attention") > attention_before,
               "the window did not ask for attention")
    run.keeps_focus("a question arriving while the person types elsewhere", focus_before)
    since = run.peer.mark()
    run.peer.keys("o")
    run.peer.wait(rf"invoked {nid} \S+", since)
    wait_until(lambda: app.count("presented with an activation token") > 0,
               "the notification's token was not used")
    run.focused("the notification opened", since=focus_before)
    run.painted("the first question, brought forward", again=True)
    run.answer(first, 1, "Yes")
    run.painted("the second question, next in the queue")
    run.answer(second, 2, "No")


def case_a_second_launch_brings_the_window_forward_with_its_token_only(run):
    """The window is open on a question behind the program the person types in. A second launch without a
    token (a script, not the person) leaves the focus where it is; one the person started (the launcher's
    token for their key, as XDG_ACTIVATION_TOKEN) brings the window to the front with the focus."""
    app = start_focused(run)
    ask = app.ask("Publish the docs site?")
    run.painted("the question")
    run.peer.show()
    wait_until(lambda: app.count("window lost the focus") > 0, "the window never lost the focus")
    focus_before = app.count("window focused")
    run.second_launch()
    run.keeps_focus("a second launch without a token", focus_before)
    since = run.peer.mark()
    run.peer.keys("l")
    token = run.peer.wait(r"launch-token (\S+)", since).group(1)
    run.second_launch(token)
    run.focused("a second launch with the person's token", since=focus_before)
    run.painted("the question, after the second launch", again=True)
    run.answer(ask, 1, "Yes")


def case_the_tray_icon_waits_for_a_tray_host(run):
    """No tray host runs: the app says so once and GTK's fallback icon, which Wayland cannot show, is not
    made (it logged Gtk-CRITICAL). A panel starting later gets the icon, whose Open still works."""
    app = start_focused(run)
    wait_until(lambda: app.count("no tray host") == 1, "the app did not say there is no tray host")
    since = run.peer.mark()
    run.peer.send("tray-host")
    run.peer.wait(r"item \S+ \S+", since)
    wait_until(lambda: app.count("tray icon shown") == 1, "the tray icon was not built once a host appeared")
    log = app.log()
    assert "Gtk-CRITICAL" not in log and "GtkStatusIcon" not in log, log[-3000:]
    assert app.count("no tray host") == 1, "said more than once"


def case_the_tray_icons_click_brings_the_window_forward_with_the_hosts_token(run):
    """A tray host runs. The window is open on a question behind the program the person types in; the person
    clicks the tray icon (the host passes the compositor's token for that click, then activates the item, as
    KDE Plasma does): the window comes to the front with the focus."""
    since = run.peer.mark()
    run.peer.send("tray-host")
    run.peer.wait(r"tray-host", since)
    app = start_focused(run)
    run.peer.wait(r"item \S+ \S+", since)
    wait_until(lambda: app.count("tray icon shown") == 1, "the tray icon was not shown")
    since = run.peer.mark()
    run.peer.send("tray-read")
    idle_icon, idle_tip = run.peer.wait(r"tray-item (\S+) (.*)", since).groups()
    assert idle_tip == "askdesk — no questions waiting", idle_tip
    ask = app.ask("Rebuild the search index tonight?")
    run.painted("the question")

    def read_one_waiting():
        mark = run.peer.mark()
        run.peer.send("tray-read")
        icon, tip = run.peer.wait(r"tray-item (\S+) (.*)", mark).groups()
        return (icon, tip) if tip == "askdesk — 1 question waiting" else None
    icon, _ = wait_until(read_one_waiting, "the tray item's tooltip never counted the question")
    assert icon != idle_icon, "the tray item's icon does not show the count"
    run.peer.show()
    wait_until(lambda: app.count("window lost the focus") > 0, "the window never lost the focus")
    focus_before = app.count("window focused")
    since = run.peer.mark()
    run.peer.keys("t")
    run.peer.wait(r"tray-activated \S+", since)
    wait_until(lambda: app.count("presented with an activation token") > 0, "the tray host's token was not used")
    run.focused("the tray icon clicked", since=focus_before)
    run.painted("the question, after the tray icon's click", again=True)
    run.answer(ask, 1, "Yes")


CASES = [
    case_the_first_question_is_on_screen_and_answered_by_keys,
    case_hidden_dropped_and_asked_again_the_question_is_on_screen,
    case_a_question_leaves_the_focus_elsewhere_and_its_notification_opens_it,
    case_a_second_launch_brings_the_window_forward_with_its_token_only,
    case_the_tray_icon_waits_for_a_tray_host,
    case_the_tray_icons_click_brings_the_window_forward_with_the_hosts_token,
]
COMPOSITORS = {"sway": Sway, "mutter": Mutter}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--bus-log", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--drop-window-after", default="2", help="the app's setting, in seconds")
    parser.add_argument("--compositors", default="sway,mutter")
    parser.add_argument("--sway-user", help="the user sway runs as (it refuses root)")
    parser.add_argument("--sway-dir", help="sway's home and runtime directory, the sway user's own")
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    args = parser.parse_args()
    print(f"app {args.app}, --drop-window-after={args.drop_window_after}", flush=True)

    tally = Tally(args.only)
    for name in args.compositors.split(","):
        try:
            run = Run(args, COMPOSITORS[name])
        except Exception as e:  # noqa: BLE001 - report and go on
            tally.fail(f"{name} did not start", e)
            continue
        try:
            for case in tally.selected(CASES):
                tally.run(case, name, run, run.end_case)
        finally:
            run.stop()
    return tally.summary()

if __name__ == "__main__":
    sys.exit(main())
