#!/usr/bin/env bash
# What apt does with our package next to pgEdge's (test/package.sh runs it with the built .deb;
# docs/packaging.md, "Next to pgEdge's package", states each outcome asserted here). It builds a
# stand-in for pgEdge's package carrying exactly its relations (pgEdge/snowflake,
# pkg/deb/debian/control.in) and one, with none, for the server package it depends on; puts them in
# one local repository and our .deb in another; and asks apt (apt-get -s) and dpkg (--no-act) what
# each command would do, with each case's packages installed in a copy of dpkg's status. apt runs
# with a private configuration (APT_CONFIG: its own sources, lists, cache and logs, and none of the
# host's apt.conf.d or preferences), dpkg with a private database and log, so the host's apt and
# dpkg state is never touched.
# Usage: bash test/package_apt.sh DEB
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

DEB=${1:?usage: package_apt.sh DEB}
APT=$BUILD/package/apt
OURS=postgresql-$PG_MAJOR-snowflake
THEIRS=pgedge-postgresql-$PG_MAJOR-snowflake
THEIR_SERVER=pgedge-postgresql-$PG_MAJOR
# Above ours, as pgEdge's versions (2.x) are; the form is theirs (upstream-build.distribution).
THEIR_VERSION=2.6.0-1.bookworm

# Builds stand-in package $1 (THEIR_VERSION, no files) with the control fields given after it, into $APT/pgedge.
stand_in() {
  local dir=$APT/src/$1
  mkdir -p "$dir/DEBIAN" "$APT/pgedge"
  {
    printf 'Package: %s\nVersion: %s\nArchitecture: all\n' "$1" "$THEIR_VERSION"
    echo "Maintainer: snowflake's package test <dev@snowflake.invalid>"
    echo "Description: stand-in for pgEdge's $1 (test/package_apt.sh)"
    printf '%s\n' "${@:2}"
  } >"$dir/DEBIAN/control"
  dpkg-deb --root-owner-group --build "$dir" "$APT/pgedge" >/dev/null
}

# Makes the private apt configuration $APT/$1.conf, whose sources are the repositories (directories
# under $APT) named after it, and reads their indexes.
apt_world() {
  local name=$1 repo
  mkdir -p "$APT/$name/lists/partial" "$APT/$name/cache/archives/partial" "$APT/$name/log" "$APT/empty"
  for repo in "${@:2}"; do echo "deb [trusted=yes] file:$APT/$repo ./"; done >"$APT/$name/sources.list"
  cat >"$APT/$name.conf" <<EOF
Dir::Etc::Parts "$APT/empty";
Dir::Etc::SourceList "$APT/$name/sources.list";
Dir::Etc::SourceParts "-";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$APT/empty";
Dir::State "$APT/$name";
Dir::Cache "$APT/$name/cache";
Dir::Log "$APT/$name/log";
EOF
  APT_CONFIG=$APT/$name.conf apt-get update -qq >"$APT/$name/update.log" 2>&1 ||
    { cat "$APT/$name/update.log"; die "apt-get update of the private sources ($name) failed"; }
}

# Writes $APT/status-$1: the host's dpkg status without any snowflake package, plus the packages
# named after it (from the repositories) as installed.
status_with() {
  local file=$APT/status-$1 pkg
  awk -v RS= -v ORS='\n\n' -v skip="^Package: ($OURS|$THEIRS|$THEIR_SERVER)\n" '$0 !~ skip' /var/lib/dpkg/status >"$file"
  for pkg in "${@:2}"; do
    dpkg-deb -f "$(ls "$APT"/*/"${pkg}"_*.deb)" | sed '1a Status: install ok installed' >>"$file"
    echo >>"$file"
  done
}

# Prints what apt-get $3... would do with sources $1 and installed packages $2 (a status_with
# name), run beside our .deb: its Inst and Remv lines as "Inst NAME", sorted and joined by ", ";
# "nothing" if none.
apt_would() {
  local out
  out=$(cd "$APT/ours" && APT_CONFIG=$APT/$1.conf apt-get -s -o Dir::State::status="$APT/status-$2" "${@:3}" 2>&1) ||
    { echo "$out" >&2; echo "apt-get ${*:3} failed"; return 0; }
  out=$(awk '$1 == "Inst" || $1 == "Remv" || $1 == "Purg" {print $1, $2}' <<<"$out" | LC_ALL=C sort | paste -sd, - | sed 's/,/, /g')
  echo "${out:-nothing}"
}

