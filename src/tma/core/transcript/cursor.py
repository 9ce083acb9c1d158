"""Cursor CLI's transcript: refused, by name (pure; no reader).

Cursor CLI writes `~/.cursor/projects/<cwd-slug>/agent-transcripts/<chat>/<chat>.jsonl`,
but what it keeps there is not a transcript tma can serve: the records carry no tool
results (a call's outcome is never written) and no timestamps (no event could say when it
happened, and no page could be ordered by time). A pane running Cursor CLI answers a
transcript request with REFUSAL instead of a partial history that would read as complete.
"""

from __future__ import annotations

NAME = "cursor"

#: What a transcript request for a Cursor CLI pane is answered with.
REFUSAL = ("Cursor CLI's transcript is not read: its agent-transcripts JSONL records "
           "neither tool results nor timestamps, so it cannot say what a tool call did or "
           "when anything happened")
