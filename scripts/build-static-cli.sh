#!/usr/bin/env bash
# Builds the entitlement-cache command-line tool as it should ship, one self-contained binary,
# and prints the binary's absolute path on stdout (everything else goes to stderr). Used by
# scripts/bench.sh, whose cold_first_decision times this binary, and scripts/install-cli.sh.
#
#   cli="$(scripts/build-static-cli.sh)"
#
# Linking fully statically (-static-executable) removes the dynamic loader's work, about half
# of the tool's start-up here; where the toolchain cannot, only the Swift runtime is linked
# statically (--static-swift-stdlib), and a note on stderr says so. The build has a scratch
# path of its own, .build/static-cli, so these flags never relink the products of the main
# .build. A static glibc link makes the linker print a note for every dlopen/getpwnam call
# inside the toolchain's and the system's archives (not our code); the log is kept in
# .build/static-cli-link.log and shown only on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build/static-cli
static=(--scratch-path "$scratch" -c release --product entitlement-cache)
log=.build/static-cli-link.log
mkdir -p .build
if swift build "${static[@]}" -Xswiftc -static-executable >"$log" 2>&1; then
  echo "build-static-cli: linked fully statically (-static-executable)" >&2
else
  cat "$log" >&2
  echo "build-static-cli: -static-executable failed; linking only the Swift runtime statically" >&2
  swift build "${static[@]}" --static-swift-stdlib >&2
fi
bin="$(swift build --scratch-path "$scratch" -c release --show-bin-path)"
[ -x "$bin/entitlement-cache" ] || { echo "build-static-cli: no $bin/entitlement-cache" >&2; exit 1; }
echo "$bin/entitlement-cache"
