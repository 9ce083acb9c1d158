"""One of each: the notification rule, its dedup, `[notify]`, the Note, the spawn-and-kill
policy, the hook's socket order and the reply lane each live in one place, and the
callers that had a copy of their own now ask it."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tma.core import bundled, notice, states
from tma.core.hookmap import HookTable
from tma.core.manifest import ManifestError, from_dict
from tma.runtime import handoff
from tma.runtime.notify import backends as notify_backends, gate as notify_gate
from tma.runtime.notify.note import Note
from tma.tmux import notify as tnotify, spawn, write
from tma.tmux.read import Pane

SRC = Path(__file__).resolve().parents[2] / "src" / "tma"


# ---------------------------------------------------------------- the trigger rule


@pytest.mark.parametrize("state", states.STATES)
@pytest.mark.parametrize("attention", [False, True])
def test_the_hook_gate_and_the_daemon_share_one_trigger_rule(state, attention):
    plan = SimpleNamespace(state=state, set_attention=attention)  # a planned stamp's two fields
    assert notify_gate.trigger_of(plan) == notice.trigger(state, attention)


def test_the_daemon_batch_guards_with_the_writers_dedup_format():
    for trigger in ("blocked", "done"):
        line = tnotify.marker_lines("%1", trigger, 5)[0]
        assert write.already_notified() in line


# ---------------------------------------------------------------- [notify], read in one place


def test_only_the_gate_reads_the_notify_table():
    reader = re.compile(r"cfg\.notify\b|getattr\(cfg, \"notify\"")
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if reader.search(p.read_text())
                 and p.relative_to(SRC).as_posix() not in ("runtime/notify/gate.py",
                                                            "runtime/config.py")]
    assert offenders == []


class _Cfg:
    def __init__(self, **table) -> None:
        self.notify = table


def test_the_gate_answers_every_notify_question():
    cfg = _Cfg(context_high={"threshold": 80}, bell=True, log="~/n.jsonl", message=False,
               desktop=True)
    assert notify_gate.context_threshold(cfg) == 80
    assert notify_gate.context_threshold(_Cfg(context_high={"threshold": True})) is None
    assert notify_gate.context_threshold(_Cfg()) is None
    assert notify_gate.flag(cfg, "bell") and not notify_gate.flag(cfg, "osc")
    assert notify_gate.log_path(cfg) == "~/n.jsonl" and notify_gate.log_path(_Cfg()) is None
    assert not notify_gate.message_on(cfg) and notify_gate.message_on(_Cfg())
    assert notify_gate.desktop_mode(cfg) is True and notify_gate.desktop_mode(_Cfg()) == "auto"


def test_a_blocking_sink_needs_from_event_and_a_slow_sink(monkeypatch):
    monkeypatch.delenv("TMA_NOTIFY_FROM_EVENT", raising=False)
    monkeypatch.delenv("TMA_NOTIFY_CMD", raising=False)
    assert not notify_gate.blocking_sink(_Cfg(command="x"))
    assert notify_gate.blocking_sink(_Cfg(from_event=True, command="x"))
    assert notify_gate.blocking_sink(_Cfg(from_event=True, desktop=True))
    assert not notify_gate.blocking_sink(_Cfg(from_event=True))


# ---------------------------------------------------------------- one Note constructor


def _pane(**options) -> Pane:
    return Pane("%7", 1, "s", "2", "3", "claude", 0, False, 0, 24, "/w", "$1", "@1", 80,
                True, True, "/dev/pts/4", "✳ fix", dict(options))


def test_note_for_pane_reads_the_pane_once():
    note = Note.for_pane("blocked", "claude", _pane(**{"@agent_context_pct": "42"}),
                         detail="permission", session="", since_ms=-5)
    assert note == Note(trigger="blocked", agent="claude", pane="%7", detail="permission",
                        session=None, locator="s:2.3", title="✳ fix", since_ms=0,
                        context_pct=42)
    assert Note.for_pane("done", "a", _pane(), tty="/dev/pts/4").context_pct is None


def test_the_hook_and_the_daemon_build_notes_with_it():
    for rel in ("runtime/hook.py", "daemon/notifier.py"):
        text = (SRC / rel).read_text()
        assert "Note.for_pane(" in text and "Note(" not in text.replace("Note.for_pane(", "")


# ---------------------------------------------------------------- one spawn and kill policy


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return True


def test_wait_or_kill_ends_the_whole_group_at_the_deadline(tmp_path):
    pidf = tmp_path / "bg"
    pid, _ = spawn.start(["/bin/sh", "-c", f"sleep 60 & echo $! > '{pidf}'; wait"],
                         new_group=True)
    while not pidf.exists() or not pidf.read_text().strip():
        time.sleep(0.01)
    start = time.monotonic()
    assert spawn.wait_or_kill(pid, 0.2) is None
    assert time.monotonic() - start < spawn.KILL_GRACE_S + 2
    bg = int(pidf.read_text())
    deadline = time.monotonic() + 5
    while _alive(bg) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(bg)


def test_wait_or_kill_returns_the_status_and_tends_meanwhile():
    pid, _ = spawn.start(["/bin/sh", "-c", "sleep 0.1; exit 3"], new_group=True)
    calls = []
    status = spawn.wait_or_kill(pid, 5, lambda: calls.append(1))
    assert status is not None and os.waitstatus_to_exitcode(status) == 3 and calls


def test_a_group_child_gets_sigpipe_back():
    # Python ignores SIGPIPE; a shell pipeline under tma must not inherit that
    code, out, _err = spawn.run(["/bin/sh", "-c", "yes | head -1; exit 0"], timeout=5,
                                new_group=True)
    assert (code, out) == (0, b"y\n")


def test_run_with_a_group_kills_it_and_keeps_what_it_wrote():
    with pytest.raises(spawn.SpawnTimeout) as info:
        spawn.run(["/bin/sh", "-c", "echo early >&2; sleep 30"], timeout=0.3, new_group=True)
    assert info.value.stderr == b"early\n"


def test_the_notify_command_and_an_action_use_the_one_policy():
    ok, reason = notify_backends.run_command(["/bin/sh", "-c", "sleep 30"], b"", dict(os.environ),
                                             timeout=0.2)
    assert (ok, reason) == (False, "timed out after 0.2s (killed)")
    from tma.runtime.act import exec as actions_exec

    assert actions_exec.run_sync("sleep 30", dict(os.environ), 200)[:2] == ("timeout", None)
    assert actions_exec.run_sync("exit 4", dict(os.environ), 5000) == ("exited", 4, "")
    for rel in ("runtime/notify/dispatch.py", "runtime/notify/backends.py", "runtime/act/exec.py"):
        text = (SRC / rel).read_text()
        assert "posix_spawn" not in text and "killpg" not in text and "subprocess" not in text


# ---------------------------------------------------------------- the hook's socket order


@pytest.mark.parametrize(("a", "env", "choice"), [
    ({"socket-name": "n", "socket-path": "/p"}, {"TMUX": "/t,1,2"}, ("name", "n")),
    ({"socket-path": "/p"}, {"TMA_HOOK_SOCKET": "h"}, ("path", "/p")),
    ({}, {"TMA_HOOK_SOCKET": "h", "TMUX": "/t,1,2"}, ("name", "h")),
    ({}, {"TMUX": "/t,1,2", "TMA_SOCKET_PATH": "/s"}, ("path", "/t")),
    ({}, {"TMA_SOCKET_PATH": "/s"}, ("", "")),
    ({"socket-name": ""}, {"TMA_HOOK_SOCKET": ""}, ("", "")),
])
def test_the_socket_order_is_one_function(a, env, choice):
    assert handoff.socket_choice(a, env) == choice
    path = handoff.tmux_socket(a, env)
    if choice[0] == "path":
        assert path == choice[1]
    elif choice[0] == "name":
        assert path.endswith("/" + choice[1])
    else:
        assert path == env.get("TMA_SOCKET_PATH", path)


def test_tma_event_builds_its_server_from_the_same_choice(monkeypatch):
    from tma.cli import event

    class Cfg:
        tmux_bin = None

    for var in ("TMA_HOOK_SOCKET", "TMUX", "TMA_SOCKET_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TMA_HOOK_SOCKET", "hooked")
    assert event._server({}, Cfg()).socket_name == "hooked"
    assert event._server({"socket-path": "/x"}, Cfg()).socket_path == "/x"
    monkeypatch.delenv("TMA_HOOK_SOCKET")
    monkeypatch.setenv("TMUX", "/t/sock,1,2")
    assert event._server({}, Cfg()).socket_path == "/t/sock"


# ---------------------------------------------------------------- the reply lane, a manifest fact


def test_the_reply_lane_is_claudes_manifest_fact():
    from tma.core.manifests._lanes import REPLY_LANES

    tables = {n: m.hook_table() for n, m in bundled.load_all().items()}
    assert tables["claude"].holds_reply("PermissionRequest")
    assert not tables["claude"].holds_reply("Stop")
    assert not any(t.holds_reply("PermissionRequest") for n, t in tables.items()
                   if n != "claude")
    assert REPLY_LANES == {n: t.reply_lane for n, t in tables.items() if t.reply_lane}
    again = HookTable.from_data(tables["claude"].to_data())
    assert again.reply_lane == "PermissionRequest"


def test_a_reply_lane_must_name_a_mapped_event():
    doc = {"min_engine_version": "0.1", "identity": {"process_names": ["x"]}, "capture": {},
           "hooks": {"reply_lane": "Nope",
                     "map": [{"event": "Ask", "claim": {"state": "blocked"}}]}}
    with pytest.raises(ManifestError, match="reply_lane"):
        from_dict("x", doc)
    doc["hooks"]["reply_lane"] = "Ask"
    assert from_dict("x", doc).reply_lane == "Ask"


def test_no_caller_names_the_claude_permission_request_itself():
    pattern = re.compile(r"==\s*\"claude\"\s+and\s+\w*\.?kind\s*==\s*\"PermissionRequest\"")
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if pattern.search(
        p.read_text())]
    assert offenders == []
