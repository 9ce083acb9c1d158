"""The dispatch ledger: one file per host that makes a remote action fire at most once.

A device names each dispatch with a slot (its idempotency key). The slot is claimed in
this file before the action fires, under an exclusive lock that every serve process on
the host shares, and the receipt replaces the claim once the broker has answered. So a
retry after a dropped link (the same slot) gets the stored receipt back and fires
nothing, whichever serve process it reaches; and a claim whose process died before it
wrote the receipt reads back as `error` / `fired-unknown` (the action may have landed:
the device looks before trying a new slot), never as a licence to fire again.

The file is JSON lines, appended; the newest line for a slot wins. It is kept small:
lines older than KEEP_MS are dropped when the file passes MAX_BYTES.
"""

from __future__ import annotations

import fcntl
import json
import os

from tma.core import proto
from tma.runtime import procs

KEEP_MS = 7 * 24 * 3600 * 1000
MAX_BYTES = 1 << 20
CLAIMED = "claimed"  # the line a claim writes; never leaves this module as an outcome


class Ledger:
    def __init__(self, path: str) -> None:
        self.path = path

    def _open(self) -> int:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)

    def _lines(self, fd: int) -> dict[str, dict]:
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        out: dict[str, dict] = {}
        for raw in b"".join(chunks).split(b"\n"):
            try:
                doc = json.loads(raw)
            except ValueError:
                continue  # a torn last line (a writer killed mid-write) reads as absent
            if isinstance(doc, dict) and isinstance(doc.get("slot"), str):
                out[doc["slot"]] = doc
        return out

    @staticmethod
    def _append(fd: int, doc: dict) -> None:
        line = (json.dumps(doc, separators=(",", ":")) + "\n").encode()
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # a writer killed mid-line: never glue onto its fragment
        os.write(fd, line)

    def claim(self, slot: str, pane: str, action: str, device: str | None,
              now: int) -> proto.ReceiptRow | None:
        """Claim `slot` for this dispatch: None when it is ours to fire, else the receipt
        a repeat gets (cached)."""
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            seen = self._lines(fd)
            prior = seen.get(slot)
            if prior is not None and prior.get("outcome") == CLAIMED and _alive(prior):
                return proto.ReceiptRow(slot=slot, pane=pane, action=action,
                                        outcome="refused", reason="locked", exit_code=5,
                                        cached=True, device=device, at_ms=now)
            row = None if prior is None else _row(prior, cached=True)
            if row is not None:
                return row
            self._compact(fd, seen, now)
            self._append(fd, {"slot": slot, "pane": pane, "action": action,
                              "outcome": CLAIMED, "reason": None, "exit_code": 1,
                              "device": device, "at_ms": now, "pid": os.getpid()})
            return None
        finally:
            os.close(fd)

    def release(self, slot: str) -> None:
        """Give a claimed slot back (a refusal a retry can clear: `locked`)."""
        self._write({"slot": slot, "outcome": "released"})

    def finish(self, row: proto.ReceiptRow) -> None:
        self._write({"slot": row.slot, "pane": row.pane, "action": row.action,
                     "outcome": row.outcome, "reason": row.reason,
                     "exit_code": row.exit_code, "device": row.device, "at_ms": row.at_ms,
                     "message": row.message})

    def _write(self, doc: dict) -> None:
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._append(fd, doc)
        finally:
            os.close(fd)

    def query(self, slot: str | None = None, since_ms: int | None = None,
              ) -> list[proto.ReceiptRow]:
        """Receipts, oldest first: one slot's, or every one at or after `since_ms`."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            seen = self._lines(fd)
        finally:
            os.close(fd)
        rows = [_row(d, cached=True) for d in seen.values()
                if (slot is None or d["slot"] == slot)
                and (since_ms is None or int(d.get("at_ms") or 0) >= since_ms)]
        return sorted((r for r in rows if r is not None), key=lambda r: r.at_ms)

    def _compact(self, fd: int, seen: dict[str, dict], now: int) -> None:
        if os.fstat(fd).st_size < MAX_BYTES:
            return
        keep = [d for d in seen.values() if now - int(d.get("at_ms") or 0) < KEEP_MS]
        os.ftruncate(fd, 0)
        for doc in keep:
            self._append(fd, doc)


def _alive(doc: dict) -> bool:
    """Is the serve process that claimed this slot still firing it?"""
    pid = doc.get("pid")
    return isinstance(pid, int) and procs.running(pid)


def _row(doc: dict, cached: bool) -> proto.ReceiptRow | None:
    outcome = doc.get("outcome")
    if outcome == "released":
        return None
    reason = doc.get("reason")
    code = doc.get("exit_code")
    message = doc.get("message")
    if outcome == CLAIMED:  # claimed, never finished: the action may have landed
        outcome, reason, code, message = "error", "fired-unknown", 1, None
    return proto.ReceiptRow(
        slot=str(doc.get("slot", "")), pane=str(doc.get("pane", "")),
        action=str(doc.get("action", "")), outcome=str(outcome),
        reason=reason if isinstance(reason, str) else None,
        exit_code=code if isinstance(code, int) else 1, cached=cached,
        device=doc.get("device") if isinstance(doc.get("device"), str) else None,
        at_ms=int(doc.get("at_ms") or 0),
        message=message if isinstance(message, str) else None)
