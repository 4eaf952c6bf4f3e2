#!/usr/bin/env bash
# Writes Sources/EntitlementCache/SQLite/EmbeddedMigrations.swift from Migrations/*.sql: the
# migrations compiled into the library, so nothing reads .sql files at run time, and no build
# plugin runs in the build of an app that depends on the package. The .sql files stay the one
# place a schema is written: after adding or changing one, run this and commit both;
# MigrationSourceTests fails while they differ.
#
#   scripts/generate-migrations.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift run --quiet migration-embedder \
  Sources/EntitlementCache/SQLite/EmbeddedMigrations.swift Migrations/*.sql
