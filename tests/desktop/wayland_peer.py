# tests/desktop/wayland_peer.py: the other program and the notification server of the Wayland suite (GTK 3).
"""The person's other program under a Wayland compositor, for test_wayland.py: a GTK 3 window that says when it
has the focus, the session's notification server, and the keys the person types.

Run with the system's Python (python3-gi, gir1.2-gtk-3.0). It reads commands on stdin, one a line, and writes
what happens on stdout, one event a line:

- out: `ready`, `active` / `inactive` (its window gained or lost the focus: GTK's is-active, from the
  compositor's wl_keyboard enter and leave), `gone` (its window closed), `notify <id> <summary>`, `closed <id>`, `key <name>` (a key
  its window received), `launch-token <token>`, `invoked <id> <token>`.
- in: `show` opens its window (a new one each time: the compositor gives it the focus), `hide` closes it, `keys <key>
  ...` types keys through the compositor's own input (wtype's virtual keyboard under sway, mutter's
  RemoteDesktop session under mutter; `typed` when done); a key is a name (`1`, `Escape`, `ctrl+Return`);
  `tray-host` starts a tray host (owns org.kde.StatusNotifierWatcher, as a panel does; `item <name>` when
  an item registers).
- out, after `t` typed in its window: `tray-activated <token>`: as KDE Plasma does when the person clicks a
  tray icon, it passed the compositor's token for the key to the newest item (`ProvideXdgActivationToken`)
  and then activated it (`Activate`).
- in: `tray-read` reads the newest item's tooltip and icon as a panel does; out: `tray-item <sha1 of the
  icon's pixels> <tooltip's title>`.

The person's actions in it are keys typed while its window has the focus, so the compositor issues real
activation tokens for them (xdg_activation_v1, with the key's serial and the focused surface), as it does
for a launcher or a notification popup the person clicks: `l` asks for a token and prints it
(`launch-token`), as a launcher passes XDG_ACTIVATION_TOKEN; `o` asks for one and sends, as the notification
server, `ActivationToken(id, token)` and then `ActionInvoked(id, "default")` for the newest notification, as
GNOME Shell, KDE Plasma and mako do when the person clicks a notification.
"""
import argparse
import hashlib
import subprocess
import sys
import threading

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, Gio, GLib, Gtk  # noqa: E402

NOTIFICATIONS = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
    <signal name="ActivationToken"><arg type="u"/><arg type="s"/></signal>
  </interface>
</node>
"""
WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_INTERFACE = """
<node>
  <interface name="org.kde.StatusNotifierWatcher">
    <method name="RegisterStatusNotifierItem"><arg type="s" direction="in"/></method>
    <method name="RegisterStatusNotifierHost"><arg type="s" direction="in"/></method>
    <property name="RegisteredStatusNotifierItems" type="as" access="read"/>
    <property name="IsStatusNotifierHostRegistered" type="b" access="read"/>
    <property name="ProtocolVersion" type="i" access="read"/>
    <signal name="StatusNotifierItemRegistered"><arg type="s"/></signal>
  </interface>
