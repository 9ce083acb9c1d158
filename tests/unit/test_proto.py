"""The remote wire protocol's frames (tma.core.proto) against the golden vectors.

The vectors are read in place from the shared reference folder (they are the upstream
project's, not ours to copy into the tree); the vector tests skip when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from tma.core import proto as P

VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "proto" / "vectors"
ABSENT = f"protocol vectors not found at {VECTORS} (shared reference folder absent)"

#: vector file -> (direction, frame type of each frame in it)
EXPECTED: dict[str, tuple[P.Direction, type[P.Frame]]] = {
    "ack.json": (P.RESPONSE, P.Ack),
    "card-informational.json": (P.RESPONSE, P.InformationalCard),
    "card-none.json": (P.RESPONSE, P.NoCard),
    "card-permission-api.json": (P.RESPONSE, P.PermissionCard),
    "card-permission-cursor.json": (P.RESPONSE, P.PermissionCard),
    "card-permission-hook.json": (P.RESPONSE, P.PermissionCard),
    "card-permission-screen.json": (P.RESPONSE, P.PermissionCard),
    "card-question.json": (P.RESPONSE, P.QuestionCard),
    "card-request.json": (P.REQUEST, P.CardRequest),
    "dispatch-answers.json": (P.REQUEST, P.Dispatch),
    "dispatch-keys.json": (P.REQUEST, P.Dispatch),
    "dispatch-text.json": (P.REQUEST, P.Dispatch),
    "edge.json": (P.RESPONSE, P.Edge),
    "errors.json": (P.RESPONSE, P.Error),
    "event-request.json": (P.REQUEST, P.EventRequest),
    "events.json": (P.RESPONSE, P.Event),
    "hello-request.json": (P.REQUEST, P.HelloRequest),
    "hello-response.json": (P.RESPONSE, P.HelloResponse),
    "receipt.json": (P.RESPONSE, P.Receipt),
    "receipts-request.json": (P.REQUEST, P.ReceiptsRequest),
    "receipts.json": (P.RESPONSE, P.Receipts),
    "snapshot-request.json": (P.REQUEST, P.SnapshotRequest),
    "snapshot.json": (P.RESPONSE, P.Snapshot),
    "subscribe.json": (P.REQUEST, P.Subscribe),
    "window-request.json": (P.REQUEST, P.WindowRequest),
    "window.json": (P.RESPONSE, P.Window),
}
#: payloads beside the vectors that are not frames (no envelope)
NOT_FRAMES = {"notify.json", "notify-MAXIMAL.json"}


def _vectors() -> Path:
    if not VECTORS.is_dir():
        pytest.skip(ABSENT)
    return VECTORS


def wire(doc: object) -> str:
    """A vector's frame in its compact wire form (the vectors are pure ASCII, so the
    choice of escaping does not change them; the wire itself is UTF-8)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def frames_of(name: str) -> list[dict]:
    doc = json.loads((_vectors() / name).read_text(encoding="utf-8"))
    return doc if isinstance(doc, list) else [doc]


def test_every_vector_has_an_expectation():
    names = {p.name for p in _vectors().glob("*.json")}
    assert names == set(EXPECTED) | NOT_FRAMES


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_vector_parses_into_its_frame_and_writes_back_byte_for_byte(name):
    direction, kind = EXPECTED[name]
    for doc in frames_of(name):
        line = wire(doc)
        frame = P.parse_line(line, direction)
        assert type(frame) is kind
        assert frame.id == doc["id"]
        assert P.dumps(frame) == line  # same keys, same order, same values
        assert P.encode(frame) == (line + "\n").encode()
        # bytes in, with the newline, parse the same
        assert P.parse_line((line + "\n").encode(), direction) == frame


def test_the_vectors_pin_what_the_records_carry():
    snap = P.parse_line(wire(frames_of("snapshot.json")[0]), P.RESPONSE)
    assert isinstance(snap, P.Snapshot)
    rows = {r.pane: r for r in snap.agents}
    assert rows["%9"].detail == "xxxxxxxxxxxx"  # an unknown detail token is kept
    assert rows["%10"].quota is None and rows["%10"].session is None
    assert rows["%1"].quota == P.Quota(61, "5h", 1757048400000)
    assert rows["%1"].cost_usd == 0.25
    edges = [P.parse_line(wire(d), P.RESPONSE) for d in frames_of("edge.json")]
    assert [(e.from_, e.to) for e in edges if isinstance(e, P.Edge)] == [
        ("working", "blocked"), ("", "idle"), ("idle", "")]
    cursor = P.parse_line(wire(frames_of("card-permission-cursor.json")[0]), P.RESPONSE)
    assert isinstance(cursor, P.PermissionCard)
    assert [o.option_id for o in cursor.options] == [None] * 4
    assert cursor.options[2].kind == "xxxxxxxxxxxx"  # unknown option kind kept
    old = P.parse_line(wire(frames_of("dispatch-text.json")[0]), P.REQUEST)
    assert isinstance(old, P.Dispatch)
    assert old.device is None and old.binder == P.Binder(1757030400000)
    codes = [P.parse_line(wire(d), P.RESPONSE) for d in frames_of("errors.json")]
    assert "xxxxxxxxxxxx" in {e.code for e in codes if isinstance(e, P.Error)}


