#!/usr/bin/env bash
# Installing over a running server, finding the databases to update, and going back to the
# previous release, as docs/upgrading.md tells them, on a private copy of this PostgreSQL's
# installation under build/servers/rollback/pg (make install DESTDIR=... puts the extension
# there, so the machine's installation is left alone), removed when the suite passes. Checks:
#   1. make install while a server runs: it writes a new library file (a new inode) instead of
#      writing into the one the server's processes run, and a backend opened before and one
#      opened after keep working, on the old library, until the restart.
#   2. docs/upgrading.md's loop, as written there, lists every database that has the
#      extension, with its version, and no other.
#   3. Back to 0.4.0: its library, built from its release commit (cached under
#      /var/cache/snowflake-rollback), installed with make install while the server runs, then
#      a restart. It reads the state file this version wrote (new IDs above every ID issued
#      before), serves this version's catalog (every C function both have runs, snowflake_stats()
#      among them, whose columns stay for that reason), a C function it lacks fails naming its symbol,
#      and snowflake_cluster_nodes() still lists the server. A setting 0.4.0 does not know
#      (snowflake.node_source) stops it from starting; removed, with snowflake.node set, it starts.
# Usage, as root with the extension built: bash test/servers/rollback.sh (port 26481).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root
ensure_packages git
SUITE_NAME=rollback
PREVIOUS=0.4.0 PREVIOUS_COMMIT=6a63514
CACHE=/var/cache/snowflake-rollback/$PREVIOUS_COMMIT-pg$("$PG_CONFIG" --version | sed 's/^PostgreSQL //; s/[^A-Za-z0-9.]/_/g')
TREE=$SERVERS/$SUITE_NAME/pg
PORT=26481

# A copy of PostgreSQL's programs, libraries and shared files, without snowflake's: PostgreSQL finds
# its libraries and extension files relative to the program it runs, so a server started from the
# copy uses only what is installed in the copy.
rm -rf "$TREE"
for dir in "$("$PG_CONFIG" --bindir)" "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)"; do
  mkdir -p "$TREE$(dirname "$dir")" && cp -a "$dir" "$TREE$(dirname "$dir")/"
done
rm -rf "$TREE$("$PG_CONFIG" --pkglibdir)"/bitcode "$TREE$("$PG_CONFIG" --pkglibdir)"/snowflake.so \
  "$TREE$("$PG_CONFIG" --sharedir)"/extension/snowflake*
chmod -R a+rX "$SERVERS/$SUITE_NAME"
PGB=$TREE$("$PG_CONFIG" --bindir)
LIB=$TREE$("$PG_CONFIG" --pkglibdir)/snowflake.so
make -C "$ROOT" -s install PG_CONFIG="$PG_CONFIG" DESTDIR="$TREE" >/dev/null

server_init r "$PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 1"
server_start r
postmaster=$(head -1 "${SERVER_DIR[r]}/data/postmaster.pid")
sql r "CREATE EXTENSION snowflake; CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
  INSERT INTO items SELECT FROM generate_series(1, 1000)" >/dev/null

