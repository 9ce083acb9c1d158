#!/usr/bin/env bash
# Record the transcript fixtures of tests/fixtures/transcripts/{copilot-1.0.102,qwen-0.24.4}:
# the real CLIs in a private tmux server (-L tma-txcq) against the lab's scripted fake model
# (/work/shared/lab/mockllm.py, unpatched) on 127.0.0.1, each scenario in a fresh HOME.
#
#   tools/lab_transcripts_cq.sh OUT [AGENT[:SCENARIO,...] ...]   (default: every scenario)
#
# OUT/<agent>-<version>/<scenario>.jsonl receives the session's file as the CLI left it, and
# OUT/<agent>-<version>/paths.json where it was (see the fixtures' README.md). Environment:
#   LAB            the agentlab (default /work/shared/lab); its mockllm.py is copied and
#                  given a settable chat-completions prompt token count
#                  (MOCKLLM_PROMPT_TOKENS: Qwen's /compress keeps a summary only when it
#                  is smaller than the last prompt was, and the fake's 100 tokens never are)
#   ROOT           scratch dir (default /tmp/tma-txcq): HOMEs, work dirs, logs
#   TMA_LIVE_CACHE the pinned agents (tests/live/install_agents.sh; default ~/.cache/tma-live)
#   NODE22         a directory with node >= 22 for Qwen (default $TMA_LIVE_NODE22)
#   PORT           the fake model's port (default 18961)
set -u
OUT=${1:?usage: lab_transcripts_cq.sh OUT [AGENT[:SCENARIO,...] ...]}; shift
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
LAB=${LAB:-/work/shared/lab}
ROOT=${ROOT:-/tmp/tma-txcq}
CACHE=${TMA_LIVE_CACHE:-$HOME/.cache/tma-live}
NODE22=${NODE22:-${TMA_LIVE_NODE22:-}}
PORT=${PORT:-18961}
T="tmux -L tma-txcq -f /dev/null"
declare -A VERSION=([copilot]=1.0.102 [qwen]=0.24.4)
declare -A SCENARIOS=(
  [copilot]="plain tool-approved tool-denied denied-feedback error long interrupted compaction"
  [qwen]="plain tool-approved tool-denied error long interrupted compaction"
)
LONG='SAY{'"$(for i in $(seq 1 40); do printf 'Line %d of a long scripted reply, written so the answer spans many rows.\\n' "$i"; done)"'}SAY'

mkdir -p "$ROOT"
sed 's/usage = {"prompt_tokens": 100, /usage = {"prompt_tokens": int(os.environ.get("MOCKLLM_PROMPT_TOKENS", "100")), /' \
  "$LAB/mockllm.py" > "$ROOT/mockllm.py"
grep -q MOCKLLM_PROMPT_TOKENS "$ROOT/mockllm.py" || { echo "mockllm.py: usage line not found" >&2; exit 1; }
mock() {  # (re)start the fake model, with the environment given as arguments
  [ -f "$ROOT/mock.pid" ] && kill "$(cat "$ROOT/mock.pid")" 2>/dev/null; sleep 0.5
  env "$@" python3 "$ROOT/mockllm.py" --port "$PORT" --log "$ROOT/mock-requests.jsonl" --max-seconds 3600 \
    --slow-seconds 6 > "$ROOT/mock.out" 2>&1 &
  echo $! > "$ROOT/mock.pid"; sleep 0.7
}
show() { $T capture-pane -p -t "$A" 2>/dev/null; }
wait_for() {  # wait_for REGEX SECONDS
  for _ in $(seq 1 $(( ${2:-30} * 2 ))); do show | grep -Eq "$1" && return 0; sleep 0.5; done
  echo "timeout waiting for '$1' ($A $S)" >&2; show | tail -15 >&2; return 1
}
send() { $T send-keys -t "$A" -l "$1"; sleep 0.4; $T send-keys -t "$A" Enter; }
keys() { $T send-keys -t "$A" "$@"; }
H() { echo "$ROOT/home-$A"; }
W() { echo "$ROOT/work-$A"; }
IDLE_copilot='/ commands'
IDLE_qwen='Type your message'
BUSY_copilot='esc esc (interrupt|edit prompt)'
BUSY_qwen='esc to cancel'
idle() {  # the composer is back and nothing is running (Qwen keeps its composer on screen)
  sleep 2; wait_for "${1:-}$(eval echo "\$IDLE_$A")" "${2:-60}" || return 1
  for _ in $(seq 1 $(( ${2:-60} * 2 ))); do show | grep -Eq "$(eval echo "\$BUSY_$A")" || break; sleep 0.5; done
  sleep 2
}

