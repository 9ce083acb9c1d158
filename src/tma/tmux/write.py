"""The one write renderer: core plans -> server-side conditional writes (the guarded-write contract).

Each pane's write is one command line. A guarded tuple write is one `if-shell -F`
block: tmux evaluates the guard once, in the pane's context, when the block runs,
and then either runs every `set-option` of the tuple (ending with stamped_at) or
none, so a losing producer changes nothing. A dead pane stops only its own line
when many lines go through one `source-file -` spawn. The hook intake, the poll
cycle and `tma debug stamp` all render here, so a stamp is byte-identical whoever
writes it.

Only state-tuple writes carry `@agent_stamped_at`, and in every one of them it is the
last pane option set: after the tuple, the hook's event name and the companions that
commit with it (a reader that finds it older than since or evidence_at caught the chain
in flight; the contract). What follows it in a block is not the pane's: the rollups of
its window and session. Side lanes (telemetry, attention, locks) carry their own `_at`
and never bump it.
"""

from __future__ import annotations

from tma.core import options, plan as P, prompt, states
from tma.core.codec import CLOCK_STEP_MS, FUTURE_SKEW_MS
from tma.core.record import Record
from tma.tmux.adapter import quote

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: collections.abc would cost every hook ~1 ms of imports
    from collections.abc import Mapping

PROBE_EXPECT = "1"


def suppress(guard: P.Guard, clock: int = 0) -> str:
    """The guard format that expands truthy when the write must hold. `clock`: the
    writer's time now (0: the guard's own time), which bounds a claim's future skew."""
    if guard.kind == P.UNCONDITIONAL:
        return "0"
    if guard.kind == P.PROTECT_HOOK:
        return "#{==:#{@agent_source},hook}"
    if guard.kind in (P.CARVE_OUT, P.HOOK_ARBITRATE):
        # a stored claim holds only while its evidence is newer than this write's and
        # not dated beyond the skew ahead of the writer's clock (a clock stepped back
        # since it was written: such a claim never holds a later event). The writer's
        # clock, not the event's time: an event stamped late (queued in the daemon, a
        # capture that lagged) must still lose to a newer claim written meanwhile.
        at = int(guard.at)
        bound = max(at, int(clock)) + FUTURE_SKEW_MS
        newer = (f"#{{e|<=:{at},#{{@agent_evidence_at}}}}" if guard.kind == P.CARVE_OUT
                 else f"#{{e|<:{at},#{{@agent_evidence_at}}}}")
        return (f"#{{&&:#{{==:#{{@agent_source}},hook}},#{{&&:{newer},"
                f"#{{e|<=:#{{@agent_evidence_at}},{bound}}}}}}}")
    if guard.kind == P.REFRESH_CLAIM:
        return f"#{{?#{{==:#{{@agent_state}},{_token(guard.state)}}},0,1}}"
    raise ValueError(f"unknown guard {guard.kind!r}")


def commits(guard: P.Guard, clock: int = 0) -> str:
    """The condition a guarded chain runs under: the negation of `suppress`."""
    if guard.kind == P.UNCONDITIONAL:
        return "1"
    return "#{?" + suppress(guard, clock) + ",0,1}"


def _num(raw: str) -> float | None:
    """tmux's `e|` operands: empty reads 0, anything not a number fails the compare."""
    try:
        return float(raw or "0")
    except ValueError:
        return None


def would_hold(guard: P.Guard, stored: Mapping[str, str], clock: int = 0) -> bool:
    """`suppress(guard)` evaluated over options read earlier: what the server would do
    if nothing wrote in between (the cycle turns a write it already knows loses into
    a refresh; the server still decides every write)."""
    hook = stored.get("@agent_source", "") == states.SOURCE_HOOK
    if guard.kind == P.UNCONDITIONAL:
        return False
    if guard.kind == P.PROTECT_HOOK:
        return hook
    if guard.kind in (P.CARVE_OUT, P.HOOK_ARBITRATE):
        at, stored_at = float(int(guard.at)), _num(stored.get("@agent_evidence_at", ""))
        if not hook or stored_at is None or stored_at > max(at, clock) + FUTURE_SKEW_MS:
            return False
        return at <= stored_at if guard.kind == P.CARVE_OUT else at < stored_at
    if guard.kind == P.REFRESH_CLAIM:
        return stored.get("@agent_state", "") != _token(guard.state)
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


def _when(pane: str, cond: str, cmds: list[str]) -> str:
    """`cmds` as one block that runs only where `cond` expands truthy in the pane's
    context. tmux evaluates the condition once, when the block executes, and a block
    that does not run touches nothing (a held `set-option -F` would still create an
    empty option)."""
    if cond == "1":
        return " ; ".join(cmds)
    return f"if-shell -F -t {pane} {quote(cond)} {{ " + " ; ".join(cmds) + " }"


