#!/usr/bin/env bash
# kill -9 during writes (<doc:Storage>, <doc:Reliability>): a snapshot write is one transaction, all
# or nothing, whenever the process dies.
#
#   scripts/reliability/kill-writes.sh [RUNS] [BIN]     # RUNS default 1000
#
# RUNS times, over one kept database file, starts `entitlement-cache put` of one of three
# recognisable snapshot variants (reliability.py's docstring has the table) for one of two
# scopes, sleeps a random fraction of that variant's put time (the median of its latest
# unkilled puts; half the kills uniform over 0-130% of it, half over 40-110%, where the file is
# open) and sends SIGKILL: kills land in start-up, in the write transaction (the log's header,
# its frames), after the commit (the checkpoint at close), and, about a third, after the
# process exited. After each kill it proves that:
#
#   - `sqlite3 FILE 'PRAGMA integrity_check'` says ok;
#   - the scope holds the snapshot it held before or the one being written, never a mix: the
#     CLI's view (`show --json`: body, bookkeeping, decisions; `check --json` of `pro` and of
#     the new variant's marker key: the scope row against its entitlement rows) and a raw-SQL
#     read (scope row, JSON body, entitlement rows) all name the same variant; the other scope
#     is unchanged; a put that exited on its own before the kill did store its snapshot;
#   - the write-ahead log the killed writer left agrees: a commit frame in it means the new
#     snapshot, frames without one mean the old;
#   - the file was never moved aside or replaced (no `*.damaged*` or other files beside it,
#     same inode), and the next put succeeds: in 30% of runs at once, on the other scope,
#     before anything else has opened the file since the kill.
#
# Then FRESH_RUNS (env, default 100) kills of the first put into a missing file (creation,
# WAL set-up, migrations): the file is absent, empty or partly migrated but sound, never moved
# aside, and the next put succeeds and leaves it 0600.
#
# BIN: the second argument, else $ENTITLEMENT_CACHE_BIN, else the release build of this
# package (built when missing). KILL_SEED (env) replays a run's random choices; KEEP_TMP=1
# keeps the temporary directory (kept anyway when a run fails). Exits 1 on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

runs="${1:-1000}"
if ! [[ "$runs" =~ ^[0-9]+$ ]] || [ "$runs" -lt 1 ]; then
  echo "usage: $0 [RUNS] [BIN]   (RUNS a positive integer, got '$runs')" >&2
  exit 2
fi
fresh_runs="${FRESH_RUNS:-100}"
if ! [[ "$fresh_runs" =~ ^[0-9]+$ ]]; then
  echo "error: FRESH_RUNS must be a whole number, got '$fresh_runs'" >&2
  exit 2
fi
seed="${KILL_SEED:-$(( (RANDOM << 15) | RANDOM ))}"
if ! [[ "$seed" =~ ^[0-9]+$ ]]; then
  echo "error: KILL_SEED must be a whole number, got '$seed'" >&2
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

work="$(mktemp -d "${TMPDIR:-/tmp}/kill-writes.XXXXXX")"
status=0
python3 -B "$here/reliability.py" kill-writes "$bin" "$work" "$runs" "$fresh_runs" "$seed" \
  || status=$?
if [ "$status" -ne 0 ] || [ "${KEEP_TMP:-0}" = 1 ]; then
  echo "kill-writes: kept $work (replay with KILL_SEED=$seed)" >&2
else
  rm -rf "$work"
fi
exit "$status"
