#!/usr/bin/env bash
# The version matrix: builds and tests snowflake against the PostgreSQL majors
# this Debian host does not have, each in a Debian chroot made with debootstrap
# from deb.debian.org under .matrix/ (git-ignored): trixie for PostgreSQL 17,
# sid for PostgreSQL 18, and sid with experimental pinned for the postgresql-19
# packages only (19 is a release candidate there) for PostgreSQL 19. A chroot is reused once complete; the stamp file that
# marks it complete is written last, so an interrupted setup is finished on the
# next run and a half-made debootstrap is made again. Each run copies the
# working tree (uncommitted changes included, ignored files excluded) into the
# chroot (with the vendored Citus source next to it) and runs scripts/test.sh there: build with
# -Werror, install, then the suites that scripts/test.sh --list marks for its major. Every mount
# lives in a private mount namespace and is undone on exit, even on failure.
# Usage, as root from the checkout: bash test/matrix.sh [pg17|pg18|pg19|all] [--bench|--demo|--prepare|SUITE...]
# (the targets: MATRIX_MAJORS in scripts/lib.sh; each needs its line in SUITE and CHROOT below).
# SUITE... runs just those suites in the chroot, as scripts/test.sh SUITE... does on the host.
# --demo runs the run command (scripts/demo.sh) in the chroot instead, as a newcomer would.
# --prepare only makes (or finishes) the chroots and installs their packages; the test command runs
# it in the background while the host's suites run.
# --bench runs the full benchmark suite (test/bench/bench.sh) in the chroot
# instead of the tests, and copies its results to build/matrix/<target>/.
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

MATRIX=$ROOT/.matrix
MIRROR=http://deb.debian.org/debian
declare -A SUITE=([pg17]=trixie [pg18]=sid [pg19]=sid)
# Each target's chroot directory under .matrix/; pg19's sid also takes from experimental.
declare -A CHROOT=([pg17]=trixie [pg18]=sid [pg19]=sid-experimental)
# What scripts/test.sh and the benchmarks need, so the runs inside install nothing
# (pg_partman is not packaged for PostgreSQL 19 yet, so the regress suite leaves its test out; 19's
# libpq.pc names libcurl, which pkg-config must find for libpqxx's flags; Citus, which has no release
# for 19, builds with the ICU, GSSAPI, lz4 and zstd headers, and on 18, whose pg_config.h says
# HAVE_LIBCURL, with curl's). The oci suite, on 18 and later, takes umoci, skopeo and a registry,
# and on 19 PostgreSQL 18's server too, to start it on an image built for 19. The clients suite's parts that run here (scripts/test.sh names them)
# take Node and npm, the default JDK, JDBC and Hibernate 3.6 from the chroot's release.
chroot_packages() {
  echo build-essential libssl-dev libgtest-dev libpqxx-dev pkg-config valgrind gnuplot-nox \
    "postgresql-$1" "postgresql-server-dev-$1" \
    python3-psycopg python3-psycopg2 python3-sqlalchemy python3-pytest php-cli php-pgsql pgbouncer \
    nodejs npm default-jdk-headless libpostgresql-jdbc-java libhibernate3-java \
    $([ "$1" -ge 18 ] && echo libcurl4-openssl-dev umoci skopeo docker-registry) \
    $([ "$1" -ge 19 ] && echo postgresql-18) \
    $([ "$1" -ge 19 ] || echo "postgresql-$1-partman libicu-dev libkrb5-dev liblz4-dev libzstd-dev")
}

USAGE="usage: test/matrix.sh [$(printf 'pg%s|' $MATRIX_MAJORS)all] [--bench|--demo|--prepare|SUITE...]"
if [ "${1:-all}" = all ]; then
  read -ra TARGETS <<<"$(printf 'pg%s ' $MATRIX_MAJORS)"
elif [[ " $MATRIX_MAJORS " == *" ${1#pg} "* && $1 == pg* ]]; then
  TARGETS=("$1")
else
  die "$USAGE"
fi
SELECTED=()
case "${2:-}" in
  "") WHAT=suites ;;
  --bench) WHAT=bench ;;
  --demo) WHAT=demo ;;
  --prepare) WHAT=prepare ;;
  -*) die "$USAGE" ;;
  *) WHAT=suites SELECTED=("${@:2}") ;;
esac
require_root
command -v git >/dev/null && git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  die "test/matrix.sh copies the tree with git ls-files: run it from a git checkout"

