#!/usr/bin/env bash
# The benchmark suite: snowflake_nextval() against PostgreSQL's own sequences
# and UUIDs, all on one server in one run (fsync on, default settings). Prints
# markdown tables, writes them to build/bench/results.md with a PNG chart
# (gnuplot), and asserts nothing about speed.
#   1. One backend: SELECT count(f) FROM generate_series(1, N), best of 5, for
#      snowflake, a plain sequence, a CACHE 100 sequence, gen_random_uuid(),
#      on PostgreSQL 18+ the built-in uuidv7(), and the bare count(g) floor;
#      then a run longer than the borrow bound.
#   2. Instructions per call: callgrind on a single-user backend
#      (postgres --single), net of the floor; snowflake_nextval() also on the
#      sonyflake and js53 layouts.
#   3. Inserts: pgbench INSERT ... DEFAULT VALUES with a text payload, 1 and 2
#      clients (asynchronous commit, so the key type and not the commit fsync
#      decides), into tables keyed by bigserial, snowflake, uuid and (18+)
#      uuidv7; then each
#      table filled to a fixed row count: insert rate, table and primary-key
#      sizes, WAL bytes per row.
#   4. Contention: pgbench with 8 clients on SELECT snowflake_nextval(),
#      sampling pg_stat_activity's wait events.
# Usage, as root from the checkout: bash test/bench/bench.sh [--quick]
# --quick runs every part small and fast, so the test command keeps it working.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

if [ "${1:-}" = --quick ]; then
  N=200000 RUNS=1 LONG_N=0 CALLS=20000 SECONDS_EACH=2 FILL=50000 CONTENTION=2
else
  N=4000000 RUNS=5 LONG_N=20000000 CALLS=200000 SECONDS_EACH=60 FILL=10000000 CONTENTION=20
fi

ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" valgrind gnuplot-nox
build_and_install

# The servers (test/lib/server.sh) listen on their Unix sockets only, with fsync on, as a real server would.
SUITE_NAME=bench SERVER_LISTEN=
OUT=$BUILD/bench
rm -rf "$OUT/single"
mkdir -p "$OUT/single"
chmod 755 "$BUILD" "$OUT"
chown postgres "$OUT/single"
RESULTS=$OUT/results.md
: >"$RESULTS"

