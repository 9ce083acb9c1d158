"""The fold: evidence + facts + the previous stamp -> one write plan.

Order (the arbitration record A2): a fresh hook claim; the foreground cap (holding a live hook
claim); the scroll / history freeze; blocker > working > idle chrome; else hold
the previous state, or unknown. Every time is passed in; nothing reads a clock.

A blocked pane whose screen shows another prompt than the one its episode recorded
(tma.core.prompt) starts a new episode however short the time between the two, even
with no other state seen in between (the arbitration record A16).
"""

from __future__ import annotations

from tma.core import plan as P, states
from tma.core.codec import ahead
from tma.core.prompt import changed as prompt_changed
from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from tma.core.codec import Stamp
    from tma.core.rules import EngineResult

HOOK = "hook"
SCREEN = "screen"
TITLE = "title"


# Plain slotted records with their __init__ spelled out (built per pane on the cold path;
# dataclasses would import `inspect`).
class Evidence(Record):
    __slots__ = ("source", "state", "detail", "at", "label")
    _fields = (("source", ""), ("state", ""), ("detail", ""), ("at", 0), ("label", ""))

    def __init__(self, source: str, state: str, detail: str, at: int, label: str = "") -> None:
        self.source = source  # hook | screen | title
        self.state = state
        self.detail = detail
        self.at = at
        self.label = label


class Facts(Record):
    __slots__ = ("agent_pid", "foreground_is_agent", "scrolled", "history_view")
    _fields = (("agent_pid", 0), ("foreground_is_agent", True), ("scrolled", False),
               ("history_view", False))

    def __init__(self, agent_pid: int = 0, foreground_is_agent: bool = True,
                 scrolled: bool = False, history_view: bool = False) -> None:
        self.agent_pid = agent_pid  # the walked agent pid, 0 when none is walkable
        self.foreground_is_agent = foreground_is_agent
        self.scrolled = scrolled  # tmux scroll offset > 0 (copy-mode at offset 0 is live)
        self.history_view = history_view  # a skip_state_update rule matched


class FoldConfig(Record):
    dwell_ms: int = 3000
    hook_decay_ms: int = 60_000
    blocked_decay_ms: int = 300_000
    freshness_ms: int = 3000

    def decay_window(self, state: str) -> int:
        return self.blocked_decay_ms if state == states.BLOCKED else self.hook_decay_ms


def evidence_from(result: EngineResult, at: int) -> list[Evidence]:
    """The engine's per-state claims as evidence stamped with the capture time."""
    return [
        Evidence(c.source, c.state, c.detail, at, c.rule.label) for c in result.claims.values()
    ]


def _latest(evidence: Iterable[Evidence]) -> Evidence | None:
    best: Evidence | None = None
    for ev in evidence:
        if best is None or ev.at >= best.at:
            best = ev
    return best


def _attention(prev: Stamp | None, state: str) -> bool:
    """Raise on entering blocked and on a working->idle completion."""
    prev_state = prev.state if prev is not None else None
    if state == states.BLOCKED:
        return prev_state != states.BLOCKED
    if state == states.IDLE:
        return prev_state == states.WORKING
    return False


def _publish(prev: Stamp | None, ev: Evidence, source: str, guard: P.Guard, reason: str,
             episode_reset: bool, prompt: str = "", new_prompt: bool = False) -> P.Plan:
    return P.Plan(
        P.PUBLISH,
        state=ev.state,
        detail=states.safe_detail(ev.detail),
        source=source,
        evidence_at=ev.at,
        guard=guard,
        set_attention=new_prompt or _attention(prev, ev.state),
        episode_reset=episode_reset,
        reason=reason + ("; another prompt than the episode's: a new episode"
                         if new_prompt else ""),
        label=ev.label,
        prompt=prompt if ev.state == states.BLOCKED else "",
        new_prompt=new_prompt,
    )


def _new_prompt(prev: Stamp | None, prompt: str) -> bool:
    """A blocked episode whose recorded prompt is not the one on screen now."""
    return (prev is not None and prev.state == states.BLOCKED and bool(prev.prompt)
            and prompt_changed(prev.prompt, prompt))


