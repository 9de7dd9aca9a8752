#!/usr/bin/env bash
# HA failover with Patroni and etcd (Debian's packages), all on 127.0.0.1:
# one etcd (client 26410, peer 26411) and three members m1..m3 (PostgreSQL
# 26420-26422, REST API 26430-26432), each member's Patroni, and so its
# postmaster, in a UTS namespace of its own with host name pg-1 to pg-3, and
# snowflake.node_source = hostname for all (test/servers/patroni-member.yml):
# nodes 1 to 3. A writer inserts one row per connection through a multi-host
# connection string (target_session_attrs=read-write) and records every ID
# acknowledged; then a `patronictl switchover`, then kill -9 of the new
# leader's Patroni and postmaster (the machine dies), and that member's Patroni
# started again. Asserts: no duplicate ID, no acknowledged ID missing on the
# final leader, on each node every ID above the ones acknowledged before it,
# every ID on the node of the member that issued it, every member on the node
# of its host name, the old leader having come back through pg_rewind, and the
# node check, watched throughout, raising nothing: ok on the leader, standby on
# the replicas, never a conflict. Prints the outage times (never asserted).
# Data under build/servers/patroni; everything is stopped by PID on exit.
# Usage, as root with the extension installed: bash test/servers/patroni.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_packages patroni etcd-server etcd-client curl
SUITE_NAME=patroni
HERE=$ROOT/test/servers
TOP=$SERVERS/$SUITE_NAME
ETCD=26410
rm -rf "$TOP" && mkdir -p "$TOP" && chmod 755 "$BUILD" "$SERVERS" && chown postgres "$TOP"

