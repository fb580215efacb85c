"""askdesk desktop tests: the WCAG contrast of ui/style.css's text colours, computed from its CSS variables.

Reads the light scheme (`:root`) and the dark one (`@media (prefers-color-scheme: dark)`), and checks
every pair of a text colour and a surface it is drawn on against WCAG AA for normal text (4.5:1).
Text faded with `opacity` is checked as drawn (its colour blended into the surface), unless it belongs
to an inactive component, whose text WCAG exempts (1.4.3).
`python3 contrast.py` prints the table; test_dialog.py runs `failures()` as a test.
"""
import os
import re
import sys

STYLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ui", "style.css")
AA = 4.5

# Any surface text can sit on: the window, cards, the sidebar, code, and the tints of a checked option,
# a comment, a changed block or a removed one.
SURFACES = ("bg", "panel", "sidebar", "code-bg", "accent-soft", "warn-soft", "ok-soft", "danger-soft")
# (foreground, backgrounds): a variable name or a literal colour on each background.
PAIRS = [
    ("text", SURFACES),
    ("muted", SURFACES + ("border",)),  # muted also labels pills and counts filled with --border
    ("faint", SURFACES),
    ("accent", ("bg", "panel", "sidebar", "accent-soft")),
    ("warn", ("bg", "panel", "warn-soft")),
    ("danger", ("bg", "panel", "danger-soft")),
    ("ok", ("bg", "panel", "ok-soft")),
    ("on-accent", ("accent", "accent-hover")),  # primary buttons, counts, the active mode
    ("#ffffff", ("#2a2f38", "#7a4b05", "#8f2a15")),  # the toast's three tones
] + [(f"hl-{kind}", ("code-bg",)) for kind in ("keyword", "string", "comment", "number", "type", "function", "tag", "attr")] + [
    ("ok", ("ok-soft",)), ("danger", ("danger-soft",)),  # a diff's inserted and deleted lines
]

# Faded on purpose, and exempt: each is a disabled control (the inputs of a skipped question are disabled).
INACTIVE = {
    ".button:disabled",
    ".mode-option:disabled",
    ".skipped .options",
    ".skipped .free-text",
    ".plan-review.skipped .plan-decision > :not(.q-foot):not(.q-text):not(.q-header)",
    ".plan-decision .option:has(input:disabled)",
}


def schemes(css):
    """{'light': {name: '#rrggbb'}, 'dark': {...}}: the dark scheme is the light one with its overrides."""
    light_block = re.search(r":root\s*\{(.*?)\}", css, re.S).group(1)
    dark_block = re.search(r"prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{(.*?)\}", css, re.S).group(1)
    found = lambda block: dict(re.findall(r"--([a-z0-9-]+):\s*(#[0-9a-fA-F]{3,8})\b", block))  # noqa: E731
    light = found(light_block)
    return {"light": light, "dark": {**light, **found(dark_block)}}


def rgb(colour):
    """A `#rgb` or `#rrggbb` colour's three channels, 0-255."""
    hex_ = colour.lstrip("#")
    if len(hex_) == 3:
        hex_ = "".join(c * 2 for c in hex_)
    return [int(hex_[i:i + 2], 16) for i in (0, 2, 4)]


def luminance(colour):
    def channel(c):
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c / 255) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def blend(fg, bg, alpha):
    """`fg` drawn at `alpha` over `bg`, as WebKit composites it."""
    return "#" + "".join(f"{round(alpha * x + (1 - alpha) * y):02x}" for x, y in zip(rgb(fg), rgb(bg)))


def faded(css):
    """(selector, opacity) for every rule that sets `opacity` below 1."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        found = re.search(r"(?<![\w-])opacity:\s*([0-9.]+)", body)
        if found and float(found.group(1)) < 1:
            for selector in selectors.split(","):
                yield " ".join(selector.split()), float(found.group(1))


def ratio(a, b):
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def resolved(colours):
    """Every pair of PAIRS in one scheme: (foreground, background, their colours), a colour None for an
    undefined variable."""
    def value(name):
        return name if name.startswith("#") else colours.get(name)
    for fg, backgrounds in PAIRS:
        for bg in backgrounds:
            yield fg, bg, value(fg), value(bg)


def table(css=None):
    """Every checked pair: (scheme, foreground, background, ratio); the ratio is None for an undefined variable."""
    if css is None:
        with open(STYLE, encoding="utf-8") as f:
            css = f.read()
    return [(scheme, fg, bg, ratio(fg_colour, bg_colour) if fg_colour and bg_colour else None)
            for scheme, colours in schemes(css).items()
            for fg, bg, fg_colour, bg_colour in resolved(colours)]


def text_colours(css):
    """The colours style.css gives text (`color:`, not `border-color:`), as variable names or literals."""
    named = set(re.findall(r"(?<![\w-])color:\s*var\(--([a-z0-9-]+)", css))
    literal = {("#ffffff" if c.lower() in ("#fff", "#ffffff") else c.lower())
               for c in re.findall(r"(?<![\w-])color:\s*(#[0-9a-fA-F]{3,8})\b", css)}
    return named | literal


def failures(css=None):
    """What falls short of AA, and every text colour the stylesheet uses that PAIRS does not check."""
    if css is None:
        with open(STYLE, encoding="utf-8") as f:
            css = f.read()
    short = [f"{scheme}: {fg} on {bg} is " + (f"{r:.2f}:1" if r is not None else "undefined")
             for scheme, fg, bg, r in table(css) if r is None or r < AA]
    checked = {fg for fg, _ in PAIRS}
    unchecked = sorted(text_colours(css) - checked)
    dimmed = []
    for selector, alpha in faded(css):
        if selector in INACTIVE:
            continue
        for scheme, colours in schemes(css).items():
            worst = min((ratio(blend(fg_colour, bg_colour, alpha), bg_colour), fg, bg)
                        for fg, bg, fg_colour, bg_colour in resolved(colours) if fg_colour and bg_colour)
            if worst[0] < AA:
                dimmed.append(f"{scheme}: {selector} fades its text to opacity {alpha}: {worst[1]} on {worst[2]} "
                              f"is then {worst[0]:.2f}:1 (fade only inactive components, listed in INACTIVE)")
    return short + [f"text colour {c} is not in the contrast table" for c in unchecked] + dimmed


if __name__ == "__main__":
    for scheme, fg, bg, r in table():
        said = "undefined" if r is None else f"{r:5.2f}{'' if r >= AA else '  < AA'}"
        print(f"{scheme:5} {fg:>12} on {bg:<12} {said}")
    problems = failures()
    print("\n".join(problems) or "all pairs meet AA")
    sys.exit(1 if problems else 0)
