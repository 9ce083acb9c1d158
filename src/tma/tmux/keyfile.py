"""The tmux lines of `tma install-keys`' managed file, and loading it into a server.

Every tmux command the key file holds is built here: the prefix bindings, the mouse
clicks on `tma status`'s segments, the attention hooks at their fixed index, the
daemon launcher, and the marked `source-file` line for the user's tmux.conf.
tma.install.keys puts them together into the file and edits the user's conf.
"""

from __future__ import annotations

import os
import re
import shlex

from tma.tmux import attention
from tma.tmux.adapter import Server, TmuxError, quote

#: The managed file: its name in tma's config dir, and the line it starts with.
MANAGED_NAME = "tmux.conf"
HEADER = "# tma keybindings"
MARKER = "# tma keys"
#: the marker when tma had to end the user's last line before appending its own
MARKER_NL = "# tma keys (newline added)"
MARKED = re.compile(r"^\s*source-file\b.*" + re.escape(MARKER) + r"( \(newline added\))?\s*$")
#: the slot the managed file sets each attention hook at (re-sourcing replaces it)
MANAGED_INDEX = 73
CLIENT = '--client "#{client_name}"'


def managed_path(cdir: str) -> str:
    return os.path.join(cdir, MANAGED_NAME)


def holds_hooks(text: str | None) -> bool:
    """Does this managed file install the attention hooks (so it owns them)?"""
    if not text or not text.startswith(HEADER):
        return False
    return any(is_hook_line(line) for line in text.splitlines())


def word(value: str) -> str:
    """One tmux config-file word: single quotes when that is literal enough."""
    if "'" not in value and "\n" not in value:
        return "'" + value + "'"
    return quote(value)


def _sh(tma: str) -> str:
    return shlex.quote(tma)


def run_shell(tma: str, args: str) -> str:
    """A run-shell command (run-shell expands formats: a `#` in the path is doubled)."""
    return "run-shell " + word(_sh(tma).replace("#", "##") + " " + args)


#: Below this client size 80% x 60% leaves the picker no room for its preview (76
#: columns inside the border) and its title column: the popup takes the whole client.
POPUP_FULL_BELOW = (98, 27)


def popup(tma: str) -> str:
    """The picker's popup, sized from the client (display-popup expands no format in -w
    or -h before 3.4, so if-shell -F picks one of two sizes)."""
    w, h = POPUP_FULL_BELOW
    small = f"#{{||:#{{e|<:#{{client_width}},{w}}},#{{e|<:#{{client_height}},{h}}}}}"
    full = f"display-popup -E -w 100% -h 100% {word(_sh(tma))}"
    part = f"display-popup -E -w 80% -h 60% {word(_sh(tma))}"
    return f"if-shell -F {word(small)} {word(full)} {word(part)}"


def prefix_bindings(tma: str, *, picker: bool, watch: bool,
                    act_menu: bool) -> list[tuple[str, str, bool, str]]:
    """(key, tmux command, bound in this release?, what it does), in surface §6.1's order."""
    return [
        ("a", popup(tma), picker, "the picker"),
        ("G", f"split-window -h {word(_sh(tma) + ' watch')}", watch, "tma watch in a split"),
        ("j", run_shell(tma, f"jump --attention {CLIENT}"), True,
         "jump to the next pane wanting you (blocked, then done)"),
        ("g", run_shell(tma, f"jump --blocked {CLIENT}"), True,
         "jump to the longest-blocked pane"),
        ("b", run_shell(tma, f"jump --back {CLIENT}"), True,
         "back to where the last jump left"),
        ("h", run_shell(tma, f"jump --home {CLIENT}"), True,
         "home: where the jump trail started"),
        ("A", run_shell(tma, f'act --menu --message-line --pane "#{{pane_id}}" {CLIENT}'), act_menu,
         "the action menu for this pane"),
    ]


def bind(key: str, command: str) -> str:
    return f"bind-key -T prefix {key} {command}"


