#!/usr/bin/env bash
# Multi-master: two servers (nodes 1 and 2) replicate one table both ways
# while writers run on both sides, with pglogical (PostgreSQL 15) or native
# logical replication with origin = none (PostgreSQL 16 and later); one script,
# the replication set-up is the only difference (test/servers/<mode>_*.sql).
#   1. Distinct nodes: both sides converge to the same rows, no apply conflict
#      or error in either log, every row on its writer's node, none lost.
#   2. Server 2 moved to node 1: snowflake_node_origins() flags the shared node
#      on both sides from the rows alone, before any two IDs collide.
#   3. Both write on node 1 while replication is paused (as under lag), so
#      IDs surely collide. pglogical (default conflict_resolution =
#      apply_remote): every conflict is resolved at LOG level, no ERROR, each
#      side keeping the other side's row for a colliding ID: both lose rows.
#   4. The same with pglogical's conflict_resolution = error, or native: the
#      apply worker stops at the first colliding ID with an ERROR; no row is
#      replaced, and replication stays stuck until someone repairs it.
# Usage, as root with the extension installed: bash test/servers/multimaster.sh [pglogical|native]
# (default: pglogical on PostgreSQL 15, native later). Ports 56400-56401.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODE=${1:-$([ "$PG_MAJOR" -ge 16 ] && echo native || echo pglogical)}
case $MODE in
  pglogical) ensure_packages "postgresql-$PG_MAJOR-pglogical" ;;
  native) [ "$PG_MAJOR" -ge 16 ] || die "origin = none needs PostgreSQL 16 or later" ;;
  *) die "usage: test/servers/multimaster.sh [pglogical|native]" ;;
esac
SUITE_NAME=multimaster-$MODE
# A failed check, or a statement that stops the suite early, shows what each server logged, so
# that the CI log alone explains it.
PASSED=0
CLEANUPS+=('[ "$PASSED" = 1 ] || show_logs CONFLICT')
HERE=$ROOT/test/servers
WRITE_SECONDS=${WRITE_SECONDS:-12} # phase 1; the collision phases write for a third of it
CLIENTS=2 # writers per server, each one row per transaction, about 1 ms apart
conf=("shared_preload_libraries = 'snowflake'")
if [ "$MODE" = pglogical ]; then
  conf=("shared_preload_libraries = 'snowflake,pglogical'")
  # Builds of PostgreSQL with output_plugin_libraries let replication slots use only the output plugins it lists.
  "$PGB/postgres" --describe-config | grep '^output_plugin_libraries' >/dev/null &&
    conf+=("output_plugin_libraries = 'pgoutput, test_decoding, pglogical_output'")
fi

for n in 1 2; do
  server_init "n$n" $((56399 + n)) "${conf[@]}" "snowflake.node = $n" \
    "wal_level = logical" "track_commit_timestamp = on" "max_worker_processes = 16" \
    "max_replication_slots = 8" "max_wal_senders = 8"
  server_start "n$n"
  sql_file "n$n" "$HERE/items.sql" >/dev/null
  sql_file "n$n" "$HERE/${MODE}_node.sql" me="n$n" my_dsn="$(dsn "n$n")" >/dev/null
done
sql_file n1 "$HERE/${MODE}_subscribe.sql" peer=n2 peer_dsn="$(dsn n2)" >/dev/null
sql_file n2 "$HERE/${MODE}_subscribe.sql" peer=n1 peer_dsn="$(dsn n1)" >/dev/null
echo "$MODE both ways between n1 (node 1, port 56400) and n2 (node 2, port 56401), PostgreSQL $PG_MAJOR"

# Runs $CLIENTS writers (write_items in items.sql) on server $1 for $2 seconds, tagging rows with
# phase $3; prints the rows committed and the inserts refused.
write() {
  local i pids=() out=$SERVERS/$SUITE_NAME/$1.written
  for ((i = 0; i < CLIENTS; i++)); do
    sql "$1" "CALL write_items(${1#n}, $3, $2)" >"$out.$i" &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$out".* | awk -F'|' '{c += $1; r += $2} END {print c, r}'
}

