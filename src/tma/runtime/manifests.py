"""Loading the manifest set: bundled, then user manifests that add or shadow by stem.

User manifests live in $XDG_CONFIG_HOME/tma/agents/ (or ~/.config/tma/agents/). A
broken user manifest is skipped with one line and the rest load; a broken bundled
manifest is fatal. `--manifest-dir DIR` loads only DIR (a closed set).

The decoded documents are cached (marshal, keyed by every file's mtime and size),
so a cycle that only needs identity (process names) never imports tomllib or re.
"""

from __future__ import annotations

import os
import sys

from tma.runtime import cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BUNDLED = "bundled"




def __getattr__(name: str):
    # BundledManifestError is tma.core.bundled's (the one error of a broken bundled
    # manifest), named here too for the commands; resolved lazily so the hook path,
    # which reads the cached tables, never imports the bundled loader.
    if name == "BundledManifestError":
        from tma.core.bundled import BundledManifestError

        return BundledManifestError
    raise AttributeError(name)


def user_dir() -> str:
    from tma.core.paths import here

    return here().manifest_dir


def _listing(directory: str) -> list[tuple[str, str, int, int]]:
    """(stem, path, mtime_ns, size) for every *.toml, sorted by stem."""
    out: list[tuple[str, str, int, int]] = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return out
    for n in names:
        if not n.endswith(".toml"):
            continue
        path = os.path.join(directory, n)
        try:
            st = os.stat(path)
        except OSError:
            out.append((n[:-5], path, -1, -1))
            continue
        out.append((n[:-5], path, st.st_mtime_ns, st.st_size))
    return out


def _bundled_listing() -> list[tuple[str, str, int, int]]:
    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "core", "manifests")
    return [(stem, BUNDLED + ":" + path, m, s) for stem, path, m, s in _listing(here)]


