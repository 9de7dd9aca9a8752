#!/usr/bin/env bash
# Time-range query benchmark: a table of 5,000,000 rows keyed by snowflake IDs
# spread over 30 days (backfilled), with a created_at column that has its own
# index, queried for one hour in three ways, all in one session:
#   1. the index-using filter, id <@ tstzrange(...) (rewritten to an ID range on the primary key);
#   2. snowflake_timestamp(id) BETWEEN ..., with no expression index (a sequential scan);
#   3. the created_at index, the baseline users know.
# Prints a markdown table of the best of 5 runs, the forms taking turns (time
# and buffers from EXPLAIN (ANALYZE, BUFFERS)), and the ratios. Asserts
# nothing about speed.
#
# Usage, as root from the checkout: bash test/bench/time_range.sh [--quick]
# --quick uses 200,000 rows and one run, so the test command keeps it working.
# It builds and installs snowflake first, and runs its own server (fsync on,
# default settings otherwise; test/lib/server.sh), on its Unix socket only.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

ROWS=5000000
RUNS=5
if [ "${1:-}" = --quick ]; then
  ROWS=200000
  RUNS=1
fi

ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
build_and_install

SUITE_NAME=bench-time-range SERVER_LISTEN=
server_init main 26710 "fsync = on" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" "snowflake.backfill_node = 1023"
server_start main

started=$SECONDS
psql_on main <<SQL
CREATE EXTENSION snowflake;
CREATE TABLE readings (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, payload int NOT NULL);
INSERT INTO readings
SELECT snowflake_backfill_id(ts), ts, g
FROM generate_series(0, $ROWS - 1) AS g,
     LATERAL (SELECT '2024-03-01'::timestamptz + g * (interval '30 days' / $ROWS)) AS t(ts);
CREATE INDEX readings_created_at ON readings (created_at);
VACUUM ANALYZE readings;
SQL
echo "loaded $ROWS rows in $((SECONDS - started)) s"

HOUR="'2024-03-15 12:00+00', '2024-03-15 13:00+00'"
declare -A QUERY=(
  [1]="SELECT count(*), sum(payload) FROM readings WHERE id <@ tstzrange($HOUR)"
  [2]="SELECT count(*), sum(payload) FROM readings WHERE snowflake_timestamp(id) >= '2024-03-15 12:00+00' AND snowflake_timestamp(id) < '2024-03-15 13:00+00'"
  [3]="SELECT count(*), sum(payload) FROM readings WHERE created_at >= '2024-03-15 12:00+00' AND created_at < '2024-03-15 13:00+00'"
)
declare -A NAME=([1]="id <@ tstzrange (primary key)" [2]="snowflake_timestamp(id) BETWEEN (no index)" [3]="created_at index")

# Runs query $1 once: "ms|node|buffers" from EXPLAIN (ANALYZE, BUFFERS).
run_once() {
  local plan
  plan=$(psql_on main -At -c "EXPLAIN (ANALYZE, BUFFERS) ${QUERY[$1]}")
  printf '%s|%s|%s\n' "$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$plan")" \
    "$(grep -oE '(Index Only Scan|Index Scan|Bitmap Index Scan|Seq Scan|Parallel Seq Scan) (using [a-z_]+ )?on [a-z_]+' <<<"$plan" | head -1)" \
    "$(grep -m1 'Buffers:' <<<"$plan" | sed 's/^ *Buffers: //')"
}

rows=$(psql_on main -At -c "${QUERY[1]}" | cut -d'|' -f1)
[ "$rows" = "$(psql_on main -At -c "${QUERY[3]}" | cut -d'|' -f1)" ] || die "the three forms disagree on the row count"
echo
echo "One hour of $ROWS rows over 30 days ($rows rows), best of $RUNS, PostgreSQL $($PG_BIN/postgres --version | awk '{print $3}'):"
echo
echo "| form | plan | time (ms) | buffers |"
echo "|---|---|---|---|"
# The forms take turns, run after run, so that caches and CPU frequency treat them alike; each keeps its best.
declare -A MS NODE BUFFERS
for _ in $(seq "$RUNS"); do
  for q in 1 2 3; do
    IFS='|' read -r ms node buffers <<<"$(run_once "$q")"
    if [ -z "${MS[$q]:-}" ] || awk -v a="$ms" -v b="${MS[$q]}" 'BEGIN { exit !(a < b) }'; then
      MS[$q]=$ms NODE[$q]=$node BUFFERS[$q]=$buffers
    fi
  done
done
for q in 1 2 3; do
  echo "| ${NAME[$q]} | ${NODE[$q]} | ${MS[$q]} | ${BUFFERS[$q]} |"
done
echo
awk -v a="${MS[1]}" -v b="${MS[2]}" -v c="${MS[3]}" 'BEGIN {
  printf "index-using filter: %.0fx faster than decoding every row (target >= 50x); %.2fx the created_at index (target <= 1.2x)\n", b / a, a / c
}'
