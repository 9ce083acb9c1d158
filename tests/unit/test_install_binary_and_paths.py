"""One answer to "which tma?" (tma.install.binary) and one resolver of every path
(tma.core.paths), each from what it is given."""

from __future__ import annotations

import os

from tma.core.paths import Paths, private_dir_ok
from tma.install import binary


def _exe(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_running_tma_prefers_argv0_then_the_interpreters_sibling(tmp_path, monkeypatch):
    mine = _exe(tmp_path / "pipx" / "bin" / "tma")
    venv_python = tmp_path / "venv" / "bin" / "python"
    sibling = _exe(tmp_path / "venv" / "bin" / "tma")
    other = _exe(tmp_path / "elsewhere" / "tma")
    monkeypatch.setenv("PATH", str(other.parent))
    assert binary.running_tma(str(mine), str(venv_python)) == str(mine)
    # `python -m tma`: the tma script of this same installation, not whatever PATH finds
    assert binary.running_tma("/x/tma/__main__.py", str(venv_python)) == str(sibling)
    # no sibling: PATH
    assert binary.running_tma("/x/tma/__main__.py", str(tmp_path / "py" / "python")) == str(
        other)
    # a bare argv[0] is looked up on PATH
    assert binary.running_tma("tma", str(tmp_path / "py" / "python")) == str(other)


def test_tma_command_is_bare_only_when_the_bare_name_leads_here(tmp_path):
    venv_tma = _exe(tmp_path / "venv" / "bin" / "tma")
    other = _exe(tmp_path / "other" / "tma")
    assert binary.tma_command(str(venv_tma.parent), str(venv_tma)) == "tma"
    # nothing named tma on tmux's PATH: the absolute path
    assert binary.tma_command("/usr/bin:/bin", str(venv_tma)) == str(venv_tma)
    # another tma first on that PATH: the absolute path, never the other one
    path = os.pathsep.join([str(other.parent), str(venv_tma.parent)])
    assert binary.tma_command(path, str(venv_tma)) == str(venv_tma)
    # through a symlink to the same file: bare
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "tma").symlink_to(venv_tma)
    assert binary.tma_command(str(link_dir), str(venv_tma)) == "tma"


def test_an_activated_virtualenv_is_not_the_default_path(tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    venv_tma = _exe(venv / "bin" / "tma")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"]))
    assert binary.default_path() == "/usr/bin:/bin"
    # tma in a virtualenv the shell activated: tmux would not find the bare name
    assert binary.tma_command(None, str(venv_tma)) == str(venv_tma)
    monkeypatch.delenv("VIRTUAL_ENV")
    assert binary.tma_command(None, str(venv_tma)) == "tma"


def test_paths_from_one_env_mapping():
    p = Paths({"HOME": "/h"}, uid=1000)
    assert p.config_home == "/h/.config" and p.cache_home == "/h/.cache"
    assert p.state_home == "/h/.local/state"
    assert p.config_file() == "/h/.config/tma/config.toml"
    assert p.config_file("/etc/x.toml") == "/etc/x.toml"
    assert p.manifest_dir == "/h/.config/tma/agents"
    assert p.config_dir() == "/h/.config/tma" and p.config_dir("~/c") == "/h/c"
    assert p.cache_dir == "/h/.cache/tma" and p.state_dir == "/h/.local/state/tma"
    assert p.runtime_dir == "/tmp/tma-1000"
    assert p.expand("~/x") == "/h/x" and p.tilde("/h/x/y") == "~/x/y"
    env = {"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_CACHE_HOME": "/k",
           "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "/run/user/7", "TMA_CONFIG": "/t.toml",
           "TMA_CONFIG_DIR": "/d", "TMPDIR": "/var/tmp"}
    q = Paths(env, uid=7)
    assert (q.config_file(), q.manifest_dir, q.config_dir(), q.cache_dir, q.state_dir,
            q.runtime_dir) == ("/t.toml", "/c/tma/agents", "/d", "/k/tma", "/s/tma",
                               "/run/user/7/tma")
    assert Paths(dict(env, XDG_RUNTIME_DIR=""), uid=7).runtime_dir == "/var/tmp/tma-7"
    assert Paths(dict(env, XDG_CONFIG_HOME=""), uid=7).manifest_dir == "/h/.config/tma/agents"
    assert p.tmux_confs() == ["/h/.tmux.conf", "/h/.config/tmux/tmux.conf",
                              "/h/.config/tmux/tmux.conf"]


def test_a_runtime_dir_must_be_private_and_ours():
    assert private_dir_ok(0o40700, 7, 7)
    assert not private_dir_ok(0o40755, 7, 7)
    assert not private_dir_ok(0o40700, 8, 7)


def test_no_module_resolves_xdg_dirs_itself():
    """The one paths module: nothing else in src reads the XDG variables or expands ~."""
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "tma"
    offenders = []
    for path in src.rglob("*.py"):
        if path.name == "paths.py":
            continue
        text = path.read_text()
        code = "\n".join(line for line in text.splitlines()
                         if not line.lstrip().startswith(("#", "$", "`", "Path:", ">")))
        for needle in ('environ.get("XDG_', "expanduser(", "Path.home(", '"XDG_CONFIG_HOME"'):
            if needle in code:
                offenders.append(f"{path.relative_to(src)}: {needle}")
    assert offenders == []


def test_a_path_in_a_message_never_carries_a_control_character():
    """A folder named with an escape sequence (COPILOT_HOME=$'/x\\e]0;…\\a') is shown with
    its control characters spelt out, in messages and in an installer's diff header."""
    from tma.install import common

    p = Paths({"HOME": "/h"}, uid=1)
    assert p.tilde("/h/c\x1b[31mred\x07/hooks") == "~/c\\x1b[31mred\\x07/hooks"
    assert p.tilde("/h/café #(x)/a b") == "~/café #(x)/a b"  # printable stays as it is
    assert p.tilde("/h/\u202ex\x9b") == "~/\\u202ex\\x9b"
    text = common.diff(common.Change("/c/\x1b]0;pwn\x07/tma.json", None, "{}\n", "hooks"))
    assert "\x1b" not in text and "\x07" not in text
    assert "+++ /c/\\x1b]0;pwn\\x07/tma.json" in text
