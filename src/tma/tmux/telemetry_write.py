"""Telemetry lanes: context, tokens, model, quota and cost writes.

Each lane has its own `_at` evidence clock and guard (a reading older than the stored
one holds); none of them touches the state tuple or @agent_stamped_at.
"""

from __future__ import annotations

from tma.tmux.adapter import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.core.telemetry import ContextReading


def _setf(pane: str, key: str, cond: str, value: str) -> str:
    return f"set-option -p -F -t {pane} {key} {quote('#{?' + cond + ',#{' + key + '},' + value + '}')}"


def older_than_stored(at_key: str, ms: int) -> str:
    """Holds when the stored reading is newer (an absent `_at` expands empty: commits)."""
    return f"#{{e|>:#{{{at_key}}},{int(ms)}}}"


def _safe(value: str) -> str:
    return "" if any(c in value for c in "#,{}\"\\$\n") else value


def lines(pane: str, reading: ContextReading, now: int) -> list[str]:
    out: list[str] = []
    ctx = older_than_stored("@agent_context_at", now)
    cmds: list[str] = []
    if reading.kind == "stamp":
        assert reading.pct is not None  # a stamp reading always carries its percentage
        cmds.append(_setf(pane, "@agent_context_pct", ctx, str(int(reading.pct))))
        if reading.tokens is not None:
            cmds.append(_setf(pane, "@agent_tokens", ctx, str(int(reading.tokens))))
            cmds.append(_setf(pane, "@agent_tokens_at", ctx, str(now)))
        else:
            cmds.append(_setf(pane, "@agent_tokens", ctx, ""))
            cmds.append(_setf(pane, "@agent_tokens_at", ctx, ""))
    elif reading.kind == "clear":
        for key in ("@agent_context_pct", "@agent_tokens", "@agent_tokens_at"):
            cmds.append(_setf(pane, key, ctx, ""))
    if reading.model:
        cmds.append(_setf(pane, "@agent_model", ctx, _safe(reading.model)))
    if reading.cost_usd is not None:
        cmds.append(_setf(pane, "@agent_cost_usd", ctx, _safe(str(reading.cost_usd))))
    if reading.kind in ("stamp", "clear"):
        cmds.append(_setf(pane, "@agent_context_at", ctx, str(now)))  # last in its lane
    if cmds:
        out.append(" ; ".join(cmds))
    q = reading.quota
    if q is not None:
        qc = older_than_stored("@agent_quota_at", now)
        qcmds = [
            _setf(pane, "@agent_quota_pct", qc, str(int(q.pct))),
            _setf(pane, "@agent_quota_window", qc, _safe(q.window)),
            _setf(pane, "@agent_quota_resets_at", qc,
                  str(int(q.resets_at)) if q.resets_at else ""),
            _setf(pane, "@agent_quota_at", qc, str(now)),
        ]
        out.append(" ; ".join(qcmds))
    return out
