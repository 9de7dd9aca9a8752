#!/usr/bin/env bash
# Citus: a coordinator and two workers on 127.0.0.1, each made by docs/citus.md's set-up
# (test/servers/citus/setup.sh: initdb with passwords, citus,snowflake preloaded, its node from its
# Citus group, snowflake.node_offset = 1, the database app), with Citus built from the vendored
# source (shared/vendor/citus/ next to the checkout, or $SNOWFLAKE_CITUS_VENDOR):
# 13.2.2 on PostgreSQL 15, 14.0.1 on 16 to 18. The build is cached under
# /var/cache/snowflake-citus/, keyed on the Citus tag, the full PostgreSQL
# version and the hash of the build recipe (the fix, test/servers/citus/*.sed,
# and the configure options), so a second run only copies the installed files back. The suite checks:
#   1. The cluster as docs/citus.md builds it: groups 0, 1 and 2 give nodes 1, 2 and 3 with no
#      snowflake.node; CREATE EXTENSION snowflake on the coordinator reaches every worker, one
#      added afterwards included; snowflake_cluster_nodes() lists all three with their sources.
#   2. The node that makes each insert path's IDs: single-row, multi-row, COPY,
#      INSERT ... SELECT from generate_series and from a local table (the
#      coordinator); INSERT ... SELECT from a distributed table, colocated, repartitioned or
#      pulled to the coordinator (the worker holding each source row); an insert on a worker
#      (that worker); a reference table, identical on every server.
#   3. A pgbench client on each of the three servers for 120 s (CITUS_LOAD_SECONDS; 30 s in the version matrix): 0
#      duplicates, every row on its server's node, and the node check never flags any of them,
#      while more servers join: one in no cluster yet (refused, 'citus group unknown', until
#      added: then its group's node), removed and added again (a new group, a new node, the old
#      one held by no one), and one on its node (snowflake.node): the later one refuses (SN001)
#      within the interval while the earlier keeps issuing, the rows of that window counted; a
#      free node and a reload lift it; restarted onto the taken node it issues no ID at all, its
#      first call waiting for the first check; the earlier one frozen (SIGSTOP) past three intervals
#      and 10 s, it refuses at every sample, and again once that one answers. A fourth server: an
#      offset past the layout's nodes ('node out of range'), and what a worker that cannot issue
#      breaks on the coordinator; another epoch, another layout, snowflake preloaded first, not
#      preloaded, without the extension, stopped: each flagged on that server alone. snowflake
#      created before citus.
#   4. A time range on the key: each shard's plan as its statistics make it.
#   5. A shard move under inserts: every acknowledged row there once, rows in
#      the moved shard during the move; on the new worker, the move's catch-up
#      rows are "dropped origin" rows that flag no shared node, and
#      snowflake_node_origins() on the distributed table says it cannot tell.
#   6. snowflake_convert_column() on a distribution column: refused (0A000)
#      with a HINT whose statements (test/servers/citus/convert_steps.sql) then
#      convert it; on a reference table's key and on a key that is not the
#      distribution column it converts in place. The UPDATE and colocation
#      limits, and both backfill recipes.
#   7. Every docs/citus.md block that needs a Citus cluster stands, line for line, in a file of
#      test/servers/citus/ that this suite runs, and so does every shell block.
#   8. A role with CREATE on public plants, on every server, a json_build_object()
#      that matches the node check's probe better than pg_catalog's: 0.4.0's
#      probe, unqualified, runs it (it makes its owner superuser); a superuser's
#      snowflake_cluster_nodes() does not.
# It prints each section's time at the end.
# Usage, as root with the extension installed: bash test/servers/citus.sh
# (ports 26460-26465; CITUS_SECONDS sets the length of the short pgbench runs, CITUS_LOAD_SECONDS the long one).
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

