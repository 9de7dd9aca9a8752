# Sourced by the logical-replication suites (test/servers/multimaster.sh, test/servers/one_way.sh)
# after test/servers/lib.sh: their writers (write_items in items.sql), the rows they count, and the
# node check's claims as the servers hold them. A server is called nN, N being the number its rows
# carry in items.server and the node it starts on.

CLIENTS=2 # writers per server, each one row per transaction, about 1 ms apart

# Runs $CLIENTS writers on server $1 for $2 seconds (whole), tagging rows with phase $3, each in
# calls of at most a minute (lib.sh's statement timeout); prints the rows committed, the inserts
# refused because their ID already existed, and those refused with SN001 (a node conflict).
write() {
  local i pids=() out=$SERVERS/$SUITE_NAME/$1.written
  for ((i = 0; i < CLIENTS; i++)); do
    : >"$out.$i"
    (
      left=$2
      while [ "$left" -gt 0 ]; do
        sql "$1" "CALL write_items(${1#n}, $3, $((left < 60 ? left : 60)))" >>"$out.$i"
        left=$((left - 60))
      done
    ) &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$out".* | awk -F'|' '{c += $1; r += $2; n += $3} END {print c, r, n}'
}

# Sets snowflake setting $2 to $3 on server $1 (ALTER SYSTEM) and reloads it.
reload_with() {
  sql "$1" "ALTER SYSTEM SET snowflake.$2 = '$3'" >/dev/null
  sql "$1" "SELECT pg_reload_conf()" >/dev/null
}

# Rows of phase $2 on server $1.
rows() { sql "$1" "SELECT count(*) FROM items WHERE phase = $2"; }

# Rows of phase $2 on server $1 whose ID's node is not the node of the server that wrote them.
wrong_node() { sql "$1" "SELECT count(*) FROM items WHERE phase = $2 AND (snowflake_parse(id)).node <> server"; }

# IDs held twice on server $1 (0: the primary key holds).
duplicates() { sql "$1" "SELECT count(*) - count(DISTINCT id) FROM items"; }

# Lines of server $1's log matching the extended regular expression $2.
log_lines() { grep -cE "$2" "${SERVER_DIR[$1]}/log" || true; }

# Lines of server $1's log about a conflict or an error on the user's table: the node check's claims
# aside, whose first renewal after a subscription made without a copy deletes a row the subscriber
# lacks (skipped; pglogical logs it as a CONFLICT, PostgreSQL 18 and later as delete_missing).
item_conflicts() { grep -E 'CONFLICT|conflict|ERROR' "${SERVER_DIR[$1]}/log" | grep -vc snowflake_node_check.claims || true; }

# How a claim names server $1: the host name of its postmaster and its port.
claimant() { echo "$(hostname):${SERVER_PORT[$1]}"; }

# Server $1's node check reports $2 ("node conflict", or "node conflict: refusing"), naming server $3.
reports_conflict() {
  node_check_is "$1" "$2" &&
    [[ "$(sql "$1" "SELECT node_conflict FROM snowflake_node_status()")" == "$(claimant "$3") "* ]]
}

# Server $1 holds a claim of server $2 renewed after the time $3 (server $1's clock: one machine).
holds_claim_since() {
  local sid
  sid=$(sql "$2" "SELECT system_identifier FROM pg_control_system()")
  [ "$(sql "$1" "SELECT count(*) FROM snowflake_node_check.claims
    WHERE system_identifier = '$sid' AND heartbeat > '$3'::timestamptz")" -gt 0 ]
}

# The time now on server $1, for holds_claim_since.
now_on() { sql "$1" "SELECT now()"; }

# The seconds since the time $2 on server $1, to a tenth.
seconds_since() { sql "$1" "SELECT round(extract(epoch FROM clock_timestamp() - '$2'::timestamptz), 1)"; }

# The largest age watch_checks saw of another server's claim on server $1 (empty: it holds none).
oldest_claim() { grep "^$1|" "$SERVERS/$SUITE_NAME/checks" | cut -d'|' -f3 | sort -n | tail -1; }
