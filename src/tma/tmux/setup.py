"""tmux-side reads and writes of the setup commands (`tma init`, `tma uninstall`).

* `status_right`: the global `status-right` value (init reports whether it runs
  `tma status`; tma never edits it).
* `sweep`: the uninstall sweep. Every pane loses the options the caller names, every
  window and session its rollup, the server every `@tma_*` option it holds (the
  per-client `@tma_origin_*` jump trails included) — all in one `source-file -`
  spawn. What to sweep is the caller's (the option registry's); this module only
  builds the lines. Nothing here touches an option it is not given, so the user's
  `@agent_ignore` stays.
"""

from __future__ import annotations

from tma.tmux import read, write
from tma.tmux.adapter import Server, TmuxError

#: The server-scope namespace tma owns (`@tma_last_poll`, `@tma_setpf_ok`,
#: `@tma_origin_*`, `@tma_keep_attention`, ...).
SERVER_PREFIX = "@tma_"


def status_right(server: Server) -> str:
    """The global status-right (raises NoServer / TmuxError)."""
    return server.run("show-options", "-gv", "status-right").rstrip("\n")


def status_right_shown(server: Server) -> str:
    """The global status-right expanded as a status line draws it (formats, then
    strftime; a `#()` job's output is not in it, styles are). Raises NoServer /
    TmuxError."""
    return server.run("display-message", "-p", "#{T:status-right}").rstrip("\n")


def global_option(server: Server, key: str) -> str:
    """One global session option's value (raises NoServer / TmuxError)."""
    return server.run("show-options", "-gv", key).rstrip("\n")


def server_option(server: Server, key: str) -> str:
    """One server option's value ("" when unset; raises NoServer / TmuxError)."""
    return server.run("show-options", "-sv", key).rstrip("\n")


def global_path(server: Server) -> str | None:
    """PATH in the server's global environment (what #() jobs and hooks run with);
    None when it is unset there. Raises NoServer / TmuxError."""
    try:
        line = server.run("show-environment", "-g", "PATH").strip()
    except TmuxError as exc:
        if "unknown variable" in str(exc):
            return None
        raise
    return line[len("PATH="):] if line.startswith("PATH=") else None


def server_options(server: Server, prefix: str = SERVER_PREFIX) -> list[str]:
    """Names of the server options starting with prefix."""
    out = server.run("show-options", "-s")
    names = []
    for line in out.splitlines():
        name = line.split(" ", 1)[0]
        if name.startswith(prefix) and name not in names:
            names.append(name)
    return names


def sweep_lines(panes: list[read.Pane], server_names: list[str], pane_names: tuple[str, ...],
                session_names: tuple[str, ...] = ()) -> list[str]:
    """The command lines of the sweep: one per pane, window, session, server option."""
    lines = [write.remove(p.pane_id, pane_names) for p in panes]
    windows = sorted({p.window_id for p in panes if p.window_id})
    sessions = sorted({p.session_id for p in panes if p.session_id})
    lines += [write.rollup("window", w, "") for w in windows]
    lines += [write.rollup("session", s, "") for s in sessions]
    for s in sessions:
        lines += [f"set-option -t {s} -u {name}" for name in session_names]
    lines += [f"set-option -s -u {name}" for name in server_names]
    return lines


def sweep(server: Server, pane_names: tuple[str, ...], session_names: tuple[str, ...] = (),
          ) -> dict[str, int]:
    """Unset everything tma wrote on the server. Returns what was swept (counts).

    Raises NoServer / TmuxError when the server cannot be read; a pane that vanishes
    mid-sweep stops only its own line.
    """
    snap = read.list_panes(server)
    names = server_options(server)
    lines = sweep_lines(snap.panes, names, pane_names, session_names)
    if lines:
        server.source(lines)
    return {"panes": len(snap.panes),
            "windows": len({p.window_id for p in snap.panes}),
            "sessions": len({p.session_id for p in snap.panes}),
            "server_options": len(names)}
