"""The live forms of `tma debug`: explain PANE, capture PANE, stamp PANE."""

from __future__ import annotations

import sys

from tma.cli import common
from tma.ui import text


def _cycle(g):
    from tma.runtime.cycle import Cycle

    cfg = g.config
    server = g.server
    cycle = Cycle(server, cfg, g.g.manifest_dir, warn=g.warn)
    cycle.manifests()  # loaded now: a broken user manifest is named even on a shell pane
    return cfg, server, cycle


def _pane(server, pane_id: str):
    from tma.tmux import read

    snap = read.list_panes(server)  # NoServer: exit 1 at cli/main.py
    for p in snap.panes:
        if p.pane_id == pane_id:
            return snap, p
    raise common.NoPane(pane_id)


def explain(g, args) -> int:
    """Identity, carve-outs, foreground, freeze facts, every rule, and the verdict."""
    from tma.core import codec, options
    from tma.core import explain as ex
    from tma.core.fold import Facts
    from tma.core.rules import Screen
    from tma.tmux import read

    cfg, server, cycle = _cycle(g)
    _snap, pane = _pane(server, args.pane)
    try:
        stamp = codec.decode(pane.options)
        stamp_problem = None
    except codec.DecodeError as exc:
        stamp, stamp_problem = None, str(exc)
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
        doc = dict(base, state=stamp.state if stamp else None,
                   detail=(stamp.detail if stamp else "") or "",
                   source=stamp.source if stamp else None, winning=None, hook_claim=None,
                   action="none",
                   guard=None, set_attention=False, episode_reset=False,
                   reason=("pane carries @agent_ignore" if ignored else
                           "no capture for a hook registration without a process"
                           if ident.agent else "not an agent pane"),
                   history_view=False, claims={}, rules=[])
    else:
        cap = read.capture_many(server, [pane.pane_id]).get(pane.pane_id)
        body = cap.body if cap is not None else ""
        now = common.now_ms()
        facts = Facts(agent_pid=ident.pid, foreground_is_agent=ident.foreground_is_agent,
                      scrolled=pane.scroll_position > 0)
        det = ex.detect(manifest, Screen(body, pane.title, (cap.height if cap else 0) or None),
                        captured_at=now, now=now, prev=stamp, facts=facts, cfg=cfg.fold())
        doc = ex.document(det, extra=base, hook_event=pane.options.get(options.HOOK_EVENT, ""))
    if args.json:
        sys.stdout.write(text.dumps(doc) + "\n")
    else:
        from tma.cli.debug import render_text

        sys.stdout.write(render_text(doc))
    return 0


def capture(g, args) -> int:
    """The pane in the fixture format (what the rule engine reads, escapes kept)."""
    from tma.core import codec, fixture
    from tma.tmux import read

    cfg, server, cycle = _cycle(g)
    _snap, pane = _pane(server, args.pane)
    cap = read.capture_many(server, [pane.pane_id]).get(pane.pane_id)
    if cap is None:
        common.err(f"tma: pane {args.pane} vanished")
        return common.FAIL
    try:
        stamp = codec.decode(pane.options)
    except codec.DecodeError:
        stamp = None
    ident = cycle.identify(pane, stamp)
    headers = {
        "agent": ident.agent or "unknown",
        "state": stamp.state if stamp else "unknown",
        "title": pane.title,
        "command": pane.current_command,
        "pid": str(ident.pid),
        "captured_at": str(common.now_ms()),
        "height": str(cap.height or pane.height),
        "width": str(pane.width),
    }
    sys.stdout.write(fixture.render(headers, cap.body))
    return 0


def stamp(g, args) -> int:
    """Apply exactly one guarded write (the race and contract tests drive this)."""
    from tma.core import plan as P
    from tma.tmux import write

    g.config
    server = g.server
    now = args.stamped_at if args.stamped_at is not None else common.now_ms()
    evidence = args.evidence_at if args.evidence_at is not None else now
    kind, _, arg = args.guard.partition(":")
    kinds = {"unconditional": P.UNCONDITIONAL, "protect-hook": P.PROTECT_HOOK,
             "carveout": P.CARVE_OUT, "refresh": P.REFRESH_CLAIM, "hook": P.HOOK_ARBITRATE}
    if kind not in kinds:
        raise common.UsageError(f"unknown guard {args.guard!r}")
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
    return 0
