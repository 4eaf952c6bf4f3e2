#!/usr/bin/env bash
# Two processes, one file (<doc:Storage>, <doc:Reliability>): one writer, readers never block on it,
# never see SQLITE_BUSY, and always read a whole snapshot.
#
#   scripts/reliability/two-process-soak.sh [SECONDS] [BIN]     # SECONDS default 60
#
# For SECONDS, two loops share one database file, each its own OS process running one
# `entitlement-cache` command at a time (the CLI has no long-lived mode: `simulate` replays
# one script on a virtual clock and exits):
#
#   - the writer: `put` of three recognisable snapshot variants in turn (reliability.py's
#     docstring has the table), mostly for one scope, sometimes a second, and now and then
#     `refresh-failed` (12% of its commands);
#   - the reader: `show --json`, `show` (text) and `check --json` (of `pro`, a marker key of
#     each variant, a key only an unclaimed purchase lists) on the same scopes, and `doctor`
#     now and then.
#
# It proves that:
#
#   - no command fails, prints "database is locked" / SQLITE_BUSY, or writes anything to
#     stderr, and `doctor` always says healthy;
#   - every read is one whole snapshot: in `show`, the body's requestDate, its entitlement
#     keys, the decisions, the bookkeeping (storedAt, serverTime, size, SHA-256) name one
#     variant; in `show`'s text, the server time, stored at, the entitlement table and the
#     removed access context's expiry do; in `check`, the scope row (storedAt) and the key's
#     entitlement row (verifiedAt, or its absence) name the same variant;
#   - at the end `PRAGMA integrity_check` is ok and nothing was moved aside.
#
# BIN: the second argument, else $ENTITLEMENT_CACHE_BIN, else the release build of this
# package (built when missing). SOAK_SEED (env) fixes the random choices; KEEP_TMP=1 keeps the
# temporary directory (kept anyway on failure); SOAK_TEXT_SHOW=0 leaves text `show` out of the
# reader's mix. Prints the counts; exits 1 on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: $0 [SECONDS] [BIN]   (SECONDS a positive integer, got '$seconds')" >&2
  exit 2
fi
seed="${SOAK_SEED:-$(( (RANDOM << 15) | RANDOM ))}"
if ! [[ "$seed" =~ ^[0-9]+$ ]]; then
  echo "error: SOAK_SEED must be a whole number, got '$seed'" >&2
  exit 2
fi

bin="${2:-${ENTITLEMENT_CACHE_BIN:-}}"
if [ -z "$bin" ]; then
  (cd "$root" && swift build -c release --product entitlement-cache >&2)
  bin="$(cd "$root" && swift build -c release --show-bin-path)/entitlement-cache"
fi
if [ ! -x "$bin" ]; then
  echo "error: $bin is not an executable entitlement-cache" >&2
  exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
for tool in python3 sqlite3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool is needed (apt-get install $tool)" >&2
    exit 2
  fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/two-process-soak.XXXXXX")"
mkdir "$work/db" "$work/snapshots"
db="$work/db/cache.sqlite"
lib="$here/reliability.py"

writer_pid=""
reader_pid=""
# shellcheck disable=SC2317  # called by the trap below, which shellcheck cannot see
stop_loops() {
  for pid in "$writer_pid" "$reader_pid"; do
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  done
}
trap stop_loops EXIT INT TERM

echo "two-process-soak: binary $bin; database $db; seed $seed"
python3 -B "$lib" soak-setup "$bin" "$db" "$work/snapshots"

python3 -B "$lib" soak-writer "$bin" "$db" "$work/snapshots" "$seconds" "$work/writer.json" \
  "$seed" 2>"$work/writer.log" &
writer_pid=$!
python3 -B "$lib" soak-reader "$bin" "$db" "$work/snapshots" "$seconds" "$work/reader.json" \
  "$((seed + 1))" 2>"$work/reader.log" &
reader_pid=$!

status=0
wait "$writer_pid" || status=1
writer_pid=""
wait "$reader_pid" || status=1
reader_pid=""
trap - EXIT INT TERM

python3 -B "$lib" soak-report "$db" "$work/writer.json" "$work/reader.json" "$seconds" || status=1
for log in "$work/writer.log" "$work/reader.log"; do
  if [ -s "$log" ]; then
    echo "--- $(basename "$log") (first lines):" >&2
    head -n 20 "$log" >&2
    status=1
  fi
done

if [ "$status" -ne 0 ] || [ "${KEEP_TMP:-0}" = 1 ]; then
  echo "two-process-soak: kept $work (replay with SOAK_SEED=$seed)" >&2
else
  rm -rf "$work"
fi
exit "$status"
