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

Pure text in, text out, except `Layout.read*`; cli/install_keys.py asks and writes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from tma.install import tmux_hooks
from tma.tmux import attention

MARKER = "# tma keys"
#: the marker when tma had to end the user's last line before appending its own
MARKER_NL = "# tma keys (newline added)"
HEADER = "# tma keybindings"
MANAGED_NAME = "tmux.conf"
CREATED = "# tma created: "
NOT_IN_RELEASE = "(not in this release)"

_MARKED = re.compile(r"^\s*source-file\b.*" + re.escape(MARKER) + r"( \(newline added\))?\s*$")
_BIND = re.compile(r"^\s*bind(?:-key)?\s+(.*)$")


# ---------------------------------------------------------------- places


def candidates(home: str, env) -> list[str]:
    """Where tmux looks for the user's config, in tmux's order."""
    out = [os.path.join(home, ".tmux.conf")]
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        out.append(os.path.join(xdg, "tmux", "tmux.conf"))
    out.append(os.path.join(home, ".config", "tmux", "tmux.conf"))
    return list(dict.fromkeys(out))


def find_conf(explicit: str | None, home: str, env) -> str:
    """--conf, else the first existing candidate, else ~/.tmux.conf (to be created)."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    cands = candidates(home, env)
    return next((c for c in cands if os.path.lexists(c)), cands[0])


def managed_path(cdir: str) -> str:
    return os.path.join(cdir, MANAGED_NAME)


def _tmux_str(value: str) -> str:
    """One tmux config-file word: single quotes when that is literal enough."""
    if "'" not in value and "\n" not in value:
        return "'" + value + "'"
    from tma.tmux.adapter import quote

    return quote(value)


def source_line(cdir: str, home: str, env, pinned: bool) -> str:
    """The marked line. The default places go through tmux's own $XDG_CONFIG_HOME and
    $HOME (so a moved HOME still finds it); a pinned dir is written literally."""
    default_xdg = os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"),
                               "tma")
    if not pinned and os.path.abspath(cdir) == os.path.abspath(default_xdg):
        where = '"$XDG_CONFIG_HOME/tma/tmux.conf" "$HOME/.config/tma/tmux.conf"'
    else:
        from tma.tmux.adapter import quote

        where = quote(managed_path(cdir))
    return f"source-file -q {where} {MARKER}"


# ---------------------------------------------------------------- what goes in the file


@dataclass(frozen=True)
class Features:
    """What this tma has to bind (the cli layer knows which commands exist)."""

    picker: bool = False
    watch: bool = False
    act_menu: bool = False


@dataclass(frozen=True)
class Options:
    tma: str = "tma"  # how a binding names tma (tma.install.binary.tma_command)
    tma_bin: str = "tma"  # the absolute tma the hooks late-bind to
    mouse: bool = False
    daemon: bool = True
    focus_events: bool = False
    features: Features = field(default_factory=Features)
    created: tuple[str, ...] = ()  # paths tma created (the uninstall removes them)
    user_keys: frozenset[str] = frozenset()  # prefix keys the user's conf binds itself


def _sh_tma(tma: str) -> str:
    import shlex

    return shlex.quote(tma)


def _run_shell(tma: str, args: str) -> str:
    """A run-shell binding (run-shell expands formats: a `#` in the path is doubled)."""
    return "run-shell " + _tmux_str(_sh_tma(tma).replace("#", "##") + " " + args)


def prefix_bindings(opts: Options) -> list[tuple[str, str, bool, str]]:
    """(key, tmux command, bound in this release?, what it does), in §6.1's order."""
    t = opts.tma
    f = opts.features
    client = '--client "#{client_name}"'
    return [
        ("a", f"display-popup -E -w 80% -h 60% {_tmux_str(_sh_tma(t))}", f.picker,
         "the picker"),
        ("G", f"split-window -h {_tmux_str(_sh_tma(t) + ' watch')}", f.watch,
         "tma watch in a split"),
        ("j", _run_shell(t, f"jump --attention {client}"), True,
         "jump to the next pane wanting you (blocked, then done)"),
        ("g", _run_shell(t, f"jump --blocked {client}"), True,
         "jump to the longest-blocked pane"),
        ("b", _run_shell(t, f"jump --back {client}"), True,
         "back to where the last jump left"),
        ("h", _run_shell(t, f"jump --home {client}"), True,
         "home: where the jump trail started"),
        ("A", _run_shell(t, 'act --menu --pane "#{pane_id}"'), f.act_menu,
         "the action menu for this pane"),
    ]


