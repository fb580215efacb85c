"""askdesk desktop tests: the answer rules in the app.

Deadlines, rules made from answers, shadow suggestions, the Rules view.
"""
import json
import os
import re
import subprocess
import time

from harness import (
    answer_of, closed_on_bus_eventually, dbus, expect_error, human_answers, journal_lines, journal_record, load_rules, no_rules, notify_actions, put_rules,
    read_rules,
    rule_names, rule_preview, rules_path, rules_state,
)
from webdriver import ENTER, element_id


CLEANUP = [{
    "id": "cleanup",
    "header": "Cleanup",
    "question": "Delete the 14 stale feature branches?",
    "options": [{"label": "Yes"}, {"label": "No"}],
}]


def write_rules(text):
    """Writes the app's rules file and waits past two polls of the engine (it polls every 2 s)."""
    folder = os.path.join(os.environ["XDG_CONFIG_HOME"], "askdesk")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "rules.toml"), "w", encoding="utf-8") as f:
        f.write(text)
    time.sleep(4.5)


def test_rule_deadline_counts_down_in_the_dialog(ctx):
    """A rule with `after` shows its name, its action and a time left that decreases; the human still answers."""
    write_rules('[[rule]]\nname = "cleanup later"\nmatch = { header = "Cleanup" }\nanswer = "No"\nafter = "10m"\n')
    try:
        _, _, outcome = ctx.ask(CLEANUP, agent="coder")
        ctx.show("cleanup")
        page = ctx.page
        line = page.until("return document.querySelector('#asker .rule-deadline .rule-text')", message="no rule deadline shown")
        text = page.text(element_id(line))
        assert 'Rule “cleanup later” will answer "No" in ' in text, text
        assert text.endswith("unless you answer"), text

        def left():
            m = re.fullmatch(r"(\d+):(\d\d)", page.js("return document.querySelector('#asker .rule-left').textContent"))
            assert m, "the time left is not m:ss"
            return int(m.group(1)) * 60 + int(m.group(2))
        first = left()
        assert 570 <= first <= 600, first
        time.sleep(2.2)
        second = left()
        assert 1 <= first - second <= 4, (first, second)
        ctx.shot("rule-countdown", top=True)
        page.click(ctx.option("cleanup", "Yes"))
        page.click(page.find("#submit"))
        got = answer_of(outcome())
        assert got == {"answers": [{"id": "cleanup", "selected": ["Yes"]}]}, got
    finally:
        write_rules("")


NOTE = "Rule “prune” answered claude-code's question “Delete the 14 stale feature branches?”: Delete them."
PRUNE = [dict(CLEANUP[0], options=[{"label": "Delete them (Recommended)"}, {"label": "Keep them"}])]


def notes_shown(page):
    return page.js("return [...document.querySelectorAll('#rule-notes:not([hidden]) .rule-note-text')].map((n) => n.textContent)")


def test_a_rule_answering_at_its_deadline_leaves_a_lasting_note(ctx):
    """When a rule's `after` time passes, a note names the rule, the question and the exact answer sent (not
    the rule's "the recommended option", not a withdrawal) and stays, in the app rather than the page: a page
    built again shows it, until it is closed. A notification says the same at once, and the note's link opens
    History on the request's entry."""
    write_rules('[[rule]]\nname = "prune"\nmatch = { header = "Cleanup" }\nanswer = { recommended = true }\nafter = "3s"\n')
    try:
        _, _, outcome = ctx.ask(PRUNE, agent="coder")
        ctx.show("cleanup")
        got = answer_of(outcome(timeout=15))
        assert got == {"answers": [{"id": "cleanup", "selected": ["Delete them (Recommended)"]}]}, got
        page = ctx.page
        page.until("return document.querySelector('#rule-notes:not([hidden]) .rule-note')",
                   message="no note when the rule answered")
        assert notes_shown(page) == [NOTE], notes_shown(page)
        nid = ctx.notification_id("Rule “prune” answered: Delete them")
        log = ctx.bus_log()
        assert "claude-code asked: Delete the 14 stale feature branches?" in log, log[-2000:]
        ctx.shot("rule-answered", whole_screen=True)
        # The window alone, once the notification (drawn over its corner) is closed.
        dbus("--dest=org.freedesktop.Notifications", "/org/freedesktop/Notifications",
             "org.freedesktop.Notifications.CloseNotification", f"uint32:{nid}")
        assert closed_on_bus_eventually(ctx, nid), f"notification {nid} was not closed"
        ctx.shot("rule-note", x_window=True)
        # The link opens History scrolled to the request's entry, answered by the rule.
        page.click(page.find("#rule-notes .note-history"))
        entry = page.until("const e = document.querySelector('#history-list .history-item.sought');"
                           " return e && !document.getElementById('view-history').hidden &&"
                           " {by: e.querySelector('.pill.answerer').textContent, q: e.querySelector('dt').textContent}",
                           message="History did not open on the rule's entry")
        assert entry == {"by": "by rule:prune", "q": "CleanupDelete the 14 stale feature branches?"}, entry
        page.click(page.find("#nav-queue"))
        assert nid
        # The page built again (as after a dropped window) shows it still; the old page is not taken for it.
        page.js("document.body.dataset.ready = 'reloading'; window.location.reload()")
        page.until("return document.body.dataset.ready === 'true' && document.querySelector('#rule-notes .rule-note')",
                   timeout=20, message="the note did not survive a new page")
        assert notes_shown(page) == [NOTE], notes_shown(page)
        page.click(page.find("#rule-notes .note-close"))
        page.until("return document.getElementById('rule-notes').hidden", message="the closed note stayed")
        assert page.js("return window.__TAURI__.core.invoke('get_notes')") == []
    finally:
        write_rules("")


