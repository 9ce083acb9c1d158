"""A manifest's regexes are compiled at load only the first time this interpreter meets
them (validation); a pattern known to compile (tma.core.manifest.Regexes, which
tma.runtime.manifests keeps in its cache) is compiled when first used (issue 29: a cold
refresh uses about half of the set's regexes). Nothing a manifest says or reads changes:
every bundled manifest reads every captured screen the same either way, a bad regex still
fails its manifest at load, naming the field, and a dialog rule's group checks still hold."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import pytest

from tma.core import bundled, fixture, manifest
from tma.core.manifest import ManifestError, Regexes, from_dict
from tma.core.rules import Screen, evaluate

CAPTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "captures"


def _known() -> dict:
    """Every bundled pattern, learned by a first (eager) load."""
    memo = Regexes()
    for name in bundled.load_all():
        from_dict(name, bundled.document(name), regexes=memo)
    assert memo.learned and memo.seen
    return memo.seen


def test_a_first_load_compiles_and_notes_every_pattern():
    memo = Regexes()
    m = from_dict("claude", bundled.document("claude"), regexes=memo)
    assert memo.learned
    assert all(isinstance(r.match.compiled, re.Pattern) for r in m.rules
               if isinstance(r.match, manifest.Regex))
    assert memo.seen[m.dialog.option.pattern][0] == tuple(m.dialog.option.groupindex)


def test_a_known_pattern_is_compiled_on_first_use_only():
    memo = Regexes(_known())
    m = from_dict("codex", bundled.document("codex"), regexes=memo)
    assert not memo.learned and set(memo.seen) <= set(memo.known)
    deferred = m.dialog.anchor
    assert not isinstance(deferred, re.Pattern) and deferred._compiled is None
    assert (deferred.search("no dialog here") is None) == \
        (re.compile(deferred.pattern).search("no dialog here") is None)
    # a text holding one of its needles (or any text, for a pattern without): compiled
    text = "no dialog here " + " ".join(deferred.needles or ())
    assert (deferred.search(text) is None) == (re.compile(deferred.pattern).search(text) is None)
    assert isinstance(deferred._compiled, re.Pattern)


def _screens() -> list[tuple[str, Screen]]:
    with open(CAPTURES / "expectations.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    out = []
    for row in rows:
        cap = fixture.parse((CAPTURES / row["file"]).read_text(encoding="utf-8"))
        out.append((row["agent"], Screen(cap.body, cap.headers.get("title", ""),
                                         cap.height or None)))
    return out


def test_every_bundled_manifest_reads_every_capture_the_same_deferred_or_not():
    from tma.core import prompt

    known = _known()
    checked = 0
    for agent, screen in _screens():
        if agent not in bundled.load_all():
            continue
        eager = from_dict(agent, bundled.document(agent))
        deferred = from_dict(agent, bundled.document(agent), regexes=Regexes(known))
        a, b = evaluate(eager, screen), evaluate(deferred, screen)
        assert [(r.rule.index, r.matched) for r in a.reports] == \
            [(r.rule.index, r.matched) for r in b.reports], agent
        assert {s: (c.detail, c.rule.index) for s, c in a.claims.items()} == \
            {s: (c.detail, c.rule.index) for s, c in b.claims.items()}, agent
        assert a.history_view == b.history_view
        assert eager.identity.title_matches(screen.title) == \
            deferred.identity.title_matches(screen.title)
        for detail in ("permission", "question"):
            assert prompt.of_screen(screen, detail, eager.dialog) == \
                prompt.of_screen(screen, detail, deferred.dialog)
        checked += 1
    assert checked >= 19


def _doc_with(**dialog) -> dict:
    doc = dict(bundled.document("claude"))
    doc["dialog"] = dict(doc["dialog"], **dialog)
    return doc


def test_a_bad_regex_still_fails_at_load_naming_the_field():
    memo = Regexes(_known())
    with pytest.raises(ManifestError, match=r"\[dialog\]\.anchor: bad regex"):
        from_dict("claude", _doc_with(anchor="(unclosed"), regexes=memo)


def test_the_group_checks_hold_for_a_known_pattern():
    """An option pattern without its `name` group fails as it does compiled at load."""
    plain = r"^\s*\d+\. \w+"
    memo = Regexes({**_known(), plain: ((), None)})
    with pytest.raises(ManifestError, match=r"\[dialog\]\.option: needs a \(\?P<name>"):
        from_dict("claude", _doc_with(option=plain), regexes=memo)
    with pytest.raises(ManifestError, match=r"\[dialog\]\.option: needs a \(\?P<name>"):
        from_dict("claude", _doc_with(option=plain))


def test_the_runtime_remembers_what_compiled(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    from tma.runtime import cache, manifests

    first = manifests.load(None, [])
    learned = cache.get("regexes", manifests._REGEX_KEY)
    assert learned and all(isinstance(g, tuple) and isinstance(n, tuple | None)
                           and isinstance(prog, tuple | None)
                           for g, n, prog in learned.values())
    compiled = []
    real = re.compile
    monkeypatch.setattr(manifest.re, "compile", lambda p, *a: compiled.append(p) or real(p, *a))
    second = manifests.load(None, [])
    assert compiled == []  # nothing compiled at load: every pattern was known
    assert list(second.manifests) == list(first.manifests)


# ------------------------------------------------------------ kept programs (manifest.learn_program)


CPYTHON = sys.implementation.name == "cpython"


@pytest.mark.skipif(not CPYTHON, reason="a program is CPython's code")
def test_every_bundled_pattern_keeps_a_program_equal_to_its_compile():
    """On CPython every bundled pattern's program is kept, and the Pattern built from it
    equals re.compile's (flags and code word for word): no pattern falls back silently."""
    known = _known()
    assert all(prog is not None for _g, _n, prog in known.values()), \
        [p for p, (_g, _n, prog) in known.items() if prog is None]
    for pattern, (_g, _n, prog) in known.items():
        assert manifest.build_program(pattern, prog) == re.compile(pattern), pattern


