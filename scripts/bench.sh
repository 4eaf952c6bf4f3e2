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

# cold_first_decision times the CLI as it should ship: one self-contained binary. Linking it fully
# statically (-static-executable) removes the dynamic loader's work, about half of its start-up
# here; where the toolchain cannot, the Swift runtime alone is linked statically. Its own
# scratch path keeps these flags from relinking the bench.
# A static glibc link makes the linker print a note for every dlopen/getpwnam call inside the
# toolchain's and the system's archives (not our code); the log is kept and shown on failure.
static=(--scratch-path .build/static-cli -c release --product entitlement-cache)
log=.build/static-cli-link.log
mkdir -p .build
if ! swift build "${static[@]}" -Xswiftc -static-executable >"$log" 2>&1; then
  cat "$log" >&2
  echo "bench: -static-executable failed; linking only the Swift runtime statically" >&2
  swift build "${static[@]}" --static-swift-stdlib >&2
fi
cli="$(swift build --scratch-path .build/static-cli -c release --show-bin-path)/entitlement-cache"

args=(--quick --check-targets --cli "$cli")
[[ " $* " == *" --json "* ]] || args+=(--json .build/bench-results.json)
exec "$bench" "${args[@]}" "$@"