def test_the_notification_payloads_are_not_frames():
    for name in sorted(NOT_FRAMES):
        with pytest.raises(P.ProtoError) as e:
            P.parse_line(wire(frames_of(name)[0]), P.RESPONSE)
        assert e.value.code == P.BAD_REQUEST


# --- input limits ------------------------------------------------------------------------

HELLO = '{"schema":1,"id":"1","t":"hello","app":"a","app_version":"1","device":"d"}'


def _refused(line: bytes | str, direction: P.Direction = P.REQUEST) -> P.ProtoError:
    with pytest.raises(P.ProtoError) as e:
        P.parse_line(line, direction)
    return e.value


def test_a_line_at_the_cap_is_read_and_one_byte_more_is_refused():
    pad = P.MAX_LINE_BYTES - len(HELLO)
    at_cap = HELLO[:-1] + ',"x":"' + "y" * (pad - 7) + '"}'
    assert len(at_cap.encode()) == P.MAX_LINE_BYTES
    assert isinstance(P.parse_line(at_cap + "\n", P.REQUEST), P.HelloRequest)
    over = at_cap[:-2] + 'y"}'
    err = _refused(over)
    assert err.code == P.BAD_REQUEST and "longer" in err.message
    assert err.frame() == P.Error("0", P.BAD_REQUEST, err.message)


def test_invalid_utf8_is_a_bad_request():
    err = _refused(HELLO.replace('"d"', '"\xff"').encode("latin-1"))
    assert (err.code, err.message) == (P.BAD_REQUEST, "line is not UTF-8")
    assert _refused(HELLO.replace('"d"', '"\ud800"')).code == P.BAD_REQUEST  # lone surrogate
    assert _refused(HELLO.replace('"d"', '"\\ud800"')).code == P.BAD_REQUEST  # escaped one


@pytest.mark.parametrize("line", [
    HELLO[:30],  # a fragment of a frame
    "",
    "[1,2]",
    '"hello"',
    HELLO[:-1] + ',"app":"twice"}',  # a duplicated key
    HELLO.replace('"d"', "NaN"),
])
def test_a_line_that_is_not_one_json_object_is_a_bad_request(line):
    assert _refused(line).code == P.BAD_REQUEST


def test_an_unknown_t_is_a_bad_request_that_keeps_the_id():
    err = _refused(HELLO.replace('"t":"hello"', '"t":"teleport"'))
    assert (err.code, err.id) == (P.BAD_REQUEST, "1")
    assert "teleport" in err.message
    # a response type is not a request
    assert _refused('{"schema":1,"id":"2","t":"ack"}').code == P.BAD_REQUEST
    assert isinstance(P.parse_line('{"schema":1,"id":"2","t":"ack"}', P.RESPONSE), P.Ack)


def test_schema_2_is_unsupported_before_its_shape_is_looked_at():
    err = _refused('{"schema":2,"id":"7","t":"whatever-comes-next"}')
    assert (err.code, err.id) == (P.UNSUPPORTED_SCHEMA, "7")
    assert err.frame() == P.Error("7", P.UNSUPPORTED_SCHEMA, err.message)
    assert _refused('{"id":"7","t":"hello"}').code == P.BAD_REQUEST  # no schema at all
    assert _refused('{"schema":"1","id":"7","t":"hello"}').code == P.BAD_REQUEST
    assert _refused('{"schema":true,"id":"7","t":"hello"}').code == P.BAD_REQUEST


