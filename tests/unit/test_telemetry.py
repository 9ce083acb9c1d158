"""Context telemetry parsers (tma.core.telemetry).

The reference payloads are read in place from the shared captures folder, and
every telemetry row of its expectations.tsv must have a pinned expectation here.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tma.core import telemetry as T
from tma.core.telemetry import (
    CLAUDE_STATUSLINE,
    CODEX_ROLLOUT,
    CURSOR_STATUSLINE,
    FORMATS,
    IGNORED,
    PI_CONTEXT,
    ContextReading,
    QuotaReading,
    UnknownFormat,
    parse_context,
)

CAPTURES = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "captures"

CLAUDE_SESSION = "019f8aac-ff01-75d0-9bb1-7f0eab253ce7"
CURSOR_SESSION = "3f1c8d2e-9a44-4b17-9c0e-2b6a1d7e4f88"
PI_SESSION = "ses_0789d5f61ffeW6yCmb3x7wLH1X"

# file -> (format, kind, pct, tokens, session, model)
EXPECTED: dict[str, tuple[str, str, int | None, int | None, str | None, str | None]] = {
    "claude_statusline_context.json": (
        CLAUDE_STATUSLINE,
        "stamp",
        78,
        156000,
        CLAUDE_SESSION,
        "claude-opus-4-8",
    ),
    "claude_statusline_cumulative.json": (CLAUDE_STATUSLINE, "ignore", None, None, None, None),
    "claude_statusline_null_context.json": (
        CLAUDE_STATUSLINE,
        "clear",
        None,
        None,
        CLAUDE_SESSION,
        "claude-opus-4-8",
    ),
    "claude_statusline_pre_fix_version.json": (
        CLAUDE_STATUSLINE,
        "stamp",
        41,
        None,
        CLAUDE_SESSION,
        "claude-opus-4-8",
    ),
    "claude_statusline_subagent.json": (
        CLAUDE_STATUSLINE,
        "stamp",
        15,
        30000,
        "0b03d2a0-d44c-4c51-8de3-57f2c043e737",
        "claude-opus-4-8",
    ),
    "codex_rollout_no_token_count.jsonl": (
        CODEX_ROLLOUT,
        "ignore",
        None,
        None,
        None,
        "gpt-5-codex",
    ),
    "codex_rollout_token_count.jsonl": (CODEX_ROLLOUT, "stamp", 57, None, None, "gpt-5-codex"),
    "codex_rollout_truncated.jsonl": (CODEX_ROLLOUT, "stamp", 33, None, None, None),
    "cursor_statusline_context.json": (
        CURSOR_STATUSLINE,
        "stamp",
        65,
        130000,
        CURSOR_SESSION,
        None,
    ),
    "cursor_statusline_malformed.json": (CURSOR_STATUSLINE, "ignore", None, None, None, None),
    "cursor_statusline_no_context.json": (CURSOR_STATUSLINE, "ignore", None, None, None, None),
    "pi_context.json": (PI_CONTEXT, "stamp", 62, 124000, PI_SESSION, None),
    "pi_context_missing.json": (PI_CONTEXT, "ignore", None, None, None, None),
    "pi_context_unknown_window.json": (PI_CONTEXT, "ignore", None, None, None, None),
}


def _captures() -> Path:
    if not (CAPTURES / "expectations.tsv").is_file():
        pytest.skip(f"reference captures not found at {CAPTURES} (shared spec folder absent)")
    return CAPTURES


def _telemetry_rows() -> list[dict[str, str]]:
    with (_captures() / "expectations.tsv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [
        r for r in rows if r["expected_state"] == "-" and r["file"].endswith((".json", ".jsonl"))
    ]


def _read(name: str) -> str:
    return (_captures() / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------ reference payloads


def test_every_telemetry_row_of_expectations_tsv_is_pinned_here():
    files = {r["file"] for r in _telemetry_rows()}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reference_payload_parses_as_expected(name):
    fmt, kind, pct, tokens, session, model = EXPECTED[name]
    got = parse_context(fmt, _read(name))
    assert (got.kind, got.pct, got.tokens, got.session, got.model) == (
        kind,
        pct,
        tokens,
        session,
        model,
    )
    # none of the reference payloads carries a quota or a cost figure
    assert got.quota is None and got.cost_usd is None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_expectations_note_agrees_with_the_pinned_values(name):
    """A loose cross-check against the prose in the tsv note: named numbers and the verdict."""
    note = next(r["note"] for r in _telemetry_rows() if r["file"] == name)
    fmt, kind, pct, tokens, session, _model = EXPECTED[name]
    assert fmt in note or name.startswith(fmt.split("-")[0])
    if m := re.search(r"\bpct=(\d+)", note):
        assert pct == int(m.group(1))
    if m := re.search(r"\btokens=(\d+)", note):
        assert tokens == int(m.group(1))
    if m := re.search(r"\bsession=([0-9A-Za-z_-]{8,})", note):
        assert session == m.group(1)
    if kind == "ignore":
        assert "IGNORE" in note or "no reading" in note
    elif kind == "clear":
        assert "CLEAR" in note


def test_claude_subagent_count_comes_from_context_window_not_the_sibling_token_count():
    payload = json.loads(_read("claude_statusline_subagent.json"))
    assert payload["subagentStatusLine"]["tokenCount"] == 24000
    assert T.parse_claude_statusline(json.dumps(payload)).tokens == 30000


def test_codex_reads_total_not_last_token_usage():
    got = parse_context(CODEX_ROLLOUT, _read("codex_rollout_token_count.jsonl"))
    assert got.pct == 57  # last_token_usage would give 152438 / 272000 -> 56


def test_codex_tail_cut_mid_first_line_skips_the_fragment():
    text = _read("codex_rollout_token_count.jsonl")
    for cut in (1, 10, len(text.split("\n")[0]) - 5):
        got = parse_context(CODEX_ROLLOUT, text[cut:])
        assert (got.kind, got.pct, got.model) == ("stamp", 57, "gpt-5-codex")


def test_codex_tail_cut_inside_the_newest_record_falls_back_to_the_previous_one():
    text = _read("codex_rollout_token_count.jsonl").rstrip("\n")
    cut = text[: text.rfind("model_context_window")]
    assert parse_context(CODEX_ROLLOUT, cut).pct == 33


# ------------------------------------------------------------------ dispatcher


def test_formats_match_the_manifest_vocabulary():
    from tma.core.manifest import CONTEXT_FORMATS

    assert set(FORMATS) == set(CONTEXT_FORMATS)


def test_unknown_format_raises_a_value_error():
    with pytest.raises(UnknownFormat) as info:
        parse_context("gemini-telemetry", "{}")
    assert isinstance(info.value, ValueError)
    assert info.value.format == "gemini-telemetry"


def test_dispatcher_matches_the_direct_parsers():
    payload = _claude(context_window={"used_percentage": 50})
    assert parse_context(CLAUDE_STATUSLINE, payload) == T.parse_claude_statusline(payload)


GARBAGE = [
    "",
    " ",
    "null",
    "true",
    "42",
    '"text"',
    "[]",
    "[{}]",
    "{",
    "{}",
    '{"session_id": 1}',
    "NaN",
    '{"a": NaN}',
    '{"a": Infinity}',
    "1" * 5000,
    '{"a": ' + "9" * 5000 + "}",
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    "\x00\x01\x02",
    "\ufffd\ud800",
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("payload", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_a_bare_ignore(fmt, payload):
    assert parse_context(fmt, payload) == IGNORED


@pytest.mark.parametrize("fmt", FORMATS)
def test_non_string_payload_is_ignored(fmt):
    assert parse_context(fmt, None) == IGNORED  # type: ignore[arg-type]


# ------------------------------------------------------------------ Claude


def _claude(**fields) -> str:
    base = {
        "session_id": CLAUDE_SESSION,
        "model": {"id": "claude-opus-4-8", "display_name": "Opus"},
        "version": "2.1.212",
    }
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...})


def _cw(pct, tokens=1000) -> dict:
    return {"used_percentage": pct, "total_input_tokens": tokens, "context_window_size": 200000}


@pytest.mark.parametrize(
    ("used", "pct"),
    [(0, 0), (100, 100), (77.5, 78), (77.49, 77), (0.5, 1), (0.49, 0), (99.5, 100), (41.0, 41)],
)
def test_claude_percentage_rounds_half_up(used, pct):
    assert T.parse_claude_statusline(_claude(context_window=_cw(used))).pct == pct


@pytest.mark.parametrize("used", [100.01, 101, 247, -0.01, -1, 1e300, 10**30])
def test_claude_out_of_range_percentage_ignores_the_whole_payload(used):
    payload = _claude(
        context_window=_cw(used),
        rate_limits={"five_hour": {"used_percentage": 10, "resets_at": 1_800_000_000}},
        cost={"total_cost_usd": 1.5},
    )
    assert T.parse_claude_statusline(payload) == IGNORED


def test_claude_null_context_window_clears_and_keeps_side_readings():
    got = T.parse_claude_statusline(
        _claude(
            context_window=None,
            rate_limits={"five_hour": {"used_percentage": 12, "resets_at": 1_800_000_000}},
            cost={"total_cost_usd": 0.25},
        )
    )
    assert (got.kind, got.pct, got.tokens, got.session) == ("clear", None, None, CLAUDE_SESSION)
    assert got.quota == QuotaReading(12, "five_hour", 1_800_000_000_000)
    assert got.cost_usd == "0.25"


@pytest.mark.parametrize(
    "window",
    [
        ...,  # absent
        {},
        {"used_percentage": None},
        {"used_percentage": "78"},
        {"used_percentage": True},
        {"total_input_tokens": 1000, "context_window_size": 200000},
        [],
        "78",
        78,
    ],
)
def test_claude_missing_or_mistyped_percentage_is_ignored_not_cleared(window):
    got = T.parse_claude_statusline(_claude(context_window=window))
    assert (got.kind, got.pct, got.tokens) == ("ignore", None, None)
    assert got.session == CLAUDE_SESSION  # side readings survive a gauge ignore
    assert got.model == "claude-opus-4-8"


@pytest.mark.parametrize(
    ("version", "counted"),
    [
        ("2.1.131", False),
        ("2.1.132", True),
        ("2.1.133", True),
        ("2.1.99", False),  # numeric, not lexicographic
        ("2.1.1320", True),
        ("2.2.0", True),
        ("2.10.0", True),
        ("3", True),
        ("2.1", False),
        ("2.1.132.1", True),
        ("v2.1.140", True),
        ("2.1.140 ", True),
        ("2.1.132-rc.1", False),  # a pre-release of the fix is not the fix
        ("2.1.133-beta", True),
        ("2.1.132+build.7", True),
        ("1.9.999", False),
        ("", False),
        ("latest", False),
        ("2..132", False),
        ("2.1.x", False),
        ("9" * 40, False),
        (2.1, False),
        (None, False),
        (..., False),
    ],
)
def test_claude_token_count_is_gated_on_version(version, counted):
    got = T.parse_claude_statusline(_claude(version=version, context_window=_cw(50, 100_000)))
    assert got.pct == 50
    assert got.tokens == (100_000 if counted else None)


@pytest.mark.parametrize("tokens", [-1, 1.5, "100", True, None, 10**12, float("1e20")])
def test_claude_bad_token_count_keeps_the_percentage(tokens):
    got = T.parse_claude_statusline(_claude(context_window=_cw(50, tokens)))
    assert (got.kind, got.pct, got.tokens) == ("stamp", 50, None)


def test_claude_integral_float_token_count_is_accepted():
    assert T.parse_claude_statusline(_claude(context_window=_cw(50, 100000.0))).tokens == 100000


@pytest.mark.parametrize(
    ("model", "label"),
    [
        ({"id": "claude-sonnet-4-5-20250929"}, "claude-sonnet-4-5-20250929"),
        ({"id": "claude-sonnet-4-5[1m]"}, "claude-sonnet-4-5[1m]"),
        ({"id": " claude-opus-4-8 "}, "claude-opus-4-8"),
        ({"display_name": "Opus"}, None),
        ({"id": ""}, None),
        ({"id": "Opus 4.8"}, None),  # a display name with a space is not an id
        ({"id": "#{pane_id}"}, None),  # tmux format characters never reach an option
        ({"id": "x" * 65}, None),
        ({"id": 4}, None),
        ("claude-opus-4-8", None),  # the statusline nests the model; a bare string is not it
        (None, None),
    ],
)
def test_claude_model_label_from_nested_id(model, label):
    got = T.parse_claude_statusline(_claude(model=model, context_window=_cw(10)))
    assert got.model == label
    assert got.pct == 10


@pytest.mark.parametrize(
    ("session", "usable", "value"),
    [
        (..., True, None),
        (None, True, None),
        ("", True, None),
        ("abc-123", True, "abc-123"),
        (123, False, None),
        (["a"], False, None),
        ({"id": "a"}, False, None),
        ("has space", False, None),
        ("tab\tin", False, None),
        ("x" * 257, False, None),
    ],
)
def test_claude_session_id(session, usable, value):
    got = T.parse_claude_statusline(_claude(session_id=session, context_window=_cw(10)))
    if usable:
        assert (got.kind, got.session) == ("stamp", value)
    else:
        assert got == IGNORED  # an unreadable owner must not pass the ownership filter


# Claude quota


def _limits(**windows) -> dict:
    return {"rate_limits": windows}


def test_claude_quota_picks_the_window_closest_to_exhausted():
    got = T.parse_claude_statusline(
        _claude(
            context_window=_cw(10),
            **_limits(
                five_hour={"used_percentage": 23.5, "resets_at": 1_738_425_600},
                seven_day={"used_percentage": 41.2, "resets_at": 1_738_857_600},
            ),
        )
    )
    assert got.quota == QuotaReading(41, "seven_day", 1_738_857_600_000)


def test_claude_quota_spend_limit_past_100_is_stored_as_100():
    got = T.parse_claude_statusline(
        _claude(
            **_limits(
                five_hour={"used_percentage": 90, "resets_at": 1_738_425_600},
                spend_limit={"used_percentage": 112.4, "resets_at": 1_740_000_000},
            )
        )
    )
    assert got.kind == "ignore"  # no context_window: the gauge is untouched...
    assert got.quota == QuotaReading(100, "spend_limit", 1_740_000_000_000)  # ...the quota is not


def test_claude_quota_tie_goes_to_the_first_listed_window():
    got = T.parse_claude_statusline(
        _claude(
            **_limits(
                seven_day={"used_percentage": 50, "resets_at": 2},
                five_hour={"used_percentage": 50, "resets_at": 1},
            )
        )
    )
    assert got.quota == QuotaReading(50, "five_hour", 1000)


@pytest.mark.parametrize(
    ("resets_at", "ms"),
    [
        (1_738_425_600, 1_738_425_600_000),
        (1_738_425_600.5, 1_738_425_600_500),
        ("2026-03-20T15:00:00Z", 1_774_018_800_000),
        ("2026-03-20T16:00:00+01:00", 1_774_018_800_000),
        ("2026-03-20T15:00:00", None),  # no offset: names no instant
        ("soon", None),
        (None, None),
        (0, None),
        (-5, None),
        (True, None),
        (10**15, None),  # milliseconds (or garbage) where seconds are specified
        (..., None),
    ],
)
def test_claude_quota_reset_time_in_ms(resets_at, ms):
    window = {"used_percentage": 30}
    if resets_at is not ...:
        window["resets_at"] = resets_at
    got = T.parse_claude_statusline(_claude(**_limits(five_hour=window)))
    assert got.quota == QuotaReading(30, "five_hour", ms)


@pytest.mark.parametrize(
    "limits",
    [
        ...,  # absent: API-key auth, or before the first response
        None,
        {},
        [],
        "five_hour",
        {"five_hour": None, "seven_day": {}},
        {"five_hour": {"used_percentage": None}},
        {"five_hour": {"used_percentage": "40"}},
        {"five_hour": {"used_percentage": -1}},
        {"five_hour": {"used_percentage": 1e9}},
        {"five_hour": {"used_percentage": False}},
        {"weekly_opus": {"used_percentage": 40}},  # not a window this parser knows
    ],
)
def test_claude_absent_or_unusable_quota_is_none_never_a_clear(limits):
    got = T.parse_claude_statusline(_claude(context_window=_cw(10), rate_limits=limits))
    assert got.quota is None
    assert got.pct == 10


def test_claude_quota_skips_a_broken_window_and_keeps_a_good_one():
    got = T.parse_claude_statusline(
        _claude(
            **_limits(
                five_hour={"used_percentage": "99"},
                seven_day={"used_percentage": 7, "resets_at": "nope"},
            )
        )
    )
    assert got.quota == QuotaReading(7, "seven_day", None)


# Claude cost


@pytest.mark.parametrize(
    ("cost", "text"),
    [
        ({"total_cost_usd": 1.37}, "1.37"),
        ({"total_cost_usd": 0.0123456}, "0.0123456"),
        ({"total_cost_usd": 1e-05}, "0.00001"),
        ({"total_cost_usd": 39.62, "total_duration_ms": 5}, "39.62"),
        ({"total_cost_usd": 3}, "3"),
        ({"total_cost_usd": 0}, "0"),
        ({"total_cost_usd": -0.0}, "0.0"),
        ({"total_cost_usd": -1}, None),
        ({"total_cost_usd": "1.37"}, None),
        ({"total_cost_usd": True}, None),
        ({"total_cost_usd": None}, None),
        ({"total_cost_usd": 1e300}, None),
        ({}, None),
        (None, None),
        (..., None),
        (1.37, None),
    ],
)
def test_claude_cost_is_a_decimal_string_as_stated(cost, text):
    got = T.parse_claude_statusline(_claude(context_window=_cw(10), cost=cost))
    assert got.cost_usd == text
    if text is not None:
        assert "e" not in text.lower()


# ------------------------------------------------------------------ Cursor


def _cursor(window=..., **extra) -> str:
    body = {"session_id": CURSOR_SESSION, "model": "claude-4.5-sonnet", **extra}
    if window is not ...:
        body["context_window"] = window
    return json.dumps(body)


@pytest.mark.parametrize(
    ("used", "size", "pct"),
    [
        (130000, 200000, 65),
        (0, 200000, 0),
        (200000, 200000, 100),
        (1, 8, 13),  # 12.5 rounds half up
        (3, 8, 38),  # 37.5
        (1, 3, 33),
        (2, 3, 67),
        (199_999, 200_000, 100),
        (130000.0, 200000.0, 65),
    ],
)
def test_cursor_percentage_from_the_two_fields(used, size, pct):
    got = T.parse_cursor_statusline(
        _cursor({"total_input_tokens": used, "context_window_size": size})
    )
    assert (got.kind, got.pct, got.tokens, got.session) == ("stamp", pct, int(used), CURSOR_SESSION)


def test_cursor_reports_no_model():
    """The parser reads only the two confirmed numeric fields (plus the owner)."""
    got = T.parse_cursor_statusline(_cursor({"total_input_tokens": 1, "context_window_size": 2}))
    assert got.model is None and got.quota is None and got.cost_usd is None


@pytest.mark.parametrize(
    "window",
    [
        ...,
        None,
        {},
        [],
        {"total_input_tokens": 100},
        {"context_window_size": 200000},
        {"total_input_tokens": 100, "context_window_size": 0},
        {"total_input_tokens": 100, "context_window_size": -200000},
        {"total_input_tokens": -1, "context_window_size": 200000},
        {"total_input_tokens": 300000, "context_window_size": 200000},  # over-full: garbage
        {"total_input_tokens": "unknown", "context_window_size": "unknown"},
        {"total_input_tokens": "130000", "context_window_size": 200000},
        {"total_input_tokens": True, "context_window_size": 200000},
        {"total_input_tokens": 1, "context_window_size": True},
        {"total_input_tokens": 100.5, "context_window_size": 200000},
        {"total_input_tokens": 100, "context_window_size": 1e300},
        {"total_input_tokens": 100, "context_window_size": None},
    ],
)
def test_cursor_missing_or_malformed_fields_are_ignored_not_cleared(window):
    assert T.parse_cursor_statusline(_cursor(window)) == IGNORED


def test_cursor_without_session_still_stamps():
    payload = json.dumps({"context_window": {"total_input_tokens": 5, "context_window_size": 10}})
    got = T.parse_cursor_statusline(payload)
    assert (got.kind, got.pct, got.session) == ("stamp", 50, None)


# ------------------------------------------------------------------ pi


def _pi(usage=...) -> str:
    body: dict = {"session_id": PI_SESSION}
    if usage is not ...:
        body["context_usage"] = usage
    return json.dumps(body)


@pytest.mark.parametrize(
    ("usage", "pct", "tokens"),
    [
        ({"tokens": 124000, "contextWindow": 200000, "percent": 62}, 62, 124000),
        ({"tokens": 124000, "contextWindow": 200000, "percent": 61.5}, 62, 124000),
        ({"tokens": None, "contextWindow": 200000, "percent": 12.4}, 12, None),
        ({"percent": 0}, 0, None),
        ({"percent": 100}, 100, None),
        ({"tokens": -5, "percent": 40}, 40, None),
        # no percent, but both raw figures: computed, no window guessed
        ({"tokens": 50000, "contextWindow": 200000}, 25, 50000),
        ({"tokens": 50000, "contextWindow": 200000, "percent": None}, 25, 50000),
    ],
)
def test_pi_stamps(usage, pct, tokens):
    got = T.parse_pi_context(_pi(usage))
    assert (got.kind, got.pct, got.tokens, got.session) == ("stamp", pct, tokens, PI_SESSION)


@pytest.mark.parametrize(
    "usage",
    [
        ...,
        None,
        [],
        "62%",
        {},
        {"tokens": None, "contextWindow": 200000, "percent": None},  # right after /compact
        {"tokens": 150000, "percent": None},  # no window: never guess 200k
        {"tokens": 150000, "contextWindow": 0, "percent": None},
        {"tokens": 250000, "contextWindow": 200000, "percent": None},
        {"tokens": 1000, "contextWindow": 200000, "percent": 100.5},
        {"tokens": 1000, "contextWindow": 200000, "percent": -1},
        {"tokens": 1000, "contextWindow": 200000, "percent": "62"},
        {"tokens": 1000, "contextWindow": 200000, "percent": True},
        {"tokens": 1000, "contextWindow": 200000, "percent": 1e308},
    ],
)
def test_pi_unusable_usage_is_ignored_not_cleared(usage):
    assert T.parse_pi_context(_pi(usage)) == IGNORED


# ------------------------------------------------------------------ Codex


def _line(kind: str, payload: dict, ts: str | None = "2026-07-25T18:03:12.481Z") -> str:
    rec: dict = {"type": kind, "payload": payload}
    if ts is not None:
        rec = {"timestamp": ts, **rec}
    return json.dumps(rec)


def _token_count(total: int, window: int = 272000, last: int = 1, rate_limits=..., ts=...) -> str:
    body: dict = {
        "type": "token_count",
        "info": {
            "total_token_usage": {"input_tokens": total, "output_tokens": 0, "total_tokens": total},
            "last_token_usage": {"total_tokens": last},
            "model_context_window": window,
        },
    }
    if rate_limits is not ...:
        body["rate_limits"] = rate_limits
    if ts is ...:
        return _line("event_msg", body)
    return _line("event_msg", body, ts)


def _rollout(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def test_codex_newest_token_count_wins():
    text = _rollout(_token_count(200000), _token_count(27200))
    assert parse_context(CODEX_ROLLOUT, text).pct == 10


def test_codex_never_reads_last_token_usage():
    text = _rollout(_token_count(136000, last=27200))
    assert parse_context(CODEX_ROLLOUT, text).pct == 50


@pytest.mark.parametrize(
    "info",
    [
        None,
        {},
        {"total_token_usage": {"total_tokens": 100}},
        {"model_context_window": 272000},
        {"total_token_usage": {"total_tokens": 100}, "model_context_window": 0},
        {"total_token_usage": {"total_tokens": 300000}, "model_context_window": 272000},
        {"total_token_usage": {"total_tokens": -1}, "model_context_window": 272000},
        {"total_token_usage": {"total_tokens": "100"}, "model_context_window": 272000},
        {"total_token_usage": 100, "model_context_window": 272000},
        {"last_token_usage": {"total_tokens": 100}, "model_context_window": 272000},
    ],
)
def test_codex_unusable_newest_record_is_no_reading(info):
    newest = _line("event_msg", {"type": "token_count", "info": info})
    got = parse_context(CODEX_ROLLOUT, _rollout(newest))
    assert (got.kind, got.pct, got.tokens) == ("ignore", None, None)


def test_codex_malformed_newest_info_does_not_fall_back_to_an_older_record():
    newest = _line(
        "event_msg",
        {"type": "token_count", "info": {"total_token_usage": {"total_tokens": "x"}}},
    )
    got = parse_context(CODEX_ROLLOUT, _rollout(_token_count(136000), newest))
    assert got.kind == "ignore"


def test_codex_record_with_null_info_is_skipped_for_the_gauge():
    rate_only = _line(
        "event_msg",
        {"type": "token_count", "info": None, "rate_limits": {"primary": {"used_percent": 7.0}}},
    )
    got = parse_context(CODEX_ROLLOUT, _rollout(_token_count(136000), rate_only))
    assert got.pct == 50
    assert got.quota == QuotaReading(7, "primary", None)


def test_codex_token_count_needs_the_event_msg_envelope():
    info = {"total_token_usage": {"total_tokens": 1}, "model_context_window": 2}
    stray = _line("response_item", {"type": "token_count", "info": info})
    assert parse_context(CODEX_ROLLOUT, _rollout(stray)).kind == "ignore"


def test_codex_lines_that_are_not_records_are_skipped():
    text = "\n".join(
        [
            "garbage",
            '{"type": "token_count"',  # cut
            "[1, 2]",
            '"token_count"',
            '{"type": "event_msg", "payload": "token_count"}',
            _token_count(68000),
            "",
            "   ",
            '{"timestamp":"x","type":"event_msg","payload":{"type":"token_count","info":{"tot',
        ]
    )
    got = parse_context(CODEX_ROLLOUT, text)
    assert (got.kind, got.pct) == ("stamp", 25)


def test_codex_crlf_lines_and_a_complete_unterminated_last_line():
    text = _token_count(27200) + "\r\n" + _token_count(68000)
    assert parse_context(CODEX_ROLLOUT, text).pct == 25


def test_codex_does_not_split_records_on_unicode_line_separators():
    """Rust's serde_json leaves U+2028/U+2029/U+0085 unescaped; only "\\n" ends a record."""
    turn = json.dumps(
        {
            "type": "turn_context",
            "payload": {"model": "gpt-5-codex", "note": "a\u2028b\u2029c\x85d"},
        },
        ensure_ascii=False,
    )
    assert "\u2028" in turn
    got = parse_context(CODEX_ROLLOUT, _rollout(turn, _token_count(68000)))
    assert (got.pct, got.model) == (25, "gpt-5-codex")


