"""The agent manifest schema: validation of a parsed TOML document into a Manifest.

Pure: callers hand in the decoded TOML table (or the text) and a name; reading
files and choosing which directories to load is `tma.runtime.manifests`' job.
Regexes use Python's `re` dialect and are compiled here, at load, so a bad one
fails the manifest rather than a later match; a pattern this interpreter has compiled
before (`Regexes`, which the runtime keeps in its cache) is compiled when first used
instead, since it cannot fail. The types are plain slotted records, not dataclasses
(which import `inspect`): a cold refresh loads this module.
"""

from __future__ import annotations

import re

from tma.core import hookmap, states
from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    #: (flags, code as 32-bit words in native order, groups, {name: index}, index -> name)
    Program = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]
    #: what is known of a pattern that compiled: (its group names, its needles or None,
    #: its program or None: learn_program)
    Learned = tuple[tuple[str, ...], tuple[str, ...] | None, Program | None]

ENGINE_VERSION = "0.1.0"

CHANNELS = ("event", "file-tail", "screen")
CONTEXT_FORMATS = (
    "claude-statusline-json",
    "codex-rollout-jsonl",
    "cursor-statusline-json",
    "pi-context-json",
)
COVERS = states.STATES[:3] + (states.LIFECYCLE,)  # working blocked idle lifecycle
COMM_WIDTH = 15


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the message names the field."""


# ---------------------------------------------------------------- matchers


class Matcher:
    """A screen predicate over a region's text and its lines."""

    __slots__ = ()

    def matches(self, text: str, lines: list[str]) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError


class Contains(Record, Matcher):
    text: str

    def matches(self, text: str, lines: list[str]) -> bool:
        return self.text in text


class Regex(Record, Matcher):
    pattern: str
    compiled: re.Pattern[str]
    #: strings one of which every match contains (tma.core.needles): a region holding
    #: none of them cannot match, and is answered without compiling or searching
    needles: tuple[str, ...] | None = None

    def matches(self, text: str, lines: list[str]) -> bool:
        needles = self.needles
        if needles is not None and not any(n in text for n in needles):
            return False
        return self.compiled.search(text) is not None


class LineRegex(Record, Matcher):
    pattern: str
    compiled: re.Pattern[str]
    needles: tuple[str, ...] | None = None  # as Regex's: a line holding one is in the text

    def matches(self, text: str, lines: list[str]) -> bool:
        needles = self.needles
        if needles is not None and not any(n in text for n in needles):
            return False
        search = self.compiled.search
        return any(search(line) is not None for line in lines)


class AnyOf(Record, Matcher):
    children: tuple[Matcher, ...]

    def matches(self, text: str, lines: list[str]) -> bool:
        return any(c.matches(text, lines) for c in self.children)


class AllOf(Record, Matcher):
    children: tuple[Matcher, ...]

    def matches(self, text: str, lines: list[str]) -> bool:
        return all(c.matches(text, lines) for c in self.children)


class Not(Record, Matcher):
    child: Matcher

    def matches(self, text: str, lines: list[str]) -> bool:
        return not self.child.matches(text, lines)


# ---------------------------------------------------------------- schema types


class Region(Record):
    kind: str = ""  # tail_lines | visible | title
    lines: int = 0

    def __str__(self) -> str:
        return f"tail_lines({self.lines})" if self.kind == "tail_lines" else self.kind


class Rule(Record):
    index: int
    state: str
    region: Region
    match: Matcher
    detail: str = ""
    priority: int = 0
    skip_state_update: bool = False

    @property
    def label(self) -> str:
        detail = f"/{self.detail}" if self.detail else ""
        return f"rules[{self.index}] {self.state}{detail} {self.region}"


class HookMapping(Record):
    index: int = 0
    event: str = ""
    matcher: str | None = None
    compiled: re.Pattern[str] | None = None
    state: str = ""
    detail: str = ""
    lifecycle: str = ""  # start | end
    turn_end: bool = False

    def matches(self, payload: str) -> bool:
        return self.compiled is None or self.compiled.search(payload) is not None