def test_a_rule_answering_a_permission_prompt_at_once_says_so(ctx):
    """A permission prompt a rule answers as it is asked never shows a dialog, but the person is told: a
    notification and a note name the rule and the answer it sent. Another question a rule answers at once
    (no tool is at stake) is not announced."""
    write_rules('[[rule]]\nname = "always"\nmatch.agent = "plain-asker"\nanswer = "Yes"\n\n'
                '[[rule]]\nname = "tests"\nmatch = { tool = "Bash", command = "cargo test*" }\nanswer = "Allow"\n')
    try:
        conn = ctx.conn()
        plain = conn.call("agents/register", {"id": "plain-asker", "label": "Claude Code", "meta": {}})
        got = conn.call("user-questions/ask", {"agent": plain, "questions": [{
            "id": "plain", "question": "Go on?", "options": [{"label": "Yes"}, {"label": "No"}]}]})
        assert got == {"answers": [{"id": "plain", "selected": ["Yes"]}]}, got
        agent = conn.call("agents/register", {"id": "claude-perm", "label": "Claude Code",
                                               "meta": {"tool": "Bash", "command": "cargo test -p shop", "via": "hook"}})
        got = conn.call("user-questions/ask", {"agent": agent, "questions": [{
            "id": "permission", "question": "Allow Bash: cargo test -p shop?",
            "options": [{"label": "Allow"}, {"label": "Deny"}]}]})
        assert got == {"answers": [{"id": "permission", "selected": ["Allow"]}]}, got
        ctx.notification_id("Rule “tests” answered: Allow")
        page = ctx.page
        page.until("return document.querySelector('#rule-notes:not([hidden]) .rule-note')",
                   message="no note when the rule answered the prompt")
        # Only the prompt's note: the plain question's, announced before it, would be listed first.
        assert notes_shown(page) == [
            "Rule “tests” answered Claude Code's question “Allow Bash: cargo test -p shop?”: Allow."], notes_shown(page)
        assert "Rule “always” answered" not in ctx.bus_log()
        page.click(page.find("#rule-notes .note-close"))
        page.until("return document.getElementById('rule-notes').hidden", message="the closed note stayed")
    finally:
        write_rules("")


def held_outcome(outcome, seconds):
    """Whether the asker is still waiting after `seconds` (the rule must not answer a held request)."""
    try:
        box = outcome(timeout=seconds)
    except AssertionError:
        return None
    return box


def test_hold_stops_the_rule_s_clock_until_released(ctx):
    """The queue row shows a rule's deadline; the header says when the person's choice differs from the rule's;
    Hold stops the clock in the app (the rule does not act long past its time) and Release lets it act."""
    write_rules('[[rule]]\nname = "hold me"\nmatch = { header = "Cleanup" }\nanswer = "No"\nafter = "5s"\n')
    try:
        _, _, outcome = ctx.ask(CLEANUP, agent="coder")
        ctx.show("cleanup")
        page = ctx.page
        row = page.until("return document.querySelector('.queue-item .queue-rule .rule-left')",
                         message="the queue row shows no deadline")
        assert re.fullmatch(r"0:0[0-5]", page.text(element_id(row))), page.text(element_id(row))
        # The header's deadline line and its Hold come with the request's draw; read the options' places once
        # it stands, as the person sees them before a click.
        page.wait_for("#asker .rule-deadline .hold-deadline")
        where = "return [...document.querySelectorAll('[data-qid=\"cleanup\"] .option')].map((o) => o.getBoundingClientRect().top)"
        before = page.js(where)
        page.click(ctx.option("cleanup", "Yes"))
        differs = page.until("const d = document.querySelector('#asker .rule-differs'); return d && !d.hidden && d.textContent",
                             message="no word that the choice differs from the rule's")
        assert differs == "Your choice differs: you picked “Yes”, the rule will answer “No”.", differs
        # Said, it moved nothing: the options stay under the pointer.
        assert page.js(where) == before, (before, page.js(where))
        page.click(page.find("#asker .hold-deadline"))
        line = page.until("return document.querySelector('#asker .rule-deadline.held .rule-text')",
                          message="Hold did not hold the deadline")
        assert 'Rule “hold me” would answer "No": held by you with ' in page.text(element_id(line)), page.text(element_id(line))
        assert page.js("return document.querySelector('.queue-item .queue-rule').textContent") == "rule held"
        ctx.shot("rule-held", top=True)
        assert held_outcome(outcome, 8) is None, "the rule answered a held request"
        # Released, the rule acts once the time that was left has passed.
        page.click(page.find("#asker .hold-deadline"))
        got = answer_of(outcome(timeout=15))
        assert got == {"answers": [{"id": "cleanup", "selected": ["No"]}]}, got
        page.until("return document.querySelector('#rule-notes .rule-note')", message="no note")
        page.click(page.find("#rule-notes .note-close"))
        page.until("return document.getElementById('rule-notes').hidden", message="the closed note stayed")
    finally:
        write_rules("")


