"""Qwen Code: hooks in `~/.qwen/settings.json`, Claude's nested shape.

Path: `--qwen-settings` > `TMA_QWEN_SETTINGS` > `~/.qwen/settings.json`.

Observe only: every hook, PermissionRequest included, prints nothing and exits 0, so Qwen
Code draws its own dialog and nothing is decided through the hook. tma writes nothing but
the `hooks` entries; it does not touch `disableAllHooks`, `tools.approvalMode` or
`security.folderTrust`. Qwen Code loads the hooks at its next start.
"""

from __future__ import annotations

import os

from tma.install import common
from tma.install.common import FileOption

AGENT = "qwen"
FILES = (FileOption("qwen_settings", "--qwen-settings", "TMA_QWEN_SETTINGS",
                    "Qwen Code settings.json",
                    lambda p: os.path.join(p.home, ".qwen", "settings.json")),)
STATUSLINE = False
LABEL = "Qwen Code settings"
SHAPE = common.Shape(AGENT, nested=True)
CAVEAT = "qwen: the hooks take effect when Qwen Code next starts"


def path(ctx: common.Ctx) -> str:
    return ctx.paths["qwen_settings"]


def status(ctx: common.Ctx, manifest) -> common.Status:
    return common.json_hooks_status(AGENT, path(ctx), SHAPE, common.wired_events(manifest),
                                    ctx)[0]


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    return common.json_hooks_plan(AGENT, path(ctx), SHAPE, common.wired_events(manifest), ctx,
                                  uninstall, LABEL, CAVEAT)
