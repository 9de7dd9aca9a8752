#!/usr/bin/env bash
# The test command (README; .ci/run calls it): installs what is missing,
# builds, then runs every suite that runs here, printing each one's time, and
# exits non-zero if any suite fails. Run it as root from the checkout. With
# suite names as arguments (bash scripts/test.sh unit regress) it builds and
# runs only those. bash scripts/test.sh --list prints every suite, where it
# runs (the host, and which majors of the version matrix) and what it checks.
# test/README.md says what the whole command takes, in time and disk.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Inside the version matrix's chroots (test/matrix.sh sets SNOWFLAKE_IN_MATRIX) this script runs
# the suites that test the code on that PostgreSQL; the release checks and the matrix are the host's.
on_host() {
  [ -z "${SNOWFLAKE_IN_MATRIX:-}" ]
}
# The long loads under which the node check must flag nothing are 2 minutes on the host, where the
# suites' figures come from; the matrix's majors run them for 30 s, to keep the whole command's time.
on_host || [ -n "${SNOWFLAKE_FULL_MATRIX:-}" ] ||
  export DISTINCT_SECONDS=${DISTINCT_SECONDS:-30} CITUS_LOAD_SECONDS=${CITUS_LOAD_SECONDS:-30}

SUITES=()              # the suites' names, in the order they run
declare -A WHERE=()    # name -> where it runs: all, host, pg>=N or pg<=N (see runs_on)
declare -A SUMMARY=()  # name -> one line on what it checks
declare -A COMMAND=()  # name -> the command that runs it, quoted for eval

# Declares suite $1, which runs where $2 says, checks what $3 says, and runs as the command after those.
declare_suite() {
  SUITES+=("$1")
  WHERE[$1]=$2
  SUMMARY[$1]=$3
  COMMAND[$1]=$(printf '%q ' "${@:4}")
}

# True when suite $3 runs in context $1 (host, or matrix: a chroot of test/matrix.sh) on PostgreSQL
# major $2. Its places are a list, any of which admits it: "all" everywhere, "host" on the host only,
# "pg>=N", "pg<=N" and "pg=N" on the majors they admit (the host's included); a place written
# "full:PLACE" counts only with SNOWFLAKE_FULL_MATRIX=1, the long run before a release.
runs_on() {
  local place
  for place in ${WHERE[$3]}; do
    if [ "${place#full:}" != "$place" ]; then
      [ "${SNOWFLAKE_FULL_MATRIX:-}" = 1 ] || continue
      place=${place#full:}
    fi
    case $place in
      all) return 0 ;;
      host) [ "$1" != host ] || return 0 ;;
      'pg>='*) [ "$2" -lt "${place#pg>=}" ] || return 0 ;;
      'pg<='*) [ "$2" -gt "${place#pg<=}" ] || return 0 ;;
      'pg='*) [ "$2" -ne "${place#pg=}" ] || return 0 ;;
      *) die "suite $3: unknown place '$place'" ;;
    esac
  done
  return 1
}

# "yes" when suite $3 runs in context $1 on major $2, "full" when only with SNOWFLAKE_FULL_MATRIX=1, else "-".
where_shown() {
  if SNOWFLAKE_FULL_MATRIX= runs_on "$@"; then echo yes
  elif SNOWFLAKE_FULL_MATRIX=1 runs_on "$@"; then echo full
  else echo -
  fi
}

# Prints every suite with where it runs (the host's major, then the matrix's) and what it checks.
list_suites() {
  local name major row
  echo "Where each suite runs: the host (PostgreSQL $PG_MAJOR) and the version matrix (test/matrix.sh: PostgreSQL" \
    "${MATRIX_MAJORS// /, }, each in a Debian chroot)."
  echo
  row=$(printf '%-22s %-5s' suite "$PG_MAJOR")
  for major in $MATRIX_MAJORS; do row+=$(printf ' %-5s' "$major"); done
  echo "$row what it checks"
  for name in "${SUITES[@]}"; do
    row=$(printf '%-22s %-5s' "$name" "$(where_shown host "$PG_MAJOR" "$name")")
    for major in $MATRIX_MAJORS; do row+=$(printf ' %-5s' "$(where_shown matrix "$major" "$name")"); done
    echo "$row ${SUMMARY[$name]}"
  done
}

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

