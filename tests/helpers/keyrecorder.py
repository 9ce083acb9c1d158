"""A fake agent that records every byte it receives on its tty.

Run as a script, this file is the agent: it puts its terminal in raw mode (so a key
arrives the moment tmux writes it, unbuffered and untranslated), draws a screen, and
appends everything it reads from the tty to a file until it is killed. The test side
(`KeyRecorder`) starts it in a pane of a private server under the agent's own name (a
symlink named like the agent pointing at the real interpreter, so `pane_current_command`,
/proc/<pid>/comm and the process walk all see the agent), and reads the bytes back.

Reusable by any test that needs to know exactly which keys reached an agent (`tma act`,
the action broker).

    rec = KeyRecorder.start(srv, "claude", capture)   # a tma.core.fixture.Capture
    ... something sends keys to rec.pane ...
    assert rec.settle() == key_bytes(["1"])
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

#: tmux key names -> the bytes tmux writes to the pane for them (the ones manifests use).
#: A key that is neither here nor a single printable character is refused, so a manifest
#: that starts using a new key name makes the test that checks it fail until it is added.
NAMED_KEYS = {
    "Escape": b"\x1b",
    "Enter": b"\r",
    "Tab": b"\t",
    "Space": b" ",
    "BSpace": b"\x7f",
    "Up": b"\x1b[A",
    "Down": b"\x1b[B",
    "Right": b"\x1b[C",
    "Left": b"\x1b[D",
}


def key_bytes(keys) -> bytes:
    """The bytes one `send-keys -t PANE KEY...` delivers for these send-keys arguments."""
    out = b""
    for key in keys:
        if key in NAMED_KEYS:
            out += NAMED_KEYS[key]
        elif len(key) == 3 and key.startswith("C-") and key[2].isalpha():
            out += bytes([ord(key[2].lower()) - ord("a") + 1])
        elif len(key) == 1 and key.isprintable():
            out += key.encode()
        else:
            raise ValueError(f"key_bytes does not know the tmux key {key!r}: add it")
    return out


class KeyRecorder:
    def __init__(self, srv, pane: str, record: Path) -> None:
        self.srv, self.pane, self.record = srv, pane, record

    @classmethod
    def start(cls, srv, agent: str, capture, *, title: str | None = None,
              after=None, redraw_ms: int = 0, _menu: tuple = ()) -> KeyRecorder:
        """A pane whose foreground process is `agent` (a real process of that name), in raw
        mode, showing the capture's visible screen with its title (or `title`). With
        `after` (a capture), the agent redraws that screen `redraw_ms` after the first key
        it receives, as an agent does once its prompt is answered."""
        bindir = srv.root / "recorder-bin"
        bindir.mkdir(exist_ok=True)
        link = bindir / agent
        if not link.exists():
            link.symlink_to(os.path.realpath(sys.executable))
        n = len(list(bindir.glob("*.bytes")))
        record, screen = bindir / f"{agent}-{n}.bytes", bindir / f"{agent}-{n}.screen"
        height = capture.height or 30
        lines = capture.body.rstrip("\n").split("\n")[-height:]
        screen.write_text("\n".join(lines), encoding="utf-8")
        tail = ""
        if after is not None:
            later = bindir / f"{agent}-{n}.after"
            later.write_text("\n".join(after.body.rstrip("\n").split("\n")[-height:]),
                             encoding="utf-8")
            tail = f" {later} {int(redraw_ms)}"
        if _menu:  # KeyRecorder.menu: the screens, the answered screen, Ups on the top row
            screens, answered, up_on_top = _menu
            paths = [bindir / f"{agent}-{n}.row{i}" for i in range(len(screens))]
            for path, cap in zip(paths, screens, strict=True):
                path.write_text("\n".join(cap.body.rstrip("\n").split("\n")[-height:]),
                                encoding="utf-8")
            done = bindir / f"{agent}-{n}.answered"
            done.write_text("" if answered is None else "\n".join(
                answered.body.rstrip("\n").split("\n")[-height:]), encoding="utf-8")
            Path(f"{record}.menu").write_text(
                "\n".join([str(up_on_top), str(done), *map(str, paths)]), encoding="utf-8")
        width = int(capture.headers.get("width") or 100)
        pane = srv.new_pane(f"exec {link} {Path(__file__).resolve()} {record} {screen}{tail}",
                            width=width, height=height)
        ready = Path(f"{record}.ready")
        srv.wait_for(ready.exists)
        srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == agent)
        srv.tmux("select-pane", "-t", pane, "-T", capture.title if title is None else title)
        return cls(srv, pane, record)

    @classmethod
    def menu(cls, srv, agent: str, screens, *, after=None, up_on_top: int = 0,
             lag_ms: int = 0) -> KeyRecorder:
        """A pane whose `agent` draws an unnumbered menu the way Claude Code 2.1.332 does
        (its approval when auto mode cannot check an action): `screens` are captures of the
        one dialog with the cursor on each row, top to bottom, the first drawn at start.
        Down moves the cursor one row and wraps from the last to the first; Up moves it
        back, and on the top row moves nothing visible but is remembered: the next Down
        is swallowed (each press of Up there swallows one more), as the real one does
        (lab, 2.1.332). `up_on_top` such presses were made before the test starts. Enter
        draws `after` (the screen once answered) and ends the menu. Every byte is
        recorded. `lag_ms`: an agent too busy to keep up, which takes each key that long
        after it came, in order."""
        return cls.start(srv, agent, screens[0],
                         _menu=(tuple(screens), after, f"{up_on_top}:{lag_ms}"))

    def received(self) -> bytes:
        return self.record.read_bytes()

    def settle(self, expect: int = 0, timeout: float = 5.0, quiet: float = 0.5) -> bytes:
        """The bytes received once at least `expect` have come and then `quiet` seconds
        pass with nothing more (so a stray extra key is seen, not missed)."""
        deadline = time.monotonic() + timeout
        while len(self.received()) < expect and time.monotonic() < deadline:
            time.sleep(0.02)
        while True:
            seen = self.received()
            time.sleep(quiet)
            if self.received() == seen:
                return seen


def _draw(screen: str) -> None:
    text = Path(screen).read_text(encoding="utf-8")
    os.write(1, ("\x1b[2J\x1b[H" + text.replace("\n", "\r\n")).encode())


class _Menu:
    """KeyRecorder.menu's dialog, inside the recorder process."""

    def __init__(self, spec: Path) -> None:
        up, self.after, *self.screens = spec.read_text(encoding="utf-8").split("\n")
        hidden, _, lag = up.partition(":")
        self.at, self.hidden, self.done = 0, int(hidden), False
        self.lag = int(lag or 0) / 1000

    def feed(self, data: bytes) -> None:
        i = 0
        while i < len(data) and not self.done:
            if data.startswith(b"\x1b[B", i):  # Down
                if self.hidden:
                    self.hidden -= 1
                else:
                    self.at = (self.at + 1) % len(self.screens)
                    _draw(self.screens[self.at])
                i += 3
            elif data.startswith(b"\x1b[A", i):  # Up
                if self.at == 0:
                    self.hidden += 1
                else:
                    self.at -= 1
                    _draw(self.screens[self.at])
                i += 3
            elif data[i:i + 1] == b"\r":  # Enter: the row under the cursor is picked
                self.done = True
                if Path(self.after).read_text(encoding="utf-8"):
                    _draw(self.after)
                i += 1
            else:
                i += 1


