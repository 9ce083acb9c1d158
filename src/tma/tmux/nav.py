"""Navigation on the tmux side: moving a client's focus, the jump trail, the menu.

The only place tma builds `switch-client`, `select-pane` and
`display-menu` command lines, and the trail's server-option reads and writes.

Focus moves only what has to move, so a jump that changes nothing fires no
window or pane hook (and so clears no attention mark through them). A move fires
the attention hooks (tma.tmux.attention) as a hand navigation to the same pane
would, naming only the destination and the pane actually left:

* same window: `select-pane` (after-select-pane: destination, the pane left);
* another window or session: one `switch-client -t <pane>`, which makes the pane
  active BEFORE it changes the session's window, so session-window-changed names
  the destination and never the window's previously active pane (select-window
  then select-pane would clear that pane: the window hook's #{pane_id} is the
  window's old active pane, and select-pane's departure is that pane again). It
  fires no after-select-pane at all;
* a move into another session whose window changes as well also leaves the keep
  marker, so that session's departed pane (which no client navigated off) holds.
"""

from __future__ import annotations

import os
import shlex
import zlib

from tma.core.nav import TRAIL_CAP
from tma.tmux import attention, spawn, write
from tma.tmux.adapter import Server, Timeout, TmuxError, quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.tmux.read import Pane

TRAIL_PREFIX = "@tma_origin_"
ATTENTION = "@agent_attention"

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


# ---------------------------------------------------------------- the trail


def trail_key(client: str) -> str:
    """`@tma_origin_<sanitized client>_<hash of the real name>`.

    Sanitizing alone would fold `/dev/pts/1` and `_dev_pts_1` into one name; the
    hash of the untouched name keeps distinct clients apart.
    """
    clean = "".join(c if c in _NAME_CHARS else "_" for c in client)[:64]
    digest = format(zlib.crc32(client.encode("utf-8", "surrogateescape")), "08x")
    return f"{TRAIL_PREFIX}{clean}_{digest}"


def parse_trail(value: str) -> list[str]:
    """Stored oldest first, space separated; anything that is not a pane id is dropped."""
    return [t for t in value.split() if t.startswith("%") and t[1:].isdigit()]


def read_trail(server: Server, client: str) -> list[str]:
    out = server.run("show-options", "-s", "-q", "-v", trail_key(client))
    return parse_trail(out.strip())


def trail_line(client: str, entries: list[str]) -> str:
    """The write that stores `entries` (the newest TRAIL_CAP kept); empty unsets it."""
    key = trail_key(client)
    kept = entries[-TRAIL_CAP:]
    if not kept:
        return f"set-option -s -u {key}"
    return write.server_option(key, " ".join(kept))


# ---------------------------------------------------------------- focus


def focus_commands(client: str, client_session: str, pane: Pane) -> list[str]:
    """The commands that bring `pane` onto `client`, and only those.

    `client_session` is the session the client shows now.
    """
    same_session = client_session == pane.session_name
    if same_session and pane.window_active:
        return [] if pane.pane_active else [f"select-pane -t {quote(pane.pane_id)}"]
    cmds = []
    if not same_session and not pane.window_active:
        cmds.append(attention.keep_line(pane.session_id or pane.session_name))
    cmds.append(f"switch-client -c {quote(client)} -t {quote(pane.pane_id)}")
    return cmds


def clear_attention_line(pane_id: str) -> str:
    return write.set_plain(pane_id, ATTENTION, "")


def jump(server: Server, client: str, client_session: str, pane: Pane, *, clear_attention: bool,
         trail: list[str] | None = None) -> int:
    """Move `client` to `pane` in one spawn; returns the number of focus commands issued.

    One `;` chain, so when the pane vanished in between, neither its attention nor
    the trail is touched. `trail` (when given) is stored after a successful move.
    Raises TmuxError with tmux's message on failure.
    """
    cmds = focus_commands(client, client_session, pane)
    moved = sum(1 for c in cmds if not c.startswith("set-option"))
    if clear_attention:
        cmds.append(clear_attention_line(pane.pane_id))
    if trail is not None:
        cmds.append(trail_line(client, trail))
    if cmds:
        run_chain(server, cmds)
    return moved


def store_trail(server: Server, client: str, entries: list[str]) -> None:
    run_chain(server, [trail_line(client, entries)])


def run_chain(server: Server, cmds: list[str]) -> None:
    _out, err = server.source([" ; ".join(cmds)])
    if err.strip():
        raise TmuxError(err.strip().splitlines()[0])


# ---------------------------------------------------------------- the menu


def menu_text(text: str) -> str:
    """Literal text for a menu label (labels are tmux formats: `#` must be doubled)."""
    return text.replace("#", "##")


def run_shell_command(argv: list[str]) -> str:
    """A menu entry's command: `run-shell -b` of argv, quoted for every layer it crosses.

    The menu format-expands the entry once when it is added and `run-shell` expands
    the shell command again, so each `#` is quadrupled; the tmux parser reads the
    double-quoted argument, then /bin/sh the words.
    """
    shell = " ".join(shlex.quote(a) for a in argv).replace("#", "##")
    return menu_text(f"run-shell -b {quote(shell)}")


def run_detached(server: Server, argv: list[str]) -> None:
    """Run argv as a child of the tmux server (`run-shell -b`): it outlives the caller,
    a popup that is closing say, and nobody has to reap it. run-shell expands formats
    once, so each `#` is doubled."""
    server.run("run-shell", "-b", " ".join(shlex.quote(a) for a in argv).replace("#", "##"))


