"""`tma completions bash|zsh|fish`: a static completion script on stdout.

Covers the public commands (`tma.cli.main.COMMANDS` minus the internal verbs), the
global options, each command's flags and the fixed value sets (`--state`/`--until`,
`--format`, `--wrapper-ref`, `--trigger`, the shells). Runtime values (pane ids,
session names, agents) are not completed.

    tma completions bash > ~/.local/share/bash-completion/completions/tma
    tma completions zsh  > "${fpath[1]}/_tma"
    tma completions fish > ~/.config/fish/completions/tma.fish
"""

from __future__ import annotations

import sys

from tma.cli import common

SHELLS = ("bash", "zsh", "fish")
INTERNAL = frozenset({"event", "clear-attention", "supervise"})
STATES = ("idle", "working", "blocked", "unknown", "done")

# Fixed value sets by flag; "FILE" = a path, "" = a free value (nothing to offer).
VALUES: dict[str, tuple[str, ...] | str] = {
    "--state": STATES, "--until": STATES,
    "--format": ("tmux", "plain", "json", "prom"),
    "--wrapper-ref": ("absolute", "bare"),
    "--trigger": ("blocked", "done", "context_high"),
    "--prior": ("idle", "working", "blocked", "unknown"),
    "--config": "FILE", "--manifest-dir": "FILE", "--socket-path": "FILE", "--capture": "FILE",
    "--conf": "FILE", "--config-dir": "FILE", "--settings": "FILE", "--gemini-settings": "FILE",
    "--wrapper-path": "FILE", "--opencode-plugin": "FILE", "--codex-config": "FILE",
    "--codex-hooks": "FILE", "--cursor-hooks": "FILE", "--cursor-cli-config": "FILE",
    "--pi-extension": "FILE",
    "--socket-name": "", "-c": "", "--client": "", "--pane": "", "--session": "", "--repo": "",
    "--branch": "", "--agent": "", "--count": "", "--since": "", "--timeout": "", "--for": "",
    "--interval": "", "--arg": "", "--seconds": "", "--pattern": "",
}

GLOBALS = (
    ("--socket-name", "tmux -L NAME"),
    ("--socket-path", "tmux -S PATH"),
    ("--config", "config file"),
    ("--manifest-dir", "load agent manifests only from DIR"),
    ("--client", "acting tmux client"),
    ("--debug-timing", "one timing line per poll cycle on stderr"),
    ("--help", "show help"),
    ("--version", "print the version"),
)
SHORT_GLOBALS = ("-c", "-h", "-V")

SELECTOR = (
    ("--session", "only this tmux session"),
    ("--repo", "only this repository"),
    ("--branch", "only this branch"),
    ("--agent", "only this agent"),
    ("--state", "only these states (comma list)"),
)

DESCRIPTIONS = {
    "version": "print the version",
    "ls": "list agent panes",
    "status": "counts for the status line",
    "wait": "block until a pane reaches a state",
    "jump": "move to the pane that needs you",
    "act": "approve or deny a pending permission prompt",
    "uninstall": "remove every tma wiring and pane option",
    "mute": "silence notifications for panes",
    "subscribe": "stream agent state as JSON lines",
    "watch": "live dashboard",
    "daemon": "run the tier-3 daemon",
    "reload": "reload the daemon's config and manifests",
    "init": "first-run setup",
    "install-hooks": "wire agent hooks to tma",
    "install-keys": "install the tmux key bindings",
    "doctor": "diagnose detection tiers and silent disablers",
    "completions": "shell completion script",
    "debug": "explain / capture (manifest authoring)",
    "demo": "a self-contained demo on a private tmux server",
}