@pytest.mark.parametrize("line", [
    '{"schema":1,"id":1,"t":"card","pane":"%1"}',  # id not a string
    '{"schema":1,"id":"1","t":"card"}',  # pane missing
    '{"schema":1,"id":"1","t":"card","pane":7}',
    '{"schema":1,"id":"1","t":"subscribe","events":"yes"}',
    '{"schema":1,"id":"1","t":"snapshot","selector":{"state":["asleep"]}}',
    '{"schema":1,"id":"1","t":"receipts"}',  # neither slot nor since_ms
    '{"schema":1,"id":"1","t":"dispatch","slot":"s","host":"h","pane":"%1","action":"answer",'
    '"binder":{"expect_episode_ms":0},"answers":["not","nested"]}',
    '{"schema":1,"id":"1","t":"window","pane":"%1","last":1.5}',
])
def test_a_frame_of_the_wrong_shape_is_a_bad_request(line):
    assert _refused(line).code == P.BAD_REQUEST


def test_the_state_set_is_closed_and_details_are_open():
    row = _row(state="blocked", detail="a-detail-from-the-future")
    snap = P.Snapshot("2", (row,))
    assert P.parse_line(P.dumps(snap), P.RESPONSE) == snap
    bad = P.dumps(P.Snapshot("2", (_row(state="asleep"),)))
    assert _refused(bad, P.RESPONSE).code == P.BAD_REQUEST
    edge = P.dumps(P.Edge("3", 1, "%1", "claude", "done", "idle", None, "s:1.0", None, None))
    assert _refused(edge, P.RESPONSE).code == P.BAD_REQUEST


def test_unknown_keys_are_ignored_and_dropped():
    frame = P.parse_line('{"schema":1,"id":"4","t":"card","pane":"%1","later":[1]}', P.REQUEST)
    assert P.dumps(frame) == '{"schema":1,"id":"4","t":"card","pane":"%1"}'


def test_absent_request_fields_are_left_out_and_host_nulls_kept():
    assert P.dumps(P.SnapshotRequest("2")) == '{"schema":1,"id":"2","t":"snapshot"}'
    assert P.dumps(P.WindowRequest("7", "%1", last=50)) == \
        '{"schema":1,"id":"7","t":"window","pane":"%1","last":50}'
    assert P.dumps(P.SnapshotRequest("2", P.Selector(agent="codex"))) == \
        '{"schema":1,"id":"2","t":"snapshot","selector":{"agent":"codex"}}'
    edge = P.Edge("3", 5, "%2", "codex", "", "idle", None, "s:1.1", None, None)
    assert P.dumps(edge).endswith('"detail":null,"locator":"s:1.1","repo":null,"branch":null}')
    # a stream of many hosts' rows names each edge's host; serve's edges leave it out
    assert P.dumps(edge.replace(host="devbox")).endswith('"branch":null,"host":"devbox"}')


def test_non_ascii_travels_as_utf8_and_nan_is_refused():
    err = P.Error("1", P.INTERNAL, "l'hôte a échoué ✗")
    line = P.dumps(err)
    assert "é" in line and "\\u" not in line
    assert P.parse_line(line.encode(), P.RESPONSE) == err
    with pytest.raises(ValueError):
        P.dumps(P.Snapshot("2", (_row(cost_usd=float("nan")),)))


def test_window_and_event_are_served_and_unsupported_still_says_what():
    req = P.parse_line('{"schema":1,"id":"7","t":"window","pane":"%1","last":200}', P.REQUEST)
    assert isinstance(req, P.WindowRequest) and req.T not in P.UNSUPPORTED_REQUESTS
    assert P.UNSUPPORTED_REQUESTS == frozenset()
    assert P.unsupported(req) == P.Error("7", P.UNSUPPORTED, "this host does not serve 'window' yet")


def test_an_unknown_event_kind_keeps_its_keys_in_order():
    line = ('{"schema":1,"id":"8","t":"event","cursor":"c","kind":"hologram","z":1,"a":[2],'
            '"ts":null,"preview":null,"body":{"kind":"text","text":"hi"}}')
    frame = P.parse_line(line, P.RESPONSE)
    assert isinstance(frame, P.Event) and frame.header.data == {"z": 1, "a": [2]}
    assert P.dumps(frame) == line


# --- framing -----------------------------------------------------------------------------


def test_the_splitter_yields_lines_skips_an_overlong_one_and_drops_the_fragment():
    s = P.LineSplitter(limit=8)
    assert s.feed(b"abc\nde") == [b"abc"]
    assert s.feed(b"f\n") == [b"def"]
    out = s.feed(b"0123456789")  # over the cap before its newline arrives: refused now
    assert len(out) == 1 and isinstance(out[0], P.ProtoError) and out[0].code == P.BAD_REQUEST
    assert s.feed(b"more of it\nok\n") == [b"ok"]  # the rest of it skipped up to its newline
    over = s.feed(b"123456789\n")  # over the cap with its newline in the same chunk
    assert len(over) == 1 and isinstance(over[0], P.ProtoError)
    assert s.feed(b"tail") == [] and s.pending == b"tail"  # a fragment is never a frame


