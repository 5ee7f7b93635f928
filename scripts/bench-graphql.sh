#!/usr/bin/env bash
# A find of 20 objects through GraphQL against the same find through REST, in the same run (issue 32: the goal is
# GraphQL at >= 0.8x of REST), without and with the pointer each object holds resolved.
#
#   scripts/bench-graphql.sh [seconds per round, default 10] [connections, default 16]
#
# The server is the release `parsley` started as the README starts it (default settings, logs on) with
# PARSE_SERVER_MOUNT_GRAPHQL=true, on SQLite in a fresh data folder (PARSLEY_BENCH_POSTGRES_URL: on a fresh database
# of that PostgreSQL server instead). It seeds 5 `Owner` objects and 100 `Item` objects (name, score, tags, a pointer
# to an owner), then wrk loads, one after the other for the same time each, as a client (application id only):
#   REST      GET /parse/classes/Item?limit=20                 GraphQL { items(first: 20) { edges { node { objectId name score } } } }
#   REST      GET /parse/classes/Item?limit=20&include=owner   GraphQL ... node { objectId name score owner { name } } ...
# and prints requests/s, mean, median and 99th percentile latency, and GraphQL's requests/s as a ratio of REST's.
# PARSLEY_BIN picks the binary (default: this checkout's release build). Needs wrk, curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
connections=${2:-16}
bin=${PARSLEY_BIN:-$(swift build -c release --static-swift-stdlib --show-bin-path)/parsley}
port=${PARSLEY_BENCH_PORT:-1461}
work=$(mktemp -d /tmp/parsley-gqlbench.XXXXXX)
pg=${PARSLEY_BENCH_POSTGRES_URL:-}
db=parsley_gqlbench
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    if [ -n "$pg" ]; then psql -q "$pg" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

database=()
if [ -n "$pg" ]; then
    psql -q "$pg" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
    database=(PARSE_SERVER_DATABASE_URI="${pg%/*}/$db")
fi
env -i PATH="$PATH" HOME="$HOME" PARSLEY_DATA_DIR="$work/data" PORT="$port" PARSE_SERVER_HOST=127.0.0.1 \
    PARSE_SERVER_MASTER_KEY=bench-master-key PARSE_SERVER_MOUNT_GRAPHQL=true "${database[@]}" "$bin" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/parse/health" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -sf "http://127.0.0.1:$port/parse/health" >/dev/null || { echo "parsley did not start:" >&2; tail -n 20 "$work/server.log" >&2; exit 1; }

base="http://127.0.0.1:$port"
create() {
    curl -sf -X POST -H "X-Parse-Application-Id: parsley" -H "X-Parse-Master-Key: bench-master-key" \
        -H "Content-Type: application/json" -d "$2" "$base/parse/classes/$1" | sed 's/.*"objectId":"\([^"]*\)".*/\1/'
}
owners=()
for i in 1 2 3 4 5; do owners+=("$(create Owner "{\"name\":\"owner $i\",\"rank\":$i}")"); done
for i in $(seq 1 100); do
    owner=${owners[$((i % 5))]}
    create Item "{\"name\":\"item $i\",\"score\":$((i * 7 % 101)),\"tags\":[\"t$((i % 3))\"],\"owner\":{\"__type\":\"Pointer\",\"className\":\"Owner\",\"objectId\":\"$owner\"}}" >/dev/null
done

plain='{ items(first: 20) { edges { node { objectId name score } } } }'
pointer='{ items(first: 20) { edges { node { objectId name score owner { name } } } } }'

# One Lua script per round: the request (a GET, or a POST of a GraphQL body) and the figures wrk prints at the end.
script() {
    local file=$1 method=$2 body=${3:-}
    {
        echo "wrk.method = \"$method\""
        echo 'wrk.headers["X-Parse-Application-Id"] = "parsley"'
        if [ -n "$body" ]; then
            echo 'wrk.headers["Content-Type"] = "application/json"'
            python3 -c 'import json,sys; print("wrk.body = " + json.dumps(json.dumps({"query": sys.argv[1]})))' "$body"
        fi
        cat <<'EOF'
done = function(summary, latency, requests)
  local failed = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("result %.1f %.2f %.2f %.2f %d\n", summary.requests / (summary.duration / 1e6), latency.mean / 1000,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, failed))
end
EOF
    } >"$file"
}
script "$work/rest.lua" GET
script "$work/gql.lua" POST "$plain"
script "$work/gql-pointer.lua" POST "$pointer"

