#!/usr/bin/env bash
# The main job: a guided run of every offline rule on a throw-away database.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
echo "Building entitlement-cache (release): about a minute the first time on 2 cores," \
  "seconds after that. The demo itself runs in under a second." >&2
swift build -c release --product entitlement-cache >&2
exec .build/release/entitlement-cache demo "$@"