# command -> (flags with descriptions, uses the selector flags, positional words)
FLAGS: dict[str, tuple[tuple[tuple[str, str], ...], bool, tuple[str, ...]]] = {
    "ls": ((("--json", "the schema-1 JSON document"), ("--pane", "only this pane")), True, ()),
    "status": ((("--format", "output format"),), True, ()),
    "wait": ((("--pane", "wait on this pane"), ("--any", "the first pane in scope"),
              ("--all", "every pane in scope"), ("--count", "at least N panes"),
              ("--until", "target states (comma list)"),
              ("--since", "only an episode after EPOCH_MS"),
              ("--timeout", "give up after SECS (exit 124)"), ("--json", "JSON output")),
             True, ()),
    "jump": ((("--attention", "the next pane wanting you"), ("--blocked", "the longest-blocked"),
              ("--next", "the next agent pane"), ("--back", "back one step"),
              ("--home", "back to where you started"), ("--pane", "this pane"),
              ("--menu", "a menu of agents")), True, ()),
    "act": ((("--pane", "target pane"), ("--json", "JSON output")), False,
            ("approve", "deny")),
    "mute": ((("--pane", "target pane"), ("--for", "duration (30m, 2h, 1d)"),
              ("--clear", "unmute")), True, ()),
    "subscribe": ((("--json", "JSON lines (required)"), ("--interval", "poll every SECS"),
                   ("--changes-only", "only changed documents"),
                   ("--events", "transition edges")), True, ()),
    "watch": ((("--table", "start in the table view"),), True, ()),
    "daemon": ((("--ensure", "start one if none runs"),), False, ()),
    "reload": ((), False, ()),
    "init": ((("--yes", "no prompts"), ("--config-dir", "tma config dir"),
              ("--conf", "tmux config file")), False, ()),
    "uninstall": ((("--yes", "no prompts"),), False, ()),
    "install-hooks": ((("--all", "every wired agent"), ("--uninstall", "remove the wiring"),
                       ("--check", "verify the wiring"), ("--statusline", "install the shim"),
                       ("--no-statusline", "remove the shim"), ("--yes", "no prompt"),
                       ("--settings", "Claude settings file"),
                       ("--gemini-settings", "Gemini settings file"),
                       ("--config-dir", "tma config dir"), ("--wrapper-path", "tma-hook path"),
                       ("--wrapper-ref", "absolute or bare wrapper reference"),
                       ("--opencode-plugin", "OpenCode plugin path"),
                       ("--codex-config", "Codex config.toml"),
                       ("--codex-hooks", "Codex hooks.json"),
                       ("--cursor-hooks", "Cursor hooks.json"),
                       ("--cursor-cli-config", "Cursor CLI config"),
                       ("--pi-extension", "pi extension path")),
                      False, ("claude", "codex", "cursor", "gemini", "opencode", "pi")),
    "install-keys": ((("--uninstall", "remove the bindings"), ("--check", "verify"),
                      ("--mouse", "mouse bindings too"), ("--no-daemon", "no daemon line"),
                      ("--yes", "no prompt"), ("--conf", "tmux config file"),
                      ("--config-dir", "tma config dir")), False, ()),
    "doctor": ((("--json", "JSON report"), ("--exit-code", "exit 1 on any warning")), False, ()),
    "completions": ((), False, SHELLS),
    "debug": ((("--json", "JSON output"), ("--capture", "a capture file"),
               ("--agent", "manifest to use"), ("--prior", "prior state")),
              False, ("explain", "capture")),
    "demo": ((("--seconds", "how long the scripted run lasts"),
              ("--keep", "leave the demo server running")), False, ()),
    "version": ((), False, ()),
}


def public_commands() -> list[str]:
    from tma.cli.main import COMMANDS

    return [c for c in COMMANDS if c not in INTERNAL]


def _flags(cmd: str) -> list[tuple[str, str]]:
    flags, selector, _ = FLAGS.get(cmd, ((), False, ()))
    out = list(flags)
    if selector:
        out += [f for f in SELECTOR if f[0] not in dict(out)]
    return out


def _positionals(cmd: str) -> tuple[str, ...]:
    return FLAGS.get(cmd, ((), False, ()))[2]


def _valued() -> list[str]:
    return sorted(VALUES)


# ---------------------------------------------------------------- bash


