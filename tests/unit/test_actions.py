"""The action schema (one test per rejection), the gate, the outcome ladder, the keys line."""

from __future__ import annotations

import pytest

from tma.core.actions import gate as G, schema as S
from tma.runtime.act import registry as actions

BASE = {"min_engine_version": "0.1", "label": "L", "description": "d", "kind": "keys",
        "keys": {"claude": ["1"]}}


def _load(**changes):
    doc = dict(BASE)
    for k, v in changes.items():
        if v is None:
            doc.pop(k, None)
        else:
            doc[k] = v
    return S.from_dict("x", doc)


def test_the_base_document_loads():
    a = _load()
    assert (a.name, a.kind, a.keys, a.when.empty, a.timeout_ms) == ("x", "keys",
                                                                    {"claude": ("1",)}, True,
                                                                    30_000)


@pytest.mark.parametrize(("changes", "message"), [
    ({"min_engine_version": None}, "min_engine_version: required"),
    ({"min_engine_version": "9.0"}, "requires engine 9.0"),
    ({"colour": "red"}, "action: unknown field 'colour'"),
    ({"name": "y"}, "name: 'y' does not match the file stem 'x'"),
    ({"label": None}, "label: must be a non-empty string"),
    ({"label": ""}, "label: must be a non-empty string"),
    ({"description": None}, "description: must be a non-empty string"),
    ({"kind": None}, "kind: required"),
    ({"kind": "macro"}, "kind: 'macro' is not one of keys, exec"),
    ({"when": {"state": ["sleepy"]}}, "[when].state: 'sleepy' is not one of"),
    ({"when": {"detail": ["Bad Token"]}}, "[when].detail: 'Bad Token' is not a safe token"),
    ({"when": {"mood": ["x"]}}, "[when]: unknown field 'mood'"),
    ({"when": {"context_pct_min": 101}}, "[when].context_pct_min: must be an integer from 0"),
    ({"when": {"context_pct_min": 80, "context_pct_max": 20}}, "is above context_pct_max"),
    ({"when": "idle"}, "[when]: must be a table"),
    ({"requires": ["moon"]}, "requires: 'moon' is not one of"),
    ({"confirm": "yes"}, "confirm: must be true or false"),
    ({"timeout_ms": 0}, "timeout_ms: must be an integer from 1"),
    ({"keys": {"claude": []}}, "[keys].claude: must be a non-empty list"),
    ({"keys": {"claude": [""]}}, "[keys].claude: must be a non-empty list"),
    ({"keys": {"Claude!": ["1"]}}, "[keys].Claude!: the agent name is not a safe token"),
    ({"keys": {"claude": ["{text}"]}}, "{text} is only for a text action"),
    ({"text": True}, "a text action's arm holds {text} exactly once (found 0)"),
    ({"keys": {}}, "a keys action needs at least one [keys] or [api] arm"),
    ({"api": {"claude": {"op": "claude.x"}}}, "[api].claude.op: 'claude.x' is not one of"),
    ({"api": {"codex": {"op": "opencode.question_reject"}}}, "is an op of opencode, not codex"),
    ({"api": {"opencode": {"op": "opencode.permission_reply"}}}, ".reply: '' is not one of"),
    ({"api": {"opencode": {"op": "opencode.permission_reply", "reply": "yes"}}},
     "reply: 'yes' is not one of once, reject"),
    ({"api": {"opencode": {"op": "opencode.question_reject", "reply": "once"}}},
     "takes no reply"),
    ({"api": {"opencode": {"op": "opencode.question_reject", "via": "x"}}},
     "[api].opencode: unknown field 'via'"),
    ({"api": {"claude": {"op": "opencode.question_reject"}}}, "is an op of opencode"),
    ({"command": "echo hi"}, "command: only for kind = \"exec\""),
    ({"agents": ["claude"]}, "agents: only for kind = \"exec\""),
    ({"detach": True}, "detach: only for kind = \"exec\""),
    ({"hook_reply": "maybe"}, "hook_reply: 'maybe' is not one of allow, deny"),
    ({"kind": "exec"}, "keys: only for kind = \"keys\""),
    ({"kind": "exec", "keys": None}, "command: required for kind = \"exec\""),
])
def test_each_rejection_names_its_field(changes, message):
    with pytest.raises(S.ActionError) as exc:
        _load(**changes)
    assert message in str(exc.value)


def test_an_agent_in_both_keys_and_api_is_refused():
    with pytest.raises(S.ActionError, match="by \\[keys\\] or by \\[api\\], not both"):
        _load(keys={"opencode": ["y"]},
              api={"opencode": {"op": "opencode.permission_reply", "reply": "once"}})


