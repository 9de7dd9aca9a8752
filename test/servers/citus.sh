#!/usr/bin/env bash
# Citus: a coordinator (node 1) and two workers (nodes 2 and 3) on 127.0.0.1,
# preloading citus,snowflake, with Citus built from the vendored source
# (shared/vendor/citus/ next to the checkout, or $SNOWFLAKE_CITUS_VENDOR):
# 13.2.2 on PostgreSQL 15, 14.0.1 on 16 to 18. The build is cached under
# /var/cache/snowflake-citus/, keyed on the Citus tag, the full PostgreSQL
# version and the hash of the build recipe (the fix, test/servers/citus/*.sed,
# and the configure options), so a second run only copies the installed files back. The suite checks:
#   1. CREATE EXTENSION snowflake on the coordinator reaches every worker, one
#      added afterwards included; snowflake_cluster_nodes() lists all three.
#   2. The node that makes each insert path's IDs: single-row, multi-row, COPY,
#      INSERT ... SELECT from generate_series and from a local table (the
#      coordinator); INSERT ... SELECT between colocated tables (the worker
#      holding each source row); an insert on a worker (that worker); a
#      reference table, identical on every server.
#   3. Four pgbench clients on each of the three servers at once: 0 duplicates,
#      every row on the node of the server it went through.
#   4. A time-range filter reaching every shard as an Index Cond on its key.
#   5. A shard move under inserts: every acknowledged row there once, rows in
#      the moved shard during the move; on the new worker, the move's catch-up
#      rows are "dropped origin" rows that flag no shared node, and
#      snowflake_node_origins() on the distributed table says it cannot tell.
#   6. snowflake_convert_column() on a distribution column: refused (0A000)
#      with a HINT whose statements (test/servers/citus/convert_steps.sql) then
#      convert it; on a reference table's key and on a key that is not the
#      distribution column it converts in place. The UPDATE and colocation
#      limits, and both backfill recipes.
#   7. The node check: two workers on one node (flagged, with a WARNING, and
#      then shown to make duplicates), a worker with no node, and a fourth
#      server with another epoch, another layout, without snowflake preloaded,
#      without the extension, and stopped: each flagged on that server alone.
#   8. Every docs/citus.md block that needs a Citus cluster stands, line for
#      line, in a file of test/servers/citus/ that this suite runs.
#   9. A role with CREATE on public plants, on every server, a json_build_object()
#      that matches the node check's probe better than pg_catalog's: 0.4.0's
#      probe, unqualified, runs it (it makes its owner superuser); a superuser's
#      snowflake_cluster_nodes() does not.
# Usage, as root with the extension installed: bash test/servers/citus.sh
# (ports 56460-56463; CITUS_SECONDS sets the length of the pgbench runs).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITE_NAME=citus
HERE=$ROOT/test/servers/citus
CITUS_CACHE=/var/cache/snowflake-citus
SECONDS_PER_RUN=${CITUS_SECONDS:-8}
case $PG_MAJOR in
  15) CITUS_VERSION=13.2.2 ;;
  16 | 17 | 18) CITUS_VERSION=14.0.1 ;;
  *) die "no Citus release supports PostgreSQL $PG_MAJOR (13.2.2: 15 to 17; 14.0.1: 16 to 18)" ;;
esac
TARBALL=$CITUS_VENDOR/citus-$CITUS_VERSION.tar.gz
[ -r "$TARBALL" ] || die "the citus suite builds Citus $CITUS_VERSION from $TARBALL, which is missing: put the" \
  "vendored Citus source (shared/vendor/citus/) next to the checkout, or set SNOWFLAKE_CITUS_VENDOR to the directory" \
  "that holds citus-$CITUS_VERSION.tar.gz"
# Citus's build needs these headers beyond PostgreSQL's own (ICU through pg_locale.h, GSSAPI through
# libpq-be.h; columnar's lz4 and zstd; curl's where pg_config.h says HAVE_LIBCURL, as 18's does, though
# configure --without-libcurl keeps Citus's usage reports off).
ensure_packages libicu-dev libkrb5-dev liblz4-dev libzstd-dev $([ "$PG_MAJOR" -lt 18 ] || echo libcurl4-openssl-dev)

# Citus's NOTICEs (moving data, copying shards) would drown the checks; the checks that read a NOTICE ask for it.
export PGOPTIONS="$PGOPTIONS -c client_min_messages=warning"
# A failed check, or a statement that stops the suite early, shows what each server logged.
PASSED=0
CLEANUPS+=('[ "$PASSED" = 1 ] || show_logs')

