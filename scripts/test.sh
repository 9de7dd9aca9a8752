#!/usr/bin/env bash
# The test command (README, "Testing"; .ci/run calls it): installs what is
# missing, builds, then runs every suite, printing each one's time, and exits
# non-zero if any suite fails. Run it as root from the checkout.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root
ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" libgtest-dev \
  libpqxx-dev pkg-config "postgresql-$PG_MAJOR-partman"
require_readable_tree

passed=0
failed=0
failures=()

# Runs one suite, timing it and counting the result.
suite() {
  local name=$1 start=$SECONDS
  shift
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

# The library exports its SQL entry points, the magic block and _PG_init unmangled.
check_symbols() {
  local symbols missing=0 sym
  symbols=$(nm -D --defined-only "$ROOT/snowflake.so" | awk '{print $3}')
  for sym in Pg_magic_func _PG_init snowflake_nextval snowflake_timestamp snowflake_parse snowflake_inject_clock_offset snowflake_stats \
    snowflake_min_id snowflake_max_id snowflake_id_range snowflake_between snowflake_between_support snowflake_backfill_id \
    pg_finfo_snowflake_nextval pg_finfo_snowflake_timestamp pg_finfo_snowflake_parse \
    pg_finfo_snowflake_inject_clock_offset pg_finfo_snowflake_stats; do
    grep -qx "$sym" <<<"$symbols" || { echo "missing unmangled symbol: $sym"; missing=1; }
  done
  return $missing
}

# META.json, CHANGELOG.md and an install or upgrade script carry the control file's version.
check_metadata() {
  local version ok=0
  version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/snowflake.control")
  echo "control file version: $version"
  [ "$(grep -c "\"version\": \"$version\"" "$ROOT/META.json")" -eq 2 ] || { echo "META.json versions differ"; ok=1; }
  compgen -G "$ROOT/snowflake--*$version.sql" >/dev/null || { echo "no install or upgrade script reaches $version"; ok=1; }
  grep -q "^## $version " "$ROOT/CHANGELOG.md" || { echo "CHANGELOG.md has no $version heading"; ok=1; }
  return $ok
}

# Makes $BUILD/$1 a directory the postgres user can write in.
postgres_dir() {
  mkdir -p "$BUILD/$1"
  chmod 755 "$BUILD"
  chown postgres "$BUILD/$1"
}

# pg_regress against its temporary servers, as postgres; shows the diffs on failure.
regress() {
  postgres_dir regress
  if as_postgres make -s -k PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" regresscheck; then
    return 0
  fi
  find "$BUILD/regress" -name regression.diffs -exec cat {} +
  return 1
}

suite build build_and_install
# Every later suite tests the build just made; without one, stop here.
if [ $failed -ne 0 ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
suite symbols check_symbols
suite metadata check_metadata
suite unit make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" WERROR=1 unitcheck
suite regress regress
# libpqxx against real servers; built as root, run as postgres.
integration() {
  postgres_dir integration
  make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" WERROR=1 "$BUILD/integration_tests" \
    && as_postgres make -s PG_CONFIG="$PG_CONFIG" BUILD="$BUILD" integrationcheck
}
suite integration integration
# Benchmarks in quick mode, so they keep working; they assert nothing about speed.
bench() {
  bash "$ROOT/test/bench/bench.sh" --quick && bash "$ROOT/test/bench/time_range.sh" --quick
}
suite bench bench
# The same suites on PostgreSQL 17 and 18, each in its Debian chroot (test/matrix.sh);
# not from inside a chroot, where this script is what the matrix runs.
if [ -z "${SNOWFLAKE_IN_MATRIX:-}" ]; then
  suite matrix-pg17 bash "$ROOT/test/matrix.sh" pg17
  suite matrix-pg18 bash "$ROOT/test/matrix.sh" pg18
fi

echo
[ $failed -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
