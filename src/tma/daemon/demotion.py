"""Hook demotion: a hook claim that output keeps contradicting stops being believed.

A pane whose stored claim came from a hook but is no longer hook-fresh (its evidence
is older than `hook_decay_secs`) while quiet edges keep arriving has hooks that stopped
talking (killed with -9, unwired, a broken wrapper) or an agent that acts without
them. Each such edge counts; at `[daemon] demote_edges` (5) the pane is demoted: its
next reads fold the stored hook claim as if it were a screen read, so the screen
decides, and the write is unconditional (the guard that protects hook claims from
screen reads would otherwise hold it). New hook evidence (a hook-sourced stamp fresher
than the one counted against) clears the count. The map is capped (least recently
touched first out) and pruned to live panes after every read.
"""

from __future__ import annotations

from collections import OrderedDict

from tma.core import states

CAP = 4096


class Demotion:
    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self._edges: OrderedDict[str, tuple[int, int]] = OrderedDict()  # pane -> (n, evidence_at)

    def edge(self, pane: str, stamp, now: int, decay_ms: int) -> None:
        """A quiet edge on `pane`; counted while its stored claim is a stale hook claim."""
        if stamp is None or stamp.source != states.SOURCE_HOOK or \
                now - stamp.evidence_at <= decay_ms:
            return
        n, _at = self._edges.pop(pane, (0, 0))
        self._edges[pane] = (n + 1, stamp.evidence_at)
        while len(self._edges) > CAP:
            self._edges.popitem(last=False)

    def demoted(self, panes) -> frozenset[str]:
        return frozenset(p for p in panes
                         if self._edges.get(p, (0, 0))[0] >= self.threshold)

    def seen(self, stamps: dict) -> None:
        """After a read: every pane's stamp now. Gone panes and panes with new hook
        evidence leave the map."""
        for pane in list(self._edges):
            stamp = stamps.get(pane)
            _n, counted_at = self._edges[pane]
            if stamp is None or (stamp.source == states.SOURCE_HOOK
                                 and stamp.evidence_at > counted_at):
                del self._edges[pane]

    def status(self) -> dict:
        return {"demoted": sorted(p for p, (n, _) in self._edges.items() if n >= self.threshold),
                "demote_edges": self.threshold}