# Mounts made here must never outlive the script: run in a mount namespace of our own.
if [ -z "${SNOWFLAKE_MATRIX_NS:-}" ]; then
  SNOWFLAKE_MATRIX_NS=1 exec unshare --mount --propagation private bash "${BASH_SOURCE[0]}" "$@"
fi

ensure_packages debootstrap
mkdir -p "$MATRIX"

# Prints how long the named step took, running it; fails as it fails.
step() {
  local name=$1 start=$SECONDS
  shift
  echo "--- $name"
  if "$@"; then
    echo "--- $name: done in $((SECONDS - start)) s"
  else
    echo "--- $name: FAILED in $((SECONDS - start)) s"
    return 1
  fi
}

# The mount points at or below $1, deepest first.
mounts_under() {
  findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}

# Undoes every mount at or below $1; stops any process still running inside it first.
release() {
  local dir=$1 proc mnt
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$dir" ] && kill -KILL "${proc#/proc/}" 2>/dev/null
  done
  while read -r mnt; do
    [ -n "$mnt" ] && { umount "$mnt" 2>/dev/null || umount -l "$mnt"; }
  done < <(mounts_under "$dir")
  [ -z "$(mounts_under "$dir")" ]
}

# Mounts what the servers and apt need inside chroot $1: /proc, /dev and a private /dev/shm.
mount_chroot() {
  mount -t proc proc "$1/proc"
  mount --bind /dev "$1/dev"
  mount -t tmpfs -o mode=1777,size=512m shm "$1/dev/shm"
}

# Runs a command inside chroot $1 with a clean environment.
in_chroot() {
  local dir=$1
  shift
  chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}

# A fresh debootstrap of suite $2 into $1; a partial one (killed midway) is removed first.
bootstrap() {
  local dir=$1 suite=$2
  if [ -d "$dir" ] && { [ -d "$dir/debootstrap" ] || [ ! -x "$dir/usr/bin/apt-get" ]; }; then
    echo "removing the unfinished chroot $dir"
    release "$dir" && rm -rf --one-file-system "$dir"
  fi
  [ -d "$dir" ] && return 0
  debootstrap --variant=minbase "$suite" "$dir" "$MIRROR" >"$dir.debootstrap.log" 2>&1 || {
    tail -20 "$dir.debootstrap.log"
    return 1
  }
}

# Installs the packages of PostgreSQL $3 into chroot $1 (suite $2), then writes the stamp.
provision() {
  local dir=$1 suite=$2 major=$3 want
  want="$suite: $(chroot_packages "$major")"
  [ "$(cat "$dir/.snowflake-matrix" 2>/dev/null)" = "$want" ] && return 0
  echo "deb $MIRROR $suite main" >"$dir/etc/apt/sources.list"
  if [ "$major" -ge 19 ]; then
    # A release candidate: experimental, pinned so that only PostgreSQL 19's own packages come from it
    # (and libpq, which postgresql-server-dev-19 needs at version 19).
    echo "deb $MIRROR experimental main" >>"$dir/etc/apt/sources.list"
    printf '%s\n' "Package: postgresql-19 postgresql-19-* postgresql-client-19 postgresql-server-dev-19 libpq5 libpq-dev" \
      "Pin: release a=experimental" "Pin-Priority: 500" >"$dir/etc/apt/preferences.d/snowflake-pg19"
  fi
  # sid's Release file is valid for a week only, and the mirror may lag this machine's clock;
  # apt still checks its signature.
  echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99snowflake-matrix"
  # No package starts a daemon in the chroot (docker-registry would listen on port 5000): the tests
  # start what they need, on their own ports.
  printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d" && chmod 755 "$dir/usr/sbin/policy-rc.d"
  # Debian's server packages create no cluster here: the tests make their own.
  mkdir -p "$dir/etc/postgresql-common"
  echo "create_main_cluster = false" >"$dir/etc/postgresql-common/createcluster.conf"
  in_chroot "$dir" dpkg --configure -a && # finishes an install cut short
    in_chroot "$dir" apt-get update -qq &&
    in_chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      $(chroot_packages "$major") >"$dir.apt.log" 2>&1 || {
    tail -20 "$dir.apt.log"
    return 1
  }
  # The downloaded .deb files (about 0.5 GB a chroot) are not needed once installed.
  in_chroot "$dir" apt-get clean
  echo "$want" >"$dir/.snowflake-matrix"
}

# Copies the working tree to /srv/snowflake in chroot $1; the vendored Citus source to
# /srv/shared/vendor/citus, where the citus suite finds it next to the checkout; the last release's
# source to /srv/shared/releases (LAST_RELEASE_TAR), which the oci suite builds; and the host's CA
# certificates to /etc/ssl/host-ca-certificates.crt: where the npm registry is reached through a
# TLS-inspecting proxy, the host trusts a local CA that the chroot's own list lacks.
copy_tree() {
  mkdir -p "$1/srv" "$1/etc/ssl" && chmod 755 "$1/srv" && copy_worktree "$1/srv/snowflake" &&
    cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/host-ca-certificates.crt" &&
    rm -rf "$1/srv/shared" && mkdir -p "$1/srv/shared/vendor/citus" "$1/srv/shared/releases" &&
    git -C "$ROOT" archive -o "$1/srv/shared/releases/${LAST_RELEASE_TAR##*/}" "$LAST_RELEASE_COMMIT" &&
    { cp "$CITUS_VENDOR"/citus-*.tar.gz "$1/srv/shared/vendor/citus/" 2>/dev/null ||
      echo "no Citus source in $CITUS_VENDOR: the citus suite will say what is missing"; }
}

# The test command inside chroot $1 against PostgreSQL $2 (or the suites SELECTED), without the
# matrix itself; npm and Node trust the host's CA certificates. GTEST_FILTER, when set, goes along.
run_suites() {
  in_chroot "$1" env PG_MAJOR="$2" SNOWFLAKE_IN_MATRIX=1 SNOWFLAKE_FULL_MATRIX="${SNOWFLAKE_FULL_MATRIX:-}" ${GTEST_FILTER:+GTEST_FILTER="$GTEST_FILTER"} npm_config_cafile=/etc/ssl/host-ca-certificates.crt \
    NODE_EXTRA_CA_CERTS=/etc/ssl/host-ca-certificates.crt bash /srv/snowflake/scripts/test.sh ${SELECTED[@]+"${SELECTED[@]}"}
}

# The run command inside chroot $1 as a newcomer runs it: no PG_MAJOR, so it picks the chroot's
# PostgreSQL ($2) itself (test/demo_check.sh checks the rows, a port change and the stop).
run_demo() {
  in_chroot "$1" bash /srv/snowflake/test/demo_check.sh /srv/snowflake 26630 26631
}

# The full benchmarks inside chroot $1 against PostgreSQL $2; their results go to build/matrix/pg$2.
run_bench() {
  local out=$ROOT/build/matrix/pg$2
  in_chroot "$1" env PG_MAJOR="$2" bash /srv/snowflake/test/bench/bench.sh &&
    mkdir -p "$out" && cp "$1"/srv/snowflake/build/bench/{results.md,chart.png} "$out/" &&
    echo "results: $out/results.md"
}

# Sets up (or reuses) the chroot for target $1 and runs the suites (or the benchmarks) in it.
run_target() {
  local target=$1 suite=${SUITE[$1]} major=${1#pg} dir
  dir=$MATRIX/${CHROOT[$1]}
  echo "=== $target: PostgreSQL $major in Debian $suite ($dir)"
  trap 'release "$dir"' EXIT
  trap 'exit 130' INT TERM
  step "debootstrap $suite" bootstrap "$dir" "$suite" &&
    mount_chroot "$dir" &&
    step "packages for PostgreSQL $major" provision "$dir" "$suite" "$major" &&
    { [ "$WHAT" = prepare ] || {
      step "copy the working tree" copy_tree "$dir" &&
        case $WHAT in
          bench) step "benchmarks on PostgreSQL $major" run_bench "$dir" "$major" ;;
          demo) step "the run command on PostgreSQL $major" run_demo "$dir" "$major" ;;
          *) step "test suites on PostgreSQL $major" run_suites "$dir" "$major" ;;
        esac
    }; }
  local status=$?
  # The suites passed: their build directory (servers' data, about 3 GB) goes; a failure keeps it.
  [ $status -ne 0 ] || [ "$WHAT" != suites ] || rm -rf --one-file-system "$dir/srv/snowflake/build"
  release "$dir" || { echo "could not unmount everything under $dir"; status=1; }
  trap - EXIT
  return $status
}

failed=()
for target in "${TARGETS[@]}"; do
  run_target "$target" || failed+=("$target")
done
[ ${#failed[@]} -eq 0 ] || die "matrix failed: ${failed[*]}"
if [ "$WHAT" = prepare ]; then echo "chroots ready: ${TARGETS[*]}"; else echo "matrix passed: ${TARGETS[*]}"; fi
