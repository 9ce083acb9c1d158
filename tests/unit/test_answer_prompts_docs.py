"""Everything the "answer Claude's prompts" recipe offers to copy works as printed.

docs/how-to/answer-claude-prompts.md: each ```toml block loads through tma's config
loader and means what its comments say; every `tma` command in its tmux bindings and its
script parses as tma's own command line would; the script's `jq` paths are `ls --json`
row keys; the exit statuses and the action keys it quotes are the code's. (The tmux
bindings themselves are sourced into a real server in
tests/integration/test_answer_prompts_bindings.py.)
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from tma.cli import spec
from tma.cli.main import find_command
from tma.core.actions import gate
from tma.runtime import config, waiting
from tma.runtime.act import registry
from tma.ui.rows import ROW_KEYS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "answer-claude-prompts.md"
TEXT = PAGE.read_text(encoding="utf-8")
TOML = re.findall(r"```toml\n(.*?)```", TEXT, re.S)
TMUX = re.findall(r"```tmux\n(.*?)```", TEXT, re.S)
SH = re.findall(r"```sh\n(.*?)```", TEXT, re.S)
PANE = "%3"


def load(block: str) -> config.Config:
    # the block as it stands in a config.toml (indented under a list item on the page)
    text = "\n".join(line.strip() for line in block.splitlines())
    doc = tomllib.loads(text)
    return config._build(str(PAGE), config.validate(str(PAGE), doc))


def test_the_page_has_its_blocks() -> None:
    assert (len(TOML), len(TMUX), len(SH)) == (2, 1, 1)


def test_the_defaults_block_states_the_defaults() -> None:
    """`# the default` is true of every line it is written on."""
    cfg, default = load(TOML[0]), config.Config()
    defaults = [line.split("=")[0].strip() for line in TOML[0].splitlines()
                if "# the default" in line]
    assert defaults == ["claude_reply_lane", "hold_ms"]
    for key in defaults:
        assert getattr(cfg, key) == getattr(default, key), key
    assert (default.claude_reply_lane, default.hold_ms) == (True, 25_000)
    assert "25 seconds by default" in TEXT


def test_the_off_block_turns_the_lane_off() -> None:
    cfg = load(TOML[1])
    assert cfg.claude_reply_lane is False
    assert cfg.hold_ms == config.Config().hold_ms


def parse_tma(line: str) -> tuple[str, object, object]:
    """A `tma ...` command line (shell quoting, variables already given values) parsed
    the way `tma` parses its own argv: (command, its selector, its arguments)."""
    argv = shlex.split(line)
    assert argv[0] == "tma", line
    name, at = find_command(argv[1:])
    assert name in spec.COMMANDS, line
    sel, args = spec.parse(name, argv[1:][at + 1:])
    return name, sel, args


def bound_commands() -> list[tuple[str, str]]:
    """(key, shell command) of every `bind-key K run-shell '...'` the page shows, in the
    tmux block and in running text."""
    found = re.findall(r"bind-key (\S+) run-shell '([^']+)'", TEXT)
    assert len(found) == 3
    return found


def test_every_bound_command_parses() -> None:
    got = {}
    for key, command in bound_commands():
        name, _sel, args = parse_tma(command.replace("#{pane_id}", PANE))
        got[key] = (name, args)
    assert got["Y"][0] == got["N"][0] == "act"
    assert (got["Y"][1].name, got["Y"][1].pane) == ("approve", PANE)
    assert (got["N"][1].name, got["N"][1].pane) == ("deny", PANE)
    assert (got["B"][0], got["B"][1].direction) == ("jump", "blocked")


def script_commands() -> list[str]:
    values = {"$pane": PANE, "$since": "0"}
    out = []
    for m in re.finditer(r"(?:\$\(|^\s*|;\s*)(tma [^)|\n;]+)", SH[0], re.M):
        line = m.group(1)
        for var, value in values.items():
            line = line.replace(f'"{var}"', value)
        out.append(line.strip())
    return out


def test_every_tma_command_in_the_script_parses() -> None:
    commands = script_commands()
    assert len(commands) == 2
    name, sel, args = parse_tma(commands[0])
    assert name == "wait"
    assert (args.pane, args.until, args.since, args.json) == (PANE, "blocked", "0", True)
    waiting.from_args(sel, args)  # its values are accepted too (a bad one raises)
    name, _sel, args = parse_tma(commands[1])
    assert (name, args.name, args.pane) == ("act", "approve", PANE)


def test_the_script_reads_ls_json_row_keys() -> None:
    paths = re.findall(r"jq -r '\.([a-z_]+)", SH[0])
    assert paths == ["episode_ms", "detail", "pending_summary"]
    assert set(paths) <= set(ROW_KEYS)


def test_the_exit_statuses_it_quotes_are_the_code_s() -> None:
    assert "(exit 3 or 4: the pane or\n    # its agent is gone" in SH[0]
    assert waiting.EXIT[waiting.VANISHED] == 3
    assert waiting.EXIT[waiting.DEPARTED] == 4
    assert "exits 4" in TEXT and "(exit 4)" in TEXT
    assert gate.exit_code(gate.REFUSED, "gated") == 4


@pytest.mark.parametrize(("action", "key"), [("approve", "1"), ("deny", "Escape")])
def test_the_claude_keys_it_quotes_are_the_action_manifests(action: str, key: str) -> None:
    assert f"`{key}`" in TEXT
    bundled = registry.load(user=str(PAGE.parent / "no-such-dir"))
    assert bundled.actions[action].keys["claude"] == (key,)
