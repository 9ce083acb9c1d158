"""`tma ls`: one row per agent pane (tab-separated, or the schema-1 JSON document);
with --hosts, every configured host's rows after the local ones (tma.runtime.fleet)."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime import card_screen, fleet, hosts
from tma.runtime.git import GitInfo
from tma.runtime.session import Session
from tma.ui import rows as render
from tma.ui import table


def main(session: Session, argv: list[str]) -> int:
    sel, args = spec.parse("ls", argv, session)
    cfg = session.surface_config()
    if args.hosts and args.pane:
        raise common.UsageError("--pane names a local pane; it does not go with --hosts")

    probes = None
    if args.hosts:
        try:  # started first: the hosts answer while the local cycle runs
            probes = fleet.snapshot_all(session, timeout=args.timeout)
        except hosts.HostError as exc:
            common.err(f"tma: {exc}")
            return common.FAIL
    git = GitInfo()
    try:
        result = session.cycle()
    except Exception as exc:
        if probes is None or type(exc).__name__ != "NoServer":
            raise
        result = None  # no local tmux: the hosts' rows alone
        common.err("tma: no local tmux server; showing the hosts only")
    rows = session.select(result.rows, sel, git) if result is not None else []
    if args.pane and result is not None:
        if all(p.pane_id != args.pane for p in result.snapshot.panes):
            raise common.NoPane(args.pane)
        rows = [r for r in rows if r.pane.pane_id == args.pane]
    remote = _remote(probes, sel) if probes is not None else []
    for p in probes or ():
        if not p.ok:
            common.err(f"tma: host {p.name}: {p.state}: {p.error}")
        elif p.banner:
            common.err(f"tma: host {p.name}: {p.banner_note()}")

    if args.json:
        from tma.ui import text

        screen = {}
        if any(card_screen.wants_screen(r) for r in rows):  # only the screen knows what they ask
            screen = card_screen.screen_pending(session.server, rows, session.manifests)
        server = result.snapshot.socket_path if result is not None else ""
        doc = render.document(rows, server=server, git=git, screen=screen)
        if probes is not None:
            doc["agents"] += remote
            doc["hosts"] = [_host_entry(p) for p in probes]
        sys.stdout.write(text.dumps(doc) + "\n")
        return 0
    if common.on_terminal():
        sys.stdout.write(_for_a_person(rows, remote, git, cfg))
        return 0
    sys.stdout.write("".join(render.text_line(r, git) for r in rows))  # scripts: TSV
    sys.stdout.write("".join(render.fleet_text_line(d) for d in remote))
    return 0


def _remote(probes, sel) -> list[dict]:
    out = []
    for p in probes:
        for frow in p.rows:
            d = render.fleet_row_dict(frow, host=p.name)
            if sel is None or _matches(d, sel):
                out.append(d)
    return out


def _matches(d: dict, sel) -> bool:
    """The selector flags on a remote row (what the row says; the host already decided)."""
    if sel.session is not None and d["locator"].split(":", 1)[0] != sel.session:
        return False
    if sel.agent is not None and d["agent"] != sel.agent:
        return False
    if sel.repo is not None and d["repo"] != sel.repo:
        return False
    if sel.branch is not None and d["branch"] != sel.branch:
        return False
    if sel.states:
        state = "done" if d["done"] else d["state"]
        if state not in sel.states and d["state"] not in sel.states:
            return False
    return True


def _host_entry(p) -> dict:
    return {"name": p.name, "state": p.state, "error": p.error,
            "age_ms": max(0, common.now_ms() - p.at_ms) if p.ok else None}


def _for_a_person(rows, remote, git, cfg) -> str:
    if not rows and not remote:
        return "no agent panes (tma doctor says what it sees)\n"
    dicts = [render.row_dict(r, server="", host="", git=git) for r in rows]
    dicts += [dict(d, pane=f"{d['host']}:{d['pane']}") for d in remote]
    lines = table.lines(dicts, common.terminal_width(), common.now_ms(), cfg.status)
    return "".join(line + "\n" for line in lines)