# Stops unless $2 is a number: a figure that failed to parse must not print as a plausible one.
require_number() {
  [[ "$2" =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || die "could not measure $1 (got '$2')"
}

# Prints a line and appends it to the results file.
say() {
  echo "$*" | tee -a "$RESULTS"
}

# A new cluster called $1 (socket port $2) with snowflake preloaded (node 1), on layout $3 (twitter by default).
make_cluster() {
  server_init "$1" "$2" "fsync = on" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" \
    "snowflake.layout = '${3:-twitter}'"
}

make_cluster main 26700
server_start main

# Runs SQL on the benchmark server; -At output.
bench_sql() {
  psql_on main -At "$@"
}

SETUP="CREATE EXTENSION snowflake; CREATE SEQUENCE s_plain; CREATE SEQUENCE s_cache CACHE 100;"
bench_sql -c "$SETUP"
# PostgreSQL 18 has a time-ordered UUID of its own, the closest rival to a snowflake key.
HAS_UUIDV7=$([ "$(bench_sql -c "SHOW server_version_num")" -ge 180000 ] && echo 1 || echo 0)

say "# snowflake benchmarks"
say
say "$("$PG_BIN"/postgres --version), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); fsync on; $(date -u +%Y-%m-%d)."
say

# --- 1. One backend.
NAMES=(floor snowflake nextval nextval_cache100 uuid)
declare -A EXPR=([floor]="g" [snowflake]="snowflake_nextval()" [nextval]="nextval('s_plain')"
  [nextval_cache100]="nextval('s_cache')" [uuid]="gen_random_uuid()" [uuidv7]="uuidv7()")
declare -A LABEL=([floor]="count(g) alone (floor)" [snowflake]="snowflake_nextval()" [nextval]="nextval(), plain sequence"
  [nextval_cache100]="nextval(), CACHE 100" [uuid]="gen_random_uuid()" [uuidv7]="uuidv7()")
[ "$HAS_UUIDV7" = 1 ] && NAMES+=(uuidv7)

# Execution time in ms of SELECT count($1) over $2 rows.
exec_ms() {
  bench_sql -c "EXPLAIN (ANALYZE, TIMING OFF) SELECT count($1) FROM generate_series(1, $2) AS g" |
    sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
}

declare -A BEST
for _ in $(seq "$RUNS"); do # the comparators take turns, so noise treats them alike
  for name in "${NAMES[@]}"; do
    ms=$(exec_ms "${EXPR[$name]}" "$N")
    require_number "$name" "$ms"
    if [ -z "${BEST[$name]:-}" ] || awk -v a="$ms" -v b="${BEST[$name]}" 'BEGIN { exit !(a < b) }'; then
      BEST[$name]=$ms
    fi
  done
done
say "## One backend: SELECT count(f) FROM generate_series(1, $N), best of $RUNS"
say
say "A run this short fits in the 1 s borrow bound, so snowflake may exceed the 4.096 M/s ceiling here."
say
say "| function | time (ms) | IDs/s | vs nextval() |"
say "|---|---|---|---|"
: >"$OUT/single.dat"
for name in "${NAMES[@]}"; do
  line=$(awk -v ms="${BEST[$name]}" -v n="$N" -v base="${BEST[nextval]}" -v floor="$([ "$name" = floor ] && echo 1 || echo 0)" \
    'BEGIN { if (floor) printf "| %.0f | | |", ms; else printf "| %.0f | %.2f M | %.2fx |", ms, n / ms / 1000, base / ms }')
  say "| ${LABEL[$name]} $line"
  [ "$name" = floor ] || awk -v l="${LABEL[$name]}" -v ms="${BEST[$name]}" -v n="$N" 'BEGIN { printf "\"%s\" %.3f\n", l, n / ms / 1000 }' >>"$OUT/single.dat"
done
say
if [ "$HAS_UUIDV7" = 1 ]; then
  say "snowflake_nextval() against uuidv7(): $(awk -v a="${BEST[uuidv7]}" -v b="${BEST[snowflake]}" 'BEGIN { printf "%.2fx", a / b }') as many IDs per second (net of the floor: $(awk -v a="${BEST[uuidv7]}" -v b="${BEST[snowflake]}" -v f="${BEST[floor]}" 'BEGIN { printf "%.2fx", (a - f) / (b - f) }'))."
  say
fi
if [ "$LONG_N" -gt 0 ]; then
  bench_sql -c "SELECT snowflake_nextval()" >/dev/null
  before=$(bench_sql -c "SELECT waits || ' ' || wait_time_ms FROM snowflake_stats()")
  ms=$(exec_ms "snowflake_nextval()" "$LONG_N")
  require_number "the long run" "$ms"
  after=$(bench_sql -c "SELECT waits || ' ' || wait_time_ms || ' ' || max_clock_drift_ms FROM snowflake_stats()")
  floor_ms=$(exec_ms "g" "$LONG_N")
  read -r w0 t0 <<<"$before"
  read -r w1 t1 drift <<<"$after"
  say "Longer than the 1 s borrow bound: $LONG_N IDs in $(printf %.0f "$ms") ms = $(awk -v n="$LONG_N" -v ms="$ms" 'BEGIN { printf "%.2f", n / ms / 1000 }') M IDs/s ($(awk -v n="$LONG_N" -v ms="$ms" 'BEGIN { printf "%.0f", 100 * n / ms / 4096 }')% of the 4.096 M/s ceiling), $((w1 - w0)) waits for the clock ($((t1 - t0)) ms in all), largest lead over the clock so far ${drift} ms. The floor alone over as many rows: $(printf %.0f "$floor_ms") ms."
  say
fi

# --- 2. Instructions per call, with callgrind on a single-user backend.
make_cluster single 26701
SINGLE=${SERVER_DIR[single]}/data
as_postgres "$PG_BIN/postgres" --single -D "$SINGLE" postgres <<<"$SETUP" >/dev/null 2>&1
# Instructions of one single-user session that runs SELECT count($1) over $CALLS rows (on the cluster
# in $3, $SINGLE by default); valgrind's own messages go to the output file's .log.
instructions() {
  local out=$OUT/single/callgrind.$2
  as_postgres valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$PG_BIN/postgres" --single -D "${3:-$SINGLE}" postgres <<<"SELECT count($1) FROM generate_series(1, $CALLS) AS g;" \
    >/dev/null 2>"$out.log"
  sed -n 's/^summary: \([0-9]*\)$/\1/p' "$out"
}
# callgrind's output goes to /dev/null, so check what it left.
floor_ir=$(instructions g floor)
require_number "the floor's instructions" "$floor_ir"
say "## Instructions per call (callgrind, postgres --single, $CALLS calls, net of the count(g) floor)"
say
: >"$OUT/instructions.dat"
# PostgreSQL 19 probes its timing clock source with RDTSCP while it reads its settings, which
# valgrind 3.27 cannot run: the backend dies before its first query, on every call alike.
if grep -q 'Unrecognised instruction' "$OUT/single/callgrind.floor.log"; then
  say "Not measured: valgrind cannot run this postgres ($(grep -m1 -o 'unhandled instruction bytes: .*' "$OUT/single/callgrind.floor.log"); PostgreSQL 19 runs RDTSCP as it reads its settings)."
else
  say "| function | instructions per call |"
  say "|---|---|"
  for name in "${NAMES[@]:1}"; do
    ir=$(instructions "${EXPR[$name]}" "$name")
    require_number "$name's instructions" "$ir"
    say "| ${LABEL[$name]} | $(((ir - floor_ir) / CALLS)) |"
    echo "\"${LABEL[$name]}\" $(((ir - floor_ir) / CALLS))" >>"$OUT/instructions.dat"
  done
  # The other presets: a 10 ms tick (sonyflake) pays a division per call; js53 fills its 128 IDs a
  # millisecond under callgrind's slowdown now and then, and takes the general step for the next one.
  for layout in sonyflake js53; do
    make_cluster "$layout" 26702 "$layout"
    as_postgres "$PG_BIN/postgres" --single -D "${SERVER_DIR[$layout]}/data" postgres <<<"CREATE EXTENSION snowflake;" >/dev/null 2>&1
    ir=$(instructions "snowflake_nextval()" "$layout" "${SERVER_DIR[$layout]}/data")
    require_number "$layout's instructions" "$ir"
    say "| snowflake_nextval(), layout $layout | $(((ir - floor_ir) / CALLS)) |"
  done
fi
say

# --- 3. Inserts.
bench_sql <<'SQL'
CREATE TABLE t_bigserial (id bigserial PRIMARY KEY, payload text) WITH (autovacuum_enabled = off);
CREATE TABLE t_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), payload text) WITH (autovacuum_enabled = off);
CREATE TABLE t_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), payload text) WITH (autovacuum_enabled = off);
SQL
TABLES=(t_bigserial t_snowflake t_uuid)
if [ "$HAS_UUIDV7" = 1 ]; then
  bench_sql -c "CREATE TABLE t_uuidv7 (id uuid PRIMARY KEY DEFAULT uuidv7(), payload text) WITH (autovacuum_enabled = off)"
  TABLES+=(t_uuidv7)
