# tests/desktop/screen.py: the X screen read through libX11 (windows, geometry, pixels) and what its pixels say about the dialog.
"""The X screen as the person sees it, read without WebDriver: the app's window and its geometry, the pixels
of the screen (root window, so notifications and anything on top are included), and what those pixels say
about the askdesk dialog. Used by test_lifecycle.py (is the dialog on screen?) and bench_desktop.py (when
was it painted?). Talks to libX11 through ctypes: no package beyond what the app itself needs.

A grab is one XGetImage of the root window over the region asked for (a 1100 x 760 window: about 10 ms on
Xvfb), so polling every few milliseconds is possible; `import` (ImageMagick) takes about 100 ms.
"""
import ctypes
import os
import subprocess

# The page's colours (ui/style.css), light and dark schemes, as (r, g, b).
SURFACES = {
    "light": ["#f4f5f7", "#eceef2", "#ffffff", "#dfe2e8", "#c9ced8", "#e8effc", "#f3f4f7"],
    "dark": ["#1b1d22", "#16181c", "#23262c", "#33373f", "#444a54", "#24324d", "#1c1f24"],
}
ACCENT = {"light": "#2a60c8", "dark": "#7aa5f5"}
TEXT = {"light": "#1c2027", "dark": "#e7e9ed"}


def rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


class XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.c_void_p), ("byte_order", ctypes.c_int),
                ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int), ("bits_per_pixel", ctypes.c_int),
                ("red_mask", ctypes.c_ulong), ("green_mask", ctypes.c_ulong), ("blue_mask", ctypes.c_ulong),
                ("obdata", ctypes.c_void_p),
                ("create_image", ctypes.c_void_p), ("destroy_image", ctypes.c_void_p),
                ("get_pixel", ctypes.c_void_p), ("put_pixel", ctypes.c_void_p),
                ("sub_image", ctypes.c_void_p), ("add_pixel", ctypes.c_void_p)]


class XWindowAttributes(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int), ("height", ctypes.c_int),
                ("border_width", ctypes.c_int), ("depth", ctypes.c_int), ("visual", ctypes.c_void_p),
                ("root", ctypes.c_ulong), ("class_", ctypes.c_int), ("bit_gravity", ctypes.c_int),
                ("win_gravity", ctypes.c_int), ("backing_store", ctypes.c_int), ("backing_planes", ctypes.c_ulong),
                ("backing_pixel", ctypes.c_ulong), ("save_under", ctypes.c_int), ("colormap", ctypes.c_ulong),
                ("map_installed", ctypes.c_int), ("map_state", ctypes.c_int), ("all_event_masks", ctypes.c_long),
                ("your_event_mask", ctypes.c_long), ("do_not_propagate_mask", ctypes.c_long),
                ("override_redirect", ctypes.c_int), ("screen", ctypes.c_void_p)]


IS_VIEWABLE = 2
Z_PIXMAP = 2
ALL_PLANES = ctypes.c_ulong(-1).value
DESTROY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


def _libx11():
    x = ctypes.CDLL("libX11.so.6")
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XDefaultRootWindow.restype = ctypes.c_ulong
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XInternAtom.restype = ctypes.c_ulong
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XQueryTree.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong),
                             ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.POINTER(ctypes.c_ulong)),
                             ctypes.POINTER(ctypes.c_uint)]
    x.XFetchName.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_char_p)]
    x.XGetWindowProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_long, ctypes.c_long,
                                     ctypes.c_int, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong),
                                     ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_ulong),
                                     ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_void_p)]
    x.XGetWindowAttributes.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(XWindowAttributes)]
    x.XTranslateCoordinates.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                        ctypes.POINTER(ctypes.c_ulong)]
    x.XGetImage.restype = ctypes.POINTER(XImage)
    x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                            ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    x.XFree.argtypes = [ctypes.c_void_p]
    x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
    x.XFlush.argtypes = [ctypes.c_void_p]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    # X errors (a window destroyed while we look at it) must not end the process: Xlib's default
    # handler exits. The handler is kept referenced for the process's lifetime.
    handler = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(lambda display, event: 0)
    x.XSetErrorHandler.argtypes = [ctypes.c_void_p]
    x.XSetErrorHandler(ctypes.cast(handler, ctypes.c_void_p))
    x._keep_handler = handler
    return x


class XClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5), ("pad", ctypes.c_long * 12)]


CLIENT_MESSAGE = 33


