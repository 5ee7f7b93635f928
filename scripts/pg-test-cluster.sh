#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the test suite: 127.0.0.1:54329, data in /tmp/parsley-ci-pg, no fsync.
# Installs Debian's postgresql first when no initdb can be found. Runs initdb/pg_ctl as the `postgres` user when
# started as root (initdb refuses root). Diagnostics go to stderr; stdout is only the line to evaluate:
#   eval "$(scripts/pg-test-cluster.sh)"      # start (again, from scratch); exports PARSLEY_TEST_POSTGRES_URL
#                                             # and PARSLEY_TEST_POSTGRES_CA (the CA of its TLS certificate)
#   scripts/pg-test-cluster.sh stop           # stop it and remove its data
#   PARSLEY_CI_PG_PORT, PARSLEY_CI_PG_DIR     override the port and the folder
set -euo pipefail
port="${PARSLEY_CI_PG_PORT:-54329}"
root="${PARSLEY_CI_PG_DIR:-/tmp/parsley-ci-pg}"
data="$root/data"

log() { echo "pg-test-cluster: $*" >&2; }

# The folder holding initdb, pg_ctl and postgres.
find_bin() {
  local initdb dir
  if initdb=$(command -v initdb 2>/dev/null); then
    dir=$(dirname "$(readlink -f "$initdb")")
    if [[ -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then echo "$dir"; return; fi
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then echo "$dir"; return; fi
  done
}

# Runs a command as the cluster's owner: `postgres` when we are root, else ourselves.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

bin=$(find_bin || true)

stop() {
  if [[ -n "$bin" && -f "$data/postmaster.pid" ]]; then
    as_owner "$bin/pg_ctl" stop -D "$data" -m immediate >&2 || true
  fi
  rm -rf "$root"
}

if [[ "${1:-start}" == "stop" ]]; then
  stop
  log "stopped"
  exit 0
fi

if [[ -z "$bin" ]]; then
  log "no initdb found: installing Debian's postgresql"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >&2 && "${sudo[@]}" apt-get install -y -qq postgresql >&2
  bin=$(find_bin || true)
  if [[ -z "$bin" ]]; then log "postgresql installed but initdb still not found"; exit 1; fi
fi

if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
  log "running as root and there is no 'postgres' user to run initdb as"
  exit 1
fi

# From scratch every time: a cluster left by an earlier run is stopped and removed.
stop
mkdir -p "$root"
if [[ $(id -u) -eq 0 ]]; then chown postgres: "$root"; fi
chmod 700 "$root"
log "initdb ($bin) in $data"
as_owner "$bin/initdb" -D "$data" -A trust -U postgres --no-sync -E UTF8 --locale=C >"$root.initdb.log" 2>&1 \
  || { cat "$root.initdb.log" >&2; rm -f "$root.initdb.log"; exit 1; }
rm -f "$root.initdb.log"
# TLS on (connections choose it with sslmode): a throwaway CA, a certificate for localhost and 127.0.0.1, and a
# client certificate for the role parsley_cert, which may log in by certificate only (the tests create the role).
tls="$root/tls"
mkdir -p "$tls"
echo "subjectAltName=DNS:localhost,IP:127.0.0.1" >"$tls/ext.cnf"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
{ openssl req -x509 "${ec[@]}" -keyout "$tls/ca.key" -out "$tls/ca.crt" -days 3 -subj /CN=parsley-test-ca \
  && openssl req "${ec[@]}" -keyout "$tls/server.key" -out "$tls/server.csr" -subj /CN=localhost \
  && openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
       -out "$tls/server.crt" -days 3 -extfile "$tls/ext.cnf" \
  && openssl req "${ec[@]}" -keyout "$tls/client.key" -out "$tls/client.csr" -subj /CN=parsley_cert \
  && openssl x509 -req -in "$tls/client.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
       -out "$tls/client.crt" -days 3; } >"$root.openssl.log" 2>&1 \
  || { cat "$root.openssl.log" >&2; rm -f "$root.openssl.log"; exit 1; }
rm -f "$root.openssl.log"
chmod 600 "$tls/server.key"
if [[ $(id -u) -eq 0 ]]; then chown -R postgres: "$tls"; fi
hba="$data/pg_hba.conf"
{ echo "hostssl all parsley_cert all cert"; cat "$hba"; } >"$hba.new" && mv "$hba.new" "$hba"
if [[ $(id -u) -eq 0 ]]; then chown postgres: "$hba"; fi
as_owner "$bin/pg_ctl" start -w -t 60 -D "$data" -l "$root/server.log" \
  -o "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c listen_addresses=127.0.0.1 -p $port -k $root -c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key -c ssl_ca_file=$tls/ca.crt" >&2 \
  || { tail -n 40 "$root/server.log" >&2 || true; exit 1; }
log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') listening on 127.0.0.1:$port"
echo "export PARSLEY_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres PARSLEY_TEST_POSTGRES_CA=$tls/ca.crt"
