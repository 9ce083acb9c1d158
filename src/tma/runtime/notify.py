"""Notification sinks: what happens once a notification has been decided.

The caller owns *whether* to fire (the trigger, the per-state-run dedup marker, mute);
this module owns *how*: a plain `Note` goes to the sinks in a fixed order, and every
sink swallows its own errors, because the hook path must never fail and never print.

1. a `display-message` on every attached client (tma.tmux.notify escapes the text),
   unless `message = false`;
2. `bell = true`: a BEL byte to the pane's tty;
3. `osc = true`: `ESC ] 9 ; <agent> <state> BEL` to the pane's tty (never the title);
4. `log = PATH`: one JSON line per notification (the payload plus `at`);
5. the resolved command, `sh -c CMD`, payload on stdin and `TMA_*` in the environment;
   or, with no command, a desktop notifier (notify-send with a session bus, osascript):
   the daemon's default (`desktop = "auto"`), the hook path's with `desktop = true`.
   The daemon's notify-send offers a "jump" action that runs `tma jump --pane`.

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
    from tma.core.paths import here

    return here().runtime_dir


def _private_dir() -> str | None:
    """The runtime directory, created 0700; None when it is not the user's alone
    (a symlink, or a shared temp dir where someone else made tma-<uid> first):
    tma.runtime.rundir."""
    from tma.runtime import rundir

    try:
        return rundir.make(runtime_dir())
    except rundir.RuntimeDirError:
        return None


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
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
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
    """The standing failure record {at, reason, command}, or None (for tma doctor); never
    one from a runtime dir that is not the user's alone (its text would be anybody's)."""
    from tma.runtime import rundir

    if rundir.problem(runtime_dir()) is not None:
        return None
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
        from tma.core.paths import here

        path = here().expand(path)
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        # O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of blocking the
        # daemon's loop or an agent's hook; a regular file is unaffected
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
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


JUMP_SCRIPT = (
    'c=$("$@") || exit\n'
    'case $c in default|jump) ;; *) exit 0 ;; esac\n'
    'set -- jump --pane "$TMA_PANE"\n'
    'if [ -n "$TMA_JUMP_SOCKET_NAME" ]; then set -- --socket-name "$TMA_JUMP_SOCKET_NAME" "$@"\n'
    'elif [ -n "$TMA_JUMP_SOCKET_PATH" ]; then set -- --socket-path "$TMA_JUMP_SOCKET_PATH" "$@"; fi\n'
    '"$TMA_JUMP_BIN" "$@" >/dev/null 2>&1\n'
    'exit 0\n')


def desktop_mode(cfg) -> str | bool:
    """`[notify] desktop`: "auto" (the default: the daemon uses a desktop notifier when
    one is available), true (always try one, the hook path too) or false (never)."""
    value = _notify_cfg(cfg).get("desktop", "auto")
    return value if isinstance(value, bool) else "auto"


def message_on(cfg) -> bool:
    """`[notify] message` (default true): the tmux message line on attached clients."""
    return _notify_cfg(cfg).get("message") is not False


def desktop_backend(platform: str | None = None, environ=None, need_bus: bool = True) -> str | None:
    """The desktop notifier this host offers: osascript on macOS, notify-send elsewhere
    (with a session bus to reach when need_bus), else None."""
    if platform is None:
        import sys

        platform = sys.platform
    environ = os.environ if environ is None else environ
    if platform == "darwin":
        return "osascript" if _which("osascript") else None
    if _which("notify-send") is None:
        return None
    if need_bus and not _session_bus(environ):
        return None
    return "notify-send"


def _session_bus(environ) -> bool:
    if environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    import stat

    from tma.core.paths import here

    run = here(environ).runtime_dir
    if os.path.basename(run) != "tma":
        return False  # no $XDG_RUNTIME_DIR: no per-user bus socket to look for
    try:
        return stat.S_ISSOCK(os.stat(os.path.join(os.path.dirname(run), "bus")).st_mode)
    except OSError:
        return False


def sink(cfg, trigger: str, daemon: bool = False) -> tuple[str, str]:
    """What sink (5) does for this trigger: ("command", CMD), ("desktop", notify-send
    or osascript) or ("none", why). The daemon takes a desktop notifier by default
    ("auto"); the hook path only with `desktop = true`."""
    cmd = command_for(cfg, trigger)
    if cmd is not None:
        return "command", cmd
    mode = desktop_mode(cfg)
    if mode is False:
        return "none", "desktop = false and no command"
    if mode == "auto" and not daemon:
        return "none", "no command (desktop = \"auto\" is the daemon's)"
    backend = desktop_backend(need_bus=mode == "auto")
    if backend is None:
        return "none", "no command and no desktop notifier (notify-send with a session " \
                       "bus, or osascript)"
    return "desktop", backend


def desktop_argv(note: Note, platform: str | None = None, actions: bool = False) -> list[str] | None:
    """notify-send (Linux and friends) or osascript (macOS) argv, or None if absent.
    Text goes as argv, never through a shell or an AppleScript literal. With actions
    (notify-send only), the notifier waits for a choice inside a small sh wrapper and
    choosing the notification runs `tma jump --pane` (see jump_env)."""
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
    # notification servers that advertise body-markup read the body as markup: the
    # title is the agent's text, so it must not open a tag or a link
    body = body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if not actions:
        return [exe, "--app-name=tma", summary, body]
    return [_SH, "-c", JUMP_SCRIPT, "sh", exe, "--app-name=tma", "--wait",
            "--action=default=Jump to the pane", "--action=jump=Jump to the pane",
            summary, body]


_ACTIONS: dict[str, bool] = {}


def notify_send_actions() -> bool:
    """Does this notify-send take --action and --wait (libnotify 0.7.10+)? Asked once
    per process (its --help), since the answer does not change under a daemon."""
    exe = _which("notify-send")
    if exe is None:
        return False
    if exe not in _ACTIONS:
        import subprocess

        try:
            res = subprocess.run([exe, "--help"], capture_output=True, timeout=2,
                                 stdin=subprocess.DEVNULL)
            text = (res.stdout + res.stderr).decode("utf-8", "replace")
        except (OSError, subprocess.SubprocessError):
            text = ""
        _ACTIONS[exe] = "--action" in text and "--wait" in text
    return _ACTIONS[exe]


def jump_env(server_flags: list[str], tma_bin: str | None) -> dict[str, str]:
    """What the jump wrapper needs: the tma to run and the tmux server to reach."""
    out = {"TMA_JUMP_BIN": tma_bin or "tma"}
    if server_flags[:1] == ["--socket-name"]:
        out["TMA_JUMP_SOCKET_NAME"] = server_flags[1]
    elif server_flags[:1] == ["--socket-path"]:
        out["TMA_JUMP_SOCKET_PATH"] = server_flags[1]
    return out


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


def _run_sink(argv: list[str], shown: str, note: Note, wait: bool, now: int,
              extra_env: dict[str, str] | None = None) -> Child | None:
    """Run one sink child. wait=True (the hook path): wait, then record the outcome.
    wait=False (the daemon): start it and hand back a Child to reap later."""
    child_env = _child_env(note)
    if extra_env:
        child_env.update(extra_env)
    stdin = _bytes(dumps(payload(note)) + "\n")
    if not wait:
        spawned = _spawn(argv, child_env)
        if isinstance(spawned, str):
            record_failure(shown, spawned, now)
            return None
        child = Child(spawned[0], shown, _Feeder(spawned[1], stdin),
                      waiter=bool(extra_env))
        child.feeder.feed()
        return child
    ok, reason = run_command(argv, stdin, child_env, wait=True)
    if ok:
        clear_failure()
    else:
        record_failure(shown, reason, now)
    return None


class Child:
    """A sink child the daemon started and has not reaped yet. A `waiter` is a desktop
    notification waiting for the user's choice: running long is its job, not a fault."""

    def __init__(self, pid: int, shown: str, feeder: _Feeder, waiter: bool = False) -> None:
        self.pid = pid
        self.shown = shown
        self.feeder = feeder
        self.waiter = waiter

    def poll(self) -> bool:
        """Feed its stdin, reap it if it ended (recording the outcome); True once done."""
        self.feeder.feed()
        try:
            done, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.feeder.close()
            return True
        if not done:
            return False
        self.feeder.close()
        ok, reason = _exit_reason(status)
        if ok:
            clear_failure()
        else:
            record_failure(self.shown, reason)
        return True

    def kill(self, reason: str) -> None:
        """Kill its process group and reap it (the in-flight cap); recorded, unless it
        was a notification still waiting for a click."""
        self.feeder.close()
        _kill_group(self.pid)
        if not self.waiter:
            record_failure(self.shown, reason)


