"""The docs' "not in this release" statements stay true against the command table.

* A command that docs/ or the README says is not shipped (named ahead of "not in this
  release" or "not commands yet" in one sentence, table row or list item, or anything
  under a "Not in this release" heading) must not be a command tma has. Shipping it
  means updating the docs.
* Every command tma has is named (as `tma <cmd>`) in docs/reference/cli.md.

`shipped_commands()` is the one place that knows where the command names live; point it
at the CLI's declaration if that moves.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
UNRELEASED = re.compile(r"not in this release|not (?:a )?commands? yet", re.I)
HEADING = re.compile(r"^(#+)\s+(.*)$")
COMMAND = re.compile(r"`tma ([a-z][a-z-]*)")


def shipped_commands() -> set[str]:
    """Every command name the CLI dispatches."""
    from tma.cli.spec import COMMANDS

    return set(COMMANDS)


def _statements(block: str) -> list[str]:
    """A block's statements: each table row or list item, else each sentence or clause."""
    lines = block.strip().splitlines()
    if lines and all(line.lstrip().startswith("|") for line in lines):
        return lines
    items = re.split(r"\n(?=\s*(?:[-*]|\d+\.)\s)", block.strip())
    return [clause for item in items
            for clause in re.split(r"(?<=[.:;!?])\s+(?=[A-Z`(])", " ".join(item.split()))]


def unreleased_mentions(text: str) -> list[tuple[str, str]]:
    """(command, statement) for every command a page says is not shipped: anything under a
    "Not in this release" heading, and elsewhere a command named before the phrase in the
    statement that says it ("`tma watch` (not in this release)"), not one after it
    ("... is not in this release, and `tma act` refuses it")."""
    found: list[tuple[str, str]] = []
    section_level = 0  # > 0 while inside a "Not in this release" section
    for block in re.split(r"\n\s*\n", text):
        head = HEADING.match(block.strip())
        if head:
            level = len(head.group(1))
            if section_level and level <= section_level:
                section_level = 0
            if UNRELEASED.search(head.group(2)):
                section_level = level
            continue
        if section_level:
            found += [(cmd, block.strip()) for cmd in COMMAND.findall(block)]
            continue
        for statement in _statements(block):
            said = UNRELEASED.search(statement)
            if said:
                found += [(cmd, statement) for cmd in COMMAND.findall(statement[:said.start()])]
    return found


def test_no_shipped_command_is_listed_as_not_in_this_release():
    shipped = shipped_commands()
    wrong = [f"{page.relative_to(ROOT)}: `tma {cmd}` in: {statement[:160]}"
             for page in PAGES
             for cmd, statement in unreleased_mentions(page.read_text(encoding="utf-8"))
             if cmd in shipped]
    assert not wrong, "shipped commands described as not in this release:\n" + "\n".join(wrong)


def test_every_shipped_command_is_on_the_cli_page():
    page = CLI_PAGE.read_text(encoding="utf-8")
    missing = sorted(cmd for cmd in shipped_commands()
                     if not re.search(rf"`tma {re.escape(cmd)}(?![\w-])", page))
    assert not missing, f"commands not named in {CLI_PAGE.name}: {missing}"


def test_the_scan_reads_the_lists_there_are():
    """Guards the scanner: the CLI page's own list, and a sentence in running text."""
    on_cli_page = {cmd for cmd, _ in unreleased_mentions(CLI_PAGE.read_text(encoding="utf-8"))}
    page = CLI_PAGE.read_text(encoding="utf-8")
    listed = set(COMMAND.findall(page[page.index("## Not in this release"):]))
    assert listed <= on_cli_page  # every command may have shipped: then the list is empty
    text = ("# Page\n\nThe picker is fine. `tma ls` works; `tma zap` is not in this release.\n"
            "`tma pix` is not in this release, and `tma act` refuses it.\n\n"
            "| `tma a` | yes |\n| `tma b` | not in this release |\n\n"
            "- `tma c` (not in this release)\n- `tma d` ships\n\n"
            "## Not in this release\n\n`tma frob` and `tma blip`.\n\n## Later\n\n`tma ok`.\n")
    assert [cmd for cmd, _ in unreleased_mentions(text)] == ["zap", "pix", "b", "c", "frob",
                                                              "blip"]
