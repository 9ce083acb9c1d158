"""`tma debug`'s offline work (tma.runtime.debug) and its text (tma.ui.debug), on a real
Session and the bundled manifests: no tmux."""

from __future__ import annotations

from pathlib import Path

import pytest

from tma.runtime import debug
from tma.runtime.session import Globals, Session
from tma.ui import debug as render

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


@pytest.fixture
def session(tmp_path, monkeypatch):
    for key in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, str(tmp_path / key.lower()))
    monkeypatch.delenv("TMA_CONFIG", raising=False)
    warned: list[str] = []
    s = Session(Globals(), warn=warned.append)
    s.warned = warned  # type: ignore[attr-defined]
    return s


def test_a_capture_explains_and_renders_the_verdict(session):
    cap = CAPTURES / "pi-0.73.1_unknown_shell_after_exit.txt"
    doc = debug.explain_capture(session, str(cap), None, None)
    assert (doc["agent"], doc["capture"]) == ("pi", str(cap))
    assert doc["claims"].get("idle") and (doc["state"], doc["source"]) == ("unknown", "process")
    text = render.explain(doc)
    assert text.startswith("agent: pi\n") and "\nrules:\n" in text
    assert "\nverdict: unknown (source process, " in text and text.endswith("\n")


def test_a_prior_is_held(session, tmp_path):
    from tma.core import fixture

    cap = tmp_path / "x.txt"
    cap.write_text(fixture.render({"agent": "pi", "title": "t", "captured_at": "1000"},
                                  "just some output with no chrome\n"))
    doc = debug.explain_capture(session, str(cap), None, "idle")
    assert (doc["state"], doc["action"]) == ("idle", "hold")


def test_refusals_say_why(session, tmp_path):
    with pytest.raises(debug.DebugError, match="cannot read .*nope.txt"):
        debug.explain_capture(session, str(tmp_path / "nope.txt"), None, None)
    cap = CAPTURES / "pi-0.73.1_unknown_shell_after_exit.txt"
    with pytest.raises(debug.DebugError, match="no manifest for agent 'ghost' \\(loaded: "):
        debug.explain_capture(session, str(cap), "ghost", None)


def test_an_unknown_trigger_is_refused_before_the_config_is_read(tmp_path):
    s = Session(Globals(config=str(tmp_path / "missing.toml")))
    with pytest.raises(debug.DebugError, match="unknown trigger 'bogus' \\(expected one of: "):
        debug.notify_test(s, "bogus", "/")


def test_the_transition_ring_renders_one_line_each():
    import time

    doc = {"recorded": 3, "cap": 256, "transitions": [
        {"at": 1_000_123, "pane": "%1", "agent": "claude", "from": None, "to": "working",
         "detail": "", "source": "hook"},
        {"at": 2_000_000, "pane": "%1", "agent": None, "from": "working", "to": "blocked",
         "detail": "permission", "source": None}]}

    def clock(secs: int) -> str:
        return time.strftime("%H:%M:%S", time.localtime(secs))  # the local clock, as shown

    assert render.transitions(doc) == (
        "3 transitions recorded, the last 2 kept (ring of 256)\n"
        f"{clock(1000)}.123  %1  claude  (new) -> working  [hook]\n"
        f"{clock(2000)}.000  %1  ?  working -> blocked/permission\n")
