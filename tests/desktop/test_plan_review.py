"""askdesk desktop tests: plan review.

The pane, approval and feedback, comments, revisions and their threads.
"""
import json
import os
import re
import time

from harness import DOC, answer_of, comment_by_keyboard, expect_error, long_plan, outcome_of
import samples
from webdriver import CONTROL, ENTER, ESCAPE
from test_dialog import set_window_size


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
        " tasks: d.querySelectorAll('.task-box').length, inputs: d.querySelectorAll('input').length,"
        " outline: document.querySelectorAll('[data-qid=\"plan\"] .outline-link').length};", doc)
    assert counts == {"h1": 1, "h2": 5, "table": 1, "code": 1, "tasks": 3, "inputs": 0, "outline": 6}, counts
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


PRIMARY = '[data-qid="plan"] .plan-approve'
SEND = '[data-qid="plan"] .plan-send'


def primary(page):
    """The plan's buttons: Approve's words, Send's (None while hidden), the line under Approve, whether the window's
    Submit shows too, and the options' state."""
    return page.js(
        "const words = (el) => el.textContent.replace(/\\s+/g, ' ').trim();"
        "const send = document.querySelector(arguments[1]);"
        "const desc = document.querySelector('[data-qid=\"plan\"] .approve-desc');"
        "return {approve: words(document.querySelector(arguments[0])), send: send.hidden ? null : words(send),"
        " desc: desc.hidden ? null : desc.textContent, submit: document.getElementById('submit').getClientRects().length > 0,"
        " options: [...document.querySelectorAll('[data-qid=\"plan\"] .plan-decision input.option-input')]"
        ".map((i) => [i.value, i.checked, i.disabled])};", PRIMARY, SEND)


def test_approve_and_send_keep_their_meaning(ctx):
    """A plan that is the whole request has two buttons and no second Submit: Approve, always there and always
    approving, and Send, shown once another option is chosen or there is feedback, which sends that. Neither
    changes meaning in place; the line under Approve says what approving would drop."""
    outcome = ask_as(ctx, samples.PLAN_REVIEW, f"action-{os.getpid()}")
    ctx.show("plan")
    page = ctx.page
    assert primary(page) == {"approve": "✓ Approve plan", "send": None, "desc": "Start with step 1.", "submit": False,
                             "options": [["Keep planning", False, False]]}, primary(page)
    ctx.shot("plan-action-approve", top=True)
    page.click(ctx.option("plan", "Keep planning"))
    assert primary(page)["approve"] == "✓ Approve plan" and primary(page)["send"] == "Send “Keep planning”", primary(page)
    # The option chosen, clicked again, lets go: Send goes with it.
    page.click(ctx.option("plan", "Keep planning"))
    assert primary(page) == {"approve": "✓ Approve plan", "send": None, "desc": "Start with step 1.", "submit": False,
                             "options": [["Keep planning", False, False]]}, primary(page)
    page.type(page.find(FEEDBACK), "Use WAL mode and keep the JSON export.")
    assert primary(page) == {"approve": "✓ Approve plan", "send": "Send feedback · keep planning",
                             "desc": "Approving drops your feedback.", "submit": False,
                             "options": [["Keep planning", False, True]]}, primary(page)
    ctx.shot("plan-action-feedback", top=True)
    page.click(page.find(SEND))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": [], "custom": "Use WAL mode and keep the JSON export."}]}
    ctx.wait_queue(0)


def test_the_plan_sends_the_option_its_button_names(ctx):
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    page = ctx.page
    page.click(ctx.option("plan", "Keep planning"))
    page.click(page.find(SEND))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Keep planning"]}]}
    ctx.wait_queue(0)


def test_approve_approves_with_another_option_chosen(ctx):
    """Approve never sends what Send would: with "Keep planning" chosen, a click on Approve approves."""
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    page = ctx.page
    page.click(ctx.option("plan", "Keep planning"))
    page.click(page.find(PRIMARY))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)


def approve_pressed(page):
    return page.js("return document.querySelector('[data-qid=\"plan\"] .plan-approve').getAttribute('aria-pressed')")


FEEDBACK = '[data-qid="plan"] .plan-feedback'


def approve_with_feedback(ctx, questions, by_key=False):
    """Asks, types feedback in the plan, presses Approve (its button, or the 1 key from the plan) and waits for
    the question it asks; returns outcome()."""
    page = ctx.page
    page.until("return !document.querySelector('#request-form [data-qid]')", message="the last request stayed")
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("plan")
    page.type(page.find(FEEDBACK), "Add a rollback step.")
    if by_key:
        page.js(f"document.querySelector('{DOC}').focus()")
        page.keys("1")
    else:
        page.click(page.find('[data-qid="plan"] .plan-approve'))
    page.wait_for(".plan-notes-modal")
    assert approve_pressed(page) == "false"
    return outcome


