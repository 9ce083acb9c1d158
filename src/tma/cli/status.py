"""`tma status`: counts for the status line. The hot path: keep imports lean."""

from __future__ import annotations

import sys

from tma.cli import common

FORMATS = ("tmux", "plain", "json", "prom")


def main(session: common.Session, argv: list[str]) -> int:
    rest = argv
    sel = None  # a status line passes no selector: their parser is not even imported
    if any(a.startswith("--") and a.partition("=")[0] != "--format" for a in rest):
        sel, rest = common.take_selectors(rest)
    fmt = _format(rest)
    if fmt is None:
        return 0  # --help
    if sel is None and fmt == "tmux" and not common.on_terminal():
        shown = session.segment()
        if shown is not None:
            sys.stdout.write(shown)
            return 0
    if sel is not None and sel.agent is not None:
        common.check_agent(session, sel.agent)
    cfg = session.surface_config()
    # counts need no telemetry lane nor, unless --repo/--branch, a pane path: a lean read
    lean = sel is None or not sel.needs_git
    result = session.cycle(report=common.on_terminal(2), lean=lean, current=False)
    rows = result.rows if sel is None else _select(result.rows, sel)
    from tma.ui import status as render

    counts = render.counts(rows)
    # the status line itself (tmux, not a terminal) reads the hosts' counts only in the
    # daemon's segment: asking the daemon here would load its client on the hot path
    asked = fmt in ("json", "plain") or common.on_terminal()
    fleet = _fleet(session, cfg) if sel is None and asked and fmt != "prom" else None
    remote = fleet["counts"] if fleet is not None else None
    if fmt in ("tmux", "plain") and common.on_terminal():
        # a person typed it: no tmux markup, and a newline so the prompt starts afresh
        line = render.for_a_person(counts, cfg.status)
        if remote is not None:
            line = render.with_fleet(line.rstrip("\n"), render.plain(remote, cfg.status)) + "\n"
        sys.stdout.write(line)
    elif fmt == "tmux":
        sys.stdout.write(line := render.with_fleet(render.tmux(counts, cfg.status),
                                                   render.tmux(remote, cfg.status) if remote else ""))
        session.keep_segment(result, line)
    elif fmt == "plain":
        # a line like any other in a pipe (`read`, `wc -l`, a prompt after it); under
        # #() tmux keeps the first line of a job's output, so the newline never shows
        sys.stdout.write(render.with_fleet(render.plain(counts, cfg.status),
                                           render.plain(remote, cfg.status) if remote else "")
                         + "\n")
    elif fmt == "json":
        sys.stdout.write(render.json_doc(counts, fleet))
    else:
        sys.stdout.write(render.prom(counts, rows, common.now_ms()))
    return 0


def _format(rest: list[str]) -> str | None:
    """--format's value (default tmux); None after printing --help."""
    fmt = "tmux"
    i = 0
    while i < len(rest):
        name, eq, value = rest[i].partition("=")
        if name == "--format":
            if not eq:
                if i + 1 >= len(rest):
                    raise common.UsageError("--format needs a value")
                value = rest[i + 1]
                i += 1
            if value not in FORMATS:
                raise common.UsageError(
                    f"invalid format {value!r} (expected one of: {', '.join(FORMATS)})")
            fmt = value
        elif rest[i] in ("-h", "--help"):
            from tma.cli import spec  # declared there; parsed here by hand (the hot path)

            sys.stdout.write(spec.help_text("status"))
            return None
        elif rest[i].startswith("-"):
            from tma.cli import spec  # the error path only: the status line never gets here

            hint = spec.did_you_mean(name, spec.flag_names(spec.COMMANDS["status"]), "")
            raise common.UsageError(f"unknown option {rest[i]}{hint} (see its --help)")
        else:
            raise common.UsageError(f"unexpected argument {rest[i]!r}")
        i += 1
    return fmt


def _fleet(session, cfg) -> dict | None:
    """The hosts' counts and states from a running daemon that holds links to hosts,
    under `[fleet] status` (default on); None otherwise (never an SSH of its own)."""
    if not (cfg.fleet or {}).get("status", True):
        return None
    doc = session.daemon_fleet()
    if doc is None or not doc.get("hosts") or not isinstance(doc.get("counts"), dict):
        return None
    hosts = doc["hosts"]
    return {"counts": doc["counts"],
            "hosts": {s: sum(1 for h in hosts if h.get("state") == s)
                      for s in ("online", "offline", "connecting")}}


def _select(rows, sel):
    git = None
    if sel.needs_git:
        from tma.runtime.git import GitInfo

        git = GitInfo()
    return common.Session.select(rows, sel, git)
