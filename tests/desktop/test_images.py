"""askdesk desktop tests: images attached to a question and its options (protocol 1.4).

Shown inline as data: URLs of the PNGs the broker re-encoded, enlarged on a click.
"""
import base64
import struct
import zlib

from harness import answer_of

GIF_1X1 = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="


def png(width, height, colour):
    """A plain-colour RGB PNG, base64."""
    raw = b"".join(b"\x00" + bytes(colour) * width for _ in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    data = (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))
    return {"mime": "image/png", "data": base64.b64encode(data).decode()}


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

THUMBS = "[...document.querySelectorAll('[data-qid=\"layout\"] .image-thumb img')]"


def test_a_question_shows_its_images_and_enlarges_one(ctx):
    _, _, outcome = ctx.ask([LAYOUT], agent="coder")
    ctx.show("layout")
    page = ctx.page
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
