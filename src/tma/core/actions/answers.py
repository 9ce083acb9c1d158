"""`tma act question_reply --answer [Q=]LABEL`: the flags -> one label list per question.

One `--answer` carries one label; a multiple-choice question takes several, one flag
each (`--answer 2=auth --answer 2=logs`), so a label may hold any character, commas
included. `Q` names the question: its number (1-based, in the order OpenCode asks them)
or its header, exactly. The text splits at its first `=` only, so a label may hold `=`
too once its question is named (`--answer 1=a=b`). `Q=` may be left out when the request
asks a single question. Which labels a question accepts is the lane's business
(tma.runtime.act.opencode_api.check_answers); this module only places them. Pure.
"""

from __future__ import annotations


class AnswerError(ValueError):
    """Answers that cannot be placed on the pending questions (the message says why)."""


def parse(values: list[str] | tuple[str, ...]) -> list[tuple[str | None, str]]:
    """(question key or None, label) for each `--answer` text. Raises AnswerError for a
    text with no label, or with an empty key before its `=`."""
    out: list[tuple[str | None, str]] = []
    for text in values:
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise AnswerError(f"--answer {text!r}: a label holds no line break or control "
                              "character")
        key, sep, label = text.partition("=")
        if not sep:
            key, label = "", text
        if sep and not key.strip():
            raise AnswerError(f"--answer {text!r}: name the question before '=' (its "
                              "number or header), or drop the '='")
        if not label.strip():
            raise AnswerError(f"--answer {text!r}: no label")
        out.append((key if sep else None, label))
    return out


def place(pairs: list[tuple[str | None, str]], headers: list[str]) -> list[list[str]]:
    """One label list per question (in order) from the parsed flags; `headers` are the
    questions' headers in order. Raises AnswerError when a key names no question (or
    several), a bare label meets several questions, or a question is left unanswered."""
    n = len(headers)
    answers: list[list[str]] = [[] for _ in headers]
    for key, label in pairs:
        if key is None:
            if n != 1:
                raise AnswerError(f"the question request asks {n} questions: name each "
                                  f"answer's question (--answer N=LABEL or "
                                  f"--answer HEADER=LABEL), {label!r} names none")
            answers[0].append(label)
            continue
        answers[_index(key, label, headers)].append(label)
    missing = [i for i, a in enumerate(answers) if not a]
    if missing:
        i = missing[0]
        raise AnswerError(f"question {i + 1} ({headers[i]!r}) has no --answer (every "
                          "question takes one or more)")
    return answers


def _index(key: str, label: str, headers: list[str]) -> int:
    n = len(headers)
    if key.isdigit():
        i = int(key)
        if 1 <= i <= n:
            return i - 1
        raise AnswerError(f"--answer {key}={label}: there is no question {i} (the request "
                          f"asks {n})")
    hits = [i for i, h in enumerate(headers) if h == key]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise AnswerError(f"--answer {key}={label}: {len(hits)} questions have the header "
                          f"{key!r}: name it by number ({', '.join(str(i + 1) for i in hits)})")
    known = ", ".join(repr(h) for h in headers)
    raise AnswerError(f"--answer {key}={label}: no question is numbered or headed {key!r} "
                      f"(headers: {known}); a label that holds '=' needs its question named "
                      f"first (--answer 1={key}={label})")
