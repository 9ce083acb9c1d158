"""Cursor (cursor-agent): `~/.cursor/hooks.json` plus the statusline shim.

Paths: `--cursor-hooks` > `TMA_CURSOR_HOOKS` > `~/.cursor/hooks.json`, and
`--cursor-cli-config` > `TMA_CURSOR_CLI_CONFIG` > `~/.cursor/cli-config.json`.

hooks.json is Cursor's own shape, not Claude's: `{"version": 1, "hooks": {"<event>":
[{"command": "<tma-hook> cursor <event>"}]}}` (flat entries, no `type`). `version` is
added only when absent, and dropped on uninstall only when it is 1 and the uninstall
emptied `hooks`. Only the user-level file fires (a project `.cursor/hooks.json` fires
nothing), so that is the only one written.

The statusline shim goes into cli-config.json's `statusLine` (`{"type": "command",
"command": …}`, `padding` and other keys kept). Cursor writes cli-config.json itself;
when it is absent the shim is skipped (tma does not create Cursor's config file) unless
`--statusline` asks for it.
"""

from __future__ import annotations

import os

from tma.install import common, statusline
from tma.install.common import FileOption

AGENT = "cursor"
FILES = (
    FileOption("cursor_hooks", "--cursor-hooks", "TMA_CURSOR_HOOKS", "Cursor hooks.json",
               lambda p: os.path.join(p.home, ".cursor", "hooks.json")),
    FileOption("cursor_cli_config", "--cursor-cli-config", "TMA_CURSOR_CLI_CONFIG",
               "Cursor cli-config.json", lambda p: os.path.join(p.home, ".cursor",
                                                                "cli-config.json")),
)
STATUSLINE = True
SHAPE = common.Shape(AGENT, nested=False)
CAVEAT = ("cursor: hooks are read from the user-level ~/.cursor/hooks.json only (a project "
          ".cursor/hooks.json fires nothing); they load when cursor-agent next starts")


def paths(ctx: common.Ctx) -> tuple[str, str]:
    return ctx.paths["cursor_hooks"], ctx.paths["cursor_cli_config"]


def status(ctx: common.Ctx, manifest) -> common.Status:
    hp, cp = paths(ctx)
    st, docs = common.load_status(
        AGENT, lambda: (common.JsonDoc.load(hp), common.JsonDoc.load(cp)))
    if docs is None:
        return st
    hooks, cli = docs
    common.json_hooks_check(st, hooks, SHAPE, common.wired_events(manifest), ctx)
    sl = statusline.state(cli.data, AGENT, ctx.tma_bin)
    st.ours = st.ours or sl in (statusline.WIRED, statusline.STALE)
    want = statusline.wanted(AGENT, ctx.statusline, ctx.optout, exists=cli.text is not None)
    st.reasons += statusline.reasons(AGENT, sl, want, common.tilde(cp))
    return st


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    hp, cp = paths(ctx)
    hooks, new = common.json_hooks_planned(hp, SHAPE, common.wired_events(manifest), ctx,
                                           uninstall)
    cli = common.JsonDoc.load(cp)
    out = common.Plan(AGENT)
    new = common.flat_versioned(new, hooks.data, uninstall)
    out.add(hooks.change(new, "Cursor hooks", uninstall=uninstall))

    want = False if uninstall else statusline.wanted(AGENT, ctx.statusline, ctx.optout,
                                                     exists=cli.text is not None)
    new_cli = cli.copy()
    if want is True:
        statusline.install(new_cli, AGENT, ctx.tma_bin)
    elif want is False:
        statusline.uninstall(new_cli, AGENT)
    elif want is None and ctx.statusline != "off":
        out.notes.append(f"cursor: {common.tilde(cp)} does not exist yet, so the context "
                         "statusline shim was skipped; run cursor-agent once, then install "
                         "again (or pass --statusline)")
    out.add(cli.change(new_cli, "Cursor CLI config", uninstall=uninstall))
    return out.caveat(CAVEAT, uninstall)

