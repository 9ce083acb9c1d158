"""A regex's needles (tma.core.needles): strings one of which every match contains, so a
rule whose region holds none of them is answered without compiling or searching its
regex (issue 29: the compiles and line searches were most of a cold refresh's Python).
A needle that is not in every match would make a rule miss a screen it reads: the
property is checked over generated patterns and texts, and over every bundled rule and
every captured screen."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from tma.core import bundled, fixture, manifest
from tma.core.manifest import Regexes, from_dict
from tma.core.needles import needles
from tma.core.rules import Screen, evaluate

CAPTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "captures"

# small alphabets, so generated texts often hold what generated patterns ask for
_CHARS = "abAB \n❯."
_atom = st.sampled_from(["a", "b", "ab", "A", " ", "❯", r"\.", ".", r"\s", r"\w", "[ab]",
                         "[^a]", r"\d", "^", "$", r"\b", r"\A", r"\Z"])


def _grow(inner):
    return st.one_of(
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}|{t[1]}"),
        inner.map(lambda x: f"({x})"),
        inner.map(lambda x: f"(?:{x})"),
        inner.map(lambda x: f"(?i:{x})"),
        inner.map(lambda x: f"(?>{x})"),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "+?", "*+", "{1,3}?"]))
        .map(lambda t: f"(?:{t[0]}){t[1]}"),
        inner.map(lambda x: f"(?={x})"),
        inner.map(lambda x: f"(?!{x})"),
        inner.map(lambda x: f"(?<=a){x}"),
    )


_pattern = st.recursive(_atom, _grow, max_leaves=8)


@settings(max_examples=600, deadline=None)
@given(_pattern, st.text(alphabet=_CHARS, max_size=24), st.booleans())
def test_a_match_always_holds_a_needle(pattern, text, ignorecase):
    if ignorecase:
        pattern = "(?i)" + pattern
    try:
        compiled = re.compile(pattern)
    except re.error:
        return
    found = needles(pattern)
    if found is None:
        return
    assert found and all(found)
    for m in compiled.finditer(text):
        assert any(n in m.group(0) or n in text for n in found), (pattern, text, found)
    if compiled.search(text) is not None:
        assert any(n in text for n in found), (pattern, text, found)


def test_needles_of_plain_rule_shapes():
    assert needles(r"^\s*❯ 1\. Yes") == ("❯ 1. Yes",)
    assert needles(r"^(?:Working|Thinking)…") == ("Thinking", "Working")
    assert needles(r"esc to (interrupt|cancel)") == ("esc to ",)
    assert needles(r"a(?i:yes)") == ("a",)  # the case-blind part asks nothing
    for none in (r"(?i)yes", r"(?i:yes)", r"x?", r"\d+", r"(?=abc)", r"foo|\d", ""):
        assert needles(none) is None, none


def _rows() -> list[tuple[str, Screen]]:
    with open(CAPTURES / "expectations.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    out = []
    for row in rows:
        if row["agent"] not in bundled.load_all():
            continue
        cap = fixture.parse((CAPTURES / row["file"]).read_text(encoding="utf-8"))
        out.append((row["agent"], Screen(cap.body, cap.headers.get("title", ""),
                                         cap.height or None)))
    return out


def _without_needles(matcher):
    if isinstance(matcher, manifest.Regex | manifest.LineRegex):
        return type(matcher)(matcher.pattern, matcher.compiled, None)
    if isinstance(matcher, manifest.AnyOf | manifest.AllOf):
        return type(matcher)(tuple(_without_needles(c) for c in matcher.children))
    if isinstance(matcher, manifest.Not):
        return manifest.Not(_without_needles(matcher.child))
    return matcher


def _regexes(matcher):
    if isinstance(matcher, manifest.Regex | manifest.LineRegex):
        yield matcher
    for child in getattr(matcher, "children", ()):
        yield from _regexes(child)
    if isinstance(matcher, manifest.Not):
        yield from _regexes(matcher.child)


def test_every_bundled_rule_reads_every_capture_the_same_with_and_without_needles():
    memo = Regexes()
    loaded = {name: from_dict(name, bundled.document(name), regexes=memo)
              for name in bundled.load_all()}
    plain = {}
    for name, m in loaded.items():
        plain[name] = [r.match for r in m.rules]
    regexes = [x for m in loaded.values() for r in m.rules for x in _regexes(r.match)]
    # most rules' regexes have a needle (else the shortcut is not taken and this is moot)
    assert sum(x.needles is not None for x in regexes) >= 0.7 * len(regexes)
    skipped = checked = 0
    for agent, screen in _rows():
        m = loaded[agent]
        for rule in m.rules:
            lines = screen.region_lines(rule)
            text = "\n".join(lines)
            fast = rule.match.matches(text, lines)
            slow = _without_needles(rule.match).matches(text, lines)
            assert fast == slow, (agent, rule.label)
            checked += 1
            skipped += sum(x.needles is not None and not any(n in text for n in x.needles)
                           for x in _regexes(rule.match))
    assert checked > 1000 and skipped > checked // 2
    # and the engine's verdicts are those of the plain matchers
    for agent, screen in _rows()[:40]:
        assert evaluate(loaded[agent], screen).claims.keys() == \
            evaluate(from_dict(agent, bundled.document(agent)), screen).claims.keys()


def test_a_cached_entry_of_the_old_shape_is_learned_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    from tma.runtime import cache, manifests

    manifests.load(None, [])
    learned = cache.get("regexes", manifests._REGEX_KEY)
    for old in ({p: g for p, (g, _n, _prog) in learned.items()},  # names only (no needles)
                {p: (g, n) for p, (g, n, _prog) in learned.items()}):  # no programs yet
        cache.put("regexes", manifests._REGEX_KEY, old)
        assert manifests._known_regexes() == {}
        manifests.load(None, [])
        assert cache.get("regexes", manifests._REGEX_KEY) == learned


@settings(max_examples=300, deadline=None)
@given(_pattern, st.text(alphabet=_CHARS, max_size=24))
def test_a_deferred_pattern_answers_as_re_does(pattern, text):
    """A known pattern's every method, with its needles' shortcut, answers as the
    compiled pattern does (the dialog readers call search, match, finditer, sub...)."""
    try:
        real = re.compile(pattern)
    except re.error:
        return
    # without a kept program, and built from one (manifest.learn_program) as a warm
    # cache's pattern is
    for program in (None, manifest.learn_program(pattern, real)):
        _answers_as_re_does(
            manifest._Deferred(pattern, tuple(real.groupindex), needles(pattern), program),
            real, text)


def _answers_as_re_does(d, real, text):
    def same(a, b):
        return (a is None and b is None) or (a is not None and b is not None
                                             and a.span() == b.span())

    assert same(d.search(text), real.search(text))
    assert same(d.search(text, 1), real.search(text, 1))
    assert same(d.match(text), real.match(text))
    assert same(d.fullmatch(text), real.fullmatch(text))
    assert [m.span() for m in d.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert d.findall(text) == real.findall(text)
    assert d.sub("#", text) == real.sub("#", text)
    assert d.split(text) == real.split(text)


def test_a_deferred_pattern_is_not_compiled_for_a_string_without_its_needles():
    d = manifest._Deferred(r"^\d+\. Allow once$", (), needles(r"^\d+\. Allow once$"))
    assert d.search("1. Deny") is None and list(d.finditer("x")) == []
    assert d.sub("", "no dialog") == "no dialog" and d._compiled is None
    assert d.search("2. Allow once") is not None and d._compiled is not None


#: needles.py as the regexes cache's NEEDLES version knows it. An edit to needles.py
#: fails here: if it changes what needles() returns, bump tma.runtime.manifests.NEEDLES
#: (else every warm cache keeps the old needles); then put the new hash here.
NEEDLES_SOURCE = {1: "ea9a8bb504e919ecfaf636edcbcb2488d74380779fd1815b29903e4943bb3fea"}


def test_an_edit_to_needles_comes_with_its_cache_version():
    import hashlib

    from tma.core import needles as mod
    from tma.runtime import manifests

    source = Path(mod.__file__).read_bytes().replace(b"\r\n", b"\n")
    assert manifests.NEEDLES in NEEDLES_SOURCE, "a new NEEDLES: record needles.py's hash"
    assert hashlib.sha256(source).hexdigest() == NEEDLES_SOURCE[manifests.NEEDLES], (
        "needles.py changed: bump tma.runtime.manifests.NEEDLES if what needles() returns "
        "changed (a warm regexes cache would keep the old needles), and record the hash")
    assert manifests._REGEX_KEY.endswith(f":{manifests.NEEDLES}")
