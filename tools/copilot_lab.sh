#!/usr/bin/env bash
# GitHub Copilot CLI lab: drive the real CLI by hand in a private tmux server against the lab's
# fake model on 127.0.0.1 (../shared/lab/mockllm.py), with a throwaway HOME, every hook event
# logged by hooklog.py. Used for docs/internal/copilot-notes.md and the copilot captures
# (the launch line is the one the notes give).
#
#   copilot_lab.sh mock-start | mock-stop     (MOCK_SLOW=seconds for SLOWREPLY/slow-all replies)
#   copilot_lab.sh slow on|off                 every reply slow while on (MOCKLLM_SLOW_ALL_FLAG)
#   copilot_lab.sh setup                       fresh HOME (folder pre-trusted, hooks) + project
#   copilot_lab.sh start [COLS]                session `copilot`: bash, then `copilot`
#                                              (COPILOTLAB_ENV="K=V …" adds to its environment)
#   copilot_lab.sh send TEXT | keys KEY.. | show | info | down
set -u
ROOT=${COPILOTLAB_ROOT:-/tmp/copilotlab}
LAB=${LAB_DIR:-/work/shared/lab}
PORT=${MOCKLLM_PORT:-18097}
BIN=${COPILOT_BIN:-$HOME/.cache/tma-live/copilot-1.0.102/node_modules/.bin}
SOCK=${COPILOTLAB_SOCK:-copilotlab}
T="tmux -L $SOCK -f /dev/null"
H=$ROOT/home W=$ROOT/proj FLAG=$ROOT/slow-all
mkdir -p "$ROOT/logs" "$ROOT/hooks"

setup() {
  rm -rf "$H" "$W"; mkdir -p "$H/.copilot/hooks" "$W"
  (cd "$W" && git init -q . && echo "# scratch project" > README.md)
  python3 - "$H/.copilot" "$LAB" "$W" <<'PY'
import json, sys
d, lab, work = sys.argv[1], sys.argv[2], sys.argv[3]
json.dump({"trustedFolders": [work]}, open(f"{d}/config.json", "w"))
evs = ["sessionStart", "sessionEnd", "userPromptSubmitted", "preToolUse", "postToolUse",
       "postToolUseFailure", "permissionRequest", "notification", "agentStop",
       "subagentStart", "subagentStop", "errorOccurred", "preCompact", "postCompact"]
hooks = {e: [{"type": "command", "bash": f"python3 {lab}/hooklog.py copilot {e}",
              "timeoutSec": 10}] for e in evs}
json.dump({"version": 1, "hooks": hooks}, open(f"{d}/hooks/lab.json", "w"), indent=2)
PY
  echo "setup: HOME=$H cwd=$W"
}

start() {
  $T kill-session -t copilot 2>/dev/null
  $T new-session -d -s copilot -x "${1:-100}" -y 30 -c "$W" \
    "env -i HOME=$H PATH=$BIN:/usr/local/bin:/usr/bin:/bin TERM=xterm-256color LANG=C.UTF-8 SHELL=/bin/bash HOOKLOG_DIR=$ROOT/hooks COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:$PORT/v1 COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_API_KEY=mock-key COPILOT_MODEL=mock-model COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false ${COPILOTLAB_ENV:-} PS1='lab\$ ' bash --norc --noprofile"
  sleep 0.5
  $T send-keys -t copilot -l "copilot 2>>$ROOT/logs/copilot.stderr"; $T send-keys -t copilot Enter
}

info() {
  local pid
  echo "pane_current_command=$($T display -p -t copilot '#{pane_current_command}')"
  echo "pane_title=$($T display -p -t copilot '#{pane_title}')"
  pid=$($T display -p -t copilot '#{pane_pid}')
  ps -o pid,ppid,stat,comm,args --forest -g "$(ps -o sid= -p "$pid" | tr -d ' ')" | cut -c1-200
}

cmd=${1:-}; shift || true
case $cmd in
  mock-start) MOCKLLM_SLOW_ALL_FLAG=$FLAG python3 "$LAB/mockllm.py" --port "$PORT" \
                --log "$ROOT/mock-requests.jsonl" --max-seconds 7200 \
                --slow-seconds "${MOCK_SLOW:-30}" > "$ROOT/logs/mock.out" 2>&1 &
              echo $! > "$ROOT/mock.pid"; sleep 0.7; cat "$ROOT/logs/mock.out" ;;
  mock-stop) kill "$(cat "$ROOT/mock.pid")" 2>/dev/null; rm -f "$ROOT/mock.pid" ;;
  slow) if [ "${1:-}" = on ]; then touch "$FLAG"; else rm -f "$FLAG"; fi ;;
  setup) setup ;;
  start) start "${1:-100}" ;;
  send) $T send-keys -t copilot -l "$1"; sleep 0.3; $T send-keys -t copilot Enter ;;
  keys) $T send-keys -t copilot "$@" ;;
  show) $T capture-pane -p -t copilot ;;
  info) info ;;
  down) $T kill-server 2>/dev/null; kill "$(cat "$ROOT/mock.pid" 2>/dev/null)" 2>/dev/null; rm -f "$ROOT/mock.pid" "$FLAG" ;;
  *) sed -n 2,12p "$0"; exit 2 ;;
esac