# The sed script this Citus needs to compile against this PostgreSQL's headers, if any.
citus_fix() {
  [ "$CITUS_VERSION" = 13.2.2 ] &&
    grep -q have_createdb_privilege "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h" &&
    echo "$HERE/fix-13.2.2-pg15.sed"
}

# Citus's configure options here. Where PostgreSQL's pg_config.h says HAVE_LIBCURL (18), Citus's sources
# call curl whatever configure says, so it must link it; its usage reports stay off (CONF below).
citus_configure_options() {
  echo "--without-lz4 --without-zstd"
  grep -q '^#define HAVE_LIBCURL 1' "$("$PG_CONFIG" --includedir-server)/pg_config.h" || echo --without-libcurl
}

# Installs Citus into PostgreSQL $PG_MAJOR from the cache, building it there first when this Citus tag,
# this exact PostgreSQL version and this build recipe (the fix and the configure options) have not been
# built before.
install_citus() {
  local fix options key cache start=$SECONDS header
  fix=$(citus_fix) || true
  options=$(citus_configure_options | xargs)
  key=$CITUS_VERSION-pg$("$PG_CONFIG" --version | sed 's/^PostgreSQL //; s/[^A-Za-z0-9.+-]\{1,\}/_/g; s/_$//')
  key=$key-recipe-$({ echo "$options"; [ -z "$fix" ] || cat "$fix"; } | sha256sum | cut -c1-12)
  cache=$CITUS_CACHE/citus-$key
  if [ -e "$cache/complete" ]; then
    echo "Citus $CITUS_VERSION from the cache: $cache"
  else
    echo "building Citus $CITUS_VERSION for $("$PG_CONFIG" --version) into $cache (configure $options${fix:+; fix: ${fix#"$ROOT"/}})"
    rm -rf "$cache" && mkdir -p "$cache/src"
    tar -xzf "$TARBALL" -C "$cache/src" --strip-components=1
    if [ -n "$fix" ]; then
      header=$cache/src/src/include/pg_version_compat.h
      cp "$header" "$cache/header.orig" && sed -i -f "$fix" "$header"
      ! cmp -s "$header" "$cache/header.orig" || die "$fix changes nothing in Citus $CITUS_VERSION: update it"
    fi
    # shellcheck disable=SC2086 # the options are words
    (cd "$cache/src" && ./configure PG_CONFIG="$PG_CONFIG" $options &&
      make -j2 with_llvm=no && make install with_llvm=no DESTDIR="$cache/root") >"$cache/build.log" 2>&1 ||
      { grep -E 'error:|\*\*\*' "$cache/build.log" | tail -10
        die "Citus $CITUS_VERSION did not build (log: $cache/build.log)"; }
    rm -rf "$cache/src" "$cache/header.orig" && touch "$cache/complete"
    echo "Citus $CITUS_VERSION built in $((SECONDS - start)) s (make -j2 with_llvm=no)"
  fi
  cp -a "$cache/root/." /
}

# Runs SQL on server $1 that must fail, and prints psql's report (ERROR with its SQLSTATE, DETAIL, HINT).
error_of() {
  ! psql_on "$1" -At -v VERBOSITY=verbose -c "$2" 2>&1 || echo "(no error)"
}

# Runs pgbench on server $1 with $2 clients for $SECONDS_PER_RUN s (script $3, then pgbench options);
# prints the transactions it processed, and fails when a client aborted.
bench() {
  local name=$1 clients=$2 script=$3 out
  shift 3
  out=$(on_server "$name" "$PGB/pgbench" -n -c "$clients" -j "$clients" -T "$SECONDS_PER_RUN" -f "$script" "$@" 2>&1) ||
    { echo "$out" | tail -5 >&2; return 1; }
  sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out"
}

# Runs pgbench ($2 clients, script $3, then options) on each of the servers named in $1 at once, each client
# writing its server's port; prints the transactions processed in total, and fails when any run failed.
# Each run seeds its random numbers with its port: runs started in the same second would otherwise draw
# the same tenants, and two servers on one node would then collide on the whole key, not just the ID.
bench_on() {
  local n pids=() status=0 out=$SERVERS/$SUITE_NAME/bench
  for n in $1; do
    bench "$n" "$2" "$3" -D port="${SERVER_PORT[$n]}" --random-seed="${SERVER_PORT[$n]}" >"$out.$n" &
    pids+=($!)
  done
  for n in "${pids[@]}"; do wait "$n" || status=1; done
  [ $status -eq 0 ] && cat $(for n in $1; do echo "$out.$n"; done) | awk '{s += $1} END {print s}'
}

