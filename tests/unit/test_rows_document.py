"""tma.ui.rows: the one schema-1 document (ls, wait, subscribe) and subscribe's edges."""

from __future__ import annotations

import os

from tma.core.codec import Stamp
from tma.runtime.cycle import Row
from tma.tmux.read import Pane
from tma.ui import rows as render


def _row(pane_id: str, state: str = "idle", attention: bool = False) -> Row:
    pane = Pane(pane_id=pane_id, pane_pid=1, session_name="s", window_index="0",
                pane_index="0", current_command="sh", window_activity=0, alternate_on=False,
                scroll_position=0, height=24, current_path="/nowhere", session_id="$0",
                window_id="@0", width=80, window_active=True, pane_active=True,
                tty="/dev/pts/0", title="t", options={})
    return Row(pane=pane, stamp=Stamp(state=state, attention=attention), agent="claude")


def test_the_document_wraps_row_dicts_with_the_server_and_this_host():
    doc = render.document([_row("%1"), _row("%2")], server="/tmp/sock")
    assert list(doc) == ["schema", "agents"] and doc["schema"] == 1
    assert [list(d) for d in doc["agents"]] == [list(render.ROW_KEYS)] * 2
    assert {(d["server"], d["host"]) for d in doc["agents"]} == {
        ("/tmp/sock", os.uname().nodename)}
    assert render.document([], server="x", host="h") == {"schema": 1, "agents": []}


def test_one_row_stands_beside_the_schema_key():
    doc = render.document([_row("%3")], server="s", host="h", one=True)
    assert list(doc) == ["schema", *render.ROW_KEYS] and doc["pane"] == "%3"


def test_edges_start_from_a_baseline_and_name_a_finished_turn_done():
    dicts = render.document([_row("%1", "working"), _row("%2")], server="", host="")["agents"]
    states, records = render.edges(None, dicts, 5)
    assert records == [] and states["%1"][0] == "working"
    later = render.document([_row("%1", "idle", attention=True), _row("%3")],
                            server="", host="")["agents"]
    _states, records = render.edges(states, later, 9)
    assert [(r["pane"], r["from"], r["to"], r["at_ms"]) for r in records] == [
        ("%1", "working", "done", 9), ("%3", "", "idle", 9), ("%2", "idle", "", 9)]
    assert records[-1]["detail"] is None  # a pane that left has no detail
