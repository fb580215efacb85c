"""askdesk desktop tests: the app as a process.

A second launch, Escape, the tray, Quit, a kill after submit, no display.
"""
import json
import os
import re
import signal
import socket
import subprocess
import time

from harness import answer_of, dbus, expect_error, find_tray_item, journal_path, server_pid
import samples


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


def sni_property(name, path, prop):
    out = dbus(f"--dest={name}", path, "org.freedesktop.DBus.Properties.Get",
               "string:org.kde.StatusNotifierItem", f"string:{prop}")
    m = re.search(r'string "(.*)"', out)
    return m.group(1) if m else None


def tray_icon(name, path):
    """The tray icon as a tray host reads it over D-Bus: the item names an image file (IconName, in
    IconThemePath); returns (width, height, RGBA bytes) decoded by ImageMagick."""
    icon, folder = sni_property(name, path, "IconName"), sni_property(name, path, "IconThemePath")
    assert icon, "the tray item names no icon"
    candidates = [icon, os.path.join(folder or "", icon), os.path.join(folder or "", icon + ".png")]
    found = next((c for c in candidates if os.path.isfile(c)), None)
    assert found, f"no icon file for IconName={icon!r} IconThemePath={folder!r}"
    size = subprocess.run(["identify", "-format", "%w %h", found], capture_output=True, text=True, check=True).stdout
    width, height = map(int, size.split())
    pixels = subprocess.run(["convert", found, "-depth", "8", "rgba:-"], capture_output=True, check=True).stdout
    return width, height, pixels


def wait_for_icon(name, path, differs_from, message):
    deadline = time.time() + 10
    while True:
        icon = tray_icon(name, path)
        if icon != differs_from:
            return icon
        assert time.time() < deadline, message
        time.sleep(0.2)


def changed_pixels(a, b):
    width = a[0]
    return [(i // 4 % width, i // 4 // width) for i in range(0, len(a[2]), 4) if a[2][i:i + 4] != b[2][i:i + 4]]


def test_the_tray_icon_shows_how_many_questions_wait(ctx):
    """The icon the tray host reads changes with the count: a badge in its top-right corner (its digits half
    the icon's height, readable at 24 pixels), drawn differently for one and for three waiting questions, and
    gone when none wait."""
    found = None
    deadline = time.time() + 10
    while found is None and time.time() < deadline:
        found = find_tray_item()
        time.sleep(0.2)
    assert found, "no tray item on the bus"
    name, path = found
    empty = tray_icon(name, path)
    asks = [ctx.ask([dict(samples.SINGLE[0], id=f"tray{n}")]) for n in range(3)]
    ctx.show("tray0")
    ctx.wait_queue(3)
    deadline = time.time() + 10
    while tray_label(name, path) != "3" or tray_icon(name, path) == empty:
        assert time.time() < deadline, "the tray never showed three"
        time.sleep(0.2)
    three = tray_icon(name, path)
    badge = changed_pixels(three, empty)
    width, height = empty[0], empty[1]
    assert badge, "no badge drawn"
    assert all(x >= width // 3 and y < height * 2 // 3 for x, y in badge), "the badge is not in the top-right corner"
    if ctx.args.screenshots:
        # The icon the tray host reads, each pixel drawn 4 by 4.
        subprocess.run(["convert", "-size", f"{width}x{height}", "-depth", "8", "rgba:-", "-filter", "point",
                        "-resize", "400%", os.path.join(ctx.args.screenshots, "tray-count.png")],
                       input=three[2], check=True)
        # As a tray host shows it at 24 pixels (averaged down), each pixel drawn 8 by 8.
        subprocess.run(["convert", "-size", f"{width}x{height}", "-depth", "8", "rgba:-", "-filter", "box",
                        "-resize", "24x24", "-filter", "point", "-resize", "800%",
                        os.path.join(ctx.args.screenshots, "tray-count-24.png")], input=three[2], check=True)
    for n in (2, 1):
        conn, rid, outcome = asks[n]
        conn.notify("$/cancelRequest", {"id": rid})
        ctx.wait_queue(n)
    one = wait_for_icon(name, path, three, "the icon did not change from three to one")
    deadline = time.time() + 10
    while tray_label(name, path) != "1":
        assert time.time() < deadline, "the tray never showed one"
        time.sleep(0.2)
    one = tray_icon(name, path)
    assert one != empty and one != three, "one waiting question draws its own badge"
    ctx.page.click(ctx.page.find("#dismiss"))
    expect_error(asks[0][2](), "ASK_CANCELLED")
    ctx.wait_queue(0)
    assert wait_for_icon(name, path, one, "the badge stayed with no question waiting") == empty


def test_the_settings_in_the_window_are_kept_and_notify_only_keeps_the_window_shut(ctx):
    """"Notify only" and "Show without focus" in the sidebar are kept in desktop.json and read back by a new
    page; with "Notify only" on, a question raises its notification while the hidden window stays hidden."""
    path = os.path.join(os.environ["XDG_CONFIG_HOME"], "askdesk", "desktop.json")
    page = ctx.page

    def kept():
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    try:
        page.click(page.find("#notify-only"))
        page.click(page.find("#without-focus"))
        deadline = time.time() + 10
        while time.time() < deadline and not (os.path.exists(path) and kept() == {"notifyOnly": True, "withoutFocus": True}):
            time.sleep(0.2)
        assert kept() == {"notifyOnly": True, "withoutFocus": True}, kept()
        page.js("location.reload()")
        page.until("return document.getElementById('notify-only').checked"
                   " && document.getElementById('without-focus').checked",
                   message="a new page did not read the kept settings back")
        # The new page takes keys a moment after it is shown.
        for _ in range(20):
            page.keys("\ue00c")
            if page.js("return document.visibilityState") == "hidden":
                break
            time.sleep(0.3)
        page.until("return document.visibilityState === 'hidden'", message="Esc did not hide the window")
        _, _, outcome = ctx.ask(samples.SINGLE, agent="reviewer")
        ctx.notification_id("review-bot asks")
        until = time.time() + 2
        while time.time() < until:
            assert page.js("return document.visibilityState") == "hidden", "the window opened with notify only"
            time.sleep(0.2)
        subprocess.run([ctx.args.app], env=os.environ.copy(), capture_output=True, timeout=30, check=True)
        page.until("return document.visibilityState === 'visible'", message="the second launch did not show the window")
        ctx.show("migrate")
        page.click(ctx.option("migrate", "Offline, in one transaction"))
        page.click(page.find("#submit"))
        assert answer_of(outcome())["answers"][0]["selected"] == ["Offline, in one transaction"]
    finally:
        page.js("for (const id of ['notify-only', 'without-focus']) {"
                " const box = document.getElementById(id); if (box.checked) box.click(); }")
    deadline = time.time() + 10
    while time.time() < deadline and kept() != {"notifyOnly": False, "withoutFocus": False}:
        time.sleep(0.2)
    assert kept() == {"notifyOnly": False, "withoutFocus": False}, kept()