class Extra(Record):
    """A companion option written after stamped_at (session, turn_at, notified_at …).

    Guarded extras commit only with the tuple, inside its block; `also` adds a
    condition that holds this one option too (the notification marker's "already
    notified"). An empty value unsets."""

    key: str = ""
    value: str = ""
    guarded: bool = True
    also: str = ""


def _extra(pane: str, extra: Extra, inside: bool) -> str:
    if inside and extra.also:
        return _setf(pane, extra.key, extra.also, extra.value)
    return set_plain(pane, extra.key, extra.value)


# A name goes into the short write's comparison only in this charset (manifest stems).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def _unchanged(stored: Mapping[str, str], state: str, detail: str, source: str, name: str,
               pid: int, now: int) -> str | None:
    """The short write's condition when the read tuple already holds every value the
    full chain would write except evidence_at, hash and stamped_at (and since would be
    kept); None when it does not, or a value cannot sit inside a format."""
    since = stored.get("@agent_since", "")
    if (stored.get("@agent_state") != state or stored.get("@agent_detail", "") != detail
            or stored.get("@agent_source") != source or stored.get("@agent_pid") != str(pid)
            or stored.get("@agent_name") != name or not name
            or not all(c in _NAME_CHARS for c in name)
            or not since.isdigit() or since == "0" or int(since) > now + CLOCK_STEP_MS):
        return None
    checks = [f"#{{==:#{{@agent_state}},{state}}}", f"#{{==:#{{@agent_detail}},{detail}}}",
              f"#{{==:#{{@agent_source}},{source}}}", f"#{{==:#{{@agent_pid}},{int(pid)}}}",
              f"#{{==:#{{@agent_name}},{name}}}", "#{@agent_since}",
              f"#{{e|<=:#{{@agent_since}},{int(now) + CLOCK_STEP_MS}}}"]
    cond = checks[-1]
    for check in reversed(checks[:-1]):
        cond = f"#{{&&:{check},{cond}}}"
    return cond


def _full_chain(pane: str, plan: P.Plan, now: int, state: str, detail: str, source: str,
                name: str, pid: int, hash: str) -> list[str]:
    """since (write-once), state, detail, source, evidence_at, [attention], [episode
    marks cleared], hash, pid, name; stamped_at follows whatever else the block sets."""
    since = int(plan.evidence_at)
    if plan.moves_since:
        cmds = [_set(pane, "@agent_since", str(since))]
    else:
        keep = (f"#{{&&:#{{==:#{{@agent_state}},{state}}},#{{&&:#{{@agent_since}},"
                f"#{{e|<=:#{{@agent_since}},{int(now) + CLOCK_STEP_MS}}}}}}}")
        cmds = [_setf(pane, "@agent_since", keep, str(since))]
    cmds += _prompt(pane, plan)
    cmds += [_set(pane, "@agent_state", state), _set(pane, "@agent_detail", detail),
             _set(pane, "@agent_source", source),
             _set(pane, "@agent_evidence_at", str(int(plan.evidence_at)))]
    return cmds + _chain_end(pane, plan, name, pid, hash)


def _prompt(pane: str, plan: P.Plan, since: int | None = None) -> list[str]:
    """The prompt identity, bound to the episode that stands once since is written: the
    since tmux holds right then (`#{@agent_since}`, expanded after the chain's since
    write), or `since` where it is known client-side (the advisory chain). Digits, a
    token and hex only reach the format (tma.core.prompt)."""
    if not prompt.valid(plan.prompt):
        return []
    if since is not None:
        return [_set(pane, options.PROMPT, prompt.value(since, plan.prompt))]
    return [f"set-option -p -F -t {pane} {options.PROMPT} "
            f"{quote('#{@agent_since}:' + plan.prompt)}"]


def _chain_end(pane: str, plan: P.Plan, name: str, pid: int, hash: str) -> list[str]:
    """What follows the state fields in both chains (guarded and advisory): attention,
    the episode's resets, identity. stamped_at is not here: `_stamped` closes the block
    after the hook event and the companions."""
    cmds = []
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
    return cmds


def _stamped(pane: str, now: int) -> str:
    """The last pane option of every tuple write."""
    return _set(pane, "@agent_stamped_at", str(int(now)))


