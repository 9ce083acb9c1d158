"""The broker's single-flight lock on a pane: `@agent_action = <expiry_ms>:<nonce>:<pid>:<name>`.

Acquired by a server-side conditional write (taken only when the option is empty, or
still holds exactly the expired lock of a dead holder the caller observed) and read back
in the same spawn, so of two racing `tma act` exactly one sees its own nonce. Released
only by its holder: the clearing write is conditional on the nonce.
"""

from __future__ import annotations

from tma.core.record import Record
from tma.tmux.adapter import Server, classify, quote

OPTION = "@agent_action"


class Lock(Record):
    expiry_ms: int = 0
    nonce: str = ""
    pid: int = 0
    name: str = ""

    @property
    def value(self) -> str:
        return f"{self.expiry_ms}:{self.nonce}:{self.pid}:{self.name}"


def parse(value: str) -> Lock | None:
    parts = value.split(":")
    if len(parts) != 4 or not parts[0].isdigit() or not parts[2].isdigit():
        return None
    return Lock(int(parts[0]), parts[1], int(parts[2]), parts[3])


def _safe(value: str) -> bool:
    # digits, hex, tokens and colons only: nothing that could end a format argument
    return all(c.isalnum() or c in ":_-" for c in value)


def acquire_line(pane_id: str, new: str, observed: str = "") -> str:
    if not (_safe(new) and _safe(observed)):
        raise ValueError("lock values are digits, hex, tokens and colons")
    free = "#{==:#{" + OPTION + "},}"
    cond = free if not observed else "#{||:" + free + ",#{==:#{" + OPTION + "}," + observed + "}}"
    fmt = "#{?" + cond + "," + new + ",#{" + OPTION + "}}"
    return (f"set-option -p -F -t {pane_id} {OPTION} {quote(fmt)} ; "
            f"display-message -p -t {pane_id} {quote('#{' + OPTION + '}')}")


def acquire(server: Server, pane_id: str, new: str, observed: str = "") -> str:
    """Try to take the lock; returns the value the pane holds afterwards (== new: won)."""
    out, err = server.source([acquire_line(pane_id, new, observed)])
    if err.strip():
        raise classify(err)
    return out.strip()


def release_line(pane_id: str, mine: str) -> str:
    if not _safe(mine):
        raise ValueError("lock values are digits, hex, tokens and colons")
    fmt = "#{?#{==:#{" + OPTION + "}," + mine + "},,#{" + OPTION + "}}"
    unset = f"set-option -p -u -t {pane_id} {OPTION}"
    return (f"set-option -p -F -t {pane_id} {OPTION} {quote(fmt)} ; "
            f"if-shell -F -t {pane_id} {quote('#{==:#{' + OPTION + '},}')} {quote(unset)}")


def release(server: Server, pane_id: str, mine: str) -> bool:
    """Clear the lock if it is still ours; False when the pane is gone or tmux refused."""
    _out, err = server.source([release_line(pane_id, mine)])
    return not err.strip()


# -- the answer claim: `@agent_answered = -<token>-<token>-_<nonce>`
#
# An answer (a key that replies to a prompt) is bound to its episode. Before typing, the
# broker claims the episode with one guarded write: it is set only when the option does not
# already name that episode, and read back in the same spawn; of two racing acts exactly
# one reads its own nonce back. The claim is never released: once an episode was answered,
# no other act types into it, whatever the screen shows meanwhile. A later episode's claim
# simply overwrites it. An episode has one or two names (tokens: when the pane became
# blocked, and the agent's request id once a hook stamps it); the claim records every name
# its act knew, and an episode is taken when ANY of its names is recorded, so a request id
# that lands between two acts does not make the same prompt look new. `#{m:}`, `#{||:}`
# and `#{?}` are in every release 3.2a..next.

ANSWERED = "@agent_answered"


def claim_value(tokens: tuple[str, ...], nonce: str) -> str:
    if not tokens or not all(t.isalnum() for t in tokens) or not nonce.isalnum():
        raise ValueError("an episode's names and a nonce are letters and digits")
    return "-" + "-".join(tokens) + "-_" + nonce


def claimed_by(value: str) -> frozenset[str]:
    """The episode names a stored claim records."""
    names, sep, _nonce = value.rpartition("_")
    return frozenset(t for t in names.split("-") if t) if sep else frozenset()


def claim_line(pane_id: str, tokens: tuple[str, ...], nonce: str) -> str:
    mine = claim_value(tokens, nonce)
    taken = ""
    for token in tokens:
        one = "#{m:*-" + token + "-*,#{" + ANSWERED + "}}"
        taken = one if not taken else "#{||:" + one + "," + taken + "}"
    fmt = "#{?" + taken + ",#{" + ANSWERED + "}," + mine + "}"
    return (f"set-option -p -F -t {pane_id} {ANSWERED} {quote(fmt)} ; "
            f"display-message -p -t {pane_id} {quote('#{' + ANSWERED + '}')}")


def claim(server: Server, pane_id: str, tokens: tuple[str, ...], nonce: str) -> bool:
    """Claim the episode's answer for this act: True when it is ours to type."""
    out, err = server.source([claim_line(pane_id, tokens, nonce)])
    if err.strip():
        raise classify(err)
    return out.strip() == claim_value(tokens, nonce)


def unclaim_line(pane_id: str, tokens: tuple[str, ...], nonce: str) -> str:
    mine = claim_value(tokens, nonce)
    fmt = "#{?#{==:#{" + ANSWERED + "}," + mine + "},,#{" + ANSWERED + "}}"
    return f"set-option -p -F -t {pane_id} {ANSWERED} {quote(fmt)}"


def unclaim(server: Server, pane_id: str, tokens: tuple[str, ...], nonce: str) -> None:
    """Give an episode's claim back when this act typed no answer after all (a menu whose
    cursor never reached the option): only while the stored claim is still this act's."""
    _out, err = server.source([unclaim_line(pane_id, tokens, nonce)])
    if err.strip():
        raise classify(err)
