#!/usr/bin/env bash
# aider lab: drive the real CLI by hand in a private tmux server against the lab's fake
# model on 127.0.0.1 (../shared/lab/mockllm.py), with a throwaway HOME. Used to write
# docs/internal/aider-notes.md and the aider captures.
#
#   aider_lab.sh mock-start | mock-stop
#   aider_lab.sh setup [git]      fresh HOME + project (`git`: the project is a git repo)
#   aider_lab.sh start [COLS]     session `aider`: bash, then `aider`
#   aider_lab.sh send TEXT | keys KEY.. | show | info | down
#   aider_lab.sh capture-all [OUTDIR]   every fixture screen at 40/80/120/200 columns
#   aider_lab.sh capture-errors [OUTDIR]  the failed and the retried model call only
set -u
ROOT=${AIDERLAB_ROOT:-/tmp/aiderlab}
LAB=${LAB_DIR:-/work/shared/lab}
PORT=${MOCKLLM_PORT:-18094}
AIDER_BIN=${AIDER_BIN:-$HOME/.cache/tma-live/aider-0.86.2/venv/bin}
T="tmux -L aiderlab -f /dev/null"
H=$ROOT/home W=$ROOT/proj
mkdir -p "$ROOT/logs" "$ROOT/hooks"

setup() {
  rm -rf "$H" "$W"; mkdir -p "$H/.aider/caches" "$W"
  if [ "${1:-}" = git ]; then (cd "$W" && git init -q . && echo "# scratch project" > README.md)
  else echo "# scratch project" > "$W/README.md"; fi
  cat > "$H/.aider.conf.yml" <<YML
model: openai/mock-model
check-update: false
analytics-disable: true
show-release-notes: false
gitignore: false
git: ${AIDER_GIT:-false}
edit-format: ${AIDER_EDIT_FORMAT:-diff}
notifications: true
notifications-command: python3 $LAB/hooklog.py aider notify
YML
  # model facts so nothing is fetched: litellm reads its bundled map
  # (LITELLM_LOCAL_MODEL_COST_MAP), aider its cache file (fresh, so not refreshed)
  printf '{"openai/mock-model": {"max_input_tokens": 100000, "max_output_tokens": 4096, "input_cost_per_token": 0, "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}}\n' \
    > "$H/.aider/caches/model_prices_and_context_window.json"
  echo "setup: HOME=$H cwd=$W"
}

start() {
  $T kill-session -t aider 2>/dev/null
  $T new-session -d -s aider -x "${1:-100}" -y 30 -c "$W" \
    "env -i TMUX=\"\$TMUX\" TMUX_PANE=\"\$TMUX_PANE\" HOME=$H PATH=$AIDER_BIN:/usr/local/bin:/usr/bin:/bin TERM=xterm-256color LANG=C.UTF-8 SHELL=/bin/bash HOOKLOG_DIR=$ROOT/hooks OPENAI_API_BASE=http://127.0.0.1:$PORT/v1 OPENAI_API_KEY=sk-mock-0000 LITELLM_LOCAL_MODEL_COST_MAP=True PS1='lab\$ ' bash --norc --noprofile"
  sleep 0.5
  $T send-keys -t aider -l "aider 2>>$ROOT/logs/aider.stderr"; $T send-keys -t aider Enter
}

info() {
  local pid
  echo "pane_current_command=$($T display -p -t aider '#{pane_current_command}')"
  echo "pane_title=$($T display -p -t aider '#{pane_title}')"
  pid=$($T display -p -t aider '#{pane_pid}')
  ps -o pid,ppid,pgid,tpgid,stat,comm,args --forest -g "$(ps -o sid= -p "$pid" | tr -d ' ')" | cut -c1-200
}

# ---- the fixtures: each screen waited for (never a blind sleep) and captured as tma reads it
CAP=$(dirname "$(readlink -f "$0")")/lab_capture.py
LASTQ='[^[]*\[(?:Yes|No)\]: *\s*\Z'   # a question is the last row
PROMPT='^[a-z -]*>(?: [^\n]*)?\s*\Z'                         # the input prompt is the last row
cap() {  # name wait-re [absent-re]
  python3 "$CAP" capture -L aiderlab -t aider --agent aider --version 0.86.2 --step "$1" \
    --wait-re "$2" ${3:+--absent-re "$3"} --timeout ${CAP_TIMEOUT:-20} -o "$OUT/aider-0.86.2_${1}_w$COLS.txt"
}
waitfor() { python3 "$CAP" wait -L aiderlab -t aider --wait-re "$1" --timeout ${CAP_TIMEOUT:-20} >/dev/null; }
say() { send "SAY{$1}SAY"; }
send() { $T send-keys -t aider -l "$1"; sleep 0.3; $T send-keys -t aider Enter; }

