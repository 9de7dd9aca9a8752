#!/usr/bin/env bash
# The package suite (scripts/test.sh runs it; run it as root, under the
# PostgreSQL 15 lock): builds the Debian package with dpkg-buildpackage in a
# scratch copy of the working tree, checks its name, version and file list,
# checks what apt does with it next to pgEdge's package (test/package_apt.sh),
# installs it in place of the make-installed files, checks that dpkg owns
# every snowflake file PostgreSQL can load, runs every regress schedule
# against those installed files, and finally purges the package and runs
# make install again, leaving the system as the other suites expect.
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

require_root
ensure_packages dpkg-dev debhelper fakeroot postgresql-server-dev-all

WORK=$BUILD/package
VERSION=$(control_version)
PACKAGE=postgresql-$PG_MAJOR-snowflake
DEB=$WORK/${PACKAGE}_${VERSION}_$(dpkg --print-architecture).deb
LIBDIR=$($PG_CONFIG --pkglibdir)
EXTDIR=$($PG_CONFIG --sharedir)/extension

# Builds the package from a scratch copy; the .deb lands in $WORK.
build_package() {
  rm -rf "$WORK"
  copy_worktree "$WORK/snowflake-$VERSION"
  echo "dpkg-buildpackage -us -uc (log: $WORK/build.log)"
  (cd "$WORK/snowflake-$VERSION" && dpkg-buildpackage -us -uc >"$WORK/build.log" 2>&1) ||
    { tail -40 "$WORK/build.log"; die "dpkg-buildpackage failed"; }
  [ -f "$DEB" ] || die "no $(basename "$DEB"); built: $(cd "$WORK" && ls -- *.deb)"
}

# The package's name and version are the control file's.
check_identity() {
  local name version
  name=$(dpkg-deb -f "$DEB" Package)
  version=$(dpkg-deb -f "$DEB" Version)
  echo "package: $name $version (control file: $VERSION)"
  [ "$name" = "$PACKAGE" ] || die "package name $name, expected $PACKAGE"
  [ "$version" = "$VERSION" ] || die "package version $version differs from default_version $VERSION"
}

# The files the package must ship, one path a line, sorted: the library, the
# control file, every install and upgrade script of the tree, and Debian's docs.
expected_files() {
  {
    echo "$LIBDIR/snowflake.so"
    echo "$EXTDIR/snowflake.control"
    for f in "$ROOT"/snowflake--*.sql; do echo "$EXTDIR/$(basename "$f")"; done
    echo "/usr/share/doc/$PACKAGE/changelog.gz"
    echo "/usr/share/doc/$PACKAGE/copyright"
  } | sort
}

# The package ships exactly the expected files: nothing more (no tests), nothing less.
check_contents() {
  local shipped diff
  shipped=$(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ {print substr($6, 2)}' | sort)
  echo "$shipped"
  if ! diff=$(diff <(expected_files) <(echo "$shipped")); then
    echo "$diff"
    die "the package's files differ from the expected set (< missing, > unexpected)"
  fi
}

# Removes every snowflake file from PostgreSQL's directories, whoever installed it.
remove_installed_files() {
  dpkg-query -W "$PACKAGE" >/dev/null 2>&1 && dpkg --purge "$PACKAGE" >/dev/null
  rm -f "$LIBDIR"/snowflake.so "$EXTDIR"/snowflake.control "$EXTDIR"/snowflake--*.sql
}

# Installs the package and checks dpkg owns, unchanged, every snowflake file PostgreSQL sees.
install_package() {
  local f owner bad=0
  dpkg -i "$DEB" >/dev/null
  for f in "$LIBDIR"/snowflake* "$EXTDIR"/snowflake*; do
    owner=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1) || owner=
    [ "$owner" = "$PACKAGE" ] || { echo "not from $PACKAGE: $f"; bad=1; }
  done
  [ $bad -eq 0 ] || die "files outside the package in PostgreSQL's directories"
  dpkg --verify "$PACKAGE" || die "installed files differ from the package"
  echo "installed $PACKAGE $VERSION; dpkg owns all $(ls "$LIBDIR"/snowflake* "$EXTDIR"/snowflake* | wc -l) snowflake files"
}

# Puts the make-installed build back, as the rest of the test command expects.
restore_make_install() {
  remove_installed_files
  build_and_install
}

build_package
check_identity
check_contents
bash "$ROOT/test/package_apt.sh" "$DEB"
trap 'restore_make_install || { echo "error: could not put the make install back" >&2; exit 1; }' EXIT
remove_installed_files
install_package
echo "regress schedules against the installed package:"
run_regress "$WORK"
