"""A pane's repo, branch and worktree flag are read from the checkout's files (issue 29:
a `git rev-parse` per cwd was a process and `subprocess`'s import on every cold `tma ls`).
Each layout a person works in is built with the real git and the reader's answer is
held to git's own (`_rev_parse`, which is also the reader's fallback); the layouts the
reader does not read the way git does are handed to git."""

from __future__ import annotations

import os
import subprocess

import pytest

from tma.runtime import git

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": "/dev/null",
       "GIT_CONFIG_NOSYSTEM": "1"}


REAL = git._rev_parse  # git's own answer, kept before a test takes it away


def sh(cwd, *argv):
    subprocess.run(["git", "-C", str(cwd), *argv], check=True, capture_output=True,
                   env={**os.environ, **ENV})


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "proj"
    r.mkdir()
    sh(r, "init", "-q", "-b", "main")
    sh(r, "commit", "-q", "--allow-empty", "-m", "one")
    (r / "src" / "deep").mkdir(parents=True)
    return r


@pytest.fixture
def no_git(monkeypatch):
    """The reader's own answer: asking git fails the test."""
    def refuse(*_a, **_k):
        raise AssertionError("git was asked")
    monkeypatch.setattr(git, "_rev_parse", refuse)


def both(cwd) -> tuple:
    return git.resolve(str(cwd)), REAL(str(cwd))


def test_the_root_a_subdirectory_and_a_branch_with_a_slash(repo, no_git):
    for cwd in (repo, repo / "src" / "deep"):
        mine, theirs = both(cwd)
        assert mine == theirs == ("proj", "main", False)
    sh(repo, "checkout", "-q", "-b", "feat/x")
    assert both(repo / "src")[0] == both(repo / "src")[1] == ("proj", "feat/x", False)
    assert git.resolve(str(repo / "src")) == ("proj", "feat/x", False)


def test_detached_head(repo, no_git):
    sh(repo, "checkout", "-q", "--detach")
    mine, theirs = both(repo)
    assert mine == theirs == ("proj", "HEAD", False)


def test_a_linked_worktree_names_the_main_repo_and_says_worktree(repo, tmp_path, no_git):
    wt = tmp_path / "elsewhere" / "wt"
    sh(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "a").mkdir()
    for cwd in (wt, wt / "a"):
        mine, theirs = both(cwd)
        assert mine == theirs == ("proj", "side", True)


def test_outside_any_checkout(tmp_path, no_git):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git.resolve(str(plain)) == (None, None, None) == REAL(str(plain))
    assert git.resolve(str(tmp_path / "gone")) == (None, None, None)


def test_a_dot_git_folder_that_is_no_git_dir_is_passed_over(repo, no_git):
    inner = repo / "src" / "deep"
    (inner / ".git").mkdir()  # an empty one: git walks on to the real checkout
    mine, theirs = both(inner)
    assert mine == theirs == ("proj", "main", False)


def test_a_submodule_reads_as_git_reads_it(repo, tmp_path, no_git):
    lib = tmp_path / "lib"
    lib.mkdir()
    sh(lib, "init", "-q", "-b", "trunk")
    sh(lib, "commit", "-q", "--allow-empty", "-m", "l")
    sh(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    mine, theirs = both(repo / "vendor" / "lib")
    assert mine == theirs
    assert mine[0] is not None


def test_a_fresh_init_names_its_branch(tmp_path, no_git):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    sh(fresh, "init", "-q", "-b", "start")
    assert git.resolve(str(fresh)) == ("fresh", "start", False)  # git itself: no answer


def test_what_the_reader_does_not_read_goes_to_git(repo, tmp_path, monkeypatch):
    asked = []
    real = REAL
    monkeypatch.setattr(git, "_rev_parse", lambda cwd: asked.append(cwd) or real(cwd))
    bare = tmp_path / "b.git"
    sh(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert git.resolve(str(bare)) == real(str(bare))
    (repo / ".git" / "HEAD").write_text("ref: refs/remotes/origin/main\n")
    git.resolve(str(repo))
    monkeypatch.setenv("GIT_DIR", str(bare))
    assert git.resolve(str(tmp_path)) == real(str(tmp_path))
    monkeypatch.delenv("GIT_DIR")
    # a reftable repository (git 2.45+) keeps HEAD as `ref: refs/heads/.invalid` for old
    # readers: never named from the file
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/.invalid\n")
    (repo / ".git" / "reftable").mkdir()
    git.resolve(str(repo))
    assert asked == [str(bare), str(repo), str(tmp_path), str(repo)]


def test_a_symlinked_head_or_a_nul_in_a_file_goes_to_git(repo, tmp_path, monkeypatch):
    """core.preferSymlinkRefs' HEAD (a link to the branch's file) read through the link
    said detached; a NUL in a worktree's commondir raised out of `tma ls`. Both are git's."""
    asked = []
    monkeypatch.setattr(git, "_rev_parse", lambda cwd: asked.append(cwd) or REAL(cwd))
    link = tmp_path / "linked"
    sh(tmp_path, "clone", "-q", str(repo), str(link))
    head = link / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("refs/heads/main")
    assert git.resolve(str(link)) == ("linked", "main", False) and asked == [str(link)]
    wt = tmp_path / "wtnul"
    sh(repo, "worktree", "add", "-q", str(wt), "-b", "nulb")
    (repo / ".git" / "worktrees" / "wtnul" / "commondir").write_bytes(b"../..\0x\n")
    assert git.resolve(str(wt)) == REAL(str(wt))
    assert asked[-1] == str(wt)


def test_a_branch_sharing_a_tags_name_is_named_as_it_was_named(repo, no_git):
    """`git rev-parse --abbrev-ref` says heads/v1.2 where a tag is also v1.2; the label
    is the branch's own name (documented in tma.runtime.git)."""
    sh(repo, "checkout", "-q", "-b", "v1.2")
    sh(repo, "tag", "v1.2")
    assert git.resolve(str(repo)) == ("proj", "v1.2", False)
    assert REAL(str(repo))[1] == "heads/v1.2"
