#!/usr/bin/env bash
# One way, native logical replication (the host's PostgreSQL 15 has no origin = none for both ways):
# two writers, n1 (node 1) and n2 (node 2), publish items, and an aggregator n3 that also writes
# subscribes to both. The node check's claims (snowflake_node_check.claims) travel with no step from n1
# (FOR ALL TABLES) and after the one step from n2 (a table-list publication: native_claims.sql);
# one way, the aggregator sees the writers' claims and they never see its own.
#   1. n3 starts on node 1, n1's, before its subscriptions exist: its node check sees no other
#      claim, and it issues. Its subscriptions made (copy_data = true: n1's claim comes with the
#      copy), it refuses (SN001). The rows it wrote on node 1 before and after CREATE SUBSCRIPTION
#      are counted, and the time to the refusal printed; n1 never learns of n3. n2's claim comes
#      only once n2 has taken the one step and n3 refreshed its subscription (as after an update
#      from 0.4.0, which creates the claims' table under subscriptions that exist).
#   2. n3 moved to node 3 (free) and reloaded: the refusal lifts.
#   3. Distinct nodes for DISTINCT_SECONDS (120 s; 30 s in the version matrix), two writers on each server: every writer's row
#      reaches n3 on its writer's node, no duplicate, no conflict or error, and no node check flags
#      anything at any time; the age of the writers' claims on n3 (at most the interval plus the
#      replication lag) is printed.
#   4. n3 started again on node 2, n2's: its first call waits for the node check's first pass and
#      is refused; not one ID is issued.
#   5. n2 moved to node 3, which n3 claimed first: the sender that claimed later never sees the
#      aggregator's claim, so both keep issuing, and n3 alone warns, naming n2. n2 moved back: the
#      warning ends.
#   6. n3's subscription to n1 dropped and made again with copy_data = false, as a subscriber that
#      holds the publisher's rows must: n1's claim, written again once n1 issues an ID, reaches n3
#      again, and its rows too.
#   7. A subscriber without the claims' table (a database of n3 without the extension, as a server
#      not yet updated from 0.4.0): a subscription to n1's FOR ALL TABLES publication is refused; one
#      made before its publisher published the claims stops at the first claim, every table with
#      it, and resumes, losing nothing, once the subscriber has the extension.
# Prints each section's time. Usage, as root with the extension installed:
# bash test/servers/one_way.sh. Ports 26520-26522.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/replication_lib.sh"

SUITE_NAME=one-way-native
PASSED=0
CLEANUPS+=('stop_watching' '[ "$PASSED" = 1 ] || show_logs')
HERE=$ROOT/test/servers
DISTINCT_SECONDS=${DISTINCT_SECONDS:-120}

# n3's first call after a start on node $1 (the node of server n$1) is refused with SN001, naming
# that server, and n3 issued not one ID.
refused_from_the_start() {
  local first
  first=$(psql_on n3 -At -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c "INSERT INTO items (server, phase) VALUES (3, 0)" 2>&1)
  echo "n3's first call: $(grep -m1 'ERROR:' <<<"$first")"
  grep -q "ERROR:  SN001:" <<<"$first" && grep -q "The other server: $(claimant "n$1") " <<<"$first" &&
    [ "$(sql n3 "SELECT ids_issued FROM snowflake_stats()")" -eq 0 ]
}

# n3's subscription $1 has copied every table it knows of.
synced() {
  [ "$(sql n3 "SELECT count(*) FILTER (WHERE r.srsubstate <> 'r') || '|' || count(*) FROM pg_subscription_rel r
    JOIN pg_subscription s ON s.oid = r.srsubid WHERE s.subname = '$1'")" = "0|1" ]
}

# Server $1 issues an ID on node $2.
issues_on() { [ "$(sql "$1" "SELECT (snowflake_parse(snowflake_nextval())).node" 2>/dev/null)" = "$2" ]; }

section "set-up"
echo "n1 publishes FOR ALL TABLES, n2 a table list without the claims; n3 on node 1 (n1's), subscribed to neither"
for n in 1 2 3; do
  server_init "n$n" $((26519 + n)) "shared_preload_libraries = 'snowflake'" "snowflake.node = $((n == 3 ? 1 : n))" \
    "wal_level = logical" "max_worker_processes = 16" "max_replication_slots = 8" "max_wal_senders = 8"
  server_start "n$n"
  sql_file "n$n" "$HERE/items.sql" >/dev/null
done
for n in 1 2; do
  sql_file "n$n" "$HERE/native_node.sql" all_tables="$([ $n = 1 ] && echo on || echo off)" >/dev/null