def mouse_bindings(opts: Options) -> list[str]:
    """Clicks on `tma status`'s segments (#[range=user|tma:<class>]): left on blocked
    jumps there, left on another segment opens the picker (without a picker: the jump
    menu), right on any opens the jump menu. Elsewhere the status line keeps tmux's
    own behaviour: a left click on a window name still switches to it."""
    t = opts.tma
    client = '--client "#{client_name}"'
    blocked = _run_shell(t, f"jump --blocked {client}")
    menu = _run_shell(t, f"jump --menu {client}")
    other = (f"display-popup -E -w 80% -h 60% {_tmux_str(_sh_tma(t))}"
             if opts.features.picker else menu)
    is_blocked = _tmux_str("#{==:#{mouse_status_range},tma:blocked}")
    is_tma = _tmux_str("#{m:tma:*,#{mouse_status_range}}")

    def left(fallback: str | None) -> str:
        inner = f"if-shell -F {is_tma} {_tmux_str(other)}"
        if fallback:
            inner += f" {_tmux_str(fallback)}"
        return f"if-shell -F {is_blocked} {_tmux_str(blocked)} {_tmux_str(inner)}"

    return [f"bind-key -n MouseDown1Status {left('switch-client -t =')}",
            f"bind-key -n MouseDown1StatusRight {left(None)}",
            f"bind-key -n MouseDown3StatusRight if-shell -F {is_tma} {_tmux_str(menu)}"]


def hook_lines(opts: Options) -> list[str]:
    from tma.tmux.adapter import quote

    out = []
    for hook in tmux_hooks.wanted_hooks(opts.focus_events):
        command = attention.hook_command(hook, opts.tma_bin, [])
        out.append(f"set-hook -g {hook}[{tmux_hooks.MANAGED_INDEX}] {quote(command)}")
    return out


def daemon_line(opts: Options) -> str:
    return ("run-shell -b " + _tmux_str(_sh_tma(opts.tma) +
                                        ' --socket-path "#{socket_path}" daemon --ensure '
                                        ">/dev/null 2>&1"))


def render(opts: Options) -> str:
    """The whole managed file."""
    lines = [f"{HEADER}: written by `tma install-keys`, rewritten whole on every run.",
             "# Do not edit: put your own bindings in your tmux.conf (a binding made after",
             f"# its `{MARKER}` line wins over the one here).", ""]
    lines += [f"{CREATED}{p}" for p in opts.created]
    if opts.created:
        lines.append("")
    lines += ["# The attention hooks: arriving at or leaving a pane clears its done mark.",
              f"# Fixed index {tmux_hooks.MANAGED_INDEX}: sourcing this again replaces them.",
              *hook_lines(opts), "", "# prefix keys"]
    for key, command, bound, what in prefix_bindings(opts):
        if not bound:
            lines.append(f"# {what} {NOT_IN_RELEASE}: bind-key -T prefix {key} {command}")
        elif key in opts.user_keys:
            lines.append(f"# {what}: your tmux.conf binds prefix {key} itself, left alone: "
                         f"bind-key -T prefix {key} {command}")
        else:
            lines += [f"# {what}", f"bind-key -T prefix {key} {command}"]
    if opts.mouse:
        lines += ["", "# clicks on the tma status segments (tmux needs `set -g mouse on`)",
                  *mouse_bindings(opts)]
    if opts.daemon:
        lines += ["", f"# the daemon launcher {NOT_IN_RELEASE}: there is no daemon yet",
                  f"# {daemon_line(opts)}"]
    return "\n".join(lines) + "\n"


def created_paths(text: str | None) -> list[str]:
    """What an earlier run recorded as created by tma (from the managed file's header)."""
    if not text:
        return []
    return [line[len(CREATED):].rstrip("\n") for line in text.splitlines()
            if line.startswith(CREATED)]


def holds_hooks(text: str | None) -> bool:
    """Does this managed file install the attention hooks (so it owns them)?"""
    if not text or not text.startswith(HEADER):
        return False
    probe = f"set-hook -g {attention.DEPARTURE_HOOKS[0]}[{tmux_hooks.MANAGED_INDEX}]"
    return any(line.startswith(probe) and attention.is_ours(line)
               for line in text.splitlines())


# ---------------------------------------------------------------- the user's tmux.conf


def marked(text: str) -> list[int]:
    """Indexes of the lines tma added (its marked source-file lines)."""
    return [i for i, line in enumerate(text.splitlines()) if _MARKED.match(line)]


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


def read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


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