# snowflake_cluster_nodes() run on server $1 (the coordinator by default), as "port=problem" items
# in server order, "-" for no problem.
problems() {
  sql "${1:-c}" "SELECT string_agg(split_part(server, ':', 2) || '=' || coalesce(problem, '-'), ',' ORDER BY server)
                 FROM snowflake_cluster_nodes()" 2>/dev/null
}

# Sets snowflake.node on server $1 to $2 (-1: unset) by ALTER SYSTEM and a reload, and waits until its
# generator runs on it.
set_node() {
  sql "$1" "ALTER SYSTEM SET snowflake.node = $2" >/dev/null
  sql "$1" "SELECT pg_reload_conf()" >/dev/null
  wait_for 20 eval '[ "$(sql '"$1"' "SELECT coalesce(node, -1) FROM snowflake_stats()")" = "'"$2"'" ]'
}

# The node of the server on port $1 while each has its own (the coordinator 1, the workers 2 and 3).
node_sql="CASE port WHEN 56460 THEN 1 WHEN 56461 THEN 2 WHEN 56462 THEN 3 END"

install_citus
# wal_level = logical for shard moves; track_commit_timestamp for snowflake_node_origins() on a shard;
# no usage reports to Citus's servers from a test (a Citus linked with curl sends them by default).
CONF=("shared_preload_libraries = 'citus,snowflake'" "wal_level = logical" "track_commit_timestamp = on"
  "max_replication_slots = 10" "max_wal_senders = 10" "max_worker_processes = 20" "citus.enable_statistics_collection = off")
server_init c 56460 "${CONF[@]}" "snowflake.node = 1"
server_init w1 56461 "${CONF[@]}" "snowflake.node = 2"
server_init w2 56462 "${CONF[@]}" "snowflake.node = 3"
start=$SECONDS
pids=()
for n in c w1 w2; do
  server_start $n &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for n in c w1 w2; do sql $n "CREATE EXTENSION citus" >/dev/null; done
echo "Citus $(sql c "SELECT extversion FROM pg_extension WHERE extname = 'citus'") on PostgreSQL" \
  "$(sql c "SHOW server_version"): coordinator 127.0.0.1:56460 (node 1), workers 56461 (node 2) and 56462 (node 3);" \
  "started in $((SECONDS - start)) s"

echo "--- 1. the cluster, and snowflake on every server"
sql_file c "$HERE/cluster.sql" >/dev/null
check "CREATE EXTENSION snowflake reached both workers, the one added afterwards included" [ "$(sql c "
  SELECT count(*) FROM run_command_on_all_nodes(\$\$SELECT extversion FROM pg_extension WHERE extname = 'snowflake'\$\$)
  WHERE success AND result = '$(control_version)'")" -eq 3 ]
for n in c w1; do
  check "snowflake_cluster_nodes() on $n lists the coordinator and both workers with their nodes" \
    [ "$(sql $n "SELECT string_agg(role || ' ' || node, ', ' ORDER BY server) FROM snowflake_cluster_nodes()")" = \
    "coordinator 1, worker 2, worker 3" ]
  check "snowflake_cluster_nodes() on $n finds no problem" [ "$(problems $n)" = "56460=-,56461=-,56462=-" ]
done

# Monitoring's role: pg_monitor, not a superuser (Citus creates the role and the grant on every server).
sql c "CREATE ROLE snowflake_watcher LOGIN; GRANT pg_monitor TO snowflake_watcher" >/dev/null
check "a pg_monitor member that is not a superuser runs it across the cluster" [ "$(psql_on c -At \
  -U snowflake_watcher -c "SELECT count(*) FILTER (WHERE problem IS NULL) FROM snowflake_cluster_nodes()")" = 3 ]

echo "--- 2. where each insert path makes its IDs"
sql_file c "$HERE/paths.sql" >/dev/null
sql w1 "INSERT INTO items (path) SELECT 'on a worker' FROM generate_series(1, 100)" >/dev/null
sql w2 "INSERT INTO items (path) SELECT 'on a worker' FROM generate_series(1, 100)" >/dev/null
sql w2 "INSERT INTO tags (name) SELECT 'worker' FROM generate_series(1, 5)" >/dev/null
for n in w1 w2; do sql $n "INSERT INTO counters (at) VALUES ('$n')" >/dev/null; done
# Each path's rows, and how many carry the node expected of it.
paths=$(sql c "SELECT path, count(*), count(*) FILTER (WHERE (snowflake_parse(id)).node = 1) FROM items GROUP BY 1 ORDER BY 1")
for p in single-row:1 multi-row:3 copy:5 generate_series:1000 "local table:100"; do
  check "${p%:*}: ${p##*:} rows, every ID made on the coordinator (node 1)" grep -qx "${p%:*}|${p##*:}|${p##*:}" <<<"$paths"