fi
# With a WAL flush per single-row commit, every key type waits on the same fsync and the key's own
# cost cannot show; asynchronous commit (fsync still on) measures what the key type changes.
say "## Inserts: pgbench, INSERT ... (payload) VALUES (...), ${SECONDS_EACH} s each, synchronous_commit = off"
say
say "| key | 1 client (tps) | 2 clients (tps) |"
say "|---|---|---|"
declare -A TPS
for table in "${TABLES[@]}"; do
  echo "INSERT INTO $table (payload) VALUES ('a payload of some forty characters long');" >"$OUT/insert_$table.sql"
  chmod 644 "$OUT/insert_$table.sql"
done
for clients in 1 2; do
  for table in "${TABLES[@]}"; do # the key types take turns, each after a checkpoint of its own
    bench_sql -c "CHECKPOINT"
    TPS[$table.$clients]=$(on_server main env PGOPTIONS="-c synchronous_commit=off" "$PG_BIN/pgbench" -n \
      -c "$clients" -j "$clients" -T "$SECONDS_EACH" -f "$OUT/insert_$table.sql" postgres 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
    require_number "$table's tps" "${TPS[$table.$clients]}"
  done
done
: >"$OUT/inserts.dat"
for table in "${TABLES[@]}"; do
  say "| ${table#t_} | $(printf %.0f "${TPS[$table.1]}") | $(printf %.0f "${TPS[$table.2]}") |"
  echo "\"${table#t_}\" ${TPS[$table.1]} ${TPS[$table.2]}" >>"$OUT/inserts.dat"
done
say
for rival in bigserial $([ "$HAS_UUIDV7" = 1 ] && echo uuidv7); do
  say "snowflake against $rival: $(awk -v a="${TPS[t_snowflake.1]}" -v b="${TPS[t_$rival.1]}" 'BEGIN { printf "%.2fx", a / b }') the inserts per second with 1 client, $(awk -v a="${TPS[t_snowflake.2]}" -v b="${TPS[t_$rival.2]}" 'BEGIN { printf "%.2fx", a / b }') with 2."
done
say
say "## Filling each table to $FILL rows"
say
say "| key | rows/s | table | primary key | WAL bytes per row |"
say "|---|---|---|---|---|"
for table in "${TABLES[@]}"; do
  bench_sql -c "TRUNCATE $table; CHECKPOINT"
  lsn=$(bench_sql -c "SELECT pg_current_wal_lsn()")
  start=$(date +%s.%N)
  bench_sql -c "INSERT INTO $table (payload) SELECT 'a payload of some forty characters long' FROM generate_series(1, $FILL)"
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  say "| ${table#t_} | $(awk -v n="$FILL" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') | $(bench_sql -c "SELECT pg_size_pretty(pg_relation_size('$table'))") | $(bench_sql -c "SELECT pg_size_pretty(pg_relation_size('${table}_pkey'))") | $(bench_sql -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn') / $FILL, 1)") |"
done
say

