"""The transcript event a store module returns: the protocol's vocabulary, keys in wire
order, and a store module's mistakes caught at once."""

from __future__ import annotations

import pytest

from tma.core import proto
from tma.core.transcript import event


def test_the_kinds_are_the_protocols():
    assert event.KINDS == proto.EVENT_KINDS


def test_an_event_keeps_its_kinds_keys_in_wire_order():
    e = event.make("tool_call", bytes=9, arg_keys=["command"], call_id="c1", name="Bash")
    assert list(e.data) == ["name", "call_id", "arg_keys", "bytes"]
    with pytest.raises(ValueError):
        event.make("tool_call", name="Bash")
    with pytest.raises(ValueError):
        event.make("no_such_kind")
    assert event.unknown("mystery").data == {"type_name": "mystery"}
