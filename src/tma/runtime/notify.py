"""Notification sinks: what happens once a notification has been decided.

The caller owns *whether* to fire (the trigger, the per-state-run dedup marker, mute);
this module owns *how*: a plain `Note` goes to the sinks in a fixed order, and every
sink swallows its own errors, because the hook path must never fail and never print.

1. a `display-message` on every attached client (tma.tmux.notify escapes the text);
2. `bell = true`: a BEL byte to the pane's tty;
3. `osc = true`: `ESC ] 9 ; <agent> <state> BEL` to the pane's tty (never the title);
4. `log = PATH`: one JSON line per notification (the payload plus `at`);
5. the resolved command, `sh -c CMD`, payload on stdin and `TMA_*` in the environment;
   or, with no command and `desktop = true`, notify-send / osascript.

A command that cannot start, exits non-zero, dies of a signal or outlives its timeout
leaves one record, `<runtime dir>/notify-error`; its next clean exit removes it.

Import-light on purpose (os and tma only at module level): the hook path imports it
when a notification fires.
"""

from __future__ import annotations

import os

from tma.core.record import Record
from tma.tmux import notify as tnotify

SCHEMA = 2  # 2: `since_ms` (an age, unlike ls --json's epoch since_ms) renamed `age_ms`
TRIGGERS = ("blocked", "done", "context_high")
DEFAULT_ON = ("blocked",)
COMMAND_TIMEOUT = 10.0  # seconds the hook path waits for the command before killing it
OSC_MAX = 200  # bytes of OSC 9 body
FAILURE_FILE = "notify-error"
_SH = "/bin/sh" if os.path.exists("/bin/sh") else "sh"

PAYLOAD_KEYS = ("schema", "agent", "pane", "state", "detail", "session", "locator", "title",
                "repo", "branch", "age_ms", "context_pct")
LOG_KEYS = ("schema", "at") + PAYLOAD_KEYS[1:]
ENV_ALWAYS = ("TMA_AGENT", "TMA_PANE", "TMA_STATE", "TMA_LOCATOR", "TMA_TITLE", "TMA_AGE_MS")
ENV_OPTIONAL = ("TMA_DETAIL", "TMA_SESSION", "TMA_REPO", "TMA_BRANCH", "TMA_CONTEXT_PCT")


class Note(Record):
    """One notification. `trigger` is the word a sink sees as the state: blocked, done
    or context_high. `tty` is optional: the pane's tty when the caller already has it
    (saves resolving it); `since_ms` is the episode's age (0 for a hook's own fire)."""

    trigger: str = "blocked"
    agent: str = ""
    pane: str = ""
    detail: str | None = None
    session: str | None = None
    locator: str = ""
    title: str = ""
    repo: str = ""
    branch: str = ""
    since_ms: int = 0
    context_pct: int | None = None
    tty: str = ""

    @property
    def state(self) -> str:
        return self.trigger


# ------------------------------------------------------------------ decisions


def _notify_cfg(cfg) -> dict:
    table = getattr(cfg, "notify", None)
    return table if isinstance(table, dict) else {}


def command_for(cfg, trigger: str) -> str | None:
    """TMA_NOTIFY_CMD (non-empty) replaces every command; else `notify.<trigger>.command`;
    else `notify.command`; else None. An empty string counts as unset."""
    env = os.environ.get("TMA_NOTIFY_CMD")
    if env:
        return env
    n = _notify_cfg(cfg)
    table = n.get(trigger)
    if isinstance(table, dict):
        cmd = table.get("command")
        if isinstance(cmd, str) and cmd:
            return cmd
    cmd = n.get("command")
    if isinstance(cmd, str) and cmd:
        return cmd
    return None


# ------------------------------------------------------------------ payload and env


def payload(note: Note) -> dict:
    """The stdin JSON of the command, keys in their pinned order (schema 2)."""
    return {
        "schema": SCHEMA,
        "agent": note.agent,
        "pane": note.pane,
        "state": note.trigger,
        "detail": note.detail or None,
        "session": note.session or None,
        "locator": note.locator,
        "title": note.title or "",
        "repo": note.repo or "",
        "branch": note.branch or "",
        "age_ms": int(note.since_ms or 0),
        "context_pct": None if note.context_pct is None else int(note.context_pct),
    }


def log_record(note: Note, at: int) -> dict:
    """A `[notify] log` line: the payload with `at` (epoch ms) right after `schema`."""
    body = payload(note)
    out = {"schema": body.pop("schema"), "at": int(at)}
    out.update(body)
    return out