# --- 4. Contention: 8 clients on snowflake_nextval(), wait events sampled every 10 ms.
bench_sql <<'SQL'
CREATE TABLE samples (wait text);
CREATE PROCEDURE sample_waits(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    -- Only the wait columns are read live; state and query would come from a cached snapshot.
    INSERT INTO samples
    SELECT coalesce(wait_event_type || ':' || wait_event, 'running (no wait event)') FROM pg_stat_activity
    WHERE application_name = 'pgbench';
    COMMIT; -- a new snapshot of pg_stat_activity each time
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SQL
echo "SELECT snowflake_nextval();" >"$OUT/nextval.sql"
chmod 644 "$OUT/nextval.sql"
on_server main "$PG_BIN/pgbench" -n -c 8 -j 2 -T "$CONTENTION" -f "$OUT/nextval.sql" >"$OUT/contention.txt" 2>/dev/null &
pgbench_pid=$!
bench_sql -c "CALL sample_waits($((CONTENTION * 80)))"
wait "$pgbench_pid"
tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$OUT/contention.txt")
require_number "the contention tps" "$tps"
say "## Contention: 8 clients on SELECT snowflake_nextval(), ${CONTENTION} s, $(printf %.0f "$tps") tps"
say
say "Client:ClientRead is a backend waiting for pgbench's next query."
say
say "| wait event of the 8 backends | samples | share |"
say "|---|---|---|"
bench_sql -F ' | ' -c "SELECT '| ' || wait, count(*), round(100.0 * count(*) / sum(count(*)) OVER (), 1) || '% |'
                       FROM samples GROUP BY wait ORDER BY count(*) DESC" | tee -a "$RESULTS"
say

# --- The chart; its middle panel only where callgrind measured.
PANELS=2 INSTRUCTIONS_PANEL=
if [ -s "$OUT/instructions.dat" ]; then
  PANELS=3
  INSTRUCTIONS_PANEL="set title \"Instructions per call, net of the floor (lower is better; log scale)\"
set logscale y
plot \"$OUT/instructions.dat\" using 2:xtic(1) title \"\" lc rgb \"#3572b0\"
unset logscale y"
fi
cat >"$OUT/chart.gp" <<GP
set terminal png size 1500,440 font ",10" noenhanced
set output "$OUT/chart.png"
set multiplot layout 1,$PANELS
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set xtics rotate by -20
set title "One backend: million IDs per second (higher is better)"
set yrange [0:*]
plot "$OUT/single.dat" using 2:xtic(1) title "" lc rgb "#3572b0"
$INSTRUCTIONS_PANEL
set title "Inserts: transactions per second"
plot "$OUT/inserts.dat" using 2:xtic(1) title "1 client" lc rgb "#3572b0", '' using 3 title "2 clients" lc rgb "#f0a30a"
unset multiplot
GP
gnuplot "$OUT/chart.gp"
say "Chart: [chart.png](chart.png)"
