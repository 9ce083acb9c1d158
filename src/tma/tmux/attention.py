"""Attention on the tmux side: the navigation clear and the global hooks that drive it.

The only place tma builds the `clear-attention` command lines and the
`set-hook` / `show-hooks` lines of the attention hooks.

Navigation clears the done mark on the pane you arrive at and on the pane you
leave. tmux's `after-select-pane` and `session-window-changed` hooks run
`tma clear-attention '#{pane_id}'` (the arrival) with TMA_HOOK_KIND naming the
hook; the pane just left is resolved afterwards, targeted at the arrival:

* after-select-pane: the arrival window's last pane;
* session-window-changed: the active pane of the arrival session's last window.

Kept import-light: `clear-attention` runs on every pane switch.
"""

from __future__ import annotations

import os

from tma.tmux.adapter import NoServer, Server, TmuxError, quote

ATTENTION = "@agent_attention"
WATCH_PID = "@tma_watch_pid"
#: Server option a jump sets when its move must not clear a departure (see tma.tmux.nav).
KEEP = "@tma_keep_attention"

DEPARTURE_HOOKS = ("after-select-pane", "session-window-changed")
FOCUS_HOOK = "pane-focus-in"  # arrival only (installed with [focus] events = true)
RETIRED_HOOKS = ("after-select-window",)  # fires on no-op selects with a stale last flag

_DEPARTURE = {
    "after-select-pane": "#{P:#{?pane_last,%s,}}",
    "session-window-changed": "#{W:#{?window_last_flag,#{P:#{?pane_active,%s,}},}}",
}


def departure_format(kind: str) -> str:
    """The format naming the pane just left, expanded with `-t <arrival>`."""
    return _DEPARTURE[kind] % "#{pane_id}"


def is_pane_id(value: str) -> bool:
    return len(value) > 1 and value[0] == "%" and value[1:].isdigit()


# ---------------------------------------------------------------- the clear


def clear_lines(arrival: str, kind: str | None) -> list[str]:
    """The first (and usually only) spawn of a navigation clear.

    Unset the arrival; for a departure hook, print `D<context pane> <departed>=<its
    mark> <keep marker>` (the context pane proves the target resolved: a dead
    arrival would silently expand in no pane); list every watcher pid.
    """
    lines = [f"set-option -p -u -t {arrival} {ATTENTION}"]
    if kind in _DEPARTURE:
        fmt = "D#{pane_id} " + _DEPARTURE[kind] % "#{pane_id}=#{@agent_attention}" + \
            " #{" + KEEP + "}"
        lines.append(f"display-message -p -t {arrival} {quote(fmt)}")
    lines.append(f"list-panes -a -F {quote('W#{' + WATCH_PID + '}')}")
    return lines


def parse_clear(out: str, arrival: str) -> tuple[str, bool, str, list[int]]:
    """(departed pane, whether it carries the mark, keep marker, watcher pids)."""
    departed, marked, keep = "", False, ""
    pids: list[int] = []
    for line in out.split("\n"):
        if line.startswith("W"):
            value = line[1:].strip()
            if value.isdigit() and int(value) > 0 and int(value) not in pids:
                pids.append(int(value))
        elif line.startswith("D"):
            parts = line[1:].split(" ", 2)
            if len(parts) != 3 or parts[0] != arrival:
                continue
            pane, _, mark = parts[1].partition("=")
            if is_pane_id(pane) and pane != arrival:
                departed, marked = pane, mark != ""
            keep = parts[2]
    return departed, marked, keep, pids


def clear(server: Server, arrival: str, kind: str | None) -> list[int]:
    """Unset the mark on the arrival (and on the pane just left, for a departure
    hook); return the watcher pids to nudge. One spawn unless the departed pane
    carries the mark or a jump left a keep marker. Raises TmuxError when the
    server cannot be reached."""
    if not is_pane_id(arrival):
        return []
    out, _err = server.source(clear_lines(arrival, kind))
    departed, marked, keep, pids = parse_clear(out, arrival)
    if kind not in _DEPARTURE:
        return pids
    follow = []
    if departed and marked and departed != keep:
        follow.append(f"set-option -p -u -t {departed} {ATTENTION}")
    if keep:
        follow.append(f"set-option -s -u {KEEP}")
    if follow:
        server.source(follow)
    return pids


