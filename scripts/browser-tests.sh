#!/usr/bin/env bash
# The dashboard in a real browser: Debian's chromium + chromium-driver and Selenium (PyPI), installed when missing,
# driving the `parsley` executable of `swift build`. Screenshots (desktop and phone width) go to
# Tests/browser/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
python3 -c 'import selenium, pytest' 2>/dev/null || pip install -q selenium pytest
[ -x .build/debug/parsley ] || swift build --product parsley
cd Tests/browser
python3 -m pytest -q -p no:cacheprovider "$@"
