#!/usr/bin/env bash
# What the container does, without a Docker engine: build the release binary with the Dockerfile's command,
# start it from an empty folder configured only by environment variables (as the image is), then check
# /parse/health, one create and one get, and that SIGTERM stops it cleanly (exit 0); on SQLite, and on PostgreSQL
# as docker/docker-compose.yml runs it when PARSLEY_TEST_POSTGRES_URL names a server (CI's throwaway cluster).
#   SMOKE_SCRATCH=<dir>  build folder (default: SwiftPM's .build); a separate one keeps a debug build's lock free
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=()
if [[ -n "${SMOKE_SCRATCH:-}" ]]; then scratch=(--scratch-path "$SMOKE_SCRATCH"); fi

start=$(date +%s)
swift build "${scratch[@]}" -c release --static-swift-stdlib --product parsley
bin="$(swift build "${scratch[@]}" -c release --show-bin-path)/parsley"
echo "container-smoke: release build took $(( $(date +%s) - start ))s; binary $(du -h "$bin" | cut -f1)"
# The image strips the binary and runs it on a base with only glibc, libstdc++, libgcc and zlib.
work=$(mktemp -d)
cp "$bin" "$work/parsley" && strip "$work/parsley" && bin="$work/parsley"
echo "container-smoke: stripped $(du -h "$bin" | cut -f1); links $(ldd "$bin" | awk '{print $1}' | tr '\n' ' ')"

cleanup() {
  if [[ -n "${pid:-}" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# smoke <label> [VAR=value ...]: the image's environment (only variables, an empty data folder), then health,
# create + get, SIGTERM -> exit 0.
smoke() {
  local label=$1; shift
  local port=$(( 20000 + RANDOM % 20000 ))
  local log="$work/parsley-$label.log"
  rm -rf "$work/data" && mkdir -p "$work/data"
  (cd "$work" && exec env -i PATH=/usr/bin:/bin HOME="$work" \
    PARSLEY_DATA_DIR="$work/data" PARSE_SERVER_HOST=127.0.0.1 PORT="$port" PARSE_SERVER_MOUNT_PATH=/parse \
    PARSE_SERVER_APPLICATION_ID=smoke-app PARSE_SERVER_MASTER_KEY=smoke-master-key "$@" \
    "$bin" >"$log" 2>&1) &
  pid=$!

  local t0 healthy=""
  t0=$(date +%s%N)
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$port/parse/health" >"$work/health" 2>/dev/null; then healthy=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if [[ -z "$healthy" ]]; then echo "container-smoke[$label]: FAILED, not healthy"; cat "$log"; exit 1; fi
  echo "container-smoke[$label]: healthy after $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(cat "$work/health")"

  local H=(-H "X-Parse-Application-Id: smoke-app" -H "X-Parse-Master-Key: smoke-master-key" -H "Content-Type: application/json")
  local created id got
  created=$(curl -fsS -X POST "${H[@]}" -d '{"score":1337,"playerName":"Smoke"}' "http://127.0.0.1:$port/parse/classes/GameScore")
  id=$(printf '%s' "$created" | sed -n 's/.*"objectId":"\([A-Za-z0-9]*\)".*/\1/p')
  if [[ -z "$id" ]]; then echo "container-smoke[$label]: FAILED, create answered $created"; cat "$log"; exit 1; fi
  got=$(curl -fsS "${H[@]}" "http://127.0.0.1:$port/parse/classes/GameScore/$id")
  if [[ "$got" != *'"score":1337'* ]]; then echo "container-smoke[$label]: FAILED, get answered $got"; cat "$log"; exit 1; fi
  echo "container-smoke[$label]: create + get ok ($id)"

  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  pid=""
  if [[ $rc -ne 0 ]]; then echo "container-smoke[$label]: FAILED, exit code $rc after SIGTERM"; cat "$log"; exit 1; fi
  echo "container-smoke[$label]: stopped cleanly on SIGTERM"
}

smoke sqlite
if [[ ! -s "$work/data/parsley.sqlite" ]]; then echo "container-smoke: FAILED, no database in the data folder"; exit 1; fi
# docker/docker-compose.yml's configuration: the same binary on PostgreSQL (CI's throwaway cluster).
if [[ -n "${PARSLEY_TEST_POSTGRES_URL:-}" ]]; then
  db="smoke_$RANDOM$RANDOM"
  psql -q "$PARSLEY_TEST_POSTGRES_URL" -c "CREATE DATABASE $db"
  smoke postgres PARSE_SERVER_DATABASE_URI="${PARSLEY_TEST_POSTGRES_URL%/*}/$db"
  psql -q "$PARSLEY_TEST_POSTGRES_URL" -c "DROP DATABASE $db WITH (FORCE)"
fi
