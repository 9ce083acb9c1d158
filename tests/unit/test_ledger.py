"""The dispatch ledger: a slot fires at most once, whichever process asks and when."""

from __future__ import annotations

import multiprocessing
import os

from tma.runtime.fleet.ledger import Ledger


def _claim(path: str, n: int, out) -> None:
    got = Ledger(path).claim("slot-1", "%1", "approve", f"dev{n}", 1000 + n)
    out.put((n, got is None))


def test_concurrent_claims_of_one_slot_fire_once(tmp_path):
    path = str(tmp_path / "serve" / "ledger.jsonl")
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_claim, args=(path, n, q)) for n in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(10)
    winners = [n for n, ours in (q.get(timeout=5) for _ in procs) if ours]
    assert len(winners) == 1
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


def test_receipt_replaces_the_claim_and_repeats_are_cached(tmp_path):
    from tma.core import proto

    led = Ledger(str(tmp_path / "l.jsonl"))
    assert led.claim("a", "%1", "approve", None, 5) is None
    row = proto.ReceiptRow("a", "%1", "approve", "sent", None, 0, False, None, 6)
    led.finish(row)
    again = led.claim("a", "%1", "approve", None, 7)
    assert again is not None and (again.outcome, again.cached) == ("sent", True)
    assert [r.slot for r in led.query(since_ms=0)] == ["a"]
    assert led.query(slot="b") == []


def test_a_claim_whose_process_died_reads_as_fired_unknown(tmp_path):
    path = str(tmp_path / "l.jsonl")
    pid = os.fork()
    if pid == 0:  # claims, then dies before any receipt
        Ledger(path).claim("z", "%2", "deny", None, 1)
        os._exit(0)
    os.waitpid(pid, 0)
    got = Ledger(path).claim("z", "%2", "deny", None, 2)
    assert got is not None and (got.outcome, got.reason) == ("error", "fired-unknown")


def test_a_live_claim_is_locked_and_a_released_slot_fires_again(tmp_path):
    led = Ledger(str(tmp_path / "l.jsonl"))
    assert led.claim("q", "%3", "approve", None, 1) is None  # this process holds it
    busy = led.claim("q", "%3", "approve", None, 2)
    assert busy is not None and (busy.outcome, busy.reason, busy.exit_code) == (
        "refused", "locked", 5)
    led.release("q")
    assert led.claim("q", "%3", "approve", None, 3) is None


def test_a_torn_line_is_ignored(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_bytes(b'{"slot":"x","outcome":"sent","exit_code":0,"at_ms":1}\n{"slot":"y","out')
    led = Ledger(str(path))
    assert [r.slot for r in led.query(since_ms=0)] == ["x"]
    assert led.claim("w", "%1", "deny", None, 2) is None  # not glued onto the fragment
    assert led.claim("w", "%1", "deny", None, 3).reason == "locked"
