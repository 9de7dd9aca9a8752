# Shared by scripts/test.sh and scripts/demo.sh (sourced, not run): the paths,
# the PostgreSQL major to build for, installing missing Debian packages,
# building and installing the extension, and running commands as root (sudo
# when not root) or as the postgres system user (PostgreSQL refuses root).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
# The vendored Citus source (shared/vendor/citus/ next to the checkout), which the citus suite builds
# and the version matrix copies into its chroots.
CITUS_VENDOR=${SNOWFLAKE_CITUS_VENDOR:-$ROOT/../shared/vendor/citus}
# The PostgreSQL majors snowflake supports: the one place that says so. README.md, META.json,
# debian/pgversions and src/pg_compat.hpp state the range too, and the metadata suite checks them
# against this line. 16 is reviewed, not tested, since Debian ships no package of it.
SUPPORTED_MAJORS="15 16 17 18 19"
# The last release, and the commit that released it: the oci suite builds its image, to update from.
LAST_RELEASE=0.5.0
LAST_RELEASE_COMMIT=2b001c4
# The last release's source, as a tar file the version matrix puts in its chroots (they have no git).
LAST_RELEASE_TAR=$ROOT/../shared/releases/snowflake-$LAST_RELEASE.tar
# The majors the version matrix (test/matrix.sh) tests in Debian chroots, besides the host's.
MATRIX_MAJORS="17 18 19"

# Prints a message and stops.
die() {
  echo "error: $*" >&2
  exit 1
}

# Prints the PostgreSQL major to use and why, on one line: PG_MAJOR if set, else the newest
# installed server with its development files, else the newest installed server, else the
# distribution's default (postgresql-common's, or the version the postgresql package depends on).
pick_pg_major() {
  local major
  if [ -n "${PG_MAJOR:-}" ]; then
    echo "$PG_MAJOR PG_MAJOR is set"
  elif major=$(newest_installed lib/pgxs); then
    echo "$major the newest installed server with development files"
  elif major=$(newest_installed bin/postgres); then
    echo "$major the newest installed server"
  elif major=$(/usr/share/postgresql-common/supported-versions 2>/dev/null | sort -n | tail -1) && [ -n "$major" ]; then
    echo "$major the distribution's default (postgresql-common)"
  elif major=$(apt-cache depends postgresql 2>/dev/null | sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | tail -1) &&
    [ -n "$major" ]; then
    echo "$major the distribution's default (the postgresql package)"
  else
    echo " none is installed and the distribution names no default"
  fi
}