# --- hypothesis round trips ----------------------------------------------------------------

text = st.text(max_size=12)
opt_text = st.none() | text
ints = st.integers(min_value=0, max_value=2**64 - 1)
opt_ints = st.none() | ints
panes = st.integers(min_value=0, max_value=999_999_999).map(lambda n: f"%{n}")
rows = st.builds(
    P.FleetRow,
    pane=panes, agent=text, state=st.sampled_from(sorted(P.STATES)), detail=opt_text,
    since=ints, since_ms=ints, episode_ms=ints, locator=text, attention=st.booleans(),
    done=st.booleans(), session=opt_text, transcript=opt_text, permission_request=opt_text,
    stamped_at_ms=opt_ints, context=opt_ints, context_at_ms=opt_ints, muted=st.booleans(),
    tokens=opt_ints,
    quota=st.none() | st.builds(P.Quota, pct=ints, window=text, resets_at_ms=opt_ints),
    cost_usd=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    repo=opt_text, branch=opt_text, worktree=st.none() | st.booleans(), pending_tool=opt_text,
    pending_call=opt_text, pending_summary=opt_text, server=text, host=text,
    stale=st.none() | st.booleans())
edge_states = st.sampled_from(sorted(P.EDGE_STATES))
edges = st.builds(P.Edge, id=text, at_ms=ints, pane=panes, agent=text, from_=edge_states,
                  to=edge_states, detail=opt_text, locator=text, repo=opt_text, branch=opt_text,
                  host=opt_text)
receipt_rows = st.builds(P.ReceiptRow, slot=text, pane=panes, action=text, outcome=text,
                         reason=opt_text, exit_code=st.integers(-255, 255),
                         cached=st.booleans(), device=opt_text, at_ms=ints,
                         message=opt_text)


def _row(**changes: object) -> P.FleetRow:
    base = P.FleetRow("%1", "claude", "idle", None, 1, 1000, 1000, "s:1.0", False, False,
                      None, None, None, None, None, None, False, None, None, None, None, None,
                      None, None, None, None, "/tmp/tmux", "h")
    return base.replace(**changes)


@settings(max_examples=60, deadline=None)
@given(st.lists(rows, max_size=3), text)
def test_fleet_rows_round_trip(agents, id_):
    frame = P.Snapshot(id_, tuple(agents))
    line = P.dumps(frame)
    assert "\n" not in line
    assert P.parse_line(line, P.RESPONSE) == frame
    assert list(json.loads(line)) == ["schema", "id", "t", "agents"]
    # `stale` is a later, optional key: absent when None, so a row without it is byte for
    # byte what a writer of the first schema 1 wrote
    assert [("stale" in r) for r in json.loads(line)["agents"]] == [
        r.stale is not None for r in agents]


@settings(max_examples=60, deadline=None)
@given(edges)
def test_edges_round_trip(edge):
    assert P.parse_line(P.dumps(edge), P.RESPONSE) == edge


@settings(max_examples=60, deadline=None)
@given(receipt_rows, text, st.lists(receipt_rows, max_size=3))
def test_receipts_round_trip(row, id_, more):
    one = P.Receipt(id_, row)
    assert P.parse_line(P.dumps(one), P.RESPONSE) == one
    assert ("device" in json.loads(P.dumps(one))) == (row.device is not None)
    # the host's sentence is a later, optional key: absent when there is none, so a
    # receipt without it is byte for byte what a reader of the first schema 1 wrote
    assert ("message" in json.loads(P.dumps(one))) == (row.message is not None)
    many = P.Receipts(id_, tuple(more))
    assert P.parse_line(P.encode(many), P.RESPONSE) == many


# --- the JSON Schema of what serve sends ---------------------------------------------------

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "proto.schema.json"

#: frame type -> its $defs entry in schemas/proto.schema.json
DEFS = {P.HelloResponse: "hello", P.Snapshot: "snapshot", P.Ack: "ack", P.Edge: "edge",
        P.PermissionCard: "card_permission", P.QuestionCard: "card_question",
        P.InformationalCard: "card_informational", P.NoCard: "card_none",
        P.Receipt: "receipt", P.Receipts: "receipts", P.Window: "window", P.Event: "event",
        P.Error: "error"}


def _validator(entry: str | None = None):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    if entry is not None:
        schema = {**schema, "oneOf": [{"$ref": f"#/$defs/{entry}"}]}
    return jsonschema.Draft202012Validator(schema)