# Runs pgbench on server $1 with $2 clients for RUN_SECONDS s ($SECONDS_PER_RUN unless set; script $3,
# then pgbench options); prints the transactions it processed, and fails when a client aborted.
bench() {
  local name=$1 clients=$2 script=$3 out
  shift 3
  out=$(on_server "$name" "$PGB/pgbench" -n -c "$clients" -j "$clients" -T "${RUN_SECONDS:-$SECONDS_PER_RUN}" \
    -f "$script" "$@" 2>&1) || { echo "$out" | tail -5 >&2; return 1; }
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

# One column of server $1's snowflake_stats() or snowflake_node_status() as text ("" when NULL).
stats_of() {
  sql "$1" "SELECT coalesce($2::text, '') FROM snowflake_stats(),
    LATERAL (SELECT node_source, node_check, node_conflict FROM snowflake_node_status()) n"
}

# Makes the server registered as $1 (server_adopt) with docs/citus.md's set-up (setup.sh), then the remaining
# postgresql.conf lines and the suite's own (its socket, fsync off, room for shard moves, no usage reports
# to Citus's servers from a test: a Citus linked with curl sends them by default). As on a machine of its
# own, its postgres user has a home of its own, DIR/home, whose ~/.pgpass the server started there uses.
# The set-up's output goes to DIR/setup.
citus_setup() {
  local name=$1
  shift
  mkdir "${SERVER_DIR[$name]}/home" && chown postgres "${SERVER_DIR[$name]}/home"
  as_postgres env -u PGPASSFILE HOME="${SERVER_DIR[$name]}/home" PATH="$PGB:$PATH" PASSWORD="$PASSWORD" bash "$HERE/setup.sh" \
    "${SERVER_DIR[$name]}" "${SERVER_PORT[$name]}" "$@" "unix_socket_directories = '${SERVER_DIR[$name]}'" "fsync = off" \
    "log_line_prefix = '%m [%p] '" "max_replication_slots = 10" "max_wal_senders = 10" "max_worker_processes = 20" \
    "citus.enable_statistics_collection = off" >"${SERVER_DIR[$name]}/setup" 2>&1
}

# Milliseconds since the epoch now, or at the time of log line $1 (log_line_prefix '%m').
epoch_ms() {
  date -d "${1:-now}" +%s%3N
}

# The time of the first line of server $1's log matching the extended regular expression $2, from its line
# $3 on (the first by default), in ms since the epoch.
logged_at_ms() {
  epoch_ms "$(tail -n +"${3:-1}" "${SERVER_DIR[$1]}/log" | grep -m1 -E "$2" | cut -d' ' -f1-3)"
}

# Inserts rows into window_rows through server $1, one statement after another on one connection, until
# the file $2 is removed, from before the table reaches the server (until then each statement waits
# 10 ms); a failing statement (a refusal) does not stop it. Its errors go to $3.
stream_inserts() {
  local statement="DO \$\$BEGIN IF pg_catalog.to_regclass('public.window_rows') IS NULL THEN PERFORM pg_catalog.pg_sleep(0.01);
    ELSE INSERT INTO public.window_rows (tenant, port) VALUES ((random() * 1e9)::integer, ${SERVER_PORT[$1]}); END IF; END\$\$;"
  while [ -e "$2" ]; do
    for _ in $(seq 100); do echo "$statement"; done
  done | on_server "$1" "$PGB/psql" -X -q -v VERBOSITY=verbose >/dev/null 2>"$3"
}

# Calls snowflake_nextval() on server $1, a connection a call, until $2 calls have reached it, from before
# it accepts connections; prints, for each call that reached it, its start (µs since the epoch), how long
# it took (ms, connecting included) and its answer's first line.
calls_from_start() {
  local reached=0 start out
  while [ $reached -lt "$2" ]; do
    start=$(date +%s%6N)
    out=$(psql_on "$1" -At -v VERBOSITY=verbose -c "SELECT snowflake_nextval()" 2>&1 | head -1) || true
    case $out in "psql: error:"*) sleep 0.05; continue ;; esac
    reached=$((reached + 1))
    echo "$start $((($(date +%s%6N) - start) / 1000)) $out"
  done
}

# Starts the next section: prints its title, and notes the time the previous one took.
section() {
  [ -z "${section_title:-}" ] || SECTION_TIMES+=("$section_title: $((SECONDS - section_start)) s")
  section_title=$1 section_start=$SECONDS
  echo "--- $1"
}
SECTION_TIMES=()

# The node of the server on port $1 while each has the one its group gives (the coordinator 1, the workers 2 and 3).
node_sql="CASE port WHEN 26460 THEN 1 WHEN 26461 THEN 2 WHEN 26462 THEN 3 END"

install_citus
section "set-up: docs/citus.md's commands for each server"
# One password for every server: Citus's connections between the servers find it in ~/.pgpass, as the page
# says; the suite's clients, and the servers it restarts, in a file of the suite's own.
SERVER_DATABASE=app
PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -dc A-Za-z0-9)
export PGPASSFILE=$SERVERS/$SUITE_NAME/pgpass
pids=()
for n in c:26460 w1:26461 w2:26462; do server_adopt "${n%:*}" "${n#*:}"; done
echo "*:*:*:postgres:$PASSWORD" >"$PGPASSFILE" && chown postgres "$PGPASSFILE" && chmod 600 "$PGPASSFILE"
for n in c w1 w2; do
  citus_setup $n &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ $status -eq 0 ] || { for n in c w1 w2; do tail -5 "${SERVER_DIR[$n]}/setup"; done; die "the set-up failed"; }
check "connections over TCP need the password (scram-sha-256): one without it is refused" grep -q 'no password supplied' \
  <<<"$(PGPASSFILE=/dev/null psql_on c -w -c 'SELECT 1' 2>&1)"
echo "Citus $(sql c "SELECT extversion FROM pg_extension WHERE extname = 'citus'") on PostgreSQL" \
  "$(sql c "SHOW server_version"): coordinator 127.0.0.1:26460, workers 26461 and 26462, in database app;" \
  "set up in $((SECONDS - section_start)) s"

section "1. the cluster, each server's node from its Citus group"
sql_file c "$HERE/cluster.sql" >/dev/null
start=$SECONDS
check "every server has its node once its node check has connected to app and passed" \
  wait_for 30 eval '[ "$(problems)" = "26460=-,26461=-,26462=-" ]'
echo "every server had its node $((SECONDS - start)) s after the cluster was built"
check "Citus's groups: the coordinator 0, the workers 1 and 2" [ "$(sql c "
  SELECT string_agg(nodeport || ':' || groupid, ',' ORDER BY nodeport) FROM pg_dist_node")" = "26460:0,26461:1,26462:2" ]
check "CREATE EXTENSION snowflake reached both workers, the one added afterwards included" [ "$(sql c "
  SELECT count(*) FROM run_command_on_all_nodes(\$\$SELECT extversion FROM pg_extension WHERE extname = 'snowflake'\$\$)
  WHERE success AND result = '$(control_version)'")" -eq 3 ]
for n in c w1; do
  check "snowflake_cluster_nodes() on $n: nodes 1, 2 and 3 from groups 0, 1 and 2 plus the offset" \
    [ "$(sql $n "SELECT string_agg(role || ' ' || node || ' ' || node_source, ', ' ORDER BY server) FROM snowflake_cluster_nodes()")" = \
    "coordinator 1 Citus group 0 + snowflake.node_offset 1, worker 2 Citus group 1 + snowflake.node_offset 1, worker 3 Citus group 2 + snowflake.node_offset 1" ]
  check "snowflake_cluster_nodes() on $n finds no problem" [ "$(problems $n)" = "26460=-,26461=-,26462=-" ]
