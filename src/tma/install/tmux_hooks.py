"""The tmux attention hooks: install, check, uninstall (called by `tma install-hooks`).

Global hooks `after-select-pane` and `session-window-changed` (plus
`pane-focus-in` when `[focus] events` is on) run `tma clear-attention
'#{pane_id}'`. Each is appended unindexed (`set-hook -ga`, so the user's own
entries in the same array survive), its index read back and recorded per server
in `<configdir>/hooks-state-<key>.toml`.

* ours: the command contains `clear-attention`;
* current: equal to the command we would install, ignoring whitespace, quotes
  and backslashes (tmux re-renders what it stores);
* states: present, drifted (ours, not current: rewritten at its own index),
  wiped (recorded but nothing of ours left on the server: a restart, or an
  unindexed `set-hook -g` in tmux.conf replaced the array), missing.

A retired `after-select-window` entry of ours is removed on install.

What an install changes on the server is planned first (`plan`: the `set-hook` commands,
in order) and only then run, so `tma install-hooks` shows those commands with the files'
diff and asks once for all of it: the hooks live in the server's memory, not in a file,
but they are a change all the same.
"""

from __future__ import annotations

import os
import sys
import tomllib

from tma.core.paths import here
from tma.install.binary import NAME, running_tma
from tma.install.common import read_conf
from tma.tmux import attention, keyfile
from tma.tmux.adapter import NoServer, Server, TmuxError, quote

PRESENT = "present"
DRIFTED = "drifted"
WIPED = "wiped"
MISSING = "missing"
STALE = "stale"  # ours on a hook tma no longer installs here (retired, or focus events off)
ABSENT = "absent"  # a hook tma does not install here, and nothing of ours on it

STATE_PREFIX = "hooks-state"
#: The slot `tma install-keys`'s managed file sets the hooks at (re-sourcing it
#: replaces rather than appends); the preferred entry of ours when there are several.
MANAGED_INDEX = keyfile.MANAGED_INDEX


# ---------------------------------------------------------------- places


def config_dir(explicit: str | None = None) -> str:
    """--config-dir > TMA_CONFIG_DIR > $XDG_CONFIG_HOME/tma > ~/.config/tma (empty = unset)."""
    return here().config_dir(explicit)


def socket_key(socket_path: str) -> str:
    """16 hex digits of FNV-1a-64 over the server's socket path (the per-server key)."""
    h = 0xCBF29CE484222325
    for byte in socket_path.encode("utf-8", "surrogateescape"):
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def state_path(cdir: str, socket_path: str) -> str:
    return os.path.join(cdir, f"{STATE_PREFIX}-{socket_key(socket_path)}.toml")


def resolve_tma() -> str:
    """The running tma (tma.install.binary: the one answer every installer uses)."""
    return running_tma() or NAME


# ---------------------------------------------------------------- the record


