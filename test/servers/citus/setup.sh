#!/usr/bin/env bash
# One server of the Citus cluster that docs/citus.md sets up, made with the commands the page quotes
# (test/servers/citus.sh runs this file for each of its servers). Usage, as the postgres system
# user with PostgreSQL's programs on PATH and the servers' password in PASSWORD:
#   bash setup.sh DIR PORT [postgresql.conf line...]
# DIR/data becomes the data directory and DIR/log its log; the lines after PORT go into
# postgresql.conf after the page's own (the suite's, for a test: fsync off, its socket directory).
set -euo pipefail
DIR=$1 PORT=$2
shift 2

initdb -D "$DIR/data" --username=postgres --pwfile=<(echo "$PASSWORD") --auth-local=peer --auth-host=scram-sha-256
cat >>"$DIR/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
shared_preload_libraries = 'citus,snowflake'
snowflake.node_source = 'citus'
snowflake.node_offset = 1
snowflake.database = 'app'
wal_level = logical
track_commit_timestamp = on
EOF
printf '%s\n' "$@" >>"$DIR/data/postgresql.conf"

echo "*:*:*:postgres:$PASSWORD" >~/.pgpass
chmod 600 ~/.pgpass

pg_ctl -D "$DIR/data" -l "$DIR/log" start
createdb -h 127.0.0.1 -p "$PORT" app
psql -h 127.0.0.1 -p "$PORT" -d app -c 'CREATE EXTENSION citus'
