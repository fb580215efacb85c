"""askdesk desktop tests: "Connect your agents".

The first run opens on it; Connect shows the exact change to a client's settings as a diff and writes
nothing before "Write this change"; the write is the same merge as `askdesk hook install` (with its
backup); the diff holds only askdesk's lines and the client's name stays in view; Disconnect removes only
askdesk's entry, byte for byte; a file changed after the diff was shown is not
written; Gemini CLI gets the MCP entry; the "Start at login" switch writes and removes the per-user
autostart entry; in Chinese, what Connect says about a client and what is left to do are Chinese. The
clients' folders are the run's private HOME (tests/desktop/services.sh).
"""
import json
import os
import subprocess

from test_dialog import set_window_size, speak

HOME = os.environ["HOME"]
CLAUDE = os.path.join(HOME, ".claude", "settings.json")
CODEX = os.path.join(HOME, ".codex", "hooks.json")
GEMINI = os.path.join(HOME, ".gemini", "settings.json")
JOURNAL = os.path.join(os.environ["XDG_DATA_HOME"], "askdesk", "history.jsonl")
SYSTEM_AUTOSTART = os.path.join(os.environ["XDG_CONFIG_DIRS"].split(":")[0], "autostart", "askdesk.desktop")
USER_AUTOSTART = os.path.join(os.environ["XDG_CONFIG_HOME"], "autostart", "askdesk.desktop")


def program(ctx):
    """The askdesk the app writes into the clients' settings: the one beside it."""
    return os.path.join(os.path.dirname(os.path.abspath(ctx.args.app)), "askdesk")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def remove(*paths):
    for path in paths:
        if os.path.exists(path):
            os.remove(path)


def open_connect(ctx):
    """Opens the Connect view afresh and waits for its cards."""
    page = ctx.page
    before = page.js("return Number(document.getElementById('view-connect').dataset.loaded || 0)")
    page.click(page.find("#nav-connect"))
    page.until("return Number(document.getElementById('view-connect').dataset.loaded || 0) > arguments[0]", before,
               message="the Connect view never loaded")


def card(ctx, client):
    return f'.connect-client[data-client="{client}"]'


def state_of(ctx, client):
    return ctx.page.js(f"return document.querySelector('{card(ctx, client)}').dataset.state")


def preview(ctx, client, action="connect"):
    page = ctx.page
    page.click(page.find(f'{card(ctx, client)} button[data-action="{action}"]'))
    page.wait_for(f"{card(ctx, client)} .connect-diff")
    return page.js(f"return document.querySelector('{card(ctx, client)} .connect-diff').textContent")


def write_change(ctx, client):
    page = ctx.page
    page.click(page.find(f'{card(ctx, client)} button[data-action="write"]'))
    page.wait_for(f"{card(ctx, client)} .connect-done", timeout=15)
    return page.js(f"return document.querySelector('{card(ctx, client)} .connect-done').textContent")


def toggle(ctx):
    """Clicks "Start at login" and waits for the view drawn again from what the backend then reads."""
    page = ctx.page
    before = page.js("return Number(document.getElementById('view-connect').dataset.loaded)")
    page.click(page.find("#autostart"))
    page.until("return Number(document.getElementById('view-connect').dataset.loaded) > arguments[0]", before,
               message="the view was not drawn again after the switch")


def leave(ctx):
    ctx.page.click(ctx.page.find("#nav-queue"))


def in_view(ctx, selector):
    """Whether the element is wholly inside the Connect view's scrolled list."""
    return ctx.page.js(
        "const el = document.querySelector(arguments[0]).getBoundingClientRect();"
        "const list = document.querySelector('#view-connect .connect-body').getBoundingClientRect();"
        "return el.height > 0 && el.top >= list.top - 0.5 && el.bottom <= list.bottom + 0.5;", selector)


def changed_lines(diff):
    """The lines a unified diff adds and removes (not its `---`/`+++` file lines)."""
    lines = [line for line in diff.split("\n") if not line.startswith(("---", "+++"))]
    return ([line[1:] for line in lines if line.startswith("+")],
            [line[1:] for line in lines if line.startswith("-")])


