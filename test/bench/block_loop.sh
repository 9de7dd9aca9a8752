#!/usr/bin/env bash
# What a plain role looping on blocks of IDs costs everyone else (issue 28 item 3). On one
# server (fsync on), 2 pgbench clients call SELECT snowflake_nextval() while 4 sessions of a
# plain LOGIN role loop, first on SELECT 1 (the baseline: the same load on the CPU), then on
# SELECT snowflake_nextval_block(4096); the pair runs ROUNDS times, each case after the clock
# has caught up with the IDs the last one borrowed. Prints, and writes to
# build/bench/block-loop.md: the 2 clients' calls/s in each case and the ratio of the block
# loop's to the baseline's, and the reservation writes each case forced, per second
# (snowflake_reservation()'s caller_writes and renewals, snowflake_stats().reservations, before
# and after). Asserts nothing about speed. test/bench/block-loop-results.md keeps full runs.
# Usage, as root from the checkout: bash test/bench/block_loop.sh [--quick]
# --quick runs each case 2 s, once, so the test command keeps it working; the full run 10 s, 3 times.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

SECONDS_EACH=10 ROUNDS=3
if [ "${1:-}" = --quick ]; then
  SECONDS_EACH=2 ROUNDS=1
fi
SUITE_NAME=bench-block-loop SERVER_LISTEN=
PORT=26740

build_and_install

OUT=$BUILD/bench
RESULTS=$OUT/block-loop.md
DIR=$SERVERS/$SUITE_NAME
mkdir -p "$OUT"
: >"$RESULTS"
# fsync on: the reservation writes are what a block loop multiplies.
server_init bench "$PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" "fsync = on"
server_start bench
sql bench "CREATE EXTENSION snowflake; CREATE ROLE looper LOGIN" >/dev/null
echo 'SELECT snowflake_nextval();' >"$DIR/nextval.sql"
echo 'SELECT 1;' >"$DIR/select1.sql"
echo 'SELECT snowflake_nextval_block(4096);' >"$DIR/block.sql"

# Prints a line and appends it to the results file.
say() {
  echo "$*" | tee -a "$RESULTS"
}

# Runs pgbench on the server (through its Unix socket) as role $1 with $2 clients for $SECONDS_EACH s on
# script $3; prints the transactions per second (without the connection time), or fails with pgbench's
# last lines.
run_pgbench() {
  local out
  out=$(as_postgres "$PGB/pgbench" -n -h "${SERVER_DIR[bench]}" -p "$PORT" -U "$1" -c "$2" -j "$2" -T "$SECONDS_EACH" -f "$3" \
    postgres 2>&1) || { tail -5 <<<"$out" >&2; return 1; }
  sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out"
}

# The counters of reservation writes, as "caller_writes renewals reservations".
writes() {
  sql bench "SELECT r.caller_writes, r.renewals, s.reservations FROM snowflake_reservation() r, snowflake_stats() s" | tr '|' ' '
}

# One case: the 2 clients' SELECT snowflake_nextval() while 4 looper sessions run script $1; prints
# "calls/s caller_writes/s renewals/s reservations/s".
measure() {
  local before after loop tps
  # Start from a clock past every ID the last case borrowed, as an idle server would.
  wait_for 60 eval '[ "$(sql bench "SELECT coalesce(s.last_id_time <= clock_timestamp(), true) FROM snowflake_stats() s")" = t ]' ||
    die "the clock did not catch up with the IDs issued"
  read -r -a before <<<"$(writes)"
  run_pgbench looper 4 "$1" >"$DIR/loop.tps" &
  loop=$!
  tps=$(run_pgbench postgres 2 "$DIR/nextval.sql") || die "the 2 nextval clients failed"
  wait "$loop" || die "the looper sessions failed"
  read -r -a after <<<"$(writes)"
  awk -v t="$tps" -v s="$SECONDS_EACH" -v c="$((after[0] - before[0]))" -v r="$((after[1] - before[1]))" \
    -v v="$((after[2] - before[2]))" 'BEGIN { printf "%.0f %.0f %.0f %.0f\n", t, c / s, r / s, v / s }'
}

say "# What a block loop costs other callers"
say
say "$("$PGB"/postgres --version), $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg) at the start);" \
  "fsync on; $(date -u +%Y-%m-%d); commit" \
  "$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (modified)'); $ROUNDS" \
  "round(s) of $SECONDS_EACH s per case. 2 pgbench clients call SELECT snowflake_nextval(); 4 sessions of a plain" \
  "LOGIN role loop at the same time on the statement named; all through the server's Unix socket."
say
say "| Round | 4 sessions loop on | nextval() calls/s (2 clients) | caller writes/s | renewals/s | reservations/s |"
say "|---|---|---|---|---|---|"
baseline=0 attack=0
for round in $(seq 1 "$ROUNDS"); do
  read -r tps c r v <<<"$(measure "$DIR/select1.sql")"
  say "| $round | \`SELECT 1\` | $tps | $c | $r | $v |"
  baseline=$((baseline + tps))
  read -r tps c r v <<<"$(measure "$DIR/block.sql")"
  say "| $round | \`SELECT snowflake_nextval_block(4096)\` | $tps | $c | $r | $v |"
  attack=$((attack + tps))
done
say
say "Block loop against SELECT 1, the 2 clients' calls over all rounds:" \
  "$(awk -v a="$attack" -v b="$baseline" 'BEGIN { printf "%.2fx", a / b }')"
echo "written to $RESULTS"
# The server's data directory goes; the results stay in build/bench.
server_stop bench
rm -rf "${SERVERS:?}/$SUITE_NAME"