def test_plan_approve_with_feedback_typed_asks_and_shows_what_is_sent(ctx):
    """A single-select approval cannot carry feedback: pressing Approve with feedback typed asks, naming what it
    would drop, and Approve is never shown pressed while the answer would be the feedback. "Approve and drop" does
    the same whether the 1 key or a button asked: alone, the plan is answered at once."""
    page = ctx.page
    # Alone, by the 1 key: "Approve and drop your feedback" empties the box and sends the approval at once.
    outcome = approve_with_feedback(ctx, samples.PLAN_REVIEW, by_key=True)
    ctx.shot("plan-approve-with-feedback")
    asked = page.js("const m = document.querySelector('.plan-notes-modal');"
                    "return [m.querySelector('h2').textContent, [...m.querySelectorAll('button')].map((b) => [b.dataset.choice, b.textContent]),"
                    " document.activeElement.dataset.choice]")
    assert asked == ["Approve and drop your feedback?", [["back", "Go back"], ["drop", "Approve and drop it"]], "back"], asked
    page.click(page.find('.plan-notes-modal [data-choice="drop"]'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)
    # Alone, by the 1 key: "Go back" (where the focus starts, so Enter does not drop anything) sends nothing and
    # keeps the feedback; Send sends it.
    outcome = approve_with_feedback(ctx, samples.PLAN_REVIEW, by_key=True)
    page.keys(ENTER)
    page.until("return !document.querySelector('.plan-notes-modal')", message="Go back did not close the question")
    assert page.js(f"return document.querySelector('{FEEDBACK}').value") == "Add a rollback step."
    assert ctx.queue_count() == 1, "going back sent something"
    page.click(page.find(SEND))
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


def keys_hint(page):
    return page.js("return document.getElementById('keys-hint').textContent")


def test_the_footer_lists_the_keys_a_plan_takes_and_each_works(ctx):
    """Under a plan the footer lists exactly the keys that work there, and each does what it says: J/K select a
    block, C comments, the digits pick, Ctrl+Enter sends. Plain Enter is not offered: in the plan it comments. A
    plain question keeps its own list."""
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    page = ctx.page
    page.wait_for(f"{DOC} [data-block]")
    assert keys_hint(page) == "J/K select a block · C comment · 1–2 pick · Ctrl+Enter sends · Tab moves · Esc hides", \
        keys_hint(page)
    page.js(f"document.querySelector('{DOC}').focus()")
    page.keys("j", "j")
    second = current_block_text(page)
    page.keys("k")
    assert current_block_text(page) != second and current_block_text(page), current_block_text(page)
    page.keys("c")
    page.wait_for('[data-qid="plan"] .note-input')
    page.keys(ESCAPE)
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')", message="Esc left an empty editor open")
    page.keys("2")
    assert plan_inputs(page) == [["radio", "Keep planning", True]], plan_inputs(page)
    page.keys("1")
    assert approve_pressed(page) == "true"
    assert ctx.queue_count() == 1, "a digit sent the plan"
    page.keys(ENTER, modifier=CONTROL)
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)
    page.until("return !document.querySelector('#request-form [data-qid]')", message="the plan stayed")
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    assert keys_hint(page) == "1–9 pick · Tab moves · Enter submits · Esc hides", keys_hint(page)
    page.click(page.find("#dismiss"))
    expect_error(outcome(), "ASK_CANCELLED")
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


# One agent id for the comment and revision tests: the second is a revision of the first's plan.
PLANNER_ID = f"planner-{os.getpid()}"


def ask_as(ctx, questions, agent_id, label="claude-code", meta=None):
    """Starts an ask as an agent with this exact id (a thread is keyed by it, or by `meta.session`);
    returns outcome()."""
    conn = ctx.conn()
    meta = dict(samples.AGENTS["coder"]["meta"], **(meta or {}))
    handle = conn.call("agents/register", {"id": agent_id, "label": label, "meta": meta})
    rid = conn.start("user-questions/ask", {"questions": questions, "agent": handle})
    return outcome_of(conn, rid)


def block_keys(page):
    return page.js(f"return [...document.querySelectorAll('{DOC} [data-block]')].map((e) => e.dataset.block)")


