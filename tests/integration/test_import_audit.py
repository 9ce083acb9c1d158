"""What the hot paths import: `tma status` (over fresh stamps, and cold) and `tma event`.

The status line runs `tma status` every few seconds on every client and every agent hook
runs `tma event`; each of these modules costs milliseconds of interpreter start
(measured in bench/RESULTS.md, `bench/bench_peer.py`). A steady-state status line over a
quiet pane whose process is a shared name (node) loads no manifest schema or `re`
either: tests/integration/test_title_cache.py pins that.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.import_audit import FORBIDDEN, PROBE

# Consuming fresh stamps needs no identification at all.
CONSUME_ONLY_FORBIDDEN = ("tma.runtime.manifests", "tma.core.identity", "tma.runtime.procs")
# A status line passes no selector flag: their parser stays unimported.
STATUS_FORBIDDEN = ("tma.runtime.selectors", "tma.cli.spec")


def _modules(srv, *args: str) -> tuple[str, str, set[str]]:
    argv = ["--socket-name", srv.name, "--manifest-dir", str(srv.manifests), *args]
    res = subprocess.run([sys.executable, "-c", PROBE % argv], capture_output=True, text=True,
                         env=srv.env, timeout=30)
    assert res.returncode == 0, res.stderr
    out, _, mods = res.stdout.rpartition("\n@@")
    return out, res.stderr, set(eval(mods))  # noqa: S307 - our own repr of a list of names


def test_status_over_fresh_stamps_imports_nothing_heavy(srv):
    # A status line runs `tma status` once per status-interval (>= 1 s), so every run is a
    # producing cycle past the stampede second: fresh stamps are consumed and a stamp-less
    # pane goes through the light identity path (process names from the cached index).
    # The run is placed there on purpose; left to chance it was a stampede-second consume
    # in most runs and a producing cycle in the rest. A wide freshness window keeps the
    # stamps fresh however slowly a loaded machine starts the probe.
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.shell_pane()  # a plain shell pane goes through the light identity path
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.draw(b, "FAKE-IDLE\n")
    assert len(srv.ls()) == 2  # stamps now fresh; caches warm
    srv.next_second()
    out, err, mods = _modules(srv, "--debug-timing", "status")
    assert out.startswith("#[range=user|tma:blocked]")
    assert "2 consumed, 0 captures" in err and "stampede" not in err, err
    heavy = sorted(m for m in FORBIDDEN + STATUS_FORBIDDEN if m in mods)
    assert heavy == [], f"tma status imported {heavy}"


def test_status_consuming_every_pane_loads_no_manifest_index(srv):
    # every pane carries a fresh stamp: nothing to identify, so not even the cached index
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")
    a = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING\n")
    assert len(srv.ls()) == 1
    srv.next_second()
    out, err, mods = _modules(srv, "--debug-timing", "status")
    assert "1 consumed, 0 captures" in err and "stampede" not in err, err
    extra = sorted(m for m in FORBIDDEN + CONSUME_ONLY_FORBIDDEN + STATUS_FORBIDDEN if m in mods)
    assert extra == [], f"tma status imported {extra}"


# A cold refresh (a pane to capture, fold and stamp) still needs `re` for the rules, but
# not the heavy generic machinery: the schema, rules and fold are plain slotted records.
COLD_FORBIDDEN = ("tomllib", "dataclasses", "inspect", "typing", "argparse", "json",
                  "subprocess", "signal", "tma.cli.spec", "textwrap", "tma.core.telemetry")


def test_cold_status_imports_no_dataclasses_toml_or_parser(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    assert len(srv.ls()) == 1  # caches warm: manifests and config are decoded once
    b = srv.agent_pane()
    srv.draw(b, "FAKE-BLOCKED\n")  # never stamped: this run captures and folds it
    srv.next_second()
    out, err, mods = _modules(srv, "--debug-timing", "status")
    assert "1 produced" in err and "1 captures" in err, err
    assert "tma.core.rules" in mods and "tma.core.fold" in mods  # the full path ran
    heavy = sorted(m for m in COLD_FORBIDDEN if m in mods)
    assert heavy == [], f"a cold tma status imported {heavy}"


def test_event_imports_no_regex_json_or_toml(srv):
    a = srv.agent_pane()
    argv = ["--socket-name", srv.name, "--manifest-dir", str(srv.manifests), "event",
            "--agent", "fake", "--kind", "Work", "--pane", a]
    for _ in range(2):  # the first run builds the hook-table cache
        res = subprocess.run([sys.executable, "-c", PROBE % argv], capture_output=True,
                             text=True, env=srv.env, input='{"session_id":"s1"}', timeout=30)
    assert res.returncode == 0, res.stderr
    mods = set(eval(res.stdout.rpartition("\n@@")[2]))  # noqa: S307 - our own repr
    assert "tma.runtime.hook" in mods  # the event was handled, not skipped
    heavy = sorted(m for m in FORBIDDEN if m in mods and m != "tma.tmux.write"
                   and m != "tma.core.plan")
    assert heavy == [], f"tma event imported {heavy}"


def test_the_audit_can_fail(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.ls()
    _out, _err, mods = _modules(srv, "ls", "--json")  # ls --json is not a hot path
    assert "json" in mods
    assert json  # the module we just proved is visible to the audit


def test_event_pays_for_no_parser(srv):
    # the hook path parses its own flags: neither argparse nor the command table
    a = srv.agent_pane()
    argv = ["--socket-name", srv.name, "--manifest-dir", str(srv.manifests), "event",
            "--agent", "fake", "--kind", "Work", "--pane", a]
    res = subprocess.run([sys.executable, "-c", PROBE % argv], capture_output=True, text=True,
                         env=srv.env, input="{}", timeout=30)
    assert res.returncode == 0, res.stderr
    mods = set(eval(res.stdout.rpartition("\n@@")[2]))  # noqa: S307 - our own repr
    assert "tma.runtime.hook" in mods  # the event was handled, not skipped
    assert not {"argparse", "tma.cli.spec", "textwrap"} & mods
