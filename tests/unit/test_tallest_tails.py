"""A cold cycle begins its captures on depths read from the cached documents and validates
the manifest set while tmux captures (Cycle._capture): those depths must never be less
than the validated manifests' (a rule would read a cut tail), and are the same for
every bundled agent."""

from __future__ import annotations

from tma.core.manifest import scrollback
from tma.runtime import manifests


def test_the_cached_depths_are_the_validated_sets():
    mset = manifests.load()
    tails = manifests.tallest_tails()
    assert set(tails) == {m.name for m in mset.ordered()}
    for m in mset.ordered():
        for height in (0, 1, 10, 24, 50, 200):
            assert scrollback(tails[m.name], height) == m.scrollback_needed(height), m.name
    assert any(tails.values())  # some bundled rule reads a tail (else this proves little)


def test_a_user_file_of_a_name_never_lowers_the_depth(tmp_path):
    from tests.helpers.manifests import TEST_MANIFEST

    (tmp_path / "fake.toml").write_text(TEST_MANIFEST.replace(
        'region = "visible"\nmatch = { contains = "FAKE-IDLE" }',
        'region = "tail_lines(40)"\nmatch = { contains = "FAKE-IDLE" }'))
    assert manifests.tallest_tails(str(tmp_path))["fake"] == 40
    validated = manifests.load(str(tmp_path)).get("fake")
    assert validated.scrollback_needed(10) == scrollback(40, 10) == 30
    (tmp_path / "fake.toml").write_text("not toml [")  # broken: skipped, depth unread
    assert manifests.tallest_tails(str(tmp_path)).get("fake", 0) == 0
