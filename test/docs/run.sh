#!/usr/bin/env bash
# The docs suite: one scratch server (test/lib/server.sh) with snowflake preloaded, node 1, node 1023
# reserved for backfilled IDs and commit timestamps on, on its Unix socket only (port 26960); against
# it, test/docs/run_docs.py runs every SQL block of README.md and docs/, page by page, and checks that
# every recipe block stands in a test's source (its header says how).
# Usage, as root with the extension installed: bash test/docs/run.sh [--show] [FILE.md ...]
# (FILE.md relative to the checkout; --show prints what each block printed).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

SUITE_NAME=docs SERVER_LISTEN=
server_init docs 26960 "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" \
  "snowflake.backfill_node = 1023" "track_commit_timestamp = on"
server_start docs
on_server docs /usr/bin/python3 "$ROOT/test/docs/run_docs.py" --pg-bin "$PG_BIN" "$@"
