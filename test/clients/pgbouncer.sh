#!/usr/bin/env bash
# A pooler in front of the server (docs/clients.md, "Connection poolers"), run by
# test/clients/run.sh against its server (PGHOST/PGPORT): Debian's pgbouncer in
# transaction pooling mode on 127.0.0.1:$PGBOUNCER_PORT, 8 pgbench clients over
# 4 server connections, with -M simple and then -M extended, each mixing
# SELECT snowflake_nextval(), INSERT ... DEFAULT snowflake_nextval() and blocks.
# Asserts: every ID unique, every ID on this server's node, no failed transaction.
# pgbouncer runs as postgres (it refuses root) and is stopped by the PID it writes.
set -euo pipefail
PORT=${PGBOUNCER_PORT:-26302}
DIR=${CLIENTS_DIR:?}/pgbouncer
PG_BIN=${PG_BIN:?}
psql_() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

rm -rf "$DIR" && mkdir -p "$DIR"
cat >"$DIR/pgbouncer.ini" <<INI
[databases]
postgres = host=$PGHOST port=$PGPORT dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PORT
unix_socket_dir =
auth_type = trust
auth_file = $DIR/users.txt
pool_mode = transaction
default_pool_size = 4
max_client_conn = 50
logfile = $DIR/pgbouncer.log
pidfile = $DIR/pgbouncer.pid
INI
echo '"postgres" ""' >"$DIR/users.txt"
chown -R postgres "$DIR"
runuser -u postgres -- pgbouncer -d "$DIR/pgbouncer.ini"
trap 'kill "$(cat "$DIR/pgbouncer.pid" 2>/dev/null)" 2>/dev/null || true' EXIT
# The daemon may not listen yet when -d returns: wait (up to 20 s) until it answers.
for _ in $(seq 1 200); do
  "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
  sleep 0.1
done
"$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" ||
  { tail -20 "$DIR/pgbouncer.log"; echo "FAIL: pgbouncer does not accept connections on port $PORT"; exit 1; }

psql_ -c "DROP TABLE IF EXISTS pooled_rows, pooled_ids" \
  -c "CREATE TABLE pooled_rows (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), mode text)" \
  -c "CREATE TABLE pooled_ids (id bigint, how text)"
echo "INSERT INTO pooled_ids SELECT snowflake_nextval(), 'select';" >"$DIR/nextval.sql"
echo "INSERT INTO pooled_rows (mode) VALUES ('default');" >"$DIR/default.sql"
echo "INSERT INTO pooled_ids SELECT generate_series(lower(r), upper(r) - 1), 'block' FROM snowflake_nextval_block(16) AS r;" >"$DIR/block.sql"
chown postgres "$DIR"/*.sql

for mode in simple extended; do
  echo "--- pgbench -M $mode through pgbouncer (transaction pooling)"
  runuser -u postgres -- "$PG_BIN/pgbench" -n -h 127.0.0.1 -p "$PORT" -U postgres -M "$mode" -c 8 -j 2 -t 300 \
    -f "$DIR/nextval.sql" -f "$DIR/default.sql" -f "$DIR/block.sql" postgres |
    grep -E "transactions actually processed|failed|tps ="
done

result=$(psql_ -F ' ' -c "WITH all_ids AS (SELECT id FROM pooled_ids UNION ALL SELECT id FROM pooled_rows)
  SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE (snowflake_parse(id)).node <> $SNOWFLAKE_NODE) FROM all_ids")
read -r total distinct foreign <<<"$result"
echo "IDs: $total, distinct: $distinct, on another node: $foreign"
[ "$total" -gt 0 ] && [ "$total" -eq "$distinct" ] && [ "$foreign" -eq 0 ] ||
  { echo "FAIL: duplicate IDs or IDs of another node through pgbouncer"; exit 1; }
echo "ok: every ID through pgbouncer is unique and on node $SNOWFLAKE_NODE"
