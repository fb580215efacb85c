"""askdesk desktop tests: permission hooks.

`askdesk hook claude-code` fed a fixture of tests/hooks as Claude Code would.
"""
import json
import os
import signal
import subprocess
import threading

from harness import (
    HERE, closed_on_bus_eventually, journal_lines, notify_actions, put_rules, read_rules, rule_preview,
)


HOOK_FIXTURES = os.path.join(HERE, "..", "hooks")


def run_hook(ctx, fixture, client="claude-code"):
    """Starts `askdesk hook <client>` with a fixture on stdin; returns (fixture text, done) where done()
    waits for the hook and gives (exit status, stdout, stderr)."""
    with open(os.path.join(HOOK_FIXTURES, f"{fixture}.json"), encoding="utf-8") as f:
        text = f.read()
    proc = subprocess.Popen([ctx.args.cli, "hook", client], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=os.environ.copy())
    box = {}

    def talk():
        box["out"], box["err"] = proc.communicate(input=text.encode(), timeout=120)

    t = threading.Thread(target=talk, daemon=True)
    t.start()

    def done(timeout=15):
        t.join(timeout)
        if t.is_alive():
            proc.kill()
            raise AssertionError("askdesk hook did not finish")
        return proc.returncode, box["out"].decode(), box["err"].decode()
    done.proc = proc
    return text, done


def decision_line(decision):
    return '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":' + decision + "}}\n"


def test_hook_plan_is_approved_in_the_pane(ctx):
    """A plan arrives through `askdesk hook claude-code`, is approved in the pane, and the hook prints
    the allow echoing the tool input unchanged."""
    text, done = run_hook(ctx, "claude-plan")
    ctx.show("plan")
    page = ctx.page
    assert "Claude Code" in page.text(page.find("#asker"))
    assert "/home/dev/shop" in page.text(page.find("#asker"))
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-doc h1').textContent") == "Add a cart export"
    page.click(page.find('[data-qid="plan"] .plan-approve'))
    status, out, err = done()
    assert status == 0 and err == "", (status, err)
    tool_input = json.dumps(json.loads(text)["tool_input"], separators=(",", ":"), ensure_ascii=False)
    assert out == decision_line('{"behavior":"allow","updatedInput":' + tool_input + "}"), out
    ctx.wait_queue(0)


def test_hook_tool_approvals_show_the_command_and_the_diff(ctx):
    """A Bash approval shows the command; an Edit approval shows the edit as a highlighted diff."""
    _, done = run_hook(ctx, "claude-bash")
    ctx.show("permission")
    page = ctx.page
    assert page.js("return document.querySelector('[data-qid=\"permission\"] pre').textContent.trim()") == \
        "cargo test --workspace"
    ctx.shot("hook-bash", top=True)
    page.click(ctx.option("permission", "Allow once"))
    page.click(page.find("#submit"))
    status, out, err = done()
    assert status == 0 and err == "", (status, err)
    assert out == decision_line('{"behavior":"allow"}'), out
    # Both prompts' questions are "permission": the Bash one must be gone before the Edit one is read.
    ctx.wait_queue(0)

    _, done = run_hook(ctx, "claude-edit")
    ctx.show("permission")
    page.until("const pre = document.querySelector('[data-qid=\"permission\"] pre');"
               "return !!pre && pre.textContent.includes('self.items');", message="the Edit prompt's diff never showed")
    colours = page.js(
        "const pre = document.querySelector('[data-qid=\"permission\"] pre');"
        "const of = (sel) => { const el = pre.querySelector(sel); return el && getComputedStyle(el).color; };"
        "return [of('.hl-markup.hl-inserted'), of('.hl-markup.hl-deleted'), getComputedStyle(pre).color];")
    added, removed, plain = colours
    assert added and removed and len({added, removed, plain}) == 3, f"the diff is not highlighted: {colours}"
    assert "+    self.items.iter().map(|i| i.price * i.quantity).sum()" in \
        page.js("return document.querySelector('[data-qid=\"permission\"] pre').textContent")
    ctx.shot("hook-edit", top=True)
    page.type(ctx.other_box("permission"), "Keep total() as it is")
    page.click(page.find("#submit"))
    status, out, err = done()
    assert status == 0 and err == "", (status, err)
    assert out == decision_line('{"behavior":"deny","message":"Keep total() as it is"}'), out
    ctx.wait_queue(0)


def test_hook_killed_by_the_client_withdraws_the_question(ctx):
    """Answering in the terminal first makes the client kill the hook: the question leaves the
    dialog and its notification closes. The notification offers no answer buttons: the command is
    only in the question's detail."""
    with ctx.elsewhere():
        _, done = run_hook(ctx, "claude-bash")
        nid = ctx.notification_id("Claude Code asks")
        actions = notify_actions(ctx.bus_log(), "Claude Code asks")
        assert actions == ["default"], actions
        ctx.show("permission")
        done.proc.send_signal(signal.SIGTERM)
        status, out, _ = done()
        assert out == "", out
        ctx.wait_queue(0)
        assert not ctx.page.find_all('[data-qid="permission"]')
        assert closed_on_bus_eventually(ctx, nid), f"notification {nid} was not closed"


def test_always_allow_this_command_here_answers_the_next_hook_prompt(ctx):
    """"Always answer this way here" on a Bash permission prompt drafts a rule naming the tool and the exact
    command; once saved, the same prompt from the hook is allowed by the rule, with no dialog."""
    put_rules("")
    try:
        _, done = run_hook(ctx, "claude-bash")
        ctx.show("permission")
        page = ctx.page
        page.click(ctx.option("permission", "Allow once"))
        page.click(page.find("#always"))
        shown = rule_preview(page)
        assert 'name = "bash-cargo-test-workspace"' in shown, shown
        assert 'tool = "Bash", command = "cargo test --workspace"' in shown, shown
        assert shown.rstrip().endswith('answer = "Allow once"'), shown
        page.click(page.find(".rule-preview .rule-save"))
        status, out, err = done()
        assert status == 0 and err == "", (status, err)
        assert out == decision_line('{"behavior":"allow"}'), out
        ctx.wait_queue(0)
        assert read_rules() == shown.rstrip("\n") + "\n"

        count = len(journal_lines())
        _, done = run_hook(ctx, "claude-bash")
        status, out, err = done()
        assert status == 0 and err == "", (status, err)
        assert out == decision_line('{"behavior":"allow"}'), out
        lines = [json.loads(line) for line in journal_lines()]
        assert len(lines) == count + 1, "one more journal record"
        assert lines[-1].get("answerer") == "rule:bash-cargo-test-workspace", lines[-1]
        assert ctx.queue_count() == 0
    finally:
        put_rules("")
