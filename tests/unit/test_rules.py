"""The rule engine: ANSI strip, raw-line regions, visible clamp, per-state selection."""

from __future__ import annotations

from hypothesis import given, strategies as st

from tma.core.manifest import loads
from tma.core.rules import Screen, evaluate, raw_lines, strip_ansi


def manifest(rules: str):
    return loads("t", 'min_engine_version = "0.1"\n[identity]\nprocess_names = ["t"]\n'
                      "[capture]\n" + rules)


def test_strip_ansi_csi_osc_and_other_escapes():
    assert strip_ansi("esc\x1b[38;5;244minterrupt") == "escinterrupt"
    assert strip_ansi("a\x1b]0;title\x07b") == "ab"
    assert strip_ansi("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b") == "alinkb"
    assert strip_ansi("a\x1b(Bb") == "aBb"  # any other ESC drops itself and the next char
    assert strip_ansi("a\x1b[31") == "a"  # unterminated CSI runs to the end
    assert strip_ansi("a\x1b") == "a"  # lone ESC
    assert strip_ansi("no escapes") == "no escapes"


@given(st.text())
def test_strip_ansi_leaves_no_escape(text):
    assert "\x1b" not in strip_ansi(text)


def test_raw_lines_split_on_newline_only():
    assert raw_lines("a\nb\n") == ["a", "b"]  # no phantom last line
    assert raw_lines("a\r\nb") == ["a", "b"]  # a trailing \r is trimmed
    assert raw_lines("a\x0bb\x1cc\x85d\u2028e") == ["a\x0bb\x1cc\x85d\u2028e"]
    assert raw_lines("") == []
    assert raw_lines("\n") == [""]


def test_tail_lines_counts_raw_lines_not_splitlines():
    m = manifest('[[rules]]\nstate = "idle"\nregion = "tail_lines(2)"\n'
                 'match = { contains = "MARK" }\n')
    # a \x1c inside a line must not move the window (str.splitlines would split there)
    body = "MARK\nfiller\x1cstill one line\nlast\n"
    assert evaluate(m, Screen(body)).claim("idle") is None
    assert evaluate(m, Screen("x\nMARK\nlast\n")).claim("idle") is not None


def test_visible_is_the_last_pane_height_lines():
    m = manifest('[[rules]]\nstate = "blocked"\nregion = "visible"\n'
                 'match = { contains = "Allow once" }\n')
    body = "Allow once\n" + "\n".join(f"row {i}" for i in range(12)) + "\n"
    assert evaluate(m, Screen(body, height=12)).claim("blocked") is None  # in scrollback
    assert evaluate(m, Screen(body, height=13)).claim("blocked") is not None
    assert evaluate(m, Screen(body)).claim("blocked") is not None  # height unknown: all


def test_matchers_line_regex_not_all_any():
    m = manifest('[[rules]]\nstate = "idle"\nregion = "visible"\n'
                 "match = { all = [ { line_regex = '^›' }, "
                 "{ not = { line_regex = '^› \\d+\\. ' } } ] }\n")
    assert evaluate(m, Screen("› Ask\n")).claim("idle") is not None
    assert evaluate(m, Screen("› Ask\n› 1. Yes\n")).claim("idle") is None
    assert evaluate(m, Screen("x › Ask\n")).claim("idle") is None  # line-anchored


def test_priority_decides_within_a_state_ties_go_to_the_first():
    m = manifest(
        '[[rules]]\nstate = "blocked"\ndetail = "permission"\npriority = 10\nregion = "visible"\n'
        'match = { contains = "X" }\n'
        '[[rules]]\nstate = "blocked"\ndetail = "trust"\npriority = 50\nregion = "visible"\n'
        'match = { contains = "X" }\n'
        '[[rules]]\nstate = "blocked"\ndetail = "plan"\npriority = 50\nregion = "visible"\n'
        'match = { contains = "X" }\n'
        '[[rules]]\nstate = "idle"\npriority = 999\nregion = "visible"\n'
        'match = { contains = "X" }\n')
    res = evaluate(m, Screen("X\n"))
    assert res.claim("blocked").detail == "trust"  # highest priority, first of the tie
    assert res.claim("idle") is not None  # one claim per state: the fold's ladder decides


def test_skip_state_update_raises_the_history_flag_and_no_claim():
    m = manifest('[[rules]]\nstate = "idle"\nregion = "visible"\nskip_state_update = true\n'
                 'match = { contains = "transcript" }\n')
    res = evaluate(m, Screen("detailed transcript\n"))
    assert res.history_view and res.claims == {}


def test_title_region_claims_have_title_source():
    m = manifest('[[rules]]\nstate = "working"\nregion = "title"\n'
                 "match = { regex = '[\\u2800-\\u28ff]' }\n")
    claim = evaluate(m, Screen("", title="⠙ proj")).claim("working")
    assert claim is not None and claim.source == "title"


def test_detail_aliases_normalize():
    m = loads("t", 'min_engine_version = "0.1"\n[identity]\nprocess_names = ["t"]\n[capture]\n'
                   '[details]\nrate_limit = { aliases = ["ratelimited"] }\n'
                   '[[rules]]\nstate = "working"\ndetail = "ratelimited"\nregion = "visible"\n'
                   'match = { contains = "wait" }\n')
    assert evaluate(m, Screen("wait\n")).claim("working").detail == "rate_limit"
