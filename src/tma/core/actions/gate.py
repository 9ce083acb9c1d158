"""The broker's pure parts: the gate, and the outcome ladder (exit codes, fan-out worst).

The gate reads a Target (what is known about one pane right now) and answers None
(fireable) or a Refusal with its machine reason and a sentence. Order: no agent at all,
then applicability (`wrong-agent`), then coverage of a context-gated action
(`no-coverage`), then `when` (skipped by --force), then `requires`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tma.core import errors as exits, states
from tma.core.actions.schema import KIND_EXEC, Action
from tma.core.prompt import changed as prompt_changed

# -- outcomes
SENT = "sent"
REPLIED = "replied"
EXITED = "exited"
SPAWNED = "spawned"
TIMEOUT = "timeout"
REFUSED = "refused"
VANISHED = "vanished"
ERROR = "error"
OUTCOMES = (SENT, REPLIED, EXITED, SPAWNED, TIMEOUT, REFUSED, VANISHED, ERROR)

# -- refusal reasons
GATED = "gated"
REQUIRES_UNMET = "requires-unmet"
WRONG_AGENT = "wrong-agent"
NO_COVERAGE = "no-coverage"
LOCKED = "locked"
ANSWERED = "answered"  # another act already typed this episode's answer
EPISODE_CHANGED = "episode-changed"  # the pane is no longer in the episode the caller saw
REASONS = (GATED, REQUIRES_UNMET, WRONG_AGENT, NO_COVERAGE, LOCKED, ANSWERED, EPISODE_CHANGED)

# act's exit statuses, named as the broker knows them, from the one table
EXIT_OK, EXIT_ERROR, EXIT_USAGE = exits.OK, exits.FAIL, exits.USAGE
EXIT_VANISHED, EXIT_REFUSED, EXIT_LOCKED = exits.NO_PANE, exits.REFUSED, exits.LOCKED
EXIT_ANSWERED, EXIT_TIMEOUT = exits.ANSWERED, exits.TIMEOUT


@dataclass(frozen=True)
class Target:
    """One pane as the gate sees it. state None: the pane carries no agent state."""

    pane: str
    agent: str = ""
    state: str | None = None
    detail: str = ""
    attention: bool = False
    context_pct: int | None = None
    has_context_channel: bool = False
    session: str = ""
    cwd: str = ""
    pid: int = 0
    title: str = ""


@dataclass(frozen=True)
class Refusal:
    reason: str
    message: str


def exit_code(outcome: str, reason: str | None = None, child_code: int | None = None) -> int:
    if outcome in (SENT, REPLIED, SPAWNED):
        return EXIT_OK
    if outcome == EXITED:
        return child_code or 0
    if outcome == REFUSED:
        return {LOCKED: EXIT_LOCKED, ANSWERED: EXIT_ANSWERED}.get(reason or "", EXIT_REFUSED)
    if outcome == VANISHED:
        return EXIT_VANISHED
    if outcome == TIMEOUT:
        return EXIT_TIMEOUT
    return EXIT_ERROR


def _rank(outcome: str, reason: str | None, code: int) -> int:
    """acted < answered < locked < gated (4) < vanished < timeout < failed child < error."""
    if outcome == REFUSED:
        return {ANSWERED: 1, LOCKED: 2}.get(reason or "", 3)
    if outcome == VANISHED:
        return 4
    if outcome == TIMEOUT:
        return 5
    if outcome == EXITED and code:
        return 6
    if outcome == ERROR:
        return 7
    return 0


def worst_exit(results: list[tuple[str, str | None, int]]) -> int:
    """A fan-out's exit: the worst (outcome, reason, exit_code) by the ladder."""
    if not results:
        return EXIT_OK
    return max(results, key=lambda r: _rank(*r))[2]


# -- the gate, in words


def need_words(action: Action) -> str:
    """What `when` asks for, as a phrase: 'at a permission prompt', 'working' ..."""
    w = action.when
    if w.details == (states.PERMISSION,):
        return "at a permission prompt"
    if w.details == (states.QUESTION,):
        return "at a question"
    if w.details:
        return "blocked on " + " or ".join(w.details)
    if w.states:
        return " or ".join(w.states)
    return "fireable"


def _state_words(t: Target) -> str:
    if t.state == states.BLOCKED:
        return f"blocked on {t.detail}" if t.detail else "blocked for a reason tma cannot name"
    if t.state == states.IDLE and t.attention:
        return "idle (its turn is done)"
    return t.state or "unknown"


def _state_refusal(action: Action, t: Target) -> Refusal | None:
    w = action.when
    if (w.states and t.state not in w.states) or (w.details and t.detail not in w.details):
        need = need_words(action)
        if t.state == states.BLOCKED and need.startswith("at a "):
            return Refusal(GATED, f"{t.pane} is {_state_words(t)}, not {need}: "
                                  f"`{action.name}` answers only {need[5:]}s")
        return Refusal(GATED, f"{t.pane} is {_state_words(t)}, not {need}: "
                              f"nothing to {action.name}")
    return None


