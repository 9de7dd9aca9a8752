#!/usr/bin/env bash
# The ceiling: how close one backend comes to the layout's limit, 4,096 IDs per
# millisecond (4.096 M/s on twitter), when it asks for IDs faster than that.
# The server runs with snowflake.clock_policy = wait, so no ID is borrowed
# ahead of the clock and the rate is the sustained one: every millisecond's
# 4,096 IDs, then a wait for the next millisecond. The rows come from
# generate_series in the select list (ProjectSet streams them); in FROM it
# would first write all N rows to a tuplestore (on disk at 20 M), time in which
# no ID is asked for. Prints, and appends to build/bench/ceiling.md, best of RUNS:
#   1. the executor floor: count(g), and a cheap function, count(abs(g));
#   2. count(snowflake_nextval()) over N rows: the elapsed rate, and the generator's own rate,
#      N over the time between the first and the last ID (their decoded times), against 4.096 M/s;
#   3. blocks of 4,096 (snowflake_nextval_block(4096)): blocks per second, at most one per ms.
# Asserts nothing about speed (the machine is shared).
# Usage, as root from the checkout: bash test/bench/ceiling.sh [--quick]
# --quick uses 2,000,000 IDs and one run, so the test command keeps it working.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

N=20000000 RUNS=3 BLOCKS=4000
if [ "${1:-}" = --quick ]; then
  N=2000000 RUNS=1 BLOCKS=500
fi

ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
build_and_install

SUITE_NAME=bench-ceiling SERVER_LISTEN=
server_init main 26730 "fsync = on" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" \
  "snowflake.clock_policy = wait"
server_start main

# Runs SQL on the benchmark server; -At output.
ceiling_sql() {
  psql_on main -At "$@"
}
ceiling_sql -c "CREATE EXTENSION snowflake; SELECT snowflake_nextval();" >/dev/null

# Best execution time in ms, over RUNS, of SELECT count($1) over $2 streamed rows g.
best_ms() {
  local best="" ms
  for _ in $(seq "$RUNS"); do
    ms=$(ceiling_sql -c "EXPLAIN (ANALYZE, TIMING OFF) SELECT count($1) FROM (SELECT generate_series(1, $2) AS g) s" |
      sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p')
    [[ "$ms" =~ ^[0-9.]+$ ]] || die "could not time count($1)"
    if [ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$ms; fi
  done
  echo "$best"
}
# Millions of rows per second.
mrate() { awk -v n="$1" -v ms="$2" 'BEGIN { printf "%.2f", n / ms / 1000 }'; }
# The best generator rate over RUNS, in M IDs/s: N IDs over the ticks from the first ID's to the last's.
best_span_rate() {
  local best="" rate
  for _ in $(seq "$RUNS"); do
    rate=$(ceiling_sql -c "SELECT round(count(*) / (1 + 1000 * extract(epoch FROM snowflake_timestamp(max(id)) -
      snowflake_timestamp(min(id)))) / 1000, 3) FROM (SELECT snowflake_nextval() AS id FROM (SELECT generate_series(1, $N)) s) t")
    [[ "$rate" =~ ^[0-9.]+$ ]] || die "could not measure the generator's rate"
    if [ -z "$best" ] || awk -v a="$rate" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$rate; fi
  done
  echo "$best"
}

mkdir -p "$BUILD/bench"
OUT=$BUILD/bench/ceiling.md
floor=$(best_ms "g" "$N")
cheap=$(best_ms "abs(g)" "$N")
w0=$(ceiling_sql -c "SELECT waits FROM snowflake_stats()")
ids=$(best_ms "snowflake_nextval()" "$N")
w1=$(ceiling_sql -c "SELECT waits FROM snowflake_stats()")
span=$(best_span_rate)
blocks=$(best_ms "snowflake_nextval_block(4096)" "$BLOCKS")
{
  echo "## The ceiling: one backend, snowflake.clock_policy = wait ($("$PG_BIN"/postgres --version | awk '{print $NF}'), $(nproc) cores, $(date -u +%Y-%m-%d))"
  echo
  echo "| what | rows | best of $RUNS (ms) | M rows/s | of 4.096 M/s |"
  echo "|---|---|---|---|---|"
  echo "| count(g), the executor floor | $N | $(printf %.0f "$floor") | $(mrate "$N" "$floor") | |"
  echo "| count(abs(g)), a cheap function | $N | $(printf %.0f "$cheap") | $(mrate "$N" "$cheap") | |"
  echo "| count(snowflake_nextval()), elapsed | $N | $(printf %.0f "$ids") | $(mrate "$N" "$ids") | $(awk -v n="$N" -v ms="$ids" 'BEGIN { printf "%.1f%%", 100 * n / ms / 4096 }') |"
  echo "| snowflake_nextval(), first to last ID | $N | | $span | $(awk -v r="$span" 'BEGIN { printf "%.1f%%", 100 * r / 4.096 }') |"
  echo "| count(snowflake_nextval_block(4096)) | $BLOCKS blocks | $(printf %.0f "$blocks") | $(awk -v n="$BLOCKS" -v ms="$blocks" 'BEGIN { printf "%.0f blocks/s", n / ms * 1000 }') | |"
  echo
  echo "Waits for the clock during the $RUNS elapsed runs: $((w1 - w0)) ($(awk -v w="$((w1 - w0))" -v n="$((N * RUNS))" 'BEGIN { printf "%.0f", n / (w > 0 ? w : 1) }') IDs per wait; 4,096 is one per millisecond)."
  echo
} | tee -a "$OUT"
