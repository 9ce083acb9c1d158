"""The lean pane read (`tma status`) must carry every option the cycle reads.

The lean listing leaves out the telemetry and request lanes; a cycle that read one of
them would silently see it unset. Every option named in the modules a cycle runs
through must be in read.CYCLE_OPTIONS (the server options aside).
"""

from __future__ import annotations

import re
from pathlib import Path

from tma.tmux import read

SRC = Path(__file__).resolve().parents[2] / "src" / "tma"
CYCLE_MODULES = ("runtime/cycle.py", "tmux/write.py", "runtime/rollout.py", "core/codec.py",
                 "core/fold.py", "core/identity.py", "core/rules.py", "core/rollup.py",
                 "runtime/procs.py")
SERVER_OPTIONS = {"@tma_last_poll", "@tma_setpf_ok"}


def test_every_option_the_cycle_names_is_in_the_lean_read():
    missing = {}
    for rel in CYCLE_MODULES:
        names = set(re.findall(r"@(?:agent|tma)_[a-z_]+", (SRC / rel).read_text()))
        extra = names - read.CYCLE_OPTIONS - SERVER_OPTIONS
        if extra:
            missing[rel] = sorted(extra)
    assert missing == {}


def test_the_scan_sees_the_modules():
    text = (SRC / "runtime" / "cycle.py").read_text()
    assert "@tma_title_match_pid" in text and "@tma_title_match_pid" in read.CYCLE_OPTIONS


def test_lean_format_keeps_the_field_count_and_order():
    assert len(read.LEAN_OPTION_FIELDS) == len(read.OPTION_FIELDS)
    assert set(read.LEAN_OPTION_FIELDS) == set(read.OPTION_FIELDS)
    kept = [o for o in read.LEAN_OPTION_FIELDS if o in read.CYCLE_OPTIONS]
    assert read.LEAN_OPTION_FIELDS[:len(kept)] == tuple(kept)  # the lanes come last
    listing = read.Listing(lean=True)
    fmt = listing.args()[3]
    assert fmt == listing.pane_format()
    # a separator before every field and one closing the record, also where the lanes
    # are not expanded (they are written twice: expanded, and as empty fields)
    lanes = len(read.OPTION_FIELDS) - len(kept)
    fs = listing.frame.fs
    assert fmt.count(fs) == len(read.PANE_FIELDS) + len(read.OPTION_FIELDS) + lanes + 1
    assert "pane_current_path" not in fmt and "pane_current_command" in fmt


def test_a_lean_line_parses_into_the_same_pane():
    values = {f: str(i) for i, f in enumerate(read.PANE_FIELDS)}
    values["pane_id"] = "%7"
    opts = {"@agent_state": "idle", "@agent_context_pct": "41", "@agent_ignore": "1"}
    full, lean = read.Listing(), read.Listing(lean=True)
    title = "a\x1ftitle \\\\ |"  # as printed through frame.text: the backslash doubled
    a = full.parse(full.frame.record("P", [values[f] for f in read.PANE_FIELDS]
                                     + [opts.get(o, "") for o in read.OPTION_FIELDS]
                                     + [title]) + "\n")
    b = lean.parse(lean.frame.record("P", [values[f] for f in read.PANE_FIELDS]
                                     + [opts.get(o, "") for o in read.LEAN_OPTION_FIELDS]
                                     + [title]) + "\n")
    assert a.panes == b.panes
    a, b = a.panes[0], b.panes[0]
    assert a.options == opts and a.title == "a\x1ftitle \\ |"


def test_the_hook_reads_every_option_that_can_make_a_tuple_unreadable():
    # the hook's rollups count a neighbour only when its tuple decodes: every option
    # whose bad value raises DecodeError must be in the neighbours' read
    from tma.core import codec

    raising = set()
    for key in (f"@agent_{k}" for k in ("state", "detail", "source", "evidence_at", "since",
                                        "stamped_at", "attention", "name", "pid", "hash",
                                        "session", "notified_at", "turn_at", "subagents")):
        opts = {"@agent_state": "idle", "@agent_stamped_at": "1", key: "x!"}
        try:
            codec.decode(opts)
        except codec.DecodeError:
            raising.add(key)
    assert {"@agent_state", "@agent_pid", "@agent_stamped_at"} <= raising
    assert raising | {"@agent_ignore"} <= set(read.ROLLUP_READ_OPTIONS)