def _gauge_refusal(action: Action, t: Target) -> Refusal | None:
    w = action.when
    lo, hi = w.context_pct_min, w.context_pct_max
    if lo is None and hi is None:
        return None
    if t.context_pct is None:
        return Refusal(GATED, f"{t.agent} on {t.pane} has reported no context reading yet: "
                              f"`{action.name}` waits for the gauge")
    if (lo is not None and t.context_pct < lo) or (hi is not None and t.context_pct > hi):
        want = f"{lo}%" if hi is None else (f"at most {hi}%" if lo is None else f"{lo}-{hi}%")
        return Refusal(GATED, f"{t.agent} on {t.pane} has used {t.context_pct}% of its context "
                              f"window; `{action.name}` needs {want}"
                       + (" or more" if hi is None else ""))
    return None


def _requires_refusal(action: Action, t: Target) -> Refusal | None:
    for need in action.requires:
        if need == "context":
            if t.context_pct is None:
                return Refusal(GATED, f"{t.agent} on {t.pane} has reported no context reading "
                                      f"yet: `{action.name}` needs the gauge")
            continue
        value = {"session": t.session, "cwd": t.cwd, "pid": t.pid, "title": t.title}[need]
        if not value:
            return Refusal(REQUIRES_UNMET, f"`{action.name}` needs the pane's {need}, and "
                                           f"{t.pane} has none")
    return None


def binder_refusal(action: Action, pane: str, expect_episode_ms: int, since: int | None,
                   state: str | None) -> Refusal | None:
    """The episode binder: a caller that saw the pane in one episode (its `episode_ms`:
    the later of `@agent_since` and `@agent_turn_at`, epoch ms; `since` here is the pane's
    now) fires only into that episode. 0 expects nothing. Why: a desktop button or a
    card answered late must not land on the next prompt, nor on one answered by hand."""
    if not expect_episode_ms or (since == expect_episode_ms and state is not None):
        return None
    now = f"now {state} since {since}" if state is not None and since else "now in no state"
    return Refusal(EPISODE_CHANGED, f"{pane} moved on from the episode `{action.name}` was "
                                    f"meant for (since {expect_episode_ms}; {now}): "
                                    "nothing done")


def prompt_refusal(action: Action, pane: str, recorded: str, on_screen: str) -> Refusal | None:
    """The binder's second half, under the pane's lock: the stamp still names the bound
    episode, whose prompt was `recorded` (tma.core.prompt; "" when no reader recorded
    one), and the screen read just now shows `on_screen`. Another prompt there is
    another episode, although no reader has stamped it yet (the first was answered by
    hand and the next drawn within a poll): nothing is done. Unread on either side
    refuses nothing (the stamp alone decides, as it did)."""
    if not prompt_changed(recorded, on_screen):
        return None
    return Refusal(EPISODE_CHANGED, f"{pane} asks another prompt now than the one "
                                    f"`{action.name}` was meant for: nothing done")


def gate(action: Action, t: Target, *, force: bool = False) -> Refusal | None:
    """None when the action may fire on the target, else why not."""
    if t.state is None or not t.agent:
        return Refusal(GATED, f"{t.pane} carries no agent state (tma sees no agent there): "
                              f"nothing to {action.name}")
    refusal = None if force else _state_refusal(action, t)
    if refusal is not None:
        return refusal
    if not action.applies_to(t.agent):
        return Refusal(WRONG_AGENT, _wrong_agent_words(action, t))
    needs_gauge = "context" in action.requires or action.when.context_pct_min is not None \
        or action.when.context_pct_max is not None
    if needs_gauge and not t.has_context_channel:
        return Refusal(NO_COVERAGE, f"`{action.name}` reads the context gauge, and {t.agent} "
                                    "publishes none ([telemetry.context] in its manifest)")
    refusal = None if force else _gauge_refusal(action, t)
    return refusal if refusal is not None else _requires_refusal(action, t)


def row_gate(action: Action, t: Target) -> Refusal | None:
    """The part of the gate a pane's row alone decides: its state and detail (`when`)
    and its agent. What a menu may offer for a pane whose screen is on another machine
    (a fleet host's): the host runs the whole gate when the action fires, and an entry
    this refuses is one the host would refuse too."""
    if t.state is None or not t.agent:
        return Refusal(GATED, f"{t.pane} carries no agent state (tma sees no agent there): "
                              f"nothing to {action.name}")
    refusal = _state_refusal(action, t)
    if refusal is not None:
        return refusal
    if not action.applies_to(t.agent):
        return Refusal(WRONG_AGENT, _wrong_agent_words(action, t))
    return None


def _wrong_agent_words(action: Action, t: Target) -> str:
    names = ", ".join(action.covered_agents())
    if action.kind == KIND_EXEC:
        return f"`{action.name}` is for {names} panes, and {t.pane} runs {t.agent}"
    return f"`{action.name}` does not apply to {t.agent} panes ({t.pane}); it covers {names}"
