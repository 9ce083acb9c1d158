"""Every command's flags, declared once, as data, and the parse step built from them.

One table (`COMMANDS`) says, per command: its one-line summary, its flags (value,
choices, default, a help sentence), its positional arguments, the selector flags it
takes, and its exit statuses. The shapes are tma.core.cmdspec's. From the table come
the argparse parsers (`parse`, here) and, rendered by tma.ui from `TABLE`, every
`--help`, the top-level help, the shell completions (tma.ui.completions), the man page
(tma.ui.manpage, written by tools/gen_man.py); tests/unit/test_cli_docs.py checks the
docs against it.

The hot paths do not import this module: `tma status` and `tma event` parse their
few flags by hand (cli/status.py, cli/event.py) and `tma.cli.common` keeps its own
table of the global options; the unit tests hold those hand parsers to the
declarations here. argparse is imported only when a parser is built.
"""

from __future__ import annotations

import sys

from tma.cli import common
from tma.core import cmdparse
from tma.core.cmdspec import (
    Arg,
    Command,
    Flag,
    Table,
    did_you_mean as did_you_mean,  # re-exported: the commands' hints
)
from tma.runtime.selectors import SelectorError, parse_pane_id, parse_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

DOCS = "docs/reference/cli.md; the man page: man -l docs/man/tma.1 (in the source tree)"
STATES = ("idle", "working", "blocked", "unknown", "done")
FORMATS = ("tmux", "plain", "json", "prom")
SHELLS = ("bash", "zsh", "fish")
HOOK_AGENTS = ("claude", "codex", "gemini", "cursor", "opencode", "pi", "copilot", "qwen", "aider")

# ---------------------------------------------------------------- shared declarations

GLOBALS = (
    Flag("--socket-name", metavar="NAME", help="Talk to the tmux server `tmux -L NAME`."),
    Flag("--socket-path", metavar="PATH",
         help="Talk to the tmux server `tmux -S PATH` (else TMA_SOCKET_PATH)."),
    Flag("--config", metavar="PATH",
         help="The config file (else TMA_CONFIG, else $XDG_CONFIG_HOME/tma/config.toml); "
              "a file named here must exist."),
    Flag("--manifest-dir", metavar="DIR",
         help="Load agent manifests from DIR only (no bundled or user manifests); DIR "
              "must exist."),
    Flag("-c", "--client", metavar="NAME", help="The tmux client `tma jump` acts on."),
    Flag("--debug-timing", help="Print one timing line per poll cycle on stderr."),
)
TOP_FLAGS = (
    Flag("-h", "--help", help="Show the command list (or, after a command, its help)."),
    Flag("-V", "--version", help="Print the version."),
)

SELECTOR = (
    Flag("--session", metavar="NAME", help="Only panes in the tmux session named NAME."),
    Flag("--repo", metavar="NAME",
         help="Only panes whose git repository is labelled NAME (shared by its worktrees)."),
    Flag("--branch", metavar="NAME", help="Only panes on git branch NAME (HEAD when detached)."),
    Flag("--agent", metavar="NAME",
         help="Only panes running this agent (a manifest name: claude, codex, ...)."),
    Flag("--state", metavar="LIST", values=STATES,
         help="Only panes in one of these states (comma list of "
              "idle,working,blocked,unknown,done)."),
)

OK = (0, "success")
ERROR = (1, "no tmux server, a tmux error, a config or bundled manifest that does not load")
USAGE = (2, "usage error: an unknown option, a bad value, flags that cannot go together")
INTERRUPTED_PROMPT = (130, "interrupted (Ctrl-C, at a prompt too): the whole command stops; "
                           "nothing of the change asked about is written")
NO_PANE = (3, "the pane named by --pane does not exist")

AGENT_FILES = (
    Flag("--settings", metavar="PATH",
         help="Claude's settings file (else TMA_CLAUDE_SETTINGS, else "
              "~/.claude/settings.json)."),
    Flag("--gemini-settings", metavar="PATH",
         help="Gemini's settings file (else TMA_GEMINI_SETTINGS, else "
              "~/.gemini/settings.json)."),
    Flag("--codex-config", metavar="PATH",
         help="Codex's config.toml (else TMA_CODEX_CONFIG, else $CODEX_HOME/config.toml)."),
    Flag("--codex-hooks", metavar="PATH",
         help="Codex's hooks.json (else TMA_CODEX_HOOKS, else $CODEX_HOME/hooks.json)."),
    Flag("--cursor-hooks", metavar="PATH",
         help="Cursor's hooks.json (else TMA_CURSOR_HOOKS, else ~/.cursor/hooks.json)."),
    Flag("--cursor-cli-config", metavar="PATH",
         help="Cursor's cli-config.json (else TMA_CURSOR_CLI_CONFIG, else "
              "~/.cursor/cli-config.json)."),
    Flag("--opencode-plugin", metavar="PATH",
         help="The OpenCode plugin file (else TMA_OPENCODE_PLUGIN, else "
              "$XDG_CONFIG_HOME/opencode/plugin/tma.js)."),
    Flag("--pi-extension", metavar="PATH",
         help="The pi extension file (else TMA_PI_EXTENSION, else "
              "~/.pi/agent/extensions/tma.js)."),
    Flag("--copilot-hooks", metavar="PATH", help="tma's Copilot hooks file (else "
         "TMA_COPILOT_HOOKS, else $COPILOT_HOME/hooks/tma.json, else ~/.copilot/hooks/tma.json)."),
    Flag("--qwen-settings", metavar="PATH", help="Qwen Code's settings file (else "
         "TMA_QWEN_SETTINGS, else ~/.qwen/settings.json)."),
    Flag("--aider-config", metavar="PATH", help="aider's config file (else "
         "TMA_AIDER_CONFIG, else ~/.aider.conf.yml)."),
)
CONFIG_DIR = Flag("--config-dir", metavar="DIR",
                  help="tma's config directory (else TMA_CONFIG_DIR, else "
                       "$XDG_CONFIG_HOME/tma).")
