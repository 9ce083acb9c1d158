"""tma doctor run on a test server, its report parsed, and the installers it checks isolated."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

REPO = Path(__file__).resolve().parents[2]

SCHEMA = json.loads((REPO / "schemas" / "doctor.schema.json").read_text())

VERDICT = "tma: doctor: {} warning(s), {} pane(s) below the tier their manifest supports"

class Report:
    def __init__(self, text: str, doc: dict, rc: int, stderr: str) -> None:
        self.text = text
        self.doc = doc
        self.rc = rc  # with --exit-code
        self.stderr = stderr

    def section(self, label: str) -> str:
        """The `label:` line and its indented items."""
        lines = self.text.splitlines()
        for i, line in enumerate(lines):
            if line.startswith(label + ":"):
                block = [line]
                for more in lines[i + 1:]:
                    if not more.startswith(" "):
                        break
                    block.append(more)
                return "\n".join(block)
        return ""

def doctor(srv, bundled: bool = False) -> Report:
    """Run doctor three ways: text (exit 0), --json (schema-valid), --exit-code.

    bundled: load the bundled manifests (claude, codex, opencode ...) instead of the
    test's `fake` agent alone."""
    # the notify failure record lives in the runtime dir: never the real one
    srv.env.setdefault("XDG_RUNTIME_DIR", str(srv.root / "run"))
    kw = {"manifests": not bundled}
    plain = srv.tma("doctor", **kw)
    assert plain.returncode == 0, plain.stderr
    js = srv.tma("doctor", "--json", **kw)
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    jsonschema.validate(doc, SCHEMA)
    gate = srv.tma("doctor", "--exit-code", **kw)
    assert gate.stdout == plain.stdout or "ago" in plain.stdout  # ages may tick
    if gate.returncode:
        # each skipped manifest is named (one line each), then the verdict
        skips = [f"tma: skipping manifest {i['file']}: {i['problem']}"
                 for i in doc["manifests"]["issues"]]
        verdict = VERDICT.format(doc["warnings"], doc["below_expected_tier"])
        assert gate.stderr.strip().splitlines() == skips + [verdict]
    else:
        assert doc["warnings"] == 0 and doc["below_expected_tier"] == 0 and gate.stderr == ""
    return Report(plain.stdout, doc, gate.returncode, gate.stderr)

#: Every installer path, pointed into the test's tmp dir (HOME is already private).
INSTALL_ENV = {
    "TMA_CLAUDE_SETTINGS": "claude/settings.json",
    "TMA_GEMINI_SETTINGS": "gemini/settings.json",
    "TMA_CODEX_CONFIG": "codex/config.toml",
    "TMA_CODEX_HOOKS": "codex/hooks.json",
    "TMA_CURSOR_HOOKS": "cursor/hooks.json",
    "TMA_CURSOR_CLI_CONFIG": "cursor/cli-config.json",
    "TMA_OPENCODE_PLUGIN": "opencode/plugin/tma.js",
    "TMA_PI_EXTENSION": "pi/extensions/tma.js",
    "TMA_COPILOT_HOOKS": "copilot/hooks/tma.json",
    "TMA_QWEN_SETTINGS": "qwen/settings.json",
    "TMA_AIDER_CONFIG": "aider/.aider.conf.yml",
    "TMA_WRAPPER_PATH": "wbin/tma-hook",
    "TMA_CONFIG_DIR": "tma-config",
}

def isolate_installers(srv) -> dict[str, Path]:
    paths = {k: srv.root / "cfgs" / v for k, v in INSTALL_ENV.items()}
    srv.env.update({k: str(v) for k, v in paths.items()})
    return paths

def install(srv, agent: str) -> None:
    """Wire an agent (and the tmux hooks: the server must be running already)."""
    assert srv.started
    res = srv.tma("install-hooks", agent, "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr

def wired_pane(srv, agent: str) -> str:
    """An agent pane started after its hooks were wired (a shell pane first: the tmux
    hooks need the server running). An agent that was running when its wiring was written
    is rightly tier 1 until its next start, and doctor tells the two apart by the
    process's start time: started first and wired after, the pane's tier depended on
    whether the install (a Python start) landed within RESTART_SLACK of the agent's
    start, which a loaded machine decides."""
    if not srv.started:
        srv.shell_pane()
    install(srv, agent)
    return srv.agent_pane(agent)

def row(r: Report, pane: str) -> dict:
    [found] = [a for a in r.doc["agents"] if a["pane"] == pane]
    return found

def pane_block(r: Report, pane: str) -> list[str]:
    """A pane's line in `panes (N):` and its indented detail lines."""
    lines = r.text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {pane} "))
    out = [lines[start]]
    for more in lines[start + 1:]:
        if not more.startswith("      "):
            break
        out.append(more.strip())
    return out
