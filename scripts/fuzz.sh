#!/usr/bin/env bash
# Runs the libFuzzer targets (<doc:Reliability>) of Fuzz/entitlement-cache-fuzz, each for SECONDS
# (default 60), and prints per target the inputs executed, the rate and the crashes. Exits
# non-zero when any target crashed; the crashing input is kept in .build/fuzz/artifacts/TARGET/
# (.build/fuzz-plain/artifacts/TARGET/ with --without-asan).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS] [--grow-corpus] [--without-asan] [-- LIBFUZZER_FLAGS...]
#
# TARGET: snapshot-decoder, iso8601, cli-arguments, signature-envelope, simulate-script,
# stateful. Each run starts from a copy of Fuzz/Corpus/TARGET in a scratch directory, so the
# committed seeds never grow by themselves; --grow-corpus merges into them what a run found
# that reaches new code (libFuzzer's -merge=1 keeps only those inputs). Flags after -- go to
# libFuzzer as they are (-runs=N, -seed=N, -max_len=N, ...). JOBS=N (env) runs N targets
# at a time. --without-asan builds with libFuzzer's instrumentation alone, in .build/fuzz-plain:
# the properties are checked as before but memory errors are not, for about 3.5 times the
# stateful target's inputs a second; CI and every other run use the AddressSanitizer build.
#
# Replaying one input, or a crash artifact: the built binary takes the target, then libFuzzer's
# arguments:  SWIFT_BACKTRACE=enable=no .build/fuzz/release/entitlement-cache-fuzz TARGET FILE
# The stateful target shares one database file between inputs, emptied before each; with
# ENTITLEMENT_CACHE_FUZZ_FRESH_FILE=1 it makes a new one per input, to confirm that a crash
# follows from its input alone.
#
# The build has a scratch path of its own, .build/fuzz, so its sanitizer flags never touch the
# main .build. It needs lld: the toolchain's default linker (gold) crashes linking the build
# tool under -sanitize=fuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(snapshot-decoder iso8601 cli-arguments signature-envelope simulate-script stateful)
target=all
seconds=60
grow=false
sanitizers=fuzzer,address
extra=()
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --grow-corpus) grow=true ;;
    --without-asan) sanitizers=fuzzer ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) positional+=("$1") ;;
  esac
  shift