# Each answer checked once before it is measured: 20 objects, the pointer resolved, no GraphQL error.
check() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
answer = json.loads(sys.argv[2])
if "errors" in answer: sys.exit(f"{sys.argv[1]}: {answer['errors']}")
rows = answer["results"] if "results" in answer else [e["node"] for e in answer["data"]["items"]["edges"]]
assert len(rows) == 20, f"{sys.argv[1]}: {len(rows)} objects"
if "pointer" in sys.argv[1]: assert all(r["owner"]["name"].startswith("owner") for r in rows), sys.argv[1]
EOF
}
H=(-H "X-Parse-Application-Id: parsley")
gql() { curl -sf "${H[@]}" -H "Content-Type: application/json" -d "$(python3 -c 'import json,sys; print(json.dumps({"query": sys.argv[1]}))' "$1")" "$base/graphql"; }
check "REST" "$(curl -sf "${H[@]}" "$base/parse/classes/Item?limit=20")"
check "REST pointer" "$(curl -sf "${H[@]}" "$base/parse/classes/Item?limit=20&include=owner")"
check "GraphQL" "$(gql "$plain")"
check "GraphQL pointer" "$(gql "$pointer")"

load() { wrk -t1 -c"$connections" -d"$2" -s "$1" "$3" 2>/dev/null | grep '^result'; }
# Warm-up: every path once, briefly.
for round in "rest.lua $base/parse/classes/Item?limit=20" "gql.lua $base/graphql" "rest.lua $base/parse/classes/Item?limit=20&include=owner" \
    "gql-pointer.lua $base/graphql"; do
    set -- $round
    load "$work/$1" 2s "$2" >/dev/null
done
load "$work/rest.lua" "${seconds}s" "$base/parse/classes/Item?limit=20" >"$work/out-rest"
load "$work/gql.lua" "${seconds}s" "$base/graphql" >"$work/out-gql"
load "$work/rest.lua" "${seconds}s" "$base/parse/classes/Item?limit=20&include=owner" >"$work/out-rest-pointer"
load "$work/gql-pointer.lua" "${seconds}s" "$base/graphql" >"$work/out-gql-pointer"

echo "GraphQL against REST: $(nproc) cores, $([ -n "$pg" ] && echo PostgreSQL || echo SQLite), wrk 1 thread $connections connections, ${seconds} s a round, as a client"
echo
python3 - "$work" <<'EOF'
import sys
work = sys.argv[1]
def read(name):
    _, rps, mean, p50, p99, failed = open(f"{work}/out-{name}").read().split()
    return float(rps), float(mean), float(p50), float(p99), int(failed)
print("| find of 20 | REST req/s | GraphQL req/s | ratio | REST mean / p50 / p99 ms | GraphQL mean / p50 / p99 ms | failed |")
print("|---|---:|---:|---:|---|---|---:|")
for label, rest, gql in [("objectId name score", "rest", "gql"), ("with the owner pointer", "rest-pointer", "gql-pointer")]:
    r, g = read(rest), read(gql)
    print(f"| {label} | {r[0]:,.0f} | {g[0]:,.0f} | {g[0] / r[0]:.2f}x | {r[1]:.2f} / {r[2]:.2f} / {r[3]:.2f} | {g[1]:.2f} / {g[2]:.2f} / {g[3]:.2f} | {r[4] + g[4]} |")
EOF
