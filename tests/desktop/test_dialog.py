"""askdesk desktop tests: the request dialog.

Answers, keyboard, focus, small windows, the header and its colours.
"""
import os
import re
import subprocess
import tempfile
import time

import pytest

import contrast
from harness import (
    SHIFT, TAB, answer_of, closed_on_bus_eventually, expect_error, filter_history, journal_path, load_rules, long_plan,
    no_rules, rule_names, rule_preview,
)
import samples
from webdriver import CONTROL, ENTER, ESCAPE, WebDriverError, element_id


def test_batch_answer_reaches_the_asker(ctx):
    """ask -> Notify names the agent -> dialog shows it -> picks and custom text -> exactly that answer."""
    with ctx.elsewhere():
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


def test_recommended_label_comes_back_unchanged(ctx):
    _, _, outcome = ctx.ask(samples.SINGLE)
    ctx.show("migrate")
    assert ctx.page.find_all(".option.recommended"), "the recommended option is not highlighted"
    ctx.page.click(ctx.option("migrate", "Online, in batches (Recommended)"))
    ctx.page.click(ctx.page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "migrate", "selected": ["Online, in batches (Recommended)"]}]}, got


def test_a_request_that_takes_the_place_of_a_withdrawn_one_gets_no_keys_meant_for_it(ctx):
    """The human is in one request's text box; its agent withdraws it and another agent's request takes its
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
    # In the text box, nothing typed yet (a request with typing stays, ended: test_queue.py).
    page.click(ctx.other_box("hold"))
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
    """Asks for a window of this size and returns the page's viewport once it has reached that size and kept
    it for a moment. Growing as well as shrinking is waited for: a click while the layout still changes lands
    on whatever moved under the point."""
    page.cmd("POST", "/window/rect", {"width": width, "height": height})
    near = ("return Math.abs(window.innerWidth - arguments[0]) <= 40 && Math.abs(window.innerHeight - arguments[1]) <= 40"
            " ? [window.innerWidth, window.innerHeight] : null")
    seen = page.until(near, width, height, message=f"the window did not become {width}x{height}")
    while True:
        time.sleep(0.2)
        now = page.until(near, width, height, message=f"the window did not stay {width}x{height}")
        if now == seen:
            return now
        seen = now


def test_the_smallest_window_keeps_the_question_and_its_buttons_in_reach(ctx):
    """At the window's minimum size (640x420) a long agent label and meta scroll inside the header (at most a
    third of the window), the question and every button stay inside the window, and a plan review in one
    column puts the plan first, the decision right after it, its outline after that."""
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
            "const main = document.querySelector('[data-qid=\"plan\"] .plan-main').getBoundingClientRect();"
            "return {planFirst: main.top < decision.top, decisionNext: decision.top - main.bottom < 200,"
            " outlineAfter: top('.plan-outline') > decision.top,"
            " buttons: ['submit', 'dismiss'].filter((id) => document.getElementById(id).getBoundingClientRect().right > innerWidth + 0.5)};")
        assert order == {"planFirst": True, "decisionNext": True, "outlineAfter": True, "buttons": []}, order
        ctx.shot("small-window-plan", x_window=True)
    finally:
        plan_conn.notify("$/cancelRequest", {"id": plan_rid})
        set_window_size(page, before["width"], before["height"])
        ctx.wait_queue(0)


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
    # Enter on the link opens the confirm, once: the same press does not also press "Open in browser".
    page.keys(ENTER)
    page.until("return !document.getElementById('confirm').hidden && document.activeElement.id === 'confirm-ok'",
               message=f"one Enter on the link did not leave the confirm open on its button ({focused(page)})")
    page.keys(ESCAPE)
    page.until("return document.getElementById('confirm').hidden", message="Esc did not close the confirm")
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


def test_the_missing_answer_toast_leaves_the_question_it_points_at_in_view(ctx):
    """Submit with the last question of a long batch unanswered: the question is highlighted and scrolled to,
    and the toast that asks for it does not cover any of it."""
    yes_no = [{"label": "Yes"}, {"label": "No"}]
    questions = [{"id": f"step{n}", "question": f"Run step {n} of the release?", "options": yes_no} for n in range(1, 9)]
    _, rid, outcome = ctx.ask(questions, agent="coder")
    page = ctx.page
    try:
        ctx.show("step1")
        for n in range(1, 8):
            page.click(ctx.option(f"step{n}", "Yes"))
        page.click(page.find("#submit"))
        said = page.until("const t = document.getElementById('toast'); return t.hidden ? null : t.textContent;",
                          message="no toast")
        assert said == "Answer or skip the highlighted question.", said
        rects = page.js("const r = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };"
                        "const card = document.querySelector('[data-qid=\"step8\"]');"
                        "return {card: r(card), toast: r(document.getElementById('toast')), missing: card.classList.contains('missing'),"
                        " height: window.innerHeight};")
        assert rects["missing"], rects
        card, shown = rects["card"], rects["toast"]
        assert card[1] >= 0 and card[3] <= rects["height"], f"the question is not in view: {rects}"
        apart = shown[3] <= card[1] or card[3] <= shown[1] or shown[2] <= card[0] or card[2] <= shown[0]
        assert apart, f"the toast covers the question: {rects}"
        ctx.shot("missing-answer-toast")
        page.click(ctx.option("step8", "No"))
        page.click(page.find("#submit"))
        assert answer_of(outcome())["answers"][-1] == {"id": "step8", "selected": ["No"]}
    finally:
        ctx.wait_queue(0)


def test_skip_keeps_the_shape(ctx):
    _, _, outcome = ctx.ask(samples.BATCH[1:])
    ctx.show("release")
    ctx.page.click(ctx.page.find('[data-qid="release"] .skip'))
    ctx.page.type(ctx.other_box("notes"), "nothing")
    ctx.page.click(ctx.page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "release", "selected": []}, {"id": "notes", "selected": [], "custom": "nothing"}]}, got


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
                     "env": '{"CI":true}', "note": "first line\nsecond line", "agent id": f"meta-{os.getpid()}"}, shown
    # The internal identifiers are demoted: not beside the name, and last among the chips, drawn quieter.
    title = page.js("return document.querySelector('#asker .asker-title').textContent")
    assert title == "claude-codeasks", title
    order = page.js("return [...document.querySelectorAll('#asker .chip')].map((c) =>"
                    " c.querySelector('.chip-kind').textContent + (c.classList.contains('minor') ? ':minor' : ''))")
    assert order[-2:] == ["pid:minor", "agent id:minor"], order
    assert not [k for k in order[:-2] if k.endswith(":minor")], order
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


def test_text_colours_meet_wcag_aa_contrast(ctx):
    """Every text colour of ui/style.css on every surface it is drawn on, light and dark: at least 4.5:1."""
    problems = contrast.failures()
    assert not problems, "\n".join(problems)


def checked(page, qid):
    return page.js("return [...document.querySelectorAll('[data-qid=\"' + arguments[0] + '\"] input.option-input:checked')]"
                   ".map((i) => i.value)", qid)


def test_plain_enter_submits_unless_the_focus_is_in_a_text_box(ctx):
    """Enter in the "Other" box types a new line and sends nothing; Enter on an option submits."""
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    page = ctx.page
    box = ctx.other_box("migrate")
    page.type(box, "first line")
    page.keys(ENTER)
    page.until("return document.querySelector('[data-qid=\"migrate\"] textarea.other-input').value === 'first line\\n'",
               message="Enter in the box did not type a new line")
    assert ctx.queue_count() == 1, "Enter in a text box submitted"
    page.click(ctx.option("migrate", "Offline, in one transaction"))
    page.keys(ENTER)
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "migrate", "selected": ["Offline, in one transaction"]}]}, got


def test_digits_act_on_the_question_the_focus_is_in(ctx):
    """In a batch, a click on the second question's header makes it the one digits pick in; the first is left alone."""
    _, _, outcome = ctx.ask(samples.BATCH, agent="coder")
    ctx.show("scope")
    page = ctx.page
    page.click(page.find('[data-qid="release"] .q-header'))
    page.keys("2")
    page.until("return document.querySelector('[data-qid=\"release\"] input.option-input:checked') !== null",
               message=f"the digit did not pick in the clicked question (scope has {checked(page, 'scope')})")
    assert checked(page, "release") == ["Patch (0.2.5)"], checked(page, "release")
    assert checked(page, "scope") == [], checked(page, "scope")
    # And back in the first question, by its own card.
    page.click(page.find('[data-qid="scope"] .q-header'))
    page.keys("3")
    page.until("return document.querySelectorAll('[data-qid=\"scope\"] input.option-input:checked').length === 1",
               message="the digit did not pick in the first question")
    assert checked(page, "scope") == ["client"], checked(page, "scope")
    assert checked(page, "release") == ["Patch (0.2.5)"], checked(page, "release")
    page.click(page.find('[data-qid="notes"] .skip'))
    page.click(page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "scope", "selected": ["client"]}, {"id": "release", "selected": ["Patch (0.2.5)"]},
                               {"id": "notes", "selected": []}]}, got


