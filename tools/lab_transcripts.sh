#!/usr/bin/env bash
# Record the transcript fixtures of tests/fixtures/transcripts/{gemini-0.61.0,pi-0.73.1,
# opencode-1.18.33}: the real CLIs, driven in tmux by the agentlab (run-agent.sh) against
# its scripted fake model (mockllm.py) on 127.0.0.1, each scenario in a fresh throwaway HOME.
#
#   tools/lab_transcripts.sh OUT [AGENT[:SCENARIO,...] ...]   (default: every scenario)
#
# OUT/<agent>-<version>/ receives the store each scenario left behind (see the fixtures'
# README.md for what each holds). Environment:
#   LAB            the agentlab (default /work/shared/lab); copied, then patched with
#                  tools/lab_transcripts.patch (THINK{..}THINK reasoning, a settable gemini
#                  prompt token count, no opencode hook plugin, a settable tmux socket)
#   ROOT           scratch dir (default /tmp/tma-lab): the patched lab, HOMEs, work dirs
#   TMA_LIVE_CACHE the pinned agents (tests/live/install_agents.sh; default ~/.cache/tma-live)
#   PORT           the fake model's port (default 18947)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: lab_transcripts.sh OUT [AGENT[:SCENARIO,...] ...]}; shift
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
SRC_LAB=${LAB:-/work/shared/lab}
ROOT=${ROOT:-/tmp/tma-lab}
CACHE=${TMA_LIVE_CACHE:-$HOME/.cache/tma-live}
export AGENTLAB_ROOT=$ROOT/run MOCKLLM_PORT=${PORT:-18947} AGENTLAB_TMUX=tma-transcripts
declare -A VERSION=([gemini]=0.61.0 [pi]=0.73.1 [opencode]=1.18.33)
declare -A SCENARIOS=(
  [gemini]="plain tool-approved tool-denied question thinking error subagent compaction"
  [pi]="plain tool-approved tool-denied thinking error extras compaction"
  [opencode]="plain tool-approved tool-denied question thinking error attachment agent-mention subagent compaction"
)

rm -rf "$ROOT"; mkdir -p "$ROOT" "$AGENTLAB_ROOT"
cp -r "$SRC_LAB" "$ROOT/lab"
(cd "$ROOT/lab" && patch -s -p1 < "$HERE/lab_transcripts.patch") || exit 1
L=$ROOT/lab/run-agent.sh
for a in gemini pi opencode; do
  ln -sfn "$CACHE/$a-${VERSION[$a]}" "$AGENTLAB_ROOT/$a"
  [ -x "$AGENTLAB_ROOT/$a/node_modules/.bin/$a" ] || { echo "no $a-${VERSION[$a]} in $CACHE" >&2; exit 1; }
done

mock() {  # restart the fake model with the environment given as arguments
  $L mock-stop; sleep 0.5; env "$@" "$L" mock-start >/dev/null
}
busy() {  # the agent is working (its own spinner row)
  case $A in
    pi) $L show $A | grep -q "Working\.\.\.\|Compacting" ;;
    opencode) $L show $A | grep -q "esc interrupt" ;;
    gemini) ! $L show $A | grep -q "Type your message" ;;
  esac
}
idle() { sleep 1; for _ in $(seq 1 "${1:-60}"); do busy || break; sleep 1; done; sleep 2; }
fresh() {  # a new HOME and work dir, the agent started and waiting for a prompt
  $L stop $A; $L setup $A >/dev/null; $L start $A
  case $A in
    gemini) $L wait $A "Type your message" 40 && sleep 4 ;;
    pi) $L wait $A "mock-model" 40 && sleep 2 ;;
    opencode) $L wait $A "ctrl\+p commands" 60 && sleep 2 ;;
  esac
}
H() { echo "$AGENTLAB_ROOT/home-$A"; }
snap() {  # a consistent copy of opencode's live WAL database (SQLite's backup API)
  python3 - "$(H)/.local/share/opencode/opencode.db" "$1" <<'PY'
import sqlite3, sys
src = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
dst = sqlite3.connect(sys.argv[2]); src.backup(dst); dst.close(); src.close()
PY
}
tool() {  # RUNTOOL: the fake model asks for its shell command; answer the approval with $1
  $L send $A "Please RUNTOOL now"
  case $A in
    gemini) $L wait $A "Allow once" 30 || return 1
            [ "$1" = allow ] && $L keys $A Enter || $L keys $A Escape ;;
    pi) $L wait $A "→ Allow" 30 || return 1
        [ "$1" = allow ] && $L keys $A Enter || { $L keys $A Down; sleep 0.5; $L keys $A Enter; } ;;
    opencode) $L wait $A "Allow once" 30 || return 1; sleep 1
              [ -n "${2:-}" ] && snap "$2"
              if [ "$1" = allow ]; then $L keys $A Enter
              else $L keys $A Right; sleep 0.3; $L keys $A Right; sleep 0.5; $L keys $A Enter; fi ;;
  esac
  [ "$1" = allow ] && $L wait $A "TOOL RESULT SEEN" 30
  sleep 2; idle
}
QUESTION='"questions":[{"question":"Which colour should the button be","header":"Colour",'
OPTIONS='"options":[{"label":"Red","description":"A red button"},{"label":"Blue","description":"A blue button"}]}]'

