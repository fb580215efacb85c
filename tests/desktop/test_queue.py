"""askdesk desktop tests: the queue and its notifications.

Actions, activation, cancel, dismiss, Do not disturb, late answers.
"""
import json
import re
import subprocess
import threading
import time

from harness import answer_of, closed_on_bus_eventually, expect_error, journal_lines, journal_record, notify_buttons, outcome_of
import samples
from webdriver import CONTROL, ENTER, ESCAPE
from test_dialog import set_window_size


def test_notification_action_answers_in_place(ctx):
    """ActionInvoked on the bus for the notification answers a single-select question. Its buttons show the
    options without "(Recommended)"; the answer carries the label unchanged."""
    with ctx.elsewhere():
        _, _, outcome = ctx.ask(samples.SINGLE, agent="reviewer")
        nid = ctx.notification_id("review-bot asks")
        ctx.show("migrate")
        ctx.shot("notification", whole_screen=True)
        buttons = notify_buttons(ctx.bus_log(), "review-bot asks")
        assert [label for _, label in buttons] == ["Open", "Online, in batches", "Offline, in one transaction",
                                                    "Skip the migration for now"], buttons
        # Each button's key names the request and the option's place.
        request = re.fullmatch(r"choose-(\d+)-0", buttons[1][0]).group(1)
        assert [key for key, _ in buttons] == ["default"] + [f"choose-{request}-{n}" for n in range(3)], buttons
        box = None
        for _ in range(20):
            # The app subscribes to ActionInvoked right after Notify returns; repeat until it has.
            subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                            "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}",
                            f"string:{buttons[1][0]}"], check=True)
            try:
                box = outcome(timeout=0.5)
                break
            except AssertionError:
                continue
        assert box is not None, "the notification action did not answer"
        assert answer_of(box) == {"answers": [{"id": "migrate", "selected": ["Online, in batches (Recommended)"]}]}, box
        ctx.wait_queue(0)


def test_activating_a_notification_opens_its_request(ctx):
    """Two requests wait when the window hides: one notification, "2 questions waiting", whose only action
    opens the window. The older request is withdrawn: the notification becomes the newer one's own, the same
    id updated in place, and its default action shows the window with that request selected."""
    conn, older, first = ctx.ask([dict(samples.SINGLE[0], id="older")], agent="coder")
    ctx.show("older")
    _, _, second = ctx.ask([{"id": "newer", "question": "Rotate the API keys today?",
                             "options": [{"label": "Yes"}, {"label": "No"}, {"label": "Tomorrow"}]}], agent="reviewer")
    ctx.wait_queue(2)
    assert ctx.page.find_all('[data-qid="older"]'), "the older request should still be shown"
    ctx.page.keys("\ue00c")
    ctx.page.until("return document.visibilityState === 'hidden'", message="Esc did not hide the window")
    nid = ctx.notification_id("2 questions waiting")
    assert notify_buttons(ctx.bus_log(), "2 questions waiting") == [["default", "Open"]]
    conn.notify("$/cancelRequest", {"id": older})
    expect_error(first(), "ASK_ABORTED")
    assert ctx.notification_id("review-bot asks") == nid, "the one left did not get the same notification"
    deadline = time.time() + 10
    while time.time() < deadline and ctx.page.js("return document.visibilityState") != "visible":
        subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                        "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}", "string:default"], check=True)
        time.sleep(0.5)
    ctx.page.until("return document.visibilityState === 'visible'", message="the window was not shown")
    ctx.show("newer", timeout=1)
    ctx.page.click(ctx.option("newer", "Tomorrow"))
    ctx.page.click(ctx.page.find("#submit"))
    assert answer_of(second()) == {"answers": [{"id": "newer", "selected": ["Tomorrow"]}]}


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
    with ctx.elsewhere():
        conn, rid, outcome = ctx.ask(samples.SINGLE, agent="coder")
        nid = ctx.notification_id("claude-code asks")
        ctx.show("migrate")
        conn.notify("$/cancelRequest", {"id": rid})
        expect_error(outcome(), "ASK_ABORTED")
        ctx.wait_queue(0)
        toast = ctx.page.until("const t = document.getElementById('toast'); return !t.hidden && t.textContent")
        assert toast == "claude-code withdrew the question.", toast
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


