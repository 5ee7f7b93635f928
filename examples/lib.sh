# Shared by the example scripts (sourced, not run): settings, requests, and checks on each answer.
# Needs curl and jq. Settings: PARSE_SERVER_URL (default http://localhost:1337/parse),
# PARSE_SERVER_APPLICATION_ID (default parsley), PARSE_SERVER_MASTER_KEY (default ./parsley-data/master.key).
set -euo pipefail

URL=${PARSE_SERVER_URL:-http://localhost:1337/parse}
APP=${PARSE_SERVER_APPLICATION_ID:-parsley}
if [[ -n "${PARSE_SERVER_MASTER_KEY:-}" ]]; then
  MASTER=$PARSE_SERVER_MASTER_KEY
elif [[ -r ./parsley-data/master.key ]]; then
  MASTER=$(tr -d '[:space:]' < ./parsley-data/master.key)
else
  echo "set PARSE_SERVER_MASTER_KEY, or run from the folder that holds parsley-data/" >&2
  exit 2
fi
for tool in curl jq; do command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 2; }; done
# A suffix that keeps this run's usernames apart from earlier runs.
RUN=${RUN:-$(date +%s)$RANDOM}
STATUS="" BODY=""

# The credentials of a request: --master, --token <sessionToken>, or --anon.
_auth() {
  case "$1" in
    --master) AUTH=(-H "X-Parse-Master-Key: $MASTER"); SHIFT=1 ;;
    --token) AUTH=(-H "X-Parse-Session-Token: $2"); SHIFT=2 ;;
    --anon) AUTH=(); SHIFT=1 ;;
    *) echo "req/find: say --master, --token T or --anon" >&2; exit 2 ;;
  esac
}

_send() {
  local out
  out=$(curl -sS -H "X-Parse-Application-Id: $APP" ${AUTH[@]+"${AUTH[@]}"} -w '\n%{http_code}' "$@")
  STATUS=${out##*$'\n'}
  BODY=${out%$'\n'*}
}

# req <auth> METHOD PATH [JSON]: one call; the answer is in $STATUS and $BODY.
req() {
  _auth "$@"; shift "$SHIFT"
  local method=$1 path=$2
  if [[ $# -ge 3 ]]; then
    _send -X "$method" -H "Content-Type: application/json" --data "$3" "$URL$path"
  else
    _send -X "$method" "$URL$path"
  fi
}

# find <auth> CLASS [key=value ...]: GET /classes/CLASS with URL-encoded parameters (where={...}, order=...).
find() {
  _auth "$@"; shift "$SHIFT"
  local class=$1; shift
  local params=()
  for p in "$@"; do params+=(--data-urlencode "$p"); done
  _send -G ${params[@]+"${params[@]}"} "$URL/classes/$class"
}

# upload <token> NAME CONTENT-TYPE TEXT: POST /files/NAME; prints the File value to store in an object.
upload() {
  AUTH=(-H "X-Parse-Session-Token: $1")
  _send -X POST -H "Content-Type: $3" --data-binary "$4" "$URL/files/$2"
  expect 201 '.name and .url' "upload $2" >&2
  jq -c '{__type: "File", name: .name}' <<<"$BODY"
}

# expect STATUS JQ-TEST DESCRIPTION: stops the script (exit 1) unless the last answer has that status and
# the jq expression is true on its body.
expect() {
  if [[ "$STATUS" != "$1" ]] || ! jq -e "$2" >/dev/null 2>&1 <<<"$BODY"; then
    echo "FAIL  $3" >&2
    echo "      wanted HTTP $1 and $2" >&2
    echo "      got    HTTP $STATUS $BODY" >&2
    exit 1
  fi
  echo "ok    $3"
}

# val JQ: a value of the last answer (raw).
val() { jq -r "$1" <<<"$BODY"; }

# j JQ-ARGS...: builds a JSON body with jq (-n -c), e.g. j --arg id "$ID" '{user: {objectId: $id}}'.
j() { jq -nc "$@"; }

# pointer CLASS ID / user ID: pointer JSON.
pointer() { j --arg c "$1" --arg id "$2" '{__type: "Pointer", className: $c, objectId: $id}'; }
user() { pointer _User "$1"; }

# date_in SECONDS: a Parse Date that many seconds from now (negative: in the past).
date_in() {
  local t=$(( $(date +%s) + $1 )) iso
  iso=$(date -u -d "@$t" +%Y-%m-%dT%H:%M:%S.000Z 2>/dev/null || date -u -r "$t" +%Y-%m-%dT%H:%M:%S.000Z)
  j --arg iso "$iso" '{__type: "Date", iso: $iso}'
}

# signup NAME [EXTRA-JSON]: signs a user up (password "pw-NAME"); sets ID and TOKEN.
signup() {
  local body extra=${2:-}
  [[ -n "$extra" ]] || extra='{}'
  body=$(j --arg u "$1" --arg p "pw-$1" --argjson extra "$extra" '{username: $u, password: $p} + $extra')
  req --anon POST /users "$body"
  expect 201 '.objectId and .sessionToken' "sign up $1"
  ID=$(val .objectId) TOKEN=$(val .sessionToken)
}

# make_public ID TOKEN: users are private by default; this lets other users find and see them.
make_public() {
  req --token "$2" PUT "/users/$1" "$(j --arg id "$1" '{ACL: {"*": {read: true}, ($id): {read: true, write: true}}}')"
  expect 200 '.updatedAt' "make user $1 readable by others"
}

# need_class CLASS FILE: stops with the command to run when the app's schema is not loaded.
need_class() {
  req --master GET "/schemas/$1"
  if [[ "$STATUS" != 200 ]]; then
    echo "The $1 class is missing: load the schema first with  parsley schema apply Schemas/$2" >&2
    exit 1
  fi
}