# The library exports unmangled the magic block, _PG_init, the background workers' entry points (as
# library_worker() names them), and every C function an install or upgrade script names
# (AS 'MODULE_PATHNAME', 'name') with its pg_finfo_.
check_symbols() {
  local symbols missing=0 sym functions
  symbols=$(nm -D --defined-only "$ROOT/snowflake.so" | awk '{print $3}')
  functions=$(cat "$ROOT"/src/sql/*.sql "$ROOT"/snowflake--*.sql | sed -n "s/.*'MODULE_PATHNAME', *'\([a-z_0-9]*\)'.*/\1/p" | sort -u)
  [ -n "$functions" ] || { echo "no C function found in the SQL scripts"; return 1; }
  for sym in Pg_magic_func _PG_init $(grep -ho 'library_worker("[^"]*", "[a-z_]*"' "$ROOT"/src/*.cpp | cut -d'"' -f4) \
    $functions $(sed 's/^/pg_finfo_/' <<<"$functions"); do
    grep -qx "$sym" <<<"$symbols" || { echo "missing unmangled symbol: $sym"; missing=1; }
  done
  echo "$(wc -w <<<"$functions") C functions, each with its pg_finfo_, and the entry points: all exported"
  return $missing
}

# META.json, CHANGELOG.md, debian/changelog and an install or upgrade script carry the control file's
# version, and the supported majors are stated alike everywhere.
check_metadata() {
  local version ok=0
  version=$(control_version)
  echo "control file version: $version"
  [ "$(grep -c "\"version\": \"$version\"" "$ROOT/META.json")" -eq 2 ] || { echo "META.json versions differ"; ok=1; }
  compgen -G "$ROOT/snowflake--*$version.sql" >/dev/null || { echo "no install or upgrade script reaches $version"; ok=1; }
  grep -q "^## $version " "$ROOT/CHANGELOG.md" || { echo "CHANGELOG.md has no $version heading"; ok=1; }
  [ "$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)" = "$version" ] \
    || { echo "debian/changelog's latest entry is not $version"; ok=1; }
  check_majors || ok=1
  return $ok
}

# README.md, META.json, debian/pgversions and src/pg_compat.hpp state the supported range of
# PostgreSQL majors as SUPPORTED_MAJORS (scripts/lib.sh) does.
check_majors() {
  local min max ok=0
  read -r min max <<<"$(tr ' ' '\n' <<<"$SUPPORTED_MAJORS" | sort -n | sed -n '1p;$p' | xargs)"
  echo "supported PostgreSQL majors: $min to $max"
  grep -q "^snowflake supports PostgreSQL $min to $max on Linux" "$ROOT/README.md" ||
    { echo "README.md does not say: snowflake supports PostgreSQL $min to $max on Linux"; ok=1; }
  grep -q "\"PostgreSQL\": \">= $min.0.0, < $((max + 1)).0.0\"" "$ROOT/META.json" ||
    { echo "META.json's PostgreSQL prereq is not \">= $min.0.0, < $((max + 1)).0.0\""; ok=1; }
  [ "$(cat "$ROOT/debian/pgversions")" = "$min+" ] || { echo "debian/pgversions is not $min+"; ok=1; }
  grep -q "^#if PG_VERSION_NUM < ${min}0000\$" "$ROOT/src/pg_compat.hpp" ||
    { echo "src/pg_compat.hpp does not refuse majors below $min"; ok=1; }
  return $ok
}


# make dist, then the zip's contents and META.json against the PGXN Meta Spec.
dist() {
  local zip
  zip=$BUILD/dist/snowflake-$(control_version).zip
  rm -rf "$BUILD/dist" && mkdir -p "$BUILD/dist"
  make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" DISTFILE="$zip" dist \
    && /usr/bin/python3 "$ROOT/test/dist/check_dist.py" "$zip" "$(control_version)"
}

# libpqxx against real servers; built as root, run as postgres. The reservation's timing tests
# (INTEGRATION_TIMING: slow and stopped writers, about 85 s) run alone, after the others, and on the
# host only: the matrix runs every other test, which make the same PostgreSQL calls. The others run
# in two shards at once (each test's server has a data directory and a Unix socket of its own, and
# no TCP port), each shard's output printed when both are done. GTEST_FILTER=... runs just those
# tests, in one process.
INTEGRATION_TIMING=SlowDisk.*:Waits.*:Transitions.*
# Tests of the extension's own setting parsing and locking under many connections, and of the node
# check's rules on intervals and a clone's identity file, through calls no major changes (the matrix
# runs the clone test that makes the same ones): the host only, unless SNOWFLAKE_FULL_MATRIX is set
# (about 50 s a major).
INTEGRATION_HOST=Layouts.NonsenseStopsTheServerFromStarting:Settings.OutOfRangeOrMalformedSettingsStopTheServerFromStarting:Blocks.*:Concurrency.*:NodeCheckIntervals.*:NodeCopies.TwoClonesThatSeeEachOtherNeverBothIssue:NodeCopies.AnIdentityIsTakenOnceThenACopyOfItIsRefused:NodeCopies.AnIdentityFileItCannotTrustIsReportedAndIgnored
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
# Every integration test but the timing ones (and in the matrix INTEGRATION_HOST's), in $1 shards at
# once; fails if any shard fails.
integration_shards() {
  local n=$1 i pids=() status=0
  for ((i = 0; i < n; i++)); do
    GTEST_FILTER=-$INTEGRATION_TIMING$(on_host || [ -n "${SNOWFLAKE_FULL_MATRIX:-}" ] || echo ":$INTEGRATION_HOST") \
      GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i integration_tests \
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

# The clients suite's parts whose packages the matrix's chroots carry (test/matrix.sh installs them);
# the others test Debian 12's packaged frameworks (test/clients/run.sh says why).
CLIENTS_MATRIX_PARTS="python php pgbouncer js prisma kysely mikroorm java"
# Every part on the host; in the matrix, CLIENTS_MATRIX_PARTS.
clients() {
  # shellcheck disable=SC2086 # the parts are words
  bash "$ROOT/test/clients/run.sh" $(on_host || echo $CLIENTS_MATRIX_PARTS)
}

# Benchmarks in quick mode, so they keep working; they assert nothing about speed. The slow-disk
# benchmark runs the postmaster under strace, on the host only.
bench() {
  bash "$ROOT/test/bench/bench.sh" --quick && bash "$ROOT/test/bench/time_range.sh" --quick &&
    bash "$ROOT/test/bench/block_loop.sh" --quick && bash "$ROOT/test/bench/mask.sh" --quick &&
    bash "$ROOT/test/bench/wal.sh" --quick && bash "$ROOT/test/bench/node_check_wal.sh" --quick &&
    { ! on_host || bash "$ROOT/test/bench/slow_disk.sh" --quick; }
}

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
    runuser -u "$user" -- bash "$home/snowflake/test/demo_check.sh" "$home/snowflake" 26620 26621
}

# The build, installed; then the installed snowflake--*.sql files this tree does not have are
# removed. make install leaves them, and an older checkout on a machine that had installed a newer
# one tested an upgrade step it does not have (CI failed so once).
build() {
  local script
  build_and_install || return 1
  for script in "$("$PG_CONFIG" --sharedir)"/extension/snowflake--*.sql; do
    [ ! -e "$script" ] || [ -e "$ROOT/${script##*/}" ] || rm -f "$script"
  done
}

# Waits for the background set-up of the matrix's chroots; fails as it failed.
matrix_chroots() {
  local status=0
  wait "$CHROOTS_PID" || status=1
  cat "$BUILD/matrix-chroots.log"
  return $status
}

# The suites, in the order they run (the build first: every later suite tests it).
declare_suite build all "the extension with -Wall -Wextra -Werror, installed (alone: other versions' scripts go)" build
declare_suite symbols all "the SQL entry points, _PG_init and the magic block exported unmangled" check_symbols
declare_suite metadata all "META.json, CHANGELOG, debian/ and the SQL scripts carry the version; majors agree" \
  check_metadata
declare_suite dist host "make dist: the PGXN zip's files, and its META.json against the PGXN Meta Spec" dist
declare_suite unit all "GoogleTest over the pure C++ core with an injected clock (test/unit/)" \
  make -C "$ROOT" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" WERROR=1 unitcheck
declare_suite regress all "pg_regress: sql/ against expected/, one server per schedule of test/regress/" run_regress
declare_suite docs host "every SQL block of README.md and docs/ run; every recipe found in a test" \
  bash "$ROOT/test/docs/run.sh"
declare_suite package host "the Debian package built, checked, installed, regress run against it; apt next to pgEdge's" \
  bash "$ROOT/test/package.sh"
declare_suite integration all "libpqxx against real servers: crashes, clocks, standbys (matrix: not INTEGRATION_TIMING, nor INTEGRATION_HOST but in full)" \
  integration
declare_suite clients "host pg=19 full:all" "drivers, ORMs, pgbouncer, the exporter (matrix: $CLIENTS_MATRIX_PARTS)" clients
declare_suite bench "host full:all" "the benchmarks in quick mode, asserting nothing about speed (matrix: no slow_disk)" bench
declare_suite multimaster-pglogical 'pg<=15' "two servers replicating both ways through pglogical; the node check" \
  bash "$ROOT/test/servers/multimaster.sh" pglogical
declare_suite multimaster-native 'pg=18 full:pg>=16' "two servers replicating both ways (origin = none); the node check" \
  bash "$ROOT/test/servers/multimaster.sh" native
declare_suite one-way-native host "two writers and an aggregator that writes, one way: the node check's claims" \
  bash "$ROOT/test/servers/one_way.sh"
declare_suite node-sources "host full:all" "each snowflake.node_source, the offset and every problem, on real servers" \
  bash "$ROOT/test/servers/node_sources.sh"
declare_suite node-file "host full:all" "each member's node in a file, through pg_basebackup and pg_rewind" \
  bash "$ROOT/test/servers/node_file.sh"
declare_suite rollback host "docs/upgrading.md run as written from $LAST_RELEASE, under two clients inserting, and the way back" \
  bash "$ROOT/test/servers/rollback.sh"
declare_suite oci 'pg>=18' "the CloudNativePG extension image: built, pushed, pulled, loaded, updated from $LAST_RELEASE's" \
  bash "$ROOT/test/servers/oci.sh"
declare_suite citus 'host full:pg<=18' "a Citus coordinator and two workers, built from the vendored source" \
  bash "$ROOT/test/servers/citus.sh"
declare_suite patroni host "Patroni and etcd: a switchover and a kill -9 of the leader under a writer" \
  bash "$ROOT/test/servers/patroni.sh"
declare_suite demo host "the run command as root in this checkout (ports 26610, 26611)" \
  bash "$ROOT/test/demo_check.sh" "$ROOT" 26610 26611
declare_suite demo-nonroot host "the run command as a user with sudo for make and apt-get only" demo_nonroot
declare_suite matrix-chroots host "waits for the matrix's chroots, made in the background, and prints their log" \
  matrix_chroots
for major in $MATRIX_MAJORS; do
  declare_suite "matrix-pg$major" host "the suites marked for $major, in its chroot (test/matrix.sh pg$major)" \
    bash "$ROOT/test/matrix.sh" "pg$major"
done
declare_suite demo-pg17 host "the run command in the PostgreSQL 17 chroot, picking 17 itself" \
  bash "$ROOT/test/matrix.sh" pg17 --demo

if [ "${1:-}" = --list ]; then
  list_suites
  exit 0
fi

require_root
ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" libssl-dev libgtest-dev \
  libpqxx-dev pkg-config libfaketime $([ "$PG_MAJOR" -ge 19 ] || echo "postgresql-$PG_MAJOR-partman") \
  $(on_host && echo git python3-jsonschema debootstrap)
require_readable_tree
# The free disk space where the checkout lives, such as 56G.
free_space() {
  df -h --output=avail "$ROOT" | tail -1 | tr -d ' '
}
# A full disk fails suites far from its cause (initdb, tar): say up front how much room there is.
on_host && echo "free disk space under $ROOT: $(free_space)"

CONTEXT=$(on_host && echo host || echo matrix)
# The matrix targets a selected suite needs (matrix-pgN, demo-pg17: pg17), made ready in the background.
MATRIX_TARGETS=()
if on_host; then
  for major in $MATRIX_MAJORS; do
    selected "matrix-pg$major" || { [ "$major" = 17 ] && selected demo-pg17; } && MATRIX_TARGETS+=("pg$major")
  done
fi
for name in "${SUITES[@]}"; do
  runs_on "$CONTEXT" "$PG_MAJOR" "$name" || continue
  [ "$name" != matrix-chroots ] || [ ${#MATRIX_TARGETS[@]} -gt 0 ] || continue
  suite "$name" eval "${COMMAND[$name]}"
  [ "$name" = build ] || continue
  # Every later suite tests the build just made; without one, stop here.
  if [ $failed -ne 0 ]; then
    echo "0 passed, 1 failed"
    exit 1
  fi
  # The matrix's chroots (debootstrap and packages: mostly downloads and dpkg, about 7 minutes from
  # scratch) are made in the background while the host's suites run; the matrix-chroots suite waits
  # for them before the first matrix suite and prints their log.
  if [ ${#MATRIX_TARGETS[@]} -gt 0 ]; then
    mkdir -p "$BUILD"
    (
      status=0
      for target in "${MATRIX_TARGETS[@]}"; do bash "$ROOT/test/matrix.sh" "$target" --prepare || status=1; done
      exit $status
    ) >"$BUILD/matrix-chroots.log" 2>&1 &
    CHROOTS_PID=$!
  fi
done

# A suite named on the command line that does not exist (or does not run here) is a failure.
for name in "${SELECTED[@]}"; do
  [[ " ${ran[*]} " == *" $name "* ]] || { echo "no suite named $name runs here"; failed=$((failed + 1)); failures+=("$name"); }
done

echo
on_host && echo "free disk space under $ROOT at the end: $(free_space)"
[ $failed -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
