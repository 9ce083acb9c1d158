"""tma serve's ScreenAsks: what a blocked pane's dialog asks is read off its screen once
per pane and episode, again only after a read that found nothing, and only for the rows
no hook speaks for (tma.runtime.act.card_screen.wants_screen)."""

from __future__ import annotations

from types import SimpleNamespace

from tma.runtime.fleet.serve import ScreenAsks


def _row(pane: str, episode: int, *, state: str = "blocked", hook_tool: str = ""):
    options = {"@agent_pending_tool": hook_tool} if hook_tool else {}
    return SimpleNamespace(agent="claude", pane=SimpleNamespace(pane_id=pane, options=options),
                           stamp=SimpleNamespace(state=state, detail="permission",
                                                 episode_ms=episode))


def test_each_prompt_is_read_once_a_miss_again_later_and_hooked_rows_never():
    now = [1000]
    reads: list[list[str]] = []
    answer = {"%1": ("Bash", "Bash: ls"), "%2": ("", "")}

    def read(rows):
        reads.append([r.pane.pane_id for r in rows])
        return {r.pane.pane_id: answer[r.pane.pane_id] for r in rows}

    asks = ScreenAsks(read, lambda: now[0])
    rows = [_row("%1", 5), _row("%2", 7), _row("%3", 9, hook_tool="Bash"),
            _row("%4", 9, state="working")]
    assert asks(rows) == {"%1": ("Bash", "Bash: ls")}
    assert asks(rows) == {"%1": ("Bash", "Bash: ls")}
    assert reads == [["%1", "%2"]]  # once; the hook's row and the working one never
    answer["%2"] = ("Edit", "Edit: a.py")  # the dialog finished drawing
    now[0] += ScreenAsks.RETRY_MS
    assert asks(rows) == {"%1": ("Bash", "Bash: ls"), "%2": ("Edit", "Edit: a.py")}
    assert reads[1:] == [["%2"]]
    rows[0] = _row("%1", 6)  # a new prompt: a new episode, read anew
    answer["%1"] = ("Write", "Write: b.py")
    assert asks(rows)["%1"] == ("Write", "Write: b.py")
    assert reads[2:] == [["%1"]]
