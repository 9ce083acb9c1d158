"""The browsers paired with `tma web`: `web/devices.json` in tma's state dir (0600).

Pairing: `tma web pair` writes one pending code (a new one replaces the old): 8 letters
and digits from an alphabet without look-alikes, valid CODE_TTL_MS (10 minutes) and for
CODE_TRIES wrong guesses (5) whoever makes them; only its SHA-256 is stored. The page
trades it (`POST /api/pair`) for a random token (32 bytes) set as an HttpOnly cookie;
only the token's SHA-256 is stored, with the device's name and scopes. The code is
single-use: a right guess removes it.

Every request reads the file again, so `tma device revoke` and `grant` take effect on
the device's next request (a stream's next wake or keepalive). The scopes are `tma
serve`'s (tma.runtime.fleet.serve.SCOPES: read, act:answer, act:steer, act:always).

Writes happen under `web/devices.lock` and land by an atomic rename.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

#: How long a pairing code is good for, and how many wrong guesses void it.
CODE_TTL_MS = 10 * 60 * 1000
CODE_TRIES = 5
CODE_LEN = 8
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
#: A device name: a plain token, as a host's is.
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class DeviceError(Exception):
    """A refusal for the person (a bad name, no such device, a failed pairing)."""


@dataclass(frozen=True)
class Device:
    name: str
    scopes: tuple[str, ...]
    paired_at_ms: int


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def check_name(name: str) -> str:
    if not name or len(name) > 64 or not set(name) <= NAME_CHARS:
        raise DeviceError(f"bad device name {name!r}: letters, digits, '.', '_', '-' "
                          "(at most 64)")
    return name


class Store:
    def __init__(self, state_dir: str, clock: Callable[[], int] | None = None) -> None:
        self.dir = os.path.join(state_dir, "web")
        self.path = os.path.join(self.dir, "devices.json")
        self.clock = clock or (lambda: time.time_ns() // 1_000_000)

    # -- the file
    def _read(self) -> dict:
        try:
            with open(self.path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except FileNotFoundError:
            doc = {}
        except (OSError, ValueError) as exc:
            raise DeviceError(f"{self.path}: unreadable ({exc})") from None
        if not isinstance(doc, dict):
            raise DeviceError(f"{self.path}: not a JSON object")
        doc.setdefault("schema", 1)
        if not isinstance(doc.get("devices"), list):
            doc["devices"] = []
        return doc

    def _write(self, doc: dict) -> None:
        tmp = f"{self.path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, self.path)

    def _locked(self, change: Callable[[dict], object]) -> object:
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        lock = os.open(os.path.join(self.dir, "devices.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            doc = self._read()
            out = change(doc)
            self._write(doc)
            return out
        finally:
            os.close(lock)

    # -- pairing
    def new_code(self, name: str | None, scopes: tuple[str, ...]) -> tuple[str, int]:
        """A fresh pairing code (replacing any pending one) and when it expires (ms)."""
        if name is not None:
            check_name(name)
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LEN))
        expires = self.clock() + CODE_TTL_MS

        def change(doc: dict) -> None:
            doc["pairing"] = {"code_sha256": _sha(code), "name": name,
                              "scopes": list(scopes), "expires_ms": expires,
                              "tries_left": CODE_TRIES}

        self._locked(change)
        return code, expires

    def redeem(self, code: str) -> tuple[str, Device]:
        """Trade a pairing code for (token, device); DeviceError says why not. A wrong
        guess costs the pending code one try; the right one removes it."""
        now = self.clock()
        token = secrets.token_urlsafe(32)
        given = _sha(code.strip().upper())

        def change(doc: dict) -> tuple[str, Device] | str:
            pending = doc.get("pairing")
            if not isinstance(pending, dict):
                return "no pairing code is pending (run `tma web pair`)"
            if now >= int(pending.get("expires_ms", 0)):
                doc.pop("pairing", None)
                return "the pairing code has expired (run `tma web pair` again)"
            if not hmac.compare_digest(given, str(pending.get("code_sha256", ""))):
                left = int(pending.get("tries_left", 0)) - 1
                if left <= 0:
                    doc.pop("pairing", None)
                    return ("wrong pairing code; that was the last try, the code is void "
                            "(run `tma web pair` again)")
                pending["tries_left"] = left
                return "wrong pairing code"
            doc.pop("pairing", None)
            # a revoked device's name is never handed out again: the ledger's receipts
            # and the double-tap slots are kept by name, and a new browser would inherit them
            taken = {d.get("name") for d in doc["devices"]} | set(_retired(doc))
            name = pending.get("name") or _free_name(taken)
            doc["devices"] = [d for d in doc["devices"] if d.get("name") != name]
            scopes = tuple(str(s) for s in pending.get("scopes") or ("read",))
            doc["devices"].append({"name": name, "scopes": list(scopes),
                                   "token_sha256": _sha(token), "paired_at_ms": now})
            return token, Device(name, scopes, now)

        got = self._locked(change)
        if isinstance(got, str):
            raise DeviceError(got)
        return got  # type: ignore[return-value]

    # -- the devices
    def device_for(self, token: str | None) -> Device | None:
        """The paired device this token names (None: no such token, or revoked)."""
        if not token:
            return None
        want = _sha(token)
        for d in self._read()["devices"]:
            if hmac.compare_digest(want, str(d.get("token_sha256", ""))):
                return Device(str(d.get("name")), tuple(d.get("scopes") or ("read",)),
                              int(d.get("paired_at_ms") or 0))
        return None

    def list(self) -> list[Device]:
        return [Device(str(d.get("name")), tuple(d.get("scopes") or ("read",)),
                       int(d.get("paired_at_ms") or 0)) for d in self._read()["devices"]]

    def grant(self, name: str, scopes: tuple[str, ...]) -> Device:
        def change(doc: dict) -> Device | None:
            for d in doc["devices"]:
                if d.get("name") == name:
                    d["scopes"] = list(scopes)
                    return Device(name, scopes, int(d.get("paired_at_ms") or 0))
            return None

        got = self._locked(change)
        if got is None:
            raise DeviceError(f"no paired device named {name!r} (`tma device list`)")
        return got  # type: ignore[return-value]

    def revoke(self, name: str) -> None:
        def change(doc: dict) -> bool:
            before = len(doc["devices"])
            doc["devices"] = [d for d in doc["devices"] if d.get("name") != name]
            if len(doc["devices"]) == before:
                return False
            doc["retired"] = sorted(set(_retired(doc)) | {name})
            return True

        if not self._locked(change):
            raise DeviceError(f"no paired device named {name!r} (`tma device list`)")


def _retired(doc: dict) -> list[str]:
    got = doc.get("retired")
    return [str(n) for n in got] if isinstance(got, list) else []


def _free_name(taken: set) -> str:
    n = 1
    while f"browser-{n}" in taken:
        n += 1
    return f"browser-{n}"


# ------------------------------------------------------------------ the commands' words


def pair_text(session, name: str | None, scopes: tuple[str, ...], port: int) -> str:
    """`tma web pair`: a new code, and the URL that carries it in its fragment."""
    code, expires = Store(session.paths.state_dir).new_code(name, scopes)
    web = getattr(session.config, "web", None) or {}
    base = str(web.get("url") or f"http://127.0.0.1:{port}/").split("#")[0]
    minutes = max(1, round((expires - time.time() * 1000) / 60000))
    return (f"pairing code: {code}  (good for {minutes} minutes and {CODE_TRIES} tries; "
            f"scopes {', '.join(scopes)})\n"
            f"open: {base}#pair={code}\n"
            "(the code rides in the URL's fragment: a browser never sends it in a request "
            "line, so no log holds it)\n")


def command(session, sub: str, name: str | None, scopes: tuple[str, ...], *,
            json_out: bool = False) -> str:
    """`tma device list|grant|revoke`'s output (DeviceError: the refusal)."""
    store = Store(session.paths.state_dir)
    if sub == "list":
        found = store.list()
        if json_out:
            return json.dumps({"schema": 1, "devices": [
                {"name": d.name, "scopes": list(d.scopes), "paired_at_ms": d.paired_at_ms}
                for d in found]}) + "\n"
        if not found:
            return "no paired devices (tma web pair pairs one)\n"
        return "".join(
            f"{d.name}\t{','.join(d.scopes)}\tpaired "
            f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(d.paired_at_ms / 1000))}\n"
            for d in found)
    check_name(name or "")
    if sub == "grant":
        d = store.grant(name or "", scopes)
        return f"{d.name}: {', '.join(d.scopes)} (from its next request)\n"
    store.revoke(name or "")
    return f"revoked {name}: its next request is refused\n"
