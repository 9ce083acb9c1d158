"""What every hook installer shares.

An installer never edits what it could not read, never touches an entry that is not
tma's, and shows a unified diff of every file it is about to change before it writes.

* "Ours": a hook command that ends with ` <agent> <event>` and whose program part (the
  text before that suffix, optionally shell-quoted) has the basename `tma-hook`. Any
  wrapper path counts, so a moved wrapper is repointed on install and removed on
  uninstall. "Current": exact string equality with the command this install would write.
* Install, per event: drop our entries that are not current, append one if none is,
  never touch a foreign entry. A reinstall is therefore a byte-identical no-op.
* Uninstall: drop every entry of ours, prune the event arrays and the `hooks` object this
  emptied, write only when the text changes, never create a file.
* Reads: an absent file is empty; anything else that fails (permissions, a directory,
  non-UTF-8, malformed JSON/TOML, a dangling symlink) refuses, naming the file.
* JSON is edited by splicing (tma.install.jsonsplice): only the bytes of the entries tma
  adds, drops or changes are written, in the container's own layout (indent, key
  separator, line ending, inline or not); every other byte stays as it was (`2.50`, a
  hand-made indent, key order, escapes). So an uninstall after an install gives back
  the original bytes whenever tma's entries were the only change. A new file is written
  in the usual 2-space style.
* Writes are atomic (a temp file beside the target, then rename), keep the file's mode,
  go through a symlink to its target and create missing parent directories.
* Concurrent writers: tma processes serialise on a lock file beside the target, and an
  agent file is replaced only if it is still the one its change was planned from (else
  the change is planned again from the newer file): see apply().
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import json
import os
import shlex
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import resources

from tma.core.paths import here, shown
from tma.install.jsonsplice import splice

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from tma.core.paths import Paths

    T = TypeVar("T")

WRAPPER_NAME = "tma-hook"
#: Wired for every hook-capable agent beside its manifest's events (ownership bookkeeping).
EXTRA_EVENTS = ("SubagentStart", "SubagentStop")

WIRED = "wired"
INCOMPLETE = "incomplete"
ABSENT = "not installed"

#: Tests point this at a directory of placeholder assets; None = the packaged assets.
ASSET_DIR: str | None = None


class InstallError(Exception):
    """A refusal: the message names the file and nothing was written."""


# ---------------------------------------------------------------- assets


def asset_bytes(name: str) -> bytes:
    if ASSET_DIR is not None:
        try:
            with open(os.path.join(ASSET_DIR, name), "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise InstallError(f"the {name} asset is missing ({exc.strerror})") from None

    try:
        return resources.files("tma.install").joinpath("assets").joinpath(name).read_bytes()
    except (OSError, ModuleNotFoundError) as exc:
        raise InstallError(f"the {name} asset is missing from this tma installation "
                           f"({exc})") from None


def asset_text(name: str) -> str:
    return asset_bytes(name).decode("utf-8")


# ---------------------------------------------------------------- context


@dataclass
class Ctx:
    """Everything an adapter needs from the command line and the environment."""

    wrapper_path: str
    ref: str  # the wrapper as an argv element (codex notify, the JS bridges)
    tma_bin: str | None  # the running tma, for the statusline shim
    paths: dict[str, str]
    statusline: str = "keep"  # keep | on | off (the flags)
    optout: set[str] = field(default_factory=set)  # recorded --no-statusline choices

    @property
    def cmd_ref(self) -> str:
        """The wrapper as it stands in a shell command string."""
        return shlex.quote(self.ref)

    def command(self, agent: str, event: str) -> str:
        return f"{self.cmd_ref} {agent} {event}"


def wired_events(manifest) -> list[str]:
    out = list(manifest.hook_events)
    for ev in EXTRA_EVENTS:
        if ev not in out:
            out.append(ev)
    return out


def tilde(path: str) -> str:
    """path with $HOME shown as `~` (for messages)."""
    return here().tilde(path)


@dataclass(frozen=True)
class FileOption:
    """One file an adapter edits: `flag` > `$env` > default(paths)."""

    key: str  # the Ctx.paths key
    flag: str  # the command-line flag naming it
    env: str  # the environment variable naming it
    help: str
    default: Callable[[Paths], str]

    @property
    def dest(self) -> str:
        """The argparse destination of `flag`."""
        return self.flag.lstrip("-").replace("-", "_")

    def resolve(self, paths: Paths, explicit: str | None) -> str:
        chosen = explicit or paths.get(self.env)
        return paths.expand(chosen) if chosen else os.path.abspath(self.default(paths))


# ---------------------------------------------------------------- reading


def read_text(path: str) -> str | None:
    """The file's text; None when absent. Any other failure refuses."""
    if not os.path.lexists(path):
        return None
    if os.path.islink(path) and not os.path.exists(path):
        raise InstallError(f"cannot read {path}: dangling symlink (target "
                           f"{os.readlink(path)!r} does not exist); not touching it")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}; not touching it") \
            from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstallError(f"cannot read {path}: not valid UTF-8 (byte {exc.start}); "
                           "not touching it") from None