done
sql_file c "$HERE/nodes.sql" | sed 's/^/cluster: /'

# Monitoring's role: pg_monitor, not a superuser (Citus creates the role, its password and the grant on
# every server). Citus connects to each server as that role: its password goes into ~/.pgpass too.
watcher_password=$(head -c 18 /dev/urandom | base64 | tr -dc A-Za-z0-9)
sql c "CREATE ROLE snowflake_watcher LOGIN PASSWORD '$watcher_password'; GRANT pg_monitor TO snowflake_watcher" >/dev/null
echo "*:*:*:snowflake_watcher:$watcher_password" | tee -a "$PGPASSFILE" >>"${SERVER_DIR[c]}/home/.pgpass"
check "a pg_monitor member that is not a superuser runs it across the cluster" [ "$(psql_on c -At \
  -U snowflake_watcher -c "SELECT count(*) FILTER (WHERE problem IS NULL) FROM snowflake_cluster_nodes()")" = 3 ]

section "2. where each insert path makes its IDs"
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
# The paths from a distributed table: how Citus runs each (EXPLAIN's INSERT/SELECT method), then the node of
# the worker holding each source row's shard, found through the node check.
for p in colocated:events:repartition repartition:visits:repartition "pulled:events:pull to coordinator"; do
  IFS=: read -r path source method <<<"$p"
  statement=$(grep -F "SELECT '$path'," "$HERE/paths.sql")
  check "INSERT ... SELECT '$path': Citus's method is '$method'" grep -qF "INSERT/SELECT method: $method" \
    <<<"$(sql c "EXPLAIN (COSTS OFF) $statement")"
  check "... each ID made on the worker holding its source row, both workers" [ "$(sql c "
    SELECT count(*) FILTER (WHERE (snowflake_parse(i.id)).node = c.node) = count(*), count(DISTINCT (snowflake_parse(i.id)).node)
    FROM items i
    JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('$source', i.source_id)
    JOIN pg_dist_node d ON d.groupid = p.groupid
    JOIN snowflake_cluster_nodes() c ON c.server = d.nodename || ':' || d.nodeport
    WHERE i.path = '$path'")" = "t|2" ]
done
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

LOAD_SECONDS=${CITUS_LOAD_SECONDS:-120}
section "3. $LOAD_SECONDS s of pgbench on each of the three servers, while more servers join"
# Rows the servers that join write during a detection window (distributed before they join, so that
# none of its shards lands on them).
sql c "CREATE TABLE window_rows (tenant integer NOT NULL, id bigint NOT NULL DEFAULT snowflake_nextval(), port integer,
  PRIMARY KEY (tenant, id)); SELECT create_distributed_table('window_rows', 'tenant')" >/dev/null
# Where each of the three's log stands as the load begins: the set-up's own WARNINGs come before it (a
# node check started before its database existed says it could not connect, as it should).
declare -A LOG_AT_LOAD=()
for name in c w1 w2; do LOG_AT_LOAD[$name]=$(stat -c %s "${SERVER_DIR[$name]}/log"); done
RUN_SECONDS=$LOAD_SECONDS bench_on "c w1 w2" 1 "$HERE/insert.pgbench" >"$SERVERS/$SUITE_NAME/load.out" &
load=$!
# What the node check of each of the three says, every 2 s while the load runs: "port node check conflict".
flags=$SERVERS/$SUITE_NAME/flags
(while kill -0 $load 2>/dev/null; do
  for n in c w1 w2; do
    echo "${SERVER_PORT[$n]} $(sql $n "SELECT node || ' ' || node_check || ' ' || coalesce(node_conflict, '-') FROM snowflake_node_status()" 2>&1)"
  done
  sleep 2
done) >"$flags" &
watcher=$!
load_start=$SECONDS
# Starts a step of this section: its title, and how far into the load it begins.
step() {
  echo "-- $1 ($((SECONDS - load_start)) s into the load)"
}
interval=$(sql c "SELECT setting FROM pg_settings WHERE name = 'snowflake.node_check_interval'")

step "the servers that join, made at once with the page's set-up"
# x1 as the page has it; x2 with snowflake.node (set to x1's before it joins); w3 with another epoch and,
# first, snowflake before citus in shared_preload_libraries.
pids=()
for n in x1:26463 x2:26464 w3:26465; do server_adopt "${n%:*}" "${n#*:}"; done
citus_setup x1 &
pids+=($!)
citus_setup x2 "snowflake.node_source = 'setting'" &
pids+=($!)
citus_setup w3 "shared_preload_libraries = 'snowflake,citus'" "snowflake.epoch = 1420070400000" &
w3_setup=$!
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ $status -eq 0 ] || { for n in x1 x2; do tail -5 "${SERVER_DIR[$n]}/setup"; done; die "the set-up failed"; }
check "shared_preload_libraries = 'snowflake,citus' does not start: Citus has to be loaded first" \
  eval '! wait $w3_setup && grep -q "Citus has to be loaded first" "${SERVER_DIR[w3]}/log"'

step "3a. a server in no cluster yet, then added"
sql x1 "CREATE EXTENSION snowflake" >/dev/null
# Its node check connects to app once it exists (started before, it retries every 10 s), then reads the group.
check "the node check finds it in no cluster's metadata yet" wait_for 30 \
  eval '[ "$(sql x1 "SELECT detail FROM snowflake_state()")" = "this server is in no Citus cluster'"'"'s metadata yet" ]'
check "a server in no cluster's metadata yet refuses: 55000 'in no Citus cluster's metadata yet'" grep -q \
  "^ERROR:  55000: snowflake.node_source is 'citus', but this server is in no Citus cluster's metadata yet" \
  <<<"$(error_of x1 "SELECT snowflake_nextval()")"
