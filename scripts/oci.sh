#!/usr/bin/env bash
# Builds snowflake's extension image for CloudNativePG's image volumes (docs/kubernetes.md): an OCI
# image FROM scratch with the library under /lib, the control file and SQL scripts under
# /share/extension and the license under /licenses/snowflake, for one PostgreSQL major (18 or later:
# extension_control_path came in 18) on the Debian release this machine runs. It is made with umoci
# (Debian's package; no daemon, nothing downloaded at build time) into an OCI image layout directory,
# tagged VERSION-MAJOR-DISTRIBUTION as CloudNativePG's own extension images are (0.6.0-18-trixie).
# Usage, as root from the checkout: bash scripts/oci.sh [--source DIR] [--output DIR]
#   PG_MAJOR picks the major as the test command does (scripts/lib.sh: else the newest installed).
#   --source DIR  builds the snowflake source tree in DIR instead of this checkout (the test builds the
#                 previous release's image so); DIR must be writable, its build happens in place.
#   --output DIR  the OCI layout to add the tag to (made if missing): build/oci/snowflake by default.
# It prints the image reference last (oci:DIR:TAG), for skopeo and the like.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOURCE=$ROOT
OUTPUT=$BUILD/oci/snowflake
while [ $# -gt 0 ]; do
  case $1 in
    --source) SOURCE=$(cd "$2" && pwd); shift 2 ;;
    --output) OUTPUT=$2; shift 2 ;;
    *) die "usage: bash scripts/oci.sh [--source DIR] [--output DIR]" ;;
  esac
done
require_root
[ "$PG_MAJOR" -ge 18 ] || die "PostgreSQL $PG_MAJOR ($PG_MAJOR_WHY) cannot load an extension from an image:" \
  "extension_control_path came in PostgreSQL 18. Set PG_MAJOR=18 or later; on 15 to 17 install the" \
  "Debian package or build a PostgreSQL image with snowflake in it (docs/kubernetes.md)"

ensure_server_packages umoci
VERSION=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$SOURCE/snowflake.control")
# The Debian release the library is built on, and so the one whose PostgreSQL image can load it.
DISTRIBUTION=$(. /etc/os-release && echo "${VERSION_CODENAME:-${VERSION_ID:-unknown}}")
TAG=$VERSION-$PG_MAJOR-$DISTRIBUTION
ARCH=$(dpkg --print-architecture)
# The commit built, when the source is a git checkout of its own (not a tree inside another's).
REVISION=unknown
[ "$(git -C "$SOURCE" rev-parse --show-toplevel 2>/dev/null)" != "$SOURCE" ] || REVISION=$(git -C "$SOURCE" rev-parse HEAD)
echo "snowflake $VERSION for PostgreSQL $PG_MAJOR on Debian $DISTRIBUTION ($ARCH): tag $TAG"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The build (as the source tree's owner), installed into a staging directory; the image takes its files from there.
runuser -u "$(stat -c %U "$SOURCE")" -- make -C "$SOURCE" -s PG_CONFIG="$PG_CONFIG" >/dev/null &&
  make -C "$SOURCE" -s PG_CONFIG="$PG_CONFIG" DESTDIR="$WORK/stage" install >/dev/null ||
  die "snowflake $VERSION did not build for PostgreSQL $PG_MAJOR"

# The image's one layer, as CloudNativePG mounts it at /extensions/snowflake.
ROOTFS=$WORK/bundle/rootfs
umoci_() { umoci --log error "$@"; }
mkdir -p "$(dirname "$OUTPUT")"
[ -f "$OUTPUT/index.json" ] || umoci_ init --layout "$OUTPUT"
umoci_ ls --layout "$OUTPUT" | grep -qx "$TAG" && umoci_ rm --image "$OUTPUT:$TAG"
umoci_ new --image "$OUTPUT:$TAG"
umoci_ unpack --rootless --image "$OUTPUT:$TAG" "$WORK/bundle"
install -d -m 755 "$ROOTFS/lib" "$ROOTFS/share/extension" "$ROOTFS/licenses/snowflake"
install -m 755 "$WORK/stage$("$PG_CONFIG" --pkglibdir)/snowflake.so" "$ROOTFS/lib/"
install -m 644 "$WORK/stage$("$PG_CONFIG" --sharedir)"/extension/snowflake* "$ROOTFS/share/extension/"
install -m 644 "$SOURCE/LICENSE" "$ROOTFS/licenses/snowflake/"
umoci_ repack --image "$OUTPUT:$TAG" "$WORK/bundle"

# What the image is, as labels (in its config) and annotations (in its manifest) alike.
# Where the source is: the release on PGXN unless SNOWFLAKE_SOURCE_URL names your fork or mirror.
SOURCE_URL=${SNOWFLAKE_SOURCE_URL:-https://pgxn.org/dist/snowflake/$VERSION/}
META=(
  "org.opencontainers.image.title=snowflake $VERSION for PostgreSQL $PG_MAJOR on $DISTRIBUTION"
  "org.opencontainers.image.description=The snowflake extension (Snowflake IDs), an extension image for CloudNativePG"
  "org.opencontainers.image.version=$VERSION"
  "org.opencontainers.image.revision=$REVISION"
  "org.opencontainers.image.source=$SOURCE_URL"
  "org.opencontainers.image.licenses=PostgreSQL"
  "org.opencontainers.image.base.name=scratch"
  "io.cloudnativepg.image.base.pgmajor=$PG_MAJOR"
  "io.cloudnativepg.image.base.os=$DISTRIBUTION"
)
args=()
for kv in "${META[@]}"; do args+=(--config.label "$kv" --manifest.annotation "$kv"); done
umoci_ config --image "$OUTPUT:$TAG" --os linux --architecture "$ARCH" --config.user 65532:65532 \
  --author "The snowflake developers" --no-history "${args[@]}"
umoci_ gc --layout "$OUTPUT"
echo "oci:$OUTPUT:$TAG"