def test_tab_and_space_after_typing_in_other_never_skip_the_text(ctx):
    """The digit of "Other" puts the cursor in its box; after typing, Tab does not land on Skip, and Space or
    Enter on Skip (or Dismiss) keeps the question and its text: what is sent is the text."""
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    page = ctx.page
    page.keys("4")
    page.until("return document.activeElement.classList.contains('other-input')",
               message=f"the Other digit did not put the cursor in its box ({focused(page)})")
    page.keys(*"Wait until Monday")
    page.keys(TAB)
    assert not page.js("return document.activeElement.classList.contains('skip')"), "Tab landed on Skip"
    page.keys(" ")
    assert page.js("return document.querySelector('[data-qid=\"migrate\"] textarea.other-input').value") == "Wait until Monday"
    # Skip reached on purpose, pressed by key: the question is not skipped and says why.
    page.js("document.querySelector('[data-qid=\"migrate\"] .skip').focus()")
    page.keys(" ")
    page.keys(ENTER)
    page.until("return !document.querySelector('[data-qid=\"migrate\"] .kept-note').hidden",
               message="Skip by key did not say the text is kept")
    assert not page.js("return document.querySelector('[data-qid=\"migrate\"]').classList.contains('skipped')"), \
        "a key skipped a question with text typed"
    page.js("document.getElementById('dismiss').focus()")
    page.keys(" ")
    page.until("const t = document.getElementById('toast'); return !t.hidden && t.textContent.startsWith('Not dismissed')",
               message="Dismiss by key did not say the text is kept")
    assert ctx.queue_count() == 1, "a key dismissed a request with text typed"
    page.keys(ENTER, modifier=CONTROL)
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "migrate", "selected": [], "custom": "Wait until Monday"}]}, got