@pytest.mark.skipif(not CPYTHON, reason="a program is CPython's code")
def test_a_known_pattern_with_a_program_is_built_not_compiled(monkeypatch):
    known = _known()
    m = from_dict("claude", bundled.document("claude"), regexes=Regexes(known))
    deferred = m.dialog.anchor
    compiled = []
    real = re.compile
    monkeypatch.setattr(manifest.re, "compile", lambda p, *a: compiled.append(p) or real(p, *a))
    text = " ".join(deferred.needles or ("x",))
    deferred.search(text)
    assert compiled == [] and deferred._compiled == real(deferred.pattern)


@pytest.mark.parametrize("program", [
    (0, b"\xff\xff\xff\xff" * 8, 0, {}, ()),  # code _sre refuses
    (0, b"abc", 0, {}, ()),                        # not whole words
    ("flags", b"", 0, {}, ()),                     # a foreign shape
    (0, b"", 0),                                   # too short
])
def test_a_program_that_does_not_build_falls_back_to_compiling(program):
    """A damaged or foreign cache entry costs a compile, never a wrong or failed match."""
    assert manifest.build_program("a(b)c", program) is None
    deferred = manifest._Deferred("a(b)c", (), None, program)
    assert deferred.search("xxabcxx").group(1) == "b"
    assert deferred._compiled == re.compile("a(b)c")


@pytest.mark.skipif(not CPYTHON, reason="a program is CPython's code")
def test_a_program_is_kept_only_when_it_builds_the_same_pattern(monkeypatch):
    """learn() checks what it kept against re.compile's Pattern: internals that generate
    other code (another interpreter's, a changed compiler) keep nothing."""
    plain = re.compile(r"(?P<n>\d+) items?")
    assert manifest.learn_program(plain.pattern, plain) is not None
    assert manifest.learn_program(plain.pattern, re.compile(r"(?P<n>\d+) item")) is None
    from re import _compiler

    monkeypatch.setattr(_compiler, "_code", lambda *a: [])
    assert manifest.learn_program(plain.pattern, plain) is None