def block_key_of(page, text):
    """The key of the first block whose text contains `text`."""
    key = page.js(
        f"const el = [...document.querySelectorAll('{DOC} [data-block]')].find((e) => e.textContent.includes(arguments[0]));"
        "return el ? el.dataset.block : null;", text)
    assert key, f"no block with {text!r}"
    return key


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
    said = page.js("return document.querySelector('[data-qid=\"plan\"] .block-comment-btn').getAttribute('aria-label')")
    assert said == "Comment on selection (C)", said
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
    # With comments Send sends them; Approve stays Approve and says what it would drop; the option cannot be
    # chosen instead.
    assert primary(page) == {"approve": "✓ Approve plan", "send": "Send feedback · keep planning",
                             "desc": "Approving drops your feedback and 3 comments.", "submit": False,
                             "options": [["Keep planning", False, True]]}, primary(page)
    page.click(page.find(SEND))
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
    # Last round's comments: outdated beside the changed step, placed beside the unchanged line, gone listed.
    step3 = block_key_of(page, "one transaction per second")
    line6 = block_key_of(page, "outcome     TEXT NOT NULL")
    past = page.js(
        f"const doc = document.querySelector('{DOC}');"
        "const note = (sel) => { const n = doc.querySelector(sel); return n ? n.querySelector('.note-text').textContent : null; };"
        "return {outdated: note('[data-block=\"' + arguments[0] + '\"] > .plan-notes .plan-note.past.outdated'),"
        " placed: note('.plan-notes[data-for=\"' + arguments[1] + '\"] .plan-note.past.placed'),"
        " gone: [...document.querySelectorAll('[data-qid=\"plan\"] .comment-item.past.gone .comment-text')].map((e) => e.textContent)};",
        step3, line6)
    assert past == {"outdated": "Batch the inserts in one transaction per second.",
                    "placed": "Make outcome a CHECK over the five outcome names.",
                    "gone": ["Import in batches of 10k rows, as the online migration does."]}, past
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
    # The feedback sent with version 1 shows as one line of text, and all of it, rendered, on a click.
    feedback = page.js(
        "const li = [...document.querySelectorAll('.history-item.plan-thread')]"
        ".find((li) => li.textContent.includes('one transaction per second'));"
        "const b = li.querySelector('.thread-version .version-feedback'); const one = b.getBoundingClientRect().height;"
        "const line = b.querySelector('.feedback-line'); const cut = line.scrollWidth > line.clientWidth + 1;"
        "const raw = line.textContent.includes('**') || line.textContent.startsWith('>'); b.click();"
        "const full = b.querySelector('.feedback-full');"
        "return {cut, raw, grown: b.getBoundingClientRect().height > 2 * one, whole: full.scrollWidth <= full.clientWidth + 1,"
        " wide: b.getBoundingClientRect().width > 0.9 * b.parentElement.getBoundingClientRect().width,"
        " expanded: b.getAttribute('aria-expanded'), comment: full.textContent.includes('Batch the inserts'),"
        " rendered: !!full.querySelector('blockquote') && !full.textContent.includes('**')};")
    assert feedback == {"cut": True, "raw": False, "grown": True, "whole": True, "wide": True, "expanded": "true",
                        "comment": True, "rendered": True}, feedback
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
    # Approving with a comment on a single-select review (the 1 key) asks once, naming the comment; dropping it
    # approves plainly, at once.
    page.js(f"document.querySelector('{DOC}').focus()")
    page.keys("1")
    page.wait_for(".plan-notes-modal")
    asked = page.js("const m = document.querySelector('.plan-notes-modal');"
                    "return [m.querySelector('h2').textContent, [...m.querySelectorAll('button')].map((b) => b.dataset.choice)]")
    assert asked == ["Approve and drop 1 comment?", ["back", "drop"]], asked
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
    page.click(page.find(SEND))
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
    # With the feedback typed the option cannot be picked: it shows unavailable, the feedback goes back.
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-decision input.option-input').disabled") is True
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
    page.click(page.find(SEND))
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
    page.click(page.find(SEND))
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
    page.click(page.find(SEND))
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


def comment_on(ctx, text, comment):
    """Clicks the first block holding `text`, presses C, types the comment and saves it with Ctrl+Enter."""
    page = ctx.page
    page.click(page.find(f'{DOC} [data-block="{block_key_of(page, text)}"]'))
    page.keys("c")
    page.type(page.wait_for('[data-qid="plan"] .note-input'), comment)
    page.keys(ENTER, modifier=CONTROL)
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')", message="the comment was not saved")


