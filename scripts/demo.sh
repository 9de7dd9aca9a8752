#!/usr/bin/env bash
# The run command (README, "Getting started"): installs what is missing, builds
# and installs snowflake, starts a local server with it preloaded (data in
# .demo/ in the checkout, node 7, Unix socket only), fills a demo table and
# prints its rows with their decoded parts. Run it again to reuse the same
# server and add rows; `scripts/demo.sh stop` stops it. Run it as root.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO=$ROOT/.demo
DATA=$DEMO/data
PORT=${SNOWFLAKE_DEMO_PORT:-5499}
# A Unix socket path must fit in 107 bytes; a deep checkout puts the socket in /tmp instead.
SOCKET_DIR=$DEMO
[ ${#SOCKET_DIR} -le 80 ] || SOCKET_DIR=/tmp/snowflake-demo-$PORT

# Runs pg_ctl on the demo cluster as postgres.
pg_ctl_demo() {
  as_postgres "$PG_BIN/pg_ctl" -D "$DATA" "$@"
}

# Runs SQL on the demo server as postgres.
psql_demo() {
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -h "$SOCKET_DIR" -p "$PORT" -d postgres "$@"
}

require_root
if [ "${1:-}" = stop ]; then
  pg_ctl_demo status >/dev/null 2>&1 && pg_ctl_demo -m fast stop
  exit 0
fi

ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
require_readable_tree
# A running demo server is stopped first, so the restart below loads the fresh build.
if [ -f "$DATA/PG_VERSION" ] && pg_ctl_demo status >/dev/null 2>&1; then
  pg_ctl_demo -m fast stop >/dev/null
fi
build_and_install

mkdir -p "$DEMO" "$SOCKET_DIR"
chown postgres "$DEMO" "$SOCKET_DIR"
if [ ! -f "$DATA/PG_VERSION" ]; then
  # Initialise and configure aside, then move into place: an interrupted run leaves no half-made cluster.
  rm -rf "$DATA.new"
  as_postgres "$PG_BIN/initdb" -D "$DATA.new" --auth-local=peer --auth-host=reject --encoding=UTF8 >/dev/null
  cat >>"$DATA.new/postgresql.conf" <<CONF

# snowflake demo
shared_preload_libraries = 'snowflake'
snowflake.node = 7
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCKET_DIR'
CONF
  mv "$DATA.new" "$DATA"
  echo "created a cluster in $DATA"
fi
pg_ctl_demo -l "$DEMO/server.log" -w start >/dev/null
echo "server running: port $PORT, socket directory $SOCKET_DIR"

psql_demo <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
ALTER EXTENSION snowflake UPDATE; -- a demo cluster made by an older release moves to this one
CREATE TABLE IF NOT EXISTS orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text NOT NULL);
INSERT INTO orders (item) VALUES ('coffee'), ('tea'), ('cake');
SQL
echo
echo "The newest orders, with the parts each ID decodes to:"
psql_demo -c "SELECT o.id, snowflake_to_base62(o.id) AS base62, o.item, p.ts, p.node, p.seq
              FROM (SELECT * FROM orders ORDER BY id DESC LIMIT 6) AS o, LATERAL snowflake_parse(o.id) AS p
              ORDER BY o.id"
cat <<EOF_USAGE
Connect:  runuser -u postgres -- psql -h $SOCKET_DIR -p $PORT
Stop:     bash scripts/demo.sh stop
Log:      $DEMO/server.log
EOF_USAGE
