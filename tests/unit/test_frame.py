"""The read framing against a model of what each tmux release prints.

tests/integration/test_tmux_contract.py proves the same on the real builds; this file
explores the input space: any title, path or option value, printed the way 3.4 / 3.5a
print it (vis(3) with VIS_OCTAL|VIS_CSTYLE|VIS_NOSLASH, and 3.4's `\\$`) or as is (every
other release), reads back exactly, and no value can break a record or shift a field.
"""

from __future__ import annotations

from hypothesis import given, strategies as st

from tma.tmux import frame

_CSTYLE = {"\n": "\\n", "\r": "\\r", "\b": "\\b", "\a": "\\a", "\v": "\\v", "\t": "\\t",
           "\f": "\\f", " ": "\\s"}


def regsub_escape(value: str) -> str:
    """What `frame.text` has tmux do: every backslash doubled."""
    return value.replace("\\", "\\\\")


def vis_34(value: str, dollar: bool) -> str:
    """tmux 3.4 / 3.5a's command output (utf8_strvis with VIS_OCTAL|VIS_CSTYLE|
    VIS_NOSLASH): printable text, space, tab and newline as is; other controls as
    C-style or octal escapes; on 3.4 `$` before a letter, `_` or `{` as `\\$`."""
    out = []
    for i, c in enumerate(value):
        nxt = value[i + 1:i + 2]
        if c == "$" and dollar and i < len(value) - 1 and (nxt.isalpha() and nxt.isascii()
                                                            or nxt in "_{"):
            out.append("\\$")
        elif c in " \t\n" or (c >= " " and c != "\x7f"):
            out.append(c)
        elif c in _CSTYLE:
            out.append(_CSTYLE[c])
        else:
            out.append(f"\\{ord(c):03o}")
    return "".join(out)


RELEASES = {
    "raw": lambda v: v,  # 3.2a, 3.3a, 3.6b, 3.7c, next
    "3.4": lambda v: vis_34(v, dollar=True),
    "3.5a": lambda v: vis_34(v, dollar=False),
}

# anything but NUL (tmux strings are C strings) and surrogates
text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
               max_size=40)
hostile = st.one_of(text, st.sampled_from([
    "", "\\", "\\037", "\\\\$HOME", "$HOME", "${x}", "a\x1fb", "a\nb", "#{pane_id}", "|", "^",
    "\\n", "\\s", "\\$", "a\\", "\x7f\x01\x1b[31m", "~/x", "é✳", "\\377",
]))


def printed(fr: frame.Frame, kind: str, fields: list[str], release: str,
            escaped: set[int]) -> str:
    """The bytes tmux would print for one record (then a newline)."""
    show = RELEASES[release]
    parts = [show(regsub_escape(f)) if i in escaped else show(f) for i, f in enumerate(fields)]
    return show(fr.rs + kind + fr.fs) + fr.fs.join(parts) + show(fr.fs) + "\n"


@given(st.lists(hostile, min_size=1, max_size=6), st.sampled_from(sorted(RELEASES)))
def test_free_text_round_trips_on_every_release(values, release):
    fr = frame.Frame()
    escaped = set(range(len(values)))
    out = "noise before\n" + printed(fr, "V", values, release, escaped) + "noise after"
    [got] = fr.records(out, "V", len(values))
    assert [frame.untext(v) for v in got] == values  # exact, control bytes and all


@given(st.lists(hostile, min_size=2, max_size=6), st.sampled_from(sorted(RELEASES)),
       st.lists(st.tuples(st.sampled_from("PSC"), st.lists(hostile, max_size=3)), max_size=3))
def test_records_never_bleed_into_each_other(values, release, others):
    fr = frame.Frame()
    out = "".join(printed(fr, k, f, release, set(range(len(f)))) for k, f in others)
    out += printed(fr, "V", values, release, set(range(len(values))))
    got = fr.records(out, "V", len(values))
    assert len(got) == 1 and [frame.untext(v) for v in got[0]] == values


def test_a_record_of_another_width_is_dropped():
    fr = frame.Frame("abcd")
    out = fr.record("V", ["1", "2"]) + "\n" + fr.record("V", ["1", "2", "3"]) + "\n"
    assert fr.records(out, "V", 2) == [["1", "2"]]
    assert fr.records(out, "V") == [["1", "2"], ["1", "2", "3"]]


def test_markers_are_printable_and_have_no_border():
    fr = frame.Frame()
    for mark in (fr.rs, fr.fs):
        assert mark.isprintable() and mark.isascii()
        assert not any(c in mark for c in "#,{}$~\"'\\ ")
        # no proper prefix is also a suffix: a value's tail cannot start a false marker
        assert not any(mark[:i] == mark[-i:] for i in range(1, len(mark)))
    assert fr.rs != fr.fs and frame.Frame().fs != fr.fs  # a fresh nonce per frame


def test_untext_leaves_text_without_escapes_alone():
    assert frame.untext("plain ✳ text") == "plain ✳ text"
    assert frame.untext("a\\qb") == "a\\qb"  # not an escape either side writes
    assert frame.untext("\\377") == "\ufffd"  # an invalid byte, as a raw release gives it
