"""The tmux status line that runs `tma status`: recognising it, advising it, checking it.

tma never edits status-right (it is the user's); `tma init` advises the line to add,
naming tma as tmux will resolve it (tma.install.binary.tma_command), `uninstall`
reminds, and `doctor` reads the server's status-right to tell whether it runs
`tma status` and whether the program it names runs with tmux's environment.
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata

#: The server options the daemon keeps for the status line (tma.daemon.segment).
SEGMENT = "@tma_status_segment"
SEGMENT_UNTIL = "@tma_status_until"

#: `#(… tma … status …)`: any path to tma, any flags.
_RUNS_TMA_STATUS = re.compile(r"#\(([^)]*\btma\b[^)]*\bstatus\b[^)]*)\)")


def runs_tma_status(value: str | None) -> bool:
    """Does a status-right value run `tma status` (any path to tma, any flags)?"""
    return value is not None and _RUNS_TMA_STATUS.search(value) is not None


def reads_daemon_segment(value: str | None) -> bool:
    """Does a status-right value read the daemon's segment (the daemon form)?"""
    return value is not None and "#{" + SEGMENT + "}" in value


def daemon_status_right(command: str = "tma") -> str:
    """The daemon form: the daemon's segment while its deadline is ahead of the clock
    (`%s`: status-right goes through strftime first), `#(tma status)` otherwise. tmux
    expands only the branch a conditional takes, so the job runs only as the fallback."""
    named = command if shlex.quote(command) == command else f'"{command}"'
    return ("#{?#{e|<:%s,#{" + SEGMENT_UNTIL + "}},#{" + SEGMENT + "},#(" + named
            + " status)}")


def daemon_status_line(command: str) -> str:
    """The line to add to tmux.conf for the daemon form."""
    return f"set -g status-right '{daemon_status_right(command)} %H:%M'"


def status_program(value: str | None) -> str | None:
    """The program the `#(… tma status …)` job of a status-right value runs."""
    m = _RUNS_TMA_STATUS.search(value or "")
    if m is None:
        return None
    try:
        words = shlex.split(m.group(1))
    except ValueError:
        words = m.group(1).split()
    for word in words:
        if "=" in word and not word.startswith(("/", ".")) and "/" not in word.split("=")[0]:
            continue  # an environment assignment before the program
        return word
    return None


def status_line(command: str) -> str:
    """A whole status-right running tma as `command` (doctor's fix for a status-right
    whose `tma status` cannot run: that entry is to be replaced anyway)."""
    named = command if shlex.quote(command) == command else f'"{command}"'
    return f"set -g status-right '#({named} status) %H:%M'"


#: Columns the segment may take: five chips (`⚑12 ●3 ✓1 ○4 ?1`) and the hosts' after `@`.
SEGMENT_ROOM = 24
_STYLE = re.compile(r"#\[[^\]]*\]")  # a style: no columns on the status line


def append_line(command: str) -> str:
    """The line that adds `tma status` to the status-right there is (`set -a` appends to
    the option's value): the user's clock, host and theme stay."""
    named = command if shlex.quote(command) == command else f'"{command}"'
    return f"set -ga status-right ' #({named} status)'"


def room_needed(shown: str, length: int) -> int | None:
    """The status-right-length that leaves room for the appended segment after what
    status-right shows now (`shown`: it expanded, styles and all), or None when `length`
    already does. tmux cuts status-right at that length keeping its start (the default
    status-format's `#{=/N:status-right}`): a segment appended past it is never seen,
    and tmux's own status-right fills most of the default 40."""
    text = _STYLE.sub("", shown)
    width = sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)
    need = width + 1 + SEGMENT_ROOM
    return None if need <= length else -(-need // 10) * 10  # a round number above it


def tmux_conf(paths, explicit: str | None = None) -> str:
    """The tmux config to name: explicit, else the first existing of tmux's own search
    order (~/.tmux.conf, $XDG_CONFIG_HOME/tmux/tmux.conf, ~/.config/tmux/tmux.conf),
    else ~/.tmux.conf."""
    if explicit:
        return paths.expand(explicit)
    candidates = paths.tmux_confs()
    for c in candidates:
        if os.path.isfile(c):
            return c
    return candidates[0]
