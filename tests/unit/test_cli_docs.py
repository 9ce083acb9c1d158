"""The CLI reference cannot fall behind the commands and flags the code has.

* every public command in `tma.cli.main.COMMANDS` has a `## \\`tma <cmd>\\`` section
  in docs/reference/cli.md, and every `tma debug` subcommand is named there;
* every long flag a command parses is on the page. Flags are read from the source:
  the string literals passed to `add_argument`, the literals a hand-rolled parser
  compares arguments against (`name == "--format"`, `arg in ("-h", "--help")`), and
  module-level flag tables (`FLAGS = (...)`, `_VALUED = {...}`).

completions.py is left out: its literals are completion data, not a parser.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tma.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "cli.md"
CLI = ROOT / "src" / "tma" / "cli"
SOURCES = sorted(p for p in CLI.glob("*.py") if p.name != "completions.py") + [
    ROOT / "src" / "tma" / "runtime" / "selectors.py"]
INTERNAL = {"event", "clear-attention"}
FLAG = re.compile(r"--[a-z][a-z-]+")


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def parsed_flags(path: Path) -> set[str]:
    """The long flags one module's parser accepts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "add_argument":
            for arg in node.args:
                found |= _strings(arg)
        elif isinstance(node, ast.Compare):
            for comp in node.comparators:
                found |= _strings(comp)
    for node in tree.body:  # module-level tables: FLAGS = (...), _VALUED = {...}
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
                node.value, ast.Tuple | ast.List | ast.Set | ast.Dict):
            found |= _strings(node.value)
    return {s for s in found if FLAG.fullmatch(s)}


def subcommands(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_parser" and node.args
            and isinstance(node.args[0], ast.Constant)}


def _on_page(page: str, flag: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", page) is not None


def test_every_public_command_has_a_section(page):
    missing = [cmd for cmd in COMMANDS if cmd not in INTERNAL
               and not re.search(rf"^##+ `tma {re.escape(cmd)}(?![\w-])", page, re.M)]
    assert not missing, f"commands without a section in {PAGE.name}: {missing}"


def test_every_subcommand_is_named(page):
    missing = [f"tma {cmd} {sub}" for cmd, module in COMMANDS.items()
               if (CLI / f"{module}.py").exists()
               for sub in sorted(subcommands(CLI / f"{module}.py"))
               if f"tma {cmd} {sub}" not in page]
    assert not missing, f"subcommands missing from {PAGE.name}: {missing}"


def test_every_parsed_flag_is_documented(page):
    missing = sorted({f"{path.name}: {flag}" for path in SOURCES
                      for flag in parsed_flags(path) if not _on_page(page, flag)})
    assert not missing, f"flags missing from {PAGE.name}: {missing}"


def test_the_scan_sees_known_flags():
    # guards the scanner itself: one flag from each kind of parser
    assert "--json" in parsed_flags(CLI / "ls.py")  # argparse
    assert "--format" in parsed_flags(CLI / "status.py")  # hand-rolled comparison
    assert "--debug-timing" in parsed_flags(CLI / "common.py")  # hand-rolled comparison
    assert "--socket-path" in parsed_flags(CLI / "common.py")  # module-level table
    assert "--state" in parsed_flags(ROOT / "src" / "tma" / "runtime" / "selectors.py")
    assert {"explain", "capture", "stamp"} <= subcommands(CLI / "debug.py")