def confirm_menu_command(client: str, title: str, command: str) -> str:
    """A menu entry that opens a nested yes/no menu whose yes entry runs `command` (itself
    an entry command): one more menu expansion, so every `#` doubles once more."""
    inner = (f"display-menu -c {quote(client)} -T {quote(menu_text(title))} "
             f"{quote('Yes, fire it')} y {quote(command)} No n {quote('')}")
    return menu_text(inner)


def display_menu(server: Server, client: str, title: str,
                 items: list[tuple[str, str, str]]) -> None:
    """Show a menu of (label, key, command) on `client`.

    display-menu holds its caller until the menu closes; tma does not wait for the
    choice. When the deadline passes first, the menu stays up, owned by tmux, and
    the chosen entry still runs on that client.
    """
    args = ["display-menu", "-c", client, "-T", title, "-x", "C", "-y", "C"]
    for label, key, command in items:
        args += [label, key, command]
    try:
        server.run(*args)
    except Timeout:
        pass


# ---------------------------------------------------------------- attach and remote windows

REMOTE = "@tma_remote"


def attach_argv(server: Server, pane: Pane) -> list[str]:
    """`tmux attach` to the session holding `pane`, its window and the pane made current
    first (one client command line: the `;` are tmux's separators)."""
    return server.argv("select-window", "-t", pane.pane_id, ";",
                       "select-pane", "-t", pane.pane_id, ";",
                       "attach-session", "-t", pane.session_id or pane.session_name)


def switch_to(server: Server, pane_id: str) -> None:
    """Inside tmux: move the calling client (the one $TMUX names) to the pane."""
    server.run("switch-client", "-t", pane_id)


def exec_client(argv: list[str]) -> None:
    """Become the tmux client (the terminal is handed over; never returns)."""
    spawn.become(argv)


def remote_panes(server: Server, tag: str) -> list[str]:
    """The panes tagged `@tma_remote` = tag (a fleet jump's windows), oldest first."""
    out = server.run("list-panes", "-a", "-F", "#{pane_id}\t#{" + REMOTE + "}")
    found = []
    for line in out.splitlines():
        pane_id, _, value = line.partition("\t")
        if value == tag:
            found.append(pane_id)
    return found


def new_remote_window(server: Server, session_id: str, tag: str, argv: list[str]) -> str:
    """A new window (not selected) in the session running argv, its pane tagged
    `@tma_remote` = tag and named after it; returns its pane id.

    The window keeps its pane when the login ends (`remain-on-exit`) until
    `keep_remote_window` lets it go: a login that fails at once would otherwise take its
    window, its exit status and its last words with it before anyone read them. The
    option is set in the same command list as the window is made, under a name of its
    own for the window meanwhile (new-window -d leaves no other way to name it there):
    tmux reaps a child only between command lists, so no login ends before it is set."""
    command = " ".join(shlex.quote(a) for a in argv)
    at = f"{session_id}:=tma-login-{os.getpid()}-{os.urandom(4).hex()}"
    # new-window and rename-window expand formats in a name (`#(cmd)` would run a
    # command): the tag is tma's own text with every `#` doubled, so it shows literally
    out = server.run("new-window", "-d", "-t", f"{session_id}:", "-n", at.partition(":=")[2],
                     "-P", "-F", "#{pane_id}", command, ";",
                     "set-option", "-w", "-t", at, "remain-on-exit", "on", ";",
                     "set-option", "-p", "-t", at, REMOTE, tag, ";",
                     "rename-window", "-t", at, tag.replace("#", "##"))
    return out.strip()


def remote_window_state(server: Server, pane_id: str) -> tuple[bool, int | None, bool] | None:
    """(its login ended, the login's exit status, a full-screen program drew there: the
    host's tmux attached) of a fleet jump's pane; None when the pane is gone."""
    try:
        out = server.run("display-message", "-p", "-t", pane_id,
                         "#{pane_id}\t#{pane_dead}\t#{pane_dead_status}\t#{alternate_on}")
    except TmuxError:
        return None
    got, dead, status, alternate = (out.rstrip("\n").split("\t") + ["", "", "", ""])[:4]
    if got != pane_id:  # tmux answers for another pane when the target is gone
        return None
    return dead == "1", int(status) if status.lstrip("-").isdigit() else None, alternate == "1"


def remote_window_words(server: Server, pane_id: str) -> list[str]:
    """What a jump's login printed before it ended: its pane's non-empty lines."""
    try:
        out = server.run("capture-pane", "-p", "-J", "-S", "-200", "-t", pane_id)
    except TmuxError:
        return []
    return [line.rstrip() for line in out.splitlines() if line.strip()]


def keep_remote_window(server: Server, pane_id: str) -> bool:
    """The login is under way: its window closes with it again (remain-on-exit unset).
    False when it ended meanwhile (a dead pane stays; the caller reads it and closes it)."""
    try:
        out = server.run("set-option", "-w", "-u", "-t", pane_id, "remain-on-exit", ";",
                         "display-message", "-p", "-t", pane_id, "#{pane_id}\t#{pane_dead}")
    except TmuxError:
        return True  # gone already: nothing left to keep
    got, _, dead = out.strip().partition("\t")
    return got != pane_id or dead != "1"


def close_window(server: Server, pane_id: str) -> None:
    try:
        server.run("kill-window", "-t", pane_id)
    except TmuxError:
        pass