def test_the_notification_says_the_deadline_and_its_hold_stops_it(ctx):
    """The notification of a request a rule will answer says so and offers Hold; the action holds the clock."""
    with ctx.elsewhere():
        write_rules('[[rule]]\nname = "hold me"\nmatch = { header = "Cleanup" }\nanswer = "No"\nafter = "6s"\n')
        try:
            _, _, outcome = ctx.ask(CLEANUP, agent="reviewer")
            nid = ctx.notification_id("review-bot asks")
            ctx.show("cleanup")
            log = ctx.bus_log()
            # The time left when the notification was made: at most the rule's six seconds.
            assert re.search(r'Rule “hold me” will answer "No" in [1-6] s unless you answer\.', log), log[-2000:]
            keys = notify_actions(log, "review-bot asks")
            request = re.fullmatch(r"hold-(\d+)", keys[-1]).group(1)
            assert keys == ["default", f"choose-{request}-0", f"choose-{request}-1", f"hold-{request}"], keys
            page = ctx.page
            deadline = time.time() + 5
            while time.time() < deadline and not page.find_all("#asker .rule-deadline.held"):
                # The app subscribes to ActionInvoked right after Notify returns; repeat until it has.
                subprocess.run(["dbus-send", "--session", "--type=signal", "/org/freedesktop/Notifications",
                                "org.freedesktop.Notifications.ActionInvoked", f"uint32:{nid}", f"string:{keys[-1]}"],
                               check=True)
                time.sleep(0.3)
            page.wait_for("#asker .rule-deadline.held", timeout=2)
            ctx.shot("notification-hold", whole_screen=True)
            assert held_outcome(outcome, 8) is None, "the rule answered a request held from the notification"
            page.click(ctx.option("cleanup", "Yes"))
            page.click(page.find("#submit"))
            assert answer_of(outcome()) == {"answers": [{"id": "cleanup", "selected": ["Yes"]}]}
        finally:
            write_rules("")


def answered_by_the_rule(ctx, questions, expected):
    """Asks `questions` again: the rule answers with `expected`, no dialog; returns the rule's answerer."""
    count = len(journal_lines())
    _, _, outcome = ctx.ask(questions, agent="coder")
    got = answer_of(outcome())
    assert got == expected, got
    lines = [json.loads(line) for line in journal_lines()]
    assert len(lines) == count + 1, "one more journal record"
    record = lines[-1]
    assert record["questions"][0]["question"] == questions[0]["question"], record
    assert ctx.queue_count() == 0
    return record.get("answerer")


MY_RULES = """# My own rules: keep this comment.

[[rule]]
name = "never"   # matches nothing the suite asks
match = { header = "Nothing matches this" }
ask = true
"""


def test_always_answer_this_way_here_saves_a_rule_that_answers_next_time(ctx):
    """"Always answer this way here" previews the rule; Cancel keeps the dialog; Save submits, appends it
    to the rules file (its comments kept), and the same ask is then answered by the rule, no dialog."""
    put_rules(MY_RULES)
    text = "Run the linter on the changed files before committing?"
    questions = [{"id": "lint", "question": text, "header": "Lint", "options": [{"label": "Yes"}, {"label": "No"}]}]
    try:
        _, _, outcome = ctx.ask(questions, agent="coder")
        ctx.show("lint")
        page = ctx.page
        page.click(ctx.option("lint", "Yes"))
        page.click(page.find("#always"))
        shown = rule_preview(page)
        assert 'name = "lint"' in shown, shown
        assert 'cwd = "/home/dana/src/askdesk"' in shown and 'header = "Lint"' in shown, shown
        assert "question = '^Run the linter on the changed files before committing\\?$'" in shown, shown
        assert shown.rstrip().endswith('answer = "Yes"'), shown
        assert shown.startswith("# Made from your answer to claude-code on "), shown
        path = page.text(page.find(".rule-preview .rule-path"))
        assert path == rules_path(), path

        # Cancel: nothing saved, nothing sent, the choice still there.
        page.click(page.find(".rule-preview .rule-cancel"))
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed")
        assert read_rules() == MY_RULES
        assert ctx.queue_count() == 1
        checked = page.js("return [...document.querySelectorAll('[data-qid=\"lint\"] input:checked')].map((i) => i.value)")
        assert checked == ["Yes"], checked

        page.click(page.find("#always"))
        shown = rule_preview(page)
        ctx.shot("rule-preview")
        page.click(page.find(".rule-preview .rule-save"))
        assert answer_of(outcome()) == {"answers": [{"id": "lint", "selected": ["Yes"]}]}
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed after Save")
        saved = read_rules()
        assert saved == MY_RULES + "\n" + shown.rstrip("\n") + "\n", saved
        assert journal_record(text).get("answerer") == "desktop"
        ctx.wait_queue(0)

        assert answered_by_the_rule(ctx, questions, {"answers": [{"id": "lint", "selected": ["Yes"]}]}) == "rule:lint"
    finally:
        put_rules("")