def dispatch(server, cfg, note: Note, *, wait: bool = True, now: int | None = None,
             clients: list[str] | None = None, daemon: bool = False,
             jump: dict[str, str] | None = None) -> list[Child]:
    """Fire one notification through every configured sink, in order. Never raises,
    never writes to stdout. `clients` (attached client names) and `note.tty` skip the
    tmux read when the caller already has them; `now` is the log line's `at`.
    `daemon`: the daemon's resolution of sink (5) (a desktop notifier by default);
    `jump`: jump_env() when the desktop notification may offer a jump action.
    Returns the children started with wait=False (the caller reaps them)."""
    n = _notify_cfg(cfg)
    if now is None:
        now = _now_ms()
    bell = n.get("bell") is True
    osc = n.get("osc") is True
    show = message_on(cfg)
    tty = note.tty or ""
    # (1) display-message on every attached client (and resolve the tty on the way)
    try:
        if (show and clients is None) or ((bell or osc) and not tty):
            found, resolved = tnotify.targets(server, note.pane, (bell or osc) and not tty)
            if clients is None:
                clients = found
            tty = tty or resolved
        if show and clients:
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
    # (5) the command, or a desktop notifier
    out: list[Child] = []
    try:
        kind, what = sink(cfg, note.trigger, daemon)
        child = None
        if kind == "command":
            child = _run_sink([_SH, "-c", what], what, note, wait, now)
        elif kind == "desktop":
            actions = jump is not None and not wait and what == "notify-send" \
                and notify_send_actions()
            argv = desktop_argv(note, actions=actions)
            if argv is not None:
                child = _run_sink(argv, what + " (desktop)", note, wait, now,
                                  jump if actions else None)
        if child is not None:
            out.append(child)
    except Exception:
        pass
    return out