check "... with the state 'citus group unknown'" [ "$(sql x1 "SELECT state || ': ' || detail FROM snowflake_state()")" = \
  "citus group unknown: this server is in no Citus cluster's metadata yet" ]
sql c "SELECT citus_add_node('127.0.0.1', 26463)" >/dev/null
group=$(sql c "SELECT groupid FROM pg_dist_node WHERE nodeport = 26463")
start=$(epoch_ms)
check "once added, it issues within the interval, under its group's node ($group + 1), with no setting" \
  wait_for $((2 * interval + 5)) eval '[ "$(sql x1 "SELECT (snowflake_parse(snowflake_nextval())).node")" = $((group + 1)) ]'
echo "x1 (group $group) issued under node $((group + 1)) $(($(epoch_ms) - start)) ms after citus_add_node"

step "3b. removed and added again: a new group"
sql c "SELECT citus_remove_node('127.0.0.1', 26463)" >/dev/null
check "removed, it keeps its metadata, and its node, $((group + 1)): a group no one else will be given" \
  [ "$(stats_of x1 node) $(sql x1 "SELECT groupid FROM pg_dist_local_group")" = "$((group + 1)) $group" ]
sql c "SELECT citus_add_node('127.0.0.1', 26463)" >/dev/null
old_group=$group old=$((group + 1)) group=$(sql c "SELECT groupid FROM pg_dist_node WHERE nodeport = 26463")
x1_node=$((group + 1))
start=$(epoch_ms)
check "added again, it has a new group ($group, after $old_group): Citus never hands one out twice" [ "$group" -gt "$old_group" ]
check "... and its node follows within the interval: $x1_node" \
  wait_for $((2 * interval + 5)) eval '[ "$(stats_of x1 node)" = $x1_node ]'
echo "x1's node followed its group in $(($(epoch_ms) - start)) ms"
check "node $old, its old one, is held by no live server" [ "$(sql c "SELECT coalesce(sum(result::integer), 0)
  FROM run_command_on_all_nodes(\$\$SELECT count(*) FROM snowflake_node_check.claims WHERE node = $old
    AND heartbeat > now() - interval '$((3 * interval + 10)) s'\$\$) WHERE success")" = 0 ]

step "3c. a server on x1's node by snowflake.node, added a few seconds after x1 took it"
sql x2 "ALTER SYSTEM SET snowflake.node = $x1_node" >/dev/null
sql x2 "SELECT pg_reload_conf()" >/dev/null
check "its node check is connected to app before it joins" wait_for 30 eval '[ "$(sql x2 "SELECT count(*) FROM pg_stat_activity
  WHERE backend_type = '"'snowflake node check'"' AND datname = '"'app'"'")" = 1 ]'
x1_going=$SERVERS/$SUITE_NAME/x1.going x2_going=$SERVERS/$SUITE_NAME/x2.going
touch "$x1_going" "$x2_going"
CLEANUPS+=('rm -f "$x1_going" "$x2_going"')
stream_inserts x1 "$x1_going" "$SERVERS/$SUITE_NAME/x1.errors" &
x1_writer=$!
stream_inserts x2 "$x2_going" "$SERVERS/$SUITE_NAME/x2.errors" &
x2_writer=$!
added_ms=$(epoch_ms)
sql c "SELECT citus_add_node('127.0.0.1', 26464)" >/dev/null
add_ms=$(($(epoch_ms) - added_ms))
check "the later server refuses within the interval: state 'node conflict'" \
  wait_for $((2 * interval + 5)) eval '[ "$(stats_of x2 state)" = "node conflict" ]'
refused_ms=$(logged_at_ms x2 'which took it first: this server refuses IDs')
check "the earlier one notices within the interval and names the later one in node_conflict" \
  wait_for $((2 * interval + 5)) eval '[ "$(stats_of x1 node_conflict)" != "" ]'
check "... and keeps issuing" eval 'sql x1 "SELECT snowflake_nextval()" >/dev/null'
out=$(error_of x2 "SELECT snowflake_nextval()")
check "the later one's calls fail with SN001, naming the earlier one" grep -q \
  "^ERROR:  SN001: snowflake node $x1_node is claimed by another server, which took it first" <<<"$out"
check "... whose DETAIL names it by its host name and port" grep -q "^DETAIL:  The other server: [^ ]*:26463 " <<<"$out"
check "the later one logged a WARNING: it refuses" grep -q "WARNING:  snowflake: node $x1_node is claimed by .*:26463 .*this server refuses IDs" \
  "${SERVER_DIR[x2]}/log"
check "the earlier one logged a WARNING naming the later one" grep -q \
  "WARNING:  snowflake: node $x1_node is also claimed by .*:26464 " "${SERVER_DIR[x1]}/log"
out=$(sql x1 "SELECT count(*) FROM snowflake_cluster_nodes()" 2>&1)
check "snowflake_cluster_nodes() flags both 'shared node', no other server" [ "$(problems x1)" = \
  "26460=-,26461=-,26462=-,26463=shared node,26464=shared node" ]
check "... with a WARNING naming both" grep -q \
  "WARNING:  snowflake.node $x1_node is used by more than one server: 127.0.0.1:26463, 127.0.0.1:26464" <<<"$out"
rm "$x1_going" "$x2_going"
wait $x1_writer $x2_writer
read -r x2_rows x1_rows x1_after dup <<<"$(sql c "SELECT count(*) FILTER (WHERE port = 26464), count(*) FILTER (WHERE port = 26463),
  count(*) FILTER (WHERE port = 26463 AND snowflake_timestamp(id) > to_timestamp($refused_ms / 1000.0)),
  count(*) - count(DISTINCT id) FROM window_rows" | tr '|' ' ')"