# Prints what dpkg -i of our .deb would do with installed packages $1 (a status_with name, in a
# private copy of dpkg's database, with a log of its own: even --no-act logs to dpkg's).
# "Inst NAME", or its error.
dpkg_would() {
  local admin=$APT/dpkg-$1 out
  mkdir -p "$admin/updates" "$admin/info" "$admin/triggers"
  cp "$APT/status-$1" "$admin/status"
  if out=$(dpkg --admindir="$admin" --log="$admin/dpkg.log" --no-act -i "$DEB" 2>&1); then
    echo "Inst $OURS"
  else
    # The copy has no file lists: dpkg warns about each package, which says nothing here.
    grep -v 'files list file for package' <<<"$out" | sed -n 's/^ *\(conflicting packages.*\)/\1/p;$p' | head -1
  fi
}

failures=0
# Asserts that what $1 (a command and its setting) would do, $3, is $2.
verdict() {
  if [ "$3" = "$2" ]; then
    printf '  %s: %s\n' "$1" "$3"
  else
    printf '  FAILED %s\n    expected: %s\n    got:      %s\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}

# Asserts that apt-get $4... with sources $1 and installed packages $2 does $3 (as apt_would prints it).
expect() {
  verdict "sources $1, installed $2: apt-get ${*:4}" "$3" "$(apt_would "$1" "$2" "${@:4}")"
}

rm -rf "$APT"
mkdir -p "$APT/ours"
cp "$DEB" "$APT/ours/"
stand_in "$THEIR_SERVER"
# pgEdge's relations, word for word, with their PG_MAJOR_VERSION put in.
stand_in "$THEIRS" "Depends: $THEIR_SERVER" "Conflicts: $OURS" "Provides: $OURS" "Replaces: $OURS" "Breaks: $OURS"
for repo in ours pgedge; do (cd "$APT/$repo" && dpkg-scanpackages -m . >Packages 2>/dev/null); done
apt_world ours+pgedge ours pgedge
apt_world pgedge pgedge
status_with none
status_with ours "$OURS"
status_with theirs "$THEIR_SERVER" "$THEIRS"
status_with ours+their-server "$THEIR_SERVER" "$OURS"

echo "apt and dpkg, simulated, with our package and pgEdge's ($THEIRS $THEIR_VERSION, a stand-in):"
# Installing by our name: the real package of that name, not pgEdge's that provides the name...
expect ours+pgedge none "Inst $OURS" install "$OURS"
# ... which apt takes only when no real one is in its sources.
expect pgedge none "Inst $THEIR_SERVER, Inst $THEIRS" install "$OURS"
# Either package, installed over the other, removes it. The move from pgEdge's to ours is this one
# command; pgEdge's server package stays.
expect ours+pgedge theirs "Inst $OURS, Remv $THEIRS" install "$OURS"
expect ours+pgedge ours "Inst $THEIR_SERVER, Inst $THEIRS, Remv $OURS" install "$THEIRS"
# Our .deb from no repository: dpkg refuses it while pgEdge's is installed (pgEdge's Conflicts; ours
# has no Replaces to make dpkg remove theirs), and apt-get install ./FILE makes the move.
verdict "installed theirs: dpkg -i $(basename "$DEB")" "conflicting packages - not installing $OURS" "$(dpkg_would theirs)"
expect pgedge theirs "Inst $OURS, Remv $THEIRS" install "./$(basename "$DEB")"
# Upgrades switch nothing, though pgEdge's version is higher and it Replaces ours.
for installed in ours theirs ours+their-server; do
  expect ours+pgedge "$installed" nothing upgrade
  expect ours+pgedge "$installed" nothing full-upgrade
done
[ $failures -eq 0 ] || die "$failures of apt's and dpkg's outcomes differ from docs/packaging.md's"
