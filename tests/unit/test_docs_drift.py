"""The reference pages cannot drift from the code they document.

* every option in the registry is on the pane-options page, and the generated
  block there is exactly what tools/gen_option_docs.py produces now;
* every `ls --json` row key and every `debug explain --json` key is documented;
* every config key the loader accepts is on the config page.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from tma.core import options
from tma.runtime import config
from tma.ui.rows import ROW_KEYS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OPTIONS_PAGE = DOCS / "reference" / "pane-options-and-json.md"
CONFIG_PAGE = DOCS / "reference" / "config.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_option_docs",
                                                  ROOT / "tools" / "gen_option_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page() -> str:
    return OPTIONS_PAGE.read_text(encoding="utf-8")


def _documented(text: str, name: str) -> bool:
    return f"`{name}`" in text


def test_every_registry_option_is_on_the_page(page):
    missing = [o.name for o in options.OPTIONS if not _documented(page, o.name)]
    assert not missing, f"options missing from {OPTIONS_PAGE.name}: {missing}"


def test_generated_block_is_current(page):
    gen = _generator()
    assert gen.current_block(page) == gen.generate(), (
        "the option tables are stale: run `python tools/gen_option_docs.py`"
    )


def test_generator_splice_keeps_the_hand_written_parts(page):
    gen = _generator()
    rewritten = gen.splice(page, gen.generate())
    assert rewritten == page
    before, _, after = page.partition(gen.BEGIN)
    assert rewritten.startswith(before)
    assert rewritten.endswith(after.partition(gen.END)[2])


def test_every_ls_row_key_is_on_the_page(page):
    missing = [k for k in ROW_KEYS if not _documented(page, k)]
    assert not missing, f"ls --json row keys missing from {OPTIONS_PAGE.name}: {missing}"


def test_ls_schema_and_row_keys_agree():
    schema = json.loads((ROOT / "schemas" / "ls.schema.json").read_text(encoding="utf-8"))
    row = schema["$defs"]["row"]
    assert tuple(row["required"]) == ROW_KEYS


def test_every_explain_key_is_on_the_page(page):
    schema = json.loads((ROOT / "schemas" / "explain.schema.json").read_text(encoding="utf-8"))
    keys = list(schema["properties"]) + list(schema["properties"]["rules"]["items"]["properties"])
    missing = sorted({k for k in keys if not _documented(page, k)})
    assert not missing, f"debug explain --json keys missing from {OPTIONS_PAGE.name}: {missing}"


def _config_keys() -> list[str]:
    """Every leaf key the loader accepts (dotted, with <class>/<agent> placeholders)."""
    keys = [f"fold.{k}" for k in ("dwell_secs", "hook_decay_secs", "blocked_decay_secs",
                                  "freshness_secs")]
    keys += [f"{s}.<class>.{k}" for s in ("status", "picker") for k in ("glyph", "color")]
    keys += ["tmux.bin", "hooks.claude_reply_lane", "hooks.hold_ms", "focus.events",
             "install.wrapper_ref", "telemetry.windows", "api.<agent>.api_base"]
    keys += [f"notify.{k}" for k in config._NOTIFY_KEYS]
    keys += ["notify.blocked.command", "notify.done.command", "notify.context_high.threshold",
             "notify.context_high.command"]
    keys += [f"notify.{sink}.{k}" for sink, ks in config._PUSH_KEYS.items() for k in ks]
    keys += [f"daemon.{k}" for k in config._DAEMON_KEYS]
    keys += [f"[[agent]].{k}" for k in ("name", "enabled", "process_names")]
    return keys


def test_every_config_key_is_on_the_config_page():
    text = CONFIG_PAGE.read_text(encoding="utf-8")
    missing = [k for k in _config_keys() if not _documented(text, k)]
    assert not missing, f"config keys missing from {CONFIG_PAGE.name}: {missing}"


def test_config_page_matches_the_loader_defaults():
    text = CONFIG_PAGE.read_text(encoding="utf-8")
    cfg = config.Config()
    for key in ("dwell_secs", "hook_decay_secs", "blocked_decay_secs", "freshness_secs"):
        row = re.search(rf"^\| `fold\.{key}` \|[^|]*\| `(\d+)` \|", text, re.M)
        assert row is not None, f"no table row for fold.{key}"
        assert int(row.group(1)) == getattr(cfg, key), f"fold.{key} default drifted"
    for cls, (glyph, color) in config.STATUS_DEFAULTS.items():
        assert f"| `{cls}` | `{glyph}` | `{color}` |" in text, f"status default for {cls}"


def test_no_page_calls_the_token_level_a_usage_total():
    """@agent_tokens is the context level now ("a level, not a total"): a page
    that says the session "used" or "spent" them misdescribes it (issue 22)."""
    wrong = re.compile(r"(tokens[^|.\n]*\b(has|have|were) (used|spent))|(tokens used)", re.I)
    hits = [f"{p.relative_to(ROOT)}: {line.strip()}" for p in [*DOCS.rglob("*.md"),
                                                              ROOT / "README.md"]
            for line in p.read_text(encoding="utf-8").splitlines()
            if "@agent_tokens" in line or "`tokens`" in line or "| tokens |" in line
            if wrong.search(line) and "not a total" not in line]
    assert not hits, hits


RECORDS = ("ARCHITECTURE.md", "DAEMON.md")


def test_the_decision_records_exist_are_linked_and_name_real_code():
    """The numbered decision records live in docs/internal/ and are linked from
    the docs index; every source or test file a record names exists (issue 22)."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in RECORDS:
        page = DOCS / "internal" / name
        text = page.read_text(encoding="utf-8")
        assert f"internal/{name}" in index, f"docs/index.md does not link {name}"
        numbered = re.findall(r"^## ([AD]\d+)\. ", text, re.M)
        assert len(numbered) >= 10 and len(set(numbered)) == len(numbered), numbered
        named = set(re.findall(r"`((?:tests/[a-z_/]+|[a-z_]+/[a-z_]+)\.py)", text))
        named |= {f"tests/integration/{m}" for m in re.findall(r"`(test_[a-z_]+\.py)`", text)}
        missing = [p for p in sorted(named)
                   if not (ROOT / p).exists() and not (ROOT / "src" / "tma" / p).exists()
                   and not (ROOT / "src" / "tma" / "runtime" / p).exists()
                   and not any((ROOT / "tests" / d / p).exists()
                               for d in ("unit", "integration"))]
        assert not missing, f"{name} names files that do not exist: {missing}"
