"""Test modules share code through one package, tests/helpers, never through each other.

A test that imports another test module (or a conftest) drags that module's fixtures and
collection side effects along and breaks when it moves; pytest's rootdir sys.path entries
make such an import work by accident. So every import under tests/ that names something
of the test tree must name tests.helpers, and the helpers themselves import no test module.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
HELPERS = TESTS / "helpers"


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def _local_names() -> set[str]:
    """Every name a test-tree module outside tests/helpers is importable by, through the
    directories pytest puts on sys.path (tests/, tests/integration, tests/live, ...)."""
    return {p.stem for p in _sources() if HELPERS not in p.parents} | {"helpers"}


def _imports(path: Path) -> list[tuple[int, str, int]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.lineno, node.module or "", node.level))
    return out


def _bad(path: Path, local: set[str]) -> list[str]:
    rel = path.relative_to(TESTS.parent) if TESTS in path.parents else path
    bad = []
    for line, name, level in _imports(path):
        top = name.split(".")[0]
        if level:
            if HELPERS not in path.parents:  # inside the package, relative imports are fine
                bad.append(f"{rel}:{line}: relative import from {'.' * level}{name}")
        elif top == "tests" and not (name == "tests.helpers" or name.startswith("tests.helpers.")):
            bad.append(f"{rel}:{line}: imports {name}")
        elif top in local or top == "conftest":
            bad.append(f"{rel}:{line}: imports the test-tree module {name}")
    return bad


def test_no_test_module_imports_another_test_module():
    local = _local_names()
    bad = [b for p in _sources() for b in _bad(p, local)]
    assert bad == [], "import shared test code from tests.helpers only:\n" + "\n".join(bad)


def test_the_helpers_are_a_package():
    assert (HELPERS / "__init__.py").is_file()
    for d in {p.parent for p in HELPERS.rglob("*.py")}:
        assert (d / "__init__.py").is_file(), f"{d} is not a package"


def test_the_helpers_are_not_collected_as_tests():
    named_like_tests = [p.name for p in HELPERS.rglob("test_*.py")]
    assert named_like_tests == []


def test_the_check_sees_a_test_module_import(tmp_path):
    """The rule itself: a conftest, a sibling test module, another test package's module
    and a relative import are caught; tma and tests.helpers are not."""
    probe = tmp_path / "p.py"
    probe.write_text("from conftest import X\nimport test_daemon\nfrom tests.integration import y\n"
                     "from . import z\nimport tma.cli\nfrom tests.helpers import tmux_sockets\n"
                     "from tests.helpers.live.harness import Scenario\nimport ptyclient\n")
    found = _bad(probe, _local_names() | {"ptyclient"})
    assert [f.split(":")[1] for f in found] == ["1", "2", "3", "4", "8"], found


def test_no_two_test_modules_share_a_basename():
    """pytest imports a test file outside a package by its basename (rootdir-relative
    sys.path entries), so a second tests/*/test_x.py stops the whole run's collection:
    caught here, where running tests/arch alone still sees the whole tree."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in _sources():
        if HELPERS in path.parents or not path.name.startswith("test_"):
            continue
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(TESTS)} and {path.relative_to(TESTS)}")
        seen.setdefault(path.name, path)
    assert not clashes, "test modules with the same basename: " + "; ".join(clashes)
