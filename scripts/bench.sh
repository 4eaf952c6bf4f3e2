#!/usr/bin/env bash
# The benchmark gate CI runs after the tests: release builds, then the --quick suite, which
# prints the table and fails when a target ratio is more than 2x worse than its target.
#
#   scripts/bench.sh                 # quick run + gate, JSON in .build/bench-results.json
#   scripts/bench.sh --json FILE     # extra arguments go to entitlement-cache-bench
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh

swift build -c release --product entitlement-cache-bench >&2
bench="$(swift build -c release --show-bin-path)/entitlement-cache-bench"

# cold_first_decision times the CLI as it should ship: one self-contained binary, built by the
# script that also backs scripts/install-cli.sh, so the binary timed is the binary installed.
cli="$(scripts/build-static-cli.sh)"

args=(--quick --check-targets --cli "$cli")
[[ " $* " == *" --json "* ]] || args+=(--json .build/bench-results.json)
exec "$bench" "${args[@]}" "$@"
