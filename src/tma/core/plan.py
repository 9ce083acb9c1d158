"""Write plans: what the fold or the hook intake wants stored, and under which guard.

A plan names a guard kind, never a tmux format; `tma.tmux.write` renders it.
"""

from __future__ import annotations

from tma.core.record import Record

# Guard kinds (the condition under which the whole tuple holds instead of committing).
UNCONDITIONAL = "unconditional"  # episode reset, or an override the fold allowed
PROTECT_HOOK = "protect-hook"  # capture working/idle/unknown: hold on any hook claim
CARVE_OUT = "carveout"  # capture blocked: hold on a hook claim with evidence >= capture
REFRESH_CLAIM = "refresh"  # corroboration: commit only while the stored state is unchanged
HOOK_ARBITRATE = "hook"  # hook intake: hold on a hook claim with strictly newer evidence

PUBLISH = "publish"
HOLD = "hold"
REMOVE = "remove"


class Guard(Record):
    """kind; at = capture ms (carve-out) or event ms (hook arbitration);
    state = the claimed state (refresh-claim)."""

    kind: str = UNCONDITIONAL
    at: int = 0
    state: str = ""

    def __str__(self) -> str:
        if self.kind in (CARVE_OUT, HOOK_ARBITRATE):
            return f"{self.kind}:{self.at}"
        if self.kind == REFRESH_CLAIM:
            return f"{self.kind}:{self.state}"
        return self.kind


class Plan(Record):
    """One pane's write.

    publish: the tuple (since write-once, state, detail, source, evidence_at,
    attention when raising), then identity, then stamped_at last.
    hold: only hash and stamped_at move. remove: the per-pane set is unset.
    `label` names the rule or hook event that decided. `prompt`: the identity of the
    blocked prompt the screen showed (tma.core.prompt), recorded for the episode the
    write leaves standing ("" records nothing); `new_prompt`: a blocked pane now shows
    another prompt, so the write starts a new episode (since moves although the state
    does not) without the rest of an episode reset.
    """

    action: str = HOLD
    state: str = ""
    detail: str = ""
    source: str = ""
    evidence_at: int = 0
    guard: Guard = Guard(UNCONDITIONAL)
    set_attention: bool = False
    episode_reset: bool = False
    reason: str = ""
    label: str = ""
    prompt: str = ""
    new_prompt: bool = False

    @property
    def moves_since(self) -> bool:
        """The write sets since whatever the stored state: a new episode."""
        return self.episode_reset or self.new_prompt

    @property
    def writes_state(self) -> bool:
        return self.action == PUBLISH


def hold(reason: str) -> Plan:
    return Plan(HOLD, reason=reason)


def remove(reason: str) -> Plan:
    return Plan(REMOVE, reason=reason)
