"""Command actions: `sh -c <command>` with the pane's context in the environment only.

The command string is the manifest's, verbatim: nothing from the pane (title, cwd, agent
text) is ever spliced into it; the child reads `TMA_*` variables instead. Synchronous:
the broker waits up to `timeout_ms`, then kills the child's process group (`timeout`).
Detached: a supervisor (this module run as a program) takes over the pane's lock, waits
for the child or its `detach_timeout_ms` deadline (then kills the group), releases the
lock, and sends a completion payload to the notify command.
"""

from __future__ import annotations

import json
import os
import sys

SH = "/bin/sh"
COMPLETION_SCHEMA = 1


def child_env(action, pane, stamp, agent: str, args: tuple[str, ...]) -> dict[str, str]:
    """The child's environment: tma's own, plus the context as TMA_* (unset when empty)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMA_ARG")}
    ctx = {
        "TMA_ACTION": action.name, "TMA_PANE": pane.pane_id, "TMA_AGENT": agent,
        "TMA_STATE": stamp.state if stamp is not None else "",
        "TMA_DETAIL": stamp.detail if stamp is not None else "",
        "TMA_LOCATOR": pane.locator, "TMA_SESSION_ID": _safe_id(
            pane.options.get("@agent_session", "")),
        "TMA_CWD": pane.current_path, "TMA_TITLE": pane.title,
        "TMA_PID": str(stamp.pid) if stamp is not None and stamp.pid else "",
    }
    for key, value in ctx.items():
        if value:
            env[key] = value
        else:
            env.pop(key, None)
    env["TMA_ARG_COUNT"] = str(len(args))
    if args:
        env["TMA_ARG"] = args[0]
    for i, value in enumerate(args, 1):
        env[f"TMA_ARG_{i}"] = value
    return env


def _safe_id(value: str) -> str:
    """An agent-supplied session id reaches the child only in [A-Za-z0-9_-]."""
    return value if value and all(c.isalnum() or c in "-_" for c in value) else ""


def _spawn(command: str, env: dict[str, str], stdout: int | None, stderr: int | None) -> int:
    """`sh -c COMMAND` leading its own process group (tma.tmux.spawn, the one place a
    child with a deadline is started and killed); stdin is /dev/null."""
    from tma.tmux import spawn

    pid, _stdin = spawn.start([SH, "-c", command], stdout_fd=stdout, stderr_fd=stderr,
                              new_group=True, env=env)
    return pid


def wait_child(pid: int, timeout_ms: int) -> tuple[str, int | None]:
    """("exited", code) or ("timeout", None) once the deadline killed the group
    (tma.tmux.spawn's kill policy: SIGTERM, a grace, SIGKILL)."""
    from tma.tmux import spawn

    status = spawn.wait_or_kill(pid, timeout_ms / 1000)
    if status is None:
        return "timeout", None
    return "exited", os.waitstatus_to_exitcode(status)


def run_sync(command: str, env: dict[str, str], timeout_ms: int,
             stdout_fd: int = 1) -> tuple[str, int | None, str]:
    """(outcome, exit code, error message)."""
    try:
        pid = _spawn(command, env, stdout_fd, 2)
    except OSError as exc:
        return "error", None, f"cannot run sh: {exc.strerror or exc}"
    outcome, code = wait_child(pid, timeout_ms)
    return outcome, code, ""


# ---------------------------------------------------------------- detached


class Supervisor:
    """The started supervisor: its pid, and the write end of its stdin (the spec)."""

    def __init__(self, pid: int, stdin: int) -> None:
        self.pid, self.stdin = pid, stdin


def start_supervisor(spec: dict) -> Supervisor:
    """The supervisor process, detached (its own session); the spec is sent by `hand_over`."""
    from tma.tmux import spawn

    pid, stdin = spawn.start([sys.executable, "-m", "tma.runtime.act.exec"],
                             stdin_pipe=True, new_session=True, env=spec["env"])
    assert stdin is not None
    return Supervisor(pid, stdin)


def hand_over(proc: Supervisor, spec: dict) -> None:
    data = memoryview(json.dumps(spec).encode())
    try:
        while data:
            data = data[os.write(proc.stdin, data):]
    except OSError:
        pass  # the supervisor is gone: it never holds the lock it was not told of
    finally:
        os.close(proc.stdin)


def completion(spec: dict, outcome: str, code: int | None, release_ok: bool) -> dict:
    doc = {"schema": COMPLETION_SCHEMA, "action": spec["action"], "pane": spec["pane"],
           "agent": spec["agent"] or None, "outcome": outcome, "exit_code": code,
           "locator": spec.get("locator") or None}
    if not release_ok:
        doc["lock_release_failed"] = True
    return doc


def completion_env(doc: dict, base: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    for key, field in (("TMA_ACTION", "action"), ("TMA_PANE", "pane"), ("TMA_AGENT", "agent"),
                       ("TMA_OUTCOME", "outcome"), ("TMA_EXIT_CODE", "exit_code"),
                       ("TMA_LOCATOR", "locator")):
        value = doc.get(field)
        if value is None or value == "":
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def supervise(spec: dict) -> int:
    """Run the child to its end or its deadline, release the lock, send the completion."""
    from tma.tmux import action_lock
    from tma.tmux.adapter import Server

    try:
        pid = _spawn(spec["command"], spec["env"], None, None)
        outcome, code = wait_child(pid, spec["timeout_ms"])
    except OSError:
        outcome, code = "error", None
    server = Server(spec["tmux_bin"], socket_name=spec.get("socket_name"),
                    socket_path=spec.get("socket_path"))
    try:
        released = action_lock.release(server, spec["pane"], spec["lock"])
    except Exception:
        released = False
    doc = completion(spec, outcome, code, released)
    _send_completion(spec, doc)
    return 0


def _send_completion(spec: dict, doc: dict) -> None:
    command = spec.get("notify_command")
    if not command:
        return
    from tma.runtime.notify.backends import run_command

    env = completion_env(doc, {k: v for k, v in spec["env"].items()
                               if not k.startswith("TMA_")})
    run_command([SH, "-c", command], (json.dumps(doc) + "\n").encode(), env, wait=True)


if __name__ == "__main__":
    sys.exit(supervise(json.loads(sys.stdin.buffer.read() or b"{}")))
