"""The hook installers, one adapter per agent behind one Protocol.

Each `tma.install.<agent>` module is an adapter: it names its agent, declares the
files it edits (`FILES`: each with its command-line flag, environment variable and
default path, resolved here against tma.core.paths), whether it carries the
statusline shim, and reads (`status`) and plans (`plan`) its own edit. Nothing
outside an adapter knows an agent's file layout; the orchestration
(tma.install.wiring) only walks this registry.
"""

from __future__ import annotations

from tma.install.common import FileOption as FileOption  # re-exported: the adapters' file type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Protocol

    from tma.core.paths import Paths
    from tma.install.common import Ctx, Plan, Status

    class Adapter(Protocol):
        """What a tma.install.<agent> module provides."""

        AGENT: str
        FILES: tuple[FileOption, ...]
        STATUSLINE: bool  # carries the statusline shim (shares the recorded opt-outs)

        def status(self, ctx: Ctx, manifest) -> Status: ...

        def plan(self, ctx: Ctx, manifest, uninstall: bool) -> Plan: ...

#: Every agent with a hook installer, in the order they are wired and reported.
AGENTS = ("claude", "codex", "gemini", "cursor", "opencode", "pi", "copilot", "qwen", "aider")


_ADAPTERS: dict[str, object] = {}


def _adapters() -> dict[str, object]:
    """name -> adapter module, imported on first use (a command that installs nothing
    never loads the adapters)."""
    if not _ADAPTERS:
        from tma.install import aider, claude, codex, copilot, cursor, gemini, opencode, pi, qwen

        _ADAPTERS.update(claude=claude, codex=codex, gemini=gemini, cursor=cursor,
                         opencode=opencode, pi=pi, copilot=copilot, qwen=qwen, aider=aider)
    return _ADAPTERS


def adapter(name: str) -> Adapter:
    """The adapter of one agent (KeyError for an agent without an installer)."""
    return _adapters()[name]  # type: ignore[return-value]


def file_options() -> tuple[FileOption, ...]:
    """Every adapter's files, in agent order (the flags install-hooks and uninstall take)."""
    return tuple(f for name in AGENTS for f in adapter(name).FILES)


def statusline_agents() -> tuple[str, ...]:
    return tuple(name for name in AGENTS if adapter(name).STATUSLINE)


def resolve_files(paths: Paths, explicit: Mapping[str, str | None]) -> dict[str, str]:
    """key -> absolute path of every adapter file; explicit: key -> a flag's value."""
    return {f.key: f.resolve(paths, explicit.get(f.key)) for f in file_options()}