# ---------------------------------------------------------------- JSON


@dataclass(frozen=True)
class JsonFormat:
    indent: int | str | None = 2
    separators: tuple[str, str] = (",", ": ")
    ensure_ascii: bool = False
    newline: str = "\n"
    trailing: str = "\n"

    def dump(self, data) -> str:
        body = json.dumps(data, indent=self.indent, separators=self.separators,
                          ensure_ascii=self.ensure_ascii)
        if not self.ensure_ascii:
            try:
                body.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: only escaping can carry it
                body = json.dumps(data, indent=self.indent, separators=self.separators)
        if self.newline != "\n":
            body = body.replace("\n", self.newline)
        return body + self.trailing


DEFAULT_FORMAT = JsonFormat()


def detect_format(text: str, data) -> JsonFormat:
    """The JSON format that reproduces `text` from `data`, else the closest guess."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.strip().replace("\r\n", "\n")
    trailing = text[len(text.rstrip()):]
    lines = body.split("\n")
    if not data:  # `{}` says nothing about the style: write the usual one
        return JsonFormat(newline=newline, trailing=trailing)
    if len(lines) == 1:
        shapes: list[tuple[int | str | None, tuple[str, str]]] = [
            (None, (",", ":")), (None, (", ", ": "))]
    else:
        second = lines[1]
        ws = second[:len(second) - len(second.lstrip())] or "  "
        indent: int | str = len(ws) if set(ws) == {" "} else ws
        shapes = [(indent, (",", ": ")), (indent, (", ", ": "))]
    for ensure_ascii in (False, True):
        for indent_, seps in shapes:
            try:
                out = json.dumps(data, indent=indent_, separators=seps,
                                 ensure_ascii=ensure_ascii)
            except (TypeError, ValueError):
                continue
            if out == body:
                return JsonFormat(indent_, seps, ensure_ascii, newline, trailing)
    return JsonFormat(shapes[0][0], shapes[0][1], False, newline, trailing)


class JsonDoc:
    """A JSON object file: its text (None = absent), data, and format."""

    def __init__(self, path: str, text: str | None) -> None:
        self.path = path
        self.text = text
        if text is None or not text.strip():
            self.data: dict = {}
            self.fmt = DEFAULT_FORMAT
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            hint = ""
            if any(ln.lstrip().startswith(("//", "/*")) for ln in text.splitlines()):
                hint = "; comments are not supported, remove them or wire the hooks by hand"
            raise InstallError(f"cannot parse {path}: malformed JSON ({exc}{hint}); "
                               "not touching it") from None
        if not isinstance(data, dict):
            raise InstallError(f"cannot edit {path}: the top level is not a JSON object; "
                               "not touching it")
        self.data = data
        self.fmt = detect_format(text, data)

    @classmethod
    def load(cls, path: str) -> JsonDoc:
        return cls(path, read_text(path))

    def copy(self) -> dict:
        return json.loads(json.dumps(self.data))

    def change(self, new: dict, label: str, *, uninstall: bool) -> Change | None:
        """A Change when `new` differs from what the file holds (uninstall never creates)."""
        if same(new, self.data):
            return None
        if uninstall and self.text is None:
            return None
        if self.text is None or not self.text.strip():
            return Change(self.path, self.text, self.fmt.dump(new), label)

        return Change(self.path, self.text, splice(self.text, new), label)


def same(a, b) -> bool:
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


# ---------------------------------------------------------------- hook entries


def program_of(command: str, agent: str, event: str) -> str | None:
    """The program part of `<program> <agent> <event>`, unquoted; None if not that shape."""
    suffix = f" {agent} {event}"
    if not isinstance(command, str) or not command.endswith(suffix):
        return None
    prog = command[:-len(suffix)].strip()
    if len(prog) >= 2 and prog[0] == prog[-1] and prog[0] in "'\"":
        prog = prog[1:-1]
    return prog


def is_ours(command, agent: str, event: str) -> bool:
    prog = program_of(command, agent, event)
    return prog is not None and os.path.basename(prog) == WRAPPER_NAME


@dataclass
class Shape:
    """How an agent lays out its hooks object.

    nested: `{"<Event>": [{"matcher"?, "hooks": [{"type": "command", "command": …}]}]}`
    (Claude, Gemini, Codex hooks.json); flat: `{"<event>": [{"command": …}]}` (Cursor).
    A flat shape may name its command key otherwise and carry fixed keys beside it
    (Copilot: `{"type": "command", "bash": …, "timeoutSec": 10}`); an entry is current
    only with exactly those.
    """

    agent: str
    nested: bool = True
    sync_events: tuple[str, ...] = ()  # must not carry "async": true
    key: str = "command"  # the flat entry's command key
    fixed: tuple[tuple[str, object], ...] = ()  # the flat entry's other keys, in order

    def command_of(self, handler) -> object:
        return handler.get(self.key) if isinstance(handler, dict) else None

    def entry(self, command: str):
        if self.nested:
            return {"hooks": [{"type": "command", "command": command}]}
        if self.fixed:
            return {**dict(self.fixed[:1]), self.key: command, **dict(self.fixed[1:])}
        return {self.key: command}

    def is_current(self, handler: dict, group: dict | None, event: str, want: str) -> bool:
        if handler.get(self.key) != want:
            return False
        if not self.nested:
            return same(handler, self.entry(want)) if self.fixed else True
        if handler.get("type") != "command":
            return False
        if group is not None and group.get("matcher") not in (None, "", "*"):
            return False  # a matcher would filter what tma must see
        return not (event in self.sync_events and handler.get("async"))


def _edit_event(shape: Shape, arr: list, event: str, want: str | None) -> tuple[list, bool]:
    """Our entries of one event array dropped (want None) or made exactly current."""
    found = False
    changed = False
    out: list = []

    def keep(handler, group) -> bool:
        nonlocal found, changed
        cmd = shape.command_of(handler)
        if not is_ours(cmd, shape.agent, event):
            return True
        if want is not None and not found and shape.is_current(handler, group, event, want):
            found = True
            return True
        changed = True
        return False

    for item in arr:
        if not shape.nested:
            if keep(item, None):
                out.append(item)
            continue
        if not (isinstance(item, dict) and isinstance(item.get("hooks"), list)):
            out.append(item)
            continue
        before = changed
        kept = [h for h in item["hooks"] if keep(h, item)]
        if changed == before:
            out.append(item)
        elif kept:
            out.append({**item, "hooks": kept})
    if want is not None and not found:
        out.append(shape.entry(want))
        changed = True
    return out, changed


def edit_hooks(data: dict, shape: Shape, events: list[str], command, *, uninstall: bool,
               where: str, key: str = "hooks") -> None:
    """Install or uninstall our entries in data[key] (in place)."""
    hooks = data.get(key)
    if hooks is None:
        if uninstall:
            return
        hooks = {}
    if not isinstance(hooks, dict):
        raise InstallError(f"cannot edit {where}: {key!r} is not an object; not touching it")
    new = dict(hooks)
    changed = False
    for ev in list(new):
        if (uninstall or ev not in events) and isinstance(new[ev], list):
            out, ch = _edit_event(shape, new[ev], ev, None)
            if ch:
                changed = True
                if out:
                    new[ev] = out
                else:
                    del new[ev]
    if not uninstall:
        for ev in events:
            arr = new.get(ev, [])
            if not isinstance(arr, list):
                raise InstallError(f"cannot edit {where}: {key}.{ev} is not an array; "
                                   "not touching it")
            out, ch = _edit_event(shape, arr, ev, command(ev))
            if ch or ev not in new:
                new[ev] = out
                changed = True
    if not changed:
        return
    if new:
        data[key] = new
    elif key in data:
        del data[key]


def hooks_state(data: dict, shape: Shape, events: list[str], command,
                key: str = "hooks") -> tuple[dict[str, str], list[str]]:
    """Per wired event: current | stale | absent; plus events outside the set holding ours."""
    hooks = data.get(key)
    if not isinstance(hooks, dict):
        hooks = {}
    states: dict[str, str] = {}
    for ev in events:
        arr = hooks.get(ev)
        if not isinstance(arr, list):
            states[ev] = "absent"
            continue
        _, changed = _edit_event(shape, arr, ev, command(ev))
        if not changed:
            states[ev] = "current"
        else:
            _, had = _edit_event(shape, arr, ev, None)
            states[ev] = "stale" if had else "absent"
    extra = [ev for ev, arr in hooks.items() if ev not in events and isinstance(arr, list)
             and _edit_event(shape, arr, ev, None)[1]]
    return states, extra


def hook_reasons(agent: str, path: str, states: dict[str, str], extra: list[str]) -> list[str]:
    out = []
    stale = [ev for ev, s in states.items() if s == "stale"]
    absent = [ev for ev, s in states.items() if s == "absent"]
    if stale:
        out.append(f"{agent}: {', '.join(stale)} wired to another tma-hook or in another "
                   f"shape than this install writes ({tilde(path)})")
    if absent:
        out.append(f"{agent}: {', '.join(absent)} not wired ({tilde(path)})")
    if extra:
        out.append(f"{agent}: tma entries under events tma no longer wires: "
                   f"{', '.join(extra)} ({tilde(path)})")
    return out


# ---------------------------------------------------------------- status and plans


@dataclass
class Status:
    agent: str
    ours: bool = False  # carries any tma wiring
    reasons: list[str] = field(default_factory=list)
    error: str | None = None  # a file could not be read

    @property
    def kind(self) -> str:
        if self.error is not None:
            return INCOMPLETE
        if not self.ours:
            return ABSENT
        return INCOMPLETE if self.reasons else WIRED


@dataclass
class Change:
    path: str
    old: str | bytes | None
    new: str | bytes | None  # None: delete the file
    label: str = ""
    mode: int = 0o666  # for a new file, before the umask
    force_mode: bool = False  # set mode even on an existing file (the wrapper: 0755)
    summary: str | None = None  # shown instead of a content diff (the wrapper)


@dataclass
class Plan:
    agent: str
    changes: list[Change] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, change: Change | None) -> None:
        """One file's change; None (the file is as wanted) adds nothing."""
        if change is not None:
            self.changes.append(change)

    def caveat(self, text: str, uninstall: bool) -> Plan:
        """Say `text` after an install (an uninstall leaves nothing to wait for)."""
        if not uninstall:
            self.caveats.append(text)
        return self


