#!/usr/bin/env bash
# The whole test suite: unit, integration and end-to-end CLI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
exec swift test "$@"
