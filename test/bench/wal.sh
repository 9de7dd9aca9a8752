#!/usr/bin/env bash
# What the reservation in the WAL (src/wal.hpp) costs in WAL. On one server (fsync on, the node
# check off: its own writes are issue 34's and measured apart), with snowflake's extension created:
# - under load: 4 pgbench clients call SELECT snowflake_nextval() for SECONDS_LOAD s; the WAL the
#   server wrote, the records of snowflake's resource manager (pg_waldump) and their bytes, per
#   second and per hour, and the IDs issued;
# - idle: after the last reservation has passed the clock, the WAL position over SECONDS_IDLE s,
#   with a CHECKPOINT at its start (a checkpoint with nothing since skips itself: the WAL stays put
#   only if nothing else writes).
# The same load with a sequence (nextval) in the same run is the comparison. Prints, and writes to
# build/bench/wal.md; asserts nothing about speed. test/bench/wal-results.md keeps full runs.
# Usage, as root from the checkout: bash test/bench/wal.sh [--quick]
# --quick: 3 s of load and 5 s idle, so the test command keeps it working; the full run 60 s and 600 s
# (WAL_IDLE_SECONDS=N for another idle span). The idle span's WAL is broken down by resource manager.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

SECONDS_LOAD=60 SECONDS_IDLE=${WAL_IDLE_SECONDS:-600}
if [ "${1:-}" = --quick ]; then
  SECONDS_LOAD=3 SECONDS_IDLE=5
fi
SUITE_NAME=bench-wal SERVER_LISTEN=
PORT=26760

build_and_install

OUT=$BUILD/bench
RESULTS=$OUT/wal.md
DIR=$SERVERS/$SUITE_NAME
mkdir -p "$OUT"
: >"$RESULTS"
server_init bench "$PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" "fsync = on" \
  "snowflake.node_check_interval = 0"
server_start bench
sql bench "CREATE EXTENSION snowflake; CREATE SEQUENCE s" >/dev/null
echo 'SELECT snowflake_nextval();' >"$DIR/snowflake.sql"
echo "SELECT nextval('s');" >"$DIR/sequence.sql"

# Prints a line and appends it to the results file.
say() {
  echo "$*" | tee -a "$RESULTS"
}

# The server's WAL position, flushed.
lsn() {
  sql bench "SELECT pg_current_wal_flush_lsn()"
}

# Bytes of WAL between positions $1 and $2.
wal_bytes() {
  sql bench "SELECT pg_wal_lsn_diff('$2', '$1')::bigint"
}

# snowflake's records between positions $1 and $2, as "count bytes" (pg_waldump's statistics, with its
# parenthesised shares and the record's info bits taken out).
snowflake_records() {
  as_postgres "$PGB/pg_waldump" -p "${SERVER_DIR[bench]}/data/pg_wal" -s "$1" -e "$2" --stats=record 2>/dev/null |
    awk '/^custom163/ {gsub(/\( *[0-9.]+\)/, ""); n += $2; b += $3} END {printf "%d %d\n", n, b}'
}

say "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
say "| 4 clients, ${SECONDS_LOAD} s | calls/s | WAL bytes/s | snowflake records/s | their bytes/s | WAL MB/hour |"
say "|---|---|---|---|---|---|"
for what in sequence snowflake; do
  sql bench "CHECKPOINT" >/dev/null
  start=$(lsn)
  tps=$(as_postgres "$PGB/pgbench" -n -h "${SERVER_DIR[bench]}" -p "$PORT" -U postgres -c 4 -j 4 -T "$SECONDS_LOAD" \
    -f "$DIR/$what.sql" postgres 2>&1 | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p')
  end=$(lsn)
  bytes=$(wal_bytes "$start" "$end")
  read -r records record_bytes <<<"$(snowflake_records "$start" "$end")"
  say "| $what | ${tps%.*} | $((bytes / SECONDS_LOAD)) | $((records / SECONDS_LOAD)) | $((record_bytes / SECONDS_LOAD)) | $((bytes * 3600 / SECONDS_LOAD / 1000000)) |"
done

# Idle: once the last reservation is behind the clock (nothing left to log again after a checkpoint).
until [ "$(sql bench "SELECT coalesce(reserved_until < clock_timestamp(), true) FROM snowflake_stats()")" = t ]; do
  sleep 0.5
done
sql bench "CHECKPOINT" >/dev/null
start=$(lsn)
sleep "$SECONDS_IDLE"
end=$(lsn)
read -r records record_bytes <<<"$(snowflake_records "$start" "$end")"
say "idle for $SECONDS_IDLE s after a checkpoint: $(wal_bytes "$start" "$end") bytes of WAL, $records snowflake records"
if [ "$start" != "$end" ]; then
  say "what wrote it (pg_waldump --stats, records and bytes by resource manager):"
  as_postgres "$PGB/pg_waldump" -p "${SERVER_DIR[bench]}/data/pg_wal" -s "$start" -e "$end" --stats 2>/dev/null |
    awk '/^[A-Za-z]/ && $1 != "Type" {gsub(/\( *[0-9.]+\)/, ""); if ($2 > 0) printf "- %s: %d records, %d bytes\n", $1, $2, $5}' |
    tee -a "$RESULTS"
fi
echo "results: $RESULTS"
