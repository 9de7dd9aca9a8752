#!/usr/bin/env bash
# The run command (README, "Getting started"): installs what is missing, builds
# and installs snowflake, starts a local server with it preloaded (data in
# .demo/ in the checkout, node 7, Unix socket only), fills a demo table and
# prints its rows with their decoded parts. Run it again to reuse the same
# server and add rows; `scripts/demo.sh stop` stops it. As a normal user it
# needs sudo for apt-get and make install only, and the server runs as you; as
# root the server runs as postgres. SNOWFLAKE_DEMO_PORT (default 5499) is read
# on every start; PG_MAJOR picks the PostgreSQL major (see scripts/lib.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO=$ROOT/.demo
DATA=$DEMO/data
LOG=$DEMO/server.log
PORT=${SNOWFLAKE_DEMO_PORT:-5499}
# A Unix socket path must fit in 107 bytes; a deep checkout puts the socket in /tmp instead.
SOCKET_DIR=$DEMO
[ ${#SOCKET_DIR} -le 80 ] || SOCKET_DIR=/tmp/snowflake-demo-$PORT

# The user the demo cluster runs as: whoever owns it, else (a new one) postgres for root, else us.
cluster_user() {
  if [ -d "$DATA" ]; then
    stat -c %U "$DATA"
  elif [ "$(id -u)" -eq 0 ]; then
    echo postgres
  else
    id -un
  fi
}

# Runs a command as the demo cluster's user, from the checkout.
as_cluster_user() {
  local user
  user=$(cluster_user)
  if [ "$user" = "$(id -un)" ]; then
    (cd "$ROOT" && "$@")
  elif [ "$(id -u)" -eq 0 ]; then
    (cd "$ROOT" && runuser -u "$user" -- "$@")
  else
    (cd "$ROOT" && sudo -u "$user" -- "$@")
  fi
}

# Runs pg_ctl on the demo cluster.
pg_ctl_demo() {
  as_cluster_user "$PG_BIN/pg_ctl" -D "$DATA" "$@"
}

# Runs SQL on the demo server.
psql_demo() {
  as_cluster_user "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKET_DIR" -p "$PORT" -d postgres "$@"
}

if [ "${1:-}" = stop ]; then
  if [ -f "$DATA/PG_VERSION" ] && pg_ctl_demo status >/dev/null 2>&1; then
    pg_ctl_demo -m fast stop
  else
    echo "no demo server running in $DATA"
  fi
  exit 0
fi

ensure_server_packages
[ "$(cluster_user)" != postgres ] || require_readable_tree
# A running demo server is stopped first, so the restart below loads the fresh build (and the port).
if [ -f "$DATA/PG_VERSION" ] && pg_ctl_demo status >/dev/null 2>&1; then
  pg_ctl_demo -m fast stop >/dev/null
fi
build_and_install

mkdir -p "$DEMO" "$SOCKET_DIR"
[ "$(id -u)" -ne 0 ] || chown "$(cluster_user)" "$DEMO" "$SOCKET_DIR"
if [ ! -f "$DATA/PG_VERSION" ]; then
  # Initialise and configure aside, then move into place: an interrupted run leaves no half-made cluster.
  as_cluster_user rm -rf "$DATA.new"
  as_cluster_user "$PG_BIN/initdb" -D "$DATA.new" --auth-local=peer --auth-host=reject --encoding=UTF8 >/dev/null
  as_cluster_user mv "$DATA.new" "$DATA"
  echo "created a cluster in $DATA (PostgreSQL $PG_MAJOR, run by $(cluster_user))"
fi
[ "$(cat "$DATA/PG_VERSION")" = "$PG_MAJOR" ] ||
  die "$DATA holds a PostgreSQL $(cat "$DATA/PG_VERSION") cluster, not $PG_MAJOR: run 'bash scripts/demo.sh stop'," \
    "remove $DATA and run again, or set PG_MAJOR=$(cat "$DATA/PG_VERSION")"
# The demo's settings are rewritten on every start, so a new SNOWFLAKE_DEMO_PORT takes effect.
grep -qx "include = 'snowflake-demo.conf'" "$DATA/postgresql.conf" ||
  echo "include = 'snowflake-demo.conf'" | as_cluster_user tee -a "$DATA/postgresql.conf" >/dev/null
as_cluster_user tee "$DATA/snowflake-demo.conf" >/dev/null <<CONF
# snowflake demo (scripts/demo.sh rewrites this file on every start)
shared_preload_libraries = 'snowflake'
snowflake.node = 7
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCKET_DIR'
CONF
if ! pg_ctl_demo -l "$LOG" -w start >/dev/null; then
  echo "the demo server did not start; its log is $LOG, which ends with:" >&2
  tail -n 20 "$LOG" >&2
  exit 1
fi
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
if [ "$(cluster_user)" = "$(id -un)" ]; then
  CONNECT="$PG_BIN/psql -h $SOCKET_DIR -p $PORT -d postgres"
elif [ "$(id -u)" -eq 0 ]; then
  CONNECT="runuser -u $(cluster_user) -- $PG_BIN/psql -h $SOCKET_DIR -p $PORT -d postgres"
else
  CONNECT="sudo -u $(cluster_user) $PG_BIN/psql -h $SOCKET_DIR -p $PORT -d postgres"
fi
cat <<EOF_USAGE
Connect:  $CONNECT
Stop:     bash scripts/demo.sh stop
Log:      $LOG
EOF_USAGE
