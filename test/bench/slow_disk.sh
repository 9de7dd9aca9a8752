#!/usr/bin/env bash
# A slow disk: 2 pgbench clients calling SELECT snowflake_nextval() for a
# while, on a fresh cluster each run (fsync on), four ways:
#   1. as it is;
#   2. every reservation write DELAY_MS slower (snowflake_inject_write_delay():
#      the state file's write and fsync are the only I/O on this path);
#   3. and 4. the postmaster (so every server process) under strace, as the
#      issue measured 0.2.0: fsync as it is, then every fsync delayed DELAY_MS
#      (strace's fault injection, as cloud disks, checkpoint storms or a
#      saturated RAID delay them).
# 0.2.0 wrote each reservation with four fsyncs under the generator's lock:
# under strace 48,000 calls/s fell to 0.83. The target since 0.3.0: with the
# delay, at least 0.8x the undelayed rate and a p99.9 under 5 ms. The ratio is
# taken from runs 1 and 2, which no tracer slows; strace costs every traced
# process time of its own, and (6.1) stops a process forked while another's
# traced fsync is under way at every system call from then on, so runs 3 and 4
# are noisier and only cross-check. Prints, and writes to
# build/bench/slow-disk.md: calls/s, p99.9 and the slowest call of each run,
# and what snowflake_reservation() counted. Asserts nothing about speed.
# Usage, as root from the checkout: bash test/bench/slow_disk.sh [--quick]
# --quick runs 2 s each with a 100 ms delay, so the test command keeps it working.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

SECONDS_EACH=10 DELAY_MS=300 CLIENTS=2
if [ "${1:-}" = --quick ]; then
  SECONDS_EACH=2 DELAY_MS=100
fi

ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" strace
build_and_install

SUITE_NAME=bench-slow-disk SERVER_LISTEN=
DIR=$BUILD/bench/slow-disk
RESULTS=$BUILD/bench/slow-disk.md
rm -rf "$DIR"
mkdir -p "$DIR"
chmod 755 "$BUILD" "$BUILD/bench"
chown postgres "$DIR"
echo 'SELECT snowflake_nextval();' >"$DIR/nextval.sql"

# Runs SQL on the benchmark server; -At output.
disk_sql() {
  psql_on disk -At "$@"
}

# One run called $1: a fresh cluster (fsync on), its postmaster started under the command after the
# label (strace ...; none: started by pg_ctl), with the SQL in $SETUP run first; appends a table row
# to the results.
measure() {
  local label=$1 tps latencies p999 max counters
  shift
  rm -f "$DIR"/log.*
  server_init disk 26720 "fsync = on" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1" \
    "snowflake.fault_injection = on"
  # The extension and the state file are made in a first start of their own: under strace, no
  # fsync is then under way while pgbench's backends are forked (see above). pgbench connects
  # before any ID is issued; its first call writes the first reservation.
  server_start disk || die "the server did not start"
  disk_sql -c "CREATE EXTENSION snowflake"
  server_stop disk
  server_start disk "$@" || die "the server did not start ($label)"
  [ -z "${SETUP:-}" ] || disk_sql -c "$SETUP" >/dev/null 2>&1
  on_server disk "$PG_BIN/pgbench" -n -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_EACH" -f "$DIR/nextval.sql" \
    --log --log-prefix="$DIR/log" >"$DIR/pgbench.out" 2>&1 || { cat "$DIR/pgbench.out"; die "pgbench failed ($label)"; }
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$DIR/pgbench.out")
  [[ "$tps" =~ ^[0-9.]+$ ]] || die "pgbench gave no rate for $label"
  # pgbench's per-transaction log: the third field is the latency in µs.
  latencies=$(cat "$DIR"/log.* | awk '{print $3}' | sort -n)
  p999=$(awk '{v[NR] = $1} END {i = int(NR * 0.999); if (i < 1) i = 1; printf "%.2f", v[i] / 1000}' <<<"$latencies")
  max=$(tail -1 <<<"$latencies" | awk '{printf "%.1f", $1 / 1000}')
  counters=$(disk_sql -F ' ' -c "SELECT lead_ms, renewals, caller_writes, caller_waits FROM snowflake_reservation()" \
    2>/dev/null || echo "- - - -")
  server_stop disk
  read -r lead renewals caller_writes caller_waits <<<"$counters"
  printf '| %s | %.0f | %s | %s | %s | %s | %s | %s |\n' "$label" "$tps" "$p999" "$max" "$lead" "$renewals" \
    "$caller_writes" "$caller_waits" | tee -a "$RESULTS"
  echo "$tps" >"$DIR/tps-$(tr -c 'a-z0-9\n' _ <<<"$label")"
}

# The calls/s of the run called $1.
tps_of() { cat "$DIR/tps-$(tr -c 'a-z0-9\n' _ <<<"$1")"; }

{
  echo "# A slow disk"
  echo
  echo "$("$PG_BIN"/postgres --version), $(nproc) cores; $CLIENTS clients of SELECT snowflake_nextval() for" \
    "$SECONDS_EACH s each, a fresh cluster each run; $(date -u +%Y-%m-%d)."
  echo
  echo "| run | calls/s | p99.9 (ms) | slowest (ms) | lead (ms) | renewals | caller writes | caller waits |"
  echo "|---|---|---|---|---|---|---|---|"
} | tee "$RESULTS"
STRACE=(strace -f --seccomp-bpf -e trace=fsync -o /dev/null)
measure "as it is"
SETUP="SELECT snowflake_inject_write_delay($DELAY_MS)" measure "reservation writes +${DELAY_MS} ms"
measure "strace, fsync as it is" "${STRACE[@]}"
measure "strace, every fsync +${DELAY_MS} ms" "${STRACE[@]}" -e inject=fsync:delay_enter=$((DELAY_MS * 1000))
plain=$(awk -v a="$(tps_of "reservation writes +${DELAY_MS} ms")" -v b="$(tps_of "as it is")" 'BEGIN { printf "%.2f", a / b }')
traced=$(awk -v a="$(tps_of "strace, every fsync +${DELAY_MS} ms")" -v b="$(tps_of "strace, fsync as it is")" \
  'BEGIN { printf "%.2f", a / b }')
{
  echo
  echo "Every reservation write ${DELAY_MS} ms slower: ${plain}x the calls/s of the run as it is (target: at least" \
    "0.8x, with a p99.9 under 5 ms). Under strace, every fsync ${DELAY_MS} ms slower: ${traced}x the traced run" \
    "with fsync as it is."
} | tee -a "$RESULTS"
