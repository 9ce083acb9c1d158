"""Notifications from the hook path: one per state run, the marker written first."""

from __future__ import annotations

import subprocess
import sys
import time


def _setup(srv, on='["blocked", "done"]'):
    log = srv.root / "fired.log"
    rec = srv.root / "rec.sh"
    rec.write_text(f'#!/bin/sh\ncat >/dev/null\necho "$TMA_STATE $TMA_PANE" >> {log}\n')
    rec.chmod(0o755)
    srv.config.write_text(f"[notify]\nfrom_event = true\non = {on}\ncommand = \"{rec}\"\n")
    return log


def _fired(log) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _event_argv(srv, kind, pane):
    return [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "event", "--agent", "fake", "--kind", kind, "--pane", pane]


def test_five_concurrent_events_for_one_blocked_run_ring_once(srv):
    log = _setup(srv)
    pane = srv.agent_pane()
    env = dict(srv.env, TMA_HOOK_STRICT="1")
    procs = [subprocess.Popen(_event_argv(srv, "Ask", pane), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for _ in range(5)]
    for p in procs:
        out, err = p.communicate(b"{}", timeout=30)
        assert p.returncode == 0 and out == b"", err
    assert srv.option(pane, "@agent_state") == "blocked"
    assert _fired(log) == [f"blocked {pane}"]


def test_block_answer_finish_rings_twice(srv):
    log = _setup(srv)
    pane = srv.agent_pane()
    for kind in ("Work", "Ask", "Ask", "Work", "Stop", "Stop"):
        res = srv.tma("event", "--agent", "fake", "--kind", kind, "--pane", pane, input="{}",
                      env={"TMA_HOOK_STRICT": "1"})
        assert res.returncode == 0 and res.stdout == ""
        time.sleep(0.005)
    assert _fired(log) == [f"blocked {pane}", f"done {pane}"]


def test_an_idle_to_idle_second_completion_rings_done(srv):
    log = _setup(srv, on='["done"]')
    pane = srv.agent_pane()
    for kind in ("Work", "Stop"):
        srv.tma("event", "--agent", "fake", "--kind", kind, "--pane", pane, input="{}")
    srv.tmux("set-option", "-p", "-u", "-t", pane, "@agent_attention")  # the user looked
    time.sleep(0.01)
    srv.tma("event", "--agent", "fake", "--kind", "Stop", "--pane", pane, input="{}")
    assert _fired(log) == [f"done {pane}", f"done {pane}"]


def test_muted_panes_consume_the_marker_silently(srv):
    log = _setup(srv)
    pane = srv.agent_pane()
    srv.tmux("set-option", "-p", "-t", pane, "@agent_mute_until", "99999999999999")
    srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", pane, input="{}")
    assert _fired(log) == []
    assert srv.option(pane, "@agent_notified_at") != ""


def test_off_by_default(srv):
    log = srv.root / "fired.log"
    rec = srv.root / "rec.sh"
    rec.write_text(f'#!/bin/sh\necho x >> {log}\n')
    rec.chmod(0o755)
    srv.config.write_text(f'[notify]\ncommand = "{rec}"\n')
    pane = srv.agent_pane()
    srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", pane, input="{}")
    assert not log.exists()
    srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", pane, input="{}",
            env={"TMA_NOTIFY_FROM_EVENT": "1"})
    assert log.exists()
