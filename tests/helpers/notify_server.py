"""A small desktop notification server on a real D-Bus session bus, for tests.

It owns `org.freedesktop.Notifications` on a private `dbus-daemon --session` and
implements what notify-send uses of the freedesktop notification spec: Notify (every
call recorded with its arrival time), GetCapabilities (["actions", "body"]),
GetServerInformation, CloseNotification; and it emits the spec's two signals when the
test asks: ActionInvoked (a click on a button, or on the body: "default") and
NotificationClosed. Written with jeepney (pure Python), so it runs in the venv.

    with NotifyBus() as bus:                       # skips when dbus-daemon is missing
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        ... something runs notify-send ...
        note = bus.wait_notify()                   # a Notification
        bus.invoke(note.id, "approve")             # the user clicks Approve
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import threading
import time

import pytest

IFACE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
CLOSED_BY_CALL = 3  # the spec's NotificationClosed reason for CloseNotification
CLOSED_DISMISSED = 2


class Notification:
    """One Notify call as received: the sender's bus name, the spec's arguments, and
    when it arrived (time.monotonic and epoch ms)."""

    def __init__(self, id: int, sender: str, args: tuple, at: float, at_ms: int) -> None:
        self.id = id
        self.sender = sender
        (self.app_name, self.replaces_id, self.icon, self.summary, self.body,
         actions, self.hints, self.expire_timeout) = args
        # the spec's flat list [key, label, key, label, ...] as pairs
        self.actions = list(zip(actions[::2], actions[1::2], strict=True))
        self.at = at
        self.at_ms = at_ms

    def __repr__(self) -> str:
        return f"Notification({self.id}, {self.summary!r}, {self.body!r}, {self.actions})"


def need_tools() -> None:
    """Skip (with the reason) where the real things are missing locally; under CI
    (.ci/run installs them) a missing one fails instead, so the tests never go quiet."""
    missing = None
    try:
        import jeepney  # noqa: F401
    except ImportError:
        missing = "jeepney is not installed (pip install -e '.[test]')"
    for tool, pkg in (("dbus-daemon", "dbus"), ("notify-send", "libnotify-bin")):
        if missing is None and shutil.which(tool) is None:
            missing = f"{tool} is not installed (apt-get install {pkg})"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the desktop test tools, and {missing}")
        pytest.skip(missing)


class NotifyBus:
    """A private session bus (a real dbus-daemon) with the notification server on it."""

    def __init__(self) -> None:
        self.address = ""
        self.proc: subprocess.Popen | None = None
        self.notes: list[Notification] = []
        self.calls: list[tuple[str, tuple]] = []  # (member, body) of every method call
        self.closed: list[int] = []
        self._out: queue.Queue = queue.Queue()
        self._new = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_id = 1
        #: while set, a Notify call is recorded but not answered (a notifier that hangs:
        #: notify-send waits on the call) until `release`
        self.hold = False
        self._held: list = []

    # -- lifecycle
    def __enter__(self) -> NotifyBus:
        need_tools()
        self.proc = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True)
        assert self.proc.stdout is not None
        self.address = self.proc.stdout.readline().strip()
        assert self.address, "dbus-daemon printed no address"
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection

        self.conn = open_dbus_connection(bus=self.address)
        reply = self.conn.send_and_get_reply(message_bus.RequestName(IFACE, 4), timeout=5)
        assert reply.body[0] == 1, f"could not own {IFACE}: {reply.body}"
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.conn.close()
        except Exception:
            pass
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
            if self.proc.stdout is not None:
                self.proc.stdout.close()

    # -- what the test does
    def wait_notify(self, n: int = 1, timeout: float = 10.0) -> Notification:
        """The n-th Notify call (1-based), waiting for it."""
        deadline = time.monotonic() + timeout
        with self._new:
            while len(self.notes) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no Notify call #{n} within {timeout}s "
                                         f"(calls: {[c[0] for c in self.calls]})")
                self._new.wait(left)
            return self.notes[n - 1]

    def wait_closed(self, nid: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        with self._new:
            while nid not in self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"notification {nid} was never closed")
                self._new.wait(left)

    def invoke(self, nid: int, key: str) -> None:
        """The user chose action `key` ("default": a click on the body). As a real
        server does, the notification then closes (dismissed)."""
        self._out.put(("ActionInvoked", "us", (nid, key)))
        self._out.put(("NotificationClosed", "uu", (nid, CLOSED_DISMISSED)))

    def dismiss(self, nid: int) -> None:
        """The user closed it without choosing: no action, the notification closes."""
        self._out.put(("NotificationClosed", "uu", (nid, CLOSED_DISMISSED)))

    def release(self) -> None:
        """Answer the Notify calls held so far (notify-send then goes on)."""
        self._out.put(("release", "", ()))

    # -- the server
    def _loop(self) -> None:
        from jeepney import DBusAddress, MessageType, new_signal

        emitter = DBusAddress(PATH, interface=IFACE)
        while not self._stop.is_set():
            while True:
                try:
                    member, sig, body = self._out.get_nowait()
                except queue.Empty:
                    break
                if member == "release":
                    from jeepney import new_method_return

                    held, self._held = self._held, []
                    for call, nid in held:
                        self.conn.send(new_method_return(call, "u", (nid,)))
                    continue
                self.conn.send(new_signal(emitter, member, sig, body))
            try:
                msg = self.conn.receive(timeout=0.02)
            except TimeoutError:
                continue
            except Exception:
                return
            if msg.header.message_type == MessageType.method_call:
                self._call(msg)

    def _call(self, msg) -> None:
        from jeepney import HeaderFields, new_error, new_method_return

        member = msg.header.fields.get(HeaderFields.member, "")
        iface = msg.header.fields.get(HeaderFields.interface, IFACE)
        sender = msg.header.fields.get(HeaderFields.sender, "")
        with self._new:
            self.calls.append((member, msg.body))
        if iface != IFACE:
            self.conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))
            return
        if member == "Notify":
            at, at_ms = time.monotonic(), time.time_ns() // 1_000_000
            nid = msg.body[1] or self._next_id
            self._next_id = max(self._next_id, nid) + 1
            if self.hold:
                self._held.append((msg, nid))
            else:
                self.conn.send(new_method_return(msg, "u", (nid,)))
            with self._new:
                self.notes.append(Notification(nid, sender, msg.body, at, at_ms))
                self._new.notify_all()
        elif member == "GetCapabilities":
            self.conn.send(new_method_return(msg, "as", (["actions", "body"],)))
        elif member == "GetServerInformation":
            self.conn.send(new_method_return(msg, "ssss", ("tma-test", "tma", "1", "1.2")))
        elif member == "CloseNotification":
            nid = msg.body[0]
            self.conn.send(new_method_return(msg))
            self._out.put(("NotificationClosed", "uu", (nid, CLOSED_BY_CALL)))
            with self._new:
                self.closed.append(nid)
                self._new.notify_all()
        else:
            self.conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))