done
# The colocated path: the node of the worker holding each source row's shard, found through the node check.
colocated=$(sql c "
  SELECT count(*), count(*) FILTER (WHERE (snowflake_parse(i.id)).node = c.node),
         count(DISTINCT (snowflake_parse(i.id)).node)
  FROM items i
  JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('events', i.source_id)
  JOIN pg_dist_node d ON d.groupid = p.groupid
  JOIN snowflake_cluster_nodes() c ON c.server = d.nodename || ':' || d.nodeport
  WHERE i.path = 'colocated'")
check "INSERT ... SELECT between colocated tables: 1000 rows, each ID made on the worker holding its source row, both workers" \
  [ "$colocated" = "1000|1000|2" ]
check "inserts on each worker: 100 rows with node 2 and 100 with node 3" [ "$(sql c "
  SELECT string_agg(n || ':' || c, ',' ORDER BY n) FROM (SELECT (snowflake_parse(id)).node AS n, count(*) AS c
  FROM items WHERE path = 'on a worker' GROUP BY 1) x")" = "2:100,3:100" ]
check "reference table: 10 rows made on the coordinator, 5 on a worker" [ "$(sql c "
  SELECT string_agg(n || ':' || c, ',' ORDER BY n) FROM (SELECT (snowflake_parse(id)).node AS n, count(*) AS c
  FROM tags GROUP BY 1) x")" = "1:10,3:5" ]
check "reference table: the same 15 rows on all three servers" [ "$(sql c "
  SELECT count(*) || ' ' || count(DISTINCT result) || ' ' || min(result) FROM run_command_on_placements('tags',
  \$\$SELECT count(*) || '/' || md5(string_agg(id::text, ',' ORDER BY id)) FROM %s\$\$)" | cut -d/ -f1)" = "3 1 15" ]

check "Citus's bigserial: the coordinator from 1, each worker from 2^48 times its group id" [ "$(sql c "
  SELECT string_agg(at || ' ' || id / (2::bigint ^ 48)::bigint || ' ' || id % (2::bigint ^ 48)::bigint, ', ' ORDER BY id)
  FROM counters")" = "coordinator 0 1, w1 1 1, w2 2 1" ]

echo "--- 3. 4 pgbench clients on each of the three servers at once, $SECONDS_PER_RUN s"
acknowledged=$(bench_on "c w1 w2" 4 "$HERE/insert.pgbench") || acknowledged=
check "every pgbench client finished" [ -n "$acknowledged" ]
read -r rows distinct wrong <<<"$(sql c "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE (snowflake_parse(id)).node
  IS DISTINCT FROM $node_sql) FROM hits" | tr '|' ' ')"
check "every acknowledged insert is there: $rows rows, $acknowledged acknowledged" [ "$rows" = "$acknowledged" ]
check "no duplicate: $distinct distinct IDs in $rows rows" [ "$distinct" = "$rows" ]
check "every row carries the node of the server it went through" [ "$wrong" = 0 ]
echo "concurrent: $rows rows, $distinct distinct, in $SECONDS_PER_RUN s ($(sql c "SELECT string_agg(port || ': ' || c, ', '
  ORDER BY port) FROM (SELECT port, count(*) AS c FROM hits GROUP BY 1) x"))"
sql c "TRUNCATE hits" >/dev/null

echo "--- 4. a time range on the key, pushed to every shard"
sql_file c "$HERE/time_range.sql" >/dev/null
shards=$(sql c "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'items'::regclass")
plan=$(sql c "SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) $(grep -v '^--' "$HERE/time_range.sql")")
check "every one of the $shards shards scans its primary key with the ID range as an Index Cond" \
  [ "$(grep -c 'Index Cond: ((id >= snowflake_range_first_id(' <<<"$plan")" -eq "$shards" -a \
  "$(grep -cE 'Index (Only )?Scan .*on items_pkey_[0-9]+' <<<"$plan")" -eq "$shards" ]
