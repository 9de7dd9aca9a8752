#!/usr/bin/env bash
# Each member's own node in a file next to its data directory, which
# pg_basebackup and pg_rewind do not copy (they copy postgresql.conf,
# postgresql.auto.conf and snowflake.state). postgresql.conf carries one line,
#   include = '../snowflake-node.conf'
# (relative to the data directory, so the same line works on every member), and
# each machine has its own ../snowflake-node.conf with `snowflake.node = N`.
# The way to give pg_auto_failover members (and any plain primary/standby pair)
# their own nodes. Tested with plain pg_basebackup, promotion and pg_rewind:
# Each member writes its file at start-up from its host name's ordinal, as a
# Kubernetes StatefulSet pod's entrypoint would (pg-1: node 101, pg-2: 102).
#   1. p1 (node 101) is copied with pg_basebackup to s2, whose own file says 102.
#   2. s2 is promoted and writes on node 102 while p1 writes on 101 (a split).
#   3. p1 is rewound from s2 with pg_rewind, which copies s2's postgresql.conf
#      over p1's: p1 still has node 101 when it starts as s2's standby.
# Usage, as root with the extension installed: bash test/servers/node_file.sh (ports 26440-26441).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITE_NAME=node-file
INCLUDE="include = '../snowflake-node.conf'"

# Member $1's start-up step, as in the entrypoint of a Kubernetes StatefulSet pod whose host name ($2)
# ends in its ordinal: node = the StatefulSet's offset + the ordinal, written next to PGDATA.
node_file() {
  local PGDATA=${SERVER_DIR[$1]}/data HOSTNAME=$2 OFFSET=100
  echo "snowflake.node = $((OFFSET + ${HOSTNAME##*-}))" >"$PGDATA/../snowflake-node.conf"
}

server_init p1 26440 "shared_preload_libraries = 'snowflake'" "wal_log_hints = on" "wal_keep_size = '64MB'" "$INCLUDE"
node_file p1 pg-1
server_start p1
sql p1 "CREATE EXTENSION snowflake" >/dev/null
sql p1 "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), at text)" >/dev/null
sql p1 "INSERT INTO t (at) SELECT 'p1 before' FROM generate_series(1, 100)" >/dev/null

echo "--- pg_basebackup of p1 into s2"
server_adopt s2 26441
as_postgres "$PGB/pg_basebackup" -h 127.0.0.1 -p 26440 -U postgres -D "${SERVER_DIR[s2]}/data" -R -X stream
for f in postgresql.conf postgresql.auto.conf snowflake.state; do
  check "pg_basebackup copied $f" [ -e "${SERVER_DIR[s2]}/data/$f" ]
done
check "pg_basebackup did not copy the node file next to the data directory" [ ! -e "${SERVER_DIR[s2]}/snowflake-node.conf" ]
# The copy's postgresql.conf is p1's: only its port and socket directory are made s2's.
sed -i "s/^port = 26440/port = 26441/; s|^unix_socket_directories = .*|unix_socket_directories = '${SERVER_DIR[s2]}'|" \
  "${SERVER_DIR[s2]}/data/postgresql.conf"
node_file s2 pg-2
server_start s2
check "s2 has its own node 102 (p1: node $(sql p1 'SHOW snowflake.node'))" [ "$(sql s2 'SHOW snowflake.node')" = 102 ]
wait_for 30 eval '[ "$(sql s2 "SELECT count(*) FROM t")" -eq 100 ]'

echo "--- s2 promoted; both write (the split), then p1 is rewound from s2"
sql s2 "SELECT pg_promote()" >/dev/null
sql s2 "INSERT INTO t (at) SELECT 's2 after' FROM generate_series(1, 100)" >/dev/null
sql p1 "INSERT INTO t (at) SELECT 'p1 after' FROM generate_series(1, 100)" >/dev/null
server_stop p1
as_postgres "$PGB/pg_rewind" -D "${SERVER_DIR[p1]}/data" --source-server="$(dsn s2)" -R >"${SERVER_DIR[p1]}/rewind.log" 2>&1 ||
  { cat "${SERVER_DIR[p1]}/rewind.log"; die "pg_rewind failed"; }
check "pg_rewind gave p1 s2's postgresql.conf (port 26441)" grep -q '^port = 26441' "${SERVER_DIR[p1]}/data/postgresql.conf"
sed -i "s/^port = 26441/port = 26440/; s|^unix_socket_directories = .*|unix_socket_directories = '${SERVER_DIR[p1]}'|" \
  "${SERVER_DIR[p1]}/data/postgresql.conf"
server_start p1
check "p1 keeps its own node 101 after pg_rewind" [ "$(sql p1 'SHOW snowflake.node')" = 101 ]
check "p1 is now s2's standby" [ "$(sql p1 'SELECT pg_is_in_recovery()')" = t ]
check "the new primary's rows are on node 102" \
  [ "$(sql s2 "SELECT count(*) FROM t WHERE at = 's2 after' AND (snowflake_parse(id)).node <> 102")" -eq 0 ]
finish
