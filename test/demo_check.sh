#!/usr/bin/env bash
# Runs the run command as a newcomer would, in checkout $1, as the calling user:
# scripts/demo.sh on port $2 must print decoded rows on node 7; run again on
# port $3, the server must move to that port; `demo.sh stop` must stop it.
# Usage: bash test/demo_check.sh CHECKOUT PORT NEW_PORT
set -euo pipefail
dir=$1 port=$2 new_port=$3
cd "$dir"

# Runs the demo on port $1 and checks what it printed; prints its last lines.
demo_on() {
  local out
  if ! out=$(SNOWFLAKE_DEMO_PORT=$1 bash scripts/demo.sh 2>&1); then
    echo "$out"
    echo "FAIL: scripts/demo.sh failed on port $1"
    return 1
  fi
  echo "$out" | tail -n 9
  grep -q "port $1," <<<"$out" || { echo "FAIL: the server did not say it runs on port $1"; return 1; }
  grep -Eq '\|[[:space:]]+7[[:space:]]+\|[[:space:]]+[0-9]+[[:space:]]*$' <<<"$out" ||
    { echo "FAIL: no row decoded to node 7"; return 1; }
}

trap 'bash scripts/demo.sh stop >/dev/null 2>&1 || true' EXIT
demo_on "$port"
demo_on "$new_port"
bash scripts/demo.sh stop
if bash scripts/demo.sh stop | grep -q "no demo server"; then
  echo "demo: rows decoded on ports $port and $new_port, then stopped"
else
  echo "FAIL: the demo server still runs after stop"
  exit 1
fi
