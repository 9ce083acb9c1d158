"""Claude Code: hooks and the statusline shim in `~/.claude/settings.json`.

Path: `--settings` > `TMA_CLAUDE_SETTINGS` > `~/.claude/settings.json`.

Shape: `"hooks": {"<Event>": [{"hooks": [{"type": "command", "command":
"<tma-hook> claude <Event>"}]}]}`, one group per event with no `matcher` (tma's manifest
matchers are the whole filter; in particular the Notification hook must see every
notification type). The wired set is the manifest's events plus SubagentStart and
SubagentStop. PermissionRequest is installed synchronous (never `"async": true`): it has
to stamp the pane before the dialog draws, and its reply lane answers on stdout.

The statusline shim (`statusLine`, see tma.install.statusline) feeds the context gauge;
it takes Claude's own status line, so it is asked about apart from the hooks (the same
question from `install-hooks` and `init`: tma.install.wiring.statusline_choice; `--yes`
and `--statusline` say yes), declined with a "no" or `--no-statusline` (recorded), and
always removed by `--uninstall`. Claude loads the new hooks at its next start.
"""

from __future__ import annotations

import os

from tma.install import common, statusline
from tma.install.common import FileOption

AGENT = "claude"
FILES = (FileOption("claude_settings", "--settings", "TMA_CLAUDE_SETTINGS", "Claude settings.json",
                    lambda p: os.path.join(p.home, ".claude", "settings.json")),)
STATUSLINE = True
LABEL = "Claude settings"
SHAPE = common.Shape(AGENT, nested=True, sync_events=("PermissionRequest",))


def path(ctx: common.Ctx) -> str:
    return ctx.paths["claude_settings"]


def status(ctx: common.Ctx, manifest) -> common.Status:
    p = path(ctx)
    st, doc = common.json_hooks_status(AGENT, p, SHAPE, common.wired_events(manifest), ctx)
    if doc is None:
        return st
    sl = statusline.state(doc.data, AGENT, ctx.tma_bin)
    st.ours = st.ours or sl in (statusline.WIRED, statusline.STALE)
    want = statusline.wanted(AGENT, ctx.statusline, ctx.optout)
    st.reasons += statusline.reasons(AGENT, sl, want, common.tilde(p))
    return st


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    doc, new = common.json_hooks_planned(path(ctx), SHAPE, common.wired_events(manifest), ctx,
                                         uninstall)
    want = False if uninstall else statusline.wanted(AGENT, ctx.statusline, ctx.optout)
    if want is True:
        statusline.install(new, AGENT, ctx.tma_bin)
    elif want is False:
        statusline.uninstall(new, AGENT)
    out = common.Plan(AGENT)
    out.add(doc.change(new, LABEL, uninstall=uninstall))
    return out.caveat("claude: the hooks take effect when Claude Code next starts", uninstall)
