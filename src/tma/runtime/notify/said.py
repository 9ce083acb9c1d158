"""The agent's last sentence on a notification, where `[notify] last_sentence` opts in.

Read from the pane's own transcript (tma.runtime.transcript: the file the agent's hook
named, else its session's file; never a guess), at the moment the notification fires:
the last sentence of the newest assistant text (tma.core.transcript.text.last_sentence),
at most SENTENCE_MAX characters, one line, no control characters. Best effort: a pane
with no transcript, a reader that fails, a transcript with no answer yet each give no
sentence, and the notification rings without one.

Where it goes is the sinks' decision: this machine's (the message line, the desktop
notification, the log line and the command's payload) carry it once `[notify]` opts
in; a push sink (ntfy, the webhook) sends it off the machine only when its own table
opts in too (tma.runtime.notify.gate.push). A fleet host's pane gets none: its
transcript is on the host.

The hook path imports it only when the config opts in: it pays for the transcript room
only then.
"""

from __future__ import annotations

from tma.core.transcript.text import last_sentence
from tma.runtime.notify import gate as notify_gate
from tma.runtime.notify.note import Note
from tma.runtime.transcript import locate, read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: The most characters of the sentence a notification carries.
SENTENCE_MAX = 200


def sentence(agent: str, pane, session: str, env: Mapping[str, str]) -> str:
    """The last sentence the agent on `pane` (a tma.tmux.read Pane) said in its
    transcript, "" when there is none to read."""
    opts = pane.options
    target = locate.Target(pane.pane_id, agent, session or opts.get("@agent_session", ""),
                           pane.current_path, opts.get("@agent_transcript", ""))
    try:
        texts = read.last_answer(target, env, 1)
    except Exception:  # noqa: BLE001 - a ring never fails on the transcript
        return ""
    return last_sentence(texts[-1] if texts else "", SENTENCE_MAX)


def fill(cfg, note: Note, pane, env: Mapping[str, str]) -> Note:
    """`note` with the agent's last sentence where `[notify] last_sentence` opts in (and
    the note is a local pane's): else `note` itself, nothing read."""
    if not notify_gate.last_sentence(cfg) or note.host or not note.agent:
        return note
    said = sentence(note.agent, pane, note.session or "", env)
    return note.replace(last_sentence=said) if said else note
