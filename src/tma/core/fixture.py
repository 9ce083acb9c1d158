"""The capture fixture format: `# key: value` header lines, a `---` line, the raw body.

Used by `tma debug capture` (writing), `tma debug explain --capture` (reading) and
the tests. The body is kept byte for byte; it is split off at the first line that
is exactly `---`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tma.core.identity import SHELLS, normalize_comm

SEPARATOR = "---"
REQUIRED = ("agent", "title")


class FixtureError(ValueError):
    pass


@dataclass(frozen=True)
class Capture:
    headers: dict[str, str]
    body: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def agent(self) -> str:
        return self.headers["agent"]

    @property
    def title(self) -> str:
        return self.headers.get("title", "")

    @property
    def command(self) -> str:
        """`#{pane_current_command}` at capture time ("" when not recorded)."""
        return self.headers.get("command", "")

    @property
    def foreground_is_agent(self) -> bool:
        """False when the recorded foreground command is a shell: the agent has quit or
        been killed, and whatever it left on screen is no longer its state. A missing
        command, or a launcher such as `node`, leaves the agent in the foreground."""
        return normalize_comm(self.command).lstrip("-") not in SHELLS

    @property
    def height(self) -> int | None:
        raw = self.headers.get("height", "")
        return int(raw) if raw.isdigit() and int(raw) > 0 else None

    @property
    def captured_at(self) -> int:
        """Epoch ms (older files store seconds; those are scaled)."""
        raw = self.headers.get("captured_at", "")
        if not raw.isdigit():
            return 0
        value = int(raw)
        return value * 1000 if 0 < value < 10**12 else value


def parse(text: str) -> Capture:
    headers: dict[str, str] = {}
    rest = text
    while True:
        line, sep, after = rest.partition("\n")
        if line == SEPARATOR:
            body = after
            break
        if not sep:
            raise FixtureError("no '---' line separates the header from the body")
        if not line.startswith("# ") or ":" not in line:
            raise FixtureError(f"header line is not '# key: value': {line[:60]!r}")
        key, _, value = line[2:].partition(":")
        headers[key.strip()] = value[1:] if value.startswith(" ") else value
        rest = after
    for key in REQUIRED:
        if key not in headers:
            raise FixtureError(f"header {key!r} is missing")
    return Capture(headers, body)


def render(headers: dict[str, str], body: str) -> str:
    lines = [f"# {k}: {v}" for k, v in headers.items()]
    return "\n".join(lines) + "\n" + SEPARATOR + "\n" + body