def test_the_first_run_opens_on_connect_and_a_question_takes_its_place(ctx):
    """No question settled yet and no client connected: the window opens on Connect, not on an empty
    queue; a question that arrives takes its place."""
    remove(CLAUDE, CODEX, GEMINI)
    os.makedirs(os.path.dirname(CLAUDE), exist_ok=True)
    os.makedirs(os.path.dirname(CODEX), exist_ok=True)
    # An app that has settled questions is past its first run: its journal is set aside meanwhile.
    hidden = JOURNAL + ".aside"
    if os.path.exists(JOURNAL):
        os.rename(JOURNAL, hidden)
    try:
        page = ctx.page
        page.js("location.reload()")
        page.until("return document.body.dataset.ready === 'true' && !document.getElementById('view-connect').hidden",
                   timeout=20, message="the first run did not open on Connect")
        assert page.find_all(".connect-intro[data-first-run]"), "no welcome on the first run"
        assert page.js("return document.getElementById('view-empty').hidden")
        assert state_of(ctx, "claude-code") == "not-connected"
        assert state_of(ctx, "gemini-cli") == "not-connected"
        assert page.js(f"return document.querySelector('{card(ctx, 'gemini-cli')}').classList.contains('absent')")
        ctx.shot("connect-first-run", x_window=True)
    finally:
        if os.path.exists(hidden):
            os.rename(hidden, JOURNAL)
    _, rid, outcome = ctx.ask([{"id": "q", "question": "Ship it?", "options": [{"label": "Yes"}, {"label": "No"}]}],
                              agent="coder")
    ctx.show("q")
    assert ctx.page.js("return document.getElementById('view-connect').hidden")
    ctx.page.click(ctx.page.find("#dismiss"))
    outcome()


def test_connect_shows_the_exact_change_before_writing_it(ctx):
    """Connect shows the diff of ~/.claude/settings.json and writes nothing; "Write this change" writes
    the same file `askdesk hook install claude-code` would (the CLI then finds nothing to change), keeps
    a backup, and says what Claude Code still needs."""
    remove(CLAUDE, CLAUDE + ".askdesk-backup")
    original = '{\n  "model": "opus",\n  "permissions": {\n    "allow": ["Bash(cargo test:*)"]\n  }\n}\n'
    write(CLAUDE, original)
    open_connect(ctx)
    assert state_of(ctx, "claude-code") == "not-connected"
    diff = preview(ctx, "claude-code")
    assert diff.startswith(f"--- {CLAUDE}\n+++ {CLAUDE}\n"), diff
    assert f'+            "command": "{program(ctx)} hook claude-code",' in diff, diff
    assert '+  "hooks": {' in diff, diff
    assert read(CLAUDE) == original, "the preview wrote the file"

    done = write_change(ctx, "claude-code")
    assert "Restart Claude Code" in done, done
    assert read(CLAUDE + ".askdesk-backup") == original
    settings = json.loads(read(CLAUDE))
    assert settings["model"] == "opus" and settings["permissions"]["allow"] == ["Bash(cargo test:*)"]
    [group] = settings["hooks"]["PermissionRequest"]
    assert group["hooks"][0]["command"] == f"{program(ctx)} hook claude-code"
    ctx.page.until(f"return document.querySelector('{card(ctx, 'claude-code')}').dataset.state === 'connected'",
                   message="the card did not turn connected")
    ctx.shot("connect-connected", x_window=True)
    # The desktop's merge is the command line's: running it now changes nothing.
    cli = subprocess.run([program(ctx), "hook", "install", "claude-code"], capture_output=True, text=True, check=True)
    assert "nothing changed" in cli.stdout, cli.stdout
    leave(ctx)


def test_connect_reports_in_the_language_chosen(ctx):
    """Under Simplified Chinese a client's state, what Connect did and what the person still does are
    Chinese; the client's name and the file's path stay as they are."""
    remove(CLAUDE, CLAUDE + ".askdesk-backup")
    write(CLAUDE, '{\n  "model": "opus"\n}\n')
    page = ctx.page
    detail = f"return document.querySelector('{card(ctx, 'claude-code')} .connect-state-detail').textContent"
    speak(page, "zh-CN")
    try:
        open_connect(ctx)
        assert state_of(ctx, "claude-code") == "not-connected"
        assert page.js(detail) == "未安装 askdesk 的钩子"
        preview(ctx, "claude-code")
        done = write_change(ctx, "claude-code")
        assert f"已连接 Claude Code：已写入 {CLAUDE}。" in done, done
        assert "重启 Claude Code（或开始新会话），让它读取钩子。" in done, done
        assert "Restart" not in done and "written" not in done, done
        ctx.shot("connect-connected-zh-CN", x_window=True)
        open_connect(ctx)
        assert page.js(detail) == "已安装 askdesk 的钩子"
    finally:
        speak(page, "")
        remove(CLAUDE, CLAUDE + ".askdesk-backup")
    leave(ctx)