def ask_as(ctx, questions, meta, label="claude-code"):
    """Asks as an agent of its own with this label and meta; returns the outcome."""
    conn = ctx.conn()
    ctx.agent_seq += 1
    agent = conn.call("agents/register", {"id": f"session-{ctx.agent_seq}", "label": label, "meta": meta})
    rid = conn.start("user-questions/ask", {"questions": questions, "agent": agent})
    return outcome_of(conn, rid)


def test_queue_rows_tell_parallel_sessions_apart_and_show_a_batch_s_progress(ctx):
    """Two sessions of one client in two projects: each row names its project folder and short session; a
    batch's row counts the questions answered as the person answers them."""
    page = ctx.page
    first = ask_as(ctx, samples.BATCH, {"cwd": "/home/dana/src/askdesk", "session": "7f3a9c21-5b6d-4e8f-9a0b-1c2d3e4f5a6b"})
    ctx.show("scope")
    second = ask_as(ctx, [dict(samples.SINGLE[0], id="other")],
                    {"cwd": "/home/dana/src/website/", "session": "mcp-4242-18f3a9b2c4d5e6"})
    ctx.wait_queue(2)
    rows = page.until("const rows = [...document.querySelectorAll('.queue-item')];"
                      "return rows.length === 2 && rows.every((r) => r.querySelector('.queue-where')) &&"
                      " rows.map((r) => [r.querySelector('.queue-who').textContent, r.querySelector('.queue-where').textContent])",
                      message="the queue rows do not say project and session")
    assert rows == [["claude-code", "askdesk · #7f3a9c21"], ["claude-code", "website · #c4d5e6"]], rows
    progress = "return document.querySelector('.queue-item .queue-n').textContent"
    assert page.js(progress) == "0/3", page.js(progress)
    page.click(ctx.option("scope", "server"))
    page.until(progress + " === '1/3'", message=f"the row did not count the answer ({page.js(progress)})")
    page.click(page.find('[data-qid="notes"] .skip'))
    page.until(progress + " === '2/3'", message=f"the row did not count the skip ({page.js(progress)})")
    ctx.shot("queue-sessions", x_window=True)
    # A digit picks as a click does, and is counted alike.
    page.js("document.querySelector('[data-qid=\"release\"]').focus()")
    page.keys("1")
    page.until(progress + " === '3/3'", message=f"the row did not count the digit's pick ({page.js(progress)})")
    page.click(ctx.option("release", "Patch (0.2.5)"))
    page.click(page.find("#submit"))
    answer_of(first())
    ctx.show("other")
    page.click(page.find("#dismiss"))
    expect_error(second(), "ASK_CANCELLED")


def test_a_request_answered_on_another_device_says_where_in_place_of_its_card(ctx):
    """The desktop's dialog races the other members of the group `person`: when one of them answers
    first, the card gives way to "Answered on <label>", the notification closes, and History says
    who answered."""
    with ctx.elsewhere():
        phone = ctx.conn("phone")
        phone.call("answerers/register", {"scope": "all", "label": "Pixel 8", "group": "person"})
        try:
            _, _, outcome = ctx.ask([{"id": "away", "question": "Ship the release?",
                                      "options": [{"label": "Ship"}, {"label": "Wait"}]}], agent="coder")
            nid = ctx.notification_id("claude-code asks")
            ctx.show("away")
            request = phone.next_incoming(timeout=15)
            phone.reply(request, {"answers": [{"id": "away", "selected": ["Wait"]}]})
            assert answer_of(outcome()) == {"answers": [{"id": "away", "selected": ["Wait"]}]}
            where = ctx.page.until(
                "const v = document.getElementById('view-elsewhere');"
                " return !v.hidden && document.getElementById('elsewhere-where').textContent")
            assert where == "Answered on Pixel 8", where
            assert not ctx.page.find_all('[data-qid="away"]'), "the card gave way"
            assert closed_on_bus_eventually(ctx, nid), f"notification {nid} was not closed"
            ctx.page.until("return document.getElementById('view-elsewhere').hidden")
            record = [r for r in map(json.loads, journal_lines())
                      if r["outcome"] == "answered" and r["questions"][0]["id"] == "away"]
            assert [r["answerer"] for r in record] == ["Pixel 8"], record
        finally:
            phone.close()


def toggle_count(page):
    """The folded queue button's count: its text (None while hidden) and the button's name."""
    return page.js("const c = document.getElementById('queue-toggle-count');"
                   "return [c.getClientRects().length ? c.textContent : null,"
                   " document.getElementById('queue-toggle').getAttribute('aria-label')];")


