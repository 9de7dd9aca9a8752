# Sourced by the suites under test/servers/ (multi-server engines: replication, Patroni, Citus): the
# harness for scratch servers (test/lib/server.sh, whose functions they use), with these suites'
# conventions of their own: ports 26400-26599, every statement they run ending within 2 minutes,
# whatever happens to the servers, and sections (section) that print their times; and the node check
# as each server reports it, watched through a run (watch_checks).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

export PGOPTIONS="-c statement_timeout=120s"

SECTIONS=() # "name: N s" for each section ended so far
SECTION_NAME=
SECTION_START=$SECONDS
# Starts section $1 of the suite ("--- $1"), ending the one before; with no name, ends the last and
# prints every section's time on one line.
section() {
  [ -z "$SECTION_NAME" ] || SECTIONS+=("$SECTION_NAME: $((SECONDS - SECTION_START)) s")
  SECTION_NAME=${1:-}
  SECTION_START=$SECONDS
  if [ -n "$SECTION_NAME" ]; then echo "--- $SECTION_NAME"; else printf 'section times: %s\n' "$(printf '%s; ' "${SECTIONS[@]}")"; fi
}

# What server $1's node check found last (snowflake_node_status().node_check: ok, node conflict, ...).
node_check() { sql "$1" "SELECT node_check FROM snowflake_node_status()"; }

# Server $1's node check says $2.
node_check_is() { [ "$(node_check "$1")" = "$2" ]; }

# Until stop_watching, records every second, for each server named: its node check (down when it
# does not answer) and the age of the oldest claim it holds of another server (with a server's
# peers replicating to it, at most the interval plus the replication lag), as "server|node_check|age"
# lines in $SERVERS/$SUITE_NAME/checks.
watch_checks() {
  local file=$SERVERS/$SUITE_NAME/checks n seen
  : >"$file"
  rm -f "$file.stop"
  while [ ! -e "$file.stop" ]; do
    for n in "$@"; do
      seen=$(sql "$n" "SELECT node_check || '|' || coalesce((SELECT round(extract(epoch FROM max(now() - heartbeat)), 1)
        FROM snowflake_node_check.claims WHERE system_identifier <> (SELECT system_identifier::text FROM pg_control_system()))::text, '')
        FROM snowflake_node_status()" 2>/dev/null) || seen='down|'
      echo "$n|$seen" >>"$file"
    done
    sleep 1
  done &
  WATCHER=$!
}

# Stops watch_checks and waits for it.
stop_watching() {
  [ -n "${WATCHER:-}" ] || return 0
  touch "$SERVERS/$SUITE_NAME/checks.stop"
  wait "$WATCHER" || true
  WATCHER=
}

# Samples watch_checks took of server $1; and those whose node check said anything but what the
# extended regular expression $2 matches (ok by default).
samples() { grep -c "^$1|" "$SERVERS/$SUITE_NAME/checks" || true; }
flagged() { grep "^$1|" "$SERVERS/$SUITE_NAME/checks" | grep -vcE "^$1\|(${2:-ok})\|" || true; }