def test_the_diff_holds_only_askdesks_lines_and_the_name_stays_in_view(ctx):
    """A settings file in its own style (four-space indents, keys out of order, numbers as written): the diff
    Connect shows adds askdesk's lines and touches none of the person's; the written file is the old one
    with askdesk's entry added, indented as the file is; in a short window the card's name stays in view
    with the diff open and after the write, and the write button is in reach."""
    remove(CLAUDE, CLAUDE + ".askdesk-backup")
    original = ('{\n    "zeta": 1E2,\n    "alpha": 0.1000,\n    "permissions": {\n        "deny": [],\n'
                '        "allow": ["Bash(ls)"]\n    },\n    "model": "opus"\n}\n')
    write(CLAUDE, original)
    page = ctx.page
    before = page.window_rect()
    open_connect(ctx)
    shown = preview(ctx, "claude-code")
    ctx.shot("connect-diff", x_window=True)
    page.click(page.find(f'{card(ctx, "claude-code")} button[data-action="cancel"]'))
    try:
        # Short, and wide enough to keep the sidebar.
        set_window_size(page, 1000, 460)
        name = f"{card(ctx, 'claude-code')} .connect-name"
        diff = preview(ctx, "claude-code")
        assert diff == shown
        added, removed = changed_lines(diff)
        assert removed == [], diff
        # What the diff adds is askdesk's entry and nothing else, in the file's four-space indents.
        entry = json.loads("{" + "\n".join(added).rstrip().rstrip(",") + "}")
        assert list(entry) == ["hooks"], diff
        [group] = entry["hooks"]["PermissionRequest"]
        assert group["hooks"][0]["command"] == f"{program(ctx)} hook claude-code", diff
        assert all(line.startswith("    ") for line in added), diff
        assert in_view(ctx, name), "the client's name left the view when the diff opened"
        assert in_view(ctx, f'{card(ctx, "claude-code")} button[data-action="write"]'), "Write is out of reach"

        write_change(ctx, "claude-code")
        assert in_view(ctx, name), "the client's name left the view after Connect"
        assert in_view(ctx, f"{card(ctx, 'claude-code')} .connect-done p"), "what was done is out of view"
        text = read(CLAUDE)
        assert text.replace("\n".join(added) + "\n", "", 1) == original, text
        assert text.startswith('{\n    "hooks": {\n        "PermissionRequest": [\n'), text

        # Disconnect gives the file back byte for byte.
        open_connect(ctx)
        diff = preview(ctx, "claude-code", "disconnect")
        added_back, removed = changed_lines(diff)
        assert added_back == [] and removed == added, diff
        write_change(ctx, "claude-code")
        assert read(CLAUDE) == original
    finally:
        set_window_size(page, before["width"], before["height"])
    leave(ctx)


