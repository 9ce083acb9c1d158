"""Context telemetry parsers: one agent payload in, one `ContextReading` out.

Pure. The context intake (`tma event --kind context`, and the poll cycle's Codex
rollout tail) owns the I/O, the session-ownership filter and the evidence-time
guard; this module only says what a payload means.

Each reading answers three separate questions:

* the context gauge (`kind`): STAMP a percentage, CLEAR the gauge, or IGNORE
  (leave whatever is stored alone);
* side readings the payload happens to carry: session id, model label, account
  quota, session cost. They are independent of `kind`: a Claude payload with no
  `context_window` yet can still carry a quota reading. `None` always means
  "this payload says nothing about it", never "clear it";
* nothing else. A payload that is not trustworthy as a whole (malformed JSON, a
  non-object, a session id of the wrong type, Claude's out-of-range percentage)
  yields the bare `IGNORED` reading with no side readings at all.

Absence is never a clear. The one clear in the whole lane is Claude's explicit
`"context_window": null` (sent right after `/compact` and early in a session).

No parser raises on payload content: the push path is fire-and-forget and a bad
payload must degrade to an absent gauge, never to an error or a wrong stamp. The
only exception is a format id no parser is compiled in for (`UnknownFormat`),
which is a configuration problem, not payload content.

Times are epoch milliseconds. Claude states reset times in epoch seconds and
Codex states them in seconds (absolute or relative); both are scaled here.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Final, Literal

CLAUDE_STATUSLINE: Final = "claude-statusline-json"
CODEX_ROLLOUT: Final = "codex-rollout-jsonl"
CURSOR_STATUSLINE: Final = "cursor-statusline-json"
PI_CONTEXT: Final = "pi-context-json"

#: Every compiled-in parser format id (the `[telemetry.context].format` vocabulary).
FORMATS: tuple[str, ...] = (CLAUDE_STATUSLINE, CODEX_ROLLOUT, CURSOR_STATUSLINE, PI_CONTEXT)

STAMP: Final = "stamp"
CLEAR: Final = "clear"
IGNORE: Final = "ignore"

Kind = Literal["stamp", "clear", "ignore"]

#: The Claude release that fixed the cumulative context-fields bug. Older payloads
#: may carry a session-cumulative `total_input_tokens`, so their count is not stamped.
CLAUDE_TOKENS_MIN_VERSION: tuple[int, ...] = (2, 1, 132)

#: Claude statusline `rate_limits` windows, in tie-break order.
CLAUDE_QUOTA_WINDOWS: tuple[str, ...] = ("five_hour", "seven_day", "spend_limit")
#: Codex rollout `rate_limits` windows, in tie-break order.
CODEX_QUOTA_WINDOWS: tuple[str, ...] = ("primary", "secondary")

# Sanity bounds. A value past one of these is garbage, not a reading.
MAX_TOKENS = 10**9  # no context window is a billion tokens
MAX_QUOTA_PCT = 1000  # spend_limit may run past 100 %; stored clamped to 100
MAX_EPOCH_S = 10**11  # year ~5138
MAX_RELATIVE_S = 10**9  # ~31 years
MAX_COST_USD = 10**9
MAX_LABEL_LEN = 64
MAX_SESSION_LEN = 256

_VERSION_RE = re.compile(r"v?(\d{1,9}(?:\.\d{1,9})*)(-[0-9A-Za-z.-]*)?(\+[0-9A-Za-z.-]*)?")
_LABEL_RE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]{{0,{MAX_LABEL_LEN - 1}}}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class UnknownFormat(ValueError):
    """No parser is compiled in for this format id."""

    def __init__(self, fmt: str):
        super().__init__(f"unknown context telemetry format {fmt!r} (known: {', '.join(FORMATS)})")
        self.format = fmt


@dataclass(frozen=True)
class QuotaReading:
    """The account rate-limit window closest to exhausted."""

    pct: int  # 0..100 (a window reported past 100 % is stored as 100)
    window: str  # five_hour / seven_day / spend_limit (Claude), primary / secondary (Codex)
    resets_at: int | None = None  # epoch ms; None when the payload states no usable reset time


@dataclass(frozen=True)
class ContextReading:
    """One parsed context payload. See the module docstring for the semantics."""

    kind: Kind
    pct: int | None = None  # 0..100, set iff kind == STAMP
    tokens: int | None = None  # tokens currently in the window, only where unambiguous
    session: str | None = None  # the payload's own session id, for the ownership filter
    model: str | None = None  # a safe model label, where the channel carries one
    quota: QuotaReading | None = None  # None = absent (ignored), never a clear
    cost_usd: str | None = None  # Claude cost.total_cost_usd as a decimal string

    @property
    def is_stamp(self) -> bool:
        return self.kind == STAMP

    @property
    def is_clear(self) -> bool:
        return self.kind == CLEAR

    @property
    def is_ignore(self) -> bool:
        return self.kind == IGNORE


#: The bare ignore: nothing in the payload is to be used.
IGNORED: Final = ContextReading(IGNORE)


def parse_context(fmt: str, payload: str, now_ms: int | None = None) -> ContextReading:
    """Parse `payload` with the parser named by `fmt`.

    `now_ms` is only consulted by the Codex parser, as a last-resort base for a
    reset time stated relative to "now" on a record that has no timestamp of its
    own; without it such a reset time is left `None`.

    Raises `UnknownFormat` for a format id with no compiled-in parser. Never
    raises on payload content.
    """
    if fmt == CLAUDE_STATUSLINE:
        return parse_claude_statusline(payload)
    if fmt == CURSOR_STATUSLINE:
        return parse_cursor_statusline(payload)
    if fmt == PI_CONTEXT:
        return parse_pi_context(payload)
    if fmt == CODEX_ROLLOUT:
        return parse_codex_rollout(payload, now_ms)
    raise UnknownFormat(fmt)


# ------------------------------------------------------------------ Claude


def parse_claude_statusline(payload: str) -> ContextReading:
    """The Claude Code statusline JSON (forwarded per turn by the statusline shim).

    * `context_window.used_percentage` in 0..100 -> STAMP (rounded half up);
    * outside 0..100 (the pre-2.1.132 cumulative bug) -> bare IGNORE of the whole
      payload: no stamp, no clear, no side readings;
    * `context_window: null` -> CLEAR;
    * `context_window` or its percentage absent, null or mistyped -> IGNORE the
      gauge (side readings still reported).

    The count is `context_window.total_input_tokens`, stamped only from a payload
    whose `version` is at least 2.1.132 (numeric, component-wise); never a
    sibling such as `subagentStatusLine.tokenCount`.
    """
    owned = _owned_object(payload)
    if owned is None:
        return IGNORED
    obj, session = owned

    kind: Kind = IGNORE
    pct: int | None = None
    tokens: int | None = None
    if "context_window" in obj:
        window = obj["context_window"]
        if window is None:
            kind = CLEAR
        elif isinstance(window, dict):
            used = _finite(window.get("used_percentage"))
            if used is not None:
                if not 0 <= used <= 100:
                    return IGNORED
                kind, pct = STAMP, _round_half_up(used)
                if _version_at_least(obj.get("version"), CLAUDE_TOKENS_MIN_VERSION):
                    tokens = _count(window.get("total_input_tokens"))

    model_obj = obj.get("model")
    model = _label(model_obj.get("id")) if isinstance(model_obj, dict) else None
    cost_obj = obj.get("cost")
    cost = _usd(cost_obj.get("total_cost_usd")) if isinstance(cost_obj, dict) else None
    return ContextReading(
        kind,
        pct=pct,
        tokens=tokens,
        session=session,
        model=model,
        quota=_claude_quota(obj.get("rate_limits")),
        cost_usd=cost,
    )


def _claude_quota(limits: Any) -> QuotaReading | None:
    """`rate_limits.{five_hour,seven_day,spend_limit}`: each `{used_percentage, resets_at}`
    with `resets_at` in epoch seconds (an ISO-8601 string with an offset is accepted too)."""
    if not isinstance(limits, dict):
        return None
    windows = []
    for name in CLAUDE_QUOTA_WINDOWS:
        win = limits.get(name)
        if not isinstance(win, dict):
            continue
        pct = _quota_pct(win.get("used_percentage"))
        if pct is not None:
            windows.append(QuotaReading(pct, name, _reset_ms(win.get("resets_at"))))
    return _closest_to_exhausted(windows)


# ------------------------------------------------------------------ Cursor


def parse_cursor_statusline(payload: str) -> ContextReading:
    """The Cursor CLI statusLine JSON.

    Reads only the two confirmed numeric fields: STAMP
    `round(100 * total_input_tokens / context_window_size)` with the count as the
    token figure. Anything else (no `context_window`, a non-numeric field, a zero
    window, more tokens than the window holds) is IGNORE, never a clear: this
    channel is undocumented, so a shape change must degrade to an absent gauge.
    """
    section = _owned_section(payload, "context_window")
    if section is None:
        return IGNORED
    window, session = section
    pct = _ratio_pct(window.get("total_input_tokens"), window.get("context_window_size"))
    if pct is None:
        return IGNORED
    return ContextReading(
        STAMP, pct=pct, tokens=_count(window.get("total_input_tokens")), session=session
    )


# ------------------------------------------------------------------ pi


def parse_pi_context(payload: str) -> ContextReading:
    """The pi extension's `{"session_id", "context_usage": {tokens, contextWindow, percent}}`.

    * a `percent` in 0..100 -> STAMP it (pi computed it against its own window);
    * no `percent`, but a count and a positive `contextWindow` -> STAMP the ratio;
    * anything else (`context_usage` null or absent, post-/compact nulls, a count
      with no window) -> IGNORE. No window is ever guessed.
    """
    section = _owned_section(payload, "context_usage")
    if section is None:
        return IGNORED
    usage, session = section
    tokens = _count(usage.get("tokens"))
    raw = usage.get("percent")
    if raw is not None:
        percent = _finite(raw)
        if percent is None or not 0 <= percent <= 100:
            return IGNORED
        pct = _round_half_up(percent)
    else:
        computed = _ratio_pct(usage.get("tokens"), usage.get("contextWindow"))
        if computed is None:
            return IGNORED
        pct = computed
    return ContextReading(STAMP, pct=pct, tokens=tokens, session=session)


# ------------------------------------------------------------------ Codex


def parse_codex_rollout(payload: str, now_ms: int | None = None) -> ContextReading:
    """The tail of a Codex rollout JSONL file (the caller reads the last 64 KiB).

    A line that does not parse as one JSON object is skipped: that covers the cut
    first line of a tail read and a last line still being written (a proper
    prefix or suffix of a JSON object is never itself a JSON object).

    * context: the NEWEST `token_count` record that carries an `info` object
      decides; STAMP `info.total_token_usage.total_tokens / info.model_context_window`
      (never `last_token_usage`). A malformed newest record is IGNORE; older
      records are not consulted. No such record at all is IGNORE (no reading).
    * tokens: always None. `total_token_usage.total_tokens` sums a per-request
      input footprint with a session-cumulative output counter, so it is not
      "tokens in the context window".
    * model: the newest `turn_context` record's `model` (best effort).
    * quota: the newest `token_count` record's `rate_limits` block.
    * session: always None; the caller found the file by the pane's session id.
    """
    if not isinstance(payload, str):
        # defensive: the runtime callers are not type-checked
        return IGNORED  # type: ignore[unreachable]
    info: dict[str, Any] | None = None
    quota: QuotaReading | None = None
    model: str | None = None
    for raw in payload.split("\n"):
        line = raw.strip()
        if not line.startswith("{"):
            continue
        if '"token_count"' not in line and '"turn_context"' not in line:
            continue
        rec = _load_object(line)
        if rec is None:
            continue
        body = rec.get("payload")
        if not isinstance(body, dict):
            continue
        kind = rec.get("type")
        if kind == "turn_context":
            label = _label(body.get("model"))
            if label is not None:
                model = label
        elif kind == "event_msg" and body.get("type") == "token_count":
            if isinstance(body.get("info"), dict):
                info = body["info"]
            limits = body.get("rate_limits")
            if isinstance(limits, dict):
                quota = _codex_quota(limits, _iso_ms(rec.get("timestamp")), _ms(now_ms))

    pct = _codex_pct(info) if info is not None else None
    if pct is None:
        return ContextReading(IGNORE, model=model, quota=quota)
    return ContextReading(STAMP, pct=pct, model=model, quota=quota)


def _codex_pct(info: dict[str, Any]) -> int | None:
    usage = info.get("total_token_usage")
    if not isinstance(usage, dict):
        return None
    return _ratio_pct(usage.get("total_tokens"), info.get("model_context_window"))


def _codex_quota(
    limits: dict[str, Any], record_ms: int | None, now_ms: int | None
) -> QuotaReading | None:
    """`rate_limits.{primary,secondary}`: each `{used_percent, window_minutes, resets_at}`
    (epoch seconds) or, on older builds, `resets_in_seconds` relative to the record."""
    windows = []
    for name in CODEX_QUOTA_WINDOWS:
        win = limits.get(name)
        if not isinstance(win, dict):
            continue
        pct = _quota_pct(win.get("used_percent"))
        if pct is None:
            continue
        resets_at = _reset_ms(win.get("resets_at"))
        if resets_at is None:
            relative = _finite(win.get("resets_in_seconds"))
            base = record_ms if record_ms is not None else now_ms
            if relative is not None and 0 <= relative <= MAX_RELATIVE_S and base is not None:
                resets_at = base + round(relative * 1000)
        windows.append(QuotaReading(pct, name, resets_at))
    return _closest_to_exhausted(windows)


# ------------------------------------------------------------------ shared helpers


def _load_object(text: Any) -> dict[str, Any] | None:
    """A JSON object, or None for anything else. NaN/Infinity literals are refused."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # JSONDecodeError, int-digit limit, deep nesting
        return None
    return value if isinstance(value, dict) else None


