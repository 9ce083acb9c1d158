"""Selector flags shared by every surface: --session --repo --branch --agent --state.

Filtering is display-only and happens after a full cycle stamped every pane.
Exact string equality; flags AND together; --state is an OR list.
"""

from __future__ import annotations

import re

from tma.core import states
from tma.core.untrusted import pane_id_ok

VOCAB = states.SELECTABLE


class SelectorError(ValueError):
    pass


def parse_states(text: str) -> tuple[str, ...]:
    """A comma list of idle,working,blocked,unknown,done (de-duplicated)."""
    out: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if part not in VOCAB:
            raise SelectorError(
                f"invalid state {part!r} (expected one of: {', '.join(VOCAB)})")
        if part not in out:
            out.append(part)
    if not out:
        raise SelectorError(f"empty state list (expected one of: {', '.join(VOCAB)})")
    return tuple(out)


def parse_pane_id(text: str) -> str:
    """A tmux pane id (`%3`); anything else is a usage error, whatever the command."""
    if pane_id_ok(text):  # ASCII digits only: `%١` is no pane id
        return text
    raise SelectorError(f"expected a pane id like %3, got {text!r}")


_HOST = re.compile(r"[A-Za-z0-9._-]{1,64}")


def parse_target(text: str) -> str:
    """A local pane id (`%3`) or a fleet host's pane (`devbox:%3`, a host of `tma host
    list`: its name holds no colon)."""
    host, sep, pane = text.rpartition(":")
    if not sep:
        return parse_pane_id(text)
    if _HOST.fullmatch(host) and host not in (".", "..") and pane_id_ok(pane):
        return text
    raise SelectorError(f"expected a pane id like %3 or HOST:%3, got {text!r}")


def split_target(text: str) -> tuple[str, str] | None:
    """A parsed target's parts: `HOST:%N` -> (HOST, %N); None for a local pane id.
    Raises SelectorError when the pane part is not a pane id (a host's row may name
    anything; only `%N` goes further)."""
    host, sep, pane = text.rpartition(":")
    if not sep:
        return None
    if not pane_id_ok(pane):
        raise SelectorError(f"expected a pane id like HOST:%3, got {text[:64]!r}")
    return host, pane


class Selector:
    __slots__ = ("session", "repo", "branch", "agent", "states")

    def __init__(self, session=None, repo=None, branch=None, agent=None, states=None):
        self.session = session
        self.repo = repo
        self.branch = branch
        self.agent = agent
        self.states = states

    @property
    def empty(self) -> bool:
        return not (self.session or self.repo or self.branch or self.agent or self.states)

    @property
    def needs_git(self) -> bool:
        return bool(self.repo or self.branch)

    def matches(self, row, git_info=None) -> bool:
        if self.session is not None and row.pane.session_name != self.session:
            return False
        if self.agent is not None and row.agent != self.agent:
            return False
        if self.states is not None and not any(
                states.matches_class(row.stamp.state, row.stamp.attention, s)
                for s in self.states):
            return False
        if self.needs_git:
            repo, branch, _wt = git_info(row.pane.current_path) if git_info else (None, None, None)
            if self.repo is not None and repo != self.repo:
                return False
            if self.branch is not None and (repo is None or branch != self.branch):
                return False
        return True


FLAGS = ("--session", "--repo", "--branch", "--agent", "--state")


def take(argv: list[str]) -> tuple[Selector, list[str]]:
    """Pull selector flags out of argv (hand-rolled: argparse is too slow for status)."""
    sel = Selector()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name in FLAGS:
            if not eq:
                if i + 1 >= len(argv):
                    raise SelectorError(f"{name} needs a value")
                value = argv[i + 1]
                i += 1
            key = name[2:]
            if key == "state":
                sel.states = parse_states(value)
            else:
                setattr(sel, key, value)
        else:
            rest.append(argv[i])
        i += 1
    return sel, rest
