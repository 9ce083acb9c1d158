"""`tma debug`'s text: the explain document (a live pane or a saved capture) and the
daemon's transition ring. Renders documents; never reads a pane."""

from __future__ import annotations

import time


def explain(doc: dict) -> str:
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


def transitions(doc: dict) -> str:
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
