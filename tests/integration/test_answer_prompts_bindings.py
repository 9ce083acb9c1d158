"""The tmux block of docs/how-to/answer-claude-prompts.md, sourced into a real server as
a person's ~/.tmux.conf would be: tmux accepts it, and each key runs the `tma act`
command the page prints, with `#{pane_id}` left for tmux to expand when the key is
pressed (tests/unit/test_answer_prompts_docs.py parses those commands as tma does)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "answer-claude-prompts.md"


def test_the_bindings_load_into_tmux(srv, tmp_path):
    (block,) = re.findall(r"```tmux\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    conf = tmp_path / "tmux.conf"
    conf.write_text(block, encoding="utf-8")
    srv.shell_pane()
    srv.tmux("source-file", str(conf))
    for key, action in (("Y", "approve"), ("N", "deny")):
        bound = srv.tmux("list-keys", "-T", "prefix", key)
        assert f"tma act {action} --pane" in bound, bound
        assert "#{pane_id}" in bound, bound  # expanded at the press, not at load