check "it counts every row (all made within the hour)" \
  [ "$(sql c "$(grep -v '^--' "$HERE/time_range.sql")")" = "$(sql c "SELECT count(*) FROM items")" ]

echo "--- 5. a shard move under inserts"
shard=$(sql c "SELECT min(s.shardid) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
  JOIN pg_dist_node d ON d.groupid = p.groupid WHERE s.logicalrelid = 'items'::regclass AND d.nodeport = 56461")
bench c 2 "$HERE/move.pgbench" >"$SERVERS/$SUITE_NAME/move.out" &
writers=$!
wait_for 20 eval '[ "$(sql c "SELECT count(*) FROM items WHERE path = '"'shard move'"'")" -gt 0 ]'
move_start=$(sql c "SELECT clock_timestamp()")
start=$SECONDS
sql c "SELECT citus_move_shard_placement($shard, '127.0.0.1', 56461, '127.0.0.1', 56462)" >/dev/null
move_end=$(sql c "SELECT clock_timestamp()")
move_time=$((SECONDS - start))
check "the writers were still inserting when the move ended (it took $move_time s)" kill -0 $writers
wait $writers && acknowledged=$(cat "$SERVERS/$SUITE_NAME/move.out") || acknowledged=
check "shard $shard is on 127.0.0.1:56462 now" [ "$(sql c "SELECT d.nodeport FROM pg_dist_placement p
  JOIN pg_dist_node d ON d.groupid = p.groupid WHERE p.shardid = $shard")" = 56462 ]
read -r rows distinct during <<<"$(sql c "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE
  get_shard_id_for_distribution_column('items', id) = $shard AND snowflake_timestamp(id) BETWEEN '$move_start' AND '$move_end')
  FROM items WHERE path = 'shard move'" | tr '|' ' ')"
check "nothing lost: $rows rows, $acknowledged acknowledged" [ "$rows" = "$acknowledged" ]
check "nothing duplicated: $distinct distinct IDs" [ "$distinct" = "$rows" ]
check "the moving shard took inserts while it moved ($during rows)" [ "$during" -gt 0 ]
origins=$(sql w2 "SELECT 'node ' || node || ' ' || origin || ':' || ids || ':' || coalesce(shared_node::text, 'null') FROM snowflake_node_origins('items_$shard')")
check "on the new worker, the move's catch-up rows are labelled as a dropped origin" grep -q '^node [0-9]* dropped origin [0-9]*:' <<<"$origins"
check "on the new worker, no node of shard $shard looks shared" not grep -q ':true$' <<<"$origins"
echo "shard move: $acknowledged rows acknowledged, $rows rows, $distinct distinct; $during in the shard during its" \
  "$move_time s move; its origins on the new worker: $(paste -sd, <<<"$origins")"
out=$(sql c "SET client_min_messages = notice; SELECT count(*) FILTER (WHERE shared_node IS NOT NULL) FROM snowflake_node_origins('items')" 2>&1)
check "snowflake_node_origins() on the distributed table says it cannot tell" \
  grep -q 'NOTICE:  snowflake_node_origins() cannot tell from the rows of the Citus table public.items' <<<"$out"
check "... points to snowflake_cluster_nodes()" grep -q '^HINT:  Run SELECT \* FROM snowflake_cluster_nodes()' <<<"$out"
check "... and leaves shared_node NULL" [ "$(tail -1 <<<"$out")" = 0 ]

echo "--- 6. converting a distribution column; the limits of UPDATE and colocation; backfilling"
sql_file c "$HERE/legacy.sql" >/dev/null
out=$(error_of c "SELECT snowflake_convert_column('legacy', 'id')")
check "snowflake_convert_column() on a distribution column: 0A000, naming it" grep -q \
  '^ERROR:  0A000: column "id" of "public.legacy" cannot be converted: public.legacy.id is the distribution column of a Citus table' <<<"$out"
steps=$(grep -v '^--' "$HERE/convert_steps.sql" | tr '\n' ' ' | sed 's/ $//')
check "its HINT gives the statements of convert_steps.sql" grep -qxF "HINT:  Convert it while the table is local: $steps" <<<"$out"
sql_file c "$HERE/convert_steps.sql" >/dev/null
sql c "INSERT INTO legacy (note) VALUES ('after')" >/dev/null
check "after those steps: distributed by id again, bigint DEFAULT snowflake_nextval(), the 100 old rows kept, a new ID on node 1" \
  [ "$(sql c "SELECT (SELECT partmethod::text FROM pg_dist_partition WHERE logicalrelid = 'legacy'::regclass) || ' ' ||
    format_type(atttypid, atttypmod) || ' ' || pg_get_expr(adbin, adrelid) || ' ' ||
    (SELECT count(*) FILTER (WHERE id <= 100) || ' ' || count(*) FILTER (WHERE (snowflake_parse(id)).node = 1) FROM legacy)
    FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
    WHERE attrelid = 'legacy'::regclass AND attname = 'id'")" = "h bigint snowflake_nextval() 100 1" ]