def test_disconnect_removes_only_askdesks_entry(ctx):
    """Disconnect shows the removal as a diff, then leaves everything of the person's in place, byte for
    byte."""
    write(CLAUDE, json.dumps({"model": "opus", "hooks": {"PermissionRequest": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-check.sh"}]}]}}, indent=2) + "\n")
    mine = read(CLAUDE)
    subprocess.run([program(ctx), "hook", "install", "claude-code"], capture_output=True, check=True)
    open_connect(ctx)
    assert state_of(ctx, "claude-code") == "connected"
    diff = preview(ctx, "claude-code", "disconnect")
    assert f'-            "command": "{program(ctx)} hook claude-code",' in diff, diff
    write_change(ctx, "claude-code")
    assert read(CLAUDE) == mine
    ctx.page.until(f"return document.querySelector('{card(ctx, 'claude-code')}').dataset.state === 'not-connected'",
                   message="the card did not turn not-connected")
    leave(ctx)


def test_a_file_changed_after_its_diff_was_shown_is_not_written(ctx):
    """The write is refused when the settings file is no longer what the diff was made from."""
    remove(CODEX)
    write(CODEX, "{}\n")
    open_connect(ctx)
    diff = preview(ctx, "codex")
    assert "--socket" in diff and "hook codex" in diff, diff
    write(CODEX, '{"hooks": {"PreToolUse": []}}\n')
    page = ctx.page
    page.click(page.find(f'{card(ctx, "codex")} button[data-action="write"]'))
    page.wait_for(f"{card(ctx, 'codex')} .connect-problem")
    problem = page.js(f"return document.querySelector('{card(ctx, 'codex')} .connect-problem').textContent")
    assert "changed since the change was shown" in problem, problem
    assert read(CODEX) == '{"hooks": {"PreToolUse": []}}\n'
    # Shown again, the new change is written, with Codex's trust step named.
    preview(ctx, "codex")
    done = write_change(ctx, "codex")
    assert "/hooks" in done, done
    assert json.loads(read(CODEX))["hooks"]["PreToolUse"] == []
    assert f"--socket {ctx.socket} hook codex" in read(CODEX)
    leave(ctx)


def test_gemini_cli_connects_as_an_mcp_server(ctx):
    """Gemini CLI has no permission hook: Connect adds askdesk to its MCP servers, with the long timeout."""
    remove(GEMINI)
    write(GEMINI, '{"theme": "Default"}\n')
    open_connect(ctx)
    diff = preview(ctx, "gemini-cli")
    # The file is one line: it stays one, with askdesk's entry first on it.
    assert f'+{{"mcpServers":{{"askdesk":{{"command":"{program(ctx)}","args":["mcp"],"timeout":3600000}}}},' \
        '"theme": "Default"}' in diff, diff
    write_change(ctx, "gemini-cli")
    settings = json.loads(read(GEMINI))
    assert settings["theme"] == "Default"
    assert settings["mcpServers"]["askdesk"] == {"command": program(ctx), "args": ["mcp"], "timeout": 3600000}
    assert ctx.page.find_all(".connect-snippet"), "no snippet for other MCP clients"
    leave(ctx)


def test_copy_puts_the_mcp_snippet_on_the_clipboard(ctx):
    """Copy on the snippet for other MCP clients puts exactly the snippet on the system clipboard: pasted
    with Ctrl+V into a box, it is the text shown."""
    open_connect(ctx)
    page = ctx.page
    snippet = page.js("return document.querySelector('.connect-snippet').textContent")
    assert '"mcpServers"' in snippet, snippet
    page.click(page.find(".connect-copy"))
    page.until("return document.querySelector('.connect-copy').textContent === 'Copied'", message="Copy said nothing")
    page.js("const box = document.createElement('textarea'); box.id = 'paste-here'; document.body.append(box); box.focus();")
    try:
        page.keys("v", modifier="\ue009")
        pasted = page.until("const v = document.getElementById('paste-here').value; return v || null;",
                            message="nothing was pasted")
        assert pasted == snippet, pasted
    finally:
        page.js("document.getElementById('paste-here').remove()")
    leave(ctx)


def test_start_at_login_switch_writes_and_removes_the_users_entry(ctx):
    """With the package's autostart entry installed, the switch turns it off for this user (an entry with
    Hidden=true) and on again (that entry removed); without one it is disabled."""
    remove(SYSTEM_AUTOSTART, USER_AUTOSTART)
    open_connect(ctx)
    page = ctx.page
    assert page.js("return document.getElementById('autostart').disabled"), "a switch with nothing to switch"
    write(SYSTEM_AUTOSTART, "[Desktop Entry]\nType=Application\nName=askdesk\nExec=askdesk-desktop --hidden\n")
    try:
        open_connect(ctx)
        assert page.js("const b = document.getElementById('autostart'); return !b.disabled && b.checked")
        toggle(ctx)
        assert not page.js("return document.getElementById('autostart').checked")
        assert os.path.exists(USER_AUTOSTART) and "Hidden=true" in read(USER_AUTOSTART)
        toggle(ctx)
        assert page.js("return document.getElementById('autostart').checked")
        assert not os.path.exists(USER_AUTOSTART)
    finally:
        remove(SYSTEM_AUTOSTART, USER_AUTOSTART)
    leave(ctx)
