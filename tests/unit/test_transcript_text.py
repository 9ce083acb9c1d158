"""tma.core.transcript.text: an event's preview is the first words of its text, on one
line, at most 80 characters."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from tma.core.transcript.text import PREVIEW_CHARS, compact, preview, size


@given(st.text())
def test_a_preview_is_the_texts_first_words_on_one_line(text):
    p = preview(text)
    flat = " ".join(re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0e-\x1f\x7f-\x9f]", "",
                           text).split())
    if not flat:
        assert p is None
        return
    assert p is not None and len(p) <= PREVIEW_CHARS and p == p.strip()
    assert not any(c.isspace() and c != " " for c in p)
    if len(flat) <= PREVIEW_CHARS:
        assert p == flat
    else:
        assert p.endswith("…") and flat.startswith(p[:-1])
        rest = flat[len(p) - 1:]
        # cut at a word's end, unless the first word alone is too long
        assert rest.startswith(" ") or " " not in p[:-1]


def test_previews_of_recorded_shapes():
    assert preview("<local-command-stdout>\x1b[2mCompacted (ctrl+o)\x1b[22m\n\x1b[2mPre\x1b[22m") \
        == "<local-command-stdout>Compacted (ctrl+o) Pre"
    assert preview("word " * 30) == ("word " * 15).strip() + "…"
    assert preview("x" * 100) == "x" * 79 + "…"
    assert preview("  \n\t ") is None and preview(None) is None


def test_body_and_size():
    assert compact({"a": [1, "é"]}) == '{"a":[1,"é"]}'
    assert size("é") == 2 and size(compact({"a": "é"})) == len('{"a":"é"}'.encode())
