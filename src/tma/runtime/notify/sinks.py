"""The sinks that reach a person away from this pane: one registry, one shape.

tma.runtime.notify.dispatch rings the built-in five (message line, bell, OSC in the pane, log,
command or desktop notifier); every other sink is a module with the `Sink` shape below,
named in `SINKS`. `dispatch` asks each whether the config makes it live and fires the
live ones; `tma debug notify-test` asks each to `test` and prints its lines.

A sink's contract (why: the hook path must never block the agent, and one sink that
hangs must never delay another):
- `fire` returns within a few milliseconds: slow work (an HTTP request, waiting on a
  notifier's button) runs in a thread or a child process the sink owns, with its own
  timeout and bounded retries; it never raises and never writes to stdout.
- `test` may wait (bounded by the sink's own timeout) and returns lines saying what it
  did, each starting with the sink's name. A line starting "<NAME> failed" marks the
  test failed (so does raising, or returning `(lines, False)`): `tma debug notify-test`
  exits 0 only when every live sink worked.
- `rings_for(cfg, trigger)` (optional): whether a live sink rings for that trigger (the
  push sinks' own `on`); without it, a live sink rings for every trigger. What doctor
  and notify-test name as ringing (tma.runtime.notify.dispatch.reaches) asks it.
"""

from __future__ import annotations

from tma.core.record import Record
from tma.runtime.notify.note import Note

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook path ~5 ms; the shape is for the checker
    from typing import Protocol
else:
    Protocol = object


class Ring(Record):
    """What a sink is handed besides the note: who rings and what they already know.
    `server` is the tmux server (tma.tmux.adapter.Server) or None; `clients` the attached
    client names when the caller read them; `daemon` whether the daemon rings (else the
    hook path or a test); `now` epoch ms."""

    server: object = None
    cfg: object = None
    now: int = 0
    daemon: bool = False
    clients: list[str] | None = None


class Sink(Protocol):
    NAME: str

    def live(self, cfg) -> bool: ...

    def fire(self, ring: Ring, note: Note) -> None: ...

    def test(self, ring: Ring, note: Note) -> list[str] | tuple[list[str], bool]: ...


def registry() -> list[Sink]:
    """Every sink beyond the built-in five, in firing order (imported only when asked:
    the hook path pays for a sink's imports only when a notification fires)."""
    from tma.runtime.notify import push as notify_push, terminal as notify_terminal

    return [notify_terminal, notify_push.NTFY, notify_push.WEBHOOK]


def live(cfg, early: bool | None = None) -> list[Sink]:
    """The sinks the config makes live; `early`: only those that must (True) or must not
    (False) reach the terminal before the message line, None: all of them."""
    out = []
    for sink in registry():
        try:
            if sink.live(cfg) and (early is None or bool(getattr(sink, "EARLY", False))
                                   == early):
                out.append(sink)
        except Exception:
            continue
    return out


def fire_early(ring: Ring, note: Note) -> None:
    """The EARLY sinks, done now (each bounded by its own timeout): a sink that writes
    through tmux to a client's terminal must do so before the message line shows, because
    tmux freezes a client's output while it shows a message and drops what passes through
    meanwhile (seen on 3.3a: the OSC never arrived)."""
    for sink in live(ring.cfg, early=True):
        try:
            getattr(sink, "fire_now", sink.fire)(ring, note)
        except Exception:
            continue


def fire_all(ring: Ring, note: Note, early: bool | None = None) -> None:
    """Fire every live sink (`early` as live's); one sink's failure never stops the next."""
    for sink in live(ring.cfg, early):
        try:
            sink.fire(ring, note)
        except Exception:
            continue
