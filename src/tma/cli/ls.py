"""`tma ls`: one row per agent pane (tab-separated, or the schema-1 JSON document);
with --hosts, every configured host's rows after the local ones: from the running
daemon's long-lived links, else one snapshot from each host in parallel
(tma.runtime.fleet.view)."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime.git import GitInfo
from tma.runtime.session import Session
from tma.ui import rows as render, table


def main(session: Session, argv: list[str]) -> int:
    sel, args = spec.parse("ls", argv, session)
    cfg = session.surface_config()
    if args.hosts and args.pane:
        raise common.UsageError("--pane names a local pane; it does not go with --hosts")

    remote_side = None
    if args.hosts:
        # the fleet's modules (hosts.toml's parser, the link, the protocol) only with
        # --hosts: without it ls shows this machine's panes and pays nothing for a fleet
        from tma.runtime.fleet import hosts, view as fleet_view

        try:  # started first: the hosts answer while the local cycle runs
            remote_side = fleet_view.Remote(session, args.timeout)
        except hosts.HostError as exc:
            common.err(f"tma: {exc}")
            return common.FAIL
    git = GitInfo()
    try:
        result = session.cycle(meanwhile=_json_modules if args.json else None)
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
    for line in remote_side.problems() if remote_side is not None else ():
        common.err(f"tma: {line}")

    if args.json:
        card_screen, text = _json_modules()
        screen = {}
        if any(card_screen.wants_screen(r) for r in rows):  # only the screen knows what they ask
            # the screens this run's cycle read are read from its captures (a cold
            # refresh captured every blocked pane already): no second capture
            screen = card_screen.screen_pending(
                session.server, rows, session.manifests,
                result.captures if result is not None else None)
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


def _json_modules():  # loaded while tmux writes the stamps (json and its encoder)
    from tma.runtime.act import card_screen  # what a blocked row asks: the document only
    from tma.ui import text

    return card_screen, text


def _for_a_person(rows, remote, git, cfg) -> str:
    if not rows and not remote:
        return "no agent panes (tma doctor says what it sees)\n"
    dicts = [render.row_dict(r, server="", host="", git=git) for r in rows]
    # a remote row has no title (titles never leave a host): the column says instead
    # when the row is the last word of a host that went offline
    dicts += [dict(d, pane=f"{d['host']}:{d['pane']}",
                   title=table.stale_note(d) if d.get("stale") else None) for d in remote]
    lines = table.lines(dicts, common.terminal_width(), common.now_ms(), cfg.status)
    return "".join(line + "\n" for line in lines)
