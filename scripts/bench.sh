#!/usr/bin/env bash
# Builds the release benchmark and runs it. Needs wrk (Debian package), installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq wrk
fi
swift build -c release --product parsley-bench
swift build -c release --product parsley
"$(swift build -c release --show-bin-path)/parsley-bench" "$@"