def _decode(path: str) -> tuple[Any, str | None]:
    if path.startswith(BUNDLED + ":"):
        # the bundled set ships decoded: its one loader, no TOML parse
        from tma.core import bundled

        try:
            return bundled.document(os.path.basename(path)[:-len(".toml")]), None
        except (bundled.BundledManifestError, KeyError) as exc:
            return None, str(exc)
    real = path
    try:
        with open(real, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read: {exc}"
    import tomllib

    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        return None, f"TOML: {exc}"


def listing(manifest_dir: str | None) -> tuple:
    """Every manifest file with its mtime and size: the key of everything cached from them."""
    if manifest_dir:
        return tuple(_listing(manifest_dir))
    return tuple(_bundled_listing() + _listing(user_dir()))


def _docs(manifest_dir: str | None) -> tuple[tuple, dict]:
    entries = listing(manifest_dir)
    cached = cache.get("manifests", entries)
    if cached is not None:
        return entries, cached
    decoded = {}
    for _stem, path, _m, _s in entries:
        doc, err = _decode(path)
        decoded[path] = (doc, err)
    cache.put("manifests", entries, decoded)
    return entries, decoded


class ManifestSet:
    """name -> tma.core.manifest.Manifest in identity order, plus skipped (path, error)."""

    def __init__(self, manifests: dict[str, Any], skipped: list[tuple[str, str]]) -> None:
        self.manifests = manifests
        self.skipped = skipped

    def get(self, name: str):
        return self.manifests.get(name)

    def ordered(self) -> list[Any]:
        return list(self.manifests.values())


def _adjust(doc: dict[str, Any], agents_cfg: list[dict[str, Any]], stem: str) -> dict | None:
    for entry in agents_cfg:
        if entry.get("name") != stem:
            continue
        if entry.get("enabled") is False:
            return None
        extra = entry.get("process_names") or []
        if extra and isinstance(doc.get("identity"), dict):
            ident = dict(doc["identity"])
            ident["process_names"] = list(ident.get("process_names", [])) + list(extra)
            doc = dict(doc, identity=ident)
    return doc


def load(manifest_dir: str | None = None, agents_cfg: list[dict[str, Any]] | None = None,
         ) -> ManifestSet:
    """Validate the set. Raises BundledManifestError when a bundled manifest is broken."""
    from tma.core.manifest import ManifestError, Regexes, from_dict

    entries, decoded = _docs(manifest_dir)
    regexes = Regexes(_known_regexes())
    # Every candidate per stem, bundled first: a broken user file that shadows a bundled
    # stem is skipped and the bundled manifest stays (a typo never costs an agent).
    candidates: dict[str, list[tuple[str, Any, str | None]]] = {}
    for stem, path, _m, _s in entries:
        doc, err = decoded.get(path, (None, "not read"))
        candidates.setdefault(stem, []).append((path, doc, err))
    manifests: dict[str, Any] = {}
    skipped: list[tuple[str, str]] = []
    for stem in sorted(candidates):
        for path, doc, err in reversed(candidates[stem]):  # the user's copy first
            is_bundled = path.startswith(BUNDLED + ":")
            shown = path.removeprefix(BUNDLED + ":")
            if err is None:
                adjusted = _adjust(doc, agents_cfg or [], stem)
                if adjusted is None:
                    break  # disabled by [[agent]] enabled = false
                try:
                    manifests[stem] = from_dict(stem, adjusted, regexes=regexes)
                    break
                except ManifestError as exc:
                    err = str(exc)
            if is_bundled:
                from tma.core import bundled

                raise bundled.failure(shown, err)
            skipped.append((shown, err))
    key, found = _skips_key(entries, agents_cfg), [list(x) for x in skipped]
    if cache.get("skipped", key) != found:  # a read is cheaper than a write every cycle
        cache.put("skipped", key, found)
    if regexes.learned:  # a pattern compiled (validated) for the first time: remember it
        cache.put("regexes", _REGEX_KEY, regexes.seen)
    return ManifestSet(manifests, skipped)


#: the regexes cache is this interpreter's: a pattern that compiles on one Python may not
#: on another, and a kept program (tma.core.manifest.learn_program) is its exact version's code
#: (tma's own version is in every cache key already); ":3", since each entry carries the
#: pattern's needles and program beside its group names. NEEDLES is tma.core.needles'
#: version: a change to what needles() returns must bump it, or a cache written by the
#: old code keeps serving old needles (a needle a match lacks silences its rule);
#: tests/unit/test_needles.py holds needles.py's hash beside it, so an edit cannot forget
NEEDLES = 1
_REGEX_KEY = f"{sys.hexversion:#x}:3:{NEEDLES}"


def _known_regexes() -> dict[str, Any]:
    """The patterns this interpreter compiled in an earlier load, with their group
    names and needles (tma.core.manifest.Regexes): {} when none are cached or the cache
    is foreign. An entry of another shape is dropped (learned again on this load)."""
    known = cache.get("regexes", _REGEX_KEY)
    if not isinstance(known, dict):
        return {}
    return {p: v for p, v in known.items() if isinstance(p, str) and _learned(v)}


def _learned(value: Any) -> bool:
    if not (isinstance(value, tuple) and len(value) == 3):
        return False
    groups, needles, program = value
    return (isinstance(groups, tuple) and all(isinstance(n, str) for n in groups)
            and (needles is None or (isinstance(needles, tuple) and bool(needles)
                                     and all(isinstance(n, str) and n for n in needles)))
            # a program of another shape is built by nobody (manifest.build_program
            # answers None and the pattern is compiled): only its outline is checked
            and (program is None or (isinstance(program, tuple) and len(program) == 5)))


def _skips_key(entries: tuple, agents_cfg) -> tuple:
    return (entries, repr(agents_cfg or []))


def skipped(manifest_dir: str | None = None,
            agents_cfg: list[dict[str, Any]] | None = None) -> list[tuple[str, str]]:
    """(path, error) of every user manifest the full set skips. Cached by the files'
    mtimes and sizes, so a cycle that never needed the full set still reports a broken
    file without validating (regexes, tomllib) every run."""
    cached = cache.get("skipped", _skips_key(listing(manifest_dir), agents_cfg))
    if cached is None:
        return list(load(manifest_dir, agents_cfg).skipped)
    return [(path, err) for path, err in cached]


def identity_index(manifest_dir: str | None = None,
                   agents_cfg: list[dict[str, Any]] | None = None) -> dict[str, tuple[str, ...]]:
    """name -> process_names, from the cached documents (no tomllib, no re, no validation).

    Only a hint for the fast path ("could any process in this pane be an agent?");
    the full set decides.
    """
    entries, decoded = _docs(manifest_dir)
    out: dict[str, tuple[str, ...]] = {}
    for stem, path, _m, _s in entries:  # a later (user) entry replaces only when it parses
        doc, err = decoded.get(path, (None, "x"))
        if err is not None or not isinstance(doc, dict):
            continue
        doc = _adjust(doc, agents_cfg or [], stem)
        ident = doc.get("identity") if isinstance(doc, dict) else None
        names = ident.get("process_names") if isinstance(ident, dict) else None
        if isinstance(names, list):
            out[stem] = tuple(n for n in names if isinstance(n, str))
    return out


def titled_names(manifest_dir: str | None = None,
                 agents_cfg: list[dict[str, Any]] | None = None) -> list[str]:
    """Manifests that narrow a process match by title (from the cached documents)."""
    entries, decoded = _docs(manifest_dir)
    out = []
    for stem, path, _m, _s in entries:
        doc, err = decoded.get(path, (None, "x"))
        ident = doc.get("identity") if isinstance(doc, dict) else None
        if err is None and isinstance(ident, dict) and ident.get("title_patterns"):
            out.append(stem)
        elif stem in out:
            out.remove(stem)
    return out


def blocked_enders(manifest_dir: str | None = None) -> frozenset[str]:
    """Manifests whose decisive chrome can end a blocked hook claim ([capture].decisive
    names another state, and blocked is in [capture].visible), from the cached documents.
    Any file of a name counts (bundled or the user's): a name kept here by mistake costs
    a read, one missed would leave a claim standing."""
    entries, decoded = _docs(manifest_dir)
    out = set()
    for stem, path, _m, _s in entries:
        doc, err = decoded.get(path, (None, "x"))
        cap = doc.get("capture") if err is None and isinstance(doc, dict) else None
        if not isinstance(cap, dict):
            continue
        visible, decisive = cap.get("visible"), cap.get("decisive")
        if isinstance(visible, list) and "blocked" in visible and isinstance(decisive, list) \
                and any(d != "blocked" for d in decisive):
            out.add(stem)
    return frozenset(out)


def tallest_tails(manifest_dir: str | None = None) -> dict[str, int]:
    """name -> the tallest tail_lines(N) region among its rules, from the cached documents
    (no validation): the largest over every file of a name, so never less than the
    validated manifest's (Manifest.scrollback_needed): a capture begun on these depths
    before the set is validated reads every line its rules can."""
    from tma.core.manifest import tail_lines

    entries, decoded = _docs(manifest_dir)
    out: dict[str, int] = {}
    for stem, path, _m, _s in entries:
        doc, err = decoded.get(path, (None, "x"))
        rules = doc.get("rules") if err is None and isinstance(doc, dict) else None
        tallest = max((tail_lines(r.get("region")) for r in rules if isinstance(r, dict)),
                      default=0) if isinstance(rules, list) else 0
        out[stem] = max(out.get(stem, 0), tallest)
    return out


def context_formats(manifest_dir: str | None = None,
                    agents_cfg: list[dict[str, Any]] | None = None) -> dict[str, str]:
    """name -> [telemetry.context].format, from the cached documents (no validation)."""
    entries, decoded = _docs(manifest_dir)
    out: dict[str, str] = {}
    for stem, path, _m, _s in entries:
        doc, err = decoded.get(path, (None, "x"))
        if err is not None or not isinstance(doc, dict):
            continue
        ctx = (doc.get("telemetry") or {}).get("context") if isinstance(
            doc.get("telemetry"), dict) else None
        if isinstance(ctx, dict) and isinstance(ctx.get("format"), str):
            out[stem] = ctx["format"]
        else:
            out.pop(stem, None)
    return out


TITLE_CACHE_MAX = 256  # titles remembered per manifest set (oldest forgotten first)


def title_cache(manifest_dir: str | None = None,
                agents_cfg: list[dict[str, Any]] | None = None) -> tuple[tuple, dict | None]:
    """(key, cached title view or None). The view holds the full set's identity order,
    `order`: [name, process names, narrows by title?] per manifest, and `titles`:
    title -> the names whose title_patterns match it. Keyed like the hook tables (every
    manifest file's mtime and size and the [[agent]] config): what a title matches is a
    function of the manifests alone, so an entry stands until one of them changes."""
    key = (listing(manifest_dir), repr(agents_cfg or []))
    view = cache.get("titles", key)
    ok = isinstance(view, dict) and isinstance(view.get("order"), list) \
        and isinstance(view.get("titles"), dict)
    return key, view if ok else None


def identity_order(mset: ManifestSet) -> list:
    return [[m.name, list(m.identity.process_names), bool(m.identity.title_patterns)]
            for m in mset.ordered()]


def title_matches(mset: ManifestSet, title: str) -> list[str]:
    return [m.name for m in mset.ordered()
            if m.identity.title_patterns and m.identity.title_matches(title)]


def store_titles(key: tuple, view: dict) -> None:
    titles = view["titles"]
    if len(titles) > TITLE_CACHE_MAX:
        titles = dict(list(titles.items())[-TITLE_CACHE_MAX:])
    cache.put("titles", key, {"order": view["order"], "titles": titles})


_REPORTED: set[str] = set()  # a process says each skip once, whichever path found it


def report_skipped(mset_or_list, write) -> None:
    """One `tma: skipping manifest <path>: <error>` line per skipped file."""
    entries = getattr(mset_or_list, "skipped", mset_or_list)
    for path, err in entries:
        line = f"tma: skipping manifest {path}: {err}\n"
        if line not in _REPORTED:
            _REPORTED.add(line)
            write(line)


def hook_tables(manifest_dir: str | None = None,
                agents_cfg: list[dict[str, Any]] | None = None) -> dict:
    """name -> tma.core.hookmap.HookTable, cached: a firing hook reads one marshal file."""
    from tma.core.hookmap import HookTable

    key = (listing(manifest_dir), repr(agents_cfg or []))
    cached = cache.get("hooktables", key)
    if cached is None:
        mset = load(manifest_dir, agents_cfg)
        cached = {n: m.hook_table().to_data() for n, m in mset.manifests.items()}
        cache.put("hooktables", key, cached)
    return {n: HookTable.from_data(d) for n, d in cached.items()}
