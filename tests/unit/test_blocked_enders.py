"""The quiet skip's question "can this agent's decisive chrome end a blocked claim?" is
answered from the cached documents (the status path never loads the whole set); here it
agrees with the validated set, and names Copilot and no agent without such chrome."""

from __future__ import annotations

from tma.runtime import manifests


def test_the_cached_answer_is_the_validated_sets():
    mset = manifests.load()
    expected = {m.name for m in mset.ordered()
                if "blocked" in m.visible and any(d != "blocked" for d in m.decisive)}
    assert manifests.blocked_enders() == expected
    assert "copilot" in expected and "claude" not in expected and "codex" not in expected


def test_a_user_manifest_that_declares_decisive_chrome_is_counted(tmp_path):
    from tests.helpers.manifests import TEST_MANIFEST

    (tmp_path / "fake.toml").write_text(TEST_MANIFEST)
    assert "fake" not in manifests.blocked_enders(str(tmp_path))
    (tmp_path / "fake.toml").write_text(TEST_MANIFEST.replace(
        'visible = ["working", "blocked"]',
        'visible = ["working", "blocked", "idle"]\ndecisive = ["idle"]'))
    assert "fake" in manifests.blocked_enders(str(tmp_path))
