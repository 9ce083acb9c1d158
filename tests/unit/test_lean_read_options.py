"""The lean pane read (`tma status`) must carry every option the cycle reads.

The lean listing leaves out the telemetry and request lanes; a cycle that read one of
them would silently see it unset. Every option named in the modules a cycle runs
through must be in read.CYCLE_OPTIONS (the server options aside).
"""

from __future__ import annotations

import re
from pathlib import Path

from tma.core import options
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


def test_lean_format_reads_the_kept_options_and_whether_an_ignored_pane_holds_a_lane():
    assert read.LEAN_OPTION_FIELDS == tuple(o for o in read.OPTION_FIELDS
                                            if o in read.CYCLE_OPTIONS)
    assert read.LEAN_RECORD == (read.PANE_FIELDS + read.LEAN_OPTION_FIELDS
                                + (read.LANES_HELD, "pane_title"))
    listing = read.Listing(lean=True)
    fmt = listing.args()[3]
    assert fmt == listing.pane_format()
    fr = listing.frame
    assert fmt.startswith(fr.rs + "L" + fr.fs) and fmt.count(fr.fs) == len(read.LEAN_RECORD) + 1
    # every episode option the record leaves out is in the marker's condition
    lanes = [o for o in options.EPISODE_OPTIONS if o not in read.CYCLE_OPTIONS]
    assert lanes and all("#{" + o + "}" in fmt for o in lanes)
    assert "pane_current_path" not in fmt and "pane_current_command" in fmt


def test_a_lean_line_parses_into_the_same_pane():
    values = {f: str(i) for i, f in enumerate(read.PANE_FIELDS)}
    values["pane_id"] = "%7"
    opts = {"@agent_state": "idle", "@agent_session": "s-1"}
    full, lean = read.Listing(), read.Listing(lean=True)
    title = "a\x1ftitle \\\\ |"  # as printed through frame.text: the backslash doubled
    a = full.parse(full.frame.record("P", [values[f] for f in read.PANE_FIELDS]
                                     + [opts.get(o, "") for o in read.OPTION_FIELDS]
                                     + [title]) + "\n")
    b = lean.parse(lean.frame.record("L", [values[f] for f in read.PANE_FIELDS]
                                     + [opts.get(o, "") for o in read.LEAN_OPTION_FIELDS]
                                     + ["", title]) + "\n")
    assert a.panes == b.panes
    a = a.panes[0]
    assert a.options == opts and a.title == "a\x1ftitle \\ |"
    held = lean.parse(lean.frame.record("L", [values[f] for f in read.PANE_FIELDS]
                                        + [opts.get(o, "") for o in read.LEAN_OPTION_FIELDS]
                                        + ["41", title]) + "\n")
    assert held.panes[0].options[read.LANES_HELD] == "41"


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
