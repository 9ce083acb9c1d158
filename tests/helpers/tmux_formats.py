"""The tmux format constructs tma uses, each with a sample every release must expand alike.

`constructs_in_source()` finds every `#{<operator>` tma's source writes (string literals,
not docstrings); tests/arch/test_tmux_formats.py fails when one is not in CONSTRUCTS, and
the tmux contract suite (tests/integration/test_tmux_contract.py) expands every sample
on every build of the matrix. A construct added to the code without a sample here, or
one that a release expands differently, fails a test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tma"

#: operator -> [(format, what every release must print)]; expanded with display-message -p
#: in a pane whose @t option is "7" and @e is unset.
CONSTRUCTS: dict[str, list[tuple[str, str]]] = {
    "?": [("#{?@t,yes,no}", "yes"), ("#{?@e,yes,no}", "no"),
          ("#{?#{==:1,1},#{@t},x}", "7"), ("#{?pane_active,a,b}", "a")],
    "==:": [("#{==:#{@t},7}", "1"), ("#{==:#{@e},}", "1"), ("#{==:a,b}", "0")],
    "!=:": [("#{!=:#{@t},7}", "0"), ("#{!=:#{@e},}", "0"), ("#{!=:a,b}", "1")],
    "&&:": [("#{&&:1,1}", "1"), ("#{&&:#{@t},#{@e}}", "0")],
    "||:": [("#{||:0,#{@t}}", "1"), ("#{||:#{@e},0}", "0")],
    # 13-digit epoch milliseconds, both directions, and an unset operand reads 0
    "e|<:": [("#{e|<:1700000000000,1700000000001}", "1"),
             ("#{e|<:1700000000001,1700000000000}", "0"), ("#{e|<:#{@e},1}", "1")],
    "e|<=:": [("#{e|<=:1700000000000,1700000000000}", "1"), ("#{e|<=:2,1}", "0")],
    "e|>:": [("#{e|>:1700000000001,1700000000000}", "1"), ("#{e|>:#{@e},0}", "0")],
    "e|>=:": [("#{e|>=:1700000000000,1700000000000}", "1"), ("#{e|>=:#{@e},1}", "0")],
    "m:": [("#{m:tma:*,tma:blocked}", "1"), ("#{m:tma:*,other}", "0")],
    # an option's value expanded as a format, then through strftime (init's room check)
    "T:": [("#{T:@t}", "7")],
    "P:": [("#{P:#{?pane_active,[#{@t}],}}", "[7]")],
    "W:": [("#{W:#{?window_active,#{P:#{?pane_active,[#{@t}],}},}}", "[7]")],
    # frame.text's backslash doubling (the pattern and the replacement, escaped twice)
    "s/": [("#{s/\\\\/\\\\\\\\/:@b}", "a\\\\b\\\\\\\\c")],
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                    ast.Constant):
                ids.add(id(body[0].value))
    return ids


_OPERATOR = re.compile(r"#\{([^}{:,#\s]*?)([:/,}]|$)")
_VARIABLE = re.compile(r"@?[a-z_][a-z0-9_-]*")


def string_literals(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every str literal in a module, docstrings left out (an f-string
    gives its literal parts: `#{{` in the source is `#{` here)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def constructs_in_source() -> dict[str, set[str]]:
    """operator -> the modules that write it (`#{?` however its condition starts)."""
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for _line, text in string_literals(path):
            for m in _OPERATOR.finditer(text):
                token, nxt = m.groups()
                if not token:
                    continue  # `"#{" + name + "}"`: a variable built at run time
                if token.startswith("?"):
                    token, nxt = "?", ""
                elif nxt in ("}", ",", "") and _VARIABLE.fullmatch(token):
                    continue  # a variable or option
                op = token + (nxt if nxt in ":/" else "")
                found.setdefault(op, set()).add(str(path.relative_to(SRC)))
    return found