def first_round(ctx, session, detail, comments=(), general=""):
    """Version 1 of a session's plan: comments on the blocks holding these texts, general feedback, sent with Send
    (approved with Approve when there is none); returns what the agent got."""
    page = ctx.page
    outcome = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=detail)], f"{session}-1", session)
    ctx.show("plan")
    page.wait_for(f"{DOC} [data-block]")
    for text, comment in comments:
        comment_on(ctx, text, comment)
    if general:
        page.type(page.find(FEEDBACK), general)
    page.click(page.find(SEND if comments or general else PRIMARY))
    sent = answer_of(outcome())["answers"][0]
    ctx.wait_queue(0)
    return sent


def long_steps(n=30, changed=()):
    """A plan of `n` steps, far taller than the window; the steps in `changed` say more in the revision."""
    steps = [f"{i}. Move table {i} to the new store and check its row count"
             + (" twice, then drop the old copy" if i in changed else "") for i in range(1, n + 1)]
    return "# Long migration\n\nEvery step moves one table.\n\n## Steps\n\n" + "\n".join(steps) + "\n"


def in_view(page, selector):
    return page.js(
        "const el = document.querySelector(arguments[0]); if (!el) return null;"
        "const form = document.getElementById('request-form').getBoundingClientRect(); const r = el.getBoundingClientRect();"
        "return r.top >= form.top - 1 && r.bottom <= form.bottom + 1;", selector)


def current_block_text(page):
    return page.js(f"const el = document.querySelector('{DOC} .block-current');"
                   "return el ? el.textContent.replace(/\\s+/g, ' ').trim() : null;")


def test_a_revision_opens_on_its_first_change_and_n_p_walk_the_changes(ctx):
    """Version 2 of a plan taller than the window opens scrolled to its first change, selected; n and p go to the
    next and previous change (never while typing), and the side lists every change in the plan's order."""
    session = f"walk-{os.getpid()}"
    page = ctx.page
    first_round(ctx, session, long_steps(), general="Say what happens to the old copies.")
    outcome = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=long_steps(changed=(18, 25)))],
                             f"{session}-2", session)
    ctx.show("plan")
    page.until(f"return document.querySelector('{DOC} .block-current')", message="the revision opened on no block")
    assert current_block_text(page).startswith("Move table 18"), current_block_text(page)
    assert in_view(page, f"{DOC} .block-current"), "the first change is not in view"
    assert page.js("return document.getElementById('request-form').scrollTop") > 0, "the revision opened at the top"
    listed = page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .change-item')]"
                     ".map((li) => li.textContent.replace(/\\s+/g, ' ').trim())")
    assert listed == ["changed Steps › 18", "changed Steps › 25"], listed
    # The footer lists n and p with the plan's other keys.
    assert keys_hint(page) == ("J/K select a block · C comment · N/P changes · 1–2 pick · Ctrl+Enter sends · Tab moves"
                               " · Esc hides"), keys_hint(page)
    page.keys("n")
    page.until(f"const el = document.querySelector('{DOC} .block-current');"
               "return el && el.textContent.trim().startsWith('Move table 25');", message="n did not go to the next change")
    assert in_view(page, f"{DOC} .block-current")
    page.keys("p")
    assert current_block_text(page).startswith("Move table 18"), current_block_text(page)
    # Typed in a text box, n and p are letters.
    page.type(page.find(FEEDBACK), "np")
    assert page.js(f"return document.querySelector('{FEEDBACK}').value") == "np"
    assert current_block_text(page).startswith("Move table 18"), current_block_text(page)
    # The list of changes goes there too.
    page.click(page.find_all('[data-qid="plan"] .change-jump')[1])
    assert current_block_text(page).startswith("Move table 25"), current_block_text(page)
    page.js(f"document.querySelector('{FEEDBACK}').value = ''; document.querySelector('{FEEDBACK}')"
            ".dispatchEvent(new Event('input'))")
    page.click(page.find(PRIMARY))
    answer_of(outcome())
    ctx.wait_queue(0)