def test_codex_model_from_the_newest_turn_context():
    text = _rollout(
        _line("turn_context", {"model": "gpt-5"}),
        _token_count(68000),
        _line("turn_context", {"model": "gpt-5.1-codex-max"}),
        _line("turn_context", {"model": "bad model name"}),
        _line("turn_context", {"cwd": "/x"}),
    )
    got = parse_context(CODEX_ROLLOUT, text)
    assert (got.pct, got.model, got.session, got.tokens) == (25, "gpt-5.1-codex-max", None, None)


def test_codex_model_is_reported_without_a_gauge():
    text = _rollout(_line("turn_context", {"model": "gpt-5-codex"}))
    assert parse_context(CODEX_ROLLOUT, text) == ContextReading("ignore", model="gpt-5-codex")


def test_codex_session_meta_model_is_not_read():
    text = _rollout(_line("session_meta", {"id": "x", "model": "gpt-4o"}), _token_count(68000))
    assert parse_context(CODEX_ROLLOUT, text).model is None


# Codex quota

RECORD_MS = 1_785_002_592_481  # 2026-07-25T18:03:12.481Z


def test_codex_record_timestamp_constant():
    assert T._iso_ms("2026-07-25T18:03:12.481Z") == RECORD_MS


def test_codex_quota_absolute_reset_and_closest_window():
    limits = {
        "primary": {"used_percent": 7.0, "window_minutes": 300, "resets_at": 1_763_483_205},
        "secondary": {"used_percent": 77.0, "window_minutes": 10080, "resets_at": 1_763_606_387},
    }
    got = parse_context(CODEX_ROLLOUT, _rollout(_token_count(68000, rate_limits=limits)))
    assert got.pct == 25
    assert got.quota == QuotaReading(77, "secondary", 1_763_606_387_000)


