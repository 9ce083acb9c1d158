"""Sink (5) of a notification: which command or desktop notifier runs, and running it.

Detection: the resolved command (tma.runtime.notify.gate.command_for) or, without one,
a desktop notifier this host offers (notify-send with a session bus, osascript); the
daemon takes one by default (`desktop = "auto"`), the hook path only with `desktop =
true`. The daemon's notify-send offers actions (`[notify] desktop_actions`): a click on
the body jumps to the pane (`tma jump --pane`), and on a permission prompt the agent's
manifest can answer, Approve / Deny buttons run `tma act approve|deny --pane P
--expect-episode MS`: the broker, bound to the episode the notification was for, so a
click on a stale notification types nothing (and says why in a notification of its
own), and keys go only to a screen that still asks. The waiting notify-send runs under `timeout` (WAIT_SECS, then SIGINT: notify-send
closes its notification on SIGINT), so no child outlives a forgotten notification.

Processes: every child is started by tma.tmux.spawn in its own process group, its
stdin fed without blocking, and ended by tma.tmux.spawn's one kill policy. The hook
path waits up to COMMAND_TIMEOUT (run_command); the daemon starts it and reaps the
`Child` on later reads. Every outcome goes to the failure record (tma.runtime.notify.log).
"""

from __future__ import annotations

import os

from tma.runtime.notify import gate as notify_gate, log as notify_log
from tma.runtime.notify.note import Note, child_env, stdin
from tma.tmux import spawn
from tma.tmux.notify import strip_controls

COMMAND_TIMEOUT = 10.0  # seconds the hook path waits for the command before killing it
_SH = "/bin/sh" if os.path.exists("/bin/sh") else "sh"


# ------------------------------------------------------------------ detection


