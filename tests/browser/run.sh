#!/bin/sh
# Runs the browser tests: installs Debian's chromium (as root, when missing)
# and playwright-core (npm ci, when node_modules is missing), then
# `node --test`. Needs TILESCOPE (the binary) and ARTIFACTS (a folder for the
# screenshot and the exported SVG) in the environment. Never skips silently:
# anything missing is an error.
set -eu
cd "$(dirname "$0")"
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "browser tests: installing chromium" >&2
    apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }
  else
    echo "browser tests: error: /usr/bin/chromium is missing; run: sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "browser tests: error: node and npm are needed (apt-get install -y nodejs npm)" >&2
  exit 1
fi
if [ ! -d node_modules/playwright-core ]; then
  echo "browser tests: installing playwright-core (npm ci)" >&2
  npm ci --no-audit --no-fund
fi
mkdir -p "$ARTIFACTS"
exec node --test --test-concurrency=1 --test-reporter=spec *.test.mjs