def test_codex_quota_relative_reset_counts_from_the_record_timestamp():
    limits = {"primary": {"used_percent": 12.5, "window_minutes": 300, "resets_in_seconds": 600}}
    text = _rollout(_token_count(68000, rate_limits=limits))
    got = parse_context(CODEX_ROLLOUT, text, now_ms=5)  # the record's own time wins over now
    assert got.quota == QuotaReading(13, "primary", RECORD_MS + 600_000)


def test_codex_quota_relative_reset_without_timestamp_uses_now_ms():
    limits = {"secondary": {"used_percent": 40, "resets_in_seconds": 60}}
    text = _rollout(_token_count(68000, rate_limits=limits, ts=None))
    assert parse_context(CODEX_ROLLOUT, text, now_ms=1_000_000).quota == QuotaReading(
        40, "secondary", 1_060_000
    )
    assert parse_context(CODEX_ROLLOUT, text).quota == QuotaReading(40, "secondary", None)
    assert parse_context(CODEX_ROLLOUT, text, now_ms=True).quota == QuotaReading(  # type: ignore[arg-type]
        40, "secondary", None
    )


@pytest.mark.parametrize(
    "limits",
    [
        ...,
        None,
        {},
        {"primary": None, "secondary": None},
        {"primary": {"used_percent": None}},
        {"primary": {"used_percent": "50"}},
        {"primary": {"used_percent": -3}},
        {"tertiary": {"used_percent": 50}},
    ],
)
def test_codex_absent_or_unusable_quota_is_none(limits):
    got = parse_context(CODEX_ROLLOUT, _rollout(_token_count(68000, rate_limits=limits)))
    assert (got.pct, got.quota) == (25, None)


