"""The Codex rollout tail: context %, model and quota from the session's rollout JSONL.

Codex has no statusline; the poll cycle reads the last 64 KiB of the rollout file
its hooks named (`transcript_path`, stored as @agent_transcript: tma's HOME is not
the agent's, so the file cannot be discovered from a session id alone) — only when
the file changed since the last reading (its mtime is newer than @agent_context_at).
"""

from __future__ import annotations

import os

from tma.core import codec, telemetry
from tma.tmux import telemetry_write

TAIL_BYTES = 64 * 1024
FORMAT = "codex-rollout-jsonl"


def read_tail(path: str, context_at_ms: int) -> str | None:
    """The file's last 64 KiB, or None when it is missing or unchanged since the reading."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_mtime_ns // 1_000_000 <= context_at_ms:
        return None
    try:
        with open(path, "rb") as fh:
            if st.st_size > TAIL_BYTES:
                fh.seek(st.st_size - TAIL_BYTES)
            data = fh.read(TAIL_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def lines_for(panes, formats: dict[str, str], now: int) -> list[str]:
    """Telemetry writes for every pane whose agent's context channel is the rollout tail."""
    out: list[str] = []
    for pane in panes:
        opts = pane.options
        path = opts.get("@agent_transcript", "")
        if not path or formats.get(opts.get("@agent_name", "")) != FORMAT:
            continue
        raw_at = opts.get("@agent_context_at", "")
        at = codec.to_ms(int(raw_at)) if raw_at.isdigit() else 0
        text = read_tail(path, at)
        if text is None:
            continue

        reading = telemetry.parse_context(FORMAT, text, now_ms=now)
        # the rollout carries no statusline clock: a file change always advances the lane
        if reading.kind == "ignore" and reading.quota is None and not reading.model:
            continue
        out.extend(telemetry_write.lines(pane.pane_id, reading, now))
    return out