hint=$(error_of c "SELECT snowflake_convert_column('parent', 'id')" | sed -n 's/^HINT:  Convert it while the table is local: //p')
check "a distribution column referenced by a colocated table: the HINT cascades and distributes both again" [ "$hint" = \
  "SELECT undistribute_table('public.parent', cascade_via_foreign_keys => true); SELECT snowflake_convert_column('public.parent', 'id'); SELECT create_distributed_table('public.parent', 'id'); SELECT create_distributed_table('public.child', 'parent_id', colocate_with => 'public.parent');" ]
while IFS= read -r statement; do sql c "$statement" >/dev/null; done < <(sed 's/; /;\n/g' <<<"$hint")
sql c "INSERT INTO child SELECT id, 'after' FROM parent" >/dev/null
check "after those steps: both distributed and colocated again, both columns bigint, the 10 rows and their references kept" \
  [ "$(sql c "SELECT count(DISTINCT colocationid) || ' ' || string_agg(partmethod::text, '' ORDER BY logicalrelid::text)
    FROM pg_dist_partition WHERE logicalrelid IN ('parent'::regclass, 'child'::regclass)") $(sql c "
    SELECT string_agg(format_type(atttypid, atttypmod), ' ' ORDER BY attrelid::regclass::text) FROM pg_attribute
    WHERE (attrelid, attname) IN (('parent'::regclass, 'id'), ('child'::regclass, 'parent_id'))") $(sql c "
    SELECT count(*) FROM child JOIN parent ON parent.id = child.parent_id")" = "1 hh bigint bigint 20" ]
sql c "SELECT snowflake_convert_column('countries', 'id')" >/dev/null
sql c "INSERT INTO countries (name) VALUES ('after')" >/dev/null
sql w1 "INSERT INTO countries (name) VALUES ('after')" >/dev/null
check "snowflake_convert_column() on a reference table converts it in place: new IDs on nodes 1 and 2" [ "$(sql c "
  SELECT string_agg((snowflake_parse(id)).node::text, ',' ORDER BY id) FROM countries WHERE name = 'after'")" = "1,2" ]
sql c "SELECT snowflake_convert_column('orders', 'id')" >/dev/null
sql c "INSERT INTO orders (tenant) VALUES (1)" >/dev/null
sql w2 "INSERT INTO orders (tenant) VALUES (2)" >/dev/null
check "... and on a key that is not the distribution column: the 100 old rows kept, new IDs on nodes 1 and 3" [ "$(sql c "
  SELECT count(*) FILTER (WHERE id <= 100) || ' ' || string_agg((snowflake_parse(id)).node::text, ',' ORDER BY id)
    FILTER (WHERE id > 100) FROM orders")" = "100 1,3" ]
check "UPDATE of a distribution column is refused by Citus" grep -q 'modifying the partition value of rows is not allowed' \
  <<<"$(error_of c "UPDATE items SET id = id + 1 WHERE path = 'single-row'")"
check "UPDATE ... SET col = snowflake_nextval() on a distributed table is refused by Citus" grep -q 'must not be VOLATILE' \
  <<<"$(error_of c "UPDATE items SET source_id = snowflake_nextval() WHERE path = 'single-row'")"
sql c "CREATE TABLE typed (id snowflake PRIMARY KEY DEFAULT snowflake_nextval())" >/dev/null
check "a snowflake-typed distribution column cannot be colocated with a bigint one" grep -q "Distribution column types don't match" \
  <<<"$(error_of c "SELECT create_distributed_table('typed', 'id', colocate_with => 'items')")"
sql_file c "$HERE/backfill.sql" >/dev/null
check "ADD COLUMN ... DEFAULT snowflake_nextval(): every existing row has a distinct ID, made on the workers" [ "$(sql c "
  SELECT count(*) = count(DISTINCT public_id) AND bool_and((snowflake_parse(public_id)).node IN (2, 3))
  FROM items")" = t ]