check "the earlier server's writer had no error, and wrote on after the refusal ($x1_after rows)" \
  [ ! -s "$SERVERS/$SUITE_NAME/x1.errors" -a "$x1_after" -gt 0 ]
check "the later server's writer was refused with SN001" grep -q 'ERROR:  SN001:' "$SERVERS/$SUITE_NAME/x2.errors"
echo "detection: x2 refused $((refused_ms - added_ms)) ms after citus_add_node began (it took $add_ms ms; interval" \
  "${interval} s); in that window x2 wrote $x2_rows rows, x1 $x1_rows in all, $dup IDs both issued"

step "3d. the later one on a free node, by a reload"
free=$((x1_node + 10))
check "no server is on node $free" [ "$(sql x1 "SELECT count(*) FROM snowflake_cluster_nodes() WHERE node = $free" 2>/dev/null)" = 0 ]
sql x2 "ALTER SYSTEM SET snowflake.node = $free" >/dev/null
from_line=$(($(wc -l <"${SERVER_DIR[x1]}/log") + 1))
start=$(epoch_ms)
sql x2 "SELECT pg_reload_conf()" >/dev/null
check "the refusal lifts at the reload: its next call issues under node $free" \
  wait_for 10 eval '[ "$(sql x2 "SELECT (snowflake_parse(snowflake_nextval())).node")" = $free ]'
check "at the earlier server's next pass, neither reports a conflict any more" wait_for $((2 * interval + 15)) \
  eval '[ "$(stats_of x1 node_check) $(stats_of x2 node_check) $(stats_of x1 node_conflict)$(stats_of x2 node_conflict)" = "ok ok " ]'
echo "the earlier server logged that no one else claims its node $(($(logged_at_ms x1 \
  'no other server claims this server.s node any more' "$from_line") - start)) ms after the reload"

step "3e. restarted onto the taken node, a call made from before it is up"
sql x2 "ALTER SYSTEM SET snowflake.node = $x1_node" >/dev/null # x1's node again, from the restart on (no reload)
server_stop x2
from_line=$(($(wc -l <"${SERVER_DIR[x2]}/log") + 1))
calls_from_start x2 5 >"$SERVERS/$SUITE_NAME/calls" &
caller=$!
server_start x2
wait $caller
calls=$(cat "$SERVERS/$SUITE_NAME/calls")
check "no call issued an ID: the first waited for the node check's first pass, which refused" \
  [ "$(grep -c " ERROR:  SN001: snowflake node $x1_node is claimed" <<<"$calls")" = 5 ]