# Writes on both servers at once for $1 seconds in phase $2; sets W1, W2 (rows committed on
# each) and R1, R2 (inserts refused on each).
write_both() {
  write n1 "$1" "$2" >"$SERVERS/$SUITE_NAME/w1" &
  local p1=$!
  write n2 "$1" "$2" >"$SERVERS/$SUITE_NAME/w2"
  wait $p1
  read -r W1 R1 <"$SERVERS/$SUITE_NAME/w1"
  read -r W2 R2 <"$SERVERS/$SUITE_NAME/w2"
}

# Rows of phase $2 on server $1.
rows() { sql "$1" "SELECT count(*) FROM items WHERE phase = $2"; }

# The rows of phase $2 on server $1 as sorted "id server" lines.
dump() { sql "$1" "SELECT id, server FROM items WHERE phase = $2 ORDER BY id::text" | tr '|' ' '; }

# Lines of server $1's log matching the extended regular expression $2.
log_lines() { grep -cE "$2" "${SERVER_DIR[$1]}/log" || true; }

# Rows on server $1 whose ID's node is not the node of the server that wrote it (phase 1).
wrong_node() { sql "$1" "SELECT count(*) FROM items WHERE phase = 1 AND (snowflake_parse(id)).node <> server"; }

# Node origins snowflake_node_origins() flags as shared on server $1.
shared() { sql "$1" "SELECT count(*) FROM snowflake_node_origins('items') WHERE shared_node"; }

# Both servers hold $2 rows of phase $1.
converged() {
  [ "$(rows n1 "$1")" -eq "$2" ] && [ "$(rows n2 "$1")" -eq "$2" ]
}

echo "--- phase 1: distinct nodes, $CLIENTS writers on each server for $WRITE_SECONDS s"
write_both "$WRITE_SECONDS" 1
total=$((W1 + W2))
check "no insert refused" [ $((R1 + R2)) -eq 0 ]
converged_in=$SECONDS
check "both servers reach the $total rows written ($W1 on n1, $W2 on n2)" wait_for 120 converged 1 $total
echo "caught up $((SECONDS - converged_in)) s after the writers stopped"
check "both servers hold the same rows" [ "$(dump n1 1 | md5sum)" = "$(dump n2 1 | md5sum)" ]
for n in n1 n2; do
  check "$n: every row decodes to its writer's node" [ "$(wrong_node $n)" -eq 0 ]
  check "$n: no duplicate ID" [ "$(sql $n "SELECT count(*) - count(DISTINCT id) FROM items")" -eq 0 ]
  check "$n: no conflict or error in the log" [ "$(log_lines $n 'CONFLICT|conflict|ERROR')" -eq 0 ]
  check "$n: the detector flags no shared node" [ "$(shared $n)" -eq 0 ]
done
echo "rows: $total; clients: $CLIENTS per server; conflicts: 0 checked; duplicates: 0 checked"

echo "--- phase 2: n2 moved to node 1 (the mistake), n2 writes alone"
sql n2 "ALTER SYSTEM SET snowflake.node = 1" >/dev/null
server_stop n2 && server_start n2
sql n2 "INSERT INTO items (server, phase) SELECT 2, 2 FROM generate_series(1, 500)" >/dev/null
check "n2's 500 rows on node 1 reach n1" wait_for 60 converged 2 500
for n in n1 n2; do
  check "$n: the detector flags node 1 as shared" [ "$(shared $n)" -gt 0 ]
done
sql n1 "SELECT node, origin, ids, shared_node FROM snowflake_node_origins('items')" | sed 's/^/n1 detector: /'