def _which(name: str) -> str | None:
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        p = os.path.join(d or ".", name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


WAIT_SECS = 600  # how long a desktop notification waits for a click before it is closed
SUMMARY_MAX = 200  # characters of the pending call's summary in the body (one line)

# The child the daemon adopts for a notification with actions: run notify-send (argv
# "$@"), and act on the key it prints. Only the keys offered can come back, and the case
# below is the whole vocabulary: anything else runs nothing.
JUMP_SCRIPT = (
    'c=$("$@") || exit\n'
    'case $c in\n'
    'default|jump) set -- jump --pane "$TMA_PANE" ;;\n'
    'approve|deny) [ -n "$TMA_EPISODE_MS" ] || exit 0\n'
    '  set -- act "$c" --pane "$TMA_PANE" --expect-episode "$TMA_EPISODE_MS" ;;\n'
    '*) exit 0 ;;\n'
    'esac\n'
    'if [ -n "$TMA_JUMP_SOCKET_NAME" ]; then set -- --socket-name "$TMA_JUMP_SOCKET_NAME" "$@"\n'
    'elif [ -n "$TMA_JUMP_SOCKET_PATH" ]; then set -- --socket-path "$TMA_JUMP_SOCKET_PATH" "$@"; fi\n'
    'case $c in approve|deny) ;; *) "$TMA_JUMP_BIN" "$@" >/dev/null 2>&1; exit 0 ;; esac\n'
    # an answer the broker refused says why, in a notification of its own (no wait):
    # a click that seems to do nothing would leave the person guessing
    'why=$("$TMA_JUMP_BIN" "$@" 2>&1 >/dev/null) && exit 0\n'
    '[ -n "$TMA_NOTIFY_SEND" ] || exit 0\n'
    'why=$(printf %s "$why" | tr -d "<>&")\n'
    '"$TMA_NOTIFY_SEND" --app-name=tma "tma: $c not sent" "${why#tma: }" >/dev/null 2>&1\n'
    'exit 0\n')


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
    cmd = notify_gate.command_for(cfg, trigger)
    if cmd is not None:
        return "command", cmd
    mode = notify_gate.desktop_mode(cfg)
    if mode is False:
        return "none", "desktop = false and no command"
    if mode == "auto" and not daemon:
        return "none", "no command (desktop = \"auto\" is the daemon's)"
    backend = desktop_backend(need_bus=mode == "auto")
    if backend is None:
        return "none", "no command and no desktop notifier (notify-send with a session " \
                       "bus, or osascript)"
    return "desktop", backend


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """The first non-blank line of text, no control characters, at most `limit` chars."""
    for line in (text or "").splitlines():
        line = strip_controls(line).strip()
        if line:
            return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"
    return ""


def body_text(note: Note) -> str:
    """The notification's body: what the pane asks (the summary, one line of it), the
    agent's last sentence (only where `[notify] last_sentence` put one on the note), then
    where (the pane's title, or its id)."""
    title = strip_controls(note.title or "").strip()
    where = title or f"in {note.pane}"
    lines = [one_line(note.summary), one_line(note.last_sentence), where]
    return "\n".join(x for x in lines if x)


def desktop_argv(note: Note, platform: str | None = None, actions: bool = False,
                 answers: tuple[tuple[str, str], ...] = ()) -> list[str] | None:
    """notify-send (Linux and friends) or osascript (macOS) argv, or None if absent.
    Text goes as argv, never through a shell or an AppleScript literal. With actions
    (notify-send only), the notifier waits for a choice inside a small sh wrapper:
    choosing the notification runs `tma jump --pane` (see jump_env), and each of
    `answers` ((action, label): approve, deny) is a button that runs `tma act` bound
    to the episode (TMA_EPISODE_MS in the child's environment)."""
    if platform is None:
        import sys

        platform = sys.platform
    summary = strip_controls(f"tma: {note.agent} {note.trigger}")
    body = body_text(note)
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
    if answers:
        buttons = [f"--action={key}={strip_controls(label)}" for key, label in answers
                   if key in ANSWERS]
        buttons.append("--action=default=Jump")
    else:
        buttons = ["--action=default=Jump to the pane", "--action=jump=Jump to the pane"]
    # `timeout -s INT`: notify-send closes its notification on SIGINT (SIGTERM would
    # leave it on screen, its buttons answered by nobody); --foreground keeps it in the
    # daemon's process group for the in-flight cap's kill; --preserve-status keeps a
    # timed-out wait a clean exit
    bound = _which("timeout")
    wait = [bound, "--foreground", "--preserve-status", "-s", "INT", "-k", "5",
            str(WAIT_SECS)] if bound else []
    return [_SH, "-c", JUMP_SCRIPT, "sh", *wait, exe, "--app-name=tma", "--wait",
            *buttons, summary, body]


def refusal_env() -> dict[str, str]:
    """What the wrapper needs to say a refused answer: the notify-send to say it with."""
    exe = _which("notify-send")
    return {"TMA_NOTIFY_SEND": exe} if exe else {}


ANSWERS = ("approve", "deny")  # the broker actions a desktop button may fire


def sink_argv(kind: str, what: str, note: Note, actions: bool = False,
              answers: tuple[tuple[str, str], ...] = ()) -> tuple[list[str], str] | None:
    """(argv, the words the failure record shows) for a resolved sink, or None."""
    if kind == "command":
        return [_SH, "-c", what], what
    if kind == "desktop":
        argv = desktop_argv(note, actions=actions, answers=answers)
        return (argv, what + " (desktop)") if argv is not None else None
    return None


_ACTIONS: dict[str, bool] = {}


def notify_send_actions() -> bool:
    """Does this notify-send take --action and --wait (libnotify 0.7.10+)? Asked once
    per process (its --help), since the answer does not change under a daemon."""
    exe = _which("notify-send")
    if exe is None:
        return False
    if exe not in _ACTIONS:
        try:
            _code, out, err = spawn.run([exe, "--help"], timeout=2)
            text = (out + err).decode("utf-8", "replace")
        except (OSError, spawn.SpawnTimeout):
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


# ------------------------------------------------------------------ processes


class Feeder:
    """The child's stdin: written as the pipe takes it, closed once (never blocking)."""

    def __init__(self, fd: int, data: bytes) -> None:
        self.fd = fd
        self.pending = memoryview(data)
        self.closed = False
        os.set_blocking(fd, False)

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


def _start(argv: list[str], data: bytes, env: dict[str, str]) -> tuple[int, Feeder] | str:
    """(pid, its stdin feeder, already fed once) or why it could not start."""
    try:
        pid, in_w = spawn.start(argv, stdin_pipe=True, new_group=True, env=env)
    except Exception as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return f"spawn failed: {reason}"
    assert in_w is not None
    feeder = Feeder(in_w, data)
    feeder.feed()
    return pid, feeder


def exit_reason(status: int) -> tuple[bool, str]:
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return True, ""
    if code < 0:
        return False, f"killed by signal {-code}"
    return False, f"exit status {code}"


def run_command(argv: list[str], data: bytes, env: dict[str, str], *, wait: bool = True,
                timeout: float | None = None) -> tuple[bool, str]:
    """Spawn argv (own process group, stdout/stderr to /dev/null), feed it DATA, and with
    wait=True wait up to timeout, then kill the group. Returns (ok, reason)."""
    started = _start(argv, data, env)
    if isinstance(started, str):
        return False, started
    pid, feeder = started
    if not wait:
        feeder.close()
        return True, ""
    timeout = COMMAND_TIMEOUT if timeout is None else timeout
    status = spawn.wait_or_kill(pid, timeout, feeder.feed)
    feeder.close()
    if status is None:
        return False, f"timed out after {timeout:g}s (killed)"
    return exit_reason(status)


class Child:
    """A sink child the daemon started and has not reaped yet. A `waiter` is a desktop
    notification waiting for the user's choice: running long is its job, not a fault."""

    def __init__(self, pid: int, shown: str, feeder: Feeder, waiter: bool = False) -> None:
        self.pid = pid
        self.shown = shown
        self.feeder = feeder
        self.waiter = waiter
        self.deadline: float | None = None  # the daemon's monotonic end for a waiter

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
        notify_log.outcome(self.shown, *exit_reason(status))
        return True

    def kill(self, reason: str) -> None:
        """Kill its process group and reap it (the in-flight cap: the daemon's loop does
        not wait out a grace); recorded, unless it was a notification still waiting for
        a click."""
        self.feeder.close()
        spawn.kill_group(self.pid, grace=0.0)
        if not self.waiter:
            notify_log.record_failure(self.shown, reason)


def run_sink(argv: list[str], shown: str, note: Note, wait: bool, now: int,
             extra_env: dict[str, str] | None = None) -> Child | None:
    """Run one sink child. wait=True (the hook path): wait, then record the outcome.
    wait=False (the daemon): start it and hand back a Child to reap later."""
    env = child_env(note)
    if extra_env:
        env.update(extra_env)
    if not wait:
        started = _start(argv, stdin(note), env)
        if isinstance(started, str):
            notify_log.record_failure(shown, started, now)
            return None
        return Child(started[0], shown, started[1], waiter=bool(extra_env))
    ok, reason = run_command(argv, stdin(note), env, wait=True)
    notify_log.outcome(shown, ok, reason, now)
    return None
