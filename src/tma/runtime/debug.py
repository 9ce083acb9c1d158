"""`tma debug`'s work: the explain documents (a live pane, a saved capture), a pane's
capture in the fixture format, one guarded stamp, and the daemon's transition ring.

Documents and text come back to tma.cli.debug, which prints them (tma.ui.debug renders
the explain and transitions documents). A refusal the user can fix (an unreadable
capture, an unknown agent, a vanished pane, no daemon) raises DebugError with its
one-line reason; a missing pane raises NoPane (exit 3).
"""

from __future__ import annotations

import time

from tma.core import codec, explain, explain as ex, fixture, options, plan as P
from tma.core.errors import NoPane, UsageError
from tma.core.fold import Facts
from tma.core.rules import Screen
from tma.runtime import daemon_files
from tma.runtime.cycle import Cycle
from tma.runtime.notify import dispatch as notify, gate as notify_gate, log as notify_log
from tma.tmux import control, read, write


class DebugError(Exception):
    """A debug tool cannot do what was asked: `tma: <reason>`, exit 1."""


def _now() -> int:
    return time.time_ns() // 1_000_000


def _cycle(session):
    cycle = Cycle(session.server, session.config, session.g.manifest_dir, warn=session.warn)
    cycle.manifests()  # loaded now: a broken user manifest is named even on a shell pane
    return cycle


def _pane(server, pane_id: str):
    for p in read.list_panes(server).panes:  # NoServer: exit 1 at cli/main.py
        if p.pane_id == pane_id:
            return p
    raise NoPane(pane_id)


def _decode(pane):
    """(stamp, why it does not decode)."""
    try:
        return codec.decode(pane.options), None
    except codec.DecodeError as exc:
        return None, str(exc)


def explain_pane(session, pane_id: str) -> dict:
    """Identity, carve-outs, foreground, freeze facts, every rule, and the verdict."""
    cycle = _cycle(session)
    server = session.server
    pane = _pane(server, pane_id)
    stamp, stamp_problem = _decode(pane)
    ident = cycle.identify(pane, stamp)
    ignored = bool(pane.options.get("@agent_ignore"))
    base = {
        "schema": 1,
        "pane": pane.pane_id,
        "locator": pane.locator,
        "command": pane.current_command,
        "title": pane.title,
        "agent": ident.agent or "unknown",
        "identity": ident.reason,
        "identity_source": ident.via,
        "out_of_scope": ident.out_of_scope is not None,
        "out_of_scope_kind": ident.out_of_scope,
        "registered_behind": ident.registered_behind is not None,
        "registered_behind_kind": ident.registered_behind,
        "ignored": ignored,
        "foreground_is_agent": ident.foreground_is_agent,
        "scrolled": pane.scroll_position > 0,
        "stamp_problem": stamp_problem,
    }
    manifest = cycle.manifests().get(ident.agent) if ident.agent else None
    if manifest is None or ignored or ident.pid == 0:
        return dict(base, state=stamp.state if stamp else None,
                    detail=(stamp.detail if stamp else "") or "",
                    source=stamp.source if stamp else None, winning=None, hook_claim=None,
                    action="none",
                    guard=None, set_attention=False, episode_reset=False,
                    reason=("pane carries @agent_ignore" if ignored else
                            "no capture for a hook registration without a process"
                            if ident.agent else "not an agent pane"),
                    history_view=False, claims={}, rules=[])
    cap = read.capture_many(server, [pane.pane_id]).get(pane.pane_id)
    body = cap.body if cap is not None else ""
    now = _now()
    facts = Facts(agent_pid=ident.pid, foreground_is_agent=ident.foreground_is_agent,
                  scrolled=pane.scroll_position > 0)
    det = ex.detect(manifest, Screen(body, pane.title, (cap.height if cap else 0) or None),
                    captured_at=now, now=now, prev=stamp, facts=facts,
                    cfg=session.config.fold())
    return ex.document(det, extra=base, hook_event=pane.options.get(options.HOOK_EVENT, ""))