def prune(text):
    return [{"id": "prune", "question": text, "header": "Prune", "options": [{"label": "Yes"}, {"label": "No"}]}]


def scope_choice(page, scope):
    """What the preview says of one scope: its title, count, varying parts and reason, and whether it is offered."""
    return page.js("const l = document.querySelector('.rule-preview .rule-scope[data-scope=\"' + arguments[0] + '\"]');"
                   "if (!l) return null;"
                   "const t = (c) => { const e = l.querySelector(c); return e ? e.textContent : null; };"
                   "return {title: t('.rule-scope-title'), count: t('.rule-scope-count'), why: t('.rule-scope-why'),"
                   " varies: [...l.querySelectorAll('mark.varies')].map((m) => m.textContent),"
                   " offered: !l.querySelector('input').disabled};", scope)


def matched_questions(page):
    return page.js("return [...document.querySelectorAll('.rule-preview .rule-matches-list .rule-match-question')]"
                   ".map((e) => e.textContent)")


def test_always_answer_offers_scopes_with_the_history_each_would_have_matched(ctx):
    """The preview offers this exact question, questions like it from this agent (its numbers varying) and
    every question with its header, each with the History entries it would have matched; "Try it as a shadow
    first" saves the chosen rule in shadow mode, which then suggests on a question like it."""
    put_rules(MY_RULES)
    page = ctx.page
    try:
        human_answers(ctx, prune("Prune the 3 stale worktrees?"), "Yes")
        human_answers(ctx, prune("Prune the 12 stale worktrees?"), "No")
        human_answers(ctx, prune("Prune the 4 locked worktrees?"), "Yes")
        _, _, outcome = ctx.ask(prune("Prune the 3 stale worktrees?"), agent="coder")
        ctx.show("prune")
        page.click(ctx.option("prune", "Yes"))
        page.click(page.find("#always"))
        rule_preview(page)

        exact = scope_choice(page, "exact")
        assert exact == {"title": "This exact question", "count": "1 past request", "why": None, "varies": [],
                         "offered": True}, exact
        assert matched_questions(page) == ["Prune the 3 stale worktrees?"]
        similar = scope_choice(page, "similar")
        assert similar["title"] == "Questions like it from claude-code" and similar["varies"] == ["3"], similar
        assert similar["count"] == "2 past requests", similar
        header = scope_choice(page, "header")
        assert header["title"] == "Every question headed “Prune”" and header["count"] == "3 past requests", header

        page.click(page.find('.rule-preview .rule-scope[data-scope="similar"] input'))
        assert matched_questions(page) == ["Prune the 12 stale worktrees?", "Prune the 3 stale worktrees?"]
        page.click(page.find('.rule-preview .rule-scope[data-scope="header"] input'))
        assert matched_questions(page) == ["Prune the 4 locked worktrees?", "Prune the 12 stale worktrees?",
                                           "Prune the 3 stale worktrees?"]
        page.click(page.find('.rule-preview .rule-scope[data-scope="similar"] input'))
        page.click(page.find(".rule-preview .rule-shadow"))
        shown = rule_preview(page)
        assert 'agent = "claude-code"' in shown and "question = '^Prune the [0-9]+ stale worktrees\\?$'" in shown, shown
        assert shown.rstrip().endswith('answer = "Yes"\nmode = "shadow"'), shown
        ctx.shot("rule-scopes")

        page.click(page.find(".rule-preview .rule-save"))
        assert answer_of(outcome()) == {"answers": [{"id": "prune", "selected": ["Yes"]}]}
        assert read_rules() == MY_RULES + "\n" + shown.rstrip("\n") + "\n"
        ctx.wait_queue(0)
        load_rules(ctx, read_rules(), lambda s: ("prune", "shadow") in rule_names(s))

        # A question like it is still asked, with the shadow rule's suggestion under it.
        _, _, outcome = ctx.ask(prune("Prune the 40 stale worktrees?"), agent="coder")
        ctx.show("prune")
        line = page.until("return document.querySelector('[data-qid=\"prune\"] .suggestion')", message="no suggestion shown")
        assert page.text(element_id(line)) == "Rule “prune” (shadow) suggests: Yes Use"
        page.click(ctx.option("prune", "No"))
        page.click(page.find("#submit"))
        assert answer_of(outcome()) == {"answers": [{"id": "prune", "selected": ["No"]}]}
        ctx.wait_queue(0)
    finally:
        put_rules("")


