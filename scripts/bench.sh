#!/usr/bin/env bash
# Benchmarks, release build, each printing its figures beside a baseline measured in the same run.
#   scripts/bench.sh              what users judge: create and get by id against the shared bare server
#                                 (../shared/perf-baseline, SQLite and PostgreSQL: scripts/bench-baseline.sh), the
#                                 request edge and the access log (--edge), the journal app's
#                                 workload on SQLite and PostgreSQL (--journal), cost by class size 10^4..10^7
#                                 (--growth, table + docs/growth.png); then a summary of their ratios
#   scripts/bench.sh --all        also the micro and feature benchmarks (core table, change events, cloud code, files,
#                                 push, LiveQuery, aggregate)
#   scripts/bench.sh --<mode> ... one benchmark, options passed to parsley-bench (see Sources/ParsleyBenchmarks/main.swift)
# Needs wrk and, for the plot, python3 with matplotlib (both installed here when missing). PostgreSQL: a throwaway
# cluster from scripts/pg-test-cluster.sh, or PARSLEY_BENCH_POSTGRES_URL. Outputs are kept in bench-results/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq wrk
fi
if ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  python3 -m pip install -q matplotlib >/dev/null 2>&1 || echo "bench: matplotlib could not be installed; the growth plot will be skipped" >&2
fi
swift build -c release --static-swift-stdlib --product parsley-bench
swift build -c release --static-swift-stdlib --product parsley
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)"

all=false
if [[ $# -gt 0 ]]; then
  if [[ "$1" == "--all" ]]; then all=true; else exec "$bin/parsley-bench" "$@"; fi
fi

out="bench-results/$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
# First, before the throwaway cluster below: it starts (and stops) one of its own on the same port.
echo "== baseline: scripts/bench-baseline.sh"
scripts/bench-baseline.sh | tee "$out/baseline.txt"
echo

pg="${PARSLEY_BENCH_POSTGRES_URL:-}"
if [[ -z "$pg" ]]; then
  eval "$(scripts/pg-test-cluster.sh)"
  pg="$PARSLEY_TEST_POSTGRES_URL"
  trap 'scripts/pg-test-cluster.sh stop >/dev/null 2>&1 || true' EXIT
fi
line=(stdbuf -oL)
command -v stdbuf >/dev/null 2>&1 || line=()

run() {
  local name="$1"
  shift
  echo "== $name: parsley-bench $*"
  "${line[@]}" "$bin/parsley-bench" "$@" | tee "$out/$name.txt"
  echo
}

run edge --edge --seconds 5
run journal --journal --seconds 20 --database-uri "$pg"
run growth --growth --seconds 5 --database-uri "$pg" --plot docs/growth.png
if $all; then
  run core --seconds 6
  run core-postgres --seconds 5 --database-uri "$pg"
  run change-events --change-events --seconds 4 --objects 20000
  run cloud --cloud --seconds 4
  run files --files
  run push --push
  run livequery --livequery
  run aggregate --aggregate --objects 1000000 --database-uri "$pg"
fi

echo "== summary (ratios against the baselines measured in the same runs; full outputs in $out)"
for name in baseline edge journal growth; do
  echo "-- $name"
  grep -E '^\||^[A-Za-z].*: req/s' "$out/$name.txt" || true
done