def _capture_guard(ev: Evidence, episode_reset: bool) -> P.Guard:
    if episode_reset:
        return P.Guard(P.UNCONDITIONAL)
    if ev.state == states.BLOCKED:
        return P.Guard(P.CARVE_OUT, at=ev.at)
    return P.Guard(P.PROTECT_HOOK)


def _hold(prev: Stamp | None, reason: str, now: int, episode_reset: bool) -> P.Plan:
    if prev is None:
        # Nothing to hold: the floor is unknown, written the way a capture writes.
        ev = Evidence(SCREEN, states.UNKNOWN, "", now, "no evidence")
        guard = P.Guard(P.UNCONDITIONAL) if episode_reset else P.Guard(P.PROTECT_HOOK)
        return _publish(None, ev, states.SOURCE_CAPTURE, guard, reason + "; nothing to hold",
                        episode_reset)
    return P.Plan(P.HOLD, reason=reason)


def _corroborate(prev: Stamp, ev: Evidence, prompt: str = "") -> P.Plan:
    return P.Plan(
        P.PUBLISH,
        state=prev.state,
        detail=prev.detail,
        source=states.SOURCE_HOOK,
        evidence_at=ev.at,
        guard=P.Guard(P.REFRESH_CLAIM, state=prev.state),
        reason=f"screen agrees with the hook claim ({prev.state}); evidence refreshed",
        label=ev.label,
        prompt=prompt if prev.state == states.BLOCKED else "",
    )


def verdict(
    prev: Stamp | None,
    facts: Facts,
    evidence: list[Evidence],
    visible: Iterable[str],
    cfg: FoldConfig,
    now: int,
    prompt: str = "",
    decisive: Iterable[str] = (),
) -> P.Plan:
    """`prompt`: the identity of the prompt the screen shows (tma.core.prompt.of_screen,
    read where the screen carries blocker chrome; "" when none was read). `decisive`:
    the manifest's [capture].decisive states."""
    visible = tuple(visible)
    episode_reset = False
    # 0. Episode boundary: a different agent process is a new episode.
    if prev is not None and prev.pid and facts.agent_pid and prev.pid != facts.agent_pid:
        prev = None
        episode_reset = True

    # 1. A fresh hook claim in this evidence set.
    hooks = [e for e in evidence if e.source == HOOK and e.state in states.STATES]
    hook = _latest(hooks)
    if hook is not None:
        return _publish(prev, hook, states.SOURCE_HOOK, P.Guard(P.HOOK_ARBITRATE, at=hook.at),
                        f"hook event {hook.label}", episode_reset)

    protected = prev is not None and prev.is_hook_claim

    # 2. Foreground cap: the screen belongs to something else.
    if not facts.foreground_is_agent:
        if protected and facts.agent_pid:
            return P.Plan(P.HOLD, reason="agent not in the foreground; its live hook claim holds")
        ev = Evidence(TITLE, states.UNKNOWN, "", now, "foreground is not the agent")
        return _publish(prev, ev, states.SOURCE_PROCESS, P.Guard(P.UNCONDITIONAL),
                        "agent not in the foreground: capped at unknown", episode_reset)

    # 3. Freeze: the viewport is not the live screen.
    if facts.scrolled:
        return _hold(prev, "pane is scrolled back: frozen", now, episode_reset)
    if facts.history_view:
        return _hold(prev, "a history view is on screen: frozen", now, episode_reset)

    # 4. The three chrome slots, latest by time.
    blocker = _latest(e for e in evidence if e.state == states.BLOCKED and e.source != HOOK)
    working = _latest(e for e in evidence if e.state == states.WORKING and e.source != HOOK)
    idle = _latest(e for e in evidence if e.state == states.IDLE and e.source != HOOK)

    # 5. Against a protected hook claim.
    if protected:
        assert prev is not None
        return _against_hook(prev, blocker, working or idle, visible, cfg, now, prompt,
                             tuple(decisive))

    # 6. The ladder.
    if blocker is not None:
        return _publish(prev, blocker, states.SOURCE_CAPTURE, _capture_guard(blocker, episode_reset),
                        "blocker chrome", episode_reset, prompt, _new_prompt(prev, prompt))
    if working is not None:
        return _publish(prev, working, states.SOURCE_CAPTURE, _capture_guard(working, episode_reset),
                        "working chrome", episode_reset)
    if idle is not None:
        if (
            prev is not None
            and prev.state == states.WORKING
            and _age(prev, now) <= cfg.dwell_ms
        ):
            return P.Plan(P.HOLD, reason="idle chrome inside the working->idle dwell")
        return _publish(prev, idle, states.SOURCE_CAPTURE, _capture_guard(idle, episode_reset),
                        "idle chrome", episode_reset)

    # 7. Nothing on screen: hold, or unknown.
    return _hold(prev, "no rule matched", now, episode_reset)


