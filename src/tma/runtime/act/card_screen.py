"""The screen lane of a card: what a permission dialog on the screen asks.

Light on purpose (no protocol types, no HTTP): `tma ls --json` and the daemon's notifier
ask it about the panes only the screen can speak for (blocked on a permission no hook
parked), and the card (tma.runtime.act.card) about the one pane it builds. The dialog is read
by the manifest's `[dialog]` rules through tma.core.card.extract.
"""

from __future__ import annotations

from tma.core import states
from tma.core.card import ScreenAsk, extract as _core_extract
from tma.core.rules import strip_ansi
from tma.tmux import read

# ---------------------------------------------------------------- the screen lane


def extract(agent: str, lines: list[str], manifest) -> ScreenAsk | None:
    """The dialog the screen shows, by the manifest's `[dialog]` rules (None: no rules,
    no extractor, or nothing found). The extractor lives in tma.core.card."""
    rules = getattr(manifest, "dialog", None) if manifest is not None else None
    if not rules:
        return None
    try:  # it never raises by contract; a card does not bet on that
        return _core_extract(agent, lines, rules)
    except Exception:  # noqa: BLE001 - a card never fails on its best-effort sources
        return None


def wants_screen(row) -> bool:
    """A blocked/permission pane the hook lane says nothing about (only the screen can)."""
    return (row.stamp.state == states.BLOCKED and row.stamp.detail == "permission"
            and row.agent != "opencode" and not row.pane.options.get("@agent_pending_tool"))


def screen_asks(server, rows, manifests, captured=None) -> dict[str, ScreenAsk]:
    """pane id -> what its screen asks, for every row only the screen can speak for whose
    manifest has `[dialog]` rules: one batched capture (none when no row qualifies).
    `captured`: pane id -> a read.Captured this run already took (a cycle's): those
    panes are read from it, its visible rows, and only the others are captured."""
    wanted = {}
    for row in rows:
        if not wants_screen(row):
            continue
        manifest = manifest_for(manifests, row.agent)
        if manifest is not None and getattr(manifest, "dialog", None):
            wanted[row.pane.pane_id] = (row, manifest)
    if not wanted:
        return {}
    screens = {}
    for pane_id in wanted:
        body = visible(captured.get(pane_id)) if captured else None
        if body is not None:
            screens[pane_id] = body
    missing = [p for p in wanted if p not in screens]
    if missing:
        screens.update((p, cap.body) for p, cap in
                       read.capture_many(server, [(p, 0) for p in missing]).items())
    out = {}
    for pane_id, (row, manifest) in wanted.items():
        body = screens.get(pane_id)
        if body is None:
            continue
        ask = extract(row.agent, strip_ansi(body).splitlines(), manifest)
        if ask is not None:
            out[pane_id] = ask
    return out


def visible(cap) -> str | None:
    """The visible screen of a capture that may hold scrollback rows above it (a cycle's):
    its last `height` rows, what a capture of the visible screen alone returns. None when
    the capture does not say its height."""
    if cap is None or cap.height <= 0:
        return None
    rows = cap.body.split("\n")  # \n only: a row may hold \x0b, \x1c and friends
    ended = rows[-1] == ""
    if ended:
        rows.pop()
    return "\n".join(rows[-cap.height:]) + ("\n" if ended else "")


def manifest_for(manifests, agent: str):
    if manifests is None:
        return None
    try:
        return manifests.get(agent)
    except (KeyError, LookupError):
        return None


def screen_pending(server, rows, manifests, captured=None) -> dict[str, tuple[str, str]]:
    """pane id -> (tool, summary) the screen's dialog names, for the blocked/permission
    rows the hook lane says nothing about (ls --json's pending_tool/pending_summary).
    `captured`: as screen_asks takes it."""
    return {pane: (ask.tool or "", ask.summary or ask.tool or "")
            for pane, ask in screen_asks(server, rows, manifests, captured).items()
            if ask.tool or ask.summary}
