"""`tma wait`: block until a pane (or a fleet) reaches a state.

A thin driver over the row feed (tma.runtime.feed): the first cycle runs at once,
then one per 1 s tick, with the config re-read every tick. The decision is
`tma.runtime.waiting`'s.

Exit: 0 satisfied (row(s) on stdout), 1 runtime (no server, ambiguous --agent),
2 usage (also an empty --all scope), 3 watched pane vanished, 4 its agent exited
while the pane lives, 124 timed out.

The fleet (tma.runtime.fleet.read): `--pane HOST:%N` follows one host's pane, and
`--hosts` adds every host's rows to --any and --count. The rows come from the daemon's
links when it holds the hosts (read every tick, no SSH), else from a probe of the hosts
at most every 2 s (each probe is an ssh session and a poll cycle on the host: a wait
must not cost a host more than that). Only an online host's rows decide: a host that
goes offline keeps the wait waiting, said once on stderr (and its return too), and a
--timeout still ends it with 124, so the last word of a host that went quiet is never
reported as reached. A remote --pane the host does not list as an agent pane when first
read is exit 3 (a host shows its agent panes only, so a typo cannot wait forever); one
that leaves the host's rows later vanished (3).
"""

from __future__ import annotations

import os
import sys
import time

from tma.cli import common, spec
from tma.runtime import waiting
from tma.runtime.feed import Feed
from tma.runtime.session import Session
from tma.ui import rows as render, table, text

TICK_S = 1.0  # --pane HOST:%N looks at the hosts' rows this often (a local wait's tick)


def main(session: Session, argv: list[str]) -> int:
    sel, args = spec.parse("wait", argv, session)
    waiter, timeout = waiting.from_args(sel, args)
    remote_pane = args.pane is not None and ":" in args.pane
    if args.hosts and (remote_pane or waiter.kind not in (waiting.ANY, waiting.COUNT)):
        raise common.UsageError("--hosts goes with --any or --count (--pane HOST:%N "
                                "follows one host's pane by itself)")
    cfg = session.surface_config()
    if remote_pane:
        return _remote_pane(session, waiter, timeout, args, cfg.status)
    follow = notes = None
    if args.hosts:
        # the fleet's modules (hosts.toml's parser, the link) cost every wait ~120 ms of
        # start-up: only for the hosts
        from tma.runtime.fleet import hosts, read as fleet_read

        try:
            follow = fleet_read.Follow(session)
            follow.look()  # a broken hosts file fails now, not mid-wait
        except hosts.HostError as exc:
            common.err(f"tma: {exc}")
            return common.FAIL
        notes = _HostNotes(fleet_read.host_state)
    feed = Feed(session, sel, slow="tma: tmux slow to respond; still waiting")
    deadline = None
    checked = False
    while True:  # Ctrl-C: 130 at cli/main.py
        tick = feed.tick()
        if deadline is None and timeout is not None:
            deadline = feed.start + timeout
        result = tick.result
        if result is not None:
            opening = [p.pane_id for p in result.first_snapshot.panes]
            if not checked and waiter.kind == waiting.PANE and waiter.pane not in opening:
                raise common.NoPane(waiter.pane or "")  # a --pane absent at the start: exit 3 now
            checked = True
            rows, in_scope = result.rows, feed.in_scope()
            if follow is not None:
                rows, in_scope = _with_hosts(follow, notes, sel, rows, in_scope)
            # the opening read: a pane killed mid-cycle still counts as seen, so the
            # next tick reports it vanished (exit 3)
            step = waiter.step(rows, opening, in_scope=in_scope,
                               producing=not result.stats.stampede)
            for note in waiter.notes:
                common.err(note)
            waiter.notes.clear()
            if step.kind != waiting.WAITING:
                return _finish(step, waiter, sel, tick, args.json, feed.cfg.status)
        if deadline is not None and feed.clock() >= deadline:
            return _timed_out(timeout, waiter)
        feed.pause(deadline)


def _with_hosts(follow, notes, sel, rows, in_scope):
    """The cycle's rows and the online hosts' (selectors applied to what the host said),
    and the scope predicate that lets the hosts' through."""
    from tma.runtime.fleet import read as fleet_read, view as fleet_view

    view = follow.look()
    notes.update(view)
    remote = [fleet_read.RemoteRow(d) for d in view.live_rows() if fleet_view.matches(d, sel)]
    if not remote:
        return rows, in_scope
    local_scope = in_scope

    def scope(row) -> bool:
        return isinstance(row, fleet_read.RemoteRow) or local_scope is None \
            or local_scope(row)

    return list(rows) + remote, scope


class _HostNotes:
    """One stderr line when a followed host stops answering, and one when it is back."""

    def __init__(self, host_state) -> None:
        self.up: dict[str, bool] = {}
        self.host_state = host_state  # tma.runtime.fleet.read's, imported by the caller

    def update(self, view) -> None:
        for h in view.hosts:
            up = view.online(h["name"])
            if self.up.get(h["name"], True) != up:
                if up:
                    common.err(f"tma: host {h['name']} is online again")
                else:
                    state, link = self.host_state(h)
                    why = f" ({link}: {h['error']})" if h.get("error") else ""
                    common.err(f"tma: host {h['name']} is {state}{why}; still "
                               "waiting (its last rows do not count)")
            self.up[h["name"]] = up