def test_every_host_vector_validates_against_its_frame_schema():
    for name, (direction, kind) in sorted(EXPECTED.items()):
        if direction != P.RESPONSE or kind not in DEFS:
            continue
        for doc in frames_of(name):
            _validator(DEFS[kind]).validate(doc)
            _validator().validate(doc)  # and the root takes exactly one frame


def test_the_schema_names_every_frame_serve_sends_and_nothing_else():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert [r["$ref"].rsplit("/", 1)[1] for r in schema["oneOf"]] == list(DEFS.values())
    # requests are not what serve sends
    hello_req = '{"schema":1,"id":"1","t":"hello","app":"a","app_version":"1","device":"d"}'
    assert not _validator().is_valid(json.loads(hello_req))


@settings(max_examples=40, deadline=None)
@given(st.lists(rows, max_size=2), edges, receipt_rows, st.lists(receipt_rows, max_size=2))
def test_built_frames_validate(agents, edge, row, more):
    check = _validator()
    built = [
        P.HelloResponse("1", "host", "0.9.0", 2000, ("read", "act:answer")),
        P.Snapshot("2", tuple(agents)), P.Ack("3"), edge, P.Receipt("5", row),
        P.Receipts("6", tuple(more)), P.NoCard("4"),
        P.InformationalCard("4", "trust", "Trust this folder?"),
        P.PermissionCard("4", "%1", "claude", "hook",
                         (P.CardOption("allow-once", "Yes", "y"),
                          P.CardOption("reject-once", "No")),
                         "exact", None, P.Binder(0)),
        P.QuestionCard("4", "%1", "opencode", "r1",
                       (P.Question("Which?", "pick", (P.QuestionOption("a", ""),), False, True),),
                       P.Binder(7, "req")),
        P.Error("0", P.TOO_MANY_CONNECTIONS, "4 open"),
        P.Window("7", "%1", "claude", None, None, False, 0, ()),
        P.Window("7", "%1", "claude", P.SessionMeta("claude", "s", "/w", "2.1", "m"),
                 "t1.1.2.3.4.0", True, 1,
                 (P.EventHeader("t1.1.2.3.4.0", "unknown", {"type_name": "x"}, None, None, None),
                  P.EventHeader("t1.1.2.3.5.0", "hologram", {"z": 1}, "2026", "hi", None))),
        P.Event("8", P.EventHeader("t1.1.2.3.4.0", "assistant_text", {"bytes": 2}, None, "hi",
                                   P.EventBody("text", "hi\nthere"))),
    ]
    for frame in built:
        check.validate(json.loads(P.dumps(frame)))
    # a header missing its kind's keys, or a window carrying a body, is not a frame
    bad = json.loads(P.dumps(built[-1]))
    del bad["bytes"]
    assert not check.is_valid(bad)
    bad = json.loads(P.dumps(built[-2]))
    bad["events"][0]["body"] = {"kind": "text", "text": "x"}
    assert not check.is_valid(bad)


def test_a_receipt_carries_the_hosts_sentence_after_its_pinned_keys():
    row = P.ReceiptRow("tma-1", "%3", "approve", "refused", "gated", 4, False, "laptop", 7,
                       "%3 is working, not at a permission prompt")
    line = P.dumps(P.Receipt("9", row))
    assert list(json.loads(line))[3:] == ["slot", "pane", "action", "outcome", "reason",
                                          "exit_code", "cached", "device", "at_ms", "message"]
    assert P.parse_line(line, P.RESPONSE).receipt.message == row.message
    _validator("receipt").validate(json.loads(line))
    _validator("receipts").validate(json.loads(P.dumps(P.Receipts("9", (row,)))))


def test_a_stale_fleet_row_says_so_after_its_pinned_keys():
    live = json.loads(P.dumps(P.Snapshot("9", (_row(),))))["agents"][0]
    assert "stale" not in live and list(live)[-2:] == ["server", "host"]
    line = P.dumps(P.Snapshot("9", (_row(stale=True),)))
    doc = json.loads(line)
    assert list(doc["agents"][0]) == [*live, "stale"] and doc["agents"][0]["stale"] is True
    assert P.parse_line(line, P.RESPONSE).agents[0].stale is True
    _validator("snapshot").validate(doc)
    doc["agents"][0]["stale"] = "yes"
    assert not _validator("snapshot").is_valid(doc)
    # a reader of the first schema 1 took the row without it: it reads as None
    assert P.parse_line(P.dumps(P.Snapshot("9", (_row(),))), P.RESPONSE).agents[0].stale is None