def test_codex_quota_comes_from_the_newest_rate_limits_block():
    old = {"primary": {"used_percent": 90, "resets_at": 1_763_483_205}}
    new = {"primary": {"used_percent": 3, "resets_at": 1_763_500_000}}
    text = _rollout(
        _token_count(68000, rate_limits=old),
        _token_count(68000, rate_limits=new),
        _token_count(68000),  # no block: says nothing about the account
    )
    assert parse_context(CODEX_ROLLOUT, text).quota == QuotaReading(3, "primary", 1_763_500_000_000)


def test_codex_quota_past_100_is_stored_as_100():
    limits = {"primary": {"used_percent": 104.0}}
    got = parse_context(CODEX_ROLLOUT, _rollout(_token_count(68000, rate_limits=limits)))
    assert got.quota == QuotaReading(100, "primary", None)


# ------------------------------------------------------------------ properties

_json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_json = st.recursive(
    _json_leaf,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4)
    ),
    max_leaves=20,
)
_KEYS = [
    "session_id",
    "version",
    "model",
    "id",
    "context_window",
    "used_percentage",
    "total_input_tokens",
    "context_window_size",
    "rate_limits",
    "five_hour",
    "seven_day",
    "spend_limit",
    "resets_at",
    "cost",
    "total_cost_usd",
    "context_usage",
    "tokens",
    "contextWindow",
    "percent",
    "type",
    "payload",
    "info",
    "total_token_usage",
    "total_tokens",
    "model_context_window",
    "primary",
    "secondary",
    "used_percent",
    "resets_in_seconds",
    "timestamp",
    "token_count",
    "turn_context",
    "event_msg",
]
_shaped = st.recursive(
    _json_leaf | st.sampled_from(_KEYS),
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), kids, max_size=5)
    ),
    max_leaves=25,
)


