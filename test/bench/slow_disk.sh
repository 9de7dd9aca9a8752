#!/usr/bin/env bash
# A slow disk: 2 pgbench clients calling SELECT snowflake_nextval(), with the
# postmaster (so every server process) under strace, first with fsync as it
# is, then with every fsync delayed DELAY_MS (strace's fault injection, as
# cloud disks, checkpoint storms or a saturated RAID delay them). Each run gets
# a fresh cluster with fsync on. 0.2.0 wrote each reservation with four fsyncs
# under the generator's lock, and 48,000 calls/s fell to 0.83; the target since
# 0.3.0 is at least 0.8x the undelayed rate with a p99.9 under 5 ms. Prints, and
# writes to build/bench/slow-disk.md: calls/s, p99.9 and the slowest call of
# each run, the ratio, and what snowflake_reservation() counted. Asserts
# nothing about speed.
# Usage, as root from the checkout: bash test/bench/slow_disk.sh [--quick]
# --quick runs 2 s each with a 100 ms delay, so the test command keeps it working.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

SECONDS_EACH=10 DELAY_MS=300 CLIENTS=2
if [ "${1:-}" = --quick ]; then
  SECONDS_EACH=2 DELAY_MS=100
fi

require_root
ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" strace
require_readable_tree
build_and_install

DIR=$BUILD/bench/slow-disk
RESULTS=$BUILD/bench/slow-disk.md
rm -rf "$DIR"
mkdir -p "$DIR"
chmod 755 "$BUILD" "$BUILD/bench"
chown postgres "$DIR"
echo 'SELECT snowflake_nextval();' >"$DIR/nextval.sql"
STRACE_PID=

# Runs SQL on the benchmark server; -At output.
disk_sql() {
  as_postgres psql -X -q -At -v ON_ERROR_STOP=1 -h "$DIR" -d postgres "$@"
}

# Stops the server (fast), then waits for strace, which exits with it.
stop_server() {
  [ -n "$STRACE_PID" ] || return 0
  as_postgres "$PG_BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null || true
  wait "$STRACE_PID" 2>/dev/null || true
  STRACE_PID=
}
trap stop_server EXIT

# One run called $1, the postmaster under strace with the extra strace arguments after it; appends
# a table row to the results and prints it.
measure() {
  local label=$1 tps latencies p999 max counters
  shift
  rm -rf "$DIR/data" "$DIR"/log.*
  as_postgres "$PG_BIN/initdb" -D "$DIR/data" -A trust -U postgres >/dev/null
  printf "shared_preload_libraries = 'snowflake'\nsnowflake.node = 1\nlisten_addresses = ''\nunix_socket_directories = '%s'\n" \
    "$DIR" >>"$DIR/data/postgresql.conf"
  as_postgres strace -f --seccomp-bpf -e trace=fsync "$@" -o /dev/null "$PG_BIN/postgres" -D "$DIR/data" \
    >"$DIR/server-$label.log" 2>&1 &
  STRACE_PID=$!
  wait_for_server
  disk_sql -c "CREATE EXTENSION snowflake" -c "SELECT snowflake_nextval()" >/dev/null
  as_postgres "$PG_BIN/pgbench" -n -h "$DIR" -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_EACH" -f "$DIR/nextval.sql" \
    --log --log-prefix="$DIR/log" postgres >"$DIR/pgbench.out" 2>&1 || { cat "$DIR/pgbench.out"; die "pgbench failed ($label)"; }
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$DIR/pgbench.out")
  [[ "$tps" =~ ^[0-9.]+$ ]] || die "pgbench gave no rate for $label"
  # pgbench's per-transaction log: the third field is the latency in µs.
  latencies=$(cat "$DIR"/log.* | awk '{print $3}' | sort -n)
  p999=$(awk '{v[NR] = $1} END {i = int(NR * 0.999); if (i < 1) i = 1; printf "%.2f", v[i] / 1000}' <<<"$latencies")
  max=$(tail -1 <<<"$latencies" | awk '{printf "%.1f", $1 / 1000}')
  counters=$(disk_sql -F ' ' -c "SELECT lead_ms, renewals, caller_writes, caller_waits FROM snowflake_reservation()" \
    2>/dev/null || echo "- - - -")
  stop_server
  read -r lead renewals caller_writes caller_waits <<<"$counters"
  printf '| %s | %.0f | %s | %s | %s | %s | %s | %s |\n' "$label" "$tps" "$p999" "$max" "$lead" "$renewals" \
    "$caller_writes" "$caller_waits" | tee -a "$RESULTS"
  echo "$tps" >"$DIR/tps-$label"
}

# Waits until the server accepts connections, up to 60 s; stops with its log if it does not.
wait_for_server() {
  local deadline=$((SECONDS + 60))
  until as_postgres "$PG_BIN/pg_isready" -q -h "$DIR"; do
    kill -0 "$STRACE_PID" 2>/dev/null && [ $SECONDS -lt $deadline ] || { tail -20 "$DIR"/server-*.log; die "the server did not start"; }
    sleep 0.2
  done
}

{
  echo "# A slow disk"
  echo
  echo "$("$PG_BIN"/postgres --version), $(nproc) cores; $CLIENTS clients of SELECT snowflake_nextval() for" \
    "$SECONDS_EACH s each, the postmaster under strace; $(date -u +%Y-%m-%d)."
  echo
  echo "| fsync | calls/s | p99.9 (ms) | slowest (ms) | lead (ms) | renewals | caller writes | caller waits |"
  echo "|---|---|---|---|---|---|---|---|"
} | tee "$RESULTS"
measure "as it is"
measure "+${DELAY_MS} ms" -e inject=fsync:delay_enter=$((DELAY_MS * 1000))
ratio=$(awk -v a="$(cat "$DIR/tps-+${DELAY_MS} ms")" -v b="$(cat "$DIR/tps-as it is")" 'BEGIN { printf "%.2f", a / b }')
{
  echo
  echo "With every fsync delayed ${DELAY_MS} ms: ${ratio}x the calls/s of the undelayed run (target: at least 0.8x," \
    "with a p99.9 under 5 ms)."
} | tee -a "$RESULTS"
