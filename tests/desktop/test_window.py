"""askdesk desktop tests: the window's lifecycle under WebDriver.

An idle app drops its window and WebKit's network process.
"""
import os
import socket
import subprocess
import time

import pytest

from askdesk_client import Conn
from harness import (
    ATTACHED, DOC, answer_of, closed_on_bus, comment_by_keyboard, give_picture, notifications_shown, notify_buttons,
    other_program, png, png_width, server_pid, web_processes)
import samples
from webdriver import CONTROL, ENTER, ESCAPE, WebDriverError


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


@pytest.mark.app_args("--drop-window-after=1")
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
            # The person turns to another program: the notification, withdrawn while the window had the focus,
            # is up again, and its button answers.
            with other_program():
                answered = None
                for _ in range(20):
                    log = ctx.bus_log()
                    shown = notifications_shown(log, "light-check asks")
                    if shown and not closed_on_bus(log, shown[-1]):
                        yes = notify_buttons(log, "light-check asks")[1][0]
                        subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                                        "org.freedesktop.Notifications.ActionInvoked", f"uint32:{shown[-1]}",
                                        f"string:{yes}"], check=True)
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


def attached(qid, *widths):
    """A script true once the pictures attached to question `qid`'s answer show, loaded, with these widths."""
    return (f"return {ATTACHED}.filter((i) => i.closest('[data-qid=\"{qid}\"]') && i.complete)"
            f".map((i) => i.naturalWidth).join() === '{','.join(map(str, widths))}'")


@pytest.mark.app_args("--drop-window-after=1")
def test_a_window_dropped_with_questions_waiting_keeps_what_was_chosen_and_typed(ctx):
    """A window hidden with requests waiting is dropped like an idle one (its web process goes); the next
    page opens on the request shown last and shows every choice, text, skip, plan comment, feedback,
    half-written comment and pasted or dropped picture as it was, and the pictures go with the answers."""
    page = ctx.page
    pid = app_pid_of(ctx.socket)
    _, _, batch = ctx.ask(samples.BATCH, agent="coder")  # the oldest
    _, _, review = ctx.ask(samples.MIXED, agent="reviewer")
    ctx.show("scope")
    page.click(ctx.option("scope", "server"))
    page.click(ctx.option("scope", "client"))
    page.type(ctx.other_box("release"), "0.3.0-rc.1")
    give_picture(page, '[data-qid="release"] .other-input', png(48, 32, (200, 60, 90))["data"], "paste")
    page.until(attached("release", 48), message="the pasted picture never showed")
    page.click(page.find('[data-qid="notes"] .skip'))
    ctx.open_request_of("review-bot")
    ctx.show("plan")
    page.wait_for(f"{DOC} [data-block]")
    page.click(ctx.option("tests", "No"))
    page.js("document.querySelector(arguments[0]).focus()", DOC)
    comment_by_keyboard(ctx, 2, "Say where the backup goes.")
    page.type(page.find('[data-qid="plan"] .plan-feedback'), "Smaller steps, please.")
    give_picture(page, '[data-qid="plan"] .plan-feedback', png(64, 40, (20, 120, 200))["data"], "drop")
    page.until(attached("plan", 64), message="the dropped picture never showed")
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
    page.until(attached("plan", 64), message="the dropped picture was not shown again")
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
    assert [png_width(image) for image in plan["images"]] == [64], plan
    assert answer["answers"][1] == {"id": "tests", "selected": ["No"]}, answer

    ctx.show("scope")
    assert checked("scope") == ["server", "client"], checked("scope")
    assert checked("release") == [""], checked("release")  # "Other", chosen by typing in it
    assert page.js("return document.querySelector('[data-qid=\"release\"] textarea.other-input').value") == "0.3.0-rc.1"
    assert page.js("return document.querySelector('[data-qid=\"notes\"]').classList.contains('skipped')")
    page.until(attached("release", 48), message="the pasted picture was not shown again")
    page.click(page.find("#submit"))
    answer = answer_of(batch())
    release = answer["answers"][1]
    assert [png_width(image) for image in release.pop("images")] == [48], release
    assert answer == {"answers": [
        {"id": "scope", "selected": ["server", "client"]},
        {"id": "release", "selected": [], "custom": "0.3.0-rc.1"},
        {"id": "notes", "selected": []},
    ]}
    ctx.wait_queue(0)
    ctx.app_gone = True


def wait_dropped(pid, timeout=15):
    deadline = time.time() + timeout
    while web_processes(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert not web_processes(pid), "the hidden window was not dropped"


@pytest.mark.app_args("--drop-window-after=1")
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


@pytest.mark.app_args("--drop-window-after=1")
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
