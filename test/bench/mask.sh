#!/usr/bin/env bash
# Public-ID benchmark (issue 35): nanoseconds per call of snowflake_mask(),
# snowflake_unmask(), snowflake_mask_text() and snowflake_unmask_text(), against
# snowflake_nextval(), gen_random_uuid() and, on PostgreSQL 18+, uuidv7(), all
# on one server in one session. Each is SELECT count(f(col)) over a table of N
# issued IDs with their masks and text IDs, timed by EXPLAIN (ANALYZE, TIMING
# OFF), best of 5 runs, the functions taking turns; the net time per call is the
# run's time minus that of count(col) alone (the empty loop) over the same
# column, divided by N. The load average is printed before and after, since
# other work on the machine makes every figure larger (the table's build and
# the extension's raise it too: the figure at the start is the machine's own). Prints a markdown table
# (also written to build/bench/mask-results.md) and asserts nothing about speed.
#
# Usage, as root from the checkout: bash test/bench/mask.sh [--quick]
# --quick uses 20,000 rows and one run, so the test command keeps it working.
# It builds and installs snowflake first, and runs its own server (fsync on,
# default settings otherwise; test/lib/server.sh), on its Unix socket only.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

N=1000000
RUNS=5
if [ "${1:-}" = --quick ]; then
  N=20000
  RUNS=1
fi

load_start=$(cut -d' ' -f1-3 /proc/loadavg) # before this script's own build
ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
build_and_install

SUITE_NAME=bench-mask SERVER_LISTEN=
# One backend: no parallel workers share a scan (snowflake_nextval() is parallel unsafe, the masks are not).
server_init main 26750 "fsync = on" "max_parallel_workers_per_gather = 0" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" \
  "snowflake.mask_keys = 'B:000102030405060708090a0b0c0d0e0f, A:2b7e151628aed2a6abf7158809cf4f3c'"
server_start main
OUT=$BUILD/bench
mkdir -p "$OUT"
RESULTS=$OUT/mask-results.md
: >"$RESULTS"

# Stops unless $2 is a number: a figure that failed to parse must not print as a plausible one.
require_number() {
  [[ "$2" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || die "could not measure $1 (got '$2')"
}

# Prints a line and appends it to the results file.
say() {
  echo "$*" | tee -a "$RESULTS"
}

loadavg() {
  cut -d' ' -f1-3 /proc/loadavg
}

psql_on main -q <<SQL
CREATE EXTENSION snowflake;
CREATE TABLE inputs (x bigint, m bigint, t text);
INSERT INTO inputs SELECT id, snowflake_mask(id), snowflake_mask_text(id)
FROM (SELECT snowflake_nextval() AS id FROM generate_series(1, $N)) AS ids;
VACUUM ANALYZE inputs;
SELECT count(x), count(m), count(t) FROM inputs; -- the table in shared buffers before the first run
SQL
HAS_UUIDV7=$([ "$(psql_on main -At -c "SHOW server_version_num")" -ge 180000 ] && echo 1 || echo 0)
load_before=$(loadavg)

# Each function, the empty loop it is net of (count(*), or count of the column it reads), and its label.
NAMES=(floor_star floor_x floor_m floor_t mask unmask mask_text unmask_text nextval uuid)
declare -A EXPR=([floor_star]="*" [floor_x]="x" [floor_m]="m" [floor_t]="t" [mask]="snowflake_mask(x)"
  [unmask]="snowflake_unmask(m)" [mask_text]="snowflake_mask_text(x)" [unmask_text]="snowflake_unmask_text(t)"
  [nextval]="snowflake_nextval()" [uuid]="gen_random_uuid()" [uuidv7]="uuidv7()")
declare -A FLOOR=([mask]=floor_x [unmask]=floor_m [mask_text]=floor_x [unmask_text]=floor_t [nextval]=floor_star
  [uuid]=floor_star [uuidv7]=floor_star)
declare -A LABEL=([mask]="snowflake_mask(id)" [unmask]="snowflake_unmask(masked)" [mask_text]="snowflake_mask_text(id)"
  [unmask_text]="snowflake_unmask_text(text)" [nextval]="snowflake_nextval()" [uuid]="gen_random_uuid()" [uuidv7]="uuidv7()")
[ "$HAS_UUIDV7" = 1 ] && NAMES+=(uuidv7)

# Execution time in ms of SELECT count($1) FROM inputs.
exec_ms() {
  psql_on main -At -c "EXPLAIN (ANALYZE, TIMING OFF) SELECT count($1) FROM inputs" |
    sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
}

declare -A BEST
for _ in $(seq "$RUNS"); do # the functions take turns, so noise treats them alike
  for name in "${NAMES[@]}"; do
    ms=$(exec_ms "${EXPR[$name]}")
    require_number "$name" "$ms"
    if [ -z "${BEST[$name]:-}" ] || awk -v a="$ms" -v b="${BEST[$name]}" 'BEGIN { exit !(a < b) }'; then
      BEST[$name]=$ms
    fi
  done
done
load_after=$(loadavg)

say "## Public IDs: ns per call (test/bench/mask.sh)"
say
say "$("$PG_BIN"/postgres --version), $(nproc) cores; $(date -u +%Y-%m-%d). SELECT count(f(col)) FROM a table of $N issued IDs with their masks and text IDs, best of $RUNS; net = minus the empty loop, count(*) or count(col) alone over the same rows. Load average (1, 5, 15 min) at the start: $load_start; after the build and the table, before the runs: $load_before; after: $load_after. A run this short fits in snowflake_nextval()'s 1 s borrow bound, so it may exceed the 4.096 M/s ceiling here."
say
say "| function | time (ms) | ns per call, net of the empty loop | calls/s (net) |"
say "|---|---|---|---|"
for floor in floor_star floor_x floor_m floor_t; do
  say "| count(${EXPR[$floor]}) alone (the empty loop) | $(printf %.1f "${BEST[$floor]}") | | |"
done
for name in "${NAMES[@]}"; do
  [[ $name == floor_* ]] && continue
  say "$(awk -v l="${LABEL[$name]}" -v ms="${BEST[$name]}" -v f="${BEST[${FLOOR[$name]}]}" -v n="$N" \
    'BEGIN { net = (ms - f) * 1e6 / n; printf "| %s | %.1f | %.0f | %s |", l, ms, net, (net > 0 ? sprintf("%.2f M", 1000 / net) : "") }')"
done
say
[ "$HAS_UUIDV7" = 1 ] || say "uuidv7() is not measured: PostgreSQL $PG_MAJOR lacks it (18 and later have it)."
[ "$HAS_UUIDV7" = 1 ] || say
