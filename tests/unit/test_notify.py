"""Notification payload, env, command resolution and the escaping of agent text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from tma.runtime import config
from tma.runtime.notify import (
    backends as notify_backends,
    dispatch as notify,
    gate as notify_gate,
    log as notify_log,
    note as notify_note,
)
from tma.runtime.notify.note import Note
from tma.tmux import notify as tnotify

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "notify.schema.json").read_text(encoding="utf-8"))
# a `[notify] log` line: $defs/log_line, whose properties point back at the payload's
LOG_SCHEMA = {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"],
              "properties": SCHEMA["properties"], "$ref": "#/$defs/log_line"}


def cfg_with(**table) -> config.Config:
    cfg = config.Config()
    cfg.notify = table
    return cfg


def full_note(**kw) -> Note:
    values = dict(trigger="blocked", agent="claude", pane="%3", detail="permission",
                  session="abc-123", locator="work:1.0", title="✳ fix the parser", repo="tma",
                  branch="main", since_ms=0, context_pct=42)
    values.update(kw)
    return Note(**values)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ("TMA_NOTIFY_CMD", "TMA_NOTIFY_FROM_EVENT"):
        monkeypatch.delenv(key, raising=False)


# ------------------------------------------------------------------ payload


def test_payload_key_order_is_pinned():
    assert list(notify_note.payload(full_note())) == [
        "schema", "agent", "pane", "state", "detail", "session", "locator", "title", "repo",
        "branch", "age_ms", "context_pct", "tool", "summary", "last_sentence"]
    assert tuple(SCHEMA["required"]) == notify_note.PAYLOAD_KEYS
    assert list(SCHEMA["properties"]) == list(notify_note.PAYLOAD_KEYS)


@pytest.mark.parametrize("note", [
    full_note(),
    full_note(trigger="done", detail=None, session=None, title="", repo="", branch="",
              context_pct=None, since_ms=1234),
    full_note(trigger="context_high", context_pct=91),
])
def test_payload_validates_against_the_schema(note):
    doc = notify_note.payload(note)
    jsonschema.validate(doc, SCHEMA)
    # the hand-rolled encoder is real JSON with the same content and order
    text = notify_note.dumps(doc)
    assert json.loads(text) == doc
    assert list(json.loads(text)) == list(doc)


def test_payload_values():
    doc = notify_note.payload(full_note(trigger="done", detail="", session="", title=""))
    assert doc["schema"] == 3 and doc["state"] == "done"
    assert doc["detail"] is None and doc["session"] is None
    assert doc["title"] == "" and doc["context_pct"] == 42


def test_the_log_and_the_webhook_write_an_absent_value_alike():
    """One rule for a value that does not apply: null, in the log line (the command's
    payload) and in the webhook's document alike, key for key."""
    from tma.runtime.notify import push as notify_push, sinks as notify_sinks

    note = full_note(detail=None, session=None, repo="", branch="", context_pct=None,
                     tool="", summary="")
    line = notify_note.log_record(note, 1_700_000_000_123)
    cfg = cfg_with(webhook={"url": "https://hooks.example.com/x"})
    doc = notify_push.job("webhook", notify_gate.push(cfg, "webhook"), note,
                          notify_sinks.Ring(cfg=cfg, now=1_700_000_000_123))["doc"]
    shared = (set(line) & set(doc)) - {"schema", "at"}
    assert {"detail", "session", "repo", "branch", "context_pct", "tool", "summary"} <= shared
    assert {k: line[k] for k in shared} == {k: doc[k] for k in shared}
    assert line["repo"] is None and line["branch"] is None
    jsonschema.validate(line, LOG_SCHEMA)