# ---------------------------------------------------------------- diff, prompt, apply


def paint(line: str) -> str:
    """One diff line in the terminal's colours (added green, removed red)."""
    return _colour(line)


def _colour(line: str) -> str:
    if line.startswith(("+++", "---")):
        return f"\x1b[1m{line}\x1b[0m"
    if line.startswith("+"):
        return f"\x1b[32m{line}\x1b[0m"
    if line.startswith("-"):
        return f"\x1b[31m{line}\x1b[0m"
    if line.startswith("@@"):
        return f"\x1b[36m{line}\x1b[0m"
    return line


def diff(change: Change, colour: bool = False, applying: bool = True) -> str:
    """The unified diff of a change (or its summary line: "would …" while it still
    waits on the prompt)."""
    if change.summary is not None:
        return ("" if applying else "would ") + change.summary + "\n"
    old = change.old if isinstance(change.old, str) else ""
    new = change.new if isinstance(change.new, str) else ""
    a = shown(change.path) if change.old is not None else "/dev/null"
    b = shown(change.path) if change.new is not None else "/dev/null"
    out = []
    for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True), a, b, n=3):
        if line.startswith(("---", "+++")):
            line = line.rstrip() + "\n"
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    if colour:
        return "".join(_colour(x[:-1]) + "\n" for x in "".join(out).splitlines(True))
    return "".join(out)


