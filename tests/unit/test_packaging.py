"""The distribution's metadata: a free name (not `tma`, which is someone else's on the
index), the licence it claims, URLs, one version, and no build leftovers in the sdist.

The name was checked by hand against the index (see the issue note): `pip index versions
tma` lists an unrelated 0.3.3; `tmux-agent-state` has no matching distribution."""

from __future__ import annotations

import tomllib
from pathlib import Path

import tma

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DIST = "tmux-agent-state"


def test_the_distribution_name_is_ours_and_the_command_stays_tma():
    project = PROJECT["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"tma": "tma.cli.main:entry"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"pipx uninstall {DIST}" in readme and "pipx install ." in readme


def test_one_version_the_package_s():
    assert PROJECT["project"]["dynamic"] == ["version"]
    assert PROJECT["tool"]["hatch"]["version"]["path"] == "src/tma/__init__.py"
    assert tma.__version__.count(".") == 2


def test_the_licence_file_is_the_one_the_metadata_claims():
    assert PROJECT["project"]["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "the tma authors" in text


def test_urls_are_urls():
    """[project.urls] takes real URLs (an index renders them as links); no repository is
    recorded, so there are none rather than a path that leads nowhere."""
    urls = PROJECT["project"].get("urls", {})
    assert all(target.startswith("https://") for target in urls.values()), urls


def test_the_wheel_installs_the_man_page():
    """pipx links <venv>/share/man/man1 onto MANPATH: the wheel carries the page there."""
    shared = PROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared.get("docs/man/tma.1") == "share/man/man1/tma.1", shared
    assert ".TH" in (ROOT / "docs/man/tma.1").read_text(encoding="utf-8")


def test_build_leftovers_stay_out_of_the_sdist():
    exclude = set(PROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["exclude"])
    assert {".venv", ".import_linter_cache", ".pytest_cache", ".ruff_cache",
            "**/__pycache__"} <= exclude
