"""Every way the manifest loader (tma.core.manifest) refuses a document, one case each.

Each case starts from BASE, a document that loads and uses every section, changes one
thing, and asserts the ManifestError names that field with that reason. The message is
matched, not only the exception type, so disabling any one check makes its case fail
(a later, unrelated check cannot stand in for it).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from tma.core import manifest as M, states

BASE: dict[str, Any] = {
    "min_engine_version": "0.1",
    "identity": {"process_names": ["fakeagent"], "title_patterns": ["^fake"]},
    "hooks": {
        "covers": ["working", "idle", "lifecycle"],
        "map": [
            {"event": "Start", "claim": {"lifecycle": "start"}},
            {"event": "Ask", "matcher": "perm", "claim": {"state": "blocked",
                                                          "detail": "permission"}},
            {"event": "Stop", "claim": {"state": "idle"}, "turn_end": True},
        ],
    },
    "capture": {"visible": ["working", "blocked"]},
    "rules": [
        {"state": "blocked", "detail": "permission", "priority": 100,
         "region": "tail_lines(5)", "match": {"contains": "Allow?"}},
        {"state": "working", "region": "visible", "skip_state_update": False,
         "match": {"any": [{"regex": "esc to"}, {"not": {"line_regex": "^>"}}]}},
        {"state": "idle", "region": "title", "match": {"all": [{"contains": "done"}]}},
    ],
    "details": {"permission": {"aliases": ["approval"]}},
    "telemetry": {"context": {"channel": "event", "format": "claude-statusline-json"}},
}


def _set(path: str, value: Any):
    """A change to BASE: the value at a dotted path (list indices as numbers) replaced."""

    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value

    return apply


def _drop(path: str):
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return apply


def _load(change) -> M.Manifest:
    doc = copy.deepcopy(BASE)
    change(doc)
    return M.from_dict("fake", doc)


def test_the_base_document_loads_with_every_section() -> None:
    m = _load(lambda doc: None)
    assert m.identity.process_names == ("fakeagent",)
    assert [h.event for h in m.hooks] == ["Start", "Ask", "Stop"]
    assert [str(r.region) for r in m.rules] == ["tail_lines(5)", "visible", "title"]
    assert m.details == {"permission": ("approval",)}
    assert m.context == M.ContextTelemetry("event", "claude-statusline-json")


# The five checks issue 8 found untested, then every other rejection. Each row: an id,
# the change, and the message it must produce (a regex, searched).
CASES = [
    # -- unknown fields, in every table that has a closed field list
    ("unknown-top-level", _set("bogus", 1), r"^manifest: unknown field 'bogus'"),
    ("unknown-identity", _set("identity.names", []), r"^\[identity\]: unknown field 'names'"),
    ("unknown-hooks", _set("hooks.events", []), r"^\[hooks\]: unknown field 'events'"),
    ("unknown-hook-entry", _set("hooks.map.2.when", "x"),
     r"^\[\[hooks\.map\]\]\[2\]: unknown field 'when'"),
    ("unknown-claim-field", _set("hooks.map.1.claim.why", "x"),
     r"^\[\[hooks\.map\]\]\[1\]\.claim: unknown field 'why'"),
    ("lifecycle-claim-with-a-state", _set("hooks.map.0.claim.state", "idle"),
     r"^\[\[hooks\.map\]\]\[0\]\.claim: unknown field 'state'"),
    ("unknown-capture", _set("capture.hidden", []), r"^\[capture\]: unknown field 'hidden'"),
    ("unknown-rule-field", _set("rules.0.weight", 3),
     r"^\[\[rules\]\]\[0\]: unknown field 'weight'"),
    ("unknown-detail-field", _set("details.permission.label", "x"),
     r"^\[details\]\.permission: unknown field 'label'"),
    ("unknown-telemetry", _set("telemetry.cost", {}), r"^\[telemetry\]: unknown field 'cost'"),
    ("unknown-telemetry-context", _set("telemetry.context.path", "x"),
     r"^\[telemetry\.context\]: unknown field 'path'"),
    # -- safe tokens (the closed set tmux formats may carry)
    ("unsafe-claim-detail", _set("hooks.map.1.claim.detail", "Needs You"),
     r"^\[\[hooks\.map\]\]\[1\]\.claim\.detail: 'Needs You' is not a safe token"),
    ("unsafe-rule-detail", _set("rules.0.detail", "perm;ission"),
     r"^\[\[rules\]\]\[0\]\.detail: 'perm;ission' is not a safe token"),
    ("empty-rule-detail", _set("rules.0.detail", ""), r"^\[\[rules\]\]\[0\]\.detail: '' is not"),
    ("non-string-detail", _set("rules.0.detail", 7), r"^\[\[rules\]\]\[0\]\.detail: 7 is not"),
    ("unsafe-detail-name", _set("details", {"Perm": {}}), r"^\[details\]\.Perm: 'Perm' is not"),
    ("unsafe-detail-alias", _set("details.permission.aliases", ["ok", "#[bg]"]),
     r"^\[details\]\.permission\.aliases: '#\[bg\]' is not a safe token"),
    # -- a detail named like a state
    ("detail-named-like-a-state", _set("details", {"blocked": {}}),
     r"^\[details\]\.blocked: a detail may not be named like a state"),
    # -- the state vocabulary
    ("claim-state-outside-vocabulary", _set("hooks.map.1.claim.state", "waiting"),
     r"^\[\[hooks\.map\]\]\[1\]\.claim\.state: 'waiting' is not one of working, blocked"),
    ("rule-state-outside-vocabulary", _set("rules.1.state", "busy"),
     r"^\[\[rules\]\]\[1\]\.state: 'busy' is not one of"),
    ("visible-state-outside-vocabulary", _set("capture.visible", ["working", "done"]),
     r"^\[capture\]\.visible: 'done' is not one of"),
    # -- regions
    ("tail-lines-zero", _set("rules.0.region", "tail_lines(0)"),
     r"^\[\[rules\]\]\[0\]\.region: 'tail_lines\(0\)' is not tail_lines\(N\), visible or title"),
    ("region-unknown", _set("rules.0.region", "scrollback"), r"^\[\[rules\]\]\[0\]\.region: "),
    ("region-negative", _set("rules.0.region", "tail_lines(-3)"),
     r"^\[\[rules\]\]\[0\]\.region: 'tail_lines\(-3\)'"),
    ("region-not-a-string", _set("rules.0.region", 5), r"^\[\[rules\]\]\[0\]\.region: 5 is not"),
    ("blocked-rule-reads-the-title", _set("rules.0.region", "title"),
     r"^\[\[rules\]\]\[0\]: a blocked rule may not read the title region"),
    # -- the engine gate
    ("engine-version-missing", _drop("min_engine_version"), r"^min_engine_version: required$"),
    ("engine-version-not-a-string", _set("min_engine_version", 0.1),
     r"^min_engine_version: must be a string"),
    ("engine-version-malformed", _set("min_engine_version", "0.1-beta"),
     r"^min_engine_version: '0\.1-beta' is not maj\[\.min\[\.patch\]\]"),
    ("engine-version-too-many-parts", _set("min_engine_version", "1.2.3.4"),
     r"^min_engine_version: '1\.2\.3\.4' is not"),
    ("engine-version-newer", _set("min_engine_version", "99.0"),
     r"^requires engine 99\.0 but this engine is " + re.escape(M.ENGINE_VERSION)),
    # -- [identity]
    ("identity-missing", _drop("identity"), r"^\[identity\]: required$"),
    ("identity-not-a-table", _set("identity", ["fakeagent"]), r"^\[identity\]: must be a table"),
    ("process-names-missing", _drop("identity.process_names"),
     r"^\[identity\]\.process_names: required$"),
    ("process-names-not-strings", _set("identity.process_names", ["a", 1]),
     r"^\[identity\]\.process_names: must be a list of strings"),
    ("process-names-a-string", _set("identity.process_names", "fakeagent"),
     r"^\[identity\]\.process_names: must be a list of strings"),
    ("process-names-empty", _set("identity.process_names", []),
     r"^\[identity\]\.process_names: needs at least one non-empty name"),
    ("process-name-blank", _set("identity.process_names", ["fakeagent", ""]),
     r"^\[identity\]\.process_names: needs at least one non-empty name"),
    ("title-pattern-bad-regex", _set("identity.title_patterns", ["ok", "(unclosed"]),
     r"^\[identity\]\.title_patterns\[1\]: bad regex '\(unclosed'"),
    ("title-patterns-not-strings", _set("identity.title_patterns", [3]),
     r"^\[identity\]\.title_patterns: must be a list of strings"),
    # -- [hooks]
    ("hooks-not-a-table", _set("hooks", []), r"^\[hooks\]: must be a table"),
    ("covers-outside-vocabulary", _set("hooks.covers", ["working", "unknown"]),
     r"^\[hooks\]\.covers: 'unknown' is not one of working, blocked, idle, lifecycle"),
    ("covers-not-a-list", _set("hooks.covers", "working"),
     r"^\[hooks\]\.covers: must be a list of strings"),
    ("hook-map-not-an-array", _set("hooks.map", {"event": "Stop"}),
     r"^\[\[hooks\.map\]\]: must be an array of tables"),
    ("hook-entry-not-a-table", _set("hooks.map.1", "Ask"),
     r"^\[\[hooks\.map\]\]\[1\]: must be a table"),
    ("hook-event-missing", _drop("hooks.map.2.event"),
     r"^\[\[hooks\.map\]\]\[2\]\.event: required non-empty string"),
    ("hook-event-empty", _set("hooks.map.2.event", ""),
     r"^\[\[hooks\.map\]\]\[2\]\.event: required non-empty string"),
    ("hook-matcher-bad-regex", _set("hooks.map.1.matcher", "[perm"),
     r"^\[\[hooks\.map\]\]\[1\]\.matcher: bad regex"),
    ("hook-matcher-not-a-string", _set("hooks.map.1.matcher", ["perm"]),
     r"^\[\[hooks\.map\]\]\[1\]\.matcher: must be a string"),
    ("hook-claim-missing", _drop("hooks.map.2.claim"), r"^\[\[hooks\.map\]\]\[2\]\.claim: required"),
    ("hook-claim-not-a-table", _set("hooks.map.2.claim", "idle"),
     r"^\[\[hooks\.map\]\]\[2\]\.claim: must be a table"),
    ("hook-claim-empty", _set("hooks.map.2.claim", {}),
     r"^\[\[hooks\.map\]\]\[2\]\.claim: needs state = … or lifecycle = …"),
    ("hook-claim-detail-without-state", _set("hooks.map.2.claim", {"detail": "permission"}),
     r"^\[\[hooks\.map\]\]\[2\]\.claim: needs state"),
    ("hook-lifecycle-unknown", _set("hooks.map.0.claim.lifecycle", "resume"),
     r"^\[\[hooks\.map\]\]\[0\]\.claim\.lifecycle: must be \"start\" or \"end\""),
    ("hook-turn-end-not-bool", _set("hooks.map.2.turn_end", "yes"),
     r"^\[\[hooks\.map\]\]\[2\]\.turn_end: must be true or false"),
    ("hook-turn-end-on-lifecycle-not-bool", _set("hooks.map.0.turn_end", 1),
     r"^\[\[hooks\.map\]\]\[0\]\.turn_end: must be true or false"),
    # -- [capture]
    ("capture-missing", _drop("capture"), r"^\[capture\]: required \(it may be empty\)"),
    ("capture-not-a-table", _set("capture", ["working"]), r"^\[capture\]: must be a table"),
    ("visible-not-a-list", _set("capture.visible", "working"),
     r"^\[capture\]\.visible: must be a list of strings"),
    ("decisive-not-a-list", _set("capture.decisive", "working"),
     r"^\[capture\]\.decisive: must be a list of strings"),
    ("decisive-state-outside-vocabulary", _set("capture.decisive", ["done"]),
     r"^\[capture\]\.decisive: 'done' is not one of"),
    ("decisive-not-visible", _set("capture.decisive", ["idle"]),
     r"^\[capture\]\.decisive: 'idle' must be in \[capture\]\.visible too"),
    # -- [[rules]]
    ("rules-not-an-array", _set("rules", {"state": "idle"}),
     r"^\[\[rules\]\]: must be an array of tables"),
    ("rule-not-a-table", _set("rules.2", "idle"), r"^\[\[rules\]\]\[2\]: must be a table"),
    ("rule-state-missing", _drop("rules.1.state"), r"^\[\[rules\]\]\[1\]\.state: required"),
    ("rule-region-missing", _drop("rules.1.region"), r"^\[\[rules\]\]\[1\]\.region: required"),
    ("rule-match-missing", _drop("rules.1.match"), r"^\[\[rules\]\]\[1\]\.match: required"),
    ("rule-priority-not-int", _set("rules.0.priority", "high"),
     r"^\[\[rules\]\]\[0\]\.priority: must be an integer"),
    ("rule-priority-bool", _set("rules.0.priority", True),
     r"^\[\[rules\]\]\[0\]\.priority: must be an integer"),
    ("rule-priority-float", _set("rules.0.priority", 1.5),
     r"^\[\[rules\]\]\[0\]\.priority: must be an integer"),
    ("rule-skip-not-bool", _set("rules.1.skip_state_update", "no"),
     r"^\[\[rules\]\]\[1\]\.skip_state_update: must be true or false"),
    # -- matchers
    ("matcher-not-a-table", _set("rules.0.match", "Allow?"),
     r"^\[\[rules\]\]\[0\]\.match: must be a table"),
    ("matcher-empty", _set("rules.0.match", {}),
     r"^\[\[rules\]\]\[0\]\.match: a matcher has exactly one of contains, regex"),
    ("matcher-two-kinds", _set("rules.0.match", {"contains": "a", "regex": "b"}),
     r"^\[\[rules\]\]\[0\]\.match: a matcher has exactly one of"),
    ("matcher-unknown-kind", _set("rules.0.match", {"startswith": "a"}),
     r"^\[\[rules\]\]\[0\]\.match: unknown matcher 'startswith'"),
    ("contains-empty", _set("rules.0.match", {"contains": ""}),
     r"^\[\[rules\]\]\[0\]\.match\.contains: must be a non-empty string"),
    ("contains-not-a-string", _set("rules.0.match", {"contains": ["a"]}),
     r"^\[\[rules\]\]\[0\]\.match\.contains: must be a non-empty string"),
    ("regex-bad", _set("rules.0.match", {"regex": "(a"}),
     r"^\[\[rules\]\]\[0\]\.match\.regex: bad regex"),
    ("regex-not-a-string", _set("rules.0.match", {"regex": 1}),
     r"^\[\[rules\]\]\[0\]\.match\.regex: must be a string"),
    ("line-regex-bad", _set("rules.0.match", {"line_regex": "(?P<x"}),
     r"^\[\[rules\]\]\[0\]\.match\.line_regex: bad regex"),
    ("any-empty", _set("rules.0.match", {"any": []}),
     r"^\[\[rules\]\]\[0\]\.match\.any: must be a non-empty list of matchers"),
    ("all-not-a-list", _set("rules.0.match", {"all": {"contains": "a"}}),
     r"^\[\[rules\]\]\[0\]\.match\.all: must be a non-empty list of matchers"),
    ("nested-child-bad", _set("rules.1.match.any.1", {"not": {"contains": ""}}),
     r"^\[\[rules\]\]\[1\]\.match\.any\[1\]\.not\.contains: must be a non-empty string"),
    ("not-child-not-a-table", _set("rules.1.match.any.1", {"not": "x"}),
     r"^\[\[rules\]\]\[1\]\.match\.any\[1\]\.not: must be a table"),
    # -- [details]
    ("details-not-a-table", _set("details", ["permission"]), r"^\[details\]: must be a table"),
    ("detail-entry-not-a-table", _set("details.permission", ["approval"]),
     r"^\[details\]\.permission: must be a table"),
    ("detail-aliases-not-a-list", _set("details.permission.aliases", "approval"),
     r"^\[details\]\.permission\.aliases: must be a list of strings"),
    # -- [telemetry]
    ("telemetry-not-a-table", _set("telemetry", "event"), r"^\[telemetry\]: must be a table"),
    ("telemetry-context-not-a-table", _set("telemetry.context", "event"),
     r"^\[telemetry\.context\]: must be a table"),
    ("telemetry-channel-unknown", _set("telemetry.context.channel", "socket"),
     r"^\[telemetry\.context\]\.channel: 'socket' is not one of event, file-tail, screen"),
    ("telemetry-channel-missing", _drop("telemetry.context.channel"),
     r"^\[telemetry\.context\]\.channel: None is not one of"),
    ("telemetry-format-missing", _drop("telemetry.context.format"),
     r"^\[telemetry\.context\]\.format: required string"),
    ("telemetry-format-empty", _set("telemetry.context.format", ""),
     r"^\[telemetry\.context\]\.format: required string"),
    # -- [keys]: key sequences live in the action manifests now
    ("keys-moved-to-actions", _set("keys", {"approve": ["1"]}),
     r"^\[keys\]: key sequences moved to the action manifests"),
]


@pytest.mark.parametrize("change,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rejection(change, message: str) -> None:
    with pytest.raises(M.ManifestError) as err:
        _load(change)
    assert re.search(message, str(err.value)), str(err.value)


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_every_state_token_is_refused_as_a_detail_name() -> None:
    for state in states.STATES:
        with pytest.raises(M.ManifestError, match="named like a state"):
            _load(_set("details", {state: {}}))


def test_bad_toml_text_is_refused_with_the_parser_message() -> None:
    with pytest.raises(M.ManifestError, match=r"^TOML: "):
        M.loads("fake", 'min_engine_version = "0.1"\n[identity\n')


def test_the_engine_gate_runs_before_the_strict_parse() -> None:
    """A manifest for a newer engine says "upgrade", not "unknown field", so a user with
    an old tma learns why a manifest that uses new fields does not load."""
    with pytest.raises(M.ManifestError, match=r"^requires engine 9\.0 .*\(upgrade tma"):
        M.loads("fake", 'min_engine_version = "9.0"\nshiny_new_section = 1\n')
