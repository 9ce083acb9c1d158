#!/usr/bin/env bash
# Qwen Code lab: drive the real CLI by hand in a private tmux server against the lab's fake
# model on 127.0.0.1 (../shared/lab/mockllm.py), with a throwaway HOME. Used to write
# docs/internal/qwen-notes.md and the qwen captures.
#
#   qwen_lab.sh mock-start | mock-stop
#   qwen_lab.sh setup [trust]     fresh HOME + project; `trust` turns folder trust on
#   qwen_lab.sh start [COLS]      session `qwen`: bash, then `qwen`
#   qwen_lab.sh send TEXT | keys KEY.. | show | info | down
set -u
ROOT=${QWENLAB_ROOT:-/tmp/qwenlab}
LAB=${LAB_DIR:-/work/shared/lab}
PORT=${MOCKLLM_PORT:-18093}
QWEN_BIN=${QWEN_BIN:-$HOME/.cache/tma-live/qwen-0.24.4/node_modules/.bin}
NODE_BIN=${NODE_BIN:-$(dirname "$(readlink -f "$0")")/../.venv/node22}
T="tmux -L ${QWENLAB_SOCK:-qwenlab} -f /dev/null"
H=$ROOT/home W=$ROOT/proj
mkdir -p "$ROOT/logs" "$ROOT/hooks"

setup() {
  rm -rf "$H" "$W"; mkdir -p "$H/.qwen" "$W"
  (cd "$W" && git init -q . && echo "# scratch project" > README.md)
  python3 - "$H/.qwen/settings.json" "$LAB" "${1:-}" <<'PY'
import json, sys
path, lab, trust = sys.argv[1], sys.argv[2], sys.argv[3] == "trust"
evs = ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
       "PostToolUseFailure", "PostToolBatch", "PermissionRequest", "PermissionDenied",
       "Notification", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
       "PreCompact", "PostCompact"]
hooks = {}
for e in evs:
    entry = {"hooks": [{"type": "command", "command": f"python3 {lab}/hooklog.py qwen {e}"}]}
    if e in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
             "PermissionDenied", "Notification", "SessionStart", "PreCompact"):
        entry["matcher"] = "*"
    hooks[e] = [entry]
s = {"general": {"enableAutoUpdate": False, "disableAutoUpdate": True},
     "tools": {"approvalMode": "default"},
     "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": trust}},
     "privacy": {"usageStatisticsEnabled": False},
     "telemetry": {"enabled": False},
     "hooks": hooks}
json.dump(s, open(path, "w"), indent=2)
PY
  echo "setup: HOME=$H cwd=$W"
}

start() {
  $T kill-session -t qwen 2>/dev/null
  $T new-session -d -s qwen -x "${1:-100}" -y 30 -c "$W" \
    "env -i TMUX=\"\$TMUX\" TMUX_PANE=\"\$TMUX_PANE\" HOME=$H PATH=$QWEN_BIN:$NODE_BIN:/usr/local/bin:/usr/bin:/bin TERM=xterm-256color LANG=C.UTF-8 SHELL=/bin/bash HOOKLOG_DIR=$ROOT/hooks OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 OPENAI_API_KEY=sk-mock-0000 OPENAI_MODEL=mock-model PS1='lab\$ ' bash --norc --noprofile"
  sleep 0.5
  $T send-keys -t qwen -l "qwen 2>>$ROOT/logs/qwen.stderr"; $T send-keys -t qwen Enter
}

info() {
  local pid
  echo "pane_current_command=$($T display -p -t qwen '#{pane_current_command}')"
  echo "pane_title=$($T display -p -t qwen '#{pane_title}')"
  pid=$($T display -p -t qwen '#{pane_pid}')
  ps -o pid,ppid,stat,comm,args --forest -g "$(ps -o sid= -p "$pid" | tr -d ' ')" | cut -c1-200
}

cmd=${1:-}; shift || true
case $cmd in
  mock-start) python3 "$LAB/mockllm.py" --port "$PORT" --log "$ROOT/mock-requests.jsonl" \
                --max-seconds 7200 --slow-seconds "${MOCK_SLOW:-30}" > "$ROOT/logs/mock.out" 2>&1 & echo $! > "$ROOT/mock.pid"; sleep 0.7; cat "$ROOT/logs/mock.out" ;;
  mock-stop) kill "$(cat "$ROOT/mock.pid")" 2>/dev/null; rm -f "$ROOT/mock.pid" ;;
  setup) setup "${1:-}" ;;
  start) start "${1:-100}" ;;
  send) $T send-keys -t qwen -l "$1"; sleep 0.3; $T send-keys -t qwen Enter ;;
  keys) $T send-keys -t qwen "$@" ;;
  show) $T capture-pane -p -t qwen ;;
  info) info ;;
  down) $T kill-server 2>/dev/null; kill "$(cat "$ROOT/mock.pid" 2>/dev/null)" 2>/dev/null; rm -f "$ROOT/mock.pid" ;;
  *) sed -n 2,11p "$0"; exit 2 ;;
esac