def test_the_folded_queue_button_says_how_many_wait(ctx):
    """Below 900 px the queue folds behind ☰: the button carries the waiting count (as the tray does) and says it
    in its name; with nothing waiting it shows no count."""
    page = ctx.page
    before = page.window_rect()
    outcomes = []
    try:
        width, _ = set_window_size(page, 720, 480)
        assert width < 900, width
        assert toggle_count(page) == [None, "Show the waiting requests (none waiting)"], toggle_count(page)
        outcomes.append(ctx.ask([dict(samples.SINGLE[0], id="first")], agent="coder")[2])
        ctx.show("first")
        outcomes.append(ctx.ask([{"id": "second", "question": "Publish the website now?",
                                  "options": [{"label": "Publish"}, {"label": "Hold"}]}], agent="reviewer")[2])
        outcomes.append(ctx.ask([{"id": "third", "question": "Rotate the API keys today?",
                                  "options": [{"label": "Yes"}, {"label": "No"}]}], agent="coder")[2])
        ctx.wait_queue(3)
        page.until("return document.getElementById('queue-toggle-count').textContent === '3'",
                   message=f"the button did not count three ({toggle_count(page)})")
        assert toggle_count(page) == ["3", "Show the waiting requests (3 waiting)"], toggle_count(page)
        # Readable: the count sits on the button's corner, inside the window.
        box = page.js("const r = document.getElementById('queue-toggle-count').getBoundingClientRect();"
                      "return r.top >= 0 && r.left >= 0 && r.width >= 14 && r.height >= 14;")
        assert box is True, box
        ctx.shot("queue-folded-count", x_window=True)
        ctx.show("first")
        page.click(page.find("#dismiss"))
        expect_error(outcomes[0](), "ASK_CANCELLED")
        ctx.wait_queue(2)
        page.until("return document.getElementById('queue-toggle-count').textContent === '2'",
                   message=f"the button did not count down ({toggle_count(page)})")
        for qid, outcome, left in (("second", outcomes[1], 1), ("third", outcomes[2], 0)):
            ctx.show(qid)
            page.click(page.find("#dismiss"))
            expect_error(outcome(), "ASK_CANCELLED")
            ctx.wait_queue(left)
        page.until("return !document.getElementById('queue-toggle-count').getClientRects().length",
                   message="a count stayed with nothing waiting")
    finally:
        set_window_size(page, before["width"], before["height"])


TYPED = "Keep the old branch until Friday's demo"
PRUNE = [{"id": "prune", "header": "Branches", "question": "Delete the 14 stale feature branches?",
          "options": [{"label": "Delete them (Recommended)"}, {"label": "Keep them"}]}]


def ask_as_claude_code(ctx, questions):
    """Asks on a connection of its own as an agent labelled "Claude Code"; returns (conn, rid, outcome)."""
    conn = ctx.conn()
    ctx.agent_seq += 1
    agent = conn.call("agents/register", {"id": f"claude-{ctx.agent_seq}", "label": "Claude Code",
                                          "meta": {"cwd": "/home/dev/shop", "client": "claude-code"}})
    rid = conn.start("user-questions/ask", {"agent": agent, "questions": questions})
    return conn, rid, outcome_of(conn, rid)


def type_and_keep(ctx, qid, text):
    """Types `text` as the person's own answer to `qid` and waits until the app keeps it as the draft."""
    page = ctx.page
    page.type(ctx.other_box(qid), text)
    page.until("return window.__TAURI__.core.invoke('get_queue').then((q) => q.some((v) => v.draft &&"
               " JSON.stringify(v.draft).includes(arguments[0])))", text, message="the typing never reached the app")


def ended_card(page):
    return page.js(
        "const box = document.querySelector('#request-form textarea.other-input');"
        "box.focus(); box.select();"
        "return {ended: document.getElementById('view-request').classList.contains('ended'),"
        " note: document.querySelector('#asker .ended-note')?.textContent,"
        " text: box.value, readOnly: box.readOnly, selected: box.value.substring(box.selectionStart, box.selectionEnd),"
        " radios: [...document.querySelectorAll('#request-form input.option-input')].every((i) => i.disabled),"
        " submit: document.getElementById('submit').hidden, close: document.getElementById('close-ended').hidden,"
        " waiting: document.getElementById('queue-count').textContent,"
        " rows: [...document.querySelectorAll('.queue-item')].map((li) => li.classList.contains('ended'))};")


