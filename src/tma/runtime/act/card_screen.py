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


def screen_asks(server, rows, manifests) -> dict[str, ScreenAsk]:
    """pane id -> what its screen asks, for every row only the screen can speak for whose
    manifest has `[dialog]` rules: one batched capture (none when no row qualifies)."""
    wanted = {}
    for row in rows:
        if not wants_screen(row):
            continue
        manifest = manifest_for(manifests, row.agent)
        if manifest is not None and getattr(manifest, "dialog", None):
            wanted[row.pane.pane_id] = (row, manifest)
    if not wanted:
        return {}
    caps = read.capture_many(server, [(p, 0) for p in wanted])
    out = {}
    for pane_id, (row, manifest) in wanted.items():
        cap = caps.get(pane_id)
        if cap is None:
            continue
        ask = extract(row.agent, strip_ansi(cap.body).splitlines(), manifest)
        if ask is not None:
            out[pane_id] = ask
    return out


def manifest_for(manifests, agent: str):
    if manifests is None:
        return None
    try:
        return manifests.get(agent)
    except (KeyError, LookupError):
        return None


def screen_pending(server, rows, manifests) -> dict[str, tuple[str, str]]:
    """pane id -> (tool, summary) the screen's dialog names, for the blocked/permission
    rows the hook lane says nothing about (ls --json's pending_tool/pending_summary)."""
    return {pane: (ask.tool or "", ask.summary or ask.tool or "")
            for pane, ask in screen_asks(server, rows, manifests).items()
            if ask.tool or ask.summary}