scenario() {  # $A $S in a fresh session; leaves its store behind
  local S=$1 tmp=$ROOT/tmp; mkdir -p "$tmp"
  fresh || { echo "$A did not start" >&2; return 1; }
  case $A:$S in
    *:plain) $L send $A "Say hello please"; $L wait $A "Hello from mockllm" 30; idle ;;
    *:thinking) $L send $A "Say hello THINK{the user wants a greeting}THINK please"
                $L wait $A "Hello from mockllm" 30; idle ;;
    *:tool-approved) tool allow "$tmp/pending.db" ;;
    *:tool-denied) tool deny ;;
    gemini:question|opencode:question)
      local t='"type":"choice",'; [ $A = opencode ] && t=
      $L send $A "RUNTOOL CALLTOOL:$( [ $A = gemini ] && echo ask_user || echo question ){$QUESTION$t$OPTIONS}"
      $L wait $A "Answer Questions|esc dismiss" 30; sleep 1
      [ $A = opencode ] && snap "$tmp/pending.db"
      $L keys $A Enter; $L wait $A "TOOL RESULT SEEN" 30; idle ;;
    gemini:error|opencode:error) $L send $A "Please FAILHTTP400 now"; sleep 5; idle ;;
    pi:error) $L send $A "Please FAILHTTP500 now"; $L wait $A "Retry failed" 90; idle ;;
    pi:extras) $L send $A "/name lab session"; sleep 2
               $L send $A "!echo bang"; sleep 3; idle
               $L send $A "Please SLOWREPLY now"; $L wait $A "Working" 20; sleep 2
               $L keys $A Escape; sleep 2; idle ;;
    gemini:subagent)
      $L send $A 'RUNTOOL CALLTOOL:invoke_agent{"agent_name":"generalist","prompt":"RUNTOOL CALLTOOL:complete_task{\"result\":{\"response\":\"Subagent finished its task.\"}}"}'
      sleep 10; idle 90 ;;
    opencode:subagent)
      $L send $A 'RUNTOOL CALLTOOL:task{"description":"Say hello","prompt":"SAY{Subagent reply: nothing to do.}SAY","subagent_type":"general"}'
      sleep 5; idle 90 ;;
    opencode:attachment) $L keys $A -l "Summarise @README.md"; sleep 2; $L keys $A Enter; sleep 1
                         $L keys $A -l "please"; sleep 0.5; $L keys $A Enter
                         $L wait $A "Hello from mockllm" 30; idle ;;
    opencode:agent-mention) $L keys $A -l "Summarise @explore"; sleep 2; $L keys $A Tab; sleep 0.5
                            $L keys $A -l " please"; sleep 0.3; $L keys $A Enter
                            $L wait $A "Hello from mockllm" 30; idle ;;
    *:compaction)
      # gemini compresses only when the summary is smaller than the last prompt was
      [ $A = gemini ] && mock MOCKLLM_PROMPT_TOKENS=5000
      $L send $A "Say hello please"; $L wait $A "Hello from mockllm" 30; idle
      tool allow
      $L send $A "$( [ $A = gemini ] && echo /compress || echo /compact )"; sleep 3; idle 90
      [ $A = gemini ] && mock ;;
    *) echo "no scenario $A:$S" >&2; return 1 ;;
  esac
  $L show $A > "$tmp/screen.txt"
  local dir=$OUT/$A-${VERSION[$A]}; mkdir -p "$dir"
  case $A in
    gemini|pi)  # copy the session files before the exit: gemini deletes one with nothing resumable
      python3 "$HERE/lab_transcripts_export.py" jsonl "$A" "$S" "$(H)" "$AGENTLAB_ROOT/work-$A" "$dir" ;;
    opencode)
      $L keys $A C-c; sleep 3; snap "$tmp/final.db"
      python3 "$HERE/lab_transcripts_export.py" sql "$tmp/final.db" "$dir/$S.sql"
      [ -f "$tmp/pending.db" ] && python3 "$HERE/lab_transcripts_export.py" sql "$tmp/pending.db" "$dir/$S-pending.sql" ;;
  esac
  cp "$tmp/screen.txt" "$ROOT/screen-$A-$S.txt"
  rm -rf "$tmp"; $L stop $A
  echo "recorded $A $S"
}

mock
for spec in ${*:-gemini pi opencode}; do
  A=${spec%%:*}
  list=${SCENARIOS[$A]:-}; [ "$spec" != "$A" ] && list=${spec#*:}; list=${list//,/ }
  for s in $list; do scenario "$s"; done
done
$L down