def use_colour(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def summarize(change: Change) -> str:
    """One short line for a change (`tma init` shows these; the diff on request)."""
    if change.summary is not None:
        return change.summary
    old = change.old if isinstance(change.old, str) else ""
    new = change.new if isinstance(change.new, str) else ""
    added = removed = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), n=0, lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    verb = ("create" if change.old is None else "delete" if change.new is None
            else "update")
    return f"{verb} {tilde(change.path)} (+{added} -{removed} lines)"


SHOW_DIFF = "d"


def read_conf(path: str) -> str | None:
    """A tmux config file's text (bytes that are not UTF-8 kept as they are: a tmux.conf
    is not always UTF-8), None when absent;
    InstallError naming the file when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None


def yes_no(question: str, out, stdin, show=None) -> bool | None:
    """One `[y/N]` question on a terminal, asked until the answer is one it shows: `y`
    or `yes`, `n`, `no` or Enter (no), and with `show` also `d` (the diff, then the
    question again). Anything else asks again: a typo is never taken as a no (which
    some questions record as a lasting decline). None at end of input (Ctrl-D);
    Ctrl-C goes on up (KeyboardInterrupt: cli/main.py exits 130)."""
    while True:
        out.write(f"{question} [y/N{'/d=diff' if show else ''}] ")
        out.flush()
        try:
            answer = stdin.readline()
        except KeyboardInterrupt:
            out.write("\n")  # the cursor sat after the prompt
            out.flush()
            raise
        except EOFError:
            answer = ""
        if not answer.endswith("\n"):
            out.write("\n")  # Ctrl-D leaves the cursor after the prompt
            out.flush()
            return None
        word = answer.strip().lower()
        if word in ("y", "yes"):
            return True
        if word in ("", "n", "no"):
            return False
        if show is not None and word == SHOW_DIFF:
            show()
            continue
        out.write(f"  (answer y or n{', or d for the diff' if show else ''})\n")


def confirm(yes: bool, out=None, stdin=None, question: str = "Apply this change?",
            show=None) -> bool:
    """`Apply this change? [y/N]` on a terminal; a non-terminal stdin declines. Ctrl-D
    declines this one change; Ctrl-C aborts the whole command (KeyboardInterrupt goes on
    up: cli/main.py exits 130), so a multi-step command (init, uninstall) stops at once
    instead of asking its next question; nothing of this change was written."""
    if yes:
        return True
    out = out or sys.stdout
    stdin = stdin or sys.stdin
    if stdin is None or not stdin.isatty():
        sys.stderr.write("tma: stdin is not a terminal: pass --yes to apply without asking\n")
        return False
    return bool(yes_no(question, out, stdin, show))


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def write_atomic(path: str, data: bytes, mode: int = 0o666, force_mode: bool = False,
                 still: Callable[[], bool] | None = None) -> bool:
    """Replace path's content atomically (through a symlink), keeping its mode. With
    `still`, the rename happens only if still() holds just before it (else False)."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    directory = os.path.dirname(os.path.abspath(target))
    os.makedirs(directory, exist_ok=True)
    try:
        keep = mode if force_mode else stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        keep = mode & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                               suffix=".tma-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, keep)
        if still is not None and not still():
            os.unlink(tmp)
            return False
        os.replace(tmp, target)
        return True
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