def test_a_changed_block_shows_its_words_old_to_new_and_last_rounds_feedback(ctx):
    """A changed step reads word by word (what went struck through, what came marked), a removed one is struck
    through where it stood, the clean plan puts the rendered block back, and the general feedback of the last
    round shows beside what changed."""
    session = f"words-{os.getpid()}"
    page = ctx.page
    first_round(ctx, session, samples.PLAN, general="Use WAL mode and keep the JSON export.")
    outcome = ask_in_session(ctx, samples.PLAN_REVIEW_REVISED, f"{session}-2", session)
    ctx.show("plan")
    page.wait_for('[data-qid="plan"] .revision-bar')
    step3 = block_key_of(page, "one transaction per second")
    words = page.js(
        f"const el = document.querySelector('{DOC} [data-block=\"' + arguments[0] + '\"]');"
        "const runs = (sel) => [...el.querySelectorAll('.word-diff ' + sel)].map((e) => e.textContent);"
        "return {went: runs('del'), came: runs('ins'), code: el.querySelectorAll('code').length,"
        " html: [...el.querySelectorAll('.word-diff *')].every((e) => e.children.length === 0)};", step3)
    # Only words came: the step is the old one with " inside one transaction per second" put in.
    assert words["came"] == [" inside one transaction per second"] and words["went"] == [], words
    # Inline code reads as code, without its backticks; nothing else is markup.
    shown = page.js(f"const el = document.querySelector('{DOC} [data-block=\"' + arguments[0] + '\"] .word-diff');"
                    "return {text: el.textContent, code: [...el.querySelectorAll('code')].map((c) => c.textContent),"
                    " tags: [...el.querySelectorAll('*')].map((e) => e.tagName + e.children.length)};", step3)
    assert "`" not in shown["text"], shown
    assert shown["code"] == ["Journal::append", "INSERT", "synchronous=FULL"], shown
    assert set(shown["tags"]) <= {"CODE0", "DEL0", "INS0", "DEL1", "INS1"}, shown
    asked = page.js("const a = document.querySelector('[data-qid=\"plan\"] .revision-bar .revision-asked');"
                    "return a ? a.textContent : null")
    assert asked == "You asked last timeUse WAL mode and keep the JSON export.", asked
    removed = page.js(f"const r = document.querySelector('{DOC} .diff-removed .ghost-text');"
                      "return [r.textContent, getComputedStyle(r).textDecorationLine]")
    assert "one-time importer" in removed[0] and removed[1] == "line-through", removed
    ctx.shot("plan-revision")
    # The clean plan: the rendered step (its inline code) is back, no word diff left.
    page.click(page.find('[data-qid="plan"] .revision-toggle'))
    clean = page.js(f"const el = document.querySelector('{DOC} [data-block=\"' + arguments[0] + '\"]');"
                    "return [el.querySelectorAll('code').length, document.querySelectorAll('.word-diff').length]", step3)
    assert clean[0] >= 2 and clean[1] == 0, clean
    page.click(page.find('[data-qid="plan"] .revision-toggle'))
    page.until("return document.querySelectorAll('.word-diff').length === 1", message="the word diff did not come back")
    page.click(page.find(PRIMARY))
    answer_of(outcome())
    ctx.wait_queue(0)


TABLE_V1 = ("# Plan\n\n## Steps\n\n1. Import the records\n\n## Risks\n\n| Risk | Likelihood | Mitigation |\n|---|---|---|\n"
            "| Importer fails on a torn line | low | skip and log it |\n")
TABLE_V2 = TABLE_V1.replace(
    "skip and log it |",
    "skip the torn line, log its offset and the bytes around it, count the skipped lines in `askdesk doctor`, "
    "and stop the import after a hundred of them so a corrupt journal is never half imported silently |")


def test_after_a_round_of_comments_you_asked_last_time_shows_them_and_a_row_s_diff_wraps(ctx):
    """A round of comments without general feedback: the revision's "You asked last time" says those comments;
    a table row changed by a long cell reads word by word in a line that wraps inside the table."""
    session = f"rows-{os.getpid()}"
    page = ctx.page
    first_round(ctx, session, TABLE_V1, comments=[("Import the records", "What about many torn lines?")])
    outcome = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=TABLE_V2)], f"{session}-2", session)
    ctx.show("plan")
    page.wait_for('[data-qid="plan"] .revision-bar')
    asked = page.until("const a = document.querySelector('[data-qid=\"plan\"] .revision-bar .asked-text');"
                       "return a ? a.textContent : null", message="no \"You asked last time\" after a round of comments")
    assert asked == "Steps › 1: What about many torn lines?", asked
    row = page.until(f"return document.querySelector('{DOC} .word-diff-row')", message="no word diff under the row")
    sizes = page.js(f"const table = document.querySelector('{DOC} table'); const cell = arguments[0].querySelector('td');"
                    "return {table: [table.scrollWidth, table.clientWidth], cell: cell.getBoundingClientRect().width,"
                    " lines: Math.round(cell.getBoundingClientRect().height / parseFloat(getComputedStyle(cell).lineHeight)),"
                    " code: [...cell.querySelectorAll('code')].map((c) => c.textContent)};", row)
    assert sizes["table"][0] <= sizes["table"][1] + 1, f"the row's diff widens the table: {sizes}"
    assert sizes["lines"] >= 2, f"the row's diff does not wrap: {sizes}"
    assert sizes["code"] == ["askdesk doctor"], sizes
    ctx.shot("plan-row-diff")
    page.click(page.find(PRIMARY))
    answer_of(outcome())
    ctx.wait_queue(0)


