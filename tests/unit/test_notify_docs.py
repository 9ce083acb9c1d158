"""Every config the notifications how-to offers to copy loads as tma's loader reads it.

Each ```toml block of docs/how-to/notifications.md is validated as it stands, and once
more per commented-out `# key = value` line with that line switched on (replacing the
key's live line, where there is one): an alternative shown in a comment is copied too.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tma.runtime import config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "notifications.md"
BLOCKS = re.findall(r"```toml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
KEYLINE = re.compile(r"^#\s*([A-Za-z_]+)\s*=\s*(.+)$")


def _variants(block: str) -> list[str]:
    """The block, and the block with each commented-out key line switched on."""
    lines = block.splitlines()
    out = [block]
    for i, line in enumerate(lines):
        m = KEYLINE.match(line.strip())
        if not m:
            continue
        key = m.group(1)
        # the live line of the same key in the same table goes; the comment's value
        # (without a trailing comment of its own) takes its place
        start = max((j for j in range(i) if lines[j].startswith("[")), default=-1)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("[")),
                   len(lines))
        body = [ln for j, ln in enumerate(lines[start + 1:end], start + 1)
                if j == i or not re.match(rf"\s*{key}\s*=", ln)]
        on = f"{key} = {m.group(2)}"
        new = lines[:start + 1] + [on if ln == line else ln for ln in body] + lines[end:]
        out.append("\n".join(new))
    return out


def test_the_page_has_configs():
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("n", range(len(BLOCKS)))
def test_every_config_on_the_page_loads(n):
    for text in _variants(BLOCKS[n]):
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            pytest.fail(f"block {n} is not TOML ({exc}):\n{text}")
        try:
            config.validate(str(PAGE), doc)
        except config.ConfigError as exc:
            pytest.fail(f"block {n} is refused: {exc}\n{text}")


def test_a_wrong_key_is_caught():
    with pytest.raises(config.ConfigError):
        config.validate("x", tomllib.loads("[notify.webhook]\nurl = \"http://h/\"\nsecrt = 1\n"))