class Identity(Record):
    process_names: tuple[str, ...] = ()
    title_patterns: tuple[re.Pattern[str], ...] = ()  # compiled

    def title_matches(self, title: str) -> bool:
        return any(p.search(title) is not None for p in self.title_patterns)


class ContextTelemetry(Record):
    channel: str = ""
    format: str = ""


class DialogTarget(Record):
    """One way a permission dialog names its tool and what the tool would act on."""

    index: int
    header: re.Pattern[str]  # the line that names the call (groups `tool`, `text` optional)
    tool: str = ""  # the tool's name when the header's `tool` group does not give it
    key: str = "command"  # the input field the target text fills (command, file_path, url)
    start: re.Pattern[str] | None = None  # the block begins after the first line matching it
    until: re.Pattern[str] | None = None  # the block ends before the first line matching it
    item: re.Pattern[str] | None = None  # a block line's text is its `text` group
    drop_last: bool = False  # a block of two or more lines ends with a description line
    on: re.Pattern[str] | None = None  # the form applies only where the anchor row matches


class OptionKind(Record):
    kind: str
    match: re.Pattern[str]


class DialogRules(Record):
    """`[dialog]`: how to read what a permission dialog on screen asks (see tma.core.card)."""

    anchor: re.Pattern[str]  # a line only the dialog draws; the bottommost match is used
    option: re.Pattern[str]  # every match (group `name`, optional `id`) on a line is an option
    above: int = 40  # lines above the anchor that may hold the dialog's target
    below: int = 16  # lines below the anchor that may hold its options and target
    within: int = 0  # >0: the anchor has at most this many non-blank rows under it
    strip: re.Pattern[str] | None = None  # frame borders removed from each line first
    targets: tuple[DialogTarget, ...] = ()
    kinds: tuple[OptionKind, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()  # the screen's tool name -> the card's


class Manifest(Record):
    name: str
    min_engine_version: str
    identity: Identity
    hook_capable: bool
    covers: tuple[str, ...]
    hooks: tuple[HookMapping, ...]
    visible: tuple[str, ...]
    rules: tuple[Rule, ...]
    details: dict[str, tuple[str, ...]]  # canonical -> aliases
    context: ContextTelemetry | None = None
    reply_lane: str = ""  # the hook event whose process holds for a verdict ("" = none)
    dialog: DialogRules | None = None  # how to read a permission dialog's ask off the screen
    # [capture].decisive: states whose chrome ends a visible hook claim once it has stood
    # for the dwell past the claim's evidence, without the decay wait
    decisive: tuple[str, ...] = ()

    def map_event(self, event: str, payload: str) -> HookMapping | None:
        """First entry for the event whose matcher matches; else first matcher-less one."""
        return hookmap.first_for_event(self.hooks, event, lambda m: None if m.compiled is None
                                       else m.compiled.search(payload) is not None)

    def normalize_detail(self, token: str) -> str:
        """Map an alias spelling to its canonical detail token."""
        return hookmap.normalize_detail(self.details, token)

    def hook_table(self) -> hookmap.HookTable:
        """What `tma event` needs of this manifest, as plain data (tma.core.hookmap)."""
        hooks = tuple(hookmap.Hook(h.index, h.event, h.matcher, h.state, h.detail,
                                   h.lifecycle, h.turn_end) for h in self.hooks)
        return hookmap.HookTable(self.name, hooks, dict(self.details),
                                 self.identity.process_names,
                                 self.context.format if self.context else None,
                                 self.hook_capable, self.reply_lane)

    def scrollback_needed(self, height: int) -> int:
        """Lines above the visible screen the rules can read: a tail_lines(N) region
        taller than the pane (`visible` and `title` never need any)."""
        return scrollback(max((r.region.lines for r in self.rules
                               if r.region.kind == "tail_lines"), default=0), height)

    @property
    def hook_events(self) -> tuple[str, ...]:
        seen: list[str] = []
        for m in self.hooks:
            if m.event not in seen:
                seen.append(m.event)
        return tuple(seen)


# ---------------------------------------------------------------- versions


def parse_version(text: str) -> tuple[int, int, int]:
    parts = text.strip().split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise ManifestError(f"min_engine_version: {text!r} is not maj[.min[.patch]]")
    nums = [int(p) for p in parts] + [0] * (3 - len(parts))
    return nums[0], nums[1], nums[2]


def check_engine(doc: dict[str, Any], engine: str = ENGINE_VERSION) -> None:
    """The version gate, checked before anything else in the document."""
    raw = doc.get("min_engine_version")
    if raw is None:
        raise ManifestError("min_engine_version: required")
    if not isinstance(raw, str):
        raise ManifestError("min_engine_version: must be a string like \"0.1\"")
    if parse_version(raw) > parse_version(engine):
        raise ManifestError(
            f"requires engine {raw} but this engine is {engine} (upgrade tma to load it)"
        )


# ---------------------------------------------------------------- validation helpers


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: must be a table")
    return value


def _array_tables(raw: Any, name: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(index, where, table) of each entry of the array of tables [[name]], each checked as
    it is reached (an earlier entry's error is the one reported)."""
    if not isinstance(raw, list):
        raise ManifestError(f"[[{name}]]: must be an array of tables")
    for i, entry in enumerate(raw):
        where = f"[[{name}]][{i}]"
        yield i, where, _table(entry, where)


def _keys(table: dict[str, Any], where: str, allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            raise ManifestError(f"{where}: unknown field {key!r}")


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{where}: must be a list of strings")
    return tuple(value)


def _token(value: Any, where: str) -> str:
    if not isinstance(value, str) or not states.is_safe_token(value):
        raise ManifestError(
            f"{where}: {value!r} is not a safe token (non-empty; a-z, 0-9, _ and - only)"
        )
    return value


def _state(value: Any, where: str) -> str:
    if not isinstance(value, str) or value not in states.STATES:
        raise ManifestError(f"{where}: {value!r} is not one of {', '.join(states.STATES)}")
    return value


class Regexes:
    """Patterns known to compile on this interpreter, each with its group names (the
    runtime keeps them in its cache, keyed by the interpreter's and tma's versions). A
    load compiles only the patterns it has not seen compile (validation: a bad one fails
    its manifest at load, as ever); the rest are compiled when first used. A cold refresh
    uses about half of the set's regexes (no hook matcher, no rule of an absent agent, no
    rule a higher one decided before), and compiling all of them was ~10 ms of it.
    Each pattern is kept with its group names and its needles (tma.core.needles: the
    strings one of which every match contains, found by parsing it when first learned).
    `seen`: every pattern this load met: what the cache holds next; `learned`: whether
    one of them was not known."""

    def __init__(self, known: dict[str, Learned] | None = None) -> None:
        self.known = known or {}
        self.seen: dict[str, Learned] = {}
        self.learned = False


_REGEXES: Regexes | None = None  # the one a from_dict in progress was given


# ------------------------------------------------------------------ kept programs
#
# A compiled regex's program, kept so a later process can skip compiling it. Compiling
# is parsing the pattern and generating its matcher code (`re._parser`, `re._compiler`):
# ~45 µs a pattern, ~2 ms of a cold refresh's ~60 (about 50 patterns meet a needle on 19
# screens). Building the Pattern from the generated code (`_sre.compile`, the last step
# of `re.compile`) costs ~1 µs. So the load that first compiles a pattern keeps its
# program in `Regexes.seen` (flags, code, groups), the runtime caches it with the rest
# (keyed by the interpreter's exact version, whose code format it is), and a deferred
# pattern of a later load is built from it.
#
# These are CPython's internals, so nothing here is trusted blindly: a program is kept
# only when the Pattern built from it equals `re.compile`'s (a Pattern's equality
# compares its flags and its code word for word), `_sre` validates code before it runs
# it, and any failure, here or on another interpreter, means None: the pattern is
# compiled as ever.


def learn_program(pattern: str, compiled: re.Pattern[str]) -> Program | None:
    """The program of PATTERN, which `re.compile` made into COMPILED; None when this
    interpreter's internals do not give back the same Pattern."""
    try:
        import _sre  # type: ignore[import-not-found]
        from re import _compiler, _parser  # type: ignore[attr-defined]

        if _sre.CODESIZE != 4:
            return None
        parsed = _parser.parse(pattern, 0)
        code = _compiler._code(parsed, 0)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        import array

        kept: Program = (int(parsed.state.flags), array.array("I", code).tobytes(),
                         parsed.state.groups - 1, groupindex, tuple(indexgroup))
        built = build_program(pattern, kept)
        return kept if built is not None and built == compiled else None
    except Exception:  # noqa: BLE001 - any internal difference: compile as ever
        return None


def build_program(pattern: str, program: Any) -> re.Pattern[str] | None:
    """PATTERN's Pattern from a kept program; None when it cannot be built here."""
    try:
        import _sre

        flags, code, groups, groupindex, indexgroup = program
        built: re.Pattern[str] = _sre.compile(
            pattern, flags, memoryview(code).cast("I").tolist(), groups, dict(groupindex),
            tuple(indexgroup))
        return built
    except Exception:  # noqa: BLE001 - a program from elsewhere: compile as ever
        return None



class _Deferred:
    """A regex known to compile, compiled on first use: the part of re.Pattern the
    manifest's readers call. A string holding none of its needles (tma.core.needles)
    cannot match, so it is answered as no match without compiling: the dialog readers
    try many patterns on every line of a blocked pane's screen."""

    __slots__ = ("pattern", "groups_named", "needles", "program", "_compiled")

    def __init__(self, pattern: str, groups_named: tuple[str, ...],
                 needles: tuple[str, ...] | None = None, program: Any = None) -> None:
        self.pattern = pattern
        self.groups_named = groups_named
        self.needles = needles
        self.program = program
        self._compiled: re.Pattern[str] | None = None

    def _re(self) -> re.Pattern[str]:
        if self._compiled is None:
            built = None
            if self.program is not None:  # built from the kept code: no parse, no codegen
                built = build_program(self.pattern, self.program)
            self._compiled = built if built is not None else re.compile(self.pattern)
        return self._compiled

    def _absent(self, args: tuple[Any, ...], at: int = 0) -> bool:
        """No match is possible in the string argument: it holds no needle."""
        needles = self.needles
        if needles is None or len(args) <= at or not isinstance(args[at], str):
            return False
        string = args[at]
        return not any(n in string for n in needles)

    def search(self, *args: Any) -> re.Match[str] | None:
        return None if self._absent(args) else self._re().search(*args)

    def match(self, *args: Any) -> re.Match[str] | None:
        return None if self._absent(args) else self._re().match(*args)

    def fullmatch(self, *args: Any) -> re.Match[str] | None:
        return None if self._absent(args) else self._re().fullmatch(*args)

    def finditer(self, *args: Any) -> Iterator[re.Match[str]]:
        return iter(()) if self._absent(args) else self._re().finditer(*args)

    def findall(self, *args: Any) -> list[Any]:
        return [] if self._absent(args) else self._re().findall(*args)

    def sub(self, *args: Any) -> str:
        # sub(repl, string, count): no match leaves the string as it is
        return args[1] if self._absent(args, 1) else self._re().sub(*args)

    def split(self, *args: Any) -> list[str | Any]:
        return [args[0]] if self._absent(args) else self._re().split(*args)

    @property
    def groupindex(self) -> Any:
        return self._re().groupindex

    @property
    def groups(self) -> int:
        return self._re().groups

    @property
    def flags(self) -> int:
        return self._re().flags


def _compile(pattern: Any, where: str) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ManifestError(f"{where}: must be a string")
    memo = _REGEXES
    if memo is not None:
        known = memo.known.get(pattern)
        if known is not None:
            memo.seen[pattern] = known
            return _Deferred(pattern, *known)  # type: ignore[return-value]
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ManifestError(f"{where}: bad regex {pattern!r}: {exc}") from None
    if memo is not None:
        from tma.core.needles import needles

        memo.seen[pattern] = (tuple(compiled.groupindex), needles(pattern),
                              learn_program(pattern, compiled))
        memo.learned = True
    return compiled


def _needles_of(pattern: str) -> tuple[str, ...] | None:
    """A compiled pattern's needles: the load's memo knows them (cached, or just learned
    by _compile); a load without one parses the pattern."""
    memo = _REGEXES
    if memo is not None and pattern in memo.seen:
        return memo.seen[pattern][1]
    from tma.core.needles import needles

    return needles(pattern)


def _groups(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """The group names of a pattern from _compile, without compiling a deferred one."""
    deferred: Any = pattern
    if isinstance(deferred, _Deferred):
        return deferred.groups_named
    return tuple(pattern.groupindex)


_REGION = re.compile(r"tail_lines\((\d+)\)")


def scrollback(tallest: int, height: int) -> int:
    """Lines above a pane HEIGHT rows tall that a tail_lines(TALLEST) region reads."""
    return max(0, tallest - height) if height > 0 else tallest


def tail_lines(value: Any) -> int:
    """N of a valid tail_lines(N) region as a manifest's rule spells it; 0 otherwise."""
    try:
        region = _region(value, "")
    except ManifestError:
        return 0
    return region.lines if region.kind == "tail_lines" else 0


def _region(value: Any, where: str) -> Region:
    if value in ("visible", "title"):
        return Region(value)
    m = _REGION.fullmatch(value) if isinstance(value, str) else None
    if m is None or int(m.group(1)) < 1:
        raise ManifestError(f"{where}: {value!r} is not tail_lines(N), visible or title")
    return Region("tail_lines", int(m.group(1)))


_MATCHER_KINDS = ("contains", "regex", "line_regex", "any", "all", "not")


def _matcher(value: Any, where: str) -> Matcher:
    table = _table(value, where)
    if len(table) != 1:
        raise ManifestError(f"{where}: a matcher has exactly one of {', '.join(_MATCHER_KINDS)}")
    (kind, arg), = table.items()
    if kind == "contains":
        if not isinstance(arg, str) or not arg:
            raise ManifestError(f"{where}.contains: must be a non-empty string")
        return Contains(arg)
    if kind == "regex":
        compiled = _compile(arg, f"{where}.regex")
        return Regex(arg, compiled, _needles_of(arg))
    if kind == "line_regex":
        compiled = _compile(arg, f"{where}.line_regex")
        return LineRegex(arg, compiled, _needles_of(arg))
    if kind in ("any", "all"):
        if not isinstance(arg, list) or not arg:
            raise ManifestError(f"{where}.{kind}: must be a non-empty list of matchers")
        children = tuple(_matcher(c, f"{where}.{kind}[{i}]") for i, c in enumerate(arg))
        return AnyOf(children) if kind == "any" else AllOf(children)
    if kind == "not":
        return Not(_matcher(arg, f"{where}.not"))
    raise ManifestError(f"{where}: unknown matcher {kind!r} (expected {', '.join(_MATCHER_KINDS)})")


# ---------------------------------------------------------------- sections


def _identity(doc: dict[str, Any]) -> Identity:
    if "identity" not in doc:
        raise ManifestError("[identity]: required")
    table = _table(doc["identity"], "[identity]")
    _keys(table, "[identity]", ("process_names", "title_patterns"))
    if "process_names" not in table:
        raise ManifestError("[identity].process_names: required")
    names = _str_list(table["process_names"], "[identity].process_names")
    if not names or not all(names):
        raise ManifestError("[identity].process_names: needs at least one non-empty name")
    patterns = _str_list(table.get("title_patterns", []), "[identity].title_patterns")
    compiled = tuple(
        _compile(p, f"[identity].title_patterns[{i}]") for i, p in enumerate(patterns)
    )
    return Identity(names, compiled)


def _hooks(doc: dict[str, Any]) -> tuple[bool, tuple[str, ...], tuple[HookMapping, ...]]:
    if "hooks" not in doc:
        return False, (), ()
    table = _table(doc["hooks"], "[hooks]")
    _keys(table, "[hooks]", ("covers", "map", "reply_lane"))
    covers = _str_list(table.get("covers", []), "[hooks].covers")
    for c in covers:
        if c not in COVERS:
            raise ManifestError(f"[hooks].covers: {c!r} is not one of {', '.join(COVERS)}")
    out = []
    for i, where, entry in _array_tables(table.get("map", []), "hooks.map"):
        _keys(entry, where, ("event", "matcher", "claim", "turn_end"))
        event = entry.get("event")
        if not isinstance(event, str) or not event:
            raise ManifestError(f"{where}.event: required non-empty string")
        matcher = entry.get("matcher")
        compiled = _compile(matcher, f"{where}.matcher") if matcher is not None else None
        if "claim" not in entry:
            raise ManifestError(f"{where}.claim: required")
        claim = _table(entry["claim"], f"{where}.claim")
        turn_end = entry.get("turn_end", False)
        if not isinstance(turn_end, bool):
            raise ManifestError(f"{where}.turn_end: must be true or false")
        if "lifecycle" in claim:
            _keys(claim, f"{where}.claim", ("lifecycle",))
            if claim["lifecycle"] not in (states.LIFECYCLE_START, states.LIFECYCLE_END):
                raise ManifestError(f"{where}.claim.lifecycle: must be \"start\" or \"end\"")
            out.append(HookMapping(i, event, matcher, compiled, lifecycle=claim["lifecycle"],
                                   turn_end=turn_end))
            continue
        _keys(claim, f"{where}.claim", ("state", "detail"))
        if "state" not in claim:
            raise ManifestError(f"{where}.claim: needs state = … or lifecycle = …")
        state = _state(claim["state"], f"{where}.claim.state")
        detail = _token(claim["detail"], f"{where}.claim.detail") if "detail" in claim else ""
        out.append(HookMapping(i, event, matcher, compiled, state=state, detail=detail,
                               turn_end=turn_end))
    return True, covers, tuple(out)


def _reply_lane(doc: dict[str, Any], hooks: tuple[HookMapping, ...]) -> str:
    """`[hooks] reply_lane`: a mapped event whose hook the agent waits on for a verdict."""
    lane = doc.get("hooks", {}).get("reply_lane", "") if isinstance(doc.get("hooks"), dict) \
        else ""
    if lane == "":
        return ""
    if not isinstance(lane, str) or not any(h.event == lane for h in hooks):
        raise ManifestError("[hooks].reply_lane: must name an event of [[hooks.map]]")
    return lane


def _capture(doc: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """([capture].visible, [capture].decisive)."""
    if "capture" not in doc:
        raise ManifestError("[capture]: required (it may be empty)")
    table = _table(doc["capture"], "[capture]")
    _keys(table, "[capture]", ("visible", "decisive"))
    visible = _str_list(table.get("visible", []), "[capture].visible")
    for v in visible:
        _state(v, "[capture].visible")
    decisive = _str_list(table.get("decisive", []), "[capture].decisive")
    for v in decisive:
        _state(v, "[capture].decisive")
        if v not in visible:
            raise ManifestError(f"[capture].decisive: {v!r} must be in [capture].visible too")
    return visible, decisive


def _rules(doc: dict[str, Any]) -> tuple[Rule, ...]:
    out = []
    for i, where, entry in _array_tables(doc.get("rules", []), "rules"):
        _keys(entry, where, ("state", "detail", "priority", "region", "match", "skip_state_update"))
        for req in ("state", "region", "match"):
            if req not in entry:
                raise ManifestError(f"{where}.{req}: required")
        state = _state(entry["state"], f"{where}.state")
        region = _region(entry["region"], f"{where}.region")
        if region.kind == "title" and state == states.BLOCKED:
            raise ManifestError(
                f"{where}: a blocked rule may not read the title region "
                "(blocked must come from the dialog on screen, never from the title)"
            )
        detail = _token(entry["detail"], f"{where}.detail") if "detail" in entry else ""
        priority = entry.get("priority", 0)
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise ManifestError(f"{where}.priority: must be an integer")
        skip = entry.get("skip_state_update", False)
        if not isinstance(skip, bool):
            raise ManifestError(f"{where}.skip_state_update: must be true or false")
        match = _matcher(entry["match"], f"{where}.match")
        out.append(Rule(i, state, region, match, detail, priority, skip))
    return tuple(out)


def _details(doc: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    table = _table(doc.get("details", {}), "[details]")
    out: dict[str, tuple[str, ...]] = {}
    for key, value in table.items():
        where = f"[details].{key}"
        _token(key, where)
        if key in states.STATES:
            raise ManifestError(f"{where}: a detail may not be named like a state")
        value = _table(value, where)
        _keys(value, where, ("aliases",))
        aliases = _str_list(value.get("aliases", []), f"{where}.aliases")
        for a in aliases:
            _token(a, f"{where}.aliases")
        out[key] = aliases
    return out


def _telemetry(doc: dict[str, Any]) -> ContextTelemetry | None:
    if "telemetry" not in doc:
        return None
    table = _table(doc["telemetry"], "[telemetry]")
    _keys(table, "[telemetry]", ("context",))
    if "context" not in table:
        return None
    ctx = _table(table["context"], "[telemetry.context]")
    _keys(ctx, "[telemetry.context]", ("channel", "format"))
    channel = ctx.get("channel")
    if channel not in CHANNELS:
        raise ManifestError(
            f"[telemetry.context].channel: {channel!r} is not one of {', '.join(CHANNELS)}"
        )
    fmt = ctx.get("format")
    if not isinstance(fmt, str) or not fmt:
        raise ManifestError("[telemetry.context].format: required string")
    # An unknown format is accepted here and refused by the intake at read time.
    return ContextTelemetry(channel, fmt)


_DIALOG_KEYS = ("anchor", "option", "above", "below", "within", "strip", "targets", "kinds", "aliases")
_TARGET_KEYS = ("header", "tool", "key", "start", "until", "item", "drop_last", "on")


def _count(table: dict[str, Any], key: str, default: int, where: str) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 200:
        raise ManifestError(f"{where}.{key}: must be an integer from 0 to 200")
    return value


def _optional_regex(table: dict[str, Any], key: str, where: str) -> re.Pattern[str] | None:
    return _compile(table[key], f"{where}.{key}") if key in table else None


def _dialog_target(i: int, twhere: str, entry: dict[str, Any]) -> DialogTarget:
    _keys(entry, twhere, _TARGET_KEYS)
    if "header" not in entry:
        raise ManifestError(f"{twhere}.header: required")
    header = _compile(entry["header"], f"{twhere}.header")
    tool = entry.get("tool", "")
    if not isinstance(tool, str):
        raise ManifestError(f"{twhere}.tool: must be a string")
    if not tool and "tool" not in _groups(header):
        raise ManifestError(f"{twhere}: needs tool = \"...\" or a (?P<tool>...) group "
                            "in header")
    key = entry.get("key", "command")
    if not isinstance(key, str) or not key:
        raise ManifestError(f"{twhere}.key: must be a non-empty string")
    item = _optional_regex(entry, "item", twhere)
    if item is not None and "text" not in _groups(item):
        raise ManifestError(f"{twhere}.item: needs a (?P<text>...) group")
    drop_last = entry.get("drop_last", False)
    if not isinstance(drop_last, bool):
        raise ManifestError(f"{twhere}.drop_last: must be true or false")
    return DialogTarget(i, header, tool, key, _optional_regex(entry, "start", twhere),
                        _optional_regex(entry, "until", twhere), item, drop_last,
                        _optional_regex(entry, "on", twhere))


def _dialog(doc: dict[str, Any]) -> DialogRules | None:
    """`[dialog]`, the screen reading of a permission dialog. Every regex is validated
    here (compiled, unless known to compile: `Regexes`), so a broken one fails the
    manifest at load (and a user manifest is skipped with one
    line naming the field) instead of failing a card later."""
    if "dialog" not in doc:
        return None
    where = "[dialog]"
    table = _table(doc["dialog"], where)
    _keys(table, where, _DIALOG_KEYS)
    for req in ("anchor", "option"):
        if req not in table:
            raise ManifestError(f"{where}.{req}: required")
    anchor = _compile(table["anchor"], f"{where}.anchor")
    option = _compile(table["option"], f"{where}.option")
    if "name" not in _groups(option):
        raise ManifestError(f"{where}.option: needs a (?P<name>...) group, the option's line")
    targets = tuple(_dialog_target(i, w, e) for i, w, e in
                    _array_tables(table.get("targets", []), "dialog.targets"))
    kinds = []
    for _i, kwhere, entry in _array_tables(table.get("kinds", []), "dialog.kinds"):
        _keys(entry, kwhere, ("kind", "match"))
        kind = entry.get("kind")
        if not isinstance(kind, str) or not states.is_safe_token(kind):
            raise ManifestError(f"{kwhere}.kind: {kind!r} is not a safe token "
                                "(allow-once, allow-always, reject-once, reject-always, ...)")
        if "match" not in entry:
            raise ManifestError(f"{kwhere}.match: required")
        kinds.append(OptionKind(kind, _compile(entry["match"], f"{kwhere}.match")))
    aliases = _table(table.get("aliases", {}), f"{where}.aliases")
    for name, canonical in aliases.items():
        if not isinstance(canonical, str) or not canonical:
            raise ManifestError(f"{where}.aliases.{name}: must be a non-empty string")
    return DialogRules(
        anchor=anchor,
        option=option,
        above=_count(table, "above", 40, where),
        below=_count(table, "below", 16, where),
        within=_count(table, "within", 0, where),
        strip=_optional_regex(table, "strip", where),
        targets=targets,
        kinds=tuple(kinds),
        aliases=tuple(aliases.items()),
    )


TOP_LEVEL = ("min_engine_version", "identity", "hooks", "capture", "rules", "details",
             "telemetry", "dialog")


def _no_keys_table(doc: dict[str, Any]) -> None:
    """Key sequences live in the action manifests, one place for every agent."""
    if "keys" in doc:
        raise ManifestError("[keys]: key sequences moved to the action manifests "
                            "([keys].<agent> in tma/actions/<action>.toml); see "
                            "docs/reference/action-schema.md")


def from_dict(name: str, doc: dict[str, Any], engine: str = ENGINE_VERSION,
              regexes: Regexes | None = None) -> Manifest:
    """Validate a decoded manifest table. Raises ManifestError naming the field.
    `regexes`: the patterns known to compile (their compile is left to first use), and
    where the patterns this load meets are noted; None compiles every one now."""
    global _REGEXES
    if regexes is None:
        return _from_dict(name, doc, engine)
    _REGEXES = regexes
    try:
        return _from_dict(name, doc, engine)
    finally:
        _REGEXES = None


def _from_dict(name: str, doc: dict[str, Any], engine: str) -> Manifest:
    check_engine(doc, engine)
    _no_keys_table(doc)
    _keys(doc, "manifest", TOP_LEVEL)
    identity = _identity(doc)
    hook_capable, covers, hooks = _hooks(doc)
    visible, decisive = _capture(doc)
    return Manifest(
        name=name,
        min_engine_version=doc["min_engine_version"],
        identity=identity,
        hook_capable=hook_capable,
        covers=covers,
        hooks=hooks,
        visible=visible,
        rules=_rules(doc),
        details=_details(doc),
        context=_telemetry(doc),
        reply_lane=_reply_lane(doc, hooks),
        dialog=_dialog(doc),
        decisive=decisive,
    )


def loads(name: str, text: str, engine: str = ENGINE_VERSION) -> Manifest:
    """Parse TOML text into a Manifest (the gate runs before the strict parse)."""
    return from_dict(name, toml_doc(text), engine)


def toml_doc(text: str, error: type[ManifestError] = ManifestError) -> dict[str, Any]:
    """The document TOML `text` decodes to; a decoding error is raised as `error` (a
    manifest's, or an action's)."""
    import tomllib  # lazy: the bundled set ships decoded and user documents are cached

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"TOML: {exc}") from None


def long_process_names(manifest: Manifest) -> list[str]:
    """Entries longer than the 15-char comm width with no truncated twin beside them."""
    names = manifest.identity.process_names
    return [
        n for n in names if len(n) > COMM_WIDTH and n[:COMM_WIDTH] not in names
    ]
