"""Repo / branch / worktree labels for a pane's cwd: one bounded git call per cwd."""

from __future__ import annotations

import os
import subprocess


class GitInfo:
    def __init__(self) -> None:
        self._memo: dict[str, tuple[str | None, str | None, bool | None]] = {}

    def __call__(self, cwd: str) -> tuple[str | None, str | None, bool | None]:
        if cwd not in self._memo:
            self._memo[cwd] = resolve(cwd)
        return self._memo[cwd]


def resolve(cwd: str) -> tuple[str | None, str | None, bool | None]:
    """(repo, branch, worktree); all None when cwd is not in a git checkout.

    repo = basename of the common git dir's parent (linked worktrees share it);
    branch = the short branch name, or HEAD when detached.
    """
    if not cwd or not os.path.isdir(cwd):
        return None, None, None

    try:
        res = subprocess.run(
            ["git", "-C", cwd, "rev-parse", "--path-format=absolute", "--git-common-dir",
             "--git-dir", "--abbrev-ref", "HEAD"],
            capture_output=True, text=True, timeout=3, env=dict(os.environ, LC_ALL="C"))
    except (OSError, subprocess.TimeoutExpired):
        return None, None, None
    lines = res.stdout.splitlines()
    if res.returncode != 0 or len(lines) < 3:
        return None, None, None
    common, gitdir, branch = lines[0], lines[1], lines[2]
    repo = os.path.basename(os.path.dirname(common.rstrip("/"))) or None
    return repo, branch or "HEAD", os.path.realpath(gitdir) != os.path.realpath(common)
