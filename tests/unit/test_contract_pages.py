"""The contract pages cannot drift from the code they promise.

* the @agent_state contract (docs/reference/second-writer-contract.md): its closed state
  table, its detail tokens (emitted and declared), the MUST / SHOULD / MUST NOT summary
  (the forbidden `@tma_*` list is the option registry's), the removal minimum;
* the manifest schema's detail sentence;
* the agent coverage page (docs/reference/agent-coverage.md): its summary table and, per
  agent, its hook and screen-rule tables against the bundled manifests.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tma.core import bundled, options, states

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
CONTRACT = REFERENCE / "second-writer-contract.md"
SCHEMA = REFERENCE / "manifest-schema.md"
COVERAGE = REFERENCE / "agent-coverage.md"

CODE = re.compile(r"`([^`]+)`")


def section(text: str, heading: str) -> str:
    """The text of the `## heading` section, up to the next `## `."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"no section {heading!r}"
    return m.group(1)


def table(text: str, after: str = "") -> list[list[str]]:
    """The body rows (cells stripped) of the first Markdown table after `after`."""
    start = text.index(after) if after else 0
    rows: list[list[str]] = []
    for line in text[start:].splitlines():
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append([c.strip() for c in cells])
        elif rows:
            break
    assert len(rows) > 2, f"no table after {after!r}"
    return rows[2:]


def bullets(text: str, lead: str) -> list[str]:
    """The `- ` items (joined over their continuation lines) under the line `lead`."""
    block = text[text.index(lead) + len(lead):]
    items: list[str] = []
    for line in block.splitlines()[1:]:
        if line.startswith("- "):
            items.append(line[2:])
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
        elif line.strip() == "" and not items:
            continue
        else:
            break
    assert items, f"no bullets under {lead!r}"
    return items


@pytest.fixture(scope="module")
def contract() -> str:
    return CONTRACT.read_text(encoding="utf-8")


# ---------------------------------------------------------------- the state token


def test_the_state_table_is_the_closed_set(contract) -> None:
    rows = table(section(contract, "The state token: closed"))
    assert [CODE.findall(r[0]) for r in rows] == [[s] for s in states.STATES]


# ---------------------------------------------------------------- the detail tokens


DETAIL_SENTENCE = re.compile(
    r"(?P<emitted>(?:`[a-z_]+`[,\s]*(?:and\s+)?)+)\(emitted by (?:its|bundled) manifests\),?\s+"
    r"and\s+(?P<declared>(?:`[a-z_]+`\s*(?:and\s+)?)+)\(declared, not emitted yet\)")


@pytest.mark.parametrize("page", [CONTRACT, SCHEMA], ids=lambda p: p.name)
def test_the_known_detail_tokens_are_the_code_s(page: Path) -> None:
    """Emitted and declared, as tma-core lists them: `error` and `background` are
    declared (the seed's constants no bundled manifest emits yet)."""
    text = " ".join(page.read_text(encoding="utf-8").split())
    m = DETAIL_SENTENCE.search(text)
    assert m, f"{page.name}: no sentence naming the emitted and the declared detail tokens"
    assert CODE.findall(m["emitted"]) == list(states.EMITTED_DETAILS)
    assert CODE.findall(m["declared"]) == list(states.DECLARED_DETAILS)
    assert set(states.DECLARED_DETAILS) == {"error", "background"}


def test_the_bundled_manifests_emit_exactly_the_emitted_tokens() -> None:
    emitted = set()
    for m in bundled.load_all().values():
        emitted |= {r.detail for r in m.rules if r.detail}
        emitted |= {h.detail for h in m.hooks if h.detail}
    assert emitted == set(states.EMITTED_DETAILS)
    assert not emitted & set(states.DECLARED_DETAILS)


# ---------------------------------------------------------------- MUST / SHOULD / MUST NOT


def test_the_must_list_names_the_closed_sets(contract) -> None:
    must = bullets(contract, "A second writer **MUST**:")
    state_rule = next(b for b in must if "`@agent_state`" in b)
    assert [t for t in CODE.findall(state_rule) if t != "@agent_state"] == \
        [states.WORKING, states.BLOCKED, states.IDLE, states.UNKNOWN, states.UNKNOWN]
    source_rule = next(b for b in must if "`@agent_source`" in b)
    assert [t for t in CODE.findall(source_rule) if not t.startswith("@")] == \
        list(states.SOURCES)
    assert any("`@agent_stamped_at`" in b and "last" in b for b in must)


