#!/usr/bin/env bash
# Installs the two system C libraries EntitlementCache links (libsqlite3, libcrypto) when their
# headers are missing, and the sqlite3 shell the benchmark's baseline_sqlite3_cli runs. Does
# nothing when they are present.
set -euo pipefail

missing=()
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
[ -f /usr/include/openssl/sha.h ] || missing+=(libssl-dev)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: missing ${missing[*]}; install them with your package manager" >&2
  exit 2
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing ${missing[*]}..." >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