def test_escape_in_a_box_leaves_the_box_and_keeps_the_window(ctx):
    """Esc while typing moves the focus out of the box to its question, keeping the text and the window; Enter
    then submits it."""
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    page = ctx.page
    page.type(ctx.other_box("migrate"), "Not before the backup")
    page.keys(ESCAPE)
    page.until("return document.activeElement && document.activeElement.dataset.qid === 'migrate'",
               message=f"Esc did not move the focus to the question ({focused(page)})")
    assert page.js("return document.querySelector('[data-qid=\"migrate\"] textarea.other-input').value") == \
        "Not before the backup"
    page.keys(ENTER)
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "migrate", "selected": [], "custom": "Not before the backup"}]}, got
    assert page.js("return document.visibilityState") == "visible", "Esc in a box hid the window"


def test_plan_feedback_sent_says_feedback_sent(ctx):
    """Sending a plan review's feedback says "Feedback sent.", not "Answer sent."; an approval says "Answer sent."."""
    page = ctx.page
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    page.type(page.find('[data-qid="plan"] .plan-feedback'), "Keep the JSON export.")
    # A notice an earlier test left on screen is not this one's.
    page.js("document.getElementById('toast').hidden = true")
    # A plan that is the whole request sends its feedback with its own Send button.
    page.click(page.find('[data-qid="plan"] .plan-send'))
    assert answer_of(outcome())["answers"][0]["custom"] == "Keep the JSON export."
    text = page.until("const t = document.getElementById('toast'); return !t.hidden && t.textContent",
                      message="no notice after sending")
    assert text == "Feedback sent.", text
    ctx.wait_queue(0)
    page.until("return !document.querySelector('#request-form [data-qid]')", message="the plan stayed")
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    page.click(ctx.option("migrate", "Offline, in one transaction"))
    page.click(page.find("#submit"))
    answer_of(outcome())
    text = page.until("const t = document.getElementById('toast'); return !t.hidden && t.textContent",
                      message="no notice after sending")
    assert text == "Answer sent.", text


