"""An isolated machine the installers write into, and the reads of what they wrote."""

from __future__ import annotations

import io
import json
import os
import sys
import uuid
from pathlib import Path

from tma.cli.main import main
from tma.install import common

ASSETS = ("tma-hook", "opencode-plugin.js", "pi-extension.js")

PLACEHOLDERS = {
    "tma-hook": "#!/bin/sh\n# tma-hook placeholder for tests\nexit 0\n",
    "opencode-plugin.js": "// tma OpenCode bridge (placeholder)\nconst HOOK = @@TMA_HOOK@@;\n",
    "pi-extension.js": "// tma pi bridge (placeholder)\nconst HOOK = @@TMA_HOOK@@;\n",
}

FAKE_TMA = """#!/bin/sh
# records its argv and stdin (atomically, so a test can poll for the file)
d=$(dirname "$0")
printf '%s\\n' "$@" > "$d/tma.args.tmp"
cat > "$d/tma.stdin.tmp"
mv "$d/tma.stdin.tmp" "$d/tma.stdin"
mv "$d/tma.args.tmp" "$d/tma.args"
"""

PATH_VARS = {
    "TMA_CLAUDE_SETTINGS": ".claude/settings.json",
    "TMA_GEMINI_SETTINGS": ".gemini/settings.json",
    "TMA_CODEX_CONFIG": ".codex/config.toml",
    "TMA_CODEX_HOOKS": ".codex/hooks.json",
    "TMA_CURSOR_HOOKS": ".cursor/hooks.json",
    "TMA_CURSOR_CLI_CONFIG": ".cursor/cli-config.json",
    "TMA_OPENCODE_PLUGIN": ".config/opencode/plugin/tma.js",
    "TMA_PI_EXTENSION": ".pi/agent/extensions/tma.js",
    "TMA_COPILOT_HOOKS": ".copilot/hooks/tma.json",
    "TMA_QWEN_SETTINGS": ".qwen/settings.json",
    "TMA_AIDER_CONFIG": ".aider.conf.yml",
}

def packaged_assets() -> bool:
    from importlib import resources

    base = resources.files("tma.install").joinpath("assets")
    return all(base.joinpath(n).is_file() for n in ASSETS)

class FakeStdin(io.StringIO):
    def __init__(self, text: str, tty: bool) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

class Result:
    def __init__(self, rc: int, out: str, err: str) -> None:
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self) -> str:
        return f"Result(rc={self.rc}, out={self.out!r}, err={self.err!r})"

class Inst:
    def __init__(self, tmp_path: Path, monkeypatch, capsys) -> None:
        self.root = tmp_path
        self.home = tmp_path / "home"
        self.bin = tmp_path / "bin"
        for d in (self.home, self.bin, tmp_path / "config", tmp_path / "cache"):
            d.mkdir(parents=True, exist_ok=True)
        self.mp = monkeypatch
        self.capsys = capsys
        for var in ("TMUX", "TMUX_PANE", "TMA_BIN", "CODEX_HOME", "PI_CODING_AGENT_DIR", "COPILOT_HOME",
                    "TMA_CONFIG_DIR", "TMA_WRAPPER_PATH", "TMA_SOCKET_PATH", "NO_COLOR",
                    *PATH_VARS):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.setenv("TMA_CONFIG", str(tmp_path / "config.toml"))
        (tmp_path / "config.toml").touch()  # a named config must exist
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
        self.paths = {}
        for var, rel in PATH_VARS.items():
            self.paths[var] = self.home / rel
            monkeypatch.setenv(var, str(self.home / rel))
        self.wrapper = self.bin / "tma-hook"
        monkeypatch.setenv("TMA_WRAPPER_PATH", str(self.wrapper))
        self.tma = self.bin / "tma"
        self.tma.write_text(FAKE_TMA)
        self.tma.chmod(0o755)
        if not packaged_assets():
            adir = tmp_path / "assets"
            adir.mkdir()
            for name, text in PLACEHOLDERS.items():
                (adir / name).write_text(text)
            monkeypatch.setattr(common, "ASSET_DIR", str(adir))
        from tma.install import wiring

        monkeypatch.setattr(wiring, "tmux_hooks_enabled", lambda: False)
        monkeypatch.setattr(sys, "argv", [str(self.tma)])  # the tma being run
        self.socket = f"tma-install-test-{uuid.uuid4().hex[:12]}"  # no server there

    # the per-agent files
    @property
    def claude(self) -> Path:
        return self.paths["TMA_CLAUDE_SETTINGS"]

    @property
    def gemini(self) -> Path:
        return self.paths["TMA_GEMINI_SETTINGS"]

    @property
    def qwen(self) -> Path:
        return self.paths["TMA_QWEN_SETTINGS"]

    @property
    def aider(self) -> Path:
        return self.paths["TMA_AIDER_CONFIG"]

    @property
    def codex_config(self) -> Path:
        return self.paths["TMA_CODEX_CONFIG"]

    @property
    def codex_hooks(self) -> Path:
        return self.paths["TMA_CODEX_HOOKS"]

    @property
    def cursor_hooks(self) -> Path:
        return self.paths["TMA_CURSOR_HOOKS"]

    @property
    def cursor_cli(self) -> Path:
        return self.paths["TMA_CURSOR_CLI_CONFIG"]

    @property
    def copilot_hooks(self) -> Path:
        return self.paths["TMA_COPILOT_HOOKS"]

    def cmd(self, agent: str, event: str) -> str:
        return f"{self.wrapper} {agent} {event}"

    def run(self, *args: str, stdin: str = "", tty: bool = False) -> Result:
        self.capsys.readouterr()
        self.mp.setattr(sys, "stdin", FakeStdin(stdin, tty))
        rc = main(["--socket-name", self.socket, "install-hooks", *args])
        out, err = self.capsys.readouterr()
        return Result(rc, out, err)

    def ok(self, *args: str) -> Result:
        res = self.run(*args)
        assert res.rc == 0, res
        return res

def write(path: Path, text: str | bytes) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(data)
    return data

def dump(doc, indent=2) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"

def ours(inst: Inst, data: dict, agent: str, key: str = "hooks") -> dict[str, list[str]]:
    """event -> our commands in a nested hooks object."""
    out: dict[str, list[str]] = {}
    for ev, groups in data.get(key, {}).items():
        for g in groups:
            for h in g.get("hooks", [g]):
                if common.is_ours(h.get("command"), agent, ev):
                    out.setdefault(ev, []).append(h["command"])
    return out