# ------------------------------------------------------------------ tma debug notify-test


def test_note(trigger: str, cwd: str) -> Note:
    """A made-up note for `tma debug notify-test` (repo and branch from cwd)."""
    from tma.runtime.git import resolve

    repo, branch, _wt = resolve(cwd)
    return Note(trigger=trigger, agent="test", pane=os.environ.get("TMUX_PANE") or "%0",
                detail="notify-test", session=None, locator="test:0.0",
                title="tma notify-test", repo=repo or "", branch=branch or "",
                since_ms=0, context_pct=80 if trigger == "context_high" else None)


def rings(cfg, trigger: str) -> str:
    """`tma debug notify-test`'s last line: everything a real notification for this
    trigger does, sink (5) included, in words ("nothing" only when that is so)."""
    from tma.runtime import notify_gate

    if not notify_gate.enabled(cfg, trigger):
        why = ("[notify.context_high] is absent" if trigger == "context_high" else
               f"{trigger} is not in [notify] on (default [\"blocked\"])")
        return f"rings nothing for {trigger}: {why}"
    n = _notify_cfg(cfg)
    parts = []
    if message_on(cfg):
        parts.append("the tmux message line on every attached client (this test shows none)")
    if n.get("bell") is True:
        parts.append("a bell in the pane")
    if n.get("osc") is True:
        parts.append("an OSC 9 notification in the pane")
    if isinstance(n.get("log"), str) and n.get("log"):
        parts.append(f"a line in {n['log']}")
    kind, what = sink(cfg, trigger, daemon=True)
    if kind != "none":
        parts.append("the command above" if kind == "command" else f"{what} (desktop)")
    if not parts:
        return "rings nothing: message = false, and no bell, osc, log, command or desktop " \
               "notifier"
    return "rings " + "; ".join(parts)


def run_test(cfg, note: Note, now: int) -> tuple[list[str], int]:
    """Resolve sink (5) as the daemon does, run it and wait: (report lines, exit code).
    The outcome updates the failure record the way a real fire would."""
    import subprocess

    out = ["payload " + dumps(payload(note))]
    kind, what = sink(cfg, note.trigger, daemon=True)
    if kind == "none":
        out.append(f"command none: {what}")
        return out, 1
    if kind == "command":
        argv, shown = [_SH, "-c", what], what
    else:
        argv = desktop_argv(note) or []
        shown = what + " (desktop)"
    out.append(f"command {shown}")
    ok = False
    try:
        res = subprocess.run(argv, input=_bytes(dumps(payload(note)) + "\n"),
                             env=_child_env(note), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, timeout=COMMAND_TIMEOUT,
                             start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        reason = f"timed out after {COMMAND_TIMEOUT:g}s (killed)"
        record_failure(shown, reason, now)
        out.append(f"exit none: {reason}")
        err = exc.stderr or b""
    except OSError as exc:
        reason = f"spawn failed: {exc.strerror or exc}"
        record_failure(shown, reason, now)
        out.append(f"exit none: {reason}")
        return out, 1
    else:
        err = res.stderr
        code = res.returncode
        out.append(f"exit {code}")
        ok = code == 0
        if ok:
            clear_failure()
        else:
            record_failure(shown, f"killed by signal {-code}" if code < 0
                           else f"exit status {code}", now)
    text = err.decode("utf-8", "replace").rstrip("\n")
    out.extend("stderr " + line for line in text.split("\n") if text)
    return out, 0 if ok else 1
