"""The one write renderer: core plans -> seed-001 server-side conditional writes.

Each pane's write is one command line of `;`-chained `set-option`s, so the tuple
commits or holds as a whole, and a dead pane stops only its own line when many
lines go through one `source-file -` spawn. The hook intake, the poll cycle and
`tma debug stamp` all render here, so a stamp is byte-identical whoever writes it.

Only state-tuple writes end with `@agent_stamped_at`; side lanes (telemetry,
attention, locks) carry their own `_at` and never bump it.
"""

from __future__ import annotations

from tma.core import options, states
from tma.core import plan as P
from tma.core.codec import CLOCK_STEP_MS
from tma.core.record import Record
from tma.tmux.adapter import quote

PROBE_EXPECT = "1"


def suppress(guard: P.Guard) -> str:
    """The format that expands truthy when the write must hold."""
    if guard.kind == P.UNCONDITIONAL:
        return "0"
    if guard.kind == P.PROTECT_HOOK:
        return "#{==:#{@agent_source},hook}"
    if guard.kind == P.CARVE_OUT:
        return f"#{{&&:#{{==:#{{@agent_source}},hook}},#{{e|<=:{int(guard.at)},#{{@agent_evidence_at}}}}}}"
    if guard.kind == P.HOOK_ARBITRATE:
        return f"#{{&&:#{{==:#{{@agent_source}},hook}},#{{e|<:{int(guard.at)},#{{@agent_evidence_at}}}}}}"
    if guard.kind == P.REFRESH_CLAIM:
        return f"#{{?#{{==:#{{@agent_state}},{_token(guard.state)}}},0,1}}"
    raise ValueError(f"unknown guard {guard.kind!r}")


def _token(value: str) -> str:
    """A value safe inside a conditional format: [a-z0-9_-] tokens only."""
    return value if states.is_safe_token(value) else ""


_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:")


def safe_id(value: str) -> str:
    """Agent-supplied ids (session, request) go under -F guards only in this charset."""
    return value if value and len(value) <= 200 and all(c in _ID_CHARS for c in value) else ""


def _set(pane: str, key: str, value: str) -> str:
    return f"set-option -p -t {pane} {key} {quote(value)}"


def _setf(pane: str, key: str, cond: str, value: str) -> str:
    return f"set-option -p -F -t {pane} {key} {quote('#{?' + cond + ',#{' + key + '},' + value + '}')}"


def _unset(pane: str, key: str) -> str:
    return f"set-option -p -u -t {pane} {key}"


class Extra(Record):
    """A companion option written after stamped_at (session, turn_at, notified_at …).

    Guarded extras commit only with the tuple (an empty value then stores empty, which
    reads as absent); `also` adds a condition that holds this one option too (the
    notification marker's "already notified"). An unguarded empty value unsets."""

    key: str = ""
    value: str = ""
    guarded: bool = True
    also: str = ""


