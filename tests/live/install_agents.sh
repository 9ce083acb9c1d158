#!/usr/bin/env bash
# Install the pinned agent CLIs for the live suite into a cache outside the repo:
#   ${TMA_LIVE_CACHE:-$HOME/.cache/tma-live}/<agent>-<version>/node_modules/.bin/<agent>
# or, for a Python agent (aider), a venv of its own:
#   ${TMA_LIVE_CACHE:-$HOME/.cache/tma-live}/<agent>-<version>/venv/bin/<agent>
# Idempotent (an install whose marker matches is kept), parallel (one npm or pip per
# agent), and everything comes from the npm registry or PyPI. OpenCode installs @opencode-ai/plugin into its
# config dir at start when a plugin is present; that package is pre-installed here into
# <cache>/opencode-<version>/config-template/, which the suite copies into each throwaway
# HOME, so no agent fetches anything while the tests run.
#
#   tests/live/install_agents.sh [AGENT-VERSION ...]   default: all pinned agents
# Exit status: 0 when every requested install is present, 1 otherwise (logs are printed).
set -u
CACHE=${TMA_LIVE_CACHE:-$HOME/.cache/tma-live}
mkdir -p "$CACHE"

# key -> npm package (the version is the key's suffix); keep in step with tests/helpers/live/agents.py
declare -A PKG=(
  [claude-2.1.197]=@anthropic-ai/claude-code
  [claude-2.1.332]=@anthropic-ai/claude-code
  [codex-0.171.0]=@openai/codex
  [gemini-0.61.0]=@google/gemini-cli
  [opencode-1.18.33]=opencode-ai
  [pi-0.73.1]=@mariozechner/pi-coding-agent
  [copilot-1.0.102]=@github/copilot
  [qwen-0.24.4]=@qwen-code/qwen-code
  [aider-0.86.2]=aider-chat
)
# the keys whose package is a PyPI one (pip into <dir>/venv), the rest are npm packages
declare -A PIP=([aider-0.86.2]=1)
ALL="claude-2.1.197 claude-2.1.332 codex-0.171.0 gemini-0.61.0 opencode-1.18.33 pi-0.73.1 copilot-1.0.102 qwen-0.24.4 aider-0.86.2"

command -v npm >/dev/null 2>&1 || { echo "install_agents: npm not found" >&2; exit 1; }

install_pip() {  # key: a venv of its own (python3 -m venv), the package pinned
  local key=$1 agent=${1%-*} version=${1##*-}
  local pkg=${PKG[$key]} dir=$CACHE/$key marker=$CACHE/$key/.tma-live-installed
  local want="$pkg==$version"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && [ -x "$dir/venv/bin/$agent" ]; then
    echo "install_agents: $key present"
    return 0
  fi
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  local t0=$SECONDS
  if ! { python3 -m venv "$dir.tmp/venv" \
         && "$dir.tmp/venv/bin/pip" install -q --disable-pip-version-check "$want"; } \
       > "$CACHE/install-$key.log" 2>&1; then
    echo "install_agents: $key FAILED (log follows)" >&2
    tail -n 30 "$CACHE/install-$key.log" >&2
    rm -rf "$dir.tmp"
    return 1
  fi
  # a venv's scripts name their python by path: make them at home in the final folder
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  sed -i "1s|^#!$dir.tmp/|#!$dir/|" "$dir"/venv/bin/* 2>/dev/null || true
  sed -i "s|$dir.tmp|$dir|g" "$dir/venv/pyvenv.cfg" "$dir"/venv/bin/activate* 2>/dev/null || true
  echo "$want" > "$marker"
  echo "install_agents: $key installed in $((SECONDS - t0))s"
}

install_one() {  # key
  if [ -n "${PIP[$1]:-}" ]; then install_pip "$1"; return; fi
  local key=$1 agent=${1%-*} version=${1##*-}
  local pkg=${PKG[$key]} dir=$CACHE/$key marker=$CACHE/$key/.tma-live-installed
  local want="$pkg@$version"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] \
     && [ -x "$dir/node_modules/.bin/$agent" ]; then
    echo "install_agents: $key present"
  else
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    local t0=$SECONDS
    # Qwen Code's engines say Node >= 22: its npm runs with the Node 22 that .ci/run puts
    # in TMA_LIVE_NODE22 when the node on PATH is older
    local PATH=$PATH
    if [ "$agent" = qwen ] && [ -n "${TMA_LIVE_NODE22:-}" ]; then PATH=$TMA_LIVE_NODE22:$PATH; fi
    if ! npm install --prefix "$dir.tmp" --no-audit --no-fund --loglevel=error "$want" \
         > "$CACHE/install-$key.log" 2>&1; then
      echo "install_agents: $key FAILED (log follows)" >&2
      tail -n 30 "$CACHE/install-$key.log" >&2
      rm -rf "$dir.tmp"
      return 1
    fi
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
    echo "$want" > "$marker"
    echo "install_agents: $key installed in $((SECONDS - t0))s"
  fi
  if [ "$agent" = qwen ]; then
    # the package ships its ripgrep without the exec bit (0.24.4): qwen then boxes a
    # "Ripgrep not available ... EACCES" warning on its first screen and greps in JS
    chmod +x "$dir"/node_modules/@qwen-code/qwen-code/vendor/ripgrep/*/rg 2>/dev/null || true
  fi
  if [ "$agent" = opencode ]; then
    install_plugin_template "$dir" "$version" || return 1
  fi
}

install_plugin_template() {  # opencode dir, version
  local dir=$1 version=$2 tpl=$1/config-template
  local want="@opencode-ai/plugin@$version"
  if [ -f "$tpl/.tma-live-installed" ] && [ "$(cat "$tpl/.tma-live-installed")" = "$want" ] \
     && [ -d "$tpl/node_modules/@opencode-ai/plugin" ]; then
    echo "install_agents: opencode plugin template present"
    return 0
  fi
  rm -rf "$tpl"
  mkdir -p "$tpl"
  # the same manifest opencode writes into ~/.config/opencode when it installs the package
  printf '{\n  "dependencies": {\n    "@opencode-ai/plugin": "%s"\n  }\n}\n' "$version" \
    > "$tpl/package.json"
  printf 'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n' \
    > "$tpl/.gitignore"
  if ! (cd "$tpl" && npm install --no-audit --no-fund --loglevel=error \
          > "$CACHE/install-opencode-plugin.log" 2>&1); then
    echo "install_agents: @opencode-ai/plugin FAILED (log follows)" >&2
    tail -n 30 "$CACHE/install-opencode-plugin.log" >&2
    return 1
  fi
  echo "$want" > "$tpl/.tma-live-installed"
  echo "install_agents: opencode plugin template installed"
}

keys=${*:-$ALL}
pids=()
for key in $keys; do
  [ -n "${PKG[$key]:-}" ] || { echo "install_agents: unknown agent $key (known: $ALL)" >&2; exit 2; }
  install_one "$key" &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do
  wait "$pid" || rc=1
done
exit $rc