def test_schema_rejects_unknown_and_missing_keys():
    doc = notify_note.payload(full_note())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(doc, extra=1), SCHEMA)
    short = dict(doc)
    del short["repo"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(short, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(doc, state="idle"), SCHEMA)


def test_log_record_puts_at_after_schema():
    line = notify_note.log_record(full_note(), 1_700_000_000_123)
    assert list(line) == ["schema", "at"] + list(notify_note.PAYLOAD_KEYS[1:])
    assert line["at"] == 1_700_000_000_123
    jsonschema.validate(line, LOG_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(notify_note.payload(full_note()), LOG_SCHEMA)  # no `at`


def test_dumps_escapes_hostile_strings():
    hostile = 'a"b\\c\nd\x00e\x1b[31m\u2028é'
    doc = {"title": hostile, "n": None, "t": True, "i": 7}
    assert json.loads(notify_note.dumps(doc)) == doc


# ------------------------------------------------------------------ env


def test_env_mapping_full():
    assert notify_note.env(full_note(since_ms=1500)) == {
        "TMA_AGENT": "claude", "TMA_PANE": "%3", "TMA_STATE": "blocked",
        "TMA_LOCATOR": "work:1.0", "TMA_TITLE": "✳ fix the parser", "TMA_AGE_MS": "1500",
        "TMA_DETAIL": "permission", "TMA_SESSION": "abc-123", "TMA_REPO": "tma",
        "TMA_BRANCH": "main", "TMA_CONTEXT_PCT": "42",
    }


def test_env_optional_keys_unset_when_empty():
    env = notify_note.env(full_note(detail=None, session="", repo="", branch="", context_pct=None,
                               title=""))
    assert set(env) == set(notify_note.ENV_ALWAYS)
    assert env["TMA_TITLE"] == ""


def test_child_env_drops_inherited_optional_keys(monkeypatch):
    monkeypatch.setenv("TMA_DETAIL", "stale")
    monkeypatch.setenv("TMA_REPO", "stale")
    child = notify_note.child_env(full_note(detail=None, repo=""))
    assert "TMA_DETAIL" not in child and "TMA_REPO" not in child
    assert child["PATH"] == os.environ["PATH"]


def test_context_pct_zero_is_present():
    assert notify_note.env(full_note(context_pct=0))["TMA_CONTEXT_PCT"] == "0"
    assert notify_note.payload(full_note(context_pct=0))["context_pct"] == 0


# ------------------------------------------------------------------ decisions


def test_command_resolution_precedence(monkeypatch):
    cfg = cfg_with(command="global", blocked={"command": "for-blocked"},
                   context_high={"threshold": 80, "command": "for-context"})
    assert notify_gate.command_for(cfg, "blocked") == "for-blocked"
    assert notify_gate.command_for(cfg, "done") == "global"
    assert notify_gate.command_for(cfg, "context_high") == "for-context"
    assert notify_gate.command_for(cfg_with(), "blocked") is None
    assert notify_gate.command_for(cfg_with(done={}), "done") is None
    assert notify_gate.command_for(cfg_with(command=""), "done") is None
    monkeypatch.setenv("TMA_NOTIFY_CMD", "from-env")
    for trig in ("blocked", "done", "context_high"):
        assert notify_gate.command_for(cfg, trig) == "from-env"
    assert notify_gate.command_for(cfg_with(), "done") == "from-env"
    monkeypatch.setenv("TMA_NOTIFY_CMD", "")
    assert notify_gate.command_for(cfg, "blocked") == "for-blocked"


def test_enabled_triggers():
    assert notify_gate.enabled(cfg_with(), "blocked")
    assert not notify_gate.enabled(cfg_with(), "done")
    assert notify_gate.enabled(cfg_with(on=["done"]), "done")
    assert not notify_gate.enabled(cfg_with(on=["done"]), "blocked")
    assert not notify_gate.enabled(cfg_with(on=[]), "blocked")
    assert not notify_gate.enabled(cfg_with(), "context_high")
    assert notify_gate.enabled(cfg_with(context_high={"threshold": 80}), "context_high")
    assert not notify_gate.enabled(cfg_with(), "working")


@pytest.mark.parametrize("env,table,expected", [
    (None, {}, False),
    (None, {"from_event": True}, True),
    ("1", {}, True),
    ("1", {"from_event": False}, True),
    ("0", {"from_event": True}, False),
    ("true", {"from_event": True}, False),
    ("", {"from_event": True}, False),
])
def test_from_event(monkeypatch, env, table, expected):
    if env is not None:
        monkeypatch.setenv("TMA_NOTIFY_FROM_EVENT", env)
    assert notify_gate.from_event(cfg_with(**table)) is expected


class _Plan:
    def __init__(self, state, set_attention=False):
        self.state = state
        self.set_attention = set_attention


@pytest.mark.parametrize("table,plan,expected", [
    ({}, _Plan("blocked"), False),  # nobody asked the hook path to fire
    ({"from_event": True}, _Plan("blocked"), True),
    ({"from_event": True, "on": []}, _Plan("blocked"), False),
    ({"from_event": True}, _Plan("idle", set_attention=True), False),  # done is opt-in
    ({"from_event": True, "on": ["done"]}, _Plan("idle", set_attention=True), True),
    ({"from_event": True, "on": ["done"]}, _Plan("idle"), False),  # no attention: not done
    ({"from_event": True, "on": ["blocked", "done"]}, _Plan("working"), False),
])
def test_the_gate_the_hook_path_calls(table, plan, expected):
    assert notify_gate.due(cfg_with(**table), plan) is expected


def test_the_hook_path_uses_this_gate():
    import inspect

    from tma.runtime import hook

    assert "notify_gate.due" in inspect.getsource(hook)
    assert not hasattr(notify, "enabled") and not hasattr(notify, "from_event")


def test_config_accepts_desktop_and_rejects_non_bool(tmp_path):
    out = config.validate("c.toml", {"notify": {"desktop": True}})
    assert out["notify"]["desktop"] is True
    with pytest.raises(config.ConfigError, match="notify.desktop"):
        config.validate("c.toml", {"notify": {"desktop": "yes"}})


# ------------------------------------------------------------------ display text


def test_message_titled_and_untitled():
    assert notify_note.message(full_note()) == "tma: claude blocked — ✳ fix the parser"
    assert notify_note.message(full_note(title="", trigger="done")) == "tma: claude done in %3"
    assert notify_note.message(full_note(title=" \x1b\x07 ")) == "tma: claude blocked in %3"


@pytest.mark.parametrize("title", [
    "#{pane_id}",
    "#(touch /tmp/x)",
    "##(touch /tmp/x)",
    "#[fg=red]x",
    "#{?pane_active,#(id),}",
    "%Y-%m-%d 100%",
    "ends with;",
    'quote " and \\ and $HOME',
])
def test_hostile_titles_cannot_form_formats(title):
    text = tnotify.escape(notify_note.message(full_note(title=title)))
    # after tmux halves every '#' run, no '#' can precede '{', '(' or '[': every '#'
    # in the escaped text belongs to a pair
    i = 0
    while i < len(text):
        if text[i] == "#":
            assert text[i + 1] == "#", text
            i += 2
        elif text[i] == "%":
            assert text[i + 1] == "%", text
            i += 2
        else:
            i += 1
    # un-doubling gives back the literal text
    assert text.replace("##", "#").replace("%%", "%") == notify_note.message(full_note(title=title))


def test_control_bytes_never_reach_tmux():
    title = "a\x1b]0;pwned\x07b\nc\rd\x00e\x9bf\x7fg\tz"
    text = tnotify.escape(notify_note.message(full_note(title=title)))
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in text)
    assert text.endswith("— a]0;pwnedbcdefgz")


def test_display_lines_quote_for_source_file():
    lines = tnotify.display_lines(["/dev/pts/3", "", "/dev/pts/9"],
                                  'tma: x blocked — #(touch /tmp/x) "q" $HOME;')
    assert lines == [
        'display-message -c "/dev/pts/3" "tma: x blocked — ##(touch /tmp/x) \\"q\\" \\$HOME;"',
        'display-message -c "/dev/pts/9" "tma: x blocked — ##(touch /tmp/x) \\"q\\" \\$HOME;"',
    ]


def test_parse_targets():
    fr = tnotify.FRAME
    out = "\n".join([fr.record("A", ["/dev/pts/1", "0"]), fr.record("A", ["/dev/pts/2", "0"]),
                     fr.record("A", ["client-4242", "1"]),  # a control client: no person
                     fr.record("T", ["%3", "/dev/pts/7"]), ""])
    assert tnotify.parse_targets(out) == (["/dev/pts/1", "/dev/pts/2"], "/dev/pts/7")
    assert tnotify.parse_targets(out, "%3") == (["/dev/pts/1", "/dev/pts/2"], "/dev/pts/7")
    assert tnotify.parse_targets(out, "%4") == (["/dev/pts/1", "/dev/pts/2"], "")
    assert tnotify.parse_targets("") == ([], "")
    lines = tnotify.targets_lines("%3", True)
    assert lines[0].startswith("list-clients -F ") and "pane_tty" in lines[1]
    assert len(tnotify.targets_lines("%3", False)) == 1


# ------------------------------------------------------------------ OSC 9


def test_osc9_layout_and_no_title():
    data = notify_note.osc9(full_note(title="SECRET-TITLE"))
    assert data == b"\x1b]9;claude blocked\x07"
    assert b"SECRET" not in data


def test_osc9_strips_controls_and_caps_the_body():
    data = notify_note.osc9(full_note(agent="a\x07b\x1b]0;x\x9c"))
    assert data == b"\x1b]9;ab]0;x blocked\x07"
    long = notify_note.osc9(full_note(agent="é" * 300))
    body = long[4:-1]
    assert len(body) <= notify_note.OSC_MAX
    body.decode("utf-8")  # never cut inside a character
    assert long.startswith(b"\x1b]9;") and long.endswith(b"\x07")


# ------------------------------------------------------------------ failure record


def test_runtime_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    assert notify_log.runtime_dir() == str(tmp_path / "xdg" / "tma")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert notify_log.runtime_dir() == str(tmp_path / "tmp" / f"tma-{os.getuid()}")
    monkeypatch.delenv("TMPDIR")
    assert notify_log.runtime_dir() == f"/tmp/tma-{os.getuid()}"


def test_failure_record_goes_to_a_private_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    notify_log.record_failure("false", "exit status 1", at=5)
    d = tmp_path / f"tma-{os.getuid()}"
    assert (d.stat().st_mode & 0o777) == 0o700
    assert notify_log.last_failure()["reason"] == "exit status 1"
    os.chmod(d, 0o755)  # opened up (or made by someone else): tma writes nothing there
    notify_log.clear_failure()
    notify_log.record_failure("false", "exit status 2", at=6)
    assert notify_log.last_failure() is None


def test_failure_record_round_trip(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert notify_log.last_failure() is None
    notify_log.record_failure("false", "exit status 1", at=5)
    notify_log.record_failure("exit 3", "exit status 3", at=6)
    assert notify_log.last_failure() == {"at": 6, "reason": "exit status 3", "command": "exit 3"}
    assert (tmp_path / "tma").stat().st_mode & 0o777 == 0o700
    notify_log.clear_failure()
    assert notify_log.last_failure() is None
    notify_log.clear_failure()  # absent: still silent


def test_last_failure_tolerates_garbage(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    (tmp_path / "tma").mkdir()
    (tmp_path / "tma" / "notify-error").write_text("not json")
    assert notify_log.last_failure() is None
    (tmp_path / "tma" / "notify-error").write_text("[1]")
    assert notify_log.last_failure() is None


# ------------------------------------------------------------------ desktop


def test_desktop_argv(monkeypatch, tmp_path):
    for name in ("notify-send", "osascript"):
        exe = tmp_path / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    note = full_note(title="#(x) \x1b title")
    linux = notify_backends.desktop_argv(note, platform="linux")
    assert linux == [str(tmp_path / "notify-send"), "--app-name=tma", "tma: claude blocked",
                     "#(x)  title"]
    mac = notify_backends.desktop_argv(note, platform="darwin")
    assert mac[0] == str(tmp_path / "osascript")
    assert mac[-2:] == ["tma: claude blocked", "#(x)  title"]
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert notify_backends.desktop_argv(note, platform="linux") is None


@pytest.mark.parametrize("name", ["dispatch", "gate", "note", "log", "backends"])
def test_module_is_import_light(name):
    text = (ROOT / "src" / "tma" / "runtime" / "notify" / f"{name}.py").read_text()
    for mod in ("json", "subprocess", "re", "dataclasses", "typing", "time", "signal"):
        assert f"\nimport {mod}\n" not in text and f"\nfrom {mod} " not in text


def test_since_ms_means_one_thing_the_payload_age_is_age_ms():
    """ls --json's since_ms is an epoch time; the payload's age is age_ms (schema 2)."""
    doc = notify_note.payload(full_note(since_ms=1500))
    assert doc["schema"] == 3 and doc["age_ms"] == 1500 and "since_ms" not in doc
    assert "TMA_SINCE_MS" not in notify_note.env(full_note()) and "TMA_AGE_MS" in notify_note.ENV_ALWAYS
    renamed = dict(doc, since_ms=doc.pop("age_ms"))
    with pytest.raises(jsonschema.ValidationError):  # a schema-1 payload does not validate
        jsonschema.validate(renamed, SCHEMA)


def _exes(tmp_path, *names, script="#!/bin/sh\n"):
    for name in names:
        exe = tmp_path / name
        exe.write_text(script)
        exe.chmod(0o755)


def test_the_body_is_no_markup_for_notify_send(monkeypatch, tmp_path):
    _exes(tmp_path, "notify-send")
    monkeypatch.setenv("PATH", str(tmp_path))
    argv = notify_backends.desktop_argv(full_note(title='<a href="x">go</a> & co'), platform="linux")
    assert argv[-1] == '&lt;a href="x"&gt;go&lt;/a&gt; &amp; co'


def test_the_summary_rides_the_message_and_the_desktop_body(monkeypatch, tmp_path):
    note = full_note(tool="Bash", summary="Bash: rm -rf <build>/\x1b[2J")
    assert notify_note.message(note) == \
        "tma: claude blocked — ✳ fix the parser: Bash: rm -rf <build>/[2J"
    assert notify_note.message(full_note(title="", summary="Edit: a.py")) == \
        "tma: claude blocked in %3: Edit: a.py"
    _exes(tmp_path, "notify-send")
    monkeypatch.setenv("PATH", str(tmp_path))
    argv = notify_backends.desktop_argv(note, platform="linux")
    assert argv[-1] == "Bash: rm -rf &lt;build&gt;/[2J\n✳ fix the parser"  # the ask, then where


def test_sink_resolution(monkeypatch, tmp_path):
    from types import SimpleNamespace as NS

    monkeypatch.delenv("TMA_NOTIFY_CMD", raising=False)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("PATH", str(tmp_path))
    import sys

    monkeypatch.setattr(sys, "platform", "linux")
    assert notify_backends.sink(NS(notify={"command": "x"}), "blocked", daemon=True) == ("command", "x")
    assert notify_backends.sink(NS(notify={}), "blocked", daemon=True)[0] == "none"  # no notify-send
    _exes(tmp_path, "notify-send")
    assert notify_backends.sink(NS(notify={}), "blocked", daemon=True)[0] == "none"  # no session bus
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/x")
    assert notify_backends.sink(NS(notify={}), "blocked", daemon=True) == ("desktop", "notify-send")
    assert notify_backends.sink(NS(notify={}), "blocked", daemon=False)[0] == "none"  # auto: daemon's
    assert notify_backends.sink(NS(notify={"desktop": True}), "done") == ("desktop", "notify-send")
    assert notify_backends.sink(NS(notify={"desktop": False}), "done", daemon=True)[0] == "none"
    assert notify_backends.sink(NS(notify={"done": {"command": "d"}}), "done") == ("command", "d")
    monkeypatch.setenv("TMA_NOTIFY_CMD", "env-wins")
    assert notify_backends.sink(NS(notify={"desktop": False}), "done") == ("command", "env-wins")


def test_the_jump_action_runs_tma_jump_on_the_same_server(monkeypatch, tmp_path):
    """The wrapper for real: a fake notify-send answering `jump`, a fake tma recording."""
    import subprocess

    out = tmp_path / "out"
    _exes(tmp_path, "notify-send", script="#!/bin/sh\necho \"$@\" > " + str(out) +
          ".ns\nprintf 'jump\\n'\n")
    _exes(tmp_path, "tma", script="#!/bin/sh\necho \"$@\" > " + str(out) + "\n")
    monkeypatch.setenv("PATH", str(tmp_path) + ":/usr/bin:/bin")
    note = full_note()
    argv = notify_backends.desktop_argv(note, platform="linux", actions=True)
    env = dict(notify_note.child_env(note), **notify_backends.jump_env(["--socket-name", "x y"],
                                                          str(tmp_path / "tma")))
    assert subprocess.run(argv, env=env, timeout=10).returncode == 0
    assert out.read_text().split() == ["--socket-name", "x", "y", "jump", "--pane", note.pane]
    assert "--wait" in (tmp_path / "out.ns").read_text()
    # dismissed (no action printed): no jump
    out.unlink()
    _exes(tmp_path, "notify-send", script="#!/bin/sh\nexit 0\n")
    assert subprocess.run(argv, env=env, timeout=10).returncode == 0
    assert not out.exists()
    # a notify-send that fails is the sink's failure
    _exes(tmp_path, "notify-send", script="#!/bin/sh\nexit 4\n")
    assert subprocess.run(argv, env=env, timeout=10).returncode == 4


def test_the_log_sink_never_blocks_on_a_fifo_without_a_reader(tmp_path):
    """The daemon's loop and an agent's hook write this sink: a FIFO with no reader must
    fail at once, not block."""
    import os
    import threading

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    note = notify_note.Note(trigger="blocked", agent="claude", pane="%1")
    done = threading.Event()
    worker = threading.Thread(target=lambda: (notify_log.append_log(str(fifo), note, 1), done.set()),
                              daemon=True)
    worker.start()
    assert done.wait(3), "append_log blocked on a FIFO with no reader"


# ------------------------------------------------------------------ desktop actions


def test_desktop_actions_setting():
    from types import SimpleNamespace as NS

    assert notify_gate.desktop_actions(NS(notify={})) == "answer"  # the default
    assert notify_gate.desktop_actions(NS(notify={"desktop_actions": True})) == "answer"
    assert notify_gate.desktop_actions(NS(notify={"desktop_actions": "jump"})) == "jump"
    assert notify_gate.desktop_actions(NS(notify={"desktop_actions": False})) == "none"
    for ok in (True, False, "jump"):
        assert config.validate("c.toml", {"notify": {"desktop_actions": ok}})


def test_the_body_is_one_line_of_the_summary_then_where():
    note = full_note(summary="Bash: rm -rf build/\n&& echo <gone>", title="")
    assert notify_backends.body_text(note) == "Bash: rm -rf build/\nin %3"
    assert notify_backends.body_text(full_note()) == "✳ fix the parser"
    long = notify_backends.one_line("x" * 500)
    assert len(long) == notify_backends.SUMMARY_MAX and long.endswith("…")
    assert notify_backends.one_line("\n \n\x1b[31mred\x1b[0m\nmore") == "[31mred[0m"


def test_the_answer_argv(monkeypatch, tmp_path):
    _exes(tmp_path, "notify-send", "timeout")
    monkeypatch.setenv("PATH", str(tmp_path))
    note = full_note(summary="Bash: ls")
    argv = notify_backends.desktop_argv(note, platform="linux", actions=True,
                                        answers=(("approve", "Approve"), ("deny", "Deny"),
                                                 ("steer", "Steer")))
    assert argv[4:12] == [str(tmp_path / "timeout"), "--foreground", "--preserve-status",
                          "-s", "INT", "-k", "5", str(notify_backends.WAIT_SECS)]
    assert argv[12:] == [str(tmp_path / "notify-send"), "--app-name=tma", "--wait",
                         "--action=approve=Approve", "--action=deny=Deny",
                         "--action=default=Jump", "tma: claude blocked",
                         "Bash: ls\n✳ fix the parser"]  # steer is never a button
    plain = notify_backends.desktop_argv(note, platform="linux", actions=True)
    assert "--action=jump=Jump to the pane" in plain and "--action=approve=Approve" not in plain


def test_answer_buttons_follow_the_gate():
    from types import SimpleNamespace as NS

    from tma.core import codec
    from tma.daemon.notifier import answer_buttons
    from tma.runtime.act import registry as actions

    aset = actions.load(user="/nonexistent")
    pane = NS(pane_id="%3", options={}, current_path="/", title="t")
    blocked = codec.Stamp(state="blocked", detail="permission", since=5)
    assert answer_buttons("claude", pane, blocked, aset) == (
        ("approve", "Approve"), ("deny", "Deny"))
    question = codec.Stamp(state="blocked", detail="question", since=5)
    assert answer_buttons("claude", pane, question, aset) == ()
    assert answer_buttons("pi", pane, blocked, aset) == ()  # no prompt arm
    assert answer_buttons("claude", pane, None, aset) == ()


class _FileSink:
    """A registered sink that rings by appending to a file (or fails, as told)."""

    def __init__(self, name: str, path: Path, how: str = "ok") -> None:
        self.NAME, self.path, self.how = name, path, how

    def live(self, cfg) -> bool:
        return True

    def fire(self, ring, note) -> None:
        pass

    def test(self, ring, note):
        if self.how == "raise":
            raise RuntimeError("no route")
        with open(self.path, "a") as fh:
            fh.write(f"{note.trigger} {note.pane}\n")
        if self.how == "pair":
            return [f"{self.NAME} answered 500"], False
        if self.how == "line":
            return [f"{self.NAME} failed: timed out"]
        return [f"{self.NAME} posted to {self.path}"]


def test_notify_test_reports_every_registered_sink_and_fails_if_one_fails(monkeypatch,
                                                                           tmp_path):
    """No server, no command: the registered sinks alone decide the exit; every one is
    tried and reported even after one fails."""
    from tma.runtime.notify import sinks as notify_sinks

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    hit = tmp_path / "hits"
    cfg = cfg_with(desktop=False, message=False)
    note = full_note()
    good = _FileSink("webhook", hit)
    monkeypatch.setattr(notify_sinks, "registry", lambda: [good])
    lines, rc = notify.run_test(cfg, note, 1)
    assert (lines[1:], rc) == (["command none: desktop = false and no command",
                                f"webhook posted to {hit}"], 0)
    for bad, said in ((_FileSink("ntfy", hit, "raise"), "ntfy failed: no route"),
                      (_FileSink("ntfy", hit, "pair"), "ntfy answered 500"),
                      (_FileSink("ntfy", hit, "line"), "ntfy failed: timed out")):
        monkeypatch.setattr(notify_sinks, "registry", lambda bad=bad: [bad, good])
        lines, rc = notify.run_test(cfg, note, 1)
        assert (lines[2:], rc) == ([said, f"webhook posted to {hit}"], 1)
    assert hit.read_text().count("blocked %3\n") == 6  # every sink that did not raise rang
    # nothing live at all is not a success
    monkeypatch.setattr(notify_sinks, "registry", lambda: [])
    assert notify.run_test(cfg, note, 1)[1] == 1


def test_the_last_sentence_rides_the_message_the_desktop_body_and_the_payload():
    note = full_note(summary="Bash: ls", last_sentence="I will list\x1b[2J the files.")
    assert notify_note.message(note) == \
        "tma: claude blocked — ✳ fix the parser: Bash: ls — “I will list[2J the files.”"
    assert notify_backends.body_text(note) == "Bash: ls\nI will list[2J the files.\n✳ fix the parser"
    assert notify_note.payload(note)["last_sentence"] == "I will list\x1b[2J the files."
    assert notify_note.env(note)["TMA_LAST_SENTENCE"] == "I will list\x1b[2J the files."
    # none: no key in the environment, null in the payload, nothing on the message
    assert notify_note.payload(full_note())["last_sentence"] is None
    assert "TMA_LAST_SENTENCE" not in notify_note.env(full_note())
    assert "“" not in notify_note.message(full_note())


def test_ntfy_carries_a_click_url_to_the_panes_card_with_web_url():
    """`[web] url` set: ntfy's Click header opens `tma web`'s page on the pane's card
    (`URL#pane=HOST:%N`); without it, no Click header."""
    from tma.runtime.notify import push as notify_push, sinks as notify_sinks

    cfg = cfg_with(ntfy={"url": "https://ntfy.example.com/topic"})
    note = full_note(host="devbox")
    plain = notify_push.job("ntfy", notify_gate.push(cfg, "ntfy"), note,
                            notify_sinks.Ring(cfg=cfg, now=1))
    assert "Click" not in plain["headers"]
    cfg.web = {"url": "https://box.tailnet.example/"}
    got = notify_push.job("ntfy", notify_gate.push(cfg, "ntfy"), note,
                          notify_sinks.Ring(cfg=cfg, now=1))
    assert got["headers"]["Click"] == "https://box.tailnet.example/#pane=devbox:%3"
