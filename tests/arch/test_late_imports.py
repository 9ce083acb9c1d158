"""Imports stand at the top of a module, except where a hot path asks for them late.

`tma status` (every status line), `tma event` (every agent hook) and `tma
clear-attention` (every pane switch) pay for each module they import
(tests/integration/test_import_audit.py pins what they may not load, and
tests/arch/test_command_imports.py the tma modules every everyday command loads); the
modules they load keep their imports inside the functions that need them. Everywhere else an
import is at the top, where a reader and the import linter see it, unless it is
listed below with a reason; the numbers there may fall and never rise.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

#: The modules the hot paths load (measured: `tma status` with and without a daemon,
#: `tma event` handed off and direct, `tma clear-attention`).
HOT = frozenset({
    "tma.cli",
    "tma.cli.clear_attention",
    "tma.cli.common",
    "tma.cli.event",
    "tma.cli.main",
    "tma.cli.status",
    "tma.core",
    "tma.core.bundled",
    "tma.core.codec",
    "tma.core.errors",
    "tma.core.fold",
    "tma.core.hookmap",
    "tma.core.identity",
    "tma.core.intake",
    "tma.core.jsonlite",
    "tma.core.manifest",
    "tma.core.manifests",
    "tma.core.manifests._docs",
    "tma.core.manifests._lanes",
    "tma.core.notice",
    "tma.core.options",
    "tma.core.paths",
    "tma.core.plan",
    "tma.core.prompt",  # codec decodes @tma_prompt: loaded wherever a stamp is read
    "tma.core.record",
    "tma.core.rollup",
    "tma.core.rules",
    "tma.core.states",
    "tma.runtime",
    "tma.runtime.cache",
    "tma.runtime.config",
    "tma.runtime.cycle",
    "tma.runtime.handoff",
    "tma.runtime.hook",
    "tma.runtime.manifests",
    "tma.runtime.notify.gate",
    "tma.runtime.procs",
    "tma.runtime.session",
    "tma.runtime.status_memo",
    "tma.tmux",
    "tma.tmux.adapter",
    "tma.tmux.attention",
    "tma.tmux.frame",
    "tma.tmux.read",
    "tma.tmux.spawn",
    "tma.tmux.write",
    "tma.ui",
    "tma.ui.contrast",
    "tma.ui.status",
})

#: Late imports kept elsewhere, and why: the picker's first frame (it opens from a key),
#: the hook's notification path, the status line's daemon probe (autostart), a child
#: process's entry, import cycles an early import would close, optional or platform
#: pieces imported under a guard.
KEPT = {
    "tma.cli.act": 23,  # +5: the link's modules only for a HOST:%N pane (~100 ms a local act);
    # +12: the broker's machinery (cycle, actions_fire, actions_describe, navigate) only where
    # an action fires, is described or offered: --list without a pane reads the action set
    # alone (26 modules fewer)
    "tma.cli.card": 1,  # the link's modules (hosts.toml's parser too) only for HOST:%N
    "tma.cli.debug": 1,
    "tma.cli.demo": 1,
    "tma.cli.doctor": 2,
    "tma.cli.jump": 1,  # hosts.toml's reader only for a HOST:%N jump
    "tma.cli.last": 1,  # the link's modules only for HOST:%N (as card)
    "tma.cli.ls": 3,  # +2: the fleet's modules only with --hosts, a card's screen only for --json
    "tma.cli.mute": 2,
    "tma.cli.picker": 4,
    "tma.cli.spec": 3,  # +2: the help renderer only when help is asked for
    "tma.cli.subscribe": 2,  # the fleet's modules only with --hosts (~100 ms a subscriber)
    "tma.cli.transcript": 1,  # the link's modules only for HOST:%N (as card)
    "tma.cli.version": 1,
    "tma.cli.wait": 3,  # the fleet's modules only with --hosts or HOST:%N (~120 ms a wait)
    "tma.cli.watch": 4,
    "tma.core.cmdparse": 2,  # argparse only when an argv is more than switches (~3 ms a
    # command with gettext and locale), and SimpleNamespace beside it
    "tma.core.cmdspec": 1,  # difflib only for a did-you-mean hint (~1 ms a command)
    "tma.core.proto": 2,  # json once a line is read or written: card and ls --json build records
    "tma.daemon.notifier": 2,
    "tma.daemon.parts": 4,
    "tma.daemon.server": 1,
    "tma.demo_agent": 3,
    "tma.install.keybind": 2,
    "tma.install.registry": 1,
    "tma.runtime.act.exec": 6,
    "tma.runtime.act.fire": 3,
    "tma.runtime.act.card": 2,  # OpenCode's HTTP client only for its question card (~15 ms);
    # +1: the transcript room only for a Codex permission card (`tma card` pins it out)
    "tma.runtime.daemon_files": 12,
    "tma.runtime.doctor": 4,
    "tma.runtime.feed": 1,
    "tma.runtime.fleet.hosts": 1,  # the installers' atomic write only to edit hosts.toml
    "tma.runtime.git": 1,  # subprocess only when git itself must answer (a cold ls reads files)
    "tma.runtime.navigate": 3,  # +2: the fleet's modules only to jump to a host's pane
    "tma.runtime.notify.dispatch": 3,
    "tma.runtime.notify.backends": 4,
    "tma.runtime.notify.http": 5,  # the hook child: its request first, the record after
    "tma.runtime.notify.log": 6,
    "tma.runtime.notify.post": 3,  # urllib only for https or a proxy (the hook child's http)
    "tma.runtime.notify.push": 7,  # the hook path's fire: spawn, json, capture only when used
    "tma.runtime.notify.sinks": 1,  # a sink's imports only when a notification fires
    "tma.runtime.screen": 26,  # +5: the hosts' modules only with a hosts.toml, never first;
    # +4: the actions' (their set, the broker and its cycle) only when Tab asks what a
    # pane's menu would offer; +4: the transcript room and the fleet's reads (a local
    # pane's, a host's) only once ctrl-t shows a conversation, never the first frame
    "tma.tmux.demo_server": 1,
    "tma.ui.app": 2,  # watch's renderer only for watch (the picker's first frame)
    "tma.ui.picker": 1,  # the conversation's renderer only once ctrl-t shows it
    "tma.ui.term": 7,
}


def _late_imports(path: Path) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    seen = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            seen.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return len(seen)


def test_imports_are_late_only_where_a_hot_path_asks():
    over = []
    for path in sorted((SRC / "tma").rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        if module in HOT:
            continue
        late = _late_imports(path)
        if late > KEPT.get(module, 0):
            over.append(f"{module}: {late} imports inside functions (kept: {KEPT.get(module, 0)})")
    assert over == [], "move them to the top of the module:\n" + "\n".join(over)


def test_the_hot_set_names_real_modules():
    for module in HOT | set(KEPT):
        assert (SRC / (module.replace(".", "/") + ".py")).exists() or \
            (SRC / module.replace(".", "/") / "__init__.py").exists(), module