def test_an_answer_no_rule_can_give_offers_no_rule(ctx):
    """Different answers to the questions of a batch: the preview says why no rule is offered, has no Save,
    and Close leaves the dialog as it was."""
    yes_no = [{"label": "Yes"}, {"label": "No"}]
    questions = [{"id": "first", "question": "Squash the fixup commits?", "options": yes_no},
                 {"id": "second", "question": "Delete the merged branch?", "options": yes_no}]
    _, _, outcome = ctx.ask(questions, agent="coder")
    ctx.show("first")
    page = ctx.page
    page.click(ctx.option("first", "Yes"))
    page.click(ctx.option("second", "No"))
    page.click(page.find("#always"))
    said = page.until("const p = document.querySelector('.rule-preview .rule-unavailable');"
                      "return p ? p.textContent : null;", message="no reason shown")
    assert said.startswith("No rule is offered: the questions got different answers"), said
    assert page.js("return document.querySelector('.rule-preview .rule-save').hidden") is True
    # Keys stay in the preview: Tab does not reach the form behind it, a digit picks nothing there.
    page.keys("\ue004", "\ue004", "\ue004", "1")
    assert page.js("return document.querySelector('.rule-preview').contains(document.activeElement)"), \
        page.js("return document.activeElement.outerHTML")
    picked = page.js("return [...document.querySelectorAll('input.option-input:checked')].map((i) => i.value)")
    assert picked == ["Yes", "No"], picked
    ctx.shot("rule-unavailable")
    page.click(page.find(".rule-preview .rule-cancel"))
    page.until("return !document.querySelector('.rule-preview')", message="the preview stayed")
    assert ctx.queue_count() == 1
    page.click(page.find("#submit"))
    got = answer_of(outcome())
    assert got == {"answers": [{"id": "first", "selected": ["Yes"]}, {"id": "second", "selected": ["No"]}]}, got


def test_make_a_rule_from_history(ctx):
    """"Make a rule" on a History entry previews the rule of that answer; a broken rules file is reported in
    the preview and nothing is written; once fixed, Save appends the rule and the same ask is answered by it."""
    put_rules(MY_RULES)
    text = "Which changelog section should this change go under?"
    questions = [{"id": "section", "question": text}]
    page = ctx.page
    try:
        _, _, outcome = ctx.ask(questions, agent="coder")
        ctx.show("section")
        page.js("const box = document.querySelector('[data-qid=\"section\"] textarea.other-input');"
                "box.value = 'Fixed'; box.dispatchEvent(new Event('input'));")
        page.click(page.find("#submit"))
        assert answer_of(outcome()) == {"answers": [{"id": "section", "selected": [], "custom": "Fixed"}]}
        journal_record(text)
        ctx.wait_queue(0)

        page.click(page.find("#nav-history"))
        find_entry = ("return [...document.querySelectorAll('.history-item')]"
                      ".find((li) => li.querySelector('dt') && li.querySelector('dt').textContent === arguments[0]) || null;")
        entry = page.until(find_entry, text, message="no History entry for the question")
        button = page.js("return arguments[0].querySelector('.make-rule')", entry)
        assert button, "no Make a rule on an answered entry"
        ctx.shot("history-make-rule", whole_screen=True)
        page.click(element_id(button))
        shown = rule_preview(page)
        assert 'answer = { text = "Fixed" }' in shown, shown
        assert 'name = "which-changelog-section-should-this' in shown, shown

        # The file breaks while the preview is open: Save is refused, said in the preview, nothing written.
        broken = MY_RULES + "\n[[rule]]\nname = \"half\"\n"
        put_rules(broken)
        page.click(page.find(".rule-preview .rule-save"))
        error = page.until("const e = document.querySelector('.rule-preview .rule-preview-error');"
                           "return e && !e.hidden ? e.textContent : null;", message="no error in the preview")
        assert "fix it first" in error and "has no action" in error, error
        assert read_rules() == broken
        ctx.shot("rule-preview-refused", whole_screen=True)

        put_rules(MY_RULES)
        page.click(page.find(".rule-preview .rule-save"))
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed after Save")
        page.until("return document.querySelector('.make-rule:disabled') !== null", message="no sign of the saved rule")
        saved = read_rules()
        assert saved == MY_RULES + "\n" + shown.rstrip("\n") + "\n", saved
        name = re.search(r'^name = "([^"]+)"$', shown, re.M).group(1)
        page.click(page.find("#nav-queue"))

        # The same entry again: the rule just saved answers it already, so none is drafted twice.
        page.click(page.find("#nav-history"))
        # Found and clicked in one step, once History has been drawn again (the list of before, with its
        # "Rule saved", shows until then).
        page.until("const li = [...document.querySelectorAll('.history-item')]"
                   ".find((li) => li.querySelector('dt') && li.querySelector('dt').textContent === arguments[0]);"
                   "const button = li && li.querySelector('.make-rule:not(:disabled)');"
                   "if (!button) return false; button.click(); return true;",
                   text, message="no History entry for the question")
        said = page.until("const p = document.querySelector('.rule-preview .rule-unavailable');"
                          "return p ? p.textContent : null;", message="no reason in the preview")
        assert f'the rule "{name}" (line ' in said and "already answers this way here" in said, said
        assert page.js("return document.querySelector('.rule-preview .rule-save').hidden") is True
        page.click(page.find(".rule-preview .rule-cancel"))
        page.until("return !document.querySelector('.rule-preview')", message="the preview stayed")
        assert read_rules() == saved
        page.click(page.find("#nav-queue"))

        expected = {"answers": [{"id": "section", "selected": [], "custom": "Fixed"}]}
        assert answered_by_the_rule(ctx, questions, expected) == f"rule:{name}"
    finally:
        page.js("document.getElementById('nav-queue').click()")
        put_rules("")


