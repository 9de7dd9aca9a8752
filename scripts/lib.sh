# Shared by scripts/test.sh and scripts/demo.sh (sourced, not run): the paths,
# installing missing Debian packages, building and installing the extension,
# and running commands as the postgres system user (PostgreSQL refuses root).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=${PG_MAJOR:-15}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BIN/pg_config
BUILD=$ROOT/build

# Prints a message and stops.
die() {
  echo "error: $*" >&2
  exit 1
}

# Stops unless we are root: the scripts install packages and switch to postgres.
require_root() {
  [ "$(id -u)" -eq 0 ] || die "run this as root (it installs packages with apt-get and runs servers as postgres)"
}

# Installs those of the named Debian packages that are missing; refreshes the package lists first.
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  # Another apt or dpkg run (a second checkout, unattended upgrades) holds the lock for a while: wait for it.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Runs a command as the postgres system user, from the checkout.
as_postgres() {
  (cd "$ROOT" && runuser -u postgres -- "$@")
}

# Stops unless the postgres user can read the checkout (servers and pg_regress run as postgres).
require_readable_tree() {
  as_postgres test -r "$ROOT/Makefile" -a -x "$ROOT/sql" \
    || die "the postgres user cannot read $ROOT; clone the project somewhere world-readable (not under /root)"
}

# The extension's version: default_version in the control file.
control_version() {
  sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/snowflake.control"
}

# Makes $BUILD/$1 a directory the postgres user can write in.
postgres_dir() {
  mkdir -p "$BUILD/$1"
  chmod 755 "$BUILD"
  chown postgres "$BUILD/$1"
}

# Runs every regress schedule (pg_regress, as postgres) against the installed
# extension, with output under $1/regress ($BUILD by default); shows the diffs on failure.
run_regress() {
  local build=${1:-$BUILD}
  mkdir -p "$build/regress"
  chmod 755 "$BUILD" "$build"
  chown postgres "$build/regress"
  if as_postgres make -s -k PG_CONFIG="$PG_CONFIG" BUILD="$build" regresscheck; then
    return 0
  fi
  find "$build/regress" -name regression.diffs -exec cat {} +
  return 1
}

# Builds the extension with warnings as errors and installs it into PostgreSQL $PG_MAJOR.
# (Chained with &&: callers may run it where set -e does not apply.)
build_and_install() {
  make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" WERROR=1 \
    && make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}
