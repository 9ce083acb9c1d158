"""The tmux releases tma is proven on, and where a server's `#{version}` stands.

CI builds each release in TESTED from source and runs the tmux contract suite on it
(`.ci/tmux-releases` lists the same; tests/unit/test_tmux_releases.py keeps the two,
`tma doctor` and docs/reference/tmux-compatibility.md in step). `next` is tmux's main
branch, which reports itself as `next-<the release it will be>`.

Pure: the version text in, a standing out. Nothing here branches tma's behaviour on a
version: where releases differ tma uses one form that works on all, or probes.
"""

from __future__ import annotations

from tma.core.record import Record

TESTED: tuple[str, ...] = ("3.2a", "3.3a", "3.4", "3.5a", "3.6b", "3.7c", "next")
OLDEST = TESTED[0]
NEWEST = TESTED[-2]  # the newest numbered release; `next` follows it
#: `tma doctor`'s words for the range.
RANGE = f"{OLDEST} to {NEWEST} and tmux's main branch"

TESTED_ON = "tested"  # one of the releases CI runs on
INSIDE = "inside"  # between two of them (3.3, 3.6a): covered by the range
OLDER = "older"  # before the oldest: tma needs 3.2 (set-option -F expands formats)
NEWER = "newer"  # after the newest release CI knows
UNPLACED = "unplaced"  # a version text that names no tmux release (openbsd-7.6)
UNREPORTED = "unreported"  # the server reported none
NEXT = "next"  # the suffix parse gives a main-branch build


class Standing(Record):
    version: str = ""
    standing: str = UNREPORTED
    key: tuple[int, int, str] | None = None


def parse(text: str) -> tuple[int, int, str] | None:
    """`3.3a` -> (3, 3, "a"), `3.4` -> (3, 4, ""), `next-3.8` -> (3, 8, NEXT); None when
    the text names no tmux release (OpenBSD's base tmux reports the OS release)."""
    text = (text or "").strip()
    suffix = ""
    if text.startswith("next-"):
        text, suffix = text[len("next-"):], NEXT
    major, dot, rest = text.partition(".")
    digits = rest[:len(rest) - len(rest.lstrip("0123456789"))]
    if not dot or not major.isdigit() or not digits:
        return None
    letter = rest[len(digits):]
    if suffix != NEXT and letter and not (len(letter) == 1 and letter.isalpha()):
        return None  # 3.4-rc, 3.5b2: not a release
    return int(major), int(digits), suffix or letter


def standing(text: str) -> Standing:
    """Where a server's `#{version}` stands against TESTED."""
    text = (text or "").strip()
    if not text:
        return Standing(text, UNREPORTED, None)
    key = parse(text)
    if key is None:
        return Standing(text, UNPLACED, None)
    oldest, newest = parse(OLDEST), parse(NEWEST)
    assert oldest is not None and newest is not None
    numbered = [parse(v) for v in TESTED if v != "next"]
    if key in numbered:
        return Standing(text, TESTED_ON, key)
    if key[2] == NEXT:
        # a main-branch build: `next-3.8` is the branch CI runs; an older one (next-3.5)
        # is inside the range, a newer one is newer than anything proven
        if (key[0], key[1]) <= (newest[0], newest[1]):
            return Standing(text, INSIDE, key)
        if (key[0], key[1]) == _next_minor(newest):
            return Standing(text, TESTED_ON, key)
        return Standing(text, NEWER, key)
    if key < oldest:
        return Standing(text, OLDER, key)
    if key > newest:
        return Standing(text, NEWER, key)
    return Standing(text, INSIDE, key)


def _next_minor(key: tuple[int, int, str]) -> tuple[int, int]:
    return key[0], key[1] + 1
