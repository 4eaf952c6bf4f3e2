#!/usr/bin/env bash
# A full disk, through the command-line tool, on a real file system: a 320 KiB tmpfs holds a
# cache with one snapshot, then a put of a 550 KB snapshot that does not fit. It proves that:
#
#   - the put fails with exit 3 and says the disk is full (SQLITE_FULL, typed as `full`);
#   - the snapshot stored before still grants, `doctor` says the file is healthy, the
#     database file is byte for byte what it was, and what the file and its log hold (the
#     `sqlite3` shell's `.dump`, read-only) is too. The log itself may grow: the refused
#     transaction can leave frames, cut short where the disk ran out, after the last commit,
#     and no reader takes a frame after the last commit, so they hold nothing;
#   - once space is freed, the same put succeeds.
#
#   scripts/reliability/full-disk.sh [BIN]
#
# Mounting needs root and the permission to mount (CI has both); without it the script says
# SKIPPED and why, and exits 0. The library's own tests fill the disk for every write with the
# fault-injecting VFS (FullDiskTests, the fault sweep), where no mount is needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-$(swift build --show-bin-path)/entitlement-cache}"
[[ -x "$bin" ]] || swift build --product entitlement-cache >&2

work="$(mktemp -d)"
mnt="$work/disk"
mkdir -p "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
if ! mount -t tmpfs -o size=320k tmpfs "$mnt" 2>"$work/mount.err"; then
  echo "full-disk: SKIPPED: cannot mount a tmpfs here ($(cat "$work/mount.err"))"
  exit 0
fi

scope=(--sdk-key sdk_live_123 --installation install-1 --environment production --user alice)
fail() { echo "full-disk: FAILED: $*" >&2; exit 1; }
cat >"$work/small.json" <<'JSON'
{"requestDate":"2026-11-30T12:00:00Z","verification":"verified",
 "entitlements":{"pro":{"status":"active","expiresAt":"2026-12-30T12:00:00Z"}}}
JSON
python3 - "$work/big.json" <<'PY'
import json, sys
entitlements = {f"k{i:04d}": {"status": "active", "expiresAt": "2026-12-30T12:00:00Z",
                              "productId": "p" * 200} for i in range(2000)}
entitlements["pro"] = {"status": "expired", "expiresAt": "2026-11-30T12:00:00Z"}
json.dump({"requestDate": "2026-11-30T12:01:00Z", "verification": "verified",
           "entitlements": entitlements}, open(sys.argv[1], "w"))
PY

db="$mnt/cache.sqlite"
"$bin" put --db "$db" "${scope[@]}" --file "$work/small.json" --now 2026-11-30T12:00:00Z >/dev/null
# The database file's bytes, and what the file and its log hold.
files() {
  { sha256sum <"$db"; sqlite3 -readonly "$db" .dump | sha256sum; } | tr -d ' \n-'
}
before="$(files)"

set +e
"$bin" put --db "$db" "${scope[@]}" --file "$work/big.json" --now 2026-11-30T12:01:00Z \
  >"$work/out" 2>"$work/err"
status=$?
set -e
[[ $status -eq 3 ]] || fail "the put that does not fit exited $status, not 3: $(cat "$work/err")"
grep -q "disk is full" "$work/err" || fail "the put did not say the disk is full: $(cat "$work/err")"
"$bin" check --db "$db" "${scope[@]}" --entitlement pro --now 2026-11-30T12:02:00Z >/dev/null \
  || fail "the snapshot stored before no longer grants pro"
"$bin" doctor --db "$db" >"$work/doctor" || fail "doctor: $(cat "$work/doctor")"
grep -q "healthy" "$work/doctor" || fail "doctor: $(cat "$work/doctor")"
[[ "$(files)" == "$before" ]] || fail "the database file, or what it and its log hold, changed"
echo "full-disk: refused put: $(cat "$work/err")"

# Space again: the same put lands.
mount -o remount,size=4m "$mnt"
"$bin" put --db "$db" "${scope[@]}" --file "$work/big.json" --now 2026-11-30T12:01:00Z >/dev/null \
  || fail "the put failed again with space to spare"
set +e
"$bin" check --db "$db" "${scope[@]}" --entitlement pro --now 2026-11-30T12:02:00Z >"$work/check"
status=$?
set -e
# Exit 1: answered, not granted, and for the reason the new snapshot gives.
[[ $status -eq 1 ]] && grep -q "expired" "$work/check" \
  || fail "the new snapshot (pro expired) did not replace the old one: exit $status, $(cat "$work/check")"
echo "full-disk: ok: exit 3 and 'full' on a full disk, the previous snapshot kept byte for byte, the put lands once there is space"