def gray(path, x, y, w=1, h=1):
    """The brightest grey level (0 to 1) of a region of a screenshot."""
    out = subprocess.run(["convert", path, "-crop", f"{w}x{h}+{x}+{y}", "+repage", "-colorspace", "Gray",
                          "-format", "%[fx:maxima]", "info:"], capture_output=True, text=True, check=True).stdout
    return float(out)


@pytest.mark.app_args("--theme=dark")
def test_dark_mode_draws_unchecked_choices_hollow_and_placeholders_dimmer_than_text(ctx):
    """In the dark scheme an unchecked radio is drawn dark inside (the platform theme drew a white dot, at a glance
    the same as a checked one), a checked one has the accent dot, and a placeholder is dimmer than typed text."""
    page = ctx.page
    _, _, outcome = ctx.ask(samples.BATCH[1:], agent="coder")
    ctx.show("release")
    assert page.js("return matchMedia('(prefers-color-scheme: dark)').matches"), "the window is not dark"
    page.type(ctx.other_box("release"), "Wait for the next sprint")
    page.click(ctx.option("release", "Patch (0.2.5)"))
    boxes = page.js(
        "const r = (el) => { const b = el.getBoundingClientRect(); const k = window.devicePixelRatio;"
        " return [Math.round(b.left * k), Math.round(b.top * k), Math.round(b.width * k), Math.round(b.height * k)]; };"
        "const inputs = [...document.querySelectorAll('[data-qid=\"release\"] input.option-input')];"
        "return {unchecked: r(inputs[0]), checked: r(inputs[1]), typed: r(document.querySelector('[data-qid=\"release\"] textarea')),"
        " placeholder: r(document.querySelector('[data-qid=\"notes\"] textarea'))};")
    with tempfile.TemporaryDirectory() as folder:
        shot = os.path.join(folder, "dark.png")
        page.screenshot(shot)
        centre = lambda b: (b[0] + b[2] // 2 - 1, b[1] + b[3] // 2 - 1)  # noqa: E731
        unchecked = gray(shot, *centre(boxes["unchecked"]), 3, 3)
        checked = gray(shot, *centre(boxes["checked"]), 3, 3)
        assert unchecked < 0.3, f"an unchecked radio is bright inside ({unchecked:.2f})"
        assert checked > unchecked + 0.25, f"a checked radio looks like an unchecked one ({checked:.2f} vs {unchecked:.2f})"
        text_box, hint_box = boxes["typed"], boxes["placeholder"]
        typed = gray(shot, text_box[0] + 4, text_box[1] + 4, 200, 20)
        hint = gray(shot, hint_box[0] + 4, hint_box[1] + 4, 200, 20)
        assert hint < typed - 0.15, f"the placeholder ({hint:.2f}) is nearly as bright as typed text ({typed:.2f})"
    ctx.shot("dark-mode", top=True)
    page.click(page.find('[data-qid="notes"] .skip'))
    page.click(page.find("#submit"))
    assert answer_of(outcome())["answers"][0] == {"id": "release", "selected": ["Patch (0.2.5)"]}


def speak(page, language):
    """Chooses `language` ('' for the system's) in the sidebar and waits for the page drawn again in it."""
    page.js("document.body.dataset.ready = 'false';"
            "const s = document.getElementById('language'); s.focus(); s.value = arguments[0];"
            "s.dispatchEvent(new Event('change'))", language)
    deadline = time.time() + 30
    while True:
        # While the page loads again, WebKitWebDriver may answer "unknown error".
        try:
            page.until("return document.body.dataset.ready === 'true'"
                       " && document.documentElement.lang === (arguments[0] || 'en')", language, timeout=30,
                       message=f"the page was not drawn again in {language or 'the system language'}")
            break
        except WebDriverError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)
    page.js("if (!document.getElementById('view-connect').hidden) document.getElementById('nav-queue').click()")


