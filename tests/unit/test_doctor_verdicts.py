"""doctor's verdicts are decided once, in the document (tma.runtime.doctor.judge), and
the text report (tma.ui.doctor) renders them: built here from documents, no tmux."""

from __future__ import annotations

import copy

import pytest

from tma.runtime import doctor
from tma.ui import doctor as ui

#: A clean gathered document (before `judge`): a quiet server, no agent wired.
CLEAN = {
    "schema": 1,
    "config": {"path": "/c/config.toml", "error": None, "changed_at": None,
               "daemon_loaded_at": None, "daemon_stale": False},
    "tmux": doctor.tmux_facts("3.4", True),
    "ambient_driver": {"polling": False, "last_poll_age_ms": None, "status_right": "",
                       "status_command": None, "fix": "#(/bin/tma status)",
                       "daemon_segment": {"reads": False, "live": False, "until_ms": None}},
    "clients": {"attached": 1},
    "notify": {"last_failure": None, "last_failure_age_ms": None, "dispatcher": None,
               "message_line": True, "sink": {}},
    "daemon": None,
    "hook_wiring": [{"agent": "claude", "status": "not_installed", "reasons": []}],
    "tmux_hooks": [{"hook": "after-select-pane", "present": False, "hook_state": "missing",
                    "problem": "tmux hook after-select-pane: missing"}],
    "tmux_hooks_error": None, "tmux_hooks_persistence": "missing",
    "wrapper": {"path": "/b/tma-hook", "reference": "/b/tma-hook", "present": False,
                "exists": False, "bare": False, "problem": "/b/tma-hook is missing"},
    "manifests": {"ok": True, "loaded": 1, "issues": []},
    "process_name_issues": [], "stamp_issues": [], "foreign_panes": [], "ignored_panes": [],
    "nested_multiplexers": [], "remote_panes": [], "agents": [],
    "process_walk": {"ok": True, "error": None},
}


def judged(**changes) -> dict:
    doc = copy.deepcopy(CLEAN)
    doc.update(changes)
    return doctor.judge(doc)


def test_a_clean_document_passes_and_says_so():
    doc = judged()
    assert doc["verdict"] == {"counted": [], "wiring_matters": False, "exit_code": 0,
                              "summary": "0 warning(s), 0 pane(s) below the tier their "
                                         "manifest supports"}
    assert doc["warnings"] == 0 and doc["below_expected_tier"] == 0
    text = ui.render(doc)
    assert "ambient: NOT polling — status-right does not run `tma status`; add " \
           "#(/bin/tma status) to status-right\n" in text
    # nothing is wired: the missing hooks and wrapper are notes, not ✗
    assert "hooks:   not installed — no agent is wired" in text
    assert "wrapper: /b/tma-hook not written yet\n" in text and "✗" not in text


def test_once_an_agent_is_wired_the_hooks_and_the_wrapper_count():
    doc = judged(hook_wiring=[{"agent": "claude", "status": "wired", "reasons": []}])
    assert doc["verdict"]["counted"] == ["tmux hook after-select-pane", "wrapper"]
    assert doc["verdict"]["wiring_matters"] is True and doc["verdict"]["exit_code"] == 1
    text = ui.render(doc)
    assert "hooks:   ✗ after-select-pane (missing)\n" in text
    assert "run `tma install-hooks --all` to reinstall them" in text
    assert "wrapper: /b/tma-hook ✗ missing\n" in text


def test_a_pane_below_its_tier_fails_the_gate_without_a_warning():
    agent = {"pane": "%1", "agent": "claude", "locator": "s:0.0", "state": None,
             "source": None, "evidence_age_ms": None, "hook_status": "not_installed",
             "hooks_wired": False, "hooks_pending_restart": None, "model": None,
             "window_covered": None, "endpoint_ok": None, "api": None,
             "act_uses_api": None, "permission_request": None, "hook_demoted": False,
             "tier": 1, "tier_reason": "hooks not installed: run tma install-hooks claude"}
    doc = judged(agents=[agent])
    assert (doc["warnings"], doc["below_expected_tier"]) == (0, 1)
    assert doc["verdict"]["exit_code"] == 1
    assert doc["verdict"]["summary"] == ("0 warning(s), 1 pane(s) below the tier their "
                                         "manifest supports")
    assert "  %1 claude s:0.0 tier 1 unstamped\n" in ui.render(doc)


def test_a_status_command_that_does_not_run_counts_and_names_the_fix():
    amb = dict(CLEAN["ambient_driver"], polling=True, fix=None, status_command={
        "program": "tma", "path": "/usr/bin", "resolved": None, "runs": False,
        "problem": "tma is not found on the PATH tmux runs status-right with",
        "fix": "set -g status-right '#(/opt/tma status) %H:%M'"})
    doc = judged(ambient_driver=amb)
    assert doc["verdict"]["counted"] == ["status line"]
    text = ui.render(doc)
    assert "ambient: ✗ status-right runs `tma status`, but tma is not found" in text
    assert "  - name tma as tmux can run it: set -g status-right '#(/opt/tma status) " \
           "%H:%M'\n" in text


def test_a_broken_config_is_one_counted_line():
    doc = judged(config=dict(CLEAN["config"], error="/c/config.toml: bad"))
    assert doc["verdict"]["counted"] == ["config"]
    assert ui.render(doc).startswith("config:  ✗ /c/config.toml: bad\n")


@pytest.mark.parametrize("version,setpf,counted,says", [
    ("3.1c", False, 1, "3.1c (older than 3.2a; tested: 3.2a to 3.7c"),
    ("3.2", True, 0, "3.2 (older than 3.2a; tested:"),
    ("3.3a", True, 0, "3.3a (tested: 3.2a to 3.7c and tmux's main branch)"),
    ("3.5a", True, 0, "3.5a (tested: 3.2a to 3.7c and tmux's main branch)"),
    ("3.6a", True, 0, "3.6a (inside the range tested: 3.2a to 3.7c"),
    ("next-3.6", True, 0, "next-3.6 (inside the range tested:"),
    ("next-3.8", True, 0, "next-3.8 (tested: 3.2a to 3.7c and tmux's main branch)"),
    ("3.9", True, 0, "3.9 (newer than 3.7c; tested:"),
    ("openbsd-7.4", True, 0, "openbsd-7.4 (names no tmux release; tested:"),
    ("", None, 0, "the server reports no version (tested:"),
    ("3.4", False, 1, "3.4 (tested: 3.2a to 3.7c")])
def test_the_tmux_line_places_the_version_in_the_tested_range(version, setpf, counted, says):
    doc = judged(tmux=doctor.tmux_facts(version or None, setpf))
    assert len(doc["verdict"]["counted"]) == counted
    text = ui.render(doc)
    line = text[text.index("tmux:"):text.index("ambient:")]
    assert says in line and "unknown" not in line
    assert ("older than 3.2:" in line) == (version == "3.1c")


def test_the_judged_document_is_what_the_schema_says():
    import json
    from pathlib import Path

    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas"
                         / "doctor.schema.json").read_text())
    jsonschema.validate(judged(), schema)
