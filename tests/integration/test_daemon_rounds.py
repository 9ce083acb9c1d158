"""The daemon's stamping rounds against a real tmux: a round's write spawn also reads
every pane for the next round, and what the next round decides from that read is what
a fresh read would have given (tma.daemon.stamper)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from tma.daemon.stamper import Stamper
from tma.runtime import config, manifests
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract


class _Daemon:
    """What the stamper needs of a daemon: its server, config and log."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.cfg = config.load(None)
        self.logged: list[str] = []

    def log(self, line: str) -> None:
        self.logged.append(line)


def _counting(srv) -> tuple[Server, list[list[str]]]:
    server = Server(srv.tmux_bin, socket_name=srv.name)
    argvs: list[list[str]] = []
    begin = server._begin  # every spawn, run or begun

    def counted(argv, data=None, *a, **kw):
        argvs.append(list(argv))
        return begin(argv, data, *a, **kw)

    server._begin = counted  # type: ignore[method-assign]
    return server, argvs


def _put(st: Stamper, table, pane: str, kind: str, at: int) -> None:
    st.put([pane, "fake", kind, '{"session_id":"s1"}', str(at), "scope"], table)


def _normal(options: dict[str, str]) -> dict[str, str]:
    # pid and hash differ between two panes; the rollups count every pane of the session
    return {k: v for k, v in options.items()
            if k not in ("@agent_pid", "@agent_hash", "@agent_summary", "@agent_session_summary")}


def _stamped(srv, pane: str) -> dict[str, str]:
    return _normal(_stored(Server(srv.tmux_bin, socket_name=srv.name), pane))


FAKE_KINDS = ("Start", "Work", "Ask", "Stop")
CLAUDE = (("UserPromptSubmit", {}), ("PreToolUse", {"tool_name": "Bash"}),
          ("Notification", {"notification_type": "permission_prompt"}),
          ("PermissionDenied", {}), ("PostToolUse", {"tool_name": "Bash"}),
          ("SubagentStart", {"agent_id": "sub1"}), ("SubagentStop", {"agent_id": "sub1"}),
          ("Stop", {}), ("SessionStart", {}))
turn = st.lists(st.tuples(st.integers(0, 8), st.integers(-3, 40)), min_size=1, max_size=12)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(fake=turn, claude=turn)
def test_a_panes_events_in_one_round_stamp_what_one_round_each_stamps(srv, fake, claude):
    """A pane's queued events decided in one round (each over the mirror of the writes
    before it) leave the pane as the same events stamped one round each (each over a
    fresh read): state, detail, since, attention, turn, session, subagents, the
    notification marker. Times may go backwards (events queued out of order)."""
    import json

    from tma.daemon import stamper as S

    if not srv.started:
        srv.shell_pane()
    server = Server(srv.tmux_bin, socket_name=srv.name)
    tables = dict(manifests.hook_tables(None), fake=manifests.hook_tables(
        str(srv.manifests))["fake"])
    t = 1_800_000_000_000
    events = []
    for agent, steps in (("fake", fake), ("claude", claude)):
        at = t
        for k, gap in steps:
            at += gap
            if agent == "fake":
                events.append((agent, FAKE_KINDS[k % 4], {"session_id": "s1"}, at))
            else:
                kind, extra = CLAUDE[k]
                events.append((agent, kind, dict(extra, session_id="s1"), at))
    finals = []
    for per_pane in (1, S.PER_PANE):
        panes = {"fake": srv.agent_pane(), "claude": srv.agent_pane("claude")}
        st_ = Stamper(_Daemon(server))
        for agent, kind, payload, at in events:
            st_.put([panes[agent], agent, kind, json.dumps(payload), str(at), "scope"],
                    tables[agent])
        while st_.queue:
            taken, st_.queue = S.take_round(st_.queue, S.ROUND_MAX, per_pane)
            st_._round(taken, None)
        finals.append({a: _stamped(srv, p) for a, p in panes.items()})
    for agent in finals[0]:
        a, b = finals[0][agent], finals[1][agent]
        assert a == b, (agent, {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)})


def test_a_panes_queued_events_cost_one_round(srv):
    a, b = srv.agent_pane(), srv.agent_pane()
    server, argvs = _counting(srv)
    table = manifests.hook_tables(str(srv.manifests))["fake"]
    st = Stamper(_Daemon(server))
    t = 1_800_000_000_000
    for n, (pane, kind) in enumerate([(a, "Work"), (b, "Work"), (a, "Ask"), (a, "Stop")]):
        _put(st, table, pane, kind, t + n)
    assert st.stamp(None, lambda: 0) is True
    assert not st.queue and st.rounds == 1
    # one read, and one spawn for the writes and the notification marker read back
    # (Ask notifies: the marker is read in the spawn that writes it)
    assert len(argvs) <= 3, argvs
    assert srv.option(a, "@agent_state") == "idle"
    assert srv.option(a, "@agent_evidence_at") == str(t + 3)
    assert srv.option(b, "@agent_state") == "working"
    # the Stop was decided over the mirror of the Ask's write: a turn ended out of a
    # blocked episode keeps the attention the Ask raised
    assert srv.option(a, "@agent_attention") == "1"


