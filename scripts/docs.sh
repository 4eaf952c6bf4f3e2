#!/usr/bin/env bash
# Builds the DocC documentation of the library, of its testing product's two modules, of the
# import adapters (EntitlementCacheImport) from their symbol graphs, and the tool's manual (its own catalog), with the toolchain's docc,
# every warning fatal (a broken symbol link, an undocumented parameter). The archives go to
# .build/docs/MODULE.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh

swift package dump-symbol-graph --minimum-access-level public >/dev/null 2>&1 \
  || swift package dump-symbol-graph --minimum-access-level public
graphs="$(swift build --show-bin-path)/../symbolgraph"
# No public property reads `{ get set }` in the reference unless callers may set it: a stored
# property of an @Observable class becomes a computed one with a setter, shown even when the
# setter is private (AccessModel.state was). Stored settings show no accessors at all.
python3 - "$graphs/EntitlementCache.symbols.json" <<'PY'
import json, sys
graph = json.load(open(sys.argv[1]))
# Computed properties callers may set; none today.
callers_set = set()
settable = [
    "/".join(symbol["pathComponents"]) for symbol in graph["symbols"]
    if symbol["kind"]["identifier"] in ("swift.property", "swift.subscript")
    and any(part.get("spelling") == "set" for part in symbol["declarationFragments"])
    and "/".join(symbol["pathComponents"]) not in callers_set
]
if settable:
    sys.exit("docs: the reference shows { get set } for " + ", ".join(settable)
             + ": make the property read-only to callers (a computed property over private"
             + " storage), or, when callers may set it, list it here")
PY
mkdir -p .build/docs
for module in EntitlementCache EntitlementCacheTesting EntitlementCacheConformance \
  EntitlementCacheImport; do
  input=$(mktemp -d)
  cp "$graphs/$module.symbols.json" "$input/"
  catalog="Sources/$module/$module.docc"
  # The kit's module lives inside the testing product's folder.
  [ -d "$catalog" ] || catalog="Sources/EntitlementCacheTesting/Conformance/$module.docc"
  if [ ! -d "$catalog" ]; then
    # A module without articles still gets its reference checked.
    catalog="$(mktemp -d)/$module.docc"
    mkdir -p "$catalog"
  fi
  docc convert "$catalog" --additional-symbol-graph-dir "$input" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.entitlementcache.$module" \
    --output-path ".build/docs/$module.doccarchive" --warnings-as-errors >/dev/null
  echo "docs: .build/docs/$module.doccarchive"
done
# The tool's manual, a catalog of its own: the tool's module has no public symbols.
docc convert Sources/EntitlementCacheCLI/EntitlementCacheCLI.docc \
  --fallback-display-name "entitlement-cache" --fallback-bundle-identifier "org.entitlementcache.cli" \
  --output-path ".build/docs/EntitlementCacheCLI.doccarchive" --warnings-as-errors >/dev/null
echo "docs: .build/docs/EntitlementCacheCLI.doccarchive"