def keep_line(session: str) -> str:
    """Before a jump switches the client into `session` AND changes that session's
    window: remember the session's current pane if it carries the mark, so the
    session-window-changed departure (that pane, which nobody navigated off) holds."""
    return (f"set-option -s -F -t {quote(session)} {KEEP} "
            f"{quote('#{?' + ATTENTION + ',#{pane_id},}')}")


# ---------------------------------------------------------------- the hooks


_SH_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./%=:@,+-")


def _sh(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _word(value: str) -> str:
    """A shell word: bare when it needs no quoting."""
    return value if value and all(c in _SH_SAFE for c in value) else _sh(value)


def hook_shell(hook: str, tma_bin: str, flags: list[str]) -> str:
    """The shell command a hook runs: the absolute tma when it is still there, else
    whatever `tma` is on PATH; silent, never failing (run-shell would show it)."""
    kind = f"TMA_HOOK_KIND={hook} " if hook in _DEPARTURE else ""
    tail = "".join(" " + _word(f) for f in flags) + " clear-attention '#{pane_id}'" + \
        " 2>/dev/null || true"
    # run-shell expands formats: every `#` but the pane placeholder is doubled
    absolute = _sh(tma_bin).replace("#", "##")
    tail = tail.replace("#", "##").replace("'##{pane_id}'", "'#{pane_id}'")
    return (f"if [ -x {absolute} ]; then {kind}{absolute}{tail}; "
            f"else {kind}tma{tail}; fi")


def hook_command(hook: str, tma_bin: str, flags: list[str]) -> str:
    """The tmux command stored in the hook array."""
    shell = hook_shell(hook, tma_bin, flags)
    return 'run-shell "' + shell.replace("\\", "\\\\").replace('"', '\\"') \
        .replace("$", "\\$") + '"'


def normalize(command: str) -> str:
    """Currency compares commands without whitespace, quotes or backslashes (tmux
    re-renders what it stores)."""
    return "".join(c for c in command if not c.isspace() and c not in "'\"\\")


def is_ours(command: str) -> bool:
    return "clear-attention" in command


def read_hooks(server: Server) -> list[tuple[str, int, str]]:
    """Every global hook entry as (hook, index, command): session hooks (`-g`), then
    window and pane hooks such as pane-focus-in (`-gw`, which a tmux without
    per-window hooks may refuse)."""
    outs = [server.run("show-hooks", "-g")]
    try:
        outs.append(server.run("show-hooks", "-gw"))
    except TmuxError as exc:
        if isinstance(exc, NoServer):
            raise
    entries, seen = [], set()
    for out in outs:
        for line in out.split("\n"):
            name, sep, rest = line.partition("[")
            if not sep:
                continue
            idx, sep, command = rest.partition("] ")
            if sep and idx.isdigit() and name and " " not in name \
                    and (name, int(idx)) not in seen:
                seen.add((name, int(idx)))
                entries.append((name, int(idx), command))
    return entries


def append_hook(server: Server, hook: str, command: str) -> None:
    server.run("set-hook", "-ga", hook, command)


def set_hook_at(server: Server, hook: str, index: int, command: str) -> None:
    server.run("set-hook", "-g", f"{hook}[{index}]", command)


def unset_hook_at(server: Server, hook: str, index: int) -> None:
    server.run("set-hook", "-gu", f"{hook}[{index}]")


def forget_keep(server: Server) -> None:
    server.run("set-option", "-s", "-u", KEEP)


def socket_path(server: Server) -> str:
    from tma.tmux import frame

    return frame.untext(server.run("display-message", "-p",
                                   frame.text("socket_path")).rstrip("\n"))


def env_kind() -> str | None:
    kind = os.environ.get("TMA_HOOK_KIND") or None
    return kind if kind in _DEPARTURE else None


def watcher_pids(server: Server) -> list[int]:
    """The pids every pane advertises as its running `tma watch` (@tma_watch_pid)."""
    out = server.run("list-panes", "-a", "-F", "#{" + WATCH_PID + "}")
    return sorted({int(v) for v in out.split() if v.isdigit() and int(v) > 1})


def advertise_watch(server: Server, pane: str | None, pid: int | None) -> None:
    """Set (pid) or remove (None) `@tma_watch_pid` on watch's own pane, where the focus
    hooks' clear-attention finds it to nudge it; never fatal."""
    if not pane:
        return
    from tma.tmux import write

    try:
        server.source([write.set_plain(pane, WATCH_PID, str(pid) if pid else "")])
    except TmuxError:
        pass
