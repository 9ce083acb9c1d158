"""`--answer [Q=]LABEL` texts -> one label list per question (tma.core.actions.answers)."""

from __future__ import annotations

import pytest

from tma.core.actions.answers import AnswerError, parse, place

HEADERS = ["DB", "Features"]


def test_parse_splits_at_the_first_equals_only():
    assert parse(["DB=Postgres", "2=a=b", "plain", "x, y"]) == [
        ("DB", "Postgres"), ("2", "a=b"), (None, "plain"), (None, "x, y")]


@pytest.mark.parametrize(("text", "words"), [
    ("DB=", "no label"), ("", "no label"), ("  ", "no label"), ("=x", "name the question"),
    ("1=a\nb", "no line break or control character"),
])
def test_parse_refuses_what_names_no_label(text, words):
    with pytest.raises(AnswerError, match=words):
        parse([text])


def test_place_by_number_and_header_keeps_the_order_given():
    pairs = parse(["Features=logs", "1=Postgres", "2=auth"])
    assert place(pairs, HEADERS) == [["Postgres"], ["logs", "auth"]]


def test_a_bare_label_answers_a_single_question_only():
    assert place(parse(["Blue, dark"]), ["Colour"]) == [["Blue, dark"]]
    with pytest.raises(AnswerError, match="asks 2 questions: name each answer's question"):
        place(parse(["Postgres"]), HEADERS)


@pytest.mark.parametrize(("texts", "words"), [
    (["DB=Postgres"], "question 2 ('Features') has no --answer"),
    (["0=x", "2=y"], "there is no question 0"),
    (["3=x"], "there is no question 3 (the request asks 2)"),
    (["Size=x"], "no question is numbered or headed 'Size'"),
    (["a=b"], "--answer 1=a=b"),  # the hint for a label that holds '='
])
def test_place_refuses_with_a_reason(texts, words):
    with pytest.raises(AnswerError) as exc:
        place(parse(texts), HEADERS if texts != ["a=b"] else ["Colour"])
    assert words in str(exc.value)


def test_a_header_two_questions_share_must_be_named_by_number():
    with pytest.raises(AnswerError, match=r"2 questions have the header 'Q': name it by "
                                          r"number \(1, 2\)"):
        place(parse(["Q=x"]), ["Q", "Q"])
    assert place(parse(["1=x", "2=y"]), ["Q", "Q"]) == [["x"], ["y"]]


def test_a_numeric_header_is_read_as_a_number():
    """A key of digits is always a position: a header "2" is reached as its number."""
    assert place(parse(["2=x", "1=y"]), ["2", "1"]) == [["y"], ["x"]]