# Prints the newest major N with /usr/lib/postgresql/N/$1; fails when there is none.
newest_installed() {
  ls -d /usr/lib/postgresql/*/"$1" 2>/dev/null | cut -d/ -f5 | sort -n | tail -1 | grep .
}

read -r PG_MAJOR PG_MAJOR_WHY <<<"$(pick_pg_major)"
[ -n "$PG_MAJOR" ] || die "no PostgreSQL major to build for ($PG_MAJOR_WHY): set PG_MAJOR to one of $SUPPORTED_MAJORS" \
  "and add the PGDG repository (apt.postgresql.org) if your distribution has no postgresql-NN package"
[[ " $SUPPORTED_MAJORS " == *" $PG_MAJOR "* ]] ||
  die "PostgreSQL $PG_MAJOR ($PG_MAJOR_WHY) is not supported: set PG_MAJOR to one of $SUPPORTED_MAJORS"
export PG_MAJOR
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BIN/pg_config

# Stops unless we are root: the scripts install packages and switch to postgres.
require_root() {
  [ "$(id -u)" -eq 0 ] || die "run this as root (it installs packages with apt-get and runs servers as postgres)"
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  else
    command -v sudo >/dev/null || die "not root and no sudo: install sudo, or run this as root"
    sudo "$@"
  fi
}

# Installs those of the named Debian packages that are missing; refreshes the package lists first.
# A postgresql-NN package installed here creates no cluster of its own (see no_main_cluster).
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  # Another apt or dpkg run (a second checkout, unattended upgrades) holds the lock for a while: wait for it.
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
  if [[ " ${missing[*]} " =~ \ postgresql-[0-9]+\  ]]; then
    apt_install postgresql-common && no_main_cluster apt_install "${missing[@]}"
  else
    apt_install "${missing[@]}"
  fi
}

# apt-get install, quiet and without questions.
apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    "$@" >/dev/null
}

# Runs a command (installing a postgresql-NN package) so that Debian creates and starts no "main"
# cluster on port 5432: a create_main_cluster = false line is added to postgresql-common's
# createcluster.conf for the duration, then removed. A setting the admin made there is left alone.
no_main_cluster() {
  local conf=/etc/postgresql-common/createcluster.conf line="create_main_cluster = false # snowflake: while installing"
  if grep -Eq '^[[:space:]]*create_main_cluster' "$conf" 2>/dev/null; then
    echo "$conf sets create_main_cluster: the new server package follows it"
    "$@"
    return
  fi
  echo "the new PostgreSQL package creates no cluster on port 5432 (create_main_cluster = false while it installs)"
  echo "$line" | as_root tee -a "$conf" >/dev/null
  local status=0
  "$@" || status=$?
  as_root sed -i "/^$line\$/d" "$conf"
  return $status
}

# Installs the build tools and the server and development packages of PostgreSQL $PG_MAJOR (plus
# any packages named); says where to look when the distribution has no such server package.
ensure_server_packages() {
  echo "PostgreSQL $PG_MAJOR: $PG_MAJOR_WHY"
  if ! dpkg-query -W -f='${Status}' "postgresql-$PG_MAJOR" 2>/dev/null | grep -q 'install ok installed' &&
    [ -z "$(apt-cache policy "postgresql-$PG_MAJOR" 2>/dev/null | sed -n 's/^ *Candidate: \([^(]\)/\1/p')" ]; then
    # The lists may be stale or empty (a fresh container): refresh them once before giving up.
    as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-cache policy "postgresql-$PG_MAJOR" 2>/dev/null | grep -q '^ *Candidate: [^(]' ||
      die "this distribution has no package postgresql-$PG_MAJOR: set PG_MAJOR to a major it has" \
        "(apt-cache search --names-only '^postgresql-[0-9]+\$'), or add the PGDG repository (apt.postgresql.org)"
  fi
  ensure_packages build-essential "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" libssl-dev "$@"
}

# Copies the working tree (tracked and untracked files, minus ignored ones) to directory $1, made anew.
copy_worktree() {
  rm -rf "$1" && mkdir -p "$1" && chmod 755 "$1" &&
    (cd "$ROOT" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
      [ ! -e "$f" ] || printf '%s\0' "$f" # a tracked file deleted in the tree is not copied
    done | tar --null -T - -cf -) | tar -xf - -C "$1"
}

# Writes the last release's source into directory $1, made anew: from git where the checkout has its
# history, else from LAST_RELEASE_TAR.
release_source() {
  rm -rf "$1" && mkdir -p "$1" || return 1
  if git -C "$ROOT" cat-file -e "$LAST_RELEASE_COMMIT^{commit}" 2>/dev/null; then
    git -C "$ROOT" archive "$LAST_RELEASE_COMMIT" | tar -x -C "$1"
  elif [ -f "$LAST_RELEASE_TAR" ]; then
    tar -x -C "$1" -f "$LAST_RELEASE_TAR"
  else
    echo "no source of $LAST_RELEASE: no git history here, and no $LAST_RELEASE_TAR" >&2
    return 1
  fi
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

# Runs a command as the checkout's owner: root running in someone else's checkout builds as them,
# so no root-owned objects are left behind for their next build.
as_owner() {
  local owner
  owner=$(stat -c %U "$ROOT")
  if [ "$(id -u)" -eq 0 ] && [ "$owner" != root ]; then
    runuser -u "$owner" -- "$@"
  else
    "$@"
  fi
}

# Builds the extension with warnings as errors (as the checkout's owner) and installs it into
# PostgreSQL $PG_MAJOR (as root). (Chained with &&: callers may run it where set -e does not apply.)
build_and_install() {
  as_owner make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" WERROR=1 \
    && as_root make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}
