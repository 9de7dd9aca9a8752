#!/usr/bin/env bash
# Multi-master: two servers (nodes 1 and 2) replicate one table both ways while writers run on both
# sides, with pglogical (PostgreSQL 15) or native logical replication with origin = none
# (PostgreSQL 16 and later); one script, the replication set-up is the only difference
# (test/servers/<mode>_*.sql). The node check's claims (snowflake_node_check.claims) travel with the
# table: under pglogical after their one step (replication_set_add_table); natively with no step
# from n1 (FOR ALL TABLES) and after the one step from n2 (a table list: native_claims.sql). The
# subscriptions are made once both servers have written their claims, copying nothing.
#   1. Distinct nodes for DISTINCT_SECONDS (120 s; 30 s in the version matrix): both sides
#      converge to the same
#      rows, no apply conflict or error in either log, every row on its writer's node, none lost;
#      each server holds the other's claim, and neither node check flags anything at any time.
#   2. n2 moved to node 1 by a reload while it writes (n1 idle): n2 refuses IDs (SN001) and writes
#      not one row on node 1 (its calls there wait for the node check's pass the reload wakes); n1
#      keeps issuing and warns, naming n2. n2 moved to node 3 (free) and reloaded: the refusal lifts,
#      and n1's warning ends.
#   3. n2 started again on node 1: its first call waits for the node check's first pass and is
#      refused; not one ID is issued.
#   4. snowflake.node_conflict = warn on both, so that the rest shows what a shared node does to
#      the data (what refuse, the default, prevents): both issue, both warn, naming each other; n2
#      writes alone, and snowflake_node_origins() flags the shared node on both sides from the rows.
#   5. Both write on node 1 while replication is paused (as under lag), so IDs surely collide.
#      pglogical (default conflict_resolution = apply_remote): every conflict is resolved at LOG
#      level, no ERROR, each side keeping the other side's row for a colliding ID: both lose rows.
#   6. The same with pglogical's conflict_resolution = error, or native: the apply worker stops at
#      the first colliding ID with an ERROR; no row is replaced, and replication stays stuck until
#      someone repairs it.
# Prints each section's time. Usage, as root with the extension installed:
# bash test/servers/multimaster.sh [pglogical|native] (default: pglogical on PostgreSQL 15, native
# later). Ports 26400-26401.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/replication_lib.sh"

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
CLEANUPS+=('stop_watching' '[ "$PASSED" = 1 ] || show_logs CONFLICT')
HERE=$ROOT/test/servers
DISTINCT_SECONDS=${DISTINCT_SECONDS:-120}
COLLIDE_SECONDS=3 # phases 5 and 6
CLAIM_DELETES='(CONFLICT|conflict).*snowflake_node_check.claims' # item_conflicts (replication_lib.sh) says why
conf=("shared_preload_libraries = 'snowflake'")
if [ "$MODE" = pglogical ]; then
  conf=("shared_preload_libraries = 'snowflake,pglogical'")
  # Builds of PostgreSQL with output_plugin_libraries let replication slots use only the output plugins it lists.
  "$PGB/postgres" --describe-config | grep '^output_plugin_libraries' >/dev/null &&
    conf+=("output_plugin_libraries = 'pgoutput, test_decoding, pglogical_output'")
fi

section "set-up"
for n in 1 2; do
  server_init "n$n" $((26399 + n)) "${conf[@]}" "snowflake.node = $n" \
    "wal_level = logical" "track_commit_timestamp = on" "max_worker_processes = 16" \
    "max_replication_slots = 8" "max_wal_senders = 8"
  server_start "n$n"
  sql_file "n$n" "$HERE/items.sql" >/dev/null
  sql_file "n$n" "$HERE/${MODE}_node.sql" me="n$n" my_dsn="$(dsn "n$n")" all_tables="$([ $n = 1 ] && echo on || echo off)" >/dev/null
done
[ "$MODE" = pglogical ] || sql_file n2 "$HERE/native_claims.sql" >/dev/null
# Each server's first claim is written before the subscriptions exist, as when replication is set
# up between servers that run already: only a renewal can bring it to the other side, and a server
# writes its claim again only once it has issued IDs (an idle one writes nothing).
for n in n1 n2; do
  check "$n: its node check has claimed node ${n#n}" wait_for 30 node_check_is "$n" ok
