"""Keys that follow typed text go in a second spawn, TEXT_SETTLE_S later (tma.tmux.keys)."""

from __future__ import annotations

import time

import pytest

from tma.tmux import keys


class _Server:
    def __init__(self, err: str = "") -> None:
        self.calls: list[tuple[float, list[str]]] = []
        self.err = err

    def source(self, lines):
        self.calls.append((time.monotonic(), list(lines)))
        return "", self.err


def test_after_text_splits_at_the_last_text_slot():
    assert keys.after_text(["1"]) == (["1"], [])
    assert keys.after_text(["/compact", "Enter"]) == (["/compact", "Enter"], [])
    assert keys.after_text(["{text}", "Enter"]) == (["{text}"], ["Enter"])
    assert keys.after_text(["C-u", "{text}"]) == (["C-u", "{text}"], [])


def test_enter_after_text_is_a_second_spawn_after_the_pause():
    srv = _Server()
    keys.send(srv, "%3", ["{text}", "Enter"], "hello")
    (t1, first), (t2, second) = srv.calls
    assert first == ['send-keys -t %3 -l -- "hello"']
    assert second == ['send-keys -t %3 -- "Enter"']
    assert t2 - t1 >= keys.TEXT_SETTLE_S


def test_no_text_is_one_spawn():
    srv = _Server()
    keys.send(srv, "%3", ["/compact", "Enter"])
    assert len(srv.calls) == 1


def test_a_refused_text_sends_nothing_after_it():
    srv = _Server(err="can't find pane: %3")
    with pytest.raises(keys.TmuxError):
        keys.send(srv, "%3", ["{text}", "Enter"], "hello")
    assert len(srv.calls) == 1