done
for n in n1 n2 n3; do
  check "$n: its node check has claimed its node" wait_for 30 node_check_is "$n" ok
done

section "1. before the subscriptions"
echo "n3 issues on node 1 before its subscriptions exist, then subscribes to both writers"
write n3 15 1 >"$SERVERS/$SUITE_NAME/w3" &
writers=$!
wait_for 10 eval '[ "$(rows n3 1)" -gt 0 ]'
check "n3's node check sees no other claim while it issues on node 1" eval 'node_check_is n3 ok && issues_on n3 1'
subscribed_at=$(now_on n3)
for n in 1 2; do
  sql_file n3 "$HERE/one_way_subscribe.sql" peer="n$n" peer_dsn="$(dsn "n$n")" copy_data=true >/dev/null
done
check "n3 refuses once n1's claim has come with the copy" wait_for 30 reports_conflict n3 "node conflict: refusing" n1
refused_after=$(seconds_since n3 "$subscribed_at")
check "n2's copy is done, and without the one step it brought no claim" \
  eval 'wait_for 30 synced from_n2 && ! holds_claim_since n3 n2 -infinity'
sql_file n2 "$HERE/native_claims.sql" >/dev/null
sql n3 "ALTER SUBSCRIPTION from_n2 REFRESH PUBLICATION" >/dev/null
check "n2's claim comes once n2 has taken the step and n3 refreshed" wait_for 30 holds_claim_since n3 n2 -infinity
wait $writers
read -r _ _ node_refused <"$SERVERS/$SUITE_NAME/w3"
check "n3's writers got SN001 ($node_refused inserts)" [ "$node_refused" -gt 0 ]
on_node_1="SELECT count(*) FROM items WHERE phase = 1 AND (snowflake_parse(id)).node = 1 AND snowflake_timestamp(id)"
echo "n3 wrote $(sql n3 "$on_node_1 < '$subscribed_at'") rows on node 1 before its subscriptions existed, and" \
  "$(sql n3 "$on_node_1 >= '$subscribed_at'") after CREATE SUBSCRIPTION, until it refused $refused_after s later"
check "n1 never learns of n3's claim (one way): it holds none, and its node check says ok" \
  eval '! holds_claim_since n1 n3 -infinity && node_check_is n1 ok'
check "n1 keeps issuing on node 1" issues_on n1 1

section "2. moved to a free node"
echo "n3 moved to node 3 by a reload"
reload_with n3 node 3
check "the refusal lifts" wait_for 15 issues_on n3 3
check "n3's node check says ok" wait_for 15 node_check_is n3 ok

section "3. distinct nodes"
echo "$CLIENTS writers on each server for $DISTINCT_SECONDS s, the node checks watched"
watch_checks n1 n2 n3
write n1 "$DISTINCT_SECONDS" 3 >"$SERVERS/$SUITE_NAME/w1" &
p1=$!
write n2 "$DISTINCT_SECONDS" 3 >"$SERVERS/$SUITE_NAME/w2" &
p2=$!
write n3 "$DISTINCT_SECONDS" 3 >"$SERVERS/$SUITE_NAME/w3"
wait $p1 $p2
stop_watching
total=0
for n in 1 2 3; do
  read -r w r nr <"$SERVERS/$SUITE_NAME/w$n"
  check "n$n: $w rows committed, no insert refused" [ $((r + nr)) -eq 0 ]
  total=$((total + w))
done
converged_in=$SECONDS
check "n3 holds all $total rows" wait_for 120 eval '[ "$(rows n3 3)" -eq '$total' ]'
echo "caught up $((SECONDS - converged_in)) s after the writers stopped"
for n in 1 2; do
  check "n3 holds n$n's rows as n$n does" [ "$(sql n$n "SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM items WHERE phase = 3")" = \
    "$(sql n3 "SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM items WHERE phase = 3 AND server = $n")" ]
done
for n in n1 n2 n3; do
  check "$n: every row decodes to its writer's node" [ "$(wrong_node $n 3)" -eq 0 ]
  check "$n: no duplicate ID" [ "$(duplicates $n)" -eq 0 ]
  check "$n: no conflict or error on items in the log" [ "$(item_conflicts $n)" -eq 0 ]
  check "$n: the node check flagged nothing in $(samples $n) samples over the run" \
    [ "$(samples $n)" -gt 0 -a "$(flagged $n)" -eq 0 ]
done
check "the writers hold no other server's claim (one way)" [ -z "$(oldest_claim n1)$(oldest_claim n2)" ]
echo "rows: $total; the writers' claims were at most $(oldest_claim n3) s old on n3 (the interval, 5 s, plus the replication lag)"