</node>
"""


def say(*words):
    print(*words, flush=True)


class Peer:
    def __init__(self, input_method):
        self.input_method = input_method
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION)
        self.next_id = 0
        self.newest = None
        self.remote = None
        self.window = None
        self.tray_item = None
        self.hosting = False

    def show(self):
        """A new window each time, as a program the person opens: compositors give a new window the focus."""
        window = Gtk.Window(title="askdesk-other")
        window.set_default_size(480, 360)
        window.add(Gtk.Entry())
        window.connect("notify::is-active", lambda *_: say("active" if window.is_active() else "inactive"))
        window.connect("key-press-event", self.key)
        window.show_all()
        self.window = window

    def hide(self):
        if self.window is not None:
            self.window.destroy()
            self.window = None
        say("gone")

    # ----- the notification server -----
    def serve(self):
        node = Gio.DBusNodeInfo.new_for_xml(INTERFACE)
        self.bus.register_object(PATH, node.interfaces[0], self.call, None, None)
        Gio.bus_own_name_on_connection(self.bus, NOTIFICATIONS, Gio.BusNameOwnerFlags.REPLACE,
                                       lambda *_: self.start(), lambda *_: say("name-lost"))

    def call(self, _bus, _sender, _path, _interface, method, params, invocation):
        if method == "GetCapabilities":
            invocation.return_value(GLib.Variant("(as)", (["actions", "body"],)))
        elif method == "GetServerInformation":
            invocation.return_value(GLib.Variant("(ssss)", ("askdesk-test-peer", "askdesk", "1", "1.2")))
        elif method == "Notify":
            replaces, summary = params[1], params[3]
            if replaces:
                nid = replaces
            else:
                self.next_id += 1
                nid = self.next_id
            self.newest = nid
            say("notify", nid, summary)
            invocation.return_value(GLib.Variant("(u)", (nid,)))
        elif method == "CloseNotification":
            say("closed", params[0])
            self.signal("NotificationClosed", "(uu)", (params[0], 3))
            invocation.return_value(None)

    def tray_host(self):
        """A panel's StatusNotifierWatcher: items register with it. Once: a second call says it is there."""
        if self.hosting:
            say("tray-host")
            return
        self.hosting = True
        items = []

        def call(_bus, sender, _path, _interface, method, params, invocation):
            if method == "RegisterStatusNotifierItem":
                items.append(params[0])
                # An item names its bus name (its object is /StatusNotifierItem) or its object path.
                self.tray_item = (sender, params[0] if params[0].startswith("/") else "/StatusNotifierItem")
                say("item", sender, params[0])
            invocation.return_value(None)

        def get(_bus, _sender, _path, _interface, name):
            return {"RegisteredStatusNotifierItems": GLib.Variant("as", items),
                    "IsStatusNotifierHostRegistered": GLib.Variant("b", True),
                    "ProtocolVersion": GLib.Variant("i", 0)}[name]

        node = Gio.DBusNodeInfo.new_for_xml(WATCHER_INTERFACE)
        self.bus.register_object("/StatusNotifierWatcher", node.interfaces[0], call, get, None)
        Gio.bus_own_name_on_connection(self.bus, WATCHER, Gio.BusNameOwnerFlags.NONE,
                                       lambda *_: say("tray-host"), lambda *_: say("tray-host-lost"))

    def tray_read(self):
        """The newest item's icon and tooltip, read as a panel reads them."""
        sender, path = self.tray_item

        def get(name):
            return self.bus.call_sync(sender, path, "org.freedesktop.DBus.Properties", "Get",
                                      GLib.Variant("(ss)", ("org.kde.StatusNotifierItem", name)), None,
                                      Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
        pixels = b"".join(bytes(data) for _w, _h, data in get("IconPixmap"))
        say("tray-item", hashlib.sha1(pixels).hexdigest(), get("ToolTip")[2])

    def signal(self, member, signature, values):
        self.bus.emit_signal(None, PATH, NOTIFICATIONS, member, GLib.Variant(signature, values))

    # ----- the person's actions -----
    def token(self):
        """An activation token from the compositor for the newest key typed in this window."""
        context = Gdk.Display.get_default().get_app_launch_context()
        info = Gio.AppInfo.create_from_commandline("askdesk-desktop", "askdesk", Gio.AppInfoCreateFlags.NONE)
        return context.get_startup_notify_id(info, [])

    def key(self, _window, event):
        name = Gdk.keyval_name(event.keyval)
        say("key", name)
        if name == "l":
            say("launch-token", self.token())
        elif name == "o" and self.newest is not None:
            token = self.token()
            self.signal("ActivationToken", "(us)", (self.newest, token))
            self.signal("ActionInvoked", "(us)", (self.newest, "default"))
            say("invoked", self.newest, token)
        elif name == "t" and self.tray_item is not None:
            token = self.token()
            sender, path = self.tray_item
            for method, args in (("ProvideXdgActivationToken", GLib.Variant("(s)", (token,))),
                                 ("Activate", GLib.Variant("(ii)", (0, 0)))):
                self.bus.call_sync(sender, path, "org.kde.StatusNotifierItem", method, args, None,
                                   Gio.DBusCallFlags.NONE, 5000, None)
            say("tray-activated", token)
        return False

    # ----- keys -----
    def start_remote_desktop(self):
        """A mutter RemoteDesktop session: its virtual keyboard types the keys."""
        service, path = "org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop"
        session = self.bus.call_sync(service, path, service, "CreateSession", None, GLib.VariantType("(o)"),
                                     Gio.DBusCallFlags.NONE, -1, None).unpack()[0]
        self.bus.call_sync(service, session, service + ".Session", "Start", None, None, Gio.DBusCallFlags.NONE,
                           -1, None)
        self.remote = (service, session)

    def keysym(self, keysym, pressed):
        service, session = self.remote
        self.bus.call_sync(service, session, service + ".Session", "NotifyKeyboardKeysym",
                           GLib.Variant("(ub)", (keysym, pressed)), None, Gio.DBusCallFlags.NONE, -1, None)

    def type_keys(self, keys):
        for key in keys:
            *mods, name = key.split("+")
            if self.input_method == "wtype":
                argv = ["wtype"]
                for mod in mods:
                    argv += ["-M", mod]
                argv += ["-k", name] if len(name) > 1 else [name]
                for mod in mods:
                    argv += ["-m", mod]
                subprocess.run(argv, check=True, timeout=15)
            else:
                syms = [Gdk.keyval_from_name({"ctrl": "Control_L", "shift": "Shift_L"}.get(m, m)) for m in mods]
                syms.append(Gdk.keyval_from_name(name))
                for sym in syms:
                    self.keysym(sym, True)
                for sym in reversed(syms):
                    self.keysym(sym, False)
        say("typed", " ".join(keys))

    def commands(self):
        for line in sys.stdin:
            words = line.split()
            if words and words[0] == "keys":
                GLib.idle_add(lambda keys=words[1:]: self.type_keys(keys) and False)
            elif words == ["show"]:
                GLib.idle_add(lambda: self.show() and False)
            elif words == ["hide"]:
                GLib.idle_add(lambda: self.hide() and False)
            elif words == ["tray-read"]:
                GLib.idle_add(lambda: self.tray_read() and False)
            elif words == ["tray-host"]:
                GLib.idle_add(lambda: self.tray_host() and False)
        GLib.idle_add(Gtk.main_quit)

    def start(self):
        if self.input_method == "mutter":
            self.start_remote_desktop()
            # Mutter adds its virtual keyboard at the first key: a lone Shift makes it, so the first key
            # the person means is not lost.
            self.keysym(Gdk.KEY_Shift_L, True)
            self.keysym(Gdk.KEY_Shift_L, False)
        threading.Thread(target=self.commands, daemon=True).start()
        say("ready")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", choices=("wtype", "mutter"), required=True)
    args = parser.parse_args()
    peer = Peer(args.input)
    peer.serve()
    Gtk.main()


if __name__ == "__main__":
    main()
