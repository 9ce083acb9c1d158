"""An agent's hook table in plain data: what `tma event` needs from a manifest.

Built once from a validated Manifest (`Manifest.hook_table`: the manifest knows this
module, never the reverse) and cached (marshal) by the runtime, so a hook
firing never parses TOML and never imports the manifest schema; a matcher regex is
compiled only when the firing event has one.
"""

from __future__ import annotations

from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # at run time neither: a hook firing never loads the manifest schema
    import re
    from collections.abc import Callable, Iterable
    from typing import Any, Protocol, TypeVar


    class _Entry(Protocol):
        @property
        def event(self) -> str: ...

    E = TypeVar("E", bound=_Entry)


def first_for_event(entries: Iterable[E], event: str,
                    matches: Callable[[E], bool | None]) -> E | None:
    """The first entry for `event` whose matcher matches, else the first one for it with no
    matcher (`matches` answers None for that): a manifest and its hook table map alike."""
    fallback = None
    for entry in entries:
        if entry.event != event:
            continue
        hit = matches(entry)
        if hit:
            return entry
        if hit is None and fallback is None:
            fallback = entry
    return fallback


def normalize_detail(details: dict[str, tuple[str, ...]], token: str) -> str:
    """The canonical detail token an alias spelling stands for (`token` when none)."""
    for canonical, aliases in details.items():
        if token == canonical or token in aliases:
            return canonical
    return token


class Hook(Record):
    index: int = 0
    event: str = ""
    matcher: str | None = None
    state: str = ""
    detail: str = ""
    lifecycle: str = ""
    turn_end: bool = False


class HookTable:
    """One agent's [[hooks.map]], [details] aliases, identity names, context format and
    reply lane."""

    def __init__(self, name: str, hooks: tuple[Hook | tuple[Any, ...], ...],
                 details: dict[str, tuple[str, ...]], process_names: tuple[str, ...],
                 context_format: str | None = None, hook_capable: bool = True,
                 reply_lane: str = "") -> None:
        self.name = name
        self.hooks = tuple(h if isinstance(h, Hook) else Hook(*h) for h in hooks)
        self.details = details
        self.process_names = tuple(process_names)
        self.context_format = context_format
        self.hook_capable = hook_capable
        self.reply_lane = reply_lane
        self._compiled: dict[int, re.Pattern[str]] = {}

    def to_data(self) -> tuple[Any, ...]:
        """A marshal-able form (tuples, dicts, str, int, bool, None)."""
        return (self.name, tuple(h._values() for h in self.hooks), self.details,
                self.process_names, self.context_format, self.hook_capable, self.reply_lane)

    @classmethod
    def from_data(cls, data: tuple[Any, ...]) -> HookTable:
        return cls(*data)

    def holds_reply(self, kind: str) -> bool:
        """Does this hook kind hold for a verdict (the manifest's `[hooks] reply_lane`)?
        The hook intake holds it and the daemon never takes it on."""
        return bool(self.reply_lane) and kind == self.reply_lane

    def _matches(self, hook: Hook, matcher: str, payload: str) -> bool:
        pattern = self._compiled.get(hook.index)
        if pattern is None:
            import re  # only a firing event that has a matcher pays for the regex engine

            pattern = self._compiled[hook.index] = re.compile(matcher)
        return pattern.search(payload) is not None

    def map_event(self, event: str, payload: str) -> Hook | None:
        """First entry for the event whose matcher matches; else first matcher-less one."""
        return first_for_event(self.hooks, event, lambda h: None if h.matcher is None
                               else self._matches(h, h.matcher, payload))

    def normalize_detail(self, token: str) -> str:
        return normalize_detail(self.details, token)