echo "--- 1. make install while the server runs"
coproc SESSION { as_postgres "$PGB/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -XAtq 2>&1; }
# Runs a statement in the session opened before the install; prints its one line of output.
in_session() {
  local line
  echo "$1" >&"${SESSION[1]}"
  read -r -t 30 line <&"${SESSION[0]}" && echo "$line"
}
check "a session opened before the install issues IDs" [ "$(in_session "WITH i AS (INSERT INTO items SELECT FROM
  generate_series(1, 100) RETURNING 1) SELECT count(*) FROM i;")" = 100 ]
inode=$(stat -c %i "$LIB")
make -C "$ROOT" -s install PG_CONFIG="$PG_CONFIG" DESTDIR="$TREE" >/dev/null
check "make install wrote a new file, not into the one the server runs (inode $inode, now $(stat -c %i "$LIB"))" \
  [ "$(stat -c %i "$LIB")" != "$inode" ]
check "... the session opened before it still issues IDs" \
  [ "$(in_session "SELECT count(snowflake_nextval()) FROM generate_series(1, 1000);")" = 1000 ]
check "... and so does a session opened after it" [ "$(sql r "SELECT count(snowflake_nextval()) FROM generate_series(1, 1000)")" = 1000 ]
check "... with the same postmaster, no process lost to a signal" eval \
  '[ "$(head -1 "${SERVER_DIR[r]}/data/postmaster.pid")" = "$postmaster" ] && ! grep -q "terminated by signal" "${SERVER_DIR[r]}/log"'
echo '\q' >&"${SESSION[1]}"
wait "$SESSION_PID" || true

echo "--- 2. every database that has the extension"
sql r "CREATE DATABASE \"app one\"" >/dev/null && sql r "CREATE DATABASE plain" >/dev/null
as_postgres "$PGB/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d "app one" -XAtq -c "CREATE EXTENSION snowflake VERSION '$PREVIOUS'"
# The ```sh block of docs/upgrading.md after the line that names this file, run as written.
loop=$(awk '/test\/servers\/rollback.sh runs it/ { armed = 1; next }
  armed && /^ *```sh$/ { indent = index($0, "`") - 1; inblock = 1; next }
  inblock && /^ *```$/ { exit } inblock { print substr($0, indent + 1) }' "$ROOT/docs/upgrading.md")
check "docs/upgrading.md has the loop" [ -n "$loop" ]
found=$(as_postgres env PATH="$PGB:$PATH" PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=postgres bash -c "$loop" | sort | paste -sd,)
check "it lists the databases with the extension and their versions: $found" \
  [ "$found" = "app one|$PREVIOUS,postgres|$(control_version)" ]

echo "--- 3. back to $PREVIOUS"
if [ ! -e "$CACHE/complete" ]; then
  echo "building $PREVIOUS's library from commit $PREVIOUS_COMMIT into $CACHE"
  rm -rf "$CACHE" && mkdir -p "$CACHE/src"
  git -C "$ROOT" archive "$PREVIOUS_COMMIT" | tar -x -C "$CACHE/src"
  make -C "$CACHE/src" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$CACHE/build.log" 2>&1 ||
    { tail -20 "$CACHE/build.log"; die "$PREVIOUS did not build (log: $CACHE/build.log)"; }
  touch "$CACHE/complete"
fi
last=$(sql r "SELECT max(id) FROM items")
make -C "$CACHE/src" -s install PG_CONFIG="$PG_CONFIG" DESTDIR="$TREE" >/dev/null
server_stop r
server_start r
check "the library now running is $PREVIOUS's" cmp -s "$LIB" "$CACHE/src/snowflake.so"
check "the catalog is still this version's ($(control_version))" \
  [ "$(sql r "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$(control_version)" ]
check "$PREVIOUS reads the state file this version wrote: state ok, new IDs above every ID issued before" \
  [ "$(sql r "SELECT state FROM snowflake_stats()")|$(sql r "INSERT INTO items DEFAULT VALUES RETURNING id > $last")" = "ok|t" ]
# Every C function of the catalog, called with NULL arguments (so that those with arguments only
# resolve their symbol), after a first ID so that snowflake_lastval() has one to return. The NULLs
# come from a subquery the planner keeps (OFFSET 0): a strict function called with a NULL constant
# is folded to NULL while planning, and its symbol never looked up.
sql r "CREATE TABLE calls AS SELECT NULL::text AS symbol, NULL::text AS error LIMIT 0;
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
lacking=$(comm -23 <(sql r "SELECT symbol FROM calls" | sort -u) \
  <(nm -D --defined-only "$CACHE/src/snowflake.so" | awk '{print $3}' | sort -u) | paste -sd' ')
failed=$(sql r "SELECT symbol || ': ' || error FROM calls WHERE error IS NOT NULL ORDER BY 1")
echo "C functions of this version that $PREVIOUS's library lacks: ${lacking:-none}"
others=$(grep -v ': 42883 could not find function' <<<"$failed" || true)
check "every other C function of the catalog runs on $PREVIOUS's library" [ -z "$others" ]
for symbol in $lacking; do
  check "$symbol fails naming its symbol (42883)" grep -q "^$symbol: 42883 could not find function \"$symbol\"" <<<"$failed"
done
[ -n "$failed" ] && echo "$failed" | sed 's/^/failed: /'
check "snowflake_cluster_nodes() lists the server on $PREVIOUS's library, its node_source unknown" \
  [ "$(sql r "SELECT node || ' ' || coalesce(problem, 'fine') || ' ' || coalesce(node_source, 'NULL') FROM snowflake_cluster_nodes()")" = "1 fine NULL" ]

# A server that took its node from snowflake.node_source: 0.4.0 does not start with a setting it does
# not know; without it, and with snowflake.node naming the node, it does (docs/upgrading.md).
server_stop r
conf=${SERVER_DIR[r]}/data/postgresql.conf
sed -i '/^snowflake\.node = /d' "$conf"
echo "snowflake.node_source = 'env:SNOWFLAKE_ROLLBACK_NODE'" >>"$conf"
check "a setting this version added stops $PREVIOUS from starting, naming it" \
  eval '! server_start r >/dev/null 2>&1 && grep -q "unrecognized configuration parameter \"snowflake.node_source\"" "${SERVER_DIR[r]}/log"'
sed -i '/^snowflake\.node_source = /d' "$conf"
echo "snowflake.node = 1" >>"$conf"
server_start r
check "... removed, and snowflake.node set to the node, $PREVIOUS issues IDs above every ID before" \
  [ "$(sql r "INSERT INTO items DEFAULT VALUES RETURNING id > $last")" = t ]

server_stop r
# Passed: the copy of PostgreSQL and the data directory go; after a failure they stay to be read.
finish && rm -rf "${SERVERS:?}/$SUITE_NAME"
