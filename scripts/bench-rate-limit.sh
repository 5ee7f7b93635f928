#!/usr/bin/env bash
# Rate-limited requests/s, one node against two on one PostgreSQL, with the same requests unlimited as the baseline
# in the same run; then whether a limit holds across nodes (a client that spreads its requests over both nodes gets
# no more than the limit in all).
#
#   PARSLEY_BENCH_POSTGRES_URL=postgres://... scripts/bench-rate-limit.sh [seconds per round, default 10]
#
# Each node is the release `parsley` started as the README starts it (default settings, logs on), on its own port,
# with PARSE_SERVER_RATE_LIMIT for the limited rounds. The load is wrk over loopback: GETs of one public object by a
# client (no master key), 32 connections per node, all from 127.0.0.1 (one `ip` zone counter: the worst case, every
# request updates the same row). Needs wrk and psql.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
pg=${PARSLEY_BENCH_POSTGRES_URL:?set PARSLEY_BENCH_POSTGRES_URL to a PostgreSQL server the benchmark may create a database on}
bin=${PARSLEY_BIN:-$(swift build -c release --static-swift-stdlib --show-bin-path)/parsley}
work=$(mktemp -d /tmp/parsley-ratebench.XXXXXX)
db=parsley_ratebench
base=${pg%/*}
psql -q "$pg" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    psql -q "$pg" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# start NAME PORT LIMIT_JSON: a node on the shared database, its log in the work folder.
start() {
    local name=$1 port=$2 limit=$3
    mkdir -p "$work/$name"
    env -i PATH="$PATH" HOME="$HOME" PARSLEY_DATA_DIR="$work/$name" PORT="$port" PARSE_SERVER_HOST=127.0.0.1 \
        PARSE_SERVER_MASTER_KEY=bench-master-key PARSE_SERVER_DATABASE_URI="$base/$db" \
        ${limit:+PARSE_SERVER_RATE_LIMIT="$limit"} "$bin" >"$work/$name.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 200); do
        curl -sf "http://127.0.0.1:$port/parse/health" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "node $name did not start:" >&2
    tail -n 20 "$work/$name.log" >&2
    exit 1
}
stop_all() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    pids=()
}
H=(-H "X-Parse-Application-Id: parsley")
# wrk on PORT for the round; prints "<2xx/s> <non-2xx total> <requests total>".
load() {
    local port=$1 id=$2
    wrk -t1 -c32 -d"${seconds}s" "${H[@]}" -s "$work/count.lua" "http://127.0.0.1:$port/parse/classes/Bench/$id" 2>/dev/null | grep '^result'
}
cat >"$work/count.lua" <<'EOF'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; other = 0 end
function response(status, headers, body) if status < 300 then ok = ok + 1 else other = other + 1 end end
done = function(summary, latency, requests)
  local o, x = 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); x = x + t:get("other") end
  io.write(string.format("result %d %d %.3f\n", o, x, summary.duration / 1e6))
end
EOF

object() {
    curl -sf -X POST -H "X-Parse-Application-Id: parsley" -H "X-Parse-Master-Key: bench-master-key" \
        -H "Content-Type: application/json" -d '{"score":1}' "http://127.0.0.1:$1/parse/classes/Bench" | sed 's/.*"objectId":"\([^"]*\)".*/\1/'
}

high='[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":100000000}]'
# round LABEL LIMIT NODES: req/s of 2xx answers over all nodes together.
fresh() { psql -q "$pg" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null; }
round() {
    local label=$1 limit=$2 nodes=$3
    fresh
    start a 1451 "$limit"
    [ "$nodes" -ge 2 ] && start b 1452 "$limit"
    local id
    id=$(object 1451)
    local outs=()
    load 1451 "$id" >"$work/out-a" &
    outs+=($!)
    if [ "$nodes" -ge 2 ]; then
        load 1452 "$id" >"$work/out-b" &
        outs+=($!)
    fi
    wait "${outs[@]}"
    stop_all
    python3 - "$label" "$work"/out-* <<'EOF'
import sys
ok = other = 0
duration = 0.0
for path in sys.argv[2:]:
    _, o, x, d = open(path).read().split()
    ok += int(o); other += int(x); duration = max(duration, float(d))
print(f"| {sys.argv[1]} | {ok / duration:,.0f} | {other} |")
EOF
    rm -f "$work"/out-*
}

echo "Rate limits on PostgreSQL: $(nproc) cores, wrk 32 connections per node for ${seconds} s, GET of one object as a client"
echo
echo "| round | answered 2xx/s (all nodes) | other answers |"
echo "|---|---:|---:|"
round "baseline: one node, no rate limit" "" 1
round "one node, rate limit (never reached)" "$high" 1
round "baseline: two nodes, no rate limit" "" 2
round "two nodes, rate limit (never reached)" "$high" 2

# The limit across nodes: 2,000 requests a minute, asked of both nodes at full speed.
limit='[{"requestPath":"/classes/*","requestTimeWindow":60000,"requestCount":2000}]'
fresh
start a 1451 "$limit"
start b 1452 "$limit"
id=$(object 1451)
load 1451 "$id" >"$work/out-a" &
w1=$!
load 1452 "$id" >"$work/out-b" &
w2=$!
wait $w1 $w2
stop_all
read -r _ oka xa _ <"$work/out-a"
read -r _ okb xb _ <"$work/out-b"
echo
echo "limit of 2000 a minute, both nodes at full speed for ${seconds} s: node a answered $oka, node b $okb, together $((oka + okb)) (limit 2000); $((xa + xb)) answered 429"