def mouse_bindings(tma: str, *, picker: bool) -> list[str]:
    """Clicks on `tma status`'s segments (#[range=user|tma:<class>]): left on blocked
    jumps there, left on another segment opens the picker (without a picker: the jump
    menu), right on any opens the jump menu. Elsewhere the status line keeps tmux's
    own behaviour: a left click on a window name still switches to it."""
    blocked = run_shell(tma, f"jump --blocked {CLIENT}")
    menu = run_shell(tma, f"jump --menu {CLIENT}")
    other = popup(tma) if picker else menu
    is_blocked = word("#{==:#{mouse_status_range},tma:blocked}")
    is_tma = word("#{m:tma:*,#{mouse_status_range}}")

    def left(fallback: str | None) -> str:
        inner = f"if-shell -F {is_tma} {word(other)}"
        if fallback:
            inner += f" {word(fallback)}"
        return f"if-shell -F {is_blocked} {word(blocked)} {word(inner)}"

    return [f"bind-key -n MouseDown1Status {left('switch-client -t =')}",
            f"bind-key -n MouseDown1StatusRight {left(None)}",
            f"bind-key -n MouseDown3StatusRight if-shell -F {is_tma} {word(menu)}"]


def hook_line(hook: str, tma_bin: str) -> str:
    """An attention hook at the managed index. No socket flag: a hook's run-shell
    inherits $TMUX, which names the server it runs in."""
    command = attention.hook_command(hook, tma_bin, [])
    return f"set-hook -g {hook}[{MANAGED_INDEX}] {quote(command)}"


def is_hook_line(line: str) -> bool:
    probe = f"set-hook -g {attention.DEPARTURE_HOOKS[0]}[{MANAGED_INDEX}]"
    return line.startswith(probe) and attention.is_ours(line)


def daemon_line(tma: str) -> str:
    return "run-shell -b " + word(_sh(tma) + ' --socket-path "#{socket_path}" daemon --ensure '
                                  ">/dev/null 2>&1")


def source_line(path: str | None) -> str:
    """The marked line for the user's tmux.conf: `path` literally, or (None) the default
    places through tmux's own $XDG_CONFIG_HOME and $HOME."""
    where = quote(path) if path else \
        '"$XDG_CONFIG_HOME/tma/tmux.conf" "$HOME/.config/tma/tmux.conf"'
    return f"source-file -q {where} {MARKER}"


def load(server: Server, path: str) -> None:
    """Source the managed file into a running server (TmuxError when tmux refuses it)."""
    server.run("source-file", path)


def bindings(server: Server, table: str) -> dict[str, str]:
    """Every binding of a key table: key -> the command it runs ({} when the table does
    not exist). The whole table is listed and read here: `list-keys -T TABLE KEY`
    prints nothing on tmux 3.7c when exactly one binding matches (it goes to a status
    message instead), so no form with a key argument reads alike on every release."""
    try:
        out = server.run("list-keys", "-T", table)
    except TmuxError as exc:
        if "doesn't exist" in str(exc):
            return {}
        raise
    found = {}
    for line in out.splitlines():  # bind-key [-r] -T TABLE KEY COMMAND...
        head = line.split(None, 3)
        at = 1 if head[1:2] == ["-T"] else 2 if head[2:3] == ["-T"] else 0
        if head[:1] != ["bind-key"] or not at:
            continue
        parts = line.split(None, at + 3)
        if len(parts) > at + 3:
            found[parts[at + 2]] = parts[at + 3]
    return found


def unbind_ours(server: Server, lines: list[str]) -> None:
    """Take the file's bindings off a server: each key whose binding still runs tma."""
    tables: dict[str, dict[str, str]] = {}
    unbind = []
    for line in lines:
        words = line.split()
        if len(words) < 4 or words[0] != "bind-key":
            continue
        table, key = ("root", words[2]) if words[1] == "-n" else (words[2], words[3])
        try:
            if table not in tables:
                tables[table] = bindings(server, table)
        except TmuxError:
            continue
        if "tma" in tables[table].get(key, ""):
            unbind.append(f"unbind-key -T {quote(table)} {quote(key)}")
    if unbind:
        server.source(unbind)
