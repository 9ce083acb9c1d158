"""The managed tmux key file and the one line that sources it (`tma install-keys`).

Two files change, nothing else:

* the managed file, `<config dir>/tmux.conf`, tma's own and rewritten whole on every
  run: the attention hooks (so every new tmux server has them), the prefix bindings,
  the opt-in mouse clicks, the daemon launcher line;
* the user's tmux.conf, which gets exactly one line, marked `# tma keys`, appended
  at the end; every other byte of it stays as it was, and an uninstall takes that one
  line back out (a symlinked conf is edited through the link, the link kept).

The hooks are written at a fixed index (`tmux_hooks.MANAGED_INDEX`), so sourcing the
file again, or reloading tmux.conf, replaces them rather than piling up copies, and
an unindexed `set-hook -g` earlier in the user's file cannot wipe them. Their
command carries no socket flag: a hook's run-shell inherits $TMUX, which names the
server it runs in.

Text in, text out (but `read`); the tmux lines come from tma.tmux.keyfile, and
tma.install.keybind plans the change, shows the diff, asks and writes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from tma.core.paths import here
from tma.install import tmux_hooks
from tma.install.common import read_conf
from tma.tmux import keyfile
from tma.tmux.keyfile import (  # noqa: F401 (re-exported)
    HEADER as HEADER,
    MANAGED_NAME as MANAGED_NAME,
    MARKED as MARKED,
    MARKER as MARKER,
    MARKER_NL as MARKER_NL,
    holds_hooks as holds_hooks,
    managed_path as managed_path,
)

CREATED = "# tma created: "
NOT_IN_RELEASE = "(not in this release)"

_BIND = re.compile(r"^\s*bind(?:-key)?\s+(.*)$")


# ---------------------------------------------------------------- places


def find_conf(explicit: str | None, home: str, env) -> str:
    """--conf, else the first existing of tmux's own search order, else ~/.tmux.conf
    (to be created). A symlink counts as existing, dangling or not: it is followed."""
    paths = here(dict(env, HOME=home))
    if explicit:
        return paths.expand(explicit)
    cands = paths.tmux_confs()
    return next((c for c in cands if os.path.lexists(c)), cands[0])


def source_line(cdir: str, home: str, env, pinned: bool) -> str:
    """The marked line. The default place goes through tmux's own XDG config home and
    $HOME (so a moved HOME still finds it); a pinned dir is written literally."""
    default_xdg = os.path.join(here(dict(env, HOME=home)).config_home, "tma")
    literal = pinned or os.path.abspath(cdir) != os.path.abspath(default_xdg)
    return keyfile.source_line(managed_path(cdir) if literal else None)


# ---------------------------------------------------------------- what goes in the file


@dataclass(frozen=True)
class Features:
    """What this tma has to bind (the cli layer knows which commands exist)."""

    picker: bool = False
    watch: bool = False
    act_menu: bool = False
    daemon: bool = False  # `tma daemon --ensure` exists


@dataclass(frozen=True)
class Options:
    tma: str = "tma"  # how a binding names tma: the absolute path (tma.install.keybind)
    tma_bin: str = "tma"  # the absolute tma the hooks late-bind to
    mouse: bool = False
    daemon: bool = True
    focus_events: bool = False
    features: Features = field(default_factory=Features)
    created: tuple[str, ...] = ()  # paths tma created (the uninstall removes them)
    user_keys: frozenset[str] = frozenset()  # prefix keys the user's conf binds itself


def render(opts: Options) -> str:
    """The whole managed file."""
    lines = [f"{HEADER}: written by `tma install-keys`, rewritten whole on every run.",
             "# Do not edit: put your own bindings in your tmux.conf (a binding made after",
             f"# its `{MARKER}` line wins over the one here).", ""]
    lines += [f"{CREATED}{p}" for p in opts.created]
    if opts.created:
        lines.append("")
    lines += ["# The attention hooks: arriving at or leaving a pane clears its done mark.",
              f"# Fixed index {keyfile.MANAGED_INDEX}: sourcing this again replaces them.",
              *(keyfile.hook_line(h, opts.tma_bin)
                for h in tmux_hooks.wanted_hooks(opts.focus_events)),
              "", "# prefix keys"]
    f = opts.features
    for key, command, bound, what in keyfile.prefix_bindings(
            opts.tma, picker=f.picker, watch=f.watch, act_menu=f.act_menu):
        if not bound:
            lines.append(f"# {what} {NOT_IN_RELEASE}: {keyfile.bind(key, command)}")
        elif key in opts.user_keys:
            lines.append(f"# prefix {key}, left alone (your tmux.conf binds it): {what}: "
                         f"{keyfile.bind(key, command)}")
        else:
            lines += [f"# {what}", keyfile.bind(key, command)]
    if opts.mouse:
        lines += ["", "# clicks on the tma status segments (tmux needs `set -g mouse on`)",
                  *keyfile.mouse_bindings(opts.tma, picker=f.picker)]
    if opts.daemon and f.daemon:
        lines += ["", "# the daemon launcher: one tma daemon per tmux server",
                  keyfile.daemon_line(opts.tma)]
    elif opts.daemon:
        lines += ["", f"# the daemon launcher {NOT_IN_RELEASE}: there is no daemon yet",
                  f"# {keyfile.daemon_line(opts.tma)}"]
    return "\n".join(lines) + "\n"


def created_paths(text: str | None) -> list[str]:
    """What an earlier run recorded as created by tma (from the managed file's header)."""
    if not text:
        return []
    return [line[len(CREATED):].rstrip("\n") for line in text.splitlines()
            if line.startswith(CREATED)]


# ---------------------------------------------------------------- the user's tmux.conf


def marked(text: str) -> list[int]:
    """Indexes of the lines tma added (its marked source-file lines)."""
    return [i for i, line in enumerate(text.splitlines()) if MARKED.match(line)]


def user_prefix_keys(text: str) -> frozenset[str]:
    """The prefix-table keys the user's own conf binds (bind without -n or another -T)."""
    keys = set()
    for line in text.splitlines():
        m = _BIND.match(line)
        if not m:
            continue
        words = m.group(1).split()
        table = "prefix"
        i = 0
        while i < len(words) and words[i].startswith("-"):
            flag = words[i]
            if flag == "-n":
                table = "root"
            elif flag == "-T" and i + 1 < len(words):
                table = words[i + 1]
                i += 1
            elif "T" in flag[1:] and i + 1 < len(words):
                table = words[i + 1]
                i += 1
            elif "n" in flag[1:]:
                table = "root"
            elif "N" in flag[1:] and i + 1 < len(words):
                i += 1  # -N note
            i += 1
        if table == "prefix" and i < len(words):
            keys.add(words[i].strip("'\""))
    return frozenset(keys)


def with_line(text: str, line: str) -> str:
    """The conf with exactly one marked line: the first one rewritten in place (later
    copies dropped), else `line` appended. Other bytes are untouched."""
    lines = text.splitlines(True)
    at = marked(text)
    if at:
        first = lines[at[0]]
        nl = "\n" if first.endswith("\n") else ""
        keep = MARKER_NL if MARKER_NL in first else MARKER
        lines[at[0]] = line.replace(MARKER, keep) + nl
        for i in reversed(at[1:]):
            del lines[i]
        return "".join(lines)
    if text and not text.endswith("\n"):
        return text + "\n" + line.replace(MARKER, MARKER_NL) + "\n"
    return text + line + "\n"


def without_line(text: str) -> str:
    """The conf with tma's lines taken out: the bytes it had before the install."""
    lines = text.splitlines(True)
    at = marked(text)
    for i in reversed(at):
        added_nl = MARKER_NL in lines[i]
        del lines[i]
        if added_nl and i == len(lines) and lines and lines[-1].endswith("\n"):
            lines[-1] = lines[-1][:-1]  # tma ended the user's last line: un-end it
    return "".join(lines)


read = read_conf  # the file's text, None when absent (tma.install.common)


def missing_dirs(path: str) -> list[str]:
    """The folders above `path` that do not exist yet, outermost first."""
    out = []
    d = os.path.dirname(os.path.abspath(path))
    while d and not os.path.isdir(d):
        out.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return list(reversed(out))
