"""askdesk desktop tests: history and past answers.

The memory hint, who answered, filters, a long journal.
"""
import queue
import re
import threading
import time

from harness import (
    answer_of, expect_error, filter_history, human_answers, journal_path, journal_record, load_rules, no_rules,
    rule_names,
)
import samples
from webdriver import element_id


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

    # Whether the card held its hint when it entered the page: a hint added later would move the options
    # under the pointer.
    page.js("window.firstDraw = null; const seen = new MutationObserver(() => {"
            " const card = document.querySelector('[data-qid=\"rebase\"]');"
            " if (card && window.firstDraw === null) { window.firstDraw = Boolean(card.querySelector('.memory-hint')); seen.disconnect(); }"
            "}); seen.observe(document.body, {childList: true, subtree: true});")
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("rebase")
    assert page.js("return window.firstDraw") is True, "the hint came after the question was drawn"
    hint = page.until("return document.querySelector('[data-qid=\"rebase\"] .memory-hint')", message="no memory hint")
    said = page.text(element_id(hint))
    # Today's answer says "today", not the date.
    assert said == "You answered Merge today Use again", said
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


def test_the_memory_line_names_the_rule_that_answered(ctx):
    """A question a rule answered before says so under it, "Rule “prune” answered Delete them today": who answered,
    the label without "(Recommended)", the day without its year. Use again selects the label as it was sent."""
    text = "Delete the 9 branches merged into main?"
    questions = [{"id": "prune", "question": text,
                  "options": [{"label": "Delete them (Recommended)"}, {"label": "Keep them"}]}]
    load_rules(ctx, '[[rule]]\nname = "prune"\nmatch.question = "^Delete the 9 branches merged"\nanswer = "Delete them"\n',
               lambda s: rule_names(s) == [("prune", "on")])
    try:
        _, _, outcome = ctx.ask(questions, agent="coder")
        assert answer_of(outcome()) == {"answers": [{"id": "prune", "selected": ["Delete them (Recommended)"]}]}
        assert journal_record(text)["answerer"] == "rule:prune"
    finally:
        no_rules(ctx)
    page = ctx.page
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("prune")
    hint = page.until("return document.querySelector('[data-qid=\"prune\"] .memory-hint')", message="no memory hint")
    said = page.text(element_id(hint))
    assert said == "Rule “prune” answered Delete them today Use again", said
    page.click(page.find('[data-qid="prune"] .use-again'))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "prune", "selected": ["Delete them (Recommended)"]}]}
    ctx.wait_queue(0)


def settle_one_of_each(ctx):
    """Settles a request of each outcome History tells apart, the late answer last: answered (by the
    human, for review-bot), dismissed, withdrawn by the asker, and answered after it was withdrawn."""
    page = ctx.page
    _, _, outcome = ctx.ask(samples.SINGLE, agent="reviewer")
    ctx.show("migrate")
    page.click(ctx.option("migrate", "Offline, in one transaction"))
    page.click(page.find("#submit"))
    answer_of(outcome())
    ctx.wait_queue(0)
    _, _, outcome = ctx.ask(samples.SINGLE, agent="coder")
    ctx.show("migrate")
    page.click(page.find("#dismiss"))
    expect_error(outcome(), "ASK_CANCELLED")
    ctx.wait_queue(0)
    for qid, late in (("history-withdrawn", False), ("history-late", True)):
        conn, rid, outcome = ctx.ask([{"id": qid, "question": "Still there?", "options": [{"label": "Yes"}]}])
        ctx.show(qid)
        request = page.js("return Number(document.querySelector('.queue-item.active').dataset.request)")
        conn.notify("$/cancelRequest", {"id": rid})
        expect_error(outcome(), "ASK_ABORTED")
        ctx.wait_queue(0)
        if late:
            result = page.js(
                "return window.__TAURI__.core.invoke('submit', {request: arguments[0],"
                " answer: {answers: [{id: arguments[1], selected: ['Yes']}]}}).then(() => 'ok', (e) => e.kind);",
                request, qid)
            assert result == "late", result


def test_history_lists_settled_requests_with_filters(ctx):
    page = ctx.page
    settle_one_of_each(ctx)
    page.click(page.find("#nav-history"))
    # The late answer is on disk, but the view learns of it by "history-changed", which the desktop
    # thread emits after: wait for it rather than race it.
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
    # The outcome filter offers what the backend calls each outcome.
    offered = page.js("return [...document.getElementById('history-outcome').options].map((o) => [o.value, o.textContent])")
    assert offered == [["", "All outcomes"], ["answered", "Answered"], ["dismissed", "Dismissed"], ["withdrawn", "Withdrawn"],
                       ["failed", "Failed"], ["late-answer", "Late answer"]], offered
    # A withdrawn ask reads as withdrawn: no error code or message beside it.
    withdrawn = page.js("const li = document.querySelector('.history-item[data-outcome=\"withdrawn\"]');"
                        "return {pill: li.querySelector('.pill.outcome').textContent, error: !!li.querySelector('.history-error'),"
                        " text: li.textContent};")
    assert withdrawn["pill"] == "Withdrawn" and not withdrawn["error"], withdrawn
    assert "ASK_ABORTED" not in withdrawn["text"] and "aborted" not in withdrawn["text"], withdrawn
    # Entries are grouped under their day, today's first.
    days = page.js("return [...document.querySelectorAll('#history-list > li')].slice(0, 2).map((li) => [li.className, li.textContent])")
    assert days[0] == ["history-day", "Today"] and "history-item" in days[1][0], days
    ctx.shot("history")
    page.click(page.find("#nav-queue"))


