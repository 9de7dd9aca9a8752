#!/usr/bin/env bash
# The step from the last release ($LAST_RELEASE) to this version and back, as docs/upgrading.md tells
# a DBA, under two clients inserting throughout, on a private copy of this PostgreSQL's installation
# under build/servers/rollback/pg (make install DESTDIR=... puts the extension there, so the
# machine's installation is left alone), removed when the suite passes. The last release's library
# is built from its release commit (cached under /var/cache/snowflake-rollback). Checks:
#   1. Before the restart: the setting the page names (snowflake.database) taken by ALTER SYSTEM
#      while the old version runs; the one this version adds (snowflake.mask_keys) refused then.
#   2. make install while the server runs: it writes a new library file (a new inode), and a backend
#      opened before and one opened after keep working, on the old library, with the same
#      postmaster. The update run now refuses (55000) with the page's HINT and changes nothing.
#   3. The restart: no misleading line in the first start's log, the node check ok before the update.
#   4. The page's loop updates every database that has the extension, and no other; following the
#      HINT of step 2 worked. The updated catalog equals a fresh install's (the fingerprint of
#      sql/upgrade.sql, grants and pg_init_privs included); the node check says ok; a dump restores
#      into a fresh server of this version with its view and grant.
#   5. Back to $LAST_RELEASE: the settings removed, the install, a stop checked as the page says (after
#      an immediate stop it does not start, and the page's way out works), a start.
#      It issues above every earlier ID, serves this version's catalog (every C function both have
#      runs; one it lacks fails naming its symbol), its node check is ok, and the dump taken on this
#      version restores there but for a grant on a function this version added, which pg_restore
#      reports. The setting this version added stops it from starting, naming it.
#   Throughout: 0 duplicates, every ID after each start above every earlier one, the clients' errors
#   only the restarts' (57P01, 57P03, connection refused or reset), and how long each step kept IDs from them.
# Usage, as root with the extension built: bash test/servers/rollback.sh (ports 26481, 26482).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root
ensure_packages git
SUITE_NAME=rollback
PREVIOUS=$LAST_RELEASE
CURRENT=$(control_version)
CACHE=/var/cache/snowflake-rollback/$LAST_RELEASE_COMMIT-pg$("$PG_CONFIG" --version | sed 's/^PostgreSQL //; s/[^A-Za-z0-9.]/_/g')
TREE=$SERVERS/$SUITE_NAME/pg
PORT=26481
FRESH_PORT=26482
CLIENTS=$SERVERS/$SUITE_NAME/clients
MASK_KEYS="A:2b7e151628aed2a6abf7158809cf4f3c"

# A copy of PostgreSQL's programs, libraries and shared files, without snowflake's: PostgreSQL finds
# its libraries and extension files relative to the program it runs, so a server started from the
# copy uses only what is installed in the copy.
rm -rf "$TREE"
for dir in "$("$PG_CONFIG" --bindir)" "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)"; do
  mkdir -p "$TREE$(dirname "$dir")" && cp -a "$dir" "$TREE$(dirname "$dir")/"
done
rm -rf "$TREE$("$PG_CONFIG" --pkglibdir)"/bitcode "$TREE$("$PG_CONFIG" --pkglibdir)"/snowflake.so \
  "$TREE$("$PG_CONFIG" --sharedir)"/extension/snowflake*
rm -rf "$CLIENTS" && mkdir -p "$CLIENTS" # a failed run's stop file would stop the clients at once
chmod -R a+rX "$SERVERS/$SUITE_NAME"
PGB=$TREE$("$PG_CONFIG" --bindir)
LIB=$TREE$("$PG_CONFIG" --pkglibdir)/snowflake.so

# The last release's library and scripts, built once from its release commit.
if [ ! -e "$CACHE/complete" ]; then
  echo "building $PREVIOUS's library from commit $LAST_RELEASE_COMMIT into $CACHE"
  rm -rf "$CACHE" && mkdir -p "$CACHE/src"
  release_source "$CACHE/src"
  make -C "$CACHE/src" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$CACHE/build.log" 2>&1 ||
    { tail -20 "$CACHE/build.log"; die "$PREVIOUS did not build (log: $CACHE/build.log)"; }
  touch "$CACHE/complete"