done
subscribed_at=$(now_on n1)
sql_file n1 "$HERE/${MODE}_subscribe.sql" peer=n2 peer_dsn="$(dsn n2)" >/dev/null
sql_file n2 "$HERE/${MODE}_subscribe.sql" peer=n1 peer_dsn="$(dsn n1)" >/dev/null
echo "$MODE both ways between n1 (node 1, port 26400) and n2 (node 2, port 26401), PostgreSQL $PG_MAJOR"
for n in n1 n2; do sql "$n" "SELECT snowflake_nextval()" >/dev/null; done
check "n1 holds n2's claim, renewed since the subscriptions" wait_for 30 holds_claim_since n1 n2 "$subscribed_at"
check "n2 holds n1's claim, renewed since the subscriptions" wait_for 30 holds_claim_since n2 n1 "$subscribed_at"

# Writes on both servers at once for $1 seconds in phase $2; sets W1, W2 (rows committed on
# each) and R1, R2 (inserts refused on each).
write_both() {
  write n1 "$1" "$2" >"$SERVERS/$SUITE_NAME/w1" &
  local p1=$!
  write n2 "$1" "$2" >"$SERVERS/$SUITE_NAME/w2"
  wait $p1
  read -r W1 R1 _ <"$SERVERS/$SUITE_NAME/w1"
  read -r W2 R2 _ <"$SERVERS/$SUITE_NAME/w2"
}

# The rows of phase $2 on server $1 as sorted "id server" lines.
dump() { sql "$1" "SELECT id, server FROM items WHERE phase = $2 ORDER BY id::text" | tr '|' ' '; }

# Node origins snowflake_node_origins() flags as shared on server $1.
shared() { sql "$1" "SELECT count(*) FROM snowflake_node_origins('items') WHERE shared_node"; }

# Both servers hold $2 rows of phase $1.
converged() {
  [ "$(rows n1 "$1")" -eq "$2" ] && [ "$(rows n2 "$1")" -eq "$2" ]
}

section "1. distinct nodes"
echo "$CLIENTS writers on each server for $DISTINCT_SECONDS s, the node checks watched"
watch_checks n1 n2
write_both "$DISTINCT_SECONDS" 1
stop_watching
total=$((W1 + W2))
check "no insert refused" [ $((R1 + R2)) -eq 0 ]
converged_in=$SECONDS
check "both servers reach the $total rows written ($W1 on n1, $W2 on n2)" wait_for 120 converged 1 $total
echo "caught up $((SECONDS - converged_in)) s after the writers stopped"
check "both servers hold the same rows" [ "$(dump n1 1 | md5sum)" = "$(dump n2 1 | md5sum)" ]
for n in n1 n2; do
  check "$n: every row decodes to its writer's node" [ "$(wrong_node $n 1)" -eq 0 ]
  check "$n: no duplicate ID" [ "$(duplicates $n)" -eq 0 ]
  check "$n: no conflict or error on items in the log" [ "$(item_conflicts $n)" -eq 0 ]
  check "$n: at most one delete of a claim it lacked logged" [ "$(log_lines $n "$CLAIM_DELETES")" -le 1 ]
  check "$n: the detector flags no shared node" [ "$(shared $n)" -eq 0 ]
  check "$n: the node check flagged nothing in $(samples $n) samples over the run" \
    [ "$(samples $n)" -gt 0 -a "$(flagged $n)" -eq 0 ]
done
echo "rows: $total; clients: $CLIENTS per server; conflicts: 0 checked; duplicates: 0 checked"
echo "the other server's claim was at most $(oldest_claim n1) s old on n1 and $(oldest_claim n2) s old on n2" \
  "(the interval, 5 s, plus the replication lag); deletes of a claim the subscriber lacked, logged at the" \
  "first renewal after the subscriptions: $(log_lines n1 "$CLAIM_DELETES") on n1, $(log_lines n2 "$CLAIM_DELETES") on n2"

section "2. a reload onto a taken node"
echo "n2 moved to node 1 by a reload while it writes, n1 idle (snowflake.node_conflict = refuse)"
write n2 10 2 >"$SERVERS/$SUITE_NAME/w2" &
writers=$!
wait_for 10 eval '[ "$(rows n2 2)" -gt 0 ]'
moved_at=$(now_on n2)
reload_with n2 node 1
check "n2 refuses IDs: its node check has seen n1's claim" \
  wait_for 15 reports_conflict n2 "node conflict: refusing" n1
refused_after=$(seconds_since n2 "$moved_at")
check "n1 keeps issuing, and warns, naming n2" wait_for 30 reports_conflict n1 "node conflict" n2
warned_after=$(seconds_since n1 "$moved_at")
check "n1 issues" eval 'sql n1 "SELECT snowflake_nextval()" >/dev/null'
wait $writers
read -r _ _ node_refused <"$SERVERS/$SUITE_NAME/w2"
check "n2's writers got SN001 ($node_refused inserts)" [ "$node_refused" -gt 0 ]
check "n2 wrote no row on node 1: its first calls there waited for the pass, which refused" \
  [ "$(sql n2 "SELECT count(*) FROM items WHERE phase = 2 AND (snowflake_parse(id)).node = 1")" -eq 0 ]
