"""`tma card` for a person: a card (the protocol's card object) as a few lines of text."""

from __future__ import annotations

import json


def _input(value) -> str:
    if not value:
        return ""
    if set(value) == {"command"} and isinstance(value["command"], str):
        return value["command"]
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _options(options: list) -> list[str]:
    out = []
    for o in options:
        key = f"[{o['option_id']}] " if o.get("option_id") else ""  # no id: no keycap
        out.append(f"  {key}{o['name']}  ({o['kind']})")
    return out


def text(card: dict, pane: str = "") -> str:
    kind = card.get("card")
    if kind == "none":
        return f"{pane or 'the pane'}: not blocked, nothing asked\n"
    if kind == "informational":
        return f"{card['detail']}: {card['headline']}\n"
    lines = []
    if kind == "permission":
        lines.append(f"{card['pane']} {card['agent']} asks permission "
                     f"({card['lane']} lane, {card['extraction']})")
        call = card.get("pending_call")
        if call:
            lines.append(f"tool: {call['tool']}")
            shown = _input(call.get("input"))
            if shown:
                lines.append(f"input: {shown}")
        if card.get("options"):
            lines.append("options:")
            lines += _options(card["options"])
        elif card["extraction"] == "failed":
            lines.append("the dialog could not be read: answer it in the pane")
    elif kind == "question":
        lines.append(f"{card['pane']} {card['agent']} asks ({card['request_id']})")
        for q in card["questions"]:
            head = f"[{q['header']}] " if q.get("header") else ""
            lines.append(f"{head}{q['question']}")
            for o in q["options"]:
                desc = f" — {o['description']}" if o.get("description") else ""
                lines.append(f"  • {o['label']}{desc}")
            if q.get("multiple"):
                lines.append("  (several may be chosen)")
            if q.get("custom"):
                lines.append("  (or a custom answer)")
    return "".join(line + "\n" for line in lines)