fi
# Installs into the copy, while servers run: $PREVIOUS (previous) or this checkout (current). $PREVIOUS's
# make install removes its library before it writes the new one (this version's renames it into place):
# its span goes to $CLIENTS/previous_installs, where a call can fail with 58P01 (docs/upgrading.md).
install_version() {
  local t0
  t0=$(now)
  make -C "$([ "$1" = previous ] && echo "$CACHE/src" || echo "$ROOT")" -s install PG_CONFIG="$PG_CONFIG" DESTDIR="$TREE" >/dev/null
  [ "$1" != previous ] || echo "$t0 $(now)" >>"$CLIENTS/previous_installs"
}

# SQL on server r in database $1 (for sql: SERVER_DATABASE).
sql_in() { SERVER_DATABASE=$1 sql r "$2"; }
# The fenced block of docs/upgrading.md after the first comment line that contains $1, as written
# (its indentation removed).
doc_block() {
  awk -v marker="$1" 'index($0, marker) && /<!--/ { armed = 1; next }
    armed && /^ *```[a-z]+$/ { indent = index($0, "`") - 1; inblock = 1; next }
    inblock && /^ *```$/ { exit } inblock { print substr($0, indent + 1) }' "$ROOT/docs/upgrading.md"
}
# Runs shell $1 as postgres, as a DBA on server r would: its programs first in PATH, libpq's
# environment and PGDATA set.
as_dba() {
  as_postgres env PATH="$PGB:$PATH" PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=postgres PGDATA="${SERVER_DIR[r]}/data" bash -c "$1"
}
now() { date +%s.%N; }

# Client $1: inserts 20 rows a statement into app's items, one connection a statement, until told
# to stop; each failed statement is one line of $CLIENTS/errors.$1 (its time, then what psql said),
# and the next try comes 50 ms later (its pace while the server is down).
client() {
  local n=$1 err
  while [ ! -e "$CLIENTS/stop" ]; do
    err=$("$PG_BIN/psql" "host=127.0.0.1 port=$PORT dbname=app user=postgres connect_timeout=10" -XAtq \
      -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "INSERT INTO items (client) SELECT $n FROM generate_series(1, 20)" \
      2>&1 >/dev/null) && continue
    echo "$(now) ${err//$'\n'/ }" >>"$CLIENTS/errors.$n"
    sleep 0.05
  done
}
stop_clients() {
  [ ${#CLIENT_PIDS[@]} -gt 0 ] || return 0
  touch "$CLIENTS/stop"
  wait "${CLIENT_PIDS[@]}" 2>/dev/null || true
  CLIENT_PIDS=()
}
# The rows the clients committed so far.
rows() { sql_in app "SELECT count(*) FROM items"; }
# A load phase: waits (at most 60 s) until the clients have committed 3,000 more rows.
load_phase() {
  local target=$(($(rows) + 3000))
  wait_for 60 eval '[ "$(rows)" -ge '"$target"' ]' || echo "the clients did not reach $target rows in 60 s"
}
STEPS=() # "step: gap" for each step timed
# The longest time, in seconds, between two rows the clients committed around the window from $2 to
# $3 (Unix times), recorded as step $1's.
record_gap() {
  STEPS+=("$1: $(sql_in app "SELECT coalesce(round(extract(epoch FROM max(gap))::numeric, 2), 0) FROM
    (SELECT at, at - lag(at) OVER (ORDER BY at) AS gap FROM items) g
    WHERE at > to_timestamp($2) AND at - gap < to_timestamp($3)") s")
}

section "$PREVIOUS, with two clients inserting"
install_version previous
server_init r "$PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1"
server_start r
for db in app "app one" plain; do sql r "CREATE DATABASE \"$db\"" >/dev/null; done
sql_in "app one" "CREATE EXTENSION snowflake" >/dev/null
sql r "CREATE ROLE watcher" >/dev/null
# The application's database: its table, a monitoring view and a role granted it.
sql_in app "CREATE EXTENSION snowflake;
  CREATE TABLE items (id bigint NOT NULL DEFAULT snowflake_nextval(), client integer,
                      started timestamptz DEFAULT pg_postmaster_start_time(), at timestamptz DEFAULT clock_timestamp());
  CREATE VIEW cluster_watch AS SELECT * FROM snowflake_cluster_nodes();
  GRANT SELECT ON cluster_watch TO watcher;
  GRANT EXECUTE ON FUNCTION snowflake_cluster_nodes() TO watcher" >/dev/null
check "the databases are at $PREVIOUS" [ "$(sql_in app "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$PREVIOUS" ]
echo "$PREVIOUS's node check, with snowflake.database at its default: $(sql_in app "SELECT node_check FROM snowflake_node_status()")"
CLIENT_PIDS=()
for n in 1 2; do
  client "$n" &
  CLIENT_PIDS+=($!)
done
CLEANUPS+=(stop_clients)
load_phase

section "1. the settings, before the restart"
t0=$(now)
settings=$(doc_block "(before the restart)")
check "docs/upgrading.md names snowflake.database before the restart" grep -q "snowflake.database" <<<"$settings"
# The page's database is app, as here.
psql_on r -c "$settings"
refused=$(psql_on r -v VERBOSITY=verbose -c "ALTER SYSTEM SET snowflake.mask_keys = '$MASK_KEYS'" 2>&1 || true)
check "$PREVIOUS refuses ALTER SYSTEM SET of the setting $CURRENT adds (42704)" grep -q "42704" <<<"$refused"

section "2. the install while the server runs"
postmaster=$(head -1 "${SERVER_DIR[r]}/data/postmaster.pid")
coproc SESSION { as_postgres "$PGB/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d app -XAtq 2>&1; }
session_pid=$SESSION_PID # bash unsets SESSION_PID once it has reaped the session, which may be before the wait
# Runs a statement in the session opened before the install; prints its one line of output.
in_session() {
  local line
  echo "$1" >&"${SESSION[1]}"
  read -r -t 30 line <&"${SESSION[0]}" && echo "$line"
}
check "a session opened before the install issues IDs" [ "$(in_session "SELECT count(snowflake_nextval()) FROM generate_series(1, 100);")" = 100 ]
inode=$(stat -c %i "$LIB")
install_version current
check "make install wrote a new file, not into the one the server runs (inode $inode, now $(stat -c %i "$LIB"))" \
  [ "$(stat -c %i "$LIB")" != "$inode" ]
check "... the session opened before it still issues IDs" \
  [ "$(in_session "SELECT count(snowflake_nextval()) FROM generate_series(1, 1000);")" = 1000 ]
check "... and so does a session opened after it" [ "$(sql_in app "SELECT count(snowflake_nextval()) FROM generate_series(1, 1000)")" = 1000 ]
echo '\q' >&"${SESSION[1]}"
wait "$session_pid" || true
early=$(SERVER_DATABASE=app psql_on r -v VERBOSITY=verbose -c "ALTER EXTENSION snowflake UPDATE" 2>&1 || true)
echo "$early" | sed 's/^/update before the restart: /'
check "the update before the restart refuses with 55000, naming the old library" \
  grep -q "ERROR:  55000: snowflake $CURRENT is installed, but this server still runs the library of an older version" <<<"$early"
check "... with the HINT to restart, then update" \
  grep -q "HINT:  Restart PostgreSQL, then run ALTER EXTENSION snowflake UPDATE again" <<<"$early"
check "... and changed nothing" [ "$(sql_in app "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$PREVIOUS" ]
load_phase
check "the same postmaster, no process lost to a signal" eval \
  '[ "$(head -1 "${SERVER_DIR[r]}/data/postmaster.pid")" = "$postmaster" ] && ! grep -q "terminated by signal" "${SERVER_DIR[r]}/log"'
record_gap "1-2. settings and install" "$t0" "$(now)"

section "3. the restart"
t0=$(now)
server_stop r
log_lines=$(wc -l <"${SERVER_DIR[r]}/log")
server_start r
load_phase
record_gap "3. restart" "$t0" "$(now)"
first_start=$(tail -n +"$((log_lines + 1))" "${SERVER_DIR[r]}/log")
{ grep -E "snowflake" <<<"$first_start" || true; } | sed 's/^/first start: /' | head -20
check "the first start of $CURRENT says nothing of a last clean shutdown missed, nor of a lost state file" \
  not grep -qE "did not write at its last clean shutdown|state file lost" <<<"$first_start"
check "the node check, in the database the settings named, is ok before the update" \
  wait_for 30 eval '[ "$(sql_in app "SELECT node_check FROM snowflake_node_status()")" = ok ]'

section "4. the update in every database"
loop=$(doc_block "rollback.sh runs it (the update)")
check "docs/upgrading.md has the loop" grep -q "ALTER EXTENSION snowflake UPDATE" <<<"$loop"
t0=$(now)
updated=$(as_dba "$loop" | LC_ALL=C sort | paste -sd,)
t1=$(now)
record_gap "4. update" "$t0" "$t1"
echo "the loop: $updated, in $(echo "($t1 - $t0) * 1000 / 1" | bc) ms for 2 databases"
check "the loop updated the databases with the extension, and no other: $updated" \
  [ "$updated" = "app one: $PREVIOUS -> $CURRENT,app: $PREVIOUS -> $CURRENT" ]
checks=$(doc_block "(the checks)")
check "the page's checks, in app: $CURRENT and ok (within 30 s)" wait_for 30 eval \
  '[ "$(SERVER_DATABASE=app psql_on r -At <<<"$checks" | paste -sd,)" = "$CURRENT,ok" ]'
# The catalog, against a fresh install's in another database with the same grant of the user's.
fingerprint=$(sed -n '/^SELECT \$catalog\$$/,/^\$catalog\$ AS catalog_query/p' "$ROOT/sql/upgrade.sql" | sed '1d;$d')
check "sql/upgrade.sql has the catalog's fingerprint query" grep -q "pg_init_privs" <<<"$fingerprint"
sql r "CREATE DATABASE fresh" >/dev/null
sql_in fresh "CREATE EXTENSION snowflake; GRANT EXECUTE ON FUNCTION snowflake_cluster_nodes() TO watcher" >/dev/null
upgraded=$(sql_in app "SELECT catalog FROM ($fingerprint) f")
fresh=$(sql_in fresh "SELECT catalog FROM ($fingerprint) f")
check "the updated catalog equals a fresh $CURRENT install's, grants included ($(sql_in fresh "SELECT entries FROM ($fingerprint) f") entries)" \
  [ "$upgraded" = "$fresh" ]
[ "$upgraded" = "$fresh" ] || diff <(tr '\036' '\n' <<<"$upgraded") <(tr '\036' '\n' <<<"$fresh") | head -20
# Public IDs' keys, as the page says: after the restart, ALTER SYSTEM and a reload.
sql r "ALTER SYSTEM SET snowflake.mask_keys = '$MASK_KEYS'" && sql r "SELECT pg_reload_conf()" >/dev/null
check "snowflake.mask_keys set after the restart, with a reload: public IDs work" \
  wait_for 10 eval '[ "$(sql_in app "WITH i AS (SELECT snowflake_nextval() AS id) SELECT snowflake_unmask_text(snowflake_mask_text(id)) = id FROM i")" = t ]'
# A dump after the update, into a fresh server of this version; with a grant on a function this
# version added, which the server that goes back lacks.
sql_in app "GRANT EXECUTE ON FUNCTION snowflake_mask_text(bigint) TO watcher"
dump=${SERVER_DIR[r]}/app.dump
SERVER_DATABASE=app on_server r "$PGB/pg_dump" -Fc -f "$dump"
dumped=$(as_postgres "$PGB/pg_restore" -f - "$dump" | grep -c "^COPY public.items" || true)
server_init fresh "$FRESH_PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 2"
server_start fresh
sql fresh "CREATE ROLE watcher" >/dev/null && sql fresh "CREATE DATABASE app" >/dev/null
restore=$(SERVER_DATABASE=app on_server fresh "$PGB/pg_restore" -d app "$dump" 2>&1) && status=0 || status=$?
check "the dump taken after the update restores into a fresh $CURRENT server: exit $status, no message" \
  [ "$status:$restore:$dumped" = "0::1" ]
check "... with its rows, view and grants, at $CURRENT" [ "$(SERVER_DATABASE=app sql fresh "SELECT count(*) > 0 AND count(*) = count(DISTINCT id)
  FROM items")|$(SERVER_DATABASE=app sql fresh "SELECT count(*) FROM cluster_watch")|$(SERVER_DATABASE=app sql fresh \
  "SELECT has_function_privilege('watcher', 'snowflake_cluster_nodes()', 'EXECUTE') AND has_table_privilege('watcher', 'cluster_watch', 'SELECT')
     AND (SELECT proacl::text LIKE '%watcher=X/%' FROM pg_proc WHERE oid = 'snowflake_mask_text(bigint)'::regprocedure)")|$(SERVER_DATABASE=app sql fresh \
  "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "t|1|t|$CURRENT" ]
server_stop fresh
load_phase

section "5. back to $PREVIOUS"
sql r "ALTER SYSTEM RESET snowflake.mask_keys" && sql r "SELECT pg_reload_conf()" >/dev/null
install_version previous
# First a stop that is no clean shutdown, as after a crash: the page's check says so, $PREVIOUS does
# not start, and the page's way out (this version again, a clean stop, $PREVIOUS) works.
stopped=$(doc_block "rollback.sh runs it (the clean stop)")
as_postgres "$PGB/pg_ctl" -D "${SERVER_DIR[r]}/data" -m immediate stop >/dev/null
clean=$(as_dba "$stopped")
check "after a stop -m immediate, the page's check does not say shut down: $clean" \
  not grep -qE "^Database cluster state: +shut down$" <<<"$clean"
check "$PREVIOUS does not start from it: resource manager 163 not registered" \
  eval '! server_start r >/dev/null 2>&1 && grep -q "resource manager with ID 163 not registered" "${SERVER_DIR[r]}/log"'
install_version current
server_start r
load_phase
t0=$(now)
server_stop r
install_version previous
clean=$(as_dba "$stopped")
echo "the page's check after the clean stop: $clean"
check "pg_control says the stop was clean, as the page asks" grep -qE "^Database cluster state: +shut down$" <<<"$clean"
server_start r
load_phase
record_gap "5. back to $PREVIOUS: the clean stop, the start" "$t0" "$(now)"
check "the library now running is $PREVIOUS's" cmp -s "$LIB" "$CACHE/src/snowflake.so"
check "the catalog is still this version's ($CURRENT)" \
  [ "$(sql_in app "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$CURRENT" ]
check "$PREVIOUS issues IDs: state ok" [ "$(sql_in app "SELECT state FROM snowflake_stats()")" = ok ]
check "$PREVIOUS's node check, in the database the settings named, is ok" \
  wait_for 30 eval '[ "$(sql_in app "SELECT node_check FROM snowflake_node_status()")" = ok ]'
# Every C function of the catalog, called with NULL arguments (so that those with arguments only
# resolve their symbol), after a first ID so that snowflake_lastval() has one to return. The NULLs
# come from a subquery the planner keeps (OFFSET 0): a strict function called with a NULL constant
# is folded to NULL while planning, and its symbol never looked up.
sql_in app "CREATE TABLE calls AS SELECT NULL::text AS symbol, NULL::text AS error LIMIT 0;
  DO \$\$
  DECLARE f record;
  BEGIN
    PERFORM snowflake_nextval();
    FOR f IN SELECT p.oid::regprocedure AS sig, p.prosrc, p.proname, p.pronamespace::regnamespace AS nsp,
                    (SELECT string_agg('a.a' || n, ', ' ORDER BY n) FROM unnest(p.proargtypes) WITH ORDINALITY u(t, n)) AS args,
                    (SELECT string_agg('NULL::' || format_type(t, NULL) || ' AS a' || n, ', ' ORDER BY n)
                     FROM unnest(p.proargtypes) WITH ORDINALITY u(t, n)) AS nulls
             FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
             WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
               AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
               AND NOT EXISTS (SELECT FROM unnest(p.proargtypes) t JOIN pg_type ty ON ty.oid = t WHERE ty.typtype = 'p') LOOP
      BEGIN
        EXECUTE format('SELECT %s.%I(%s) FROM (SELECT %s OFFSET 0) a', f.nsp, f.proname, coalesce(f.args, ''),
                       coalesce(f.nulls, '1 AS a0'));
        INSERT INTO calls VALUES (f.prosrc, NULL);
      EXCEPTION WHEN OTHERS THEN
        INSERT INTO calls VALUES (f.prosrc, SQLSTATE || ' ' || SQLERRM);
      END;
    END LOOP;
  END \$\$" >/dev/null
lacking=$(comm -23 <(sql_in app "SELECT symbol FROM calls" | sort -u) \
  <(nm -D --defined-only "$CACHE/src/snowflake.so" | awk '{print $3}' | sort -u) | paste -sd' ')
failed=$(sql_in app "SELECT symbol || ': ' || error FROM calls WHERE error IS NOT NULL ORDER BY 1")
echo "C functions of this version that $PREVIOUS's library lacks: ${lacking:-none}"
# snowflake_adopt_layout() runs, and refuses as it should with nothing to adopt.
others=$(grep -v -e ': 42883 could not find function' \
  -e '^snowflake_adopt_layout: 55000 there is no new snowflake epoch or layout to adopt$' <<<"$failed" || true)
check "every other C function of the catalog runs on $PREVIOUS's library" [ -z "$others" ]
for symbol in $lacking; do
  check "$symbol fails naming its symbol (42883)" grep -q "^$symbol: 42883 could not find function \"$symbol\"" <<<"$failed"
done
[ -n "$failed" ] && echo "$failed" | sed 's/^/failed: /'
sql r "CREATE DATABASE restored" >/dev/null
restore=$(SERVER_DATABASE=restored on_server r "$PGB/pg_restore" -d restored "$dump" 2>&1) && status=0 || status=$?
echo "$restore" | sed 's/^/pg_restore on the server that went back: /' | head -10
# As the page says: pg_restore reports each object of the user's on a function $CURRENT added (here
# the grant), exits with 1, and restores everything else.
check "the dump taken on $CURRENT restores on the server that went back, but for the grant on a function $CURRENT added" \
  eval '[ "$status" = 1 ] && [ "$(grep -c "ERROR: " <<<"$restore")" = 1 ] &&
    grep -q "ERROR:  function public.snowflake_mask_text(bigint) does not exist" <<<"$restore"'
check "... with its rows, view and grant, the extension at $PREVIOUS" [ "$(sql_in restored "SELECT count(*) > 0 AND count(*) = count(DISTINCT id)
  FROM items")|$(sql_in restored "SELECT count(*) FROM cluster_watch")|$(sql_in restored \
  "SELECT has_function_privilege('watcher', 'snowflake_cluster_nodes()', 'EXECUTE') AND has_table_privilege('watcher', 'cluster_watch', 'SELECT')")|$(sql_in restored \
  "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "t|1|t|$PREVIOUS" ]

# The setting this version added, left in postgresql.conf: $PREVIOUS does not start, naming it.
server_stop r
conf=${SERVER_DIR[r]}/data/postgresql.conf
echo "snowflake.mask_keys = '$MASK_KEYS'" >>"$conf"
check "the setting $CURRENT added stops $PREVIOUS from starting, naming it" \
  eval '! server_start r >/dev/null 2>&1 && grep -q "unrecognized configuration parameter \"snowflake.mask_keys\"" "${SERVER_DIR[r]}/log"'
sed -i '/^snowflake\.mask_keys = /d' "$conf"
server_start r
load_phase

section "throughout"
stop_clients
starts=$(sql_in app "SELECT count(DISTINCT started) FROM items")
echo "rows: $(rows), from $starts starts; client errors: $(cat "$CLIENTS"/errors.* 2>/dev/null | wc -l)"
check "the clients' rows come from each of the 5 starts" [ "$starts" = 5 ]
check "0 duplicates" [ "$(sql_in app "SELECT count(*) - count(DISTINCT id) FROM items")" = 0 ]
check "every ID after each start is above every ID before it" [ "$(sql_in app "SELECT count(*) FROM
  (SELECT started, min(id) AS first FROM items GROUP BY started) s
  WHERE s.first <= (SELECT max(id) FROM items i WHERE i.started < s.started)")" = 0 ]
# Each failed statement by what ended it: the restarts' own, $PREVIOUS's install's (58P01 within its
# span, and 0.1 s after), or anything else.
classify() {
  cat "$CLIENTS"/errors.* 2>/dev/null | awk -v spans="$(cat "$CLIENTS/previous_installs" 2>/dev/null)" '
    BEGIN { n = split(spans, s, /[ \n]+/) }
    /58P01/ { for (i = 1; i + 1 <= n; i += 2) if ($1 >= s[i] && $1 <= s[i + 1] + 0.1) { print "58P01 during the install of '"$PREVIOUS"'"; next } }
    { sub(/^[0-9.]+ /, "") }
    /57P01|terminating connection due to administrator command/ { print "57P01"; next }
    /57P03|the database system is (starting up|shutting down|not yet accepting connections)/ { print "57P03"; next }
    /Connection refused/ { print "connection refused"; next }
    /Connection reset by peer/ { print "connection reset (a stop closed its listening socket)"; next }
    /server closed the connection unexpectedly/ { print "connection lost (the stop -m immediate)"; next }
    { print "other: " $0 }' | sort | uniq -c
}
classify | sed 's/^/client errors: /'
check "the clients' only errors are the restarts' (57P01, 57P03, connection refused or reset, lost at the stop -m immediate), and 58P01 only while $PREVIOUS's make install ran" \
  not eval 'classify | grep -q "other: "'
check "... and no server process was lost to a signal" not grep -q "terminated by signal" "${SERVER_DIR[r]}/log"
printf 'how long each step kept IDs from the clients (the longest gap between rows): %s\n' "$(printf '%s; ' "${STEPS[@]}")"
section

server_stop r
# Passed: the copy of PostgreSQL and the data directory go; after a failure they stay to be read.
finish && rm -rf "${SERVERS:?}/$SUITE_NAME"