def _record(record: str, screen: str, after: str = "", redraw_ms: str = "0") -> None:
    import select
    import termios
    import tty

    tty.setraw(0, termios.TCSANOW)  # before the screen: no key can arrive cooked
    redraw_at = None  # monotonic time the `after` screen is due, once a key came
    spec = Path(record + ".menu")
    menu = _Menu(spec) if spec.exists() else None
    queued: list[tuple[float, bytes]] = []  # a lagging menu's keys, each with when it is taken
    with open(record, "wb") as out:
        _draw(screen)
        Path(record + ".ready").touch()
        while True:
            now = time.monotonic()
            while queued and queued[0][0] <= now:
                menu.feed(queued.pop(0)[1])  # type: ignore[union-attr]
            due = [t for t in (redraw_at, queued[0][0] if queued else None) if t is not None]
            wait = None if not due else max(0.0, min(due) - now)
            if not select.select([0], [], [], wait)[0]:
                if redraw_at is not None and redraw_at <= time.monotonic():
                    _draw(after)
                    after, redraw_at = "", None
                continue
            data = os.read(0, 4096)
            if not data:
                return
            out.write(data)
            out.flush()
            if menu is not None and menu.lag:
                queued.append((time.monotonic() + menu.lag, data))
            elif menu is not None:
                menu.feed(data)
            elif after and redraw_at is None:
                redraw_at = time.monotonic() + int(redraw_ms) / 1000


if __name__ == "__main__":
    _record(*sys.argv[1:])
