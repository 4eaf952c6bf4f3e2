#!/usr/bin/env bash
# Fails when the public API of the library or its testing product breaks the API of the
# baseline commit named in API-BASELINE (swift package diagnose-api-breaking-changes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh

baseline=$(grep -v '^#' API-BASELINE | grep -v '^[[:space:]]*$' | head -n 1)
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
  # A shallow clone may not hold the baseline yet.
  git fetch --quiet --unshallow 2>/dev/null || true
fi
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
  echo "error: API-BASELINE names $baseline, which this clone does not hold" >&2
  exit 1
fi
echo "api: comparing with $baseline"
swift package diagnose-api-breaking-changes "$baseline" \
  --products EntitlementCache EntitlementCacheTesting 2>&1 | grep -v '^\[' 
exit "${PIPESTATUS[0]}"