def test_a_text_action_has_no_api_arm():
    with pytest.raises(S.ActionError, match="a text action has no API arm"):
        _load(text=True, keys={"claude": ["{text}", "Enter"]},
              api={"opencode": {"op": "opencode.question_reject"}})


def test_an_answering_action_has_no_keys_arm():
    with pytest.raises(S.ActionError, match="answers with --answer labels has no \\[keys\\]"):
        _load(keys={"claude": ["1"]}, api={"opencode": {"op": "opencode.question_reply"}})
    assert _load(keys=None, api={"opencode": {"op": "opencode.question_reply"}}).takes_answers


def test_an_exec_action():
    a = _load(kind="exec", keys=None, command="notify-send hi", agents=["claude"],
              detach=True)
    assert (a.command, a.applies_to("claude"), a.applies_to("codex")) == ("notify-send hi",
                                                                          True, False)


def test_a_bad_toml_file_is_one_error():
    with pytest.raises(S.ActionError, match="TOML"):
        S.loads("x", "label = ")


# ---------------------------------------------------------------- the bundled set


def test_the_bundled_actions():
    aset = actions.load("/nonexistent")
    assert sorted(aset.names()) == ["approve", "compact", "deny", "interrupt",
                                    "question_reject", "question_reply", "steer",
                                    "steer_now"]
    assert aset.get("approve").covered_agents() == ("aider", "claude", "codex", "copilot",
                                                    "cursor", "gemini", "opencode", "qwen")
    assert "pi" not in aset.get("approve").covered_agents()  # pi has no permission prompt
    assert "gemini" not in aset.get("steer").keys and "gemini" not in aset.get("steer_now").keys
    assert aset.get("compact").covered_agents() == ("claude",)
    assert aset.get("question_reject").keys == {}  # API only, even for OpenCode
    reply = aset.get("question_reply")
    assert reply.keys == {} and reply.takes_answers and not aset.get("question_reject").takes_answers
    assert reply.when.details == ("question",)
    assert not aset.skipped


def test_user_actions_shadow_and_a_broken_one_is_skipped(tmp_path):
    (tmp_path / "approve.toml").write_text(
        'min_engine_version = "0.1"\nlabel = "Yes"\ndescription = "d"\nkind = "keys"\n'
        '[keys]\nclaude = ["y"]\n')
    (tmp_path / "bad.toml").write_text("kind = [")
    aset = actions.load(str(tmp_path))
    assert aset.get("approve").keys == {"claude": ("y",)}
    assert aset.origin["approve"] == str(tmp_path / "approve.toml")
    assert [p for p, _ in aset.skipped] == [str(tmp_path / "bad.toml")]
    lines = []
    actions.report_skipped(aset, lines.append)
    assert lines[0].startswith(f"tma: skipping action {tmp_path / 'bad.toml'}: TOML")


def test_agent_manifests_carry_no_keys_any_more():
    from tma.core import manifest

    with pytest.raises(manifest.ManifestError, match="moved to the action manifests"):
        manifest.loads("x", 'min_engine_version = "0.1"\n[identity]\nprocess_names = ["x"]\n'
                            '[capture]\n[keys]\napprove = ["y"]\n')


# ---------------------------------------------------------------- the gate


def _t(**kw):
    base = dict(pane="%1", agent="claude", state="blocked", detail="permission",
                has_context_channel=True, session="s", cwd="/", pid=1, title="t")
    base.update(kw)
    return G.Target(**base)


def _approve():
    return actions.load("/nonexistent").get("approve")


def _compact():
    return actions.load("/nonexistent").get("compact")


def test_fireable():
    assert G.gate(_approve(), _t()) is None


def test_no_agent_is_gated():
    r = G.gate(_approve(), G.Target("%1"))
    assert (r.reason, r.message) == ("gated", "%1 carries no agent state (tma sees no agent "
                                              "there): nothing to approve")


def test_when_state_and_detail():
    assert G.gate(_approve(), _t(state="idle")).message == \
        "%1 is idle, not at a permission prompt: nothing to approve"
    assert G.gate(_approve(), _t(state="idle", attention=True)).message.startswith(
        "%1 is idle (its turn is done)")
    assert G.gate(_approve(), _t(detail="question")).message == \
        "%1 is blocked on question, not at a permission prompt: `approve` answers only " \
        "permission prompts"
    assert G.gate(_approve(), _t(state="idle"), force=True) is None


def test_wrong_agent():
    r = G.gate(_approve(), _t(agent="pi"))
    assert r.reason == "wrong-agent" and "does not apply to pi panes" in r.message
    assert G.gate(_approve(), _t(agent="pi"), force=True).reason == "wrong-agent"


