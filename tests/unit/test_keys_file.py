"""The pure half of `tma install-keys`: the marked line in, the marked line out, the file."""

from __future__ import annotations

import pytest

from tma.install import keys, tmux_hooks

LINE = 'source-file -q "$XDG_CONFIG_HOME/tma/tmux.conf" "$HOME/.config/tma/tmux.conf" # tma keys'

USER = ("# my tmux.conf\n"
        "set -g prefix C-a\n"
        "bind h select-pane -L   # vim keys\n"
        "bind-key -T prefix j select-pane -D\n"
        "bind -n M-g display-message hi\n"
        "source-file ~/.tmux.local\n"
        "\n")


@pytest.mark.parametrize("text", [USER, USER.rstrip("\n"), "", "\n", "set -g mouse on",
                                  "x\r\ny\r\n", "# \u00e9t\u00e9\n"])
def test_the_line_goes_in_once_and_comes_out_byte_for_byte(text):
    once = keys.with_line(text, LINE)
    assert len(keys.marked(once)) == 1
    assert once.startswith(text)  # appended: nothing of the user's moves
    assert keys.with_line(once, LINE) == once  # idempotent
    assert keys.without_line(once) == text


def test_an_unended_last_line_is_ended_and_unended_again():
    once = keys.with_line("set -g mouse on", LINE)
    assert once == "set -g mouse on\n" + LINE.replace(keys.MARKER, keys.MARKER_NL) + "\n"
    assert keys.with_line(once, LINE) == once
    assert keys.without_line(once) == "set -g mouse on"


def test_an_outdated_line_is_rewritten_in_place_and_copies_dropped():
    old = 'source-file -q "/old/place/tmux.conf" # tma keys'
    text = "a\n" + old + "\nb\n" + old + "\nc\n"
    assert keys.with_line(text, LINE) == "a\n" + LINE + "\nb\nc\n"
    assert keys.without_line(text) == "a\nb\nc\n"


def test_only_tma_marked_source_lines_count():
    text = ("source-file ~/other.conf\n"
            "# tma keys is what the source line ends with\n"
            "bind x run-shell 'echo # tma keys'\n")
    assert keys.marked(text) == []
    assert keys.without_line(text) == text


def test_the_users_own_prefix_keys_are_found():
    found = keys.user_prefix_keys(USER + "bind-key -r K resize-pane -U\nbind -T copy-mode-vi v "
                                         "send -X begin-selection\nbind-key -N 'note' A x\n")
    assert found == {"h", "j", "K", "A"}


def _opts(**kw):
    return keys.Options(tma="/opt/tma bin/tma", tma_bin="/opt/tma bin/tma", **kw)


def test_the_file_binds_what_exists_and_lists_the_rest_commented():
    text = keys.render(_opts(features=keys.Features(act_menu=True)))
    assert text.startswith(keys.HEADER)
    live = [line for line in text.splitlines() if line.startswith("bind-key")]
    assert [line.split()[3] for line in live] == ["j", "g", "b", "h", "A"]
    assert "bind-key -T prefix j run-shell \"'/opt/tma bin/tma' jump --attention --client " \
           "\\\"#{client_name}\\\"\"" in text
    assert f"# the picker {keys.NOT_IN_RELEASE}: bind-key -T prefix a if-shell -F" in text
    assert f"# tma watch in a split {keys.NOT_IN_RELEASE}" in text
    assert "\n# run-shell -b " in text and "daemon --ensure" in text  # commented
    assert "MouseDown" not in text
    assert "daemon" not in keys.render(_opts(daemon=False))


def test_the_users_bindings_win():
    text = keys.render(_opts(user_keys=frozenset({"j", "h"})))
    live = [line.split()[3] for line in text.splitlines() if line.startswith("bind-key")]
    assert live == ["g", "b"]
    assert "# prefix j, left alone (your tmux.conf binds it): jump to the next" in text


def test_the_hooks_sit_at_the_managed_index_and_match_what_install_hooks_accepts():
    text = keys.render(_opts(focus_events=True))
    hooks = [line for line in text.splitlines() if line.startswith("set-hook")]
    assert [h.split()[2] for h in hooks] == [
        f"after-select-pane[{tmux_hooks.MANAGED_INDEX}]",
        f"session-window-changed[{tmux_hooks.MANAGED_INDEX}]",
        f"pane-focus-in[{tmux_hooks.MANAGED_INDEX}]"]
    assert keys.holds_hooks(text)
    assert not keys.holds_hooks("# a file of my own\n" + "\n".join(hooks))


def test_mouse_clicks_keep_tmux_s_own_window_click():
    text = keys.render(_opts(mouse=True))
    lines = [line for line in text.splitlines() if line.startswith("bind-key -n")]
    assert [line.split()[2] for line in lines] == [
        "MouseDown1Status", "MouseDown1StatusRight", "MouseDown3StatusRight"]
    assert "switch-client -t =" in lines[0]
    assert "tma:blocked" in lines[0] and "jump --blocked" in lines[0]


def test_created_paths_round_trip_through_the_header():
    text = keys.render(_opts(created=("/h/.config", "/h/.config/tma")))
    assert keys.created_paths(text) == ["/h/.config", "/h/.config/tma"]


def test_the_source_line_uses_tmux_s_variables_unless_pinned():
    env = {"XDG_CONFIG_HOME": "/x"}
    assert keys.source_line("/x/tma", "/h", env, pinned=False) == LINE
    assert keys.source_line("/h/.config/tma", "/h", {}, pinned=False) == LINE
    assert keys.source_line("/x/tma", "/h", env, pinned=True) == \
        'source-file -q "/x/tma/tmux.conf" # tma keys'
    assert keys.source_line('/we"ird/$d', "/h", env, pinned=True) == \
        'source-file -q "/we\\"ird/\\$d/tmux.conf" # tma keys'


def test_the_conf_is_the_first_that_exists(tmp_path):
    home = tmp_path / "h"
    xdg = tmp_path / "x"
    env = {"XDG_CONFIG_HOME": str(xdg)}
    assert keys.find_conf(None, str(home), env) == str(home / ".tmux.conf")
    (home / ".config" / "tmux").mkdir(parents=True)
    (home / ".config" / "tmux" / "tmux.conf").write_text("")
    assert keys.find_conf(None, str(home), env) == str(home / ".config" / "tmux" / "tmux.conf")
    (xdg / "tmux").mkdir(parents=True)
    (xdg / "tmux" / "tmux.conf").write_text("")
    assert keys.find_conf(None, str(home), env) == str(xdg / "tmux" / "tmux.conf")
    (home / ".tmux.conf").symlink_to(tmp_path / "dangling")
    assert keys.find_conf(None, str(home), env) == str(home / ".tmux.conf")
    assert keys.find_conf(str(tmp_path / "c"), str(home), env) == str(tmp_path / "c")
