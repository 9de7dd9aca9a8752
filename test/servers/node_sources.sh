#!/usr/bin/env bash
# Suite node-sources: where a server's node comes from (snowflake.node_source, snowflake.node_offset;
# docs/many-servers.md#choosing-a-node-source). Each source on a real server: a host name (the
# postmaster in a UTS namespace of its own, as a StatefulSet's or CloudNativePG's pod), an
# environment variable (as the downward API hands it in), the settings the manifests under
# test/servers/manifests/ give, and the offset; then every problem a source can have, each a 55000
# with its HINT and a state of its own while the server runs, and a reload from one source to another.
# Ports 26500-26509.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SUITE_NAME=node-sources
MANIFESTS=$ROOT/test/servers/manifests

# The node of a new ID on server $1.
node_of_new_id() {
  sql "$1" "SELECT (snowflake_parse(snowflake_nextval())).node"
}

# Succeeds when a new ID of server $1 is on node $2.
node_is() {
  [ "$(node_of_new_id "$1" 2>/dev/null)" = "$2" ]
}

# Succeeds when server $1's next call fails with 55000, a HINT, and the state $2.
refused_with_state() {
  local out
  out=$(psql_on "$1" -At -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -c "SELECT snowflake_nextval()" 2>&1)
  grep -q "ERROR:  55000:" <<<"$out" && grep -q "HINT:" <<<"$out" &&
    [ "$(sql "$1" "SELECT state FROM snowflake_state()")" = "$2" ] || {
    echo "  got: $out; state $(sql "$1" "SELECT state || ': ' || detail FROM snowflake_state()")"
    return 1
  }
}

# A server called $1 on port $2, in a UTS namespace with host name $3, with the environment variables
# NAME=value after "--" and the postgresql.conf lines before it; the extension created.
host_server() {
  local name=$1 port=$2 host=$3 conf=() env=()
  shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do conf+=("$1"); shift; done
  [ $# -gt 0 ] && shift && env=("$@")
  server_init "$name" "$port" "shared_preload_libraries = 'snowflake'" "${conf[@]}"
  server_start_on_host "$name" "$host" "${env[@]}" && sql "$name" "CREATE EXTENSION snowflake" >/dev/null
}

# The value a manifest gives to setting $2 (a snowflake.* parameter or argument), or the name of its
# first downward-API variable ($2 = env).
from_manifest() {
  python3 - "$1" "$2" <<'EOF'
import sys, yaml
doc, key = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
if doc["kind"] == "Cluster":
    print(doc["spec"]["postgresql"]["parameters"][key])
else:
    container = doc["spec"]["template"]["spec"]["containers"][0]
    if key == "env":
        print(container["env"][0]["name"])
    else:
        args = container["args"]
        print(next(a.split("=", 1)[1] for a in args if a.startswith(key + "=")))
EOF
}

ensure_packages python3-yaml util-linux

# --- The sources.
host_server hostname 26500 pg-7 "snowflake.node_source = 'hostname'"
check "host name pg-7 gives node 7" [ "$(node_of_new_id hostname)" = 7 ]
check "snowflake_node_status() names the source" \
  [ "$(sql hostname "SELECT node || ' from ' || node_source FROM snowflake_node_status()")" = "7 from host name pg-7" ]
check "the start's log line says where the node came from" grep -q "snowflake: node 7 from host name pg-7, layout" \
  "${SERVER_DIR[hostname]}/log"
sql hostname "ALTER SYSTEM SET snowflake.node_offset = 512" >/dev/null
sql hostname "SELECT pg_reload_conf()" >/dev/null
check "an offset of 512 moves it to 519 on reload" wait_for 10 node_is hostname 519
check "the change is logged" wait_for 5 grep -q "snowflake: node changed from 7 to 519" "${SERVER_DIR[hostname]}/log"

variable=$(from_manifest "$MANIFESTS/statefulset.yaml" env)
host_server statefulset 26501 orders-db-2 \
  "snowflake.node_source = '$(from_manifest "$MANIFESTS/statefulset.yaml" snowflake.node_source)'" \
  "snowflake.node_offset = $(from_manifest "$MANIFESTS/statefulset.yaml" snowflake.node_offset)" -- "$variable=2"
check "the StatefulSet manifest's $variable=2 gives node 2" [ "$(node_of_new_id statefulset)" = 2 ]
check "... from the environment variable" \
  [ "$(sql statefulset "SELECT node_source FROM snowflake_node_status()")" = "environment variable $variable" ]

host_server cloudnativepg 26502 orders-3 \
  "snowflake.node_source = '$(from_manifest "$MANIFESTS/cloudnativepg.yaml" snowflake.node_source)'" \
  "snowflake.node_offset = $(from_manifest "$MANIFESTS/cloudnativepg.yaml" snowflake.node_offset)"
check "the CloudNativePG manifest's settings on instance orders-3 give node 3" [ "$(node_of_new_id cloudnativepg)" = 3 ]

# --- Every problem: the server starts, and its calls say what is wrong.
host_server no_digits 26503 db "snowflake.node_source = 'hostname'"
check "a host name without trailing digits" refused_with_state no_digits "no node in host name"
host_server no_variable 26504 pg-1 "snowflake.node_source = 'env:POD_INDEX'"
check "an unset variable" refused_with_state no_variable "node variable unset"
host_server bad_variable 26505 pg-1 "snowflake.node_source = 'env:POD_INDEX'" -- POD_INDEX=3a
check "a variable that is not a whole number" refused_with_state bad_variable "node variable invalid"
host_server out_of_range 26506 pg-7 "snowflake.node_source = 'hostname'" "snowflake.node_offset = 1020"
check "a node past the layout's (7 + 1020)" refused_with_state out_of_range "node out of range"
host_server set_twice 26507 pg-1 "snowflake.node_source = 'hostname'" "snowflake.node = 5"
check "snowflake.node set together with another source" refused_with_state set_twice "node set twice"
host_server no_citus 26508 pg-1 "snowflake.node_source = 'citus'"
check "citus without Citus installed" refused_with_state no_citus "citus group unknown"
check "... and the state says so" [ "$(sql no_citus "SELECT detail FROM snowflake_state()")" = \
  "Citus is not installed in the database of the node check" ]

# --- From one source to another on reload: the node follows, the refusal lifts.
sql set_twice "ALTER SYSTEM SET snowflake.node_source = 'setting'" >/dev/null
sql set_twice "SELECT pg_reload_conf()" >/dev/null
check "back to the setting, its node 5 is used" wait_for 10 node_is set_twice 5
sql no_digits "ALTER SYSTEM SET snowflake.node = 9" >/dev/null
sql no_digits "ALTER SYSTEM SET snowflake.node_source = 'setting'" >/dev/null
sql no_digits "SELECT pg_reload_conf()" >/dev/null
check "a server refused for its host name issues on node 9 once given one" wait_for 10 node_is no_digits 9

show_logs "snowflake: node"
finish
