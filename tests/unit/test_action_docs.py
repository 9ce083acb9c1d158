"""The how-to's per-agent action table is the bundled action manifests, cell for cell."""

from __future__ import annotations

from pathlib import Path

from tma.core import bundled
from tma.runtime.act import registry as actions

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "act-on-agents.md"
BEGIN, END = "<!-- bundled-actions-table", "<!-- end bundled-actions-table -->"


def _cell(action, agent: str) -> str:
    if agent in action.keys:
        cell = " ".join("*text*" if k == "{text}" else f"`{k}`" for k in action.keys[agent])
        sel = action.select.get(agent)
        if sel is not None:  # [select]: the cursor walked to the option, read back
            cell += f"; a menu with no digits: `{sel.move}` to *{sel.option}*, `{sel.confirm}`"
        return cell
    if agent in action.api:
        op = action.api[agent]
        return f"API `{op.op.split('.', 1)[1]}`" + (f" {op.reply}" if op.reply else "")
    return "–"


def render() -> str:
    agents = sorted(bundled.names())
    rows = ["| action | gate | " + " | ".join(agents) + " |",
            "|---|---|" + "---|" * len(agents)]
    for name, a in actions.load("/nonexistent").actions.items():
        w = a.when
        gate = [*w.states, *w.details]
        if w.context_pct_min is not None:
            gate.append(f"context ≥ {w.context_pct_min}%")
        rows.append(f"| `{name}` | {' + '.join(gate) or 'any'} | "
                    + " | ".join(_cell(a, ag) for ag in agents) + " |")
    return "\n".join(rows)


def test_the_table_matches_the_bundled_actions():
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("\n", text.index(BEGIN)) + 1
    table = text[start:text.index(END)].strip()
    assert table == render(), "regenerate the table in docs/how-to/act-on-agents.md:\n" + render()


def test_the_schema_page_documents_every_field_and_op():
    page = (PAGE.parents[1] / "reference" / "action-schema.md").read_text(encoding="utf-8")
    from tma.core.actions.schema import API_OPS, TOP_LEVEL

    for field in TOP_LEVEL:
        assert f"`{field}`" in page or f"## [{field}]" in page, \
            f"action-schema.md does not document {field}"
    for op in API_OPS:
        assert f"`{op}`" in page