def publish(pane: str, plan: P.Plan, now: int, *, name: str, pid: int, hash: str = "",
            guarded: bool = True, prev_state: str | None = None, prev_since: int = 0,
            extras: tuple[Extra, ...] = (), stored: Mapping[str, str] | None = None,
            then: tuple[str, ...] = (), clock: int = 0) -> str:
    """One pane's publish: the tuple ending with stamped_at, then its companions, all
    in one block under the guard's condition, so a held write changes nothing.

    With `stored` (the options the plan was folded against) and a tuple that only
    moves evidence_at, hash and stamped_at, the block is the short write: those
    three, under the guard AND "the rest still reads as stored". A block that holds
    because another producer changed the rest in between is a losing write too.
    `then` holds commands that run only when the tuple commits (the hook's rollups)."""
    state = _token(plan.state)
    detail = _token(states.safe_detail(plan.detail))
    source = _token(plan.source)
    if not guarded:
        return " ; ".join(_advisory(pane, plan, now, state, detail, source, name, pid, hash,
                                    prev_state, prev_since)
                          + _hook_event(pane, plan)
                          + [_extra(pane, e, False) for e in extras]
                          + [_stamped(pane, now)] + list(then))
    cond = commits(plan.guard, max(int(now), int(clock)))
    unchanged = None
    if stored is not None and not plan.moves_since and not plan.set_attention:
        unchanged = _unchanged(stored, state, detail, source, name, pid, now)
    if unchanged is not None:
        assert stored is not None  # for the type checker: unchanged was read from it
        cmds = [_set(pane, "@agent_evidence_at", str(int(plan.evidence_at)))]
        if hash and hash != stored.get("@agent_hash"):
            cmds.append(_set(pane, "@agent_hash", hash))
        since = stored.get("@agent_since", "")
        if prompt.valid(plan.prompt) and stored.get(options.PROMPT) != f"{since}:{plan.prompt}":
            cmds += _prompt(pane, plan)  # the first read of a prompt a hook stamped
        cond = unchanged if cond == "1" else f"#{{&&:{cond},{unchanged}}}"
    else:
        cmds = _full_chain(pane, plan, now, state, detail, source, name, pid, hash)
    cmds += _hook_event(pane, plan)
    cmds += [_extra(pane, e, True) for e in extras if e.guarded]
    cmds.append(_stamped(pane, now))
    cmds += then
    # unguarded companions run whether the block commits or holds, so they go first:
    # nothing of the pane's is set after the block's stamped_at
    outside = [_extra(pane, e, False) for e in extras if not e.guarded]
    return " ; ".join(outside + [_when(pane, cond, cmds)])


def _hook_label(plan: P.Plan) -> str | None:
    """The event a hook's own claim names beside the tuple (`debug explain` reads it),
    "" to clear it; None where the write leaves it (a screen refresh of a claim,
    REFRESH_CLAIM, keeps the event that made it)."""
    if plan.source != states.SOURCE_HOOK or plan.guard.kind != P.HOOK_ARBITRATE:
        return None
    return plan.label if plan.label and len(plan.label) <= 64 \
        and all(c in _NAME_CHARS for c in plan.label) else ""


def _hook_event(pane: str, plan: P.Plan) -> list[str]:
    label = _hook_label(plan)
    return [] if label is None else [set_plain(pane, options.HOOK_EVENT, label)]


def _advisory(pane: str, plan: P.Plan, now: int, state: str, detail: str, source: str,
              name: str, pid: int, hash: str, prev_state: str | None,
              prev_since: int) -> list[str]:
    """Advisory degrade (tmux without -F expansion): plain sets, write-once decided
    client-side."""
    keep = (prev_state == state and prev_since and prev_since <= now + CLOCK_STEP_MS
            and not plan.moves_since)
    since = prev_since if keep else int(plan.evidence_at)
    cmds = [_set(pane, "@agent_since", str(since))] + _prompt(pane, plan, since)
    cmds += [_set(pane, "@agent_state", state), _set(pane, "@agent_detail", detail),
             _set(pane, "@agent_source", source),
             _set(pane, "@agent_evidence_at", str(int(plan.evidence_at)))]
    return cmds + _chain_end(pane, plan, name, pid, hash)