# Starts a command as postgres in the background, output to $TOP/$1.log, PID in $TOP/$1.pid; with
# SPAWN_HOST set, in a UTS namespace of its own whose host name is $SPAWN_HOST.
spawn() {
  local name=$1 uts=()
  shift
  [ -z "${SPAWN_HOST:-}" ] || uts=(unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' - "$SPAWN_HOST")
  (cd "$ROOT" && "${uts[@]}" runuser -u postgres -- \
    bash -c '"$@" </dev/null >>'"$TOP/$name.log"' 2>&1 & echo $! >'"$TOP/$name.pid" spawn "$@")
}

# Starts member $1's Patroni (m1 to m3) on host pg-1 to pg-3.
spawn_member() {
  SPAWN_HOST=pg-${1#m} spawn "$1" patroni "$TOP/$1.yml"
}

# Stops the process spawned as $1 (TERM, then KILL after 30 s); Patroni stops its PostgreSQL first.
stop_spawned() {
  local pid
  pid=$(cat "$TOP/$1.pid" 2>/dev/null) || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  wait_for 30 eval "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null || true
}

# The HTTP status of Patroni member $1's REST endpoint $2 (200 when the member is what $2 names).
rest() {
  curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$((26429 + ${1#m}))/$2"
}
# Member $1 is the running primary.
is_leader() { [ "$(rest "$1" primary)" = 200 ]; }
# Member $1 is a running replica.
is_replica() { [ "$(rest "$1" replica)" = 200 ]; }

# The member that is the leader now (none printed if none).
leader() {
  local m
  for m in m1 m2 m3; do is_leader $m && echo $m && return 0; done
  return 1
}

# Rows the writer has had acknowledged so far.
acked() { wc -l <"$TOP/acked"; }

# Waits up to 60 s until the writer has had $1 more rows acknowledged.
more_acked() {
  local target=$(($(acked) + $1))
  wait_for 60 eval '[ "$(acked)" -ge '"$target"' ]'
}

section "set-up"
echo "etcd on 127.0.0.1:$ETCD, three Patroni members on hosts pg-1 to pg-3"
mkdir -p "$TOP/etcd" && chown postgres "$TOP/etcd"
spawn etcd etcd --name e1 --data-dir "$TOP/etcd" --listen-client-urls "http://127.0.0.1:$ETCD" \
  --advertise-client-urls "http://127.0.0.1:$ETCD" --listen-peer-urls "http://127.0.0.1:$((ETCD + 1))" \
  --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD + 1))" --initial-cluster "e1=http://127.0.0.1:$((ETCD + 1))"
CLEANUPS+=("stop_spawned etcd")
wait_for 30 etcdctl --endpoints "127.0.0.1:$ETCD" endpoint health || die "etcd did not start"
for n in 1 2 3; do
  m=m$n
  server_adopt $m $((26419 + n))
  sed -e "s|@NAME@|$m|; s|@PORT@|$((26419 + n))|; s|@API@|$((26429 + n))|" \
    -e "s|@DIR@|$TOP/$m|; s|@ETCD@|$ETCD|; s|@BIN@|$PGB|" "$HERE/patroni-member.yml" >"$TOP/$m.yml"
  CLEANUPS=("stop_spawned $m" "${CLEANUPS[@]}")
done
spawn_member m1
wait_for 90 is_leader m1 || { tail -20 "$TOP/m1.log"; die "m1 did not become the leader"; }
spawn_member m2
spawn_member m3
wait_for 120 eval 'is_replica m2 && is_replica m3' || { tail -20 "$TOP/m2.log"; die "the replicas did not start"; }
sql m1 "CREATE EXTENSION snowflake" >/dev/null
sql m1 "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval())" >/dev/null
# Member $1's node, and where it came from.
node_of() { sql "$1" "SELECT node || ' from ' || node_source FROM snowflake_node_status()"; }
for m in m1 m2 m3; do echo "$m: port ${SERVER_PORT[$m]}, node $(node_of $m)"; done
# The node check's first pass after CREATE EXTENSION, within its interval, claims m1's node.
check "m1's node check claims its node" wait_for 15 node_check_is m1 ok
CLEANUPS=("stop_watching" "${CLEANUPS[@]}")
watch_checks m1 m2 m3

# Inserts one row per connection into whichever member accepts writes, until $TOP/stop-writer
# exists; appends "id|port|time" to $TOP/acked for every insert whose commit was acknowledged.
writer() {
  local conn="host=127.0.0.1,127.0.0.1,127.0.0.1 port=26420,26421,26422 user=postgres dbname=postgres"
  conn+=" target_session_attrs=read-write connect_timeout=2"
  while [ ! -e "$TOP/stop-writer" ]; do
    "$PGB/psql" "$conn" -XAtq -c "INSERT INTO ids DEFAULT VALUES
      RETURNING id, inet_server_port(), extract(epoch FROM clock_timestamp())" >>"$TOP/acked" 2>/dev/null ||
      sleep 0.05
  done
}
: >"$TOP/acked"
writer &
WRITER=$!
CLEANUPS=("touch $TOP/stop-writer; wait $WRITER" "${CLEANUPS[@]}")
more_acked 100 || die "the writer got nothing acknowledged"

# Under synchronous_mode only the synchronous standby can take over (Patroni names one within a loop).
# Prints the member that is the synchronous standby now.
sync_standby() {
  local m
  for m in m1 m2 m3; do [ "$(rest $m sync)" = 200 ] && echo $m && return 0; done
  return 1
}
wait_for 60 sync_standby || die "Patroni named no synchronous standby"
SW=$(sync_standby)
section "switchover"
echo "from m1 to the synchronous standby $SW"
patronictl -c "$TOP/m1.yml" switchover --candidate "$SW" --force >"$TOP/switchover.log" 2>&1
grep -q 'failed' "$TOP/switchover.log" && { cat "$TOP/switchover.log"; die "patronictl switchover failed"; }
check "$SW leads after the switchover" wait_for 60 is_leader "$SW"
check "writes go on after the switchover" more_acked 100

# The leader's machine dies: kill -9 of its Patroni and its postmaster, by PID.
# Right after a switchover the new leader has no synchronous standby yet, and no member may take over.
check "the new leader names a synchronous standby" wait_for 60 sync_standby
more_acked 20
section "kill -9"
echo "of the leader's Patroni and postmaster ($SW)"
kill -KILL "$(cat "$TOP/$SW.pid")" "$(head -1 "$TOP/$SW/data/postmaster.pid")"
check "another member leads once the leader key expires" \
  wait_for 90 eval '[ -n "$(leader)" ] && [ "$(leader)" != '"$SW"' ]'
check "writes go on after the failover" more_acked 100
section "the killed member back"
echo "$SW's Patroni started again"
spawn_member "$SW"
check "$SW comes back as a replica" wait_for 120 is_replica "$SW"
touch "$TOP/stop-writer"
wait $WRITER
NEW=$(leader)
echo "leader at the end: $NEW"
check "$NEW's node check says ok" wait_for 15 node_check_is "$NEW" ok
stop_watching

section "checks"
cut -d'|' -f1 "$TOP/acked" | sort >"$TOP/acked.ids"
sql "$NEW" "SELECT id FROM ids" | sort >"$TOP/final.ids"
total=$(wc -l <"$TOP/acked.ids")
dups=$(uniq -d "$TOP/acked.ids" | wc -l)
missing=$(comm -23 "$TOP/acked.ids" "$TOP/final.ids" | wc -l)
check "no duplicate among the $total IDs acknowledged" [ "$dups" -eq 0 ]
check "no acknowledged ID missing on the final leader" [ "$missing" -eq 0 ]
# Every ID's node is the node of the member (by port) that acknowledged it.
wrong=$(sql "$NEW" "SELECT count(*) FROM (VALUES $(awk -F'|' '{printf "%s(%s,%s)", (NR > 1 ? "," : ""), $1, $2}' "$TOP/acked")) a(id, port)
  WHERE (snowflake_parse(id)).node <> port - 26419")
check "every ID on the node of the member that issued it" [ "$wrong" -eq 0 ]
# On each node, every ID is above the ones that node issued before, across the switchover and the
# failover (IDs of this era have 19 digits: compared as text, by length first).
backwards=$(awk -F'|' '($2 in last) && (length($1) < length(last[$2]) || (length($1) == length(last[$2]) && $1 "" <= last[$2] "")) { bad++ }
  { last[$2] = $1 } END { print bad + 0 }' "$TOP/acked")
check "on each node, every ID above the ones acknowledged before it" [ "$backwards" -eq 0 ]
for n in 1 2 3; do
  check "m$n is on node $n, from its host name" [ "$(node_of m$n)" = "$n from host name pg-$n" ]
  check "m$n's node check raised nothing in $(samples m$n) samples over the run (ok, standby, starting or down)" \
    [ "$(samples m$n)" -gt 0 -a "$(flagged m$n 'ok|standby|starting|down')" -eq 0 ]
  # Patroni's output holds its postmaster's log.
  check "m$n's log has its postmaster's lines, none of a node conflict or a failed node check" \
    eval 'grep -q "database system is ready to accept" "$TOP/m'$n'.log" &&
      ! grep -qE "snowflake: (node [0-9]+ is (also )?claimed|the node check failed)" "$TOP/m'$n'.log"'
done
for m in m1 m2 m3; do
  [ "$m" = "$NEW" ] || check "$m's node check says standby" node_check_is $m standby
done
echo "the claims on $NEW (one a primary: a promotion starts a timeline):"
sql "$NEW" "SELECT timeline, node, server, heartbeat > now() - interval '25 s' AS live
  FROM snowflake_node_check.claims ORDER BY timeline" | sed 's/^/  /'
check "$SW came back through pg_rewind" grep -q 'pg_rewind' "$TOP/$SW.log"
echo "IDs acknowledged per member: $(cut -d'|' -f2 "$TOP/acked" | sort | uniq -c | awk '{printf "%s port %s; ", $1, $2}')"
echo "outages (longest gaps between acknowledged writes, printed only): $(cut -d'|' -f3 "$TOP/acked" |
  awk 'NR > 1 {printf "%.2f\n", $1 - prev} {prev = $1}' | sort -rn | head -2 | paste -sd' ') s"
echo "rows: $total; writer: 1 connection at a time; duplicates: $dups; missing: $missing"
section
finish