OUTDATED_V1 = ("# Plan\n\n## Steps\n\n1. Read the journal once\n2. Write the schema by hand\n"
               "3. Switch the writer\n")
OUTDATED_V2 = ("# Plan\n\n## Steps\n\n1. Read the journal once, in pages\n2. Write the schema with a migration tool\n"
               "3. Switch the writer\n")


def test_an_outdated_comment_can_be_resolved_or_carried_forward(ctx):
    """Last round's comments on blocks that changed are "Outdated", not taken as addressed: one resolved leaves
    the thread, one carried forward becomes this round's comment and goes back with the feedback. A changed block
    with a comment shows both marks, told apart; the question asked on approval is drawn over everything."""
    session = f"outdated-{os.getpid()}"
    page = ctx.page
    first_round(ctx, session, OUTDATED_V1, comments=[("Read the journal once", "Read it in pages."),
                                                     ("Write the schema by hand", "Use a migration tool.")])
    outcome = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=OUTDATED_V2)], f"{session}-2", session)
    ctx.show("plan")
    page.wait_for('[data-qid="plan"] .plan-note.past')
    notes = page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .plan-note.past')]"
                    ".map((n) => [n.querySelector('.pill').textContent, n.querySelector('.note-text').textContent])")
    assert notes == [["Outdated", "Read it in pages."], ["Outdated", "Use a migration tool."]], notes
    assert "Addressed" not in page.js("return document.querySelector('[data-qid=\"plan\"]').textContent")
    page.click(page.find('[data-qid="plan"] .plan-note.past[data-past="0"] .past-resolve'))
    page.until("return !document.querySelector('[data-qid=\"plan\"] .plan-note.past[data-past=\"0\"]')",
               message="the resolved comment stayed")
    page.click(page.find('[data-qid="plan"] .plan-note.past[data-past="1"] .past-carry'))
    page.until("return !document.querySelector('[data-qid=\"plan\"] .plan-note.past')"
               " && document.querySelectorAll('[data-qid=\"plan\"] .comment-item:not(.past)').length === 1",
               message="the carried comment did not become this round's")
    # The backend keeps what was done: the view read again says so.
    states = page.js("return window.__TAURI__.core.invoke('get_queue').then((q) =>"
                     " q[0].questions[0].revision.comments.map((c) => c.state))")
    assert states == ["resolved", "carried"], states
    # The carried comment's block changed and has a comment: an amber bar on the left, a comment mark on the right.
    step2 = block_key_of(page, "migration tool")
    runs = page.js(f"return [...document.querySelectorAll('{DOC} [data-block=\"' + arguments[0] + '\"] .word-diff > *')]"
                   ".map((e) => e.tagName + ' ' + e.textContent)", step2)
    assert runs == ["DEL by hand", "INS with a migration tool"], runs
    marks = page.js(
        f"const el = document.querySelector('{DOC} [data-block=\"' + arguments[0] + '\"]');"
        "const colour = (name) => { const p = document.createElement('span'); p.style.color = 'var(' + name + ')';"
        " document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; };"
        "const after = getComputedStyle(el, '::after');"
        "return {changed: el.classList.contains('diff-changed'), bar: getComputedStyle(el).boxShadow.includes(colour('--warn')),"
        " mark: after.content !== 'none' && after.backgroundColor === colour('--accent'), right: parseFloat(after.right) < 0};",
        step2)
    assert marks == {"changed": True, "bar": True, "mark": True, "right": True}, marks
    ctx.shot("plan-outdated", scroll_to=f'{DOC} h2')
    # The question asked on approval covers the revision bar and the comment button.
    page.js(f"document.querySelector('{DOC}').focus()")
    page.keys("1")
    page.wait_for(".plan-notes-modal")
    covered = page.js(
        "const hit = (sel) => { const el = document.querySelector(sel); if (!el || el.hidden) return 'absent';"
        " const r = el.getBoundingClientRect(); const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        " return Boolean(top && top.closest('.plan-notes-modal')); };"
        "return {bar: hit('[data-qid=\"plan\"] .revision-bar'), button: hit('[data-qid=\"plan\"] .block-comment-btn')};")
    assert covered == {"bar": True, "button": True}, covered
    page.keys(ESCAPE)
    page.until("return !document.querySelector('.plan-notes-modal')")
    page.click(page.find(SEND))
    got = answer_of(outcome())["answers"][0]
    assert got == {"id": "plan", "selected": [],
                   "custom": "> **Steps › 2**\n> Write the schema with a migration tool\n\nUse a migration tool."}, got
    ctx.wait_queue(0)