FMT = [{"id": "fmt", "question": "Run cargo fmt on the whole workspace?",
        "options": [{"label": "Yes"}, {"label": "No"}, {"label": "Only changed files"}]}]


def test_a_shadow_rule_suggests_and_the_human_decides(ctx):
    """A shadow rule's answer is shown under the question with Use; Use selects it, nothing is sent until Submit."""
    load_rules(ctx, '[[rule]]\nname = "fmt"\nmatch.question = "^Run cargo fmt"\nanswer = "Only changed files"\nmode = "shadow"\n',
              lambda s: rule_names(s) == [("fmt", "shadow")])
    try:
        _, _, outcome = ctx.ask(FMT, agent="coder")
        ctx.show("fmt")
        page = ctx.page
        line = page.until("return document.querySelector('[data-qid=\"fmt\"] .suggestion')", message="no suggestion shown")
        said = page.text(element_id(line))
        assert said == "Rule “fmt” (shadow) suggests: Only changed files Use", said
        assert not page.js("return document.querySelector('[data-qid=\"fmt\"] input:checked')"), "selected before Use"
        ctx.shot("shadow-suggestion", top=True)
        # Enter on Use, then Enter again: Use acts once (its selection made once, "Used"), and nothing is sent.
        page.js("window.__changes = 0; document.querySelector('[data-qid=\"fmt\"]')"
                ".addEventListener('change', () => window.__changes++, true);"
                "document.querySelector('[data-qid=\"fmt\"] .use-suggestion').focus();")
        page.keys(ENTER)
        page.until("return document.querySelector('[data-qid=\"fmt\"] .use-suggestion').textContent === 'Used'",
                   message="Use did not act on Enter")
        once = page.js("return window.__changes")
        assert once > 0, once
        page.keys(ENTER)
        assert page.js("return document.activeElement.classList.contains('use-suggestion')"), "Use lost the focus"
        assert page.js("return window.__changes") == once, "a second Enter used the suggestion again"
        checked = page.js("return [...document.querySelectorAll('[data-qid=\"fmt\"] input:checked')].map((i) => i.value)")
        assert checked == ["Only changed files"], checked
        assert ctx.queue_count() == 1, "Use sent nothing"
        # A choice changed by the person makes Use ready again; a click uses it.
        page.click(ctx.option("fmt", "Yes"))
        assert page.text(page.find('[data-qid="fmt"] .use-suggestion')) == "Use"
        page.click(page.find('[data-qid="fmt"] .use-suggestion'))
        checked = page.js("return [...document.querySelectorAll('[data-qid=\"fmt\"] input:checked')].map((i) => i.value)")
        assert checked == ["Only changed files"], checked
        # The human still decides: here, something else than the suggestion.
        page.click(ctx.option("fmt", "No"))
        page.click(page.find("#submit"))
        got = answer_of(outcome())
        assert got == {"answers": [{"id": "fmt", "selected": ["No"]}]}, got
        ctx.wait_queue(0)
    finally:
        no_rules(ctx)


RULES_VIEW = """# Routine lint questions are mine to skip.
[[rule]]
name = "skip-lint"
match = { header = "Lint", cwd = "/home/dana/src" }
answer = "Skip"

# Trying this one out first.
[[rule]]
name = "fmt"
match.question = "^Run cargo fmt --check"   # only this wording
answer = "Yes"
mode = "shadow"
after = "1h30m"
"""


def rule_card(page, name):
    return page.until("return document.querySelector('#rules-list .rule-item[data-rule=\"' + arguments[0] + '\"]')",
                      name, message=f"no rule card for {name}")


def card_mode(page, name):
    return page.js("const c = document.querySelector('#rules-list .rule-item[data-rule=\"' + arguments[0] + '\"]');"
                   "return c && c.dataset.mode;", name)


