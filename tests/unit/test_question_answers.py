"""Which answers tma sends to an OpenCode question request (opencode_api.check_answers)."""

from __future__ import annotations

import pytest

from tma.runtime.act.opencode_api import Question, QuestionOption, QuestionRequest, check_answers


def _q(header, labels, multiple=False, custom=True):
    return Question(f"{header}?", header, tuple(QuestionOption(x) for x in labels),
                    multiple, custom)


REQ = QuestionRequest("que_1", "ses_1", (
    _q("DB", ["Postgres", "SQLite"], custom=False),
    _q("Features", ["auth", "logs", "metrics"], multiple=True, custom=False),
    _q("Name", ["tma"])))


@pytest.mark.parametrize("answers", [
    [["Postgres"], ["auth", "logs"], ["tma"]],
    [["SQLite"], ["metrics"], ["my own name"]],  # custom text where the question takes it
])
def test_fitting_answers_pass(answers):
    assert check_answers(REQ, answers) is None


@pytest.mark.parametrize(("answers", "words"), [
    ([["Postgres"], ["auth"]], "asks 3 questions; 2 answers were given"),
    ([["Postgres"], ["auth"], ["x"], ["y"]], "4 answers"),
    ([[], ["auth"], ["tma"]], "question 1 ('DB'): no label chosen"),
    ([["Postgres", "SQLite"], ["auth"], ["tma"]], "takes one choice, not 2"),
    ([["MySQL"], ["auth"], ["tma"]], "'MySQL' is not one of its options ('Postgres', "
                                     "'SQLite'), and it takes no custom answer"),
    ([["Postgres"], ["auth", "traces"], ["tma"]], "question 2 ('Features'): 'traces'"),
    ([["Postgres"], ["auth", "auth"], ["tma"]], "chosen twice"),
    ([["Postgres"], ["auth"], [" "]], "an empty label"),
])
def test_answers_that_do_not_fit_are_refused_with_a_reason(answers, words):
    why = check_answers(REQ, answers)
    assert why is not None and words in why


def test_labels_match_exactly_not_by_case():
    assert check_answers(REQ, [["postgres"], ["auth"], ["tma"]]) is not None
