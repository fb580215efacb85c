"""askdesk desktop tests: images attached to a question and its options (protocol 1.4), and the
pictures the person answers with.

Shown inline as data: URLs of the PNGs the broker re-encoded, enlarged on a click. A picture pasted or
dropped into Other or a plan's feedback is re-encoded by the backend before it shows, and goes with the
answer; a refused one names its limit and keeps what was typed. One attached to an answer never sent (its
agent went) stays in History with the draft.
"""
import base64

from harness import ATTACHED, answer_of, give_picture, journal_record, notify_hints, png, png_width
import samples
from test_queue import PRUNE, ask_as_claude_code

GIF_1X1 = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="


LAYOUT = {
    "id": "layout", "header": "Layout", "question": "Which layout reads better?",
    "detail": "Both keep the toolbar; the screenshots are of the settings page.",
    "images": [png(240, 150, (70, 130, 220))],
    "options": [
        {"label": "Sidebar (Recommended)", "description": "navigation on the left",
         "images": [png(200, 120, (60, 170, 110))]},
        {"label": "Top bar", "description": "navigation above the content",
         "images": [{"mime": "image/gif", "data": GIF_1X1}]},
    ],
}


def ask_layout(ctx):
    """Asks LAYOUT and shows it: the page, and the asker's outcome."""
    _, _, outcome = ctx.ask([LAYOUT], agent="coder")
    ctx.show("layout")
    return ctx.page, outcome


THUMBS = "[...document.querySelectorAll('[data-qid=\"layout\"] .image-thumb img')]"


def test_a_question_shows_its_images_and_enlarges_one(ctx):
    page, outcome = ask_layout(ctx)
    # Every image is a PNG data: URL, the GIF included: the page never gets a file as sent.
    page.until(f"return {THUMBS}.length === 3 && {THUMBS}.every((i) => i.complete && i.naturalWidth > 0)",
               message="the three images never loaded")
    assert page.js(f"return {THUMBS}.map((i) => i.src.slice(0, 33))") == \
        ["data:image/png;base64,iVBORw0KGgo"] * 3
    assert page.js(f"return {THUMBS}.map((i) => i.naturalWidth)") == [240, 200, 1]
    ctx.shot("dialog-images", top=True)

    page.click(page.find('[data-qid="layout"] > .image-strip .image-thumb'))
    page.until("return document.querySelector('dialog.image-large[open] img')?.naturalWidth === 240",
               message="the question's image was not enlarged")
    page.click(page.find("dialog.image-large"))
    page.until("return document.querySelector('dialog.image-large') === null", message="the enlarged image stayed")

    # A thumbnail inside an option enlarges; it does not choose the option.
    page.click(page.find('[data-qid="layout"] .option .image-thumb'))
    page.until("return document.querySelector('dialog.image-large[open] img')?.naturalWidth === 200",
               message="the option's image was not enlarged")
    assert page.js("return document.querySelectorAll('[data-qid=\"layout\"] input:checked').length") == 0
    page.click(page.find("dialog.image-large"))
    page.until("return document.querySelector('dialog.image-large') === null", message="the enlarged image stayed")

    page.click(ctx.option("layout", "Top bar"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "layout", "selected": ["Top bar"]}]}


# Two screenshots of the same page compared by eye.
SCREENS = {
    "id": "screens", "header": "Layout", "question": "Which of these two screens should ship?",
    "detail": "The left one keeps the old toolbar; the right one moves it into the sidebar.",
    "images": [png(240, 150, (70, 130, 220)), png(240, 150, (230, 160, 60))],
    "options": [{"label": "Left (Recommended)"}, {"label": "Right"}],
}


def test_a_question_with_two_images_shows_both(ctx):
    # Its notification carries the first image as the image-data hint (dunst shows it): the window is behind
    # another program, so the notification stays up. The bus log prints the hint's pixels byte by byte, so it
    # may trail the call by a while on a loaded machine.
    with ctx.elsewhere():
        _, _, outcome = ctx.ask([SCREENS], agent="coder")
        ctx.notification_id("claude-code asks", timeout=60)
    hints = notify_hints(ctx.bus_log(), "claude-code asks")
    assert "image-data" in hints, hints
    ctx.show("screens")
    page = ctx.page
    thumbs = "[...document.querySelectorAll('[data-qid=\"screens\"] > .image-strip .image-thumb img')]"
    page.until(f"return {thumbs}.length === 2 && {thumbs}.every((i) => i.complete && i.naturalWidth === 240)",
               message="the two images never loaded")
    ctx.shot("dialog-two-images", top=True)
    page.click(ctx.option("screens", "Right"))
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "screens", "selected": ["Right"]}]}