def _remote_pane(session, waiter, timeout, args, palette: dict) -> int:
    """--pane HOST:%N: follow the host's rows (no local tmux needed)."""
    from tma.runtime.fleet import hosts, read as fleet_read

    name = args.pane
    host, pane = name.split(":", 1)
    try:
        hosts.get(session, host)
    except hosts.HostError as exc:
        raise common.UsageError(f"--pane {name}: {exc}") from None
    follow = fleet_read.Follow(session, [host])
    notes = _HostNotes(fleet_read.host_state)
    start = time.monotonic()
    deadline = start + timeout if timeout is not None else None
    seen = False
    while True:
        view = follow.look()
        notes.update(view)
        if view.online(host):
            rows = [fleet_read.RemoteRow(d) for d in view.live_rows()]
            alive = [r.pane.pane_id for r in rows]
            if not seen and name not in alive:
                common.err(f"tma: host {host} has no agent pane {pane}")
                return waiting.EXIT[waiting.VANISHED]
            seen = True
            step = waiter.step(rows, alive)
            if step.kind != waiting.WAITING:
                return _finish(step, waiter, None, None, args.json, palette)
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return _timed_out(timeout, waiter)
        tick = start + (int((now - start) / TICK_S) + 1) * TICK_S
        time.sleep(max(0.0, min(tick, deadline if deadline is not None else tick) - now))


def _timed_out(timeout, waiter) -> int:
    secs = format(timeout, "f").rstrip("0").rstrip(".")
    common.err(f"tma: timed out after {secs}s waiting for "
               f"{waiter.goal.describe()} (exit {waiting.EXIT_TIMEOUT})")
    return waiting.EXIT_TIMEOUT


def _dicts(rows, tick) -> list[dict]:
    """The rows as ls --json rows: a host's as the host said it, HOST:%N's pane as `pane`
    and `host`."""
    out = []
    for r in rows:
        doc = getattr(r, "doc", None)
        out.append(doc if doc is not None else render.row_dict(
            r, server=tick.result.snapshot.socket_path, host=os.uname().nodename,
            git=tick.git))
    return out


def _finish(step, waiter, sel, tick, as_json: bool, palette: dict) -> int:
    goal = waiter.goal.describe()
    if step.kind == waiting.MATCHED and (tick is None or any(hasattr(r, "doc")
                                                             for r in step.rows)):
        return _finish_fleet(step, waiter, tick, as_json, palette)
    if step.kind == waiting.MATCHED:
        if as_json:
            doc = render.document(step.rows, server=tick.result.snapshot.socket_path,
                                  git=tick.git, one=not waiter.fleet)
            sys.stdout.write(text.dumps(doc) + "\n")
        elif common.on_terminal():  # a person: the ls table (ages, not epoch ms)
            dicts = [render.row_dict(r, server="", host="", git=tick.git) for r in step.rows]
            lines = table.lines(dicts, common.terminal_width(), common.now_ms(), palette)
            sys.stdout.write("".join(line + "\n" for line in lines))
        else:  # scripts: TSV
            sys.stdout.write("".join(render.text_line(r, tick.git) for r in step.rows))
        return 0
    if step.kind == waiting.VANISHED:
        common.err(f"tma: pane {step.panes[0]} vanished before reaching {goal} (exit 3)")
    elif step.kind == waiting.DEPARTED:
        common.err(f"tma: the agent on pane {step.panes[0]} exited before reaching {goal} "
                   "(exit 4)")
    elif step.kind == waiting.AMBIGUOUS:
        common.err(f'tma: --agent "{sel.agent}" matches {len(step.panes)} panes '
                   f'({", ".join(step.panes)}); target one with --pane')
    elif step.kind == waiting.EMPTY:
        common.err("tma: --all matched no agent panes in scope; nothing to wait for (exit 2)")
    return step.exit_code


def _finish_fleet(step, waiter, tick, as_json: bool, palette: dict) -> int:
    """A match that holds a host's row: the same three outputs, a remote pane HOST:%N."""
    dicts = _dicts(step.rows, tick)
    if as_json:
        doc = {"schema": 1, **dicts[0]} if not waiter.fleet else {"schema": 1,
                                                                   "agents": dicts}
        sys.stdout.write(text.dumps(doc) + "\n")
    elif common.on_terminal():
        shown = [dict(d, pane=f"{d['host']}:{d['pane']}") if "stale" in d else d
                 for d in dicts]
        lines = table.lines(shown, common.terminal_width(), common.now_ms(), palette)
        sys.stdout.write("".join(line + "\n" for line in lines))
    else:
        for r, d in zip(step.rows, dicts, strict=True):
            sys.stdout.write(render.fleet_text_line(d) if hasattr(r, "doc")
                             else render.text_line(r, tick.git))
    return 0