def expected(stored: Mapping[str, str], plan: P.Plan, now: int, *, name: str, pid: int,
             hash: str = "", extras: tuple[Extra, ...] = (), clock: int = 0) -> dict[str, str]:
    """The pane's options after `publish(...)` of this plan ran over STORED with nothing
    written in between: the guard, write-once since, the chain and its extras, mirrored
    client-side. The daemon decides a pane's next queued event over it without reading
    the pane again; the server still decides every write (a test holds the two equal)."""
    out = dict(stored)
    if plan.action == P.REMOVE:
        for key in options.EPISODE_OPTIONS:
            out.pop(key, None)
        return out
    if plan.action != P.PUBLISH:
        return out
    if would_hold(plan.guard, stored, max(int(now), int(clock))):
        for e in extras:
            if not e.guarded:
                _put(out, e.key, e.value)
        return out
    state, source = _token(plan.state), _token(plan.source)
    detail = _token(states.safe_detail(plan.detail))
    _expected_episode(out, stored, plan, state, now)
    for key, value in (("@agent_state", state), ("@agent_detail", detail),
                       ("@agent_source", source),
                       ("@agent_evidence_at", str(int(plan.evidence_at)))):
        _put(out, key, value)
    if plan.set_attention:
        out["@agent_attention"] = "1"
    if plan.episode_reset:
        if not plan.set_attention:
            out.pop("@agent_attention", None)
        out.pop("@agent_notified_at", None)
        out.pop("@agent_turn_at", None)
    if hash:
        out["@agent_hash"] = hash
    _put(out, "@agent_pid", str(int(pid)))
    _put(out, "@agent_name", name)
    out["@agent_stamped_at"] = str(int(now))
    label = _hook_label(plan)
    if label is not None:
        _put(out, options.HOOK_EVENT, label)
    for e in extras:
        if not (e.guarded and e.also == already_notified() and _notified(out)):
            _put(out, e.key, e.value)  # (an episode already notified keeps its marker)
    return out


def _expected_episode(out: dict[str, str], stored: Mapping[str, str], plan: P.Plan,
                      state: str, now: int) -> None:
    """since (write-once, or moved by a new episode) and the prompt bound to it."""
    since = stored.get("@agent_since", "")
    held_since = _num(since)  # tmux's e| fails on a non-number: the compare is false
    keep = (not plan.moves_since and stored.get("@agent_state", "") == state
            and since not in ("", "0") and held_since is not None
            and held_since <= int(now) + CLOCK_STEP_MS)
    _put(out, "@agent_since", since if keep else str(int(plan.evidence_at)))
    if prompt.valid(plan.prompt):
        out[options.PROMPT] = f"{out.get('@agent_since', '')}:{plan.prompt}"


def _notified(out: Mapping[str, str]) -> bool:
    """`already_notified()` evaluated client-side over options."""
    marker, since, turn = (_num(out.get(k, "")) for k in (
        "@agent_notified_at", "@agent_since", "@agent_turn_at"))
    return (marker is not None and since is not None and turn is not None
            and marker >= since and marker >= turn)


def _put(out: dict[str, str], key: str, value: str) -> None:
    """A set as tmux stores it: an empty value reads as absent."""
    if value:
        out[key] = value
    else:
        out.pop(key, None)


def hold(pane: str, now: int, *, hash: str = "", stored: Mapping[str, str] | None = None) -> str:
    """A refresh: only the viewport hash and the freshness marker move. With `stored`
    it commits only while @agent_stamped_at still reads as stored, so a refresh that
    lands after another producer's write changes nothing."""
    cmds = []
    if hash:
        cmds.append(_set(pane, "@agent_hash", hash))
    cmds.append(_set(pane, "@agent_stamped_at", str(int(now))))
    read_at = stored.get("@agent_stamped_at", "") if stored is not None else None
    if read_at is None or not (read_at == "" or read_at.isdigit()):
        return " ; ".join(cmds)
    return _when(pane, f"#{{==:#{{@agent_stamped_at}},{read_at}}}", cmds)


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


def server_option_args(key: str, value: str) -> list[str]:
    """server_option as an argv (a command line run directly, not through source-file)."""
    return ["set-option", "-s", key, value]


def server_option_unset(key: str) -> str:
    return f"set-option -su {key}"


def probe_line() -> str:
    """The -F probe, cached on the server in one line: a format that can only expand
    to `1` is written to @tma_setpf_ok and read back. A tmux that does not expand -F
    stores the literal format instead, which reads back as "not 1"."""
    return (f"set-option -s -F @tma_setpf_ok {quote('#{?#{==:1,1},1,0}')} ; "
            f"show-options -sv @tma_setpf_ok")


def render(pane: str, plan: P.Plan, now: int, *, name: str, pid: int, hash: str = "",
           guarded: bool = True, prev_state: str | None = None, prev_since: int = 0,
           extras: tuple[Extra, ...] = (), stored: Mapping[str, str] | None = None,
           then: tuple[str, ...] = (), clock: int = 0) -> str:
    """`now` is the time the write records (stamped_at); `clock`, when later, the writer's
    time now (a hook event the daemon stamps after it queued it)."""
    if plan.action == P.PUBLISH:
        return publish(pane, plan, now, name=name, pid=pid, hash=hash, guarded=guarded,
                       prev_state=prev_state, prev_since=prev_since, extras=extras,
                       stored=stored, then=then, clock=clock)
    if plan.action == P.HOLD:
        return hold(pane, now, hash=hash, stored=stored if guarded else None)
    if plan.action == P.REMOVE:
        return remove(pane)
    raise ValueError(f"unknown plan action {plan.action!r}")
