#!/usr/bin/env bash
# The test command (README; .ci/run calls it): installs what is missing,
# builds, then runs every suite, printing each one's time, and exits non-zero
# if any suite fails. Run it as root from the checkout. With suite names as
# arguments (bash scripts/test.sh unit regress) it builds and runs only those.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Inside the version matrix's chroots (test/matrix.sh sets SNOWFLAKE_IN_MATRIX) this script runs
# the suites that test the code on that PostgreSQL; the release checks and the matrix are the host's.
on_host() {
  [ -z "${SNOWFLAKE_IN_MATRIX:-}" ]
}

require_root
ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" libgtest-dev \
  libpqxx-dev pkg-config $([ "$PG_MAJOR" -ge 19 ] || echo "postgresql-$PG_MAJOR-partman") \
  $(on_host && echo git python3-jsonschema debootstrap)
require_readable_tree
# The free disk space where the checkout lives, such as 56G.
free_space() {
  df -h --output=avail "$ROOT" | tail -1 | tr -d ' '
}
# A full disk fails suites far from its cause (initdb, tar): say up front how much room there is.
on_host && echo "free disk space under $ROOT: $(free_space)"

passed=0
failed=0
failures=()
SELECTED=("$@")
ran=()

# True when suite $1 is to run: every suite by default, else those named on the command line.
selected() {
  [ ${#SELECTED[@]} -eq 0 ] && return 0
  local s
  for s in "${SELECTED[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}

# Runs one suite (the build and the wait for the matrix's chroots always), timing it and counting the result.
suite() {
  local name=$1 start=$SECONDS
  shift
  [ "$name" = build ] || [ "$name" = matrix-chroots ] || selected "$name" || return 0
  ran+=("$name")
  echo "=== suite $name"
  if "$@"; then
    passed=$((passed + 1))
    echo "=== suite $name: passed in $((SECONDS - start)) s"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "=== suite $name: FAILED in $((SECONDS - start)) s"
  fi
}

# The library exports unmangled the magic block, _PG_init, the background workers' entry points, and
# every C function an install or upgrade script names (AS 'MODULE_PATHNAME', 'name') with its pg_finfo_.
check_symbols() {
  local symbols missing=0 sym functions
  symbols=$(nm -D --defined-only "$ROOT/snowflake.so" | awk '{print $3}')
  functions=$(cat "$ROOT"/src/sql/*.sql "$ROOT"/snowflake--*.sql | sed -n "s/.*'MODULE_PATHNAME', *'\([a-z_0-9]*\)'.*/\1/p" | sort -u)
  [ -n "$functions" ] || { echo "no C function found in the SQL scripts"; return 1; }
  for sym in Pg_magic_func _PG_init $(grep -o 'bgw_function_name), "[a-z_]*"' "$ROOT"/src/*.cpp | cut -d'"' -f2) \
    $functions $(sed 's/^/pg_finfo_/' <<<"$functions"); do
    grep -qx "$sym" <<<"$symbols" || { echo "missing unmangled symbol: $sym"; missing=1; }
  done
  echo "$(wc -w <<<"$functions") C functions, each with its pg_finfo_, and the entry points: all exported"
  return $missing
}

# META.json, CHANGELOG.md, debian/changelog and an install or upgrade script carry the control file's version.
check_metadata() {
  local version ok=0
  version=$(control_version)
  echo "control file version: $version"
  [ "$(grep -c "\"version\": \"$version\"" "$ROOT/META.json")" -eq 2 ] || { echo "META.json versions differ"; ok=1; }
  compgen -G "$ROOT/snowflake--*$version.sql" >/dev/null || { echo "no install or upgrade script reaches $version"; ok=1; }
  grep -q "^## $version " "$ROOT/CHANGELOG.md" || { echo "CHANGELOG.md has no $version heading"; ok=1; }
  [ "$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)" = "$version" ] \
    || { echo "debian/changelog's latest entry is not $version"; ok=1; }
  return $ok
}


suite build build_and_install
# Every later suite tests the build just made; without one, stop here.
if [ $failed -ne 0 ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
# The matrix's chroots (debootstrap and packages: mostly downloads and dpkg, about 7 minutes from
# scratch) are made in the background while the host's suites run; the matrix-chroots suite waits
# for them before the first matrix suite and prints their log.
MATRIX_TARGETS=()
if on_host; then
  selected matrix-pg17 || selected demo-pg17 && MATRIX_TARGETS+=(pg17)
  selected matrix-pg18 && MATRIX_TARGETS+=(pg18)
  selected matrix-pg19 && MATRIX_TARGETS+=(pg19)
fi
if [ ${#MATRIX_TARGETS[@]} -gt 0 ]; then
  mkdir -p "$BUILD"
  (
    status=0
    for target in "${MATRIX_TARGETS[@]}"; do bash "$ROOT/test/matrix.sh" "$target" --prepare || status=1; done
    exit $status
  ) >"$BUILD/matrix-chroots.log" 2>&1 &
  CHROOTS_PID=$!
fi
# Waits for the background set-up of the matrix's chroots; fails as it failed.
matrix_chroots() {
  local status=0
  wait "$CHROOTS_PID" || status=1
  cat "$BUILD/matrix-chroots.log"
  return $status
}

suite symbols check_symbols
suite metadata check_metadata
# make dist, then the zip's contents and META.json against the PGXN Meta Spec.
dist() {
  local zip
  zip=$BUILD/dist/snowflake-$(control_version).zip
  rm -rf "$BUILD/dist" && mkdir -p "$BUILD/dist"
  make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" DISTFILE="$zip" dist \
    && /usr/bin/python3 "$ROOT/test/dist/check_dist.py" "$zip" "$(control_version)"
}
on_host && suite dist dist
suite unit make -C "$ROOT" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" WERROR=1 unitcheck
suite regress run_regress
# Every SQL block of README.md and docs/ against a preloaded server (test/docs/run_docs.py).
docs() {
  postgres_dir docs
  as_postgres /usr/bin/python3 "$ROOT/test/docs/run_docs.py" --pg-bin "$PG_BIN" --work "$BUILD/docs"
}
on_host && suite docs docs
# The Debian package: built, checked, installed in place of make install, regress
# against its files; it puts the make install back for the suites after it.
on_host && suite package bash "$ROOT/test/package.sh"
# libpqxx against real servers; built as root, run as postgres. The reservation's timing tests
# (SlowDisk.*, Waits.*, Transitions.*: slow and stopped writers, about 85 s) run alone, after the
# others, and on the host only: the matrix runs every other test, which make the same PostgreSQL
# calls. The others run in two shards at once (each test's server has a data directory and a Unix
# socket of its own, and no TCP port), each shard's output printed when both are done.
# GTEST_FILTER=... runs just those tests, in one process.
INTEGRATION_TIMING=SlowDisk.*:Waits.*:Transitions.*
integration() {
  postgres_dir integration
  make -C "$ROOT" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" WERROR=1 "$BUILD/integration_tests" || return 1
  if [ -n "${GTEST_FILTER:-}" ]; then
    integration_tests
  else
    integration_shards 2 && { ! on_host || GTEST_FILTER=$INTEGRATION_TIMING integration_tests; }
  fi || return 1
  # Passed: the servers' directories (about 3 GB) go; after a failure they stay to be read.
  find "$BUILD/integration" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
}
# The integration tests GTEST_FILTER (and GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX) select, as postgres.
integration_tests() {
  as_postgres env GTEST_FILTER="${GTEST_FILTER:-*}" ${GTEST_TOTAL_SHARDS:+GTEST_TOTAL_SHARDS=$GTEST_TOTAL_SHARDS} \
    ${GTEST_SHARD_INDEX:+GTEST_SHARD_INDEX=$GTEST_SHARD_INDEX} \
    make -s PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" integrationcheck
}
# Every integration test but the timing ones, in $1 shards at once; fails if any shard fails.
integration_shards() {
  local n=$1 i pids=() status=0
  for ((i = 0; i < n; i++)); do
    GTEST_FILTER=-$INTEGRATION_TIMING GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i integration_tests \
      >"$BUILD/integration/shard-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    echo "--- integration shard $((i + 1)) of $n"
    cat "$BUILD/integration/shard-$i.log"
  done
  return $status
}
suite integration integration
# Real drivers, ORMs and frameworks against a preloaded server (test/clients/run.sh). In the matrix,
# the parts whose packages the chroots carry (test/matrix.sh installs them); CONTRIBUTING.md says why
# the others run on the host only.
if on_host; then
  suite clients bash "$ROOT/test/clients/run.sh"
else
  suite clients bash "$ROOT/test/clients/run.sh" python php pgbouncer js prisma kysely mikroorm java
fi
# Benchmarks in quick mode, so they keep working; they assert nothing about speed. The slow-disk
# benchmark runs the postmaster under strace, on the host only.
bench() {
  bash "$ROOT/test/bench/bench.sh" --quick && bash "$ROOT/test/bench/time_range.sh" --quick &&
    bash "$ROOT/test/bench/block_loop.sh" --quick && { ! on_host || bash "$ROOT/test/bench/slow_disk.sh" --quick; }
}
suite bench bench
# Multi-master: two servers replicating one table both ways (test/servers/multimaster.sh): pglogical
# on PostgreSQL 15, native logical replication with origin = none in the matrix's later majors.
if [ "$PG_MAJOR" -ge 16 ]; then
  suite multimaster-native bash "$ROOT/test/servers/multimaster.sh" native
else
  suite multimaster-pglogical bash "$ROOT/test/servers/multimaster.sh" pglogical
fi
# Each member's node in a file next to its data directory, through pg_basebackup and pg_rewind.
suite node-file bash "$ROOT/test/servers/node_file.sh"
# make install under a running server, the databases to update, and going back to 0.4.0's library
# (built from its release commit in git, so on the host only).
on_host && suite rollback bash "$ROOT/test/servers/rollback.sh"
# Citus: a coordinator and two workers (test/servers/citus.sh), on the majors a Citus release supports.
[ "$PG_MAJOR" -le 18 ] && suite citus bash "$ROOT/test/servers/citus.sh"
# HA failover with Patroni and etcd (Debian 12's packages; on the host only).
on_host && suite patroni bash "$ROOT/test/servers/patroni.sh"
# The run command as a newcomer on this host runs it, as root, in this checkout.
on_host && suite demo bash "$ROOT/test/demo_check.sh" "$ROOT" 56610 56611
# The run command as a user who is not root, in a copy of the tree that user owns: sudo only
# for make install (and apt-get), the build and the demo server as that user.
demo_nonroot() {
  local user=snowflake-demo home
  ensure_packages sudo
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
  home=$(getent passwd "$user" | cut -d: -f6)
  # Packages are installed already, so make is all the demo asks sudo for here.
  echo "$user ALL=(root) NOPASSWD: /usr/bin/make, /usr/bin/apt-get" >/etc/sudoers.d/snowflake-demo
  chmod 440 /etc/sudoers.d/snowflake-demo
  copy_worktree "$home/snowflake" && chown -R "$user:" "$home/snowflake" &&
    runuser -u "$user" -- bash "$home/snowflake/test/demo_check.sh" "$home/snowflake" 56620 56621
}
on_host && suite demo-nonroot demo_nonroot
# The same suites on PostgreSQL 17, 18 and 19, each in its Debian chroot (test/matrix.sh);
# not from inside a chroot, where this script is what the matrix runs.
if on_host; then
  [ ${#MATRIX_TARGETS[@]} -eq 0 ] || suite matrix-chroots matrix_chroots
  suite matrix-pg17 bash "$ROOT/test/matrix.sh" pg17
  # The run command in the PostgreSQL 17 chroot, picking that major by itself.
  suite demo-pg17 bash "$ROOT/test/matrix.sh" pg17 --demo
  suite matrix-pg18 bash "$ROOT/test/matrix.sh" pg18
  suite matrix-pg19 bash "$ROOT/test/matrix.sh" pg19
fi

# A suite named on the command line that does not exist (or does not run here) is a failure.
for name in "${SELECTED[@]}"; do
  [[ " ${ran[*]} " == *" $name "* ]] || { echo "no suite named $name runs here"; failed=$((failed + 1)); failures+=("$name"); }
done

echo
on_host && echo "free disk space under $ROOT at the end: $(free_space)"
[ $failed -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