def bash() -> str:
    cmds = public_commands()
    globals_ = " ".join([g for g, _ in GLOBALS] + list(SHORT_GLOBALS))
    fixed = [f"        {flag}) _tma_values \"{' '.join(v)}\" \"$prefix\"; return ;;"
             for flag, v in VALUES.items() if isinstance(v, tuple) and flag not in ("--state",
                                                                                   "--until")]
    files = "|".join(f for f, v in VALUES.items() if v == "FILE")
    free = "|".join(f for f, v in VALUES.items() if v == "")
    cases = []
    for c in cmds:
        words = " ".join([f for f, _ in _flags(c)] + list(_positionals(c)))
        cases.append(f"        {c}) opts=\"{words}\" ;;")
    nl = "\n"
    return f"""# bash completion for tma (generated by `tma completions bash`)
_tma_values() {{
    COMPREPLY=($(compgen -W "$1" -- "$2"))
}}

_tma_states() {{
    local cur="$1" pre=""
    if [[ "$cur" == *,* ]]; then
        pre="${{cur%,*}},"
        cur="${{cur##*,}}"
    fi
    COMPREPLY=($(compgen -P "$pre" -W "{' '.join(STATES)}" -- "$cur"))
}}

_tma() {{
    local cur prev prefix cmd opts i w
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev=""
    (( COMP_CWORD > 0 )) && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    # --flag=value: bash splits at '=' (COMP_WORDBREAKS)
    if [[ "$cur" == "=" ]]; then
        cur=""
    fi
    if [[ "$prev" == "=" ]] && (( COMP_CWORD > 1 )); then
        prev="${{COMP_WORDS[COMP_CWORD-2]}}"
    elif [[ "${{COMP_WORDS[COMP_CWORD]}}" == "=" ]]; then
        prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    fi
    prefix="$cur"

    case "$prev" in
        --state|--until) _tma_states "$cur"; return ;;
{nl.join(fixed)}
        {files}) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
        {free}) return ;;
    esac

    # the command is the first word that is not a global option or its value
    cmd=""
    i=1
    while (( i < COMP_CWORD )); do
        w="${{COMP_WORDS[i]}}"
        case "$w" in
            --socket-name|--socket-path|--config|--manifest-dir|-c|--client) (( i += 2 )); continue ;;
            -*) ;;
            *) cmd="$w"; break ;;
        esac
        (( i += 1 ))
    done

    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "{' '.join(cmds)} {globals_}" -- "$cur"))
        return
    fi
    case "$cmd" in
{nl.join(cases)}
        *) opts="" ;;
    esac
    COMPREPLY=($(compgen -W "$opts {globals_}" -- "$cur"))
}}

complete -F _tma tma
"""


# ---------------------------------------------------------------- zsh


def _zq(text: str) -> str:
    """Quote for a zsh single-quoted spec; brackets and colons escaped for _arguments."""
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _zspec(flag: str, desc: str) -> str:
    v = VALUES.get(flag)
    d = _zq(desc)
    if v is None:
        return f"'{flag}[{d}]'"
    if v == "FILE":
        return f"'{flag}=[{d}]:path:_files'"
    if v == "":
        return f"'{flag}=[{d}]:value: '"
    if flag in ("--state", "--until"):
        return f"'{flag}=[{d}]:states:_sequence compadd - {' '.join(v)}'"
    return f"'{flag}=[{d}]:value:({' '.join(v)})'"


def zsh() -> str:
    cmds = public_commands()
    described = "\n".join(f"    '{c}:{_zq(DESCRIPTIONS.get(c, c))}'" for c in cmds)
    globals_ = [_zspec(g, d) for g, d in GLOBALS if g not in ("--help", "--version", "--client")]
    globals_.append("'(-c --client)'{-c,--client=}'[acting tmux client]:client: '")
    cases = []
    for c in cmds:
        specs = [_zspec(f, d) for f, d in _flags(c)]
        pos = _positionals(c)
        if pos:
            specs.append(f"'1:{'shell' if c == 'completions' else 'word'}:({' '.join(pos)})'")
            specs.append("'*:: :'")
        body = " \\\n                ".join(["$globals"] + specs)
        cases.append(f"        {c})\n            _arguments -s \\\n                {body} ;;")
    nl = "\n"
    return f"""#compdef tma
# zsh completion for tma (generated by `tma completions zsh`)

_tma() {{
    local -a commands globals
    commands=(
{described}
    )
    globals=(
        {(nl + '        ').join(globals_)}
    )
    local cmd="" i w
    # the command is the first word that is not a global option or its value
    for (( i = 2; i < CURRENT; i++ )); do
        w=${{words[i]}}
        case $w in
            --socket-name|--socket-path|--config|--manifest-dir|-c|--client) (( i++ )) ;;
            -*) ;;
            *) cmd=$w; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        if [[ $PREFIX == -* ]]; then
            _arguments -s $globals '--help[show help]' '--version[print the version]'
        else
            _describe -t commands 'tma command' commands
        fi
        return
    fi
    words=("${{(@)words[i,-1]}}")
    (( CURRENT = CURRENT - i + 1 ))
    case $cmd in
{nl.join(cases)}
        *)
            _arguments -s $globals ;;
    esac
}}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _tma "$@"
else
    compdef _tma tma
fi
"""


