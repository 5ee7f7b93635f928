#!/usr/bin/env bash
# Parsley against the shared bare server (../shared/perf-baseline: Hummingbird + sqlite-nio / postgres-nio, no auth,
# no ACL, no schema), with the load its README gives: wrk -t2 -c64, 5 s per figure, creates of a ~300-byte GameScore
# first, then gets by random id from 5,000 created objects, rounds in turns, in one run on this machine.
# Parsley is the release `parsley` started as the README starts it: no flags, default settings, the access log on
# (into a file, as a container's log driver takes it), in an empty folder of its own. The class is created with the
# master key; the load itself sends only `X-Parse-Application-Id`, so every request goes through the client rules
# (CLP, ACL, protected fields). One more row: the same gets with the master key too (no rules to apply).
#   scripts/bench-baseline.sh [--rounds N] [--seconds S] [--sqlite-only]
# PostgreSQL: a throwaway cluster from scripts/pg-test-cluster.sh (both servers on it, database per server).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=2
seconds=5
pg_too=true
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --sqlite-only) pg_too=false; shift ;;
    *) echo "bench-baseline: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }
baseline_src="${PARSLEY_PERF_BASELINE:-$root/../shared/perf-baseline}"
[[ -d "$baseline_src" ]] || { echo "bench-baseline: no bare server at $baseline_src (set PARSLEY_PERF_BASELINE)" >&2; exit 1; }
swift build -c release --product hbserver --package-path "$baseline_src" --scratch-path /tmp/perf-baseline
# As the README starts it: the release build with the Swift runtime linked in (`--static-swift-stdlib`, as the container
# image). PARSLEY_BIN_DIR: measure the `parsley` of another build instead.
if [[ -z "${PARSLEY_BIN_DIR:-}" ]]; then swift build -c release --static-swift-stdlib --product parsley; fi
bin="${PARSLEY_BIN_DIR:-$(swift build -c release --static-swift-stdlib --show-bin-path)}"
hb=/tmp/perf-baseline/release/hbserver

work=$(mktemp -d /tmp/parsley-bench-baseline.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ "${pg_started:-false}" == true ]]; then scripts/pg-test-cluster.sh stop >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

body='{"playerName":"Sean Plott","score":1337,"cheatMode":false,"level":7,"category":"arcade","email":"sean.plott@example.com","tags":["alpha","beta","gamma"],"location":{"__type":"GeoPoint","latitude":40.5,"longitude":-30.25},"note":"a little note so that the whole object weighs about three hundred bytes, as the shared load"}'
echo "$body" >"$work/body.json"

wait_http() { # url
  for _ in $(seq 1 300); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "bench-baseline: $1 did not answer" >&2; return 1
}

# POST script: the same body every time, with Parse's header (the bare server ignores it).
cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = [[$body]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Parse-Application-Id"] = "parsley"
EOF

# GET script over the ids in a file, one per line, picked at random.
get_lua() { # ids-file prefix out [master-key]
  {
    echo 'local ids = {}'
    echo "for line in io.lines(\"$1\") do ids[#ids + 1] = line end"
    echo 'wrk.headers["X-Parse-Application-Id"] = "parsley"'
    if [[ -n "${4:-}" ]]; then echo "wrk.headers[\"X-Parse-Master-Key\"] = \"$4\""; fi
    echo "local prefix = \"$2\""
    echo 'request = function() return wrk.format("GET", prefix .. ids[math.random(#ids)]) end'
  } >"$3"
}

# Creates N objects over one keep-alive connection and writes their ids.
populate() { # base-url path n out [master-key]
  python3 - "$@" "$work/body.json" <<'PY'
import http.client, json, sys, urllib.parse
base, path, n, out, *rest = sys.argv[1:]
body = open(rest[-1]).read().strip()
master = rest[0] if len(rest) > 1 else None
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port)
headers = {"Content-Type": "application/json", "X-Parse-Application-Id": "parsley"}
if master: headers["X-Parse-Master-Key"] = master
ids = []
for _ in range(int(n)):
    c.request("POST", path, body, headers)
    r = c.getresponse(); data = r.read()
    if r.status != 201: sys.exit(f"populate: {r.status} {data[:200]!r}")
    ids.append(json.loads(data)["objectId"])
open(out, "w").write("\n".join(ids) + "\n")
PY
}

measure() { # label url lua -> "req/s p50ms p99ms"
  local out
  out=$(wrk -t2 -c64 -d"${seconds}s" --latency -s "$2" "$3")
  if grep -q "Non-2xx" <<<"$out"; then echo "bench-baseline: $1 had non-2xx answers:" >&2; echo "$out" >&2; exit 1; fi
  awk '/Requests\/sec/ {r=$2} $1=="50%" {p50=$2} $1=="99%" {p99=$2}
       function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
       END { printf "%.0f %.2f %.2f\n", r, ms(p50), ms(p99) }' <<<"$out"
}

