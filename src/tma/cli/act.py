"""`tma act approve|deny --pane ID`: answer a pending permission prompt.

The minimal verdict side of the hook tier (a later issue generalises actions): for a
Claude pane whose PermissionRequest hook is holding, the verdict goes over the hook
lane and Claude runs or refuses the tool with no keystroke; otherwise the agent's own
keys from its manifest's [keys] table are sent to the pane.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec

EXIT_GATED = 4
EXIT_VANISHED = 3


def _holder_alive(raw: str) -> bool:
    from tma.runtime.procs import alive

    return raw.isdigit() and alive(int(raw))


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("act", argv)
    args.pane = args.pane or common.env_pane()
    if not args.pane:
        raise common.UsageError("no pane to act on: pass --pane %N, or run tma act inside "
                                "a tmux pane")
    cfg = common.load_config(g)
    common.report_manifests(g, cfg)
    from tma.core import codec
    from tma.tmux import read, write
    from tma.tmux.adapter import NoServer, TmuxError

    server = common.server(g, cfg)
    try:
        panes = read.session_panes(server, args.pane)
    except NoServer:
        raise  # cli/main.py: exit 1
    except TmuxError:
        return _result(args, "vanished", EXIT_VANISHED, None, _gone(args))
    pane = next((x for x in panes if x.pane_id == args.pane), None)
    if pane is None:
        return _result(args, "vanished", EXIT_VANISHED, None, _gone(args))
    try:
        stamp = codec.decode(pane.options)
    except codec.DecodeError:
        stamp = None
    if stamp is None or stamp.state != "blocked" or stamp.detail != "permission":
        return _result(args, "refused", EXIT_GATED, "gated", not_at_a_prompt(args, stamp))
    opts = pane.options
    request = opts.get("@agent_permission_request", "")
    if stamp.name == "claude" and request and _holder_alive(opts.get("@tma_reply_holder", "")):
        word = "allow" if args.action == "approve" else "deny"
        server.source([write.set_plain(args.pane, "@tma_reply_verdict", f"{request} {word}")])
        return _result(args, "replied", 0, None,
                       f"replied `{args.action}` to {args.pane} over the hook lane")
    mset = common.load_manifests(g, cfg)
    manifest = mset.get(stamp.name)
    keys = manifest.keys.get(args.action) if manifest is not None else None
    if not keys:
        return _result(args, "refused", EXIT_GATED, "no-coverage",
                       f"{stamp.name} on {args.pane} is at a permission prompt, but its "
                       f"manifest lists no `{args.action}` keys ([keys] table): tma cannot "
                       "answer it, answer in the pane")
    from tma.tmux import keys as keys_mod

    try:
        keys_mod.send(server, args.pane, keys)
    except TmuxError:
        return _result(args, "vanished", EXIT_VANISHED, None, _gone(args))
    return _result(args, "sent", 0, None, f"sent `{args.action}` to {args.pane}")


def _gone(args) -> str:
    return f"no pane {args.pane} (it closed, or never existed): nothing to {args.action}"


def not_at_a_prompt(args, stamp) -> str:
    """Why a pane is not answerable, in words: its state, and what the action needs."""
    pane, verb = args.pane, args.action
    if stamp is None:
        return f"{pane} carries no agent state (tma sees no agent there): nothing to {verb}"
    if stamp.state == "blocked":
        on = f"on {stamp.detail}" if stamp.detail else "for a reason tma cannot name"
        return (f"{pane} is blocked {on}, not at a permission prompt: `{verb}` answers "
                "only permission prompts")
    word = "idle (its turn is done)" if stamp.state == "idle" and stamp.attention else \
        stamp.state
    return f"{pane} is {word}, not at a permission prompt: nothing to {verb}"


def _result(args, outcome: str, code: int, reason: str | None, message: str) -> int:
    """The result: `reason` is the machine word (--json), `message` the sentence (stderr)."""
    if args.json:
        import json

        sys.stdout.write(json.dumps({"schema": 1, "action": args.action, "pane": args.pane,
                                     "outcome": outcome, "exit_code": code,
                                     "reason": reason, "message": message}) + "\n")
    common.err(f"tma: {message}" + (f" (exit {code})" if code else ""))
    return code
