"""Agents' own transcripts, read as the public protocol's events (pure).

Each agent writes its conversation to a store of its own (Claude Code's project JSONL,
Codex's rollout JSONL, Gemini CLI's session file, pi's session JSONL, GitHub Copilot CLI's
session events, Qwen Code's chat recording, OpenCode's SQLite database). A store module here turns ONE record of that store into the protocol's
events (`event.Event`, the vocabulary of tma.core.proto.EVENT_KINDS), as a pure
function of that record alone, so a page read backwards from any offset, in any split
of the file into chunks, yields the same events. Reading files, cursors, budgets and
which file is a pane's are tma.runtime's (they do I/O).
"""
