"""GitHub Copilot CLI: a hooks file of tma's own, `~/.copilot/hooks/tma.json`.

Path: `--copilot-hooks` > `TMA_COPILOT_HOOKS` > `$COPILOT_HOME/hooks/tma.json` >
`~/.copilot/hooks/tma.json`.

Copilot loads every `*.json` in its hooks folder at start. The file is Copilot's version 1
shape, flat entries: `{"version": 1, "hooks": {"<event>": [{"type": "command", "bash":
"<tma-hook> copilot <event>", "timeoutSec": 10}]}}`. Copilot's payloads do not name their
event, so the command line carries it. Observe only: the hook prints nothing, so Copilot
never reads an answer from tma. Entries of other tools in the file are kept; `version` is
added only when absent and dropped on uninstall only when it is 1 and the uninstall emptied
`hooks` (the file tma created then holds `{}` and is removed).
"""

from __future__ import annotations

import os

from tma.install import common
from tma.install.common import FileOption

AGENT = "copilot"
FILES = (FileOption("copilot_hooks", "--copilot-hooks", "TMA_COPILOT_HOOKS",
                    "Copilot hooks file",
                    lambda p: os.path.join(p.get("COPILOT_HOME")
                                           or os.path.join(p.home, ".copilot"),
                                           "hooks", "tma.json")),)
STATUSLINE = False
LABEL = "Copilot hooks"
SHAPE = common.Shape(AGENT, nested=False, key="bash",
                     fixed=(("type", "command"), ("timeoutSec", 10)))
CAVEAT = ("copilot: the hooks load when copilot next starts; it fires sessionStart at the "
          "first prompt, so a Copilot pane is known from its screen until then")


def path(ctx: common.Ctx) -> str:
    return ctx.paths["copilot_hooks"]


def status(ctx: common.Ctx, manifest) -> common.Status:
    return common.json_hooks_status(AGENT, path(ctx), SHAPE, list(manifest.hook_events),
                                    ctx)[0]


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    return common.json_hooks_plan(AGENT, path(ctx), SHAPE, list(manifest.hook_events), ctx,
                                  uninstall, LABEL, CAVEAT, versioned=True)