def test_the_language_list_names_the_other_languages_once_reached(ctx):
    """Until the person reaches for it, the language list holds only the language in force (naming the others,
    each in its own script, would load their fonts into every window); focused, it offers every language and
    keeps the one in force chosen."""
    page = ctx.page
    page.js("document.body.dataset.ready = 'false'; window.location.reload()")
    page.until("return document.body.dataset.ready === 'true'", timeout=30, message="the page did not load again")
    listed = "return [...document.getElementById('language').options].map((o) => [o.value, o.textContent])"
    before = page.js(listed)
    assert [value for value, _ in before] == [page.js("return document.getElementById('language').value")], before
    page.js("document.getElementById('language').focus()")
    after = page.js(listed)
    assert [value for value, _ in after] == ["", "en", "zh-CN"], after
    assert dict(after)["zh-CN"] == "简体中文", after
    assert page.js("return document.getElementById('language').value") == before[0][0]


def test_chinese_chosen_in_the_sidebar_speaks_chinese_and_leaves_the_agents_text_as_written(ctx):
    """The language choice draws the page in Simplified Chinese and the next notification speaks it too; the
    agent's question and options are never translated, and their text takes its direction from itself."""
    page = ctx.page
    speak(page, "zh-CN")
    try:
        # The notification stays up only while the window lacks the focus.
        with ctx.elsewhere():
            _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
            assert ctx.notification_id("claude-code 提问") > 0
        ctx.show("migrate")
        assert page.text(page.find("#submit")) == "提交"
        assert page.text(page.find("#dismiss")) == "驳回"
        assert page.text(page.find('[data-qid="migrate"] .pill.accent')) == "推荐"
        assert page.text(page.find('[data-qid="migrate"] .q-kind')) == "单选"
        legend = page.find('[data-qid="migrate"] .q-text')
        assert page.text(legend) == samples.SINGLE[0]["question"]
        assert page.js("return document.querySelector('[data-qid=\"migrate\"] .q-text').getAttribute('dir')") == "auto"
        labels = page.js("return [...document.querySelectorAll('[data-qid=\"migrate\"] .option-label')]"
                         ".map((l) => l.textContent)")
        assert labels[:3] == ["Online, in batches", "Offline, in one transaction", "Skip the migration for now"]
        ctx.shot("dialog-zh-CN", top=True)
        page.click(ctx.option("migrate", "Offline, in one transaction"))
        page.click(page.find("#submit"))
        got = answer_of(outcome())
        assert got == {"answers": [{"id": "migrate", "selected": ["Offline, in one transaction"]}]}, got
        ctx.wait_queue(0)
        # The plan review too: its frame in Chinese, the plan as the agent wrote it.
        _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
        ctx.show("plan")
        assert page.text(page.find('[data-qid="plan"] .plan-kicker')) == "待审阅的计划"
        assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-feedback').placeholder") == \
            "需要改什么？你的反馈会代替选项发回给代理。"
        ctx.shot("plan-review-zh-CN", top=True)
        page.type(page.find('[data-qid="plan"] .plan-feedback'), "Keep the JSON export.")
        page.click(page.find('[data-qid="plan"] .plan-send'))
        assert answer_of(outcome())["answers"][0]["custom"] == "Keep the JSON export."
        ctx.wait_queue(0)
    finally:
        speak(page, "")
    assert page.js("return document.getElementById('submit').textContent") == "Submit"