# Turns the subscription on server $1 to its peer on or off ($2: enable or disable); a pglogical
# apply worker started again reads the settings anew (conflict_resolution).
subscription() {
  local peer=n$((3 - ${1#n}))
  if [ "$MODE" = pglogical ]; then
    sql "$1" "SELECT pglogical.alter_subscription_$2('from_$peer', true)" >/dev/null
  else
    sql "$1" "ALTER SUBSCRIPTION from_$peer ${2^^}" >/dev/null
  fi
}

# Both servers hold both marker rows of phase $1.
markers_arrived() {
  [ "$(rows n1 "-$1")" -eq 2 ] && [ "$(rows n2 "-$1")" -eq 2 ]
}

# Rows server $1 wrote itself in phase $2 that it no longer holds (replaced by the other server's row).
replaced() {
  sql "$1" "SELECT $(eval echo "\$W${1#n}") - count(*) FROM items WHERE phase = $2 AND server = ${1#n}"
}

# Both servers write on node 1 for $2 seconds in phase $1 while replication is paused (as under
# replication lag), so that their IDs surely collide; then each adds a marker row (phase -$1), and
# replication resumes. Waits until each server has both markers or an ERROR was logged.
collide() {
  local n before1 before2 errors1 errors2
  before1=$(log_lines n1 "$CONFLICT") before2=$(log_lines n2 "$CONFLICT")
  errors1=$(log_lines n1 ERROR:) errors2=$(log_lines n2 ERROR:)
  for n in n1 n2; do subscription $n disable; done
  write_both "$2" "$1"
  sql n1 "INSERT INTO items (server, phase) VALUES (1, -$1)" >/dev/null
  sql n2 "INSERT INTO items (server, phase) VALUES (2, -$1)" >/dev/null
  for n in n1 n2; do subscription $n enable; done
  wait_for 60 eval 'markers_arrived '"$1"' || [ "$(log_lines n1 ERROR:)" -gt '"$errors1"' -o "$(log_lines n2 ERROR:)" -gt '"$errors2"' ]' || true
  C1=$(($(log_lines n1 "$CONFLICT") - before1)) C2=$(($(log_lines n2 "$CONFLICT") - before2))
  E1=$(($(log_lines n1 ERROR:) - errors1)) E2=$(($(log_lines n2 ERROR:) - errors2))
  echo "phase $1: rows committed $W1 on n1, $W2 on n2 (refused at the client: $R1, $R2); n1 holds" \
    "$(rows n1 "$1") rows, n2 $(rows n2 "$1"); conflicts logged: $C1 on n1, $C2 on n2;" \
    "own rows replaced by the other server's: $(replaced n1 "$1") on n1, $(replaced n2 "$1") on n2"
}

if [ "$MODE" = pglogical ]; then
  echo "--- phase 3: both write on node 1, conflict_resolution = apply_remote (pglogical's default)"
  CONFLICT='CONFLICT: remote INSERT'
  collide 3 $((WRITE_SECONDS / 4))
  check "apply_remote: replication goes on (both markers arrive)" markers_arrived 3
  check "apply_remote: conflicts logged at LOG level, no ERROR" \
    [ $((C1 + C2)) -gt 0 -a $((E1 + E2)) -eq 0 ]
  for n in n1 n2; do
    check "apply_remote: $n silently lost rows it wrote (the other server's row took the ID)" [ "$(replaced $n 3)" -gt 0 ]
  done
  check "apply_remote: the sides end with different rows under the same IDs" \
    [ "$(dump n1 3 | md5sum)" != "$(dump n2 3 | md5sum)" ]
  echo "--- conflict_resolution = error (reload; the apply workers read it when they start again)"
  for n in n1 n2; do
    sql $n "ALTER SYSTEM SET pglogical.conflict_resolution = 'error'" >/dev/null
    sql $n "SELECT pg_reload_conf()" >/dev/null
  done
  CONFLICT='ERROR:'
else
  CONFLICT='ERROR:.*(duplicate key|conflict)'
fi
echo "--- phase 4: both write on node 1; the apply worker stops at the first colliding ID"
collide 4 $((WRITE_SECONDS / 4))
check "a colliding ID stops an apply worker with an ERROR" [ $((C1 + C2)) -gt 0 ]
for n in n1 n2; do
  check "$n: no row it wrote was replaced" [ "$(replaced $n 4)" -eq 0 ]
done
check "replication is stuck, not silently resolved (a marker never arrives)" not markers_arrived 4
grep -hE "$CONFLICT" "${SERVER_DIR[n1]}/log" "${SERVER_DIR[n2]}/log" | tail -2 | sed 's/^/log: /'
[ "$failures" -eq 0 ] && PASSED=1
finish
