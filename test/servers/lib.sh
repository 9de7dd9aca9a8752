# Shared by the suites under test/servers/ (sourced, not run): scratch
# PostgreSQL servers on 127.0.0.1, ports 56400-56599, data under
# build/servers/<suite>/, each stopped by its postmaster's PID when the suite
# exits (trap), however it exits; and the few assertions the suites share.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

SERVERS=$BUILD/servers
PGB=$PG_BIN
declare -A SERVER_DIR=() # name -> data directory of the servers this suite made
declare -A SERVER_PORT=()
CLEANUPS=() # extra commands the exit trap runs first (Patroni, etcd)
failures=0

# Stops every process this suite started, by PID, then every server; runs on exit.
cleanup() {
  local cmd name
  for cmd in "${CLEANUPS[@]}"; do eval "$cmd" || true; done
  for name in "${!SERVER_DIR[@]}"; do server_stop "$name" || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Prints the last 15 ERROR, FATAL and WARNING lines (and lines matching the extended regular expression $1)
# of each server's log, so that a CI log alone explains a failure.
show_logs() {
  local n pattern="ERROR|FATAL|WARNING${1:+|$1}"
  for n in "${!SERVER_DIR[@]}"; do
    echo "--- $n: its last lines matching $pattern"
    grep -E "$pattern" "${SERVER_DIR[$n]}/log" | tail -15 || true
  done
}

# Prints a check's result and counts a failure; usage: check "what" test-command...
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}

# Succeeds when the command fails (for check).
not() { ! "$@"; }

# Waits up to $1 seconds for a command to succeed (polling every 0.2 s); fails after that.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# Makes a fresh data directory for server $1 on port $2 under $SERVERS/$SUITE_NAME, with the
# remaining arguments as extra postgresql.conf lines.
server_init() {
  local name=$1 port=$2 dir
  shift 2
  dir=$SERVERS/$SUITE_NAME/$name
  rm -rf "$dir" && mkdir -p "$dir" && chmod 755 "$BUILD" "$SERVERS" "$SERVERS/$SUITE_NAME" && chown postgres "$dir"
  as_postgres "$PGB/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
  printf '%s\n' "listen_addresses = '127.0.0.1'" "port = $port" "unix_socket_directories = '$dir'" \
    "fsync = off" "log_line_prefix = '%m [%p] '" "$@" >>"$dir/data/postgresql.conf"
  SERVER_DIR[$name]=$dir
  SERVER_PORT[$name]=$port
}

# Starts server $1 (waits until it accepts connections).
server_start() {
  local dir=${SERVER_DIR[$1]}
  as_postgres "$PGB/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null ||
    { tail -20 "$dir/log"; return 1; }
}

# Stops server $1 by its postmaster's PID (fast shutdown), waiting up to 30 s, then SIGKILL.
server_stop() {
  local pid
  pid=$(head -1 "${SERVER_DIR[$1]}/data/postmaster.pid" 2>/dev/null) || return 0
  kill -INT "$pid" 2>/dev/null || return 0
  wait_for 30 eval "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null || true
}

# Every statement the suites run ends within 2 minutes, whatever happens to the servers.
export PGOPTIONS="-c statement_timeout=120s"

# Runs SQL on server $1 (database postgres) and prints the result unaligned, without headers.
sql() {
  as_postgres "$PGB/psql" -h 127.0.0.1 -p "${SERVER_PORT[$1]}" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$2"
}

# Runs the SQL file $2 on server $1 with psql variables from the remaining name=value arguments.
sql_file() {
  local name=$1 file=$2 vars=() kv
  shift 2
  for kv in "$@"; do vars+=(-v "$kv"); done
  as_postgres "$PGB/psql" -h 127.0.0.1 -p "${SERVER_PORT[$name]}" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 \
    "${vars[@]}" -f "$file"
}

# The libpq connection string of server $1.
dsn() {
  echo "host=127.0.0.1 port=${SERVER_PORT[$1]} dbname=postgres user=postgres"
}

# The suite's verdict: prints the failure count and fails if any check failed.
finish() {
  [ "$failures" -eq 0 ] && echo "$SUITE_NAME: all checks passed" && return 0
  echo "$SUITE_NAME: $failures check(s) failed"
  return 1
}
