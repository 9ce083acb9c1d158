"""tma.cli is a shell: parse, the Session, a call into its layer, render.

Pinned here (issue 19), from the source as text, so a regression fails before review:
- no cli module imports another command's module (common, spec and main are the shell
  every command shares; everything else a command needs lives in a layer below);
- the cli modules import one another without a cycle;
- no dynamic import in src/ but the command loader in cli/main.py and the transcript
  store registry (import-linter cannot see through one; the registry names modules of
  tma.core.transcript and tma.runtime.transcript only, which
  tests/unit/test_transcript_locate.py holds it to); reading package data with
  importlib.resources is not an import and stays allowed;
- a Paths is constructed in one place (tma.core.paths.here);
- cli/ stays under 3,500 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tma"
CLI = SRC / "cli"
SHELL = {"common", "spec", "main", "__init__"}
CLI_LINES_MAX = 3625  # 3500 until tma web and tma device, 3600 until aider's --aider-config, 3610 until ls began its pane read before its modules load, 3620 until ls --json loaded its renderer while tmux writes
# (each a declaration in spec, no logic)


def _cli_imports(path: Path) -> set[str]:
    """The tma.cli modules a cli module imports, at any depth of its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "tma.cli":
                found.update(a.name for a in node.names)
            elif node.module.startswith("tma.cli."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tma.cli."):
                    found.add(alias.name.split(".")[2])
    return found


def _graph() -> dict[str, set[str]]:
    return {p.stem: _cli_imports(p) - {p.stem} for p in sorted(CLI.glob("*.py"))}


def test_no_cli_module_imports_another_command_module():
    offenders = sorted(f"{mod} imports tma.cli.{other}"
                       for mod, imports in _graph().items() if mod not in SHELL
                       for other in imports if other not in SHELL)
    offenders += sorted(f"{mod} (shell) imports tma.cli.{other}"
                        for mod, imports in _graph().items() if mod in SHELL - {"main"}
                        for other in imports if other not in SHELL)
    assert offenders == [], "move what they share into a layer below tma.cli:\n" + \
        "\n".join(offenders)


def test_the_cli_modules_import_one_another_without_a_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for mod in graph:
        if mod not in state:
            visit(mod, [mod])
    assert cycles == []


def _calls(tree: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
               for n in ast.walk(tree))


#: The modules that may import by name, and why.
DYNAMIC = {
    "runtime/transcript/stores.py": "the store registry: each agent's store module is "
                                    "imported when its transcript is first asked for, and "
                                    "one not there yet is 'no reader'",
}


def test_no_dynamic_import_outside_the_command_loader():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in DYNAMIC:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(
                    a.name in ("importlib", "importlib.util") for a in node.names):
                offenders.append(f"{rel}:{node.lineno} import importlib")
            elif isinstance(node, ast.ImportFrom) and node.module in ("importlib",
                                                                      "importlib.util"):
                if any(a.name != "resources" for a in node.names):
                    offenders.append(f"{rel}:{node.lineno} from importlib import …")
        if rel != "cli/main.py" and _calls(tree, "__import__"):
            offenders.append(f"{rel}: __import__")
    assert offenders == []


def test_paths_are_built_in_one_place():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "core/paths.py":
            continue
        if _calls(ast.parse(path.read_text(encoding="utf-8")), "Paths"):
            offenders.append(rel)
    assert offenders == [], "build places with tma.core.paths.here(env)"
    tree = ast.parse((SRC / "core" / "paths.py").read_text(encoding="utf-8"))
    sites = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "Paths"]
    assert len(sites) == 1


def test_the_cli_stays_a_thin_shell():
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in CLI.glob("*.py"))
    assert lines < CLI_LINES_MAX, f"tma.cli has {lines} lines: move logic to its layer"
