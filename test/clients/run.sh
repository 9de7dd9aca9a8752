#!/usr/bin/env bash
# The clients suite: runs real clients (Python psycopg 3, psycopg2 +
# SQLAlchemy, JavaScript node-postgres, PHP PDO, pgbouncer, and
# prometheus-postgres-exporter) against a temporary PostgreSQL server with the
# installed extension preloaded, proving every recipe docs/clients.md and
# docs/monitoring.md publish and showing each trap they warn about.
# Usage (as root): bash test/clients/run.sh [python] [js] [php] [java] [exporter] [pgbouncer]   (no argument: all)
# The server lives under build/clients, listens on 127.0.0.1:$CLIENTS_PORT
# (56300 by default) and is stopped by PID when the script exits.
source "$(dirname "$0")/../../scripts/lib.sh"

PORT=${CLIENTS_PORT:-56300}
DATA=$BUILD/clients/data
HERE=$ROOT/test/clients
ECOSYSTEMS=("$@")
[ ${#ECOSYSTEMS[@]} -eq 0 ] && ECOSYSTEMS=(python js php java exporter pgbouncer)

require_root
require_readable_tree

# Installs what each chosen ecosystem needs (Debian packages; npm modules from the committed lock file).
install_clients() {
  local eco
  for eco in "${ECOSYSTEMS[@]}"; do
    case $eco in
      python) ensure_packages python3 python3-psycopg python3-psycopg2 python3-sqlalchemy python3-pytest ;;
      js)
        command -v node >/dev/null && command -v npm >/dev/null || ensure_packages nodejs npm
        (cd "$HERE/js" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ;;
      exporter) ensure_packages prometheus-postgres-exporter prometheus curl python3-yaml ;;
      pgbouncer) ensure_packages pgbouncer ;;
      php) ensure_packages php-cli php-pgsql ;;
      java) ensure_packages openjdk-17-jdk-headless libpostgresql-jdbc-java libhibernate3-java ;;
      *) die "unknown ecosystem '$eco' (choose from: python js php java exporter pgbouncer)" ;;
    esac
  done
}

# Starts a fresh preloaded server on 127.0.0.1:$PORT with snowflake.node = 7; stops it by PID on exit.
start_server() {
  rm -rf "$BUILD/clients"
  postgres_dir clients
  as_postgres "$PG_BIN/initdb" -D "$DATA" -A trust -U postgres >/dev/null
  cat >>"$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$BUILD/clients'
shared_preload_libraries = 'snowflake'
snowflake.node = 7
fsync = off
CONF
  trap stop_server EXIT
  as_postgres "$PG_BIN/pg_ctl" -D "$DATA" -l "$BUILD/clients/server.log" -w -t 60 start >/dev/null
  as_postgres "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qAt -c 'CREATE EXTENSION snowflake' postgres >/dev/null
}

# Stops the server this script started, by the PID in its postmaster.pid.
stop_server() {
  local pid
  [ -f "$DATA/postmaster.pid" ] || return 0
  pid=$(head -1 "$DATA/postmaster.pid")
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# Compiles and runs test/clients/java against Debian's JDBC driver and Hibernate 3.6 jars.
java_clients() {
  local jars=/usr/share/java cp
  cp=$(printf "$jars/%s:" hibernate-core.jar postgresql.jar dom4j.jar antlr.jar commons-collections3.jar slf4j-api.jar \
    slf4j-nop.jar geronimo-jta-1.2-spec.jar geronimo-jpa_2.0_spec.jar hibernate-commons-annotations.jar)
  rm -rf "$BUILD/clients/java" && mkdir -p "$BUILD/clients/java" &&
    javac -d "$BUILD/clients/java" -cp "$cp" "$HERE/java/HibernateBlocks.java" &&
    java -Dsnowflake.mapping="$HERE/java/item.hbm.xml" -cp "$BUILD/clients/java:$cp" HibernateBlocks
}

install_clients
start_server
export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres SNOWFLAKE_NODE=7
status=0
for eco in "${ECOSYSTEMS[@]}"; do
  echo "--- clients: $eco"
  case $eco in
    python) /usr/bin/python3 -m pytest -q -p no:cacheprovider "$HERE/python" || status=1 ;;
    js) (cd "$HERE/js" && node --test --test-concurrency=1 ./*.test.mjs) || status=1 ;;
    exporter) bash "$HERE/exporter.sh" || status=1 ;;
    php) php "$HERE/php/lastval.php" || status=1 ;;
    java) java_clients || status=1 ;;
    pgbouncer) CLIENTS_DIR=$BUILD/clients PG_BIN=$PG_BIN bash "$HERE/pgbouncer.sh" || status=1 ;;
  esac
done
exit $status