def test_the_should_list_keeps_detail_to_the_token_alphabet(contract) -> None:
    should = bullets(contract, "It **SHOULD**:")
    assert any("`@agent_detail`" in b and "`[a-z0-9_-]`" in b for b in should)
    assert states.is_safe_token("a-z0_9") and not states.is_safe_token("A")


def registry_tma_options() -> set[str]:
    return {o.name for o in options.OPTIONS if o.name.startswith("@tma_")}


def test_the_forbidden_tma_options_are_the_registry_s(contract) -> None:
    must_not = bullets(contract, "It **MUST NOT**:")
    tma = next(b for b in must_not if "`@tma_*`" in b)
    listed = set(CODE.findall(tma)) - {"@tma_*"}
    assert options.HOOK_EVENT in listed
    assert listed == registry_tma_options()


def test_the_forbidden_rollups_and_the_user_option_are_the_registry_s(contract) -> None:
    must_not = bullets(contract, "It **MUST NOT**:")
    rollups = next(b for b in must_not if "`@agent_summary`" in b)
    assert set(CODE.findall(rollups)) == {o.name for o in options.OPTIONS
                                          if o.removal == options.ROLLUP}
    user = next(b for b in must_not if "`@agent_ignore`" in b)
    assert set(CODE.findall(user)) == {o.name for o in options.OPTIONS
                                       if o.removal == options.USER}


def test_the_removal_minimum_is_episode_options(contract) -> None:
    exits = section(contract, "When your agent exits")
    minimum = set(CODE.findall(exits[exits.index("At a minimum"):exits.index("Unset them")]))
    seed = {"@agent_state", "@agent_detail", "@agent_source", "@agent_evidence_at",
            "@agent_since", "@agent_stamped_at"}
    assert seed <= minimum <= set(options.EPISODE_OPTIONS)


# ---------------------------------------------------------------- agent coverage


@pytest.fixture(scope="module")
def coverage() -> str:
    return COVERAGE.read_text(encoding="utf-8")


SECTIONS = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI",
            "cursor": "Cursor CLI", "opencode": "OpenCode", "pi": "pi",
            "copilot": "GitHub Copilot CLI", "qwen": "Qwen Code", "aider": "aider"}


def test_every_bundled_agent_has_a_section() -> None:
    assert sorted(SECTIONS) == bundled.names()


def test_the_summary_table_is_the_manifests(coverage) -> None:
    rows = {r[0]: r for r in table(section(coverage, "Summary"))}
    assert sorted(rows) == bundled.names()
    for name, m in bundled.load_all().items():
        _, recognised, covers, visible, gauge, _checked = rows[name]
        assert CODE.findall(recognised) == list(m.identity.process_names), name
        assert recognised.endswith("+ title") == bool(m.identity.title_patterns), name
        assert [c.strip() for c in covers.split(",")] == list(m.covers), name
        assert [v.strip() for v in visible.split(",")] == list(m.visible), name
        want = [m.context.channel, m.context.format] if m.context else []
        assert (CODE.findall(gauge) if m.context else gauge) == (want or "none"), name


LEADING_EVENTS = re.compile(r"^((?:`[^`]+`(?:\s*(?:,|/)\s*)?)+)")


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_the_hook_table_names_the_manifest_s_events(coverage, name: str) -> None:
    m = bundled.load(name)
    part = section(coverage, SECTIONS[name])
    documented = set()
    for row in table(part, "**Hooks**"):
        lead = LEADING_EVENTS.match(row[0])
        assert lead, f"{name}: a hook row that names no event: {row[0]}"
        documented |= set(CODE.findall(lead.group(1)))
    assert documented == {h.event for h in m.hooks}


def rule_label(rule) -> str:
    if rule.skip_state_update:
        return "history view (freeze)"
    return f"{rule.state} / {rule.detail}" if rule.detail else rule.state


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_the_screen_rule_table_has_a_row_per_rule(coverage, name: str) -> None:
    """One row per bundled rule, labelled with its state / detail (or the freeze)."""
    part = section(coverage, SECTIONS[name])
    documented = Counter(row[0] for row in table(part, "**Screen rules**"))
    assert documented == Counter(rule_label(r) for r in bundled.load(name).rules)
