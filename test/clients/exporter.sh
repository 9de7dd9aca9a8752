#!/usr/bin/env bash
# The monitoring recipe (docs/monitoring.md), run by test/clients/run.sh against its server
# (PGHOST/PGPORT): Debian's prometheus-postgres-exporter with docs/monitoring/postgres-exporter.yml,
# connecting as a pg_monitor role, scraped on 127.0.0.1:$EXPORTER_PORT. Asserts the snowflake
# series, the 0/1 gauge in both states, the node check's series (conflict and working), leads never
# negative, that every series the alert rules (docs/monitoring/alerts.yml) use is scraped, and that
# the rules fire where they should (promtool test rules alerts_test.yml, from Debian's prometheus). Then
# docs/monitoring.md's rewrite of the file for an extension in another schema, scraped from a
# database whose extension lives in schema monitoring. Stops the exporters by PID.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DOCS=$HERE/../../docs/monitoring
EXPORTER_PORT=${EXPORTER_PORT:-26301}
ELSEWHERE_PORT=${EXPORTER_ELSEWHERE_PORT:-26303}
psql_() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

psql_ -c "DROP ROLE IF EXISTS snowflake_exporter" -c "CREATE ROLE snowflake_exporter LOGIN IN ROLE pg_monitor"
psql_ -c "SELECT count(snowflake_nextval()) FROM generate_series(1, 1000)" >/dev/null
# The node check's first pass after CREATE EXTENSION, within its interval (5 s), claims the node.
for _ in $(seq 1 100); do
  [ "$(psql_ -c "SELECT node_check FROM snowflake_node_status()")" = ok ] && break
  sleep 0.1
done

exporters=()
trap 'for pid in "${exporters[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
# Starts an exporter on 127.0.0.1:$1 for database $2 with the query file $3; its log is $4.
start_exporter() {
  DATA_SOURCE_NAME="postgresql://snowflake_exporter@$PGHOST:$PGPORT/$2?sslmode=disable" \
    prometheus-postgres-exporter --web.listen-address="127.0.0.1:$1" --extend.query-path="$3" >"$4" 2>&1 &
  exporters+=($!)
}
LOG=${TMPDIR:-/tmp}/snowflake-exporter.log
start_exporter "$EXPORTER_PORT" postgres "$DOCS/postgres-exporter.yml" "$LOG"

# The snowflake lines of one scrape of the exporter on port $1 ($EXPORTER_PORT by default), logging
# to $2; waits (up to 20 s) for it to answer with them.
scrape() {
  local out port=${1:-$EXPORTER_PORT} log=${2:-$LOG}
  for _ in $(seq 1 200); do
    out=$(curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null | grep '^snowflake_' || true)
    [ -n "$out" ] && { echo "$out"; return 0; }
    sleep 0.1
  done
  echo "FAIL: no snowflake series scraped; exporter log:" >&2
  tail -20 "$log" >&2
  return 1
}

# The value of series $1 in scrape $2 (the first line of that name).
value() { awk -v m="$1" '$1 ~ "^"m"([{]|$)" { print $NF; exit }' <<<"$2"; }

fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

ok=$(scrape)
echo "$ok" | head -n 20
line=$(grep '^snowflake_can_issue{' <<<"$ok" || true)
check "can_issue is 1, labelled state ok, node 7, layout twitter" \
  '[ "${line##* }" = 1 ] && [[ $line == *state=\"ok\"* && $line == *node=\"7\"* && $line == *layout_name=\"twitter\"* ]]'
check "ids_issued counts the 1,000 IDs" '[ "$(printf "%.0f" "$(value snowflake_ids_issued "$ok")")" -ge 1000 ]'
check "leads are never negative" \
  'awk "\$1 ~ /^snowflake_(ids_ahead|reservation_lead)_seconds/ && \$NF < 0 { bad = 1 } END { exit bad }" <<<"$ok"'
check "the first reservation, written by a call, is counted" \
  '[ "$(printf "%.0f" "$(value snowflake_caller_writes "$ok")")" -ge 1 ] && [ -n "$(value snowflake_renewals "$ok")" ]'
