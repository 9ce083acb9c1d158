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
        raise common.UsageError("no target: pass --pane (or run inside tmux)")
    cfg = common.load_config(g)
    from tma.core import codec
    from tma.runtime import manifests
    from tma.tmux import read, write
    from tma.tmux.adapter import NoServer, TmuxError

    server = common.server(g, cfg)
    try:
        panes = read.session_panes(server, args.pane)
    except NoServer:
        raise  # cli/main.py: exit 1
    except TmuxError:
        panes = []
    pane = next((x for x in panes if x.pane_id == args.pane), None)
    if pane is None:
        return _result(args, "vanished", EXIT_VANISHED, None,
                       f"tma: no pane {args.pane} (exit 3)")
    try:
        stamp = codec.decode(pane.options)
    except codec.DecodeError:
        stamp = None
    if stamp is None or stamp.state != "blocked" or stamp.detail != "permission":
        return _result(args, "refused", EXIT_GATED, "gated",
                       f"tma: `{args.action}` refused on {args.pane}: gated (exit 4)")
    opts = pane.options
    request = opts.get("@agent_permission_request", "")
    if stamp.name == "claude" and request and _holder_alive(opts.get("@tma_reply_holder", "")):
        word = "allow" if args.action == "approve" else "deny"
        server.source([write.set_plain(args.pane, "@tma_reply_verdict", f"{request} {word}")])
        return _result(args, "replied", 0, None,
                       f"tma: replied `{args.action}` to {args.pane} over the hook lane")
    mset = manifests.load(g.manifest_dir, cfg.agents)
    manifest = mset.get(stamp.name)
    keys = manifest.keys.get(args.action) if manifest is not None else None
    if not keys:
        return _result(args, "refused", EXIT_GATED, "no-coverage",
                       f"tma: `{args.action}` refused on {args.pane}: no-coverage (exit 4)")
    from tma.tmux import keys as keys_mod

    try:
        keys_mod.send(server, args.pane, keys)
    except TmuxError:
        return _result(args, "vanished", EXIT_VANISHED, None,
                       f"tma: pane {args.pane} vanished (exit 3)")
    return _result(args, "sent", 0, None, f"tma: sent `{args.action}` to {args.pane}")


def _result(args, outcome: str, code: int, reason: str | None, note: str) -> int:
    if args.json:
        import json

        sys.stdout.write(json.dumps({"schema": 1, "action": args.action, "pane": args.pane,
                                     "outcome": outcome, "exit_code": code,
                                     "reason": reason}) + "\n")
    common.err(note)
    return code
