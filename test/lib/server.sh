# The one harness for scratch PostgreSQL servers (sourced, not run): every shell suite under test/
# makes, starts, queries and stops its servers through it, and nothing else under test/ runs initdb
# but the set-up docs/citus.md quotes (test/servers/citus/setup.sh; server_adopt registers its servers).
# A suite sets SUITE_NAME, then calls server_init NAME PORT [postgresql.conf line...]: server NAME
# lives in build/servers/SUITE_NAME/NAME/ (data/, log, and its Unix socket), initialised for user
# postgres with trust authentication, UTF8 and the C locale, listening on 127.0.0.1:PORT and on
# that socket (SERVER_LISTEN= before server_init: on the socket alone), with fsync off. The
# suite's own lines come after those, so they win (a benchmark passes "fsync = on"). Servers run as
# the postgres system user; the script runs as root. When the script exits, however it exits, the
# exit trap runs the suite's CLEANUPS, then stops every server by its postmaster's PID; after a
# passing run (exit status 0) it removes build/servers/SUITE_NAME/, after a failure it keeps it.
# Clients reach each server's database SERVER_DATABASE (postgres unless the suite sets it). It also
# holds the few assertions the suites share (check, not, wait_for, finish, show_logs).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

require_root

SERVERS=$BUILD/servers
PGB=$PG_BIN
declare -A SERVER_DIR=()  # name -> the server's directory: data/, log, the socket
declare -A SERVER_PORT=() # name -> its port
declare -A SERVER_HOST=() # name -> its socket directory, when it listens on no TCP address
declare -A SERVER_WRAPPER=() # name -> the PID of the command it was started under (server_start NAME COMMAND...)
CLEANUPS=()               # commands the exit trap runs first (Patroni, etcd, a suite's own processes)
failures=0