def test_a_pane_newer_than_the_carried_read_is_read_again(srv):
    from tma.daemon.stamper import take_round

    a = srv.agent_pane()
    server, argvs = _counting(srv)
    table = manifests.hook_tables(str(srv.manifests))["fake"]
    st = Stamper(_Daemon(server))
    t = 1_800_000_000_000
    _put(st, table, a, "Work", t)
    _put(st, table, a, "Ask", t + 1)
    taken, st.queue = take_round(st.queue, 64)
    wrote, every = st._round(taken, None)
    assert wrote and every is not None  # the Ask waits: the write spawn read every pane
    d = srv.agent_pane()  # a pane that read cannot know, and its event
    _put(st, table, d, "Work", t + 2)
    taken, st.queue = take_round(st.queue, 64)
    before = len(argvs)
    wrote, every = st._round(taken, every)
    assert wrote and every is None
    assert len(argvs) == before + 2  # read again, then the write
    assert srv.option(d, "@agent_state") == "working"
    assert srv.option(a, "@agent_state") == "blocked"


# ------------------------------------------------------------ the client-side mirror

def _stored(server: Server, pane: str) -> dict[str, str]:
    """The pane's options as the daemon's read reports them (empty reads as absent)."""
    from tma.tmux import read

    return dict(next(p for p in read.every_pane(server) if p.pane_id == pane).options)


STATES = ("idle", "working", "blocked", "unknown")
GUARDS = ("unconditional", "protect-hook", "carveout", "hook", "refresh")
PROMPTS = ("", "permission:", "permission:0123456789abcdef", "permission:fedcba9876543210",
           "plan:")  # tma.core.prompt identities: none, unread, two prompts, another kind
step = st.tuples(st.sampled_from(STATES), st.sampled_from(("", "permission", "question")),
                 st.sampled_from(GUARDS), st.sampled_from(("hook", "capture")),
                 st.integers(0, 3000), st.integers(0, 8000), st.booleans(), st.booleans(),
                 st.sampled_from(("none", "notify", "turn", "clear")),
                 st.sampled_from(PROMPTS), st.booleans())


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=8))
@example(steps=[("blocked", "permission", "hook", "hook", 10, 0, True, False, "notify", "",
                 False),
                ("blocked", "permission", "hook", "hook", 10, 0, False, False, "notify", "",
                 False)])
@example(steps=[("blocked", "permission", "carveout", "capture", 10, 0, True, False, "notify",
                 "permission:0123456789abcdef", False),
                ("blocked", "permission", "carveout", "capture", 10, 0, True, False, "notify",
                 "permission:fedcba9876543210", True)])
def test_expected_options_are_what_the_server_stores(srv, steps):
    """write.expected (what the daemon decides a pane's next queued event over) equals
    what tmux stores after the write, for random sequences of guarded writes (the prompt
    identity bound to the since tmux holds once the chain wrote it, a new prompt's since
    moved although the state did not)."""
    from tma.core import plan as P
    from tma.tmux import write

    if not srv.started:
        srv.shell_pane()
    pane = srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()[0]
    server = Server(srv.tmux_bin, socket_name=srv.name)
    server.source([write.remove(pane), write.set_plain(pane, "@agent_attention", "")])
    t = 1_800_000_000_000
    for state, detail, kind, source, gap, lag, attention, reset, extra, prompt, new in steps:
        t += gap
        evidence = t - lag
        guard = (P.Guard(kind, at=evidence) if kind in (P.CARVE_OUT, P.HOOK_ARBITRATE)
                 else P.Guard(kind, state=state) if kind == P.REFRESH_CLAIM
                 else P.Guard(kind))
        plan = P.Plan(P.PUBLISH, state=state, detail=detail, source=source,
                      evidence_at=evidence, guard=guard, set_attention=attention,
                      episode_reset=reset, label="Stop" if gap % 2 else "", prompt=prompt,
                      new_prompt=new)
        extras = {"none": (),
                  "notify": (write.Extra("@agent_notified_at", str(t), True,
                                         write.already_notified()),),
                  "turn": (write.Extra("@agent_turn_at", str(t)),
                           write.Extra("@agent_session", "s1")),
                  "clear": (write.Extra("@agent_pending_tool", ""),
                            write.Extra("@agent_subagents", "a b", False))}[extra]
        stored = _stored(server, pane)
        want = write.expected(stored, plan, t, name="fake", pid=7, hash="h1", extras=extras)
        _out, err = server.source([write.render(pane, plan, t, name="fake", pid=7, hash="h1",
                                                extras=extras)])
        assert err == ""
        assert _stored(server, pane) == want, (stored, plan, extras)