def test_the_rules_view_lists_rules_counts_and_switches_their_mode(ctx):
    """Every rule in order with its match, action, after and replayed counts; a switch rewrites the file
    (comments kept) and the view shows what the engine reloaded, as it does for an edit made elsewhere."""
    load_rules(ctx, RULES_VIEW, lambda s: rule_names(s) == [("skip-lint", "on"), ("fmt", "shadow")])
    page = ctx.page
    try:
        # One request the rule settles, one the human settles as the shadow rule proposed.
        lint = [{"id": "lint", "header": "Lint", "question": "Fix the 3 clippy lints now?",
                 "options": [{"label": "Fix"}, {"label": "Skip"}]}]
        _, _, outcome = ctx.ask(lint, agent="coder")
        assert answer_of(outcome()) == {"answers": [{"id": "lint", "selected": ["Skip"]}]}
        check = [{"id": "fmt", "question": "Run cargo fmt --check before the commit?",
                  "options": [{"label": "Yes"}, {"label": "No"}]}]
        human_answers(ctx, check, "Yes")

        page.click(page.find("#nav-rules"))
        rule_card(page, "fmt")
        assert page.text(page.find("#rules-path")) == rules_path()
        rows = page.js("""return [...document.querySelectorAll('#rules-list .rule-item')].map((c) => ({
            name: c.dataset.rule, mode: c.dataset.mode,
            matches: c.querySelector('.rule-match').textContent, action: c.querySelector('.rule-action').textContent,
            after: c.querySelector('.rule-after') ? c.querySelector('.rule-after').textContent : null,
            counts: Object.fromEntries([...c.querySelectorAll('[data-count]')].map((n) => [n.dataset.count, Number(n.textContent)])),
        }))""")
        assert rows == [
            {"name": "skip-lint", "mode": "on", "matches": 'cwd under /home/dana/src, header "Lint"', "action": 'answer "Skip"',
             "after": None, "counts": {"hits": 1, "acted": 1, "agreed": 0, "differed": 0}},
            {"name": "fmt", "mode": "shadow", "matches": "question /^Run cargo fmt --check/", "action": 'answer "Yes"',
             "after": "1h30m", "counts": {"hits": 1, "acted": 0, "agreed": 1, "differed": 0}},
        ], rows
        assert not page.find_all("#rules-error:not([hidden])"), "an error shown for a good file"
        ctx.shot("rules-view", x_window=True)

        # The switch writes the file, keeping what the person wrote; the view follows the engine.
        page.click(page.find('#rules-list .rule-item[data-rule="skip-lint"] .mode-option[data-mode="off"]'))
        deadline = time.time() + 10
        while card_mode(page, "skip-lint") != "off":
            assert time.time() < deadline, "the view never showed lint off"
            time.sleep(0.2)
        with open(rules_path(), encoding="utf-8") as f:
            written = f.read()
        assert "# Routine lint questions are mine to skip." in written, written
        assert 'match.question = "^Run cargo fmt --check"   # only this wording' in written, written
        assert rule_names(rules_state(ctx)) == [("skip-lint", "off"), ("fmt", "shadow")]
        ctx.shot("rules-view-off", x_window=True)
        # Now off, the rule no longer answers: the question comes to the human.
        _, _, outcome = ctx.ask(lint, agent="coder")
        page.click(page.find("#nav-queue"))
        ctx.show("lint")
        page.click(page.find("#dismiss"))
        expect_error(outcome(), "ASK_CANCELLED")
        page.click(page.find("#nav-rules"))

        # An edit made in a text editor shows up too.
        with open(rules_path(), "w", encoding="utf-8") as f:
            f.write(written.replace('mode = "shadow"', 'mode = "on"'))
        deadline = time.time() + 15
        while card_mode(page, "fmt") != "on":
            assert time.time() < deadline, "the view never showed the edit made elsewhere"
            time.sleep(0.2)
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


BROAD_RULES = """[[rule]]
name = "any git"
match = { tool = "Bash", command = "git *" }
answer = "Allow once"

[[rule]]
name = "tests"
match = { tool = "Bash", command = "cargo test*" }
answer = "Allow once"
"""


def test_a_broad_command_allow_carries_the_warning_rules_list_prints(ctx):
    """A rule that allows any command of a program shows the one broad-allow sentence `askdesk rules
    list` prints for it; a narrow rule shows none."""
    load_rules(ctx, BROAD_RULES, lambda s: [n for n, _ in rule_names(s)] == ["any git", "tests"])
    page = ctx.page
    try:
        listed = subprocess.run([ctx.args.cli, "rules", "list"], capture_output=True, text=True, check=True,
                                env=dict(os.environ)).stdout
        printed = [line.removeprefix("warning: ") for line in listed.splitlines() if line.startswith("warning: ")]
        assert len(printed) == 1 and printed[0].startswith('rule "any git" (line 1) allows commands broadly: '), listed
        page.click(page.find("#nav-rules"))
        rule_card(page, "tests")
        shown = page.js("""return [...document.querySelectorAll('#rules-list .rule-item')].map((c) => {
            const w = c.querySelector('.rule-warning'); return w && w.textContent; })""")
        assert shown == [printed[0], None], shown
        ctx.shot("rules-view-broad", x_window=True)
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