class Grab:
    """Pixels of a screen region, 4 bytes a pixel (blue, green, red, 0), row after row."""

    def __init__(self, x, y, width, height, data):
        self.x, self.y, self.width, self.height, self.data = x, y, width, height, data

    def count(self, hex_colour, region=None):
        """How many pixels are exactly this colour, in the whole grab or in `region` (x, y, w, h,
        relative to the grab). Every pixel's fourth byte is zero, so the 4-byte pattern of a colour with
        no zero channel (every colour of the page) can only match a whole pixel."""
        r, g, b = rgb(hex_colour)
        return self.rows(region).count(bytes((b, g, r, 0)))

    def rows(self, region=None):
        if region is None:
            return self.data
        rx, ry, rw, rh = region
        rx, ry = max(0, rx), max(0, ry)
        rw, rh = min(rw, self.width - rx), min(rh, self.height - ry)
        stride = self.width * 4
        return b"".join(self.data[(ry + row) * stride + rx * 4:(ry + row) * stride + (rx + rw) * 4] for row in range(rh))

    def black(self, region=None):
        """How many pixels are black (nothing drawn there); a pattern of zeros may straddle two pixels, so
        this is at most a few more than the truth."""
        return self.rows(region).count(b"\0\0\0\0")

    def area(self, region=None):
        return len(self.rows(region)) // 4

    def save_png(self, path):
        """Writes the grab as a PNG (through ImageMagick's `convert`, from a PPM)."""
        body = bytearray(self.width * self.height * 3)
        body[0::3] = self.data[2::4]
        body[1::3] = self.data[1::4]
        body[2::3] = self.data[0::4]
        ppm = path + ".ppm"
        with open(ppm, "wb") as f:
            f.write(f"P6 {self.width} {self.height} 255\n".encode() + bytes(body))
        subprocess.run(["convert", ppm, path], check=True)
        os.unlink(ppm)


class Screen:
    """One connection to the X display ($DISPLAY): finds windows and grabs pixels."""

    def __init__(self, display=None):
        self.x = _libx11()
        self.display = self.x.XOpenDisplay(display.encode() if display else None)
        if not self.display:
            raise RuntimeError("cannot open the X display")
        self.root = self.x.XDefaultRootWindow(self.display)
        self.wm_pid = self.x.XInternAtom(self.display, b"_NET_WM_PID", 0)
        attrs = XWindowAttributes()
        self.x.XGetWindowAttributes(self.display, self.root, ctypes.byref(attrs))
        self.width, self.height = attrs.width, attrs.height

    def close(self):
        if self.display:
            self.x.XCloseDisplay(self.display)
            self.display = None

    def _children(self, window):
        r, p, kids, n = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.POINTER(ctypes.c_ulong)(), ctypes.c_uint()
        if not self.x.XQueryTree(self.display, window, ctypes.byref(r), ctypes.byref(p), ctypes.byref(kids),
                                 ctypes.byref(n)):
            return []
        found = [kids[i] for i in range(n.value)]
        if kids:
            self.x.XFree(kids)
        return found

    def _name(self, window):
        name = ctypes.c_char_p()
        if not self.x.XFetchName(self.display, window, ctypes.byref(name)) or name.value is None:
            return None
        value = name.value.decode(errors="replace")
        self.x.XFree(name)
        return value

    def _pid(self, window):
        kind, fmt, items, after, data = (ctypes.c_ulong(), ctypes.c_int(), ctypes.c_ulong(), ctypes.c_ulong(),
                                         ctypes.c_void_p())
        self.x.XGetWindowProperty(self.display, window, self.wm_pid, 0, 1, 0, 6, ctypes.byref(kind), ctypes.byref(fmt),
                                  ctypes.byref(items), ctypes.byref(after), ctypes.byref(data))
        if not data.value:
            return None
        found = ctypes.cast(data, ctypes.POINTER(ctypes.c_ulong))[0] if items.value else None
        self.x.XFree(data)
        return found

    def close_window(self, title, pid=None):
        """Sends WM_DELETE_WINDOW to every window named `title` (of process `pid`, given one), as a window
        manager's close button does; returns how many."""
        protocols = self.x.XInternAtom(self.display, b"WM_PROTOCOLS", 0)
        delete = self.x.XInternAtom(self.display, b"WM_DELETE_WINDOW", 0)
        found = self.windows(title, pid)
        for window, _, _ in found:
            event = XClientMessage(type=CLIENT_MESSAGE, send_event=1, display=self.display, window=window,
                                   message_type=protocols, format=32)
            event.data[0] = delete
            self.x.XSendEvent(self.display, window, 0, 0, ctypes.byref(event))
        self.x.XFlush(self.display)
        return len(found)

    def windows(self, title="askdesk", pid=None):
        """Every window named `title` (of process `pid`, given one) at any depth under the root (a window
        manager puts client windows inside its frames): a list of (window id, viewable, (x, y, w, h) on
        the root)."""
        found = []
        todo = [(self.root, 0)]
        while todo:
            parent, depth = todo.pop()
            for window in self._children(parent):
                if self._name(window) == title and (pid is None or self._pid(window) == pid):
                    attrs = XWindowAttributes()
                    if not self.x.XGetWindowAttributes(self.display, window, ctypes.byref(attrs)):
                        continue
                    ax, ay, child = ctypes.c_int(), ctypes.c_int(), ctypes.c_ulong()
                    self.x.XTranslateCoordinates(self.display, window, self.root, 0, 0, ctypes.byref(ax),
                                                 ctypes.byref(ay), ctypes.byref(child))
                    found.append((window, attrs.map_state == IS_VIEWABLE,
                                  (ax.value, ay.value, attrs.width, attrs.height)))
                elif depth < 3:
                    todo.append((window, depth + 1))
        return found

    def viewable(self, title="askdesk", pid=None):
        """The (window id, geometry) of the viewable window named `title`, or None."""
        for window, viewable, geometry in self.windows(title, pid):
            if viewable:
                return window, geometry
        return None

    def grab(self, region=None):
        """The pixels of `region` (x, y, w, h on the screen; the whole screen by default), clipped to it."""
        x, y, w, h = region or (0, 0, self.width, self.height)
        x, y = max(0, x), max(0, y)
        w, h = min(w, self.width - x), min(h, self.height - y)
        image = self.x.XGetImage(self.display, self.root, x, y, w, h, ALL_PLANES, Z_PIXMAP)
        if not image:
            raise RuntimeError("XGetImage failed")
        try:
            img = image.contents
            if img.bits_per_pixel != 32:
                raise RuntimeError(f"unexpected {img.bits_per_pixel} bits a pixel")
            raw = ctypes.string_at(img.data, img.bytes_per_line * h)
            if img.bytes_per_line != w * 4:
                raw = b"".join(raw[row * img.bytes_per_line:row * img.bytes_per_line + w * 4] for row in range(h))
            data = bytearray(raw)
            data[3::4] = bytes(w * h)
        finally:
            DESTROY(image.contents.destroy_image)(ctypes.cast(image, ctypes.c_void_p))
        return Grab(x, y, w, h, bytes(data))