first_ms=$(head -1 <<<"$calls" | cut -d' ' -f2)
rest_ms=$(tail -n +2 <<<"$calls" | cut -d' ' -f2 | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
pass_ms=$(($(logged_at_ms x2 'which took it first: this server refuses IDs' "$from_line") - $(epoch_ms "$(sql x2 "SELECT pg_postmaster_start_time()")")))
echo "start-up: 5 calls from before x2 was up, 0 IDs; the first took $first_ms ms, the others $rest_ms ms (median);" \
  "the first pass refused $pass_ms ms after the postmaster started"

step "3f. the earlier server frozen: the refusal stands"
# x1 stopped whole, its postmaster and every process of it (SIGSTOP), for three intervals and 10 s (0.5.0's
# staleness bound: there one frozen server lifted every refusal, issue 34) and until x2 has made a pass
# after that. A frozen server takes a connection and never answers: each pass of each server waits for
# it one interval at most (snowflake_claim_node() lowers citus.node_connection_timeout, 30 s by default,
# for its probe), so the checks keep passing; at 30 s a pass outlasted that bound and the check read
# 'stale' (x2's did from 25 s into the freeze, one pass in 35 s).
# The end of server $1's last node-check pass, in ms since the epoch (0: none yet).
checked_ms() {
  sql "$1" "SELECT coalesce((extract(epoch FROM checked_at) * 1000)::bigint, 0) FROM snowflake_node_status()"
}
# x2 as a sample of it shows: "state|node_check|its last pass's end (ms)|node_conflict".
x2_view() {
  sql x2 "SELECT s.state || '|' || n.node_check || '|' || coalesce((extract(epoch FROM n.checked_at) * 1000)::bigint, 0)
    || '|' || coalesce(n.node_conflict, '') FROM snowflake_stats() s, snowflake_node_status() n"
}
x1_frozen=$(head -1 "${SERVER_DIR[x1]}/data/postmaster.pid")
CLEANUPS+=('[ -z "$x1_frozen" ] || kill -CONT $x1_frozen')
kill -STOP "$x1_frozen" # the postmaster first: stopped, it starts no process
x1_frozen="$x1_frozen $(pgrep -P "$x1_frozen" | paste -sd' ')"
kill -STOP $x1_frozen
frozen_ms=$(epoch_ms)
span_ms=$(((3 * interval + 10) * 1000))
check "x1 is stopped: its postmaster and its $(($(wc -w <<<"$x1_frozen") - 1)) processes" wait_for 5 \
  eval '[ "$(ps -o stat= -p "${x1_frozen// /,}" | grep -c "^T")" = "$(wc -w <<<"$x1_frozen")" ]'
# x2 sampled about every second: "ms since the freeze|its view|the SQLSTATE of a call (none: it issued)".
frozen_samples=$SERVERS/$SUITE_NAME/frozen
: >"$frozen_samples"
while :; do
  view=$(x2_view)
  code=$(error_of x2 "SELECT snowflake_nextval()" | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p')
  elapsed=$(($(epoch_ms) - frozen_ms))
  echo "$elapsed|$view|${code:-none}" >>"$frozen_samples"
  # Done once past the span with a pass of x2 past it too, seen by this sample; or 30 s later whatever.
  [ $elapsed -le $span_ms ] || [ "$(cut -d'|' -f3 <<<"$view")" -le $((frozen_ms + span_ms)) ] || break
  [ $elapsed -le $((span_ms + 30000)) ] || break
  sleep 1
done
kill -CONT $x1_frozen
thawed_ms=$(epoch_ms)
x1_frozen=
count=$(wc -l <"$frozen_samples")
refused=$(awk -F'|' '$2 == "node conflict" && $3 == "node conflict: refusing" && $NF == "SN001"' "$frozen_samples" | wc -l)
passes=$(awk -F'|' -v from="$frozen_ms" '$4 > from {print $4}' "$frozen_samples" | sort -u | wc -l)
last_ms=$(($(cut -d'|' -f4 "$frozen_samples" | sort -n | tail -1) - frozen_ms))
check "x2's node check kept making passes ($passes seen), the last one $last_ms ms into the freeze, past three intervals and 10 s" \
  [ "$passes" -ge 2 -a "$last_ms" -gt "$span_ms" ]
check "x2 refused throughout: $refused of $count samples 'node conflict: refusing', each call SN001" \
  [ "$count" -gt 0 -a "$refused" = "$count" ]
check "thawed, x1 answers x2's next pass: x2 finds its claim again, and refuses" wait_for $((2 * interval + 5)) \
  eval '[ "$(checked_ms x2)" -gt $thawed_ms ] && grep -q "^node conflict|node conflict: refusing|[0-9]*|[^ ]*:26463 " <<<"$(x2_view)"'
named_ms=$(epoch_ms)
out=$(error_of x2 "SELECT snowflake_nextval()")
check "... its calls fail with SN001, naming x1 again" \
  eval 'grep -q "^ERROR:  SN001: " <<<"$out" && grep -q "^DETAIL:  The other server: [^ ]*:26463 " <<<"$out"'
echo "frozen: x1 stopped for $((thawed_ms - frozen_ms)) ms (three intervals and 10 s: $span_ms ms); $count samples of x2," \
  "$refused refused (SN001); $passes passes of its node check meanwhile; x2 named x1 again $((named_ms - thawed_ms)) ms after SIGCONT"
for port in 26464 26463; do sql c "SELECT citus_remove_node('127.0.0.1', $port)" >/dev/null; done
server_stop x2
server_stop x1

step "3g. a fourth server: what it is flagged for, and what it breaks on the coordinator when it cannot issue"
w3_conf=${SERVER_DIR[w3]}/data/postgresql.conf
sed -i "/^shared_preload_libraries = 'snowflake,citus'$/d" "$w3_conf" # the page's line again: citus first
server_start w3
on_server w3 "$PGB/createdb" app # the rest of setup.sh
sql w3 "CREATE EXTENSION citus" >/dev/null
sql c "SELECT citus_add_node('127.0.0.1', 26465)" >/dev/null
w3_group=$(sql c "SELECT groupid FROM pg_dist_node WHERE nodeport = 26465")
check "a server with another epoch: flagged 'epoch differs' once it has its node (its node check retries app every 10 s)" \
  wait_for 30 eval '[ "$(problems)" = "26460=-,26461=-,26462=-,26465=epoch differs" ]'
sql w3 "ALTER SYSTEM SET snowflake.node_offset = 1023" >/dev/null
sql w3 "SELECT pg_reload_conf()" >/dev/null
check "snowflake.node_offset 1023 puts group $w3_group past the layout's last node: 'node out of range'" \
  wait_for 10 eval '[ "$(stats_of w3 state)" = "node out of range" ]'
check "... its calls fail with 55000, naming the offset and the group" grep -q "^ERROR:  55000: snowflake.node_offset 1023 and the number snowflake.node_source gives, $w3_group, make a node outside 0 to 1023" \
  <<<"$(error_of w3 "SELECT snowflake_nextval()")"
check "... and it is flagged so" [ "$(problems)" = "26460=-,26461=-,26462=-,26465=node out of range" ]
# A table in a colocation group of its own, so that some of its shards are on the new server: what fails
# on the coordinator then is what evaluates the default there.
sql c "CREATE TABLE late (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n integer);
  SELECT create_distributed_table('late', 'id', colocate_with => 'none'); INSERT INTO late (n) SELECT g FROM generate_series(1, 100) g" >/dev/null
# What a worker that cannot issue breaks on the coordinator ($1: the ERROR expected from it).
coordinator_failures() {
  local expected=$1 out
  out=$(error_of c "INSERT INTO late (n) SELECT n FROM late")
  check "... on the coordinator, INSERT ... SELECT from a distributed table fails there" \
    eval 'grep -q "$expected" <<<"$out" && grep -q "^CONTEXT:  while executing command on 127.0.0.1:26465" <<<"$out"'
  out=$(error_of c "ALTER TABLE late ADD COLUMN public_id bigint DEFAULT snowflake_nextval()")
  check "... and so does ALTER TABLE ... ADD COLUMN ... DEFAULT snowflake_nextval()" \
    eval 'grep -q "$expected" <<<"$out" && grep -q "^CONTEXT:  while executing command on 127.0.0.1:26465" <<<"$out"'
  check "... while a single-row INSERT through the coordinator goes on" sql c "INSERT INTO late (n) VALUES (0)"
}
coordinator_failures "^ERROR:  55000: snowflake.node_offset 1023"
sql w3 "ALTER SYSTEM RESET snowflake.node_offset" >/dev/null
sql w3 "SELECT pg_reload_conf()" >/dev/null
check "the offset reset, its node is back at the reload" wait_for 10 eval '[ "$(stats_of w3 node)" = $((w3_group + 1)) ]'
# Another layout (its state file, which records the first one, removed while it is stopped).
server_stop w3
rm "${SERVER_DIR[w3]}/data/snowflake.state"
sed -i '/^snowflake.epoch/d' "$w3_conf"
echo "snowflake.layout = 'sonyflake'" >>"$w3_conf"
server_start w3
check "a server with another layout: flagged 'layout differs'" \
  wait_for $((2 * interval + 5)) eval '[ "$(problems)" = "26460=-,26461=-,26462=-,26465=layout differs" ]'
server_stop w3
sed -i "s/^shared_preload_libraries = 'citus,snowflake'/shared_preload_libraries = 'citus'/" "$w3_conf"
server_start w3
check "a server that does not preload snowflake: flagged 'not preloaded'" \
  [ "$(problems)" = "26460=-,26461=-,26462=-,26465=not preloaded" ]
coordinator_failures "^ERROR:  55000: snowflake must be loaded via shared_preload_libraries"
sql c "DROP TABLE late" >/dev/null
sql w3 "SET citus.enable_ddl_propagation = off; DROP EXTENSION snowflake CASCADE" >/dev/null
check "a server without the extension: flagged with its error" \
  [ "$(problems)" = "26460=-,26461=-,26462=-,26465=error: function public.snowflake_stats() does not exist" ]
server_stop w3
check "a stopped server: flagged 'unreachable'" [ "$(problems)" = "26460=-,26461=-,26462=-,26465=unreachable" ]
server_start w3 # removing it drops its copies of the reference tables
sql c "SELECT citus_remove_node('127.0.0.1', 26465)" >/dev/null
server_stop w3
check "the fourth server removed: no problem" [ "$(problems)" = "26460=-,26461=-,26462=-" ]

step "3h. snowflake created before citus (in a database of its own on the coordinator and the first worker)"
for n in c w1; do on_server $n "$PGB/createdb" early; done
SERVER_DATABASE=early sql c "CREATE EXTENSION snowflake; CREATE EXTENSION citus" >/dev/null
SERVER_DATABASE=early sql w1 "CREATE EXTENSION citus" >/dev/null
SERVER_DATABASE=early sql c "SELECT citus_set_coordinator_host('127.0.0.1', 26460)" >/dev/null
SERVER_DATABASE=early sql c "SELECT citus_add_node('127.0.0.1', 26461)" >/dev/null
check "a worker added afterwards gets no snowflake: the check says its function does not exist" [ "$(SERVER_DATABASE=early \
  problems)" = "26460=-,26461=error: function public.snowflake_stats() does not exist" ]
SERVER_DATABASE=early sql c "CREATE TABLE firsts (id bigint PRIMARY KEY DEFAULT snowflake_nextval());
  SELECT create_distributed_table('firsts', 'id')" >/dev/null
check "... until a distributed table whose default calls it brings it" [ "$(SERVER_DATABASE=early sql w1 "
  SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'")" = 1 ]
for n in c w1; do sql $n "DROP DATABASE early WITH (FORCE)" >/dev/null; done

step "3i. the load's end"
wait $load && acknowledged=$(cat "$SERVERS/$SUITE_NAME/load.out") || acknowledged=
wait $watcher
check "every pgbench client finished" [ -n "$acknowledged" ]
read -r rows distinct wrong <<<"$(sql c "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE (snowflake_parse(id)).node
  IS DISTINCT FROM $node_sql) FROM hits" | tr '|' ' ')"
check "every acknowledged insert is there: $rows rows, $acknowledged acknowledged" [ "$rows" = "$acknowledged" ]
check "no duplicate: $distinct distinct IDs in $rows rows" [ "$distinct" = "$rows" ]
check "every row carries the node of the server it went through" [ "$wrong" = 0 ]
samples=$(wc -l <"$flags")
# 'incomplete' while a server of the cluster is frozen (3f), stopped (3g) or not yet able to answer: no claim
# seen, but one server could not be asked.
incomplete=$(grep -c ' incomplete -$' "$flags" || true)
check "the node check of the three never flagged anything: $samples samples, each 'ok' on the server's own node ($incomplete 'incomplete')" \
  [ "$samples" -gt 0 -a "$(grep -cvxE '26460 1 (ok|incomplete) -|26461 2 (ok|incomplete) -|26462 3 (ok|incomplete) -' "$flags")" = 0 ]
# The snowflake WARNINGs the three logged since the load began.
load_warnings() {
  local name
  for name in c w1 w2; do tail -c +"$((LOG_AT_LOAD[$name] + 1))" "${SERVER_DIR[$name]}/log"; done | grep 'WARNING:  snowflake'
}
check "... and none of them logged a WARNING of snowflake's during it" not load_warnings
check "the node check's WARNINGs name node $x1_node alone, x1's and x2's" [ "$(cat "${SERVER_DIR[x1]}/log" "${SERVER_DIR[x2]}/log" |
  sed -n 's/.*WARNING:  snowflake: node \([0-9]*\) .*/\1/p' | sort -u)" = "$x1_node" ]
echo "load: $rows rows, $distinct distinct in $LOAD_SECONDS s ($(sql c "SELECT string_agg(port || ': ' || c, ', '
  ORDER BY port) FROM (SELECT port, count(*) AS c FROM hits GROUP BY 1) x")); $samples samples of the node check, 0 flags;" \
  "the servers that joined took $((SECONDS - load_start)) s"
sql c "TRUNCATE hits" >/dev/null

section "4. a time range on the key: each shard's plan as its statistics make it"
# 20,000 more rows (about 700 a shard), and statistics: the planner of each shard then knows how many
# rows a range holds.
sql c "INSERT INTO items (path) SELECT 'time range' FROM generate_series(1, 20000); ANALYZE items, events" >/dev/null
shards=$(sql c "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'items'::regclass")
# The plans of every shard for the query of test/servers/citus/time_range.sql on table $1 over the range $2.
plans() {
  sql c "SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) $(grep -v '^--' "$HERE/time_range.sql" |
    sed "s/FROM items/FROM $1/; s/tstzrange(now() - interval '1 day', now() - interval '23 hours')/$2/")"
}
day_ago="tstzrange(now() - interval '1 day', now() - interval '23 hours')"
plan=$(plans items "$day_ago")
conds=$(grep -c 'Index Cond: ((id >= snowflake_range_first_id(' <<<"$plan")
scans=$(grep -cE 'Index (Only )?Scan (using|on) items_pkey_[0-9]+' <<<"$plan")
check "an hour a day ago (no row): each of the $shards shards scans its primary key ($scans) with the ID range as an Index Cond ($conds)" \
  [ "$conds" -eq "$shards" -a "$scans" -eq "$shards" ]
plan=$(plans items "tstzrange(now() - interval '1 hour', now())")
filters=$(grep -c 'Filter: ((id >= snowflake_range_first_id(' <<<"$plan")
scans=$(grep -c 'Seq Scan on items_' <<<"$plan")
check "the last hour (every row): each shard reads itself whole ($scans), the ID range as its Filter ($filters)" \
  [ "$filters" -eq "$shards" -a "$scans" -eq "$shards" ]
check "... and counts every row" [ "$(sql c "SELECT count(*) FROM items WHERE id <@ tstzrange(now() - interval '1 hour', now())")" = \
  "$(sql c "SELECT count(*) FROM items")" ]
scans=$(grep -c 'Seq Scan on events_' <<<"$(plans events "$day_ago")")
check "on shards of about 30 rows (events: 1,000), an hour a day ago is a Seq Scan too ($scans)" [ "$scans" -eq "$shards" ]
check "the page's query counts no row a day ago" [ "$(sql_file c "$HERE/time_range.sql")" = 0 ]

section "5. a shard move under inserts"
shard=$(sql c "SELECT min(s.shardid) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
  JOIN pg_dist_node d ON d.groupid = p.groupid WHERE s.logicalrelid = 'items'::regclass AND d.nodeport = 26461")
bench c 2 "$HERE/move.pgbench" >"$SERVERS/$SUITE_NAME/move.out" &
writers=$!
wait_for 20 eval '[ "$(sql c "SELECT count(*) FROM items WHERE path = '"'shard move'"'")" -gt 0 ]'
move_start=$(sql c "SELECT clock_timestamp()")
start=$SECONDS
sql c "SELECT citus_move_shard_placement($shard, '127.0.0.1', 26461, '127.0.0.1', 26462)" >/dev/null
move_end=$(sql c "SELECT clock_timestamp()")
move_time=$((SECONDS - start))
check "the writers were still inserting when the move ended (it took $move_time s)" kill -0 $writers
wait $writers && acknowledged=$(cat "$SERVERS/$SUITE_NAME/move.out") || acknowledged=
check "shard $shard is on 127.0.0.1:26462 now" [ "$(sql c "SELECT d.nodeport FROM pg_dist_placement p
  JOIN pg_dist_node d ON d.groupid = p.groupid WHERE p.shardid = $shard")" = 26462 ]
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

section "6. converting a distribution column; the limits of UPDATE and colocation; backfilling"
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

section "7. the docs' Citus statements and set-up are the ones this suite ran"
MARKER='<!-- not run: needs a Citus cluster; test/servers/citus.sh runs it -->'
# Each file of $HERE as one line: its trimmed non-blank lines, each followed by a unit separator.
sources=$(for f in "$HERE"/*.sql "$HERE"/*.sh; do awk '{gsub(/^[ \t]+|[ \t]+$/, "")} NF {printf "\037%s", $0} END {print "\037"}' "$f"; done)
# The ```sql blocks of docs/citus.md that follow the marker, and every ```sh block, one per line in the same form.
blocks=$(awk -v marker="$MARKER" '
  $0 == marker {armed = 1; next}
  (armed && /^```sql$/) || /^```sh$/ {inblock = 1; line = ""; next}
  inblock && /^```$/ {print line "\037"; inblock = 0; armed = 0; next}
  inblock {gsub(/^[ \t]+|[ \t]+$/, ""); if (NF) line = line "\037" $0; next}
  NF {armed = 0}' "$ROOT/docs/citus.md")
count=0 missing=0
while IFS= read -r block; do
  [ -n "$block" ] || continue
  count=$((count + 1))
  grep -qF -- "$block" <<<"$sources" || { echo "not in test/servers/citus/: $(tr '\037' '\n' <<<"$block")"; missing=1; }
done <<<"$blocks"
check "docs/citus.md has blocks marked as needing a Citus cluster, and shell blocks ($count)" [ "$count" -gt 0 ]
check "each of them stands, line for line, in a file of test/servers/citus/ that this suite ran" [ "$missing" = 0 ]

section "8. a function planted in public and the node check"
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
  [ "$(planter_super)" = "26460=t,26461=t,26462=t" ]
for n in c w1 w2; do sql $n "SET citus.enable_ddl_propagation = off; ALTER ROLE planter NOSUPERUSER" >/dev/null; done
problems_now=$(problems)
check "a superuser's snowflake_cluster_nodes() does not run it" [ "$(planter_super)" = "26460=f,26461=f,26462=f" ]
check "... and finds no problem on any server" [ "$problems_now" = "26460=-,26461=-,26462=-" ]
for n in c w1 w2; do
  sql $n "SET citus.enable_ddl_propagation = off; DROP FUNCTION public.json_build_object(text, integer, text, text, text,
    timestamptz, text, text); REVOKE CREATE ON SCHEMA public FROM planter; DROP ROLE planter" >/dev/null
done

section "end"
printf 'section times: %s\n' "${SECTION_TIMES[@]}"
[ "$failures" -eq 0 ] && PASSED=1
finish
