"""`tma ls`: one row per agent pane (tab-separated, or the schema-1 JSON document);
with --hosts, every configured host's rows after the local ones: from the running
daemon's long-lived links (tma.daemon.fleet, no SSH at all), else one snapshot from
each host in parallel (tma.runtime.fleet)."""

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

    remote_side = None
    if args.hosts:
        try:  # started first: the hosts answer while the local cycle runs
            remote_side = _Hosts(session, args.timeout)
        except hosts.HostError as exc:
            common.err(f"tma: {exc}")
            return common.FAIL
    git = GitInfo()
    try:
        result = session.cycle()
    except Exception as exc:
        if not args.hosts or type(exc).__name__ != "NoServer":
            raise
        result = None  # no local tmux: the hosts' rows alone
        common.err("tma: no local tmux server; showing the hosts only")
    rows = session.select(result.rows, sel, git) if result is not None else []
    if args.pane and result is not None:
        if all(p.pane_id != args.pane for p in result.snapshot.panes):
            raise common.NoPane(args.pane)
        rows = [r for r in rows if r.pane.pane_id == args.pane]
    remote = remote_side.rows(sel) if remote_side is not None else []
    if remote_side is not None:
        remote_side.warn()

    if args.json:
        from tma.ui import text

        screen = {}
        if any(card_screen.wants_screen(r) for r in rows):  # only the screen knows what they ask
            screen = card_screen.screen_pending(session.server, rows, session.manifests)
        server = result.snapshot.socket_path if result is not None else ""
        doc = render.document(rows, server=server, git=git, screen=screen)
        if remote_side is not None:
            doc["agents"] += remote
            doc["hosts"] = remote_side.entries()
        sys.stdout.write(text.dumps(doc) + "\n")
        return 0
    if common.on_terminal():
        sys.stdout.write(_for_a_person(rows, remote, git, cfg))
        return 0
    sys.stdout.write("".join(render.text_line(r, git) for r in rows))  # scripts: TSV
    sys.stdout.write("".join(render.fleet_text_line(d) for d in remote))
    return 0


class _Hosts:
    """The hosts' side of ls --hosts: the running daemon's fleet document (its long-lived
    links: no SSH at all), else one snapshot from each host in parallel."""

    def __init__(self, session: Session, timeout: float) -> None:
        configured = [h.name for h in hosts.load(session)]
        self.cached = _from_daemon(session, configured)
        # no daemon (or one that does not hold these hosts yet): a probe each
        self.probes = (fleet.snapshot_all(session, timeout=timeout)
                       if self.cached is None else None)

    def rows(self, sel) -> list[dict]:
        if self.cached is not None:
            return [d for d in self.cached["agents"] if _matches(d, sel)]
        return _remote(self.probes or [], sel)

    def entries(self) -> list[dict]:
        if self.cached is not None:
            return [_cached_entry(h) for h in self.cached["hosts"]]
        return [_host_entry(p) for p in self.probes or []]

    def warn(self) -> None:
        for h in self.cached["hosts"] if self.cached is not None else ():
            if h["state"] != "online":
                age = h["age_ms"]
                common.err(f"tma: host {h['name']}: {h['state']} ({h['link']}: {h['error']})"
                           + (f"; rows {age // 1000} s old" if age is not None else ""))
        for p in self.probes or ():
            if not p.ok:
                common.err(f"tma: host {p.name}: {p.state}: {p.error}")
            elif p.banner:
                common.err(f"tma: host {p.name}: {p.banner_note()}")


def _from_daemon(session: Session, configured: list[str]) -> dict | None:
    """The running daemon's fleet document when it holds exactly the configured hosts."""
    doc = session.daemon_fleet()
    if doc is None or sorted(h.get("name") for h in doc["hosts"]) != sorted(configured):
        return None
    return doc


def _remote(probes, sel) -> list[dict]:
    out = []
    for p in probes:
        for frow in p.rows:
            d = render.fleet_row_dict(frow, host=p.name)
            d["age_ms"] = max(0, common.now_ms() - p.at_ms) if p.at_ms else None
            if _matches(d, sel):
                out.append(d)
    return out


def _matches(d: dict, sel) -> bool:
    """The selector flags on a remote row (what the row says; the host already decided)."""
    if sel is None:
        return True
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


def _cached_entry(h: dict) -> dict:
    """A host as the daemon's link keeps it: online, offline or connecting, with the
    link's named state (link.py) and its error."""
    return {"name": h["name"], "state": h["state"], "error": h["error"],
            "age_ms": h["age_ms"], "link": h["link"], "stale": h["stale"],
            "source": "daemon"}


def _stale_note(d: dict) -> str | None:
    """A remote row has no title (titles never leave a host): the column says instead
    when the row is the last word of a host that went offline."""
    if not d.get("stale"):
        return None
    age = d.get("age_ms")
    return "stale: offline" + (f" {age // 1000}s" if age is not None else "")


def _for_a_person(rows, remote, git, cfg) -> str:
    if not rows and not remote:
        return "no agent panes (tma doctor says what it sees)\n"
    dicts = [render.row_dict(r, server="", host="", git=git) for r in rows]
    dicts += [dict(d, pane=f"{d['host']}:{d['pane']}", title=_stale_note(d)) for d in remote]
    lines = table.lines(dicts, common.terminal_width(), common.now_ms(), cfg.status)
    return "".join(line + "\n" for line in lines)
