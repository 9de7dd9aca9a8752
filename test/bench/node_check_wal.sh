#!/usr/bin/env bash
# What the node check (src/claims.hpp) costs in WAL and in archived segments, on one server with
# archive_mode on and archive_timeout = 60 s (a segment is archived each minute in which anything
# wrote WAL), the extension created and no other server:
# - idle with the check off, then on (interval 5 s), for SECONDS_IDLE s each: the WAL written and the
#   segments archived;
# - under load, the check on: 4 pgbench clients call snowflake_nextval() for SECONDS_LOAD s; the WAL
#   records of the claims table and its index (pg_waldump --relation) and their bytes, per hour.
# Prints, and writes to build/bench/node_check_wal.md; asserts nothing. The closing note of issue 34
# quotes a full run.
# Usage, as root from the checkout: bash test/bench/node_check_wal.sh [--quick]
# --quick: 3 s of load and 5 s idle, so the test command keeps it working; the full run 60 s and 300 s
# (NODE_CHECK_IDLE_SECONDS=N for another idle span).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

SECONDS_LOAD=60 SECONDS_IDLE=${NODE_CHECK_IDLE_SECONDS:-300}
if [ "${1:-}" = --quick ]; then
  SECONDS_LOAD=3 SECONDS_IDLE=5
fi
SUITE_NAME=bench-node-check-wal SERVER_LISTEN=
PORT=26762

build_and_install

OUT=$BUILD/bench
RESULTS=$OUT/node_check_wal.md
DIR=$SERVERS/$SUITE_NAME
mkdir -p "$OUT"
: >"$RESULTS"
server_init bench "$PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" \
  "snowflake.node_check_interval = 0" "archive_mode = on" "archive_command = 'true'" "archive_timeout = 60"
server_start bench
sql bench "CREATE EXTENSION snowflake" >/dev/null
echo 'SELECT snowflake_nextval();' >"$DIR/snowflake.sql"

# Prints a line and appends it to the results file.
say() {
  echo "$*" | tee -a "$RESULTS"
}

# The WAL position, flushed; segments archived so far.
lsn() { sql bench "SELECT pg_current_wal_flush_lsn()"; }
archived() { sql bench "SELECT archived_count FROM pg_stat_archiver"; }

# When the node check's last pass ended.
checked_at() { sql bench "SELECT checked_at FROM snowflake_node_status()"; }

# Sets the interval ($1 s) and waits until the check says $2.
check_interval() {
  sql bench "ALTER SYSTEM SET snowflake.node_check_interval = $1" >/dev/null
  sql bench "SELECT pg_reload_conf()" >/dev/null
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(sql bench "SELECT node_check FROM snowflake_node_status()")" = "$2" ] && return 0
    sleep 0.2
  done
  echo "the node check never said $2" >&2
  return 1
}

# Idle for SECONDS_IDLE s: "WAL-bytes segments-archived"; what wrote the WAL, by resource manager, into
# $DIR/idle-$1.txt.
idle() {
  sql bench "CHECKPOINT" >/dev/null
  local start archived_start end i
  # The checkpoint's own record makes archive_timeout switch a segment once: start after that switch
  # (not in --quick, whose spans count no segments: it only keeps the bench working).
  archived_start=$(archived)
  for ((i = 0; i < 150 && SECONDS_IDLE >= 60 && $(archived) == archived_start; i++)); do sleep 0.5; done
  start=$(lsn) archived_start=$(archived)
  sleep "$SECONDS_IDLE"
  end=$(lsn)
  as_postgres "$PGB/pg_waldump" -p "${SERVER_DIR[bench]}/data/pg_wal" -s "$start" -e "$end" --stats 2>/dev/null |
    awk '/^[A-Za-z]/ && $1 != "Type" {gsub(/\( *[0-9.]+\)/, ""); if ($2 > 0) printf "%s: %d records, %d bytes; ", $1, $2, $5}' \
    >"$DIR/idle-$1.txt"
  echo "$(sql bench "SELECT pg_wal_lsn_diff('$end', '$start')::bigint") $(($(archived) - archived_start))"
}

say "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
say "| idle ${SECONDS_IDLE} s, archive_timeout = 60 s | WAL bytes | segments archived | segments an hour | what wrote the WAL |"
say "|---|---|---|---|---|"
check_interval 0 off
read -r bytes segments <<<"$(idle off)"
say "| node check off | $bytes | $segments | $((segments * 3600 / SECONDS_IDLE)) | $(cat "$DIR/idle-off.txt") |"
check_interval 5 ok
first=$(checked_at)
until [ "$(checked_at)" != "$first" ]; do sleep 0.5; done # one more pass: the first claim's write is behind
read -r bytes segments <<<"$(idle on)"
say "| node check on (5 s) | $bytes | $segments | $((segments * 3600 / SECONDS_IDLE)) | $(cat "$DIR/idle-on.txt") |"

# Under load: the claims' own records, by relation.
relations=$(sql bench "SELECT string_agg(format('--relation=%s/%s/%s', CASE WHEN reltablespace = 0 THEN 1663
  ELSE reltablespace END, (SELECT oid FROM pg_database WHERE datname = current_database()), pg_relation_filenode(oid)), ' ')
  FROM pg_class WHERE oid IN ('snowflake_node_check.claims'::regclass, 'snowflake_node_check.claims_pkey'::regclass)")
start=$(lsn)
as_postgres "$PGB/pgbench" -n -h "${SERVER_DIR[bench]}" -p "$PORT" -U postgres -c 4 -j 4 -T "$SECONDS_LOAD" \
  -f "$DIR/snowflake.sql" postgres >/dev/null 2>&1
end=$(lsn)
records=0 record_bytes=0
for relation in $relations; do
  read -r n b <<<"$(as_postgres "$PGB/pg_waldump" -p "${SERVER_DIR[bench]}/data/pg_wal" -s "$start" -e "$end" \
    "$relation" 2>/dev/null | sed -n 's/.*len (rec\/tot): *[0-9]*\/ *\([0-9]*\),.*/\1/p' |
    awk '{n++; b += $1} END {printf "%d %d\n", n, b}')"
  records=$((records + n)) record_bytes=$((record_bytes + b))
done
say "under load (4 clients, ${SECONDS_LOAD} s, the check on): $records WAL records of the claims and their index," \
  "$record_bytes bytes: $((records * 3600 / SECONDS_LOAD)) records and $((record_bytes * 3600 / SECONDS_LOAD / 1000)) kB an hour"
echo "results: $RESULTS"
