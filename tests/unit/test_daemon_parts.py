"""The daemon's transition diff: what its parts hear after a read."""

from tma.core import codec
from tma.daemon import parts


class _Pane:
    def __init__(self, pane_id):
        self.pane_id = pane_id


class _Row:
    def __init__(self, pane_id, state, detail="", agent="claude"):
        self.pane = _Pane(pane_id)
        self.stamp = codec.Stamp(state=state, detail=detail, name=agent)
        self.agent = agent


def test_new_changed_unchanged_and_gone_panes():
    before = {"%1": codec.Stamp(state="working", name="claude"),
              "%2": codec.Stamp(state="idle", name="codex"),
              "%3": codec.Stamp(state="working", name="pi")}
    rows = [_Row("%1", "blocked", "permission"), _Row("%2", "idle", agent="codex"),
            _Row("%4", "working", agent="gemini")]
    out = {t.pane: t for t in parts.transitions(before, rows, 1000)}
    assert set(out) == {"%1", "%3", "%4"}
    assert (out["%1"].before, out["%1"].after, out["%1"].detail) == ("working", "blocked",
                                                                     "permission")
    assert (out["%3"].before, out["%3"].after, out["%3"].agent) == ("working", "", "pi")
    assert (out["%4"].before, out["%4"].after) == ("", "working")
    assert out["%4"].to_json()["from"] is None and out["%4"].to_json()["at"] == 1000


def test_a_detail_change_is_a_transition():
    before = {"%1": codec.Stamp(state="blocked", detail="permission")}
    assert [t.detail for t in parts.transitions(before, [_Row("%1", "blocked", "question")],
                                               5)] == ["question"]