def read_state(path: str) -> list[tuple[str, int]]:
    """Recorded (hook, index) pairs; an absent or unreadable record is empty."""
    try:
        with open(path, "rb") as fh:
            doc = tomllib.loads(fh.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    out = []
    for entry in doc.get("tmux_hooks", []) if isinstance(doc.get("tmux_hooks"), list) else []:
        if not isinstance(entry, dict):
            continue
        hook, index = entry.get("hook"), entry.get("index")
        if isinstance(hook, str) and isinstance(index, int) and not isinstance(index, bool):
            out.append((hook, index))
    return out


def write_state(path: str, socket_path: str, entries: list[tuple[str, int]]) -> None:
    if not entries:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    sock = socket_path.replace("\\", "\\\\").replace('"', '\\"')
    lines = ["# tma: the tmux attention hooks installed on one tmux server",
             f'# server = "{sock}"', ""]
    for hook, index in entries:
        lines += ["[[tmux_hooks]]", f'hook = "{hook}"', f"index = {int(index)}", ""]
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    os.replace(tmp, path)


# ---------------------------------------------------------------- inspection


class HookState:
    """One managed hook on one server."""

    __slots__ = ("hook", "state", "indexes", "recorded")

    def __init__(self, hook: str, state: str, indexes: list[int], recorded: list[int]):
        self.hook = hook
        self.state = state
        self.indexes = indexes  # indexes of our entries on the server, current first
        self.recorded = recorded  # indexes the record names for this hook

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"HookState({self.hook!r}, {self.state!r}, {self.indexes!r}, {self.recorded!r})"


def wanted_hooks(focus_events: bool) -> tuple[str, ...]:
    return attention.DEPARTURE_HOOKS + ((attention.FOCUS_HOOK,) if focus_events else ())


def managed_hooks() -> tuple[str, ...]:
    return attention.DEPARTURE_HOOKS + (attention.FOCUS_HOOK,) + attention.RETIRED_HOOKS


def classify(entries: list[tuple[str, int, str]], recorded: list[tuple[str, int]],
             *, focus_events: bool, tma_bin: str, flags: list[str]) -> list[HookState]:
    """The state of every hook tma manages, from the server's entries and the record."""
    wanted = wanted_hooks(focus_events)
    out = []
    for hook in managed_hooks():
        rec = sorted(i for h, i in recorded if h == hook)
        ours = [(i, c) for h, i, c in entries if h == hook and attention.is_ours(c)]
        if hook not in wanted:
            out.append(HookState(hook, STALE if ours else ABSENT, [i for i, _ in ours], rec))
            continue
        # the managed key file's entry carries no socket flag (run-shell has $TMUX)
        expected = {attention.normalize(attention.hook_command(hook, tma_bin, f))
                    for f in (flags, [])}
        current = [i for i, c in ours if attention.normalize(c) in expected]
        # the managed slot, else the recorded entry, then the lowest: that one is kept
        current.sort(key=lambda i: (i != MANAGED_INDEX, i not in rec, i))
        others = sorted((i for i, _ in ours if i not in current), key=lambda i: (i not in rec, i))
        if current:
            state = PRESENT
        elif ours:
            state = DRIFTED
        elif rec:
            state = WIPED
        else:
            state = MISSING
        out.append(HookState(hook, state, current + others, rec))
    return out


def inspect(server: Server, *, focus_events: bool = False, cdir: str | None = None,
            tma_bin: str | None = None) -> list[HookState]:
    """The hooks' states (for doctor). Raises TmuxError when the server is unreadable."""
    sock = attention.socket_path(server)
    base = config_dir(cdir)
    recorded = read_state(state_path(base, sock)) or read_state(
        os.path.join(base, f"{STATE_PREFIX}.toml"))
    return classify(attention.read_hooks(server), recorded, focus_events=focus_events,
                    tma_bin=tma_bin or resolve_tma(), flags=server.flags())


IN_MANAGED_FILE = "managed_file"  # set by install-keys' file on every new server
SERVER_ONLY = "server_only"  # on the running server only: gone when tmux restarts
NOWHERE = "missing"


def owned_by_keys(cdir: str) -> str | None:
    """The managed key file when it installs the hooks (then it is their owner:
    `install-hooks` adds them to a running server but never removes them)."""
    path = keyfile.managed_path(cdir)
    return path if keyfile.holds_hooks(read_conf(path)) else None


def persistence(states: list[HookState], cdir: str | None = None) -> str:
    """Where the hooks live: in the managed key file, on the running server only, nowhere."""
    if owned_by_keys(config_dir(cdir)):
        return IN_MANAGED_FILE
    return SERVER_ONLY if any(s.state == PRESENT for s in states) else NOWHERE


def problem(st: HookState) -> str | None:
    if st.state == ABSENT or (st.state == PRESENT and len(st.indexes) == 1):
        return None
    if st.state == PRESENT:
        return f"tmux hook {st.hook}: {len(st.indexes)} tma entries (duplicates)"
    if st.state == DRIFTED:
        return (f"tmux hook {st.hook}: drifted (the entry at index {st.indexes[0]} runs an "
                "outdated command)")
    if st.state == WIPED:
        return (f"tmux hook {st.hook}: wiped (recorded at index "
                f"{', '.join(map(str, st.recorded))} but gone from the server: tmux restarted, "
                f"or an unindexed `set-hook -g {st.hook}` in tmux.conf replaced the array)")
    if st.state == STALE:
        why = ("retired" if st.hook in attention.RETIRED_HOOKS
               else "installed but [focus] events is off")
        return f"tmux hook {st.hook}: {why}"
    if st.state == MISSING:
        return f"tmux hook {st.hook}: missing"
    return None


# ---------------------------------------------------------------- the edit


#: --check's one problem when no server runs: nothing to repair, only to check later.
UNCHECKED = ("tmux hooks: no tmux server is running, so they cannot be checked: start tmux "
             "first, then run the check again")


def ensure(server: Server, *, uninstall: bool = False, check: bool = False, yes: bool = False,
           out=sys.stdout, focus_events: bool = False, config_dir: str | None = None,
           tma_bin: str | None = None) -> list[str]:
    """Install (or with `uninstall`, remove; with `check`, only verify) the tmux
    attention hooks on `server`. Returns the problems: for `check`, what is not as
    installed; otherwise what could not be done. Idempotent. Changes are reported
    one line each on `out`; there is nothing to confirm (`yes` is accepted for the
    installer's signature), the hooks live in the server's memory, not in a file.
    """
    del yes
    cdir = _resolve_dir(config_dir)
    try:
        sock = attention.socket_path(server)
        entries = attention.read_hooks(server)
    except NoServer:
        if check:
            return [UNCHECKED]
        # the hooks live in a server's memory: with none running there is nothing to
        # edit (a later install inside tmux, or --check, takes it from there)
        out.write("tmux: no server running; the attention hooks were not "
                  f"{'removed' if uninstall else 'installed'}\n")
        return []
    except TmuxError as exc:
        return [f"tmux hooks: cannot read the tmux server: {exc}"]
    owner = owned_by_keys(cdir) if uninstall and not check else None
    if owner:
        out.write(f"tmux: the attention hooks stay: {owner} (tma install-keys) sets them on "
                  "every tmux server; `tma uninstall` removes them\n")
        return []
    path = state_path(cdir, sock)
    recorded = read_state(path)
    if not recorded:
        recorded = _legacy(cdir)
    tma_bin = tma_bin or resolve_tma()
    flags = server.flags()
    states = classify(entries, recorded, focus_events=focus_events, tma_bin=tma_bin,
                      flags=flags)
    if check:
        if uninstall:
            return [f"tmux hook {s.hook}: still installed" for s in states if s.indexes]
        return [p for p in map(problem, states) if p]
    try:
        if uninstall:
            _uninstall(server, states, out)
            attention.forget_keep(server)
            final = []
        else:
            # with install-keys' file owning them, what the file would set, where it would
            slot = MANAGED_INDEX if owned_by_keys(cdir) else None
            final = _install(server, states, entries, out, tma_bin, flags, slot)
    except TmuxError as exc:
        return [f"tmux hooks: {exc}"]
    try:
        write_state(path, sock, final)
    except OSError as exc:
        return [f"tmux hooks: cannot update the record {path}: {exc.strerror}"]
    return []


_resolve_dir = config_dir  # `ensure`'s keyword shadows the function's name


def _legacy(cdir: str) -> list[tuple[str, int]]:
    return read_state(os.path.join(cdir, f"{STATE_PREFIX}.toml"))


class Op:
    """One change an install makes on the server: `append` a command to a hook's array,
    `set` the entry at an index, or `unset` one; `verb` is what it is for the person
    (add, update, remove, or dedupe: a duplicate of ours)."""

    __slots__ = ("hook", "kind", "index", "command", "verb")

    def __init__(self, hook: str, kind: str, index: int | None, command: str,
                 verb: str) -> None:
        self.hook, self.kind, self.index, self.command, self.verb = (hook, kind, index,
                                                                       command, verb)

    def line(self) -> str:
        """The tmux command it runs, as a tmux.conf line would say it."""
        if self.kind == "append":
            return f"set-hook -ga {self.hook} {quote(self.command)}"
        if self.kind == "set":
            return f"set-hook -g {self.hook}[{self.index}] {quote(self.command)}"
        return f"set-hook -gu {self.hook}[{self.index}]"


def _ops(states: list[HookState], entries, tma_bin: str, flags: list[str],
         slot: int | None = None) -> list[Op]:
    """Every change installing makes, in the order it makes them (nothing for a hook
    that is present once)."""
    ops: list[Op] = []
    for st in states:
        if st.state == ABSENT:
            continue
        if st.state == STALE:
            ops += [Op(st.hook, "unset", i, "", "remove") for i in sorted(st.indexes,
                                                                          reverse=True)]
            continue
        command = attention.hook_command(st.hook, tma_bin, flags)
        keep, extra = (st.indexes[0], st.indexes[1:]) if st.indexes else (-1, [])
        if st.state == DRIFTED:
            ops.append(Op(st.hook, "set", keep, command, "update"))
        elif st.state in (WIPED, MISSING) and slot is not None and \
                all(i != slot for h, i, _ in entries if h == st.hook):
            ops.append(Op(st.hook, "set", slot, attention.hook_command(st.hook, tma_bin, []),
                          "add"))
        elif st.state in (WIPED, MISSING):
            ops.append(Op(st.hook, "append", None, command, "add"))
        ops += [Op(st.hook, "unset", i, "", "dedupe") for i in sorted(extra, reverse=True)]
    return ops


class Plan:
    """What installing the hooks would change on one server: shown and asked about with
    the agents' files (tma.install.wiring), then made by `ensure`."""

    def __init__(self, socket_path: str, ops: list[Op]) -> None:
        self.socket_path = socket_path
        self.ops = ops

    def lines(self) -> list[str]:
        """The diff's part for the server: a header, then `+ <command>` per change."""
        return [f"tmux server {self.socket_path}: the attention hooks, in the server's "
                "memory (tma install-keys keeps them across restarts)"] + \
            [f"+ {op.line()}" for op in self.ops]

    def summary(self) -> str:
        """One short phrase (init's summary line)."""
        words = []
        for verb, said in (("add", "add"), ("update", "update"), ("remove", "remove"),
                           ("dedupe", "drop duplicates of")):
            hooks = list(dict.fromkeys(op.hook for op in self.ops if op.verb == verb))
            if hooks:
                words.append(f"{said} the tmux hook{'s' if len(hooks) > 1 else ''} "
                             + ", ".join(hooks))
        return "; ".join(words) + " on the running tmux server"


def plan(server: Server, *, focus_events: bool = False, config_dir: str | None = None,
         tma_bin: str | None = None) -> Plan | None:
    """What `ensure` would change on the server now (read-only); None when no server
    runs or it cannot be read (ensure then says so itself)."""
    cdir = _resolve_dir(config_dir)
    try:
        sock = attention.socket_path(server)
        entries = attention.read_hooks(server)
    except TmuxError:  # NoServer among them
        return None
    recorded = read_state(state_path(cdir, sock)) or _legacy(cdir)
    tma_bin = tma_bin or resolve_tma()
    flags = server.flags()
    states = classify(entries, recorded, focus_events=focus_events, tma_bin=tma_bin,
                      flags=flags)
    slot = MANAGED_INDEX if owned_by_keys(cdir) else None
    return Plan(sock, _ops(states, entries, tma_bin, flags, slot))


def _install(server: Server, states: list[HookState], entries, out, tma_bin: str,
             flags: list[str], slot: int | None = None) -> list[tuple[str, int]]:
    """Make the planned changes (`_ops`), saying each; the (hook, index) of ours after."""
    keep = {st.hook: st.indexes[0] for st in states
            if st.state not in (ABSENT, STALE) and st.indexes}
    ops = _ops(states, entries, tma_bin, flags, slot)
    for n, op in enumerate(ops):
        if op.kind == "append":
            keep[op.hook] = _append(server, op.hook, op.command, entries)
            out.write(f"tmux: installed the {op.hook} hook [{keep[op.hook]}]\n")
        elif op.kind == "set":
            assert op.index is not None
            attention.set_hook_at(server, op.hook, op.index, op.command)
            keep[op.hook] = op.index
            said = "updated" if op.verb == "update" else "installed"
            out.write(f"tmux: {said} the {op.hook} hook [{op.index}]\n")
        else:
            assert op.index is not None
            attention.unset_hook_at(server, op.hook, op.index)
            if op.verb == "remove" and not any(o.hook == op.hook and o.verb == "remove"
                                               for o in ops[n + 1:]):
                out.write(f"tmux: removed the {op.hook} hook\n")  # its last entry gone
    return [(st.hook, keep[st.hook]) for st in states
            if st.state not in (ABSENT, STALE) and st.hook in keep]


def _append(server: Server, hook: str, command: str, entries) -> int:
    """Append unindexed, then read the index back (the new current entry of ours)."""
    before = {i for h, i, _ in entries if h == hook}
    attention.append_hook(server, hook, command)
    expected = attention.normalize(command)
    fresh = [i for h, i, c in attention.read_hooks(server)
             if h == hook and attention.normalize(c) == expected]
    new = [i for i in fresh if i not in before] or fresh
    if not new:
        raise TmuxError(f"the {hook} hook did not take")
    return max(new)


def _uninstall(server: Server, states: list[HookState], out) -> None:
    """Recorded indexes still ours go first (high to low), then anything else of ours
    found by content (a record lost, or entries another install left)."""
    for st in states:
        if st.indexes:
            recorded = sorted((i for i in st.recorded if i in st.indexes), reverse=True)
            rest = sorted((i for i in st.indexes if i not in recorded), reverse=True)
            st.indexes = recorded + rest
            for index in st.indexes:
                attention.unset_hook_at(server, st.hook, index)
            out.write(f"tmux: removed the {st.hook} hook\n")
