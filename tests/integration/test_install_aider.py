"""`tma install-hooks aider`: two marked lines (`notifications: true` and its
`notifications-command`) at the top of ~/.aider.conf.yml, byte for byte back on uninstall."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from tests.helpers.installs import Inst, write

MARK = "# added by tma install-hooks"


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


def command(inst: Inst) -> str:
    return f"{shlex.quote(str(inst.wrapper))} aider notify '{{}}'"


def test_aider_roundtrip(inst):
    """Install, check, reinstall (no change), uninstall back to the original bytes, a file
    with a document marker, comments and no final newline included."""
    orig = write(inst.aider, "# my aider settings\n---\nmodel: gpt-4o  # mine\n"
                             "check-update: false\nedit-format: diff")
    res = inst.ok("aider", "--yes")
    assert "next starts" in res.out
    text = inst.aider.read_text()
    lines = text.splitlines()
    assert lines[:2] == ["# my aider settings", "---"]
    assert lines[2] == f"notifications: true  {MARK}"
    assert lines[3] == f'notifications-command: "{command(inst)}"  {MARK}'
    assert text.endswith("edit-format: diff")  # the user's lines, untouched
    assert inst.ok("--check", "aider").out == "tma: hooks OK\n"
    installed = inst.aider.read_bytes()
    inst.ok("aider", "--yes")
    assert inst.aider.read_bytes() == installed
    inst.ok("aider", "--uninstall", "--yes")
    assert inst.aider.read_bytes() == orig


def test_aider_reads_the_command_as_written(inst):
    """The command line is a YAML double-quoted string: what aider hands its shell is
    exactly the wrapper, the agent, the event and the '{}' payload (stdin is aider's
    terminal, so the payload rides on argv)."""
    inst.ok("aider", "--yes")
    line = next(ln for ln in inst.aider.read_text().splitlines()
                if ln.startswith("notifications-command:"))
    value = line.split(":", 1)[1].split(MARK)[0].strip()
    import json
    assert shlex.split(json.loads(value)) == [str(inst.wrapper), "aider", "notify", "{}"]
    out = subprocess.run(["sh", "-c", f"printf '%s\\n' {json.loads(value).split(' ', 1)[1]}"],
                         capture_output=True, text=True).stdout
    assert out.splitlines() == ["aider", "notify", "{}"]


def test_aider_keeps_a_person_s_notifications_true(inst):
    orig = write(inst.aider, "notifications: true\n")
    inst.ok("aider", "--yes")
    text = inst.aider.read_text()
    assert text.count("notifications: true") == 1 and "notifications-command:" in text
    inst.ok("aider", "--uninstall", "--yes")
    assert inst.aider.read_bytes() == orig


@pytest.mark.parametrize("body,names", [
    ("notifications-command: notify-send aider\n", "notify-send aider"),
    ("notifications: false\n", "notifications: false"),
])
def test_aider_refuses_a_foreign_command_or_notifications_off(inst, body, names):
    orig = write(inst.aider, body)
    res = inst.run("aider", "--yes")
    assert res.rc != 0 and names in res.out + res.err
    assert inst.aider.read_bytes() == orig  # nothing written


def test_aider_fresh_file_is_created_and_removed(inst):
    assert not inst.aider.exists()
    inst.ok("aider", "--yes")
    assert "notifications-command:" in inst.aider.read_text()
    res = inst.ok("aider", "--uninstall", "--yes")
    assert not inst.aider.exists()
    assert "tma created it" in res.out