sql c "INSERT INTO items (path, public_id) SELECT 'no public id', NULL FROM generate_series(1, 50)" >/dev/null
sql_file c "$HERE/backfill_gaps.sql" >/dev/null
check "run_command_on_shards(... UPDATE ...) fills the 50 gaps with distinct IDs made on the workers" [ "$(sql c "
  SELECT count(public_id) = count(*) AND count(DISTINCT public_id) = count(*) FROM items")$(sql c "
  SELECT bool_and((snowflake_parse(public_id)).node IN (2, 3)) FROM items WHERE path = 'no public id'")" = tt ]

echo "--- 7. the node check"
set_node w2 2
out=$(sql c "SELECT count(*) FROM snowflake_cluster_nodes()" 2>&1)
check "two workers on node 2: both flagged 'shared node', the coordinator not" \
  [ "$(problems)" = "56460=-,56461=shared node,56462=shared node" ]
check "... with a WARNING naming them" grep -q \
  'WARNING:  snowflake.node 2 is used by more than one server: 127.0.0.1:56461, 127.0.0.1:56462' <<<"$out"
sql c "SELECT server, role, node, state, problem FROM snowflake_cluster_nodes()" 2>/dev/null | sed 's/^/node check: /'
acknowledged=$(bench_on "w1 w2" 4 "$HERE/insert.pgbench") || acknowledged=
read -r rows distinct <<<"$(sql c "SELECT count(*), count(DISTINCT id) FROM hits" | tr '|' ' ')"
check "what the flag prevents: $rows rows from both workers in $SECONDS_PER_RUN s hold only $distinct distinct IDs" \
  [ "$rows" = "$acknowledged" -a "$distinct" -lt "$rows" ]
echo "shared node: $rows rows, $distinct distinct IDs, $((rows - distinct)) duplicates"
set_node w2 -1
check "a worker with no node: flagged 'node unset'" [ "$(problems)" = "56460=-,56461=-,56462=node unset" ]
check "... where an insert fails (55000)" grep -q '^ERROR:  55000: snowflake.node is not set' \
  <<<"$(error_of w2 "INSERT INTO items (path) VALUES ('no node')")"
check "... while inserts through the coordinator go on" sql c "INSERT INTO items (path) VALUES ('no node on a worker')"
set_node w2 3
check "node 3 again: no problem" [ "$(problems)" = "56460=-,56461=-,56462=-" ]
# A fourth server, first with Discord's epoch: its own node, but IDs that decode to other times. It
# tries snowflake before citus in shared_preload_libraries first, which Citus refuses.
server_init w3 56463 "${CONF[@]}" "snowflake.node = 4" "snowflake.epoch = 1420070400000"
w3_conf=${SERVER_DIR[w3]}/data/postgresql.conf
sed -i "s/^shared_preload_libraries = 'citus,snowflake'/shared_preload_libraries = 'snowflake,citus'/" "$w3_conf"
check "shared_preload_libraries = 'snowflake,citus' does not start: Citus has to be loaded first" \
  eval 'server_start w3 >/dev/null 2>&1; grep -q "Citus has to be loaded first" "${SERVER_DIR[w3]}/log"'
sed -i "s/^shared_preload_libraries = 'snowflake,citus'/shared_preload_libraries = 'citus,snowflake'/" "$w3_conf"
server_start w3
sql w3 "CREATE EXTENSION citus" >/dev/null
sql c "SELECT citus_add_node('127.0.0.1', 56463)" >/dev/null
check "a server with another epoch: flagged 'epoch differs'" [ "$(problems)" = "56460=-,56461=-,56462=-,56463=epoch differs" ]
# Another layout (its state file, which records the first one, removed while it is stopped).
server_stop w3
rm "${SERVER_DIR[w3]}/data/snowflake.state"
sed -i '/^snowflake.epoch/d' "$w3_conf"
echo "snowflake.layout = 'sonyflake'" >>"$w3_conf"
server_start w3
check "a server with another layout: flagged 'layout differs'" [ "$(problems)" = "56460=-,56461=-,56462=-,56463=layout differs" ]
server_stop w3
sed -i "s/^shared_preload_libraries = 'citus,snowflake'/shared_preload_libraries = 'citus'/" "$w3_conf"
server_start w3
check "a server that does not preload snowflake: flagged 'not preloaded'" \
  [ "$(problems)" = "56460=-,56461=-,56462=-,56463=not preloaded" ]
sql w3 "SET citus.enable_ddl_propagation = off; DROP EXTENSION snowflake CASCADE" >/dev/null
check "a server without the extension: flagged with its error" \
  [ "$(problems)" = "56460=-,56461=-,56462=-,56463=error: function public.snowflake_stats() does not exist" ]
