"""Repo / branch / worktree labels for a pane's cwd, read from the checkout's files.

`tma ls` names every pane's repo and branch; a `git rev-parse` per cwd was a process
spawn plus `subprocess`'s import on every cold listing (issue 29). The answer is a few
small files away: walk up from the cwd to the first `.git` (a directory, or a file
naming the linked worktree's or submodule's git dir, as git's discovery does), its
`commondir`, its `HEAD`. Anything this reader does not know to read the way git does
(GIT_DIR and friends in the environment, a bare repository, a HEAD naming a ref outside
refs/heads, refs kept in a reftable, a malformed file) is asked of git itself, as before.

Two differences from `git rev-parse`, on purpose: a branch with no commit yet (a fresh
`git init`) is named, where rev-parse's `--abbrev-ref HEAD` failed and left the pane
without a repo at all; and a branch is named as it was named (`v1.2`, `origin/main`)
even where a tag or a remote-tracking branch shares the name, where `--abbrev-ref`
says `heads/v1.2` (so `--branch v1.2` selects it).
"""

from __future__ import annotations

import os

#: environment that changes what git would find: then git itself is asked
_GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
            "GIT_DISCOVERY_ACROSS_FILESYSTEM")

Labels = tuple["str | None", "str | None", "bool | None"]
_NONE: Labels = (None, None, None)


class GitInfo:
    def __init__(self) -> None:
        self._memo: dict[str, Labels] = {}

    def __call__(self, cwd: str) -> Labels:
        if cwd not in self._memo:
            self._memo[cwd] = resolve(cwd)
        return self._memo[cwd]


class _AskGit(Exception):
    """Something this reader does not read the way git does."""


def resolve(cwd: str) -> Labels:
    """(repo, branch, worktree); all None when cwd is not in a git checkout.

    repo = basename of the common git dir's parent (linked worktrees share it);
    branch = the short branch name, or HEAD when detached.
    """
    if not cwd or not os.path.isdir(cwd):
        return _NONE
    try:
        if any(name in os.environ for name in _GIT_ENV):
            raise _AskGit
        return _read(os.path.abspath(cwd))
    except (_AskGit, OSError, ValueError):  # ValueError: a NUL in a file (and decoding)
        return _rev_parse(cwd)


def _read(cwd: str) -> Labels:
    gitdir = _discover(cwd)
    if gitdir is None:
        return _NONE
    common = gitdir
    if os.path.isfile(os.path.join(gitdir, "commondir")):
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            common = os.path.normpath(os.path.join(gitdir, fh.read().strip()))
    if os.path.isdir(os.path.join(common, "reftable")):
        raise _AskGit  # git 2.45's reftable: HEAD there says refs/heads/.invalid
    head_path = os.path.join(gitdir, "HEAD")
    if os.path.islink(head_path):
        raise _AskGit  # core.preferSymlinkRefs: the link names the branch, not its file
    with open(head_path, encoding="utf-8") as fh:
        head = fh.read().strip()
    if head.startswith("ref: "):
        ref = head[5:].strip()
        if not ref.startswith("refs/heads/") or len(ref) == len("refs/heads/"):
            raise _AskGit  # a symref elsewhere: git's abbreviation rules decide
        branch = ref[len("refs/heads/"):]
    elif len(head) in (40, 64) and all(c in "0123456789abcdef" for c in head):
        branch = "HEAD"  # detached
    else:
        raise _AskGit
    repo = os.path.basename(os.path.dirname(common.rstrip("/"))) or None
    return repo, branch, os.path.realpath(gitdir) != os.path.realpath(common)


def _discover(cwd: str) -> str | None:
    """The git dir git's discovery would find from cwd, or None outside a checkout: the
    first ancestor's `.git` that is a git dir; like git, it does not leave cwd's
    filesystem."""
    here = cwd
    device = os.stat(here).st_dev
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            if _is_gitdir(dot):
                return dot
        elif os.path.isfile(dot):
            with open(dot, encoding="utf-8") as fh:
                text = fh.read()
            if not text.startswith("gitdir: "):
                raise _AskGit
            target = os.path.normpath(os.path.join(here, text[8:].strip()))
            if not _is_gitdir(target):
                raise _AskGit
            return target
        elif _is_gitdir(here):
            raise _AskGit  # inside a bare repository (or a git dir itself)
        parent = os.path.dirname(here)
        if parent == here or os.stat(parent).st_dev != device:
            return None
        here = parent


def _is_gitdir(path: str) -> bool:
    """What git checks before it takes a directory as a git dir: a HEAD, and objects/
    and refs/ (a linked worktree's are its common dir's)."""
    if not os.path.isfile(os.path.join(path, "HEAD")):
        return False
    if os.path.isfile(os.path.join(path, "commondir")):
        return True
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(
        os.path.join(path, "refs"))


def _rev_parse(cwd: str) -> Labels:
    """git's own answer (the reader's fallback): one bounded call."""
    import subprocess  # the fallback only: a cold listing never imports it

    try:
        res = subprocess.run(
            ["git", "-C", cwd, "rev-parse", "--path-format=absolute", "--git-common-dir",
             "--git-dir", "--abbrev-ref", "HEAD"],
            capture_output=True, text=True, timeout=3, env=dict(os.environ, LC_ALL="C"))
    except (OSError, subprocess.TimeoutExpired):
        return _NONE
    lines = res.stdout.splitlines()
    if res.returncode != 0 or len(lines) < 3:
        return _NONE
    common, gitdir, branch = lines[0], lines[1], lines[2]
    repo = os.path.basename(os.path.dirname(common.rstrip("/"))) or None
    return repo, branch or "HEAD", os.path.realpath(gitdir) != os.path.realpath(common)
