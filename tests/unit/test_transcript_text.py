"""tma.core.transcript.text: an event's preview is the first words of its text, on one
line, at most 80 characters."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

from tma.core.transcript.text import PREVIEW_CHARS, compact, last_sentence, preview, size


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


@pytest.mark.parametrize(("text", "said"), [
    ("Hello from mockllm. This is a short scripted reply.", "This is a short scripted reply."),
    ("I fixed it!\n\nAll 12 tests pass.\n", "All 12 tests pass."),
    ("The fix\nwraps lines. And the last one\nwraps too", "And the last one wraps too"),
    ("Done. Run it with:\n\n```sh\nmake test.\n```\n", "Run it with:"),
    ("Changes:\n- parser.py: fixed.\n- tests: added two", "tests: added two"),
    ("## Summary\n\nIt works?", "It works?"),
    ("\x1b[31mRed.\x1b[0m Then \x07blue.", "Then blue."),
    ("   \n```\nonly code\n```", ""),
    ("", ""),
    (None, ""),
])
def test_the_last_sentence_of_an_answer(text, said):
    assert last_sentence(text) == said


@given(st.text())
def test_a_last_sentence_is_one_clean_line_within_its_limit(text):
    s = last_sentence(text, 40)
    assert len(s) <= 40 and "\n" not in s and s == s.strip()
    assert not re.search(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]", s)


def test_a_long_last_sentence_keeps_its_end():
    s = last_sentence("Intro. " + "word " * 100 + "and the end.", 50)
    assert len(s) == 50 and s.startswith("…") and s.endswith("and the end.")