YES = Flag("-y", "--yes", help="Apply every change without asking.")

# ---------------------------------------------------------------- the commands

_DEBUG = (
    Command("explain", "Run detection on a live pane or a saved capture and show why.",
            args=(Arg("PANE", "A live pane id, e.g. %3 (or use --capture).", optional=True,
                      type="pane"),),
            flags=(
                Flag("--capture", metavar="FILE",
                     help="A saved screen in the fixture format instead of a live pane."),
                Flag("--agent", metavar="NAME",
                     help="With --capture: the manifest to use (default: the capture's "
                          "agent header)."),
                Flag("--prior", metavar="STATE", choices=("idle", "working", "blocked",
                                                          "unknown"),
                     help="With --capture: pretend the pane was already stamped in STATE."),
                Flag("--json", help="Print the schema-1 explain document."),
            ),
            exits=(OK, (1, "no server, an unreadable capture, an unknown agent"), USAGE,
                   (3, "the PANE does not exist"))),
    Command("transitions", "The daemon's ring of its last 256 state transitions.",
            flags=(Flag("--json", help="Print the schema-1 transitions document."),),
            exits=(OK, (1, "no tmux server, or no daemon answering for it"), USAGE)),
    Command("capture", "Print a pane in the fixture format (header, ---, raw screen).",
            args=(Arg("PANE", "A live pane id, e.g. %3.", type="pane"),),
            exits=(OK, (1, "no server, or the pane vanished while being read"), USAGE,
                   (3, "the PANE does not exist"))),
    Command("notify-test", "Run the notification sink for a made-up note; show what "
                           "it did.",
            flags=(Flag("--trigger", metavar="TRIGGER",
                        values=("blocked", "done", "context_high"), default="blocked",
                        help="The trigger to test: blocked (default), done or "
                             "context_high."),),
            exits=(OK, (1, "no command or desktop notifier resolves, it failed (the "
                           "failure is recorded for tma doctor), or an unknown trigger"),
                   USAGE)),
    Command("stamp", "Apply exactly one guarded write to a pane (test harness).",
            internal=True,
            args=(Arg("PANE", "The pane id to stamp."),),
            flags=(
                Flag("--mode", metavar="MODE", choices=("publish", "hold", "remove"),
                     default="publish",
                     help="Publish a state, hold (refresh the stamp) or remove the stamp."),
                Flag("--state", metavar="STATE", default="idle", help="The state to write."),
                Flag("--detail", metavar="DETAIL", default="", help="The detail to write."),
                Flag("--source", metavar="SOURCE", default="capture",
                     help="The evidence source to write."),
                Flag("--evidence-at", metavar="MS", type="int",
                     help="The evidence time, epoch ms (default: now)."),
                Flag("--stamped-at", metavar="MS", type="int",
                     help="The write time, epoch ms (default: now)."),
                Flag("--name", metavar="NAME", default="test", help="The agent name to write."),
                Flag("--pid", metavar="PID", type="int", default=0,
                     help="The agent pid to write."),
                Flag("--hash", metavar="HASH", default="", help="The screen hash to write."),
                Flag("--attention", help="Raise attention with the write."),
                Flag("--episode-reset", help="Start a new state episode."),
                Flag("--guard", metavar="GUARD", default="unconditional",
                     help="unconditional, protect-hook, carveout:<ms>, refresh:<state> or "
                          "hook:<ms>."),
                Flag("--count", metavar="N", type="int", default=1,
                     help="Repeat the write N times, one tmux spawn each (race tests)."),
                Flag("--alternate", metavar="STATE[/DETAIL]",
                     help="With --count: odd repetitions write this state (and detail)."),
            ),
            exits=(OK, (1, "no server, or tmux refused the write"), USAGE)),
)

_HOST_NAME = Arg("NAME", "The host's name: letters, digits, '.', '_', '-' (its panes are "
                         "named NAME:%N).")
