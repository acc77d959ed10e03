#!/usr/bin/env bash
# Serves a built playground (scripts/build-web.sh OUT_DIR) on 127.0.0.1 and
# prints its URL. usage: scripts/serve-web.sh OUT_DIR [PORT]   (default 8765)
set -euo pipefail
exec node "$(dirname "$0")/serve-web.js" "$@"
