"""The transcript event a store module returns: the protocol's vocabulary, keys in wire
order, and a store module's mistakes caught at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tma.core import proto
from tma.core.transcript import event


def test_the_kinds_are_the_protocols_and_the_schemas():
    """One table (tma.core.event_kinds) for the readers and the protocol, and the
    published schema names the same kinds with the same keys, required in that set."""
    assert event.KINDS is proto.EVENT_KINDS
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "proto.schema.json")
                        .read_text(encoding="utf-8"))
    branches = {b["if"]["properties"]["kind"]["const"]: b["then"]
                for b in schema["$defs"]["event_header"]["allOf"]}
    assert set(branches) == set(event.KINDS)
    for kind, keys in event.KINDS.items():
        assert set(branches[kind]["required"]) == set(keys), kind


def test_an_event_keeps_its_kinds_keys_in_wire_order():
    e = event.make("tool_call", bytes=9, arg_keys=["command"], call_id="c1", name="Bash")
    assert list(e.data) == ["name", "call_id", "arg_keys", "bytes"]
    with pytest.raises(ValueError):
        event.make("tool_call", name="Bash")
    with pytest.raises(ValueError):
        event.make("no_such_kind")
    assert event.unknown("mystery").data == {"type_name": "mystery"}