# ----- what the pixels say -----

FOOTER = 90  # px: the band at the window's bottom holding the request view's buttons
SIDEBAR = 250  # px: the sidebar's width (ui/style.css .app)


def dialog_signs(grab):
    """What a grab of the app's window (its client area) shows, as counts and fractions:
    `surface` the share of its pixels in the page's surface colours (background, sidebar, panels,
    borders), `black` the share of black pixels (nothing drawn), `submit` the pixels of the accent colour
    in the footer band at the bottom right, where the request view's Submit button is (the empty view has
    none), `text` pixels of the main text colour, `scheme` light or dark (the one whose surfaces hold more)."""
    area = max(1, grab.area())
    scheme, surface = "light", sum(grab.count(c) for c in SURFACES["light"])
    if surface < area // 2:
        dark = sum(grab.count(c) for c in SURFACES["dark"])
        if dark > surface:
            scheme, surface = "dark", dark
    return {
        "scheme": scheme,
        "surface": round(surface / area, 3),
        "black": round(grab.black() / area, 3),
        "submit": grab.count(ACCENT[scheme], footer(grab)),
        "text": grab.count(TEXT[scheme]),
    }


def footer(grab):
    return (SIDEBAR, grab.height - FOOTER, grab.width - SIDEBAR, FOOTER)


def request_painted(signs):
    """The request view is on screen: the window is mostly the page's surfaces, little of it black, the
    Submit button is drawn in the footer, and there is text."""
    return signs["surface"] >= 0.5 and signs["black"] <= 0.1 and signs["submit"] >= 800 and signs["text"] >= 200


def page_painted(signs):
    """Some view of the page (the empty view included) is on screen."""
    return signs["surface"] >= 0.5 and signs["black"] <= 0.1 and signs["text"] >= 100


def request_on_screen(grab):
    """request_painted(dialog_signs(grab)), quicker while it is not: the footer's Submit is looked for first
    (a few thousand pixels), the whole window only once it is there."""
    band = footer(grab)
    if max(grab.count(ACCENT[s], band) for s in ACCENT) < 800:
        return False
    return request_painted(dialog_signs(grab))