_HOST = (
    Command("add", "Add a host: an ssh target, or any argv that runs `tma serve --stdio`.",
            args=(_HOST_NAME,
                  Arg("TARGET", "What ssh connects to (user@host, an ssh_config alias).")),
            flags=(Flag("--via", metavar="ARGV",
                        help="The transport instead of ssh, one shell-quoted command line "
                             "whose stdio reaches `tma serve --stdio` (e.g. 'docker exec -i "
                             "box tma serve --stdio', or 'ssh -T HOST tma serve --stdio' for "
                             "a host without a forced command)."),
                   Flag("--act", metavar="SCOPE", choices=("answer", "steer"),
                        help="What this machine means to do there: answer or steer (the "
                             "host's forced command decides what it allows)."),
                   Flag("--login", metavar="TARGET",
                        help="Where `tma jump HOST:%N` logs in (`ssh -t TARGET tma attach "
                             "--pane %N`) when the link's key is forced to `tma serve` "
                             "(default: the host's TARGET, or its --via transport)."),
                   Flag("--replace", help="Rewrite a host of that name that exists.")),
            exits=(OK, (1, "a bad name, the host exists already, an unreadable hosts.toml"),
                   USAGE)),
    Command("set", "Change some of a host's settings and keep the rest (its comments "
                   "too): e.g. `tma host set devbox --act steer` keeps its login.",
            args=(_HOST_NAME,),
            flags=(Flag("--target", metavar="TARGET", help="What ssh connects to."),
                   Flag("--via", metavar="ARGV",
                        help="The transport instead of ssh (one shell-quoted command line); "
                             "'' goes back to ssh."),
                   Flag("--act", metavar="SCOPE", choices=("answer", "steer", "none"),
                        help="What this machine means to do there: answer, steer, or none "
                             "(read-only)."),
                   Flag("--login", metavar="TARGET",
                        help="Where `tma jump HOST:%N` logs in; '' goes back to the "
                             "default.")),
            exits=(OK, (1, "no such host, a bad value, an unreadable hosts.toml"), USAGE)),
    Command("list", "The configured hosts and their transports.",
            flags=(Flag("--json", help="Print the hosts as a JSON document."),),
            exits=(OK, (1, "an unreadable hosts.toml"), USAGE)),
    Command("check", "Doctor for one host's link: reachable, remote tma and its version, "
                     "remote tmux, hooks, scopes; each problem with its fix.",
            args=(_HOST_NAME,),
            flags=(Flag("--timeout", metavar="SECS", type="float", default=8.0,
                        help="Give up on the host after SECS seconds."),),
            exits=((0, "every check passed"), (1, "a check failed, or no such host"), USAGE)),
    Command("remove", "Forget a host.", args=(_HOST_NAME,),
            exits=(OK, (1, "no such host, an unreadable hosts.toml"), USAGE)),
)

COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("status", "Counts for the status line (what #(tma status) runs).",
            selectors=SELECTOR,
            flags=(Flag("--format", metavar="FORMAT", choices=FORMATS, default="tmux",
                        help="tmux (default: styled segment), plain, json or prom."),),
            exits=(OK, (1, "no tmux server, or a broken config or bundled manifest (under "
                           "#() a short marker such as tma:config! is printed on stdout)"),
                   USAGE),
            notes="Runs one poll cycle, then prints blocked, working, done, idle and "
                  "unknown counts; zero counts are left out."),
    Command("ls", "List agent panes: a table on a terminal, tab-separated rows in a pipe, "
                  "or JSON.",
            selectors=SELECTOR,
            flags=(Flag("--json", help="Print the schema-1 JSON document instead of rows."),
                   Flag("--pane", metavar="ID", type="pane",
                        help="Only this pane (e.g. %3); combines with the selectors."),
                   Flag("--hosts",
                        help="Also every host of `tma host list`: one snapshot each, in "
                             "parallel, after the local rows (remote panes are HOST:%N); a "
                             "host that fails is one line on stderr naming its state."),
                   Flag("--timeout", metavar="SECS", type="float", default=5.0,
                        help="With --hosts: how long one host may take.")),
            exits=(OK, ERROR, USAGE, NO_PANE)),
    Command("card", "What a blocked pane asks: its permission, question or headline.",
            flags=(Flag("--pane", metavar="ID", type="target", required=True,
                        help="Required: the pane (e.g. %3), or HOST:%3 on a fleet host (the "
                             "host's own card, over its link)."),
                   Flag("--json", help="Print the protocol's card frame (schema 1) instead "
                                       "of text."),
                   Flag("--timeout", metavar="SECS", type="float",
                        help="With --pane HOST:%N: how long the host may take (default 5).")),
            exits=(OK, (1, "no tmux server, a broken config; HOST:%N: the host did not "
                           "answer (its link's state is named)"),
                   (2, "usage; HOST:%N: no such host in tma host list"),
                   (3, "the pane does not exist (HOST:%N: the host has no agent pane %N)")),
            notes="Runs one poll cycle first: only its verdict says whether the pane is "
                  "blocked. A permission card names its lane (hook, api or screen) and how "
                  "exactly it was read (exact, wrapped or failed); an OpenCode question "
                  "is fetched from its server within 750 ms. HOST:%N sends the protocol's "
                  "card request over the host's link and prints the host's answer."),
    Command("transcript", "What an agent said and did: its transcript's events, newest "
                          "first, or one event whole.",
            flags=(Flag("--pane", metavar="ID", type="target", required=True,
                        help="Required: the pane (e.g. %3), or HOST:%3 on a fleet host (its "
                             "host reads its own file)."),
                   Flag("--last", metavar="N", type="int",
                        help="At most N events (1..1000, default 200); fewer when 32 KiB of "
                             "headers are full."),
                   Flag("--before", metavar="CURSOR", group="which",
                        help="The page before this cursor (the `older` a page names): page "
                             "back."),
                   Flag("--event", metavar="CURSOR", group="which",
                        help="One event, whole: its text, or its JSON."),
                   Flag("--headers",
                        help="Headers only, as the protocol's window carries them: no body "
                             "is read (the text shows each event's preview)."),
                   Flag("--json", help="Print the schema-1 JSON document instead of lines."),
                   Flag("--timeout", metavar="SECS", type="float",
                        help="With --pane HOST:%N: how long the host may take (default 5).")),
            exits=(OK, (1, "nothing to show: no agent on the pane, no reader for it, no "
                           "transcript found (the reason is printed); no tmux server; "
                           "HOST:%N: the host did not answer"),
                   (2, "usage; HOST:%N: no such host in tma host list"),
                   (3, "the pane does not exist (HOST:%N: the host has no agent pane %N)"),
                   (4, "refused: the cursor no longer addresses its file (replaced or "
                       "truncated: start again without --before), or the record is over "
                       "8 MiB")),
            notes="Runs one poll cycle first (which agent the pane runs). The file is the "
                  "one the agent's hook named, else the one its session id and the pane's "
                  "directory name, else a scan by session id: never a guess. Each line: "
                  "the event's cursor, time, kind and what it says. HOST:%N sends the "
                  "protocol's window (or event) request over the host's link."),
    Command("last", "The agent's last answer, as plain text.",
            flags=(Flag("--pane", metavar="ID", type="target", required=True,
                        help="Required: the pane (e.g. %3), or HOST:%3 on a fleet host."),
                   Flag("--turns", metavar="N", type="int", default=1,
                        help="The answers of the last N turns (default 1), oldest first."),
                   Flag("--timeout", metavar="SECS", type="float",
                        help="With --pane HOST:%N: how long the host may take (default 5).")),
            exits=(OK, (1, "nothing to show: no agent, no transcript, no answer yet (the "
                           "reason is printed); no tmux server; HOST:%N: the host did not "
                           "answer"),
                   (2, "usage; HOST:%N: no such host in tma host list"),
                   (3, "the pane does not exist (HOST:%N: the host has no agent pane %N)")),
            notes="A turn is what follows one of your messages; a turn with no text yet "
                  "(the agent still working) is skipped, so the answer is the last one "
                  "given. The texts of a turn are joined by blank lines."),
    Command("wait", "Block until a pane (or a set of panes) reaches a state.",
            selectors=SELECTOR,
            flags=(
                Flag("--pane", metavar="ID", type="target", group="target",
                     help="Wait on this one pane (no selector flags with it); HOST:%N "
                          "follows a fleet host's pane."),
                Flag("--any", group="target",
                     help="The first in-scope pane to reach the state."),
                Flag("--all", group="target",
                     help="Every in-scope pane (membership fixed at the first cycle)."),
                Flag("--count", metavar="N", group="target",
                     help="At least N in-scope panes (N >= 1), scope re-read every cycle."),
                Flag("--until", metavar="STATES", required=True, values=STATES,
                     help="Required: the target states, a comma list of "
                          "idle,working,blocked,unknown,done."),
                Flag("--since", metavar="EPOCH_MS",
                     help="Only a state episode that began strictly after this time counts."),
                Flag("--timeout", metavar="SECS",
                     help="Give up after SECS seconds (exit 124)."),
                Flag("--json",
                     help="Print a schema-1 row object (an ls document for --all/--count)."),
                Flag("--hosts",
                     help="With --any or --count: every host of `tma host list` counts too "
                          "(its panes HOST:%N, selectors applied to its rows)."),
            ),
            exits=(OK, (1, "no server (also when it goes away), --agent matches several panes"),
                   (2, "usage; --all found nothing in scope"),
                   (3, "the pane does not exist, or vanished (an --all member too)"),
                   (4, "its agent exited while the pane lives on"),
                   (124, "timed out"), (130, "interrupted")),
            notes="Without --pane/--any/--all/--count the selector --agent NAME is the "
                  "target: the one in-scope pane running that agent. A host's rows come "
                  "from the daemon's links when it holds the hosts, else from a probe of "
                  "them every 2 s; an offline host's rows never satisfy a wait (it keeps "
                  "waiting and says so on stderr)."),
    Command("subscribe", "Stream ls documents (or state edges) as JSON lines, one per change.",
            selectors=SELECTOR,
            flags=(
                Flag("--json", help="Required: one JSON document per line."),
                Flag("--interval", metavar="SECS", type="float", default=1.0,
                     help="Poll cadence without a daemon (and after losing one), >= 1."),
                Flag("--changes-only",
                     help="Poll mode: leave out a document identical to the last one (push "
                          "mode emits only changes anyway)."),
                Flag("--events",
                     help="Emit one edge record per pane whose state changed instead of "
                          "whole documents (the first cycle is silent)."),
                Flag("--hosts",
                     help="Also every host of `tma host list`: its rows and a `hosts` array "
                          "in each document (as ls --json --hosts); with --events, its "
                          "panes' edges (with `host`) and a record when a host goes "
                          "offline or comes back."),
            ),
            exits=((0, "stdout closed, or stopped by a signal"),
                   (1, "no tmux server (also when it goes away), a broken config"),
                   (2, "usage: --json missing, --interval below 1")),
            notes="Pushed by this server's daemon when one runs (a wake hint: each document "
                  "comes from the subscriber's own poll cycle, so push and poll emit the same "
                  "documents), polled every --interval otherwise; it switches silently both "
                  "ways and looks for a daemon every 5 s."),
    Command("jump", "Move your tmux client to the agent pane that needs you.",
            selectors=SELECTOR,
            args=(Arg("TARGET", "A pane to jump to, as --pane: %N here, or HOST:%N (a "
                              "fleet host's pane: a local window running `ssh -t HOST tma "
                              "attach --pane %N`, reused by the next jump there).",
                      optional=True, type="target"),),
            flags=(
                Flag("--attention", dest="direction", const="attention", group="direction",
                     help="The next pane wanting you: blocked (longest first), then done; "
                          "wraps."),
                Flag("--blocked", dest="direction", const="blocked", group="direction",
                     help="The longest-blocked pane."),
                Flag("--next", dest="direction", const="next", group="direction",
                     help="The next agent pane by position (session, window, pane); the "
                          "default; wraps."),
                Flag("--back", dest="direction", const="back", group="direction",
                     help="Return to the pane the last jump left."),
                Flag("--home", dest="direction", const="home", group="direction",
                     help="Return to where the jump trail started, and forget the trail."),
                Flag("--pane", metavar="ID", type="target", group="direction",
                     help="Jump to this pane (e.g. %3, or HOST:%3 on a fleet host); "
                          "ignores the selectors."),
                Flag("--menu", dest="direction", const="menu", group="direction",
                     help="Show a tmux menu of every agent pane."),
            ),
            exits=(OK, (1, "no server, no tmux client to move, a tmux error, an unknown "
                           "host"), USAGE, NO_PANE),
            notes="Selectors scope the forward jumps and the menu. The acting client is "
                  "-c/--client, else the client of $TMUX_PANE's session, else the most "
                  "recently active one. A HOST:%N window is tagged @tma_remote=HOST:%N."),
    Command("attach", "Attach to the tmux session holding a pane and select it (what a "
                      "fleet jump runs on the host).",
            flags=(Flag("--pane", metavar="ID", type="pane", required=True,
                        help="Required: the pane (e.g. %3)."),),
            exits=((0, "the client detached (or, inside tmux, switched)"),
                   (1, "no tmux server, a tmux error"), USAGE, NO_PANE),
            notes="Outside tmux it runs `tmux attach` to the pane's session with its window "
                  "and pane selected; inside tmux ($TMUX) it switches the client there."),
    Command("watch", "A live dashboard of every agent pane (tma alone: the picker).",
            selectors=SELECTOR,
            flags=(Flag("--table",
                        help="Start in the full-width table (when at least 76 columns)."),
                   Flag("--group", metavar="BY", choices=("repo", "session"),
                        help="Group the rows by repo or by session (g toggles).")),
            exits=(OK, (1, "no tmux server, or a surface error (tma: watch error: ...)"),
                   (2, "usage; stdin or stdout is not a terminal")),
            notes="Refreshes every second and at once on SIGUSR1; advertises its pid in "
                  "@tma_watch_pid on its own pane while it runs. Keys: enter jump, tab/a "
                  "actions, p table/preview, g grouping, j/k or arrows move, q quit."),
    Command("act", "Fire an action (approve, deny, interrupt, compact, steer ...) at a pane.",
            selectors=SELECTOR,
            args=(Arg("NAME", "The action (see --list); omit with --list or --menu.",
                      optional=True, values=("approve", "deny", "interrupt", "compact",
                                             "steer", "steer_now", "question_reject",
                                             "question_reply")),),
            flags=(Flag("--pane", metavar="ID", type="target",
                        help="The target pane (default: $TMUX_PANE); takes no selectors. "
                             "HOST:%N fires at a fleet host's pane over its link (the "
                             "protocol's dispatch: approve, deny, question_reply, "
                             "question_reject, steer, steer_now, interrupt)."),
                   Flag("--all", help="Fire at every pane the selectors match."),
                   Flag("--json", help="A result object on stdout (a results envelope "
                                       "under --all)."),
                   Flag("--list", help="List the actions (with --pane: fireable or why "
                                       "not)."),
                   Flag("--menu", help="A tmux menu of the actions fireable on the pane "
                                       "now."),
                   Flag("--dry-run", help="Say what would happen (gate, effect, context "
                                          "ages); fire nothing."),
                   Flag("--force", help="Skip the action's `when` gate, and only it."),
                   Flag("--yes", help="Satisfy an action's `confirm`."),
                   Flag("--text", metavar="TEXT",
                        help="The message of a text action (steer, steer_now), typed "
                             "literally."),
                   Flag("--arg", metavar="VALUE", repeat=True,
                        help="An argument for a command action (env TMA_ARG*); "
                             "repeatable."),
                   Flag("--answer", metavar="[Q=]LABEL", repeat=True,
                        help="question_reply: one chosen label for question Q (its number "
                             "from 1 or its header; Q= may go when one question is asked); "
                             "repeat for more labels or questions."),
                   Flag("--expect-episode", metavar="MS",
                        help="Fire only while the pane is still in the episode that began "
                             "at MS (its episode_ms in ls --json); else refused "
                             "episode-changed."),
                   Flag("--message-line",
                        help="Also say the result on a tmux client's message line "
                             "(-c/--client's, else the one tmux picks), and exit 0 once "
                             "said: what the action menu's entries run (tmux shows any "
                             "other exit as a raw `'...' returned 4`).")),
            exits=(OK, (1, "an error: no tmux server, an unreachable API, several panes "
                           "match the selectors"), USAGE,
                   (3, "vanished: the pane is gone (or the API request), or no pane "
                       "matches"),
                   (4, "refused: gated, requires-unmet, wrong-agent, no-coverage, "
                       "episode-changed, or (HOST:%N) scope-denied: the host entry or the "
                       "host's serve does not grant the action's scope"),
                   (5, "refused: another tma act holds the pane's lock"),
                   (6, "refused: another tma act already answered this prompt"),
                   (124, "a command action timed out and was killed")),
            notes="A command action's own exit status passes through (outcome `exited`). "
                  "With --pane HOST:%N the answer is bound to the episode a fresh snapshot "
                  "of the host shows (or --expect-episode), under a slot kept in the state "
                  "dir before it is sent: after a dropped link the same command re-sends "
                  "that slot and the host answers with its stored receipt (cached), never "
                  "twice. See docs/how-to/fleet.md."),
    Command("mute", "Silence a pane's notifications (for a while, or until --clear).",
            selectors=SELECTOR,
            flags=(Flag("--pane", metavar="ID", type="pane",
                        help="The pane to mute (default: $TMUX_PANE); takes no selectors."),
                   Flag("--for", metavar="DURATION",
                        help="How long: <int>[s|m|h|d], a bare number is seconds "
                             "(default: until --clear)."),
                   Flag("--clear", help="Unmute instead."),
                   Flag("--list", help="List the muted panes and until when; mutes nothing "
                                       "(with selectors: only the panes they match).")),
            exits=(OK, ERROR, (2, "usage: a bad duration, --for with --clear, --pane with a "
                                  "selector, no target outside tmux, the default target "
                                  "($TMUX_PANE) runs no agent"),
                   (3, "the pane does not exist, or the selectors match no agent pane")),
            notes="Writes @agent_mute_until on each pane. A muted episode is consumed: "
                  "unmuting does not ring what it hid. Detection is unaffected."),
    Command("init", "First run: detect agents, wire their hooks, install the keys, check "
                    "the status line.",
            flags=(YES, CONFIG_DIR,
                   Flag("--conf", metavar="PATH",
                        help="The tmux config file install-keys edits and the status-line "
                             "advice names."),
                   Flag("--diff", help="Show each change as a full diff (else one line per "
                                       "agent; `d` at a prompt shows that change's diff)."),
                   Flag("--daemon", group="daemon",
                        help="Start the daemon now without asking."),
                   Flag("--no-daemon", group="daemon",
                        help="Start no daemon and leave the launcher line out of the key "
                             "file.")),
            exits=(OK, (1, "a step failed or was declined"), USAGE, INTERRUPTED_PROMPT)),
    Command("install-hooks", "Wire an agent's own hooks to tma (diff first, then ask).",
            # not choices: a user manifest may name an agent; the command says which exist
            args=(Arg("AGENT", "The agent to wire (required unless --all or --check).",
                      values=HOOK_AGENTS, optional=True),),
            flags=(
                Flag("--all", help="Every agent that already carries tma wiring."),
                Flag("--uninstall", help="Remove tma's wiring instead."),
                Flag("--check", help="Only verify the wiring (exit 1 on drift)."),
                Flag("--statusline", dest="statusline", const="on", group="statusline",
                     default="keep",
                     help="Put the context statusline shim in without asking (claude, "
                          "cursor), even if declined before; without either flag it is "
                          "asked about apart from the hooks, as tma init asks."),
                Flag("--no-statusline", dest="statusline", const="off", group="statusline",
                     help="Leave the statusline shim out without asking (removed if there) "
                          "and remember that choice."),
                YES,
            ) + AGENT_FILES + (
                CONFIG_DIR,
                Flag("--wrapper-path", metavar="PATH",
                     help="Where to write tma-hook (else TMA_WRAPPER_PATH, else next to "
                          "tma)."),
                Flag("--wrapper-ref", metavar="REF", choices=("absolute", "bare"),
                     help="How agent configs name tma-hook: full path or bare name "
                          "(default: [install] wrapper_ref)."),
            ),
            exits=(OK, (1, "an unknown or hookless agent, a declined prompt, a file that "
                           "cannot be written, --check drift"), USAGE, INTERRUPTED_PROMPT)),
    Command("install-keys", "Write tma's tmux key file and source it from your tmux.conf.",
            flags=(
                Flag("--check", help="Only verify: the managed file is current, sourced "
                                     "exactly once, and its hooks are on the running server."),
                Flag("--uninstall", help="Remove the managed file and the marked line (your "
                                         "tmux.conf back byte for byte)."),
                Flag("--mouse", help="Also bind clicks on the tma status segments (needs "
                                     "`set -g mouse on`, which tma never sets)."),
                Flag("--no-daemon", help="Leave the daemon launcher line out of the file."),
                YES,
                Flag("--conf", metavar="PATH",
                     help="The tmux.conf to edit (default: the first of ~/.tmux.conf, "
                          "$XDG_CONFIG_HOME/tmux/tmux.conf, ~/.config/tmux/tmux.conf)."),
                Flag("--config-dir", metavar="DIR",
                     help="Where the managed tmux.conf goes (else TMA_CONFIG_DIR, else "
                          "$XDG_CONFIG_HOME/tma)."),
            ),
            exits=(OK, (1, "--check drift, a declined or aborted (Ctrl-D) prompt, a file "
                           "that cannot be written"), USAGE, INTERRUPTED_PROMPT),
            notes="Shows the diff first, then asks; with a tmux server running, asks again "
                  "before loading the file into it."),
    Command("uninstall", "Remove every hook wiring, the tmux hooks and every tma option.",
            flags=(YES,) + AGENT_FILES + (CONFIG_DIR,),
            exits=(OK, (1, "a declined prompt or a file that cannot be written"), USAGE,
                   INTERRUPTED_PROMPT)),
    Command("doctor", "Diagnose detection tiers and silent disablers.",
            flags=(Flag("--json", help="Print the schema-1 JSON document."),
                   Flag("--exit-code",
                        help="Exit 1 on any warning or any pane below its manifest's tier.")),
            exits=(OK, (1, "no server, a broken config (named by key); with --exit-code any "
                           "warning"), USAGE)),
    Command("daemon", "Watch every pane through tmux control mode (the daemon tier).",
            flags=(Flag("--ensure", group="lifecycle",
                        help="Start one in the background unless one of this tma already "
                             "runs for this tmux server (one of another tma version or "
                             "install is replaced), then return."),
                   Flag("--stop", group="lifecycle",
                        help="Stop this tmux server's daemon and wait until it has exited."),
                   Flag("--restart", group="lifecycle",
                        help="Stop this tmux server's daemon (if one runs), then start one "
                             "as --ensure does.")),
            exits=((0, "stopped by a signal or by its tmux server exiting; already running; "
                       "no tmux server; with --ensure or --restart: running; with --stop: "
                       "stopped, or none was running"),
                   (1, "a broken config, a runtime dir that is not private, (--ensure, "
                       "--restart) a daemon that did not start, or (--stop) one that did "
                       "not stop"), USAGE),
            notes="One daemon per tmux server: its lock and socket live in "
                  "$XDG_RUNTIME_DIR/tma (else tma-<uid> under the temp dir). It reads a "
                  "pane when its output goes quiet and runs the full poll cycle every "
                  "[daemon] sweep_secs; it exits when its server does. See "
                  "docs/explanation/daemon.md."),
    Command("serve", "Serve this host's agents over stdio in the public wire protocol "
                     "(an SSH forced command).",
            flags=(Flag("--stdio", required=True,
                        help="Required: NDJSON frames on stdin and stdout, logs on stderr."),
                   Flag("--scope", metavar="LIST", default="read",
                        help="What the connection may do, a comma list of read, act:answer, "
                             "act:steer, act:always (read is always held). Set by the "
                             "spawner, never by the stream."),
                   Flag("--device", metavar="NAME",
                        help="Who connects (written by the forced command; kept in "
                             "receipts and logs, and the one a connection's share of the "
                             "seats and its receipts are counted by)."),
                   Flag("--interval", metavar="MS", type="int", default=2000,
                        help="The stream's cycle, in milliseconds (>= 250).")),
            exits=((0, "stdin closed, SIGTERM, or the connection ended: idle past [serve] "
                        "idle_secs, or its seat given to a newcomer"),
                   (1, "no tmux server, a broken config"),
                   (2, "usage error, or no seat: the host's connection cap or the "
                       "device's share")),
            notes="Speaks schema 1 of the protocol: hello, snapshot, subscribe, card, "
                  "dispatch (scope, then the slot ledger, then the broker with the episode "
                  "binder), receipts, window and event (a page of a pane's transcript "
                  "within the budget the device asks and the host clamps, one event with "
                  "its body). Pane titles never leave the host; a device names a pane, "
                  "never a path. See docs/reference/protocol.md."),
    Command("web", "Serve this machine's agents to a browser on loopback (`tma web pair` "
                   "pairs one).",
            args=(Arg("ACTION", "pair: print a one-time pairing code and the URL that "
                                "carries it (the server keeps running elsewhere).",
                      choices=("pair",), optional=True),),
            flags=(Flag("--port", metavar="N", type="int", default=7330,
                        help="The port (0: any free one; the URL printed names it). With "
                             "pair: the port the URL names."),
                   Flag("--bind", metavar="ADDR", default="127.0.0.1",
                        help="The loopback address to listen on (127.0.0.1 or ::1); any "
                             "other is refused: reach it through `tailscale serve`, "
                             "`ssh -L` or a reverse proxy."),
                   Flag("--interval", metavar="MS", type="int", default=2000,
                        help="The rows' cycle without a daemon, in milliseconds (>= 250)."),
                   Flag("--name", metavar="NAME",
                        help="With pair: the device's name (default browser-N)."),
                   Flag("--scope", metavar="LIST", default="read",
                        help="With pair: what the device may do, a comma list of read, "
                             "act:answer, act:steer, act:always (read is always held).")),
            exits=((0, "stopped (SIGTERM, Ctrl-C); pair: the code was printed"),
                   (1, "no tmux server, a broken config, the port is taken"),
                   (2, "usage error, or a --bind that is not loopback")),
            notes="Prints the URL it serves. The code is good for 10 minutes and 5 wrong "
                  "guesses, and travels in the URL's fragment (#pair=CODE), never in a "
                  "request line. Every API body is a schema-1 protocol frame. See "
                  "docs/how-to/phone.md and docs/explanation/security.md."),
    Command("device", "The browsers paired with `tma web` (list, grant, revoke).",
            subcommands=(
                Command("list", "The paired devices and their scopes.",
                        flags=(Flag("--json", help="Print the devices as a JSON document."),),
                        exits=(OK, (1, "an unreadable device file"), USAGE)),
                Command("grant", "Set a paired device's scopes (replacing its old ones).",
                        args=(Arg("NAME", "The device's name (tma device list)."),),
                        flags=(Flag("--scope", metavar="LIST", required=True,
                                    help="A comma list of read, act:answer, act:steer, "
                                         "act:always (read is always held)."),),
                        exits=(OK, (1, "no such device"), USAGE)),
                Command("revoke", "Forget a paired device: its next request is refused.",
                        args=(Arg("NAME", "The device's name (tma device list)."),),
                        exits=(OK, (1, "no such device"), USAGE)),
            ),
            exits=(OK, (1, "see the subcommand"), USAGE),
            notes="Kept in web/devices.json in tma's state directory (0600): each device's "
                  "name, scopes and the SHA-256 of its token, never the token."),
    Command("host", "The fleet: hosts whose agents `tma ls --hosts` shows (add, list, "
                    "check, remove).",
            subcommands=_HOST, exits=(OK, (1, "see the subcommand"), USAGE),
            notes="Kept in hosts.toml in tma's config directory (0600). The default "
                  "transport is `ssh -T` (BatchMode, a ControlMaster socket in the runtime "
                  "directory, ConnectTimeout, ServerAliveInterval) with no remote command: "
                  "the host's authorized_keys forced command runs `tma serve --stdio`. See "
                  "docs/how-to/fleet.md."),
    Command("reload", "Make the running daemon re-read its config and manifests.",
            exits=((0, "reloaded; also when no daemon (or no tmux server) runs"),
                   (1, "the daemon kept its running config (the reason is printed), or "
                       "did not answer"), USAGE),
            notes="Sends SIGHUP to this server's daemon and waits for its answer. All or "
                  "nothing: a broken config or manifest keeps the running one, and the "
                  "reason is printed and logged. The daemon also reloads an edited config "
                  "or manifest by itself within about 2 s; this does it at once."),
    Command("debug", "Manifest authoring and inspection: explain, capture, transitions, notify-test.",
            subcommands=_DEBUG, exits=(OK, ERROR, USAGE)),
    Command("demo", "A self-contained demo on a private tmux server.",
            flags=(Flag("--seconds", metavar="SECS", type="float", default=25.0,
                        help="How long the scripted run lasts."),
                   Flag("--keep",
                        help="Leave the demo server running afterwards and say how to stop "
                             "it.")),
            exits=(OK, (1, "tmux is missing or the demo failed"), USAGE)),
    Command("completions", "Print a shell completion script.",
            args=(Arg("SHELL", "bash, zsh or fish.", choices=SHELLS),),
            exits=(OK, USAGE)),
    Command("version", "Print the version.", exits=(OK,)),
    Command("help", "Show the command list, or one command's help.",
            args=(Arg("COMMAND", "The command to describe.", optional=True),),
            exits=(OK, USAGE)),
    Command("event", "The hook bridge: one agent event becomes a stamp.", internal=True,
            flags=(Flag("--agent", metavar="NAME", help="The agent (manifest name)."),
                   Flag("--kind", metavar="EVENT", help="The hook event, or context."),
                   Flag("--pane", metavar="ID", help="The pane (default: $TMUX_PANE)."),
                   Flag("--payload", metavar="PATH",
                        help="The event payload: - for stdin (the default), or a file.")),
            exits=((0, "always, whatever happened"),),
            notes="Never prints (but Claude's reply-lane decision), never fails."),
    Command("clear-attention", "Clear attention on the pane arrived at (tmux hooks run it).",
            internal=True, args=(Arg("PANE", "The pane id (#{pane_id})."),),
            exits=((0, "always; every failure is silent"),)),
)}


