"""What every JSONL store module owes the reader, checked on Gemini CLI's, pi's, Copilot
CLI's and Qwen Code's recorded sessions: every record of a recorded session is known (no
`unknown` event), a record drifted by hand is not, `events` is a function of the one
record it is given, and a recorded file read backwards in chunks of any size gives the
events read forwards.
"""

from __future__ import annotations

import copy
import importlib
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.helpers import recorded_transcripts as tx
from tma.core.transcript import copilot, event, fields, gemini, pi, qwen
from tma.core.transcript.window import Limits
from tma.runtime.transcript import page

STORES = [(gemini, tx.GEMINI), (pi, tx.PI), (copilot, tx.COPILOT), (qwen, tx.QWEN)]
IDS = [mod.NAME for mod, _ in STORES]
ALL = [(mod, rec) for mod, where in STORES for path in tx.recorded(where)
       for rec in tx.records(path)]


def _alone(mod, rec):
    """What a record gives read first by a module just loaded (no record before it)."""
    return importlib.reload(mod).events(copy.deepcopy(rec))


ALONE = [_alone(mod, rec) for mod, rec in ALL]


@pytest.mark.parametrize("mod,where", STORES, ids=IDS)
def test_every_recorded_record_is_known(mod, where):
    files = tx.recorded(where)
    assert len(files) >= 6  # the scenarios are there (a glob that finds nothing fails here)
    for path in files:
        evs = [e for rec in tx.records(path) for e in mod.events(rec)]
        assert evs, path.name
        assert [e.data for e in evs if e.kind == "unknown"] == [], path.name
        assert all(e.kind in event.KINDS for e in evs)


@pytest.mark.parametrize("mod,where", STORES, ids=IDS)
def test_a_drifted_session_is_counted_unknown(mod, where):
    drifted = sorted((where / "drifted").glob("*.jsonl"))
    assert drifted
    for path in drifted:
        unknown = [e for rec in tx.records(path) for e in mod.events(rec) if e.kind == "unknown"]
        assert unknown, f"{path.name}: a renamed record type must come back unknown"


@pytest.mark.parametrize("mod,where", STORES, ids=IDS)
def test_every_event_has_its_kinds_keys_and_a_short_one_line_preview(mod, where):
    for path in tx.recorded(where):
        for rec in tx.records(path):
            for e in mod.events(rec):
                assert list(e.data) == list(event.KINDS[e.kind])
                if e.preview is not None:
                    assert 0 < len(e.preview) <= fields.PREVIEW_CHARS
                    assert "\n" not in e.preview and e.preview == e.preview.strip()
                if e.body is not None:
                    assert e.body[0] in ("text", "json")
                    if e.body[0] == "json":  # compact: as short as JSON writes it
                        assert e.body[1] == fields.compact(json.loads(e.body[1]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(range(len(ALL))))
def test_events_depend_on_the_one_record_alone(order):
    """Read in any order after any other records (as a page read backwards from any
    offset reads them), every record gives what it gives read alone by a freshly loaded
    module, and the record handed over is left as it was."""
    for mod, _ in STORES:
        importlib.reload(mod)
    for i in order:
        mod, rec = ALL[i]
        given_rec = copy.deepcopy(rec)
        assert mod.events(given_rec) == ALONE[i]
        assert given_rec == rec


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(ALL))), st.data())
def test_a_record_with_any_field_changed_still_maps_without_error(i, data):
    """A record whose fields hold anything (a newer or broken writer) never raises: it
    maps to events of the protocol's kinds, each with its kind's keys."""
    mod, rec = ALL[i]
    rec = copy.deepcopy(rec)
    target = rec
    path = data.draw(st.lists(st.integers(0, 7), max_size=3))
    for step in path:  # walk down into a nested object, then replace one of its values
        keys = list(target) if isinstance(target, dict) else list(range(len(target))) \
            if isinstance(target, list) else []
        if not keys:
            break
        key = keys[step % len(keys)]
        if isinstance(target[key], dict | list) and target[key]:
            target = target[key]
        else:
            break
    if isinstance(target, dict) and target:
        target[data.draw(st.sampled_from(sorted(target)))] = data.draw(JSON)
    elif isinstance(target, list) and target:
        target[data.draw(st.integers(0, len(target) - 1))] = data.draw(JSON)
    for e in mod.events(rec):
        assert e.kind in event.KINDS and list(e.data) == list(event.KINDS[e.kind])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=10), JSON, max_size=6))
def test_any_json_object_is_events_never_an_error(obj):
    for mod, _ in STORES:
        evs = mod.events(obj)
        assert evs and all(e.kind in event.KINDS for e in evs)


FILES = [(mod, path) for mod, where in STORES for path in tx.recorded(where)]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FILES), st.integers(1, 70_000), st.integers(1, 9))
def test_a_recorded_file_read_backwards_in_any_chunks_reads_the_same_events(
        tmp_path_factory, picked, chunk, last):
    """The page reader over a real recorded file: any chunk size and page size, paged
    with `older` to the start, gives every event the records give read forwards."""
    mod, path = picked
    copy_ = tmp_path_factory.mktemp("chunks") / path.name
    copy_.write_bytes(path.read_bytes())
    forward = [e for rec in tx.records(path) for e in mod.events(rec)][::-1]
    got, before = [], None
    for _ in range(10_000):
        pg = page.read_page(str(copy_), mod, before=before,
                            limits=Limits(read_bytes=1 << 22, last=last), chunk=chunk)
        got.extend(e.event for e in pg.entries)
        if pg.older is None:
            break
        before = pg.older
    assert got == forward