def env(note: Note) -> dict[str, str]:
    """The TMA_* variables of the command. The first six are always set; the optional
    five only when they have a value (a child never inherits a stale one, see _child_env)."""
    out = {
        "TMA_AGENT": note.agent,
        "TMA_PANE": note.pane,
        "TMA_STATE": note.trigger,
        "TMA_LOCATOR": note.locator,
        "TMA_TITLE": note.title or "",
        "TMA_AGE_MS": str(int(note.since_ms or 0)),
    }
    for key, value in (("TMA_DETAIL", note.detail), ("TMA_SESSION", note.session),
                       ("TMA_REPO", note.repo), ("TMA_BRANCH", note.branch),
                       ("TMA_CONTEXT_PCT", note.context_pct)):
        if value is not None and value != "":
            out[key] = str(value)
    return out


def _child_env(note: Note) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ENV_OPTIONAL}
    base.update(env(note))
    return base


_JESC = {i: f"\\u{i:04x}" for i in range(32)}
_JESC.update({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"})


def _jvalue(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    return '"' + str(v).translate(_JESC) + '"'


def dumps(obj: dict) -> str:
    """Compact JSON of a flat dict of str/int/bool/None (no json import on the hook path)."""
    return "{" + ",".join(f"{_jvalue(str(k))}:{_jvalue(v)}" for k, v in obj.items()) + "}"


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "replace")


# ------------------------------------------------------------------ texts


strip_controls = tnotify.strip_controls


def message(note: Note) -> str:
    """The status-line text (unescaped; tma.tmux.notify escapes it for tmux)."""
    title = strip_controls(note.title or "").strip()
    if title:
        return f"tma: {note.agent} {note.trigger} — {title}"
    return f"tma: {note.agent} {note.trigger} in {note.pane}"


def osc9(note: Note) -> bytes:
    """`ESC ] 9 ; <agent> <state> BEL`: never the title, no control byte, body <= 200 bytes."""
    body = _bytes(strip_controls(f"{note.agent} {note.trigger}"))
    if len(body) > OSC_MAX:
        body = body[:OSC_MAX].decode("utf-8", "ignore").encode("utf-8")
    return b"\x1b]9;" + body + b"\x07"


# ------------------------------------------------------------------ failure record


def runtime_dir() -> str:
    """tma's runtime directory (tma.core.paths: $XDG_RUNTIME_DIR/tma, else a per-user
    tma-<uid> under the temp dir), created 0700 on write."""
    from tma.core.paths import Paths

    return Paths(os.environ).runtime_dir


def _private_dir() -> str | None:
    """The runtime directory, created 0700; None when it is not the user's alone
    (a shared temp dir where someone else made tma-<uid> first)."""
    from tma.core.paths import private_dir_ok

    d = runtime_dir()
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.stat(d)
    return d if private_dir_ok(st.st_mode, st.st_uid, os.getuid()) else None


def failure_path() -> str:
    return os.path.join(runtime_dir(), FAILURE_FILE)


def record_failure(command: str, reason: str, at: int | None = None) -> None:
    """Write the one failure record (newest wins). Silent on any error."""
    try:
        d = _private_dir()
        if d is None:
            return
        path = os.path.join(d, FAILURE_FILE)
        tmp = f"{path}.{os.getpid()}.tmp"
        doc = {"at": int(_now_ms() if at is None else at), "reason": reason, "command": command}
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, _bytes(dumps(doc) + "\n"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except Exception:
        pass


def clear_failure() -> None:
    try:
        os.unlink(failure_path())
    except Exception:
        pass


def last_failure() -> dict | None:
    """The standing failure record {at, reason, command}, or None (for tma doctor)."""
    try:
        with open(failure_path(), encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return None
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    at = doc.get("at")
    return {
        "at": at if isinstance(at, int) and not isinstance(at, bool) else 0,
        "reason": str(doc.get("reason", "")),
        "command": str(doc.get("command", "")),
    }


# ------------------------------------------------------------------ sinks


def _now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def write_tty(tty: str, data: bytes) -> None:
    """Write to a pane's tty without ever blocking; every failure is silent."""
    if not tty.startswith("/dev/") or not data:
        return
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_log(path: str, note: Note, at: int) -> None:
    try:
        from tma.core.paths import Paths

        path = Paths(os.environ).expand(path)
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, _bytes(dumps(log_record(note, at)) + "\n"))
        finally:
            os.close(fd)
    except Exception:
        pass


def _which(name: str) -> str | None:
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        p = os.path.join(d or ".", name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def desktop_argv(note: Note, platform: str | None = None) -> list[str] | None:
    """notify-send (Linux and friends) or osascript (macOS) argv, or None if absent.
    Text goes as argv, never through a shell or an AppleScript literal."""
    if platform is None:
        import sys

        platform = sys.platform
    summary = strip_controls(f"tma: {note.agent} {note.trigger}")
    title = strip_controls(note.title or "").strip()
    body = title or f"in {note.pane}"
    if platform == "darwin":
        exe = _which("osascript")
        if exe is None:
            return None
        return [exe, "-e", "on run argv",
                "-e", "display notification (item 2 of argv) with title (item 1 of argv)",
                "-e", "end run", summary, body]
    exe = _which("notify-send")
    if exe is None:
        return None
    return [exe, "--app-name=tma", summary, body]


def run_command(argv: list[str], stdin: bytes, child_env: dict[str, str], *, wait: bool = True,
                timeout: float | None = None) -> tuple[bool, str]:
    """Spawn argv (own process group, stdout/stderr to /dev/null), feed stdin, and with
    wait=True wait up to timeout, then kill the group. Returns (ok, reason)."""
    spawned = _spawn(argv, child_env)
    if isinstance(spawned, str):
        return False, spawned
    pid, feeder = spawned[0], _Feeder(spawned[1], stdin)
    feeder.feed()
    if not wait:
        feeder.close()
        return True, ""
    timeout = COMMAND_TIMEOUT if timeout is None else timeout
    status = _wait(pid, feeder, timeout)
    feeder.close()
    if status is None:
        _kill_group(pid)
        return False, f"timed out after {timeout:g}s (killed)"
    return _exit_reason(status)


def _spawn(argv: list[str], child_env: dict[str, str]) -> tuple[int, int] | str:
    """(pid, the write end of its stdin) or why it could not start."""
    import signal

    in_r, in_w = os.pipe()
    actions = [
        (os.POSIX_SPAWN_DUP2, in_r, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_CLOSE, in_r),
        (os.POSIX_SPAWN_CLOSE, in_w),
    ]
    sigdef = [s for s in (getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None))
              if s is not None]
    try:
        pid = os.posix_spawnp(argv[0], argv, child_env, file_actions=actions, setpgroup=0,
                              setsigdef=sigdef)
    except Exception as exc:
        os.close(in_r)
        os.close(in_w)
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return f"spawn failed: {reason}"
    os.close(in_r)
    os.set_blocking(in_w, False)
    return pid, in_w


class _Feeder:
    """The child's stdin: written as the pipe takes it, closed once (never blocking)."""

    def __init__(self, fd: int, data: bytes) -> None:
        self.fd = fd
        self.pending = memoryview(data)
        self.closed = False

    def feed(self) -> None:
        if self.closed:
            return
        try:
            while self.pending:
                self.pending = self.pending[os.write(self.fd, self.pending[:65536]):]
        except BlockingIOError:
            return
        except OSError:
            pass  # the child closed its stdin: it does not want the payload
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.fd)


def _wait(pid: int, feeder: _Feeder, timeout: float) -> int | None:
    """The child's wait status, feeding its stdin meanwhile; None when it outlived timeout."""
    import time

    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        feeder.feed()
        if time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _kill_group(pid: int) -> None:
    """SIGKILL the child's process group (else the child), then reap it."""
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _exit_reason(status: int) -> tuple[bool, str]:
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return True, ""
    if code < 0:
        return False, f"killed by signal {-code}"
    return False, f"exit status {code}"


def _run_sink(argv: list[str], shown: str, note: Note, wait: bool, now: int) -> None:
    ok, reason = run_command(argv, _bytes(dumps(payload(note)) + "\n"), _child_env(note),
                             wait=wait)
    if ok:
        if wait:
            clear_failure()
    else:
        record_failure(shown, reason, now)


def dispatch(server, cfg, note: Note, *, wait: bool = True, now: int | None = None,
             clients: list[str] | None = None) -> None:
    """Fire one notification through every configured sink, in order. Never raises,
    never writes to stdout. `clients` (attached client names) and `note.tty` skip the
    tmux read when the caller already has them; `now` is the log line's `at`."""
    n = _notify_cfg(cfg)
    if now is None:
        now = _now_ms()
    bell = n.get("bell") is True
    osc = n.get("osc") is True
    tty = note.tty or ""
    # (1) display-message on every attached client (and resolve the tty on the way)
    try:
        if clients is None or ((bell or osc) and not tty):
            found, resolved = tnotify.targets(server, note.pane, (bell or osc) and not tty)
            if clients is None:
                clients = found
            tty = tty or resolved
        tnotify.display(server, clients, message(note))
    except Exception:
        pass
    # (2) bell, (3) OSC 9: both to the pane's tty
    try:
        if bell:
            write_tty(tty, b"\x07")
        if osc:
            write_tty(tty, osc9(note))
    except Exception:
        pass
    # (4) log
    log = n.get("log")
    if isinstance(log, str) and log:
        append_log(log, note, now)
    # (5) the command, or the opt-in desktop fallback
    try:
        cmd = command_for(cfg, note.trigger)
        if cmd is not None:
            _run_sink([_SH, "-c", cmd], cmd, note, wait, now)
        elif n.get("desktop") is True:
            argv = desktop_argv(note)
            if argv is not None:
                _run_sink(argv, os.path.basename(argv[0]) + " (desktop)", note, wait, now)
    except Exception:
        pass