server_stop w3
check "a stopped server: flagged 'unreachable'" [ "$(problems)" = "56460=-,56461=-,56462=-,56463=unreachable" ]
sql c "SELECT citus_remove_node('127.0.0.1', 56463)" >/dev/null
check "the fourth server removed: no problem" [ "$(problems)" = "56460=-,56461=-,56462=-" ]

echo "--- 8. the docs' Citus statements are the ones this suite ran"
MARKER='<!-- not run: needs a Citus cluster; test/servers/citus.sh runs it -->'
# Each file of $HERE as one line: its trimmed non-blank lines, each followed by a unit separator.
sources=$(for f in "$HERE"/*.sql; do awk '{gsub(/^[ \t]+|[ \t]+$/, "")} NF {printf "\037%s", $0} END {print "\037"}' "$f"; done)
# The ```sql blocks of docs/citus.md that follow the marker, one per line in the same form.
blocks=$(awk -v marker="$MARKER" '
  $0 == marker {armed = 1; next}
  armed && /^```sql$/ {inblock = 1; line = ""; next}
  inblock && /^```$/ {print line "\037"; inblock = 0; armed = 0; next}
  inblock {gsub(/^[ \t]+|[ \t]+$/, ""); if (NF) line = line "\037" $0; next}
  NF {armed = 0}' "$ROOT/docs/citus.md")
count=0 missing=0
while IFS= read -r block; do
  [ -n "$block" ] || continue
  count=$((count + 1))
  grep -qF -- "$block" <<<"$sources" || { echo "not in test/servers/citus/*.sql: $(tr '\037' '\n' <<<"$block")"; missing=1; }
done <<<"$blocks"
check "docs/citus.md has blocks marked as needing a Citus cluster ($count)" [ "$count" -gt 0 ]
check "each of them stands, line for line, in a file of test/servers/citus/ that this suite ran" [ "$missing" = 0 ]

echo "--- 9. a function planted in public and the node check"
# Each server runs the probe on a new connection with the role's own search_path. The planted
# function takes the probe's argument types exactly, so it beats pg_catalog's VARIADIC "any" one.
PLANT='CREATE FUNCTION public.json_build_object(text, integer, text, text, text, timestamptz, text, text)
  RETURNS json LANGUAGE plpgsql AS $$BEGIN
    IF current_user <> '"'planter'"' THEN EXECUTE '"'ALTER ROLE planter SUPERUSER'"'; END IF;
    RETURN '"'{}'"';
  END$$'
for n in c w1 w2; do
  sql $n "SET citus.enable_ddl_propagation = off; CREATE ROLE planter LOGIN; GRANT CREATE ON SCHEMA public TO planter;
    SET ROLE planter; $PLANT" >/dev/null
done
# Servers where planter is a superuser, as "port=t|f" items.
planter_super() {
  for n in c w1 w2; do echo "${SERVER_PORT[$n]}=$(sql $n "SELECT rolsuper FROM pg_roles WHERE rolname = 'planter'")"; done | paste -sd,
}
# 0.4.0's probe (snowflake--0.3.0--0.4.0.sql), sent by a superuser as 0.4.0's function sent it.
sql c "SELECT count(*) FROM run_command_on_all_nodes(\$\$SELECT json_build_object('node', node, 'state', state, 'epoch', epoch,
  'layout', regexp_replace(layout_spec, ',epoch=-?[0-9]+\$', ''))::text FROM public.snowflake_stats()\$\$)" >/dev/null
check "the planted function is the better match: 0.4.0's unqualified probe ran it on every server" \
  [ "$(planter_super)" = "56460=t,56461=t,56462=t" ]
for n in c w1 w2; do sql $n "SET citus.enable_ddl_propagation = off; ALTER ROLE planter NOSUPERUSER" >/dev/null; done
problems_now=$(problems)
check "a superuser's snowflake_cluster_nodes() does not run it" [ "$(planter_super)" = "56460=f,56461=f,56462=f" ]
check "... and finds no problem on any server" [ "$problems_now" = "56460=-,56461=-,56462=-" ]
for n in c w1 w2; do
  sql $n "SET citus.enable_ddl_propagation = off; DROP FUNCTION public.json_build_object(text, integer, text, text, text,
    timestamptz, text, text); REVOKE CREATE ON SCHEMA public FROM planter; DROP ROLE planter" >/dev/null
done

[ "$failures" -eq 0 ] && PASSED=1
finish