# One backend: the bare server on `bare_prefix`, Parsley started with `env`; prints the table rows.
run_backend() { # name bare-url bare-prefix parsley-env...
  local name="$1" bare="$2" prefix="$3"
  shift 3
  local dir="$work/parsley-$name"
  mkdir -p "$dir"
  (cd "$dir" && exec env "$@" "$bin/parsley" >"$dir/access.log" 2>&1) &
  pids+=($!)
  wait_http "http://127.0.0.1:1337/parse/health"
  local master
  master=$(cat "$dir/parsley-data/master.key" 2>/dev/null || true)
  [[ -n "$master" ]] || master="$PARSE_SERVER_MASTER_KEY"
  curl -fs -o /dev/null -X POST -H "X-Parse-Application-Id: parsley" -H "X-Parse-Master-Key: $master" \
    -H "Content-Type: application/json" -d '{"className":"GameScore"}' http://127.0.0.1:1337/parse/schemas/GameScore
  populate "$bare" "/$prefix/classes/GameScore" 5000 "$work/$name-bare.ids"
  populate http://127.0.0.1:1337 /parse/classes/GameScore 5000 "$work/$name-parsley.ids"
  get_lua "$work/$name-bare.ids" "/$prefix/classes/GameScore/" "$work/$name-bare-get.lua"
  get_lua "$work/$name-parsley.ids" "/parse/classes/GameScore/" "$work/$name-parsley-get.lua"
  get_lua "$work/$name-parsley.ids" "/parse/classes/GameScore/" "$work/$name-parsley-get-master.lua" "$master"
  for r in $(seq 1 "$rounds"); do
    read -r bc bc50 bc99 < <(measure "create bare" "$work/post.lua" "$bare/$prefix/classes/GameScore")
    read -r pc pc50 pc99 < <(measure "create parsley" "$work/post.lua" http://127.0.0.1:1337/parse/classes/GameScore)
    read -r bg bg50 bg99 < <(measure "get bare" "$work/$name-bare-get.lua" "$bare")
    read -r pg pg50 pg99 < <(measure "get parsley" "$work/$name-parsley-get.lua" http://127.0.0.1:1337)
    read -r pm pm50 pm99 < <(measure "get parsley, master key" "$work/$name-parsley-get-master.lua" http://127.0.0.1:1337)
    printf '| %s | create | %s | %s | %s | %s / %s | %s / %s | %s |\n' "$name" "$r" "$bc" "$pc" "$bc50" "$bc99" "$pc50" "$pc99" \
      "$(awk -v a="$pc" -v b="$bc" 'BEGIN { printf "%.2f", a / b }')" >>"$work/rows"
    printf '| %s | get by id | %s | %s | %s | %s / %s | %s / %s | %s |\n' "$name" "$r" "$bg" "$pg" "$bg50" "$bg99" "$pg50" "$pg99" \
      "$(awk -v a="$pg" -v b="$bg" 'BEGIN { printf "%.2f", a / b }')" >>"$work/rows"
    printf '| %s | get by id, master key | %s | %s | %s | %s / %s | %s / %s | %s |\n' "$name" "$r" "$bg" "$pm" "$bg50" "$bg99" "$pm50" "$pm99" \
      "$(awk -v a="$pm" -v b="$bg" 'BEGIN { printf "%.2f", a / b }')" >>"$work/rows"
  done
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
  unset 'pids[-1]'
  echo "access log lines ($name): $(wc -l <"$dir/access.log")" >>"$work/notes"
}

"$hb" 8081 --sqlite "$work/hb.sqlite" --sqlite-sync FULL --sqlite-readers 2 >"$work/hb.log" 2>&1 &
pids+=($!)
wait_http http://127.0.0.1:8081/hello
run_backend sqlite http://127.0.0.1:8081 sqlite
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
unset 'pids[-1]'

if $pg_too; then
  eval "$(scripts/pg-test-cluster.sh)"
  pg_started=true
  pgurl="$PARSLEY_TEST_POSTGRES_URL"
  pgport=$(sed -E 's|.*:([0-9]+)/.*|\1|' <<<"$pgurl")
  psql "$pgurl" -q -c "CREATE ROLE pgperf LOGIN" -c "CREATE DATABASE perf OWNER pgperf" -c "CREATE DATABASE parsley"
  psql "postgres://pgperf@127.0.0.1:$pgport/perf" -q -c "CREATE TABLE objects (objectid text PRIMARY KEY, data jsonb NOT NULL)"
  # The bare server's pool: Parsley's default (20 connections).
  "$hb" 8082 --pg "$pgport" --pg-conns 20 >"$work/hb-pg.log" 2>&1 &
  pids+=($!)
  wait_http http://127.0.0.1:8082/hello
  run_backend postgres http://127.0.0.1:8082 pg PARSE_SERVER_DATABASE_URI="${pgurl%/*}/parsley"
fi

echo
echo "Parsley against ../shared/perf-baseline: $(nproc) cores, wrk -t2 -c64 -d${seconds}s, rounds in turns, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| backend | request | round | bare req/s | Parsley req/s | bare p50 / p99 ms | Parsley p50 / p99 ms | ratio |"
echo "|---|---|---:|---:|---:|---|---|---:|"
cat "$work/rows"
echo
cat "$work/notes"
