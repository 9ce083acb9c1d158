"""tma.install.keybind: install-keys' plan, diff, write and uninstall, on real files in a
temporary home (no tmux server: the server steps are skipped when there is none)."""

from __future__ import annotations

import io
import os
from types import SimpleNamespace

import pytest

from tma.core.paths import here
from tma.install import keybind, keys
from tma.install.wiring import Output

CFG = SimpleNamespace(focus_events=False)
#: a user's tmux.conf with bytes that are not UTF-8, CRLF, and no final newline
USER = b"# mine \xe9\r\nset -g prefix C-a\r\nbind h select-pane -L"


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    for var in ("XDG_CONFIG_HOME", "TMA_CONFIG_DIR", "TMUX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(h))  # the messages name places under ~
    return h


def _ctx(home, **req) -> keybind.Ctx:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return keybind.Ctx(keybind.Request(**req), CFG, None, here(env), env, keys.Features())


def _io() -> Output:
    return Output(io.StringIO(), io.StringIO())


def test_a_fresh_home_plans_the_managed_file_and_a_conf_holding_the_line(home):
    ctx = _ctx(home)
    changes = keybind.install_plan(ctx)
    assert [c.path for c in changes] == [ctx.managed, str(home / ".tmux.conf")]
    assert [c.old for c in changes] == [None, None]
    managed, conf = (c.new for c in changes)
    assert managed.startswith(keys.HEADER)
    # what tma creates is recorded in the file, for the uninstall to take back
    assert f"{keys.CREATED}{home / '.tmux.conf'}" in managed
    assert keys.marked(conf) == [0] and conf.rstrip("\n").endswith(keys.MARKER)


def test_the_plan_is_empty_once_written(home):
    keybind.apply(keybind.install_plan(_ctx(home)))
    assert keybind.install_plan(_ctx(home)) == []
    assert keybind.check_problems(_ctx(home)) == []


def test_the_diff_shows_the_one_added_line_of_the_users_conf(home):
    (home / ".tmux.conf").write_text("set -g mouse on\n")
    ctx = _ctx(home)
    out = _io()
    keybind.show(keybind.install_plan(ctx), out)
    text = out.out.getvalue()
    assert f"+{ctx.line}" in text
    assert " set -g mouse on" in text and "-set -g mouse on" not in text


def test_uninstall_gives_the_users_bytes_back_and_removes_what_tma_made(home):
    conf = home / ".tmux.conf"
    conf.write_bytes(USER)
    keybind.apply(keybind.install_plan(_ctx(home)))
    assert conf.read_bytes().startswith(USER) and conf.read_bytes() != USER
    ctx = _ctx(home)
    changes, dirs = keybind.uninstall_plan(ctx)
    assert [c.path for c in changes] == [str(conf), ctx.managed]
    keybind.apply(changes)
    keybind.remove_dirs(dirs)
    assert conf.read_bytes() == USER
    assert not os.path.exists(ctx.managed)
    assert not os.path.exists(ctx.cdir)  # the config dir was tma's: gone with its file
    assert keybind.uninstall_plan(_ctx(home)) == ([], [])


def test_a_conf_tma_created_goes_with_the_uninstall(home):
    keybind.apply(keybind.install_plan(_ctx(home)))
    changes, _ = keybind.uninstall_plan(_ctx(home))
    assert changes[0].path == str(home / ".tmux.conf") and changes[0].new is None


def test_check_names_a_conf_that_no_longer_sources_the_file(home):
    keybind.apply(keybind.install_plan(_ctx(home)))
    conf = home / ".tmux.conf"
    conf.write_text(keys.without_line(conf.read_text()))
    problems = keybind.check_problems(_ctx(home))
    assert problems == ["~/.tmux.conf does not source it"]
    out = _io()
    assert keybind.check(_ctx(home, mouse=True), out) == keybind.FAIL
    assert out.err.getvalue().endswith("run `tma install-keys --mouse` to repair\n")


def test_a_missing_managed_file_is_the_one_problem(home):
    assert keybind.check_problems(_ctx(home)) == [
        "the managed file ~/.config/tma/tmux.conf is missing"]


def test_a_declined_run_writes_nothing(home, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # not a terminal: declines
    out = _io()
    ctx = _ctx(home)
    assert keybind.install(ctx, out) == keybind.FAIL
    assert "pass --yes" in out.err.getvalue() and "tma: declined; would write" in \
        out.err.getvalue()
    assert not os.path.exists(ctx.managed) and not (home / ".tmux.conf").exists()


def test_a_yes_run_writes_says_so_and_ends_with_the_reminder(home):
    out = _io()
    ctx = _ctx(home, yes=True)
    assert keybind.install(ctx, out) == 0
    said = out.out.getvalue()
    assert "tma: wrote ~/.config/tma/tmux.conf; ~/.tmux.conf sources it" in said
    assert said.rstrip("\n").endswith("status) to status-right (tma never edits it)")
    again = _io()
    assert keybind.install(_ctx(home, yes=True, reminder=False), again) == 0
    assert again.out.getvalue() == "tma: keybindings OK (nothing to change)\n"


def test_the_features_come_from_the_command_table():
    flag = SimpleNamespace(long="--menu")
    table = {"act": SimpleNamespace(flags=[flag]), "watch": object()}
    assert keybind.features(table) == keys.Features(picker=True, watch=True, act_menu=True,
                                                    daemon=False)
    assert keybind.features({}) == keys.Features(picker=True)
