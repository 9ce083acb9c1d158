"""What the hot path imports: `tma status` (tmux format) over fresh stamps.

The status line runs this every few seconds on every client; each of these modules
costs milliseconds of interpreter start (measured in bench/RESULTS.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = (
    "tomllib", "subprocess", "re", "json", "argparse", "dataclasses", "typing", "inspect",
    "signal", "enum", "tma.core.manifest", "tma.core.rules", "tma.core.fold",
    "tma.runtime.manifests", "tma.core.telemetry", "tma.cli.spec", "textwrap",
)

PROBE = """
import sys
sys.argv = ["tma"] + %r
from tma.cli.main import main
rc = main(sys.argv[1:])
sys.stdout.write("\\n@@" + repr(sorted(sys.modules)))
raise SystemExit(rc)
"""


def _modules(srv, *args: str) -> tuple[str, set[str]]:
    argv = ["--socket-name", srv.name, "--manifest-dir", str(srv.manifests), *args]
    res = subprocess.run([sys.executable, "-c", PROBE % argv], capture_output=True, text=True,
                         env=srv.env, timeout=30)
    assert res.returncode == 0, res.stderr
    out, _, mods = res.stdout.rpartition("\n@@")
    return out, set(eval(mods))  # noqa: S307 - our own repr of a list of names


def test_status_over_fresh_stamps_imports_nothing_heavy(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.shell_pane()  # a plain shell pane goes through the light identity path
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.draw(b, "FAKE-IDLE\n")
    assert len(srv.ls()) == 2  # stamps now fresh; caches warm
    out, mods = _modules(srv, "status")
    assert out.startswith("#[range=user|tma:blocked]")
    heavy = sorted(m for m in FORBIDDEN if m in mods)
    assert heavy == [], f"tma status imported {heavy}"


def test_the_audit_can_fail(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.ls()
    _out, mods = _modules(srv, "ls", "--json")  # ls --json is not a hot path
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
