"""`tma completions`: static scripts for bash, zsh and fish."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tma.cli import spec
from tma.cli.main import main as tma_main
from tma.ui import completions

PUBLIC = [c.name for c in spec.public()]


@pytest.mark.parametrize("shell", spec.SHELLS)
def test_script_names_every_public_command_and_the_value_sets(shell, capsys):
    assert tma_main(["completions", shell]) == 0
    script = capsys.readouterr().out
    assert script.strip()
    for cmd in PUBLIC:
        assert cmd in script, cmd
    for word in ("idle", "working", "blocked", "unknown", "done", "tmux", "plain", "json",
                 "prom"):
        assert word in script, word
    for flag in ("--socket-name", "--socket-path", "--config", "--manifest-dir",
                 "--debug-timing", "--state", "--until", "--format"):
        # fish spells long options without the dashes (`-l socket-name`)
        assert (flag if shell != "fish" else f"-l {flag[2:]}") in script, flag
    for internal in ("clear-attention", "supervise"):
        assert internal not in script


def test_usage_errors(capsys):
    assert tma_main(["completions"]) == 2
    assert tma_main(["completions", "tcsh"]) == 2
    assert "'bash', 'zsh', 'fish'" in capsys.readouterr().err


def test_completions_offer_exactly_the_declared_commands_and_flags(tmp_path):
    # the commands bash offers are the declared public ones: no command that does not exist
    offered = set(_bash(tmp_path, "tma", "")) - {n for f in spec.GLOBALS + spec.TOP_FLAGS
                                                 for n in f.names}
    assert offered == set(PUBLIC)
    for cmd in spec.public():
        flags = set(_bash(tmp_path, "tma", cmd.name, "--"))
        declared = {f.long for f in completions.public_flags(cmd)}
        assert declared <= flags, (cmd.name, declared - flags)
        assert flags - declared <= {f.long for f in spec.GLOBALS + spec.TOP_FLAGS}, cmd.name


@pytest.mark.parametrize("shell,flag", [("bash", "-n"), ("zsh", "-n"), ("fish", "-n")])
def test_script_is_syntactically_valid(shell, flag, tmp_path):
    exe = shutil.which(shell)
    if exe is None:
        if shell == "bash":
            pytest.fail("bash is required")
        pytest.skip(f"{shell} is not installed")
    path = tmp_path / f"tma.{shell}"
    path.write_text(completions.GENERATORS[shell](spec.TABLE))
    res = subprocess.run([exe, flag, str(path)], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr


BASH_DRIVER = """
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
_tma
printf '%s\\n' "${COMPREPLY[@]}"
"""


def _bash(tmp_path, *words: str) -> list[str]:
    script = tmp_path / "tma.bash"
    script.write_text(completions.bash(spec.TABLE))
    res = subprocess.run(["bash", "-c", BASH_DRIVER, "driver", str(script), *words],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def test_bash_completes_commands_flags_and_values(tmp_path):
    assert set(PUBLIC) <= set(_bash(tmp_path, "tma", ""))
    assert _bash(tmp_path, "tma", "--socket-name", "x", "sta") == ["status"]
    assert _bash(tmp_path, "tma", "status", "--format", "p") == ["plain", "prom"]
    assert _bash(tmp_path, "tma", "status", "--format", "=", "j") == ["json"]
    assert _bash(tmp_path, "tma", "ls", "--state", "idle,wo") == ["idle,working"]
    assert _bash(tmp_path, "tma", "ls", "--state", "") == [
        "idle", "working", "blocked", "unknown", "done"]
    assert _bash(tmp_path, "tma", "completions", "z") == ["zsh"]
    assert "--seconds" in _bash(tmp_path, "tma", "demo", "--")
    assert _bash(tmp_path, "tma", "ls", "--agent", "") == []  # runtime values: nothing offered
