"""A hook claim against the screen, on a private server with real `tma event` hooks:
what `debug explain` says held the pane, the decay windows the config sets, and the
poll cycle re-reading a claim once its window has closed (issue 22)."""

from __future__ import annotations

import json
import time

import pytest


def _event(srv, kind: str, pane: str) -> None:
    res = srv.tma("event", "--agent", "fake", "--kind", kind, "--pane", pane, input="{}")
    assert res.returncode == 0 and res.stdout == "", res.stderr


def _explain(srv, pane: str) -> dict:
    return json.loads(srv.tma("debug", "explain", pane, "--json", check=True).stdout)


def _state(srv, pane: str) -> tuple[str, str]:
    return srv.option(pane, "@agent_state"), srv.option(pane, "@agent_source")


@pytest.mark.tmux_contract
def test_explain_names_the_hook_event_that_holds_the_pane(srv):
    jsonschema = pytest.importorskip("jsonschema")
    from tests.helpers.schemas import _schema

    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")  # contrary chrome: the claim holds anyway
    _event(srv, "Work", pane)
    assert srv.option(pane, "@tma_hook_event") == "Work"
    doc = _explain(srv, pane)
    jsonschema.validate(doc, _schema("explain.schema.json"))
    assert (doc["state"], doc["source"], doc["action"]) == ("working", "hook", "hold")
    claim = doc["hook_claim"]
    assert claim["event"] == "Work" and claim["agent"] == "fake" and claim["state"] == "working"
    assert 0 <= claim["age_ms"] < 30_000 and claim["decay_ms"] == 60_000
    assert claim["past_decay"] is False
    assert doc["winning"].startswith("hook event Work from fake: working claimed ")
    assert "decay window 60s" in doc["winning"]
    text = srv.tma("debug", "explain", pane, check=True).stdout
    assert "[hook event Work from fake" in text
    # a later event names itself; a blocked claim is measured against blocked_decay
    _event(srv, "Ask", pane)
    claim = _explain(srv, pane)["hook_claim"]
    assert (claim["event"], claim["state"], claim["decay_ms"]) == ("Ask", "blocked", 300_000)


def test_explain_names_no_hook_claim_once_the_screen_decided(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-BLOCKED here\n")
    doc = _explain(srv, pane)
    assert doc["hook_claim"] is None and doc["source"] == "capture"
    assert doc["winning"]  # the rule that matched


@pytest.mark.parametrize("decay,expect", [(1, ("idle", "capture")), (60, ("working", "hook"))])
def test_hook_decay_secs_sets_how_long_a_claim_stands(srv, decay, expect):
    """A working claim with idle chrome under it: past `[fold] hook_decay_secs` the
    screen decides, inside it the claim holds."""
    srv.config.write_text(f"[fold]\nhook_decay_secs = {decay}\ndwell_secs = 0\n"
                          "freshness_secs = 1\n")
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")
    _event(srv, "Work", pane)
    time.sleep(1.4)
    srv.ls()
    assert _state(srv, pane) == expect
    if decay == 60:
        assert _explain(srv, pane)["hook_claim"]["decay_ms"] == 60_000


def test_a_claim_past_its_window_is_re_read_on_an_unchanged_screen(srv):
    """The capture skip reuses a stamp when the window has been quiet since it was
    written; a hook claim past its decay window is read again all the same, since the
    contrary chrome sitting there since before the claim now decides."""
    srv.config.write_text("[fold]\nblocked_decay_secs = 1\nfreshness_secs = 1\n")
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")
    srv.ls()  # read once: the pane carries a viewport hash
    assert srv.option(pane, "@agent_hash") != ""
    srv.next_second()  # the screen's last output is a whole second before the claim
    _event(srv, "Ask", pane)
    assert _state(srv, pane) == ("blocked", "hook")
    time.sleep(1.3)  # past freshness and blocked_decay; no output since the claim
    res = srv.tma("ls", "--json", "--debug-timing", check=True)
    assert _state(srv, pane) == ("idle", "capture"), res.stderr