done
[ ${#positional[@]} -ge 1 ] && target="${positional[0]}"
[ ${#positional[@]} -ge 2 ] && seconds="${positional[1]}"
[ ${#positional[@]} -le 2 ] || { echo "fuzz: too many arguments; see scripts/fuzz.sh --help" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2; }
if [ "$target" = all ]; then
  targets=("${all[@]}")
else
  [[ " ${all[*]} " == *" $target "* ]] || {
    echo "fuzz: unknown target '$target'; one of: all ${all[*]}" >&2
    exit 2
  }
  targets=("$target")
fi

# lld, from the toolchain (next to swift) or the system.
toolchain_bin="$(dirname "$(command -v swift)")"
if [ ! -x "$toolchain_bin/ld.lld" ] && ! command -v ld.lld >/dev/null; then
  echo "fuzz: no ld.lld in $toolchain_bin or on PATH; install it (apt-get install lld)" >&2
  exit 1
fi

scratch=.build/fuzz
[ "$sanitizers" = fuzzer ] && scratch=.build/fuzz-plain
build=(-c release --product entitlement-cache-fuzz --scratch-path "$scratch"
  -Xswiftc -sanitize="$sanitizers" -Xswiftc -use-ld=lld -Xswiftc -DENTITLEMENT_CACHE_FUZZING)
mkdir -p "$scratch"
log="$scratch/build.log"
echo "fuzz: building (log in $log)" >&2
swift build "${build[@]}" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
bin="$(swift build "${build[@]}" --show-bin-path)/entitlement-cache-fuzz"

work="$(mktemp -d "${TMPDIR:-/tmp}/entitlement-cache-fuzz.XXXXXX")"
# The stateful target's database, in memory where /dev/shm is: it is written for every input.
# A crashed run cannot remove its own; this one goes with the script.
shm=/dev/shm
[ -d "$shm" ] && [ -w "$shm" ] || shm="$work"
databases="$(mktemp -d "$shm/entitlement-cache-fuzz-db.XXXXXX")"
trap 'rm -rf "$work" "$databases"' EXIT
export ENTITLEMENT_CACHE_FUZZ_TMPDIR="$databases"
# A failed property ends in fatalError: without the Swift backtracer, the trap reaches
# libFuzzer's signal handler at once and the input is written out. The leak checker is off:
# the Swift runtime's caches and enum-packed pointers read as leaks (<doc:Reliability>).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# Without ASan, glibc's malloc gives the top of the heap back to the kernel whenever a free
# leaves 128 KiB there, and takes it again on the next malloc: in the stateful target that
# churn of page faults was half of its time. Thresholds of 256 MiB keep the memory. (ASan's
# allocator replaces malloc and keeps its memory; this changes nothing there.)
export GLIBC_TUNABLES="glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=268435456${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"

# What libFuzzer writes for a crash, a hang, running out of memory or a leak (not slow-unit-*).
count_crashes() {
  find "$1" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) |
    wc -l
}

# One target: runs it, writes its figures line to $work/$t.result, returns non-zero on a crash.
fuzz_one() {
  local t="$1" artifacts="$scratch/artifacts/$1" status=0 before executions rate crashes
  mkdir -p "$artifacts"
  cp -R "Fuzz/Corpus/$t" "$work/$t"
  before="$(count_crashes "$artifacts")"
  "$bin" "$t" -max_total_time="$seconds" -timeout=20 -print_final_stats=1 -detect_leaks=0 \
    -artifact_prefix="$artifacts/" ${extra[@]+"${extra[@]}"} "$work/$t" >"$work/$t.log" 2>&1 \
    || status=$?
  cp "$work/$t.log" "$scratch/$t.log"
  executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t.log" | tail -1)"
  crashes=$(($(count_crashes "$artifacts") - before))
  printf '%-20s %12s %10s %8s\n' "$t" "${executions:-?}" "${rate:-?}" "$crashes" >"$work/$t.result"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    {
      echo "fuzz: $t failed (exit $status); log in $scratch/$t.log, inputs in $artifacts/:"
      grep -E 'property failed|Fatal error|ERROR: |SUMMARY' "$work/$t.log" | head -5 || true
    } >&2
    return 1
  fi
  if [ "$grow" = true ]; then
    "$bin" "$t" -merge=1 -detect_leaks=0 "Fuzz/Corpus/$t" "$work/$t" >"$work/$t.merge.log" 2>&1
    echo "fuzz: $t: $(find "Fuzz/Corpus/$t" -type f | wc -l) seeds in Fuzz/Corpus/$t" >&2
  fi
  rm -rf "${work:?}/$t"
}

# JOBS (env, default 1) targets run at a time, each lane taking every JOBS-th target: CI uses
# 2, one a core, so six targets of 60 s take three minutes.
jobs="${JOBS:-1}"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: JOBS must be a positive whole number" >&2; exit 2; }
failed=0
pids=()
for ((lane = 0; lane < jobs; lane++)); do
  (
    lane_failed=0
    for ((i = lane; i < ${#targets[@]}; i += jobs)); do
      fuzz_one "${targets[$i]}" || lane_failed=1
    done
    exit "$lane_failed"
  ) &
  pids+=("$!")
done
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
printf '%-20s %12s %10s %8s\n' target executions exec/s crashes
for t in "${targets[@]}"; do
  cat "$work/$t.result" 2>/dev/null || printf '%-20s %12s %10s %8s\n' "$t" "?" "?" "?"
done
exit "$failed"
