"""common.apply: a write lands only on the file it was planned from (issue 18.5)."""

from __future__ import annotations

import pytest

from tma.install import common


def _replanner(path, calls):
    def replan():
        calls.append(1)
        text = path.read_text()
        return common.Change(str(path), text, text + "+tma")
    return replan


def test_a_file_changed_since_the_plan_is_planned_again(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("A")
    change = common.Change(str(path), "A", "A+tma")
    path.write_text("A2")  # another program wrote after tma read
    calls: list = []
    common.apply(change, _replanner(path, calls))
    assert path.read_text() == "A2+tma" and calls == [1]
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no lock, no temp left


def test_a_write_landing_just_before_the_rename_is_kept(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    path.write_text("A")
    real = common._identity
    landed: list = []

    def identity(p):  # the foreign write lands between tma's last read and its check
        if not landed:
            landed.append(1)
            path.write_text("A-foreign")
        return real(p)

    monkeypatch.setattr(common, "_identity", identity)
    calls: list = []
    common.apply(common.Change(str(path), "A", "A+tma"), _replanner(path, calls))
    assert path.read_text() == "A-foreign+tma" and calls == [1]


def test_a_file_that_never_holds_still_is_refused(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("A")

    def replan():
        return common.Change(str(path), "never this", "B")

    with pytest.raises(common.InstallError, match="kept changing"):
        common.apply(common.Change(str(path), "X", "B"), replan)
    assert path.read_text() == "A"


def test_nothing_left_to_do_writes_nothing(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("A+tma")
    common.apply(common.Change(str(path), "A", "A+tma"), lambda: None)
    assert path.read_text() == "A+tma"


def test_without_replan_the_planned_bytes_are_written(tmp_path):
    path = tmp_path / "tma-hook"
    path.write_text("old")
    common.apply(common.Change(str(path), "older", "new"))
    assert path.read_text() == "new"
