"""The rooms of src/tma: no folder so full that a newcomer must read the whole listing
to find their room, and no two modules that need each other.

- A folder holds at most MAX_MODULES modules (`cli/`, one module a command, aside).
- No import circle between modules anywhere in src/tma, counting every import a module
  makes: at its top, under `if TYPE_CHECKING:` (an annotation is a dependency too) and
  inside a function (a late import hides a circle, it does not remove one). A circle is
  mended by moving the shared piece to the lower module or by passing a protocol.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_MODULES = 30
ASIDE = {SRC / "tma" / "cli"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(tree: ast.Module) -> list[ast.stmt]:
    """Every import statement of a module, wherever it stands."""
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        package = name if is_pkg else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[: len(up) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            for t in targets:
                if t in modules and t != name:
                    graph[name].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_folder_holds_more_than_its_share_of_modules():
    full = []
    for folder in sorted({p.parent for p in SRC.rglob("*.py")}):
        if folder in ASIDE:
            continue
        count = sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
        if count > MAX_MODULES:
            full.append(f"{folder.relative_to(SRC)}: {count} modules")
    assert full == [], f"split these by capability (at most {MAX_MODULES} a folder): {full}"


def test_no_two_modules_need_each_other():
    assert _cycles(_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    tree = ast.parse("import x\nif TYPE_CHECKING:\n    import y\ndef f():\n    import z\n")
    assert sorted(n.names[0].name for n in _imports(tree)) == ["x", "y", "z"]