section "4. the start-up wait"
echo "n3 started again on node 2 (n2's): the first call waits for the node check"
sql n3 "ALTER SYSTEM SET snowflake.node = 2" >/dev/null
server_stop n3 && server_start n3
check "n3's first insert is refused with SN001, naming n2; not one ID issued" refused_from_the_start 2
check "n2 never learns (one way)" node_check_is n2 ok
reload_with n3 node 3
check "n3 moved back to node 3: the refusal lifts" wait_for 15 issues_on n3 3

section "5. the sender claims later"
echo "n2 moved to node 3, which n3 claimed first: the sender never sees the receiver's claim"
moved_at=$(now_on n3)
reload_with n2 node 3
check "n3 warns, naming n2" wait_for 30 reports_conflict n3 "node conflict" n2
echo "n3 warned $(seconds_since n3 "$moved_at") s after n2's reload"
check "n3 keeps issuing" issues_on n3 3
check "n2 keeps issuing on node 3, and its node check says ok" eval 'issues_on n2 3 && node_check_is n2 ok'
reload_with n2 node 2
check "n2 moved back to node 2: n3's warning ends" wait_for 30 node_check_is n3 ok

section "6. a subscription made again"
echo "n3's subscription to n1 dropped and made again, with copy_data = false"
psql_on n3 -c "SET client_min_messages = warning" -c "DROP SUBSCRIPTION from_n1"
errors=$(log_lines n3 ERROR:)
recreated_at=$(now_on n3)
sql_file n3 "$HERE/one_way_subscribe.sql" peer=n1 peer_dsn="$(dsn n1)" copy_data=false >/dev/null
sql n1 "INSERT INTO items (server, phase) VALUES (1, 6)" >/dev/null
check "n1's claim, written again once n1 issued an ID, reaches n3" wait_for 30 holds_claim_since n3 n1 "$recreated_at"
check "n1's rows reach n3 again" wait_for 30 eval '[ "$(rows n3 6)" -eq 1 ]'
check "n3 logged no ERROR since: no key clashed" [ "$(log_lines n3 ERROR:)" -eq "$errors" ]

section "7. a subscriber without the extension"
echo "database plain on n3: items without snowflake; n1 publishes late_pub, items alone at first"
sql n3 "CREATE DATABASE plain" >/dev/null
plain() { psql_on n3 -d plain -At -c "SET client_min_messages = warning" -c "$1"; }
plain "CREATE TABLE items (id bigint PRIMARY KEY, server integer NOT NULL, phase integer NOT NULL)"
# The rows of section 7 in plain; n3's log tells more than $1 times that plain's subscription stopped.
plain_rows() { plain "SELECT count(*) FROM items WHERE phase = 7"; }
missing='target relation "snowflake_node_check.claims" does not exist'
stopped_more_than() { [ "$(log_lines n3 "$missing")" -gt "$1" ]; }
refused=$(plain "CREATE SUBSCRIPTION plain_all CONNECTION '$(dsn n1)' PUBLICATION items_pub" 2>&1) || true
# CREATE SUBSCRIPTION names the first missing piece: the claims' schema here.
check "a subscription to n1's FOR ALL TABLES publication is refused, naming the claims' schema" \
  grep -q 'schema "snowflake_node_check" does not exist' <<<"$refused"
sql n1 "CREATE PUBLICATION late_pub FOR TABLE items" >/dev/null
plain "CREATE SUBSCRIPTION plain_late CONNECTION '$(dsn n1)' PUBLICATION late_pub WITH (copy_data = false)"
sql n1 "INSERT INTO items (server, phase) VALUES (1, 7)" >/dev/null
check "n1's rows reach plain" wait_for 30 eval '[ "$(plain_rows)" = 1 ]'
sql n1 "ALTER PUBLICATION late_pub ADD TABLE snowflake_node_check.claims" >/dev/null
sql n1 "SELECT snowflake_nextval()" >/dev/null # a server writes its claim again once it has issued IDs
check "once n1 publishes its claims, plain's subscription stops at the first" wait_for 30 stopped_more_than 0
stops=$(log_lines n3 "$missing")
sql n1 "INSERT INTO items (server, phase) VALUES (1, 7)" >/dev/null
check "it stops there again, and n1's next row never arrives" \
  eval 'wait_for 30 stopped_more_than '"$stops"' && [ "$(plain_rows)" = 1 ]'
plain "CREATE EXTENSION snowflake" >/dev/null
check "with the extension in plain, the subscription resumes, losing nothing" wait_for 30 eval '[ "$(plain_rows)" = 2 ]'
plain "DROP SUBSCRIPTION plain_late"
section
[ "$failures" -eq 0 ] && PASSED=1
finish