def test_an_agent_that_disconnects_leaves_the_typing_to_copy_until_closed(ctx):
    """The person types an answer; the agent's process ends (its connection closes). The card stays where it
    was, greyed, saying the agent disconnected; the text is still there, read-only, selectable; nothing can be
    sent. The queue moves on (another request waits beside it); History keeps the typing as a draft. Only
    Close takes the card away."""
    page = ctx.page
    conn, rid, outcome = ask_as_claude_code(ctx, PRUNE)
    _, _, other = ctx.ask([{"id": "later", "question": "Tag the release?", "options": [{"label": "Yes"}, {"label": "No"}]}],
                          agent="reviewer")
    ctx.wait_queue(2)
    ctx.open_request_of("Claude Code")
    ctx.show("prune")
    type_and_keep(ctx, "prune", TYPED)
    conn.close()
    page.until("return document.getElementById('view-request').classList.contains('ended')",
               message="the card did not stay, ended, when its agent disconnected")
    card = ended_card(page)
    assert card == {
        "ended": True, "note": "Claude Code disconnected (the process ended). Nothing was sent. What you typed stays "
        "here to copy, and in History, until you close it.",
        "text": TYPED, "readOnly": True, "selected": TYPED, "radios": True, "submit": True, "close": False,
        "waiting": "1", "rows": [True, False]}, card
    # Keys answer nothing: a digit picks no option, Ctrl+Enter sends nothing.
    checked = "return [...document.querySelectorAll('[data-qid=\"prune\"] input:checked')].map((i) => i.value)"
    before = page.js(checked)
    page.keys("2")
    page.keys(ENTER, modifier=CONTROL)
    assert page.js(checked) == before, (before, page.js(checked))
    assert page.js("return document.getElementById('close-ended').hidden") is False
    ctx.shot("desk-disconnected", top=True)
    # The journal keeps what was typed with the withdrawn request; History shows it as a draft.
    record = journal_record(PRUNE[0]["question"])
    assert record["outcome"] == "withdrawn", record
    assert record["draft"] == {"answers": [{"id": "prune", "selected": [], "custom": TYPED}]}, record
    page.click(page.find("#nav-history"))
    # (History may show the list it drew last until it has read the journal again: the entry is looked for.)
    draft = page.until("return [...document.querySelectorAll('#history-list .history-item .history-draft')]"
                       ".map((e) => e.textContent).find((text) => text.includes(arguments[0]))", TYPED,
                       message="History shows no draft of what was typed")
    assert draft == f"draft, not sent “{TYPED}”", draft
    # Back in the queue the card is still there; Close takes it away and the waiting request shows.
    page.click(page.find("#nav-queue"))
    ctx.open_request_of("Claude Code")
    page.until("return document.getElementById('view-request').classList.contains('ended')", message="the card went")
    page.click(page.find("#close-ended"))
    ctx.show("later")
    assert not page.find_all('[data-qid="prune"]')
    assert page.js("return window.__TAURI__.core.invoke('get_queue').then((q) => q.length)") == 1
    page.click(ctx.option("later", "Yes"))
    page.click(page.find("#submit"))
    assert answer_of(other()) == {"answers": [{"id": "later", "selected": ["Yes"]}]}
    ctx.wait_queue(0)


def test_a_withdrawn_question_says_so_and_keeps_the_typing_too(ctx):
    """The agent withdraws the question ($/cancelRequest) while the person types: the card says the agent
    withdrew it (not that it disconnected), keeps the text, and goes on Close."""
    page = ctx.page
    conn, rid, outcome = ask_as_claude_code(ctx, PRUNE)
    ctx.show("prune")
    type_and_keep(ctx, "prune", TYPED)
    conn.notify("$/cancelRequest", {"id": rid})
    expect_error(outcome(), "ASK_ABORTED")
    page.until("return document.getElementById('view-request').classList.contains('ended')",
               message="the card did not stay, ended, when its question was withdrawn")
    card = ended_card(page)
    assert card["note"].startswith("Claude Code withdrew the question. Nothing was sent."), card
    assert (card["text"], card["readOnly"], card["waiting"]) == (TYPED, True, "0"), card
    page.click(page.find("#close-ended"))
    page.until("return !document.querySelector('#request-form [data-qid]')", message="Close left the card")