def test_after_carry_forward_approve_still_approves_by_mouse(ctx):
    """Carrying last round's comment forward makes it feedback, but the button under the pointer does not change
    meaning: Approve still reads and does Approve (asking first, by name, before it drops the comment), and Send
    feedback appears under the feedback box. Every step is a WebDriver click on the real button, which fails if
    anything covers it."""
    session = f"carry-{os.getpid()}"
    page = ctx.page
    first_round(ctx, session, OUTDATED_V1, comments=[("Write the schema by hand", "Use a migration tool."),
                                                     ("Switch the writer", "Behind a flag.")])
    outcome = ask_in_session(ctx, [dict(samples.PLAN_REVIEW[0], detail=OUTDATED_V2)], f"{session}-2", session)
    ctx.show("plan")
    page.wait_for('[data-qid="plan"] .plan-note.past')
    before = page.js(f"return document.querySelector('{PRIMARY}').getBoundingClientRect().toJSON()")
    for index in ("0", "1"):
        past = f'[data-qid="plan"] .plan-note.past[data-past="{index}"]'
        page.click(page.find(f"{past} .past-carry"))
        # The notes are drawn again once the backend has it: the next one is found after that.
        page.until("return !document.querySelector(arguments[0])", past, message=f"comment {index} was not carried")
    page.until("return document.querySelectorAll('[data-qid=\"plan\"] .comment-item:not(.past)').length === 2",
               message="the carried comments did not become this round's")
    assert primary(page) == {"approve": "✓ Approve plan", "send": "Send feedback · keep planning",
                             "desc": "Approving drops 2 comments.", "submit": False,
                             "options": [["Keep planning", False, True]]}, primary(page)
    after = page.js(f"return document.querySelector('{PRIMARY}').getBoundingClientRect().toJSON()")
    assert (after["x"], after["y"], after["width"]) == (before["x"], before["y"], before["width"]), (before, after)
    page.type(page.find(FEEDBACK), "Keep the importer.")
    ctx.shot("plan-buttons", top=True)
    # Approve, clicked: it asks, naming what it would drop; Go back sends nothing and keeps everything.
    page.click(page.find(PRIMARY))
    page.wait_for(".plan-notes-modal")
    title = page.js("return document.querySelector('.plan-notes-modal h2').textContent")
    assert title == "Approve and drop your feedback and 2 comments?", title
    page.click(page.find('.plan-notes-modal [data-choice="back"]'))
    page.until("return !document.querySelector('.plan-notes-modal')", message="Go back did not close the question")
    assert ctx.queue_count() == 1, "going back sent something"
    assert primary(page)["send"] == "Send feedback · keep planning", primary(page)
    # Clicked again and confirmed: an approval, nothing else.
    page.click(page.find(PRIMARY))
    page.click(page.wait_for('.plan-notes-modal [data-choice="drop"]'))
    assert answer_of(outcome()) == {"answers": [{"id": "plan", "selected": ["Approve plan (Recommended)"]}]}
    ctx.wait_queue(0)