def _owned_object(payload: Any) -> tuple[dict[str, Any], str | None] | None:
    """(the JSON object, its session id), or None when the payload is not an object or
    carries an implausible session id: every statusline channel starts here."""
    obj = _load_object(payload)
    if obj is None:
        return None
    ok, session = _session(obj)
    return (obj, session) if ok else None


def _owned_section(payload: Any, key: str) -> tuple[dict[str, Any], str | None] | None:
    """(the object's `key` object, the session id), or None when either is unusable."""
    owned = _owned_object(payload)
    if owned is None:
        return None
    obj, session = owned
    section = obj.get(key)
    return (section, session) if isinstance(section, dict) else None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-finite JSON constant {name}")


def _finite(value: object) -> float | int | None:
    """A finite JSON number. Booleans are not numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _count(value: Any) -> int | None:
    """A whole, non-negative, plausible token count (an integral float is accepted)."""
    n = _finite(value)
    if n is None or not 0 <= n <= MAX_TOKENS:
        return None
    if isinstance(n, float):
        if not n.is_integer():
            return None
        return int(n)
    return n


def _ratio_pct(used: Any, window: Any) -> int | None:
    """round_half_up(100 * used / window) in exact integer arithmetic, or None unless
    both are counts, the window is positive and the count fits in it."""
    u, w = _count(used), _count(window)
    if u is None or w is None or w == 0 or u > w:
        return None
    return (200 * u + w) // (2 * w)


def _round_half_up(value: float | int) -> int:
    return math.floor(value + 0.5)


def _quota_pct(value: Any) -> int | None:
    n = _finite(value)
    if n is None or not 0 <= n <= MAX_QUOTA_PCT:
        return None
    return min(100, _round_half_up(n))


def _closest_to_exhausted(windows: list[QuotaReading]) -> QuotaReading | None:
    """The highest percentage; ties go to the window listed first."""
    best: QuotaReading | None = None
    for win in windows:
        if best is None or win.pct > best.pct:
            best = win
    return best


def _reset_ms(value: Any) -> int | None:
    """Epoch seconds (number) or an offset-qualified ISO-8601 string -> epoch ms."""
    if isinstance(value, str):
        return _iso_ms(value)
    seconds = _finite(value)
    if seconds is None or not 0 < seconds <= MAX_EPOCH_S:
        return None
    return round(seconds * 1000)


def _iso_ms(value: Any) -> int | None:
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        stamp = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if stamp.tzinfo is None:  # a local wall time names no instant
        return None
    try:
        ms = (stamp - _EPOCH) // timedelta(milliseconds=1)
    except OverflowError:
        return None
    return ms if 0 < ms <= MAX_EPOCH_S * 1000 else None


def _ms(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _session(obj: dict[str, Any]) -> tuple[bool, str | None]:
    """(usable, session id). Absent, null or "" is no session (ownership implicit);
    a value that is not a plausible id makes the payload unusable, because the
    ownership filter would otherwise wave it through as unowned."""
    value = obj.get("session_id")
    if value is None or value == "":
        return True, None
    if (
        not isinstance(value, str)
        or len(value) > MAX_SESSION_LEN
        or not value.isprintable()
        or any(ch.isspace() for ch in value)
    ):
        return False, None
    return True, value


def _label(value: Any) -> str | None:
    """A model id safe to store in a pane option: short, no spaces, no format characters."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _LABEL_RE.fullmatch(value) else None


def _version_at_least(value: Any, floor: tuple[int, ...]) -> bool:
    """Numeric, component-wise `value >= floor`; missing components count as 0 and a
    pre-release of the floor itself (`2.1.132-rc.1`) is below it. Unparsable -> False."""
    if not isinstance(value, str) or len(value) > 64:
        return False
    match = _VERSION_RE.fullmatch(value.strip())
    if match is None:
        return False
    parts = tuple(int(p) for p in match.group(1).split("."))
    width = max(len(parts), len(floor))
    have = parts + (0,) * (width - len(parts))
    need = floor + (0,) * (width - len(floor))
    if have != need:
        return have > need
    return match.group(2) is None


def _usd(value: Any) -> str | None:
    """A non-negative dollar figure as a plain decimal string, as stated (no exponent)."""
    n = _finite(value)
    if n is None or not 0 <= n <= MAX_COST_USD:
        return None
    if isinstance(n, int):
        return str(n)
    if n == 0:
        n = 0.0  # drop a negative zero's sign
    return format(Decimal(repr(n)), "f")
