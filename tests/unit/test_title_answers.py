"""The title cache answers identity exactly as the full manifest set does.

A quiet pane whose process is a shared name (node) needs the manifests' title patterns
to be identified; the cycle keeps, per manifest set, which manifests a title matches,
so the next run identifies the pane without loading the whole set. Here: for every
captured title and every mix of processes, identify() over the cache's view returns
what it returns over the real set.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from tma.core import identity as I
from tma.runtime import manifests
from tma.runtime.cycle import titled_view

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


def _titles() -> list[str]:
    out = {"", "plain shell", "node", "Action Required", "gemini", "pi", "π - work"}
    for f in CAPTURES.glob("*.txt"):
        for line in f.read_text(encoding="utf-8").splitlines()[:8]:
            if line.startswith("# title: "):
                out.add(line[len("# title: "):])
    return sorted(out)


def _tables(names: list[str]):
    """The pane (pid 100, a shell) with one or two agent-named children, in or out of
    the foreground group."""
    for combo in itertools.chain(itertools.combinations(names, 1),
                                 itertools.combinations(names, 2)):
        for fg in (True, False):
            procs = [I.Proc(100, 1, 100, 200 if fg else 100, "bash")]
            for i, comm in enumerate(combo):
                procs.append(I.Proc(200 + i, 100 + (i and 200), 200, 0, comm))
            yield I.ProcTable.of(procs)


def test_the_cache_view_identifies_as_the_full_set():
    mset = manifests.load()
    order = manifests.identity_order(mset)
    titled = [m for m in mset.ordered() if m.identity.title_patterns]
    assert titled, "no bundled manifest narrows by title: nothing to test"
    names = sorted({n for m in titled for n in m.identity.process_names}
                   | {"claude", "codex", "opencode"})
    checked = 0
    for title in _titles():
        view = titled_view(order, manifests.title_matches(mset, title), title)
        for table in _tables(names):
            for anchor, registered in ((0, ""), (200, ""), (0, titled[0].name)):
                facts = I.PaneFacts(100, "bash", title, anchor, registered)
                assert I.identify(facts, table, view) == \
                    I.identify(facts, table, mset.ordered()), (title, facts)
                checked += 1
    assert checked > 1000


def test_a_title_that_matches_is_told_apart_from_one_that_does_not():
    mset = manifests.load()
    order = manifests.identity_order(mset)
    gemini = next(m for m in mset.ordered() if m.name == "gemini")
    assert gemini.identity.title_patterns
    hit = "◇  Ready (work-gemini)"
    assert "gemini" in manifests.title_matches(mset, hit)
    assert "gemini" not in manifests.title_matches(mset, "vim notes.txt")
    table = I.ProcTable.of([I.Proc(100, 1, 100, 300, "bash"), I.Proc(300, 100, 300, 0, "node")])
    yes = I.identify(I.PaneFacts(100, "node", hit), table,
                     titled_view(order, manifests.title_matches(mset, hit), hit))
    no = I.identify(I.PaneFacts(100, "node", "vim notes.txt"), table,
                    titled_view(order, [], "vim notes.txt"))
    assert yes.agent == "gemini" and no.agent != "gemini"


def test_the_cache_is_keyed_by_the_manifest_files(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    d = tmp_path / "agents"
    d.mkdir()
    doc = '[identity]\nprocess_names = ["fakenode"]\ntitle_patterns = ["{}"]\n'
    (d / "alpha.toml").write_text('min_engine_version = "0.1"\n' + doc.format("^ALPHA"))
    key, view = manifests.title_cache(str(d))
    assert view is None
    manifests.store_titles(key, {"order": [["alpha", ["fakenode"], True]],
                                 "titles": {"ALPHA 1": ["alpha"]}})
    assert manifests.title_cache(str(d)) == (key, {"order": [["alpha", ["fakenode"], True]],
                                                   "titles": {"ALPHA 1": ["alpha"]}})
    (d / "alpha.toml").write_text('min_engine_version = "0.1"\n' + doc.format("^BETA!"))
    key2, view2 = manifests.title_cache(str(d))
    assert key2 != key and view2 is None  # an edited manifest: every answer is asked anew
    # and the [[agent]] config (extra process names, disabling) is part of the key
    assert manifests.title_cache(str(d), [{"name": "alpha", "enabled": False}])[0] != key2


def test_the_cache_keeps_the_newest_titles_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    key, _ = manifests.title_cache(str(tmp_path))
    titles = {f"t{i}": [] for i in range(manifests.TITLE_CACHE_MAX + 10)}
    manifests.store_titles(key, {"order": [], "titles": titles})
    _, view = manifests.title_cache(str(tmp_path))
    assert len(view["titles"]) == manifests.TITLE_CACHE_MAX
    assert "t0" not in view["titles"] and f"t{manifests.TITLE_CACHE_MAX + 9}" in view["titles"]