fresh() {
  $T kill-session -t "$A" 2>/dev/null
  rm -rf "$(H)" "$(W)"; mkdir -p "$(H)" "$(W)"
  (cd "$(W)" && git init -q . && echo "# scratch project" > README.md)
  local bin=$CACHE/$A-${VERSION[$A]}/node_modules/.bin envs path
  path=$bin:/usr/local/bin:/usr/bin:/bin
  case $A in
    copilot)
      mkdir -p "$(H)/.copilot"; echo "{\"trustedFolders\": [\"$(W)\"]}" > "$(H)/.copilot/config.json"
      envs="COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:$PORT/v1 COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_API_KEY=mock-key COPILOT_MODEL=mock-model COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false" ;;
    qwen)
      path=$bin:$NODE22:/usr/local/bin:/usr/bin:/bin
      mkdir -p "$(H)/.qwen"
      echo '{"general": {"enableAutoUpdate": false}, "tools": {"approvalMode": "default"}, "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}' > "$(H)/.qwen/settings.json"
      envs="OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 OPENAI_API_KEY=sk-mock-0000 OPENAI_MODEL=mock-model" ;;
  esac
  $T new-session -d -s "$A" -x 120 -y 40 -c "$(W)" \
    "env -i HOME=$(H) PATH=$path TERM=xterm-256color LANG=C.UTF-8 SHELL=/bin/bash $envs PS1='lab\$ ' bash --norc --noprofile"
  sleep 0.5; send "$A"
  idle "" 60
}

tool() {  # RUNTOOL: the fake model asks for its shell command; $1 allow|deny
  send "Please RUNTOOL now"
  case $A in
    copilot) wait_for "Do you want to run this command" 30 || return 1; sleep 1
             if [ "$1" = allow ]; then keys 1; else keys Escape; fi ;;
    qwen) wait_for "1\. Yes, allow once" 30 || return 1; sleep 1
          if [ "$1" = allow ]; then keys Enter; else keys Escape; fi ;;
  esac
  [ "$1" = allow ] && wait_for "TOOL RESULT SEEN" 30
  idle
}

scenario() {
  S=$1
  fresh || { echo "$A did not start" >&2; return 1; }
  case $S in
    plain) send "Say hello please"; wait_for "Hello from mockllm" 30; idle ;;
    tool-approved) tool allow ;;
    tool-denied) tool deny ;;
    denied-feedback)  # Copilot: the dialog's last option, "No, and tell Copilot what to do differently"
      send "Please RUNTOOL now"; wait_for "Do you want to run this command" 30 || return 1; sleep 1
      keys 2; sleep 1; $T send-keys -t "$A" -l "not now"; sleep 0.5; keys Enter; sleep 3; idle ;;
    error) send "Please FAILHTTP400 now"; sleep 5; idle "" 120 ;;
    retried) send "Please FAILHTTP429x2 now"; wait_for "Hello from mockllm" 90; idle ;;
    long) send "Please reply at length $LONG"; wait_for "Line 40 of a long" 30; idle ;;
    interrupted)
      send "Please SLOWREPLY now"; wait_for "Working slowly" 20; sleep 1
      if [ $A = copilot ]; then keys Escape; sleep 0.2; keys Escape; else keys Escape; fi
      idle ;;
    compaction)
      [ $A = qwen ] && mock MOCKLLM_PROMPT_TOKENS=5000
      send "Say hello please"; wait_for "Hello from mockllm" 30; idle
      tool allow
      send "$( [ $A = copilot ] && echo /compact || echo /compress )"; sleep 5; idle "" 90
      [ $A = qwen ] && mock ;;
    *) echo "no scenario $A:$S" >&2; return 1 ;;
  esac
  show > "$ROOT/screen-$A-$S.txt"
  # quit the agent (ctrl+c twice), so what it writes at exit is in the file too
  keys C-c; sleep 0.4; keys C-c; sleep 3
  # the session's file as OUT/<agent>-<version>/<scenario>.jsonl, and where it was in paths.json
  local pattern
  case $A in
    copilot) pattern='.copilot/session-state/*/events.jsonl' ;;
    qwen) pattern='.qwen/projects/*/chats/*.jsonl' ;;
  esac
  python3 - "$(H)" "$(W)" "$pattern" "$OUT/$A-${VERSION[$A]}" "$S" <<'PY' || return 1
import glob, json, os, shutil, sys
home, cwd, pattern, out, scenario = sys.argv[1:]
found = glob.glob(os.path.join(home, pattern))
if len(found) != 1:
    sys.exit(f"{scenario}: {len(found)} session files under {home} ({pattern})")
os.makedirs(out, exist_ok=True)
shutil.copyfile(found[0], os.path.join(out, scenario + ".jsonl"))
index = os.path.join(out, "paths.json")
paths = json.load(open(index)) if os.path.exists(index) else {}
paths[scenario + ".jsonl"] = {"path": os.path.relpath(found[0], home), "home": home, "cwd": cwd}
with open(index, "w") as fh:
    json.dump(dict(sorted(paths.items())), fh, indent=2)
    fh.write("\n")
PY
  $T kill-session -t "$A" 2>/dev/null
  echo "recorded $A $S"
}

mock
for spec in ${*:-copilot qwen}; do
  A=${spec%%:*}
  list=${SCENARIOS[$A]:-}; [ "$spec" != "$A" ] && list=${spec#*:}; list=${list//,/ }
  for s in $list; do scenario "$s"; done
done
$T kill-server 2>/dev/null
kill "$(cat "$ROOT/mock.pid")" 2>/dev/null; rm -f "$ROOT/mock.pid"
