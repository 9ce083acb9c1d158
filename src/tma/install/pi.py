"""pi: a JS extension dropped into pi's auto-discovered extensions directory.

Path: `--pi-extension` > `TMA_PI_EXTENSION` > `$PI_CODING_AGENT_DIR/extensions/tma.js`
> `~/.pi/agent/extensions/tma.js`.

Same mechanics as the OpenCode plugin: the bundled `pi-extension.js` with `@@TMA_HOOK@@`
replaced by the wrapper path (a JSON string), banner `tma pi bridge`, never overwriting
or deleting a file without it. The extension registers nothing outside tmux
(`$TMUX_PANE` unset), forwards pi's events fire-and-forget, and on the turn-settled
event also forwards `ctx.getContextUsage()` as the context gauge.
"""

from __future__ import annotations

import os

from tma.install import common
from tma.install.common import FileOption

AGENT = "pi"
FILES = (FileOption("pi_extension", "--pi-extension", "TMA_PI_EXTENSION", "pi extension file",
                    lambda p: os.path.join(p.get("PI_CODING_AGENT_DIR")
                                           or os.path.join(p.home, ".pi", "agent"),
                                           "extensions", "tma.js")),)
STATUSLINE = False
ASSET = "pi-extension.js"
MARKER = "tma pi bridge"
LABEL = "pi extension"
CAVEAT = ("pi: the extension loads when pi next starts and stays inert outside tmux; pi has "
          "no permission prompt, so its panes are never blocked")


BRIDGE = common.JsBridge(AGENT, "pi_extension", ASSET, MARKER, LABEL, CAVEAT)
status = BRIDGE.status
plan = BRIDGE.plan
