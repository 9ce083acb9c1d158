"""The status-line segment and its other formats."""

from __future__ import annotations

from tma.core import states
from tma.ui import contrast

CLASS_ORDER = (states.BLOCKED, states.WORKING, states.DONE, states.IDLE, states.UNKNOWN)


def counts(rows) -> dict[str, int]:
    """Disjoint classes: done panes are not also counted as idle."""
    out = dict.fromkeys(CLASS_ORDER, 0)
    for r in rows:
        out[states.display_class(r.stamp.state, r.stamp.attention)] += 1
    return out


def fleet_counts(frows) -> dict[str, int]:
    """The same classes for the hosts' rows (protocol FleetRows: state and attention)."""
    out = dict.fromkeys(CLASS_ORDER, 0)
    for r in frows:
        cls = states.display_class(r.state, r.attention)
        out[cls if cls in out else states.UNKNOWN] += 1
    return out


#: What sets the hosts' counts apart from this machine's on a status line.
FLEET_MARK = "@"


def with_fleet(local: str, remote: str) -> str:
    """This machine's segment, then the hosts' counts after FLEET_MARK (nothing when the
    hosts have no agent)."""
    if not remote:
        return local
    return f"{local} {FLEET_MARK}{remote}" if local else f"{FLEET_MARK}{remote}"


def tmux(c: dict[str, int], palette: dict[str, tuple[str, str]]) -> str:
    """Each count as a chip: the class colour behind black or white text (the one that
    contrasts more), then the bar's own colours again. A chip reads on any bar, the
    default green one included, where a green or yellow count in the text colour did not."""
    parts = []
    for cls in CLASS_ORDER:
        n = c[cls]
        if not n:
            continue
        glyph, color = palette[cls]
        color = _color(color)
        text = contrast.ink(color)
        style = f"fg={text},bg={color}" if text else f"fg={color}"
        parts.append(f"#[range=user|tma:{cls}]#[{style}]{glyph.replace('#[', '[')}"
                     f"{n}#[fg=default,bg=default]#[norange]")
    return " ".join(parts)


def _color(color: str) -> str:
    # colours are tmux colour strings; "#rrggbb" is legal, anything closing the style is not
    return color.replace("]", "").replace(",", "")


def plain(c: dict[str, int], palette: dict[str, tuple[str, str]]) -> str:
    return " ".join(f"{palette[cls][0]}{c[cls]}" for cls in CLASS_ORDER if c[cls])


def for_a_person(c: dict[str, int], palette: dict[str, tuple[str, str]]) -> str:
    """The plain segment on its own line; "no agents" rather than an empty line."""
    return (plain(c, palette) or "no agents") + "\n"


def json_doc(c: dict[str, int], fleet: dict | None = None) -> str:
    """`fleet`: the hosts' counts and states, when a daemon holds links to hosts."""
    inner = ",".join(f'"{k}":{c[k]}' for k in ("working", "blocked", "idle", "unknown", "done"))
    if fleet is None:
        return '{"schema":1,"counts":{' + inner + "}}\n"
    import json

    return ('{"schema":1,"counts":{' + inner + '},"fleet":'
            + json.dumps(fleet, separators=(",", ":")) + "}\n")


def prom(c: dict[str, int], rows, now: int) -> str:
    lines = [
        "# HELP tma_agents Agent panes per state class (done and idle are disjoint).",
        "# TYPE tma_agents gauge",
    ]
    for cls in (states.WORKING, states.BLOCKED, states.IDLE, states.UNKNOWN, states.DONE):
        lines.append(f'tma_agents{{state="{cls}"}} {c[cls]}')
    lines += [
        "# HELP tma_agent_state_seconds Seconds each agent pane has been in its state.",
        "# TYPE tma_agent_state_seconds gauge",
    ]
    for r in rows:
        cls = states.display_class(r.stamp.state, r.stamp.attention)
        secs = max(0, now - r.stamp.since) / 1000 if r.stamp.since else 0.0
        lines.append(f'tma_agent_state_seconds{{pane="{_label(r.pane.pane_id)}",'
                     f'agent="{_label(r.agent)}",state="{cls}"}} {secs:.3f}')
    return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
