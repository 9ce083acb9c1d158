#!/usr/bin/env bash
# Build every tmux release in .ci/tmux-releases (once: ../shared/tmux/build.sh caches them in
# ~/.cache/tmux-builds) and print the tmux contract suite's matrix on stdout:
#
#   export TMA_TMUX_MATRIX="$(tools/tmux_matrix.sh)"    # then: python -m pytest
#
# One `VERSION=/path/to/bin/tmux` per release, space-separated (tests/helpers/tmux_matrix.py reads
# it). Progress and build failures go to stderr; a release that does not build fails the
# script, so a matrix never silently shrinks. TMA_TMUX_SOURCES names the folder with
# build.sh and the tarballs (default: ../shared/tmux beside the checkout).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sources=${TMA_TMUX_SOURCES:-$root/../shared/tmux}
[ -x "$sources/build.sh" ] || { echo "tmux_matrix: no $sources/build.sh" >&2; exit 2; }
matrix=()
while IFS= read -r line; do
  v=${line%%#*}; v=${v//[[:space:]]/}
  [ -n "$v" ] || continue
  start=$(date +%s)
  path=$("$sources/build.sh" "$v")
  echo "tmux_matrix: tmux $v at $path ($(( $(date +%s) - start )) s)" >&2
  matrix+=("$v=$path")
done < "$root/.ci/tmux-releases"
echo "${matrix[*]}"
