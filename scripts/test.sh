#!/usr/bin/env bash
# The whole test suite: unit, integration and end-to-end CLI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
cat >&2 <<'NOTE'
Running the whole test suite (swift test). On 2 cores it takes 3 to 4 minutes from a fresh
clone, about a minute of it the debug build, and 2 to 3 minutes after that. What it prints:
- "Executed 0 tests" (twice) is XCTest's summary: every test here is a Swift Testing test.
- The closing line counts "known issues": the conformance kit's deliberately broken caches,
  each expected to break one clause of the contract. They are the kit's own tests passing,
  not failures; a real failure is a line starting with ✘ and a non-zero exit.
NOTE
exec swift test "$@"
