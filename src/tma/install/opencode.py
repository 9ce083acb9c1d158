"""OpenCode: a JS plugin dropped into OpenCode's plugin directory.

Path: `--opencode-plugin` > `TMA_OPENCODE_PLUGIN` > `$XDG_CONFIG_HOME/opencode/plugin/tma.js`
> `~/.config/opencode/plugin/tma.js`.

The file is the bundled `opencode-plugin.js` with `@@TMA_HOOK@@` replaced by the wrapper
path as a JSON string. It carries the banner `tma OpenCode bridge`: install refuses to
overwrite a file at that path without it, uninstall deletes the file only when it has it.
The plugin forwards OpenCode's event bus to `tma-hook opencode <token>`; the events are
plugin-internal, so there is no per-event wiring to edit. With a plugin directory present
OpenCode installs `@opencode-ai/plugin` from npm at startup (about 10 s, needs the
registry).
"""

from __future__ import annotations

import os

from tma.install import common
from tma.install.common import FileOption

AGENT = "opencode"
FILES = (FileOption("opencode_plugin", "--opencode-plugin", "TMA_OPENCODE_PLUGIN",
                    "OpenCode plugin file",
                    lambda p: os.path.join(p.config_home, "opencode", "plugin", "tma.js")),)
STATUSLINE = False
ASSET = "opencode-plugin.js"
MARKER = "tma OpenCode bridge"
LABEL = "OpenCode plugin"
CAVEAT = ("opencode: the plugin loads when OpenCode next starts; with a plugin directory "
          "present OpenCode installs @opencode-ai/plugin from npm at startup (slower first "
          "start, needs the registry)")


BRIDGE = common.JsBridge(AGENT, "opencode_plugin", ASSET, MARKER, LABEL, CAVEAT)
status = BRIDGE.status
plan = BRIDGE.plan