TABLE = Table(COMMANDS, GLOBALS, TOP_FLAGS, SELECTOR, DOCS)
public = TABLE.public
flag_names = TABLE.flag_names


def help_text(name: str, sub: str | None = None) -> str:
    from tma.ui import help  # the renderer (and textwrap) only when help is asked for

    return help.help_text(TABLE, name, sub)


def top_help() -> str:
    from tma.ui import help

    return help.top_help(TABLE)


# ---------------------------------------------------------------- parsing


def _type_error(exc: SelectorError) -> Exception:
    import argparse

    return argparse.ArgumentTypeError(str(exc))


def pane_id(text: str) -> str:
    try:
        return parse_pane_id(text)
    except SelectorError as exc:
        raise _type_error(exc) from None


def target(text: str) -> str:
    """A pane id, or a fleet host's pane (HOST:%N)."""
    try:
        return parse_target(text)
    except SelectorError as exc:
        raise _type_error(exc) from None


_TYPES: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "pane": pane_id,
                                           "target": target}


def parser(name: str):
    """The argparse parser for one command (its flags only: no globals, no selectors)."""
    return cmdparse.build(TABLE, name, _TYPES)


def parse(name: str, argv: list[str], session=None):
    """(selector or None, the command's arguments) from a command's argv (the global
    options already taken out into the Session).

    `-h`/`--help` prints the command's help and exits 0; a bad flag raises
    UsageError (exit 2 at the boundary); an unknown --agent lists the known ones.
    """
    cmd = COMMANDS[name]
    wants, sub = cmdparse.help_request(cmd, argv)
    if wants:
        sys.stdout.write(help_text(name, sub))
        raise SystemExit(0)
    sel = None
    rest = argv
    if cmd.selectors:
        sel, rest = common.take_selectors(rest)
    # switches alone (`ls --json`) need no argparse
    args = cmdparse.switches(cmd, rest) or parser(name).parse_args(rest)
    if sel is not None and sel.agent is not None and session is not None:
        common.check_agent(session, sel.agent)
    return sel, args
