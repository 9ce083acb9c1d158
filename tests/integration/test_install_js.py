"""`tma install-hooks opencode` / `pi`: the JS bridge files."""

from __future__ import annotations

import json

import pytest

from tests.helpers.installs import Inst, write
from tma.install import common


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


CASES = {
    "opencode": ("TMA_OPENCODE_PLUGIN", "opencode-plugin.js", "tma OpenCode bridge"),
    "pi": ("TMA_PI_EXTENSION", "pi-extension.js", "tma pi bridge"),
}


def expected(inst: Inst, asset: str, ref: str | None = None) -> str:
    return common.asset_text(asset).replace("@@TMA_HOOK@@", json.dumps(ref or
                                                                        str(inst.wrapper)))


@pytest.mark.parametrize("agent", sorted(CASES))
def test_roundtrip(inst, agent):
    var, asset, marker = CASES[agent]
    path = inst.paths[var]
    res = inst.ok(agent, "--yes")
    assert f"+++ {path}" in res.out
    text = path.read_text()
    assert text == expected(inst, asset)
    assert marker in text and json.dumps(str(inst.wrapper)) in text
    assert "@@TMA_HOOK@@" not in text
    assert inst.ok("--check").out == "tma: hooks OK\n"
    assert inst.ok("--check", agent).out == "tma: hooks OK\n"
    st = path.stat()
    assert "already wired" in inst.ok(agent, "--yes").out
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    res = inst.ok(agent, "--uninstall", "--yes")
    assert f"--- {path}\n+++ /dev/null" in res.out
    assert not path.exists()
    # tma created the folder (and the ones above it under HOME): they go too, so an
    # empty OpenCode plugin folder does not keep OpenCode's slower start
    assert not path.parent.exists() and inst.home.is_dir()
    assert "removed the empty folder" in res.out
    assert "nothing to remove" in inst.ok(agent, "--uninstall", "--yes").out


@pytest.mark.parametrize("agent", sorted(CASES))
def test_a_folder_the_user_had_stays(inst, agent):
    var, _asset, _marker = CASES[agent]
    path = inst.paths[var]
    path.parent.mkdir(parents=True)
    inst.ok(agent, "--yes")
    inst.ok(agent, "--uninstall", "--yes")
    assert not path.exists() and path.parent.is_dir()


@pytest.mark.parametrize("agent", sorted(CASES))
def test_a_created_folder_the_user_filled_stays(inst, agent):
    var, _asset, _marker = CASES[agent]
    path = inst.paths[var]
    inst.ok(agent, "--yes")
    (path.parent / "theirs.js").write_text("// theirs\n")
    inst.ok(agent, "--uninstall", "--yes")
    assert not path.exists() and (path.parent / "theirs.js").is_file()


@pytest.mark.parametrize("agent", sorted(CASES))
def test_foreign_file_never_overwritten_or_deleted(inst, agent):
    var, _asset, _marker = CASES[agent]
    path = inst.paths[var]
    mine = write(path, "// my own plugin\nexport default {}\n")
    res = inst.run(agent, "--yes")
    assert res.rc == 1 and str(path) in res.err and "not overwriting" in res.err
    assert path.read_bytes() == mine
    res = inst.ok(agent, "--uninstall", "--yes")
    assert "left alone" in res.out
    assert path.read_bytes() == mine
    res = inst.run("--check")  # not ours: nothing to check, and it says so
    assert res.rc == 1 and "nothing to check" in res.err


@pytest.mark.parametrize("agent", sorted(CASES))
def test_stale_bridge_refreshed(inst, agent, tmp_path, monkeypatch):
    var, asset, _marker = CASES[agent]
    path = inst.paths[var]
    inst.ok(agent, "--yes")
    old = path.read_text().replace(json.dumps(str(inst.wrapper)), json.dumps("/old/tma-hook"))
    path.write_text(old)
    res = inst.run("--check")
    assert res.rc == 1 and "another tma-hook" in res.err
    inst.ok("--all", "--yes")
    assert path.read_text() == expected(inst, asset)
    path.write_text(path.read_text() + "// edited\n")
    res = inst.run("--check", agent)
    assert res.rc == 1 and "differs" in res.err


def test_default_paths(inst, monkeypatch, tmp_path):
    monkeypatch.delenv("TMA_OPENCODE_PLUGIN")
    monkeypatch.delenv("TMA_PI_EXTENSION")
    inst.ok("opencode", "--yes")
    inst.ok("pi", "--yes")
    assert (tmp_path / "config" / "opencode" / "plugin" / "tma.js").is_file()  # XDG
    assert (inst.home / ".pi" / "agent" / "extensions" / "tma.js").is_file()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-dir"))
    monkeypatch.delenv("XDG_CONFIG_HOME")
    inst.ok("opencode", "--yes")
    inst.ok("pi", "--yes")
    assert (inst.home / ".config" / "opencode" / "plugin" / "tma.js").is_file()
    assert (tmp_path / "pi-dir" / "extensions" / "tma.js").is_file()


def test_wrapper_ref_is_json_quoted(inst, monkeypatch):
    odd = inst.root / 'we"ird dir' / "tma-hook"
    monkeypatch.setenv("TMA_WRAPPER_PATH", str(odd))
    inst.ok("pi", "--yes")
    text = inst.paths["TMA_PI_EXTENSION"].read_text()
    assert json.dumps(str(odd)) in text
    assert inst.ok("--check").out == "tma: hooks OK\n"