def _check(reading: ContextReading) -> None:
    assert isinstance(reading, ContextReading)
    assert reading.kind in ("stamp", "clear", "ignore")
    assert reading.pct is None or (type(reading.pct) is int and 0 <= reading.pct <= 100)
    assert (reading.pct is not None) == (reading.kind == "stamp")
    assert reading.tokens is None or (type(reading.tokens) is int and reading.tokens >= 0)
    if reading.quota is not None:
        assert type(reading.quota.pct) is int and 0 <= reading.quota.pct <= 100
        assert reading.quota.window in T.CLAUDE_QUOTA_WINDOWS + T.CODEX_QUOTA_WINDOWS
        assert reading.quota.resets_at is None or type(reading.quota.resets_at) is int
    if reading.cost_usd is not None:
        assert re.fullmatch(r"\d+(\.\d+)?", reading.cost_usd)


@settings(max_examples=300, deadline=None)
@given(fmt=st.sampled_from(FORMATS), text=st.text(max_size=300))
def test_property_random_text_never_raises(fmt, text):
    _check(parse_context(fmt, text))


@settings(max_examples=300, deadline=None)
@given(fmt=st.sampled_from(FORMATS), raw=st.binary(max_size=300))
def test_property_random_bytes_never_raise(fmt, raw):
    _check(parse_context(fmt, raw.decode("utf-8", errors="replace")))


@settings(max_examples=500, deadline=None)
@given(fmt=st.sampled_from(FORMATS), value=st.one_of(_json, _shaped), now=st.none() | st.integers())
def test_property_json_shaped_payloads_never_raise(fmt, value, now):
    _check(parse_context(fmt, json.dumps(value), now_ms=now))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_shaped, max_size=6), cut=st.integers(min_value=0, max_value=400))
def test_property_rollout_tails_never_raise(lines, cut):
    text = "".join(json.dumps(v) + "\n" for v in lines)
    _check(parse_context(CODEX_ROLLOUT, text[cut:], now_ms=1))
    _check(parse_context(CODEX_ROLLOUT, text[: len(text) - cut], now_ms=1))