def test_the_context_gauge():
    c = _compact()
    idle = dict(state="idle", detail="")
    assert G.gate(c, _t(**idle, context_pct=None)).reason == "gated"
    assert G.gate(c, _t(**idle, context_pct=None), force=True).reason == "gated"  # requires
    assert "40%" in G.gate(c, _t(**idle, context_pct=40)).message
    assert G.gate(c, _t(**idle, context_pct=40), force=True) is None
    assert G.gate(c, _t(**idle, context_pct=80)) is None
    assert G.gate(c, _t(**idle, context_pct=80, has_context_channel=False)).reason == \
        "no-coverage"


def test_requires_unmet():
    a = _load(requires=["session"])
    assert G.gate(a, _t(session="")).reason == "requires-unmet"
    assert G.gate(a, _t(session="abc")) is None


def test_the_exit_ladder():
    assert [G.exit_code(o) for o in ("sent", "replied", "spawned", "vanished", "timeout",
                                     "error")] == [0, 0, 0, 3, 124, 1]
    assert G.exit_code("refused", "gated") == 4 and G.exit_code("refused", "locked") == 5
    assert G.exit_code("refused", "answered") == 6
    assert G.exit_code("exited", child_code=7) == 7
    assert G.worst_exit([("sent", None, 0), ("refused", "answered", 6)]) == 6
    assert G.worst_exit([("refused", "answered", 6), ("refused", "locked", 5)]) == 5
    results = [("sent", None, 0), ("refused", "locked", 5), ("refused", "gated", 4)]
    assert G.worst_exit(results) == 4
    assert G.worst_exit(results + [("vanished", None, 3)]) == 3
    assert G.worst_exit(results + [("error", None, 1), ("timeout", None, 124)]) == 1
    assert G.worst_exit([("sent", None, 0), ("refused", "locked", 5)]) == 5
    assert G.worst_exit([]) == 0


# ---------------------------------------------------------------- the keys line


def test_the_send_keys_line_types_text_literally():
    from tma.tmux.keys import send_line

    assert send_line("%3", ["1"]) == 'send-keys -t %3 -- "1"'
    assert send_line("%3", ["/compact", "Enter"]) == 'send-keys -t %3 -- "/compact" "Enter"'
    assert send_line("%3", ["{text}", "Enter"], 'a; "b" $HOME') == \
        'send-keys -t %3 -l -- "a; \\"b\\" \\$HOME" ; send-keys -t %3 -- "Enter"'
    with pytest.raises(ValueError):
        send_line("%3", ["{text}"])


def test_the_lock_lines():
    from tma.tmux import action_lock as L

    assert L.parse("123:ab:45:approve") == L.Lock(123, "ab", 45, "approve")
    assert L.parse("garbage") is None
    line = L.acquire_line("%1", "9:n:1:a", "5:o:2:b")
    assert "#{||:#{==:#{@agent_action},},#{==:#{@agent_action},5:o:2:b}}" in line
    with pytest.raises(ValueError):
        L.acquire_line("%1", "9:n,x}:1:a")


def test_an_answer_is_bound_to_its_episode():
    from types import SimpleNamespace

    from tma.core import codec
    from tma.runtime.act.fire import episode_of
    from tma.tmux import action_lock

    stamp = codec.Stamp(state="blocked", detail="permission", since=1767225600000)
    bare = SimpleNamespace(options={})
    asked = SimpleNamespace(options={"@agent_permission_request": "toolu_01:ab/c d"})
    assert episode_of(bare, stamp, "permission") == ("s1767225600000",)
    assert episode_of(bare, None, "permission") == ("s0",)
    names = episode_of(asked, stamp, "permission")
    rid = names[1]
    assert names[0] == "s1767225600000" and rid.startswith("r") and rid.isalnum()
    assert episode_of(asked, None, "permission") == ("s0", rid)
    assert episode_of(asked, stamp, "question") == ("s1767225600000",)  # another request lane
    line = action_lock.claim_line("%3", names, "00ff")
    assert "#{m:*-" + rid + "-*,#{@agent_answered}}" in line
    assert "#{m:*-s1767225600000-*,#{@agent_answered}}" in line
    assert f"-s1767225600000-{rid}-_00ff" in line
    # a claim made before the request id landed still names the episode afterwards
    first = action_lock.claim_value(("s1767225600000",), "aa")
    assert action_lock.claimed_by(first) & set(names)
    assert not action_lock.claimed_by(first) & {"s17672256000001"}  # not a prefix match
    with pytest.raises(ValueError):
        action_lock.claim_line("%3", ("s1;x",), "00ff")