OTHER = '[data-qid="layout"] .other-input'


def test_a_picture_pasted_into_other_goes_with_the_answer(ctx):
    page, outcome = ask_layout(ctx)
    page.type(page.find(OTHER), "Like this, but narrower")
    give_picture(page, OTHER, png(300, 180, (200, 60, 90))["data"], "paste")
    page.until(f"return {ATTACHED}.length === 1 && {ATTACHED}[0].naturalWidth === 300",
               message="the pasted picture never showed")
    # The picture chose Other, and the text typed is as it was.
    assert page.js("return document.querySelector('[data-qid=\"layout\"] .other-choice').checked") is True
    assert page.js(f"return document.querySelector('{OTHER}').value") == "Like this, but narrower"
    ctx.shot("answer-picture", scroll_to='[data-qid="layout"] .option.other')
    page.click(page.find("#submit"))
    (item,) = answer_of(outcome())["answers"]
    assert (item["id"], item["selected"], item["custom"]) == ("layout", [], "Like this, but narrower")
    (image,) = item["images"]
    assert image["mime"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    # History keeps the picture with the answer.
    page.click(page.find("#nav-history"))
    page.until("const img = document.querySelector('.history-item dd .image-strip img');"
               " return Boolean(img && img.complete && img.naturalWidth === 300)",
               message="History does not show the answer's picture")
    page.click(page.find("#nav-queue"))


def test_a_removed_picture_is_not_sent(ctx):
    page, outcome = ask_layout(ctx)
    give_picture(page, OTHER, png(20, 20, (0, 0, 0))["data"], "paste")
    give_picture(page, OTHER, png(30, 30, (0, 0, 0))["data"], "paste")
    page.until(f"return {ATTACHED}.length === 2", message="the two pictures never showed")
    page.click(page.find('.answer-pictures .picture-remove'))
    page.until(f"return {ATTACHED}.length === 1 && {ATTACHED}[0].naturalWidth === 30",
               message="the first picture was not removed")
    page.click(page.find("#submit"))
    (item,) = answer_of(outcome())["answers"]
    assert "custom" not in item and len(item["images"]) == 1, item


def test_pictures_pasted_one_after_another_keep_their_order(ctx):
    # The first takes the backend far longer to re-encode than the second.
    page, outcome = ask_layout(ctx)
    give_picture(page, OTHER, png(3000, 2000, (200, 40, 40))["data"], "paste")
    give_picture(page, OTHER, png(30, 30, (0, 0, 0))["data"], "paste")
    page.until(f"return {ATTACHED}.length === 2 && {ATTACHED}.every((img) => img.complete && img.naturalWidth)",
               message="the two pictures never showed")
    assert page.js(f"return {ATTACHED}.map((img) => img.naturalWidth)") == [3000, 30]
    page.click(page.find("#submit"))
    (item,) = answer_of(outcome())["answers"]
    assert [png_width(image) for image in item["images"]] == [3000, 30], item


# A PNG whose header claims 9000×9000 pixels, and one cut short.
PNG_9000 = "iVBORw0KGgoAAAANSUhEUgAAIygAACMoCAYAAABt1XK6AAAAAElEQVQ1rwYeAAAAAElFTkSuQmCC"
REFUSED = "document.querySelector('.picture-refused')"


def test_a_refused_picture_names_its_limit_and_keeps_the_text(ctx):
    page, outcome = ask_layout(ctx)
    page.type(page.find(OTHER), "kept")
    give_picture(page, OTHER, PNG_9000, "paste")
    page.until(f"return !{REFUSED}.hidden", message="the oversized picture was not refused")
    assert page.js(f"return {REFUSED}.textContent") == (
        "This picture is not attached: an image of 9000×9000 pixels is over the limit of 8192 pixels a side "
        "(image-side)")
    cut = base64.b64encode(base64.b64decode(png(40, 40, (1, 2, 3))["data"])[:-20]).decode()
    give_picture(page, OTHER, cut, "drop")
    page.until(f"return {REFUSED}.textContent.includes('a malformed image/png')",
               message="the malformed picture was not refused")
    assert page.js(f"return {ATTACHED}.length") == 0
    assert page.js(f"return document.querySelector('{OTHER}').value") == "kept"
    page.click(page.find("#submit"))
    assert answer_of(outcome()) == {"answers": [{"id": "layout", "selected": [], "custom": "kept"}]}


FEEDBACK = '[data-qid="plan"] .plan-feedback'


def test_a_picture_dropped_into_plan_feedback_is_sent_as_feedback(ctx):
    _, _, outcome = ctx.ask(samples.PLAN_REVIEW, agent="coder")
    ctx.show("plan")
    page = ctx.page
    give_picture(page, FEEDBACK, png(64, 48, (20, 120, 200))["data"], "drop")
    page.until(f"return {ATTACHED}.length === 1 && {ATTACHED}[0].naturalWidth === 64",
               message="the dropped picture never showed")
    assert page.js("return document.querySelector('[data-qid=\"plan\"] .plan-sends').textContent") == \
        "Sends: your feedback, instead of a choice"
    page.click(page.find('[data-qid="plan"] .plan-send'))
    (item,) = answer_of(outcome())["answers"]
    assert (item["id"], item["selected"]) == ("plan", []), item
    assert len(item["images"]) == 1 and item["images"][0]["mime"] == "image/png", item


def test_a_picture_in_an_answer_never_sent_stays_in_history_with_the_draft(ctx):
    """The person pastes a picture into Other and types beside it; the agent disconnects before they send. The
    ended card keeps the picture; the journal keeps it, re-encoded, with the withdrawn request's draft; History
    shows it under the draft, enlarged on a click."""
    page = ctx.page
    conn, _, _ = ask_as_claude_code(ctx, PRUNE)
    ctx.show("prune")
    box = '[data-qid="prune"] .other-input'
    page.type(page.find(box), "Like this one")
    give_picture(page, box, png(120, 90, (200, 60, 90))["data"], "paste")
    page.until(f"return {ATTACHED}.length === 1 && {ATTACHED}[0].naturalWidth === 120",
               message="the pasted picture never showed")
    page.until("return window.__TAURI__.core.invoke('get_queue').then((q) => q.some((v) => v.draft &&"
               " v.draft.questions.some((d) => d.pictures && d.pictures.length === 1 && d.text === 'Like this one')))",
               message="the draft naming the picture never reached the app")
    conn.close()
    page.until("return document.getElementById('view-request').classList.contains('ended')",
               message="the card did not stay, ended, when its agent disconnected")
    assert page.js(f"return {ATTACHED}.map((i) => i.naturalWidth)") == [120]

    record = journal_record(PRUNE[0]["question"])
    assert record["outcome"] == "withdrawn", record
    (item,) = record["draft"]["answers"]
    assert (item["id"], item["selected"], item["custom"]) == ("prune", [], "Like this one"), item
    (image,) = item["images"]
    assert image["mime"] == "image/png" and set(image) == {"mime", "data"}, image
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")

    page.click(page.find("#nav-history"))
    thumb = "document.querySelector('.history-item dd .history-draft + .image-strip .image-thumb')"
    page.until(f"const t = {thumb}; const img = t && t.querySelector('img');"
               " return Boolean(img && img.complete && img.naturalWidth === 120)",
               message="History does not show the draft's picture")
    assert page.js(f"return {thumb}.getAttribute('aria-label')") == "Picture in the draft, not sent: enlarge"
    page.click(page.find(".history-item dd .history-draft + .image-strip .image-thumb"))
    page.until("return document.querySelector('dialog.image-large[open] img')?.naturalWidth === 120",
               message="the draft's picture was not enlarged")
    page.click(page.find("dialog.image-large"))
    page.until("return document.querySelector('dialog.image-large') === null", message="the enlarged image stayed")
    page.click(page.find("#nav-queue"))
    ctx.open_request_of("Claude Code")
    page.click(page.find("#close-ended"))
    page.until("return !document.querySelector('#request-form [data-qid]')", message="Close left the card")