# ---------------------------------------------------------------- fish


def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_flag(flag: str, desc: str, cond: str | None) -> str:
    parts = ["complete -c tma"]
    if cond:
        parts.append(f"-n {_fq(cond)}")
    if flag.startswith("--"):
        parts.append(f"-l {flag[2:]}")
    else:
        parts.append(f"-s {flag[1:]}")
    v = VALUES.get(flag)
    if v == "FILE":
        parts.append("-r -F")
    elif v == "":
        parts.append("-x")
    elif flag in ("--state", "--until"):
        parts.append("-x -a '(__tma_states)'")
    elif isinstance(v, tuple):
        parts.append(f"-x -a {_fq(' '.join(v))}")
    parts.append(f"-d {_fq(desc)}")
    return " ".join(parts)


def fish() -> str:
    cmds = public_commands()
    lines = [
        "# fish completion for tma (generated by `tma completions fish`)",
        "function __tma_command",
        "    set -l tokens (commandline -opc)",
        "    set -e tokens[1]",
        "    set -l skip 0",
        "    for t in $tokens",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch $t",
        "            case --socket-name --socket-path --config --manifest-dir -c --client",
        "                set skip 1",
        "            case '-*'",
        "            case '*'",
        "                echo $t",
        "                return 0",
        "        end",
        "    end",
        "    return 1",
        "end",
        "",
        "function __tma_needs_command",
        "    not __tma_command >/dev/null",
        "end",
        "",
        "function __tma_using",
        "    set -l c (__tma_command); or return 1",
        "    contains -- $c $argv",
        "end",
        "",
        "function __tma_states",
        "    set -l cur (string replace -r -- '^--[a-z]+=' '' (commandline -ct))",
        "    set -l pre (string match -r -- '^.*,' $cur)",
        f"    for s in {' '.join(STATES)}",
        "        echo $pre$s",
        "    end",
        "end",
        "",
        "complete -c tma -f",
    ]
    for c in cmds:
        lines.append(f"complete -c tma -n __tma_needs_command -a {c} "
                     f"-d {_fq(DESCRIPTIONS.get(c, c))}")
    for g, d in GLOBALS:
        if g == "--client":
            lines.append(f"complete -c tma -s c -l client -x -d {_fq(d)}")
            continue
        if g == "--help":
            lines.append(f"complete -c tma -s h -l help -d {_fq(d)}")
            continue
        if g == "--version":
            lines.append(f"complete -c tma -s V -l version -d {_fq(d)}")
            continue
        lines.append(_fish_flag(g, d, None))
    for c in cmds:
        cond = f"__tma_using {c}"
        for f, d in _flags(c):
            lines.append(_fish_flag(f, d, cond))
        pos = _positionals(c)
        if pos:
            lines.append(f"complete -c tma -n {_fq(cond)} -a {_fq(' '.join(pos))}")
    return "\n".join(lines) + "\n"


GENERATORS = {"bash": bash, "zsh": zsh, "fish": fish}


def main(argv: list[str]) -> int:
    _g, rest = common.split_globals(argv)
    if rest and rest[0] in ("-h", "--help"):
        sys.stdout.write("usage: tma completions bash|zsh|fish\n")
        return 0
    if len(rest) != 1:
        raise common.UsageError("expected one shell: bash, zsh or fish")
    shell = rest[0]
    if shell not in GENERATORS:
        raise common.UsageError(f"unsupported shell {shell!r} (expected one of: bash, zsh, fish)")
    sys.stdout.write(GENERATORS[shell]())
    return 0