echo "n2 refused $refused_after s after the reload (as polled); n1 warned $warned_after s after it"
reload_with n2 node 3
check "n2 moved to node 3 (free): the refusal lifts" \
  wait_for 15 eval '[ "$(sql n2 "SELECT (snowflake_parse(snowflake_nextval())).node")" = 3 ]'
check "n1's warning ends once n2's claim on node 3 reaches it" wait_for 30 node_check_is n1 ok

section "3. the start-up wait"
echo "n2 started again on node 1: the first call waits for the node check"
sql n2 "ALTER SYSTEM SET snowflake.node = 1" >/dev/null
server_stop n2 && server_start n2
first=$(psql_on n2 -At -v VERBOSITY=verbose -c "INSERT INTO items (server, phase) VALUES (2, 3)" 2>&1) || true
check "n2's first insert is refused with SN001, naming n1" \
  eval 'grep -q "ERROR:  SN001:" <<<"$first" && grep -q "The other server: $(claimant n1) " <<<"$first"'
check "not one ID issued on n2" [ "$(sql n2 "SELECT ids_issued FROM snowflake_stats()")" -eq 0 ]
check "n1 warns, naming n2" wait_for 30 reports_conflict n1 "node conflict" n2
echo "n2's first call: $(grep -m1 'ERROR:' <<<"$first")"

section "4. warn"
echo "snowflake.node_conflict = warn on both: n2 issues on node 1, and writes alone"
for n in n1 n2; do reload_with $n node_conflict warn; done
check "n2 issues again, and warns, naming n1" wait_for 15 reports_conflict n2 "node conflict" n1
check "n1 warns, naming n2" reports_conflict n1 "node conflict" n2
sql n2 "INSERT INTO items (server, phase) SELECT 2, 4 FROM generate_series(1, 500)" >/dev/null
check "n2's 500 rows on node 1 reach n1" wait_for 60 converged 4 500
for n in n1 n2; do
  check "$n: the detector flags node 1 as shared" [ "$(shared $n)" -gt 0 ]
done
sql n1 "SELECT node, origin, ids, shared_node FROM snowflake_node_origins('items')" | sed 's/^/n1 detector: /'
check "both logged the conflict as a WARNING" \
  eval '[ "$(log_lines n1 "WARNING:  snowflake: node 1 is also claimed by")" -gt 0 ] &&
    [ "$(log_lines n2 "WARNING:  snowflake: node 1 is (also )?claimed by")" -gt 0 ]'

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
  section "5. apply_remote"
  echo "both write on node 1, conflict_resolution = apply_remote (pglogical's default)"
  CONFLICT='CONFLICT: remote INSERT'
  collide 5 $COLLIDE_SECONDS
  check "apply_remote: replication goes on (both markers arrive)" markers_arrived 5
  check "apply_remote: conflicts logged at LOG level, no ERROR" \
    [ $((C1 + C2)) -gt 0 -a $((E1 + E2)) -eq 0 ]
  for n in n1 n2; do
    check "apply_remote: $n silently lost rows it wrote (the other server's row took the ID)" [ "$(replaced $n 5)" -gt 0 ]
  done
  check "apply_remote: the sides end with different rows under the same IDs" \
    [ "$(dump n1 5 | md5sum)" != "$(dump n2 5 | md5sum)" ]
  echo "--- conflict_resolution = error (reload; the apply workers read it when they start again)"
  for n in n1 n2; do
    sql $n "ALTER SYSTEM SET pglogical.conflict_resolution = 'error'" >/dev/null
    sql $n "SELECT pg_reload_conf()" >/dev/null
  done
  CONFLICT='ERROR:'
else
  CONFLICT='ERROR:.*(duplicate key|conflict)'
fi
section "6. a colliding ID stops replication"
echo "both write on node 1; the apply worker stops at the first colliding ID"
collide 6 $COLLIDE_SECONDS
check "a colliding ID stops an apply worker with an ERROR" [ $((C1 + C2)) -gt 0 ]
for n in n1 n2; do
  check "$n: no row it wrote was replaced" [ "$(replaced $n 6)" -eq 0 ]
done
check "replication is stuck, not silently resolved (a marker never arrives)" not markers_arrived 6
for n in n1 n2; do
  c=C${n#n}
  [ "${!c}" -eq 0 ] || grep -E "$CONFLICT" "${SERVER_DIR[$n]}/log" | tail -1 | sed "s/^/$n log: /"
done
section
[ "$failures" -eq 0 ] && PASSED=1
finish
