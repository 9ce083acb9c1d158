"""The one declaration of the CLI (tma.cli.spec) and everything that must agree with it.

* docs/reference/cli.md has a section per public command, names every public
  subcommand, documents every declared flag in its command's section, and documents
  no flag a command does not have;
* every `--help` lists all of the command's flags, each with a sentence, and its exit
  statuses; the man page is the one the declarations render;
* the hand parsers of the hot paths (global options in tma.cli.common, selectors,
  `tma status`, `tma event`) accept exactly the declared flags;
* no cli module builds a parser of its own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tma.cli import common, main, spec
from tma.ui import manpage

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "cli.md"
MAN = ROOT / "docs" / "man" / "tma.1"
CLI = ROOT / "src" / "tma" / "cli"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
PUBLIC = [c for c in spec.public() if c.name != "help"]


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def section(page: str, title: str, level: str = "##") -> str:
    """The text under the heading `<level> \\`<title>\\``, to the next heading of that level."""
    m = re.search(rf"^{level} `{re.escape(title)}`[^\n]*\n", page, re.M)
    assert m, f"no section {title!r} in {PAGE.name}"
    end = re.search(rf"^#{{1,{len(level)}}} ", page[m.end():], re.M)
    return page[m.end():m.end() + end.start()] if end else page[m.end():]


def _named(text: str, flag: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def test_every_public_command_has_a_section(page):
    for cmd in PUBLIC:
        section(page, f"tma {cmd.name}")
    for cmd in spec.COMMANDS.values():
        for sub in cmd.subcommands:
            assert f"tma {cmd.name} {sub.name}" in page


@pytest.mark.parametrize("cmd", [c.name for c in spec.COMMANDS.values()])
def test_every_declared_flag_is_documented_in_its_section(page, cmd):
    c = spec.COMMANDS[cmd]
    text = section(page, f"tma {cmd}", "###" if c.internal else "##")
    for flag in c.flags:
        assert _named(text, flag.long), f"tma {cmd}: {flag.long} not in its section"
    for sub in c.subcommands:
        sub_text = section(page, f"tma {cmd} {sub.name}", "###")
        for flag in sub.flags:
            assert _named(sub_text, flag.long), f"tma {cmd} {sub.name}: {flag.long}"


def test_globals_and_selectors_are_documented(page):
    glob = page[page.index("## Global options"):page.index("## Selectors")]
    sel = page[page.index("## Selectors"):page.index("## Environment variables")]
    assert all(_named(glob, f.long) for f in spec.GLOBALS)
    assert all(_named(sel, f.long) for f in spec.SELECTOR)


@pytest.mark.parametrize("cmd", [c.name for c in PUBLIC])
def test_flag_tables_document_no_flag_the_command_lacks(page, cmd):
    c = spec.COMMANDS[cmd]
    known = {n for f in c.all_flags() for n in f.names}
    known |= {n for s in c.subcommands for f in s.flags for n in f.names}
    text = section(page, f"tma {cmd}")
    rows = [line for line in text.splitlines() if re.match(r"^\| `-", line)]
    strays = sorted({f for line in rows for f in FLAG.findall(line.split("|")[1])} - known)
    assert strays == [], f"tma {cmd}: flag table names undeclared flags {strays}"


@pytest.mark.parametrize("cmd", list(spec.COMMANDS))
def test_help_lists_every_flag_with_a_sentence_and_the_exit_statuses(cmd):
    c = spec.COMMANDS[cmd]
    for sub in (None,) + tuple(s.name for s in c.subcommands):
        target = c.sub(sub) if sub else c
        text = spec.help_text(cmd, sub)
        flat = " ".join(text.split())
        for flag in target.all_flags():
            assert flag.synopsis() in text, (cmd, sub, flag.long)
            assert flag.help.endswith((".", ")")) and " ".join(flag.help.split()) in flat
        assert "exit status:" in text and "docs:" in text
        for code, meaning in target.exits:
            assert re.search(rf"^  {code} ", text, re.M) and " ".join(meaning.split()) in flat


def test_the_man_page_is_generated_from_the_declarations():
    assert MAN.read_text(encoding="utf-8") == manpage.render(spec.TABLE), \
        "docs/man/tma.1 is stale: run python tools/gen_man.py"


def _every_command():
    for cmd in spec.COMMANDS.values():
        yield cmd
        yield from cmd.subcommands


def test_every_command_that_takes_a_pane_declares_exit_3():
    """One rule for pane ids: a pane that does not exist is exit 3 (common.NoPane at the
    boundary), so every public command taking a pane id says so in its help."""
    takes = [c for c in _every_command() if not c.internal
             and any(getattr(o, "type", None) in ("pane", "target") for o in c.flags + c.args)]
    assert len(takes) >= 6, [c.name for c in takes]
    missing = [c.name for c in takes if 3 not in [code for code, _ in c.exits]]
    assert not missing, missing


def test_the_docs_line_of_every_help_names_what_exists():
    """Every help ends with where the docs are: files of this tree, and no `man tma`
    while no install puts the page on MANPATH (the wheel ships no man page)."""
    paths = re.findall(r"docs/[\w./-]+\w", spec.DOCS)
    assert paths and all((ROOT / p).is_file() for p in paths), paths
    shipped = "share/man" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert shipped or "man tma" not in spec.DOCS, spec.DOCS
    assert f"docs: {spec.DOCS}" in spec.top_help()


def test_hand_parsers_accept_exactly_the_declared_flags():
    declared = {n for f in spec.GLOBALS for n in f.names}
    assert set(common._VALUED) | {"--debug-timing"} == declared
    assert set(main._VALUED) == set(common._VALUED)
    from tma.runtime import selectors

    assert selectors.FLAGS == tuple(f.long for f in spec.SELECTOR)
    from tma.cli import status

    fmt = next(f for f in spec.COMMANDS["status"].flags if f.long == "--format")
    assert status.FORMATS == fmt.choices == spec.FORMATS
    assert {f.long for f in spec.COMMANDS["status"].flags} == {"--format"}
    # event's own reader takes its declared flags and the valued globals
    from tma.cli import event

    argv = []
    for f in spec.COMMANDS["event"].flags:
        argv += [f.long, f"v-{f.long}"]
    got = event._args(argv)
    assert got == {f.long[2:]: f"v-{f.long}" for f in spec.COMMANDS["event"].flags}


def test_hot_dispatch_agrees_with_the_table():
    for name, module in main.HOT.items():
        assert spec.COMMANDS[name].module == module
    for cmd in spec.COMMANDS.values():
        if cmd.name == "help":
            continue
        if "." in cmd.module:  # a module outside tma.cli (tma daemon's): it exists there
            assert (ROOT / "src" / (cmd.module.replace(".", "/") + ".py")).exists(), cmd.name
        else:
            assert (CLI / f"{cmd.module}.py").exists(), cmd.name


def test_no_cli_module_builds_its_own_parser():
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "spec.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("add_argument",
                                                                 "ArgumentParser"):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == [], f"parsers built outside tma.cli.spec: {offenders}"


def test_demo_default_is_the_declared_one():
    from tma.runtime import demo

    seconds = next(f for f in spec.COMMANDS["demo"].flags if f.long == "--seconds")
    assert seconds.default == demo.SCRIPT_SECONDS