def test_the_plan_gets_the_room_in_a_small_window(ctx):
    """Below about 900 px the queue folds away (the ☰ button shows it); the plan comes before the decision and
    takes the width; a table scrolls inside its block; a comment on a table row keeps its buttons in its card,
    the editor's buttons stay on one line, and the comment button covers no text. In a short window the
    revision bar scrolls with the plan rather than covering it."""
    page = ctx.page
    before = page.window_rect()
    # A plan asked again after feedback comes with its revision bar.
    session = {"session": "small-window"}
    outcome = ask_as(ctx, samples.PLAN_REVIEW, "small-window-1", meta=session)
    ctx.show("plan")
    page.type(page.find(FEEDBACK), "Measure the binary first.")
    page.click(page.find(SEND))
    answer_of(outcome())
    ctx.wait_queue(0)
    outcome = ask_as(ctx, samples.PLAN_REVIEW, "small-window-2", meta=session)
    try:
        ctx.show("plan")
        page.wait_for('[data-qid="plan"] .revision-bar')
        # At the default size the plan has most of the request's width: twice the decision column's, at least.
        wide = page.js("const w = (s) => document.querySelector('[data-qid=\"plan\"] ' + s).getBoundingClientRect().width;"
                       "return [w('.plan-main'), w('.plan-side'), innerWidth];")
        assert wide[0] >= 2 * wide[1] and wide[0] >= wide[2] / 2, wide
        width, height = set_window_size(page, 640, 420)
        assert width <= 680 and height <= 460, (width, height)
        row = block_key_of(page, "Binary grows")
        cell = f'{DOC} [data-block="{row}"] td'
        page.js("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", cell)
        page.click(page.find(cell))
        page.keys("c")
        page.wait_for('[data-qid="plan"] .note-input')
        editor = page.js(
            "const one = (sel) => { const b = document.querySelector(sel); return b.getBoundingClientRect().height < 40; };"
            "return {save: one('[data-qid=\"plan\"] .note-save'), cancel: one('[data-qid=\"plan\"] .note-cancel')};")
        assert editor == {"save": True, "cancel": True}, editor
        page.type(page.find('[data-qid="plan"] .note-input'), "Measure it on the release build.")
        page.keys(ENTER, modifier=CONTROL)
        page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')")
        page.js("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", cell)
        page.click(page.find(cell))
        layout = page.js(
            "const r = (el) => el.getBoundingClientRect(); const q = (s) => document.querySelector('[data-qid=\"plan\"] ' + s);"
            "const main = r(q('.plan-main')); const table = q('.plan-doc table');"
            "const note = r(q('.note-row .plan-note')); const remove = r(q('.note-row .note-remove'));"
            "const button = r(q('.block-comment-btn')); const block = r(q('.plan-doc .block-current'));"
            "return {queue: r(document.querySelector('.sidebar')).right <= 1, planFirst: main.top < r(q('.plan-decision')).top,"
            " planWide: main.width >= innerWidth - 80, tableInside: r(table).right <= main.right + 0.5,"
            " tableScrolls: getComputedStyle(table).overflowX === 'auto',"
            " removeInside: remove.right <= note.right + 0.5 && remove.left >= note.left - 0.5,"
            " buttonClear: button.right <= block.left + 0.5,"
            " barScrolls: getComputedStyle(q('.revision-bar')).position === 'static',"
            " page: document.documentElement.scrollWidth <= document.documentElement.clientWidth};")
        assert layout == {"queue": True, "planFirst": True, "planWide": True, "tableInside": True, "tableScrolls": True,
                          "removeInside": True, "buttonClear": True, "barScrolls": True, "page": True}, layout
        ctx.shot("plan-small", x_window=True)
        # The folded queue opens over the page and closes on a pick.
        page.click(page.find("#queue-toggle"))
        page.until("return document.querySelector('.sidebar').getBoundingClientRect().left >= 0",
                   message="the queue did not unfold")
        page.click(page.find(".queue-item"))
        page.until("return document.querySelector('.sidebar').getBoundingClientRect().right <= 1",
                   message="the queue did not fold after a pick")
    finally:
        set_window_size(page, before["width"], before["height"])
    page.click(page.find(SEND))
    answer_of(outcome())
    ctx.wait_queue(0)


def test_esc_in_a_comment_leaves_the_box_and_keeps_the_words(ctx):
    """Esc in a comment being written leaves the box with the words kept (the editor stays, Ctrl+Enter in it
    still saves); Esc in an empty comment closes it; only Cancel throws typed words away."""
    outcome = ask_as(ctx, samples.PLAN_REVIEW, f"esc-{os.getpid()}")
    ctx.show("plan")
    page = ctx.page
    page.click(page.find(f'{DOC} [data-block="{block_key_of(page, "prepared")}"]'))
    page.keys("c")
    box = page.wait_for('[data-qid="plan"] .note-input')
    page.type(box, "Batch the inserts.")
    page.keys(ESCAPE)
    kept = page.js("const b = document.querySelector('[data-qid=\"plan\"] .note-input');"
                   "return b ? [b.value, document.activeElement === b] : null;")
    assert kept == ["Batch the inserts.", False], kept
    assert ctx.queue_count() == 1, "Esc hid or answered the request"
    page.click(box)
    page.keys(ENTER, modifier=CONTROL)
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')", message="the comment was not saved")
    texts = page.js("return [...document.querySelectorAll('[data-qid=\"plan\"] .comment-item .comment-text')].map((e) => e.textContent)")
    assert texts == ["Batch the inserts."], texts
    # An empty editor closes on Esc.
    page.click(page.find(f'{DOC} [data-block="{block_key_of(page, "prepared")}"]'))
    page.keys("c")
    page.wait_for('[data-qid="plan"] .note-input')
    page.keys(ESCAPE)
    page.until("return !document.querySelector('[data-qid=\"plan\"] .note-input')", message="Esc left an empty editor open")
    page.click(page.find("#dismiss"))
    expect_error(outcome(), "ASK_CANCELLED")
    ctx.wait_queue(0)

