"""Cursor CLI's transcript is refused by name: a reason the framework can show, no reader."""

from __future__ import annotations

from tma.core.transcript import cursor


def test_cursor_is_refused_with_the_reason():
    assert cursor.NAME == "cursor"
    assert "tool results" in cursor.REFUSAL and "timestamps" in cursor.REFUSAL
    assert not hasattr(cursor, "events") and not hasattr(cursor, "session")
