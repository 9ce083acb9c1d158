"""Which prompt a blocked screen shows: the identity of a blocked episode.

A blocked episode is one prompt. `@agent_since` names it only while some reader sees
the pane leave blocked between two prompts: a prompt answered by hand and followed at
once by the next one (the next tool call's) keeps the first one's `since`, so an answer
bound to the first (a notification's Approve) would land on the second, which never
rang. The screen says which prompt stands: the manifest's `[dialog]` rules read the
tool and the command, file or arguments the dialog asks about (tma.core.card).

An identity is `<detail>:<digest>`:
  detail  the blocker rule's detail (permission, plan, question, trust ...);
  digest  16 hex digits of a sha256 over the tool and the target text with every
          whitespace character removed, so the same prompt repainted at another width
          (a resize, a zoom: rows wrap elsewhere) reads the same; "" when no target
          was read (no `[dialog]` rules, a dialog they do not cover, a target cut at the
          edge of a narrow pane).
The option rows are left out on purpose: their wording, and even how many are shown,
changes with the width (the captures of one prompt at 40 and 100 columns differ), and
nothing else on the screen (the transcript, a clock, a spinner, the cursor a person
moves between the options) is read at all.

Two readings are different prompts only on positive evidence (`changed`): both read,
and their details differ or both digests were read and differ. One side unread is the
same prompt, because a false new episode rings the person again for a prompt they have
already seen, and flags that turn out to be nothing teach people to ignore the flag.
The honest limit: two prompts asking the same tool about the same target back to back,
with no reader seeing the pane leave blocked between them, read as one.

Stored in the pane as `<since>:<identity>` (options.PROMPT): the identity of the
episode that began at `since`, so a value left by an earlier episode, or one whose
`since` another writer moved, names no episode and is never compared with.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from tma.core import states

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.core.card import ScreenAsk
    from tma.core.manifest import DialogRules
    from tma.core.rules import Screen

DIGEST_HEX = 16
FAILED = "failed"  # tma.core.card.FAILED: no target read (not imported: codec loads this)


def of_screen(screen: Screen, detail: str, rules: DialogRules | None) -> str:
    """The identity of the prompt on a screen whose blocker rule said `detail`: its
    visible rows (the last `height` lines of the capture, as the rules' `visible`
    region reads them) through the `[dialog]` extractor."""
    from tma.core import card
    from tma.core.rules import raw_lines, strip_ansi

    lines = raw_lines(strip_ansi(screen.body))
    if screen.height is not None and screen.height > 0:
        lines = lines[-screen.height:]
    ask = card.extract("", lines, rules) if rules is not None else None
    return identity(detail, ask)


def identity(detail: str, ask: ScreenAsk | None) -> str:
    """`<detail>:<digest>` of one extracted dialog (None when none was read)."""
    digest = ""
    if ask is not None and ask.input and ask.extraction != FAILED:
        text = "".join("".join(value.split()) for _key, value in ask.input)
        seed = "".join(ask.tool.split()) + "\0" + text
        digest = _sha256(seed.encode("utf-8", "replace"))[:DIGEST_HEX]
    return f"{states.safe_detail(detail)}:{digest}"


def _sha256(data: bytes) -> str:
    """The hex SHA-256 of data, from the interpreter's own implementation where it has
    one: hashlib loads OpenSSL's bindings first (~2.5 ms), once in every run that reads
    a dialog (a cold refresh meeting a blocked pane). The same digest either way."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12 on
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # 3.11
        except ImportError:  # built without them: OpenSSL's
            from hashlib import sha256
    digest: str = sha256(data).hexdigest()
    return digest


def _parts(value: str) -> tuple[str, str] | None:
    detail, sep, digest = value.partition(":")
    if not sep or (detail and not states.is_safe_token(detail)):
        return None
    if digest and (len(digest) != DIGEST_HEX or not all(c in "0123456789abcdef" for c in digest)):
        return None
    return detail, digest


def valid(ident: str) -> bool:
    """An identity as `identity` builds it (what may be written into a format)."""
    return _parts(ident) is not None


def names_target(ident: str) -> bool:
    """Whether an identity holds a digest (a dialog's target was read), not a detail
    alone."""
    parts = _parts(ident)
    return parts is not None and bool(parts[1])


def changed(old: str, new: str) -> bool:
    """Whether two identities are different prompts (see the module's note): only when
    both were read, and then when the details differ or both digests do."""
    a, b = _parts(old), _parts(new)
    if a is None or b is None:
        return False
    if a[0] != b[0]:
        return True
    return bool(a[1]) and bool(b[1]) and a[1] != b[1]


def stored(value: str, since: int) -> str:
    """The identity an option value records for the episode that began at `since`
    ("" when it records another episode's, or cannot be read)."""
    at, sep, ident = value.partition(":")
    if not sep or not at.isdigit() or int(at) != since or since <= 0:
        return ""
    return ident if valid(ident) else ""


def value(since: int, ident: str) -> str:
    """The option value binding `ident` to the episode that began at `since`."""
    return f"{int(since)}:{ident}"
