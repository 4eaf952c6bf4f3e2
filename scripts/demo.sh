#!/usr/bin/env bash
# The main job: a guided run of every offline rule on a throw-away database.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
swift build -c release --product entitlement-cache >&2
exec .build/release/entitlement-cache demo "$@"