def _age(prev: Stamp, now: int) -> int:
    """How old the stored evidence is. Dated beyond the skew ahead of now (the clock
    was stepped back since it was written), it is as old as can be: it never holds a
    later event."""
    return now if ahead(prev.evidence_at, now) else now - prev.evidence_at


def _against_hook(
    prev: Stamp,
    blocker: Evidence | None,
    candidate: Evidence | None,
    visible: tuple[str, ...],
    cfg: FoldConfig,
    now: int,
    prompt: str = "",
    decisive: tuple[str, ...] = (),
) -> P.Plan:
    if blocker is not None:
        if prev.state == states.BLOCKED and _new_prompt(prev, prompt):
            # The claim was about the prompt its episode recorded, and another one
            # stands now: the screen names this episode, under the capture's carve-out
            # (a hook claim written since the capture, its own word on the new prompt,
            # still wins).
            return _publish(prev, blocker, states.SOURCE_CAPTURE,
                            P.Guard(P.CARVE_OUT, at=blocker.at),
                            "blocker chrome under a blocked hook claim", False, prompt, True)
        if prev.state == states.BLOCKED:
            return _corroborate(prev, blocker, prompt)
        # The answered-prompt race is decided by evidence time, here and server-side;
        # a claim dated beyond the skew ahead of now orders before every event.
        if blocker.at > (0 if ahead(prev.evidence_at, now) else prev.evidence_at):
            return _publish(prev, blocker, states.SOURCE_CAPTURE,
                            P.Guard(P.CARVE_OUT, at=blocker.at),
                            "blocker chrome newer than the hook claim", False, prompt)
        return P.Plan(P.HOLD, reason="blocker chrome older than the hook claim")
    if candidate is None:
        return P.Plan(P.HOLD, reason="hook claim holds (silence never decays a claim)")
    if candidate.state == prev.state:
        return _corroborate(prev, candidate)
    # Decisive chrome (an agent whose idle footer is drawn only when no turn runs and no
    # dialog is up) ends a visible claim the agent's hooks never close (a dialog dismissed
    # with no event, a turn that failed with no end event), once it has stood for the
    # dwell past the claim's evidence, which screen agreement keeps moving forward. A
    # hook claim written since the capture still wins (the carve-out guard).
    if (candidate.state in decisive and prev.state in visible
            and not ahead(prev.evidence_at, now)
            and candidate.at - prev.evidence_at > cfg.dwell_ms):
        return _publish(prev, candidate, states.SOURCE_CAPTURE,
                        P.Guard(P.CARVE_OUT, at=candidate.at),
                        f"decisive {candidate.state} chrome past the hook claim {prev.state}",
                        False)
    age = _age(prev, now)
    if age <= cfg.decay_window(prev.state):
        return P.Plan(P.HOLD, reason=f"hook claim {prev.state} inside its decay window")
    if prev.state not in visible:
        return P.Plan(P.HOLD, reason=f"hook claim {prev.state} is not screen-visible for this agent")
    if prev.state == states.WORKING and candidate.state == states.IDLE and age <= cfg.dwell_ms:
        return P.Plan(P.HOLD, reason="idle chrome inside the working->idle dwell")
    return _publish(prev, candidate, states.SOURCE_CAPTURE, P.Guard(P.UNCONDITIONAL),
                    f"hook claim {prev.state} decayed on contrary chrome", False)
