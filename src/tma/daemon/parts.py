"""The daemon's parts: what runs beside the edge reader, behind one small interface.

The loop reads panes (quiet edges, sweeps) and, after every read, tells each part what
it saw: every agent row as it now stands and the transitions since the previous read.
A part may also own file descriptors for the loop's `poll` (a socket, a subscriber)
and deadlines of its own (a periodic refresh). Parts are listed once, in
tma.daemon.loop's `build_parts`, so a new part is one module and one line there; this
module knows no part (each imports it for `Part`).

A part must not raise: an exception is logged by the loop and the part is kept (one
bad notification or subscriber must not end detection).
"""

from __future__ import annotations

from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Daemon(Protocol):
        """What a part may use of the daemon that runs it (tma.daemon.loop.Daemon has
        it): a protocol, so this module never imports the loop that imports it."""

        server: Any
        cfg: Any
        config_path: str | None
        manifest_dir: str | None
        paths: Any
        edges: Any
        cycle: Any
        parts: list[Part]

        def log(self, text: str) -> None: ...
        def status(self) -> dict[str, Any]: ...
        def config_changed(self) -> bool: ...
        def refresh(self, *args: Any, **kwargs: Any) -> Any: ...


class Transition(Record):
    """A pane's (state, detail) as the daemon saw it change between two reads.

    `before` is "" for a pane the daemon had not seen stamped; `after` is "" for a
    stamp that went away (the agent exited, the pane closed). Times are wall ms.
    """

    pane: str
    agent: str = ""
    before: str = ""
    before_detail: str = ""
    after: str = ""
    detail: str = ""
    source: str = ""
    attention: bool = False
    at: int = 0

    def to_json(self) -> dict:
        return {"pane": self.pane, "agent": self.agent, "from": self.before or None,
                "from_detail": self.before_detail or None, "to": self.after or None,
                "detail": self.detail or None, "source": self.source or None,
                "attention": self.attention, "at": self.at}


class Part:
    """Every hook is optional: override what the part needs."""

    name = "part"

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    def on_read(self, rows: list, transitions: list[Transition], now: int) -> None:
        """After every read or sweep. `rows`: every agent row (tma.runtime.cycle.Row)
        as stamped now; `now`: wall ms."""

    def deadline(self) -> int | None:
        """The next monotonic ms at which `tick` wants to run, or None."""
        return None

    def tick(self, now_mono: int) -> None:
        """Called each loop turn once `deadline()` has passed."""

    def fds(self) -> list[int]:
        """File descriptors to poll for reading."""
        return []

    def ready(self, fd: int) -> None:
        """One of `fds()` is readable."""

    def status(self) -> dict:
        """Merged into the daemon's status document."""
        return {}

    def reloaded(self) -> None:
        """The config was re-read (`self.daemon.cfg` is the new one)."""

    def close(self) -> None:
        """The daemon is stopping."""


def transitions(before: dict, rows: list, now: int) -> list[Transition]:
    """Compare the stamps of the previous read (pane id -> codec.Stamp) with the rows
    of this one. A pane stamped before and absent now went away."""
    out: list[Transition] = []
    seen: set[str] = set()
    for row in rows:
        pane = row.pane.pane_id
        seen.add(pane)
        stamp = row.stamp
        prior = before.get(pane)
        if prior is not None and (prior.state, prior.detail) == (stamp.state, stamp.detail):
            continue
        out.append(Transition(
            pane=pane, agent=row.agent or stamp.name,
            before=prior.state if prior is not None else "",
            before_detail=prior.detail if prior is not None else "",
            after=stamp.state, detail=stamp.detail, source=stamp.source,
            attention=stamp.attention, at=now))
    for pane, prior in before.items():
        if pane not in seen:
            out.append(Transition(pane=pane, agent=prior.name, before=prior.state,
                                  before_detail=prior.detail, at=now))
    return out