# Stops every process this suite started, by PID, then every server; removes the suite's servers'
# directory after a passing run. Runs on exit.
cleanup() {
  local status=$? cmd name
  for cmd in "${CLEANUPS[@]}"; do eval "$cmd" || true; done
  for name in "${!SERVER_DIR[@]}"; do server_stop "$name" || true; done
  if [ "$status" -eq 0 ] && [ ${#SERVER_DIR[@]} -gt 0 ]; then rm -rf "${SERVERS:?}/${SUITE_NAME:?}"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Registers server $1 on port $2, whose data directory something else makes (initdb here;
# pg_basebackup, Patroni) in $SERVERS/$SUITE_NAME/$1/data: that directory's parent, made empty and
# owned by postgres.
server_adopt() {
  local name=$1 dir
  dir=$SERVERS/${SUITE_NAME:?set SUITE_NAME before making servers}/$name
  [ ${#SERVER_DIR[@]} -gt 0 ] || require_readable_tree # once, when the first server is made
  rm -rf "$dir" && mkdir -p "$dir" && chmod 755 "$BUILD" "$SERVERS" "$SERVERS/$SUITE_NAME" && chown postgres "$dir"
  SERVER_DIR[$name]=$dir
  SERVER_PORT[$name]=$2
  unset "SERVER_HOST[$name]"
}

# Makes a fresh data directory for server $1 on port $2 under $SERVERS/$SUITE_NAME, with the
# remaining arguments as extra postgresql.conf lines.
server_init() {
  local name=$1 port=$2 listen=${SERVER_LISTEN-127.0.0.1}
  shift 2
  server_adopt "$name" "$port"
  as_postgres "$PGB/initdb" -D "${SERVER_DIR[$name]}/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
  printf '%s\n' "listen_addresses = '$listen'" "port = $port" "unix_socket_directories = '${SERVER_DIR[$name]}'" \
    "fsync = off" "log_line_prefix = '%m [%p] '" "$@" >>"${SERVER_DIR[$name]}/data/postgresql.conf"
  if [ -z "$listen" ]; then SERVER_HOST[$name]=${SERVER_DIR[$name]}; fi
}

# Where clients reach server $1: its socket directory when it listens on no TCP address, else 127.0.0.1.
server_host() {
  echo "${SERVER_HOST[$1]:-127.0.0.1}"
}

# Starts server $1 and waits (up to 60 s) until it accepts connections; prints its log's tail if it
# does not. With a command after the name (strace ...), the postmaster runs under that command
# instead of pg_ctl, in the background.
server_start() {
  local name=$1 dir=${SERVER_DIR[$1]} deadline=$((SECONDS + 60))
  shift
  if [ $# -eq 0 ]; then
    as_postgres "$PGB/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null || { tail -20 "$dir/log"; return 1; }
    return 0
  fi
  as_postgres bash -c 'log=$1; shift; exec "$@" >>"$log" 2>&1' - "$dir/log" "$@" "$PGB/postgres" -D "$dir/data" &
  SERVER_WRAPPER[$name]=$!
  until as_postgres "$PGB/pg_isready" -q -h "$(server_host "$name")" -p "${SERVER_PORT[$name]}"; do
    kill -0 "${SERVER_WRAPPER[$name]}" 2>/dev/null && [ $SECONDS -lt $deadline ] || { tail -20 "$dir/log"; return 1; }
    sleep 0.2
  done
}

# Starts server $1 as server_start does, its postmaster with host name $2, in a UTS namespace of its
# own (unshare --uts: the machine keeps its name), and with the environment variables NAME=value
# that follow: a pod of a StatefulSet, say, as the server sees it.
server_start_on_host() {
  local name=$1 host=$2 dir=${SERVER_DIR[$1]}
  shift 2
  (cd "$ROOT" && unshare --uts sh -c 'hostname "$1" && shift && exec runuser -u postgres -- env "$@"' - "$host" "$@" \
    "$PGB/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null) || { tail -20 "$dir/log"; return 1; }
}

# Stops server $1 by its postmaster's PID (fast shutdown), waiting up to 30 s, then SIGKILL; then
# waits for the command it was started under, if any.
server_stop() {
  local pid wrapper=${SERVER_WRAPPER[$1]:-}
  if pid=$(head -1 "${SERVER_DIR[$1]}/data/postmaster.pid" 2>/dev/null) && kill -INT "$pid" 2>/dev/null; then
    wait_for 30 eval "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null || true
  fi
  [ -z "$wrapper" ] || wait "$wrapper" 2>/dev/null || true
  SERVER_WRAPPER[$1]=
}

# Runs a command as postgres with libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE) set to
# server $1's database: SERVER_DATABASE, postgres unless the suite sets it.
on_server() {
  local name=$1
  shift
  as_postgres env PGHOST="$(server_host "$name")" PGPORT="${SERVER_PORT[$name]}" PGUSER=postgres PGDATABASE="${SERVER_DATABASE:-postgres}" "$@"
}

# psql on server $1 (without psqlrc, quiet, stopping at the first error), with the remaining arguments.
psql_on() {
  local name=$1
  shift
  on_server "$name" "$PGB/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

# Runs SQL on server $1 (its database, as on_server says) and prints the result unaligned, without headers.
sql() {
  psql_on "$1" -At -c "$2"
}

# Runs the SQL file $2 on server $1 with psql variables from the remaining name=value arguments.
sql_file() {
  local name=$1 file=$2 vars=() kv
  shift 2
  for kv in "$@"; do vars+=(-v "$kv"); done
  psql_on "$name" -At "${vars[@]}" -f "$file"
}

# The libpq connection string of server $1.
dsn() {
  echo "host=$(server_host "$1") port=${SERVER_PORT[$1]} dbname=${SERVER_DATABASE:-postgres} user=postgres"
}

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

# The suite's verdict: prints the failure count and fails if any check failed.
finish() {
  [ "$failures" -eq 0 ] && echo "$SUITE_NAME: all checks passed" && return 0
  echo "$SUITE_NAME: $failures check(s) failed"
  return 1
}