def explain_capture(session, path: str, agent: str | None, prior: str | None) -> dict:
    """The same document for a capture saved in the fixture format (offline)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
            cap = fixture.parse(fh.read())
    except OSError as exc:
        raise DebugError(f"cannot read {path}: {exc.strerror}") from None
    except fixture.FixtureError as exc:
        raise DebugError(f"{path}: {exc}") from None
    cfg, mset = session.config, session.manifests
    name = agent or cap.agent
    manifest = mset.get(name)
    if manifest is None:
        raise DebugError(f"no manifest for agent {name!r} (loaded: {', '.join(mset.manifests)})")
    at = cap.captured_at or 1
    prev = explain.prior_stamp(prior, at=at - 10_000) if prior else None
    facts = Facts(foreground_is_agent=cap.foreground_is_agent)  # a shell caps at unknown
    det = explain.detect(manifest, Screen(cap.body, cap.title, cap.height), captured_at=at,
                         now=at + 10, prev=prev, facts=facts, cfg=cfg.fold())
    return explain.document(det, extra={"agent": name, "capture": path})


def capture_pane(session, pane_id: str) -> str:
    """The pane in the fixture format (what the rule engine reads, escapes kept)."""
    cycle = _cycle(session)
    server = session.server
    pane = _pane(server, pane_id)
    cap = read.capture_many(server, [pane.pane_id]).get(pane.pane_id)
    if cap is None:
        raise DebugError(f"pane {pane_id} vanished")
    stamp, _problem = _decode(pane)
    ident = cycle.identify(pane, stamp)
    headers = {
        "agent": ident.agent or "unknown",
        "state": stamp.state if stamp else "unknown",
        "title": pane.title,
        "command": pane.current_command,
        "pid": str(ident.pid),
        "captured_at": str(_now()),
        "height": str(cap.height or pane.height),
        "width": str(pane.width),
    }
    return fixture.render(headers, cap.body)


def stamp(server, args) -> None:
    """Apply exactly one guarded write per repetition (the race and contract tests drive
    this). `args`: the parsed `tma debug stamp` flags."""
    now = args.stamped_at if args.stamped_at is not None else _now()
    evidence = args.evidence_at if args.evidence_at is not None else now
    kind, _, arg = args.guard.partition(":")
    kinds = {"unconditional": P.UNCONDITIONAL, "protect-hook": P.PROTECT_HOOK,
             "carveout": P.CARVE_OUT, "refresh": P.REFRESH_CLAIM, "hook": P.HOOK_ARBITRATE}
    if kind not in kinds:
        raise UsageError(f"unknown guard {args.guard!r}")
    if kinds[kind] in (P.CARVE_OUT, P.HOOK_ARBITRATE):
        guard = P.Guard(kinds[kind], at=int(arg) if arg else evidence)
    elif kinds[kind] == P.REFRESH_CLAIM:
        guard = P.Guard(P.REFRESH_CLAIM, state=arg or args.state)
    else:
        guard = P.Guard(kinds[kind])
    action = {"publish": P.PUBLISH, "hold": P.HOLD, "remove": P.REMOVE}[args.mode]
    alt_state, _, alt_detail = (args.alternate or "").partition("/")
    for i in range(max(1, args.count)):
        odd = bool(args.alternate) and i % 2 == 1
        state = alt_state if odd else args.state
        detail = alt_detail if odd else args.detail
        # an event/capture time guard moves with the repetition's evidence
        rep_guard = guard.replace(at=guard.at + i) if guard.at else guard
        plan = P.Plan(action, state=state, detail=detail, source=args.source,
                      evidence_at=evidence + i, guard=rep_guard,
                      set_attention=args.attention,
                      episode_reset=args.episode_reset)
        server.source([write.render(args.pane, plan, now + i, name=args.name,
                                    pid=args.pid, hash=args.hash)])


def transitions(server) -> dict:
    """The daemon's ring of recent transitions (TMAH on its socket)."""
    socket_path, _pid = control.server_facts(server)  # NoServer: exit 1
    doc = daemon_files.read_history(daemon_files.Files(socket_path).sock)
    if doc is None:
        raise DebugError("no daemon answering for this tmux server (`tma daemon --ensure` "
                         "starts one)")
    return doc


def notify_test(session, trigger: str, cwd: str) -> tuple[list[str], int]:
    """Run the resolved notification sink for a made-up note: what it did, its status.
    (An unknown trigger is refused before the config is read.)"""
    if trigger not in notify.TRIGGERS:
        raise DebugError(f"unknown trigger {trigger!r} (expected one of: "
                         f"{', '.join(notify.TRIGGERS)})")
    cfg = session.config  # first: the server's tmux binary is its
    notify_log.scope_to(session.known_socket())  # a failure here is this server's record
    note = notify.test_note(trigger, cwd, said=notify_gate.last_sentence(cfg))
    lines, rc = notify.run_test(cfg, note, _now(), session.server)
    return lines + [notify.rings(cfg, trigger)], rc