def publish(pane: str, plan: P.Plan, now: int, *, name: str, pid: int, hash: str = "",
            guarded: bool = True, prev_state: str | None = None, prev_since: int = 0,
            extras: tuple[Extra, ...] = ()) -> str:
    """One pane's publish chain: since, state, detail, source, evidence_at, [attention],
    hash, pid, name, stamped_at, then companions."""
    state = _token(plan.state)
    detail = _token(states.safe_detail(plan.detail))
    source = _token(plan.source)
    since = int(plan.evidence_at)
    cmds: list[str] = []
    if guarded:
        cond = suppress(plan.guard)
        if plan.episode_reset:
            since_value = str(since)
        else:
            keep = (f"#{{&&:#{{==:#{{@agent_state}},{state}}},#{{&&:#{{@agent_since}},"
                    f"#{{e|<=:#{{@agent_since}},{int(now) + CLOCK_STEP_MS}}}}}}}")
            since_value = f"#{{?{keep},#{{@agent_since}},{since}}}"
        cmds.append(_setf(pane, "@agent_since", cond, since_value))
        cmds.append(_setf(pane, "@agent_state", cond, state))
        cmds.append(_setf(pane, "@agent_detail", cond, detail))
        # tmux re-expands SUPPRESS for every option, so no field this chain writes may
        # flip it mid-chain. The hook guard reads source==hook and evidence: a committing
        # hook write that stored source=hook first would then compare its own event time
        # against the old (e.g. capture) evidence and hold the rest; writing evidence_at
        # first makes the re-check `at < at`, false. The carve-out needs the spec order
        # (source first): evidence=at first would re-check as `at <= at`, true.
        src = _setf(pane, "@agent_source", cond, source)
        evi = _setf(pane, "@agent_evidence_at", cond, str(int(plan.evidence_at)))
        cmds.extend((evi, src) if plan.guard.kind == P.HOOK_ARBITRATE else (src, evi))
        if plan.set_attention:
            cmds.append(_setf(pane, "@agent_attention", cond, "1"))
    else:
        # Advisory degrade (tmux without -F expansion): write-once decided client-side.
        keep = (prev_state == state and prev_since and prev_since <= now + CLOCK_STEP_MS
                and not plan.episode_reset)
        cmds.append(_set(pane, "@agent_since", str(prev_since if keep else since)))
        cmds.append(_set(pane, "@agent_state", state))
        cmds.append(_set(pane, "@agent_detail", detail))
        cmds.append(_set(pane, "@agent_source", source))
        cmds.append(_set(pane, "@agent_evidence_at", str(int(plan.evidence_at))))
        if plan.set_attention:
            cmds.append(_set(pane, "@agent_attention", "1"))
    if plan.episode_reset:
        if not plan.set_attention:
            cmds.append(_unset(pane, "@agent_attention"))
        cmds.append(_unset(pane, "@agent_notified_at"))
        cmds.append(_unset(pane, "@agent_turn_at"))
    if hash:
        cmds.append(_set(pane, "@agent_hash", hash))
    cmds.append(_set(pane, "@agent_pid", str(int(pid))))
    cmds.append(_set(pane, "@agent_name", name))
    cmds.append(_set(pane, "@agent_stamped_at", str(int(now))))
    cond = suppress(plan.guard) if guarded else "0"
    for extra in extras:
        if extra.guarded and guarded:
            both = f"#{{||:{cond},{extra.also}}}" if extra.also else cond
            cmds.append(_setf(pane, extra.key, both, extra.value))
        elif not extra.value:
            cmds.append(_unset(pane, extra.key))
        else:
            cmds.append(_set(pane, extra.key, extra.value))
    return " ; ".join(cmds)


def hold(pane: str, now: int, *, hash: str = "") -> str:
    """A hold moves only the freshness marker (and the viewport hash)."""
    cmds = []
    if hash:
        cmds.append(_set(pane, "@agent_hash", hash))
    cmds.append(_set(pane, "@agent_stamped_at", str(int(now))))
    return " ; ".join(cmds)


def remove(pane: str, names: tuple[str, ...] = options.EPISODE_OPTIONS) -> str:
    """Unset the per-pane set in one line (survivors and @agent_ignore untouched)."""
    return " ; ".join(_unset(pane, n) for n in names)


def already_notified() -> str:
    """True when @agent_notified_at is not older than max(@agent_since, @agent_turn_at),
    evaluated after the chain wrote since and turn_at: the dedup, server-side."""
    return ("#{&&:#{e|>=:#{@agent_notified_at},#{@agent_since}},"
            "#{e|>=:#{@agent_notified_at},#{@agent_turn_at}}}")


def set_plain(pane: str, key: str, value: str) -> str:
    return _unset(pane, key) if value == "" else _set(pane, key, value)


def rollup(scope: str, target: str, value: str) -> str:
    """Window (`-w`) or session rollup; an empty value unsets it."""
    key = options.ROLLUP_WINDOW if scope == "window" else options.ROLLUP_SESSION
    flag = "-w" if scope == "window" else ""
    base = f"set-option {flag} -t {target}".replace("  ", " ")
    if not value:
        return f"{base} -u {key}"
    return f"{base} {key} {quote(value)}"


def server_option(key: str, value: str) -> str:
    return f"set-option -s {key} {quote(value)}"


def probe_line() -> str:
    """The -F probe, cached on the server in one line: a format that can only expand
    to `1` is written to @tma_setpf_ok and read back. A tmux that does not expand -F
    stores the literal format instead, which reads back as "not 1"."""
    return (f"set-option -s -F @tma_setpf_ok {quote('#{?#{==:1,1},1,0}')} ; "
            f"show-options -sv @tma_setpf_ok")


def render(pane: str, plan: P.Plan, now: int, *, name: str, pid: int, hash: str = "",
           guarded: bool = True, prev_state: str | None = None, prev_since: int = 0,
           extras: tuple[Extra, ...] = ()) -> str:
    if plan.action == P.PUBLISH:
        return publish(pane, plan, now, name=name, pid=pid, hash=hash, guarded=guarded,
                       prev_state=prev_state, prev_since=prev_since, extras=extras)
    if plan.action == P.HOLD:
        return hold(pane, now, hash=hash)
    if plan.action == P.REMOVE:
        return remove(pane)
    raise ValueError(f"unknown plan action {plan.action!r}")