def test_a_broken_rules_file_is_shown_and_the_last_good_rules_stay(ctx):
    """A broken file: a notice in the sidebar leads to the Rules view, which says where and what; fixed, both go."""
    good = '[[rule]]\nname = "keep"\nmatch.header = "Keep"\nanswer = "Yes"\n'
    load_rules(ctx, good, lambda s: rule_names(s) == [("keep", "on")])
    page = ctx.page
    try:
        assert not page.find_all("#rules-notice:not([hidden])"), "a notice for a good file"
        load_rules(ctx, good + 'after = "soon"\n', lambda s: s["error"] is not None, "the breakage was never seen")
        notice = page.until("return document.querySelector('#rules-notice:not([hidden])')",
                            message="no notice of the broken file")
        assert page.text(element_id(notice)) == "⚠ The rules file has an error"
        page.click(element_id(notice))
        error = page.until("return document.querySelector('#rules-error:not([hidden])')", message="no error in the Rules view")
        said = page.text(element_id(error))
        assert "Line 5, column 9: " in said and "is not a duration" in said, said
        assert "The last good rules stay in force until it is fixed: the rule below." in said, said
        assert card_mode(page, "keep") == "on"
        switches = page.js("return [...document.querySelectorAll('.mode-option')].map((b) => b.disabled)")
        assert switches and all(switches), "a switch on a broken file"
        ctx.shot("rules-broken", x_window=True)

        load_rules(ctx, good, lambda s: s["error"] is None, "the fix was never seen")
        page.until("return document.getElementById('rules-notice').hidden", message="the notice stayed after the fix")
        page.until("return document.getElementById('rules-error').hidden", message="the error stayed after the fix")
    finally:
        no_rules(ctx)
        page.click(page.find("#nav-queue"))


def fake_editor(folder):
    """Makes a script the system's handler for text files (what xdg-open runs for the rules file); it
    writes each file it is given to `folder`/opened. Returns a function that undoes it."""
    script = os.path.join(folder, "editor.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {folder}/opened\n')
    os.chmod(script, 0o755)
    apps = os.path.join(os.environ["XDG_DATA_HOME"], "applications")
    os.makedirs(apps, exist_ok=True)
    entry = os.path.join(apps, "askdesk-test-editor.desktop")
    with open(entry, "w", encoding="utf-8") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName=Test editor\nExec={script} %f\n"
                "MimeType=text/plain;application/toml;\n")
    mimeapps = os.path.join(os.environ["XDG_CONFIG_HOME"], "mimeapps.list")
    with open(mimeapps, "w", encoding="utf-8") as f:
        f.write("[Default Applications]\ntext/plain=askdesk-test-editor.desktop\n"
                "application/toml=askdesk-test-editor.desktop\n")

    def undo():
        for path in (entry, mimeapps):
            os.remove(path)
    return undo


def test_the_empty_rules_view_gives_an_example_and_opens_the_file(ctx, tmp_path):
    """With no rules, the Rules view shows an example rule and "Open rules file", which creates the missing
    file with a commented header (no rule in force) and opens it with the system's handler; a broken file
    shows only its error."""
    page = ctx.page
    undo = fake_editor(str(tmp_path))
    try:
        no_rules(ctx)
        os.remove(rules_path())
        page.click(page.find("#nav-rules"))
        example = page.until("const e = document.querySelector('#rules-list .rules-example'); return e && e.textContent;",
                             message="no example in the empty Rules view")
        assert example.startswith("[[rule]]\nname = \"tests\"\n") and 'answer = "Allow once"' in example, example
        ctx.shot("rules-empty", x_window=True)
        ctx.click_fresh("return document.querySelector('#rules-list .open-rules-file');")
        opened = tmp_path / "opened"
        deadline = time.time() + 15
        while not opened.exists():
            assert time.time() < deadline, "the system's handler never got the rules file"
            time.sleep(0.2)
        assert opened.read_text().splitlines() == [rules_path()]
        created = read_rules()
        assert created.startswith("# askdesk answer rules") and all(line.startswith("#") for line in created.splitlines())
        assert "# " + example.splitlines()[0] in created, created
        # Opened again: the file there is kept as it is.
        put_rules(created + "# mine\n")
        ctx.click_fresh("return document.querySelector('#rules-list .open-rules-file');")
        deadline = time.time() + 15
        while len(opened.read_text().splitlines()) < 2:
            assert time.time() < deadline, "the second open never reached the handler"
            time.sleep(0.2)
        assert read_rules() == created + "# mine\n"

        # A broken file: only the error, no example and no empty-state text.
        load_rules(ctx, '[[rule]]\nname = "half"\n', lambda s: s["error"] is not None, "the breakage was never seen")
        page.until("return !document.getElementById('rules-error').hidden", message="no error shown")
        page.until("return !document.querySelector('#rules-list').children.length", message="more than the error shown")
    finally:
        undo()
        no_rules(ctx)
        page.click(page.find("#nav-queue"))
