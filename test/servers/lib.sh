# Sourced by the suites under test/servers/ (multi-server engines: replication, Patroni, Citus): the
# harness for scratch servers (test/lib/server.sh, whose functions they use), with these suites'
# one convention of their own: ports 56400-56599, and every statement they run ending within
# 2 minutes, whatever happens to the servers.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server.sh"

export PGOPTIONS="-c statement_timeout=120s"