capture_width() {  # the plain walk, no git
  COLS=$1
  setup >/dev/null; start "$COLS"
  cap idle "$PROMPT" "Tokens:"
  send "hello there"; cap idle_after_text "Tokens: [^\n]*\n(?:.*\n)*$PROMPT"
  $T send-keys -t aider -l "a draft that is not sent yet"
  cap idle_draft "^[a-z ]*> a draft that is not sent yet\s*\Z"
  $T send-keys -t aider C-u; waitfor "$PROMPT"
  send "SLOWANY please"; cap working_waiting "Waiting for openai/mock-model"
  cap working_streaming "Working slowly through\s*\Z"
  $T send-keys -t aider C-c; cap idle_after_interrupt "again to exit\n(?:.*\n)*$PROMPT"
  say '```bash\necho hi >> ran.txt\n```'; cap blocked_permission_shell "^Run shell command\?$LASTQ"
  $T send-keys -t aider n Enter; cap idle_after_deny "Run shell command[^[]*\[Yes\]: n\n(?:.*\n)*$PROMPT"
  say 'Running it:\n\n```bash\necho hi >> ran.txt\n```'; waitfor "^Run shell command\?$LASTQ"
  $T send-keys -t aider y Enter; cap idle_after_tool "Running echo hi >> ran.txt\n(?:.*\n)*$PROMPT"
  say '```bash\nls\n```'; waitfor "^Run shell command\?$LASTQ"; $T send-keys -t aider y Enter
  cap blocked_question_output "^Add command output to the chat\?$LASTQ"
  $T send-keys -t aider n Enter; waitfor "Add command output[^[]*\[Yes\]: n\n(?:.*\n)*$PROMPT"
  say 'Here:\n\nhello.txt\n```\n<<<<<<< SEARCH\n=======\nhello world\n>>>>>>> REPLACE\n```'
  cap blocked_permission_create "^Create new file\?$LASTQ"
  $T send-keys -t aider Enter; cap idle_after_edit "Applied edit to hello.txt\n(?:.*\n)*$PROMPT"
  $T send-keys -t aider C-d; cap unknown_shell_after_exit "^lab\\$ ?\s*\Z"
}

capture_git() {  # git questions: the two startup ones, and a file the reply names
  COLS=$1
  AIDER_GIT=true AIDER_EDIT_FORMAT=whole setup >/dev/null; start "$COLS"  # no repo yet
  cap blocked_question_git_init "^No git repo found, create one$LASTQ"
  $T send-keys -t aider n Enter; waitfor "$PROMPT"
  $T send-keys -t aider C-d; waitfor "^lab\\$ ?\s*\Z"
  AIDER_GIT=true AIDER_EDIT_FORMAT=whole setup git >/dev/null
  sed -i 's/^gitignore: false/gitignore: true/' "$H/.aider.conf.yml"
  (cd "$W" && git add README.md && git -c user.name=lab -c user.email=lab@lab commit -qm init)
  start "$COLS"
  cap blocked_question_gitignore "^Add \\.aider\\* to \\.gitignore$LASTQ"
  $T send-keys -t aider y Enter; waitfor "$PROMPT"
  say 'Please look at README.md first.'; cap blocked_question_add_file "^Add file to the chat\\?$LASTQ"
  $T send-keys -t aider n Enter; waitfor "Add file to the chat[^[]*\[Yes\]: n\\n(?:.*\\n)*$PROMPT"
  $T send-keys -t aider C-d; waitfor "^lab\\$ ?\s*\Z"
}

capture_errors() {  # a model call that fails (400: no retry) and one that is retried (500)
  COLS=$1
  setup >/dev/null; start "$COLS"; waitfor "$PROMPT"
  send "FAILHTTP400 please"; cap idle_after_api_error "scripted HTTP 400\n(?:.*\n)*$PROMPT"
  send "FAILHTTP500x6 please at $COLS"; cap working_api_retry "Retrying in [0-9.]+ seconds\.\.\.\s*\Z"
  CAP_TIMEOUT=60 waitfor "Tokens: [^\n]*\n(?:.*\n)*$PROMPT"
  $T send-keys -t aider C-d; waitfor "^lab\\$ ?\s*\Z"
}

capture_all() {
  OUT=${1:-$(dirname "$(readlink -f "$0")")/../tests/fixtures/captures}
  for w in ${WIDTHS:-40 80 120 200}; do capture_width "$w" || return 1; done
  for w in ${WIDTHS:-40 80 120 200}; do capture_git "$w" || return 1; done
  for w in ${WIDTHS:-40 80 120 200}; do capture_errors "$w" || return 1; done
}

cmd=${1:-}; shift || true
case $cmd in
  mock-start) python3 "$LAB/mockllm.py" --port "$PORT" --log "$ROOT/mock-requests.jsonl" \
                --max-seconds 7200 --slow-seconds "${MOCK_SLOW:-30}" > "$ROOT/logs/mock.out" 2>&1 & echo $! > "$ROOT/mock.pid"; sleep 0.7; cat "$ROOT/logs/mock.out" ;;
  mock-stop) kill "$(cat "$ROOT/mock.pid")" 2>/dev/null; rm -f "$ROOT/mock.pid" ;;
  setup) setup "${1:-}" ;;
  start) start "${1:-100}" ;;
  send) $T send-keys -t aider -l "$1"; sleep 0.3; $T send-keys -t aider Enter ;;
  keys) $T send-keys -t aider "$@" ;;
  show) $T capture-pane -p -t aider ;;
  info) info ;;
  capture-all) capture_all "${1:-}" ;;
  capture-errors) OUT=${1:-$(dirname "$(readlink -f "$0")")/../tests/fixtures/captures}
                  for w in ${WIDTHS:-40 80 120 200}; do capture_errors "$w" || exit 1; done ;;
  down) $T kill-server 2>/dev/null; kill "$(cat "$ROOT/mock.pid" 2>/dev/null)" 2>/dev/null; rm -f "$ROOT/mock.pid" ;;
  *) sed -n 2,10p "$0"; exit 2 ;;
esac