check "runs_out_seconds is decades away" '[ "$(printf "%.0f" "$(value snowflake_runs_out_seconds "$ok")")" -gt 1000000000 ]'
check "state_seconds says how long the state has held" '[ "$(printf "%.0f" "$(value snowflake_state_seconds "$ok")")" -ge 0 ]'
line=$(grep '^snowflake_node_check_conflict{' <<<"$ok" || true)
check "node_check_conflict is 0, labelled node_check ok, node 7" \
  '[ "${line##* }" = 0 ] && [[ $line == *node_check=\"ok\"* && $line == *node=\"7\"* ]]'
line=$(grep '^snowflake_node_check_working{' <<<"$ok" || true)
check "node_check_working is 1 while the check says ok" '[ "${line##* }" = 1 ] && [[ $line == *node_check=\"ok\"* ]]'

# A reason to refuse (this node reserved for backfill): the gauge drops to 0 and the label says why.
psql_ -c "ALTER SYSTEM SET snowflake.backfill_node = 7" -c "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 1 50); do
  blocked=$(scrape)
  grep -q 'state="node reserved"' <<<"$blocked" && break
  sleep 0.2
done
psql_ -c "ALTER SYSTEM RESET snowflake.backfill_node" -c "SELECT pg_reload_conf()" >/dev/null
check "can_issue is 0 with state \"node reserved\"" \
  'grep -Eq "^snowflake_can_issue\{[^}]*state=\"node reserved\"[^}]*\} 0$" <<<"$blocked"'

# Every series the alert rules use is one the exporter serves.
rules=$(/usr/bin/python3 -c '
import re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
for rule in doc["groups"][0]["rules"]:
    print(rule["alert"], " ".join(sorted(set(re.findall(r"snowflake_[a-z_]+", rule["expr"])))))
' "$DOCS/alerts.yml")
while read -r alert series; do
  for s in $series; do
    check "alert $alert uses a scraped series ($s)" 'grep -q "^$s[{ ]" <<<"$ok"'
  done
done <<<"$rules"
# The rules themselves, on series as the exporter names them.
check "every alert rule fires, and stays quiet, where it should (promtool)" 'promtool test rules "$HERE/alerts_test.yml"'

# The extension in another schema: docs/monitoring.md's rewrite of the query file, as written there.
psql_ -c "DROP DATABASE IF EXISTS exporter_elsewhere" -c "CREATE DATABASE exporter_elsewhere TEMPLATE template0"
psql_ -d exporter_elsewhere -c "CREATE SCHEMA monitoring" -c "CREATE EXTENSION snowflake SCHEMA monitoring" \
  -c "GRANT USAGE ON SCHEMA monitoring TO snowflake_exporter;"
ELSEWHERE=${TMPDIR:-/tmp}/snowflake-exporter-monitoring
mkdir -p "$ELSEWHERE"
sed 's/public\.snowflake_/monitoring.snowflake_/g' "$DOCS/postgres-exporter.yml" >"$ELSEWHERE/postgres-exporter.yml"
start_exporter "$ELSEWHERE_PORT" exporter_elsewhere "$ELSEWHERE/postgres-exporter.yml" "$ELSEWHERE/log"
elsewhere=$(scrape "$ELSEWHERE_PORT" "$ELSEWHERE/log") || elsewhere=
line=$(grep '^snowflake_can_issue{' <<<"$elsewhere" || true)
check "the rewritten file scrapes the extension in schema monitoring: can_issue is 1, node 7" \
  '[ "${line##* }" = 1 ] && [[ $line == *state=\"ok\"* && $line == *node=\"7\"* ]]'
check "the file as shipped names no function without its schema" \
  '! grep -Eq "(^|[^.a-z_])snowflake_(stats|reservation|state)\(" "$DOCS/postgres-exporter.yml"'
psql_ -c "DROP DATABASE exporter_elsewhere WITH (FORCE)"
exit $fail
