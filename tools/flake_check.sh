#!/usr/bin/env bash
# Run tests N times in a row (default 20) with a CPU burner on every core, and say how
# many runs each test passed (issue 29: a test that only passes on an idle machine is a
# flake waiting for CI's 2 vCPUs).
#
#   tools/flake_check.sh tests/integration/test_daemon.py::test_x ... [N]
#   tools/flake_check.sh -f tools/flake_set.txt [N]      # one node id a line, # comments
#
# Run it from the virtualenv the tests use (python on PATH, or PYTHON=...). The burners
# are this script's children and are killed when it ends, however it ends. Each run is
# one pytest process over all the tests given (PYTEST_ADDOPTS passes more flags, e.g.
# "-n 4"); the output of a run with a failure is kept in the log directory printed at
# the end. FLAKE_BURNERS sets the number of burners (default: one per core, 0 for none).
# Exit status: 0 when every test passed every run, 1 otherwise, 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=()
runs=20
while [ $# -gt 0 ]; do
  case $1 in
    -f) [ $# -ge 2 ] || { echo "flake_check: -f needs a file" >&2; exit 2; }
        while IFS= read -r line; do
          line=${line%%#*}; line=${line//[[:space:]]/}
          [ -n "$line" ] && tests+=("$line")
        done < "$2"
        shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) if [[ $1 =~ ^[0-9]+$ ]] && [ $# -eq 1 ]; then runs=$1; else tests+=("$1"); fi
       shift ;;
  esac
done
[ ${#tests[@]} -gt 0 ] || { echo "usage: $0 [-f FILE] NODEID... [N]" >&2; exit 2; }
python=${PYTHON:-python}
# every node id must name a test now: a renamed one would make every run "no tests ran"
if ! out=$("$python" -m pytest -p no:cacheprovider -q --collect-only "${tests[@]}" 2>&1); then
  echo "flake_check: the tests given do not all collect:" >&2
  printf '%s\n' "$out" | grep -E '^(ERROR|E )' >&2 || printf '%s\n' "$out" | tail -5 >&2
  exit 2
fi
logs=${FLAKE_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/flake_check.XXXXXX")}
mkdir -p "$logs"

burners=()
child=""
stop_burners() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${burners[@]}"; do wait "$pid" 2>/dev/null || true; done
  burners=()
}
# a run interrupted ends its pytest the way Ctrl-C would (its fixtures' teardown kills
# the test servers), then the burners
stop_all() {
  if [ -n "$child" ]; then kill -INT "$child" 2>/dev/null || true; wait "$child" || true; fi
  stop_burners
}
trap stop_all EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 "${FLAKE_BURNERS:-$(nproc)}"); do
  "$python" -c 'while True: pass' &
  burners+=("$!")
done

echo "flake_check: ${#tests[@]} test(s), $runs run(s), ${#burners[@]} burner(s)," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg), logs in $logs"
start=$(date +%s)
for i in $(seq 1 "$runs"); do
  # -rA: a PASSED/FAILED/ERROR line naming each test, tallied below
  # in the background, waited for: a signal to this script is handled at once
  "$python" -m pytest -p no:cacheprovider -q -rA "${tests[@]}" >"$logs/run$i.txt" 2>&1 &
  child=$!
  wait "$child" || true
  child=""
  verdict=$(grep -cE '^(FAILED|ERROR) ' "$logs/run$i.txt" || true)
  echo "run $i/$runs: $verdict failed, load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
stop_burners
echo "flake_check: $runs runs in $(( $(date +%s) - start )) s; passed/runs per test:"
# a test that never reported (a crash, a collection error) counts as failed every run
"$python" - "$logs" "$runs" "${tests[@]}" <<'PY'
import pathlib, re, sys
logs, runs, asked = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
passed, failed = {}, {}
for out in logs.glob("run*.txt"):
    for line in out.read_text(errors="replace").splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", line)
        if not m or m.group(1) == "SKIPPED":  # "SKIPPED [1] file:line: why": no node id
            continue
        kind, node = m.groups()
        book = passed if kind in ("PASSED", "XFAIL") else failed
        book[node] = book.get(node, 0) + 1
seen = sorted(set(passed) | set(failed))
bad = 0
for node in seen:
    ok = passed.get(node, 0)
    bad += ok < runs
    print(f"{ok:3}/{runs} {node}" + ("" if ok == runs else f"   <- {runs - ok} failed"))
if not seen:
    print("no test reported (see the logs)")
skips = sum(1 for f in logs.glob("run*.txt") for ln in f.read_text(errors="replace").splitlines()
            if ln.startswith("SKIPPED"))
if skips:
    print(f"({skips} skip line(s) in the logs: a skipped test is neither passed nor failed)")
sys.exit(1 if bad or not seen else 0)
PY
