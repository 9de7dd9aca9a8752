# Citus 13.2.2 against PostgreSQL 15.20's headers (test/servers/citus.sh applies this to
# src/include/pg_version_compat.h): 15.20 declares and exports have_createdb_privilege() in
# commands/dbcommands.h, and Citus's own static copy of that name then fails to compile
# ("static declaration follows non-static declaration"). Renamed, the copy goes unused and
# Citus calls the server's function, which does the same check.
s/^have_createdb_privilege(void)$/citus_unused_have_createdb_privilege(void)/