SHOWN_QUESTIONS = "return [...document.querySelectorAll('.history-item dt')].map((e) => e.textContent)"


def search_history(page, text, until):
    """Types `text` into History's search as the person does and waits until the questions shown satisfy
    `until` (a reload for another reason, a new journal line, may come first); fails naming what showed."""
    page.js("const s = document.getElementById('history-search'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'));", text)
    deadline = time.time() + 10
    while True:
        shown = page.js(SHOWN_QUESTIONS)
        if until(shown):
            return shown
        assert time.time() < deadline, f"searching {text!r} showed {shown}"
        time.sleep(0.1)


def test_history_search_finds_questions_and_answers_by_their_words(ctx):
    """The search box finds entries by every word typed, in any case, in the question, the options or the
    answer; clearing it shows everything again."""
    page = ctx.page
    human_answers(ctx, [{"id": "db", "question": "Which database for the tide tables?",
                         "options": [{"label": "Postgres"}, {"label": "SQLite"}]}], "SQLite")
    human_answers(ctx, [{"id": "port", "question": "Which port for the harbour service?",
                         "options": [{"label": "8080"}, {"label": "9090"}]}], "9090")
    journal_record("Which port for the harbour service?")
    try:
        page.click(page.find("#nav-history"))
        page.wait_for(".history-item")
        tide, port = "Which database for the tide tables?", "Which port for the harbour service?"
        # Each search shows other entries than the one before, so an earlier page cannot pass for it.
        search_history(page, "TIDE tables", lambda shown: shown == [tide])
        search_history(page, "harbour 9090", lambda shown: shown == [port])
        search_history(page, "sqlite database", lambda shown: shown == [tide])
        # The words found are marked where they show, in any case: in the question and in the answer.
        marks = page.js("const item = [...document.querySelectorAll('.history-item')].find((i) => i.querySelector('dt'));"
                        "return [...item.querySelectorAll('mark.search-hit')].map((m) =>"
                        " [m.closest('dt') ? 'question' : m.closest('dd') ? 'answer' : 'other', m.textContent])")
        assert marks == [["question", "database"], ["answer", "SQLite"]], marks
        # Under "Today" an entry says only its time; the day is the group's.
        when = page.js("const w = document.querySelector('.history-item .history-when'); return [w.textContent, w.title]")
        assert not re.search(r"\d{4}", when[0]) and re.search(r"\d{4}", when[1]), when
        search_history(page, "tide harbour", lambda shown: shown == [])
        assert page.text(page.find(".history-empty")) == "Nothing matches."
        search_history(page, "tide", lambda shown: shown == [tide])
        ctx.shot("history-search", x_window=True)
        search_history(page, "", lambda shown: tide in shown and port in shown and len(shown) > 2)
    finally:
        page.js("const s = document.getElementById('history-search'); s.value = '';")
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
        # The filter offers each answerer by the journal's name for it, and shows History's.
        choices = page.js("return [...document.getElementById('history-answerer').options].map((o) => [o.value, o.textContent])")
        assert choices[1] == ["desktop", "you"] and ["rule:tidy", "rule:tidy"] in choices, choices
        filter_history(page, "history-answerer", "rule:tidy")
        tags = page.js("return [...document.querySelectorAll('.history-item .pill.answerer')].map((e) => e.textContent)")
        kept = page.js("return document.querySelectorAll('.history-item').length")
        assert tags == ["by rule:tidy"] and kept == 1, (tags, kept)
        filter_history(page, "history-answerer", "desktop")
        tags = page.js("return [...document.querySelectorAll('.history-item .pill.answerer')].map((e) => e.textContent)")
        assert tags and set(tags) == {"by you"}, tags
        filter_history(page, "history-answerer", "")
        ctx.shot("history-answerer", x_window=True)
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


LONG_LABEL = "A very long agent label that describes the agent in too much detail, twice over, to test layout"


def test_history_filters_stay_in_the_window_with_a_long_agent_label(ctx):
    """An agent's long label shows whole in the Agent filter, and every filter stays inside the window."""
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
        whole = page.js("const s = document.getElementById('history-agent');"
                        "return s.scrollWidth <= s.clientWidth && s.getBoundingClientRect().width > arguments[0] * 5;",
                        len(LONG_LABEL))
        assert whole, "the chosen agent's label is cut in its filter"
        ctx.shot("history-long-label", x_window=True)
        filter_history(page, "history-agent", "")
    finally:
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
