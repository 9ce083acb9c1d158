"""Gemini CLI: hooks in `~/.gemini/settings.json`, Claude's nested shape.

Path: `--gemini-settings` > `TMA_GEMINI_SETTINGS` > `~/.gemini/settings.json`.

Gemini fires its hooks only in trusted folders (its folder-trust feature), so the
install prints that caveat. tma writes nothing but the `hooks` entries; it does not
touch `hooksConfig` or `security.folderTrust`.
"""

from __future__ import annotations

import os

from tma.install import common
from tma.install.common import FileOption

AGENT = "gemini"
FILES = (FileOption("gemini_settings", "--gemini-settings", "TMA_GEMINI_SETTINGS",
                    "Gemini settings.json",
                    lambda p: os.path.join(p.home, ".gemini", "settings.json")),)
STATUSLINE = False
LABEL = "Gemini settings"
SHAPE = common.Shape(AGENT, nested=True)
CAVEAT = ("gemini: hooks only fire in folders Gemini trusts; with folder trust enabled, "
          "trust the project folder (or the folder you start gemini in), otherwise its panes "
          "fall back to screen reading")


def path(ctx: common.Ctx) -> str:
    return ctx.paths["gemini_settings"]


def status(ctx: common.Ctx, manifest) -> common.Status:
    return common.json_hooks_status(AGENT, path(ctx), SHAPE, common.wired_events(manifest),
                                    ctx)[0]


def plan(ctx: common.Ctx, manifest, uninstall: bool) -> common.Plan:
    return common.json_hooks_plan(AGENT, path(ctx), SHAPE, common.wired_events(manifest), ctx,
                                  uninstall, LABEL, CAVEAT)