#: How often a write is redone because another program changed the file meanwhile.
RETRIES = 25
LOCK_SUFFIX = ".tma-lock"


def _target(path: str) -> str:
    return os.path.realpath(path) if os.path.islink(path) else path


@contextlib.contextmanager
def file_lock(path: str):
    """An exclusive lock among tma processes on one file: flock(2) on a sibling
    `.<name>.tma-lock`, removed again before it is released. A holder that finds the lock
    file replaced under it (a previous holder removed it) takes the new one instead."""
    target = _target(path)
    directory = os.path.dirname(os.path.abspath(target))
    os.makedirs(directory, exist_ok=True)
    lock = os.path.join(directory, "." + os.path.basename(target) + LOCK_SUFFIX)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        fd = os.open(lock, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            now = os.stat(lock, follow_symlinks=False)
        except FileNotFoundError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(lock)
        except OSError:
            pass
        os.close(fd)


def _identity(path: str):
    """What says the file is still the one read: device, inode, size, mtime (None: absent)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _snapshot(path: str) -> tuple[bytes | None, tuple | None]:
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return None, None
    return data, (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _bytes(value: str | bytes | None) -> bytes | None:
    return value.encode("utf-8") if isinstance(value, str) else value


def apply(change: Change, replan: Callable[[], Change | None] | None = None) -> None:
    """Write one change without losing a concurrent writer's.

    Under file_lock (tma against tma), the file is read again: when it is no longer the
    text the change was planned from, `replan()` plans again from what is there now
    (None: nothing left to do), and the loop starts over. The new text goes to a temp
    file; just before the rename, the file must still be the one read (its bytes, then
    its device, inode, size and mtime), else the temp file is dropped and the change
    redone. A writer that takes no lock (the agent itself) can still land between that
    last check and the rename: a window of one stat(2) and one rename(2).
    Without `replan` (tma's own files: the wrapper, its records) the change is written
    as planned, under the lock."""
    try:
        with file_lock(change.path):
            _apply_locked(change, replan)
    except OSError as exc:
        raise InstallError(f"cannot write {change.path}: {exc.strerror or exc}") from None


def _apply_locked(change: Change, replan) -> None:
    for _ in range(RETRIES):
        path = _target(change.path)
        data, ident = _snapshot(path)
        if replan is not None and data != _bytes(change.old):
            fresh = replan()
            if fresh is None:
                return
            change = fresh
            continue

        def still(path=path, data=data, ident=ident) -> bool:
            return replan is None or (_snapshot(path)[0] == data and _identity(path) == ident)

        if change.new is None:
            if os.path.lexists(change.path) and still():
                os.unlink(change.path)
                return
            if not os.path.lexists(change.path):
                return
            continue
        if write_atomic(change.path, _bytes(change.new) or b"", change.mode,
                        change.force_mode, still=still):
            return
    raise InstallError(f"{change.path} kept changing while tma wrote it ({RETRIES} tries); "
                       "nothing written: run the command again")


# ---------------------------------------------------------------- the wrapper


def wrapper_change(path: str) -> Change | None:
    """Write tma-hook at path (0755) unless an identical executable copy is there."""
    content = asset_bytes(WRAPPER_NAME)
    try:
        with open(path, "rb") as fh:
            current = fh.read()
    except OSError:
        current = None
    if current == content and os.access(path, os.X_OK):
        return None
    what = "update" if current is not None else "write"
    return Change(path, current, content, "hook wrapper", mode=0o755, force_mode=True,
                  summary=f"{what} the hook wrapper {path} (mode 0755, {len(content)} bytes)")


def wrapper_problems(ctx: Ctx, bare: bool) -> list[str]:
    """Why the wrapper the configs name would not run this tma's tma-hook."""
    if bare:
        found = shutil.which(WRAPPER_NAME)
        if found is None:
            return [f"wrapper: {WRAPPER_NAME} is not on $PATH (hooks are wired by bare name)"]
        path = found
    else:
        path = ctx.ref
    if not os.path.isfile(path):
        return [f"wrapper: {path} is missing"]
    if not os.access(path, os.X_OK):
        return [f"wrapper: {path} is not executable"]
    try:
        with open(path, "rb") as fh:
            if fh.read() != asset_bytes(WRAPPER_NAME):
                return [f"wrapper: {path} is not this tma's {WRAPPER_NAME}"]
    except (OSError, InstallError) as exc:
        return [f"wrapper: {path}: {exc}"]
    return []


STORE_PREFIXES = ("/nix/store/", "/gnu/store/")


def store_alias(path: str) -> str | None:
    """A $PATH entry outside a package store resolving to the same file as path."""
    real = os.path.realpath(path)
    for d in (os.environ.get("PATH") or "").split(os.pathsep):
        if not d or d.startswith(STORE_PREFIXES):
            continue
        cand = os.path.join(d, os.path.basename(path))
        if os.path.exists(cand) and os.path.realpath(cand) == real:
            return cand
    return None


def json_hooks_check(st: Status, doc: JsonDoc, shape: Shape, events: list[str], ctx: Ctx,
                     key: str = "hooks") -> None:
    """Add to st: does the file carry any of our entries, why it is not exactly current."""
    if key in doc.data and not isinstance(doc.data[key], dict):
        st.error = f"cannot edit {doc.path}: {key!r} is not an object"
        st.reasons.append(f"{shape.agent}: {st.error}")
        return

    def cmd(ev):
        return ctx.command(shape.agent, ev)

    states, extra = hooks_state(doc.data, shape, events, cmd, key)
    st.ours = st.ours or bool(extra) or any(s != "absent" for s in states.values())
    st.reasons += hook_reasons(shape.agent, doc.path, states, extra)


def json_hooks_edit(new: dict, shape: Shape, events: list[str], ctx: Ctx, path: str, *,
                    uninstall: bool, key: str = "hooks") -> None:
    edit_hooks(new, shape, events, lambda ev: ctx.command(shape.agent, ev),
               uninstall=uninstall, where=path, key=key)


def json_hooks_status(agent: str, path: str, shape: Shape, events: list[str],
                      ctx: Ctx) -> tuple[Status, JsonDoc | None]:
    """The Status of tma's hooks in the JSON file at `path`, and the document (None when
    it could not be read: the Status carries why)."""
    st, doc = load_status(agent, lambda: JsonDoc.load(path))
    if doc is not None:
        json_hooks_check(st, doc, shape, events, ctx)
    return st, doc


def json_hooks_planned(path: str, shape: Shape, events: list[str], ctx: Ctx,
                       uninstall: bool) -> tuple[JsonDoc, dict]:
    """The JSON file at `path` as it is, and its data with tma's hooks put in (or out)."""
    doc = JsonDoc.load(path)
    new = doc.copy()
    json_hooks_edit(new, shape, events, ctx, path, uninstall=uninstall)
    return doc, new


def flat_versioned(new: dict, before, uninstall: bool) -> dict:
    """Cursor's and Copilot's flat hook files: `"version": 1` comes in with tma's hooks,
    and leaves with them when an uninstall empties `hooks` (a file tma created goes back
    to holding nothing of tma's)."""
    if not uninstall and "version" not in new:
        return {"version": 1, **new}
    if uninstall and not same(new, before) and new.get("version") == 1 and not new.get("hooks"):
        new = {k: v for k, v in new.items() if k not in ("version", "hooks")}
    return new


def json_hooks_plan(agent: str, path: str, shape: Shape, events: list[str], ctx: Ctx,
                    uninstall: bool, label: str, caveat: str, *,
                    versioned: bool = False) -> Plan:
    """The whole plan of an adapter whose one file is a JSON hooks file (Gemini's and
    Qwen's settings.json, Copilot's hook file)."""
    doc, new = json_hooks_planned(path, shape, events, ctx, uninstall)
    if versioned:
        new = flat_versioned(new, doc.data, uninstall)
    out = Plan(agent)
    out.add(doc.change(new, label, uninstall=uninstall))
    return out.caveat(caveat, uninstall)


def load_status(agent: str, loader: Callable[[], T]) -> tuple[Status, T | None]:
    """A Status plus what loader() returned; a refusal becomes the Status's error."""
    st = Status(agent)
    try:
        return st, loader()
    except InstallError as exc:
        st.error = str(exc)
        st.reasons.append(f"{agent}: {exc}")
        return st, None


# ---------------------------------------------------------------- JS bridges (opencode, pi)

TOKEN = "@@TMA_HOOK@@"


def js_render(asset: str, marker: str, ctx: Ctx) -> str:
    text = asset_text(asset)
    if TOKEN not in text or marker not in text:
        raise InstallError(f"the {asset} asset lacks {TOKEN!r} or its marker {marker!r}")
    return text.replace(TOKEN, json.dumps(ctx.ref))


@dataclass(frozen=True)
class JsBridge:
    """An adapter whose whole wiring is one bundled JS file carrying the wrapper's path
    (OpenCode's plugin, pi's extension): those adapters differ only in this data."""

    agent: str
    key: str  # its FileOption's: ctx.paths[key] is the file
    asset: str
    marker: str
    label: str
    caveat: str

    def status(self, ctx: Ctx, manifest) -> Status:
        return js_status(self.agent, ctx.paths[self.key], self.asset, self.marker, ctx)

    def plan(self, ctx: Ctx, manifest, uninstall: bool) -> Plan:
        out = js_plan(self.agent, ctx.paths[self.key], self.asset, self.marker, self.label,
                      ctx, uninstall)
        return out.caveat(self.caveat, uninstall)


def js_status(agent: str, path: str, asset: str, marker: str, ctx: Ctx) -> Status:
    st, text = load_status(agent, lambda: read_text(path))
    if st.error is not None or text is None or marker not in text:
        return st
    st.ours = True
    try:
        want = js_render(asset, marker, ctx)
    except InstallError as exc:
        st.reasons.append(f"{agent}: {exc}")
        return st
    if json.dumps(ctx.ref) not in text:
        st.reasons.append(f"{agent}: {tilde(path)} runs another tma-hook than {ctx.ref}")
    elif text != want:
        st.reasons.append(f"{agent}: {tilde(path)} differs from this tma's bridge (out of "
                          "date or edited)")
    return st


def js_plan(agent: str, path: str, asset: str, marker: str, label: str, ctx: Ctx,
            uninstall: bool) -> Plan:
    text = read_text(path)
    out = Plan(agent)
    if uninstall:
        if text is None:
            return out
        if marker not in text:
            out.notes.append(f"{agent}: {tilde(path)} is not tma's (no {marker!r} marker); "
                             "left alone")
            return out
        out.changes.append(Change(path, text, None, label))
        return out
    want = js_render(asset, marker, ctx)
    if text is not None and marker not in text:
        raise InstallError(f"{path} exists and is not tma's {label} (no {marker!r} marker); "
                           "not overwriting it")
    if text != want:
        out.changes.append(Change(path, text, want, label, mode=0o666))
    return out
