"""`tma debug explain|capture|transitions|notify-test|stamp`: manifest authoring,
inspection and test harness tools."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.ui import text


def main(session, argv: list[str]) -> int:
    _, args = spec.parse("debug", argv, session)
    g = session
    if args.sub == "explain":
        if args.capture:
            return explain_capture(g, args)
        if not args.pane:
            raise common.UsageError("explain needs a PANE or --capture FILE")
        from tma.cli import debug_live

        return debug_live.explain(g, args)
    if args.sub == "transitions":
        return transitions(g, args)
    if args.sub == "capture":
        from tma.cli import debug_live

        return debug_live.capture(g, args)
    if args.sub == "notify-test":
        return notify_test(g, args)
    from tma.cli import debug_live

    return debug_live.stamp(g, args)


def notify_test(g, args) -> int:
    """Run the resolved notification sink for a made-up note, show what it did."""
    import os

    from tma.runtime import notify

    if args.trigger not in notify.TRIGGERS:
        common.err(f"tma: unknown trigger {args.trigger!r} (expected one of: "
                   f"{', '.join(notify.TRIGGERS)})")
        return common.FAIL
    cfg = g.config
    lines, rc = notify.run_test(cfg, notify.test_note(args.trigger, os.getcwd()),
                                common.now_ms())
    lines.append(notify.rings(cfg, args.trigger))
    sys.stdout.write("".join(line + "\n" for line in lines))
    return rc


def transitions(g, args) -> int:
    """The daemon's ring of recent transitions (TMAH on its socket)."""
    from tma.runtime import daemon_files
    from tma.tmux import control

    g.config
    socket_path, _pid = control.server_facts(g.server)  # NoServer: exit 1
    doc = daemon_files.read_history(daemon_files.Files(socket_path).sock)
    if doc is None:
        common.err("tma: no daemon answering for this tmux server (`tma daemon --ensure` "
                   "starts one)")
        return common.FAIL
    if args.json:
        sys.stdout.write(text.dumps(doc) + "\n")
        return 0
    sys.stdout.write(render_transitions(doc))
    return 0


def render_transitions(doc: dict) -> str:
    import time

    items = doc.get("transitions") or []
    lines = [f"{doc.get('recorded', 0)} transitions recorded, the last {len(items)} kept "
             f"(ring of {doc.get('cap')})"]
    for t in items:
        at = t.get("at") or 0
        clock = time.strftime("%H:%M:%S", time.localtime(at / 1000)) + f".{at % 1000:03d}"
        before = t.get("from") or "(new)"
        after = t.get("to") or "(gone)"
        detail = f"/{t['detail']}" if t.get("detail") else ""
        source = f"  [{t['source']}]" if t.get("source") else ""
        lines.append(f"{clock}  {t.get('pane')}  {t.get('agent') or '?'}  "
                     f"{before} -> {after}{detail}{source}")
    return "\n".join(lines) + "\n"


def _load_manifests(g):
    return g.config, g.manifests


def explain_capture(g, args) -> int:
    from tma.core import explain, fixture
    from tma.core.fold import Facts
    from tma.core.rules import Screen

    try:
        with open(args.capture, encoding="utf-8", errors="surrogateescape", newline="") as fh:
            cap = fixture.parse(fh.read())
    except OSError as exc:
        common.err(f"tma: cannot read {args.capture}: {exc.strerror}")
        return common.FAIL
    except fixture.FixtureError as exc:
        common.err(f"tma: {args.capture}: {exc}")
        return common.FAIL
    cfg, mset = _load_manifests(g)
    name = args.agent or cap.agent
    manifest = mset.get(name)
    if manifest is None:
        common.err(f"tma: no manifest for agent {name!r} (loaded: {', '.join(mset.manifests)})")
        return common.FAIL
    at = cap.captured_at or 1
    prior = explain.prior_stamp(args.prior, at=at - 10_000) if args.prior else None
    facts = Facts(foreground_is_agent=cap.foreground_is_agent)  # a shell caps at unknown
    det = explain.detect(manifest, Screen(cap.body, cap.title, cap.height), captured_at=at,
                         now=at + 10, prev=prior, facts=facts, cfg=cfg.fold())
    doc = explain.document(det, extra={"agent": name, "capture": args.capture})
    if args.json:
        sys.stdout.write(text.dumps(doc) + "\n")
        return 0
    sys.stdout.write(render_text(doc))
    return 0


def render_text(doc: dict) -> str:
    lines = [f"agent: {doc.get('agent')}"]
    for key in ("identity", "foreground_is_agent", "scrolled", "out_of_scope"):
        if key in doc:
            lines.append(f"{key}: {doc[key]}")
    lines.append("rules:")
    for r in doc["rules"]:
        mark = "MATCH" if r["matched"] else "  -  "
        claim = "  <- claim" if r["claim"] else ""
        detail = f"/{r['detail']}" if r["detail"] else ""
        skip = " (history view)" if r["skip_state_update"] else ""
        lines.append(f"  [{mark}] #{r['index']} {r['state']}{detail} prio {r['priority']} "
                     f"{r['region']}{skip}{claim}")
    state = doc["state"] or "(none)"
    detail = f"/{doc['detail']}" if doc["detail"] else ""
    lines.append(f"verdict: {state}{detail} (source {doc['source']}, {doc['action']}"
                 f"{', raises attention' if doc['set_attention'] else ''})")
    lines.append(f"because: {doc['reason']}" + (f" [{doc['winning']}]" if doc["winning"] else ""))
    return "\n".join(lines) + "\n"