CHINESE_RULES = """# The person's own words: the view shows them as written.
[[rule]]
name = "fmt-check"
match.question = "^Run cargo fmt --check"
answer = "Yes"
mode = "shadow"
after = "1h30m"
"""


def test_the_rules_view_in_chinese_names_its_parts_in_chinese_and_the_rules_as_written(ctx):
    """Under Simplified Chinese the Rules view's own words (the switch, the facts' names, the counts) are
    Chinese; the rule's name and mode stay as the rules file says them. Connect, Devices and a rule's preview
    follow."""
    page = ctx.page
    load_rules(ctx, CHINESE_RULES, lambda s: rule_names(s) == [("fmt-check", "shadow")])
    speak(page, "zh-CN")
    try:
        page.click(page.find("#nav-rules"))
        card = '#rules-list .rule-item[data-rule="fmt-check"]'
        page.until("return document.querySelector(arguments[0] + ' .rule-counts')", card,
                   message="no rule card with its counts in the Rules view")
        seen = page.js("""const card = document.querySelector(arguments[0]);
            const texts = (sel) => [...card.querySelectorAll(sel)].map((e) => e.textContent);
            return {
                title: document.querySelector('#view-rules h1').textContent,
                name: card.querySelector('.rule-name').textContent,
                mode: card.querySelector('.pill.mode').textContent,
                line: card.querySelector('.rule-line').textContent,
                facts: texts('.rule-facts dt'),
                switch: texts('.mode-option'),
                switchTitle: card.querySelector('.mode-option[data-mode="shadow"]').title,
                label: card.querySelector('.mode-switch').getAttribute('aria-label'),
                hits: card.querySelector('.rule-count').textContent,
            };""", card)
        # How many requests it hits depends on what the suite asked before: only the words are checked.
        hits = seen.pop("hits")
        assert re.fullmatch(r"\d+ 次命中", hits), hits
        assert seen == {
            "title": "规则", "name": "fmt-check", "mode": "shadow", "line": "第 2 行",
            "facts": ["匹配", "动作", "延时"], "switch": ["开启", "影子", "关闭"],
            "switchTitle": "规则只给出建议，由你决定", "label": "规则 fmt-check 的模式",
        }, seen
        ctx.shot("rules-zh-CN", x_window=True)
        # The other views converted with it speak Chinese too.
        for view, heading in (("connect", "连接你的代理"), ("devices", "设备")):
            page.click(page.find(f"#nav-{view}"))
            page.until("return [...document.querySelectorAll('.view:not([hidden]) h1')]"
                       ".some((h) => h.textContent === arguments[0])", heading,
                       message=f"the {view} view did not show {heading}")
            ctx.shot(f"{view}-zh-CN", x_window=True)
        # The preview of a rule made from an answer: its frame in Chinese, the question as asked.
        # Its own question and header: History keeps the dismissal, which the Rules tests' counts must not see.
        tidy = [{"id": "tidy", "header": "Tidy", "question": "Delete the 5 merged branches?",
                 "options": [{"label": "Yes"}, {"label": "No"}]}]
        _, _, outcome = ctx.ask(tidy, agent="coder")
        page.click(page.find("#nav-queue"))
        ctx.show("tidy")
        page.click(ctx.option("tidy", "Yes"))
        page.click(page.find("#always"))
        rule_preview(page)
        preview = page.js("""const m = document.querySelector('.rule-preview');
            return {legend: m.querySelector('legend').textContent, cancel: m.querySelector('.rule-cancel').textContent,
                    save: m.querySelector('.rule-save').textContent,
                    shadow: m.querySelector('.rule-shadow-choice').textContent.trim()};""")
        assert preview == {"legend": "这样回答", "cancel": "取消", "save": "保存规则并提交",
                           "shadow": "先以影子模式试用（它只建议，由你决定）"}, preview
        ctx.shot("rule-preview-zh-CN", x_window=True)
        page.click(page.find(".rule-preview .rule-cancel"))
        page.click(page.find("#dismiss"))
        expect_error(outcome(), "ASK_CANCELLED")
        ctx.wait_queue(0)
    finally:
        speak(page, "")
        no_rules(ctx)
    page.click(page.find("#nav-rules"))
    page.until("return document.querySelector('#view-rules h1').textContent === 'Rules'",
               message="the Rules view stayed in Chinese")
    page.click(page.find("#nav-queue"))


def test_a_broken_rules_file_is_explained_in_the_language_chosen(ctx):
    """Under Simplified Chinese the Rules view says what is wrong with a broken rules file in Chinese, the
    file's keys and the rule's name as the file writes them; back in English, the same error reads in English."""
    page = ctx.page
    error_text = ("const e = document.querySelector('#rules-error:not([hidden]) .rules-error-what');"
                  " return e && e.textContent.includes(arguments[0]) ? e.textContent : null")
    speak(page, "zh-CN")
    try:
        load_rules(ctx, '[[rule]]\nname = "x"\n', lambda s: s["error"] is not None, "the breakage was never seen")
        page.click(page.find("#nav-rules"))
        said = page.until(error_text, "没有动作", message="no Chinese error in the Rules view")
        assert said == '第 1 行，第 1 列：规则 "x" 没有动作：请给出 `answer`、`deny`、`dismiss`、`ask` 之一', said
        ctx.shot("rules-broken-zh-CN", x_window=True)
        speak(page, "")
        page.click(page.find("#nav-rules"))
        said = page.until(error_text, "has no action", message="the error stayed in Chinese")
        assert said == 'Line 1, column 1: rule "x" has no action: give one of `answer`, `deny`, `dismiss`, `ask`', said
    finally:
        speak(page, "")
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


def test_the_sentences_the_app_composes_follow_the_language_chosen(ctx):
    """With Chinese chosen, what the app composes for the page comes in Chinese too: the line under a question
    answered before and History's outcome names; the option's label stays as the agent wrote it."""
    page = ctx.page
    text = "Squash the fixup commits before the review?"
    questions = [{"id": "squash", "question": text, "options": [{"label": "Squash them"}, {"label": "Keep them"}]}]
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("squash")
    page.click(ctx.option("squash", "Squash them"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "squash", "selected": ["Squash them"]}]}
    deadline = time.time() + 10
    while text not in open(journal_path(), encoding="utf-8").read():
        assert time.time() < deadline, "the first answer never reached the journal"
        time.sleep(0.2)
    ctx.wait_queue(0)
    speak(page, "zh-CN")
    try:
        _, _, outcome = ctx.ask(questions, agent="coder")
        ctx.show("squash")
        hint = page.until("return document.querySelector('[data-qid=\"squash\"] .memory-hint')",
                          message="no memory hint")
        said = page.text(element_id(hint))
        assert said.startswith("你回答了 Squash them"), said
        page.click(page.find("#dismiss"))
        expect_error(outcome(), "ASK_CANCELLED")
        ctx.wait_queue(0)
        page.click(page.find("#nav-history"))
        page.wait_for('.history-item[data-outcome="answered"]')
        offered = page.js("return [...document.getElementById('history-outcome').options].map((o) => o.textContent)")
        assert offered[1:] == ["已回答", "已驳回", "已撤回", "失败", "迟到的回答"], offered
        pill = page.js("return document.querySelector('.history-item[data-outcome=\"answered\"] .pill.outcome')"
                       ".textContent")
        assert pill == "已回答", pill
        # The desktop's answers are "你" (you), and the answerer filter still keeps only them.
        answerers = page.js("return [...document.getElementById('history-answerer').options]"
                            ".map((o) => [o.value, o.textContent])")
        assert answerers[1] == ["desktop", "你"], answerers
        filter_history(page, "history-answerer", "desktop")
        tags = page.js("return [...document.querySelectorAll('.history-item .pill.answerer')].map((e) => e.textContent)")
        assert tags and set(tags) == {"回答者 你"}, tags
        filter_history(page, "history-answerer", "")
    finally:
        page.click(page.find("#nav-queue"))
        speak(page, "")
    assert page.js("return document.getElementById('submit').textContent") == "Submit"
